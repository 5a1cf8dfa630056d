//! The multi-modal projectors of the image classes of [`super::llava_images`]: the features of
//! the vision tower into the language model's width.

use oxtorch_tensor::Tensor;
use serde_json::Value;

use super::llava_images::Class;
use super::vision_tower::VisionTower;
use crate::config::Config;
use crate::error::{Error, Result};
use crate::layers::{Activation, LayerNorm, Linear, RmsNorm, RmsNormStyle};
use crate::weights::Vars;

/// `LlavaMultiModalProjector` and `VipLlavaMultiModalProjector` (`Mlp`), and
/// `PaliGemmaMultiModalProjector` (`Linear`).
#[derive(Debug, Clone)]
pub(crate) enum Projector {
    Mlp {
        /// VipLLaVA's `projector_layernorm`
        norm: Option<LayerNorm>,
        linear_1: Linear,
        act: Activation,
        linear_2: Linear,
    },
    /// `linear`
    Linear(Linear),
    /// Idefics3's connector: the pixel shuffle, then `modality_projection.proj`
    ShuffleLinear { factor: usize, linear: Linear },
    /// Mistral 3's: `norm`, each image's squares of `merge × merge` patches concatenated
    /// (`F.unfold`'s channel-major order) through `patch_merger.merging_layer`, then `linear_1`,
    /// the activation, `linear_2` (see [`ImageEncoder::forward_pixtral`])
    MergedMlp {
        norm: RmsNorm,
        merge: usize,
        merging: Linear,
        linear_1: Linear,
        act: Activation,
        linear_2: Linear,
    },
    /// InternVL's: the pixel shuffle, `layer_norm`, `linear_1`, the activation, `linear_2`
    ShuffleMlp { factor: usize, norm: LayerNorm, linear_1: Linear, act: Activation, linear_2: Linear },
    /// Aya Vision's: the features' pixel shuffle (each `factor × factor` square of tokens as
    /// one), a layer norm, `linear_1`, SwiGLU (`silu` of the second half times the first),
    /// `linear_2`
    ShuffleSwiGlu { factor: usize, norm: LayerNorm, linear_1: Linear, linear_2: Linear },
}

impl Projector {
    pub(crate) fn forward(&self, x: &Tensor) -> Result<Tensor> {
        match self {
            Projector::Mlp { norm, linear_1, act, linear_2 } => {
                let x = match norm {
                    Some(norm) => norm.forward(x)?,
                    None => x.clone(),
                };
                linear_2.forward(&act.forward(&linear_1.forward(&x)?)?)
            }
            Projector::Linear(linear) => linear.forward(x),
            Projector::MergedMlp { .. } => Err(Error::Unsupported(
                "Mistral 3's projector merges each image's patches by its grid".into(),
            )),
            Projector::ShuffleMlp { factor, norm, linear_1, act, linear_2 } => {
                let x = pixel_shuffle(x, *factor)?;
                let (n, width) = (x.dims()[0], x.dims()[3]);
                let x = norm.forward(&x.reshape([n, x.numel() / n / width.max(1), width])?)?;
                linear_2.forward(&act.forward(&linear_1.forward(&x)?)?)
            }
            Projector::ShuffleLinear { factor, linear } => {
                let x = pixel_shuffle(x, *factor)?;
                let (n, width) = (x.dims()[0], x.dims()[3]);
                linear.forward(&x.reshape([n, x.numel() / n / width.max(1), width])?)
            }
            Projector::ShuffleSwiGlu { factor, norm, linear_1, linear_2 } => {
                let h = linear_1.forward(&norm.forward(&pixel_shuffle(x, *factor)?)?)?;
                let half = h.dims()[h.rank() - 1] / 2;
                let (up, gate) = (h.narrow(-1, 0, half)?, h.narrow(-1, half as isize, half)?);
                let out = linear_2.forward(&gate.silu()?.mul(&up)?)?;
                let (n, width) = (out.dims()[0], out.dims()[out.rank() - 1]);
                Ok(out.reshape([n, out.numel() / n / width.max(1), width])?)
            }
        }
    }
}

/// The pixel shuffle of `x` `[images, side², dim]` (Aya Vision's, Idefics3's): `[images, side / f,
/// side / f, dim · f²]`, each output token the `f × f` square of input tokens (transformers'
/// reshapes and permutes).
fn pixel_shuffle(x: &Tensor, f: usize) -> Result<Tensor> {
    let (n, s, d) = (x.dims()[0], x.dims()[1], x.dims()[2]);
    let side = (s as f64).sqrt() as usize;
    if side * side != s || f == 0 || !side.is_multiple_of(f) {
        return Err(Error::Input(format!(
            "the pixel shuffle needs a square of tokens whose side the factor {f} divides, got {s} tokens"
        )));
    }
    let x = x.reshape([n, side, side / f, d * f])?.permute([0, 2, 1, 3])?.contiguous()?;
    Ok(x.reshape([n, side / f, side / f, d * f * f])?.permute([0, 2, 1, 3])?.contiguous()?)
}

