//! Lowering the elementwise prims (`UnaryOp`, `BinaryOp`, `CmpOp`): dispatch, the f16/bf16 rule, and
//! one-op programs.
//!
//! As on the CPU backend, f16 and bf16 compute in f32 and round once per op (except where the CPU
//! rounds every step, as for `logit`). Ops or dtypes without a lowering return
//! [`Error::Unsupported`] naming them, never a wrong program.

use oxtorch_core::ops::{BinaryOp, CmpOp, UnaryOp};

use super::binary::{float_binary, int_binary};
use super::builder::{FunctionBuilder, Value};
use super::cast::unsupported;
use super::emit::is_float;
use super::unary::{float_unary, int_unary};
use crate::pjrt::{ElementType, Result, TensorType};

fn is_half(ty: ElementType) -> bool {
    matches!(ty, ElementType::F16 | ElementType::BF16)
}

/// Runs `f` on `values` widened to f32 when they are f16/bf16, and narrows float results back.
fn in_f32(
    b: &mut FunctionBuilder,
    values: &[&Value],
    f: impl FnOnce(&mut FunctionBuilder, &[Value]) -> Option<Value>,
) -> Option<Value> {
    let et = values[0].ty().element_type;
    if !is_half(et) {
        let owned: Vec<Value> = values.iter().map(|v| (*v).clone()).collect();
        return f(b, &owned);
    }
    let wide: Vec<Value> = values.iter().map(|v| b.convert(v, ElementType::F32)).collect();
    let out = f(b, &wide)?;
    Some(if out.ty().element_type == ElementType::F32 { b.convert(&out, et) } else { out })
}

/// The program computing `op` on one input of type `input`.
pub fn unary_program(op: UnaryOp, input: &TensorType) -> Result<String> {
    let (mut b, args) = FunctionBuilder::new(std::slice::from_ref(input));
    let out = lower_unary(&mut b, op, &args[0])?;
    Ok(b.finish(&[&out]))
}

/// Emits `op(x)` into `b`.
pub fn lower_unary(b: &mut FunctionBuilder, op: UnaryOp, x: &Value) -> Result<Value> {
    let et = x.ty().element_type;
    let out = if !is_float(et) {
        int_unary(b, op, x)
    } else if matches!(op, UnaryOp::Logit { .. } | UnaryOp::NanToNum { .. }) {
        // The CPU backend rounds every step of logit to the storage type; nan_to_num only selects.
        float_unary(b, op, x)
    } else {
        in_f32(b, &[x], |b, v| float_unary(b, op, &v[0]))
    };
    out.ok_or_else(|| unsupported(op.name(), x.ty()))
}

/// The program computing `op` on two inputs of type `ty`.
pub fn binary_program(op: BinaryOp, ty: &TensorType) -> Result<String> {
    let (mut b, args) = FunctionBuilder::new(&[ty.clone(), ty.clone()]);
    let out = lower_binary(&mut b, op, &args[0], &args[1])?;
    Ok(b.finish(&[&out]))
}

/// Emits `op(x, y)` into `b`; `x` and `y` have one type.
pub fn lower_binary(b: &mut FunctionBuilder, op: BinaryOp, x: &Value, y: &Value) -> Result<Value> {
    let out = if is_float(x.ty().element_type) {
        in_f32(b, &[x, y], |b, v| float_binary(b, op, &v[0], &v[1]))
    } else {
        int_binary(b, op, x, y)
    };
    out.ok_or_else(|| unsupported(op.name(), x.ty()))
}

/// The program comparing two inputs of type `ty` (bool result).
pub fn compare_program(op: CmpOp, ty: &TensorType) -> Result<String> {
    let (mut b, args) = FunctionBuilder::new(&[ty.clone(), ty.clone()]);
    let out = lower_compare(&mut b, op, &args[0], &args[1]);
    Ok(b.finish(&[&out]))
}

/// Emits the comparison `op(x, y)` into `b` (bool result).
pub fn lower_compare(b: &mut FunctionBuilder, op: CmpOp, x: &Value, y: &Value) -> Value {
    let direction = match op {
        CmpOp::Eq => "EQ",
        CmpOp::Ne => "NE",
        CmpOp::Lt => "LT",
        CmpOp::Le => "LE",
        CmpOp::Gt => "GT",
        CmpOp::Ge => "GE",
    };
    b.compare(direction, x, y)
}
