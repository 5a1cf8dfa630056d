//! Reductions over a set of dims (output keeps them with size 1).

use half::{bf16, f16};
use oxtorch_core::ops::ReduceOp;
use oxtorch_core::{DType, Error, Layout, Result};

use crate::float::Float;
use crate::storage::{CpuElement, CpuStorage};
use crate::unary::Int;
use crate::walk::{par_collect, Plan, PAR_MIN_CHUNK};
use rayon::prelude::*;

/// Element types with a lowest and highest value (the identities of max and min).
pub(crate) trait Bounded: CpuElement {
    const LOWEST: Self;
    const HIGHEST: Self;
}

macro_rules! bounded {
    ($($t:ty: $lo:expr, $hi:expr);*) => {$(
        impl Bounded for $t {
            const LOWEST: Self = $lo;
            const HIGHEST: Self = $hi;
        }
    )*};
}
bounded!(bool: false, true; u8: u8::MIN, u8::MAX; i8: i8::MIN, i8::MAX; i16: i16::MIN, i16::MAX;
    i32: i32::MIN, i32::MAX; i64: i64::MIN, i64::MAX; f32: f32::NEG_INFINITY, f32::INFINITY;
    f64: f64::NEG_INFINITY, f64::INFINITY; f16: f16::NEG_INFINITY, f16::INFINITY;
    bf16: bf16::NEG_INFINITY, bf16::INFINITY);

/// Splits `l` into the layout of the kept dims (with `l`'s offset) and of the reduced dims (offset 0).
pub(crate) fn split_layout(l: &Layout, dims: &[usize]) -> (Layout, Layout) {
    let (mut ks, mut kst, mut rs, mut rst) = (vec![], vec![], vec![], vec![]);
    for d in 0..l.rank() {
        if dims.contains(&d) {
            rs.push(l.dims()[d]);
            rst.push(l.strides()[d]);
        } else {
            ks.push(l.dims()[d]);
            kst.push(l.strides()[d]);
        }
    }
    let kept = Layout::new(ks, kst, l.offset()).expect("same rank");
    let red = Layout::new(rs, rst, 0).expect("same rank");
    (kept, red)
}

/// Elements per block when folding a contiguous row: blocks fold with vector lanes, and block
/// results are merged in order, which keeps f32 sums accurate for long rows.
const BLOCK: usize = 2048;

/// The generic reduction driver: folds every output's elements with `step`, merges partial results
/// with `merge`, and converts with `finish`.
pub(crate) fn reduce_with<T, C, U>(
    v: &[T],
    l: &Layout,
    dims: &[usize],
    init: C,
    step: impl Fn(C, T) -> C + Sync + Copy,
    merge: impl Fn(C, C) -> C + Sync + Copy,
    finish: impl Fn(C) -> U + Sync + Copy,
) -> Vec<U>
where
    T: Copy + Sync,
    C: Copy + Send + Sync,
    U: Copy + Send + 'static,
{
    let (kl, rl) = split_layout(l, dims);
    let n_out = kl.numel();
    let n_red = rl.numel();
    if n_red == 0 || n_out == 0 {
        return crate::pool::checked_vec(n_out, finish(init));
    }
    let rplan = Plan::new([&rl]);
    let kplan = Plan::new([&kl]);
    let [rs] = rplan.inner_strides();
    let [ks] = kplan.inner_strides();

    let fold_row = |row: &[T]| -> C {
        let mut c = init;
        for block in row.chunks(BLOCK) {
            c = merge(c, crate::simd::fold_lanes(block, init, step, merge));
        }
        c
    };
    let reduce_one = |base: usize| -> C {
        if rplan.is_contiguous() {
            let row = &v[base..base + n_red];
            if n_red >= 2 * PAR_MIN_CHUNK && n_out < rayon::current_num_threads() {
                return row.par_chunks(PAR_MIN_CHUNK).map(fold_row).reduce(|| init, &merge);
            }
            return fold_row(row);
        }
        let mut c = init;
        rplan.for_runs(0, n_red, |[ro], len| {
            for i in 0..len {
                c = step(c, v[base + ro + i * rs]);
            }
        });
        c
    };

    // Reducing outer dims of a tensor whose kept dims are contiguous: accumulate whole rows.
    if kplan.is_contiguous() && !rplan.is_contiguous() && n_out >= 8 {
        let base = kl.offset();
        return par_collect(n_out, |start, out| {
            let mut acc = crate::pool::checked_vec(out.len(), init);
            rplan.for_runs(0, n_red, |[ro], len| {
                for i in 0..len {
                    let off = base + start + ro + i * rs;
                    crate::simd::accumulate(&mut acc, &v[off..off + out.len()], step);
                }
            });
            for (o, c) in out.iter_mut().zip(acc) {
                o.write(finish(c));
            }
        });
    }

    par_collect(n_out, |start, out| {
        let mut o = 0;
        kplan.for_runs(start, start + out.len(), |[ko], len| {
            for i in 0..len {
                out[o + i].write(finish(reduce_one(ko + i * ks)));
            }
            o += len;
        });
    })
}

