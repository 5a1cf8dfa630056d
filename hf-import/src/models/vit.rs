//! ViT (`ViTModel` with its pooler, `ViTForImageClassification`): patch embeddings, a class token
//! and learned positions, pre-norm encoder blocks, a final layer norm. DeiT (`DeiTModel`,
//! `DeiTForImageClassification`, `DeiTForImageClassificationWithTeacher`) is the same network under
//! `deit.` with a distillation token after the class token; its teacher-distilled classifier
//! averages a classifier on each of the two tokens.
//!
//! ViT-MSN (`ViTMSNModel`, `ViTMSNForImageClassification`) is ViT without a pooler; I-JEPA
//! (`IJepaModel`, `IJepaForImageClassification`) has no class token, and its classifier averages
//! every token.
//!
//! Checkpoints on the Hub (and transformers 5's `save_pretrained`) name the blocks
//! `encoder.layer.N.attention.attention.query`, ...; transformers 5's in-memory modules (what a
//! `torch.save` of its state dict holds) name them `layers.N.attention.q_proj`, ...: both load.

use oxtorch_tensor::{Device, Tensor};

use super::bert::BertOutput;
use super::classification::num_labels;
use super::vision::{size_pair, PatchEmbedding};
use crate::config::Config;
use crate::error::{Error, Result};
use crate::layers::{Activation, LayerNorm, Linear, PreNormEncoderLayer};
use crate::weights::{Vars, Weights};

/// The sizes of a ViT (`ViTConfig`'s keys and defaults).
#[derive(Debug, Clone)]
pub struct ViTConfig {
    /// model width
    pub hidden: usize,
    /// attention heads
    pub heads: usize,
    /// MLP width
    pub intermediate: usize,
    /// number of blocks
    pub layers: usize,
    /// layer norm epsilon
    pub eps: f64,
    /// MLP activation
    pub act: Activation,
    /// `(height, width)` of the images the position table was made for
    pub image: (usize, usize),
    /// `(height, width)` of a patch
    pub patch: (usize, usize),
    /// image channels
    pub channels: usize,
    /// biases on the query, key and value projections
    pub qkv_bias: bool,
    /// the pooler's output width
    pub pooler_size: usize,
    /// the pooler's activation
    pub pooler_act: Activation,
}

impl ViTConfig {
    /// Reads `ViTConfig`'s keys from `cfg`.
    pub fn from_config(cfg: &Config) -> Result<Self> {
        let hidden = cfg.usize_or("hidden_size", 768)?;
        let c = ViTConfig {
            hidden,
            heads: cfg.usize_or("num_attention_heads", 12)?,
            intermediate: cfg.usize_or("intermediate_size", 3072)?,
            layers: if cfg.get("num_hidden_layers").is_some() {
                cfg.layers("num_hidden_layers")?
            } else {
                12
            },
            eps: cfg.f64_or("layer_norm_eps", 1e-12)?,
            act: Activation::from_name(cfg.str_or("hidden_act", "gelu")?)?,
            image: size_pair(cfg, "image_size", 224)?,
            patch: size_pair(cfg, "patch_size", 16)?,
            channels: cfg.usize_or("num_channels", 3)?,
            qkv_bias: cfg.bool_or("qkv_bias", true)?,
            // (0 or null: the hidden width, as the config classes read it.)
            pooler_size: cfg
                .nullable_usize_or("pooler_output_size", Some(hidden))?
                .filter(|&n| n > 0)
                .unwrap_or(hidden),
            pooler_act: Activation::from_name(cfg.str_or("pooler_act", "tanh")?)?,
        };
        if c.heads == 0 || !c.hidden.is_multiple_of(c.heads) {
            return Err(Error::Config(format!(
                "hidden_size ({}) must be a multiple of num_attention_heads ({})",
                c.hidden, c.heads
            )));
        }
        Ok(c)
    }
}

