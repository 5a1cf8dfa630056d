//! Comparisons and `where`.

use oxtorch_core::ops::{CmpOp, Prim};
use oxtorch_core::{broadcast_shapes, DType, Error, Result, ResultTypeState};

use super::elementwise::prepare_pair;
use super::Operand;
use crate::dispatch::apply1;
use crate::Tensor;

impl Tensor {
    /// Compares with a tensor or scalar after promotion and broadcasting; bool output.
    pub fn compare(&self, other: impl Into<Operand>, op: CmpOp) -> Result<Tensor> {
        let other = other.into();
        let dtype = other.promote(ResultTypeState::default().tensor(self.dtype(), self.rank())).result();
        let (a, b) = prepare_pair(self, &other, dtype)?;
        apply1(&Prim::Compare(op), &[&a, &b], a.device())
    }

    /// `self == other` elementwise.
    pub fn eq(&self, other: impl Into<Operand>) -> Result<Tensor> {
        self.compare(other, CmpOp::Eq)
    }

    /// `self != other` elementwise.
    pub fn ne(&self, other: impl Into<Operand>) -> Result<Tensor> {
        self.compare(other, CmpOp::Ne)
    }

    /// `self < other` elementwise.
    pub fn lt(&self, other: impl Into<Operand>) -> Result<Tensor> {
        self.compare(other, CmpOp::Lt)
    }

    /// `self <= other` elementwise.
    pub fn le(&self, other: impl Into<Operand>) -> Result<Tensor> {
        self.compare(other, CmpOp::Le)
    }

    /// `self > other` elementwise.
    pub fn gt(&self, other: impl Into<Operand>) -> Result<Tensor> {
        self.compare(other, CmpOp::Gt)
    }

    /// `self >= other` elementwise.
    pub fn ge(&self, other: impl Into<Operand>) -> Result<Tensor> {
        self.compare(other, CmpOp::Ge)
    }

    /// True when both tensors have the same shape and elements (torch's `equal`).
    pub fn equal(&self, other: &Tensor) -> Result<bool> {
        if self.dims() != other.dims() {
            return Ok(false);
        }
        self.eq(other)?.all()?.item::<bool>()
    }

    /// `where(self, a, b)`: elements of `a` where `self` (a bool condition) is true, of `b` elsewhere.
    /// Same as [`Tensor::where_cond`] with the condition as receiver.
    pub fn where_self(&self, a: impl Into<Operand>, b: impl Into<Operand>) -> Result<Tensor> {
        Tensor::where_cond(self, a, b)
    }

    /// torch's `where(condition, input, other)` with promotion of `input`/`other` and broadcasting
    /// of all three.
    pub fn where_cond(
        condition: &Tensor,
        input: impl Into<Operand>,
        other: impl Into<Operand>,
    ) -> Result<Tensor> {
        if condition.dtype() != DType::Bool {
            return Err(Error::msg(format!(
                "where expected condition to be a boolean tensor, but got a tensor with dtype {}",
                condition.dtype().scalar_type_name()
            )));
        }
        let (x, y) = (input.into(), other.into());
        let dtype = y.promote(x.promote(ResultTypeState::default())).result();
        // A number must fit the result's type (torch: `where(c, u8, 300)` is an overflow error).
        for v in [&x, &y] {
            if let Operand::Scalar(s) = v {
                s.check_fits(dtype)?;
            }
        }
        let device = condition.device();
        let (x, y) = (x.to_tensor(dtype, device)?, y.to_tensor(dtype, device)?);
        let shape = broadcast_shapes(&broadcast_shapes(condition.dims(), x.dims())?, y.dims())?;
        let (c, x, y) = (condition.broadcast_to(&shape)?, x.broadcast_to(&shape)?, y.broadcast_to(&shape)?);
        apply1(&Prim::Where, &[&c, &x, &y], device)
    }
}
