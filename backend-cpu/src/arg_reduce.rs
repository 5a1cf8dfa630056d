//! Max/min along one dim with the index of the chosen element.

use oxtorch_core::ops::ArgReduceOp;
use oxtorch_core::{Error, Layout, Result};

use crate::reduce::split_layout;
use crate::storage::{CpuElement, CpuStorage};
use crate::walk::{par_collect, Plan};

/// Along `dim`, the best element and its index, comparing elements by `key` (the element itself, or
/// f32 for the half types, whose own comparisons are branchy bit tests).
fn typed<T: CpuElement, K: PartialOrd + Copy>(
    op: ArgReduceOp,
    v: &[T],
    l: &Layout,
    dim: usize,
    key: impl Fn(T) -> K + Copy + Sync,
) -> (CpuStorage, CpuStorage) {
    let (kl, rl) = split_layout(l, &[dim]);
    let n = rl.numel();
    let rs = rl.strides().first().copied().unwrap_or(1);
    let kplan = Plan::new([&kl]);
    let [ks] = kplan.inner_strides();
    // Only NaN is unordered with itself.
    let is_nan = |k: K| k.partial_cmp(&k).is_none();
    // Whether `x` replaces the current best `b`: strictly better, or the first NaN (which then sticks).
    let better = move |x: K, b: K| match op {
        ArgReduceOp::Max => x > b || (is_nan(x) && !is_nan(b)),
        ArgReduceOp::Min => x < b || (is_nan(x) && !is_nan(b)),
    };
    let pairs: Vec<(T, i64)> = par_collect(kl.numel(), |start, out| {
        let mut o = 0;
        kplan.for_runs(start, start + out.len(), |[ko], len| {
            for i in 0..len {
                let base = ko + i * ks;
                let (mut best, mut at) = (key(v[base]), 0usize);
                for j in 1..n {
                    let x = key(v[base + j * rs]);
                    if better(x, best) {
                        best = x;
                        at = j;
                    }
                }
                out[o + i].write((v[base + at * rs], at as i64));
            }
            o += len;
        });
    });
    let (vals, idx): (Vec<T>, Vec<i64>) = pairs.into_iter().unzip();
    (CpuStorage::from_vec(vals), CpuStorage::from_vec(idx))
}

/// Reduces `dim` (which must be non-empty) keeping it with size 1; returns `(values, int64 indices)`.
pub fn arg_reduce(
    op: ArgReduceOp,
    s: &CpuStorage,
    l: &Layout,
    dim: usize,
) -> Result<(CpuStorage, CpuStorage)> {
    let size = if l.rank() == 0 { 1 } else { l.dims().get(dim).copied().unwrap_or(0) };
    if size == 0 {
        return Err(Error::msg(format!("Expected reduction dim {dim} to have non-zero size.")));
    }
    use oxtorch_core::half_convert::{bf16_to_f32, f16_to_f32};
    fn same<T>(x: T) -> T {
        x
    }
    Ok(match s {
        CpuStorage::Bool(v) => typed(op, v, l, dim, same),
        CpuStorage::U8(v) => typed(op, v, l, dim, same),
        CpuStorage::I8(v) => typed(op, v, l, dim, same),
        CpuStorage::I16(v) => typed(op, v, l, dim, same),
        CpuStorage::I32(v) => typed(op, v, l, dim, same),
        CpuStorage::I64(v) => typed(op, v, l, dim, same),
        CpuStorage::F16(v) => typed(op, v, l, dim, f16_to_f32),
        CpuStorage::BF16(v) => typed(op, v, l, dim, bf16_to_f32),
        CpuStorage::F32(v) => typed(op, v, l, dim, same),
        CpuStorage::F64(v) => typed(op, v, l, dim, same),
    })
}
