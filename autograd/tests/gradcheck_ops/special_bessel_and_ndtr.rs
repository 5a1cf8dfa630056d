//! torch.special's differentiable functions: erfcx, log_ndtr, ndtri, the Bessel functions J0, J1,
//! Y0, Y1, I0, I1, K0, K1 (derivatives.yaml's formulas), and the second input of zeta, gammainc and
//! gammaincc (the first is not differentiable in torch: a constant here).

use crate::common::*;

/// The `special_bessel_and_ndtr` cases.
pub fn special_bessel_and_ndtr_cases() -> Vec<Case> {
    let s = [2, 3];
    vec![
        case("erfcx", vec![smooth(&s, 3101)], |x| x[0].special_erfcx()),
        case("log_ndtr", vec![uniform(&s, -4.0, 3.0, 3102)], |x| x[0].special_log_ndtr()),
        case("ndtri", vec![uniform(&s, 0.05, 0.95, 3103)], |x| x[0].special_ndtri()),
        case("bessel_j0", vec![uniform(&s, -8.0, 8.0, 3104)], |x| x[0].special_bessel_j0()),
        case("bessel_j1", vec![uniform(&s, -8.0, 8.0, 3105)], |x| x[0].special_bessel_j1()),
        // (torch's Y0 and Y1, Cephes', disagree with each other's derivative by ~1e-6 near their
        // branch at x = 5: the points stay below it)
        case("bessel_y0", vec![uniform(&s, 0.3, 4.5, 3106)], |x| x[0].special_bessel_y0()),
        case("bessel_y1", vec![uniform(&s, 0.3, 4.5, 3107)], |x| x[0].special_bessel_y1()),
        case("modified_bessel_i0", vec![uniform(&s, -9.0, 9.0, 3108)], |x| x[0].special_modified_bessel_i0()),
        case("modified_bessel_i1", vec![uniform(&s, -9.0, 9.0, 3109)], |x| x[0].special_modified_bessel_i1()),
        case("modified_bessel_k0", vec![uniform(&s, 0.3, 4.0, 3110)], |x| x[0].special_modified_bessel_k0()),
        case("modified_bessel_k1", vec![uniform(&s, 0.3, 4.0, 3111)], |x| x[0].special_modified_bessel_k1()),
        case("zeta_q", vec![uniform(&s, 0.5, 3.0, 3112)], move |x| {
            uniform(&s, 2.0, 4.0, 3113).detach().special_zeta(&x[0])
        }),
        case("gammainc_x", vec![uniform(&s, 0.2, 5.0, 3114)], move |x| {
            uniform(&s, 0.5, 3.0, 3115).detach().special_gammainc(&x[0])
        }),
        case("gammaincc_x", vec![uniform(&s, 0.2, 5.0, 3116)], move |x| {
            uniform(&s, 0.5, 3.0, 3117).detach().special_gammaincc(&x[0])
        }),
    ]
}

#[test]
fn special_bessel_and_ndtr() {
    run_family("special_bessel_and_ndtr", Check::Grad);
}
