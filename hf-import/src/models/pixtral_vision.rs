//! Pixtral's vision tower (`pixtral`, transformers' `PixtralVisionModel`: Pixtral-12B's, as a
//! LLaVA checkpoint's `vision_config`): images of their own sizes (`image_sizes`; the pixels padded
//! to the batch's largest), each cut to its whole patches, all the patches in one sequence after
//! an RMS norm (`ln_pre`), blocks of RMS-normed attention with 2-D rotary positions (each patch's
//! row on the first quarter of the frequencies' channels, its column on the second, `rope_theta`)
//! attending within their own image, and a gated MLP.

use oxtorch_tensor::{DType, Device, Tensor};
use serde_json::Value;

use super::vision::{size_pair, PatchEmbedding};
use crate::config::Config;
use crate::error::{Error, Result};
use crate::layers::{
    apply_rotary, block_diagonal_mask, eager_attention, Activation, Linear, RmsNorm, RmsNormStyle,
};
use crate::weights::Vars;

/// One `PixtralAttentionLayer`.
#[derive(Debug, Clone)]
struct Block {
    attention_norm: RmsNorm,
    q: Linear,
    k: Linear,
    v: Linear,
    o: Linear,
    ffn_norm: RmsNorm,
    gate: Linear,
    up: Linear,
    down: Linear,
}

/// What [`PixtralVisionTower::forward`] computes.
#[derive(Debug)]
pub(crate) struct PixtralOutput {
    /// `[1, patches, hidden]`: every image's whole patches, row by row, image after image
    pub last_hidden_state: Tensor,
    /// after `ln_pre`, then each block's output
    pub hidden_states: Vec<Tensor>,
    /// each image's patch grid `(rows, columns)`
    pub grids: Vec<(usize, usize)>,
}

/// `PixtralVisionModel` (see the module docs).
#[derive(Debug, Clone)]
pub(crate) struct PixtralVisionTower {
    patches: PatchEmbedding,
    ln_pre: RmsNorm,
    blocks: Vec<Block>,
    heads: usize,
    act: Activation,
    hidden: usize,
    /// the rotary frequencies, `[head_dim / 2]`: even then odd of the usual ones
    inv_freq: Vec<f32>,
    patch: usize,
}

