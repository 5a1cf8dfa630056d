//! The state-space mixers' shared pieces: the padding mask on a mixer's inputs (transformers'
//! `apply_mask_to_padding_states`) and the causal depthwise convolution that keeps its last inputs
//! between calls (`causal_conv1d_fn`, and `causal_conv1d_update` one token at a time).

use oxtorch_tensor::Tensor;

use super::Activation;
use crate::error::Result;
use crate::weights::Vars;

/// `t` `[batch, seq, ...]` with the padded tokens' rows zeroed (transformers'
/// `apply_mask_to_padding_states`).
pub fn masked(t: &Tensor, mask: Option<&Tensor>) -> Result<Tensor> {
    match mask {
        Some(m) => Ok(t.mul(&m.to_dtype(t.dtype())?.unsqueeze(-1)?)?),
        None => Ok(t.clone()),
    }
}

/// The causal depthwise convolution over the last `kernel` inputs of each channel, then the
/// activation.
#[derive(Debug, Clone)]
pub struct CausalConv {
    /// `[channels, 1, kernel]`
    weight: Tensor,
    bias: Option<Tensor>,
    act: Activation,
}

impl CausalConv {
    /// `vars.weight` `[channels, 1, kernel]` (and `vars.bias` with `bias`), then `act`.
    pub fn load(
        vars: &Vars<'_>,
        channels: usize,
        kernel: usize,
        bias: bool,
        act: Activation,
    ) -> Result<Self> {
        Ok(CausalConv {
            weight: vars.get("weight", &[channels, 1, kernel])?,
            bias: if bias { Some(vars.get("bias", &[channels])?) } else { None },
            act,
        })
    }

    /// The channels it convolves.
    pub fn channels(&self) -> usize {
        self.weight.dims()[0]
    }

    /// Its width (the inputs it reads per output).
    pub fn kernel(&self) -> usize {
        self.weight.dims()[2]
    }

    /// The activated convolution `[batch, channels, seq]` of `x` `[batch, channels, seq]` after
    /// the inputs `state` `[batch, channels, kernel - 1]` holds; `state` then keeps the newest.
    pub fn forward(&self, x: &Tensor, state: &mut Tensor) -> Result<Tensor> {
        let (channels, seq) = (x.dims()[1], x.dims()[2]);
        let joined = Tensor::cat(&[&*state, &x.to_dtype(state.dtype())?], 2)?;
        let keep = state.dims()[2];
        *state = joined.narrow(2, seq as isize, keep)?.contiguous()?;
        let y = joined.conv1d(&self.weight, self.bias.as_ref(), &[1], 0, &[1], channels)?;
        self.act.forward(&y)
    }
}
