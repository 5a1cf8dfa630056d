//! The vision towers of the image classes of [`super::llava_images`]: CLIP's, SigLIP's (and
//! Idefics3's SigLIP-like one), InternViT and Pixtral, behind one type.

use oxtorch_tensor::{DType, Tensor};

use super::clip::ClipVisionTower;
use super::internvl_vision::InternVisionTower;
use super::pixtral_vision::PixtralVisionTower;
use super::siglip::SiglipVisionTower;
use super::vision::checked_pixels;
use crate::error::{Error, Result};

/// The vision tower of a LLaVA checkpoint.
#[derive(Debug, Clone)]
pub(crate) enum VisionTower {
    /// `clip_vision_model` (LLaVA-1.5, VipLLaVA)
    Clip(ClipVisionTower),
    /// `siglip_vision_model` (llava-interleave)
    Siglip(SiglipVisionTower),
    /// `internvl_vision` (InternVL)
    Intern(InternVisionTower),
    /// `pixtral` (Pixtral-12B's LLaVA), images of their own sizes
    Pixtral(PixtralVisionTower),
}

impl VisionTower {
    /// `(last_hidden_state, hidden_states)` of `pixels`: the tower's own output (CLIP's before its
    /// post-norm, SigLIP's after) and every block's input, then the last block's output.
    pub(crate) fn forward(&self, pixels: &Tensor) -> Result<(Tensor, Vec<Tensor>)> {
        match self {
            VisionTower::Clip(t) => {
                let out = t.forward(&checked_pixels(pixels, t.dtype())?.to(t.device())?, true)?;
                Ok((out.last_hidden_state, out.hidden_states))
            }
            VisionTower::Siglip(t) => {
                let (last, _, hidden) =
                    t.forward(&checked_pixels(pixels, t.dtype())?.to(t.device())?, true)?;
                Ok((last, hidden))
            }
            VisionTower::Intern(t) => t.forward(&checked_pixels(pixels, t.dtype())?.to(t.device())?),
            VisionTower::Pixtral(t) => {
                let out = t.forward(&checked_pixels(pixels, t.dtype())?.to(t.device())?, None)?;
                Ok((out.last_hidden_state, out.hidden_states))
            }
        }
    }

    /// The tower's width.
    pub(crate) fn hidden(&self) -> usize {
        match self {
            VisionTower::Clip(t) => t.config().tower.hidden,
            VisionTower::Siglip(t) => t.hidden(),
            VisionTower::Intern(t) => t.hidden(),
            VisionTower::Pixtral(t) => t.hidden(),
        }
    }

    /// The number of hidden states (the blocks plus one).
    pub(crate) fn states(&self) -> usize {
        match self {
            VisionTower::Clip(t) => t.config().tower.layers + 1,
            VisionTower::Siglip(t) => t.layers() + 1,
            VisionTower::Intern(t) => t.layers() + 1,
            VisionTower::Pixtral(t) => t.layers() + 1,
        }
    }

    /// Idefics3's pass of a SigLIP tower: the post-normed states of `pixels` with the patches'
    /// `position_ids` and the key `mask`.
    pub(crate) fn forward_with(
        &self,
        pixels: &Tensor,
        position_ids: &Tensor,
        mask: Option<&Tensor>,
    ) -> Result<Tensor> {
        match self {
            VisionTower::Siglip(t) => {
                let pixels = checked_pixels(pixels, t.dtype())?.to(t.device())?;
                let mask = mask.map(|m| m.to(t.device())).transpose()?;
                Ok(t.forward_with(&pixels, Some(position_ids), mask.as_ref(), false)?.0)
            }
            _ => Err(Error::Unsupported("Idefics3's images need a SigLIP tower".into())),
        }
    }

    /// The side of the images it takes and of their patches, in pixels (the heights).
    pub(crate) fn image_and_patch(&self) -> (usize, usize) {
        match self {
            VisionTower::Clip(t) => (t.config().image.0, t.config().patch.0),
            VisionTower::Siglip(t) => (t.image_size().0, t.patch_size().0),
            VisionTower::Intern(t) => (t.image_and_patch().0 .0, t.image_and_patch().1 .0),
            VisionTower::Pixtral(t) => (t.patch(), t.patch()),
        }
    }

    /// The weights' dtype, which the pixels are cast to.
    pub(crate) fn dtype(&self) -> DType {
        match self {
            VisionTower::Clip(t) => t.dtype(),
            VisionTower::Siglip(t) => t.dtype(),
            VisionTower::Intern(t) => t.dtype(),
            VisionTower::Pixtral(t) => t.dtype(),
        }
    }
}
