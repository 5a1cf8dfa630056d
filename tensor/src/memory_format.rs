//! Memory formats on tensors (torch's `memory_format=` arguments): `contiguous(memory_format=)`,
//! `is_contiguous(memory_format=)`, `suggest_memory_format()`, `.to(memory_format=)`,
//! `clone(memory_format=)` and the `*_like(memory_format=)` functions, with torch's rules
//! (`oxtorch_core::memory_format`).
//!
//! A format only chooses strides. Every kernel writes a fresh row-major output; a tensor in
//! another format is such an output made for the dims in memory order (the input permuted that
//! way, then copied) and seen through a permuted layout of the same storage. Kernels read any
//! strided input, so these tensors go everywhere a contiguous one does.

use oxtorch_core::memory_format::{self as mf, MemoryFormat};
use oxtorch_core::shape::contiguous_strides;
use oxtorch_core::{Error, Layout, Result, Scalar, Shape};

use crate::autograd::{Function, FunctionCtx};
use crate::{Tensor, TensorOptions};

/// A tensor of `dims` with the dense, non-overlapping `strides`: `make` builds a row-major tensor
/// of the dims in memory order (it gets that order and those dims), which is then seen with
/// `strides`.
fn with_strides(
    dims: &[usize],
    strides: Vec<usize>,
    make: impl FnOnce(&[usize], &[usize]) -> Result<Tensor>,
) -> Result<Tensor> {
    let order = mf::memory_order(&strides);
    let mem_dims: Vec<usize> = order.iter().map(|&d| dims[d]).collect();
    let base = make(&order, &mem_dims)?;
    let row_major = contiguous_strides(&mem_dims);
    if base.dims() != mem_dims.as_slice() || base.strides() != row_major.as_slice() {
        return Err(Error::msg("internal error: a memory-format buffer is not row-major"));
    }
    // The row-major strides of the permuted dims are `strides` on every dim of size > 1 (size-1
    // dims never move the address, so they keep the strides torch gives them; an empty tensor
    // addresses nothing).
    debug_assert!(
        dims.contains(&0)
            || order.iter().enumerate().all(|(i, &d)| dims[d] <= 1 || row_major[i] == strides[d])
    );
    let layout = Layout::new(dims.to_vec(), strides, base.storage_offset())?;
    Ok(base.with_layout(layout))
}

/// A copy with other strides as a differentiable op: the gradient flows back unchanged (torch's
/// `CloneBackward0` / `ToCopyBackward0`).
struct FormatCopy {
    strides: Vec<usize>,
    name: &'static str,
}

impl Function for FormatCopy {
    fn forward(&self, _ctx: &mut FunctionCtx, inputs: &[Tensor]) -> Result<Vec<Tensor>> {
        let x = &inputs[0];
        let out = with_strides(x.dims(), self.strides.clone(), |order, _| x.permute(order.to_vec())?.copy())?;
        Ok(vec![out])
    }

    fn backward(&self, _ctx: &FunctionCtx, grads: &[Tensor]) -> Result<Vec<Option<Tensor>>> {
        Ok(vec![Some(grads[0].clone())])
    }

    fn name(&self) -> &'static str {
        self.name
    }
}

impl Tensor {
    /// torch's `is_contiguous(memory_format=fmt)`: dense in the format's order with the strides of
    /// size-1 dims ignored (so a row-major `N×1×H×W` or `N×C×1×1` tensor is channels-last
    /// contiguous too). A channels-last format on a tensor of another rank is `false`;
    /// `Preserve` asks for plain contiguity (and an empty tensor is always contiguous, as in torch).
    pub fn is_contiguous_format(&self, fmt: MemoryFormat) -> bool {
        mf::is_contiguous_for(self.dims(), self.strides(), fmt)
    }

    /// torch's `suggest_memory_format()`: `ChannelsLast` for a 4-d tensor whose strides look like
    /// channels last, `ChannelsLast3d` for such a 5-d one, else `Contiguous` (also whenever the
    /// size-1 dims leave it ambiguous: a row-major `N×1×H×W` tensor suggests `Contiguous`).
    pub fn suggest_memory_format(&self) -> MemoryFormat {
        mf::suggest_memory_format(self.dims(), self.strides())
    }

    /// torch's `is_non_overlapping_and_dense()`: some order of the dims is row-major.
    pub fn is_non_overlapping_and_dense(&self) -> bool {
        mf::is_non_overlapping_and_dense(self.dims(), self.strides())
    }

    /// torch's `contiguous(memory_format=fmt)`: `self` when already contiguous in `fmt`, else a
    /// copy with the format's strides (differentiable). `ChannelsLast` needs a 4-d tensor and
    /// `ChannelsLast3d` a 5-d one; `Preserve` is refused unless the tensor is contiguous, as in
    /// torch.
    pub fn contiguous_format(&self, fmt: MemoryFormat) -> Result<Tensor> {
        if self.is_contiguous_format(fmt) {
            return Ok(self.clone());
        }
        if fmt == MemoryFormat::Preserve {
            return Err(Error::msg("preserve memory format is unsupported by the contiguous operator"));
        }
        self.clone_format(fmt)
    }

