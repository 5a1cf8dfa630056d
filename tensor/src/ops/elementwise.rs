//! Unary and binary elementwise ops with torch's promotion and broadcasting.

use oxtorch_core::ops::{BinaryOp, Prim, UnaryOp};
use oxtorch_core::{broadcast_shapes, DType, Error, Result, ResultTypeState, Scalar};

use super::Operand;
use crate::autograd::Function;
use crate::dispatch::apply1;
use crate::Tensor;

/// Casts both operands to `dtype` and broadcasts them to one shape.
pub(crate) fn prepare_pair(a: &Tensor, b: &Operand, dtype: DType) -> Result<(Tensor, Tensor)> {
    let a2 = a.to_dtype(dtype)?;
    let b2 = b.to_tensor(dtype, a.device())?;
    if a2.dims() == b2.dims() {
        return Ok((a2, b2));
    }
    let shape = broadcast_shapes(a2.dims(), b2.dims())?;
    Ok((a2.broadcast_to(&shape)?, b2.broadcast_to(&shape)?))
}

/// The dtype a binary op between `a` and `b` computes in (torch's `result_type`, with true division
/// and float-only ops promoting integers to the default float dtype).
pub(crate) fn binary_dtype(op: BinaryOp, a: &Tensor, b: &Operand) -> DType {
    let d = b.promote(ResultTypeState::default().tensor(a.dtype(), a.rank())).result();
    match op {
        BinaryOp::Div | BinaryOp::Atan2 | BinaryOp::CopySign if !d.is_float() => DType::default_float(),
        _ => d,
    }
}

/// The representable range of an integer dtype.
fn int_range(dtype: DType) -> (i64, i64) {
    match dtype {
        DType::U8 => (0, u8::MAX as i64),
        DType::I8 => (i8::MIN as i64, i8::MAX as i64),
        DType::I16 => (i16::MIN as i64, i16::MAX as i64),
        DType::I32 => (i32::MIN as i64, i32::MAX as i64),
        _ => (i64::MIN, i64::MAX),
    }
}

/// A scalar clamp bound on an integer dtype, as torch takes it: saturated to the dtype's range, or
/// an error when the whole range lies on the wrong side of it (a `min` above the range, a `max`
/// below it).
fn int_bound(bound: Option<Operand>, dtype: DType, which: &str) -> Result<Option<Operand>> {
    let Some(Operand::Scalar(s)) = bound else { return Ok(bound) };
    if !dtype.is_int() {
        // A float bound must convert to the dtype (torch: `clamp(f32, max=1e39)` overflows).
        s.check_converts(dtype)?;
        return Ok(Some(Operand::Scalar(s)));
    }
    let (lo, hi) = int_range(dtype);
    let v = s.to_i64();
    if (which == "min" && v > hi) || (which == "max" && v < lo) {
        return Err(Error::msg(format!(
            "Clamp {which} value {v} is outside the representable range of {}",
            dtype.scalar_type_name()
        )));
    }
    Ok(Some(Operand::Scalar(Scalar::Int(v.clamp(lo, hi)))))
}

/// True when `a op b` needs no promotion, broadcasting or operand check: two tensors of one shape
/// and one dtype that the op keeps (true division and float-only ops promote integers; bool
/// subtraction is an error).
fn same_kind_operands(op: BinaryOp, a: &Tensor, b: &Tensor) -> bool {
    let dtype = a.dtype();
    dtype == b.dtype()
        && a.dims() == b.dims()
        && (dtype.is_float() || !matches!(op, BinaryOp::Div | BinaryOp::Atan2 | BinaryOp::CopySign))
        && !(dtype == DType::Bool && op == BinaryOp::Sub)
}

/// The operand checks torch makes before computing (bool subtraction, negative integer powers).
fn check_binary(op: BinaryOp, a: &Tensor, b: &Operand, dtype: DType) -> Result<()> {
    let b_bool = match b {
        Operand::Tensor(t) => t.dtype() == DType::Bool,
        Operand::Scalar(s) => matches!(s, Scalar::Bool(_)),
    };
    match op {
        BinaryOp::Sub if a.dtype() == DType::Bool && b_bool => Err(Error::msg(
            "Subtraction, the `-` operator, with two bool tensors is not supported. Use the `^` or `logical_xor()` operator instead.",
        )),
        BinaryOp::Sub if a.dtype() == DType::Bool || b_bool => Err(Error::msg(
            "Subtraction, the `-` operator, with a bool tensor is not supported. If you are trying to invert a mask, use the `~` or `logical_not()` operator instead.",
        )),
        BinaryOp::Pow if !dtype.is_float() && matches!(b, Operand::Scalar(Scalar::Int(e)) if *e < 0) => {
            Err(Error::msg("Integers to negative integer powers are not allowed."))
        }
        _ => Ok(()),
    }
}

