//! Unary and binary elementwise ops with torch's promotion and broadcasting.

use oxtorch_core::ops::{BinaryOp, Prim, UnaryOp};
use oxtorch_core::{broadcast_shapes, DType, Error, Result, ResultTypeState, Scalar};

use super::Operand;
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
        BinaryOp::Div if !d.is_float() => DType::default_float(),
        _ => d,
    }
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
        let dtype = binary_dtype(op, self, &other);
        check_binary(op, self, &other, dtype)?;
        let (a, b) = prepare_pair(self, &other, dtype)?;
        apply1(&Prim::Binary(op), &[&a, &b], a.device())
    }

    /// `self + other`.
    pub fn add(&self, other: impl Into<Operand>) -> Result<Tensor> {
        self.binary(other, BinaryOp::Add)
    }

    /// `self + alpha * other` (torch's `add(other, alpha=...)`).
    pub fn add_scaled(&self, other: &Tensor, alpha: impl Into<Scalar>) -> Result<Tensor> {
        self.add(other.mul(alpha.into())?)
    }

    /// `self - other`.
    pub fn sub(&self, other: impl Into<Operand>) -> Result<Tensor> {
        self.binary(other, BinaryOp::Sub)
    }

    /// `self * other`.
    pub fn mul(&self, other: impl Into<Operand>) -> Result<Tensor> {
        self.binary(other, BinaryOp::Mul)
    }

    /// True division `self / other` (integers are promoted to float).
    pub fn div(&self, other: impl Into<Operand>) -> Result<Tensor> {
        self.binary(other, BinaryOp::Div)
    }

    /// `self ** exponent`.
    pub fn pow(&self, exponent: impl Into<Operand>) -> Result<Tensor> {
        self.binary(exponent, BinaryOp::Pow)
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
        self.binary(other, BinaryOp::Remainder)
    }

    /// Python's `//`: the floor of the quotient.
    pub fn floor_divide(&self, other: impl Into<Operand>) -> Result<Tensor> {
        self.binary(other, BinaryOp::FloorDivide)
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
}
