//! View-returning shape ops: unfold, movedim/moveaxis, swapaxes, meshgrid, broadcast_tensors.

use oxtorch_core::{wrap_dim, Error, Result};

use super::unique_dims;
use crate::dims::IntoDims;
use crate::Tensor;

impl Tensor {
    /// `self.unfold(dimension, size, step)`: a view with every window of `size` entries along
    /// `dimension` (taken every `step`), the window as a new last dim.
    pub fn unfold(&self, dimension: isize, size: usize, step: usize) -> Result<Tensor> {
        let d = wrap_dim(dimension, self.rank())?;
        let len = self.dims().get(d).copied().unwrap_or(1);
        if size > len {
            return Err(Error::msg(format!(
                "maximum size for tensor at dimension {d} is {len} but size is {size}"
            )));
        }
        if step == 0 {
            return Err(Error::msg("step is 0 but must be > 0"));
        }
        let (mut sizes, mut strides) = (self.dims().to_vec(), self.strides().to_vec());
        if self.rank() == 0 {
            return self.as_strided(&[size], &[1], None);
        }
        let stride = strides[d];
        sizes[d] = (len - size) / step + 1;
        strides[d] = stride * step;
        sizes.push(size);
        strides.push(stride);
        self.as_strided(&sizes, &strides, None)
    }

    /// `torch.meshgrid(tensors, indexing)`: coordinate grids (expanded views) of 0-d/1-d tensors of
    /// one dtype; `indexing` is "ij" (matrix) or "xy" (Cartesian: the first two dims swapped).
    pub fn meshgrid(tensors: &[&Tensor], indexing: &str) -> Result<Vec<Tensor>> {
        if indexing != "ij" && indexing != "xy" {
            return Err(Error::msg(format!(
                "torch.meshgrid: indexing must be one of \"xy\" or \"ij\", but received: {indexing}"
            )));
        }
        if tensors.is_empty() {
            return Err(Error::msg("torch.meshgrid: Expected at least one tensor"));
        }
        for t in tensors {
            if t.rank() > 1 {
                return Err(Error::msg("torch.meshgrid: Expected 0D or 1D tensor in the tensor list"));
            }
            if t.dtype() != tensors[0].dtype() {
                return Err(Error::msg("meshgrid expects all tensors to have the same dtype"));
            }
        }
        let swap = indexing == "xy" && tensors.len() >= 2;
        let mut order: Vec<&Tensor> = tensors.to_vec();
        if swap {
            order.swap(0, 1);
        }
        let shape: Vec<usize> = order.iter().map(|t| t.numel()).collect();
        let mut grids = order
            .iter()
            .enumerate()
            .map(|(i, t)| {
                let mut view = vec![1usize; shape.len()];
                view[i] = shape[i];
                t.reshape(view)?.broadcast_to(&shape)
            })
            .collect::<Result<Vec<_>>>()?;
        if swap {
            grids.swap(0, 1);
        }
        Ok(grids)
    }

    /// `torch.broadcast_tensors`: every tensor expanded (as a view) to the common broadcast shape.
    pub fn broadcast_tensors(tensors: &[&Tensor]) -> Result<Vec<Tensor>> {
        let mut shape: Vec<usize> = Vec::new();
        for t in tensors {
            shape = oxtorch_core::broadcast_shapes(&shape, t.dims())?;
        }
        tensors.iter().map(|t| t.broadcast_to(&shape)).collect()
    }

    /// `self.movedim(source, destination)`: a view with dims `source` moved to positions
    /// `destination`, the others keeping their order.
    pub fn movedim(&self, source: impl IntoDims, destination: impl IntoDims) -> Result<Tensor> {
        let (src, dst) = (source.into_dims(), destination.into_dims());
        if src.len() != dst.len() {
            return Err(Error::msg(format!(
                "movedim: Invalid source or destination dims: source ({src:?} dims) should contain the same number of dims as destination ({dst:?} dims)"
            )));
        }
        let r = self.rank();
        let s = unique_dims(&src, r, |_| format!("movedim: repeated dim in `source` ({src:?})"))?;
        let d = unique_dims(&dst, r, |_| format!("movedim: repeated dim in `destination` ({dst:?})"))?;
        let mut perm: Vec<Option<usize>> = vec![None; r.max(1)];
        for (&si, &di) in s.iter().zip(&d) {
            perm[di] = Some(si);
        }
        let mut rest = (0..r).filter(|k| !s.contains(k));
        let perm: Vec<isize> =
            perm.into_iter().take(r).map(|p| p.or_else(|| rest.next()).unwrap_or(0) as isize).collect();
        self.permute(perm)
    }

    /// `self.moveaxis(source, destination)`: the same as [`Tensor::movedim`].
    pub fn moveaxis(&self, source: impl IntoDims, destination: impl IntoDims) -> Result<Tensor> {
        self.movedim(source, destination)
    }

    /// `self.swapaxes(d0, d1)`: the same as [`Tensor::transpose`].
    pub fn swapaxes(&self, d0: isize, d1: isize) -> Result<Tensor> {
        self.transpose(d0, d1)
    }

    /// `self.swapdims(d0, d1)`: the same as [`Tensor::transpose`].
    pub fn swapdims(&self, d0: isize, d1: isize) -> Result<Tensor> {
        self.transpose(d0, d1)
    }
}
