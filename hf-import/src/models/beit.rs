//! BEiT and data2vec-vision (model types `beit`, `data2vec-vision`: `BeitModel`,
//! `BeitForImageClassification`, `Data2VecVisionModel`, `Data2VecVisionForImageClassification`;
//! microsoft/beit-base-patch16-224, facebook/data2vec-vision-base-ft1k): ViT's pre-norm blocks
//! with a key projection without bias, per-channel layer scales on both branches
//! (`lambda_1`, `lambda_2`), and a learned relative position bias over the patch grid (three more
//! entries for the class token), per block or shared by all; images of another size resample the
//! bias table bilinearly (and absolute positions bicubically), as transformers does. The pooled
//! output is the layer-normed mean of the patch tokens (`use_mean_pooling`) or the class token
//! after the final norm; the classifier reads it.

use std::collections::BTreeMap;

use oxtorch_tensor::{DType, Device, Tensor};

use super::classification::num_labels;
use super::vision::{pixel_values, size_pair, PatchEmbedding};
use crate::config::Config;
use crate::error::{Error, Result};
use crate::layers::{eager_attention, Activation, LayerNorm, Linear};
use crate::weights::{Vars, Weights};

/// A relative position bias table `[(2·rows − 1)·(2·cols − 1) + 3, heads]` learned for a
/// `rows × cols` patch grid: the offsets between patches, then the class token's three entries
/// (it as query, as key, with itself).
#[derive(Debug, Clone)]
struct RelativeBias {
    table: Tensor,
    grid: (usize, usize),
}

impl RelativeBias {
    fn load(vars: &Vars<'_>, grid: (usize, usize), heads: usize) -> Result<Self> {
        // (Saturated: a corrupt config's count then matches no checkpoint's table.)
        let side = |n: usize| n.saturating_mul(2).saturating_sub(1);
        let rows = side(grid.0).saturating_mul(side(grid.1)).saturating_add(3);
        Ok(RelativeBias { table: vars.get("relative_position_bias_table", &[rows, heads])?, grid })
    }

    /// The bias `[1, heads, n + 1, n + 1]` over the class token and a `grid` of `n` patches: the
    /// offsets' part of the table resampled to the grid's offsets (bilinearly, transformers'
    /// `(width, height)` view of it included; unchanged for the learned square grid).
    fn bias(&self, grid: (usize, usize)) -> Result<Tensor> {
        let heads = self.table.dims()[1];
        let (oh, ow) = (2 * self.grid.0 - 1, 2 * self.grid.1 - 1);
        let (nh, nw) = (2 * grid.0 - 1, 2 * grid.1 - 1);
        let offsets = self.table.narrow(0, 0, oh * ow)?;
        let offsets = match (nh, nw) == (oh, ow) && oh == ow {
            true => offsets,
            false => {
                let dtype = offsets.dtype();
                offsets
                    .to_dtype(DType::F32)?
                    .reshape([1, ow, oh, heads])?
                    .permute([0, 3, 1, 2])?
                    .interpolate(Some(&[nh, nw]), None, "bilinear", Some(false))?
                    .permute([0, 2, 3, 1])?
                    .reshape([nh * nw, heads])?
                    .to_dtype(dtype)?
            }
        };
        let table = Tensor::cat(&[&offsets, &self.table.narrow(0, (oh * ow) as isize, 3)?], 0)?;
        let index = relative_index(grid);
        let n = grid.0 * grid.1 + 1;
        let index = Tensor::from_vec(index, [n * n])?.to(table.device())?;
        let bias = table.index_select(0, &index)?.reshape([n, n, heads])?;
        Ok(bias.permute([2, 0, 1])?.unsqueeze(0)?)
    }
}

/// The table row of each pair of tokens over the class token and a `rows × cols` grid, flattened
/// `[(n + 1)²]`: patches by their offset (rows, then columns), the class token as query, as key,
/// and with itself by the last three rows.
fn relative_index((rows, cols): (usize, usize)) -> Vec<i64> {
    let n = rows * cols;
    let span = 2 * cols as i64 - 1;
    let offsets = (2 * rows as i64 - 1) * span;
    let mut index = Vec::with_capacity((n + 1) * (n + 1));
    for i in 0..=n {
        for j in 0..=n {
            index.push(match (i, j) {
                (0, 0) => offsets + 2,
                (0, _) => offsets,
                (_, 0) => offsets + 1,
                _ => {
                    let (a, b) = (i - 1, j - 1);
                    let dr = (a / cols) as i64 - (b / cols) as i64 + rows as i64 - 1;
                    let dc = (a % cols) as i64 - (b % cols) as i64 + cols as i64 - 1;
                    dr * span + dc
                }
            });
        }
    }
    index
}

