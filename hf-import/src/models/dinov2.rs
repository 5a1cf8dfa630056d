//! DINOv2 (`Dinov2Model`, `Dinov2ForImageClassification`, and with registers:
//! `Dinov2WithRegistersModel`, `Dinov2WithRegistersForImageClassification`, whose register tokens
//! follow the class token and whose positions resample antialiased): ViT's pre-norm blocks with layer scales
//! (`lambda1` on each branch) and an MLP or SwiGLU feed-forward, a class token, and position
//! embeddings interpolated bicubically (in float32, as transformers) to the image's patch grid, so
//! images of any size are taken. `pooler_output` is the class token after the final norm; the
//! classifier reads it next to the mean of the patch tokens.

use oxtorch_tensor::{DType, Device, Tensor};

use super::bert::BertOutput;
use super::classification::num_labels;
use super::vision::{size_pair, PatchEmbedding};
use crate::config::Config;
use crate::error::{Error, Result};
use crate::layers::{eager_attention, Activation, LayerNorm, Linear};
use crate::weights::{Vars, Weights};

/// A block's feed-forward: `fc2(act(fc1 x))`, or SwiGLU `down(silu(gate x) · up x)`.
#[derive(Debug, Clone)]
enum FeedForward {
    Mlp { fc1: Linear, fc2: Linear },
    SwiGlu { gate: Linear, up: Linear, down: Linear },
}

/// One DINOv2 block.
#[derive(Debug, Clone)]
struct Block {
    norm1: LayerNorm,
    q: Linear,
    k: Linear,
    v: Linear,
    o: Linear,
    scale1: Tensor,
    norm2: LayerNorm,
    ff: FeedForward,
    scale2: Tensor,
}

/// transformers' `Dinov2Model`.
#[derive(Debug, Clone)]
pub struct Dinov2Model {
    patches: PatchEmbedding,
    /// `[1, 1, hidden]`
    cls_token: Tensor,
    /// `[1, positions + 1, hidden]`
    positions: Tensor,
    blocks: Vec<Block>,
    layernorm: LayerNorm,
    heads: usize,
    act: Activation,
    image: (usize, usize),
    channels: usize,
    /// `register_tokens` `[1, registers, hidden]` (DINOv2 with registers)
    registers: Option<Tensor>,
}

impl Dinov2Model {
    /// `Dinov2Model` (or `Dinov2WithRegistersModel`) from `cfg` and `weights` (at the top, or
    /// under the classifier's `dinov2.` / `dinov2_with_registers.`).
    pub fn load(cfg: &Config, weights: &Weights) -> Result<Self> {
        let root = weights.vars("");
        let prefix = prefix_of(cfg)?;
        let vars =
            if root.contains(&format!("{prefix}.embeddings.cls_token")) { root.pp(prefix) } else { root };
        Self::load_at(&vars, cfg)
    }

