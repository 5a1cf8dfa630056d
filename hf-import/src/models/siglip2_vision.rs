//! SigLIP2's NaFlex vision tower (`Siglip2VisionModel`, LFM2-VL's): images of their own sizes as
//! flattened patches (`pixel_values` `[images, patches, channels · patch²]`, each image's first
//! `rows · columns` of them real, row by row, as `spatial_shapes` gives and `pixel_attention_mask`
//! marks), embedded by a linear layer; the square learned position table resized to each image's
//! grid (bilinear with antialiasing, the padding taking the first position), the SigLIP blocks with
//! the padding hidden as keys, and the final layer norm.

use oxtorch_tensor::{DType, Tensor};

use super::clip::{run_layers, TowerConfig};
use crate::config::Config;
use crate::error::{Error, Result};
use crate::layers::{padding_mask, LayerNorm, Linear, PreNormEncoderLayer};
use crate::weights::Vars;

/// What [`Siglip2VisionTower::forward`] computes.
#[derive(Debug)]
pub(crate) struct Siglip2Output {
    /// `[images, patches, hidden]` after the final norm
    pub last_hidden_state: Tensor,
}

/// The tower (see the module docs).
#[derive(Debug, Clone)]
pub(crate) struct Siglip2VisionTower {
    tower: TowerConfig,
    patch_embedding: Linear,
    /// `[side², hidden]` of the position table
    positions: Tensor,
    side: usize,
    layers: Vec<PreNormEncoderLayer>,
    post_norm: LayerNorm,
}

impl Siglip2VisionTower {
    /// The tower under `vars` (`embeddings`, `encoder.layers.N`, `post_layernorm`) from its config.
    pub(crate) fn load(vars: &Vars<'_>, cfg: &Config) -> Result<Self> {
        let tower = super::siglip::tower(cfg)?;
        let h = tower.hidden;
        let channels = cfg.usize_or("num_channels", 3)?;
        let patch = cfg.usize_or("patch_size", 16)?;
        let count = cfg.usize_or("num_patches", 256)?;
        let side = (count as f64).sqrt() as usize;
        let side = if side.saturating_mul(side) > count { side - 1 } else { side };
        if side * side != count {
            // (transformers reshapes the table to a square: another count does not fit.)
            return Err(Error::Config(format!(
                "num_patches {count} must be a square: the position table is square"
            )));
        }
        let input = channels.checked_mul(patch).and_then(|n| n.checked_mul(patch));
        let Some(input) = input.filter(|&n| n > 0 && side > 0) else {
            return Err(Error::Config(format!(
                "vision_config: num_channels {channels}, patch_size {patch} and num_patches {count} must be positive"
            )));
        };
        let emb = vars.pp("embeddings");
        let table = emb.get("position_embedding.weight", &[count, h])?;
        Ok(Siglip2VisionTower {
            patch_embedding: Linear::load(&emb.pp("patch_embedding"), input, h, true)?,
            positions: table,
            side,
            layers: tower.load_layers(vars)?,
            post_norm: LayerNorm::load(&vars.pp("post_layernorm"), h, tower.eps)?,
            tower,
        })
    }

    /// The tower's width.
    pub(crate) fn hidden(&self) -> usize {
        self.tower.hidden
    }

    /// `pixels` `[images, patches, channels · patch²]` of images of `shapes` (rows and columns of
    /// patches) with `kept` `[images, patches]` (1: a real patch): see [`Siglip2Output`].
    pub(crate) fn forward(
        &self,
        pixels: &Tensor,
        shapes: &[(usize, usize)],
        kept: &Tensor,
    ) -> Result<Siglip2Output> {
        let dims = pixels.dims();
        let input = self.patch_embedding.weight.dims()[1];
        if dims.len() != 3 || dims[0] != shapes.len() || dims[2] != input {
            return Err(Error::Input(format!(
                "input 'pixel_values' must be [{}, patches, {input}] (the images' flattened patches), got {dims:?}",
                shapes.len()
            )));
        }
        let n = dims[1];
        if let Some(&(h, w)) = shapes.iter().find(|&&(h, w)| h == 0 || w == 0 || h.saturating_mul(w) > n) {
            return Err(Error::Input(format!(
                "input 'spatial_shapes' has the grid {h} × {w}: each image's patches must be positive and at most the {n} given"
            )));
        }
        if kept.dims() != [shapes.len(), n] {
            return Err(Error::Input(format!(
                "input 'pixel_attention_mask' must be [{}, {n}], got {:?}",
                shapes.len(),
                kept.dims()
            )));
        }
        let weight = &self.patch_embedding.weight;
        let x = self.patch_embedding.forward(&pixels.to(weight.device())?.to_dtype(weight.dtype())?)?;
        let x = x.add(&self.resized_positions(shapes, n)?.to_dtype(x.dtype())?)?;
        let mask = padding_mask(&kept.to(x.device())?.ne(0.0)?.to_dtype(DType::I64)?, x.dtype())?;
        let (x, _) = run_layers(&self.layers, x, Some(&mask), &self.tower, false)?;
        Ok(Siglip2Output { last_hidden_state: self.post_norm.forward(&x)? })
    }

    /// The position table resized to each image's grid, `[images, n, hidden]` float32, as
    /// transformers' `resize_positional_embeddings` computes it: each output row's and column's
    /// weights over the table's (a triangle `support` wide, `support` the downscale at least 1,
    /// normalised), their products times the table; the padding positions take the first one's.
    fn resized_positions(&self, shapes: &[(usize, usize)], n: usize) -> Result<Tensor> {
        let g = self.side;
        // One axis' weights over the table's `g` entries at output index `o` of `size`.
        let axis = |o: f32, size: f32| -> Vec<f32> {
            let scale = g as f32 / size;
            let support = scale.max(1.0);
            let center = (o + 0.5) * scale - 0.5;
            let w: Vec<f32> = (0..g).map(|j| (1.0 - (j as f32 - center).abs() / support).max(0.0)).collect();
            let sum: f32 = w.iter().sum();
            w.iter().map(|v| v / sum).collect()
        };
        let mut weights = Vec::with_capacity(shapes.len() * n * g * g);
        for &(h, w) in shapes {
            for p in 0..n {
                let (r, c) = if p < h * w { (p / w, p % w) } else { (0, 0) };
                let (rows, cols) = (axis(r as f32, h as f32), axis(c as f32, w as f32));
                for wr in &rows {
                    weights.extend(cols.iter().map(|wc| wr * wc));
                }
            }
        }
        let device = self.positions.device();
        let weights = Tensor::from_vec(weights, [shapes.len() * n, g * g])?.to(device)?;
        let resized = weights.matmul(&self.positions.to_dtype(DType::F32)?)?;
        Ok(resized.reshape([shapes.len(), n, self.tower.hidden])?)
    }
}
