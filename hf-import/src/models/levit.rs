//! LeViT (model type `levit`: `LevitModel`, `LevitForImageClassification`,
//! `LevitForImageClassificationWithTeacher`; facebook/levit-128S): four strided convolutions with
//! batch norms (hardswish between) embed the image as a grid of tokens; stages of residual
//! attention and MLP blocks whose linear layers carry batch norms, the attention biased per head
//! by the offset between two grid points; between stages an attention whose queries are every
//! other point of the grid shrinks it. `pooler_output` is the mean of the last tokens, which the
//! classifier (a batch norm, a linear layer) reads; the teacher-distilled classifier averages two
//! such heads. Images must give the grid of `image_size / patch_size` points the biases were
//! made for.

use std::collections::{BTreeMap, HashMap};

use oxtorch_tensor::{DType, Device, Tensor};

use super::classification::num_labels;
use super::vision::pixels_of;
use crate::config::Config;
use crate::error::{Error, Result};
use crate::layers::{BatchNorm2d, Conv2d, Linear};
use crate::weights::{Vars, Weights};

/// A linear layer without bias and a batch norm over its features (`MLPLayerWithBN`).
#[derive(Debug, Clone)]
struct LinearBn {
    linear: Linear,
    norm: BatchNorm2d,
}

impl LinearBn {
    fn load(v: &Vars<'_>, input: usize, out: usize) -> Result<Self> {
        Ok(LinearBn {
            linear: Linear::load(&v.pp("linear"), input, out, false)?,
            norm: BatchNorm2d::load(&v.pp("batch_norm"), out, 1e-5)?,
        })
    }

    /// `x` `[batch, tokens, in]` → `[batch, tokens, out]`.
    fn forward(&self, x: &Tensor) -> Result<Tensor> {
        let y = self.linear.forward(x)?;
        let dims = y.dims().to_vec();
        Ok(self.norm.forward(&y.reshape([dims[0] * dims[1], dims[2]])?)?.reshape(dims)?)
    }
}

/// The per-head biases of an attention from `queries` grid points (every `stride`-th of a
/// `side_in²` grid, `side_out` a side) to all `side_in²` points: `[heads, side_out², side_in²]`,
/// gathered from `biases` `[heads, offsets]` by each pair's offset, numbered in first-seen order.
fn offset_biases(biases: &Tensor, side_in: usize, side_out: usize, stride: usize) -> Result<Tensor> {
    let mut seen: HashMap<(usize, usize), i64> = HashMap::new();
    let mut index = Vec::with_capacity(side_out.pow(2) * side_in.pow(2));
    for (a, b) in (0..side_out).flat_map(|a| (0..side_out).map(move |b| (a, b))) {
        for (c, d) in (0..side_in).flat_map(|c| (0..side_in).map(move |d| (c, d))) {
            let offset = ((a * stride).abs_diff(c), (b * stride).abs_diff(d));
            let next = seen.len() as i64;
            index.push(*seen.entry(offset).or_insert(next));
        }
    }
    if biases.dims()[1] != seen.len() {
        return Err(Error::Config(format!(
            "attention_biases has {} offsets, but a {side_in}×{side_in} grid has {}",
            biases.dims()[1],
            seen.len()
        )));
    }
    let heads = biases.dims()[0];
    let index = Tensor::from_vec(index, [side_out.pow(2) * side_in.pow(2)])?.to(biases.device())?;
    Ok(biases.index_select(1, &index)?.reshape([heads, side_out.pow(2), side_in.pow(2)])?)
}

/// An attention (`LevitAttention`) or, shrinking the grid, `LevitAttentionSubsample`.
#[derive(Debug, Clone)]
struct Attention {
    /// queries, keys and values together, or (subsampling) keys and values
    kv: LinearBn,
    /// the subsampling attention's queries and its stride
    queries: Option<(LinearBn, usize)>,
    projection: LinearBn,
    /// `[heads, queries, keys]`
    bias: Tensor,
    heads: usize,
    key_dim: usize,
    value_dim: usize,
    /// the grid's side before
    side: usize,
}

