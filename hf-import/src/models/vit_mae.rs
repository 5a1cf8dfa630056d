//! ViT-MAE (model type `vit_mae`: `ViTMAEModel`, `ViTMAEForPreTraining`; facebook/vit-mae-base):
//! a ViT that sees a random subset of its patches. Each image's patches (positions added) are
//! ranked by a `noise` input `[batch, patches]` (uniform random where absent, as transformers
//! draws it) and the `int(patches · (1 - mask_ratio))` lowest kept, in that order, behind the class
//! token; `mask` (1 where a patch was dropped) and `ids_restore` (each patch's rank) say which.
//! The pre-training model's decoder fills the dropped places with its mask token, restores the
//! patch order, and predicts every patch's pixels (`logits` `[batch, patches, patch² ·
//! channels]`); `loss` is their mean squared error on the dropped patches (against each patch's
//! pixels normalised to zero mean and unit variance with `norm_pix_loss`). Images must have the
//! model's `image_size`, as transformers needs without `interpolate_pos_encoding`.

use std::collections::BTreeMap;

use oxtorch_tensor::{DType, Device, Tensor};

use super::vision::pixels_of;
use super::vit::{load_hub_layer, load_layer, ViTConfig, ViTModel};
use crate::config::Config;
use crate::error::{Error, Result};
use crate::layers::{LayerNorm, Linear, PreNormEncoderLayer};
use crate::weights::{Vars, Weights};

/// The inputs ViT-MAE takes.
pub(crate) const INPUTS: &[&str] = &["pixel_values", "noise"];

/// `ViTMAEDecoder`: the latent widened, the dropped patches restored as mask tokens, ViT blocks,
/// a norm and the pixel prediction.
#[derive(Debug, Clone)]
struct Decoder {
    embed: Linear,
    /// `[1, 1, width]`
    mask_token: Tensor,
    /// `[1, 1 + patches, width]`
    positions: Tensor,
    layers: Vec<PreNormEncoderLayer>,
    norm: LayerNorm,
    pred: Linear,
    c: ViTConfig,
}

impl Decoder {
    fn load(v: &Vars<'_>, cfg: &Config, encoder: &ViTConfig, patches: usize) -> Result<Self> {
        let width = cfg.usize_or("decoder_hidden_size", 512)?;
        let c = ViTConfig {
            hidden: width,
            heads: cfg.usize_or("decoder_num_attention_heads", 16)?,
            intermediate: cfg.usize_or("decoder_intermediate_size", 2048)?,
            layers: cfg.usize_or("decoder_num_hidden_layers", 8)?,
            ..encoder.clone()
        };
        if c.heads == 0 || width % c.heads != 0 {
            return Err(Error::Config(format!(
                "decoder_hidden_size ({width}) is not a multiple of decoder_num_attention_heads ({})",
                c.heads
            )));
        }
        // (The Hub's checkpoints name the blocks `decoder_layers.N`; transformers 5 saves them as
        // `decoder_encoder.layer.N`, which it reads back as the former.)
        let blocks = ["decoder_layers", "decoder_encoder.layer"]
            .into_iter()
            .map(|name| v.pp(name))
            .find(|b| b.contains("0.layernorm_before.weight"))
            .unwrap_or_else(|| v.pp("decoder_layers"));
        let layers = (0..c.layers)
            .map(|i| {
                let b = blocks.pp(i);
                match b.contains("attention.attention.query.weight") {
                    true => load_hub_layer(&b, &c),
                    false => load_layer(&b, &c),
                }
            })
            .collect::<Result<Vec<_>>>()?;
        let (p, channels) = (encoder.patch.0, encoder.channels);
        Ok(Decoder {
            embed: Linear::load(&v.pp("decoder_embed"), encoder.hidden, width, true)?,
            mask_token: v.get("mask_token", &[1, 1, width])?,
            positions: v.get("decoder_pos_embed", &[1, patches.saturating_add(1), width])?,
            layers,
            norm: LayerNorm::load(&v.pp("decoder_norm"), width, c.eps)?,
            pred: Linear::load(
                &v.pp("decoder_pred"),
                width,
                p.saturating_mul(p).saturating_mul(channels),
                true,
            )?,
            c,
        })
    }