impl Tensor {
    /// Applies a unary prim, promoting integer inputs to float for float-only ops.
    pub fn unary(&self, op: UnaryOp) -> Result<Tensor> {
        let x = if op.promotes_int_to_float() && !self.dtype().is_float() {
            self.to_dtype(DType::default_float())?
        } else if op == UnaryOp::Square && self.dtype() == DType::Bool {
            // torch's square is `x ** 2`, which promotes bool to int64.
            self.to_dtype(DType::I64)?
        } else {
            self.clone()
        };
        apply1(&Prim::Unary(op), &[&x], x.device())
    }

    /// Applies a binary prim to `self` and a tensor or scalar, with promotion and broadcasting.
    pub fn binary(&self, other: impl Into<Operand>, op: BinaryOp) -> Result<Tensor> {
        let other = other.into();
        if let Operand::Tensor(t) = &other {
            if same_kind_operands(op, self, t) {
                // Nothing to promote, check or broadcast: straight to the backend.
                return apply1(&Prim::Binary(op), &[self, t], self.device());
            }
        }
        let dtype = binary_dtype(op, self, &other);
        check_binary(op, self, &other, dtype)?;
        if let Some(out) = self.half_op_with_f32_scalar(op, &other, dtype)? {
            return Ok(out);
        }
        let (a, b) = prepare_pair(self, &other, dtype)?;
        apply1(&Prim::Binary(op), &[&a, &b], a.device())
    }

    /// torch's CPU `mul`, `div` and `floor_divide` of an f16/bf16 result read a scalar second
    /// operand (a number, or a 0-d tensor) in f32 instead of rounding it to the half type first:
    /// `bf16(3) * 257` is 772, not `3 * bf16(257)` = 768. Computed as torch does, in f32 and rounded
    /// once; `None` where rounding the scalar changes nothing (a value the half type holds exactly,
    /// such as 2 or 0.125) and the plain path is the same.
    fn half_op_with_f32_scalar(&self, op: BinaryOp, other: &Operand, dtype: DType) -> Result<Option<Tensor>> {
        if !matches!(op, BinaryOp::Mul | BinaryOp::Div | BinaryOp::FloorDivide)
            || !matches!(dtype, DType::F16 | DType::BF16)
        {
            return Ok(None);
        }
        let value = match other {
            Operand::Scalar(s) => s.to_f64(),
            Operand::Tensor(t) if t.rank() == 0 && t.device().is_cpu() => t.item::<f64>()?,
            Operand::Tensor(_) => return Ok(None),
        };
        let held = match dtype {
            DType::F16 => half::f16::from_f64(value).to_f64(),
            _ => half::bf16::from_f64(value).to_f64(),
        };
        if held == value {
            return Ok(None);
        }
        let name = match op {
            BinaryOp::Mul => "MulBackward0",
            BinaryOp::Div => "DivBackward0",
            _ => "FloorDivideBackward0",
        };
        let out = self.to_dtype(DType::F32)?.binary(other.clone(), op)?.to_dtype(dtype)?;
        Ok(Some(self.named(out, name)))
    }

    /// `self + other`.
    pub fn add(&self, other: impl Into<Operand>) -> Result<Tensor> {
        self.binary(other, BinaryOp::Add)
    }

    /// `self + alpha * other` (torch's `add(other, alpha=...)`), computed in the operands' promoted
    /// dtype (`alpha * other` is not rounded to `other`'s own first). An integer result takes an
    /// integer `alpha` that fits it, only a bool result a bool one. torch fuses the multiply-add
    /// of floats into one rounding; here it is two, which can differ in the last bit.
    pub fn add_scaled(&self, other: &Tensor, alpha: impl Into<Scalar>) -> Result<Tensor> {
        let alpha = alpha.into();
        let dtype = binary_dtype(BinaryOp::Add, self, &Operand::Tensor(other.clone()));
        match alpha {
            Scalar::Bool(_) if dtype != DType::Bool => {
                return Err(Error::msg("Boolean alpha only supported for Boolean results."))
            }
            Scalar::Float(_) if !dtype.is_float() => {
                return Err(Error::msg(
                    "For integral input tensors, argument alpha must not be a floating point number.",
                ))
            }
            _ => alpha.check_converts(dtype)?,
        }
        self.add(other.to_dtype(dtype)?.mul(alpha)?)
    }

    /// `self - other`.
    pub fn sub(&self, other: impl Into<Operand>) -> Result<Tensor> {
        self.binary(other, BinaryOp::Sub)
    }

    /// `other - self` (torch's `rsub`, what `number - tensor` computes): both sides in the promoted
    /// dtype, so that an unsigned or most-negative `self` is not negated in its own type first
    /// (`2.5 - u8[200]` is -197.5).
    pub fn rsub(&self, other: impl Into<Operand>) -> Result<Tensor> {
        let other = other.into();
        let dtype = binary_dtype(BinaryOp::Sub, self, &other);
        check_binary(BinaryOp::Sub, self, &other, dtype)?;
        other.to_tensor(dtype, self.device())?.sub(&self.to_dtype(dtype)?)
    }

    /// `self * other`.
    pub fn mul(&self, other: impl Into<Operand>) -> Result<Tensor> {
        self.binary(other, BinaryOp::Mul)
    }