    fn load_at(vars: &Vars<'_>, cfg: &Config) -> Result<Self> {
        let h = cfg.usize_or("hidden_size", 768)?;
        let heads = cfg.usize_or("num_attention_heads", 12)?;
        if heads == 0 || !h.is_multiple_of(heads) {
            return Err(Error::Config(format!(
                "hidden_size ({h}) must be a multiple of num_attention_heads ({heads})"
            )));
        }
        let layers =
            if cfg.get("num_hidden_layers").is_some() { cfg.layers("num_hidden_layers")? } else { 12 };
        let eps = cfg.f64_or("layer_norm_eps", 1e-6)?;
        let ratio = cfg.f64_or("mlp_ratio", 4.0)?;
        if !(ratio > 0.0 && ratio.is_finite()) {
            return Err(Error::Config(format!("mlp_ratio must be a positive number, got {ratio}")));
        }
        // `int(hidden_size * mlp_ratio)`, SwiGLU keeping two thirds rounded up to a multiple of 8.
        let inner = (h as f64 * ratio) as usize;
        if inner > 1 << 40 {
            return Err(Error::Config(format!("mlp_ratio ({ratio}) makes the MLP {inner} wide")));
        }
        let swiglu = cfg.bool_or("use_swiglu_ffn", false)?;
        let swiglu_inner = ((inner as f64 * 2.0 / 3.0) as usize).div_ceil(8) * 8;
        let qkv_bias = cfg.bool_or("qkv_bias", true)?;
        let image = size_pair(cfg, "image_size", 224)?;
        let patch = size_pair(cfg, "patch_size", 14)?;
        let channels = cfg.usize_or("num_channels", 3)?;
        let emb = vars.pp("embeddings");
        let patches =
            PatchEmbedding::load(&emb.pp("patch_embeddings.projection"), h, channels, patch, image, true)?
                .any_size();
        let count = patches.num_patches().saturating_add(1);
        let blocks = (0..layers)
            .map(|i| {
                let l = vars.pp("encoder.layer").pp(i);
                // The Hub's names (`attention.attention.query`), or transformers 5's (`attention.q_proj`).
                let hub =
                    l.contains("attention.attention.query.weight") || !l.contains("attention.q_proj.weight");
                let (q, k, v, o) = if hub {
                    (
                        "attention.attention.query",
                        "attention.attention.key",
                        "attention.attention.value",
                        "attention.output.dense",
                    )
                } else {
                    ("attention.q_proj", "attention.k_proj", "attention.v_proj", "attention.o_proj")
                };
                let ff = if swiglu {
                    swiglu_ffn(&l.pp("mlp"), h, swiglu_inner)?
                } else {
                    FeedForward::Mlp {
                        fc1: Linear::load(&l.pp("mlp.fc1"), h, inner, true)?,
                        fc2: Linear::load(&l.pp("mlp.fc2"), inner, h, true)?,
                    }
                };
                Ok(Block {
                    norm1: LayerNorm::load(&l.pp("norm1"), h, eps)?,
                    q: Linear::load(&l.pp(q), h, h, qkv_bias)?,
                    k: Linear::load(&l.pp(k), h, h, qkv_bias)?,
                    v: Linear::load(&l.pp(v), h, h, qkv_bias)?,
                    o: Linear::load(&l.pp(o), h, h, true)?,
                    scale1: l.pp("layer_scale1").get("lambda1", &[h])?,
                    norm2: LayerNorm::load(&l.pp("norm2"), h, eps)?,
                    ff,
                    scale2: l.pp("layer_scale2").get("lambda1", &[h])?,
                })
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(Dinov2Model {
            cls_token: emb.get("cls_token", &[1, 1, h])?,
            positions: emb.get("position_embeddings", &[1, count, h])?,
            layernorm: LayerNorm::load(&vars.pp("layernorm"), h, eps)?,
            act: Activation::from_name(cfg.str_or("hidden_act", "gelu")?)?,
            patches,
            blocks,
            heads,
            image,
            channels,
            registers: if prefix_of(cfg)? == "dinov2_with_registers" {
                let n = cfg.usize_or("num_register_tokens", 4)?;
                Some(emb.get("register_tokens", &[1, n, h])?)
            } else {
                None
            },
        })
    }

    /// The model as another's backbone: its tensors under `vars` (`embeddings`, `encoder`,
    /// `layernorm`), its config `cfg`.
    pub(crate) fn load_backbone(vars: &Vars<'_>, cfg: &Config) -> Result<Self> {
        Self::load_at(vars, cfg)
    }

    /// The final norm on one of the hidden states (a backbone's feature map).
    pub(crate) fn final_norm(&self, x: &Tensor) -> Result<Tensor> {
        self.layernorm.forward(x)
    }

    /// The device of the weights.
    pub fn device(&self) -> Device {
        self.patches.device()
    }

    /// The tokens before the patches: the class token and the registers.
    fn leading_tokens(&self) -> usize {
        1 + self.registers.as_ref().map_or(0, |r| r.dims()[1])
    }

    /// The dtype of the weights.
    pub fn dtype(&self) -> DType {
        self.patches.dtype()
    }

    /// The configured `[channels, height, width]` (other sizes are taken too).
    pub fn image_shape(&self) -> [usize; 3] {
        [self.channels, self.image.0, self.image.1]
    }

    /// The position embeddings for an image of `height × width`: as stored for the configured
    /// grid, else the patch positions resampled bicubically to the image's grid.
    fn positions_for(&self, height: usize, width: usize, patches: usize) -> Result<Tensor> {
        let stored = self.positions.dims()[1] - 1;
        if patches == stored && height == width {
            return Ok(self.positions.clone());
        }
        let d = self.positions.dims()[2];
        let side = (stored as f64).sqrt() as usize;
        if side * side != stored {
            return Err(Error::Config(format!(
                "DINOv2 interpolates a square grid of positions, but the checkpoint has {stored}"
            )));
        }
        let (ph, pw) = self.patches.patch();
        let (new_h, new_w) = (height / ph, width / pw);
        let cls = self.positions.narrow(1, 0, 1)?;
        let grid = self.positions.narrow(1, 1, stored)?.reshape([1, side, side, d])?.permute([0, 3, 1, 2])?;
        let grid = grid.to_dtype(DType::F32)?;
        // (With registers, transformers resamples antialiased.)
        let resized = if self.registers.is_some() {
            grid.interpolate_antialias(Some(&[new_h, new_w]), None, "bicubic", Some(false))?
        } else {
            grid.interpolate(Some(&[new_h, new_w]), None, "bicubic", Some(false))?
        };
        let resized = resized.to_dtype(self.positions.dtype())?;
        let resized = resized.permute([0, 2, 3, 1])?.reshape([1, new_h * new_w, d])?;
        Ok(Tensor::cat(&[&cls, &resized], 1)?)
    }

    /// `pixel_values` → `last_hidden_state` (after the final norm), `pooler_output` (its class
    /// token) and, with `output_hidden_states`, the embeddings and every block's output.
    pub fn forward(&self, pixel_values: &Tensor, output_hidden_states: bool) -> Result<BertOutput> {
        let (height, width) = (pixel_values.dims()[2], pixel_values.dims()[3]);
        let patches = self.patches.forward(&pixel_values.to_dtype(self.dtype())?)?;
        let (b, n, h) = (patches.dims()[0], patches.dims()[1], patches.dims()[2]);
        let cls = self.cls_token.expand([b, 1, h])?;
        let mut x = Tensor::cat(&[&cls, &patches], 1)?.add(&self.positions_for(height, width, n)?)?;
        if let Some(registers) = &self.registers {
            // After the class token, without positions.
            let r = registers.expand([b, registers.dims()[1], h])?;
            x = Tensor::cat(&[&x.narrow(1, 0, 1)?, &r, &x.narrow(1, 1, n)?], 1)?;
        }
        let mut hidden_states = Vec::new();
        for block in &self.blocks {
            if output_hidden_states {
                hidden_states.push(x.clone());
            }
            x = self.block(block, &x)?;
        }
        if output_hidden_states {
            hidden_states.push(x.clone());
        }
        let last_hidden_state = self.layernorm.forward(&x)?;
        let pooler_output = Some(last_hidden_state.select(1, 0)?);
        Ok(BertOutput { last_hidden_state, pooler_output, hidden_states })
    }

    fn block(&self, b: &Block, x: &Tensor) -> Result<Tensor> {
        let (n, s, h) = (x.dims()[0], x.dims()[1], x.dims()[2]);
        let d = h / self.heads;
        let normed = b.norm1.forward(x)?;
        let split = |t: Tensor| -> Result<Tensor> { Ok(t.reshape([n, s, self.heads, d])?.transpose(1, 2)?) };
        let (q, k, v) =
            (split(b.q.forward(&normed)?)?, split(b.k.forward(&normed)?)?, split(b.v.forward(&normed)?)?);
        let ctx = eager_attention(&q, &k, &v, None, 1.0 / (d as f64).sqrt(), None)?;
        let attn = b.o.forward(&ctx.transpose(1, 2)?.reshape([n, s, h])?)?;
        let x = attn.mul(&b.scale1)?.add(x)?;
        let normed = b.norm2.forward(&x)?;
        let ff = match &b.ff {
            FeedForward::Mlp { fc1, fc2 } => fc2.forward(&self.act.forward(&fc1.forward(&normed)?)?)?,
            FeedForward::SwiGlu { gate, up, down } => {
                down.forward(&gate.forward(&normed)?.silu()?.mul(&up.forward(&normed)?)?)?
            }
        };
        Ok(ff.mul(&b.scale2)?.add(&x)?)
    }
}

/// The classifier's prefix of the model's tensors: `dinov2`, or `dinov2_with_registers`.
fn prefix_of(cfg: &Config) -> Result<&'static str> {
    Ok(if cfg.model_type()? == "dinov2_with_registers" { "dinov2_with_registers" } else { "dinov2" })
}

/// The SwiGLU feed-forward: the Hub's fused `weights_in` (gate rows, then up rows) and
/// `weights_out`, or transformers 5's `gate_proj`, `up_proj`, `down_proj`.
fn swiglu_ffn(vars: &Vars<'_>, h: usize, inner: usize) -> Result<FeedForward> {
    if vars.contains("weights_in.weight") {
        let w = vars.get("weights_in.weight", &[2 * inner, h])?;
        let b = vars.get("weights_in.bias", &[2 * inner])?;
        let half = |i: usize| -> Result<Linear> {
            Ok(Linear {
                weight: w.narrow(0, (i * inner) as isize, inner)?,
                bias: Some(b.narrow(0, (i * inner) as isize, inner)?),
            })
        };
        return Ok(FeedForward::SwiGlu {
            gate: half(0)?,
            up: half(1)?,
            down: Linear::load(&vars.pp("weights_out"), inner, h, true)?,
        });
    }
    Ok(FeedForward::SwiGlu {
        gate: Linear::load(&vars.pp("gate_proj"), h, inner, true)?,
        up: Linear::load(&vars.pp("up_proj"), h, inner, true)?,
        down: Linear::load(&vars.pp("down_proj"), inner, h, true)?,
    })
}

/// transformers' `Dinov2ForImageClassification`: a linear classifier on the class token next to
/// the mean of the patch tokens (both after the final norm).
#[derive(Debug, Clone)]
pub struct Dinov2ForImageClassification {
    /// the model under `dinov2.`
    pub dinov2: Dinov2Model,
    classifier: Option<Linear>,
}

impl Dinov2ForImageClassification {
    /// The classifier from `cfg` and `weights`.
    pub fn load(cfg: &Config, weights: &Weights) -> Result<Self> {
        let dinov2 = Dinov2Model::load_at(&weights.vars(prefix_of(cfg)?), cfg)?;
        let h = cfg.usize_or("hidden_size", 768)?;
        let classifier = match num_labels(cfg)? {
            0 => None,
            n => Some(Linear::load(&weights.vars("classifier"), 2 * h, n, true)?),
        };
        Ok(Dinov2ForImageClassification { dinov2, classifier })
    }

    /// `logits` `[batch, num_labels]` and the model's outputs.
    pub fn forward(&self, pixel_values: &Tensor, output_hidden_states: bool) -> Result<(Tensor, BertOutput)> {
        let out = self.dinov2.forward(pixel_values, output_hidden_states)?;
        let last = &out.last_hidden_state;
        let lead = self.dinov2.leading_tokens();
        let n = last.dims()[1] - lead;
        let patches = last.narrow(1, lead as isize, n)?.mean([1], false)?;
        let features = Tensor::cat(&[&last.select(1, 0)?, &patches], 1)?;
        let logits = match &self.classifier {
            Some(c) => c.forward(&features)?,
            None => features,
        };
        Ok((logits, out))
    }
}
