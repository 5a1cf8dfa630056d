//! Special functions and pointwise composites (lgamma, digamma, polygamma, sinc, entr, ndtr,
//! mvlgamma, xlogy, fmax/fmin, addcmul/addcdiv, float_power), trace and diag, and the in-place
//! forms that `Tensor::apply_` derives from out-of-place ops.

use oxtorch_tensor::{Operand, Result, Tensor};

use crate::common::*;

/// A fresh non-leaf copy of `x` that in-place ops may modify.
fn buffer(x: &Tensor) -> Result<Tensor> {
    x.mul(1.0)
}

/// The `special_and_composite` cases.
pub fn special_cases() -> Vec<Case> {
    let s = [2, 3];
    vec![
        case("lgamma", vec![uniform(&s, 0.2, 6.0, 1)], |x| x[0].lgamma()),
        // Between the poles of the negative axis.
        case("lgamma_negative", vec![leaf(t(&[-0.5, -1.3, -2.7, -3.5, 2.5, 0.7], &s))], |x| x[0].lgamma()),
        case("digamma", vec![uniform(&s, 0.2, 6.0, 2)], |x| x[0].digamma()),
        case("digamma_negative", vec![leaf(t(&[-0.5, -1.3, -2.7, -3.5, 2.5, 0.7], &s))], |x| x[0].digamma()),
        case("polygamma_1", vec![uniform(&s, 0.3, 6.0, 3)], |x| x[0].polygamma(1)),
        case("polygamma_2", vec![uniform(&s, 0.5, 6.0, 4)], |x| x[0].polygamma(2)),
        case("mvlgamma", vec![uniform(&s, 1.5, 6.0, 5)], |x| x[0].mvlgamma(3)),
        case("sinc", vec![smooth(&s, 6)], |x| x[0].sinc()),
        case("entr", vec![uniform(&s, 0.1, 3.0, 7)], |x| x[0].entr()),
        case("ndtr", vec![smooth(&s, 8)], |x| x[0].ndtr()),
        case("xlogy", vec![smooth(&s, 9), pos(&s, 10)], |x| x[0].xlogy(&x[1])),
        // x = 0 entries (a constant x: torch's x-gradient there is 0, not the slope log(y)).
        case("xlogy_zeros", vec![pos(&s, 11)], |x| t(&[0.0, 1.5, 0.0, -2.0, 0.0, 0.3], &[2, 3]).xlogy(&x[0])),
        case("xlogy_scalar", vec![smooth(&s, 12)], |x| x[0].xlogy(2.5)),
        case("xlog1py", vec![smooth(&s, 13), pos(&s, 14)], |x| x[0].xlog1py(&x[1])),
        case("fmax", vec![distinct(&s, 15), distinct(&[3], 16)], |x| x[0].fmax(&x[1])),
        case("fmin", vec![distinct(&s, 17), distinct(&s, 18)], |x| x[0].fmin(&x[1])),
        case("addcmul", vec![smooth(&s, 19), smooth(&[3], 20), smooth(&[2, 1], 21)], |x| {
            x[0].addcmul(&x[1], &x[2], 0.7)
        }),
        case("addcdiv", vec![smooth(&s, 22), smooth(&s, 23), away(&s, 24)], |x| {
            x[0].addcdiv(&x[1], &x[2], -1.5)
        }),
        case("float_power", vec![pos(&s, 25), smooth(&s, 26)], |x| x[0].float_power(&x[1])),
        case("trace", vec![smooth(&[3, 4], 27)], |x| x[0].trace()),
        case("diag_vector", vec![smooth(&[3], 28)], |x| x[0].diag(1)),
        case("diag_matrix", vec![smooth(&[3, 4], 29)], |x| x[0].diag(-1)),
        case("exp_", vec![smooth(&s, 30)], |x| {
            let y = buffer(&x[0])?;
            y.exp_()?;
            y.mul(&x[0])
        }),
        case("clamp_", vec![avoid(&s, -2.0, 2.0, &[-0.5, 0.7], 31)], |x| {
            let y = buffer(&x[0])?;
            y.clamp_(Some(Operand::from(-0.5)), Some(Operand::from(0.7)))?;
            Ok(y)
        }),
        case("addcmul_", vec![smooth(&s, 32), smooth(&s, 33), smooth(&[3], 34)], |x| {
            let y = buffer(&x[0])?;
            y.addcmul_(&x[1], &x[2], 2.0)?;
            y.sin()
        }),
        case("lerp_", vec![smooth(&s, 35), smooth(&s, 36)], |x| {
            let y = buffer(&x[0])?;
            y.lerp_(&x[1], 0.25)?;
            Ok(y)
        }),
        case("masked_fill_", vec![smooth(&s, 37)], |x| {
            let y = buffer(&x[0])?;
            y.masked_fill_(&mask(&[true, false, false, true, false, true], &[2, 3]), 0.5)?;
            y.square()
        }),
        case("index_add_", vec![smooth(&[4, 3], 38), smooth(&s, 39)], |x| {
            let y = buffer(&x[0])?;
            y.index_add_(0, &ix(&[3, 1], &[2]), &x[1], 1.5)?;
            Ok(y)
        }),
        case("scatter_add_", vec![smooth(&s, 40), smooth(&s, 41)], |x| {
            let y = buffer(&x[0])?;
            y.scatter_add_(1, &ix(&[2, 0, 0, 1, 1, 2], &[2, 3]), &x[1])?;
            Ok(y)
        }),
        case("view_sqrt_", vec![pos(&[3, 4], 42)], |x| {
            let y = buffer(&x[0])?;
            y.narrow(1, 1, 2)?.sqrt_()?;
            y.mul(2.0)
        }),
    ]
}

#[test]
fn special_and_composite() {
    run_family("special_and_composite", Check::Grad);
}