    /// True division `self / other` (integers are promoted to float).
    pub fn div(&self, other: impl Into<Operand>) -> Result<Tensor> {
        self.binary(other, BinaryOp::Div)
    }

    /// torch's `div(other, rounding_mode=...)`: `None` is true division, `"trunc"` rounds the
    /// quotient toward zero and `"floor"` down (both keep integer dtypes, as C and Python
    /// integer division do).
    pub fn div_rounding(&self, other: impl Into<Operand>, rounding_mode: Option<&str>) -> Result<Tensor> {
        let other = other.into();
        match rounding_mode {
            None => self.div(other),
            Some("floor") => self.floor_divide(other),
            Some("trunc") => {
                let dtype = binary_dtype(BinaryOp::FloorDivide, self, &other);
                if matches!(dtype, DType::F16 | DType::BF16) {
                    // torch divides half operands in f32 and rounds once, after the truncation.
                    self.to_dtype(DType::F32)?.div(other)?.trunc()?.to_dtype(dtype)
                } else if dtype.is_float() {
                    self.div(other)?.trunc()
                } else if dtype == DType::Bool {
                    Err(Error::msg("\"div_trunc_cpu\" not implemented for 'Bool'"))
                } else {
                    // `a - fmod(a, b)` is a multiple of `b`: its floor quotient is the exact
                    // truncated one (and a zero divisor is fmod's ZeroDivisionError). A bool
                    // dividend counts as its integer type.
                    let a = self.to_dtype(dtype)?;
                    a.sub(&a.fmod(other.clone())?)?.floor_divide(other)
                }
            }
            Some(mode) => Err(Error::msg(format!(
                "div expected rounding_mode to be one of None, 'trunc', or 'floor' but found '{mode}'"
            ))),
        }
    }

    /// `self ** exponent`.
    pub fn pow(&self, exponent: impl Into<Operand>) -> Result<Tensor> {
        let exponent = exponent.into();
        // torch has no bool pow kernel, but special-cases bool exponents of a bool tensor:
        // `x ** True` is `x`, `x ** False` is all true.
        if let (DType::Bool, Operand::Scalar(Scalar::Bool(e))) = (self.dtype(), &exponent) {
            return if *e { self.contiguous_copy() } else { self.ones_like() };
        }
        if let Operand::Scalar(e) = exponent {
            let dtype = binary_dtype(BinaryOp::Pow, self, &exponent);
            // torch converts the exponent to an integer or half result type, checked (`u8 ** 256`
            // and `f16 ** 1e5` overflow); float32 and float64 take it as a double.
            let negative_int_power = dtype.is_int() && e.to_f64() < 0.0;
            if !matches!(dtype, DType::F32 | DType::F64) && !negative_int_power {
                e.check_converts(dtype)?;
            }
            if self.is_floating_point() && crate::autograd::record::needs_recording(&[self]) {
                return Ok(PowByNumber(e).apply(std::slice::from_ref(self))?.remove(0));
            }
            return self.pow_number(e, dtype);
        }
        self.binary(exponent, BinaryOp::Pow)
    }

    /// `self ** e` for a number `e`: torch's shortcuts where they apply, else the pow kernel.
    fn pow_number(&self, e: Scalar, dtype: DType) -> Result<Tensor> {
        match self.pow_special(e, dtype)? {
            Some(out) => Ok(out),
            None => self.binary(Operand::Scalar(e), BinaryOp::Pow),
        }
    }

    /// torch's CPU shortcuts for float32, float64 and bfloat16 powers by a number
    /// (`pow_tensor_scalar_optimized_kernel`): `x ** 2` is `x * x`, `x ** 3` is `x * x * x`, `x ** 0.5`
    /// `sqrt(x)`, `x ** -0.5` `rsqrt(x)`, `x ** -1` `1 / x` and `x ** -2` `1 / (x * x)`, each step
    /// rounded to the dtype; they differ from `pow` in the last bit and at `-0.0` and `-inf`
    /// (`(-0.0) ** 0.5` is `-0.0`). `None` for other exponents and dtypes.
    fn pow_special(&self, exponent: Scalar, dtype: DType) -> Result<Option<Tensor>> {
        if self.dtype() != dtype
            || !matches!(dtype, DType::F32 | DType::F64 | DType::BF16)
            || matches!(exponent, Scalar::Bool(_))
        {
            return Ok(None);
        }
        let e = exponent.to_f64();
        if ![2.0, 3.0, 0.5, -0.5, -1.0, -2.0].contains(&e) {
            return Ok(None);
        }
        self.pow_shortcut(e).map(Some)
    }

    /// `self ** e` by the shortcut for `e` in 2, 3, 0.5, -0.5, -1, -2.
    fn pow_shortcut(&self, e: f64) -> Result<Tensor> {
        Ok(if e == 2.0 {
            self.mul(self)?
        } else if e == 3.0 {
            self.mul(self)?.mul(self)?
        } else if e == 0.5 {
            self.sqrt()?
        } else if e == -0.5 {
            self.rsqrt()?
        } else if e == -1.0 {
            self.reciprocal()?
        } else {
            self.mul(self)?.reciprocal()?
        })
    }