/// One BEiT block (see the module docs).
#[derive(Debug, Clone)]
struct Block {
    norm_before: LayerNorm,
    query: Linear,
    /// (no bias)
    key: Linear,
    value: Linear,
    out: Linear,
    norm_after: LayerNorm,
    fc1: Linear,
    fc2: Linear,
    /// `lambda_1`, `lambda_2` `[hidden]` (`layer_scale_init_value` > 0)
    scales: Option<(Tensor, Tensor)>,
    /// this block's own relative position bias (`use_relative_position_bias`)
    bias: Option<RelativeBias>,
}

impl Block {
    fn load(v: &Vars<'_>, cfg: &Cfg) -> Result<Self> {
        let (h, inner) = (cfg.hidden, cfg.intermediate);
        let att = v.pp("attention").pp("attention");
        let scales = match cfg.layer_scale {
            true => Some((v.get("lambda_1", &[h])?, v.get("lambda_2", &[h])?)),
            false => None,
        };
        let bias = match cfg.per_block_bias {
            true => Some(RelativeBias::load(&att.pp("relative_position_bias"), cfg.grid, cfg.heads)?),
            false => None,
        };
        Ok(Block {
            norm_before: LayerNorm::load(&v.pp("layernorm_before"), h, cfg.eps)?,
            query: Linear::load(&att.pp("query"), h, cfg.inner_width, true)?,
            key: Linear::load(&att.pp("key"), h, cfg.inner_width, false)?,
            value: Linear::load(&att.pp("value"), h, cfg.inner_width, true)?,
            out: Linear::load(&v.pp("attention").pp("output").pp("dense"), cfg.inner_width, h, true)?,
            norm_after: LayerNorm::load(&v.pp("layernorm_after"), h, cfg.eps)?,
            fc1: Linear::load(&v.pp("intermediate").pp("dense"), h, inner, true)?,
            fc2: Linear::load(&v.pp("output").pp("dense"), inner, h, true)?,
            scales,
            bias,
        })
    }

    /// `x` `[batch, tokens, hidden]` with the shared bias `shared` (if any) on a `grid` of patches.
    fn forward(
        &self,
        x: &Tensor,
        shared: Option<&Tensor>,
        grid: (usize, usize),
        heads: usize,
        act: Activation,
    ) -> Result<Tensor> {
        let (b, s) = (x.dims()[0], x.dims()[1]);
        let own = self.bias.as_ref().map(|r| r.bias(grid)).transpose()?;
        let mask = match (own, shared) {
            (Some(o), Some(s)) => Some(o.add(s)?),
            (Some(o), None) => Some(o),
            (None, s) => s.cloned(),
        };
        let normed = self.norm_before.forward(x)?;
        let width = self.query.weight.dims()[0];
        let d = width / heads;
        let split = |t: Tensor| -> Result<Tensor> { Ok(t.reshape([b, s, heads, d])?.transpose(1, 2)?) };
        let (q, k, v) = (
            split(self.query.forward(&normed)?)?,
            split(self.key.forward(&normed)?)?,
            split(self.value.forward(&normed)?)?,
        );
        let ctx = eager_attention(&q, &k, &v, mask.as_ref(), 1.0 / (d as f64).sqrt(), None)?;
        let mut a = self.out.forward(&ctx.transpose(1, 2)?.reshape([b, s, width])?)?;
        if let Some((l1, _)) = &self.scales {
            a = l1.mul(&a)?;
        }
        let x = a.add(x)?;
        let mut m = self.fc2.forward(&act.forward(&self.fc1.forward(&self.norm_after.forward(&x)?)?)?)?;
        if let Some((_, l2)) = &self.scales {
            m = l2.mul(&m)?;
        }
        Ok(m.add(&x)?)
    }
}

/// The sizes a BEiT is built with.
#[derive(Debug, Clone)]
struct Cfg {
    hidden: usize,
    heads: usize,
    /// the heads' total width (`num_attention_heads · head_dim`)
    inner_width: usize,
    intermediate: usize,
    eps: f64,
    /// the patch grid of `image_size`, which the relative position tables were learned for
    grid: (usize, usize),
    layer_scale: bool,
    per_block_bias: bool,
}

