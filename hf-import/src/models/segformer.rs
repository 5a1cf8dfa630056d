//! SegFormer (model type `segformer`: `SegformerModel`, `SegformerForImageClassification`,
//! `SegformerForSemanticSegmentation`; nvidia/mit-b0, nvidia/segformer-b0-finetuned-ade-512-512):
//! stages of overlapping patch embeddings (a strided convolution padded by half its kernel, then a
//! norm) and blocks whose attention reads keys and values from a map shrunk by a strided
//! convolution (`sr_ratios`), whose MLP runs a 3×3 depthwise convolution between its layers; each
//! stage ends in a norm and hands on its map. The classifier averages the last map; the
//! segmentation head projects every stage's map to one width, upsamples them bilinearly to the
//! first's size, fuses them (a 1×1 convolution, batch norm, ReLU) and classifies every position:
//! `logits` `[batch, labels, height / 4, width / 4]`. Any image size runs. Every norm uses
//! `nn.LayerNorm`'s default epsilon (1e-5), as transformers builds them (`layer_norm_eps` is
//! unused). Checkpoints name the weights as the Hub's do (`encoder.block.i.j.attention.self.query`)
//! or as transformers 5's modules (`stages.i.blocks.j.attention.q_proj`).

use std::collections::BTreeMap;

use oxtorch_tensor::{DType, Device, Tensor};

use super::classification::num_labels;
use super::vision::{per_stage, pixels_of};
use crate::config::Config;
use crate::error::{Error, Result};
use crate::layers::{eager_attention, Activation, Conv2d, LayerNorm, Linear};
use crate::weights::Weights;

/// `nn.LayerNorm`'s default, which every SegFormer norm keeps.
const EPS: f64 = 1e-5;

/// The per-stage sizes of SegFormer's (and PVTv2's) encoder.
pub(super) struct EncoderSizes {
    /// stages (`num_encoder_blocks`)
    pub(super) n: usize,
    pub(super) depths: Vec<usize>,
    pub(super) sr: Vec<usize>,
    pub(super) hidden: Vec<usize>,
    pub(super) patches: Vec<usize>,
    pub(super) strides: Vec<usize>,
    pub(super) heads: Vec<usize>,
    pub(super) ratios: Vec<usize>,
}

impl EncoderSizes {
    /// The sizes in `cfg` (transformers' defaults where absent; `mlp_ratios` defaults to
    /// `default_ratios`).
    pub(super) fn read(cfg: &Config, default_ratios: &[usize]) -> Result<Self> {
        let n = cfg.usize_or("num_encoder_blocks", 4)?;
        if n == 0 {
            return Err(Error::Config("num_encoder_blocks must be positive".into()));
        }
        let list = |key: &str, default: &[usize], min: usize| {
            per_stage(cfg, key, default, min, (n, "num_encoder_blocks"))
        };
        Ok(EncoderSizes {
            n,
            depths: list("depths", &[2, 2, 2, 2], 0)?,
            sr: list("sr_ratios", &[8, 4, 2, 1], 0)?,
            hidden: list("hidden_sizes", &[32, 64, 160, 256], 1)?,
            patches: list("patch_sizes", &[7, 3, 3, 3], 1)?,
            strides: list("strides", &[4, 2, 2, 2], 1)?,
            heads: list("num_attention_heads", &[1, 2, 5, 8], 1)?,
            ratios: list("mlp_ratios", default_ratios, 1)?,
        })
    }
}

/// How the keys' and values' map shrinks.
#[derive(Debug, Clone)]
pub(super) enum Reduction {
    /// by `sr_ratio`: a strided convolution and a norm
    Strided(Conv2d, LayerNorm),
    /// PVTv2's linear attention: pooled to 7×7, a 1×1 convolution, a norm and GELU
    Pooled(Conv2d, LayerNorm),
}

/// One block: efficient self-attention and the Mix-FFN, each pre-normed with a residual.
#[derive(Debug, Clone)]
pub(super) struct Block {
    pub(super) norm1: LayerNorm,
    pub(super) query: Linear,
    pub(super) key: Linear,
    pub(super) value: Linear,
    pub(super) out: Linear,
    pub(super) reduction: Option<Reduction>,
    pub(super) norm2: LayerNorm,
    pub(super) fc1: Linear,
    /// ReLU after `fc1` (PVTv2's linear attention)
    pub(super) relu_inner: bool,
    pub(super) dwconv: Conv2d,
    pub(super) fc2: Linear,
}