    /// The encoder's `latent` `[batch, 1 + kept, hidden]` and `ids_restore` `[batch, patches]` →
    /// every patch's predicted pixels `[batch, patches, patch² · channels]`.
    fn forward(&self, latent: &Tensor, ids_restore: &Tensor) -> Result<Tensor> {
        let h = self.embed.forward(latent)?;
        let (b, kept, width) = (h.dims()[0], h.dims()[1] - 1, h.dims()[2]);
        let n = ids_restore.dims()[1];
        let masked = self.mask_token.expand([b, n - kept, width])?.to_dtype(h.dtype())?;
        let shuffled = Tensor::cat(&[&h.narrow(1, 1, kept)?, &masked], 1)?;
        let index = ids_restore.unsqueeze(2)?.expand([b, n, width])?.contiguous()?;
        let restored = shuffled.gather(1, &index)?;
        let mut x = Tensor::cat(&[&h.narrow(1, 0, 1)?, &restored], 1)?.add(&self.positions)?;
        for layer in &self.layers {
            x = layer.forward(&x, None, self.c.heads, self.c.act)?;
        }
        let pixels = self.pred.forward(&self.norm.forward(&x)?)?;
        Ok(pixels.narrow(1, 1, n)?)
    }
}

/// transformers' `ViTMAEModel`, or `ViTMAEForPreTraining` with its decoder.
#[derive(Debug, Clone)]
pub struct ViTMae {
    vit: ViTModel,
    mask_ratio: f64,
    decoder: Option<Box<Decoder>>,
    norm_pix_loss: bool,
}

impl ViTMae {
    /// Loads `arch` from `cfg` and `weights` (the encoder under `vit.` or, for the base model, at
    /// the top; the decoder under `decoder.`).
    pub fn load(arch: &str, cfg: &Config, weights: &Weights) -> Result<Self> {
        let c = ViTConfig::from_config(cfg)?;
        let mask_ratio = cfg.f64_or("mask_ratio", 0.75)?;
        if !(0.0..=1.0).contains(&mask_ratio) {
            return Err(Error::Config(format!("mask_ratio must be in [0, 1], got {mask_ratio}")));
        }
        let vit = ViTModel::load_at(&weights.base_vars("vit"), c.clone())?.without_pooler();
        let patches = (c.image.0 / c.patch.0) * (c.image.1 / c.patch.1);
        let decoder = match arch {
            "ViTMAEModel" => None,
            "ViTMAEForPreTraining" => {
                // (transformers patchifies square images of square patches only.)
                if c.patch.0 != c.patch.1 || c.image.0 != c.image.1 || c.image.0 % c.patch.0 != 0 {
                    return Err(Error::Config(format!(
                        "ViT-MAE's pre-training model needs a square image_size that square patches divide, got {:?} and {:?}",
                        c.image, c.patch
                    )));
                }
                Some(Box::new(Decoder::load(&weights.vars("decoder"), cfg, &c, patches)?))
            }
            _ => return Err(Error::Unsupported(format!("architecture \"{arch}\" is not supported"))),
        };
        Ok(ViTMae { vit, mask_ratio, decoder, norm_pix_loss: cfg.bool_or("norm_pix_loss", false)? })
    }

    /// The device of the weights.
    pub fn device(&self) -> Device {
        self.vit.device()
    }