/// How the pooler pools the last hidden state.
#[derive(Debug, Clone)]
enum Pooler {
    /// `use_mean_pooling`: the patch tokens' mean, layer-normed (`pooler.layernorm`)
    Mean(LayerNorm),
    /// the class token
    ClassToken,
}

/// transformers' `BeitModel` (and data2vec-vision's), with the image classifier's head when loaded
/// as that.
#[derive(Debug, Clone)]
pub struct Beit {
    patches: PatchEmbedding,
    cls_token: Tensor,
    /// `use_absolute_position_embeddings`: `[1, patches + 1, hidden]`
    positions: Option<Tensor>,
    shared_bias: Option<RelativeBias>,
    blocks: Vec<Block>,
    /// the final norm (none with mean pooling)
    norm: Option<LayerNorm>,
    /// how `pooler_output` pools (none: data2vec-vision's base model has no pooler)
    pooler: Option<Pooler>,
    /// the classifier (`None` inside: `num_labels` 0); `None` for the base model
    classifier: Option<Option<Linear>>,
    heads: usize,
    act: Activation,
}

impl Beit {
    /// Loads `arch`: `BeitModel`, `BeitForImageClassification` or data2vec-vision's, under
    /// `beit.` / `data2vec_vision.` or unprefixed.
    pub fn load(arch: &str, cfg: &Config, weights: &Weights) -> Result<Self> {
        let hidden = cfg.usize_or("hidden_size", 768)?;
        let heads = cfg.usize_or("num_attention_heads", 12)?;
        let data2vec = arch.starts_with("Data2VecVision");
        // (BEiT's heads are `head_dim` wide, by default `hidden / heads` rounded down; data2vec-vision's
        // must divide the width.)
        if heads == 0 || (data2vec && hidden % heads != 0) {
            return Err(Error::Config(format!(
                "hidden_size ({hidden}) must be a positive multiple of num_attention_heads ({heads})"
            )));
        }
        let head_dim = match data2vec {
            true => hidden / heads,
            false => cfg.usize_or("head_dim", hidden / heads)?,
        };
        let inner_width = heads.checked_mul(head_dim).filter(|&w| w > 0).ok_or_else(|| {
            Error::Config(format!("{heads} heads of width {head_dim} have no or too large a width"))
        })?;
        let patch = size_pair(cfg, "patch_size", 16)?;
        let image = size_pair(cfg, "image_size", 224)?;
        let channels = cfg.usize_or("num_channels", 3)?;
        let grid = (image.0 / patch.0, image.1 / patch.1);
        let c = Cfg {
            hidden,
            heads,
            inner_width,
            intermediate: cfg.usize_or("intermediate_size", 3072)?,
            eps: cfg.f64_or("layer_norm_eps", 1e-12)?,
            grid,
            layer_scale: cfg.f64_or("layer_scale_init_value", 0.1)? > 0.0,
            per_block_bias: cfg.bool_or("use_relative_position_bias", false)?,
        };
        let prefix = if data2vec { "data2vec_vision" } else { "beit" };
        // transformers 5's module names (a saved state dict of its BEiT) read as the Hub's.
        let renamed;
        let weights = match !data2vec
            && weights.names().any(|n| {
                (n.contains("layers.0.") && n.contains("layernorm_before"))
                    || n.contains("shared_position_bias.")
            }) {
            true => {
                renamed = weights.renamed(|n| Some(hub_name(n)));
                &renamed
            }
            false => weights,
        };
        let v = weights.base_vars(prefix);
        let emb = v.pp("embeddings");
        let patches = PatchEmbedding::load(
            &emb.pp("patch_embeddings").pp("projection"),
            hidden,
            channels,
            patch,
            image,
            true,
        )?
        .any_size();
        let positions = match cfg.bool_or("use_absolute_position_embeddings", false)? {
            true => {
                Some(emb.get("position_embeddings", &[1, patches.num_patches().saturating_add(1), hidden])?)
            }
            false => None,
        };
        let shared_bias = match cfg.bool_or("use_shared_relative_position_bias", false)? {
            true => Some(RelativeBias::load(&v.pp("encoder").pp("relative_position_bias"), grid, heads)?),
            false => None,
        };
        let blocks = (0..cfg.usize_or("num_hidden_layers", 12)?)
            .map(|i| Block::load(&v.pp("encoder").pp("layer").pp(i), &c))
            .collect::<Result<Vec<_>>>()?;
        let mean_pooling = cfg.bool_or("use_mean_pooling", true)?;
        let classify = arch.ends_with("ForImageClassification");
        // (data2vec-vision's base model is built without its pooler.)
        let pooler = match (arch == "Data2VecVisionModel", mean_pooling) {
            (true, _) => None,
            // (A base model's checkpoint without the pooler's norm gets the fresh one transformers
            // builds: ones and zeros.)
            (false, true)
                if !classify && !weights.contains(&v.pp("pooler").pp("layernorm").path("weight")) =>
            {
                let like = (patches.dtype(), patches.device());
                Some(Pooler::Mean(LayerNorm {
                    weight: Tensor::ones([hidden], like)?,
                    bias: Some(Tensor::zeros([hidden], like)?),
                    eps: c.eps,
                }))
            }
            (false, true) => {
                Some(Pooler::Mean(LayerNorm::load(&v.pp("pooler").pp("layernorm"), hidden, c.eps)?))
            }
            (false, false) => Some(Pooler::ClassToken),
        };
        let classifier = match classify {
            true => Some(match num_labels(cfg)? {
                0 => None,
                n => Some(Linear::load(&weights.vars("classifier"), hidden, n, true)?),
            }),
            false => None,
        };
        Ok(Beit {
            patches,
            cls_token: emb.get("cls_token", &[1, 1, hidden])?,
            positions,
            shared_bias,
            blocks,
            norm: if mean_pooling { None } else { Some(LayerNorm::load(&v.pp("layernorm"), hidden, c.eps)?) },
            pooler,
            classifier,
            heads,
            act: Activation::from_name(cfg.str_or("hidden_act", "gelu")?)?,
        })
    }

