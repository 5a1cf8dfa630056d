//! Binary elementwise ops: float arithmetic (computed in f32 for f16/bf16 by the caller), and the
//! integer and bool forms with torch's wrapping, Python division and shift rules.

use oxtorch_core::ops::BinaryOp;

use super::builder::{FunctionBuilder, Value};
use super::emit::is_unsigned;
use crate::pjrt::ElementType;

/// `op(x, y)` on floats, or `None` when the op has no float form.
pub fn float_binary(b: &mut FunctionBuilder, op: BinaryOp, x: &Value, y: &Value) -> Option<Value> {
    let name = match op {
        BinaryOp::Add => "stablehlo.add",
        BinaryOp::Sub => "stablehlo.subtract",
        BinaryOp::Mul => "stablehlo.multiply",
        BinaryOp::Div => "stablehlo.divide",
        BinaryOp::Pow => "stablehlo.power",
        BinaryOp::Maximum | BinaryOp::Minimum => return Some(b.max_min(op == BinaryOp::Maximum, x, y)),
        BinaryOp::Atan2 => "stablehlo.atan2",
        BinaryOp::Fmod => "stablehlo.remainder",
        BinaryOp::Remainder => return Some(python_remainder(b, x, y)),
        BinaryOp::FloorDivide => return Some(float_floor_divide(b, x, y)),
        BinaryOp::Hypot => return Some(hypot(b, x, y)),
        BinaryOp::CopySign => return Some(copysign(b, x, y)),
        _ => return None,
    };
    Some(b.same(name, &[x, y]))
}

/// Python's `%`: `r = fmod(a, b)`, plus `b` where `r` is non-zero and its sign differs from `b`'s
/// (floats and integers; unsigned values are never negative).
fn python_remainder(b: &mut FunctionBuilder, x: &Value, y: &Value) -> Value {
    let r = b.same("stablehlo.remainder", &[x, y]);
    let fix = sign_fix(b, &r, y);
    let shifted = b.same("stablehlo.add", &[&r, y]);
    b.select(&fix, &shifted, &r)
}

/// `r != 0 && (r < 0) != (y < 0)`.
fn sign_fix(b: &mut FunctionBuilder, r: &Value, y: &Value) -> Value {
    let zero = b.full_like(r, r.ty().element_type, 0.0);
    let nonzero = b.compare("NE", r, &zero);
    let r_neg = b.compare("LT", r, &zero);
    let y_neg = b.compare("LT", y, &zero);
    let differ = b.same("stablehlo.xor", &[&r_neg, &y_neg]);
    b.same("stablehlo.and", &[&nonzero, &differ])
}

/// torch's float floor division (c10's `div_floor_floating`).
fn float_floor_divide(b: &mut FunctionBuilder, x: &Value, y: &Value) -> Value {
    let et = x.ty().element_type;
    let zero = b.full_like(x, et, 0.0);
    let one = b.full_like(x, et, 1.0);
    let half = b.full_like(x, et, 0.5);
    let quotient = b.same("stablehlo.divide", &[x, y]);
    let m = b.same("stablehlo.remainder", &[x, y]);
    let xm = b.same("stablehlo.subtract", &[x, &m]);
    let div0 = b.same("stablehlo.divide", &[&xm, y]);
    let fix = sign_fix(b, &m, y);
    let dec = b.same("stablehlo.subtract", &[&div0, &one]);
    let div = b.select(&fix, &dec, &div0);
    let fl0 = b.same("stablehlo.floor", &[&div]);
    let frac = b.same("stablehlo.subtract", &[&div, &fl0]);
    let up = b.compare("GT", &frac, &half);
    let inc = b.same("stablehlo.add", &[&fl0, &one]);
    let fl = b.select(&up, &inc, &fl0);
    let signed_zero = copysign(b, &zero, &quotient);
    let div_zero = b.compare("EQ", &div, &zero);
    let r = b.select(&div_zero, &signed_zero, &fl);
    let y_zero = b.compare("EQ", y, &zero);
    b.select(&y_zero, &quotient, &r)
}

/// `√(x² + y²)` scaled by the larger magnitude (no undue overflow); ∞ if either is infinite.
fn hypot(b: &mut FunctionBuilder, x: &Value, y: &Value) -> Value {
    let et = x.ty().element_type;
    let ax = b.same("stablehlo.abs", &[x]);
    let ay = b.same("stablehlo.abs", &[y]);
    let hi = b.max_min(true, &ax, &ay);
    let lo = b.max_min(false, &ax, &ay);
    let ratio = b.same("stablehlo.divide", &[&lo, &hi]);
    let sq = b.same("stablehlo.multiply", &[&ratio, &ratio]);
    let one = b.full_like(x, et, 1.0);
    let s = b.same("stablehlo.add", &[&one, &sq]);
    let root = b.same("stablehlo.sqrt", &[&s]);
    let r = b.same("stablehlo.multiply", &[&hi, &root]);
    let zero = b.full_like(x, et, 0.0);
    let hi_zero = b.compare("EQ", &hi, &zero);
    let r = b.select(&hi_zero, &zero, &r);
    let inf = b.full_like(x, et, f64::INFINITY);
    let x_inf = b.compare("EQ", &ax, &inf);
    let y_inf = b.compare("EQ", &ay, &inf);
    let any_inf = b.same("stablehlo.or", &[&x_inf, &y_inf]);
    b.select(&any_inf, &inf, &r)
}

