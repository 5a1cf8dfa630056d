//! `scatter` with an optional reduction: a copy of `self` with source values written or combined at
//! indexed positions. Runs serially in index order, so duplicate indices resolve deterministically
//! (the last write wins for plain scatter).

use oxtorch_core::ops::ReduceOp;
use oxtorch_core::{Element, Error, Layout, Result};

use super::coords::{check_indices, offset_without, Odometer};
use crate::copy::to_contiguous;
use crate::storage::{CpuElement, CpuStorage};
use oxtorch_core::BackendStorage;

type Operand<'a> = (&'a CpuStorage, &'a Layout);

/// `a (op) b` with torch's CPU semantics: floats in f64 rounded once to `T`, integers wrapping in
/// i64, bools as or/and; max/min propagate NaN.
#[inline]
fn combine<T: Element>(op: ReduceOp, a: T, b: T) -> T {
    if T::DTYPE.is_float() {
        let (x, y) = (a.to_f64(), b.to_f64());
        T::from_f64(match op {
            ReduceOp::Sum => x + y,
            ReduceOp::Prod => x * y,
            ReduceOp::Max if x.is_nan() || y.is_nan() => f64::NAN,
            ReduceOp::Max => x.max(y),
            ReduceOp::Min if x.is_nan() || y.is_nan() => f64::NAN,
            ReduceOp::Min => x.min(y),
            ReduceOp::All | ReduceOp::Any => unreachable!("not a scatter reduction"),
        })
    } else {
        let (x, y) = (a.to_i64(), b.to_i64());
        T::from_i64(match op {
            ReduceOp::Sum => x.wrapping_add(y),
            ReduceOp::Prod => x.wrapping_mul(y),
            ReduceOp::Max => x.max(y),
            ReduceOp::Min => x.min(y),
            ReduceOp::All | ReduceOp::Any => unreachable!("not a scatter reduction"),
        })
    }
}

#[allow(clippy::too_many_arguments)]
fn typed<T: CpuElement>(
    out: &mut [T],
    out_strides: &[usize],
    idx: &[i64],
    il: &Layout,
    src: &[T],
    sl: &Layout,
    dim: usize,
    reduce: Option<ReduceOp>,
    include_self: bool,
) {
    let mut seen = if include_self || reduce.is_none() { Vec::new() } else { vec![false; out.len()] };
    let mut od = Odometer::new(il.dims(), 0);
    for _ in 0..il.numel() {
        let c = od.coords();
        let i = idx[offset_without(c, il.strides(), il.offset(), usize::MAX)] as usize;
        let d = offset_without(c, out_strides, 0, dim) + i * out_strides[dim];
        let v = src[offset_without(c, sl.strides(), sl.offset(), usize::MAX)];
        out[d] = match reduce {
            None => v,
            Some(_) if !seen.is_empty() && !seen[d] => {
                seen[d] = true;
                v
            }
            Some(op) => combine(op, out[d], v),
        };
        od.advance();
    }
}

/// Scatters `src` into a copy of `self` at `index` along `dim` (see [`oxtorch_core::ops::IndexOp`]).
pub(super) fn scatter(
    (s, l): Operand,
    (idx, il): Operand,
    (src, sl): Operand,
    dim: usize,
    reduce: Option<ReduceOp>,
    include_self: bool,
) -> Result<CpuStorage> {
    let CpuStorage::I64(idx) = idx else {
        return Err(Error::msg("scatter(): Expected dtype int64 for index"));
    };
    if s.dtype() != src.dtype() {
        return Err(Error::msg(format!(
            "scatter(): Expected self.dtype to be equal to src.dtype, got {} and {}",
            s.dtype(),
            src.dtype()
        )));
    }
    if il.rank() != l.rank() || dim >= l.rank() {
        return Err(Error::shape("Index tensor must have the same number of dimensions as self tensor"));
    }
    let too_big = (0..il.rank()).any(|k| k != dim && il.dims()[k] > l.dims()[k]);
    if too_big || sl.rank() != il.rank() || il.dims().iter().zip(sl.dims()).any(|(i, s)| i > s) {
        return Err(Error::shape(format!(
            "Expected index {:?} to be no larger than self {:?} apart from dimension {dim} and to be no larger size than src {:?}",
            il.dims(),
            l.dims(),
            sl.dims()
        )));
    }
    check_indices(idx, il, dim, l.dims()[dim])?;
    let mut out = to_contiguous(s, l, s.dtype())?;
    let strides = oxtorch_core::shape::contiguous_strides(l.dims());
    macro_rules! run {
        ($o:ident, $v:ident) => {
            typed($o, &strides, idx, il, $v, sl, dim, reduce, include_self)
        };
    }
    use CpuStorage as S;
    match (&mut out, src) {
        (S::Bool(o), S::Bool(v)) => run!(o, v),
        (S::U8(o), S::U8(v)) => run!(o, v),
        (S::I8(o), S::I8(v)) => run!(o, v),
        (S::I16(o), S::I16(v)) => run!(o, v),
        (S::I32(o), S::I32(v)) => run!(o, v),
        (S::I64(o), S::I64(v)) => run!(o, v),
        (S::F16(o), S::F16(v)) => run!(o, v),
        (S::BF16(o), S::BF16(v)) => run!(o, v),
        (S::F32(o), S::F32(v)) => run!(o, v),
        (S::F64(o), S::F64(v)) => run!(o, v),
        _ => unreachable!("dtypes checked above"),
    }
    Ok(out)
}
