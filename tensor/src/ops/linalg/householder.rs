//! `linalg.householder_product` (the product of Householder reflections, as LAPACK's `orgqr`)
//! and `linalg.vander`, composed of differentiable tensor ops.

use oxtorch_core::{DType, Error, Result};

use super::batch::{mt, rows_cols};
use crate::Tensor;

const OP: &str = "torch.linalg.householder_product";

/// torch's checks of `householder_product`'s arguments, in its order.
fn check(a: &Tensor, tau: &Tensor) -> Result<()> {
    if a.rank() < 2 {
        return Err(Error::shape(format!("{OP}: input must have at least 2 dimensions.")));
    }
    let (m, n) = rows_cols(a);
    if m < n {
        return Err(Error::shape(format!(
            "{OP}: input.shape[-2] must be greater than or equal to input.shape[-1]"
        )));
    }
    if n < tau.size(-1)? {
        return Err(Error::shape(format!(
            "{OP}: input.shape[-1] must be greater than or equal to tau.shape[-1]"
        )));
    }
    if a.rank() != tau.rank() + 1 {
        return Err(Error::shape(format!(
            "{OP}: Expected tau to have one dimension less than input, but got tau.ndim equal to {} and input.ndim is equal to {}",
            tau.rank(),
            a.rank()
        )));
    }
    if a.rank() > 2 && a.dims()[..a.rank() - 2] != tau.dims()[..tau.rank() - 1] {
        return Err(Error::shape(format!(
            "{OP}: Expected batch dimensions of tau to be equal to input.shape[:-2], but got {:?}",
            &tau.dims()[..tau.rank() - 1]
        )));
    }
    if tau.dtype() != a.dtype() {
        return Err(Error::msg(format!(
            "{OP}: tau dtype {} does not match input dtype {}",
            tau.dtype().scalar_type_name(),
            a.dtype().scalar_type_name()
        )));
    }
    match a.dtype() {
        DType::F32 | DType::F64 => Ok(()),
        dtype => Err(Error::UnsupportedDType { op: "orgqr_cpu", dtype }),
    }
}

/// A constant `[m, 1]` column with `value(row)` in each row, in `like`'s dtype and device.
fn column(m: usize, like: &Tensor, value: impl Fn(usize) -> f64) -> Result<Tensor> {
    let v: Vec<f64> = (0..m).map(value).collect();
    Tensor::from_vec_on(v, [m, 1], like.device())?.to_dtype(like.dtype())
}

/// `torch.linalg.householder_product(A, tau)`: the first `n` columns of `H_1 H_2 ⋯ H_k` for
/// `A` `[*, m, n]` (`m ≥ n`) and `tau` `[*, k]` (`k ≤ n`, the same batch dims), where
/// `H_i = I - tau_i v_i v_iᵀ` and `v_i` is column `i` of `A` below the diagonal with a 1 on it
/// (the representation `geqrf` returns; its entries on and above the diagonal are not read).
/// `k = 0` gives the first `n` columns of the identity. float32/float64 of one dtype, torch's
/// checks and messages. Computed as a sequence of rank-one updates in tensor ops, so the
/// gradients of `A` (zero on and above the diagonal) and of `tau` are exact, as torch's.
pub fn householder_product(a: &Tensor, tau: &Tensor) -> Result<Tensor> {
    check(a, tau)?;
    let (m, n) = rows_cols(a);
    let k = tau.size(-1)?;
    let mut q = Tensor::eye(m, None, a.same_options())?;
    for i in 0..k {
        let below = column(m, a, |r| if r > i { 1.0 } else { 0.0 })?;
        let unit = column(m, a, |r| if r == i { 1.0 } else { 0.0 })?;
        let v = a.narrow(-1, i as isize, 1)?.mul(&below)?.add(&unit)?;
        let t = tau.narrow(-1, i as isize, 1)?.unsqueeze(-1)?;
        // Q H_i = Q - tau_i (Q v) vᵀ
        q = q.sub(&q.matmul(&v)?.mul(&t)?.matmul(&mt(&v)?)?)?;
    }
    q.narrow(-1, 0, n)?.expand(a.dims())?.contiguous()
}

/// `torch.linalg.vander(x, N=N)`: the Vandermonde matrices `[*, n, N]` of the vectors `x`
/// (`[*, n]`; a 0-d `x` counts as `[1]`), columns the powers `x⁰, x¹, …, x^(N-1)` (increasing,
/// unlike [`Tensor::vander`]); `N` defaults to `n` and must be greater than 1. float32/float64 and
/// integer dtypes (an integer `x` gives int64, as `cumprod`); built as torch's, a row of ones and
/// a cumulative product, and differentiable through them.
pub fn vander(x: &Tensor, n: Option<i64>) -> Result<Tensor> {
    let dtype = x.dtype();
    if !(dtype.is_int() || matches!(dtype, DType::F32 | DType::F64)) {
        return Err(Error::msg(format!(
            "linalg.vander supports floating point, complex, and integer tensors, but got {}",
            dtype.scalar_type_name()
        )));
    }
    let x = if x.rank() == 0 { x.unsqueeze(-1)? } else { x.clone() };
    let last = x.dims()[x.rank() - 1] as i64;
    let n = n.unwrap_or(last);
    if n <= 1 {
        return Err(Error::msg("N must be greater than 1."));
    }
    let mut shape = x.dims().to_vec();
    shape.push(n as usize - 1);
    let powers = x.unsqueeze(-1)?.expand(shape.clone())?.cumprod(-1, None)?;
    *shape.last_mut().expect("at least one dim") = 1;
    let ones = Tensor::ones(shape, powers.same_options())?;
    Tensor::cat(&[&ones, &powers], -1)
}
