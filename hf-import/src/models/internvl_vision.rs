//! InternVL's vision tower (`internvl_vision`, transformers' `InternVLVisionModel`, the `-hf`
//! checkpoints' InternViT): the patches after a class token, absolute positions, pre-norm blocks
//! (layer norms or RMS norms by `norm_type`) whose attention (q/k/v biases by `attention_bias`,
//! RMS-normed q and k over the whole width with `use_qk_norm`) and MLP are scaled per channel
//! (`lambda_1`, `lambda_2`) before their residuals, and a final layer norm unless
//! `use_mean_pooling`. Images of the configured size, as its processor makes them.

use oxtorch_tensor::{DType, Device, Tensor};

use super::vision::{size_pair, PatchEmbedding};
use crate::config::Config;
use crate::error::{Error, Result};
use crate::layers::{eager_attention, Activation, LayerNorm, Linear, RmsNorm, RmsNormStyle};
use crate::weights::Vars;

/// A layer norm or an RMS norm (`norm_type`).
#[derive(Debug, Clone)]
enum Norm {
    Layer(LayerNorm),
    Rms(RmsNorm),
}

impl Norm {
    fn load(vars: &Vars<'_>, dim: usize, eps: f64, rms: bool) -> Result<Self> {
        Ok(if rms {
            Norm::Rms(RmsNorm::load(vars, dim, eps, RmsNormStyle::Llama)?)
        } else {
            Norm::Layer(LayerNorm::load(vars, dim, eps)?)
        })
    }

    fn forward(&self, x: &Tensor) -> Result<Tensor> {
        match self {
            Norm::Layer(n) => n.forward(x),
            Norm::Rms(n) => n.forward(x),
        }
    }
}

/// One `InternVLVisionLayer`.
#[derive(Debug, Clone)]
struct Block {
    norm_before: Norm,
    q: Linear,
    k: Linear,
    v: Linear,
    /// `use_qk_norm`'s norms of q and k
    qk_norms: Option<(RmsNorm, RmsNorm)>,
    out: Linear,
    /// `lambda_1`, `lambda_2` `[hidden]`
    scales: (Tensor, Tensor),
    norm_after: Norm,
    fc1: Linear,
    fc2: Linear,
}

impl Block {
    fn forward(&self, x: &Tensor, heads: usize, act: Activation) -> Result<Tensor> {
        let (b, s, h) = (x.dims()[0], x.dims()[1], x.dims()[2]);
        let d = h / heads;
        let normed = self.norm_before.forward(x)?;
        let (mut q, mut k) = (self.q.forward(&normed)?, self.k.forward(&normed)?);
        if let Some((qn, kn)) = &self.qk_norms {
            (q, k) = (qn.forward(&q)?, kn.forward(&k)?);
        }
        let split = |t: Tensor| -> Result<Tensor> { Ok(t.reshape([b, s, heads, d])?.transpose(1, 2)?) };
        let v = split(self.v.forward(&normed)?)?;
        let ctx = eager_attention(&split(q)?, &split(k)?, &v, None, 1.0 / (d as f64).sqrt(), None)?;
        let attended = self.out.forward(&ctx.transpose(1, 2)?.reshape([b, s, h])?)?;
        let x = attended.mul(&self.scales.0)?.add(x)?;
        let inner = act.forward(&self.fc1.forward(&self.norm_after.forward(&x)?)?)?;
        Ok(self.fc2.forward(&inner)?.mul(&self.scales.1)?.add(&x)?)
    }
}

/// `InternVLVisionModel` (see the module docs).
#[derive(Debug, Clone)]
pub(crate) struct InternVisionTower {
    patches: PatchEmbedding,
    /// `cls_token` `[1, 1, hidden]`
    class_token: Tensor,
    /// `position_embeddings` `[1, patches + 1, hidden]`, with `use_absolute_position_embeddings`
    positions: Option<Tensor>,
    blocks: Vec<Block>,
    /// the final layer norm (none with `use_mean_pooling`)
    norm: Option<LayerNorm>,
    heads: usize,
    act: Activation,
    hidden: usize,
    image: (usize, usize),
    patch: (usize, usize),
}