    /// A new contiguous tensor with `self`'s values (never shares storage).
    fn contiguous_copy(&self) -> Result<Tensor> {
        apply1(&Prim::Copy, &[self], self.device())
    }

    /// Elementwise maximum (NaN-propagating).
    pub fn maximum(&self, other: impl Into<Operand>) -> Result<Tensor> {
        self.binary(other, BinaryOp::Maximum)
    }

    /// Elementwise minimum (NaN-propagating).
    pub fn minimum(&self, other: impl Into<Operand>) -> Result<Tensor> {
        self.binary(other, BinaryOp::Minimum)
    }

    /// Python's `%`: the remainder has the sign of the divisor.
    pub fn remainder(&self, other: impl Into<Operand>) -> Result<Tensor> {
        let other = other.into();
        self.check_integer_divisor(BinaryOp::Remainder, &other)?;
        self.binary(other, BinaryOp::Remainder)
    }

    /// Python's `//`: the floor of the quotient.
    pub fn floor_divide(&self, other: impl Into<Operand>) -> Result<Tensor> {
        let other = other.into();
        self.check_integer_divisor(BinaryOp::FloorDivide, &other)?;
        self.binary(other, BinaryOp::FloorDivide)
    }

    /// An integer division by zero is torch's `ZeroDivisionError` on every device: the cpu kernels
    /// check as they go, a compiling device (whose integer division by zero gives -1) is checked
    /// here (a number at no cost, a tensor with one read-back).
    fn check_integer_divisor(&self, op: BinaryOp, other: &Operand) -> Result<()> {
        if self.device().is_cpu() || binary_dtype(op, self, other).is_float() {
            return Ok(());
        }
        let zero = match other {
            Operand::Scalar(s) => s.to_f64() == 0.0,
            Operand::Tensor(t) => t.numel() > 0 && t.eq(0.0)?.any()?.item::<bool>()?,
        };
        if zero {
            return Err(Error::msg("ZeroDivisionError"));
        }
        Ok(())
    }

    /// Bitwise and (logical for bool).
    pub fn bitwise_and(&self, other: impl Into<Operand>) -> Result<Tensor> {
        self.binary(other, BinaryOp::BitAnd)
    }

    /// Bitwise or (logical for bool).
    pub fn bitwise_or(&self, other: impl Into<Operand>) -> Result<Tensor> {
        self.binary(other, BinaryOp::BitOr)
    }

    /// Bitwise xor (logical for bool).
    pub fn bitwise_xor(&self, other: impl Into<Operand>) -> Result<Tensor> {
        self.binary(other, BinaryOp::BitXor)
    }

    /// Bitwise not (logical not for bool).
    pub fn bitwise_not(&self) -> Result<Tensor> {
        self.unary(UnaryOp::BitNot)
    }

    /// `-self`.
    pub fn neg(&self) -> Result<Tensor> {
        self.unary(UnaryOp::Neg)
    }

    /// `|self|`.
    pub fn abs(&self) -> Result<Tensor> {
        self.unary(UnaryOp::Abs)
    }

    /// -1, 0 or 1 by sign.
    pub fn sign(&self) -> Result<Tensor> {
        self.unary(UnaryOp::Sign)
    }

    /// `self * self`.
    pub fn square(&self) -> Result<Tensor> {
        self.unary(UnaryOp::Square)
    }

    /// `e^self`.
    pub fn exp(&self) -> Result<Tensor> {
        self.unary(UnaryOp::Exp)
    }

    /// Natural logarithm.
    pub fn log(&self) -> Result<Tensor> {
        self.unary(UnaryOp::Log)
    }

    /// Square root.
    pub fn sqrt(&self) -> Result<Tensor> {
        self.unary(UnaryOp::Sqrt)
    }

    /// `1 / sqrt(self)`.
    pub fn rsqrt(&self) -> Result<Tensor> {
        self.unary(UnaryOp::Rsqrt)
    }

    /// `1 / self`.
    pub fn reciprocal(&self) -> Result<Tensor> {
        self.unary(UnaryOp::Reciprocal)
    }

    /// Sine.
    pub fn sin(&self) -> Result<Tensor> {
        self.unary(UnaryOp::Sin)
    }

    /// Cosine.
    pub fn cos(&self) -> Result<Tensor> {
        self.unary(UnaryOp::Cos)
    }

    /// Hyperbolic tangent.
    pub fn tanh(&self) -> Result<Tensor> {
        self.unary(UnaryOp::Tanh)
    }

    /// Logistic sigmoid.
    pub fn sigmoid(&self) -> Result<Tensor> {
        self.unary(UnaryOp::Sigmoid)
    }

    /// `max(self, 0)`.
    pub fn relu(&self) -> Result<Tensor> {
        self.unary(UnaryOp::Relu)
    }

    /// Round toward -∞.
    pub fn floor(&self) -> Result<Tensor> {
        self.unary(UnaryOp::Floor)
    }

