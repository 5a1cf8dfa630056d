//! The vision towers of Qwen2-VL (`Qwen2VisionTransformerPretrainedModel`) and Qwen2.5-VL
//! (`Qwen2_5_VisionTransformerPretrainedModel`), with their patch mergers.
//!
//! Their processors flatten the images into patches, `pixel_values` `[patches, channels ·
//! temporal_patch_size · patch_size²]`, each image's `[t, h, w]` grid of patches in
//! `image_grid_thw` (frames, rows, columns), its rows and columns a multiple of
//! `spatial_merge_size` and its patches ordered square of merged patches by square. A patch is
//! embedded by the 3-D convolution whose kernel is the patch itself, a matrix product here; the
//! blocks attend within each frame of each image, with 2-D rotary positions (the patch's row on the
//! first half of the frequencies, its column on the second, each over a quarter of a head); the
//! merger norms the patches and projects each square of `spatial_merge_size`² of them into one
//! feature the width of the language model. Qwen2-VL's blocks are LayerNorm and a QuickGELU MLP;
//! Qwen2.5-VL's are RMS norms and a SwiGLU MLP, and all but the `fullatt_block_indexes` attend
//! within windows of `window_size` pixels' worth of merged patches: the patches run window by window
//! through the blocks (transformers' `get_vision_window_index`), and the features are put back in
//! the image's order after the merger. Qwen3-VL's (`Qwen3VLVisionModel`) are LayerNorm and a GELU
//! MLP over patches that first take learned positions (a square table resampled bilinearly to each
//! image's grid, corners aligned), and the outputs of its `deepstack_visual_indexes` blocks go
//! through mergers of their own (normed after the merge), features the decoder adds to its first
//! layers' outputs at the image tokens.

use oxtorch_tensor::{DType, Device, Tensor};

use crate::config::Config;
use crate::error::{Error, Result};
use crate::layers::{
    apply_rotary, eager_attention, Activation, DecoderNorm, LayerNorm, Linear, RmsNorm, RmsNormStyle,
};
use crate::weights::Vars;

/// Which tower.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// Qwen2-VL's
    Qwen2,
    /// Qwen2.5-VL's
    Qwen2_5,
    /// Qwen3-VL's (and Qwen3-VL-MoE's)
    Qwen3,
}

/// A block's feed-forward network.
#[derive(Debug, Clone)]
enum Mlp {
    /// Qwen2-VL's `fc1`, activation, `fc2` (Qwen3-VL's `linear_fc1`, `linear_fc2`)
    Plain { fc1: Linear, fc2: Linear },
    /// Qwen2.5-VL's `down(act(gate(x)) · up(x))`
    Gated { gate: Linear, up: Linear, down: Linear },
}

/// One vision block.
#[derive(Debug, Clone)]
struct Block {
    norm1: DecoderNorm,
    qkv: Linear,
    proj: Linear,
    norm2: DecoderNorm,
    mlp: Mlp,
}

/// Qwen2.5-VL's window attention.
#[derive(Debug, Clone)]
struct Windows {
    /// a window's side in merged patches (`window_size / spatial_merge_size / patch_size`)
    side: usize,
    /// the blocks that attend within whole frames instead
    full: Vec<usize>,
}

/// A patch merger: `spatial_merge_size`² patches normed (each, or after the merge: Qwen3-VL's
/// deepstack mergers), concatenated, and projected by an MLP with an exact GELU.
#[derive(Debug, Clone)]
struct Merger {
    norm: DecoderNorm,
    /// the norm is over the merged patches
    after_merge: bool,
    fc1: Linear,
    fc2: Linear,
}

impl Merger {
    /// `x` `[patches, hidden]` merged into `[patches / unit, out]`.
    fn forward(&self, x: &Tensor, unit: usize) -> Result<Tensor> {
        let (n, hidden) = (x.dims()[0], x.dims()[1]);
        let merged = if self.after_merge {
            self.norm.forward(&x.reshape([n / unit, unit * hidden])?)?
        } else {
            self.norm.forward(x)?.reshape([n / unit, unit * hidden])?
        };
        self.fc2.forward(&Activation::Gelu.forward(&self.fc1.forward(&merged)?)?)
    }
}

