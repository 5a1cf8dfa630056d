//! pdist (p = 0.5, 1, 1.5, 2, 3, inf: torch's `_pdist_backward` kernels as a custom function),
//! frexp's mantissa, nextafter, the in-place view ops on a non-leaf (`t_`, `transpose_` +
//! `unsqueeze_`, `as_strided_`), narrow_copy and chain_matmul.

use oxtorch_tensor::Tensor;

use crate::common::*;

/// The `pdist_and_inplace_views` cases.
pub fn pdist_and_inplace_views_cases() -> Vec<Case> {
    let rows = [4, 3];
    let mut cases: Vec<Case> =
        [(0.5, 311), (1.0, 312), (1.5, 313), (2.0, 314), (3.0, 315), (f64::INFINITY, 316)]
            .into_iter()
            .map(|(p, seed)| case(&format!("pdist_p{p}"), vec![smooth(&rows, seed)], move |x| x[0].pdist(p)))
            .collect();
    let s = [2, 3];
    cases.extend([
        // (away from the powers of two, where the mantissa jumps)
        case(
            "frexp_mantissa",
            vec![avoid(&s, -1.9, 1.9, &[-1.0, -0.5, -0.25, 0.0, 0.25, 0.5, 1.0], 317)],
            |x| Ok(x[0].frexp()?.0),
        ),
        case("nextafter", vec![smooth(&s, 318), smooth(&s, 319)], |x| x[0].nextafter(&x[1])),
        case("t_", vec![smooth(&s, 320)], |x| {
            let mut y = x[0].mul(2.0)?;
            y.t_()?;
            y.mul(&Tensor::from_slice(&[1.0, -2.0, 0.5, 3.0, -1.0, 2.0], vec![3, 2])?)
        }),
        case("transpose_unsqueeze_", vec![smooth(&s, 321)], |x| {
            // (exp would save its output, which the in-place views then modify: torch refuses that too)
            let mut y = x[0].sin()?;
            y.transpose_(0, 1)?.unsqueeze_(0)?;
            y.mul(&Tensor::from_slice(&[1.0, -2.0, 0.5, 3.0, -1.0, 2.0], vec![1, 3, 2])?)
        }),
        case("as_strided_", vec![smooth(&s, 322)], |x| {
            let mut y = x[0].sin()?;
            y.as_strided_(&[2, 2], &[1, 2], Some(1))?;
            y.square()
        }),
        case("narrow_copy", vec![smooth(&[3, 4], 323)], |x| x[0].narrow_copy(1, 1, 2)?.square()),
        case("chain_matmul", vec![smooth(&[2, 3], 324), smooth(&[3, 4], 325), smooth(&[4, 2], 326)], |x| {
            Tensor::chain_matmul(&[&x[0], &x[1], &x[2]])
        }),
    ]);
    cases
}

#[test]
fn pdist_and_inplace_views() {
    run_family("pdist_and_inplace_views", Check::Grad);
}
