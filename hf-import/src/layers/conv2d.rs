//! `nn.Conv2d` with a square kernel: its weight, optional bias, stride, padding and groups.

use oxtorch_tensor::Tensor;

use crate::error::Result;
use crate::weights::Vars;

/// A 2-D convolution (see the module docs).
#[derive(Debug, Clone)]
pub struct Conv2d {
    /// `[out, in / groups, kernel, kernel]`
    pub weight: Tensor,
    /// `[out]`
    pub bias: Option<Tensor>,
    pub stride: usize,
    /// zeros on every side
    pub padding: usize,
    pub groups: usize,
}

impl Conv2d {
    /// `vars.weight` `[out, input / groups, kernel, kernel]` and, when `bias`, `vars.bias` `[out]`.
    pub fn load(
        vars: &Vars<'_>,
        (input, out): (usize, usize),
        kernel: usize,
        (stride, padding, groups): (usize, usize, usize),
        bias: bool,
    ) -> Result<Self> {
        Ok(Conv2d {
            weight: vars.get("weight", &[out, input / groups.max(1), kernel, kernel])?,
            bias: if bias { Some(vars.get("bias", &[out])?) } else { None },
            stride,
            padding,
            groups,
        })
    }

    /// `x` `[batch, in, height, width]` → `[batch, out, height', width']`.
    pub fn forward(&self, x: &Tensor) -> Result<Tensor> {
        Ok(x.conv2d(&self.weight, self.bias.as_ref(), &[self.stride], self.padding, &[1], self.groups)?)
    }
}