impl InternVisionTower {
    /// The tower under `vars` (`embeddings`, `encoder.layer.N`, `layernorm`) from its config.
    pub(crate) fn load(vars: &Vars<'_>, cfg: &Config) -> Result<Self> {
        let hidden = cfg.usize_or("hidden_size", 1024)?;
        let heads = cfg.usize_or("num_attention_heads", 16)?;
        if heads == 0 || !hidden.is_multiple_of(heads) {
            return Err(Error::Config(format!(
                "hidden_size ({hidden}) must be a multiple of num_attention_heads ({heads})"
            )));
        }
        let inner = cfg.usize_or("intermediate_size", 4096)?;
        let layers =
            if cfg.get("num_hidden_layers").is_some() { cfg.layers("num_hidden_layers")? } else { 24 };
        let eps = cfg.f64_or("layer_norm_eps", 1e-6)?;
        let rms = match cfg.str_or("norm_type", "layer_norm")? {
            "layer_norm" => false,
            "rms_norm" => true,
            other => {
                return Err(Error::Config(format!(
                    "norm_type must be \"layer_norm\" or \"rms_norm\", got \"{other}\""
                )))
            }
        };
        let bias = cfg.bool_or("attention_bias", false)?;
        let qk_norm = cfg.bool_or("use_qk_norm", false)?;
        let (image, patch) = (size_pair(cfg, "image_size", 448)?, size_pair(cfg, "patch_size", 14)?);
        let channels = cfg.usize_or("num_channels", 3)?;
        let emb = vars.pp("embeddings");
        let patches = PatchEmbedding::load(
            &emb.pp("patch_embeddings.projection"),
            hidden,
            channels,
            patch,
            image,
            true,
        )?;
        let count = patches.num_patches().saturating_add(1);
        let positions = if cfg.bool_or("use_absolute_position_embeddings", true)? {
            Some(emb.get("position_embeddings", &[1, count, hidden])?)
        } else {
            None
        };
        let blocks = (0..layers)
            .map(|i| {
                let l = vars.pp("encoder.layer").pp(i);
                let a = l.pp("attention");
                let qk_norms = if qk_norm {
                    let n = |name: &str| RmsNorm::load(&a.pp(name), hidden, 1e-6, RmsNormStyle::Llama);
                    Some((n("q_norm")?, n("k_norm")?))
                } else {
                    None
                };
                Ok(Block {
                    norm_before: Norm::load(&l.pp("layernorm_before"), hidden, eps, rms)?,
                    q: Linear::load(&a.pp("q_proj"), hidden, hidden, bias)?,
                    k: Linear::load(&a.pp("k_proj"), hidden, hidden, bias)?,
                    v: Linear::load(&a.pp("v_proj"), hidden, hidden, bias)?,
                    qk_norms,
                    out: Linear::load(&a.pp("projection_layer"), hidden, hidden, true)?,
                    scales: (l.get("lambda_1", &[hidden])?, l.get("lambda_2", &[hidden])?),
                    norm_after: Norm::load(&l.pp("layernorm_after"), hidden, eps, rms)?,
                    fc1: Linear::load(&l.pp("mlp.fc1"), hidden, inner, true)?,
                    fc2: Linear::load(&l.pp("mlp.fc2"), inner, hidden, true)?,
                })
            })
            .collect::<Result<Vec<_>>>()?;
        let norm = if cfg.bool_or("use_mean_pooling", true)? {
            None
        } else {
            Some(LayerNorm::load(&vars.pp("layernorm"), hidden, eps)?)
        };
        Ok(InternVisionTower {
            class_token: emb.get("cls_token", &[1, 1, hidden])?,
            patches,
            positions,
            blocks,
            norm,
            heads,
            act: Activation::from_name(cfg.str_or("hidden_act", "gelu")?)?,
            hidden,
            image,
            patch,
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

    /// `(height, width)` of the images and of a patch.
    pub(crate) fn image_and_patch(&self) -> ((usize, usize), (usize, usize)) {
        (self.image, self.patch)
    }

    /// The weights' dtype, which the pixels are cast to.
    pub(crate) fn dtype(&self) -> DType {
        self.patches.dtype()
    }

    /// The weights' device.
    pub(crate) fn device(&self) -> Device {
        self.patches.device()
    }

    /// `pixels` `[images, channels, height, width]` → the last hidden state (after the final norm,
    /// where there is one) and the hidden states (the embeddings, then each block's output).
    pub(crate) fn forward(&self, pixels: &Tensor) -> Result<(Tensor, Vec<Tensor>)> {
        let x = self.patches.forward(pixels)?;
        let (b, h) = (x.dims()[0], x.dims()[2]);
        let class = self.class_token.to_dtype(x.dtype())?.expand([b, 1, h])?;
        let mut x = Tensor::cat(&[&class, &x], 1)?;
        if let Some(p) = &self.positions {
            x = x.add(p)?;
        }
        let mut hidden_states = vec![x.clone()];
        for block in &self.blocks {
            x = block.forward(&x, self.heads, self.act)?;
            hidden_states.push(x.clone());
        }
        let last = match &self.norm {
            Some(n) => n.forward(&x)?,
            None => x,
        };
        Ok((last, hidden_states))
    }
}
