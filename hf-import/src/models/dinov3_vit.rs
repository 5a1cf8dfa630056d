//! DINOv3's ViT (model type `dinov3_vit`: `DINOv3ViTModel`; facebook/dinov3-vits16-pretrain-lvd1689m):
//! patches, a class token and register tokens through pre-norm blocks whose attention turns the
//! patch tokens' queries and keys by a 2-D rotary embedding of the patch centres (normalised to
//! [−1, 1] over the image's grid, so any image size runs), each branch scaled per channel
//! (`layer_scale1`, `layer_scale2`), the MLP plain or gated; the final norm, the class token as
//! `pooler_output`.

use std::collections::BTreeMap;

use oxtorch_tensor::{DType, Device, Tensor};

use super::vision::{pixel_values, size_pair, PatchEmbedding};
use crate::config::Config;
use crate::error::{Error, Result};
use crate::layers::{eager_attention, Activation, LayerNorm, Linear};
use crate::weights::{Vars, Weights};

/// One block.
#[derive(Debug, Clone)]
struct Block {
    norm1: LayerNorm,
    q: Linear,
    k: Linear,
    v: Linear,
    o: Linear,
    scale1: Tensor,
    norm2: LayerNorm,
    /// `gate_proj` (the gated MLP's), `up_proj`, `down_proj`
    gate: Option<Linear>,
    up: Linear,
    down: Linear,
    scale2: Tensor,
}

/// transformers' `DINOv3ViTModel`.
#[derive(Debug, Clone)]
pub struct Dinov3Vit {
    patches: PatchEmbedding,
    cls_token: Tensor,
    /// `[1, registers, hidden]`
    registers: Tensor,
    blocks: Vec<Block>,
    norm: LayerNorm,
    heads: usize,
    act: Activation,
    /// the rotary inverse frequencies `[head_dim / 4]`
    inv_freq: Vec<f32>,
}

