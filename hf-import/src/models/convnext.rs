//! ConvNeXt and ConvNeXt V2 (model types `convnext`, `convnextv2`: `ConvNextModel`,
//! `ConvNextForImageClassification` and V2's; facebook/convnext-tiny-224,
//! facebook/convnextv2-tiny-1k-224): a patchifying convolution and a channel norm, stages whose
//! first layer is preceded (after the first stage) by a channel norm and a 2×2 stride-2
//! convolution, layers of a 7×7 depthwise convolution, a norm over the channels, an MLP (V2: with
//! global response normalisation after its activation) scaled per channel (V1's
//! `layer_scale_parameter`) and added back; the mean over positions, layer-normed, as
//! `pooler_output` and the classifier's input. Any image size runs.

use std::collections::BTreeMap;

use oxtorch_tensor::{DType, Device, Tensor};

use super::classification::num_labels;
use super::vision::{pixels_of, pooled_outputs};
use crate::config::Config;
use crate::error::{Error, Result};
use crate::layers::{Activation, Conv2d, LayerNorm, Linear};
use crate::weights::{Vars, Weights};

/// ConvNeXt's convolutions: biased, padded by half the kernel where they do not stride.
fn conv(v: &Vars<'_>, io: (usize, usize), kernel: usize, stride: usize, groups: usize) -> Result<Conv2d> {
    let padding = if stride == 1 { kernel / 2 } else { 0 };
    Conv2d::load(v, io, kernel, (stride, padding, groups), true)
}

/// A layer norm over the channels of `[batch, channels, height, width]` (`channels_first`).
fn channel_norm(norm: &LayerNorm, x: &Tensor) -> Result<Tensor> {
    Ok(norm.forward(&x.permute([0, 2, 3, 1])?)?.permute([0, 3, 1, 2])?)
}

/// One ConvNeXt layer.
#[derive(Debug, Clone)]
struct Block {
    dwconv: Conv2d,
    norm: LayerNorm,
    pwconv1: Linear,
    pwconv2: Linear,
    /// V2's global response normalisation: `weight`, `bias` `[1, 1, 1, 4 · dim]`
    grn: Option<(Tensor, Tensor)>,
    /// V1's per-channel scale of the branch
    scale: Option<Tensor>,
}

impl Block {
    fn forward(&self, x: &Tensor, act: Activation) -> Result<Tensor> {
        let h = self.dwconv.forward(x)?.permute([0, 2, 3, 1])?;
        let mut h = act.forward(&self.pwconv1.forward(&self.norm.forward(&h)?)?)?;
        if let Some((w, b)) = &self.grn {
            // ‖h‖₂ over the positions per channel (summed in f32, as torch's `vector_norm`), over
            // its mean across channels.
            let g = h.to_dtype(DType::F32)?.square()?.sum([1, 2], true)?.sqrt()?;
            let n = g.div(&g.mean([-1], true)?.add(1e-6)?)?.to_dtype(h.dtype())?;
            h = w.mul(&h.mul(&n)?)?.add(b)?.add(&h)?;
        }
        let mut h = self.pwconv2.forward(&h)?;
        if let Some(s) = &self.scale {
            h = s.mul(&h)?;
        }
        Ok(x.add(&h.permute([0, 3, 1, 2])?)?)
    }
}

/// One stage: its downsampling (a channel norm and a 2×2 stride-2 convolution), then its layers.
#[derive(Debug, Clone)]
struct Stage {
    down: Option<(LayerNorm, Conv2d)>,
    blocks: Vec<Block>,
}

/// transformers' `ConvNextModel` / `ConvNextV2Model`, with the image classifier's head when loaded
/// as that.
#[derive(Debug, Clone)]
pub struct ConvNext {
    patch: Conv2d,
    patch_norm: LayerNorm,
    stages: Vec<Stage>,
    /// the norm of the pooled features
    norm: LayerNorm,
    act: Activation,
    /// the classifier (`None` inside: `num_labels` 0, the pooled features are the logits); `None`
    /// for the base model
    classifier: Option<Option<Linear>>,
    channels: usize,
}