impl Block {
    /// `x` `[batch, rows · cols, dim]` on a `rows × cols` map.
    fn forward(&self, x: &Tensor, rows: usize, cols: usize, heads: usize, act: Activation) -> Result<Tensor> {
        let (b, n, dim) = (x.dims()[0], x.dims()[1], x.dims()[2]);
        let width = self.query.weight.dims()[0];
        let d = width / heads;
        let h = self.norm1.forward(x)?;
        let map = || h.transpose(1, 2)?.reshape([b, dim, rows, cols]);
        let kv = match &self.reduction {
            Some(Reduction::Strided(conv, norm)) => {
                norm.forward(&conv.forward(&map()?)?.flatten(2, -1)?.transpose(1, 2)?)?
            }
            Some(Reduction::Pooled(conv, norm)) => {
                let pooled = map()?.adaptive_avg_pool2d(&[7, 7])?;
                norm.forward(&conv.forward(&pooled)?.flatten(2, -1)?.transpose(1, 2)?)?.gelu("none")?
            }
            None => h.clone(),
        };
        let m = kv.dims()[1];
        let q = self.query.forward(&h)?.reshape([b, n, heads, d])?.transpose(1, 2)?;
        let k = self.key.forward(&kv)?.reshape([b, m, heads, d])?.transpose(1, 2)?;
        let v = self.value.forward(&kv)?.reshape([b, m, heads, d])?.transpose(1, 2)?;
        let ctx = eager_attention(&q, &k, &v, None, 1.0 / (d as f64).sqrt(), None)?;
        let x = self.out.forward(&ctx.transpose(1, 2)?.reshape([b, n, width])?)?.add(x)?;
        let mut inner = self.fc1.forward(&self.norm2.forward(&x)?)?;
        if self.relu_inner {
            inner = inner.relu()?;
        }
        let width = inner.dims()[2];
        let map = inner.transpose(1, 2)?.reshape([b, width, rows, cols])?;
        let mixed = self.dwconv.forward(&map)?.flatten(2, -1)?.transpose(1, 2)?;
        Ok(self.fc2.forward(&act.forward(&mixed)?)?.add(&x)?)
    }
}

/// One stage: its overlapping patch embedding, blocks and closing norm.
#[derive(Debug, Clone)]
pub(super) struct Stage {
    pub(super) embed: Conv2d,
    pub(super) embed_norm: LayerNorm,
    pub(super) blocks: Vec<Block>,
    pub(super) norm: LayerNorm,
    pub(super) heads: usize,
}

/// The all-MLP segmentation head.
#[derive(Debug, Clone)]
pub(super) struct DecodeHead {
    /// one projection per stage to `decoder_hidden_size`
    projections: Vec<Linear>,
    /// the 1×1 fusing convolution (no bias) and its batch norm (weight, bias, running mean, var)
    fuse: Conv2d,
    norm: [Tensor; 4],
    classifier: Conv2d,
}

/// What sits on the encoder.
#[derive(Debug, Clone)]
pub(super) enum Head {
    None,
    /// the classifier on the last map's mean (`None`: PVTv2's identity for 0 labels)
    Classifier(Option<Linear>),
    Segmentation(Box<DecodeHead>),
}

/// transformers' `SegformerModel`, with its classification or segmentation head when loaded as
/// one.
#[derive(Debug, Clone)]
pub struct Segformer {
    pub(super) stages: Vec<Stage>,
    pub(super) act: Activation,
    /// whether the last stage's output is a map `[batch, channels, rows, cols]` (else a sequence)
    pub(super) reshape_last: bool,
    pub(super) head: Head,
    pub(super) channels: usize,
}

impl Segformer {
    /// Loads `arch`: `SegformerModel`, `SegformerForImageClassification` or
    /// `SegformerForSemanticSegmentation`, under `segformer.` or unprefixed.
    pub fn load(arch: &str, cfg: &Config, weights: &Weights) -> Result<Self> {
        Self::load_at(arch, cfg, weights, "segformer")
    }

    /// GLPN's encoder (SegFormer's, under `glpn.`, every stage's output a map).
    pub(crate) fn load_glpn_encoder(cfg: &Config, weights: &Weights) -> Result<Self> {
        Ok(Segformer { reshape_last: true, ..Self::load_at("SegformerModel", cfg, weights, "glpn")? })
    }