impl Attention {
    fn forward(&self, x: &Tensor) -> Result<Tensor> {
        let (b, n) = (x.dims()[0], x.dims()[1]);
        let (h, k, v) = (self.heads, self.key_dim, self.value_dim);
        let kv = self.kv.forward(x)?;
        let (q, kv, q_len) = match &self.queries {
            None => {
                let all = kv.reshape([b, n, h, 2 * k + v])?;
                (all.narrow(3, 0, k)?, all.narrow(3, k as isize, k + v)?, n)
            }
            Some((queries, stride)) => {
                let c = x.dims()[2];
                let grid = x.reshape([b, self.side, self.side, c])?;
                let kept: Vec<i64> = (0..self.side).step_by(*stride).map(|i| i as i64).collect();
                let idx = Tensor::from_vec(kept.clone(), [kept.len()])?.to(x.device())?;
                let sub =
                    grid.index_select(1, &idx)?.index_select(2, &idx)?.reshape([b, kept.len().pow(2), c])?;
                let q_len = kept.len().pow(2);
                let q = queries.forward(&sub)?.reshape([b, q_len, h, k])?;
                (q, kv.reshape([b, n, h, k + v])?, q_len)
            }
        };
        let q = q.transpose(1, 2)?;
        let key = kv.narrow(3, 0, k)?.transpose(1, 2)?;
        let value = kv.narrow(3, k as isize, v)?.transpose(1, 2)?;
        let scores = q.matmul(&key.transpose(2, 3)?)?.mul((k as f64).powf(-0.5))?.add(&self.bias)?;
        let out = scores.softmax(-1, None)?.matmul(&value)?.transpose(1, 2)?.reshape([b, q_len, h * v])?;
        self.projection.forward(&out.hardswish()?)
    }
}

/// An MLP (`LevitMLPLayer`): up, hardswish, down.
#[derive(Debug, Clone)]
struct Mlp {
    up: LinearBn,
    down: LinearBn,
}

/// One layer of a stage.
#[derive(Debug, Clone)]
enum Layer {
    /// `x + attention(x)`
    Attention(Box<Attention>),
    /// the grid shrunk (no residual)
    Subsample(Box<Attention>),
    /// `x + mlp(x)`
    Mlp(Mlp),
}

impl Layer {
    fn forward(&self, x: &Tensor) -> Result<Tensor> {
        Ok(match self {
            Layer::Attention(a) => x.add(&a.forward(x)?)?,
            Layer::Subsample(a) => a.forward(x)?,
            Layer::Mlp(m) => x.add(&m.down.forward(&m.up.forward(x)?.hardswish()?)?)?,
        })
    }
}

/// A classifier head (`LevitClassificationLayer`): a batch norm, then a linear layer.
#[derive(Debug, Clone)]
struct Classifier {
    norm: BatchNorm2d,
    linear: Linear,
}

impl Classifier {
    fn load(v: &Vars<'_>, width: usize, labels: usize) -> Result<Self> {
        Ok(Classifier {
            norm: BatchNorm2d::load(&v.pp("batch_norm"), width, 1e-5)?,
            linear: Linear::load(&v.pp("linear"), width, labels, true)?,
        })
    }

    fn forward(&self, pooled: &Tensor) -> Result<Tensor> {
        self.linear.forward(&self.norm.forward(pooled)?)
    }
}

/// What reads the pooled tokens.
#[derive(Debug, Clone)]
enum Head {
    None,
    /// the classifier (`None` for 0 labels: the logits are the features)
    Classifier(Option<Classifier>),
    /// the classifier and the distillation head, averaged
    Teacher(Option<(Classifier, Classifier)>),
}

/// transformers' `LevitModel` and its classifiers.
#[derive(Debug, Clone)]
pub struct Levit {
    /// the four embedding convolutions with their batch norms
    embeddings: Vec<(Conv2d, BatchNorm2d)>,
    stages: Vec<Vec<Layer>>,
    head: Head,
    channels: usize,
    /// the grid's side the biases were made for
    side: usize,
    /// the embedding convolutions' kernel, stride and padding
    conv: (usize, usize, usize),
}

