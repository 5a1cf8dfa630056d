//! Lowering the elementwise prims (`UnaryOp`, `BinaryOp`, `CmpOp`) to one-op StableHLO programs.
//!
//! Each function returns the text of a module whose `@main` takes the op's inputs and returns
//! its output. Ops or dtypes not lowered yet return an error naming them, never a wrong program.

use std::f64::consts::{LN_10, LN_2};

use oxtorch_core::ops::{BinaryOp, CmpOp, UnaryOp};

use super::builder::{FunctionBuilder, Value};
use crate::pjrt::{ElementType, Error, Result, TensorType};

fn is_float(ty: ElementType) -> bool {
    matches!(ty, ElementType::F16 | ElementType::BF16 | ElementType::F32 | ElementType::F64)
}

fn unsupported(op: &str, ty: &TensorType) -> Error {
    Error::Unsupported(format!("the xla backend does not lower \"{op}\" for {} yet", ty.element_type))
}

/// The program computing `op` on one input of type `input`.
pub fn unary_program(op: UnaryOp, input: &TensorType) -> Result<String> {
    let (mut b, args) = FunctionBuilder::new(std::slice::from_ref(input));
    let out = lower_unary(&mut b, op, &args[0])?;
    Ok(b.finish(&[&out]))
}

/// Emits `op(x)` into `b`.
pub fn lower_unary(b: &mut FunctionBuilder, op: UnaryOp, x: &Value) -> Result<Value> {
    if is_float(x.ty().element_type) { float_unary(b, op, x) } else { int_unary(b, op, x) }
        .ok_or_else(|| unsupported(op.name(), x.ty()))
}

