//! Fused softmax and log-softmax along one dim: one pass for the maxima, one for the exponentials and
//! their sums, one to normalise; f16/bf16 compute in f32 and round once.

use oxtorch_core::{Error, Layout, Result};
use rayon::prelude::*;

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
    let mut out = vec![T::ZERO; n];
    // Give each task at least ~32K elements so that small rows are not scheduled one by one.
    let min_blocks = (1 << 15) / block + 1;
    out.par_chunks_mut(block).zip(xs.par_chunks(block)).with_min_len(min_blocks).for_each_init(
        || Vec::<T::Acc>::with_capacity(block),
        |scratch, (o, x)| normalise_block(x, o, size, inner, log, scratch),
    );
    Ok(CpuStorage::from_vec(out))
}

/// Normalises one `[size, inner]` block (row-major) along its first dim.
fn normalise_block<T: Float>(
    x: &[T],
    out: &mut [T],
    size: usize,
    inner: usize,
    log: bool,
    scratch: &mut Vec<T::Acc>,
) {
    type A<T> = <T as Float>::Acc;
    // Maxima per column; a NaN anywhere makes its column NaN through the exponentials below.
    let mut max = vec![A::<T>::from_f64(f64::NEG_INFINITY); inner];
    for row in x.chunks_exact(inner) {
        crate::simd::accumulate(&mut max, row, |m: A<T>, v: T| {
            let v = v.to_acc();
            if v > m {
                v
            } else {
                m
            }
        });
    }
    // Shifted exponentials and their column sums.
    scratch.clear();
    scratch.resize(size * inner, A::<T>::ZERO);
    let mut sum = vec![A::<T>::ZERO; inner];
    for (row, e) in x.chunks_exact(inner).zip(scratch.chunks_exact_mut(inner)) {
        for j in 0..inner {
            let v = (row[j].to_acc() - max[j]).exp();
            e[j] = v;
            sum[j] = sum[j] + v;
        }
    }
    if log {
        // Along the last dim torch keeps the sum and its log in the storage type (which rounds
        // them for f16/bf16); do the same to give torch's values.
        let r = |v: A<T>| if inner == 1 { T::from_acc(v).to_acc() } else { v };
        let log_sum: Vec<A<T>> = sum.iter().map(|&s| r(r(s).ln())).collect();
        for (row, o) in x.chunks_exact(inner).zip(out.chunks_exact_mut(inner)) {
            for j in 0..inner {
                o[j] = T::from_acc((row[j].to_acc() - max[j]) - log_sum[j]);
            }
        }
    } else {
        let inv: Vec<A<T>> = sum.iter().map(|&s| A::<T>::ONE / s).collect();
        for (e, o) in scratch.chunks_exact(inner).zip(out.chunks_exact_mut(inner)) {
            for j in 0..inner {
                o[j] = T::from_acc(e[j] * inv[j]);
            }
        }
    }
}
