//! Cumulative scans along one dim: cumsum, cumprod, cummax, cummin, logcumsumexp.

use oxtorch_core::Layout;

use super::rows::per_row;
use crate::float::{AccFloat, Float};
use crate::storage::CpuElement;
use crate::unary::Int;

/// Runs `step(acc, x) -> (acc, out)` along every row, starting each row from `init`.
fn scan<T: CpuElement, C: Copy + Sync>(
    v: &[T],
    l: &Layout,
    dim: usize,
    init: C,
    step: impl Fn(C, T) -> (C, T) + Sync,
) -> Vec<T> {
    let n = l.dims()[dim];
    per_row(v, l, dim, n, |row, out, _: &mut [()]| {
        let mut acc = init;
        for (o, &x) in out.iter_mut().zip(row.iter()) {
            let (a, y) = step(acc, x);
            acc = a;
            *o = y;
        }
    })
    .0
}

/// Cumulative sum of floats, the running total in f64 for f32 (f32 for f16/bf16), rounded per
/// output, as torch's CPU kernel.
pub(crate) fn cumsum_float<T: Float>(v: &[T], l: &Layout, dim: usize) -> Vec<T> {
    scan(v, l, dim, T::Wide::ZERO, |c, x| {
        let c = c + x.to_wide();
        (c, T::from_wide(c))
    })
}

/// Cumulative product of floats, the running product as wide as [`cumsum_float`]'s.
pub(crate) fn cumprod_float<T: Float>(v: &[T], l: &Layout, dim: usize) -> Vec<T> {
    scan(v, l, dim, T::Wide::ONE, |c, x| {
        let c = c * x.to_wide();
        (c, T::from_wide(c))
    })
}

/// Cumulative sum of integers (wrapping).
pub(crate) fn cumsum_int<T: Int>(v: &[T], l: &Layout, dim: usize) -> Vec<T> {
    scan(v, l, dim, T::ZERO, |c, x| {
        let c = c.wadd(x);
        (c, c)
    })
}

/// Cumulative product of integers (wrapping).
pub(crate) fn cumprod_int<T: Int>(v: &[T], l: &Layout, dim: usize) -> Vec<T> {
    scan(v, l, dim, T::ONE, |c, x| {
        let c = c.wmul(x);
        (c, c)
    })
}

/// torch's `_log_add_exp_helper`.
#[inline(always)]
fn log_add_exp<A: AccFloat>(x: A, y: A) -> A {
    let (min, max) = if y.is_nan() {
        (y, y)
    } else if x.is_nan() {
        (x, x)
    } else if x < y {
        (x, y)
    } else {
        (y, x)
    };
    let finite = min.abs() < A::ONE / A::ZERO;
    if min != max || finite {
        (min - max).exp().ln_1p() + max
    } else {
        x
    }
}

/// `log(cumsum(exp(x)))`, computed stably, the running value as wide as [`cumsum_float`]'s.
pub(crate) fn logcumsumexp<T: Float>(v: &[T], l: &Layout, dim: usize) -> Vec<T> {
    let init = -(W::<T>::ONE / W::<T>::ZERO);
    scan(v, l, dim, init, |c, x| {
        let c = log_add_exp(c, x.to_wide());
        (c, T::from_wide(c))
    })
}

type W<T> = <T as Float>::Wide;

/// Running max (`is_max`) or min with the index of the last extreme element; NaN propagates and
/// each new NaN takes over the index (torch's `cummax_cummin_helper`).
pub(crate) fn cum_extreme<T: CpuElement>(
    v: &[T],
    l: &Layout,
    dim: usize,
    is_max: bool,
) -> (Vec<T>, Vec<i64>) {
    let n = l.dims()[dim];
    per_row(v, l, dim, n, |row, vals, idx| {
        let (mut out, mut at) = (row[0], 0i64);
        for (i, &x) in row.iter().enumerate() {
            let better = if is_max { x >= out } else { x <= out };
            if x.is_nan_elem() || (!out.is_nan_elem() && better) {
                out = x;
                at = i as i64;
            }
            vals[i] = out;
            idx[i] = at;
        }
    })
}
