//! `Reduce` (sum, prod, max, min, all, any over dims, kept with size 1) and `ArgReduce` (max/min
//! along one dim with the int64 index of the first chosen element).

use oxtorch_core::ops::{ArgReduceOp, ReduceOp};

use super::builder::{FunctionBuilder, Value};
use super::cast::unsupported;
use super::emit::{highest, is_float, lowest};
use crate::pjrt::{ElementType, Error, Result, TensorType};

/// The reduction `op` of `x` over `dims` (dims past the rank, as for 0-d inputs, are ignored), with
/// the CPU backend's rules: the output keeps the input's dtype; f16/bf16 sums and products
/// accumulate in f32; integer sums and products wrap; max/min propagate NaN; bool supports
/// all/any (and max/min as any/all); other op/dtype pairs are errors, as on the CPU.
pub fn lower_reduce(b: &mut FunctionBuilder, op: ReduceOp, x: &Value, dims: &[usize]) -> Result<Value> {
    let et = x.ty().element_type;
    let rank = x.ty().dims.len();
    let dims: Vec<usize> = dims.iter().copied().filter(|&d| d < rank).collect();
    let float = is_float(et);
    let (name, init) = match (op, et) {
        (ReduceOp::All | ReduceOp::Min, ElementType::Pred) => ("stablehlo.and", 1.0),
        (ReduceOp::Any | ReduceOp::Max, ElementType::Pred) => ("stablehlo.or", 0.0),
        (_, ElementType::Pred) | (ReduceOp::All | ReduceOp::Any, _) => {
            return Err(unsupported(op.name(), x.ty()))
        }
        (ReduceOp::Sum, _) => ("stablehlo.add", 0.0),
        (ReduceOp::Prod, _) => ("stablehlo.multiply", 1.0),
        (ReduceOp::Max, _) => ("stablehlo.maximum", lowest(et)),
        (ReduceOp::Min, _) => ("stablehlo.minimum", highest(et)),
    };
    if dims.is_empty() {
        return Ok(x.clone());
    }
    let widen = float
        && matches!(op, ReduceOp::Sum | ReduceOp::Prod)
        && matches!(et, ElementType::F16 | ElementType::BF16);
    let input = if widen { b.convert(x, ElementType::F32) } else { x.clone() };
    let r = b.reduce_keep(&input, name, init, &dims);
    let r = b.convert(&r, et);
    if float && matches!(op, ReduceOp::Max | ReduceOp::Min) {
        // The CPU plugin's max/min reductions drop NaN (its vectorised maximum is not
        // NaN-propagating inside `reduce`): NaN is reduced separately.
        return Ok(nan_if_any(b, x, &r, &dims));
    }
    Ok(r)
}

/// Max or min of `x` along `dim` with the int64 index of the first chosen element (NaN counts as
/// the extreme, the first NaN wins); outputs `(values, indices)` with `dim` kept with size 1.
pub fn lower_arg_reduce(
    b: &mut FunctionBuilder,
    op: ArgReduceOp,
    x: &Value,
    dim: usize,
) -> Result<Vec<Value>> {
    let et = x.ty().element_type;
    let dims = x.ty().dims.clone();
    if dims.is_empty() {
        let zero = b.scalar(ElementType::S64, 0.0);
        return Ok(vec![x.clone(), zero]);
    }
    if dim >= dims.len() || dims[dim] == 0 {
        return Err(Error::InvalidArgument(format!("Expected reduction dim {dim} to have non-zero size.")));
    }
    let idx_ty = TensorType::new(ElementType::S64, &dims);
    let iota = b.iota(&idx_ty, dim);
    let (init_v, direction) = match op {
        ArgReduceOp::Max => (lowest(et), "GT"),
        ArgReduceOp::Min => (highest(et), "LT"),
    };
    let init_v = b.scalar(et, init_v);
    let init_i = b.scalar(ElementType::S64, i64::MAX as f64);
    let float = is_float(et);
    let r = b.reduce(&[x, &iota], &[&init_v, &init_i], &[dim], |b, a| {
        let (av, ai, bv, bi) = (&a[0], &a[1], &a[2], &a[3]);
        let strictly = b.compare(direction, av, bv);
        let equal = b.compare("EQ", av, bv);
        let first = b.compare("LT", ai, bi);
        let a_better = if float {
            let a_nan = b.compare("NE", av, av);
            let b_nan = b.compare("NE", bv, bv);
            let b_num = b.same("stablehlo.not", &[&b_nan]);
            let nan_wins = b.same("stablehlo.and", &[&a_nan, &b_num]);
            let both_nan = b.same("stablehlo.and", &[&a_nan, &b_nan]);
            let tie = b.same("stablehlo.or", &[&equal, &both_nan]);
            let tie_first = b.same("stablehlo.and", &[&tie, &first]);
            let s = b.same("stablehlo.or", &[&nan_wins, &strictly]);
            b.same("stablehlo.or", &[&s, &tie_first])
        } else {
            let tie_first = b.same("stablehlo.and", &[&equal, &first]);
            b.same("stablehlo.or", &[&strictly, &tie_first])
        };
        let v = b.select(&a_better, av, bv);
        let i = b.select(&a_better, ai, bi);
        vec![v, i]
    });
    let mut keep = dims;
    keep[dim] = 1;
    let v = b.reshape(&r[0], &keep);
    let i = b.reshape(&r[1], &keep);
    Ok(vec![v, i])
}

/// `r` (the reduction of `x` over `dims`, kept) with NaN wherever the reduced slice holds a NaN.
pub fn nan_if_any(b: &mut FunctionBuilder, x: &Value, r: &Value, dims: &[usize]) -> Value {
    let is_nan = b.compare("NE", x, x);
    let any = b.reduce_keep(&is_nan, "stablehlo.or", 0.0, dims);
    let nan = b.full_like(r, r.ty().element_type, f64::NAN);
    b.select(&any, &nan, r)
}
