//! In-place ops: they write through views into the shared storage and bump its version.

use oxtorch_core::ops::BinaryOp;
use oxtorch_core::{broadcast_shapes, DType, Error, Result, Scalar};

use super::elementwise::binary_dtype;
use super::Operand;
use crate::autograd::is_recording;
use crate::autograd::record::{check_inplace, needs_recording, rebase_after_inplace};
use crate::dispatch::{fill_in_place, write_into};
use crate::Tensor;

/// torch's `canCast`: no float to integer, no non-bool to bool.
fn can_cast(from: DType, to: DType) -> bool {
    let float_to_int = from.is_float() && !to.is_float();
    let to_bool = !from.is_bool() && to.is_bool();
    !float_to_int && !to_bool
}

impl Tensor {
    /// Refuses writes to views where several elements share one memory location.
    fn check_writable(&self) -> Result<()> {
        if self.dims().iter().zip(self.strides()).any(|(&d, &s)| d > 1 && s == 0) {
            return Err(Error::msg(
                "unsupported operation: more than one element of the written-to tensor refers to a single memory location. Please clone() the tensor before performing the operation.",
            ));
        }
        Ok(())
    }

    /// Copies `src` (broadcast to this shape, cast to this dtype) into this tensor's elements.
    pub fn copy_(&self, src: &Tensor) -> Result<&Tensor> {
        self.check_writable()?;
        let src = src.broadcast_to(self.dims()).map_err(|_| {
            Error::shape(format!(
                "output with shape {} doesn't match the broadcast shape {}",
                self.shape(),
                src.shape()
            ))
        })?;
        check_inplace(self)?;
        if needs_recording(&[self, &src]) {
            let value = src.to_dtype(self.dtype())?;
            write_into(self, &value)?;
            rebase_after_inplace(self, Some(&value))?;
        } else {
            write_into(self, &src)?;
        }
        Ok(self)
    }

    /// Sets every element to `value`.
    pub fn fill_(&self, value: impl Into<Scalar>) -> Result<&Tensor> {
        let value = value.into();
        value.check_fits(self.dtype())?;
        self.check_writable()?;
        check_inplace(self)?;
        fill_in_place(self, value)?;
        rebase_after_inplace(self, None)?;
        Ok(self)
    }

    /// Sets every element to zero.
    pub fn zero_(&self) -> Result<&Tensor> {
        self.fill_(0)
    }

    /// Applies a binary op in place: the result must broadcast to this shape and be castable to
    /// this dtype (torch refuses `int_tensor += 0.5`).
    pub fn binary_(&self, other: impl Into<Operand>, op: BinaryOp) -> Result<&Tensor> {
        let other = other.into();
        let result = binary_dtype(op, self, &other);
        if !can_cast(result, self.dtype()) {
            return Err(Error::msg(format!(
                "result type {} can't be cast to the desired output type {}",
                result.scalar_type_name(),
                self.dtype().scalar_type_name()
            )));
        }
        if let Operand::Tensor(t) = &other {
            let shape = broadcast_shapes(self.dims(), t.dims())?;
            if shape != self.dims() {
                return Err(Error::shape(format!(
                    "output with shape {} doesn't match the broadcast shape {:?}",
                    self.shape(),
                    shape
                )));
            }
        }
        self.check_writable()?;
        check_inplace(self)?;
        let other_requires_grad = matches!(&other, Operand::Tensor(t) if t.requires_grad());
        if needs_recording(&[self]) || (other_requires_grad && is_recording()) {
            // The op's node may save its inputs: give it a copy of the old value, which the write
            // below leaves intact.
            let old = if other_requires_grad { self.copy()? } else { self.clone() };
            let value = old.binary(other, op)?.to_dtype(self.dtype())?;
            write_into(self, &value)?;
            rebase_after_inplace(self, Some(&value))?;
        } else {
            let value = self.binary(other, op)?;
            write_into(self, &value)?;
        }
        Ok(self)
    }

    /// `self += other`.
    pub fn add_(&self, other: impl Into<Operand>) -> Result<&Tensor> {
        self.binary_(other, BinaryOp::Add)
    }

    /// `self -= other`.
    pub fn sub_(&self, other: impl Into<Operand>) -> Result<&Tensor> {
        self.binary_(other, BinaryOp::Sub)
    }

    /// `self *= other`.
    pub fn mul_(&self, other: impl Into<Operand>) -> Result<&Tensor> {
        self.binary_(other, BinaryOp::Mul)
    }

    /// `self /= other` (true division; integer tensors refuse it).
    pub fn div_(&self, other: impl Into<Operand>) -> Result<&Tensor> {
        self.binary_(other, BinaryOp::Div)
    }

    /// Writes `op(self)` into `self`: torch's in-place form of an out-of-place op (`x.exp_()`,
    /// `x.clamp_(..)`, `x.masked_fill_(..)`). `others` are the op's other tensor operands: when
    /// autograd records and any operand requires grad, the op reads a copy of `self`, so that what
    /// it saves for its backward is not the storage being overwritten.
    ///
    /// torch's rules: the result must keep `self`'s shape (an operand may broadcast to `self`, not
    /// the other way), and its dtype must cast to `self`'s (`int.exp_()` is an error; `f16.add_(f32)`
    /// computes in f32 and rounds into f16).
    pub fn apply_(&self, others: &[&Tensor], op: impl FnOnce(&Tensor) -> Result<Tensor>) -> Result<&Tensor> {
        self.check_writable()?;
        check_inplace(self)?;
        let record = is_recording() && (self.requires_grad() || others.iter().any(|t| t.requires_grad()));
        let input = if record { self.copy()? } else { self.clone() };
        let value = op(&input)?;
        if value.dims() != self.dims() {
            return Err(Error::shape(format!(
                "output with shape {} doesn't match the broadcast shape {}",
                self.shape(),
                value.shape()
            )));
        }
        if !can_cast(value.dtype(), self.dtype()) {
            return Err(Error::msg(format!(
                "result type {} can't be cast to the desired output type {}",
                value.dtype().scalar_type_name(),
                self.dtype().scalar_type_name()
            )));
        }
        let value = value.to_dtype(self.dtype())?;
        write_into(self, &value)?;
        if record || value.requires_grad() {
            rebase_after_inplace(self, Some(&value))?;
        }
        Ok(self)
    }
}