    /// `pixel_values` (and optionally `noise` `[batch, patches]`) → `last_hidden_state` (the base
    /// model) or `loss` and `logits` (pre-training), `mask`, `ids_restore`, and with
    /// `output_hidden_states` the encoder's `hidden_states.*`.
    pub fn forward_named(
        &self,
        inputs: &BTreeMap<String, Tensor>,
        output_hidden_states: bool,
    ) -> Result<Vec<(String, Tensor)>> {
        let c = self.vit.config();
        if let Some(name) = inputs.keys().find(|k| !INPUTS.contains(&k.as_str())) {
            return Err(Error::Input(format!(
                "unexpected input '{name}' (this model takes pixel_values, noise)"
            )));
        }
        let pixels: BTreeMap<String, Tensor> = inputs
            .iter()
            .filter(|(k, _)| k.as_str() == "pixel_values")
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        let x = pixels_of(&pixels, self.vit.dtype(), self.device(), c.channels)?;
        let (b, height, width) = (x.dims()[0], x.dims()[2], x.dims()[3]);
        if (height, width) != c.image {
            return Err(Error::Input(format!(
                "ViT-MAE takes {}×{} images (image_size), got {height}×{width}",
                c.image.0, c.image.1
            )));
        }
        let patches = self.vit.embed_patches(&x)?;
        let (n, hidden) = (patches.dims()[1], patches.dims()[2]);
        let positions = self.vit.positions();
        let patches = patches.add(&positions.narrow(1, 1, n)?)?;
        let noise = match inputs.get("noise") {
            Some(noise) if noise.dims() == [b, n] && noise.dtype().is_float() => noise.to(self.device())?,
            Some(noise) => {
                return Err(Error::Input(format!(
                    "input 'noise' must be a float tensor [batch, patches] = [{b}, {n}], got {:?} {:?}",
                    noise.dtype(),
                    noise.dims()
                )))
            }
            None => Tensor::rand([b, n], (DType::F32, self.device()))?,
        };
        // Each image's patches ranked by their noise; the lowest `keep` go on.
        let keep = (n as f64 * (1.0 - self.mask_ratio)) as usize;
        let ids_shuffle = noise.argsort(1, false)?;
        let ids_restore = ids_shuffle.argsort(1, false)?;
        let index = ids_shuffle.narrow(1, 0, keep)?.unsqueeze(2)?.expand([b, keep, hidden])?.contiguous()?;
        let kept = patches.gather(1, &index)?;
        let ranks_dropped = Tensor::cat(
            &[
                &Tensor::zeros([b, keep], (DType::F32, self.device()))?,
                &Tensor::ones([b, n - keep], (DType::F32, self.device()))?,
            ],
            1,
        )?;
        let mask = ranks_dropped.gather(1, &ids_restore)?;
        let cls = match self.vit.cls_token() {
            Some(t) => t.add(&positions.narrow(1, 0, 1)?)?.expand([b, 1, hidden])?,
            None => return Err(Error::Config("ViT-MAE's embeddings have no cls_token".into())),
        };
        let enc = self.vit.encode(Tensor::cat(&[&cls, &kept], 1)?, output_hidden_states)?;
        let mut out = match &self.decoder {
            None => vec![("last_hidden_state".to_string(), enc.last_hidden_state)],
            Some(decoder) => {
                let logits = decoder.forward(&enc.last_hidden_state, &ids_restore)?;
                let loss = self.loss(&x, &logits, &mask)?;
                vec![("loss".to_string(), loss), ("logits".to_string(), logits)]
            }
        };
        out.push(("mask".to_string(), mask));
        out.push(("ids_restore".to_string(), ids_restore));
        out.extend(enc.hidden_states.into_iter().enumerate().map(|(i, h)| (format!("hidden_states.{i}"), h)));
        Ok(out)
    }

    /// The mean over dropped patches of the mean squared error between `logits` and the patches
    /// of `pixels` (normalised per patch with `norm_pix_loss`), in float32.
    fn loss(&self, pixels: &Tensor, logits: &Tensor, mask: &Tensor) -> Result<Tensor> {
        let c = self.vit.config();
        let (b, channels, p) = (pixels.dims()[0], c.channels, c.patch.0);
        let (rows, cols) = (pixels.dims()[2] / p, pixels.dims()[3] / p);
        let mut target = pixels
            .to_dtype(DType::F32)?
            .reshape([b, channels, rows, p, cols, p])?
            .permute([0, 2, 4, 3, 5, 1])?
            .reshape([b, rows * cols, p * p * channels])?;
        if self.norm_pix_loss {
            // (`var` is unbiased, as torch's default.)
            let d = target.dims()[2] as f64;
            let mean = target.mean([2], true)?;
            let centred = target.sub(&mean)?;
            let var = centred.square()?.sum([2], true)?.div(d - 1.0)?;
            target = centred.div(&var.add(1e-6)?.sqrt()?)?;
        }
        let per_patch = logits.to_dtype(DType::F32)?.sub(&target)?.square()?.mean([2], false)?;
        Ok(per_patch.mul(mask)?.sum_all()?.div(&mask.sum_all()?)?)
    }
}
