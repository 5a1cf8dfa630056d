//! CvT (model type `cvt`: `CvtModel`, `CvtForImageClassification`; microsoft/cvt-13): stages
//! that each embed their input by a strided convolution (its channels layer-normed), then run
//! pre-norm blocks whose queries, keys and values come from depthwise convolutions with batch
//! norms over the token map (keys and values strided), the attention scaled by the whole width's
//! root (as the original) and a class token in the stages that have one (`cls_token`), not
//! convolved. `last_hidden_state` is the last map `[batch, channels, rows, cols]`,
//! `cls_token_value` the last stage's class token; the classifier reads the normed class token or,
//! without one, the mean of the normed map. Any image size runs.

use std::collections::BTreeMap;

use oxtorch_tensor::{Device, Tensor};
use serde_json::Value;

use super::classification::num_labels;
use super::vision::pixels_of;
use crate::config::Config;
use crate::error::{Error, Result};
use crate::layers::{eager_attention, BatchNorm2d, Conv2d, LayerNorm, Linear};
use crate::weights::{Vars, Weights};

/// transformers' CvT layer norms keep torch's default epsilon (`layer_norm_eps` is unread).
const NORM_EPS: f64 = 1e-5;

/// A depthwise convolution with a batch norm, flattened to tokens
/// (`CvtSelfAttentionProjection`, `dw_bn`).
#[derive(Debug, Clone)]
struct ConvProjection {
    conv: Conv2d,
    norm: BatchNorm2d,
}

impl ConvProjection {
    fn load(v: &Vars<'_>, width: usize, kernel: usize, (stride, padding): (usize, usize)) -> Result<Self> {
        let v = v.pp("convolution_projection");
        Ok(ConvProjection {
            conv: Conv2d::load(
                &v.pp("convolution"),
                (width, width),
                kernel,
                (stride, padding, width),
                false,
            )?,
            norm: BatchNorm2d::load(&v.pp("normalization"), width, 1e-5)?,
        })
    }

    /// `map` `[batch, width, rows, cols]` → tokens `[batch, rows' · cols', width]`.
    fn forward(&self, map: &Tensor) -> Result<Tensor> {
        Ok(self.norm.forward(&self.conv.forward(map)?)?.flatten(2, -1)?.transpose(1, 2)?)
    }
}

/// One block (`CvtLayer`).
#[derive(Debug, Clone)]
struct Block {
    norm1: LayerNorm,
    /// query, key, value
    convs: [ConvProjection; 3],
    projections: [Linear; 3],
    out: Linear,
    norm2: LayerNorm,
    fc1: Linear,
    fc2: Linear,
}

/// One stage (`CvtStage`).
#[derive(Debug, Clone)]
struct Stage {
    embedding: Conv2d,
    embedding_norm: LayerNorm,
    /// `[1, 1, width]`
    cls_token: Option<Tensor>,
    blocks: Vec<Block>,
    heads: usize,
}

/// transformers' `CvtModel`, with `CvtForImageClassification`'s norm and classifier when loaded
/// as that.
#[derive(Debug, Clone)]
pub struct Cvt {
    stages: Vec<Stage>,
    /// the norm, the classifier (`None` for 0 labels), and whether it reads the class token (else
    /// the map's mean)
    head: Option<(LayerNorm, Option<Linear>, bool)>,
    channels: usize,
}

/// `key`'s list with an entry per stage (`default` where absent), each read by `parse`.
fn stage_list<T: Clone>(
    cfg: &Config,
    key: &str,
    default: &[T],
    stages: usize,
    parse: impl Fn(&Value) -> Option<T>,
) -> Result<Vec<T>> {
    let values = match cfg.get(key) {
        None | Some(Value::Null) => default.to_vec(),
        Some(Value::Array(items)) => items
            .iter()
            .map(|v| parse(v).ok_or_else(|| Error::Config(format!("{key} has an invalid entry {v}"))))
            .collect::<Result<Vec<_>>>()?,
        Some(v) => return Err(Error::Config(format!("{key} must be a list, got {v}"))),
    };
    match values.len() >= stages {
        true => Ok(values),
        false => {
            Err(Error::Config(format!("{key} has {} entries for the {stages} stages (depth)", values.len())))
        }
    }
}

