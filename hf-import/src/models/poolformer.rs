//! PoolFormer (model type `poolformer`: `PoolFormerModel`, `PoolFormerForImageClassification`;
//! sail/poolformer_s12): MetaFormer stages whose token mixer is average pooling — each stage a
//! strided, padded convolution embedding, then blocks of `x + s1 · (avgpool(norm x) - norm x)`
//! (the pool's padding left out of its counts) and `x + s2 · conv2(act(conv1(norm x)))`, the
//! norms group norms of one group, `s1`, `s2` the layer scales (without `use_layer_scale`, 1).
//! The classifier norms the last map, averages it over positions and classifies. Any image size.

use std::collections::BTreeMap;

use oxtorch_tensor::{Device, Tensor};

use super::classification::num_labels;
use super::vision::{per_stage, pixels_of};
use crate::config::Config;
use crate::error::{Error, Result};
use crate::layers::{Activation, Conv2d, Linear};
use crate::weights::{Vars, Weights};

/// A group norm of one group (`PoolFormerGroupNorm`).
#[derive(Debug, Clone)]
struct Norm {
    weight: Tensor,
    bias: Tensor,
}

impl Norm {
    fn load(v: &Vars<'_>, c: usize) -> Result<Self> {
        Ok(Norm { weight: v.get("weight", &[c])?, bias: v.get("bias", &[c])? })
    }

    fn forward(&self, x: &Tensor) -> Result<Tensor> {
        Ok(x.group_norm(1, Some(&self.weight), Some(&self.bias), 1e-5)?)
    }
}

/// One PoolFormer block.
#[derive(Debug, Clone)]
struct Block {
    before: Norm,
    after: Norm,
    conv1: Conv2d,
    conv2: Conv2d,
    /// `layer_scale_1`, `layer_scale_2` as `[channels, 1, 1]` (with `use_layer_scale`)
    scales: Option<(Tensor, Tensor)>,
}

/// One stage: its embedding and blocks.
#[derive(Debug, Clone)]
struct Stage {
    embed: Conv2d,
    blocks: Vec<Block>,
}

/// transformers' `PoolFormerModel`, with the classifier when loaded as
/// `PoolFormerForImageClassification`.
#[derive(Debug, Clone)]
pub struct PoolFormer {
    stages: Vec<Stage>,
    pool: usize,
    act: Activation,
    /// the classifier's norm and linear layer (inside, `None` for 0 labels)
    classifier: Option<(Norm, Option<Linear>)>,
    channels: usize,
}

