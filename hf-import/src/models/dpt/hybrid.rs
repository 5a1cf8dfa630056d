//! DPT-Hybrid's embeddings (`DPTViTHybridEmbeddings`; Intel/dpt-hybrid-midas): a BiT backbone
//! (`backbone_config`, by default transformers' post-activation BiT of depths 3, 4, 9 with
//! TensorFlow's SAME padding) reads the image; the first two of its three feature maps go
//! straight to the neck, the last is projected (a 1×1 convolution) to the ViT's width and
//! becomes its patch tokens, one per `patch_size` pixels.

use oxtorch_tensor::Tensor;

use super::depth_anything::{backbone_config, out_indices};
use crate::config::Config;
use crate::error::{Error, Result};
use crate::layers::Conv2d;
use crate::models::bit::Bit;
use crate::weights::Vars;

/// The BiT backbone and the projection of its last map to tokens.
#[derive(Debug, Clone)]
pub(super) struct HybridEmbeddings {
    backbone: Bit,
    /// the backbone stages read (0: the stem), in order
    stages: [usize; 3],
    projection: Conv2d,
    /// pixels per token along each side (`patch_size`)
    patch: (usize, usize),
}

impl HybridEmbeddings {
    /// `embeddings.backbone.bit.*` and `embeddings.projection` under `vars` (the ViT's), for a
    /// ViT `hidden` wide.
    pub(super) fn load(cfg: &Config, vars: &Vars<'_>, hidden: usize, patch: (usize, usize)) -> Result<Self> {
        let defaults = serde_json::json!({
            "model_type": "bit", "global_padding": "same", "layer_type": "bottleneck", "depths": [3, 4, 9],
            "out_features": ["stage1", "stage2", "stage3"], "embedding_dynamic_padding": true
        });
        let bit_cfg = backbone_config(cfg, "DPT-Hybrid", "bit", defaults)?;
        let backbone = Bit::load_backbone(&bit_cfg, &vars.pp("embeddings.backbone.bit"))?;
        let named = bit_cfg.usize_list_or("depths", &[3, 4, 6, 3], 0)?.len();
        let picked = out_indices(&bit_cfg, named)?;
        let widths = backbone.widths();
        let stages: [usize; 3] = picked.clone().try_into().map_err(|_| {
            Error::Config(format!(
                "DPT-Hybrid reads 3 of its BiT backbone's feature maps, but out_features/out_indices name {}",
                picked.len()
            ))
        })?;
        if let Some(&past) = stages.iter().find(|&&s| s >= widths.len()) {
            return Err(Error::Config(format!(
                "DPT-Hybrid's backbone has {} stages (hidden_sizes and depths), but out_indices name stage {past}",
                widths.len() - 1
            )));
        }
        // (transformers projects `backbone_featmap_shape[1]` channels, which must be the map's.)
        let featmap = cfg.usize_list_or("backbone_featmap_shape", &[1, 1024, 24, 24], 0)?;
        if featmap.get(1) != Some(&widths[stages[2]]) {
            return Err(Error::Config(format!(
                "backbone_featmap_shape {featmap:?} must name the backbone's last feature map's {} channels second",
                widths[stages[2]]
            )));
        }
        let projection =
            Conv2d::load(&vars.pp("embeddings.projection"), (featmap[1], hidden), 1, (1, 0, 1), true)?;
        Ok(HybridEmbeddings { backbone, stages, projection, patch })
    }

    /// The widths of the two maps handed straight to the neck.
    pub(super) fn skip_widths(&self) -> [usize; 2] {
        let widths = self.backbone.widths();
        [widths[self.stages[0]], widths[self.stages[1]]]
    }

    /// `x` `[batch, channels, height, width]` → the patch tokens `[batch, rows · cols, hidden]`, the
    /// grid `(rows, cols)` (the image's size over `patch_size`, which the last map must have), and
    /// the two maps for the neck.
    pub(super) fn forward(&self, x: &Tensor) -> Result<(Tensor, (usize, usize), [Tensor; 2])> {
        let mut maps = self.backbone.feature_maps(x)?;
        let (rows, cols) = (x.dims()[2] / self.patch.0, x.dims()[3] / self.patch.1);
        let last = maps.swap_remove(self.stages[2]);
        if last.dims()[2..] != [rows, cols] {
            return Err(Error::Input(format!(
                "DPT-Hybrid takes a {}×{} image as a {rows}×{cols} grid of {}×{} patches, but its backbone's map is {}×{}; \
                 give an image whose sides are multiples of the patch size",
                x.dims()[2],
                x.dims()[3],
                self.patch.0,
                self.patch.1,
                last.dims()[2],
                last.dims()[3]
            )));
        }
        let tokens = self.projection.forward(&last)?.flatten(2, -1)?.transpose(1, 2)?;
        Ok((tokens, (rows, cols), [maps[self.stages[0]].clone(), maps[self.stages[1]].clone()]))
    }
}
