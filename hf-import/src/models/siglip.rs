//! SigLIP (`SiglipModel`, `SiglipTextModel`, `SiglipVisionModel`): CLIP's towers with a sigmoid
//! loss's logits (`exp(logit_scale) · cos + logit_bias`). The text tower attends both ways (padding
//! masked) and pools its last token through a `head`; the vision tower has no class token, a
//! patch embedding with a bias, a norm after the blocks, and pools through attention from a learned
//! probe (`MultiheadAttentionPoolingHead`).

use std::collections::BTreeMap;

use oxtorch_tensor::{DType, Device, Tensor};

use super::clip::{run_layers, tower_config, tower_vars, TowerConfig};
use super::vision::{checked_pixels, size_pair, PatchEmbedding};
use super::{check_input_dtype, check_input_shapes};
use crate::config::Config;
use crate::error::{Error, Result};
use crate::layers::{
    eager_attention, padding_mask, Activation, Embedding, LayerNorm, Linear, PreNormEncoderLayer,
};
use crate::weights::{Vars, Weights};

/// The SigLIP architectures, with the model types whose configs they read.
pub(super) const ARCHITECTURES: &[(&str, &[&str])] = &[
    ("SiglipModel", &["siglip"]),
    ("SiglipTextModel", &["siglip", "siglip_text_model"]),
    ("SiglipVisionModel", &["siglip", "siglip_vision_model"]),
];

/// A tower's shared sizes with SigLIP's defaults (`gelu_pytorch_tanh`, epsilon 1e-6).
pub(super) fn tower(cfg: &Config) -> Result<TowerConfig> {
    let c = TowerConfig {
        hidden: cfg.usize_or("hidden_size", 768)?,
        heads: cfg.usize_or("num_attention_heads", 12)?,
        intermediate: cfg.usize_or("intermediate_size", 3072)?,
        layers: if cfg.get("num_hidden_layers").is_some() { cfg.layers("num_hidden_layers")? } else { 12 },
        eps: cfg.f64_or("layer_norm_eps", 1e-6)?,
        act: Activation::from_name(cfg.str_or("hidden_act", "gelu_pytorch_tanh")?)?,
        projection_dim: 0,
    };
    if c.heads == 0 || !c.hidden.is_multiple_of(c.heads) {
        return Err(Error::Config(format!(
            "hidden_size ({}) must be a multiple of num_attention_heads ({})",
            c.hidden, c.heads
        )));
    }
    Ok(c)
}

/// `SiglipTextTransformer`: token and position embeddings, bidirectional blocks, a final norm,
/// the last token's state through `head`.
#[derive(Debug, Clone)]
pub struct SiglipTextTower {
    tower: TowerConfig,
    tokens: Embedding,
    positions: Embedding,
    layers: Vec<PreNormEncoderLayer>,
    final_norm: LayerNorm,
    head: Linear,
}

impl SiglipTextTower {
    fn load(vars: &Vars<'_>, cfg: &Config) -> Result<Self> {
        let tower = tower(cfg)?;
        let h = tower.hidden;
        let vocab = cfg.usize_or("vocab_size", 32000)?;
        let max_positions = cfg.usize_or("max_position_embeddings", 64)?;
        let projection = cfg.nullable_usize_or("projection_size", Some(h))?.unwrap_or(h);
        let emb = vars.pp("embeddings");
        Ok(SiglipTextTower {
            tokens: Embedding::load(&emb.pp("token_embedding"), vocab, h)?,
            positions: Embedding::load(&emb.pp("position_embedding"), max_positions, h)?,
            layers: tower.load_layers(vars)?,
            final_norm: LayerNorm::load(&vars.pp("final_layer_norm"), h, tower.eps)?,
            head: Linear::load(&vars.pp("head"), h, projection, true)?,
            tower,
        })
    }

