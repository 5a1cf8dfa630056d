//! Unary elementwise ops: float math and activations (f16/bf16 widened by the caller) and the
//! integer and bool forms.

use std::f64::consts::{FRAC_1_SQRT_2, LN_10, LN_2, PI};

use oxtorch_core::ops::UnaryOp;

use super::builder::{FunctionBuilder, Value};
use super::emit::{highest, is_unsigned, lowest, with_element};
use super::softmax::softmax;
use crate::pjrt::ElementType;

/// `op(x)` on a float `x`, or `None` when the op has no float form.
pub fn float_unary(b: &mut FunctionBuilder, op: UnaryOp, x: &Value) -> Option<Value> {
    let ty = x.ty().clone();
    let et = ty.element_type;
    let simple = |b: &mut FunctionBuilder, name: &str| b.same(name, &[x]);
    let c = |b: &mut FunctionBuilder, v: f64| b.full_like(x, et, v);
    Some(match op {
        UnaryOp::Neg => simple(b, "stablehlo.negate"),
        UnaryOp::Abs => simple(b, "stablehlo.abs"),
        UnaryOp::Sign => {
            // stablehlo.sign keeps NaN and -0.0; torch.sign maps NaN to 0 and -0.0 to +0.0.
            let s = simple(b, "stablehlo.sign");
            let nan = b.compare("NE", x, x);
            let zero = c(b, 0.0);
            let is_zero = b.compare("EQ", x, &zero);
            let nan_or_zero = b.same("stablehlo.or", &[&nan, &is_zero]);
            b.select(&nan_or_zero, &zero, &s)
        }
        UnaryOp::Square => b.same("stablehlo.multiply", &[x, x]),
        UnaryOp::Exp => simple(b, "stablehlo.exponential"),
        UnaryOp::Log => simple(b, "stablehlo.log"),
        UnaryOp::Sqrt => simple(b, "stablehlo.sqrt"),
        UnaryOp::Rsqrt => simple(b, "stablehlo.rsqrt"),
        UnaryOp::Reciprocal => {
            let one = c(b, 1.0);
            b.same("stablehlo.divide", &[&one, x])
        }
        UnaryOp::Sin => simple(b, "stablehlo.sine"),
        UnaryOp::Cos => simple(b, "stablehlo.cosine"),
        UnaryOp::Tan => simple(b, "stablehlo.tan"),
        UnaryOp::Tanh => simple(b, "stablehlo.tanh"),
        UnaryOp::Sigmoid => simple(b, "stablehlo.logistic"),
        UnaryOp::Relu => {
            // `x < 0 ? 0 : x` as the cpu kernel: NaN and -0.0 pass through (maximum would turn
            // -0.0 into +0.0).
            let zero = c(b, 0.0);
            let negative = b.compare("LT", x, &zero);
            b.select(&negative, &zero, x)
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
            let two = c(b, 2.0);
            b.same("stablehlo.power", &[&two, x])
        }
        UnaryOp::Log2 | UnaryOp::Log10 => {
            let ln = simple(b, "stablehlo.log");
            let base = c(b, if op == UnaryOp::Log2 { LN_2 } else { LN_10 });
            let r = b.same("stablehlo.divide", &[&ln, &base]);
            // ln(x) / ln(base) misses exact powers by an ulp (log10(100) = 1.9999999); the cpu's
            // libm gives them exactly.
            if op == UnaryOp::Log2 {
                exact_log2(b, x, r)
            } else {
                exact_log10(b, x, r)
            }
        }
        UnaryOp::Atan => {
            let one = c(b, 1.0);
            b.same("stablehlo.atan2", &[x, &one])
        }
        UnaryOp::Asin => simple(b, "chlo.asin"),
        UnaryOp::Acos => simple(b, "chlo.acos"),
        UnaryOp::Sinh => simple(b, "chlo.sinh"),
        UnaryOp::Cosh => simple(b, "chlo.cosh"),
        UnaryOp::Asinh => simple(b, "chlo.asinh"),
        UnaryOp::Acosh => simple(b, "chlo.acosh"),
        UnaryOp::Atanh => simple(b, "chlo.atanh"),
        UnaryOp::Erf => simple(b, "chlo.erf"),
        UnaryOp::Erfc => simple(b, "chlo.erfc"),
        UnaryOp::Erfinv => simple(b, "chlo.erf_inv"),
        UnaryOp::Lgamma => simple(b, "chlo.lgamma"),
        UnaryOp::Polygamma(0) => {
            // chlo.digamma gives NaN at ±0; torch gives -∞ at +0 and +∞ at -0 (`1/x` tells them
            // apart).
            let d = simple(b, "chlo.digamma");
            let zero = c(b, 0.0);
            let is_zero = b.compare("EQ", x, &zero);
            let one = c(b, 1.0);
            let inverse = b.same("stablehlo.divide", &[&one, x]);
            let negative_zero = b.compare("LT", &inverse, &zero);
            let (pos_inf, neg_inf) = (c(b, f64::INFINITY), c(b, f64::NEG_INFINITY));
            let pole = b.select(&negative_zero, &pos_inf, &neg_inf);
            b.select(&is_zero, &pole, &d)
        }
        UnaryOp::Polygamma(n) => {
            // Where chlo.polygamma and torch differ: torch's trigamma is 0 at +∞ and NaN at -∞;
            // higher orders are NaN at +∞ and (-1)^(n+1) ∞ at the poles 0, -1, ... and -∞
            // (torch's float trigamma rounds sin(πx) at the negative integers to a huge finite
            // value: those stay XLA's ∞).
            let order = c(b, n as f64);
            let p = b.same("chlo.polygamma", &[&order, x]);
            let (pos_inf, neg_inf) = (c(b, f64::INFINITY), c(b, f64::NEG_INFINITY));
            let at_pos_inf = b.compare("EQ", x, &pos_inf);
            let at_neg_inf = b.compare("EQ", x, &neg_inf);
            let (zero, nan) = (c(b, 0.0), c(b, f64::NAN));
            let pole_value = if n % 2 == 1 { pos_inf.clone() } else { neg_inf.clone() };
            if n == 1 {
                let at_zero = b.compare("EQ", x, &zero);
                let p = b.select(&at_zero, &pole_value, &p);
                let p = b.select(&at_pos_inf, &zero, &p);
                b.select(&at_neg_inf, &nan, &p)
            } else {
                let floor = simple(b, "stablehlo.floor");
                let integer = b.compare("EQ", x, &floor);
                let not_positive = b.compare("LE", x, &zero);
                let pole = b.same("stablehlo.and", &[&integer, &not_positive]);
                let p = b.select(&pole, &pole_value, &p);
                b.select(&at_pos_inf, &nan, &p)
            }
        }
        UnaryOp::IsNan => b.compare("NE", x, x),
        UnaryOp::IsFinite => b.op("stablehlo.is_finite", &[x], "", with_element(&ty, ElementType::Pred)),
        UnaryOp::IsInf => {
            let a = simple(b, "stablehlo.abs");
            let inf = c(b, f64::INFINITY);
            b.compare("EQ", &a, &inf)
        }
        UnaryOp::IsPosInf | UnaryOp::IsNegInf => {
            let inf = c(b, if op == UnaryOp::IsPosInf { f64::INFINITY } else { f64::NEG_INFINITY });
            b.compare("EQ", x, &inf)
        }
        UnaryOp::Logit { eps } => logit(b, x, eps),
        UnaryOp::RoundDecimals(d) => {
            let p = c(b, 10f64.powi(d.unsigned_abs() as i32));
            let (into, back) = if d < 0 {
                ("stablehlo.divide", "stablehlo.multiply")
            } else {
                ("stablehlo.multiply", "stablehlo.divide")
            };
            let scaled = b.same(into, &[x, &p]);
            let r = b.same("stablehlo.round_nearest_even", &[&scaled]);
            b.same(back, &[&r, &p])
        }
        UnaryOp::NanToNum { nan, posinf, neginf } => {
            let (n, p, q) = (c(b, nan), c(b, posinf), c(b, neginf));
            let pinf = c(b, f64::INFINITY);
            let ninf = c(b, f64::NEG_INFINITY);
            let is_nan = b.compare("NE", x, x);
            let is_p = b.compare("EQ", x, &pinf);
            let is_n = b.compare("EQ", x, &ninf);
            let r = b.select(&is_nan, &n, x);
            let r = b.select(&is_p, &p, &r);
            b.select(&is_n, &q, &r)
        }
        UnaryOp::Silu => {
            let s = simple(b, "stablehlo.logistic");
            b.same("stablehlo.multiply", &[x, &s])
        }
        UnaryOp::Gelu => {
            // x * 0.5 * (1 + erf(x / sqrt(2)))
            let inv_sqrt2 = c(b, FRAC_1_SQRT_2);
            let scaled = b.same("stablehlo.multiply", &[x, &inv_sqrt2]);
            let erf = b.same("chlo.erf", &[&scaled]);
            let one = c(b, 1.0);
            let sum = b.same("stablehlo.add", &[&erf, &one]);
            let half = c(b, 0.5);
            let h = b.same("stablehlo.multiply", &[x, &half]);
            let y = b.same("stablehlo.multiply", &[&h, &sum]);
            // torch gives NaN at -inf (-inf * 0); XLA's erf approximation stops short of -1
            // there, which would give -inf.
            let ninf = c(b, f64::NEG_INFINITY);
            let at_ninf = b.compare("EQ", x, &ninf);
            let nan = c(b, f64::NAN);
            b.select(&at_ninf, &nan, &y)
        }
        UnaryOp::GeluTanh => {
            // x / (1 + e^(-2u)), u = sqrt(2/pi) (x + 0.044715 x^3), as the CPU backend computes it.
            let k2 = c(b, -2.0 * (2.0 / PI).sqrt());
            let k = c(b, 0.044715);
            let x2 = b.same("stablehlo.multiply", &[x, x]);
            let x3 = b.same("stablehlo.multiply", &[&x2, x]);
            let kx3 = b.same("stablehlo.multiply", &[&k, &x3]);
            let inner = b.same("stablehlo.add", &[x, &kx3]);
            let u = b.same("stablehlo.multiply", &[&k2, &inner]);
            let e = b.same("stablehlo.exponential", &[&u]);
            let one = c(b, 1.0);
            let d = b.same("stablehlo.add", &[&one, &e]);
            b.same("stablehlo.divide", &[x, &d])
        }
        UnaryOp::Mish => {
            // x * n(n + 2) / (n(n + 2) + 2) with n = e^min(x, 20).
            let cap = c(b, 20.0);
            let capped = b.same("stablehlo.minimum", &[x, &cap]);
            let n = b.same("stablehlo.exponential", &[&capped]);
            let two = c(b, 2.0);
            let n2 = b.same("stablehlo.add", &[&n, &two]);
            let q = b.same("stablehlo.multiply", &[&n, &n2]);
            let xq = b.same("stablehlo.multiply", &[x, &q]);
            let d = b.same("stablehlo.add", &[&q, &two]);
            b.same("stablehlo.divide", &[&xq, &d])
        }
        UnaryOp::Softplus { beta, threshold } => {
            let bt = c(b, beta);
            let t = c(b, threshold);
            let xb = b.same("stablehlo.multiply", &[x, &bt]);
            let linear = b.compare("GT", &xb, &t);
            let e = b.same("stablehlo.exponential", &[&xb]);
            let l = b.same("stablehlo.log_plus_one", &[&e]);
            let s = b.same("stablehlo.divide", &[&l, &bt]);
            b.select(&linear, x, &s)
        }
        UnaryOp::Elu { alpha, scale, input_scale } => {
            let zero = c(b, 0.0);
            let neg = c(b, alpha * scale);
            let pos = c(b, scale);
            let inp = c(b, input_scale);
            let xi = b.same("stablehlo.multiply", &[x, &inp]);
            let e = b.same("stablehlo.exponential_minus_one", &[&xi]);
            let en = b.same("stablehlo.multiply", &[&e, &neg]);
            let xp = b.same("stablehlo.multiply", &[x, &pos]);
            let nonpos = b.compare("LE", x, &zero);
            b.select(&nonpos, &en, &xp)
        }
        UnaryOp::LeakyRelu(slope) => {
            let zero = c(b, 0.0);
            let positive = b.compare("GT", x, &zero);
            let s = c(b, slope);
            let scaled = b.same("stablehlo.multiply", &[x, &s]);
            b.select(&positive, x, &scaled)
        }
        UnaryOp::Hardtanh { min, max } => {
            // `x < lo ? lo : x`, then `> hi ? hi`, as the cpu's clamp: NaN and -0.0 pass through.
            let lo = c(b, min);
            let hi = c(b, max);
            let below = b.compare("LT", x, &lo);
            let m = b.select(&below, &lo, x);
            let above = b.compare("GT", &m, &hi);
            b.select(&above, &hi, &m)
        }
        UnaryOp::Hardsigmoid | UnaryOp::Hardswish => {
            let three = c(b, 3.0);
            let shifted = b.same("stablehlo.add", &[x, &three]);
            let zero = c(b, 0.0);
            let six = c(b, 6.0);
            let lo = b.max_min(true, &shifted, &zero);
            let relu6 = b.max_min(false, &lo, &six);
            if op == UnaryOp::Hardsigmoid {
                b.same("stablehlo.divide", &[&relu6, &six])
            } else {
                let p = b.same("stablehlo.multiply", &[x, &relu6]);
                b.same("stablehlo.divide", &[&p, &six])
            }
        }
        UnaryOp::Softmax { dim, log } => softmax(b, x, dim, log)?,
        UnaryOp::BitNot => return None,
    })
}