impl PoolFormer {
    /// Loads `PoolFormerModel` or `PoolFormerForImageClassification` from `cfg` and `weights`.
    pub fn load(arch: &str, cfg: &Config, weights: &Weights) -> Result<Self> {
        let n = cfg.usize_or("num_encoder_blocks", 4)?;
        let list = |key: &str, default: &[usize], min: usize| {
            per_stage(cfg, key, default, min, (n, "num_encoder_blocks"))
        };
        let depths = list("depths", &[2, 2, 6, 2], 0)?;
        let hidden = list("hidden_sizes", &[64, 128, 320, 512], 1)?;
        let patches = list("patch_sizes", &[7, 3, 3, 3], 1)?;
        let strides = list("strides", &[4, 2, 2, 2], 1)?;
        let paddings = list("padding", &[2, 1, 1, 1], 0)?;
        if n == 0 {
            return Err(Error::Config("num_encoder_blocks must be positive".into()));
        }
        let ratio = cfg.f64_or("mlp_ratio", 4.0)?;
        if !(ratio > 0.0 && ratio.is_finite()) {
            return Err(Error::Config(format!("mlp_ratio must be a positive number, got {ratio}")));
        }
        let channels = cfg.usize_or("num_channels", 3)?;
        let layer_scale = cfg.bool_or("use_layer_scale", true)?;
        let v = weights.base_vars("poolformer");
        let enc = v.pp("encoder");
        let mut stages = Vec::with_capacity(n);
        for i in 0..n {
            let c = hidden[i];
            let input = if i == 0 { channels } else { hidden[i - 1] };
            let inner = (c as f64 * ratio) as usize;
            let blocks = (0..depths[i])
                .map(|j| {
                    let b = enc.pp("block").pp(i).pp(j);
                    let scale = |name: &str| -> Result<Tensor> { Ok(b.get(name, &[c])?.reshape([c, 1, 1])?) };
                    Ok(Block {
                        before: Norm::load(&b.pp("before_norm"), c)?,
                        after: Norm::load(&b.pp("after_norm"), c)?,
                        conv1: Conv2d::load(&b.pp("output.conv1"), (c, inner), 1, (1, 0, 1), true)?,
                        conv2: Conv2d::load(&b.pp("output.conv2"), (inner, c), 1, (1, 0, 1), true)?,
                        scales: match layer_scale {
                            true => Some((scale("layer_scale_1")?, scale("layer_scale_2")?)),
                            false => None,
                        },
                    })
                })
                .collect::<Result<Vec<_>>>()?;
            let embed = Conv2d::load(
                &enc.pp("patch_embeddings").pp(i).pp("projection"),
                (input, c),
                patches[i],
                (strides[i], paddings[i], 1),
                true,
            )?;
            stages.push(Stage { embed, blocks });
        }
        let last = hidden[n - 1];
        let classifier = match arch {
            "PoolFormerModel" => None,
            "PoolFormerForImageClassification" => Some((
                Norm::load(&weights.vars("norm"), last)?,
                match num_labels(cfg)? {
                    0 => None,
                    labels => Some(Linear::load(&weights.vars("classifier"), last, labels, true)?),
                },
            )),
            _ => return Err(Error::Unsupported(format!("architecture \"{arch}\" is not supported"))),
        };
        let pool = cfg.usize_or("pool_size", 3)?;
        if pool == 0 || pool > 1 << 16 {
            return Err(Error::Config(format!("pool_size must be in 1..=65536, got {pool}")));
        }
        Ok(PoolFormer {
            stages,
            pool,
            act: Activation::from_name(cfg.str_or("hidden_act", "gelu")?)?,
            classifier,
            channels,
        })
    }

    /// The device of the weights.
    pub fn device(&self) -> Device {
        self.stages[0].embed.weight.device()
    }

    fn block(&self, b: &Block, x: &Tensor) -> Result<Tensor> {
        let normed = b.before.forward(x)?;
        let pooled = normed.avg_pool2d(&[self.pool], Some(&[1]), &[self.pool / 2], false, false, None)?;
        if pooled.dims() != normed.dims() {
            return Err(Error::Config(format!(
                "an even pool_size ({}) changes the map's size, which transformers' residual cannot add",
                self.pool
            )));
        }
        let mixed = pooled.sub(&normed)?;
        let mixed = match &b.scales {
            Some((s1, _)) => mixed.mul(s1)?,
            None => mixed,
        };
        let x = x.add(&mixed)?;
        let mlp = b.conv2.forward(&self.act.forward(&b.conv1.forward(&b.after.forward(&x)?)?)?)?;
        let mlp = match &b.scales {
            Some((_, s2)) => mlp.mul(s2)?,
            None => mlp,
        };
        Ok(x.add(&mlp)?)
    }

    /// `pixel_values` → `last_hidden_state` (the base model) or `logits`, and with
    /// `output_hidden_states` every stage's map.
    pub fn forward_named(
        &self,
        inputs: &BTreeMap<String, Tensor>,
        output_hidden_states: bool,
    ) -> Result<Vec<(String, Tensor)>> {
        let mut h = pixels_of(inputs, self.stages[0].embed.weight.dtype(), self.device(), self.channels)?;
        let mut hidden_states = Vec::with_capacity(self.stages.len());
        for stage in &self.stages {
            h = stage.embed.forward(&h)?;
            for b in &stage.blocks {
                h = self.block(b, &h)?;
            }
            if output_hidden_states {
                hidden_states.push(h.clone());
            }
        }
        let mut out = match &self.classifier {
            None => vec![("last_hidden_state".to_string(), h)],
            Some((norm, classifier)) => {
                let pooled = norm.forward(&h)?.mean([2, 3], false)?;
                let logits = match classifier {
                    Some(c) => c.forward(&pooled)?,
                    None => pooled,
                };
                vec![("logits".to_string(), logits)]
            }
        };
        if output_hidden_states {
            out.extend(hidden_states.into_iter().enumerate().map(|(i, h)| (format!("hidden_states.{i}"), h)));
        }
        Ok(out)
    }
}