    /// [`Segformer::load`] with the base model's tensors under `prefix` (or unprefixed).
    fn load_at(arch: &str, cfg: &Config, weights: &Weights, prefix: &str) -> Result<Self> {
        let EncoderSizes { n, depths, sr, hidden, patches, strides, heads, ratios } =
            EncoderSizes::read(cfg, &[4, 4, 4, 4])?;
        let channels = cfg.usize_or("num_channels", 3)?;
        // transformers 5's module names (a saved state dict of its SegFormer) read as the Hub's.
        let renamed;
        let weights = match weights.names().any(|n| n.contains("stages.0.")) {
            true => {
                renamed = weights.renamed(|n| Some(hub_name(n)));
                &renamed
            }
            false => weights,
        };
        let v = weights.base_vars(prefix);
        let enc = v.pp("encoder");
        let mut stages = Vec::with_capacity(n);
        for i in 0..n {
            let dim = hidden[i];
            // (transformers' heads are `dim / heads` wide, what is left over unused.)
            let attn_width = heads[i] * (dim / heads[i]);
            if attn_width == 0 {
                return Err(Error::Config(format!(
                    "hidden_sizes[{i}] ({dim}) is narrower than num_attention_heads[{i}] ({})",
                    heads[i]
                )));
            }
            let input = if i == 0 { channels } else { hidden[i - 1] };
            let pe = enc.pp("patch_embeddings").pp(i);
            let inner =
                dim.checked_mul(ratios[i]).ok_or_else(|| Error::Config("mlp_ratios overflow".into()))?;
            let blocks = (0..depths[i])
                .map(|j| {
                    let b = enc.pp("block").pp(i).pp(j);
                    let att = b.pp("attention");
                    let s = att.pp("self");
                    // (A ratio of 0 or 1 reduces nothing.)
                    let reduction = match sr[i] > 1 {
                        true => Some(Reduction::Strided(
                            Conv2d::load(&s.pp("sr"), (dim, dim), sr[i], (sr[i], 0, 1), true)?,
                            LayerNorm::load(&s.pp("layer_norm"), dim, EPS)?,
                        )),
                        false => None,
                    };
                    Ok(Block {
                        norm1: LayerNorm::load(&b.pp("layer_norm_1"), dim, EPS)?,
                        query: Linear::load(&s.pp("query"), dim, attn_width, true)?,
                        key: Linear::load(&s.pp("key"), dim, attn_width, true)?,
                        value: Linear::load(&s.pp("value"), dim, attn_width, true)?,
                        out: Linear::load(&att.pp("output").pp("dense"), attn_width, dim, true)?,
                        reduction,
                        norm2: LayerNorm::load(&b.pp("layer_norm_2"), dim, EPS)?,
                        fc1: Linear::load(&b.pp("mlp").pp("dense1"), dim, inner, true)?,
                        relu_inner: false,
                        dwconv: Conv2d::load(
                            &b.pp("mlp").pp("dwconv").pp("dwconv"),
                            (inner, inner),
                            3,
                            (1, 1, inner),
                            true,
                        )?,
                        fc2: Linear::load(&b.pp("mlp").pp("dense2"), inner, dim, true)?,
                    })
                })
                .collect::<Result<Vec<_>>>()?;
            stages.push(Stage {
                embed: Conv2d::load(
                    &pe.pp("proj"),
                    (input, dim),
                    patches[i],
                    (strides[i], patches[i] / 2, 1),
                    true,
                )?,
                embed_norm: LayerNorm::load(&pe.pp("layer_norm"), dim, EPS)?,
                blocks,
                norm: LayerNorm::load(&enc.pp("layer_norm").pp(i), dim, EPS)?,
                heads: heads[i],
            });
        }
        let head = match arch {
            "SegformerModel" => Head::None,
            "SegformerForImageClassification" => Head::Classifier(Some(Linear::load(
                &weights.vars("classifier"),
                hidden[n - 1],
                num_labels(cfg)?,
                true,
            )?)),
            "SegformerForSemanticSegmentation" => {
                let width = cfg.usize_or("decoder_hidden_size", 256)?;
                let d = weights.vars("decode_head");
                let bn = d.pp("batch_norm");
                let labels = num_labels(cfg)?;
                Head::Segmentation(Box::new(DecodeHead {
                    projections: (0..n)
                        .map(|i| Linear::load(&d.pp("linear_c").pp(i).pp("proj"), hidden[i], width, true))
                        .collect::<Result<Vec<_>>>()?,
                    fuse: Conv2d::load(
                        &d.pp("linear_fuse"),
                        (
                            width
                                .checked_mul(n)
                                .ok_or_else(|| Error::Config("decoder_hidden_size overflows".into()))?,
                            width,
                        ),
                        1,
                        (1, 0, 1),
                        // (The fusing convolution alone has no bias.)
                        false,
                    )?,
                    norm: [
                        bn.get("weight", &[width])?,
                        bn.get("bias", &[width])?,
                        bn.get("running_mean", &[width])?,
                        bn.get("running_var", &[width])?,
                    ],
                    classifier: Conv2d::load(&d.pp("classifier"), (width, labels), 1, (1, 0, 1), true)?,
                }))
            }
            _ => return Err(Error::Unsupported(format!("architecture \"{arch}\" is not supported"))),
        };
        Ok(Segformer {
            stages,
            act: Activation::from_name(cfg.str_or("hidden_act", "gelu")?)?,
            reshape_last: cfg.bool_or("reshape_last_stage", true)?,
            head,
            channels,
        })
    }