/// Qwen3-VL's learned positions: a `side` × `side` table (`pos_embed`, `[side², hidden]` used).
#[derive(Debug, Clone)]
struct PositionTable {
    weight: Tensor,
    side: usize,
}

/// What [`QwenVisionTower::forward`] computes.
#[derive(Debug)]
pub(crate) struct QwenVisionOutput {
    /// `[patches, hidden]` after the last block (Qwen2.5-VL's window by window)
    pub last_hidden_state: Tensor,
    /// the embedded patches, then each block's output (in the blocks' order)
    pub hidden_states: Vec<Tensor>,
    /// each image's features `[t · h · w / merge², out]`, image after image
    pub features: Vec<Tensor>,
    /// Qwen3-VL's deepstack features: per deepstack block, each image's (as `features`)
    pub deepstack: Vec<Vec<Tensor>>,
}

/// The tower and its merger (see the module docs).
#[derive(Debug, Clone)]
pub(crate) struct QwenVisionTower {
    /// the patch convolution as a matrix `[hidden, channels · temporal · patch²]`
    patch_embed: Linear,
    blocks: Vec<Block>,
    act: Activation,
    heads: usize,
    hidden: usize,
    /// the rotary frequencies, `[head_dim / 4]`
    inv_freq: Vec<f32>,
    merge: usize,
    windows: Option<Windows>,
    merger: Merger,
    /// Qwen3-VL's learned positions
    positions: Option<PositionTable>,
    /// Qwen3-VL's deepstack blocks and their mergers
    deepstack: Vec<(usize, Merger)>,
}