    /// Round toward +∞.
    pub fn ceil(&self) -> Result<Tensor> {
        self.unary(UnaryOp::Ceil)
    }

    /// Round half to even.
    pub fn round(&self) -> Result<Tensor> {
        self.unary(UnaryOp::Round)
    }

    /// Round toward zero.
    pub fn trunc(&self) -> Result<Tensor> {
        self.unary(UnaryOp::Trunc)
    }

    /// True where the value is NaN.
    pub fn isnan(&self) -> Result<Tensor> {
        self.unary(UnaryOp::IsNan)
    }

    /// Logical not: true where the value is zero.
    pub fn logical_not(&self) -> Result<Tensor> {
        self.to_dtype(DType::Bool)?.bitwise_not()
    }

    /// Logical and of the truth values.
    pub fn logical_and(&self, other: &Tensor) -> Result<Tensor> {
        self.to_dtype(DType::Bool)?.bitwise_and(&other.to_dtype(DType::Bool)?)
    }

    /// Logical or of the truth values.
    pub fn logical_or(&self, other: &Tensor) -> Result<Tensor> {
        self.to_dtype(DType::Bool)?.bitwise_or(&other.to_dtype(DType::Bool)?)
    }

    /// Logical xor of the truth values.
    pub fn logical_xor(&self, other: &Tensor) -> Result<Tensor> {
        self.to_dtype(DType::Bool)?.bitwise_xor(&other.to_dtype(DType::Bool)?)
    }

    /// `2^self`.
    pub fn exp2(&self) -> Result<Tensor> {
        self.unary(UnaryOp::Exp2)
    }

    /// `e^self - 1`, accurate near 0.
    pub fn expm1(&self) -> Result<Tensor> {
        self.unary(UnaryOp::Expm1)
    }

    /// Base-2 logarithm.
    pub fn log2(&self) -> Result<Tensor> {
        self.unary(UnaryOp::Log2)
    }

    /// Base-10 logarithm.
    pub fn log10(&self) -> Result<Tensor> {
        self.unary(UnaryOp::Log10)
    }

    /// `ln(1 + self)`, accurate near 0.
    pub fn log1p(&self) -> Result<Tensor> {
        self.unary(UnaryOp::Log1p)
    }

    /// Tangent.
    pub fn tan(&self) -> Result<Tensor> {
        self.unary(UnaryOp::Tan)
    }

    /// Arcsine (NaN outside `[-1, 1]`).
    pub fn asin(&self) -> Result<Tensor> {
        self.unary(UnaryOp::Asin)
    }

    /// Arccosine (NaN outside `[-1, 1]`).
    pub fn acos(&self) -> Result<Tensor> {
        self.unary(UnaryOp::Acos)
    }

    /// Arctangent.
    pub fn atan(&self) -> Result<Tensor> {
        self.unary(UnaryOp::Atan)
    }

    /// Hyperbolic sine.
    pub fn sinh(&self) -> Result<Tensor> {
        self.unary(UnaryOp::Sinh)
    }

    /// Hyperbolic cosine.
    pub fn cosh(&self) -> Result<Tensor> {
        self.unary(UnaryOp::Cosh)
    }

    /// Inverse hyperbolic sine.
    pub fn asinh(&self) -> Result<Tensor> {
        self.unary(UnaryOp::Asinh)
    }

    /// Inverse hyperbolic cosine (NaN below 1).
    pub fn acosh(&self) -> Result<Tensor> {
        self.unary(UnaryOp::Acosh)
    }

    /// Inverse hyperbolic tangent (±∞ at ±1, NaN outside `[-1, 1]`).
    pub fn atanh(&self) -> Result<Tensor> {
        self.unary(UnaryOp::Atanh)
    }

    /// The error function.
    pub fn erf(&self) -> Result<Tensor> {
        self.unary(UnaryOp::Erf)
    }

    /// The complementary error function `1 - erf(self)`, accurate where it is tiny.
    pub fn erfc(&self) -> Result<Tensor> {
        self.unary(UnaryOp::Erfc)
    }

    /// The inverse error function (±∞ at ±1, NaN outside `[-1, 1]`).
    pub fn erfinv(&self) -> Result<Tensor> {
        self.unary(UnaryOp::Erfinv)
    }

    /// `ln |Γ(x)|` (`torch.lgamma`): +∞ at 0 and the negative integers.
    pub fn lgamma(&self) -> Result<Tensor> {
        self.unary(UnaryOp::Lgamma)
    }

    /// The digamma function `ψ(x) = Γ'(x) / Γ(x)` (`torch.digamma`): -∞ at +0, +∞ at -0, NaN at
    /// the negative integers.
    pub fn digamma(&self) -> Result<Tensor> {
        self.unary(UnaryOp::Polygamma(0))
    }

    /// The n-th derivative of the digamma function (`torch.polygamma(n, x)`): `n = 0` is digamma,
    /// `n = 1` trigamma. A negative `n` is torch's error.
    pub fn polygamma(&self, n: i64) -> Result<Tensor> {
        let n = u32::try_from(n).map_err(|_| Error::msg("polygamma(n, x) does not support negative n."))?;
        self.unary(UnaryOp::Polygamma(n))
    }

