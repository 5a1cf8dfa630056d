//! Tier-3 composites: the modified Bessel functions (i0, i0e, i1, i1e, across both Chebyshev
//! branches and near 0 where torch's i1/i1e gradient formula is patched) and ldexp.

use oxtorch_tensor::Tensor;

use crate::common::*;

/// The `tier3` cases.
pub fn tier3_cases() -> Vec<Case> {
    let s = [2, 3];
    // Both branches (|x| <= 8 and > 8) and both signs.
    let wide = || leaf(t(&[-9.5, -3.0, -0.4, 0.7, 5.0, 11.0], &s));
    vec![
        case("i0", vec![wide()], |x| x[0].i0()),
        case("i0e", vec![wide()], |x| x[0].i0e()),
        case("i1", vec![wide()], |x| x[0].i1()),
        case("i1e", vec![wide()], |x| x[0].i1e()),
        case("i0_smooth", vec![smooth(&s, 301)], |x| x[0].i0()),
        case("i1e_smooth", vec![smooth(&s, 302)], |x| x[0].i1e()),
        case("ldexp", vec![smooth(&s, 303), smooth(&s, 304)], |x| x[0].ldexp(&x[1])),
        case("ldexp_int_exponent", vec![smooth(&s, 305)], |x| {
            x[0].ldexp(&Tensor::from_slice(&[1i64, -2, 0, 3, -1, 2], vec![2, 3])?)
        }),
    ]
}

#[test]
fn tier3() {
    run_family("tier3", Check::Grad);
}