impl QwenVisionTower {
    /// The tower `kind` under `vars` (`patch_embed`, `blocks.N`, `merger`; Qwen3-VL's
    /// `pos_embed` and `deepstack_merger_list.N`) from its `vision_config`.
    pub(crate) fn load(vars: &Vars<'_>, cfg: &Config, kind: Kind) -> Result<Self> {
        let qwen2_5 = kind == Kind::Qwen2_5;
        let (hidden, out) = match kind {
            Kind::Qwen2 => (cfg.usize_or("embed_dim", 1280)?, cfg.usize_or("hidden_size", 3584)?),
            Kind::Qwen2_5 => (cfg.usize_or("hidden_size", 3584)?, cfg.usize_or("out_hidden_size", 3584)?),
            Kind::Qwen3 => (cfg.usize_or("hidden_size", 1152)?, cfg.usize_or("out_hidden_size", 3584)?),
        };
        let heads = cfg.usize_or("num_heads", 16)?;
        if heads == 0 || !hidden.is_multiple_of(heads) || !(hidden / heads).is_multiple_of(4) {
            return Err(Error::Config(format!(
                "the vision tower's width ({hidden}) must be a multiple of num_heads ({heads}), in heads of a multiple of 4"
            )));
        }
        let depth = match cfg.get("depth") {
            Some(_) => cfg.layers("depth")?,
            None if kind == Kind::Qwen3 => 27,
            None => 32,
        };
        let channels = cfg.usize_or("in_channels", 3)?;
        let patch = cfg.usize_or("patch_size", if kind == Kind::Qwen3 { 16 } else { 14 })?;
        let temporal = cfg.usize_or("temporal_patch_size", 2)?;
        let merge = cfg.usize_or("spatial_merge_size", 2)?;
        let patch_dim = [channels, temporal, patch, patch].iter().try_fold(1usize, |a, &n| a.checked_mul(n));
        let merged = merge.checked_mul(merge).and_then(|m| m.checked_mul(hidden));
        let (Some(patch_dim), Some(merged)) = (patch_dim.filter(|&d| d > 0), merged.filter(|&d| d > 0))
        else {
            return Err(Error::Config(format!(
                "vision_config: in_channels {channels}, temporal_patch_size {temporal}, patch_size {patch} and \
                 spatial_merge_size {merge} must be positive and their patches of a countable size"
            )));
        };
        let weight =
            vars.pp("patch_embed.proj").get("weight", &[hidden, channels, temporal, patch, patch])?;
        let bias = if kind == Kind::Qwen3 {
            Some(vars.pp("patch_embed.proj").get("bias", &[hidden])?)
        } else {
            None
        };
        let patch_embed = Linear { weight: weight.reshape([hidden, patch_dim])?, bias };
        let norm = |v: &Vars<'_>| -> Result<DecoderNorm> {
            Ok(if qwen2_5 {
                DecoderNorm::Rms(RmsNorm::load(v, hidden, 1e-6, RmsNormStyle::Llama)?)
            } else {
                DecoderNorm::Layer(LayerNorm::load(v, hidden, 1e-6)?)
            })
        };
        let inner = if kind == Kind::Qwen3 {
            cfg.usize_or("intermediate_size", 4304)?
        } else if qwen2_5 {
            cfg.usize_or("intermediate_size", 3420)?
        } else {
            hidden
                .checked_mul(cfg.usize_or("mlp_ratio", 4)?)
                .ok_or_else(|| Error::Config(format!("embed_dim {hidden} times mlp_ratio overflows")))?
        };
        let blocks = (0..depth)
            .map(|i| {
                let b = vars.pp("blocks").pp(i);
                let m = b.pp("mlp");
                let mlp = if qwen2_5 {
                    Mlp::Gated {
                        gate: Linear::load(&m.pp("gate_proj"), hidden, inner, true)?,
                        up: Linear::load(&m.pp("up_proj"), hidden, inner, true)?,
                        down: Linear::load(&m.pp("down_proj"), inner, hidden, true)?,
                    }
                } else {
                    let (fc1, fc2) =
                        if kind == Kind::Qwen3 { ("linear_fc1", "linear_fc2") } else { ("fc1", "fc2") };
                    Mlp::Plain {
                        fc1: Linear::load(&m.pp(fc1), hidden, inner, true)?,
                        fc2: Linear::load(&m.pp(fc2), inner, hidden, true)?,
                    }
                };
                Ok(Block {
                    norm1: norm(&b.pp("norm1"))?,
                    qkv: Linear::load(&b.pp("attn.qkv"), hidden, 3 * hidden, true)?,
                    proj: Linear::load(&b.pp("attn.proj"), hidden, hidden, true)?,
                    norm2: norm(&b.pp("norm2"))?,
                    mlp,
                })
            })
            .collect::<Result<Vec<_>>>()?;
        let theta = match cfg.get("rope_parameters").and_then(|p| p.get("rope_theta")) {
            Some(v) => {
                v.as_f64().ok_or_else(|| Error::Config(format!("rope_theta must be a number, got {v}")))?
            }
            None => 10_000.0,
        };
        // torch: 1 / base ** (arange(0, d, 2) / d) in float32, d = head_dim / 2.
        let spatial = hidden / heads / 2;
        let inv_freq =
            (0..spatial / 2).map(|i| 1.0 / (theta as f32).powf((2 * i) as f32 / spatial as f32)).collect();
        let windows = if qwen2_5 {
            let size = cfg.usize_or("window_size", 112)?;
            let side = size / merge / patch.max(1);
            if side == 0 {
                return Err(Error::Config(format!(
                    "window_size {size} is less than one merged patch ({merge} × {patch} pixels)"
                )));
            }
            let full = block_indexes(cfg, "fullatt_block_indexes", &[7, 15, 23, 31])?;
            Some(Windows { side, full })
        } else {
            None
        };
        let load_merger = |v: &Vars<'_>, after_merge: bool| -> Result<Merger> {
            Ok(match kind {
                Kind::Qwen3 => Merger {
                    norm: DecoderNorm::Layer(LayerNorm::load(
                        &v.pp("norm"),
                        if after_merge { merged } else { hidden },
                        1e-6,
                    )?),
                    after_merge,
                    fc1: Linear::load(&v.pp("linear_fc1"), merged, merged, true)?,
                    fc2: Linear::load(&v.pp("linear_fc2"), merged, out, true)?,
                },
                _ => Merger {
                    norm: norm(&v.pp("ln_q"))?,
                    after_merge: false,
                    fc1: Linear::load(&v.pp("mlp.0"), merged, merged, true)?,
                    fc2: Linear::load(&v.pp("mlp.2"), merged, out, true)?,
                },
            })
        };
        let (positions, deepstack) = if kind == Kind::Qwen3 {
            let count = cfg.usize_or("num_position_embeddings", 2304)?;
            let side = (count as f64).sqrt() as usize;
            let side = if side.saturating_mul(side) > count { side - 1 } else { side };
            if side == 0 {
                return Err(Error::Config(format!(
                    "num_position_embeddings {count} holds no table of positions"
                )));
            }
            let weight = vars.pp("pos_embed").get("weight", &[count, hidden])?;
            let indexes = block_indexes(cfg, "deepstack_visual_indexes", &[8, 16, 24])?;
            let deepstack = indexes
                .iter()
                .enumerate()
                .map(|(k, &block)| Ok((block, load_merger(&vars.pp("deepstack_merger_list").pp(k), true)?)))
                .collect::<Result<Vec<_>>>()?;
            (Some(PositionTable { weight, side }), deepstack)
        } else {
            (None, Vec::new())
        };
        let default_act = match kind {
            Kind::Qwen2 => "quick_gelu",
            Kind::Qwen2_5 => "silu",
            Kind::Qwen3 => "gelu_pytorch_tanh",
        };
        Ok(QwenVisionTower {
            patch_embed,
            blocks,
            act: Activation::from_name(cfg.str_or("hidden_act", default_act)?)?,
            heads,
            hidden,
            inv_freq,
            merge,
            windows,
            merger: load_merger(&vars.pp("merger"), false)?,
            positions,
            deepstack,
        })
    }

    /// `spatial_merge_size`.
    pub(crate) fn merge(&self) -> usize {
        self.merge
    }

    /// The weights' dtype, which the pixels are cast to.
    pub(crate) fn dtype(&self) -> DType {
        self.patch_embed.weight.dtype()
    }

    fn device(&self) -> Device {
        self.patch_embed.weight.device()
    }

    /// The patches `pixel_values` `[patches, patch values]` of images of `grids` (`[t, h, w]`
    /// each, checked by [`grids_of`]): see [`QwenVisionOutput`].
    pub(crate) fn forward(&self, pixel_values: &Tensor, grids: &[[usize; 3]]) -> Result<QwenVisionOutput> {
        let patch_dim = self.patch_embed.weight.dims()[1];
        let total: usize = grids.iter().map(|&[t, h, w]| t * h * w).sum();
        if pixel_values.dims() != [total, patch_dim] {
            return Err(Error::Input(format!(
                "input 'pixel_values' of shape {:?} does not hold the patches of image_grid_thw {grids:?}: expected [{total}, {patch_dim}]",
                pixel_values.dims()
            )));
        }
        let (device, dtype) = (self.device(), self.dtype());
        let mut x = self.patch_embed.forward(&pixel_values.to(device)?.to_dtype(dtype)?)?;
        if let Some(table) = &self.positions {
            x = x.add(&self.learned_positions(table, grids)?.to_dtype(dtype)?)?;
        }
        let unit = self.merge * self.merge;
        let (mut cos, mut sin) = self.cos_sin(grids)?;
        // Each frame of each image attends within itself; Qwen2.5-VL's windowed blocks within
        // their windows, the patches run window by window.
        let frames: Vec<usize> = grids.iter().flat_map(|&[t, h, w]| std::iter::repeat_n(h * w, t)).collect();
        let (order, windows) = match &self.windows {
            Some(win) => {
                let (order, lengths) = window_order(grids, self.merge, win.side);
                let index = Tensor::from_vec(order.iter().map(|&i| i as i64).collect(), [order.len()])?;
                let by_unit = |t: &Tensor| -> Result<Tensor> {
                    let d = t.dims()[1];
                    let units = t.reshape([total / unit, unit, d])?;
                    Ok(units.index_select(0, &index.to(t.device())?)?.reshape([total, d])?)
                };
                x = by_unit(&x)?;
                (cos, sin) = (by_unit(&cos)?, by_unit(&sin)?);
                (Some(order), Some(lengths.iter().map(|l| l * unit).collect::<Vec<_>>()))
            }
            None => (None, None),
        };
        let (cos, sin) = (cos.unsqueeze(0)?.to(device)?, sin.unsqueeze(0)?.to(device)?);
        let mut hidden_states = vec![x.clone()];
        let mut deepstack = Vec::with_capacity(self.deepstack.len());
        for (i, block) in self.blocks.iter().enumerate() {
            let full = self.windows.as_ref().is_none_or(|w| w.full.contains(&i));
            let segments = match &windows {
                Some(lengths) if !full => lengths,
                _ => &frames,
            };
            x = self.block(block, &x, &cos, &sin, segments)?;
            hidden_states.push(x.clone());
            // (A block listed twice runs the first of its mergers once, as transformers' `index`.)
            if let Some((_, merger)) = self.deepstack.iter().find(|(b, _)| *b == i) {
                deepstack.push(merger.forward(&x, unit)?);
            }
        }
        let merged = self.merger.forward(&x, unit)?;
        // (Back in the images' order: row r of the windows' order is unit `order[r]`.)
        let merged = match order {
            Some(order) => {
                let mut back = vec![0i64; order.len()];
                for (r, &u) in order.iter().enumerate() {
                    back[u] = r as i64;
                }
                merged.index_select(0, &Tensor::from_vec(back, [order.len()])?.to(device)?)?
            }
            None => merged,
        };
        let per_image = |all: &Tensor| -> Result<Vec<Tensor>> {
            let mut at = 0;
            grids
                .iter()
                .map(|&[t, h, w]| {
                    let n = t * h * w / unit;
                    at += n;
                    Ok(all.narrow(0, (at - n) as isize, n)?)
                })
                .collect()
        };
        let features = per_image(&merged)?;
        let deepstack = deepstack.iter().map(per_image).collect::<Result<Vec<_>>>()?;
        Ok(QwenVisionOutput { last_hidden_state: x, hidden_states, features, deepstack })
    }

    /// One block on `x` `[patches, hidden]`, its attention within consecutive `segments` of the
    /// patches (their lengths).
    fn block(&self, b: &Block, x: &Tensor, cos: &Tensor, sin: &Tensor, segments: &[usize]) -> Result<Tensor> {
        let (n, h) = (x.dims()[0], self.hidden);
        let d = h / self.heads;
        let qkv = b.qkv.forward(&b.norm1.forward(x)?)?.reshape([n, 3, self.heads, d])?;
        let part = |i: isize| -> Result<Tensor> { Ok(qkv.select(1, i)?.transpose(0, 1)?.unsqueeze(0)?) };
        // (The rotation in float32, as transformers' `apply_rotary_pos_emb_vision`.)
        let rotate = |t: Tensor| -> Result<Tensor> {
            Ok(apply_rotary(&t.to_dtype(DType::F32)?, cos, sin)?.to_dtype(x.dtype())?)
        };
        let (q, k, v) = (rotate(part(0)?)?, rotate(part(1)?)?, part(2)?);
        let scale = 1.0 / (d as f64).sqrt();
        let mut outs = Vec::with_capacity(segments.len());
        let mut at = 0isize;
        for &len in segments.iter().filter(|&&l| l > 0) {
            let seg = |t: &Tensor| t.narrow(2, at, len);
            outs.push(eager_attention(&seg(&q)?, &seg(&k)?, &seg(&v)?, None, scale, None)?);
            at += len as isize;
        }
        let ctx = Tensor::cat(&outs.iter().collect::<Vec<_>>(), 2)?;
        let x = b.proj.forward(&ctx.squeeze_dims(0)?.transpose(0, 1)?.reshape([n, h])?)?.add(x)?;
        let normed = b.norm2.forward(&x)?;
        let y = match &b.mlp {
            Mlp::Plain { fc1, fc2 } => fc2.forward(&self.act.forward(&fc1.forward(&normed)?)?)?,
            Mlp::Gated { gate, up, down } => {
                down.forward(&self.act.forward(&gate.forward(&normed)?)?.mul(&up.forward(&normed)?)?)?
            }
        };
        Ok(y.add(&x)?)
    }

    /// Qwen3-VL's learned positions of the patches of `grids` (in their order), `[patches,
    /// hidden]` float32: the table resampled to each image's rows and columns bilinearly with the
    /// corners aligned, as transformers' `get_vision_interpolation_indices_and_weights` computes it
    /// (float32 coordinates, the two taps on each axis clamped to the table).
    fn learned_positions(&self, table: &PositionTable, grids: &[[usize; 3]]) -> Result<Tensor> {
        let side = table.side;
        // An axis' two taps and weights at patch `index` of `size`.
        let taps = |index: usize, size: usize| -> [(usize, f32); 2] {
            let src = index as f32 * (side - 1) as f32 / size.saturating_sub(1).max(1) as f32;
            let floor = src.floor();
            let frac = src - floor;
            let tap = |o: f32| ((floor + o).max(0.0) as usize).min(side - 1);
            [(tap(0.0), (1.0 - frac.abs()).max(0.0)), (tap(1.0), (1.0 - (frac - 1.0).abs()).max(0.0))]
        };
        let m = self.merge;
        let (mut index, mut weight) = (Vec::new(), Vec::new());
        for &[t, h, w] in grids {
            for _ in 0..t {
                for (br, bc, i, j) in squares(h / m, w / m, m) {
                    let (rows, cols) = (taps(br * m + i, h), taps(bc * m + j, w));
                    for (r, wr) in rows {
                        for (c, wc) in cols {
                            index.push((r * side + c) as i64);
                            weight.push(wr * wc);
                        }
                    }
                }
            }
        }
        let n = index.len();
        let device = table.weight.device();
        let gathered = table.weight.index_select(0, &Tensor::from_vec(index, [n])?.to(device)?)?;
        let weight = Tensor::from_vec(weight, [n, 1])?.to(device)?;
        let hidden = self.hidden;
        Ok(gathered.to_dtype(DType::F32)?.mul(&weight)?.reshape([n / 4, 4, hidden])?.sum(1, false)?)
    }

    /// The rotary `cos` and `sin` `[patches, head_dim]` (float32) of the patches of `grids` in
    /// their order (square of merged patches by square, frame after frame): the row times the
    /// frequencies, then the column times them, twice over.
    fn cos_sin(&self, grids: &[[usize; 3]]) -> Result<(Tensor, Tensor)> {
        let q = self.inv_freq.len();
        let m = self.merge;
        let total: usize = grids.iter().map(|&[t, h, w]| t * h * w).sum();
        let (mut cos, mut sin) = (Vec::with_capacity(total * 4 * q), Vec::with_capacity(total * 4 * q));
        for &[t, h, w] in grids {
            for _ in 0..t {
                for (br, bc, i, j) in squares(h / m, w / m, m) {
                    let (r, c) = ((br * m + i) as f32, (bc * m + j) as f32);
                    let angles: Vec<f32> = self
                        .inv_freq
                        .iter()
                        .map(|f| r * f)
                        .chain(self.inv_freq.iter().map(|f| c * f))
                        .collect();
                    for _ in 0..2 {
                        cos.extend(angles.iter().map(|a| a.cos()));
                        sin.extend(angles.iter().map(|a| a.sin()));
                    }
                }
            }
        }
        Ok((Tensor::from_vec(cos, [total, 4 * q])?, Tensor::from_vec(sin, [total, 4 * q])?))
    }
}