    /// The fractional part `self - trunc(self)` (float dtypes only).
    pub fn frac(&self) -> Result<Tensor> {
        self.unary(UnaryOp::Frac)
    }

    /// `ln(z / (1 - z))` with `z = clamp(self, eps, 1 - eps)` when `eps` is given (torch's `logit`;
    /// a negative `eps` means no clamping).
    pub fn logit(&self, eps: Option<f64>) -> Result<Tensor> {
        self.unary(UnaryOp::Logit { eps })
    }

    /// Rounds half to even at `decimals` decimal places (torch's `round(decimals=...)`; negative
    /// values round left of the decimal point). Float dtypes only, as in torch (even for 0 decimals;
    /// [`Tensor::round`] takes integers).
    pub fn round_decimals(&self, decimals: i64) -> Result<Tensor> {
        if !self.dtype().is_float() {
            return Err(Error::UnsupportedDType { op: "round_cpu", dtype: self.dtype() });
        }
        if decimals == 0 {
            return self.round();
        }
        let d = decimals.clamp(i32::MIN as i64, i32::MAX as i64) as i32;
        self.unary(UnaryOp::RoundDecimals(d))
    }

    /// Replaces NaN by `nan` (default 0), +∞ by `posinf` and -∞ by `neginf` (default: the dtype's
    /// largest and lowest finite values). Integer and bool tensors are returned unchanged.
    pub fn nan_to_num(&self, nan: Option<f64>, posinf: Option<f64>, neginf: Option<f64>) -> Result<Tensor> {
        let max = match self.dtype() {
            DType::F16 => f64::from(half::f16::MAX),
            DType::BF16 => f64::from(half::bf16::MAX),
            DType::F32 => f64::from(f32::MAX),
            _ => f64::MAX,
        };
        let op = UnaryOp::NanToNum {
            nan: nan.unwrap_or(0.0),
            posinf: posinf.unwrap_or(max),
            neginf: neginf.unwrap_or(-max),
        };
        self.unary(op)
    }

    /// True where the value is +∞ or -∞.
    pub fn isinf(&self) -> Result<Tensor> {
        self.unary(UnaryOp::IsInf)
    }

    /// True where the value is +∞.
    pub fn isposinf(&self) -> Result<Tensor> {
        self.unary(UnaryOp::IsPosInf)
    }

    /// True where the value is -∞.
    pub fn isneginf(&self) -> Result<Tensor> {
        self.unary(UnaryOp::IsNegInf)
    }

    /// True where the value is neither NaN nor infinite.
    pub fn isfinite(&self) -> Result<Tensor> {
        self.unary(UnaryOp::IsFinite)
    }

    /// `atan2(self, other)`: the angle of the point `(other, self)`; integers promote to float.
    pub fn atan2(&self, other: impl Into<Operand>) -> Result<Tensor> {
        self.binary(other, BinaryOp::Atan2)
    }

    /// C's `fmod`: the remainder of truncating division, with the sign of `self`.
    pub fn fmod(&self, other: impl Into<Operand>) -> Result<Tensor> {
        let other = other.into();
        self.check_integer_divisor(BinaryOp::Fmod, &other)?;
        self.binary(other, BinaryOp::Fmod)
    }

    /// `√(self² + other²)` (float dtypes only).
    pub fn hypot(&self, other: impl Into<Operand>) -> Result<Tensor> {
        self.binary(other, BinaryOp::Hypot)
    }

    /// The magnitude of `self` with the sign of `other`; integers promote to float.
    pub fn copysign(&self, other: impl Into<Operand>) -> Result<Tensor> {
        self.binary(other, BinaryOp::CopySign)
    }

    /// `self << other` (integer dtypes; 0 for shifts that are negative or at least the bit width).
    pub fn bitwise_left_shift(&self, other: impl Into<Operand>) -> Result<Tensor> {
        self.binary(other, BinaryOp::ShiftLeft)
    }

    /// `self >> other`, arithmetic for signed dtypes.
    pub fn bitwise_right_shift(&self, other: impl Into<Operand>) -> Result<Tensor> {
        self.binary(other, BinaryOp::ShiftRight)
    }

    /// `base ** self` for a Python number `base` (torch's `pow(Scalar, Tensor)`).
    pub fn pow_scalar_base(base: impl Into<Scalar>, exponent: &Tensor) -> Result<Tensor> {
        let base = base.into();
        let dtype =
            ResultTypeState::default().tensor(exponent.dtype(), exponent.rank()).scalar(base).result();
        Tensor::full_unchecked((), base, (dtype, exponent.device()))?.pow(exponent)
    }

