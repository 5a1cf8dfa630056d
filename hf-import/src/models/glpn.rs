//! GLPN (model type `glpn`: `GLPNModel`, `GLPNForDepthEstimation`; vinvino02/glpn-kitti,
//! vinvino02/glpn-nyu): SegFormer's hierarchical encoder (under `glpn.`, every stage a map) and a
//! decoder that walks the stages coarse to fine — each map brought to `decoder_hidden_size` by a
//! 1×1 convolution (none where it already is), fused with the coarser result by selective feature
//! fusion (convolutions to a two-channel sigmoid that weighs the local and the global map), and
//! upsampled twice (bilinearly); the finest twice again. The head (3×3 convolutions, a sigmoid
//! times `max_depth`) reads one of them: `predicted_depth` `[batch, height', width']`.

use std::collections::BTreeMap;

use oxtorch_tensor::{Device, Tensor};

use super::dpt::index_from_end;
use super::segformer::Segformer;
use crate::config::Config;
use crate::error::{Error, Result};
use crate::layers::{BatchNorm2d, Conv2d};
use crate::weights::{Vars, Weights};

/// Selective feature fusion.
#[derive(Debug, Clone)]
struct Fusion {
    conv1: (Conv2d, BatchNorm2d),
    conv2: (Conv2d, BatchNorm2d),
    conv3: Conv2d,
}

impl Fusion {
    fn load(v: &Vars<'_>, c: usize) -> Result<Self> {
        let half = c / 2;
        let layer = |name: &str, io: (usize, usize)| -> Result<(Conv2d, BatchNorm2d)> {
            let l = v.pp(name);
            Ok((Conv2d::load(&l.pp(0), io, 3, (1, 1, 1), true)?, BatchNorm2d::load(&l.pp(1), io.1, 1e-5)?))
        };
        Ok(Fusion {
            conv1: layer(
                "convolutional_layer1",
                (c.checked_mul(2).ok_or_else(|| Error::Config("decoder_hidden_size overflows".into()))?, c),
            )?,
            conv2: layer("convolutional_layer2", (c, half))?,
            conv3: Conv2d::load(&v.pp("convolutional_layer3"), (half, 2), 3, (1, 1, 1), true)?,
        })
    }

    /// The `local` and `global` maps weighed per position.
    fn forward(&self, local: &Tensor, global: &Tensor) -> Result<Tensor> {
        let x = Tensor::cat(&[local, global], 1)?;
        let x = self.conv1.1.forward(&self.conv1.0.forward(&x)?)?.relu()?;
        let x = self.conv2.1.forward(&self.conv2.0.forward(&x)?)?.relu()?;
        let attn = self.conv3.forward(&x)?.sigmoid()?;
        Ok(local.mul(&attn.narrow(1, 0, 1)?)?.add(&global.mul(&attn.narrow(1, 1, 1)?)?)?)
    }
}

/// One decoder stage.
#[derive(Debug, Clone)]
struct Stage {
    /// the 1×1 convolution to the decoder's width (none where the map has it)
    conv: Option<Conv2d>,
    /// (none in the first, coarsest stage)
    fusion: Option<Fusion>,
}

/// `GLPNForDepthEstimation`'s decoder and head.
#[derive(Debug, Clone)]
struct DepthHead {
    decoder: Vec<Stage>,
    conv1: Conv2d,
    conv2: Conv2d,
    head_in: usize,
    max_depth: f64,
}

/// transformers' `GLPNModel`, with the decoder and depth head when loaded as
/// `GLPNForDepthEstimation`.
#[derive(Debug, Clone)]
pub struct Glpn {
    encoder: Segformer,
    head: Option<DepthHead>,
}

/// Twice the size, bilinearly (corners not aligned).
fn upsample(x: &Tensor) -> Result<Tensor> {
    let size = [x.dims()[2] * 2, x.dims()[3] * 2];
    Ok(x.interpolate(Some(&size), None, "bilinear", Some(false))?)
}