/// transformers' `ViTModel`.
#[derive(Debug, Clone)]
pub struct ViTModel {
    config: ViTConfig,
    /// `None` for DPT-Hybrid's ViT, whose tokens come from a BiT backbone's map
    patches: Option<PatchEmbedding>,
    /// `[1, 1, hidden]` (I-JEPA has none)
    cls_token: Option<Tensor>,
    /// DeiT's `[1, 1, hidden]`, after the class token
    distillation_token: Option<Tensor>,
    /// `[1, patches + tokens, hidden]`
    positions: Tensor,
    layers: Vec<PreNormEncoderLayer>,
    layernorm: LayerNorm,
    /// `dense` and its activation on the first token, when the checkpoint has one.
    pooler: Option<Linear>,
    /// DPT's: the positions resampled bilinearly to every image's patch grid
    resample_positions: bool,
}

impl ViTModel {
    /// `ViTModel` from `cfg` and `weights` (its tensors at the top level, or under `vit.` as in an
    /// image classifier's checkpoint). The pooler is there when the checkpoint has it.
    pub fn load(cfg: &Config, weights: &Weights) -> Result<Self> {
        let c = ViTConfig::from_config(cfg)?;
        let moved = prefixed(weights, "vit");
        let weights = moved.as_ref().unwrap_or(weights);
        let root = weights.vars("");
        let vars = if root.contains("vit.embeddings.cls_token") { root.pp("vit") } else { root };
        Self::load_at(&vars, c)
    }

    /// `IJepaModel` from `cfg` and `weights` (at the top level or under `ijepa.`): no class token,
    /// no pooler.
    pub fn load_ijepa(cfg: &Config, weights: &Weights) -> Result<Self> {
        let c = ViTConfig::from_config(cfg)?;
        let moved = prefixed(weights, "ijepa");
        let weights = moved.as_ref().unwrap_or(weights);
        Ok(Self::load_tokens(&weights.base_vars("ijepa"), c, None, false)?.without_pooler())
    }

    /// `DeiTModel` from `cfg` and `weights` (at the top level or under `deit.`).
    pub fn load_deit(cfg: &Config, weights: &Weights) -> Result<Self> {
        let c = ViTConfig::from_config(cfg)?;
        let root = weights.vars("");
        let vars = if root.contains("deit.embeddings.cls_token") { root.pp("deit") } else { root };
        Self::load_distilled(&vars, c)
    }

    /// [`ViTModel::load_at`] with DeiT's distillation token (`embeddings.distillation_token`).
    pub(crate) fn load_distilled(vars: &Vars<'_>, c: ViTConfig) -> Result<Self> {
        let hidden = c.hidden;
        let token = vars.pp("embeddings").get("distillation_token", &[1, 1, hidden])?;
        Self::load_tokens(vars, c, Some(token), true)
    }

    /// The model under `vars` (`embeddings.*`, `encoder.*` or `layers.*`, `layernorm.*`, `pooler.*`).
    pub(crate) fn load_at(vars: &Vars<'_>, c: ViTConfig) -> Result<Self> {
        Self::load_tokens(vars, c, None, true)
    }

    fn load_tokens(
        vars: &Vars<'_>,
        c: ViTConfig,
        distillation_token: Option<Tensor>,
        cls: bool,
    ) -> Result<Self> {
        let emb = vars.pp("embeddings");
        let patches = PatchEmbedding::load(
            &emb.pp("patch_embeddings.projection"),
            c.hidden,
            c.channels,
            c.patch,
            c.image,
            true,
        )?;
        let num_patches = patches.num_patches();
        Self::load_blocks(vars, c, Some(patches), num_patches, distillation_token, cls)
    }

    /// DPT-Hybrid's ViT under `vars`: the class token, positions for `image_size / patch_size`
    /// patches and the blocks, but no patch embedding (see [`ViTModel::forward_patches`]).
    pub(crate) fn load_without_patches(vars: &Vars<'_>, c: ViTConfig) -> Result<Self> {
        let num_patches = (c.image.0 / c.patch.0.max(1)).saturating_mul(c.image.1 / c.patch.1.max(1));
        if num_patches == 0 {
            return Err(Error::Config(format!(
                "image_size {:?} is smaller than patch_size {:?}: the model has no patches",
                c.image, c.patch
            )));
        }
        Self::load_blocks(vars, c, None, num_patches, None, true)
    }