    /// torch's `clone(memory_format=fmt)`, always a copy (differentiable, `CloneBackward0`). With
    /// `Preserve` (torch's default) a non-overlapping, dense tensor keeps its strides exactly and
    /// any other gets dense strides in the same dim order (torch's `infer_dense_strides`); other
    /// formats give their strides. ([`Tensor::copy`], oxtorch's plain clone, is always row-major.)
    pub fn clone_format(&self, fmt: MemoryFormat) -> Result<Tensor> {
        let strides = mf::like_strides(self.dims(), self.strides(), fmt)?;
        self.copy_with_strides(strides, "CloneBackward0")
    }

    /// torch's `x.to(memory_format=fmt)`: `self` when `fmt` is `Preserve` or what
    /// [`Tensor::suggest_memory_format`] already reports (a transposed matrix stays as it is under
    /// `Contiguous`), else a copy with the format's strides (differentiable, `ToCopyBackward0`).
    pub fn to_memory_format(&self, fmt: MemoryFormat) -> Result<Tensor> {
        if fmt == MemoryFormat::Preserve || self.suggest_memory_format() == fmt {
            return Ok(self.clone());
        }
        let strides = fmt.strides_for(self.dims())?;
        self.copy_with_strides(strides, "ToCopyBackward0")
    }

    /// A differentiable copy of `self` seen with the dense `strides`.
    fn copy_with_strides(&self, strides: Vec<usize>, name: &'static str) -> Result<Tensor> {
        if strides == contiguous_strides(self.dims()) {
            return self.copy();
        }
        Ok(FormatCopy { strides, name }.apply(std::slice::from_ref(self))?.swap_remove(0))
    }

    /// A new tensor of this tensor's shape laid out as `fmt` says for it (torch's
    /// `empty_like(memory_format=)` rule, see [`Tensor::clone_format`]), its storage made by
    /// `make` for the dims in memory order.
    fn like_format(
        &self,
        fmt: MemoryFormat,
        make: impl FnOnce(&[usize], TensorOptions) -> Result<Tensor>,
    ) -> Result<Tensor> {
        let strides = mf::like_strides(self.dims(), self.strides(), fmt)?;
        let opts = self.same_options();
        with_strides(self.dims(), strides, |_, mem_dims| make(mem_dims, opts))
    }

    /// torch's `empty_like(x, memory_format=fmt)` (zero-filled, as [`Tensor::empty_like`]).
    pub fn empty_like_format(&self, fmt: MemoryFormat) -> Result<Tensor> {
        self.like_format(fmt, |d, o| Tensor::empty(d, o))
    }

    /// torch's `zeros_like(x, memory_format=fmt)`.
    pub fn zeros_like_format(&self, fmt: MemoryFormat) -> Result<Tensor> {
        self.like_format(fmt, |d, o| Tensor::zeros(d, o))
    }

    /// torch's `ones_like(x, memory_format=fmt)`.
    pub fn ones_like_format(&self, fmt: MemoryFormat) -> Result<Tensor> {
        self.like_format(fmt, |d, o| Tensor::ones(d, o))
    }

    /// torch's `full_like(x, value, memory_format=fmt)`.
    pub fn full_like_format(&self, value: impl Into<Scalar>, fmt: MemoryFormat) -> Result<Tensor> {
        let value = value.into();
        self.like_format(fmt, |d, o| Tensor::full(d, value, o))
    }

    /// torch's `rand_like(x, memory_format=fmt)`: the values are drawn in memory order, as torch
    /// fills the new tensor's storage.
    pub fn rand_like_format(&self, fmt: MemoryFormat) -> Result<Tensor> {
        self.like_format(fmt, |d, o| Tensor::rand(d, o))
    }

    /// torch's `randn_like(x, memory_format=fmt)`: the values are drawn in memory order.
    pub fn randn_like_format(&self, fmt: MemoryFormat) -> Result<Tensor> {
        self.like_format(fmt, |d, o| Tensor::randn(d, o))
    }

    /// torch's `empty(shape, memory_format=fmt)` (zero-filled, as [`Tensor::empty`]):
    /// `ChannelsLast` needs 4 dims, `ChannelsLast3d` 5; `Preserve` is an error.
    pub fn empty_format(
        shape: impl Into<Shape>,
        opts: impl Into<TensorOptions>,
        fmt: MemoryFormat,
    ) -> Result<Tensor> {
        let (shape, opts) = (shape.into(), opts.into());
        shape.checked_numel()?;
        let strides = fmt.strides_for(shape.dims())?;
        with_strides(shape.dims(), strides, |_, mem_dims| Tensor::empty(mem_dims, opts))
    }
}
