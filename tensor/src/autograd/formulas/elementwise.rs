//! Derivatives of the elementwise prims.

use std::f64::consts::{LN_10, LN_2, PI};

use oxtorch_core::ops::{BinaryOp, UnaryOp};
use oxtorch_core::{DType, Result};
use smallvec::SmallVec;

use super::{not_differentiable, Ctx, Saves};
use crate::Tensor;

/// Unary formulas read the input, or the output where that is cheaper.
pub(super) fn saves_unary(op: UnaryOp) -> Saves {
    use UnaryOp::*;
    match op {
        Neg | Sign | Floor | Ceil | Round | RoundDecimals(_) | Trunc | Frac => Saves::none(1),
        Exp
        | Sqrt
        | Rsqrt
        | Reciprocal
        | Tanh
        | Sigmoid
        | Relu
        | Exp2
        | Expm1
        | Erfinv
        | Tan
        | Softmax { .. } => Saves::outputs(1),
        _ => Saves::all_inputs(1),
    }
}

/// `where(mask, g * a, 0)` style helper: `g` where `mask`, zero elsewhere.
fn masked(g: &Tensor, mask: &Tensor) -> Result<Tensor> {
    Tensor::where_cond(mask, g, 0.0)
}

/// The gradient of a unary prim. The ops whose torch backward is one fused kernel compute a
/// float16/bfloat16 gradient in f32 and round it once, as that kernel does (a chain of
/// half-precision ops would round at every step).
pub(super) fn unary(op: UnaryOp, ctx: &Ctx, g: &Tensor) -> Result<Tensor> {
    use UnaryOp::*;
    let half = matches!(g.dtype(), DType::F16 | DType::BF16);
    let fused_in_torch = matches!(
        op,
        Tanh | Sigmoid
            | Silu
            | Gelu
            | GeluTanh
            | Mish
            | Softplus { .. }
            | Elu { .. }
            | Hardswish
            | Logit { .. }
            | Softmax { .. }
    );
    if half && fused_in_torch {
        let up = |t: Result<Tensor>| t?.to_dtype(DType::F32);
        let d = unary_formula(op, &|| up(ctx.input(0)), &|| up(ctx.output(0)), &g.to_dtype(DType::F32)?)?;
        return d.to_dtype(g.dtype());
    }
    unary_formula(op, &|| ctx.input(0), &|| ctx.output(0), g)
}