    fn load_blocks(
        vars: &Vars<'_>,
        c: ViTConfig,
        patches: Option<PatchEmbedding>,
        num_patches: usize,
        distillation_token: Option<Tensor>,
        cls: bool,
    ) -> Result<Self> {
        let emb = vars.pp("embeddings");
        let cls_token = if cls { Some(emb.get("cls_token", &[1, 1, c.hidden])?) } else { None };
        let tokens = usize::from(cls) + usize::from(distillation_token.is_some());
        let positions = emb.get("position_embeddings", &[1, num_patches.saturating_add(tokens), c.hidden])?;
        let hub_names = vars.contains("encoder.layer.0.layernorm_before.weight")
            || !vars.contains("layers.0.layernorm_before.weight");
        let layers = (0..c.layers)
            .map(|i| {
                if hub_names {
                    load_hub_layer(&vars.pp("encoder.layer").pp(i), &c)
                } else {
                    load_layer(&vars.pp("layers").pp(i), &c)
                }
            })
            .collect::<Result<Vec<_>>>()?;
        let layernorm = LayerNorm::load(&vars.pp("layernorm"), c.hidden, c.eps)?;
        let pooler = if vars.contains("pooler.dense.weight") {
            Some(Linear::load(&vars.pp("pooler.dense"), c.hidden, c.pooler_size, true)?)
        } else {
            None
        };
        Ok(ViTModel {
            config: c,
            patches,
            cls_token,
            distillation_token,
            positions,
            layers,
            layernorm,
            pooler,
            resample_positions: false,
        })
    }

    /// DPT's ViT (`DPTViTEmbeddings`): images of any size, the stored (square) grid of
    /// positions resampled bilinearly to each image's grid.
    pub(crate) fn resampling_positions(self) -> Self {
        ViTModel { patches: self.patches.map(PatchEmbedding::any_size), resample_positions: true, ..self }
    }

    /// Builds the model without its pooler (as transformers' heads build it).
    pub(crate) fn without_pooler(self) -> Self {
        ViTModel { pooler: None, ..self }
    }

    /// The positions for a `rows × cols` grid of patches: as stored, or DPT's resampled.
    fn positions_for(&self, rows: usize, cols: usize) -> Result<Tensor> {
        let stored = self.positions.dims()[1] - 1;
        if !self.resample_positions || stored == rows * cols && rows == cols {
            return Ok(self.positions.clone());
        }
        let side = (stored as f64).sqrt() as usize;
        if side * side != stored {
            return Err(Error::Config(format!(
                "DPT resamples a square grid of positions, but the checkpoint has {stored}"
            )));
        }
        let d = self.positions.dims()[2];
        let grid = self.positions.narrow(1, 1, stored)?.reshape([1, side, side, d])?.permute([0, 3, 1, 2])?;
        let grid = grid.interpolate(Some(&[rows, cols]), None, "bilinear", Some(false))?;
        let grid = grid.permute([0, 2, 3, 1])?.reshape([1, rows * cols, d])?;
        Ok(Tensor::cat(&[&self.positions.narrow(1, 0, 1)?, &grid], 1)?)
    }

    /// The sizes this model was built with.
    pub fn config(&self) -> &ViTConfig {
        &self.config
    }

    /// The `[channels, height, width]` of the images this model takes.
    pub fn image_shape(&self) -> [usize; 3] {
        [self.config.channels, self.config.image.0, self.config.image.1]
    }

    /// The device of the weights.
    pub fn device(&self) -> Device {
        self.positions.device()
    }