    /// `input_ids` `[batch, seq]` (int64) with `attention_mask` and `position_ids` (optional):
    /// the final-normed states, the pooled (headed) last token, the hidden states.
    fn forward(
        &self,
        ids: &Tensor,
        mask: Option<&Tensor>,
        positions: Option<&Tensor>,
        keep: bool,
    ) -> Result<(Tensor, Tensor, Vec<Tensor>)> {
        let &[b, s] = ids.dims() else { unreachable!("checked as [batch, seq]") };
        let rows = self.positions.weight.dims()[0];
        if s > rows {
            return Err(Error::Input(format!(
                "sequence length must be at most max_position_embeddings: got {s} tokens, the table has {rows}"
            )));
        }
        let default_positions;
        let positions = match positions {
            Some(p) => p,
            None => {
                default_positions = Tensor::arange(s as i64, (DType::I64, ids.device()))?.reshape([1, s])?;
                &default_positions
            }
        };
        let x = self.tokens.forward(ids)?.add(&self.positions.forward(positions)?)?;
        let mask = mask.map(|m| padding_mask(m, x.dtype())).transpose()?;
        let (x, hidden) = run_layers(&self.layers, x, mask.as_ref(), &self.tower, keep)?;
        let last = self.final_norm.forward(&x)?;
        let pooled = self.head.forward(&last.select(1, (s - 1) as isize)?)?;
        debug_assert_eq!(pooled.dims()[0], b);
        Ok((last, pooled, hidden))
    }
}

/// `SiglipMultiheadAttentionPoolingHead`: a learned probe attends to the tokens
/// (`nn.MultiheadAttention`), then a norm and the MLP with its residual.
#[derive(Debug, Clone)]
struct AttentionPool {
    /// `[1, 1, hidden]`
    probe: Tensor,
    q: Linear,
    k: Linear,
    v: Linear,
    out: Linear,
    norm: LayerNorm,
    fc1: Linear,
    fc2: Linear,
}

impl AttentionPool {
    fn load(vars: &Vars<'_>, c: &TowerConfig) -> Result<Self> {
        let h = c.hidden;
        let attn = vars.pp("attention");
        // `in_proj_weight` `[3 · hidden, hidden]`: q, k and v stacked.
        let w = attn.get("in_proj_weight", &[3 * h, h])?;
        let b = attn.get("in_proj_bias", &[3 * h])?;
        let part = |i: usize| -> Result<Linear> {
            Ok(Linear {
                weight: w.narrow(0, (i * h) as isize, h)?,
                bias: Some(b.narrow(0, (i * h) as isize, h)?),
            })
        };
        Ok(AttentionPool {
            probe: vars.get("probe", &[1, 1, h])?,
            q: part(0)?,
            k: part(1)?,
            v: part(2)?,
            out: Linear::load(&attn.pp("out_proj"), h, h, true)?,
            norm: LayerNorm::load(&vars.pp("layernorm"), h, c.eps)?,
            fc1: Linear::load(&vars.pp("mlp.fc1"), h, c.intermediate, true)?,
            fc2: Linear::load(&vars.pp("mlp.fc2"), c.intermediate, h, true)?,
        })
    }

    /// `x` `[batch, tokens, hidden]` → `[batch, hidden]`.
    fn forward(&self, x: &Tensor, c: &TowerConfig) -> Result<Tensor> {
        let (b, n, h) = (x.dims()[0], x.dims()[1], x.dims()[2]);
        let d = h / c.heads;
        let split = |t: Tensor, len: usize| -> Result<Tensor> {
            Ok(t.reshape([b, len, c.heads, d])?.transpose(1, 2)?)
        };
        let probe = self.probe.expand([b, 1, h])?;
        let q = split(self.q.forward(&probe)?, 1)?;
        let k = split(self.k.forward(x)?, n)?;
        let v = split(self.v.forward(x)?, n)?;
        let ctx = eager_attention(&q, &k, &v, None, 1.0 / (d as f64).sqrt(), None)?;
        let attended = self.out.forward(&ctx.transpose(1, 2)?.reshape([b, 1, h])?)?;
        let mlp = self.fc2.forward(&c.act.forward(&self.fc1.forward(&self.norm.forward(&attended)?)?)?)?;
        Ok(attended.add(&mlp)?.reshape([b, h])?)
    }
}

