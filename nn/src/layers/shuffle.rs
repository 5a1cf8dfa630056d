//! `PixelShuffle`, `PixelUnshuffle` and `ChannelShuffle`.

use oxtorch_tensor::{Result, Tensor};

use crate::functional as F;
use crate::module::Forward;

/// torch's `nn.PixelShuffle(upscale_factor)`: `[*, C r², H, W]` to `[*, C, H r, W r]` (see
/// [`crate::functional::pixel_shuffle`]). Like torch, the factor is checked at the forward pass.
#[derive(oxtorch_nn_derive::Module, Clone, Debug)]
#[module(extra_repr)]
pub struct PixelShuffle {
    /// `r`
    pub upscale_factor: i64,
}

impl PixelShuffle {
    /// A layer with factor `upscale_factor`.
    pub fn new(upscale_factor: i64) -> Self {
        PixelShuffle { upscale_factor }
    }
}

impl PixelShuffle {
    /// torch's `extra_repr`: `upscale_factor=2`.
    fn extra_repr_text(&self) -> String {
        format!("upscale_factor={}", self.upscale_factor)
    }
}

impl Forward for PixelShuffle {
    fn forward(&self, x: &Tensor) -> Result<Tensor> {
        F::pixel_shuffle(x, self.upscale_factor)
    }
}

/// torch's `nn.PixelUnshuffle(downscale_factor)`: `[*, C, H r, W r]` to `[*, C r², H, W]` (see
/// [`crate::functional::pixel_unshuffle`]).
#[derive(oxtorch_nn_derive::Module, Clone, Debug)]
#[module(extra_repr)]
pub struct PixelUnshuffle {
    /// `r`
    pub downscale_factor: i64,
}

impl PixelUnshuffle {
    /// A layer with factor `downscale_factor`.
    pub fn new(downscale_factor: i64) -> Self {
        PixelUnshuffle { downscale_factor }
    }
}

impl PixelUnshuffle {
    /// torch's `extra_repr`: `downscale_factor=2`.
    fn extra_repr_text(&self) -> String {
        format!("downscale_factor={}", self.downscale_factor)
    }
}

impl Forward for PixelUnshuffle {
    fn forward(&self, x: &Tensor) -> Result<Tensor> {
        F::pixel_unshuffle(x, self.downscale_factor)
    }
}

/// torch's `nn.ChannelShuffle(groups)`: the channels of `[N, C, *]` interleaved across `groups`
/// groups (see [`crate::functional::channel_shuffle`]).
#[derive(oxtorch_nn_derive::Module, Clone, Debug)]
#[module(extra_repr)]
pub struct ChannelShuffle {
    /// the number of groups
    pub groups: i64,
}

impl ChannelShuffle {
    /// A layer shuffling across `groups` groups.
    pub fn new(groups: i64) -> Self {
        ChannelShuffle { groups }
    }
}

impl ChannelShuffle {
    /// torch's `extra_repr`: `groups=2`.
    fn extra_repr_text(&self) -> String {
        format!("groups={}", self.groups)
    }
}

impl Forward for ChannelShuffle {
    fn forward(&self, x: &Tensor) -> Result<Tensor> {
        F::channel_shuffle(x, self.groups)
    }
}