/// `ln(z / (1 - z))` with `z = clamp(x, eps, 1 - eps)` when `eps >= 0` is given, every step in the
/// storage type (as the CPU backend and torch round it).
fn logit(b: &mut FunctionBuilder, x: &Value, eps: Option<f64>) -> Value {
    let et = x.ty().element_type;
    let one = b.full_like(x, et, 1.0);
    let z = match eps.filter(|e| *e >= 0.0) {
        None => x.clone(),
        Some(e) => {
            let lo = b.full_like(x, et, e);
            let hi = b.same("stablehlo.subtract", &[&one, &lo]);
            let below = b.compare("LT", x, &lo);
            let above = b.compare("GT", x, &hi);
            let z = b.select(&below, &lo, x);
            b.select(&above, &hi, &z)
        }
    };
    let d = b.same("stablehlo.subtract", &[&one, &z]);
    let q = b.same("stablehlo.divide", &[&z, &d]);
    b.same("stablehlo.log", &[&q])
}

/// Rounding toward zero: `x < 0 ? ceil(x) : floor(x)` (NaN stays NaN).
fn trunc(b: &mut FunctionBuilder, x: &Value) -> Value {
    let zero = b.full_like(x, x.ty().element_type, 0.0);
    let negative = b.compare("LT", x, &zero);
    let c = b.same("stablehlo.ceil", &[x]);
    let f = b.same("stablehlo.floor", &[x]);
    b.select(&negative, &c, &f)
}