/// `SiglipVisionTransformer`: patches plus positions, the blocks, a norm, the attention pool.
#[derive(Debug, Clone)]
pub struct SiglipVisionTower {
    tower: TowerConfig,
    patches: PatchEmbedding,
    /// `[1, patches, hidden]`
    positions: Tensor,
    layers: Vec<PreNormEncoderLayer>,
    post_norm: LayerNorm,
    head: Option<AttentionPool>,
    channels: usize,
    image: (usize, usize),
}

impl SiglipVisionTower {
    /// The tower under `vars` from the vision config `cfg`; its attention-pool head where the config
    /// has one (`vision_use_head`) and `with_head` (a vision-language model never reads it).
    pub(crate) fn load(vars: &Vars<'_>, cfg: &Config, with_head: bool) -> Result<Self> {
        let tower = tower(cfg)?;
        let h = tower.hidden;
        let image = size_pair(cfg, "image_size", 224)?;
        let patch = size_pair(cfg, "patch_size", 16)?;
        let channels = cfg.usize_or("num_channels", 3)?;
        let emb = vars.pp("embeddings");
        let patches = PatchEmbedding::load(&emb.pp("patch_embedding"), h, channels, patch, image, true)?;
        let count = patches.num_patches();
        let head = if cfg.bool_or("vision_use_head", true)? && with_head {
            Some(AttentionPool::load(&vars.pp("head"), &tower)?)
        } else {
            None
        };
        Ok(SiglipVisionTower {
            positions: emb.get("position_embedding.weight", &[count, h])?.reshape([1, count, h])?,
            layers: tower.load_layers(vars)?,
            post_norm: LayerNorm::load(&vars.pp("post_layernorm"), h, tower.eps)?,
            head,
            patches,
            tower,
            channels,
            image,
        })
    }

    /// The tower's width.
    pub(crate) fn hidden(&self) -> usize {
        self.tower.hidden
    }

    /// `(height, width)` of the images.
    pub(crate) fn image_size(&self) -> (usize, usize) {
        self.image
    }

    /// `(height, width)` of a patch.
    pub(crate) fn patch_size(&self) -> (usize, usize) {
        self.patches.patch()
    }

    /// The number of blocks.
    pub(crate) fn layers(&self) -> usize {
        self.layers.len()
    }

    /// The weights' dtype, which the pixels are cast to.
    pub(crate) fn dtype(&self) -> DType {
        self.patches.dtype()
    }

    /// The weights' device.
    pub(crate) fn device(&self) -> Device {
        self.patches.device()
    }

    /// `pixel_values` → the post-normed states, the pooled state (with the head), the hidden states.
    pub(crate) fn forward(
        &self,
        pixels: &Tensor,
        keep: bool,
    ) -> Result<(Tensor, Option<Tensor>, Vec<Tensor>)> {
        self.forward_with(pixels, None, None, keep)
    }

    /// [`Self::forward`] with each patch's row of the position table (`position_ids` `[batch,
    /// patches]`; `None`: the patch's own) and an additive attention `mask` (Idefics3's padded
    /// patches hidden as keys).
    pub(crate) fn forward_with(
        &self,
        pixels: &Tensor,
        position_ids: Option<&Tensor>,
        mask: Option<&Tensor>,
        keep: bool,
    ) -> Result<(Tensor, Option<Tensor>, Vec<Tensor>)> {
        let x = self.patches.forward(&pixels.to_dtype(self.patches.dtype())?)?;
        let x = match position_ids {
            None => x.add(&self.positions)?,
            Some(ids) => {
                let (count, h) = (self.positions.dims()[1], self.positions.dims()[2]);
                let table = self.positions.reshape([count, h])?;
                let rows = table.index_select(0, &ids.flatten(0, -1)?.to(table.device())?)?;
                x.add(&rows.reshape([ids.dims()[0], ids.dims()[1], h])?)?
            }
        };
        let (x, hidden) = run_layers(&self.layers, x, mask, &self.tower, keep)?;
        let last = self.post_norm.forward(&x)?;
        let pooled = self.head.as_ref().map(|h| h.forward(&last, &self.tower)).transpose()?;
        Ok((last, pooled, hidden))
    }
}

