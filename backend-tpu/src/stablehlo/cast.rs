//! `Where`, `Cast`, `Copy` and `Full`: selection, dtype conversion with torch's rules, and constants.

use oxtorch_core::{bf16, f16, DType, Element, Scalar};

use super::builder::{FunctionBuilder, Value};
use super::emit::is_float;
use crate::pjrt::{ElementType, Error, Result, TensorType};

/// `cond ? a : b` with a bool `cond` of `a`'s shape.
pub fn lower_where(b: &mut FunctionBuilder, cond: &Value, x: &Value, y: &Value) -> Value {
    b.select(cond, x, y)
}

/// `x` converted to `to` with torch's CPU casting rules (`oxtorch-backend-cpu`'s `cast_elem`):
///
/// * anything to bool is `x != 0` (NaN is true), bool to a number is 0 or 1;
/// * float to int64 truncates toward zero; NaN, ±∞ and values outside int64 give `i64::MIN`;
/// * float to a narrower integer truncates to int32 (NaN, ±∞ and values outside int32 give
///   `i32::MIN`), then wraps;
/// * integers wrap; float64 to float16/bfloat16 and int64 to float16/bfloat16 go through float32
///   (two roundings, as c10 does); other float conversions round to nearest even.
pub fn lower_cast(b: &mut FunctionBuilder, x: &Value, to: ElementType) -> Value {
    let from = x.ty().element_type;
    if from == to {
        return x.clone();
    }
    if to == ElementType::Pred {
        let zero = b.full_like(x, from, 0.0);
        return b.compare("NE", x, &zero);
    }
    let half = matches!(to, ElementType::F16 | ElementType::BF16);
    if !is_float(from) {
        // Integers and bools: `convert` wraps, sign- or zero-extends, and maps bool to 0/1.
        if half && from == ElementType::S64 {
            let f = b.convert(x, ElementType::F32);
            return b.convert(&f, to);
        }
        return b.convert(x, to);
    }
    if is_float(to) {
        if half && from == ElementType::F64 {
            let f = b.convert(x, ElementType::F32);
            return b.convert(&f, to);
        }
        return b.convert(x, to);
    }
    // Float to integer: range-check in f64 (exact for every float type), truncate through int64.
    let wide = b.convert(x, ElementType::F64);
    // int64's range for uint8 too (c10 converts through int64, then wraps).
    let (lo, hi, fallback) = if matches!(to, ElementType::S64 | ElementType::U8) {
        (-(2f64.powi(63)), 2f64.powi(63), i64::MIN)
    } else {
        (-(2f64.powi(31)), 2f64.powi(31), i32::MIN as i64)
    };
    let lo = b.full_like(&wide, ElementType::F64, lo);
    let hi = b.full_like(&wide, ElementType::F64, hi);
    let above = b.compare("GE", &wide, &lo);
    let below = b.compare("LT", &wide, &hi);
    let in_range = b.same("stablehlo.and", &[&above, &below]);
    let t = b.convert(&wide, ElementType::S64);
    let fallback = b.full_like(&t, ElementType::S64, fallback as f64);
    let i = b.select(&in_range, &t, &fallback);
    b.convert(&i, to)
}

/// The MLIR literal of `value` converted to `dtype` with torch's scalar rules (`Element::from_scalar`).
pub fn scalar_literal(dtype: DType, value: Scalar) -> String {
    match dtype {
        DType::Bool => (if bool::from_scalar(value) { "true" } else { "false" }).to_string(),
        DType::U8 => u8::from_scalar(value).to_string(),
        DType::I8 => i8::from_scalar(value).to_string(),
        DType::I16 => i16::from_scalar(value).to_string(),
        DType::I32 => i32::from_scalar(value).to_string(),
        DType::I64 => i64::from_scalar(value).to_string(),
        DType::F16 => format!("0x{:04X}", f16::from_scalar(value).to_bits()),
        DType::BF16 => format!("0x{:04X}", bf16::from_scalar(value).to_bits()),
        DType::F32 => format!("0x{:08X}", f32::from_scalar(value).to_bits()),
        DType::F64 => format!("0x{:016X}", f64::from_scalar(value).to_bits()),
    }
}

/// A new tensor of `shape` and `dtype` filled with `value`.
pub fn lower_full(b: &mut FunctionBuilder, shape: &[usize], value: Scalar, dtype: DType) -> Result<Value> {
    let dims: Vec<i64> = shape.iter().map(|&d| d as i64).collect();
    let ty = TensorType::new(dtype.into(), &dims);
    let attrs = format!("value = dense<{}> : {ty}", scalar_literal(dtype, value));
    Ok(b.op("stablehlo.constant", &[], &attrs, ty))
}

/// The element type of a dtype, for prims that carry one.
pub fn element(dtype: DType) -> ElementType {
    dtype.into()
}

/// A contiguous copy: the value itself (every value is contiguous).
pub fn lower_copy(x: &Value) -> Value {
    x.clone()
}

/// An error for a prim on an element type it has no lowering for.
pub fn unsupported(op: &str, ty: &TensorType) -> Error {
    Error::Unsupported(format!("the xla backend does not lower \"{op}\" for {} yet", ty.element_type))
}