/// `op(x)` on an integer or bool `x`, or `None` when the op has no such form.
pub fn int_unary(b: &mut FunctionBuilder, op: UnaryOp, x: &Value) -> Option<Value> {
    let ty = x.ty().clone();
    let et = ty.element_type;
    let is_bool = et == ElementType::Pred;
    let bools = |b: &mut FunctionBuilder, v: f64| b.full_like(x, ElementType::Pred, v);
    Some(match op {
        UnaryOp::BitNot => b.same("stablehlo.not", &[x]),
        UnaryOp::IsNan | UnaryOp::IsInf | UnaryOp::IsPosInf | UnaryOp::IsNegInf => bools(b, 0.0),
        UnaryOp::IsFinite => bools(b, 1.0),
        UnaryOp::NanToNum { .. } => x.clone(),
        UnaryOp::Sign if is_bool => x.clone(),
        _ if is_bool => return None,
        UnaryOp::Floor | UnaryOp::Ceil | UnaryOp::Round | UnaryOp::Trunc => x.clone(),
        UnaryOp::Neg => b.same("stablehlo.negate", &[x]),
        UnaryOp::Abs | UnaryOp::Sign if is_unsigned(et) => {
            if op == UnaryOp::Abs {
                x.clone()
            } else {
                let zero = b.full_like(x, et, 0.0);
                let nonzero = b.compare("NE", x, &zero);
                b.convert(&nonzero, et)
            }
        }
        UnaryOp::Abs => b.same("stablehlo.abs", &[x]),
        UnaryOp::Sign => b.same("stablehlo.sign", &[x]),
        UnaryOp::Square => b.same("stablehlo.multiply", &[x, x]),
        UnaryOp::Relu => {
            let zero = b.full_like(x, et, 0.0);
            b.same("stablehlo.maximum", &[x, &zero])
        }
        UnaryOp::Hardtanh { min, max } => {
            // The bounds saturate to the type's range, then truncate toward zero (torch).
            let bound = |v: f64| v.clamp(lowest(et), highest(et)).trunc();
            let lo = b.full_like(x, et, bound(min));
            let hi = b.full_like(x, et, bound(max));
            let m = b.same("stablehlo.maximum", &[x, &lo]);
            b.same("stablehlo.minimum", &[&m, &hi])
        }
        _ => return None,
    })
}

