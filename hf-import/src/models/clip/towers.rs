//! CLIP's two towers: the text transformer (causal attention, pooled at the first end-of-text
//! token) and the vision transformer (class token, pre- and post-layer-norms), and the configs
//! they are built from (`CLIPTextConfig`'s and `CLIPVisionConfig`'s keys and defaults).

use oxtorch_tensor::{DType, Device, Tensor};

use super::super::vision::{size_pair, PatchEmbedding};
use crate::config::Config;
use crate::error::{Error, Result};
use crate::layers::{causal_mask, Activation, Embedding, LayerNorm, Linear, PreNormEncoderLayer};
use crate::weights::Vars;

/// The sizes shared by both towers.
#[derive(Debug, Clone)]
pub struct TowerConfig {
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
    /// the width of the `*WithProjection` models' projection
    pub projection_dim: usize,
}

impl TowerConfig {
    /// Reads the shared keys of `cfg` with a tower's defaults.
    fn read(cfg: &Config, hidden: usize, intermediate: usize, heads: usize) -> Result<Self> {
        let c = TowerConfig {
            hidden: cfg.usize_or("hidden_size", hidden)?,
            heads: cfg.usize_or("num_attention_heads", heads)?,
            intermediate: cfg.usize_or("intermediate_size", intermediate)?,
            layers: if cfg.get("num_hidden_layers").is_some() {
                cfg.layers("num_hidden_layers")?
            } else {
                12
            },
            eps: cfg.f64_or("layer_norm_eps", 1e-5)?,
            act: Activation::from_name(cfg.str_or("hidden_act", "quick_gelu")?)?,
            projection_dim: cfg.nullable_usize_or("projection_dim", Some(512))?.unwrap_or(512),
        };
        if c.heads == 0 || !c.hidden.is_multiple_of(c.heads) {
            return Err(Error::Config(format!(
                "hidden_size ({}) must be a multiple of num_attention_heads ({})",
                c.hidden, c.heads
            )));
        }
        Ok(c)
    }

    /// Block `i` under `vars` (`encoder.layers.N`: `self_attn.{q,k,v,out}_proj`, `layer_norm1`,
    /// `layer_norm2`, `mlp.fc1`, `mlp.fc2`, all with biases).
    fn load_layer(&self, vars: &Vars<'_>) -> Result<PreNormEncoderLayer> {
        let (h, i) = (self.hidden, self.intermediate);
        let attn = vars.pp("self_attn");
        Ok(PreNormEncoderLayer {
            norm1: LayerNorm::load(&vars.pp("layer_norm1"), h, self.eps)?,
            query: Linear::load(&attn.pp("q_proj"), h, h, true)?,
            key: Linear::load(&attn.pp("k_proj"), h, h, true)?,
            value: Linear::load(&attn.pp("v_proj"), h, h, true)?,
            attn_out: Linear::load(&attn.pp("out_proj"), h, h, true)?,
            norm2: LayerNorm::load(&vars.pp("layer_norm2"), h, self.eps)?,
            fc1: Linear::load(&vars.pp("mlp.fc1"), h, i, true)?,
            fc2: Linear::load(&vars.pp("mlp.fc2"), i, h, true)?,
        })
    }

    /// Every block under `vars.encoder.layers`.
    pub(crate) fn load_layers(&self, vars: &Vars<'_>) -> Result<Vec<PreNormEncoderLayer>> {
        (0..self.layers).map(|i| self.load_layer(&vars.pp("encoder.layers").pp(i))).collect()
    }
}

/// A tower's outputs.
#[derive(Debug, Clone)]
pub struct TowerOutput {
    /// `[batch, seq, hidden]`: after the final norm (text), before the post-norm (vision)
    pub last_hidden_state: Tensor,
    /// `[batch, hidden]`: the end-of-text token's state (text), the class token's post-normed
    /// (vision)
    pub pooled: Tensor,
    /// With `output_hidden_states`: the blocks' input, then each block's output.
    pub hidden_states: Vec<Tensor>,
}

/// Runs `layers` over `x`, collecting their inputs and the last output when `keep`.
pub(crate) fn run_layers(
    layers: &[PreNormEncoderLayer],
    mut x: Tensor,
    mask: Option<&Tensor>,
    c: &TowerConfig,
    keep: bool,
) -> Result<(Tensor, Vec<Tensor>)> {
    let mut hidden_states = Vec::new();
    for layer in layers {
        if keep {
            hidden_states.push(x.clone());
        }
        x = layer.forward(&x, mask, c.heads, c.act)?;
    }
    if keep {
        hidden_states.push(x.clone());
    }
    Ok((x, hidden_states))
}