impl Levit {
    /// Loads `arch` from `cfg` and `weights` (under `levit.` or, for the base model, at the top).
    pub fn load(arch: &str, cfg: &Config, weights: &Weights) -> Result<Self> {
        let hidden = cfg.usize_list_or("hidden_sizes", &[128, 256, 384], 1)?;
        let heads = cfg.usize_list_or("num_attention_heads", &[4, 8, 12], 1)?;
        let depths = cfg.usize_list_or("depths", &[4, 4, 4], 0)?;
        let key_dim = cfg.usize_list_or("key_dim", &[16, 16, 16], 1)?;
        let mlp_ratio = cfg.usize_list_or("mlp_ratio", &[2, 2, 2], 0)?;
        let attention_ratio = cfg.usize_list_or("attention_ratio", &[2, 2, 2], 1)?;
        let n = depths.len();
        // (transformers subsamples after the first two stages, so it builds 1 to 3; the
        // subsampling attentions read `key_dim[0]` and the next stage's width.)
        let lists = [hidden.len(), heads.len(), key_dim.len(), mlp_ratio.len(), attention_ratio.len()];
        if !(1..=3).contains(&n) || lists.iter().any(|&l| l < n) || hidden.len() < n.min(2) + 1 {
            return Err(Error::Config(format!(
                "LeViT needs 1 to 3 stages (depths) with a hidden size, head count, key_dim, mlp_ratio and attention_ratio each, \
                 and a hidden size after each of the first two: got depths {depths:?}, hidden_sizes {hidden:?}"
            )));
        }
        let channels = cfg.usize_or("num_channels", 3)?;
        let image = cfg.usize_or("image_size", 224)?;
        let patch = cfg.usize_or("patch_size", 16)?;
        if patch == 0 || image < patch {
            return Err(Error::Config(format!("image_size ({image}) must hold a patch_size ({patch})")));
        }
        let (kernel, stride, padding) =
            (cfg.usize_or("kernel_size", 3)?, cfg.usize_or("stride", 2)?, cfg.usize_or("padding", 1)?);
        if kernel == 0 || stride == 0 {
            return Err(Error::Config("kernel_size and stride must be positive".into()));
        }
        let v = weights.base_vars("levit");
        let widths = [channels, hidden[0] / 8, hidden[0] / 4, hidden[0] / 2, hidden[0]];
        let embeddings = (0..4)
            .map(|i| {
                let e = v.pp(format!("patch_embeddings.embedding_layer_{}", i + 1));
                Ok((
                    Conv2d::load(
                        &e.pp("convolution"),
                        (widths[i], widths[i + 1]),
                        kernel,
                        (stride, padding, 1),
                        false,
                    )?,
                    BatchNorm2d::load(&e.pp("batch_norm"), widths[i + 1], 1e-5)?,
                ))
            })
            .collect::<Result<Vec<_>>>()?;
        let mut side = image / patch;
        // (The bias tables pair every two points: a side of 64 already makes 16M pairs.)
        if side > 64 {
            return Err(Error::Config(format!(
                "image_size / patch_size ({image} / {patch}) gives a grid of {side}² points; at most 64² are supported"
            )));
        }
        if hidden[0] < 8 || hidden[..n.min(2)].iter().any(|&c| c < key_dim[0]) {
            return Err(Error::Config(format!(
                "LeViT's first width must be at least 8 and the subsampled ones at least key_dim[0] ({}): hidden_sizes {hidden:?}",
                key_dim[0]
            )));
        }
        let grid = side;
        let mut stages = Vec::with_capacity(n);
        for s in 0..n {
            let (c, h, k) = (hidden[s], heads[s], key_dim[s]);
            let sv = v.pp("encoder.stages").pp(s).pp("layers");
            let mut layers = Vec::new();
            let mut next = 0usize;
            let mut layer_vars = || {
                next += 1;
                sv.pp(next - 1)
            };
            for _ in 0..depths[s] {
                let lv = layer_vars().pp("module");
                let vdim = attention_ratio[s] * k;
                let biases = lv.get("attention_biases", &[h, attention_offsets(side)])?;
                layers.push(Layer::Attention(Box::new(Attention {
                    kv: LinearBn::load(&lv.pp("queries_keys_values"), c, h * (2 * k + vdim))?,
                    queries: None,
                    projection: LinearBn::load(&lv.pp("projection"), h * vdim, c)?,
                    bias: offset_biases(&biases, side, side, 1)?,
                    heads: h,
                    key_dim: k,
                    value_dim: vdim,
                    side,
                })));
                if mlp_ratio[s] > 0 {
                    layers.push(Layer::Mlp(load_mlp(&layer_vars().pp("module"), c, c * mlp_ratio[s])?));
                }
            }
            if s < 2 {
                // `down_ops`: key_dim[0], hidden / key_dim[0] heads, attention ratio 4, MLP ratio 2, stride 2.
                let (k0, out) = (key_dim[0], hidden[s + 1]);
                let dh = c / k0;
                let side_out = (side - 1) / 2 + 1;
                let lv = layer_vars();
                let vdim = 4 * k0;
                let biases = lv.get("attention_biases", &[dh, subsample_offsets(side, side_out)])?;
                layers.push(Layer::Subsample(Box::new(Attention {
                    kv: LinearBn::load(&lv.pp("keys_values"), c, dh * (k0 + vdim))?,
                    queries: Some((LinearBn::load(&lv.pp("queries"), c, dh * k0)?, 2)),
                    projection: LinearBn::load(&lv.pp("projection"), dh * vdim, out)?,
                    bias: offset_biases(&biases, side, side_out, 2)?,
                    heads: dh,
                    key_dim: k0,
                    value_dim: vdim,
                    side,
                })));
                layers.push(Layer::Mlp(load_mlp(&layer_vars().pp("module"), out, out * 2)?));
                side = side_out;
            }
            stages.push(layers);
        }
        // (transformers' classifiers read `hidden_sizes[-1]` features: the last stage's, or it fails.)
        let last = hidden[n.min(2)];
        if arch != "LevitModel" && hidden.last() != Some(&last) {
            return Err(Error::Config(format!(
                "LeViT's classifier reads hidden_sizes[-1] features, but the last stage gives {last} (hidden_sizes {hidden:?})"
            )));
        }
        let classifier = |name: &str| -> Result<Option<Classifier>> {
            match num_labels(cfg)? {
                0 => Ok(None),
                labels => Ok(Some(Classifier::load(&weights.vars(name), last, labels)?)),
            }
        };
        let head = match arch {
            "LevitModel" => Head::None,
            "LevitForImageClassification" => Head::Classifier(classifier("classifier")?),
            "LevitForImageClassificationWithTeacher" => {
                Head::Teacher(classifier("classifier")?.zip(classifier("classifier_distill")?))
            }
            _ => return Err(Error::Unsupported(format!("architecture \"{arch}\" is not supported"))),
        };
        Ok(Levit { embeddings, stages, head, channels, side: grid, conv: (kernel, stride, padding) })
    }