    /// The dtype of the weights, which `pixel_values` are cast to.
    pub fn dtype(&self) -> oxtorch_tensor::DType {
        self.positions.dtype()
    }

    /// `pixel_values` `[batch, channels, height, width]` → `last_hidden_state` (after the final
    /// norm), `pooler_output` (with a pooler) and, with `output_hidden_states`, the embeddings and
    /// every block's output (before the final norm), as transformers gives them.
    pub fn forward(&self, pixel_values: &Tensor, output_hidden_states: bool) -> Result<BertOutput> {
        let c = &self.config;
        let patches = self.embed_patches(pixel_values)?;
        let (rows, cols) = (pixel_values.dims()[2] / c.patch.0, pixel_values.dims()[3] / c.patch.1);
        self.forward_patches(patches, rows, cols, output_hidden_states)
    }

    /// `pixel_values` `[batch, channels, height, width]` → the patches' embeddings `[batch,
    /// patches, hidden]` (no tokens, no positions).
    pub(crate) fn embed_patches(&self, pixel_values: &Tensor) -> Result<Tensor> {
        let Some(embedding) = &self.patches else {
            return Err(Error::Input(
                "this ViT embeds no pixels itself: DPT-Hybrid's takes its tokens from a BiT backbone".into(),
            ));
        };
        embedding.forward(&pixel_values.to_dtype(self.dtype())?)
    }

    /// The stored positions `[1, tokens + patches, hidden]`.
    pub(crate) fn positions(&self) -> &Tensor {
        &self.positions
    }

    /// The class token `[1, 1, hidden]`, if the model has one.
    pub(crate) fn cls_token(&self) -> Option<&Tensor> {
        self.cls_token.as_ref()
    }

    /// [`ViTModel::forward`] from embedded patches `[batch, rows · cols, hidden]` (row-major on a
    /// `rows × cols` grid): the class (and distillation) tokens and positions added, the blocks,
    /// the final norm and the pooler.
    pub(crate) fn forward_patches(
        &self,
        patches: Tensor,
        rows: usize,
        cols: usize,
        output_hidden_states: bool,
    ) -> Result<BertOutput> {
        let c = &self.config;
        let b = patches.dims()[0];
        let tokens = [&self.cls_token, &self.distillation_token]
            .into_iter()
            .flatten()
            .map(|t| t.expand([b, 1, c.hidden]))
            .collect::<std::result::Result<Vec<_>, _>>()?;
        let x = match tokens.is_empty() {
            true => patches,
            false => Tensor::cat(&tokens.iter().chain([&patches]).collect::<Vec<_>>(), 1)?,
        }
        .add(&self.positions_for(rows, cols)?)?;
        self.encode(x, output_hidden_states)
    }

    /// The blocks, the final norm and the pooler on the embedded sequence `x` `[batch, tokens,
    /// hidden]` (with `output_hidden_states`, `x` and every block's output).
    pub(crate) fn encode(&self, mut x: Tensor, output_hidden_states: bool) -> Result<BertOutput> {
        let c = &self.config;
        let mut hidden_states = Vec::new();
        for layer in &self.layers {
            if output_hidden_states {
                hidden_states.push(x.clone());
            }
            x = layer.forward(&x, None, c.heads, c.act)?;
        }
        if output_hidden_states {
            hidden_states.push(x.clone());
        }
        let last_hidden_state = self.layernorm.forward(&x)?;
        let pooler_output = match &self.pooler {
            Some(dense) => Some(c.pooler_act.forward(&dense.forward(&last_hidden_state.select(1, 0)?)?)?),
            None => None,
        };
        Ok(BertOutput { last_hidden_state, pooler_output, hidden_states })
    }
}

/// The top-level modules of a ViT's base model.
const BASE_MODULES: [&str; 5] = ["embeddings.", "encoder.", "layers.", "layernorm.", "pooler."];