/// `log2(x)` exact at powers of two (their exponent, read from the bits of a normal float32 or
/// float64), `r` elsewhere.
fn exact_log2(b: &mut FunctionBuilder, x: &Value, r: Value) -> Value {
    let et = x.ty().element_type;
    let (int, mantissa_bits, bias, exponent_mask) = match et {
        ElementType::F32 => (ElementType::S32, 23, 127.0, 0xff),
        ElementType::F64 => (ElementType::S64, 52, 1023.0, 0x7ff),
        _ => return r,
    };
    let ty = super::emit::with_element(x.ty(), int);
    let bits = b.op("stablehlo.bitcast_convert", &[x], "", ty);
    let mantissa_mask = b.full_like(&bits, int, ((1u64 << mantissa_bits) - 1) as f64);
    let mantissa = b.same("stablehlo.and", &[&bits, &mantissa_mask]);
    let int_zero = b.full_like(&bits, int, 0.0);
    let no_mantissa = b.compare("EQ", &mantissa, &int_zero);
    let shift = b.full_like(&bits, int, f64::from(mantissa_bits));
    let shifted = b.same("stablehlo.shift_right_logical", &[&bits, &shift]);
    let mask = b.full_like(&bits, int, f64::from(exponent_mask));
    let exponent = b.same("stablehlo.and", &[&shifted, &mask]);
    let max_exponent = b.full_like(&bits, int, f64::from(exponent_mask));
    let normal_low = b.compare("GT", &exponent, &int_zero);
    let normal_high = b.compare("LT", &exponent, &max_exponent);
    let zero = b.full_like(x, et, 0.0);
    let positive = b.compare("GT", x, &zero);
    let pow2 = b.same("stablehlo.and", &[&no_mantissa, &normal_low]);
    let pow2 = b.same("stablehlo.and", &[&pow2, &normal_high]);
    let pow2 = b.same("stablehlo.and", &[&pow2, &positive]);
    let e = b.convert(&exponent, et);
    let bias = b.full_like(x, et, bias);
    let k = b.same("stablehlo.subtract", &[&e, &bias]);
    b.select(&pow2, &k, &r)
}

/// `log10(x)` exact at the powers of ten a float32 (10^0..10^10) or float64 (10^0..10^22) holds
/// exactly, `r` elsewhere.
fn exact_log10(b: &mut FunctionBuilder, x: &Value, r: Value) -> Value {
    let et = x.ty().element_type;
    let top = match et {
        ElementType::F32 => 10,
        ElementType::F64 => 22,
        _ => return r,
    };
    let mut out = r;
    for k in 0..=top {
        let power = b.full_like(x, et, 10f64.powi(k));
        let hit = b.compare("EQ", x, &power);
        let exact = b.full_like(x, et, f64::from(k));
        out = b.select(&hit, &exact, &out);
    }
    out
}
