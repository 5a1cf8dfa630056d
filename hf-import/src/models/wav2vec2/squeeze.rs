//! SEW's squeezed encoder (model type `sew`: `SEWModel`, `SEWForCTC`,
//! `SEWForSequenceClassification`; asapp/sew-tiny-100k, asapp/sew-mid-100k): the blocks run on
//! `squeeze_factor` times fewer frames. The frames are averaged in windows of the factor, the
//! positional convolution strides by it (its even kernel's last output dropped), the shorter of
//! the two is summed, the attention mask keeps a window where it keeps any of its frames; after
//! the blocks a linear layer widens every frame by the factor, which is unfolded back into frames
//! and zero-padded to the features' length.

use oxtorch_tensor::Tensor;

use crate::error::{Error, Result};
use crate::layers::{Activation, Linear};
use crate::weights::Vars;

/// The squeeze around SEW's blocks.
#[derive(Debug, Clone)]
pub(super) struct Squeeze {
    factor: usize,
    /// `encoder.upsample.projection` `hidden → hidden · factor`
    upsample: Linear,
    /// `feat_extract_activation`, after the widening
    act: Activation,
}

impl Squeeze {
    /// `enc.upsample.projection` for `factor` (`squeeze_factor`).
    pub(super) fn load(enc: &Vars<'_>, hidden: usize, factor: usize, act: Activation) -> Result<Self> {
        let wide = hidden
            .checked_mul(factor)
            .filter(|_| factor > 0)
            .ok_or_else(|| Error::Config(format!("squeeze_factor ({factor}) must be a positive size")))?;
        Ok(Squeeze {
            factor,
            upsample: Linear::load(&enc.pp("upsample.projection"), hidden, wide, true)?,
            act,
        })
    }

    /// The positional convolution's stride.
    pub(super) fn factor(&self) -> usize {
        self.factor
    }

    /// `h` `[batch, frames, hidden]` averaged in windows of the factor, plus `positions` (the
    /// strided convolution's), both cut to the shorter.
    pub(super) fn pool(&self, h: &Tensor, positions: &Tensor) -> Result<Tensor> {
        let (b, frames, hidden) = (h.dims()[0], h.dims()[1], h.dims()[2]);
        let n = frames / self.factor;
        if n == 0 {
            return Err(Error::Input(format!(
                "{frames} frames are too few for SEW's squeeze_factor ({})",
                self.factor
            )));
        }
        let pooled =
            h.narrow(1, 0, n * self.factor)?.reshape([b, n, self.factor, hidden])?.mean([2], false)?;
        let n = n.min(positions.dims()[1]);
        Ok(pooled.narrow(1, 0, n)?.add(&positions.narrow(1, 0, n)?)?)
    }

    /// The kept frames `keep` `[batch, frames]` as kept windows `[batch, n]` (a window is kept
    /// where any of its frames is).
    pub(super) fn pool_mask(&self, keep: &Tensor, n: usize) -> Result<Tensor> {
        let b = keep.dims()[0];
        let windows = keep.narrow(1, 0, n * self.factor)?.reshape([b, n, self.factor])?;
        Ok(windows.amax([2], false)?)
    }

    /// The blocks' output `h` `[batch, n, hidden]` → `[batch, frames, hidden]`.
    pub(super) fn upsample(&self, h: &Tensor, frames: usize) -> Result<Tensor> {
        let (b, n, hidden) = (h.dims()[0], h.dims()[1], h.dims()[2]);
        let wide = self.act.forward(&self.upsample.forward(h)?)?;
        let h = wide.reshape([b, n * self.factor, hidden])?;
        let short = frames.saturating_sub(n * self.factor);
        if short == 0 {
            return Ok(h);
        }
        let zeros = Tensor::zeros([b, short, hidden], (h.dtype(), h.device()))?;
        Ok(Tensor::cat(&[&h, &zeros], 1)?)
    }
}
