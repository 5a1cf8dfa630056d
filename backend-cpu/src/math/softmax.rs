//! Fused softmax and log-softmax along one dim: one pass for the maxima, one for the exponentials and
//! their sums, one to normalise; f16/bf16 compute in f32 and round once. Contiguous f32 rows on
//! AVX2 or AVX-512 take the intrinsics kernels of [`super::softmax_row`].

use oxtorch_core::{Error, Layout, Result};
use std::mem::MaybeUninit;

use rayon::prelude::*;

use super::softmax_row;
use crate::float::{AccFloat, Float};
use crate::storage::CpuStorage;
use crate::walk::map1;

/// Softmax (or log-softmax when `log`) of the view `(v, l)` along `dim`; a 0-d view is one element.
pub(crate) fn softmax<T: Float>(v: &[T], l: &Layout, dim: usize, log: bool) -> Result<CpuStorage> {
    let dims = l.dims();
    if dim >= dims.len().max(1) {
        let r = dims.len().max(1) as isize;
        return Err(Error::DimOutOfRange { dim: dim as isize, min: -r, max: r - 1 });
    }
    let n = l.numel();
    let (size, inner) = if dims.is_empty() { (1, 1) } else { (dims[dim], dims[dim + 1..].iter().product()) };
    let block = size * inner;
    if n == 0 || block == 0 {
        return Ok(CpuStorage::from_vec(Vec::<T>::new()));
    }
    let copy;
    let xs: &[T] = match l.contiguous_range() {
        Some(r) => &v[r],
        None => {
            copy = map1(v, l, |x: T| x);
            &copy
        }
    };
    let mut out = crate::pool::take::<T>(n);
    if inner == 1 && std::any::TypeId::of::<T>() == std::any::TypeId::of::<f32>() && softmax_row::available()
    {
        // SAFETY: `T` is `f32` (same type id), so both slices reinterpret to themselves.
        let (xs, o) = unsafe {
            (
                std::slice::from_raw_parts(xs.as_ptr() as *const f32, n),
                std::slice::from_raw_parts_mut(out.as_mut_ptr() as *mut MaybeUninit<f32>, n),
            )
        };
        let rows_per_task = ((1 << 15) / size).max(1);
        o.par_chunks_mut(rows_per_task * size)
            .zip(xs.par_chunks(rows_per_task * size))
            .for_each(|(o, x)| softmax_row::softmax_rows(x, o, size, log));
        // SAFETY: `softmax_rows` wrote all `n` elements; `f32` needs no drop.
        unsafe { out.set_len(n) };
        return Ok(CpuStorage::from_vec(out));
    }
    // Give each task at least ~32K elements so that small rows are not scheduled one by one.
    let min_blocks = (1 << 15) / block + 1;
    out.spare_capacity_mut()[..n]
        .par_chunks_mut(block)
        .zip(xs.par_chunks(block))
        .with_min_len(min_blocks)
        .for_each_init(
            || Vec::<T::Acc>::with_capacity(block),
            |scratch, (o, x)| normalise_block(x, o, size, inner, log, scratch),
        );
    // SAFETY: every block of the output was written by `normalise_block` (each of its passes writes
    // all `size * inner` elements), and `T: Copy` needs no drop.
    unsafe { out.set_len(n) };
    Ok(CpuStorage::from_vec(out))
}

/// Normalises one `[size, inner]` block (row-major) along its first dim.
fn normalise_block<T: Float>(
    x: &[T],
    out: &mut [MaybeUninit<T>],
    size: usize,
    inner: usize,
    log: bool,
    scratch: &mut Vec<T::Acc>,
) {
    if inner == 1 {
        normalise_row(x, out, log, scratch);
    } else {
        normalise_columns(x, out, size, inner, log, scratch);
    }
}

/// `max(m, v)` ignoring NaN in `v` (a NaN still reaches the output through its exponential).
#[inline(always)]
fn max_acc<A: AccFloat>(m: A, v: A) -> A {
    if v > m {
        v
    } else {
        m
    }
}