fn float_unary(b: &mut FunctionBuilder, op: UnaryOp, x: &Value) -> Option<Value> {
    let ty = x.ty().clone();
    let simple = |b: &mut FunctionBuilder, name: &str| b.same(name, &[x]);
    Some(match op {
        UnaryOp::Neg => simple(b, "stablehlo.negate"),
        UnaryOp::Abs => simple(b, "stablehlo.abs"),
        UnaryOp::Sign => {
            // stablehlo.sign keeps NaN; torch.sign maps it to 0.
            let s = simple(b, "stablehlo.sign");
            let nan = b.compare("NE", x, x);
            let zero = b.splat(&ty, 0.0);
            b.select(&nan, &zero, &s)
        }
        UnaryOp::Square => b.same("stablehlo.multiply", &[x, x]),
        UnaryOp::Exp => simple(b, "stablehlo.exponential"),
        UnaryOp::Log => simple(b, "stablehlo.log"),
        UnaryOp::Sqrt => simple(b, "stablehlo.sqrt"),
        UnaryOp::Rsqrt => simple(b, "stablehlo.rsqrt"),
        UnaryOp::Reciprocal => {
            let one = b.splat(&ty, 1.0);
            b.same("stablehlo.divide", &[&one, x])
        }
        UnaryOp::Sin => simple(b, "stablehlo.sine"),
        UnaryOp::Cos => simple(b, "stablehlo.cosine"),
        UnaryOp::Tan => simple(b, "stablehlo.tan"),
        UnaryOp::Tanh => simple(b, "stablehlo.tanh"),
        UnaryOp::Sigmoid => simple(b, "stablehlo.logistic"),
        UnaryOp::Relu => {
            // maximum propagates NaN, as torch.relu does.
            let zero = b.splat(&ty, 0.0);
            b.same("stablehlo.maximum", &[x, &zero])
        }
        UnaryOp::Floor => simple(b, "stablehlo.floor"),
        UnaryOp::Ceil => simple(b, "stablehlo.ceil"),
        UnaryOp::Round => simple(b, "stablehlo.round_nearest_even"),
        UnaryOp::Trunc => trunc(b, x),
        UnaryOp::Frac => {
            let t = trunc(b, x);
            b.same("stablehlo.subtract", &[x, &t])
        }
        UnaryOp::Expm1 => simple(b, "stablehlo.exponential_minus_one"),
        UnaryOp::Log1p => simple(b, "stablehlo.log_plus_one"),
        UnaryOp::Exp2 => {
            let two = b.splat(&ty, 2.0);
            b.same("stablehlo.power", &[&two, x])
        }
        UnaryOp::Log2 | UnaryOp::Log10 => {
            let ln = simple(b, "stablehlo.log");
            let base = b.splat(&ty, if op == UnaryOp::Log2 { LN_2 } else { LN_10 });
            b.same("stablehlo.divide", &[&ln, &base])
        }
        UnaryOp::Atan => {
            let one = b.splat(&ty, 1.0);
            b.same("stablehlo.atan2", &[x, &one])
        }
        UnaryOp::Erf => simple(b, "chlo.erf"),
        UnaryOp::IsNan => b.compare("NE", x, x),
        UnaryOp::IsFinite => {
            let bool_ty = TensorType { element_type: ElementType::Pred, dims: ty.dims.clone() };
            b.op("stablehlo.is_finite", &[x], "", bool_ty)
        }
        UnaryOp::IsInf => {
            let a = simple(b, "stablehlo.abs");
            let inf = b.splat(&ty, f64::INFINITY);
            b.compare("EQ", &a, &inf)
        }
        UnaryOp::IsPosInf | UnaryOp::IsNegInf => {
            let inf = b.splat(&ty, if op == UnaryOp::IsPosInf { f64::INFINITY } else { f64::NEG_INFINITY });
            b.compare("EQ", x, &inf)
        }
        UnaryOp::Silu => {
            let s = simple(b, "stablehlo.logistic");
            b.same("stablehlo.multiply", &[x, &s])
        }
        UnaryOp::Gelu => {
            // x * 0.5 * (1 + erf(x / sqrt(2)))
            let inv_sqrt2 = b.splat(&ty, std::f64::consts::FRAC_1_SQRT_2);
            let scaled = b.same("stablehlo.multiply", &[x, &inv_sqrt2]);
            let erf = b.same("chlo.erf", &[&scaled]);
            let one = b.splat(&ty, 1.0);
            let sum = b.same("stablehlo.add", &[&erf, &one]);
            let half = b.splat(&ty, 0.5);
            let h = b.same("stablehlo.multiply", &[x, &half]);
            let y = b.same("stablehlo.multiply", &[&h, &sum]);
            // torch gives NaN at -inf (-inf * 0); XLA's erf approximation stops short of -1
            // there, which would give -inf.
            let ninf = b.splat(&ty, f64::NEG_INFINITY);
            let at_ninf = b.compare("EQ", x, &ninf);
            let nan = b.splat(&ty, f64::NAN);
            b.select(&at_ninf, &nan, &y)
        }
        UnaryOp::LeakyRelu(slope) => {
            let zero = b.splat(&ty, 0.0);
            let positive = b.compare("GT", x, &zero);
            let s = b.splat(&ty, slope);
            let scaled = b.same("stablehlo.multiply", &[x, &s]);
            b.select(&positive, x, &scaled)
        }
        UnaryOp::Hardtanh { min, max } => {
            let lo = b.splat(&ty, min);
            let hi = b.splat(&ty, max);
            let m = b.same("stablehlo.maximum", &[x, &lo]);
            b.same("stablehlo.minimum", &[&m, &hi])
        }
        UnaryOp::Hardsigmoid | UnaryOp::Hardswish => {
            let three = b.splat(&ty, 3.0);
            let shifted = b.same("stablehlo.add", &[x, &three]);
            let zero = b.splat(&ty, 0.0);
            let six = b.splat(&ty, 6.0);
            let lo = b.same("stablehlo.maximum", &[&shifted, &zero]);
            let relu6 = b.same("stablehlo.minimum", &[&lo, &six]);
            let sig = b.same("stablehlo.divide", &[&relu6, &six]);
            if op == UnaryOp::Hardsigmoid {
                sig
            } else {
                b.same("stablehlo.multiply", &[x, &sig])
            }
        }
        _ => return None,
    })
}

