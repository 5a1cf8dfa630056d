//! `Tensor::mark_dynamic`: bounded dynamism of the outermost dimension on XLA devices.

use oxtorch_core::{Error, Result};

use crate::storage::Storage;
use crate::Tensor;

impl Tensor {
    /// Marks dimension `dim` as varying between 1 and `max`, like
    /// `torch._dynamo.mark_dynamic(t, dim, max=max)`, and returns the marked tensor. `dim` must be
    /// the outermost dimension of size above 1 (0, or the sequence of a `[1, seq, ...]` tensor):
    /// its *rows* are then a prefix of the storage.
    ///
    /// On `xla`/`tpu` the rows are padded to the next power of two (at most `max`), and fused or
    /// compiled graphs run one program per bucket: every batch size from 1 to 512 compiles at most
    /// 10 programs. Ops that keep rows apart (elementwise ops, layers applied row by row, softmax
    /// or reductions along inner dims) compute the padding rows too; ops across the rows (a sum or
    /// mean over dim 0, a product contracting it, as in weight gradients) mask them. Results that
    /// keep the rows stay padded, so the next step (a backward pass) stays dynamic. A graph that
    /// cannot be rewritten for the bucket (a slice of the rows, two inputs marked with different
    /// sizes) runs with its exact shapes instead, compiled per size: never a wrong result
    /// (`OXTORCH_LOG_COMPILES=1` says why; `metrics().dynamic_refusals` counts it). The tensor
    /// behaves exactly as before: same shape, same values.
    ///
    /// The rows are copied through the host once. On the cpu nothing is compiled, so the tensor
    /// is returned as it is. The marked tensor is a new leaf: mark input data, not values that
    /// record gradients.
    pub fn mark_dynamic(&self, dim: usize, max: usize) -> Result<Tensor> {
        let shape = self.shape().clone();
        if dim >= shape.rank() || shape.dims()[..dim].iter().any(|&d| d != 1) {
            return Err(Error::msg(format!(
                "mark_dynamic: only the outermost dimension (after dims of size 1) can be dynamic, got dim {dim} of a tensor of shape {:?}",
                shape.dims()
            )));
        }
        let n = shape.dims()[dim];
        if n == 0 || n > max {
            return Err(Error::msg(format!(
                "mark_dynamic: dimension {dim} of a tensor of shape {:?} has size {n}, outside the bound 1..={max}",
                shape.dims()
            )));
        }
        if self.device().is_cpu() {
            return Ok(self.clone());
        }
        if self.requires_grad() {
            return Err(Error::msg(
                "mark_dynamic: the tensor requires grad; mark the input data, before operations that record gradients",
            ));
        }
        let src = self.exact()?;
        let cell = src.storage().read();
        let Storage::Xla(storage) = &*cell else {
            return Err(Error::msg("internal error: a device tensor without device storage"));
        };
        let marked = storage.mark_dynamic(n, max)?;
        Ok(Tensor::from_storage(Storage::Xla(marked), shape))
    }
}