    /// Clamps into `[min, max]` (torch's `clamp`/`clip`): either bound may be absent, and each may be a
    /// tensor (broadcast) or a number. The result dtype is torch's `result_type` of `self` and the
    /// bounds; NaN propagates from the input and from the bounds; where `min > max` the result is `max`.
    pub fn clamp(&self, min: Option<Operand>, max: Option<Operand>) -> Result<Tensor> {
        if min.is_none() && max.is_none() {
            return Err(Error::msg("torch.clamp: At least one of 'min' or 'max' must not be None"));
        }
        let mut state = ResultTypeState::default().tensor(self.dtype(), self.rank());
        for b in min.iter().chain(max.iter()) {
            state = b.promote(state);
        }
        let dtype = state.result();
        if dtype == DType::Bool {
            return Err(Error::UnsupportedDType { op: "clamp_cpu", dtype });
        }
        let (min, max) = (int_bound(min, dtype, "min")?, int_bound(max, dtype, "max")?);
        let scalar = |b: &Option<Operand>| matches!(b, Some(Operand::Scalar(_)));
        let (lo_scalar, hi_scalar) = (scalar(&min), scalar(&max));
        let x = self.to_dtype(dtype)?;
        let lo = min.map(|b| b.to_tensor(dtype, self.device())).transpose()?;
        let hi = max.map(|b| b.to_tensor(dtype, self.device())).transpose()?;
        let mut y = x.clone();
        if let Some(lo) = &lo {
            y = y.maximum(lo)?;
        }
        if let Some(hi) = &hi {
            y = y.minimum(hi)?;
        }
        let recording = crate::autograd::is_recording();
        if let (Some(lo), Some(hi), false, false) = (&lo, &hi, lo_scalar, hi_scalar) {
            if recording && (x.requires_grad() || lo.requires_grad() || hi.requires_grad()) {
                // Two tensor bounds: torch's own table (`clamp_backward_min_max`), not the chain
                // of maximum and minimum.
                let shape = broadcast_shapes(&broadcast_shapes(x.dims(), lo.dims())?, hi.dims())?;
                let inputs = [x.broadcast_to(&shape)?, lo.broadcast_to(&shape)?, hi.broadcast_to(&shape)?];
                return Ok(ClampBetweenTensors.apply(&inputs)?.remove(0));
            }
        }
        if !(x.requires_grad() && recording) {
            return Ok(y);
        }
        // torch's gradients: a tensor bound shares ties with the input as maximum/minimum do; at a
        // number bound the input gets none, nor where it is NaN.
        let mut tie: Option<Tensor> = if lo_scalar || hi_scalar { Some(x.isnan()?) } else { None };
        for (bound, is_scalar) in [(&lo, lo_scalar), (&hi, hi_scalar)] {
            if let (Some(b), true) = (bound, is_scalar) {
                let at = x.eq(b)?;
                tie = Some(match tie {
                    Some(t) => t.logical_or(&at)?,
                    None => at,
                });
            }
        }
        match tie {
            Some(t) => Tensor::where_cond(&t, y.detach(), &y),
            None => Ok(y),
        }
    }

    /// Same as [`Tensor::clamp`].
    pub fn clip(&self, min: Option<Operand>, max: Option<Operand>) -> Result<Tensor> {
        self.clamp(min, max)
    }

    /// `clamp(min=min)`.
    pub fn clamp_min(&self, min: impl Into<Operand>) -> Result<Tensor> {
        self.clamp(Some(min.into()), None)
    }

    /// `clamp(max=max)`.
    pub fn clamp_max(&self, max: impl Into<Operand>) -> Result<Tensor> {
        self.clamp(None, Some(max.into()))
    }

    /// Linear interpolation `self + weight * (end - self)` (torch's `lerp`, with its two-sided formula
    /// for accuracy near `weight = 1`). `end` and a tensor `weight` must have `self`'s float dtype;
    /// f16/bf16 compute in f32.
    pub fn lerp(&self, end: &Tensor, weight: impl Into<Operand>) -> Result<Tensor> {
        let dtype = self.dtype();
        let weight = weight.into();
        let check = |name: &str, t: &Tensor| {
            if t.dtype() != dtype {
                return Err(Error::msg(format!(
                    "expected dtype {} for `{name}` but got dtype {}",
                    dtype.name(),
                    t.dtype().name()
                )));
            }
            Ok(())
        };
        check("end", end)?;
        if let Operand::Tensor(w) = &weight {
            check("weight", w)?;
        }
        if !dtype.is_float() {
            let op = if matches!(weight, Operand::Tensor(_)) {
                "lerp_kernel_tensor"
            } else {
                "lerp_kernel_scalar"
            };
            return Err(Error::UnsupportedDType { op, dtype });
        }
        let acc = if matches!(dtype, DType::F16 | DType::BF16) { DType::F32 } else { dtype };
        let (s, e) = (self.to_dtype(acc)?, end.to_dtype(acc)?);
        let diff = e.sub(&s)?;
        let out = match weight {
            Operand::Scalar(w) => {
                let w = w.to_f64();
                if w.abs() < 0.5 {
                    s.add(diff.mul(w)?)?
                } else {
                    e.sub(diff.mul(1.0 - w)?)?
                }
            }
            Operand::Tensor(w) => {
                let w = w.to_dtype(acc)?;
                let low = s.add(w.mul(&diff)?)?;
                let high = e.sub(diff.mul(w.neg()?.add(1.0)?)?)?;
                Tensor::where_cond(&w.abs()?.lt(0.5)?, &low, &high)?
            }
        };
        out.to_dtype(dtype)
    }
}