    /// The device of the weights.
    pub fn device(&self) -> Device {
        self.stages[0].embed.weight.device()
    }

    /// Runs the model on `pixel_values` `[batch, channels, height, width]`: `last_hidden_state`
    /// (the last stage's map), the classifier's `logits` `[batch, labels]` or the segmentation
    /// head's `[batch, labels, rows, cols]` (the first stage's map), and with
    /// `output_hidden_states` `hidden_states.*` (each stage's output).
    pub fn forward_named(
        &self,
        inputs: &BTreeMap<String, Tensor>,
        output_hidden_states: bool,
    ) -> Result<Vec<(String, Tensor)>> {
        let maps = self.stage_maps(self.pixels(inputs)?)?;
        let h = maps[maps.len() - 1].clone();
        let mut out = match &self.head {
            Head::None => vec![("last_hidden_state".to_string(), h)],
            Head::Classifier(classifier) => {
                let seq = match h.rank() {
                    4 => h.flatten(2, -1)?.transpose(1, 2)?,
                    _ => h,
                };
                let dtype = seq.dtype();
                let pooled = seq.to_dtype(DType::F32)?.mean([1], false)?.to_dtype(dtype)?;
                let logits = match classifier {
                    Some(c) => c.forward(&pooled)?,
                    None => pooled,
                };
                vec![("logits".to_string(), logits)]
            }
            Head::Segmentation(head) => vec![("logits".to_string(), head.forward(&maps)?)],
        };
        if output_hidden_states {
            out.extend(maps.into_iter().enumerate().map(|(i, h)| (format!("hidden_states.{i}"), h)));
        }
        Ok(out)
    }

    /// The `pixel_values` of `inputs`, checked, on the weights' device and dtype.
    pub(crate) fn pixels(&self, inputs: &BTreeMap<String, Tensor>) -> Result<Tensor> {
        pixels_of(inputs, self.stages[0].embed.weight.dtype(), self.device(), self.channels)
    }

    /// Every stage's output for the checked pixels `x`: maps `[batch, channels, rows, cols]`
    /// (the last a sequence without `reshape_last_stage`).
    pub(crate) fn stage_maps(&self, x: Tensor) -> Result<Vec<Tensor>> {
        let batch = x.dims()[0];
        let mut h = x;
        let mut maps = Vec::with_capacity(self.stages.len());
        for (i, stage) in self.stages.iter().enumerate() {
            let e = stage.embed.forward(&h)?;
            let (dim, rows, cols) = (e.dims()[1], e.dims()[2], e.dims()[3]);
            let mut s = stage.embed_norm.forward(&e.flatten(2, -1)?.transpose(1, 2)?)?;
            for block in &stage.blocks {
                s = block.forward(&s, rows, cols, stage.heads, self.act)?;
            }
            let s = stage.norm.forward(&s)?;
            let last = i + 1 == self.stages.len();
            h = match !last || self.reshape_last {
                true => s.reshape([batch, rows, cols, dim])?.permute([0, 3, 1, 2])?,
                false => s,
            };
            maps.push(h.clone());
        }
        Ok(maps)
    }
}