/// A SigLIP model, as the architecture named in `config.json`.
#[derive(Debug, Clone)]
pub struct Siglip {
    text: Option<SiglipTextTower>,
    vision: Option<SiglipVisionTower>,
    /// `SiglipModel`'s `logit_scale` and `logit_bias` (`[1]` each)
    logits: Option<(Tensor, Tensor)>,
}

impl Siglip {
    /// `arch` (one of [`ARCHITECTURES`]) from `cfg` and `weights`.
    pub fn load(arch: &str, cfg: &Config, weights: &Weights) -> Result<Self> {
        let model_type = cfg.model_type()?;
        if !ARCHITECTURES.iter().any(|(a, types)| *a == arch && types.contains(&model_type)) {
            return Err(Error::Unsupported(format!(
                "architecture \"{arch}\" with model_type \"{model_type}\""
            )));
        }
        let text = if arch != "SiglipVisionModel" {
            let vars = tower_vars(weights, "text_model", "embeddings.token_embedding.weight");
            Some(SiglipTextTower::load(&vars, &tower_config(cfg, "text_config")?)?)
        } else {
            None
        };
        let vision = if arch != "SiglipTextModel" {
            let vars = tower_vars(weights, "vision_model", "embeddings.patch_embedding.weight");
            Some(SiglipVisionTower::load(&vars, &tower_config(cfg, "vision_config")?, true)?)
        } else {
            None
        };
        let logits = if arch == "SiglipModel" {
            let root = weights.vars("");
            Some((root.get("logit_scale", &[1])?, root.get("logit_bias", &[1])?))
        } else {
            None
        };
        Ok(Siglip { text, vision, logits })
    }

    /// The device of the weights.
    pub fn device(&self) -> Device {
        match (&self.text, &self.vision) {
            (Some(t), _) => t.tokens.weight.device(),
            (None, Some(v)) => v.patches.device(),
            (None, None) => unreachable!("every SigLIP model has a tower"),
        }
    }