/// A unary prim's gradient from its input `x`, output `y` and the output's gradient `g`.
fn unary_formula(
    op: UnaryOp,
    x: &dyn Fn() -> Result<Tensor>,
    y: &dyn Fn() -> Result<Tensor>,
    g: &Tensor,
) -> Result<Tensor> {
    use UnaryOp::*;
    match op {
        Neg => g.neg(),
        Abs => g.mul(x()?.sign()?),
        Sign | Floor | Ceil | Round | RoundDecimals(_) | Trunc => g.zeros_like(),
        Frac => Ok(g.clone()),
        Square => g.mul(x()?.mul(2.0)?),
        Exp => g.mul(y()?),
        Log => g.div(x()?),
        Sqrt => g.div(y()?.mul(2.0)?),
        Rsqrt => g.mul(y()?.pow(3.0)?.mul(-0.5)?),
        Reciprocal => g.mul(y()?.square()?.neg()?),
        Sin => g.mul(x()?.cos()?),
        Cos => g.mul(x()?.sin()?.neg()?),
        Tan => g.mul(y()?.square()?.add(1.0)?),
        Tanh => g.mul(y()?.square()?.neg()?.add(1.0)?),
        Sigmoid => {
            let y = y()?;
            g.mul(y.mul(y.neg()?.add(1.0)?)?)
        }
        // torch's `threshold_backward`: zero where the result is <= 0 (a NaN passes the gradient)
        Relu => Tensor::where_cond(&y()?.le(0.0)?, 0.0, g),
        Exp2 => g.mul(y()?.mul(LN_2)?),
        Expm1 => g.mul(y()?.add(1.0)?),
        Log2 => g.div(x()?.mul(LN_2)?),
        Log10 => g.div(x()?.mul(LN_10)?),
        Log1p => g.div(x()?.add(1.0)?),
        Asin => g.mul(x()?.square()?.neg()?.add(1.0)?.rsqrt()?),
        Acos => g.mul(x()?.square()?.neg()?.add(1.0)?.rsqrt()?.neg()?),
        Atan => g.div(x()?.square()?.add(1.0)?),
        Sinh => g.mul(x()?.cosh()?),
        Cosh => g.mul(x()?.sinh()?),
        Asinh => g.mul(x()?.square()?.add(1.0)?.rsqrt()?),
        Acosh => g.mul(x()?.square()?.sub(1.0)?.rsqrt()?),
        Atanh => g.div(x()?.square()?.neg()?.add(1.0)?),
        Erf => g.mul(x()?.square()?.neg()?.exp()?.mul(2.0 / PI.sqrt())?),
        Erfc => g.mul(x()?.square()?.neg()?.exp()?.mul(-2.0 / PI.sqrt())?),
        Erfinv => g.mul(y()?.square()?.exp()?.mul(PI.sqrt() / 2.0)?),
        Lgamma => g.mul(x()?.digamma()?),
        Polygamma(n) => g.mul(x()?.unary(Polygamma(n + 1))?),
        Logit { eps } => {
            let x = x()?;
            // At 0 and 1 torch's kernel gives `g · inf`, so +inf at -0.0 too: divide by +0.0
            // there (`x · (1 - x)` is -0.0 at -0.0), which also keeps double backward free of
            // the NaN that `inf · 0` would put in the branch a select does not take.
            let edge = x.eq(0.0)?.logical_or(&x.eq(1.0)?)?;
            let d = g.div(&Tensor::where_cond(&edge, 0.0, &x.mul(x.neg()?.add(1.0)?)?)?)?;
            match eps {
                Some(e) if e >= 0.0 => {
                    let outside = x.lt(e)?.logical_or(&x.gt(1.0 - e)?)?;
                    Tensor::where_cond(&outside, 0.0, &d)
                }
                // Without a (non-negative) eps, torch's gradient outside [0, 1] is NaN.
                _ => {
                    let outside = x.lt(0.0)?.logical_or(&x.gt(1.0)?)?;
                    Tensor::where_cond(&outside, f64::NAN, &d)
                }
            }
        }
        NanToNum { .. } => masked(g, &x()?.isfinite()?),
        LeakyRelu(slope) => Tensor::where_cond(&x()?.gt(0.0)?, g, &g.mul(slope)?),
        Elu { alpha, scale, input_scale } => {
            let x = x()?;
            let neg = x.mul(input_scale)?.exp()?.mul(alpha * scale * input_scale)?;
            // (the exponential branch where x <= 0: a NaN input takes `scale`, as torch)
            g.mul(Tensor::where_cond(&x.le(0.0)?, &neg, scale)?)
        }
        Gelu => {
            let x = x()?;
            let cdf = x.mul(std::f64::consts::FRAC_1_SQRT_2)?.erf()?.add(1.0)?.mul(0.5)?;
            let pdf = x.square()?.mul(-0.5)?.exp()?.mul(1.0 / (2.0 * PI).sqrt())?;
            g.mul(cdf.add(x.mul(&pdf)?)?)
        }
        GeluTanh => {
            // With u = k(x + c x³): ½(1 + tanh u) = s = sigmoid(2u), and the derivative of x·s is
            // s + x·s(1 - s)·2k(1 + 3c x²) = s·(1 - x(s - 1)·w) with w = 2k(1 + 3c x²): vectorised
            // sigmoid instead of tanh and pow, and 13 passes instead of 19.
            let x = x()?;
            if !crate::autograd::is_recording()
                && x.device() == oxtorch_core::Device::Cpu
                && (g.dtype(), g.dims()) == (x.dtype(), x.dims())
            {
                // The same formula as one CPU pass (`NnOp::GeluTanhBackward`).
                let prim = oxtorch_core::ops::Prim::Nn(oxtorch_core::ops::NnOp::GeluTanhBackward);
                return crate::dispatch::apply1(&prim, &[g, &x], x.device());
            }
            let k = (2.0 / PI).sqrt();
            let c = 0.044715;
            let x2 = x.square()?;
            let s = x2.mul(2.0 * k * c)?.add(2.0 * k)?.mul(&x)?.sigmoid()?;
            let minus_w = x2.mul(-6.0 * k * c)?.add(-2.0 * k)?;
            let d = s.sub(1.0)?.mul(&x)?.mul(&minus_w)?.add(1.0)?.mul(&s)?;
            g.mul(d)
        }
        Silu => {
            let x = x()?;
            let s = x.sigmoid()?;
            g.mul(s.mul(x.mul(s.neg()?.add(1.0)?)?.add(1.0)?)?)
        }
        Mish => {
            let x = x()?;
            let t = x.softplus(1.0, 20.0)?.tanh()?;
            let d = t.add(x.mul(x.sigmoid()?)?.mul(t.square()?.neg()?.add(1.0)?)?)?;
            g.mul(d)
        }
        Softplus { beta, threshold } => {
            let x = x()?;
            let bx = x.mul(beta)?;
            let s = bx.sigmoid()?;
            g.mul(Tensor::where_cond(&bx.gt(threshold)?, 1.0, &s)?)
        }
        Hardtanh { min, max } => {
            // torch: zero where x <= min or x >= max (a NaN passes the gradient)
            let x = x()?;
            Tensor::where_cond(&x.le(min)?.logical_or(&x.ge(max)?)?, 0.0, g)
        }
        Hardsigmoid => {
            let x = x()?;
            masked(&g.div(6.0)?, &x.gt(-3.0)?.logical_and(&x.lt(3.0)?)?)
        }
        Hardswish => {
            // torch: 0 up to -3, x / 3 + 1/2 strictly inside, 1 from 3 on
            // (a NaN input falls through to the last branch, as in torch's kernel)
            let x = x()?;
            let mid = g.mul(x.div(3.0)?.add(0.5)?)?;
            let inner = Tensor::where_cond(&x.lt(3.0)?, &mid, g)?;
            Tensor::where_cond(&x.le(-3.0)?, 0.0, &inner)
        }
        Softmax { dim, log } => {
            let y = y()?;
            let d = dim as isize;
            if log {
                g.sub(y.exp()?.mul(g.sum([d], true)?)?)
            } else {
                y.mul(g.sub(g.mul(&y)?.sum([d], true)?)?)
            }
        }
        BitNot | IsNan | IsInf | IsPosInf | IsNegInf | IsFinite => Err(not_differentiable(op.name())),
    }
}