impl ConvNext {
    /// Loads `arch`: `ConvNextModel`, `ConvNextForImageClassification` or V2's (`ConvNextV2*`),
    /// under `convnext.` / `convnextv2.` or unprefixed.
    pub fn load(arch: &str, cfg: &Config, weights: &Weights) -> Result<Self> {
        let v2 = arch.starts_with("ConvNextV2");
        let channels = cfg.usize_or("num_channels", 3)?;
        let patch = cfg.usize_or("patch_size", 4)?;
        let hidden = cfg.usize_list_or("hidden_sizes", &[96, 192, 384, 768], 1)?;
        let depths = cfg.usize_list_or("depths", &[3, 3, 9, 3], 0)?;
        let stages_n = cfg.usize_or("num_stages", 4)?;
        if hidden.len() != stages_n || depths.len() != stages_n {
            return Err(Error::Config(format!(
                "hidden_sizes ({}) and depths ({}) must have num_stages ({stages_n}) entries",
                hidden.len(),
                depths.len()
            )));
        }
        let eps = cfg.f64_or("layer_norm_eps", 1e-12)?;
        // V1's branch scale exists where `layer_scale_init_value` is positive, as transformers builds it.
        let scaled = !v2 && cfg.f64_or("layer_scale_init_value", 1e-6)? > 0.0;
        let prefix = if v2 { "convnextv2" } else { "convnext" };
        let v = weights.base_vars(prefix);
        let emb = v.pp("embeddings");
        let patch_conv = conv(&emb.pp("patch_embeddings"), (channels, hidden[0]), patch, patch, 1)?;
        let patch_norm = LayerNorm::load(&emb.pp("layernorm"), hidden[0], 1e-6)?;
        let mut stages = Vec::with_capacity(stages_n);
        let mut input = hidden[0];
        for (i, (&out, &depth)) in hidden.iter().zip(&depths).enumerate() {
            let sv = v.pp("encoder").pp("stages").pp(i);
            let stride = if i > 0 { 2 } else { 1 };
            let down = match input != out || stride > 1 {
                true => {
                    let d = sv.pp("downsampling_layer");
                    Some((LayerNorm::load(&d.pp(0), input, 1e-6)?, conv(&d.pp(1), (input, out), 2, 2, 1)?))
                }
                false => None,
            };
            let mut blocks = Vec::new();
            for j in 0..depth {
                let b = sv.pp("layers").pp(j);
                let grn = match v2 {
                    true => Some((
                        b.pp("grn").get("weight", &[1, 1, 1, 4 * out])?,
                        b.pp("grn").get("bias", &[1, 1, 1, 4 * out])?,
                    )),
                    false => None,
                };
                blocks.push(Block {
                    dwconv: conv(&b.pp("dwconv"), (out, out), 7, 1, out)?,
                    norm: LayerNorm::load(&b.pp("layernorm"), out, 1e-6)?,
                    pwconv1: Linear::load(&b.pp("pwconv1"), out, 4 * out, true)?,
                    pwconv2: Linear::load(&b.pp("pwconv2"), 4 * out, out, true)?,
                    grn,
                    scale: if scaled { Some(b.get("layer_scale_parameter", &[out])?) } else { None },
                });
            }
            stages.push(Stage { down, blocks });
            input = out;
        }
        let classifier = match arch.ends_with("ForImageClassification") {
            true => Some(match num_labels(cfg)? {
                0 => None,
                n => Some(Linear::load(&weights.vars("classifier"), input, n, true)?),
            }),
            false => None,
        };
        Ok(ConvNext {
            patch: patch_conv,
            patch_norm,
            stages,
            norm: LayerNorm::load(&v.pp("layernorm"), input, eps)?,
            act: Activation::from_name(cfg.str_or("hidden_act", "gelu")?)?,
            classifier,
            channels,
        })
    }

    /// The device of the weights.
    pub fn device(&self) -> Device {
        self.patch.weight.device()
    }

    /// Runs the model on `pixel_values` `[batch, channels, height, width]`: `logits` (the
    /// classifier) or `last_hidden_state` and `pooler_output` `[batch, channels]`, and with
    /// `output_hidden_states` `hidden_states.*` (the embeddings, then each stage's output).
    pub fn forward_named(
        &self,
        inputs: &BTreeMap<String, Tensor>,
        output_hidden_states: bool,
    ) -> Result<Vec<(String, Tensor)>> {
        let x = pixels_of(inputs, self.patch.weight.dtype(), self.device(), self.channels)?;
        let mut h = channel_norm(&self.patch_norm, &self.patch.forward(&x)?)?;
        let mut hidden_states = Vec::new();
        for stage in &self.stages {
            if output_hidden_states {
                hidden_states.push(h.clone());
            }
            if let Some((norm, conv)) = &stage.down {
                h = conv.forward(&channel_norm(norm, &h)?)?;
            }
            for block in &stage.blocks {
                h = block.forward(&h, self.act)?;
            }
        }
        if output_hidden_states {
            hidden_states.push(h.clone());
        }
        let dtype = h.dtype();
        let pooled = self.norm.forward(&h.to_dtype(DType::F32)?.mean([-2, -1], false)?.to_dtype(dtype)?)?;
        pooled_outputs(self.classifier.as_ref(), h, pooled, hidden_states)
    }
}
