//! Swin Transformer (model type `swin`: `SwinModel`, `SwinForImageClassification`;
//! microsoft/swin-tiny-patch4-window7-224): patches embedded by a strided convolution and normed,
//! stages of blocks that attend within `window_size²` windows ([`windows`]) with a learned
//! relative position bias, every other block over windows shifted by half a window (a mask
//! keeping the wrapped regions apart), each stage but the last merging 2×2 neighbours into one
//! (channels ×2); the final norm, the mean over positions as `pooler_output`, a linear
//! classifier. Inputs not a multiple of the patch or the window are padded as transformers pads
//! them; a stage whose map is the size of a window attends over it whole, unshifted (a smaller
//! one is an error, as transformers' bias table does not fit it).
//! Checkpoints name the attention's weights either way (`attention.self.query`,
//! `attention.output.dense`, ... or transformers 5's `attention.q_proj`, `attention.o_proj`).

mod windows;

use std::collections::BTreeMap;

use oxtorch_tensor::{DType, Device, Tensor};

use super::classification::num_labels;
use super::vision::{pixels_of, size_pair};
use crate::config::Config;
use crate::error::{Error, Result};
use crate::layers::{eager_attention, Activation, LayerNorm, Linear};
use crate::weights::{Vars, Weights};

/// One Swin block: windowed attention with its relative position bias, then the MLP, each
/// pre-normed with a residual.
#[derive(Debug, Clone)]
struct Block {
    norm_before: LayerNorm,
    query: Linear,
    key: Linear,
    value: Linear,
    out: Linear,
    /// `relative_position_bias_table` `[(2·window − 1)², heads]`
    bias_table: Tensor,
    norm_after: LayerNorm,
    fc1: Linear,
    fc2: Linear,
    /// half a window for odd blocks, else 0
    shift: usize,
}

/// One stage: its blocks, then (all but the last) the 2×2 patch merging's norm and reduction.
#[derive(Debug, Clone)]
struct Stage {
    blocks: Vec<Block>,
    heads: usize,
    merge: Option<(LayerNorm, Linear)>,
}

/// transformers' `SwinModel`, with the image classifier's head when loaded as that.
#[derive(Debug, Clone)]
pub struct Swin {
    /// the patch convolution `[embed_dim, channels, patch_h, patch_w]` and its bias
    patch: (Tensor, Tensor),
    patch_size: (usize, usize),
    embed_norm: LayerNorm,
    /// `use_absolute_embeddings`: `[1, patches, embed_dim]`
    positions: Option<Tensor>,
    stages: Vec<Stage>,
    norm: LayerNorm,
    act: Activation,
    window: usize,
    /// the rows of the bias table for every pair of positions in a window
    relative_index: Tensor,
    /// the classifier (`None` inside: `num_labels` 0); `None` for the base model
    classifier: Option<Option<Linear>>,
    channels: usize,
}

/// `vars.{old}` where the checkpoint has it (the names before transformers 5), else `vars.{new}`.
fn either<'a>(weights: &Weights, vars: &Vars<'a>, old: &str, new: &str) -> Vars<'a> {
    let old = old.split('.').fold(vars.clone(), |v, part| v.pp(part));
    match weights.contains(&old.path("weight")) || weights.contains(&old.path("bias")) {
        true => old,
        false => new.split('.').fold(vars.clone(), |v, part| v.pp(part)),
    }
}