/// Rounding toward zero: `x < 0 ? ceil(x) : floor(x)` (NaN stays NaN).
fn trunc(b: &mut FunctionBuilder, x: &Value) -> Value {
    let zero = b.splat(x.ty(), 0.0);
    let negative = b.compare("LT", x, &zero);
    let c = b.same("stablehlo.ceil", &[x]);
    let f = b.same("stablehlo.floor", &[x]);
    b.select(&negative, &c, &f)
}

fn int_unary(b: &mut FunctionBuilder, op: UnaryOp, x: &Value) -> Option<Value> {
    let ty = x.ty().clone();
    let is_bool = ty.element_type == ElementType::Pred;
    Some(match op {
        UnaryOp::BitNot => b.same("stablehlo.not", &[x]),
        _ if is_bool => return None,
        UnaryOp::Neg => b.same("stablehlo.negate", &[x]),
        UnaryOp::Abs => b.same("stablehlo.abs", &[x]),
        UnaryOp::Sign => b.same("stablehlo.sign", &[x]),
        UnaryOp::Square => b.same("stablehlo.multiply", &[x, x]),
        UnaryOp::Relu => {
            let zero = b.splat(&ty, 0.0);
            b.same("stablehlo.maximum", &[x, &zero])
        }
        _ => return None,
    })
}

/// The program computing `op` on two inputs of type `ty`.
pub fn binary_program(op: BinaryOp, ty: &TensorType) -> Result<String> {
    let (mut b, args) = FunctionBuilder::new(&[ty.clone(), ty.clone()]);
    let out = lower_binary(&mut b, op, &args[0], &args[1])?;
    Ok(b.finish(&[&out]))
}

/// Emits `op(x, y)` into `b`; `x` and `y` have one type.
pub fn lower_binary(b: &mut FunctionBuilder, op: BinaryOp, x: &Value, y: &Value) -> Result<Value> {
    let ty = x.ty();
    let float = is_float(ty.element_type);
    let is_bool = ty.element_type == ElementType::Pred;
    let name = match op {
        BinaryOp::Add if !is_bool => "stablehlo.add",
        BinaryOp::Sub if !is_bool => "stablehlo.subtract",
        BinaryOp::Mul if !is_bool => "stablehlo.multiply",
        BinaryOp::Div if float => "stablehlo.divide",
        BinaryOp::Pow if float => "stablehlo.power",
        BinaryOp::Maximum if !is_bool => "stablehlo.maximum",
        BinaryOp::Minimum if !is_bool => "stablehlo.minimum",
        BinaryOp::Atan2 if float => "stablehlo.atan2",
        BinaryOp::Fmod if float => "stablehlo.remainder",
        BinaryOp::BitAnd if !float => "stablehlo.and",
        BinaryOp::BitOr if !float => "stablehlo.or",
        BinaryOp::BitXor if !float => "stablehlo.xor",
        BinaryOp::Remainder if float => return Ok(python_remainder(b, x, y)),
        _ => return Err(unsupported(op.name(), ty)),
    };
    Ok(b.same(name, &[x, y]))
}

/// Python's `%` for floats: `r = fmod(a, b)`, plus `b` where `r` is non-zero and its sign
/// differs from `b`'s.
fn python_remainder(b: &mut FunctionBuilder, x: &Value, y: &Value) -> Value {
    let r = b.same("stablehlo.remainder", &[x, y]);
    let zero = b.splat(x.ty(), 0.0);
    let nonzero = b.compare("NE", &r, &zero);
    let r_neg = b.compare("LT", &r, &zero);
    let y_neg = b.compare("LT", y, &zero);
    let signs_differ = b.same("stablehlo.xor", &[&r_neg, &y_neg]);
    let fix = b.same("stablehlo.and", &[&nonzero, &signs_differ]);
    let shifted = b.same("stablehlo.add", &[&r, y]);
    b.select(&fix, &shifted, &r)
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