/// A classifier's `weights` with the base model's tensors found at the root moved under `prefix`,
/// where others are under it already (transformers 5 saves ViT-MSN's blocks without their `vit.`
/// and loads them back under it); `None` where nothing moves.
fn prefixed(weights: &Weights, prefix: &str) -> Option<Weights> {
    let dotted = format!("{prefix}.");
    let at_root = |n: &str| BASE_MODULES.iter().any(|m| n.starts_with(m));
    let mixed = weights.names().any(|n| n.starts_with(&dotted)) && weights.names().any(|n| at_root(n));
    mixed.then(|| weights.renamed(|n| Some(if at_root(n) { format!("{dotted}{n}") } else { n.to_string() })))
}

/// A block under its Hub names (`attention.attention.query`, `intermediate.dense`, ...).
pub(crate) fn load_hub_layer(vars: &Vars<'_>, c: &ViTConfig) -> Result<PreNormEncoderLayer> {
    let (h, i) = (c.hidden, c.intermediate);
    let attn = vars.pp("attention.attention");
    Ok(PreNormEncoderLayer {
        norm1: LayerNorm::load(&vars.pp("layernorm_before"), h, c.eps)?,
        query: Linear::load(&attn.pp("query"), h, h, c.qkv_bias)?,
        key: Linear::load(&attn.pp("key"), h, h, c.qkv_bias)?,
        value: Linear::load(&attn.pp("value"), h, h, c.qkv_bias)?,
        attn_out: Linear::load(&vars.pp("attention.output.dense"), h, h, true)?,
        norm2: LayerNorm::load(&vars.pp("layernorm_after"), h, c.eps)?,
        fc1: Linear::load(&vars.pp("intermediate.dense"), h, i, true)?,
        fc2: Linear::load(&vars.pp("output.dense"), i, h, true)?,
    })
}

/// A block under transformers 5's module names (`attention.q_proj`, `mlp.fc1`, ...).
pub(crate) fn load_layer(vars: &Vars<'_>, c: &ViTConfig) -> Result<PreNormEncoderLayer> {
    let (h, i) = (c.hidden, c.intermediate);
    let attn = vars.pp("attention");
    Ok(PreNormEncoderLayer {
        norm1: LayerNorm::load(&vars.pp("layernorm_before"), h, c.eps)?,
        query: Linear::load(&attn.pp("q_proj"), h, h, c.qkv_bias)?,
        key: Linear::load(&attn.pp("k_proj"), h, h, c.qkv_bias)?,
        value: Linear::load(&attn.pp("v_proj"), h, h, c.qkv_bias)?,
        attn_out: Linear::load(&attn.pp("o_proj"), h, h, true)?,
        norm2: LayerNorm::load(&vars.pp("layernorm_after"), h, c.eps)?,
        fc1: Linear::load(&vars.pp("mlp.fc1"), h, i, true)?,
        fc2: Linear::load(&vars.pp("mlp.fc2"), i, h, true)?,
    })
}

/// transformers' `ViTForImageClassification` (and DeiT's): a linear classifier on the first token
/// after the final norm (the model has no pooler); `DeiTForImageClassificationWithTeacher`: the
/// mean of that and a second classifier on the distillation token.
#[derive(Debug, Clone)]
pub struct ViTForImageClassification {
    /// the ViT under `vit.` (DeiT's under `deit.`)
    pub vit: ViTModel,
    /// `[num_labels, hidden]` (none with 0 labels: the logits are the first token's features)
    classifier: Option<Linear>,
    /// DeiT's teacher-distilled head: the distillation token's classifier (inside, none with 0
    /// labels), `classifier` being the class token's
    distillation: Option<Option<Linear>>,
    /// I-JEPA's: the classifier reads the mean of every token (else the first)
    mean_pooled: bool,
}

