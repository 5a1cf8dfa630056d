//! `index_put_`: assignment (or accumulation) through any index expression.

use oxtorch_core::{Error, Result};

use super::advanced::selected_offsets;
use super::IntoIndices;
use crate::ops::Operand;
use crate::Tensor;

impl Tensor {
    /// `self[indices] = values` (or `+=` with `accumulate`), in place: `values` (a number, or a
    /// tensor of self's dtype; through basic indices alone any dtype, cast as a copy is) is
    /// broadcast to the indexed shape after its leading unit dims are dropped, as torch's setitem
    /// does (with `accumulate`, as torch's `index_put_`, they are kept). Duplicate indices
    /// accumulate with `accumulate`; without it the last write wins.
    ///
    /// ```
    /// use oxtorch_tensor::{Tensor, DType};
    /// # fn main() -> oxtorch_tensor::Result<()> {
    /// let t = Tensor::zeros([2, 3], DType::F32)?;
    /// let (rows, cols) = (Tensor::from_vec(vec![0i64, 0], [2])?, Tensor::from_vec(vec![2i64, 2], [2])?);
    /// t.index_put_(&[&rows, &cols], &Tensor::ones([2], DType::F32)?, true)?; // t[0, 2] += 1 twice
    /// t.index_put_((1, ..), 5.0, false)?;                                    // t[1, :] = 5
    /// assert_eq!(t.to_vec::<f32>()?, vec![0.0, 0.0, 2.0, 5.0, 5.0, 5.0]);
    /// # Ok(()) }
    /// ```
    pub fn index_put_(
        &self,
        indices: impl IntoIndices,
        values: impl Into<Operand>,
        accumulate: bool,
    ) -> Result<&Tensor> {
        let indices = indices.into_indices();
        // A 0-d integer index selects (as getitem does): only other index tensors and masks make
        // the assignment an advanced one.
        let advanced = indices.iter().any(|i| match i {
            super::TensorIndex::Tensor(t) => t.rank() > 0 || super::is_mask(t),
            _ => false,
        });
        let offsets = selected_offsets(self.dims(), &indices, self.device())?;
        let mut values = match values.into() {
            Operand::Scalar(s) => Tensor::full((), s, self.same_options())?,
            // Through a view, torch copies (and so casts) the values.
            Operand::Tensor(t) if !advanced => t.to_dtype(self.dtype())?,
            Operand::Tensor(t) if t.dtype() != self.dtype() => {
                return Err(Error::msg(format!(
                    "Index put requires the source and destination dtypes match, got {} for the destination and {} for the source.",
                    self.dtype().scalar_type_name(),
                    t.dtype().scalar_type_name()
                )))
            }
            Operand::Tensor(t) => t,
        };
        // torch's setitem drops the values' leading unit dims (numpy's rule): `z[0] = ones(1, 1, 3)`.
        // Accumulation is torch's `index_put_` alone, which broadcasts the values as they are.
        while !accumulate && values.rank() > 0 && values.dims()[0] == 1 {
            values = values.squeeze_dims(0)?;
        }
        if !advanced {
            // Basic indexing assigns through a view: torch's message is expand's.
            values.broadcast_to(offsets.dims())?;
        }
        let values = values.broadcast_to(offsets.dims()).map_err(|_| {
            Error::msg(format!(
                "shape mismatch: value tensor of shape {:?} cannot be broadcast to indexing result of shape {:?}",
                values.dims(),
                offsets.dims()
            ))
        })?;
        // Nothing to write; with values that require grad the (empty) write still happens, so
        // that they get torch's zero gradient.
        if offsets.numel() == 0 && !values.requires_grad() {
            return Ok(self);
        }
        let reduce = accumulate.then_some(oxtorch_core::ops::ReduceOp::Sum);
        let out = self.reshape([-1])?.scatter_raw(
            0,
            &offsets.reshape([-1])?,
            &values.reshape([-1])?,
            reduce,
            true,
        )?;
        self.copy_(&out.reshape(self.dims().to_vec())?)
    }

    /// `torch.index_put(self, indices, values, accumulate)`: [`Tensor::index_put_`] on a copy.
    pub fn index_put(
        &self,
        indices: impl IntoIndices,
        values: impl Into<Operand>,
        accumulate: bool,
    ) -> Result<Tensor> {
        let out = self.copy()?;
        out.index_put_(indices, values, accumulate)?;
        Ok(out)
    }
}