impl PixtralVisionTower {
    /// The tower under `vars` (`patch_conv`, `ln_pre`, `transformer.layers.N`) from its config.
    pub(crate) fn load(vars: &Vars<'_>, cfg: &Config) -> Result<Self> {
        let hidden = cfg.usize_or("hidden_size", 1024)?;
        let heads = cfg.usize_or("num_attention_heads", 16)?;
        if heads == 0 || !hidden.is_multiple_of(heads) || !(hidden / heads).is_multiple_of(4) {
            return Err(Error::Config(format!(
                "hidden_size ({hidden}) must be a multiple of num_attention_heads ({heads}), in heads of a multiple of 4"
            )));
        }
        let inner = cfg.usize_or("intermediate_size", 4096)?;
        let layers =
            if cfg.get("num_hidden_layers").is_some() { cfg.layers("num_hidden_layers")? } else { 24 };
        let (image, patch) = (size_pair(cfg, "image_size", 1024)?, size_pair(cfg, "patch_size", 16)?);
        if patch.0 != patch.1 {
            return Err(Error::Config(format!("Pixtral's patches are square, got patch_size {patch:?}")));
        }
        let channels = cfg.usize_or("num_channels", 3)?;
        let patches =
            PatchEmbedding::load(&vars.pp("patch_conv"), hidden, channels, patch, image, false)?.any_size();
        let theta = match cfg.get("rope_parameters").and_then(|p| p.get("rope_theta")) {
            Some(v) => {
                v.as_f64().ok_or_else(|| Error::Config(format!("rope_theta must be a number, got {v}")))?
            }
            None => cfg.f64_or("rope_theta", 10_000.0)?,
        };
        if let Some(kind) =
            cfg.get("rope_parameters").and_then(|p| p.get("rope_type")).and_then(Value::as_str)
        {
            if kind != "axial" && kind != "default" {
                return Err(Error::Config(format!("Pixtral's rope_type must be \"axial\", got \"{kind}\"")));
            }
        }
        let dim = hidden / heads;
        // torch: 1 / base ** (arange(0, dim, 2) / dim) in float32, then the even ones, the odd ones.
        let usual: Vec<f32> =
            (0..dim / 2).map(|i| 1.0 / (theta as f32).powf((2 * i) as f32 / dim as f32)).collect();
        let inv_freq = usual.iter().step_by(2).chain(usual.iter().skip(1).step_by(2)).copied().collect();
        let norm = |v: &Vars<'_>| RmsNorm::load(v, hidden, 1e-5, RmsNormStyle::Llama);
        let blocks = (0..layers)
            .map(|i| {
                let l = vars.pp("transformer.layers").pp(i);
                let (a, f) = (l.pp("attention"), l.pp("feed_forward"));
                Ok(Block {
                    attention_norm: norm(&l.pp("attention_norm"))?,
                    q: Linear::load(&a.pp("q_proj"), hidden, hidden, false)?,
                    k: Linear::load(&a.pp("k_proj"), hidden, hidden, false)?,
                    v: Linear::load(&a.pp("v_proj"), hidden, hidden, false)?,
                    o: Linear::load(&a.pp("o_proj"), hidden, hidden, false)?,
                    ffn_norm: norm(&l.pp("ffn_norm"))?,
                    gate: Linear::load(&f.pp("gate_proj"), hidden, inner, false)?,
                    up: Linear::load(&f.pp("up_proj"), hidden, inner, false)?,
                    down: Linear::load(&f.pp("down_proj"), inner, hidden, false)?,
                })
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(PixtralVisionTower {
            ln_pre: norm(&vars.pp("ln_pre"))?,
            patches,
            blocks,
            heads,
            act: Activation::from_name(cfg.str_or("hidden_act", "gelu")?)?,
            hidden,
            inv_freq,
            patch: patch.0,
        })
    }

    /// The tower's width.
    pub(crate) fn hidden(&self) -> usize {
        self.hidden
    }

    /// The number of blocks.
    pub(crate) fn layers(&self) -> usize {
        self.blocks.len()
    }

    /// A patch's side in pixels.
    pub(crate) fn patch(&self) -> usize {
        self.patch
    }

    /// The weights' dtype, which the pixels are cast to.
    pub(crate) fn dtype(&self) -> DType {
        self.patches.dtype()
    }

    /// The weights' device.
    pub(crate) fn device(&self) -> Device {
        self.patches.device()
    }

    /// `pixels` `[images, channels, height, width]` with each image's `(height, width)` (`None`:
    /// the pixels' own): see [`PixtralOutput`].
    pub(crate) fn forward(&self, pixels: &Tensor, sizes: Option<&[(usize, usize)]>) -> Result<PixtralOutput> {
        let &[n, _, height, width] = pixels.dims() else {
            return Err(Error::Input(format!("input 'pixel_values' must be 4-D, got {:?}", pixels.dims())));
        };
        let sizes = sizes.map(<[_]>::to_vec).unwrap_or_else(|| vec![(height, width); n]);
        if sizes.len() != n
            || sizes.iter().any(|&(h, w)| h > height || w > width || h < self.patch || w < self.patch)
        {
            return Err(Error::Input(format!(
                "input 'image_sizes' {sizes:?} must give each of the {n} images a size within the pixels' {height}×{width}, of a patch ({}) at least",
                self.patch
            )));
        }
        let p = self.patch;
        let embedded = self.patches.forward(pixels)?; // [n, rows · cols, hidden]
        let (rows, cols) = (height / p, width / p);
        let grids: Vec<(usize, usize)> = sizes.iter().map(|&(h, w)| (h / p, w / p)).collect();
        let mut parts = Vec::with_capacity(n);
        for (i, &(gh, gw)) in grids.iter().enumerate() {
            let grid = embedded.select(0, i as isize)?.reshape([rows, cols, self.hidden])?;
            let grid = grid.narrow(0, 0, gh)?.narrow(1, 0, gw)?;
            parts.push(grid.reshape([gh * gw, self.hidden])?);
        }
        let x = Tensor::cat(&parts.iter().collect::<Vec<_>>(), 0)?.unsqueeze(0)?;
        let mut x = self.ln_pre.forward(&x)?;
        let (cos, sin) = self.cos_sin(&grids, x.dtype(), x.device())?;
        let mask = block_mask(&grids, x.dtype(), x.device())?;
        let mut hidden_states = vec![x.clone()];
        for block in &self.blocks {
            x = self.block(block, &x, &cos, &sin, mask.as_ref())?;
            hidden_states.push(x.clone());
        }
        Ok(PixtralOutput { last_hidden_state: x, hidden_states, grids })
    }

    fn block(
        &self,
        b: &Block,
        x: &Tensor,
        cos: &Tensor,
        sin: &Tensor,
        mask: Option<&Tensor>,
    ) -> Result<Tensor> {
        let (s, h) = (x.dims()[1], self.hidden);
        let d = h / self.heads;
        let normed = b.attention_norm.forward(x)?;
        let split = |t: Tensor| -> Result<Tensor> { Ok(t.reshape([1, s, self.heads, d])?.transpose(1, 2)?) };
        let q = apply_rotary(&split(b.q.forward(&normed)?)?, cos, sin)?;
        let k = apply_rotary(&split(b.k.forward(&normed)?)?, cos, sin)?;
        let v = split(b.v.forward(&normed)?)?;
        let ctx = eager_attention(&q, &k, &v, mask, 1.0 / (d as f64).sqrt(), None)?;
        let x = b.o.forward(&ctx.transpose(1, 2)?.reshape([1, s, h])?)?.add(x)?;
        let normed = b.ffn_norm.forward(&x)?;
        let inner = self.act.forward(&b.gate.forward(&normed)?)?.mul(&b.up.forward(&normed)?)?;
        Ok(b.down.forward(&inner)?.add(&x)?)
    }

    /// The rotary `cos` and `sin` `[1, patches, head_dim]` of the patches of `grids`: a patch's
    /// row times the first half of the frequencies, its column times the second, twice over.
    fn cos_sin(&self, grids: &[(usize, usize)], dtype: DType, device: Device) -> Result<(Tensor, Tensor)> {
        let half = self.inv_freq.len();
        let quarter = half / 2;
        let total: usize = grids.iter().map(|&(h, w)| h * w).sum();
        let (mut cos, mut sin) = (Vec::with_capacity(total * 2 * half), Vec::with_capacity(total * 2 * half));
        for &(gh, gw) in grids {
            for r in 0..gh {
                for c in 0..gw {
                    let angles: Vec<f32> = (0..half)
                        .map(|j| {
                            if j < quarter {
                                r as f32 * self.inv_freq[j]
                            } else {
                                c as f32 * self.inv_freq[j]
                            }
                        })
                        .collect();
                    for _ in 0..2 {
                        cos.extend(angles.iter().map(|a| a.cos()));
                        sin.extend(angles.iter().map(|a| a.sin()));
                    }
                }
            }
        }
        let shape = [1, total, 2 * half];
        let cos = Tensor::from_vec(cos, shape)?.to_dtype(dtype)?.to(device)?;
        let sin = Tensor::from_vec(sin, shape)?.to_dtype(dtype)?.to(device)?;
        Ok((cos, sin))
    }
}

/// The attention mask of several images' patches in one sequence: each attends within its own
/// image (`None` for one image).
fn block_mask(grids: &[(usize, usize)], dtype: DType, device: Device) -> Result<Option<Tensor>> {
    if grids.len() < 2 {
        return Ok(None);
    }
    let ids: Vec<i64> =
        grids.iter().enumerate().flat_map(|(i, &(h, w))| std::iter::repeat_n(i as i64, h * w)).collect();
    let n = ids.len();
    Ok(Some(block_diagonal_mask(&Tensor::from_vec(ids, [n])?.to(device)?, dtype)?))
}