/// `CLIPTextConfig`: the shared sizes, the vocabulary, the position table, the end-of-text id.
#[derive(Debug, Clone)]
pub struct ClipTextConfig {
    /// the shared sizes
    pub tower: TowerConfig,
    /// vocabulary size
    pub vocab: usize,
    /// learned positions
    pub max_positions: usize,
    /// `eos_token_id` (`2`: the configs from before transformers' fix, pooled at the highest id)
    pub eos: Option<i64>,
}

impl ClipTextConfig {
    /// Reads `CLIPTextConfig`'s keys (a CLIP config's `text_config`, or a text model's config).
    pub fn from_config(cfg: &Config) -> Result<Self> {
        let eos = match cfg.get("eos_token_id") {
            None => Some(49407),
            Some(serde_json::Value::Null) => None,
            Some(v) => Some(v.as_i64().ok_or_else(|| {
                Error::Config(format!("CLIP's eos_token_id must be an integer or null, got {v}"))
            })?),
        };
        Ok(ClipTextConfig {
            tower: TowerConfig::read(cfg, 512, 2048, 8)?,
            vocab: cfg.usize_or("vocab_size", 49408)?,
            max_positions: cfg.usize_or("max_position_embeddings", 77)?,
            eos,
        })
    }
}

/// `CLIPTextTransformer`: token and position embeddings, causal pre-norm blocks, a final norm.
#[derive(Debug, Clone)]
pub struct ClipTextTower {
    config: ClipTextConfig,
    tokens: Embedding,
    positions: Embedding,
    layers: Vec<PreNormEncoderLayer>,
    final_norm: LayerNorm,
}

impl ClipTextTower {
    /// The tower under `vars` (`embeddings.*`, `encoder.layers.*`, `final_layer_norm`).
    pub fn load(vars: &Vars<'_>, config: ClipTextConfig) -> Result<Self> {
        let h = config.tower.hidden;
        let emb = vars.pp("embeddings");
        Ok(ClipTextTower {
            tokens: Embedding::load(&emb.pp("token_embedding"), config.vocab, h)?,
            positions: Embedding::load(&emb.pp("position_embedding"), config.max_positions, h)?,
            layers: config.tower.load_layers(vars)?,
            final_norm: LayerNorm::load(&vars.pp("final_layer_norm"), h, config.tower.eps)?,
            config,
        })
    }

    /// The sizes this tower was built with.
    pub fn config(&self) -> &ClipTextConfig {
        &self.config
    }

    /// The device of the weights.
    pub fn device(&self) -> Device {
        self.tokens.weight.device()
    }

    /// `input_ids` `[batch, seq]` (int64; `attention_mask` `[batch, seq]`, `position_ids`
    /// `[batch, seq]`, both optional) → the final-normed states and the state of each row's first
    /// end-of-text token (its highest id with the legacy `eos_token_id` 2, as transformers).
    pub fn forward(
        &self,
        input_ids: &Tensor,
        attention_mask: Option<&Tensor>,
        position_ids: Option<&Tensor>,
        output_hidden_states: bool,
    ) -> Result<TowerOutput> {
        let c = &self.config;
        let &[b, s] = input_ids.dims() else {
            return Err(Error::Input(format!(
                "input 'input_ids' must be [batch, seq], got {:?}",
                input_ids.dims()
            )));
        };
        if s > c.max_positions {
            return Err(Error::Input(format!(
                "sequence length must be at most max_position_embeddings: got {s} tokens, the table has {}",
                c.max_positions
            )));
        }
        let default_positions;
        let positions = match position_ids {
            Some(p) => p,
            None => {
                default_positions =
                    Tensor::arange(s as i64, (DType::I64, input_ids.device()))?.reshape([1, s])?;
                &default_positions
            }
        };
        let x = self.tokens.forward(input_ids)?.add(&self.positions.forward(positions)?)?;
        let mask = causal_mask(attention_mask, s, 0, s, None, x.dtype(), x.device())?;
        let (x, hidden_states) = run_layers(&self.layers, x, Some(&mask), &c.tower, output_hidden_states)?;
        let last_hidden_state = self.final_norm.forward(&x)?;
        let at = match c.eos {
            Some(2) => input_ids.argmax(Some(-1), false)?,
            Some(eos) => input_ids.eq(eos as f64)?.to_dtype(DType::I32)?.argmax(Some(-1), false)?,
            None => Tensor::zeros([b], (DType::I64, input_ids.device()))?,
        };
        let index = at.to_dtype(DType::I64)?.reshape([b, 1, 1])?.expand([b, 1, c.tower.hidden])?;
        let pooled = last_hidden_state.gather(1, &index)?.reshape([b, c.tower.hidden])?;
        Ok(TowerOutput { last_hidden_state, pooled, hidden_states })
    }
}