impl DecodeHead {
    /// Every stage's map projected, upsampled to the first's size, fused and classified.
    fn forward(&self, maps: &[Tensor]) -> Result<Tensor> {
        if maps[0].rank() != 4 {
            return Err(Error::Input(
                "the segmentation head needs the first stage as a map (reshape_last_stage is false and it is the last)"
                    .into(),
            ));
        }
        let (rows, cols) = (maps[0].dims()[2], maps[0].dims()[3]);
        let mut projected = Vec::with_capacity(maps.len());
        for (map, proj) in maps.iter().zip(&self.projections) {
            let map = match map.rank() {
                4 => map.clone(),
                // (The last stage as a sequence: a square map, as transformers reads it.)
                _ => {
                    let (b, n, c) = (map.dims()[0], map.dims()[1], map.dims()[2]);
                    let side = (n as f64).sqrt() as usize;
                    if side * side != n {
                        return Err(Error::Input(format!(
                            "the last stage's {n} positions are not a square map (reshape_last_stage is false)"
                        )));
                    }
                    map.reshape([b, side, side, c])?.permute([0, 3, 1, 2])?
                }
            };
            let (b, h, w) = (map.dims()[0], map.dims()[2], map.dims()[3]);
            let p = proj.forward(&map.flatten(2, -1)?.transpose(1, 2)?)?;
            let width = p.dims()[2];
            let p = p.transpose(1, 2)?.reshape([b, width, h, w])?;
            let dtype = p.dtype();
            let up = match (h, w) == (rows, cols) {
                true => p,
                false => p
                    .to_dtype(DType::F32)?
                    .interpolate(Some(&[rows, cols]), None, "bilinear", Some(false))?
                    .to_dtype(dtype)?,
            };
            projected.push(up);
        }
        projected.reverse();
        let fused = self.fuse.forward(&Tensor::cat(&projected.iter().collect::<Vec<_>>(), 1)?)?;
        let [w, b, mean, var] = &self.norm;
        let normed = fused.batch_norm(Some(mean), Some(var), Some(w), Some(b), false, 0.1, 1e-5)?.relu()?;
        self.classifier.forward(&normed)
    }
}

/// A name of transformers 5's SegFormer modules (`stages.i.blocks.j.attention.q_proj`,
/// `decode_head.linear_projections`, ...) as the Hub's checkpoints have it.
fn hub_name(name: &str) -> String {
    let parts: Vec<&str> = name.split('.').collect();
    let mut out: Vec<String> = Vec::with_capacity(parts.len() + 1);
    let mut i = 0;
    while i < parts.len() {
        match (parts[i], parts.get(i + 1), parts.get(i + 2)) {
            // `stages.{s}.patch_embeddings.` / `stages.{s}.blocks.{b}.` / `stages.{s}.layer_norm.`
            ("stages", Some(s), Some(&what)) => {
                match what {
                    "patch_embeddings" => {
                        out.extend(["encoder".into(), "patch_embeddings".into(), s.to_string()])
                    }
                    "blocks" => out.extend(["encoder".into(), "block".into(), s.to_string()]),
                    "layer_norm" => out.extend(["encoder".into(), "layer_norm".into(), s.to_string()]),
                    other => out.extend(["stages".into(), s.to_string(), other.to_string()]),
                }
                i += 3;
                continue;
            }
            _ => out.push(parts[i].to_string()),
        }
        i += 1;
    }
    let mut n = out.join(".");
    for (a, b) in [
        ("attention.q_proj", "attention.self.query"),
        ("attention.k_proj", "attention.self.key"),
        ("attention.v_proj", "attention.self.value"),
        ("attention.sequence_reduction.sequence_reduction", "attention.self.sr"),
        ("attention.sequence_reduction.layer_norm", "attention.self.layer_norm"),
        ("attention.o_proj", "attention.output.dense"),
        ("mlp.fc1", "mlp.dense1"),
        ("mlp.fc2", "mlp.dense2"),
        ("layernorm_before", "layer_norm_1"),
        ("layernorm_after", "layer_norm_2"),
        ("decode_head.linear_projections", "decode_head.linear_c"),
    ] {
        n = n.replace(a, b);
    }
    n
}

#[cfg(test)]
mod tests {
    use super::hub_name;

    /// transformers 5's names map to the Hub's; the Hub's are left alone.
    #[test]
    fn module_names_map_to_hub_names() {
        for (new, hub) in [
            (
                "segformer.stages.1.blocks.0.attention.q_proj.weight",
                "segformer.encoder.block.1.0.attention.self.query.weight",
            ),
            ("stages.0.patch_embeddings.proj.bias", "encoder.patch_embeddings.0.proj.bias"),
            ("segformer.stages.2.layer_norm.weight", "segformer.encoder.layer_norm.2.weight"),
            (
                "stages.0.blocks.1.attention.sequence_reduction.sequence_reduction.weight",
                "encoder.block.0.1.attention.self.sr.weight",
            ),
            ("decode_head.linear_projections.3.proj.weight", "decode_head.linear_c.3.proj.weight"),
            (
                "segformer.encoder.block.0.0.mlp.dwconv.dwconv.weight",
                "segformer.encoder.block.0.0.mlp.dwconv.dwconv.weight",
            ),
        ] {
            assert_eq!(hub_name(new), hub);
        }
    }
}