    /// The device of the weights.
    pub fn device(&self) -> Device {
        self.embeddings[0].0.weight.device()
    }

    /// `pixel_values` → `last_hidden_state` and `pooler_output`, or `logits` (the teacher-distilled
    /// classifier's also `cls_logits` and `distillation_logits`); with `output_hidden_states` each
    /// stage's input and the last output.
    pub fn forward_named(
        &self,
        inputs: &BTreeMap<String, Tensor>,
        output_hidden_states: bool,
    ) -> Result<Vec<(String, Tensor)>> {
        let mut x = pixels_of(inputs, self.embeddings[0].0.weight.dtype(), self.device(), self.channels)?;
        let (height, width) = (x.dims()[2], x.dims()[3]);
        // (The grid is checked before the convolutions run: a wrong one fails, never allocates.)
        let (k, s, p) = self.conv;
        let side =
            |len: usize| (0..4).try_fold(len, |len, _| (len + 2 * p).checked_sub(k).map(|l| l / s + 1));
        let grid = (side(height), side(width));
        if grid != (Some(self.side), Some(self.side)) {
            return Err(Error::Input(format!(
                "LeViT's attention biases are for a {0}×{0} grid, but {height}×{width} images give {1}",
                self.side,
                match grid {
                    (Some(r), Some(c)) => format!("{r}×{c}"),
                    _ => "none".to_string(),
                }
            )));
        }
        for (i, (conv, norm)) in self.embeddings.iter().enumerate() {
            x = norm.forward(&conv.forward(&x)?)?;
            if i < 3 {
                x = x.hardswish()?;
            }
        }
        let mut h = x.flatten(2, -1)?.transpose(1, 2)?;
        let mut hidden_states = Vec::new();
        for stage in &self.stages {
            if output_hidden_states {
                hidden_states.push(h.clone());
            }
            for layer in stage {
                h = layer.forward(&h)?;
            }
        }
        if output_hidden_states {
            hidden_states.push(h.clone());
        }
        let pooled = h.to_dtype(DType::F32)?.mean([1], false)?.to_dtype(h.dtype())?;
        let mut out = match &self.head {
            Head::None => vec![("last_hidden_state".to_string(), h), ("pooler_output".to_string(), pooled)],
            Head::Classifier(c) => {
                vec![(
                    "logits".to_string(),
                    c.as_ref().map(|c| c.forward(&pooled)).transpose()?.unwrap_or(pooled),
                )]
            }
            Head::Teacher(heads) => {
                let (cls, distill) = match heads {
                    Some((c, d)) => (c.forward(&pooled)?, d.forward(&pooled)?),
                    None => (pooled.clone(), pooled),
                };
                vec![
                    ("logits".to_string(), cls.add(&distill)?.div(2.0)?),
                    ("cls_logits".to_string(), cls),
                    ("distillation_logits".to_string(), distill),
                ]
            }
        };
        out.extend(hidden_states.into_iter().enumerate().map(|(i, h)| (format!("hidden_states.{i}"), h)));
        Ok(out)
    }
}

/// `v.linear_up` and `v.linear_down`.
fn load_mlp(v: &Vars<'_>, width: usize, inner: usize) -> Result<Mlp> {
    Ok(Mlp {
        up: LinearBn::load(&v.pp("linear_up"), width, inner)?,
        down: LinearBn::load(&v.pp("linear_down"), inner, width)?,
    })
}

/// The distinct offsets between two points of a `side²` grid.
fn attention_offsets(side: usize) -> usize {
    side * side
}

/// The distinct offsets from every other point of a `side_in²` grid (`side_out` a side) to all its
/// points.
fn subsample_offsets(side_in: usize, side_out: usize) -> usize {
    let along = (0..side_out)
        .flat_map(|a| (0..side_in).map(move |c| (a * 2).abs_diff(c)))
        .collect::<std::collections::BTreeSet<_>>();
    along.len() * along.len()
}