/// `CLIPVisionConfig`: the shared sizes and the image's.
#[derive(Debug, Clone)]
pub struct ClipVisionConfig {
    /// the shared sizes
    pub tower: TowerConfig,
    /// `(height, width)` of the images
    pub image: (usize, usize),
    /// `(height, width)` of a patch
    pub patch: (usize, usize),
    /// image channels
    pub channels: usize,
}

impl ClipVisionConfig {
    /// Reads `CLIPVisionConfig`'s keys (a CLIP config's `vision_config`, or a vision model's config).
    pub fn from_config(cfg: &Config) -> Result<Self> {
        Ok(ClipVisionConfig {
            tower: TowerConfig::read(cfg, 768, 3072, 12)?,
            image: size_pair(cfg, "image_size", 224)?,
            patch: size_pair(cfg, "patch_size", 32)?,
            channels: cfg.usize_or("num_channels", 3)?,
        })
    }
}

/// `CLIPVisionTransformer`: patch embeddings (no bias), a class embedding and learned positions,
/// a norm before the blocks and one on the pooled class token.
#[derive(Debug, Clone)]
pub struct ClipVisionTower {
    config: ClipVisionConfig,
    patches: PatchEmbedding,
    /// `[1, 1, hidden]`
    class_embedding: Tensor,
    /// `[1, patches + 1, hidden]`
    positions: Tensor,
    pre_norm: LayerNorm,
    layers: Vec<PreNormEncoderLayer>,
    post_norm: LayerNorm,
}

impl ClipVisionTower {
    /// The tower under `vars` (`embeddings.*`, `pre_layrnorm`, `encoder.layers.*`, `post_layernorm`).
    pub fn load(vars: &Vars<'_>, config: ClipVisionConfig) -> Result<Self> {
        let c = &config;
        let h = c.tower.hidden;
        let emb = vars.pp("embeddings");
        let patches =
            PatchEmbedding::load(&emb.pp("patch_embedding"), h, c.channels, c.patch, c.image, false)?;
        let count = patches.num_patches().saturating_add(1);
        Ok(ClipVisionTower {
            class_embedding: emb.get("class_embedding", &[h])?.reshape([1, 1, h])?,
            positions: emb.get("position_embedding.weight", &[count, h])?.reshape([1, count, h])?,
            pre_norm: LayerNorm::load(&vars.pp("pre_layrnorm"), h, c.tower.eps)?,
            layers: c.tower.load_layers(vars)?,
            post_norm: LayerNorm::load(&vars.pp("post_layernorm"), h, c.tower.eps)?,
            patches,
            config,
        })
    }

    /// The sizes this tower was built with.
    pub fn config(&self) -> &ClipVisionConfig {
        &self.config
    }

    /// The device of the weights.
    pub fn device(&self) -> Device {
        self.patches.device()
    }

    /// The dtype of the weights, which `pixel_values` are cast to.
    pub fn dtype(&self) -> DType {
        self.patches.dtype()
    }

    /// `[channels, height, width]` of the images this tower takes.
    pub fn image_shape(&self) -> [usize; 3] {
        [self.config.channels, self.config.image.0, self.config.image.1]
    }

    /// `pixel_values` `[batch, channels, height, width]` → the blocks' output and the class
    /// token's post-normed state.
    pub fn forward(&self, pixel_values: &Tensor, output_hidden_states: bool) -> Result<TowerOutput> {
        let h = self.config.tower.hidden;
        let patches = self.patches.forward(&pixel_values.to_dtype(self.dtype())?)?;
        let b = patches.dims()[0];
        let cls = self.class_embedding.expand([b, 1, h])?;
        let x = Tensor::cat(&[&cls, &patches], 1)?.add(&self.positions)?;
        let x = self.pre_norm.forward(&x)?;
        let (last_hidden_state, hidden_states) =
            run_layers(&self.layers, x, None, &self.config.tower, output_hidden_states)?;
        let pooled = self.post_norm.forward(&last_hidden_state.select(1, 0)?)?;
        Ok(TowerOutput { last_hidden_state, pooled, hidden_states })
    }
}
