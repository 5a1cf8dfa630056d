//! PVTv2 (model type `pvt_v2`: `PvtV2Model`, `PvtV2ForImageClassification`; OpenGVLab/pvt_v2_b0):
//! SegFormer's encoder ([`super::segformer`]) under its own names, with `layer_norm_eps`,
//! optional query/key/value biases, and, with `linear_attention`, keys and values from the map
//! pooled to 7×7 (a 1×1 convolution, a norm, GELU) and a ReLU in the MLP. `last_hidden_state` and
//! `hidden_states.*` are the stages' maps; the classifier reads the last map's mean.

use super::classification::num_labels;
use super::segformer::{Block, EncoderSizes, Head, Reduction, Segformer, Stage};
use crate::config::Config;
use crate::error::{Error, Result};
use crate::layers::{Activation, Conv2d, LayerNorm, Linear};
use crate::weights::Weights;

/// Loads `PvtV2Model` (`pvt_v2.*` or unprefixed) or `PvtV2ForImageClassification`.
pub(super) fn load(arch: &str, cfg: &Config, weights: &Weights) -> Result<Segformer> {
    let EncoderSizes { n, depths, sr, hidden, patches, strides, heads, ratios } =
        EncoderSizes::read(cfg, &[8, 8, 4, 4])?;
    let eps = cfg.f64_or("layer_norm_eps", 1e-6)?;
    let qkv_bias = cfg.bool_or("qkv_bias", true)?;
    let linear = cfg.bool_or("linear_attention", false)?;
    let channels = cfg.usize_or("num_channels", 3)?;
    let enc = weights.base_vars("pvt_v2").pp("encoder.layers");
    let mut stages = Vec::with_capacity(n);
    for i in 0..n {
        let dim = hidden[i];
        if dim % heads[i] != 0 {
            return Err(Error::Config(format!(
                "hidden_sizes[{i}] ({dim}) is not a multiple of num_attention_heads[{i}] ({})",
                heads[i]
            )));
        }
        let input = if i == 0 { channels } else { hidden[i - 1] };
        let inner = dim.checked_mul(ratios[i]).ok_or_else(|| Error::Config("mlp_ratios overflow".into()))?;
        let sv = enc.pp(i);
        let blocks = (0..depths[i])
            .map(|j| {
                let b = sv.pp("blocks").pp(j);
                let a = b.pp("attention");
                let norm = || LayerNorm::load(&a.pp("layer_norm"), dim, eps);
                let reduction = match (linear, sr[i] > 1) {
                    (true, _) => Some(Reduction::Pooled(
                        Conv2d::load(&a.pp("spatial_reduction"), (dim, dim), 1, (1, 0, 1), true)?,
                        norm()?,
                    )),
                    (false, true) => Some(Reduction::Strided(
                        Conv2d::load(&a.pp("spatial_reduction"), (dim, dim), sr[i], (sr[i], 0, 1), true)?,
                        norm()?,
                    )),
                    (false, false) => None,
                };
                let m = b.pp("mlp");
                Ok(Block {
                    norm1: LayerNorm::load(&b.pp("layer_norm_1"), dim, eps)?,
                    query: Linear::load(&a.pp("query"), dim, dim, qkv_bias)?,
                    key: Linear::load(&a.pp("key"), dim, dim, qkv_bias)?,
                    value: Linear::load(&a.pp("value"), dim, dim, qkv_bias)?,
                    out: Linear::load(&a.pp("proj"), dim, dim, true)?,
                    reduction,
                    norm2: LayerNorm::load(&b.pp("layer_norm_2"), dim, eps)?,
                    fc1: Linear::load(&m.pp("dense1"), dim, inner, true)?,
                    relu_inner: linear,
                    dwconv: Conv2d::load(&m.pp("dwconv.dwconv"), (inner, inner), 3, (1, 1, inner), true)?,
                    fc2: Linear::load(&m.pp("dense2"), inner, dim, true)?,
                })
            })
            .collect::<Result<Vec<_>>>()?;
        let pe = sv.pp("patch_embedding");
        stages.push(Stage {
            embed: Conv2d::load(
                &pe.pp("proj"),
                (input, dim),
                patches[i],
                (strides[i], patches[i] / 2, 1),
                true,
            )?,
            embed_norm: LayerNorm::load(&pe.pp("layer_norm"), dim, eps)?,
            blocks,
            norm: LayerNorm::load(&sv.pp("layer_norm"), dim, eps)?,
            heads: heads[i],
        });
    }
    let head = match arch {
        "PvtV2Model" => Head::None,
        // (transformers' classifier reads `hidden_sizes[-1]` features: the last stage's.)
        "PvtV2ForImageClassification" if hidden[n - 1] != hidden[hidden.len() - 1] => {
            return Err(Error::Config(format!(
                "PVTv2's classifier reads hidden_sizes[-1] ({}) features, but its last stage gives {}",
                hidden[hidden.len() - 1],
                hidden[n - 1]
            )))
        }
        "PvtV2ForImageClassification" => Head::Classifier(match num_labels(cfg)? {
            0 => None,
            labels => {
                Some(Linear::load(&weights.vars("classifier"), hidden[hidden.len() - 1], labels, true)?)
            }
        }),
        _ => return Err(Error::Unsupported(format!("architecture \"{arch}\" is not supported"))),
    };
    Ok(Segformer {
        stages,
        act: Activation::from_name(cfg.str_or("hidden_act", "gelu")?)?,
        reshape_last: true,
        head,
        channels,
    })
}
