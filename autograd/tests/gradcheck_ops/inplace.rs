//! In-place ops on non-leaf tensors and on their views (history rewrite and copy-slices).

use oxtorch_tensor::{Result, Tensor};

use crate::common::*;

/// A fresh non-leaf copy of `x` that in-place ops may modify.
fn buffer(x: &Tensor) -> Result<Tensor> {
    x.mul(1.0)
}

/// The in-place cases.
pub fn inplace_cases() -> Vec<Case> {
    let s = [3, 4];
    vec![
        case("add_", vec![smooth(&s, 1), smooth(&s, 2)], |x| {
            let y = buffer(&x[0])?;
            y.add_(&x[1])?;
            Ok(y)
        }),
        case("mul_chain", vec![smooth(&s, 3), smooth(&[4], 4)], |x| {
            let y = buffer(&x[0])?.sin()?; // (exp would save its output: torch refuses too)
            y.mul_(&x[1])?.sub_(0.5)?;
            y.div_(&x[1].square()?.add(1.0)?)?;
            Ok(y)
        }),
        case("view_mul_", vec![smooth(&s, 5)], |x| {
            let y = buffer(&x[0])?;
            y.narrow(1, 1, 2)?.mul_(3.0)?;
            y.sin()
        }),
        case("view_copy_", vec![smooth(&s, 6), smooth(&[4], 7)], |x| {
            let y = buffer(&x[0])?;
            y.select(0, 1)?.copy_(&x[1].tanh()?)?;
            Ok(y)
        }),
        case("view_fill_", vec![smooth(&s, 8)], |x| {
            let y = buffer(&x[0])?;
            y.select(1, 2)?.fill_(0.25)?;
            y.square()
        }),
        case("transposed_view_add_", vec![smooth(&s, 9), smooth(&[4, 3], 10)], |x| {
            let y = buffer(&x[0])?;
            y.t()?.add_(&x[1])?;
            Ok(y)
        }),
        case("view_of_view_mul_", vec![smooth(&s, 11), smooth(&[2], 12)], |x| {
            let y = buffer(&x[0])?;
            y.narrow(0, 1, 2)?.select(1, 3)?.mul_(&x[1])?;
            Ok(y)
        }),
        case("index_put_", vec![smooth(&s, 13), smooth(&[3], 14)], |x| {
            let y = buffer(&x[0])?;
            y.index_put_([&ix(&[0, 2, 0], &[3]), &ix(&[1, 1, 1], &[3])], &x[1], true)?;
            Ok(y)
        }),
        case("base_read_after_view_write", vec![smooth(&s, 15), smooth(&[3], 16)], |x| {
            let y = buffer(&x[0])?;
            let v = y.select(1, 0)?;
            v.mul_(&x[1])?;
            y.sum([1], false)?.mul(&v)
        }),
        case("buffer_filled_by_slices", vec![smooth(&[2, 4], 17), smooth(&[1, 4], 18)], |x| {
            let y = Tensor::zeros([3, 4], oxtorch_tensor::DType::F64)?;
            y.narrow(0, 0, 2)?.copy_(&x[0])?;
            y.narrow(0, 2, 1)?.copy_(&x[1].exp()?)?;
            y.cumsum(0, None)
        }),
    ]
}

#[test]
fn inplace() {
    run_family("inplace", Check::Grad);
}