    /// The device of the weights.
    pub fn device(&self) -> Device {
        self.patches.device()
    }

    /// Runs the model on `pixel_values` `[batch, channels, height, width]`: `logits` (the
    /// classifier) or `last_hidden_state` and `pooler_output`, and with `output_hidden_states`
    /// `hidden_states.*` (the embeddings, then each block's output).
    pub fn forward_named(
        &self,
        inputs: &BTreeMap<String, Tensor>,
        output_hidden_states: bool,
    ) -> Result<Vec<(String, Tensor)>> {
        let x = pixel_values(inputs, self.patches.dtype())?.to(self.device())?;
        let (height, width) = (x.dims()[2], x.dims()[3]);
        let patches = self.patches.forward(&x)?;
        let (ph, pw) = self.patches.patch();
        let grid = (height / ph, width / pw);
        let (b, hidden) = (patches.dims()[0], patches.dims()[2]);
        let mut h = Tensor::cat(&[&self.cls_token.expand([b, 1, hidden])?, &patches], 1)?;
        if let Some(p) = &self.positions {
            h = h.add(&self.positions_for(p, grid, height == width)?)?;
        }
        let shared = self.shared_bias.as_ref().map(|r| r.bias(grid)).transpose()?;
        let mut hidden_states = Vec::new();
        for block in &self.blocks {
            if output_hidden_states {
                hidden_states.push(h.clone());
            }
            h = block.forward(&h, shared.as_ref(), grid, self.heads, self.act)?;
        }
        if output_hidden_states {
            hidden_states.push(h.clone());
        }
        if let Some(norm) = &self.norm {
            h = norm.forward(&h)?;
        }
        let pooled =
            match &self.pooler {
                Some(Pooler::Mean(norm)) => {
                    let dtype = h.dtype();
                    let n = h.dims()[1] - 1;
                    Some(norm.forward(
                        &h.narrow(1, 1, n)?.to_dtype(DType::F32)?.mean([1], false)?.to_dtype(dtype)?,
                    )?)
                }
                Some(Pooler::ClassToken) => Some(h.select(1, 0)?),
                None => None,
            };
        let mut out = match (&self.classifier, pooled) {
            (Some(head), Some(pooled)) => vec![(
                "logits".to_string(),
                match head {
                    Some(c) => c.forward(&pooled)?,
                    None => pooled,
                },
            )],
            (_, Some(pooled)) => {
                vec![("last_hidden_state".to_string(), h), ("pooler_output".to_string(), pooled)]
            }
            (_, None) => vec![("last_hidden_state".to_string(), h)],
        };
        out.extend(hidden_states.into_iter().enumerate().map(|(i, h)| (format!("hidden_states.{i}"), h)));
        Ok(out)
    }