impl ViTForImageClassification {
    /// The classifier from `cfg` (`num_labels` or `id2label`) and `weights`.
    pub fn load(cfg: &Config, weights: &Weights) -> Result<Self> {
        let c = ViTConfig::from_config(cfg)?;
        let hidden = c.hidden;
        let moved = prefixed(weights, "vit");
        let weights = moved.as_ref().unwrap_or(weights);
        let mut vit = ViTModel::load_at(&weights.base_vars("vit"), c)?;
        // (transformers builds this ViT without its pooler, whatever the checkpoint holds.)
        vit.pooler = None;
        let labels = num_labels(cfg)?;
        let classifier = match labels {
            0 => None,
            n => Some(Linear::load(&weights.vars("classifier"), hidden, n, true)?),
        };
        Ok(ViTForImageClassification { vit, classifier, distillation: None, mean_pooled: false })
    }

    /// `IJepaForImageClassification`: the classifier on the mean of every token (under `ijepa.`).
    pub fn load_ijepa(cfg: &Config, weights: &Weights) -> Result<Self> {
        let vit = ViTModel::load_ijepa(cfg, weights)?;
        let hidden = vit.config.hidden;
        let classifier = match num_labels(cfg)? {
            0 => None,
            n => Some(Linear::load(&weights.vars("classifier"), hidden, n, true)?),
        };
        Ok(ViTForImageClassification { vit, classifier, distillation: None, mean_pooled: true })
    }

    /// `DeiTForImageClassification` (`classifier` on the class token) or, `with_teacher`,
    /// `DeiTForImageClassificationWithTeacher` (`cls_classifier` and `distillation_classifier`).
    pub fn load_deit(cfg: &Config, weights: &Weights, with_teacher: bool) -> Result<Self> {
        let c = ViTConfig::from_config(cfg)?;
        let hidden = c.hidden;
        let moved = prefixed(weights, "deit");
        let weights = moved.as_ref().unwrap_or(weights);
        let mut vit = ViTModel::load_distilled(&weights.base_vars("deit"), c)?;
        // (transformers builds these without the pooler, whatever the checkpoint holds.)
        vit.pooler = None;
        let labels = num_labels(cfg)?;
        let head = |name: &str| match labels {
            0 => Ok(None),
            n => Linear::load(&weights.vars(name), hidden, n, true).map(Some),
        };
        Ok(match with_teacher {
            false => ViTForImageClassification {
                vit,
                classifier: head("classifier")?,
                distillation: None,
                mean_pooled: false,
            },
            true => ViTForImageClassification {
                vit,
                classifier: head("cls_classifier")?,
                distillation: Some(head("distillation_classifier")?),
                mean_pooled: false,
            },
        })
    }

    /// The logits under transformers' names (`logits`; with DeiT's teacher head also `cls_logits`
    /// and `distillation_logits`, `logits` their mean) and the model's outputs.
    pub fn forward_named(
        &self,
        pixel_values: &Tensor,
        output_hidden_states: bool,
    ) -> Result<(Vec<(String, Tensor)>, BertOutput)> {
        let (logits, out) = self.forward(pixel_values, output_hidden_states)?;
        let Some(distillation) = &self.distillation else {
            return Ok((vec![("logits".to_string(), logits)], out));
        };
        let second = out.last_hidden_state.select(1, 1)?;
        let dist = match distillation {
            Some(c) => c.forward(&second)?,
            None => second,
        };
        let mean = logits.add(&dist)?.div(2.0)?;
        let named = vec![
            ("logits".to_string(), mean),
            ("cls_logits".to_string(), logits),
            ("distillation_logits".to_string(), dist),
        ];
        Ok((named, out))
    }

    /// `logits` `[batch, num_labels]` and the model's outputs.
    pub fn forward(&self, pixel_values: &Tensor, output_hidden_states: bool) -> Result<(Tensor, BertOutput)> {
        let out = self.vit.forward(pixel_values, output_hidden_states)?;
        let first = match self.mean_pooled {
            true => out.last_hidden_state.mean([1], false)?,
            false => out.last_hidden_state.select(1, 0)?,
        };
        let logits = match &self.classifier {
            Some(classifier) => classifier.forward(&first)?,
            None => first,
        };
        Ok((logits, out))
    }
}