/// `cfg[key]`: a list of block indices (`default` where absent).
fn block_indexes(cfg: &Config, key: &str, default: &[usize]) -> Result<Vec<usize>> {
    match cfg.get(key) {
        None => Ok(default.to_vec()),
        Some(v) => v
            .as_array()
            .and_then(|a| a.iter().map(|i| i.as_u64().and_then(|i| usize::try_from(i).ok())).collect())
            .ok_or_else(|| Error::Config(format!("{key} must be a list of block indices, got {v}"))),
    }
}

/// The patches of a grid of `rows` × `cols` squares of `m` × `m`, in the processors' order:
/// `(square row, square column, row in square, column in square)`.
fn squares(rows: usize, cols: usize, m: usize) -> impl Iterator<Item = (usize, usize, usize, usize)> {
    (0..rows).flat_map(move |br| {
        (0..cols).flat_map(move |bc| (0..m).flat_map(move |i| (0..m).map(move |j| (br, bc, i, j))))
    })
}

/// Qwen2.5-VL's windows (transformers' `get_vision_window_index`): the merged patches of every
/// frame of every image in windows of `side` × `side` (those at the right and bottom edges cut
/// short), window by window; returns the merged patches' indices in that order and each window's
/// count of them.
fn window_order(grids: &[[usize; 3]], merge: usize, side: usize) -> (Vec<usize>, Vec<usize>) {
    let (mut order, mut lengths) = (Vec::new(), Vec::new());
    let mut base = 0;
    for &[t, h, w] in grids {
        let (gh, gw) = (h / merge, w / merge);
        for frame in 0..t {
            for wr in (0..gh).step_by(side) {
                for wc in (0..gw).step_by(side) {
                    let before = order.len();
                    for r in wr..(wr + side).min(gh) {
                        for c in wc..(wc + side).min(gw) {
                            order.push(base + frame * gh * gw + r * gw + c);
                        }
                    }
                    lengths.push(order.len() - before);
                }
            }
        }
        base += t * gh * gw;
    }
    (order, lengths)
}