/// torch's `PowBackward0` for a power by a number: the gradient `g * (e * x ** (e - 1))` takes the
/// power by a number again (through the same shortcuts, so `x ** 0.5` at -0.0 gives -inf as torch's
/// rsqrt does), zero for `e == 0`. (A chain of the shortcuts' own ops would give NaN or the wrong
/// infinity at zeros and infinities.)
struct PowByNumber(Scalar);

impl Function for PowByNumber {
    fn forward(&self, ctx: &mut crate::autograd::FunctionCtx, inputs: &[Tensor]) -> Result<Vec<Tensor>> {
        ctx.save_for_backward(&[&inputs[0]]);
        let x = &inputs[0];
        Ok(vec![x.pow_number(self.0, x.dtype())?])
    }

    fn backward(&self, ctx: &crate::autograd::FunctionCtx, grads: &[Tensor]) -> Result<Vec<Option<Tensor>>> {
        let x = &ctx.saved_tensors()?[0];
        if self.0.to_f64() == 0.0 {
            return Ok(vec![Some(grads[0].zeros_like()?)]);
        }
        let less_one = match self.0 {
            Scalar::Int(e) => Scalar::Int(e - 1),
            e => Scalar::Float(e.to_f64() - 1.0),
        };
        Ok(vec![Some(grads[0].mul(&x.pow(less_one)?.mul(self.0)?)?)])
    }

    fn name(&self) -> &'static str {
        "PowBackward0"
    }
}

/// `clamp(x, lo, hi)` with two tensor bounds and torch 2.15's gradients: a NaN input takes the
/// gradient; inverted bounds (`lo > hi`) give it to `hi`; otherwise the active side gets it, a tie
/// with one bound is split in half, and `x == lo == hi` gives it all to `x`; a NaN bound gets none.
struct ClampBetweenTensors;

impl Function for ClampBetweenTensors {
    fn forward(&self, ctx: &mut crate::autograd::FunctionCtx, inputs: &[Tensor]) -> Result<Vec<Tensor>> {
        let [x, lo, hi] = inputs else { unreachable!("three inputs") };
        ctx.save_for_backward(&[x, lo, hi]);
        Ok(vec![x.maximum(lo)?.minimum(hi)?])
    }

    fn backward(&self, ctx: &crate::autograd::FunctionCtx, grads: &[Tensor]) -> Result<Vec<Option<Tensor>>> {
        let saved = ctx.saved_tensors()?;
        let (x, lo, hi, g) = (&saved[0], &saved[1], &saved[2], &grads[0]);
        let x_nan = x.isnan()?;
        let bound_nan = lo.isnan()?.logical_or(&hi.isnan()?)?;
        let inverted = lo.gt(hi)?;
        let (at_lo, at_hi) = (x.eq(lo)?, x.eq(hi)?);
        let half = g.div(2.0)?;
        let zero = g.zeros_like()?;
        let pick = |cond: &Tensor, a: &Tensor, b: &Tensor| Tensor::where_cond(cond, a, b);
        // x: a NaN x gets it all; otherwise none outside the bounds (comparisons with a NaN bound
        // are false) or between inverted ones, half at a tie with one bound (both bounds numbers),
        // all at a tie with both.
        let outside = x.lt(lo)?.logical_or(&x.gt(hi)?)?.logical_or(&inverted)?;
        let tie = at_lo.logical_or(&at_hi)?.logical_and(&bound_nan.logical_not()?)?;
        let gx = pick(&tie, &half, g)?;
        let gx = pick(&at_lo.logical_and(&at_hi)?, g, &gx)?;
        let gx = pick(&outside, &zero, &gx)?;
        let gx = pick(&x_nan, g, &gx)?;
        // lo: below it, half at a tie with it alone; nothing when any of the three is NaN.
        let glo = pick(&at_lo.logical_and(&at_hi.logical_not()?)?, &half, &zero)?;
        let glo = pick(&x.lt(lo)?, g, &glo)?;
        let glo = pick(&x_nan.logical_or(&bound_nan)?.logical_or(&inverted)?, &zero, &glo)?;
        // hi: above it, half at a tie with it alone, all of it when the bounds are inverted (even
        // for a NaN x); nothing when a bound is NaN.
        let ghi = pick(&at_hi.logical_and(&at_lo.logical_not()?)?, &half, &zero)?;
        let ghi = pick(&x.gt(hi)?.logical_or(&inverted)?, g, &ghi)?;
        let ghi = pick(&x_nan.logical_and(&inverted.logical_not()?)?, &zero, &ghi)?;
        let ghi = pick(&bound_nan, &zero, &ghi)?;
        Ok(vec![Some(gx), Some(glo), Some(ghi)])
    }

    fn name(&self) -> &'static str {
        "ClampBackward0"
    }
}