    /// The input names this model takes.
    pub fn input_names(&self) -> &'static [&'static str] {
        match (&self.text, &self.vision) {
            (Some(_), Some(_)) => &["input_ids", "attention_mask", "position_ids", "pixel_values"],
            (Some(_), None) => &["input_ids", "attention_mask", "position_ids"],
            _ => &["pixel_values"],
        }
    }

    /// `[channels, height, width]` of the images, for the models with a vision tower.
    pub fn image_shape(&self) -> Option<[usize; 3]> {
        self.vision.as_ref().map(|v| [v.channels, v.image.0, v.image.1])
    }

    /// Runs the model on named inputs: a tower's `last_hidden_state`, `pooler_output` and
    /// `hidden_states.*`; `SiglipModel`'s `logits_per_image`, `logits_per_text`, normalised
    /// `text_embeds` and `image_embeds` and the towers' outputs under `text_model_output.` and
    /// `vision_model_output.` (one modality alone gives that side's).
    pub fn forward_named(
        &self,
        inputs: &BTreeMap<String, Tensor>,
        keep: bool,
    ) -> Result<Vec<(String, Tensor)>> {
        let accepted = self.input_names();
        if let Some(name) = inputs.keys().find(|k| !accepted.contains(&k.as_str())) {
            return Err(Error::Input(format!(
                "unexpected input '{name}' (this model takes {})",
                accepted.join(", ")
            )));
        }
        let both = self.logits.is_some();
        let text = match &self.text {
            Some(t) if inputs.contains_key("input_ids") || !both => Some(self.run_text(t, inputs, keep)?),
            _ => None,
        };
        let vision = match &self.vision {
            Some(v) if inputs.contains_key("pixel_values") || !both => {
                let pixels = inputs
                    .get("pixel_values")
                    .ok_or_else(|| Error::Input("missing input 'pixel_values'".into()))?;
                Some(v.forward(&checked_pixels(pixels, v.patches.dtype())?, keep)?)
            }
            _ => None,
        };
        let mut out = Vec::new();
        let push = |out: &mut Vec<(String, Tensor)>,
                    prefix: &str,
                    last: Tensor,
                    pooled: Option<Tensor>,
                    hs: Vec<Tensor>| {
            out.push((format!("{prefix}last_hidden_state"), last));
            if let Some(p) = pooled {
                out.push((format!("{prefix}pooler_output"), p));
            }
            out.extend(hs.into_iter().enumerate().map(|(i, h)| (format!("{prefix}hidden_states.{i}"), h)));
        };
        let Some((scale, bias)) = &self.logits else {
            match (text, vision) {
                (Some((last, pooled, hs)), _) => push(&mut out, "", last, Some(pooled), hs),
                (None, Some((last, pooled, hs))) => push(&mut out, "", last, pooled, hs),
                (None, None) => unreachable!("a tower ran"),
            }
            return Ok(out);
        };
        if text.is_none() && vision.is_none() {
            return Err(Error::Input(
                "missing inputs: SiglipModel takes input_ids, pixel_values or both".into(),
            ));
        }
        let normed = |e: &Tensor| -> Result<Tensor> { Ok(e.div(&e.square()?.sum([-1], true)?.sqrt()?)?) };
        let text_embeds = text.as_ref().map(|t| normed(&t.1)).transpose()?;
        let image_embeds = match &vision {
            Some((_, Some(p), _)) => Some(normed(p)?),
            Some((_, None, _)) => {
                return Err(Error::Config(
                    "SiglipModel needs the vision head (vision_use_head) for image embeddings".into(),
                ))
            }
            None => None,
        };
        if let (Some(t), Some(i)) = (&text_embeds, &image_embeds) {
            let per_text = t.matmul(&i.t()?)?.mul(&scale.exp()?)?.add(bias)?;
            out.push(("logits_per_image".into(), per_text.t()?.contiguous()?));
            out.push(("logits_per_text".into(), per_text));
        }
        if let (Some(e), Some((last, pooled, hs))) = (text_embeds, text) {
            out.push(("text_embeds".into(), e));
            push(&mut out, "text_model_output.", last, Some(pooled), hs);
        }
        if let (Some(e), Some((last, pooled, hs))) = (image_embeds, vision) {
            out.push(("image_embeds".into(), e));
            push(&mut out, "vision_model_output.", last, pooled, hs);
        }
        Ok(out)
    }

    /// The text tower's `last_hidden_state` (`None` for the vision model).
    pub fn text_last_hidden_state(
        &self,
        input_ids: &Tensor,
        attention_mask: Option<&Tensor>,
    ) -> Result<Option<Tensor>> {
        let Some(text) = &self.text else { return Ok(None) };
        let mut inputs = BTreeMap::from([("input_ids".to_string(), input_ids.clone())]);
        if let Some(m) = attention_mask {
            inputs.insert("attention_mask".into(), m.clone());
        }
        Ok(Some(self.run_text(text, &inputs, false)?.0))
    }

    /// The text tower on `inputs`' ids, mask and positions, checked.
    fn run_text(
        &self,
        text: &SiglipTextTower,
        inputs: &BTreeMap<String, Tensor>,
        keep: bool,
    ) -> Result<(Tensor, Tensor, Vec<Tensor>)> {
        let ids = inputs.get("input_ids").ok_or_else(|| Error::Input("missing input 'input_ids'".into()))?;
        let text_inputs: BTreeMap<String, Tensor> = inputs
            .iter()
            .filter(|(k, _)| *k != "pixel_values")
            .map(|(k, t)| (k.clone(), t.clone()))
            .collect();
        for (name, t) in &text_inputs {
            check_input_dtype(name, t)?;
        }
        check_input_shapes(&text_inputs)?;
        let ids = ids.to_dtype(DType::I64)?;
        let &[b, s] = ids.dims() else { unreachable!("checked as [batch, seq]") };
        let mask = inputs.get("attention_mask").map(|m| m.ne(0.0)?.to_dtype(DType::I64)).transpose()?;
        let positions = inputs
            .get("position_ids")
            .map(|p| p.to_dtype(DType::I64)?.broadcast_to(&[b, s])?.contiguous())
            .transpose()?;
        text.forward(&ids, mask.as_ref(), positions.as_ref(), keep)
    }
}