impl Glpn {
    /// Loads `GLPNModel` or `GLPNForDepthEstimation` from `cfg` and `weights`.
    pub fn load(arch: &str, cfg: &Config, weights: &Weights) -> Result<Self> {
        let encoder = Segformer::load_glpn_encoder(cfg, weights)?;
        let head = match arch {
            "GLPNModel" => None,
            "GLPNForDepthEstimation" => {
                let n = cfg.usize_or("num_encoder_blocks", 4)?;
                let hidden = cfg.usize_list_or("hidden_sizes", &[32, 64, 160, 256], 1)?;
                let width = cfg.usize_or("decoder_hidden_size", 64)?;
                let d = weights.vars("decoder.stages");
                let decoder = hidden
                    .iter()
                    .take(n)
                    .rev()
                    .enumerate()
                    .map(|(i, &c)| {
                        Ok(Stage {
                            conv: match c == width {
                                true => None,
                                false => Some(Conv2d::load(
                                    &d.pp(i).pp("convolution"),
                                    (c, width),
                                    1,
                                    (1, 0, 1),
                                    true,
                                )?),
                            },
                            fusion: match i {
                                0 => None,
                                _ => Some(Fusion::load(&d.pp(i).pp("fusion"), width)?),
                            },
                        })
                    })
                    .collect::<Result<Vec<_>>>()?;
                let h = weights.vars("head.head");
                let max_depth = cfg.f64_or("max_depth", 10.0)?;
                Some(DepthHead {
                    head_in: index_from_end(cfg, "head_in_index", decoder.len())?,
                    decoder,
                    conv1: Conv2d::load(&h.pp(0), (width, width), 3, (1, 1, 1), true)?,
                    conv2: Conv2d::load(&h.pp(2), (width, 1), 3, (1, 1, 1), true)?,
                    max_depth,
                })
            }
            _ => return Err(Error::Unsupported(format!("architecture \"{arch}\" is not supported"))),
        };
        Ok(Glpn { encoder, head })
    }

    /// The device of the weights.
    pub fn device(&self) -> Device {
        self.encoder.device()
    }

    /// `pixel_values` → `last_hidden_state` (the base model) or `predicted_depth`, and with
    /// `output_hidden_states` every stage's map.
    pub fn forward_named(
        &self,
        inputs: &BTreeMap<String, Tensor>,
        output_hidden_states: bool,
    ) -> Result<Vec<(String, Tensor)>> {
        let maps = self.encoder.stage_maps(self.encoder.pixels(inputs)?)?;
        let mut out = match &self.head {
            None => vec![("last_hidden_state".to_string(), maps[maps.len() - 1].clone())],
            Some(head) => {
                let mut stages: Vec<Tensor> = Vec::with_capacity(head.decoder.len());
                for (map, stage) in maps.iter().rev().zip(&head.decoder) {
                    let mut h = match &stage.conv {
                        Some(c) => c.forward(map)?,
                        None => map.clone(),
                    };
                    if let (Some(fusion), Some(coarser)) = (&stage.fusion, stages.last()) {
                        if coarser.dims() != h.dims() {
                            return Err(Error::Input(format!(
                                "GLPN fuses a {:?} map with the upsampled coarser {:?} (transformers needs sides that halve evenly)",
                                &h.dims()[2..],
                                &coarser.dims()[2..]
                            )));
                        }
                        h = fusion.forward(&h, coarser)?;
                    }
                    stages.push(upsample(&h)?);
                }
                let last = stages.len() - 1;
                stages[last] = upsample(&stages[last])?;
                let x = head.conv2.forward(&head.conv1.forward(&stages[head.head_in])?.relu()?)?;
                vec![("predicted_depth".to_string(), x.sigmoid()?.mul(head.max_depth)?.squeeze_dims(1)?)]
            }
        };
        if output_hidden_states {
            out.extend(maps.into_iter().enumerate().map(|(i, h)| (format!("hidden_states.{i}"), h)));
        }
        Ok(out)
    }
}