impl Swin {
    /// Loads `arch`: `SwinModel` or `SwinForImageClassification`, under `swin.` or unprefixed.
    pub fn load(arch: &str, cfg: &Config, weights: &Weights) -> Result<Self> {
        let channels = cfg.usize_or("num_channels", 3)?;
        let patch_size = size_pair(cfg, "patch_size", 4)?;
        let image = size_pair(cfg, "image_size", 224)?;
        let embed = cfg.usize_or("embed_dim", 96)?;
        let depths = cfg.usize_list_or("depths", &[2, 2, 6, 2], 0)?;
        let heads = cfg.usize_list_or("num_heads", &[3, 6, 12, 24], 1)?;
        // (Extra num_heads are ignored, as transformers does.)
        if heads.len() < depths.len() || depths.is_empty() {
            return Err(Error::Config(format!(
                "depths ({}) and num_heads ({}) must have an entry per stage",
                depths.len(),
                heads.len()
            )));
        }
        let window = cfg.usize_or("window_size", 7)?;
        if window == 0 || window > 1 << 16 || patch_size.0 == 0 || patch_size.1 == 0 {
            return Err(Error::Config(format!(
                "window_size ({window}) must be positive and at most 65536, patch_size positive"
            )));
        }
        // Each stage doubles the width.
        let width_of = |i: usize| {
            1usize.checked_shl(i as u32).and_then(|s| embed.checked_mul(s)).ok_or_else(|| {
                Error::Config(format!("embed_dim ({embed}) doubled over {} stages overflows", depths.len()))
            })
        };
        let mlp_ratio = cfg.f64_or("mlp_ratio", 4.0)?;
        let qkv_bias = cfg.bool_or("qkv_bias", true)?;
        let eps = cfg.f64_or("layer_norm_eps", 1e-5)?;
        let root = weights.vars("");
        let v = if weights.names().any(|n| n.starts_with("swin.")) { root.pp("swin") } else { root };
        let emb = v.pp("embeddings");
        let proj = emb.pp("patch_embeddings").pp("projection");
        let patch = (
            proj.get("weight", &[embed, channels, patch_size.0, patch_size.1])?,
            proj.get("bias", &[embed])?,
        );
        // (Saturated: a corrupt config's count then matches no checkpoint's table.)
        let patches = (image.0 / patch_size.0).saturating_mul(image.1 / patch_size.1);
        let positions = match cfg.bool_or("use_absolute_embeddings", false)? {
            true => Some(emb.get("position_embeddings", &[1, patches, embed])?),
            false => None,
        };
        let mut stages = Vec::with_capacity(depths.len());
        for (i, (&depth, &heads)) in depths.iter().zip(&heads).enumerate() {
            let dim = width_of(i)?;
            if dim % heads != 0 {
                return Err(Error::Config(format!(
                    "stage {i}'s width ({dim}) must be a multiple of its num_heads ({heads})"
                )));
            }
            let inner = (mlp_ratio * dim as f64) as usize;
            let sv = v.pp("encoder").pp("layers").pp(i);
            let blocks = (0..depth)
                .map(|j| {
                    let b = sv.pp("blocks").pp(j);
                    let att = b.pp("attention");
                    let table_shape = [(2 * window - 1).pow(2), heads];
                    let bias_table =
                        match att.pp("self").get_opt("relative_position_bias_table", &table_shape)? {
                            Some(t) => t,
                            None => att
                                .pp("relative_position_bias")
                                .get("relative_position_bias_table", &table_shape)?,
                        };
                    Ok(Block {
                        norm_before: LayerNorm::load(&b.pp("layernorm_before"), dim, eps)?,
                        query: Linear::load(
                            &either(weights, &att, "self.query", "q_proj"),
                            dim,
                            dim,
                            qkv_bias,
                        )?,
                        key: Linear::load(&either(weights, &att, "self.key", "k_proj"), dim, dim, qkv_bias)?,
                        value: Linear::load(
                            &either(weights, &att, "self.value", "v_proj"),
                            dim,
                            dim,
                            qkv_bias,
                        )?,
                        out: Linear::load(&either(weights, &att, "output.dense", "o_proj"), dim, dim, true)?,
                        bias_table,
                        norm_after: LayerNorm::load(&b.pp("layernorm_after"), dim, eps)?,
                        fc1: Linear::load(
                            &either(weights, &b, "intermediate.dense", "mlp.fc1"),
                            dim,
                            inner,
                            true,
                        )?,
                        fc2: Linear::load(&either(weights, &b, "output.dense", "mlp.fc2"), inner, dim, true)?,
                        shift: if j % 2 == 1 { window / 2 } else { 0 },
                    })
                })
                .collect::<Result<Vec<_>>>()?;
            let merge = match i + 1 < depths.len() {
                true => {
                    let d = sv.pp("downsample");
                    Some((
                        LayerNorm::load(&d.pp("norm"), 4 * dim, 1e-5)?,
                        Linear::load(&d.pp("reduction"), 4 * dim, 2 * dim, false)?,
                    ))
                }
                false => None,
            };
            stages.push(Stage { blocks, heads, merge });
        }
        let last = width_of(depths.len() - 1)?;
        let classifier = match arch {
            "SwinForImageClassification" => Some(match num_labels(cfg)? {
                0 => None,
                n => Some(Linear::load(&weights.vars("classifier"), last, n, true)?),
            }),
            _ => None,
        };
        let device = patch.0.device();
        let index = windows::relative_index(window);
        let n = index.len();
        Ok(Swin {
            patch,
            patch_size,
            embed_norm: LayerNorm::load(&emb.pp("norm"), embed, 1e-5)?,
            positions,
            stages,
            norm: LayerNorm::load(&v.pp("layernorm"), last, eps)?,
            act: Activation::from_name(cfg.str_or("hidden_act", "gelu")?)?,
            window,
            relative_index: Tensor::from_vec(index, [n])?.to(device)?,
            classifier,
            channels,
        })
    }