/// The maximum of a row and the sum of its shifted exponentials (left in `scratch`).
fn max_and_sum<T: Float>(x: &[T], scratch: &mut Vec<T::Acc>) -> (T::Acc, T::Acc) {
    type A<T> = <T as Float>::Acc;
    let neg_inf = A::<T>::from_f64(f64::NEG_INFINITY);
    let max = crate::simd::fold_lanes(x, neg_inf, |m, v: T| max_acc(m, v.to_acc()), max_acc);
    scratch.clear();
    scratch.resize(x.len(), A::<T>::ZERO);
    crate::simd::accumulate(scratch, x, move |_, v: T| (v.to_acc() - max).exp_fast());
    (max, crate::simd::fold_lanes(scratch, A::<T>::ZERO, |s, e| s + e, |a, b| a + b))
}

/// `(max, log_sum)` of one contiguous row, from which its log-softmax is `(x - max) - log_sum`
/// (what [`softmax`] computes along a last dim, bit for bit).
pub(crate) fn log_stats<T: Float>(x: &[T], scratch: &mut Vec<T::Acc>) -> (T::Acc, T::Acc) {
    if std::any::TypeId::of::<T>() == std::any::TypeId::of::<f32>() && softmax_row::available() {
        // SAFETY: `T` is `f32` (same type id), and so is its accumulator.
        let (max, log_sum) = softmax_row::log_stats(unsafe { &*(x as *const [T] as *const [f32]) });
        return (T::Acc::from_f64(max as f64), T::Acc::from_f64(log_sum as f64));
    }
    let (max, sum) = max_and_sum(x, scratch);
    // Along the last dim torch keeps the sum and its log in the storage type (which rounds them for
    // f16/bf16); do the same to give torch's values.
    let r = |v: T::Acc| T::from_acc(v).to_acc();
    (max, r(r(sum).ln()))
}

/// Softmax of one contiguous row (the last-dim case): vectorised slice loops throughout.
fn normalise_row<T: Float>(x: &[T], out: &mut [MaybeUninit<T>], log: bool, scratch: &mut Vec<T::Acc>) {
    type A<T> = <T as Float>::Acc;
    if log {
        let (max, log_sum) = log_stats(x, scratch);
        crate::simd::map1(x, out, move |v: T| T::from_acc((v.to_acc() - max) - log_sum));
    } else {
        let (_, sum) = max_and_sum(x, scratch);
        let inv = A::<T>::ONE / sum;
        crate::simd::map1(scratch, out, move |e| T::from_acc(e * inv));
    }
}

/// Softmax along the first dim of a `[size, inner]` block: each step is a slice loop over a row of
/// `inner` independent columns.
fn normalise_columns<T: Float>(
    x: &[T],
    out: &mut [MaybeUninit<T>],
    size: usize,
    inner: usize,
    log: bool,
    scratch: &mut Vec<T::Acc>,
) {
    type A<T> = <T as Float>::Acc;
    let mut max = crate::pool::checked_vec(inner, A::<T>::from_f64(f64::NEG_INFINITY));
    for row in x.chunks_exact(inner) {
        crate::simd::accumulate(&mut max, row, |m, v: T| max_acc(m, v.to_acc()));
    }
    // Shifted exponentials (each scratch row starts as the maxima) and their column sums.
    scratch.clear();
    scratch.resize(size * inner, A::<T>::ZERO);
    let mut sum = crate::pool::checked_vec(inner, A::<T>::ZERO);
    for (row, e) in x.chunks_exact(inner).zip(scratch.chunks_exact_mut(inner)) {
        e.copy_from_slice(&max);
        crate::simd::accumulate(e, row, |m, v: T| (v.to_acc() - m).exp_fast());
        crate::simd::accumulate(&mut sum, e, |s, v| s + v);
    }
    if log {
        let log_sum: Vec<A<T>> = sum.iter().map(|&s| s.ln()).collect();
        for ((row, e), o) in
            x.chunks_exact(inner).zip(scratch.chunks_exact_mut(inner)).zip(out.chunks_exact_mut(inner))
        {
            e.copy_from_slice(&max);
            crate::simd::accumulate(e, row, |m, v: T| v.to_acc() - m);
            crate::simd::accumulate(e, &log_sum, |d, l| d - l);
            crate::simd::map1(e, o, |d| T::from_acc(d));
        }
    } else {
        let inv: Vec<A<T>> = sum.iter().map(|&s| A::<T>::ONE / s).collect();
        for (e, o) in scratch.chunks_exact_mut(inner).zip(out.chunks_exact_mut(inner)) {
            crate::simd::map2(e, &inv, o, |v, i| T::from_acc(v * i));
        }
    }
}