/// The multi-modal projector of `class` under `root` from `width`-wide features of `tower` to
/// `text_hidden`.
pub(crate) fn load_projector(
    class: Class,
    cfg: &Config,
    root: &Vars<'_>,
    tower: &VisionTower,
    width: usize,
    text_hidden: usize,
) -> Result<Projector> {
    let vip = class == Class::VipLlava;
    Ok(match class {
        Class::AyaVision => {
            let factor = cfg.usize_or("downsample_factor", 2)?;
            let shuffled = width
                .checked_mul(factor)
                .and_then(|w| w.checked_mul(factor))
                .ok_or_else(|| Error::Config("vision features too wide".into()))?;
            let inner = cfg.usize_or("alignment_intermediate_size", text_hidden)?;
            let eps = cfg.f64_or("adapter_layer_norm_eps", 1e-6)?;
            Projector::ShuffleSwiGlu {
                factor,
                norm: LayerNorm::load(&root.pp("layernorm"), shuffled, eps)?,
                linear_1: Linear::load(&root.pp("linear_1"), shuffled, inner, true)?,
                linear_2: Linear::load(&root.pp("linear_2"), inner / 2, text_hidden, true)?,
            }
        }
        Class::Mistral3 => {
            let merge = cfg.usize_or("spatial_merge_size", 2)?;
            let hidden = tower.hidden();
            let merged = hidden
                .checked_mul(merge)
                .and_then(|w| w.checked_mul(merge))
                .filter(|&w| w > 0)
                .ok_or_else(|| Error::Config(format!("spatial_merge_size {merge}")))?;
            let eps = match cfg.get("text_config") {
                Some(Value::Object(t)) => t.get("rms_norm_eps").and_then(Value::as_f64).unwrap_or(1e-6),
                _ => 1e-5,
            };
            let bias = cfg.bool_or("multimodal_projector_bias", false)?;
            Projector::MergedMlp {
                norm: RmsNorm::load(&root.pp("norm"), hidden, eps, RmsNormStyle::Llama)?,
                merge,
                merging: Linear::load(&root.pp("patch_merger.merging_layer"), merged, hidden, false)?,
                linear_1: Linear::load(&root.pp("linear_1"), width, text_hidden, bias)?,
                act: Activation::from_name(cfg.str_or("projector_hidden_act", "gelu")?)?,
                linear_2: Linear::load(&root.pp("linear_2"), text_hidden, text_hidden, bias)?,
            }
        }
        Class::InternVl => {
            let ratio = cfg.f64_or("downsample_ratio", 0.5)?;
            let factor = if ratio > 0.0 && ratio <= 1.0 { (1.0 / ratio) as usize } else { 0 };
            let shuffled = width.checked_mul(factor).and_then(|w| w.checked_mul(factor)).filter(|&w| w > 0);
            let shuffled = shuffled.ok_or_else(|| {
                Error::Config(format!("downsample_ratio must be in (0, 1] (1 / an integer), got {ratio}"))
            })?;
            Projector::ShuffleMlp {
                factor,
                norm: LayerNorm::load(&root.pp("layer_norm"), shuffled, 1e-5)?,
                linear_1: Linear::load(&root.pp("linear_1"), shuffled, text_hidden, true)?,
                act: Activation::from_name(cfg.str_or("projector_hidden_act", "gelu")?)?,
                linear_2: Linear::load(&root.pp("linear_2"), text_hidden, text_hidden, true)?,
            }
        }
        _ => {
            let bias = vip || cfg.bool_or("multimodal_projector_bias", true)?;
            Projector::Mlp {
                norm: if vip {
                    Some(LayerNorm::load(
                        &root.pp("projector_layernorm"),
                        width,
                        cfg.f64_or("projector_layernorm_eps", 1e-5)?,
                    )?)
                } else {
                    None
                },
                linear_1: Linear::load(&root.pp("linear_1"), width, text_hidden, bias)?,
                act: Activation::from_name(cfg.str_or("projector_hidden_act", "gelu")?)?,
                linear_2: Linear::load(&root.pp("linear_2"), text_hidden, text_hidden, bias)?,
            }
        }
    })
}