fn float_reduce<T: Float + Bounded>(op: ReduceOp, v: &[T], l: &Layout, dims: &[usize]) -> Result<CpuStorage> {
    type A<T> = <T as Float>::Acc;
    let out = match op {
        ReduceOp::Sum => reduce_with(
            v,
            l,
            dims,
            <A<T> as crate::float::AccFloat>::ZERO,
            |c, x: T| c + x.to_acc(),
            |a, b| a + b,
            T::from_acc,
        ),
        ReduceOp::Prod => reduce_with(
            v,
            l,
            dims,
            <A<T> as crate::float::AccFloat>::ONE,
            // In the element type, rounded after every product as torch's reduction of f16/bf16
            // does (an f32 carrier drifts from torch's value: the product of eight bf16(1.1) is
            // 2.15625 there, 2.171875 accumulated in f32).
            |c, x: T| T::from_acc(c * x.to_acc()).to_acc(),
            |a, b| T::from_acc(a * b).to_acc(),
            T::from_acc,
        ),
        ReduceOp::Max => reduce_with(v, l, dims, T::LOWEST, max_nan, max_nan, |c| c),
        ReduceOp::Min => reduce_with(v, l, dims, T::HIGHEST, min_nan, min_nan, |c| c),
        ReduceOp::All | ReduceOp::Any => {
            return Err(Error::UnsupportedDType { op: op.name(), dtype: T::DTYPE })
        }
    };
    Ok(CpuStorage::from_vec(out))
}

#[inline(always)]
fn max_nan<T: CpuElement>(c: T, x: T) -> T {
    if x > c || x.is_nan_elem() {
        x
    } else {
        c
    }
}

#[inline(always)]
fn min_nan<T: CpuElement>(c: T, x: T) -> T {
    if x < c || x.is_nan_elem() {
        x
    } else {
        c
    }
}

fn int_reduce<T: Int + Bounded>(op: ReduceOp, v: &[T], l: &Layout, dims: &[usize]) -> Result<CpuStorage> {
    let out = match op {
        ReduceOp::Sum => reduce_with(v, l, dims, T::ZERO, T::wadd, T::wadd, |c| c),
        ReduceOp::Prod => reduce_with(v, l, dims, T::ONE, T::wmul, T::wmul, |c| c),
        ReduceOp::Max => reduce_with(v, l, dims, T::LOWEST, Ord::max, Ord::max, |c| c),
        ReduceOp::Min => reduce_with(v, l, dims, T::HIGHEST, Ord::min, Ord::min, |c| c),
        ReduceOp::All | ReduceOp::Any => {
            return Err(Error::UnsupportedDType { op: op.name(), dtype: T::DTYPE })
        }
    };
    Ok(CpuStorage::from_vec(out))
}

fn bool_reduce(op: ReduceOp, v: &[bool], l: &Layout, dims: &[usize]) -> Result<CpuStorage> {
    let and = |a: bool, b: bool| a & b;
    let or = |a: bool, b: bool| a | b;
    let out = match op {
        ReduceOp::All | ReduceOp::Min => reduce_with(v, l, dims, true, and, and, |c| c),
        ReduceOp::Any | ReduceOp::Max => reduce_with(v, l, dims, false, or, or, |c| c),
        ReduceOp::Sum | ReduceOp::Prod => {
            return Err(Error::UnsupportedDType { op: op.name(), dtype: DType::Bool })
        }
    };
    Ok(CpuStorage::from_vec(out))
}

/// Reduces `dims` (sorted, unique) of the view `(s, l)`; the output is contiguous with those dims
/// kept at size 1.
pub fn reduce(op: ReduceOp, s: &CpuStorage, l: &Layout, dims: &[usize]) -> Result<CpuStorage> {
    if let Some(&d) = dims.iter().find(|&&d| d >= l.rank().max(1)) {
        return Err(Error::msg(format!("{}: dim {d} out of range for rank {}", op.name(), l.rank())));
    }
    match s {
        CpuStorage::Bool(v) => bool_reduce(op, v, l, dims),
        CpuStorage::U8(v) => int_reduce(op, v, l, dims),
        CpuStorage::I8(v) => int_reduce(op, v, l, dims),
        CpuStorage::I16(v) => int_reduce(op, v, l, dims),
        CpuStorage::I32(v) => int_reduce(op, v, l, dims),
        CpuStorage::I64(v) => int_reduce(op, v, l, dims),
        CpuStorage::F16(v) => float_reduce(op, v, l, dims),
        CpuStorage::BF16(v) => float_reduce(op, v, l, dims),
        CpuStorage::F32(v) => float_reduce(op, v, l, dims),
        CpuStorage::F64(v) => float_reduce(op, v, l, dims),
    }
}
