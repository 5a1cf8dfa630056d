//! Masked ops and nonzero: masked_fill, masked_select, masked_scatter, nonzero (and its tuple form).

use oxtorch_core::ops::{IndexOp, Prim};
use oxtorch_core::{DType, Error, Result};

use super::broadcast_pair;

use crate::dispatch::apply1;
use crate::ops::Operand;
use crate::Tensor;

/// torch's C++ type name of a dtype, as its mask messages print it.
fn cpp_name(d: DType) -> &'static str {
    match d {
        DType::Bool => "bool",
        DType::U8 => "unsigned char",
        DType::I8 => "signed char",
        DType::I16 => "short int",
        DType::I32 => "int",
        DType::I64 => "long int",
        DType::F16 => "c10::Half",
        DType::BF16 => "c10::BFloat16",
        DType::F32 => "float",
        DType::F64 => "double",
    }
}

/// Checks that `mask` is a bool tensor, with `op`'s message otherwise (naming the dtype as
/// `dtype_name` does).
fn check_mask(mask: &Tensor, op: &str, dtype_name: fn(DType) -> &'static str) -> Result<()> {
    if mask.dtype() != DType::Bool {
        return Err(Error::msg(format!(
            "{op} only supports boolean masks, but got mask with dtype {}",
            dtype_name(mask.dtype())
        )));
    }
    Ok(())
}

impl Tensor {
    /// Row-major flat positions of the non-zero elements (int64, 1-d).
    pub(crate) fn nonzero_flat(&self) -> Result<Tensor> {
        apply1(&Prim::Index(IndexOp::Nonzero), &[self], self.device())
    }

    /// `self.nonzero()`: the coordinates of the non-zero elements, `[n, rank]` int64, row-major.
    pub fn nonzero(&self) -> Result<Tensor> {
        let pos = self.nonzero_flat()?;
        if self.rank() == 0 {
            return Tensor::zeros([pos.numel(), 0], (DType::I64, self.device()));
        }
        let cols = self.nonzero_tuple()?;
        let refs: Vec<&Tensor> = cols.iter().collect();
        Tensor::stack(&refs, 1)
    }

    /// `torch.argwhere(self)`: the same as [`Tensor::nonzero`].
    pub fn argwhere(&self) -> Result<Tensor> {
        self.nonzero()
    }

    /// `self.nonzero(as_tuple=True)`: one 1-d int64 tensor of coordinates per dim (one tensor of
    /// zeros for a 0-d input).
    pub fn nonzero_tuple(&self) -> Result<Vec<Tensor>> {
        let pos = self.nonzero_flat()?;
        if self.rank() == 0 {
            return Ok(vec![pos]);
        }
        let mut stride = 1i64;
        let mut out = Vec::with_capacity(self.rank());
        for &size in self.dims().iter().rev() {
            let size = size as i64;
            let c = if size <= 1 { pos.zeros_like()? } else { pos.floor_divide(stride)?.remainder(size)? };
            out.push(c);
            stride *= size.max(1);
        }
        out.reverse();
        Ok(out)
    }

    /// `torch.where(condition)` with one argument: [`Tensor::nonzero_tuple`] of the condition.
    pub fn where_nonzero(condition: &Tensor) -> Result<Vec<Tensor>> {
        condition.nonzero_tuple()
    }

    /// `self.masked_fill(mask, value)`: `value` (a number or a 0-d tensor, cast to self's dtype)
    /// where the bool `mask` is true; self and mask broadcast.
    pub fn masked_fill(&self, mask: &Tensor, value: impl Into<Operand>) -> Result<Tensor> {
        check_mask(mask, "masked_fill_", cpp_name)?;
        let value = match value.into() {
            Operand::Scalar(s) => {
                s.check_converts(self.dtype())?;
                Tensor::full((), s, self.same_options())?
            }
            Operand::Tensor(t) if t.rank() != 0 => {
                return Err(Error::msg(format!(
                    "masked_fill_ only supports a 0-dimensional value tensor, but got tensor with {} dimension(s).",
                    t.rank()
                )))
            }
            Operand::Tensor(t) => {
                // (a value on a device is not read back to be checked)
                if t.device().is_cpu() {
                    t.item_scalar()?.check_converts(self.dtype())?;
                }
                t.to_dtype(self.dtype())?
            }
        };
        broadcast_pair(mask.dims(), self.dims())?;
        Tensor::where_cond(mask, &value, self)
    }

    /// `self.masked_select(mask)`: the elements where the bool `mask` is true, as a 1-d tensor
    /// (self and mask broadcast).
    pub fn masked_select(&self, mask: &Tensor) -> Result<Tensor> {
        if mask.dtype() != DType::Bool {
            return Err(Error::msg("masked_select: expected BoolTensor for mask"));
        }
        let shape = broadcast_pair(mask.dims(), self.dims())?;
        let pos = mask.broadcast_to(&shape)?.nonzero_flat()?;
        self.broadcast_to(&shape)?.reshape([-1])?.gather_raw(0, &pos)
    }

    /// `self.masked_scatter(mask, source)`: the positions where `mask` is true take the first
    /// elements of `source` (self's dtype) in row-major order.
    pub fn masked_scatter(&self, mask: &Tensor, source: &Tensor) -> Result<Tensor> {
        check_mask(mask, "masked_scatter_", DType::scalar_type_name)?;
        if source.dtype() != self.dtype() {
            return Err(Error::msg(format!(
                "masked_scatter: expected self and source to have same dtypes but got{} and {}",
                self.dtype().scalar_type_name(),
                source.dtype().scalar_type_name()
            )));
        }
        let shape = broadcast_pair(mask.dims(), self.dims())?;
        let pos = mask.broadcast_to(&shape)?.nonzero_flat()?;
        let n = pos.numel();
        if source.numel() < n {
            return Err(Error::msg("Number of elements of source < number of ones in mask"));
        }
        let me = self.broadcast_to(&shape)?.reshape([-1])?;
        if n == 0 && !source.requires_grad() {
            return me.contiguous()?.reshape(shape);
        }
        let src = source.reshape([-1])?.narrow(0, 0, n)?;
        me.scatter_raw(0, &pos, &src, None, true)?.reshape(shape)
    }
}
