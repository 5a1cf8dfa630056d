//! `MaxUnpool1d/2d/3d`: stateless wrappers of [`crate::functional::max_unpool1d`] and its 2-D and
//! 3-D forms, with torch's constructor defaults. Their forward pass takes the pooling's indices
//! (and an optional output size) besides the input, so they are not [`crate::Forward`] layers.

use oxtorch_tensor::{Result, Tensor};

use crate::functional as F;
use crate::module::{Member, MemberMut, Module};

/// torch's `nn.MaxUnpool1d/2d/3d(kernel_size, stride=None, padding=0)`: the partial inverse of
/// `MaxPool{N}d`; `N` is the number of spatial dims and one value broadcasts over them.
#[derive(Clone, Debug)]
pub struct MaxUnpoolNd<const N: usize> {
    /// the pooling's window size
    pub kernel_size: Vec<usize>,
    /// the pooling's window step (`None`: the kernel size)
    pub stride: Option<Vec<usize>>,
    /// the pooling's padding on each side
    pub padding: Vec<usize>,
}

/// torch's `nn.MaxUnpool1d` (`[N, C, L]` or `[C, L]` inputs).
pub type MaxUnpool1d = MaxUnpoolNd<1>;
/// torch's `nn.MaxUnpool2d` (`[N, C, H, W]` or `[C, H, W]` inputs).
pub type MaxUnpool2d = MaxUnpoolNd<2>;
/// torch's `nn.MaxUnpool3d` (`[N, C, D, H, W]` or `[C, D, H, W]` inputs).
pub type MaxUnpool3d = MaxUnpoolNd<3>;

impl<const N: usize> MaxUnpoolNd<N> {
    /// An unpooling layer with torch's defaults for everything but the kernel size.
    pub fn new(kernel_size: &[usize]) -> Self {
        MaxUnpoolNd { kernel_size: kernel_size.to_vec(), stride: None, padding: vec![0] }
    }

    /// torch's `forward(input, indices, output_size=None)`: each value of `input` placed at its
    /// flat spatial index from `indices` (what `MaxPool{N}d::forward_with_indices` returns), zeros
    /// elsewhere; `output_size` (`N` sizes, or `N + 2` with the batch and channels first) picks
    /// the output's spatial size among those the pooling could have come from.
    pub fn forward(&self, input: &Tensor, indices: &Tensor, output_size: Option<&[usize]>) -> Result<Tensor> {
        let (k, s, p) = (&self.kernel_size, self.stride.as_deref(), &self.padding);
        match N {
            1 => F::max_unpool1d(input, indices, k, s, p, output_size),
            2 => F::max_unpool2d(input, indices, k, s, p, output_size),
            _ => F::max_unpool3d(input, indices, k, s, p, output_size),
        }
    }
}

impl<const N: usize> Module for MaxUnpoolNd<N> {
    fn visit<'m>(&'m self, _: &mut dyn FnMut(&str, Member<'m>)) {}
    fn visit_mut(&mut self, _: &mut dyn FnMut(&str, MemberMut<'_>)) {}
    fn type_name(&self) -> &'static str {
        ["MaxUnpool1d", "MaxUnpool2d", "MaxUnpool3d"].get(N.wrapping_sub(1)).copied().unwrap_or("MaxUnpoolNd")
    }
    /// torch's `extra_repr`: `kernel_size=(2, 2), stride=(2, 2), padding=(0, 0)` (always tuples).
    fn extra_repr(&self) -> String {
        let tuple = |v: &[usize]| crate::module::py_tuple(&super::pool::per_dim(v, N));
        format!(
            "kernel_size={}, stride={}, padding={}",
            tuple(&self.kernel_size),
            tuple(self.stride.as_deref().unwrap_or(&self.kernel_size)),
            tuple(&self.padding)
        )
    }
}
