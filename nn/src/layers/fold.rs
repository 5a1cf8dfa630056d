//! `nn.Unfold` and `nn.Fold`: sliding blocks to columns and back (im2col / col2im).

use oxtorch_tensor::{Result, Tensor};

use crate::module::Forward;

/// Extracts sliding blocks as columns (torch's `nn.Unfold`; see [`Tensor::im2col`]). One-value
/// fields apply to both spatial dims.
#[derive(oxtorch_nn_derive::Module)]
#[module(extra_repr)]
pub struct Unfold {
    /// the block size
    pub kernel_size: Vec<usize>,
    /// spacing of a block's elements (default 1)
    pub dilation: Vec<usize>,
    /// zeros added on both sides (default 0)
    pub padding: Vec<usize>,
    /// step between blocks (default 1)
    pub stride: Vec<usize>,
}

impl Unfold {
    /// torch's `nn.Unfold(kernel_size)` with the other arguments at their defaults.
    pub fn new(kernel_size: &[usize]) -> Self {
        Unfold { kernel_size: kernel_size.to_vec(), dilation: vec![1], padding: vec![0], stride: vec![1] }
    }
}

impl Unfold {
    /// torch's `extra_repr`: `kernel_size=2, dilation=1, padding=0, stride=1` (each as given).
    fn extra_repr_text(&self) -> String {
        use super::pool::py_size;
        format!(
            "kernel_size={}, dilation={}, padding={}, stride={}",
            py_size(&self.kernel_size),
            py_size(&self.dilation),
            py_size(&self.padding),
            py_size(&self.stride)
        )
    }
}

impl Forward for Unfold {
    fn forward(&self, x: &Tensor) -> Result<Tensor> {
        x.im2col(&self.kernel_size, &self.dilation, &self.padding, &self.stride)
    }
}

/// Sums columns of sliding blocks back into an image (torch's `nn.Fold`; see
/// [`Tensor::col2im`]).
#[derive(oxtorch_nn_derive::Module)]
#[module(extra_repr)]
pub struct Fold {
    /// the image's spatial size
    pub output_size: Vec<usize>,
    /// the block size
    pub kernel_size: Vec<usize>,
    /// spacing of a block's elements (default 1)
    pub dilation: Vec<usize>,
    /// zeros added on both sides (default 0)
    pub padding: Vec<usize>,
    /// step between blocks (default 1)
    pub stride: Vec<usize>,
}

impl Fold {
    /// torch's `nn.Fold(output_size, kernel_size)` with the other arguments at their defaults.
    pub fn new(output_size: &[usize], kernel_size: &[usize]) -> Self {
        Fold {
            output_size: output_size.to_vec(),
            kernel_size: kernel_size.to_vec(),
            dilation: vec![1],
            padding: vec![0],
            stride: vec![1],
        }
    }
}

impl Fold {
    /// torch's `extra_repr`: `output_size=(4, 5), kernel_size=2, dilation=1, padding=0, stride=1`.
    fn extra_repr_text(&self) -> String {
        use super::pool::py_size;
        format!(
            "output_size={}, kernel_size={}, dilation={}, padding={}, stride={}",
            py_size(&self.output_size),
            py_size(&self.kernel_size),
            py_size(&self.dilation),
            py_size(&self.padding),
            py_size(&self.stride)
        )
    }
}

impl Forward for Fold {
    fn forward(&self, x: &Tensor) -> Result<Tensor> {
        x.col2im(&self.output_size, &self.kernel_size, &self.dilation, &self.padding, &self.stride)
    }
}