/// `image_grid_thw` `[images, 3]` as grids of patches, each positive with rows and columns a
/// multiple of `merge`.
pub(crate) fn grids_of(image_grid_thw: &Tensor, merge: usize) -> Result<Vec<[usize; 3]>> {
    super::check_input_dtype("image_grid_thw", image_grid_thw)?;
    let dims = image_grid_thw.dims();
    let bad = |why: String| Error::Input(format!("input 'image_grid_thw' {why}"));
    if dims.len() != 2 || dims[1] != 3 {
        return Err(bad(format!("must be [images, 3] (t, h, w), got shape {dims:?}")));
    }
    let values = image_grid_thw.to_dtype(DType::I64)?.to_vec2::<i64>()?;
    if values.is_empty() {
        return Err(bad("holds no grid: give each image's (t, h, w), or leave the images out".into()));
    }
    // (The patches' count must be countable: a corrupt grid is an error, not an overflow.)
    let patches = values.iter().try_fold(0usize, |all, row| {
        let one = row.iter().try_fold(1usize, |n, &v| n.checked_mul(usize::try_from(v).ok()?))?;
        all.checked_add(one)
    });
    if patches.is_none() && values.iter().flatten().all(|&v| v > 0) {
        return Err(bad(format!("{values:?} counts more patches than can be addressed")));
    }
    values
        .iter()
        .map(|row| {
            let ok = row.iter().all(|&v| v > 0 && v <= u32::MAX as i64)
                && row[1] % merge as i64 == 0
                && row[2] % merge as i64 == 0;
            if !ok {
                return Err(bad(format!(
                    "has the grid {row:?}: each of t, h, w must be positive, h and w multiples of spatial_merge_size ({merge})"
                )));
            }
            Ok([row[0] as usize, row[1] as usize, row[2] as usize])
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grids_are_checked() {
        let grid = |v: Vec<i64>| Tensor::from_vec(v.clone(), [v.len() / 3, 3]).unwrap();
        assert_eq!(grids_of(&grid(vec![1, 4, 6, 2, 2, 2]), 2).unwrap(), vec![[1, 4, 6], [2, 2, 2]]);
        for bad in
            [vec![1, 4, 5], vec![0, 2, 2], vec![1, -2, 2], vec![4_000_000_000, 4_000_000_000, 4_000_000_000]]
        {
            assert!(grids_of(&grid(bad.clone()), 2).is_err(), "{bad:?}");
        }
        let big = 1i64 << 31;
        assert!(grids_of(&grid(vec![big, big, big]), 1).is_err());
        assert!(grids_of(&Tensor::from_vec(vec![1.0f32, 2.0, 2.0], [1, 3]).unwrap(), 2).is_err());
    }

    #[test]
    fn windows_follow_transformers_order() {
        // A 2 × 3 grid of merged patches in windows of 2: [0, 1, 3, 4] then [2, 5].
        let (order, lengths) = window_order(&[[1, 4, 6]], 2, 2);
        assert_eq!(order, vec![0, 1, 3, 4, 2, 5]);
        assert_eq!(lengths, vec![4, 2]);
        // Two frames, then a second image, numbered after the first.
        let (order, lengths) = window_order(&[[2, 2, 2], [1, 2, 4]], 2, 1);
        assert_eq!(order, vec![0, 1, 2, 3]);
        assert_eq!(lengths, vec![1, 1, 1, 1]);
    }
}