impl Cvt {
    /// Loads `CvtModel` (`cvt.*` or unprefixed) or `CvtForImageClassification`.
    pub fn load(arch: &str, cfg: &Config, weights: &Weights) -> Result<Self> {
        let depth = cfg.usize_list_or("depth", &[1, 2, 10], 0)?;
        let n = depth.len();
        let count = |v: &Value| v.as_u64().and_then(|x| usize::try_from(x).ok());
        let positive = |v: &Value| count(v).filter(|&x| x > 0);
        let list = |key: &str, default: &[usize]| stage_list(cfg, key, default, n, count);
        let patch_sizes = stage_list(cfg, "patch_sizes", &[7, 3, 3], n, positive)?;
        let patch_stride = stage_list(cfg, "patch_stride", &[4, 2, 2], n, positive)?;
        let patch_padding = list("patch_padding", &[2, 1, 1])?;
        let widths = stage_list(cfg, "embed_dim", &[64, 192, 384], n, positive)?;
        let heads = stage_list(cfg, "num_heads", &[1, 3, 6], n, positive)?;
        let mlp_ratio = stage_list(cfg, "mlp_ratio", &[4.0, 4.0, 4.0], n, |v| {
            v.as_f64().filter(|r| *r >= 0.0 && *r <= 64.0)
        })?;
        let qkv_bias = stage_list(cfg, "qkv_bias", &[true; 3], n, Value::as_bool)?;
        let cls = stage_list(cfg, "cls_token", &[false, false, true], n, Value::as_bool)?;
        let methods = stage_list(cfg, "qkv_projection_method", &["dw_bn"; 3].map(String::from), n, |v| {
            v.as_str().map(String::from)
        })?;
        let kernel_qkv = stage_list(cfg, "kernel_qkv", &[3, 3, 3], n, positive)?;
        let padding_kv = list("padding_kv", &[1, 1, 1])?;
        let stride_kv = stage_list(cfg, "stride_kv", &[2, 2, 2], n, positive)?;
        let padding_q = list("padding_q", &[1, 1, 1])?;
        let stride_q = stage_list(cfg, "stride_q", &[1, 1, 1], n, positive)?;
        if n == 0 {
            return Err(Error::Config("CvT needs at least one stage (depth)".into()));
        }
        let channels = cfg.usize_or("num_channels", 3)?;
        let v = weights.base_vars("cvt").pp("encoder.stages");
        // (transformers makes the class tokens, the norm and the classifier `embed_dim[-1]` wide,
        // and pools by `cls_token[-1]`: the lists' last entries, whatever the stage count.)
        let last = widths[widths.len() - 1];
        let pool_cls = cls[cls.len() - 1];
        let mut stages = Vec::with_capacity(n);
        for s in 0..n {
            if methods[s] != "dw_bn" {
                return Err(Error::Unsupported(format!(
                    "qkv_projection_method \"{}\" is not supported (supported: dw_bn; transformers builds no other)",
                    methods[s]
                )));
            }
            let w = widths[s];
            if w % heads[s] != 0 {
                return Err(Error::Config(format!(
                    "embed_dim {w} is not a multiple of num_heads ({})",
                    heads[s]
                )));
            }
            let sv = v.pp(s);
            let input = if s == 0 { channels } else { widths[s - 1] };
            let e = sv.pp("embedding.convolution_embeddings");
            let inner = (w as f64 * mlp_ratio[s]) as usize;
            let blocks = (0..depth[s])
                .map(|l| {
                    let b = sv.pp("layers").pp(l);
                    let a = b.pp("attention.attention");
                    let conv = |name: &str, stride_padding| {
                        ConvProjection::load(
                            &a.pp(format!("convolution_projection_{name}")),
                            w,
                            kernel_qkv[s],
                            stride_padding,
                        )
                    };
                    let kv = (stride_kv[s], padding_kv[s]);
                    let linear =
                        |name: &str| Linear::load(&a.pp(format!("projection_{name}")), w, w, qkv_bias[s]);
                    Ok(Block {
                        norm1: LayerNorm::load(&b.pp("layernorm_before"), w, NORM_EPS)?,
                        convs: [
                            conv("query", (stride_q[s], padding_q[s]))?,
                            conv("key", kv)?,
                            conv("value", kv)?,
                        ],
                        projections: [linear("query")?, linear("key")?, linear("value")?],
                        out: Linear::load(&b.pp("attention.output.dense"), w, w, true)?,
                        norm2: LayerNorm::load(&b.pp("layernorm_after"), w, NORM_EPS)?,
                        fc1: Linear::load(&b.pp("intermediate.dense"), w, inner, true)?,
                        fc2: Linear::load(&b.pp("output.dense"), inner, w, true)?,
                    })
                })
                .collect::<Result<Vec<_>>>()?;
            stages.push(Stage {
                embedding: Conv2d::load(
                    &e.pp("projection"),
                    (input, w),
                    patch_sizes[s],
                    (patch_stride[s], patch_padding[s], 1),
                    true,
                )?,
                embedding_norm: LayerNorm::load(&e.pp("normalization"), w, NORM_EPS)?,
                // (transformers makes every class token as wide as the last stage.)
                cls_token: match cls[s] {
                    true => Some(sv.get("cls_token", &[1, 1, last])?),
                    false => None,
                },
                blocks,
                heads: heads[s],
            });
        }
        let head = match arch {
            "CvtModel" => None,
            "CvtForImageClassification" => Some((
                LayerNorm::load(&weights.vars("layernorm"), last, NORM_EPS)?,
                match num_labels(cfg)? {
                    0 => None,
                    labels => Some(Linear::load(&weights.vars("classifier"), last, labels, true)?),
                },
                pool_cls,
            )),
            _ => return Err(Error::Unsupported(format!("architecture \"{arch}\" is not supported"))),
        };
        Ok(Cvt { stages, head, channels })
    }

    /// The device of the weights.
    pub fn device(&self) -> Device {
        self.stages[0].embedding.weight.device()
    }