impl Dinov3Vit {
    /// Loads `DINOv3ViTModel` (its blocks under `layer.` or `model.layer.`).
    pub fn load(cfg: &Config, weights: &Weights) -> Result<Self> {
        let hidden = cfg.usize_or("hidden_size", 384)?;
        let heads = cfg.usize_or("num_attention_heads", 6)?;
        if heads == 0 || hidden % heads != 0 || (hidden / heads) % 4 != 0 {
            return Err(Error::Config(format!(
                "hidden_size ({hidden}) must split into num_attention_heads ({heads}) heads whose width is a multiple of 4"
            )));
        }
        let d = hidden / heads;
        let intermediate = cfg.usize_or("intermediate_size", 1536)?;
        let eps = cfg.f64_or("layer_norm_eps", 1e-5)?;
        let patch = size_pair(cfg, "patch_size", 16)?;
        // (DINOv3 never reads image_size: any image of a patch or more runs.)
        let image = size_pair(cfg, "image_size", 224)?;
        let image = (image.0.max(patch.0), image.1.max(patch.1));
        let channels = cfg.usize_or("num_channels", 3)?;
        let registers_n = cfg.usize_or("num_register_tokens", 0)?;
        let bias = |key: &str, default: bool| cfg.bool_or(key, default);
        let (qb, kb, vb, pb, mb) = (
            bias("query_bias", true)?,
            bias("key_bias", false)?,
            bias("value_bias", true)?,
            bias("proj_bias", true)?,
            bias("mlp_bias", true)?,
        );
        let gated = cfg.bool_or("use_gated_mlp", false)?;
        let root = weights.vars("");
        let emb = root.pp("embeddings");
        let patches =
            PatchEmbedding::load(&emb.pp("patch_embeddings"), hidden, channels, patch, image, true)?
                .any_size();
        let layers: Vars<'_> = match weights.names().any(|n| n.starts_with("model.layer.")) {
            true => root.pp("model").pp("layer"),
            false => root.pp("layer"),
        };
        let blocks = (0..cfg.usize_or("num_hidden_layers", 12)?)
            .map(|i| {
                let l = layers.pp(i);
                let att = l.pp("attention");
                let mlp = l.pp("mlp");
                Ok(Block {
                    norm1: LayerNorm::load(&l.pp("norm1"), hidden, eps)?,
                    q: Linear::load(&att.pp("q_proj"), hidden, hidden, qb)?,
                    k: Linear::load(&att.pp("k_proj"), hidden, hidden, kb)?,
                    v: Linear::load(&att.pp("v_proj"), hidden, hidden, vb)?,
                    o: Linear::load(&att.pp("o_proj"), hidden, hidden, pb)?,
                    scale1: l.pp("layer_scale1").get("lambda1", &[hidden])?,
                    norm2: LayerNorm::load(&l.pp("norm2"), hidden, eps)?,
                    gate: if gated {
                        Some(Linear::load(&mlp.pp("gate_proj"), hidden, intermediate, mb)?)
                    } else {
                        None
                    },
                    up: Linear::load(&mlp.pp("up_proj"), hidden, intermediate, mb)?,
                    down: Linear::load(&mlp.pp("down_proj"), intermediate, hidden, mb)?,
                    scale2: l.pp("layer_scale2").get("lambda1", &[hidden])?,
                })
            })
            .collect::<Result<Vec<_>>>()?;
        // `1 / θ^(arange(0, 1, 4 / head_dim))`, in float32.
        let theta = cfg.f64_or("rope_theta", 100.0)? as f32;
        let step = 4.0 / d as f32;
        let inv_freq = (0..d / 4).map(|i| 1.0 / theta.powf(i as f32 * step)).collect();
        Ok(Dinov3Vit {
            cls_token: emb.get("cls_token", &[1, 1, hidden])?,
            registers: match registers_n {
                0 => Tensor::zeros([1, 0, hidden], (patches.dtype(), patches.device()))?,
                n => emb.get("register_tokens", &[1, n, hidden])?,
            },
            patches,
            blocks,
            norm: LayerNorm::load(&root.pp("norm"), hidden, eps)?,
            heads,
            act: Activation::from_name(cfg.str_or("hidden_act", "gelu")?)?,
            inv_freq,
        })
    }

    /// The device of the weights.
    pub fn device(&self) -> Device {
        self.patches.device()
    }

    /// Runs the model on `pixel_values` `[batch, channels, height, width]`: `last_hidden_state`
    /// (after the final norm), `pooler_output` (its class token) and, with `output_hidden_states`,
    /// `hidden_states.*` (the embeddings, then each block's output).
    pub fn forward_named(
        &self,
        inputs: &BTreeMap<String, Tensor>,
        output_hidden_states: bool,
    ) -> Result<Vec<(String, Tensor)>> {
        let x = pixel_values(inputs, self.patches.dtype())?.to(self.device())?;
        let (height, width) = (x.dims()[2], x.dims()[3]);
        let p = self.patches.forward(&x)?;
        let (b, hidden) = (p.dims()[0], p.dims()[2]);
        let (ph, pw) = self.patches.patch();
        let (rows, cols) = (height / ph, width / pw);
        let mut h = Tensor::cat(
            &[
                &self.cls_token.expand([b, 1, hidden])?,
                &self.registers.expand([b, self.registers.dims()[1], hidden])?,
                &p,
            ],
            1,
        )?;
        let (cos, sin) = self.rotary(rows, cols, h.dtype(), h.device())?;
        let mut hidden_states = Vec::new();
        for block in &self.blocks {
            if output_hidden_states {
                hidden_states.push(h.clone());
            }
            h = self.block(block, &h, &cos, &sin)?;
        }
        if output_hidden_states {
            hidden_states.push(h.clone());
        }
        let h = self.norm.forward(&h)?;
        let pooled = h.select(1, 0)?;
        let mut out = vec![("last_hidden_state".to_string(), h), ("pooler_output".to_string(), pooled)];
        out.extend(hidden_states.into_iter().enumerate().map(|(i, h)| (format!("hidden_states.{i}"), h)));
        Ok(out)
    }

    /// The rotary cosines and sines `[1, 1, patches, head_dim]` of a `rows × cols` grid: each patch
    /// centre's `(y, x)` in [−1, 1] times `2π` and the inverse frequencies, the rows' angles then the
    /// columns', the whole repeated twice.
    fn rotary(&self, rows: usize, cols: usize, dtype: DType, device: Device) -> Result<(Tensor, Tensor)> {
        let two_pi = (2.0 * std::f64::consts::PI) as f32;
        let centre = |i: usize, n: usize| 2.0 * ((0.5 + i as f32) / n as f32) - 1.0;
        let quarter = self.inv_freq.len();
        let d = 4 * quarter;
        let (mut cos, mut sin) = (Vec::with_capacity(rows * cols * d), Vec::with_capacity(rows * cols * d));
        for r in 0..rows {
            for c in 0..cols {
                let (y, x) = (centre(r, rows), centre(c, cols));
                let angles: Vec<f32> = [y, x]
                    .iter()
                    .flat_map(|&coord| self.inv_freq.iter().map(move |&f| two_pi * coord * f))
                    .collect();
                for _ in 0..2 {
                    cos.extend(angles.iter().map(|a| a.cos()));
                    sin.extend(angles.iter().map(|a| a.sin()));
                }
            }
        }
        let shape = [1, 1, rows * cols, d];
        Ok((
            Tensor::from_vec(cos, shape)?.to_dtype(dtype)?.to(device)?,
            Tensor::from_vec(sin, shape)?.to_dtype(dtype)?.to(device)?,
        ))
    }

    fn block(&self, b: &Block, x: &Tensor, cos: &Tensor, sin: &Tensor) -> Result<Tensor> {
        let (batch, n, hidden) = (x.dims()[0], x.dims()[1], x.dims()[2]);
        let (heads, d) = (self.heads, hidden / self.heads);
        let normed = b.norm1.forward(x)?;
        let split = |t: Tensor| -> Result<Tensor> { Ok(t.reshape([batch, n, heads, d])?.transpose(1, 2)?) };
        let (q, k, v) =
            (split(b.q.forward(&normed)?)?, split(b.k.forward(&normed)?)?, split(b.v.forward(&normed)?)?);
        let patches = cos.dims()[2];
        let prefix = n - patches;
        let turn = |t: &Tensor| -> Result<Tensor> {
            let (head, rest) = (t.narrow(2, 0, prefix)?, t.narrow(2, prefix as isize, patches)?);
            let (r1, r2) = (rest.narrow(3, 0, d / 2)?, rest.narrow(3, (d / 2) as isize, d / 2)?);
            let rotated = Tensor::cat(&[&r2.neg()?, &r1], 3)?;
            let turned = rest.mul(cos)?.add(&rotated.mul(sin)?)?;
            Ok(Tensor::cat(&[&head, &turned], 2)?)
        };
        let (q, k) = (turn(&q)?, turn(&k)?);
        let ctx = eager_attention(&q, &k, &v, None, 1.0 / (d as f64).sqrt(), None)?;
        let a = b.o.forward(&ctx.transpose(1, 2)?.reshape([batch, n, hidden])?)?;
        let x = a.mul(&b.scale1)?.add(x)?;
        let m = b.norm2.forward(&x)?;
        let inner = match &b.gate {
            Some(g) => self.act.forward(&g.forward(&m)?)?.mul(&b.up.forward(&m)?)?,
            None => self.act.forward(&b.up.forward(&m)?)?,
        };
        Ok(b.down.forward(&inner)?.mul(&b.scale2)?.add(&x)?)
    }
}