/// The sign bit of a float (true for -0.0 and negative NaN).
pub fn sign_bit(b: &mut FunctionBuilder, x: &Value) -> Value {
    let int = match x.ty().element_type {
        ElementType::F64 => ElementType::S64,
        ElementType::F32 => ElementType::S32,
        _ => ElementType::S16,
    };
    let ty = super::emit::with_element(x.ty(), int);
    let bits = b.op("stablehlo.bitcast_convert", &[x], "", ty);
    let zero = b.full_like(&bits, int, 0.0);
    b.compare("LT", &bits, &zero)
}

/// `|x|` with the sign of `y`.
fn copysign(b: &mut FunctionBuilder, x: &Value, y: &Value) -> Value {
    let a = b.same("stablehlo.abs", &[x]);
    let n = b.same("stablehlo.negate", &[&a]);
    let neg = sign_bit(b, y);
    b.select(&neg, &n, &a)
}

/// `op(x, y)` on integers or bools, or `None` when the op has no such form. Division and
/// remainder by zero cannot raise here (the CPU backend's `ZeroDivisionError`): XLA's values
/// (-1 for the quotient, `x` for the remainder) come out instead.
pub fn int_binary(b: &mut FunctionBuilder, op: BinaryOp, x: &Value, y: &Value) -> Option<Value> {
    let et = x.ty().element_type;
    if et == ElementType::Pred {
        let name = match op {
            BinaryOp::Add | BinaryOp::BitOr | BinaryOp::Maximum => "stablehlo.or",
            BinaryOp::Mul | BinaryOp::BitAnd | BinaryOp::Minimum => "stablehlo.and",
            BinaryOp::BitXor => "stablehlo.xor",
            _ => return None,
        };
        return Some(b.same(name, &[x, y]));
    }
    let name = match op {
        BinaryOp::Add => "stablehlo.add",
        BinaryOp::Sub => "stablehlo.subtract",
        BinaryOp::Mul => "stablehlo.multiply",
        BinaryOp::Maximum => "stablehlo.maximum",
        BinaryOp::Minimum => "stablehlo.minimum",
        BinaryOp::BitAnd => "stablehlo.and",
        BinaryOp::BitOr => "stablehlo.or",
        BinaryOp::BitXor => "stablehlo.xor",
        BinaryOp::Fmod => "stablehlo.remainder",
        BinaryOp::Remainder => return Some(python_remainder(b, x, y)),
        BinaryOp::FloorDivide => {
            let q = b.same("stablehlo.divide", &[x, y]);
            let r = b.same("stablehlo.remainder", &[x, y]);
            let fix = sign_fix(b, &r, y);
            let one = b.full_like(x, et, 1.0);
            let dec = b.same("stablehlo.subtract", &[&q, &one]);
            return Some(b.select(&fix, &dec, &q));
        }
        BinaryOp::Pow => return Some(int_pow(b, x, y)),
        BinaryOp::ShiftLeft | BinaryOp::ShiftRight => return Some(shift(b, op, x, y)),
        _ => return None,
    };
    Some(b.same(name, &[x, y]))
}

/// torch's integer pow: wrapping `x ** y` for `y >= 0`; for `y < 0`, 1 for base 1, ±1 for base -1
/// (by the parity of `y`), 0 otherwise.
fn int_pow(b: &mut FunctionBuilder, x: &Value, y: &Value) -> Value {
    let et = x.ty().element_type;
    let zero = b.full_like(x, et, 0.0);
    let one = b.full_like(x, et, 1.0);
    if is_unsigned(et) {
        // Powers wrap alike in a wider signed type (the plugin's unsigned power gives 0).
        let wide = if et == ElementType::U64 { ElementType::S64 } else { ElementType::S32 };
        let (xw, yw) = (b.convert(x, wide), b.convert(y, wide));
        let p = b.same("stablehlo.power", &[&xw, &yw]);
        return b.convert(&p, et);
    }
    let y_pos = b.same("stablehlo.maximum", &[y, &zero]);
    let p = b.same("stablehlo.power", &[x, &y_pos]);
    let minus_one = b.full_like(x, et, -1.0);
    let odd_bits = b.same("stablehlo.and", &[y, &one]);
    let odd = b.compare("EQ", &odd_bits, &one);
    let is_m1 = b.compare("EQ", x, &minus_one);
    let is_1 = b.compare("EQ", x, &one);
    let m1_result = b.select(&odd, &minus_one, &one);
    let neg_result = b.select(&is_m1, &m1_result, &zero);
    let neg_result = b.select(&is_1, &one, &neg_result);
    let y_neg = b.compare("LT", y, &zero);
    b.select(&y_neg, &neg_result, &p)
}

/// torch's shifts: 0 (or the sign fill for `>>` of a negative value) when the shift is negative
/// or at least the bit width; `>>` is arithmetic for signed types.
fn shift(b: &mut FunctionBuilder, op: BinaryOp, x: &Value, y: &Value) -> Value {
    let et = x.ty().element_type;
    let bits = (et.size_in_bytes() * 8) as f64;
    let zero = b.full_like(x, et, 0.0);
    let width = b.full_like(x, et, bits);
    let unsigned = is_unsigned(et);
    let too_big = b.compare("GE", y, &width);
    let out_of_range = if unsigned {
        too_big
    } else {
        let neg = b.compare("LT", y, &zero);
        b.same("stablehlo.or", &[&neg, &too_big])
    };
    let (shifted, fill) = if op == BinaryOp::ShiftLeft {
        (b.same("stablehlo.shift_left", &[x, y]), zero)
    } else if unsigned {
        (b.same("stablehlo.shift_right_logical", &[x, y]), zero)
    } else {
        let top = b.full_like(x, et, bits - 1.0);
        let fill = b.same("stablehlo.shift_right_arithmetic", &[x, &top]);
        (b.same("stablehlo.shift_right_arithmetic", &[x, y]), fill)
    };
    b.select(&out_of_range, &fill, &shifted)
}
