//! The image path of Gemma 3 (`Gemma3ForConditionalGeneration`): the SigLIP tower's last hidden
//! state (after its post-norm), averaged over square groups of patches down to
//! `mm_tokens_per_image` tokens (`Gemma3MultiModalProjector`'s `AvgPool2d`), Gemma's RMS norm
//! (`mm_soft_emb_norm`, `1 + w`) and the projection `mm_input_projection_weight` `[vision hidden,
//! text hidden]`. The features take the places of the image tokens (`image_token_index`) in the
//! scaled token embeddings; where `token_type_ids` mark the image tokens, each image's tokens also
//! attend to each other both ways (see [`crate::layers::block_causal_mask`]).

use oxtorch_tensor::{DType, Tensor};

use super::llava_images::{image_token, vars_with, TOWER_PREFIXES};
use super::siglip::SiglipVisionTower;
use super::vision::checked_pixels;
use crate::config::Config;
use crate::error::{Error, Result};
use crate::layers::{RmsNorm, RmsNormStyle};
use crate::weights::Weights;

/// Gemma 3's vision tower and projector.
#[derive(Debug, Clone)]
pub(crate) struct Gemma3Images {
    tower: SiglipVisionTower,
    /// `mm_soft_emb_norm`
    norm: RmsNorm,
    /// `mm_input_projection_weight` `[vision hidden, text hidden]`
    projection: Tensor,
    /// patches per side of an image
    patches: usize,
    /// the pooling's kernel (and stride), in patches per side
    kernel: usize,
    /// the token whose embeddings the features replace
    image_token: i64,
}

impl Gemma3Images {
    /// The image path of the `gemma3` config `cfg` from `weights`, writing `text_hidden` wide
    /// features; `None` for a checkpoint without its vision tower.
    pub(crate) fn load(cfg: &Config, weights: &Weights, text_hidden: usize) -> Result<Option<Self>> {
        let Some(vars) = vars_with(weights, &TOWER_PREFIXES, "embeddings.patch_embedding.weight") else {
            return Ok(None);
        };
        let vision = super::llava_images::vision_config(cfg)?;
        let tower = SiglipVisionTower::load(&vars, &vision, false)?;
        let (image, patch) = (tower.image_size(), tower.patch_size());
        if image.0 != image.1 || patch.0 != patch.1 {
            return Err(Error::Config(format!(
                "Gemma 3's projector pools square images of square patches, got image_size {image:?} and patch_size {patch:?}"
            )));
        }
        let patches = image.0 / patch.0;
        let tokens = cfg.usize_or("mm_tokens_per_image", 256)?;
        let side = (tokens as f64).sqrt() as usize;
        if side == 0 || side * side != tokens || !patches.is_multiple_of(side) {
            return Err(Error::Config(format!(
                "mm_tokens_per_image ({tokens}) must be the square of a divisor of the {patches} patches per side"
            )));
        }
        let root = vars_with(
            weights,
            &["multi_modal_projector.", "model.multi_modal_projector."],
            "mm_input_projection_weight",
        )
        .ok_or_else(|| {
            Error::Weight(
                "tensor 'multi_modal_projector.mm_input_projection_weight' is missing from the checkpoint"
                    .into(),
            )
        })?;
        let hidden = tower.hidden();
        let eps = vision.f64_or("layer_norm_eps", 1e-6)?;
        let image_token = image_token(cfg, 262_144)?;
        Ok(Some(Gemma3Images {
            norm: RmsNorm::load(&root.pp("mm_soft_emb_norm"), hidden, eps, RmsNormStyle::Gemma)?,
            projection: root.get("mm_input_projection_weight", &[hidden, text_hidden])?,
            tower,
            patches,
            kernel: patches / side,
            image_token,
        }))
    }

    /// The token whose embeddings the image features replace.
    pub(crate) fn image_token(&self) -> i64 {
        self.image_token
    }

    /// The tower and the projector on `pixel_values` `[images, channels, height, width]`: the
    /// tower's last hidden state and the features `[images, tokens, text hidden]`.
    pub(crate) fn forward(&self, pixel_values: &Tensor) -> Result<(Tensor, Tensor)> {
        let t = &self.tower;
        let pixels = checked_pixels(pixel_values, t.dtype())?.to(t.device())?;
        let (last_hidden_state, _, _) = t.forward(&pixels, false)?;
        let (n, h) = (last_hidden_state.dims()[0], t.hidden());
        let (p, k) = (self.patches, self.kernel);
        let side = p / k;
        // Patches row by row → the mean of each k × k square of them.
        let grid = last_hidden_state.reshape([n, side, k, side, k, h])?;
        let pooled = grid.mean(vec![2isize, 4], false)?.reshape([n, side * side, h])?;
        let normed = self.norm.forward(&pooled)?;
        let features = normed.matmul(&self.projection)?.to_dtype(last_hidden_state.dtype())?;
        Ok((last_hidden_state, features))
    }

    /// The features of `pixel_values` as the rows that replace the image tokens' embeddings,
    /// `[images · features, text hidden]`, in `dtype`.
    pub(crate) fn rows(&self, pixel_values: &Tensor, dtype: DType) -> Result<Tensor> {
        let (_, f) = self.forward(pixel_values)?;
        let (n, t, h) = (f.dims()[0], f.dims()[1], f.dims()[2]);
        Ok(f.reshape([n * t, h])?.to_dtype(dtype)?)
    }
}

/// Transformers' image blocks of `token_type_ids` `[batch, seq]`: each run of ones (an image's
/// tokens) numbered from 0 within its row, -1 elsewhere (`get_block_sequence_ids_for_mask`).
pub(crate) fn image_blocks(token_type_ids: &[Vec<i64>]) -> Vec<i64> {
    let mut out = Vec::new();
    for row in token_type_ids {
        let mut block = -1;
        let mut previous = false;
        for &t in row {
            let image = t == 1;
            if image && !previous {
                block += 1;
            }
            out.push(if image { block } else { -1 });
            previous = image;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn image_blocks_number_each_run_of_image_tokens() {
        let rows = vec![vec![0, 1, 1, 0, 1, 0], vec![1, 1, 1, 1, 0, 0]];
        assert_eq!(image_blocks(&rows), [-1, 0, 0, -1, 1, -1, 0, 0, 0, 0, -1, -1]);
    }
}