    /// `pixel_values` → `last_hidden_state` and `cls_token_value` (the base model; the latter where
    /// the last stage has a class token) or `logits`; with `output_hidden_states` each stage's map.
    pub fn forward_named(
        &self,
        inputs: &BTreeMap<String, Tensor>,
        output_hidden_states: bool,
    ) -> Result<Vec<(String, Tensor)>> {
        let mut h = pixels_of(inputs, self.stages[0].embedding.weight.dtype(), self.device(), self.channels)?;
        let mut cls = None;
        let mut hidden_states = Vec::new();
        for stage in &self.stages {
            (h, cls) = stage.forward(&h)?;
            if output_hidden_states {
                hidden_states.push(h.clone());
            }
        }
        let mut out = match &self.head {
            None => {
                let mut out = vec![("last_hidden_state".to_string(), h)];
                out.extend(cls.map(|c| ("cls_token_value".to_string(), c)));
                out
            }
            Some((norm, classifier, pool_cls)) => {
                let tokens = match (pool_cls, cls) {
                    (true, Some(c)) => c,
                    (true, None) => {
                        return Err(Error::Config(
                            "cls_token's last entry is true, but the last stage has no class token".into(),
                        ))
                    }
                    (false, _) => h.flatten(2, -1)?.transpose(1, 2)?,
                };
                let pooled = norm.forward(&tokens)?.mean([1], false)?;
                let logits = match classifier {
                    Some(c) => c.forward(&pooled)?,
                    None => pooled,
                };
                vec![("logits".to_string(), logits)]
            }
        };
        out.extend(hidden_states.into_iter().enumerate().map(|(i, h)| (format!("hidden_states.{i}"), h)));
        Ok(out)
    }
}

impl Stage {
    /// `x` `[batch, in, height, width]` → the stage's map `[batch, width, rows, cols]` and its
    /// class token `[batch, 1, width]`, if it has one.
    fn forward(&self, x: &Tensor) -> Result<(Tensor, Option<Tensor>)> {
        let map = self.embedding.forward(x)?;
        let (b, w, rows, cols) = (map.dims()[0], map.dims()[1], map.dims()[2], map.dims()[3]);
        let mut tokens = self.embedding_norm.forward(&map.flatten(2, -1)?.transpose(1, 2)?)?;
        if let Some(cls) = &self.cls_token {
            if cls.dims()[2] != w {
                return Err(Error::Config(format!(
                    "a class token {} wide in a stage {w} wide (transformers makes them as wide as the last stage)",
                    cls.dims()[2]
                )));
            }
            tokens = Tensor::cat(&[&cls.expand([b, 1, w])?, &tokens], 1)?;
        }
        for block in &self.blocks {
            tokens = self.block(block, &tokens, rows, cols)?;
        }
        let first = usize::from(self.cls_token.is_some());
        let map =
            tokens.narrow(1, first as isize, rows * cols)?.transpose(1, 2)?.reshape([b, w, rows, cols])?;
        let cls = match first {
            1 => Some(tokens.narrow(1, 0, 1)?),
            _ => None,
        };
        Ok((map, cls))
    }

    /// One block on `x` `[batch, (1 +) rows · cols, width]`.
    fn block(&self, block: &Block, x: &Tensor, rows: usize, cols: usize) -> Result<Tensor> {
        let (b, _, w) = (x.dims()[0], x.dims()[1], x.dims()[2]);
        let normed = block.norm1.forward(x)?;
        let first = usize::from(self.cls_token.is_some());
        let map =
            normed.narrow(1, first as isize, rows * cols)?.transpose(1, 2)?.reshape([b, w, rows, cols])?;
        let heads = self.heads;
        let d = w / heads;
        let qkv = block
            .convs
            .iter()
            .zip(&block.projections)
            .map(|(conv, projection)| {
                let mut t = conv.forward(&map)?;
                if first == 1 {
                    t = Tensor::cat(&[&normed.narrow(1, 0, 1)?, &t], 1)?;
                }
                let len = t.dims()[1];
                Ok(projection.forward(&t)?.reshape([b, len, heads, d])?.transpose(1, 2)?)
            })
            .collect::<Result<Vec<_>>>()?;
        // (Scaled by the whole width, not a head's.)
        let ctx = eager_attention(&qkv[0], &qkv[1], &qkv[2], None, 1.0 / (w as f64).sqrt(), None)?;
        let len = ctx.dims()[2];
        let ctx = ctx.transpose(1, 2)?.reshape([b, len, w])?;
        let attended = block.out.forward(&ctx)?;
        // (A strided query would change the length; transformers' residual then fails too.)
        if attended.dims() != x.dims() {
            return Err(Error::Input(format!(
                "CvT's attention gives {:?} for its input {:?}: a strided query (stride_q) shrinks the map",
                attended.dims(),
                x.dims()
            )));
        }
        let x = attended.add(x)?;
        let inner = block.fc1.forward(&block.norm2.forward(&x)?)?.gelu("none")?;
        Ok(block.fc2.forward(&inner)?.add(&x)?)
    }
}