    /// The device of the weights.
    pub fn device(&self) -> Device {
        self.patch.0.device()
    }

    /// Runs the model on `pixel_values` `[batch, channels, height, width]`: `logits` (the
    /// classifier) or `last_hidden_state` `[batch, positions, channels]` and `pooler_output`, and
    /// with `output_hidden_states` `hidden_states.*` (the embeddings, then each stage's output,
    /// merged) and `reshaped_hidden_states.*` (the same as `[batch, channels, height, width]`).
    pub fn forward_named(
        &self,
        inputs: &BTreeMap<String, Tensor>,
        output_hidden_states: bool,
    ) -> Result<Vec<(String, Tensor)>> {
        let x = pixels_of(inputs, self.patch.0.dtype(), self.device(), self.channels)?;
        let (height, width) = (x.dims()[2], x.dims()[3]);
        let (ph, pw) = self.patch_size;
        // Padded at the right and bottom to whole patches.
        let pad = [0, ((pw - width % pw) % pw) as isize, 0, ((ph - height % ph) % ph) as isize];
        let x = x.pad(&pad, "constant", None)?;
        let e = x.conv2d(&self.patch.0, Some(&self.patch.1), &[ph, pw], 0, &[1], 1)?;
        let &[batch, _, mut rows, mut cols] = e.dims() else { unreachable!("conv2d is 4-D") };
        let mut h = self.embed_norm.forward(&e.flatten(2, -1)?.transpose(1, 2)?)?;
        if let Some(p) = &self.positions {
            if p.dims()[1] != rows * cols {
                return Err(Error::Input(format!(
                    "input 'pixel_values' of {height}×{width} gives {} patches, but the absolute position \
                     embeddings cover {} (image_size)",
                    rows * cols,
                    p.dims()[1]
                )));
            }
            h = h.add(p)?;
        }
        let spatial = |h: &Tensor, rows: usize, cols: usize| -> Result<Tensor> {
            let c = h.dims()[2];
            Ok(h.reshape([batch, rows, cols, c])?.permute([0, 3, 1, 2])?)
        };
        let (mut hidden_states, mut reshaped) = (Vec::new(), Vec::new());
        if output_hidden_states {
            hidden_states.push(h.clone());
            reshaped.push(spatial(&h, rows, cols)?);
        }
        for (i, stage) in self.stages.iter().enumerate() {
            for block in &stage.blocks {
                h = self.block(block, stage.heads, &h, rows, cols).map_err(|e| match e {
                    Error::Input(m) => Error::Input(format!("stage {i}: {m}")),
                    e => e,
                })?;
            }
            if let Some((norm, reduction)) = &stage.merge {
                h = merge_patches(&h, rows, cols, norm, reduction)?;
                (rows, cols) = (rows.div_ceil(2), cols.div_ceil(2));
            }
            if output_hidden_states {
                hidden_states.push(h.clone());
                reshaped.push(spatial(&h, rows, cols)?);
            }
        }
        let h = self.norm.forward(&h)?;
        let dtype = h.dtype();
        let pooled = h.to_dtype(DType::F32)?.mean([1], false)?.to_dtype(dtype)?;
        let mut out = match &self.classifier {
            Some(head) => vec![(
                "logits".to_string(),
                match head {
                    Some(c) => c.forward(&pooled)?,
                    None => pooled,
                },
            )],
            None => vec![("last_hidden_state".to_string(), h), ("pooler_output".to_string(), pooled)],
        };
        out.extend(hidden_states.into_iter().enumerate().map(|(i, h)| (format!("hidden_states.{i}"), h)));
        out.extend(reshaped.into_iter().enumerate().map(|(i, h)| (format!("reshaped_hidden_states.{i}"), h)));
        Ok(out)
    }