    /// The absolute positions for a `grid` of patches: as learned where the grid has their count
    /// and the image is square, else the patches' part resampled bicubically from its square grid
    /// (transformers' `interpolate_pos_encoding`, which it always applies).
    fn positions_for(&self, positions: &Tensor, grid: (usize, usize), square: bool) -> Result<Tensor> {
        let (learned, hidden) = (positions.dims()[1] - 1, positions.dims()[2]);
        if learned == grid.0 * grid.1 && square {
            return Ok(positions.clone());
        }
        let side = (learned as f64).sqrt().round() as usize;
        if side * side != learned {
            return Err(Error::Input(format!(
                "the {}×{} patch grid differs from the {learned} learned positions, which are not a square \
                 grid to resample",
                grid.0, grid.1
            )));
        }
        let dtype = positions.dtype();
        let resampled = positions
            .narrow(1, 1, learned)?
            .to_dtype(DType::F32)?
            .reshape([1, side, side, hidden])?
            .permute([0, 3, 1, 2])?
            .interpolate(Some(&[grid.0, grid.1]), None, "bicubic", Some(false))?
            .permute([0, 2, 3, 1])?
            .reshape([1, grid.0 * grid.1, hidden])?
            .to_dtype(dtype)?;
        Ok(Tensor::cat(&[&positions.narrow(1, 0, 1)?, &resampled], 1)?)
    }
}

/// A name of transformers 5's BEiT modules (`layers.N.attention.q_proj`, `mlp.fc1`,
/// `shared_position_bias`, a block's `relative_position_bias`) as the Hub's checkpoints have it.
fn hub_name(name: &str) -> String {
    let mut n = name.to_string();
    for p in ["beit.", ""] {
        if let Some(rest) = n.strip_prefix(&format!("{p}layers.")) {
            n = format!("{p}encoder.layer.{rest}");
            break;
        }
    }
    n = n.replace("shared_position_bias.", "encoder.relative_position_bias.");
    for (a, b) in [
        (".attention.q_proj.", ".attention.attention.query."),
        (".attention.k_proj.", ".attention.attention.key."),
        (".attention.v_proj.", ".attention.attention.value."),
        (".attention.o_proj.", ".attention.output.dense."),
        (".mlp.fc1.", ".intermediate.dense."),
        (".mlp.fc2.", ".output.dense."),
    ] {
        n = n.replace(a, b);
    }
    if n.contains("encoder.layer.") && !n.contains(".attention.attention.") {
        n = n.replace(".relative_position_bias.", ".attention.attention.relative_position_bias.");
    }
    n
}

#[cfg(test)]
mod tests {
    use super::{hub_name, relative_index};

    /// transformers 5's names map to the Hub's; the Hub's are left alone.
    #[test]
    fn module_names_map_to_hub_names() {
        for (new, hub) in [
            ("beit.layers.2.attention.q_proj.weight", "beit.encoder.layer.2.attention.attention.query.weight"),
            ("layers.0.mlp.fc2.bias", "encoder.layer.0.output.dense.bias"),
            (
                "beit.layers.1.relative_position_bias.relative_position_bias_table",
                "beit.encoder.layer.1.attention.attention.relative_position_bias.relative_position_bias_table",
            ),
            (
                "beit.shared_position_bias.relative_position_bias_table",
                "beit.encoder.relative_position_bias.relative_position_bias_table",
            ),
            ("beit.encoder.layer.1.attention.attention.key.weight", "beit.encoder.layer.1.attention.attention.key.weight"),
        ] {
            assert_eq!(hub_name(new), hub);
        }
    }

    /// A 2×2 grid: 9 offsets, then the class token's rows 9 (as query), 10 (as key), 11 (itself).
    #[test]
    fn relative_index_puts_the_class_token_last() {
        let index = relative_index((2, 2));
        assert_eq!(index.len(), 25);
        assert_eq!(&index[..5], &[11, 9, 9, 9, 9]);
        assert_eq!((index[5], index[6], index[6 + 3]), (10, 4, 0));
    }
}
