//! LFM2's gated short convolution (transformers' `Lfm2ShortConv`): `in_proj` to `B`, `C` and
//! `x`, the causal depthwise convolution of `B × x` over the last `conv_L_cache` tokens, gated by
//! `C`, then `out_proj`. Its state between calls is the convolution's last inputs.

use oxtorch_tensor::{DType, Tensor};

use super::{masked, Activation, CausalConv, Linear};
use crate::error::Result;
use crate::weights::Vars;

/// One layer's gated short convolution.
#[derive(Debug, Clone)]
pub struct ShortConv {
    in_proj: Linear,
    conv: CausalConv,
    out_proj: Linear,
}

impl ShortConv {
    /// `vars.in_proj` `[3 × hidden, hidden]`, `vars.conv` `[hidden, 1, kernel]` and `vars.out_proj`,
    /// all with biases when `bias` (`conv_bias`).
    pub fn load(vars: &Vars<'_>, hidden: usize, kernel: usize, bias: bool) -> Result<Self> {
        Ok(ShortConv {
            in_proj: Linear::load(&vars.pp("in_proj"), hidden, 3 * hidden, bias)?,
            conv: CausalConv::load(&vars.pp("conv"), hidden, kernel, bias, Activation::Linear)?,
            out_proj: Linear::load(&vars.pp("out_proj"), hidden, hidden, bias)?,
        })
    }

    /// An empty state for `batch` new sequences: the convolution's last inputs
    /// `[batch, hidden, kernel - 1]` in `dtype`.
    pub fn new_state(&self, batch: usize, dtype: DType) -> Result<Tensor> {
        let (channels, kernel) = (self.conv.channels(), self.conv.kernel());
        Ok(Tensor::zeros([batch, channels, kernel - 1], (dtype, self.out_proj.weight.device()))?)
    }

    /// The mixer on `h` `[batch, seq, hidden]` (`mask` `[batch, seq]`: the padded tokens' zeros)
    /// after the inputs `state` holds, which it advances past these.
    pub fn forward(&self, h: &Tensor, mask: Option<&Tensor>, state: &mut Tensor) -> Result<Tensor> {
        let hidden = self.conv.channels();
        // [batch, 3 × hidden, seq]: B, C, x
        let bcx = self.in_proj.forward(&masked(h, mask)?)?.transpose(1, 2)?;
        let part = |i: usize| bcx.narrow(1, (i * hidden) as isize, hidden);
        let (b, c, x) = (part(0)?, part(1)?, part(2)?);
        let y = c.mul(&self.conv.forward(&b.mul(&x)?, state)?)?;
        self.out_proj.forward(&y.transpose(1, 2)?)
    }
}