    /// One block over `h` `[batch, rows · cols, dim]`.
    fn block(&self, block: &Block, heads: usize, h: &Tensor, rows: usize, cols: usize) -> Result<Tensor> {
        let (batch, dim) = (h.dims()[0], h.dims()[2]);
        // A map no larger than a window is attended whole and unshifted, as transformers'
        // `set_shift_and_window_size`; its bias table only fits windows of the configured size.
        let (window, shift) = match rows.min(cols) <= self.window {
            true => (rows.min(cols), 0),
            false => (self.window, block.shift),
        };
        if window != self.window {
            return Err(Error::Input(format!(
                "a {rows}×{cols} feature map is smaller than window_size ({}): transformers' relative \
                 position bias does not fit its windows (use larger images)",
                self.window
            )));
        }
        let x = block.norm_before.forward(h)?.reshape([batch, rows, cols, dim])?;
        let (pad_r, pad_c) = ((window - rows % window) % window, (window - cols % window) % window);
        let x = x.pad(&[0, 0, 0, pad_c as isize, 0, pad_r as isize], "constant", None)?;
        let (hp, wp) = (rows + pad_r, cols + pad_c);
        let s = shift as isize;
        let x = if shift > 0 { x.roll([-s, -s], [1, 2])? } else { x };
        let w = windows::partition(&x, window)?;
        let (nw, area, d) = (w.dims()[0], window * window, dim / heads);
        let split = |t: Tensor| -> Result<Tensor> { Ok(t.reshape([nw, area, heads, d])?.transpose(1, 2)?) };
        let (q, k, v) = (
            split(block.query.forward(&w)?)?,
            split(block.key.forward(&w)?)?,
            split(block.value.forward(&w)?)?,
        );
        let bias = block.bias_table.index_select(0, &self.relative_index)?.reshape([area, area, heads])?;
        let mut mask = bias.permute([2, 0, 1])?.unsqueeze(0)?;
        if shift > 0 {
            let shifted = windows::shift_mask(hp, wp, window, shift, w.dtype())?.to(w.device())?;
            let per_image = shifted.dims()[0];
            let shifted = shifted
                .unsqueeze(0)?
                .expand([batch, per_image, 1, area, area])?
                .reshape([nw, 1, area, area])?;
            mask = mask.add(&shifted)?;
        }
        let ctx = eager_attention(&q, &k, &v, Some(&mask), 1.0 / (d as f64).sqrt(), None)?;
        let ctx = block.out.forward(&ctx.transpose(1, 2)?.reshape([nw, area, dim])?)?;
        let x = windows::merge(&ctx, window, hp, wp)?;
        let x = if shift > 0 { x.roll([s, s], [1, 2])? } else { x };
        let x = x.narrow(1, 0, rows)?.narrow(2, 0, cols)?.reshape([batch, rows * cols, dim])?;
        let h = h.add(&x)?;
        let inner = self.act.forward(&block.fc1.forward(&block.norm_after.forward(&h)?)?)?;
        Ok(h.add(&block.fc2.forward(&inner)?)?)
    }
}

/// Patch merging: `h` `[batch, rows · cols, dim]` padded to even sides, each 2×2 neighbourhood's
/// four positions concatenated (top-left, bottom-left, top-right, bottom-right), normed and
/// reduced to `2 · dim`: `[batch, ⌈rows/2⌉ · ⌈cols/2⌉, 2 · dim]`.
fn merge_patches(
    h: &Tensor,
    rows: usize,
    cols: usize,
    norm: &LayerNorm,
    reduction: &Linear,
) -> Result<Tensor> {
    let (batch, dim) = (h.dims()[0], h.dims()[2]);
    let x = h.reshape([batch, rows, cols, dim])?.pad(
        &[0, 0, 0, (cols % 2) as isize, 0, (rows % 2) as isize],
        "constant",
        None,
    )?;
    let (r2, c2) = (rows.div_ceil(2), cols.div_ceil(2));
    // `[batch, r2, 2 (row), c2, 2 (col), dim]`: the column offset, then the row, outermost.
    let x = x.reshape([batch, r2, 2, c2, 2, dim])?.permute([0, 1, 3, 4, 2, 5])?.reshape([
        batch,
        r2 * c2,
        4 * dim,
    ])?;
    reduction.forward(&norm.forward(&x)?)
}