/// Binary formulas keep an input only when the other input's gradient needs it.
pub(super) fn saves_binary(op: BinaryOp, requires: &[bool]) -> Saves {
    use BinaryOp::*;
    match op {
        Add | Sub | FloorDivide => Saves::none(2),
        Fmod | Remainder if requires[1] => Saves::all_inputs(2),
        Fmod | Remainder => Saves::none(2),
        Mul => Saves { inputs: SmallVec::from_slice(&[requires[1], requires[0]]), outputs: false },
        Div => Saves { inputs: SmallVec::from_slice(&[requires[1], true]), outputs: false },
        Pow | Hypot => Saves::outputs(2),
        CopySign => Saves::outputs(2),
        _ => Saves::all_inputs(2),
    }
}

/// The gradients of a binary prim's two inputs.
pub(super) fn binary(op: BinaryOp, ctx: &Ctx, g: &Tensor, needs: &[bool]) -> Result<Vec<Option<Tensor>>> {
    use BinaryOp::*;
    let a = || ctx.input(0);
    let b = || ctx.input(1);
    let when = |need: bool, f: &dyn Fn() -> Result<Tensor>| -> Result<Option<Tensor>> {
        if need {
            f().map(Some)
        } else {
            Ok(None)
        }
    };
    let (ga, gb) = match op {
        Add => (when(needs[0], &|| Ok(g.clone()))?, when(needs[1], &|| Ok(g.clone()))?),
        Sub => (when(needs[0], &|| Ok(g.clone()))?, when(needs[1], &|| g.neg())?),
        Mul => (when(needs[0], &|| g.mul(b()?))?, when(needs[1], &|| g.mul(a()?))?),
        Div => (
            when(needs[0], &|| g.div(b()?))?,
            when(needs[1], &|| {
                let b = b()?;
                g.mul(a()?)?.div(b.mul(&b)?)?.neg()
            })?,
        ),
        Pow => {
            let ga = when(needs[0], &|| {
                let (a, b) = (a()?, b()?);
                let d = g.mul(&b)?.mul(a.pow(b.sub(1.0)?)?)?;
                Tensor::where_cond(&b.eq(0.0)?, 0.0, &d)
            })?;
            let gb = when(needs[1], &|| {
                let (a, b) = (a()?, b()?);
                let d = g.mul(ctx.output(0)?)?.mul(a.log()?)?;
                Tensor::where_cond(&a.eq(0.0)?.logical_and(&b.ge(0.0)?)?, 0.0, &d)
            })?;
            (ga, gb)
        }
        Maximum | Minimum => {
            // torch: half each on a tie, nothing to the side that loses, the whole gradient
            // otherwise (to both sides where either is NaN).
            let (a, b) = (a()?, b()?);
            let (loses_a, loses_b) =
                if op == Maximum { (a.lt(&b)?, a.gt(&b)?) } else { (a.gt(&b)?, a.lt(&b)?) };
            let shared = Tensor::where_cond(&a.eq(&b)?, &g.div(2.0)?, g)?;
            let pick = |loses: &Tensor| Tensor::where_cond(loses, 0.0, &shared);
            (when(needs[0], &|| pick(&loses_a))?, when(needs[1], &|| pick(&loses_b))?)
        }
        Remainder => {
            // (the quotient as the forward floors it: `div(a, b, rounding_mode="floor")`, 9 for 1 %
            // 0.1, where floor(1 / 0.1) is 10)
            // (a constant, taken from detached inputs, so that double backward can run through it)
            let quotient = || a()?.detach().floor_divide(b()?.detach());
            (when(needs[0], &|| Ok(g.clone()))?, when(needs[1], &|| g.mul(quotient()?)?.neg())?)
        }
        Fmod => {
            (when(needs[0], &|| Ok(g.clone()))?, when(needs[1], &|| g.mul(a()?.div(b()?)?.trunc()?)?.neg())?)
        }
        FloorDivide => return Err(not_differentiable("floor_divide")),
        Atan2 => {
            let (a, b) = (a()?, b()?);
            let r2 = a.square()?.add(b.square()?)?;
            // At (0, 0) torch's gradients are 0 and -0 (not 0/0).
            let origin = r2.eq(0.0)?;
            let part = |t: Tensor| Tensor::where_cond(&origin, &t, &t.div(&r2)?);
            (when(needs[0], &|| part(g.mul(&b)?))?, when(needs[1], &|| part(g.mul(&a)?.neg()?))?)
        }
        Hypot => {
            let y = ctx.output(0)?;
            (when(needs[0], &|| g.mul(a()?)?.div(&y))?, when(needs[1], &|| g.mul(b()?)?.div(&y))?)
        }
        CopySign => {
            let ga = when(needs[0], &|| {
                let a = a()?;
                let ratio = ctx.output(0)?.div(&a)?;
                g.mul(Tensor::where_cond(&a.eq(0.0)?, 0.0, &ratio)?)
            })?;
            (ga, when(needs[1], &|| g.zeros_like())?)
        }
        BitAnd | BitOr | BitXor | ShiftLeft | ShiftRight => return Err(not_differentiable(op.name())),
    };
    Ok(vec![ga, gb])
}
