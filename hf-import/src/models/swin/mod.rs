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
//!
//! Swin V2 (model type `swinv2`: `Swinv2Model`, `Swinv2ForImageClassification`) runs the same
//! windows with cosine attention and a continuous position bias ([`v2`]), norms each branch's
//! output before its residual, norms the merged patches after their reduction, and fixes each
//! stage's window and shift from the configured image size, as transformers does (its shifted
//! windows' mask is added twice, as there).

mod v2;
mod windows;

use std::collections::BTreeMap;

use oxtorch_tensor::{DType, Device, Tensor};

use super::classification::num_labels;
use super::vision::{pixels_of, size_pair};
use crate::config::Config;
use crate::error::{Error, Result};
use crate::layers::{eager_attention, Activation, LayerNorm, Linear};
use crate::weights::{Vars, Weights};

/// The largest window (its position pairs, window⁴ of them, then fit in memory).
const MAX_WINDOW: usize = 256;

/// One Swin block: windowed attention with its relative position bias, then the MLP, each
/// pre-normed with a residual.
#[derive(Debug, Clone)]
struct Block {
    norm_before: LayerNorm,
    query: Linear,
    key: Linear,
    value: Linear,
    out: Linear,
    /// `relative_position_bias_table` `[(2·window − 1)², heads]` (Swin)
    bias_table: Option<Tensor>,
    /// the cosine attention and its continuous position bias (Swin V2)
    cosine: Option<v2::CosineAttention>,
    norm_after: LayerNorm,
    fc1: Linear,
    fc2: Linear,
    /// half a window for odd blocks, else 0
    shift: usize,
    /// Swin V2's window for this block's stage (fixed from the configured image size)
    window: Option<usize>,
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
    /// Swin V2: post-norm branches, merging normed after its reduction
    v2: bool,
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
    /// Loads `arch`: `SwinModel`, `SwinForImageClassification` or V2's (`Swinv2*`), under `swin.`
    /// / `swinv2.` or unprefixed.
    pub fn load(arch: &str, cfg: &Config, weights: &Weights) -> Result<Self> {
        let v2 = arch.starts_with("Swinv2");
        if v2 && cfg.bool_or("use_absolute_embeddings", false)? {
            return Err(Error::Unsupported(
                "Swin V2 with use_absolute_embeddings is not supported (transformers' positions do not fit its patches)"
                    .into(),
            ));
        }
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
        // (A window's position pairs number window⁴; Swin V2 clamps its windows to the stages'
        // maps first.)
        if window == 0 || (!v2 && window > MAX_WINDOW) || patch_size.0 == 0 || patch_size.1 == 0 {
            return Err(Error::Config(format!(
                "window_size ({window}) must be positive and at most {MAX_WINDOW}, patch_size positive"
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
        let prefix = if v2 { "swinv2" } else { "swin" };
        let v = weights.base_vars(prefix);
        let pretrained = cfg.usize_list_or("pretrained_window_sizes", &[0; 4], 0)?;
        if v2 && pretrained.len() < depths.len() {
            return Err(Error::Config(format!(
                "pretrained_window_sizes ({}) must have an entry per stage ({})",
                pretrained.len(),
                depths.len()
            )));
        }
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
            // Swin V2's window and shift come from the configured map (`_compute_window_shift`).
            let configured = (image.0 / patch_size.0) >> i;
            if v2 && configured == 0 {
                return Err(Error::Config(format!(
                    "image_size {image:?} leaves stage {i} no patches (transformers cannot build its windows)"
                )));
            }
            let stage_window = window.min(configured);
            if stage_window > MAX_WINDOW {
                return Err(Error::Config(format!(
                    "stage {i}'s window ({stage_window}) must be at most {MAX_WINDOW}"
                )));
            }
            let blocks = (0..depth)
                .map(|j| {
                    let b = sv.pp("blocks").pp(j);
                    let att = b.pp("attention");
                    let side = window.saturating_mul(2) - 1;
                    let table_shape = [side.saturating_mul(side), heads];
                    let (bias_table, cosine) = match v2 {
                        true => (
                            None,
                            Some(v2::CosineAttention::load(
                                &att.pp("self"),
                                heads,
                                stage_window,
                                pretrained[i],
                            )?),
                        ),
                        false => (
                            Some(
                                match att.pp("self").get_opt("relative_position_bias_table", &table_shape)? {
                                    Some(t) => t,
                                    None => att
                                        .pp("relative_position_bias")
                                        .get("relative_position_bias_table", &table_shape)?,
                                },
                            ),
                            None,
                        ),
                    };
                    Ok(Block {
                        norm_before: LayerNorm::load(&b.pp("layernorm_before"), dim, eps)?,
                        query: Linear::load(
                            &either(weights, &att, "self.query", "q_proj"),
                            dim,
                            dim,
                            qkv_bias,
                        )?,
                        // (Swin V2's key has no bias.)
                        key: Linear::load(
                            &either(weights, &att, "self.key", "k_proj"),
                            dim,
                            dim,
                            qkv_bias && !v2,
                        )?,
                        value: Linear::load(
                            &either(weights, &att, "self.value", "v_proj"),
                            dim,
                            dim,
                            qkv_bias,
                        )?,
                        out: Linear::load(&either(weights, &att, "output.dense", "o_proj"), dim, dim, true)?,
                        bias_table,
                        cosine,
                        norm_after: LayerNorm::load(&b.pp("layernorm_after"), dim, eps)?,
                        fc1: Linear::load(
                            &either(weights, &b, "intermediate.dense", "mlp.fc1"),
                            dim,
                            inner,
                            true,
                        )?,
                        fc2: Linear::load(&either(weights, &b, "output.dense", "mlp.fc2"), inner, dim, true)?,
                        shift: match v2 {
                            true if j % 2 == 1 && configured > stage_window => window / 2,
                            true => 0,
                            false if j % 2 == 1 => window / 2,
                            false => 0,
                        },
                        window: v2.then_some(stage_window),
                    })
                })
                .collect::<Result<Vec<_>>>()?;
            let merge = match i + 1 < depths.len() {
                true => {
                    let d = sv.pp("downsample");
                    // (Swin V2 norms the reduced patches, 2 · dim of them.)
                    Some((
                        LayerNorm::load(&d.pp("norm"), if v2 { 2 * dim } else { 4 * dim }, 1e-5)?,
                        Linear::load(&d.pp("reduction"), 4 * dim, 2 * dim, false)?,
                    ))
                }
                false => None,
            };
            stages.push(Stage { blocks, heads, merge });
        }
        let last = width_of(depths.len() - 1)?;
        let classifier = match arch {
            "SwinForImageClassification" | "Swinv2ForImageClassification" => Some(match num_labels(cfg)? {
                0 => None,
                n => Some(Linear::load(&weights.vars("classifier"), last, n, true)?),
            }),
            _ => None,
        };
        let device = patch.0.device();
        // (Swin V2's blocks hold their own index, of their clamped windows.)
        let index = if v2 { Vec::new() } else { windows::relative_index(window) };
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
            v2,
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
                h = merge_patches(&h, rows, cols, norm, reduction, self.v2)?;
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
        // (Swin V2's windows were fixed at load.)
        let (window, shift) = match (block.window, rows.min(cols) <= self.window) {
            (Some(w), _) => (w, block.shift),
            (None, true) => (rows.min(cols), 0),
            (None, false) => (self.window, block.shift),
        };
        if block.window.is_none() && window != self.window {
            return Err(Error::Input(format!(
                "a {rows}×{cols} feature map is smaller than window_size ({}): transformers' relative \
                 position bias does not fit its windows (use larger images)",
                self.window
            )));
        }
        let x = match self.v2 {
            true => h.reshape([batch, rows, cols, dim])?,
            false => block.norm_before.forward(h)?.reshape([batch, rows, cols, dim])?,
        };
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
        let shifted = match shift > 0 {
            true => {
                let m = windows::shift_mask(hp, wp, window, shift, w.dtype())?.to(w.device())?;
                let per_image = m.dims()[0];
                Some(
                    m.unsqueeze(0)?
                        .expand([batch, per_image, 1, area, area])?
                        .reshape([nw, 1, area, area])?,
                )
            }
            false => None,
        };
        let ctx = match (&block.cosine, &block.bias_table) {
            (Some(cosine), _) => {
                let mut scores = cosine.scores(&q, &k)?;
                if let Some(m) = &shifted {
                    // (transformers adds the mask twice.)
                    scores = scores.add(&m.mul(2.0)?)?;
                }
                scores.softmax(-1, None)?.matmul(&v)?
            }
            (None, Some(table)) => {
                let bias = table.index_select(0, &self.relative_index)?.reshape([area, area, heads])?;
                let mut mask = bias.permute([2, 0, 1])?.unsqueeze(0)?;
                if let Some(m) = &shifted {
                    mask = mask.add(m)?;
                }
                eager_attention(&q, &k, &v, Some(&mask), 1.0 / (d as f64).sqrt(), None)?
            }
            (None, None) => unreachable!("a Swin block has a table or cosine attention"),
        };
        let ctx = block.out.forward(&ctx.transpose(1, 2)?.reshape([nw, area, dim])?)?;
        let x = windows::merge(&ctx, window, hp, wp)?;
        let x = if shift > 0 { x.roll([s, s], [1, 2])? } else { x };
        let x = x.narrow(1, 0, rows)?.narrow(2, 0, cols)?.reshape([batch, rows * cols, dim])?;
        if self.v2 {
            // Res-post-norm: each branch normed before its residual.
            let h = h.add(&block.norm_before.forward(&x)?)?;
            let inner = self.act.forward(&block.fc1.forward(&h)?)?;
            return Ok(h.add(&block.norm_after.forward(&block.fc2.forward(&inner)?)?)?);
        }
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
    norm_last: bool,
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
    match norm_last {
        true => norm.forward(&reduction.forward(&x)?),
        false => reduction.forward(&norm.forward(&x)?),
    }
}
