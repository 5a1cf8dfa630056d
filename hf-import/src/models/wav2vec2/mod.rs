//! wav2vec 2.0 and the models built on it (model types `wav2vec2`, `hubert`, `data2vec-audio`,
//! `unispeech`, `unispeech-sat`, `wavlm`: `Wav2Vec2Model`, `Wav2Vec2ForCTC`,
//! `Wav2Vec2ForSequenceClassification`, `Wav2Vec2ForAudioFrameClassification`,
//! `Wav2Vec2ForXVector` and the other families' heads of those names; facebook/wav2vec2-base-960h,
//! facebook/hubert-large-ls960-ft, facebook/data2vec-audio-base-960h,
//! superb/wav2vec2-base-superb-ks, microsoft/wavlm-base-plus, microsoft/unispeech-sat-base-plus-sv).
//!
//! Raw audio `input_values` `[batch, samples]` runs through a stack of strided 1-D convolutions
//! (the first group-normed per channel, or every one layer-normed over the channels), the frames'
//! features are normed and projected to the model width, padded frames zeroed, a grouped
//! convolution over time (weight-normed; data2vec-audio: a stack of them, each layer-normed) adds
//! positions, and BERT-style blocks follow: post-norm
//! with a norm before the first block, or (`do_stable_layer_norm`) pre-norm with a norm after the
//! last. `attention_mask` `[batch, samples]` gives each row's length in samples, from which its
//! length in frames follows through the convolutions' kernels and strides; the frames past it are
//! hidden from attention (the convolutions still read the padding, as transformers' do).
//! WavLM's blocks add a relative position bias, gated per head and frame ([`gated_bias`]);
//! UniSpeech's and UniSpeech-SAT's are wav2vec 2.0's.
//! The CTC head projects every frame to the vocabulary (`logits` `[batch, frames, vocab]`); the
//! sequence classifier projects, averages the kept frames and classifies; the x-vector head
//! ([`xvector`]) pools speaker embeddings.

mod conformer;
mod gated_bias;
mod pretraining;
mod squeeze;
mod xvector;

use std::collections::BTreeMap;

use oxtorch_tensor::{DType, Device, Tensor};

use super::classification::num_labels;
use super::seq2seq_io::check_inputs;
use crate::config::Config;
use crate::error::{Error, Result};
use crate::layers::{padding_mask, Activation, EncoderLayer, LayerNorm, Linear};
use crate::weights::{Vars, Weights};
use conformer::Conformer;
use gated_bias::GatedRelativeBias;
use pretraining::{PreTraining, Style};
use squeeze::Squeeze;
use xvector::XVector;

/// The inputs a wav2vec 2.0 or HuBERT model takes.
const INPUTS: &[&str] = &["input_values", "attention_mask", "mask_time_indices"];

/// How the feature encoder's convolutions are normed (`feat_extract_norm`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum FeatureNorm {
    /// `group`: the first convolution's output normed per channel over time
    Group,
    /// `layer`: every convolution's output normed over the channels per frame
    Layer,
}

/// One convolution of the feature encoder.
#[derive(Debug, Clone)]
struct ConvLayer {
    /// `[out, in, kernel]`
    weight: Tensor,
    bias: Option<Tensor>,
    stride: usize,
    /// the group or layer norm's scale and shift, where this layer has one
    norm: Option<(Tensor, Tensor)>,
}

/// The model families this module runs: each one's architecture prefix, weight prefix and heads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Family {
    Wav2Vec2,
    Wav2Vec2Conformer,
    Hubert,
    Data2VecAudio,
    UniSpeech,
    UniSpeechSat,
    WavLM,
    Sew,
}

impl Family {
    /// Every family, longer architecture prefixes first (`UniSpeechSat` before `UniSpeech`).
    const ALL: [Family; 8] = [
        Family::Wav2Vec2Conformer,
        Family::Wav2Vec2,
        Family::Hubert,
        Family::Data2VecAudio,
        Family::UniSpeechSat,
        Family::UniSpeech,
        Family::WavLM,
        Family::Sew,
    ];

    /// The family whose architecture names start with `arch`'s prefix.
    fn of(arch: &str) -> Option<Family> {
        Self::ALL.into_iter().find(|f| arch.starts_with(f.name()))
    }

    /// The architecture names' prefix (`Wav2Vec2` in `Wav2Vec2ForCTC`).
    fn name(self) -> &'static str {
        match self {
            Family::Wav2Vec2 => "Wav2Vec2",
            Family::Wav2Vec2Conformer => "Wav2Vec2Conformer",
            Family::Hubert => "Hubert",
            Family::Data2VecAudio => "Data2VecAudio",
            Family::UniSpeech => "UniSpeech",
            Family::UniSpeechSat => "UniSpeechSat",
            Family::WavLM => "WavLM",
            Family::Sew => "SEW",
        }
    }

    /// The base model's weight prefix in a checkpoint with a head (`base_model_prefix`).
    fn prefix(self) -> &'static str {
        match self {
            Family::Wav2Vec2 => "wav2vec2",
            Family::Wav2Vec2Conformer => "wav2vec2_conformer",
            Family::Hubert => "hubert",
            Family::Data2VecAudio => "data2vec_audio",
            Family::UniSpeech => "unispeech",
            Family::UniSpeechSat => "unispeech_sat",
            Family::WavLM => "wavlm",
            Family::Sew => "sew",
        }
    }

    /// Whether transformers has this family's `head` (`ForCTC`, `ForXVector`, ...).
    fn has_head(self, head: &str) -> bool {
        match head {
            "Model" | "ForCTC" | "ForSequenceClassification" => true,
            "ForAudioFrameClassification" | "ForXVector" => {
                !matches!(self, Family::Hubert | Family::UniSpeech | Family::Sew)
            }
            "ForPreTraining" => matches!(
                self,
                Family::Wav2Vec2 | Family::Wav2Vec2Conformer | Family::UniSpeech | Family::UniSpeechSat
            ),
            _ => false,
        }
    }
}

/// What sits on the encoder.
#[derive(Debug, Clone)]
enum Head {
    /// `Wav2Vec2Model`, `HubertModel`
    None,
    /// `*ForCTC`: `lm_head`
    Ctc(Linear),
    /// `*ForSequenceClassification`: `projector`, the mean of the kept frames, `classifier`
    /// (over the softmax-weighted sum of every hidden state with `use_weighted_layer_sum`)
    /// `*ForAudioFrameClassification` (no projector): `classifier` on every frame
    Classifier { projector: Option<Linear>, classifier: Linear, layer_weights: Option<Tensor> },
    /// `*ForXVector`: speaker `embeddings` and `logits` (over the weighted hidden states with
    /// `use_weighted_layer_sum`)
    XVector { head: Box<XVector>, layer_weights: Option<Tensor> },
    /// `*ForPreTraining`: the quantizer and the projections of the contrastive task
    PreTraining(Box<PreTraining>),
}

impl Head {
    /// `layer_weights`, the softmax weights of every hidden state, where the head reads their sum.
    fn layer_weights(&self) -> Option<&Tensor> {
        match self {
            Head::Classifier { layer_weights, .. } | Head::XVector { layer_weights, .. } => {
                layer_weights.as_ref()
            }
            _ => None,
        }
    }
}

/// A wav2vec 2.0 or HuBERT model (see the module docs).
#[derive(Debug, Clone)]
pub struct Wav2Vec2 {
    convs: Vec<ConvLayer>,
    feature_norm: FeatureNorm,
    feature_act: Activation,
    /// the features' norm before the projection (HuBERT may have none)
    projection_norm: Option<LayerNorm>,
    /// the features' projection to the model width (SEW has none where they match)
    projection: Option<Linear>,
    /// the positional convolutions `[hidden, hidden / groups, kernel]` and their biases: one
    /// (weight-normed, folded) for wav2vec 2.0 and HuBERT, a stack for data2vec-audio, whose
    /// outputs are each layer-normed (without a scale or shift) before the activation
    positional: Vec<(Tensor, Option<Tensor>)>,
    pos_groups: usize,
    /// data2vec-audio's positional stack, whose convolutions are each layer-normed
    pos_normed: bool,
    /// WavLM's gated relative position bias
    relative: Option<GatedRelativeBias>,
    /// Wav2Vec2-Conformer's blocks (`layers` then empty)
    conformer: Option<Conformer>,
    /// SEW's pooling before the blocks and widening after them
    squeeze: Option<Squeeze>,
    /// `masked_spec_embed` `[hidden]`, what the frames of `mask_time_indices` become (`None` where
    /// the checkpoint has none)
    masked_spec_embed: Option<Tensor>,
    /// whether `mask_time_indices` replaces frames (`apply_spec_augment`)
    spec_augment: bool,
    /// before the first block (post-norm) or after the last (`do_stable_layer_norm`)
    encoder_norm: LayerNorm,
    layers: Vec<EncoderLayer>,
    stable: bool,
    heads: usize,
    act: Activation,
    head: Head,
    /// whether `extract_features` is an output (`Wav2Vec2Model`)
    extract_features: bool,
}

/// The positional convolution's weight: `conv.weight`, or its weight norm `g · v / ‖v‖` (the norm
/// over the output and input channels, per kernel position: `dim=2`) from `weight_g`/`weight_v`
/// or `parametrizations.weight.original0`/`original1`.
fn positional_weight(v: &Vars<'_>, hidden: usize, per_group: usize, kernel: usize) -> Result<Tensor> {
    let shape = [hidden, per_group, kernel];
    if let Some(w) = v.get_opt("weight", &shape)? {
        return Ok(w);
    }
    let p = v.pp("parametrizations").pp("weight");
    let (g, dir) = match v.get_opt("weight_g", &[1, 1, kernel])? {
        Some(g) => (g, v.get("weight_v", &shape)?),
        None => (p.get("original0", &[1, 1, kernel])?, p.get("original1", &shape)?),
    };
    let dtype = dir.dtype();
    let (g, dir) = (g.to_dtype(DType::F32)?, dir.to_dtype(DType::F32)?);
    let norm = dir.square()?.sum([0, 1], true)?.sqrt()?;
    Ok(dir.mul(&g.div(&norm)?)?.to_dtype(dtype)?)
}

impl Wav2Vec2 {
    /// Loads `arch`: `Wav2Vec2Model`, `Wav2Vec2ForCTC`, `Wav2Vec2ForSequenceClassification`,
    /// `Wav2Vec2ForAudioFrameClassification`, `Wav2Vec2ForXVector` or another family's head of
    /// those names (`Hubert*`, `Data2VecAudio*`, `UniSpeech*`, `UniSpeechSat*`, `WavLM*`), with
    /// or without the family's prefix (`wav2vec2.`, `wavlm.`, ...) on the encoder.
    pub fn load(arch: &str, cfg: &Config, weights: &Weights) -> Result<Self> {
        let family = Family::of(arch)
            .filter(|f| f.has_head(&arch[f.name().len()..]))
            .ok_or_else(|| Error::Unsupported(format!("architecture \"{arch}\" is not supported")))?;
        let hubert = family == Family::Hubert;
        let data2vec = family == Family::Data2VecAudio;
        let sew = family == Family::Sew;
        // (`conv_pos_batch_norm` is HuBERT's alone: a wav2vec 2.0 config's is ignored, as there.)
        for (key, what, applies) in [
            ("add_adapter", "adapter layers (add_adapter)", true),
            ("conv_pos_batch_norm", "conv_pos_batch_norm", hubert),
        ] {
            if applies && cfg.bool_or(key, false)? {
                return Err(Error::Unsupported(format!("{arch} with {what} is not supported")));
            }
        }
        if cfg.get("adapter_attn_dim").is_some_and(|v| !v.is_null()) {
            return Err(Error::Unsupported(format!(
                "{arch} with MMS attention adapters (adapter_attn_dim) is not supported"
            )));
        }
        let prefix = family.prefix();
        let v = weights.base_vars(prefix);

        // (SEW's defaults: 13 convolutions, every other one unstrided.)
        let (dims, kernels, strides): (&[usize], &[usize], &[usize]) = match sew {
            true => (
                &[64, 128, 128, 128, 128, 256, 256, 256, 256, 512, 512, 512, 512],
                &[10, 3, 1, 3, 1, 3, 1, 3, 1, 2, 1, 2, 1],
                &[5, 2, 1, 2, 1, 2, 1, 2, 1, 2, 1, 2, 1],
            ),
            false => (&[512; 7], &[10, 3, 3, 3, 3, 2, 2], &[5, 2, 2, 2, 2, 2, 2]),
        };
        let dims = cfg.usize_list_or("conv_dim", dims, 1)?;
        let kernels = cfg.usize_list_or("conv_kernel", kernels, 1)?;
        let strides = cfg.usize_list_or("conv_stride", strides, 1)?;
        if kernels.len() != dims.len() || strides.len() != dims.len() {
            return Err(Error::Config(format!(
                "conv_dim ({}), conv_kernel ({}) and conv_stride ({}) must have one entry per convolution",
                dims.len(),
                kernels.len(),
                strides.len()
            )));
        }
        // (data2vec-audio's convolutions are all layer-normed, whatever the config says.)
        let feature_norm = match if data2vec { "layer" } else { cfg.str_or("feat_extract_norm", "group")? } {
            "group" => FeatureNorm::Group,
            "layer" => FeatureNorm::Layer,
            other => {
                return Err(Error::Config(format!(
                    "feat_extract_norm must be \"group\" or \"layer\", got \"{other}\""
                )))
            }
        };
        let conv_bias = cfg.bool_or("conv_bias", false)?;
        let fe = v.pp("feature_extractor").pp("conv_layers");
        let mut convs = Vec::with_capacity(dims.len());
        for (i, ((&out, &kernel), &stride)) in dims.iter().zip(&kernels).zip(&strides).enumerate() {
            let input = if i == 0 { 1 } else { dims[i - 1] };
            let l = fe.pp(i);
            let conv = l.pp("conv");
            let normed = feature_norm == FeatureNorm::Layer || i == 0;
            let norm = match normed {
                true => {
                    Some((l.pp("layer_norm").get("weight", &[out])?, l.pp("layer_norm").get("bias", &[out])?))
                }
                false => None,
            };
            let bias = if conv_bias { Some(conv.get("bias", &[out])?) } else { None };
            convs.push(ConvLayer { weight: conv.get("weight", &[out, input, kernel])?, bias, stride, norm });
        }

        let hidden = cfg.usize_or("hidden_size", 768)?;
        let heads = cfg.usize_or("num_attention_heads", 12)?;
        let layers_n = cfg.usize_or("num_hidden_layers", 12)?;
        let intermediate = cfg.usize_or("intermediate_size", 3072)?;
        let eps = cfg.f64_or("layer_norm_eps", 1e-5)?;
        if heads == 0 || hidden % heads != 0 {
            return Err(Error::Config(format!(
                "hidden_size ({hidden}) must be a positive multiple of num_attention_heads ({heads})"
            )));
        }
        let features = *dims.last().expect("conv_dim is not empty");
        let fp = v.pp("feature_projection");
        // (SEW norms the features at the top and projects them only to another width.)
        let projection_norm = match (sew, !hubert || cfg.bool_or("feat_proj_layer_norm", true)?) {
            (true, _) => Some(LayerNorm::load(&v.pp("layer_norm"), features, eps)?),
            (false, true) => Some(LayerNorm::load(&fp.pp("layer_norm"), features, eps)?),
            (false, false) => None,
        };
        let projection = match (sew, features == hidden) {
            (true, true) => None,
            (true, false) => Some(Linear::load(&fp, features, hidden, true)?),
            (false, _) => Some(Linear::load(&fp.pp("projection"), features, hidden, true)?),
        };

        let pos_kernel = match data2vec {
            true => cfg.usize_or("conv_pos_kernel_size", 19)?,
            false => cfg.usize_or("num_conv_pos_embeddings", 128)?,
        };
        let pos_groups = cfg.usize_or("num_conv_pos_embedding_groups", 16)?;
        if pos_groups == 0 || hidden % pos_groups != 0 {
            return Err(Error::Config(format!(
                "num_conv_pos_embedding_groups ({pos_groups}) must divide hidden_size ({hidden})"
            )));
        }
        let enc = v.pp("encoder");
        let pos = enc.pp("pos_conv_embed");
        let per_group = hidden / pos_groups;
        let conformer_family = family == Family::Wav2Vec2Conformer;
        let positional = match data2vec {
            // `num_conv_pos_embeddings` convolutions, plain weights.
            true => (0..cfg.usize_or("num_conv_pos_embeddings", 5)?)
                .map(|i| {
                    let c = pos.pp("layers").pp(i).pp("conv");
                    Ok((c.get("weight", &[hidden, per_group, pos_kernel])?, Some(c.get("bias", &[hidden])?)))
                })
                .collect::<Result<Vec<_>>>()?,
            // (The Conformer builds a positional convolution it never runs.)
            false if conformer_family => Vec::new(),
            false => {
                let c = pos.pp("conv");
                vec![(positional_weight(&c, hidden, per_group, pos_kernel)?, c.get_opt("bias", &[hidden])?)]
            }
        };
        // (The Conformer norms after its blocks, as the stable layout does.)
        let stable = conformer_family || (!data2vec && !sew && cfg.bool_or("do_stable_layer_norm", false)?);
        let conformer = match conformer_family {
            true => Some(Conformer::load(&enc, cfg, hidden, heads, layers_n)?),
            false => None,
        };
        let feature_act = Activation::from_name(cfg.str_or("feat_extract_activation", "gelu")?)?;
        let squeeze = match sew {
            true => Some(Squeeze::load(&enc, hidden, cfg.usize_or("squeeze_factor", 2)?, feature_act)?),
            false => None,
        };
        // (Without blocks WavLM has no table: transformers' first block holds it.)
        let relative = match family {
            Family::WavLM if layers_n > 0 => Some(GatedRelativeBias::load(
                &enc.pp("layers"),
                layers_n,
                heads,
                hidden / heads,
                cfg.usize_or("num_buckets", 320)?,
                cfg.usize_or("max_bucket_distance", 800)?,
            )?),
            _ => None,
        };
        let layers = (0..if conformer_family { 0 } else { layers_n })
            .map(|i| {
                let l = enc.pp("layers").pp(i);
                let (att, ff) = (l.pp("attention"), l.pp("feed_forward"));
                Ok(EncoderLayer {
                    query: Linear::load(&att.pp("q_proj"), hidden, hidden, true)?,
                    key: Linear::load(&att.pp("k_proj"), hidden, hidden, true)?,
                    value: Linear::load(&att.pp("v_proj"), hidden, hidden, true)?,
                    attn_out: Linear::load(&att.pp("out_proj"), hidden, hidden, true)?,
                    attn_norm: LayerNorm::load(&l.pp("layer_norm"), hidden, eps)?,
                    inner: Linear::load(&ff.pp("intermediate_dense"), hidden, intermediate, true)?,
                    out: Linear::load(&ff.pp("output_dense"), intermediate, hidden, true)?,
                    out_norm: LayerNorm::load(&l.pp("final_layer_norm"), hidden, eps)?,
                    pre_norm: stable,
                })
            })
            .collect::<Result<Vec<_>>>()?;

        let layer_weights = || -> Result<Option<Tensor>> {
            match cfg.bool_or("use_weighted_layer_sum", false)? {
                true => Ok(Some(weights.vars("").get("layer_weights", &[layers_n + 1])?)),
                false => Ok(None),
            }
        };
        let head = match &arch[family.name().len()..] {
            "Model" => Head::None,
            "ForCTC" => {
                // (The Conformer's config has no default vocabulary.)
                let vocab = cfg
                    .nullable_usize_or("vocab_size", if conformer_family { None } else { Some(32) })?
                    .ok_or_else(|| {
                        Error::Config(format!("{arch} needs vocab_size (the CTC head's outputs)"))
                    })?;
                Head::Ctc(Linear::load(&weights.vars("lm_head"), hidden, vocab, true)?)
            }
            "ForPreTraining" => {
                let style = match family {
                    Family::UniSpeech => Style::UniSpeech,
                    Family::UniSpeechSat => Style::UniSpeechSat,
                    _ => Style::Wav2Vec2,
                };
                Head::PreTraining(Box::new(PreTraining::load(
                    &weights.vars(""),
                    cfg,
                    style,
                    features,
                    hidden,
                )?))
            }
            "ForXVector" => Head::XVector {
                head: Box::new(XVector::load(&weights.vars(""), cfg, hidden)?),
                layer_weights: layer_weights()?,
            },
            head @ ("ForSequenceClassification" | "ForAudioFrameClassification") => {
                let (projector, width) = match head {
                    "ForSequenceClassification" => {
                        let proj = cfg.usize_or("classifier_proj_size", 256)?;
                        (Some(Linear::load(&weights.vars("projector"), hidden, proj, true)?), proj)
                    }
                    _ => (None, hidden),
                };
                let classifier = Linear::load(&weights.vars("classifier"), width, num_labels(cfg)?, true)?;
                Head::Classifier { projector, classifier, layer_weights: layer_weights()? }
            }
            _ => return Err(Error::Unsupported(format!("architecture \"{arch}\" is not supported"))),
        };
        Ok(Wav2Vec2 {
            convs,
            feature_norm,
            feature_act,
            projection_norm,
            projection,
            positional,
            pos_groups,
            pos_normed: data2vec,
            relative,
            conformer,
            squeeze,
            // (transformers has the embedding only where SpecAugment could mask: UniSpeech-SAT always.)
            masked_spec_embed: match family == Family::UniSpeechSat
                || cfg.f64_or("mask_time_prob", 0.05)? > 0.0
                || cfg.f64_or("mask_feature_prob", 0.0)? > 0.0
            {
                true => v.get_opt("masked_spec_embed", &[hidden])?,
                false => None,
            },
            spec_augment: cfg.bool_or("apply_spec_augment", true)?,
            encoder_norm: LayerNorm::load(&enc.pp("layer_norm"), hidden, eps)?,
            layers,
            stable,
            heads,
            act: Activation::from_name(cfg.str_or("hidden_act", "gelu")?)?,
            head,
            extract_features: !matches!(family, Family::Hubert | Family::Sew) && arch.ends_with("Model"),
        })
    }

    /// Whether this is a CTC model (`*ForCTC`), whose `logits` decode to text frame by frame.
    pub fn is_ctc(&self) -> bool {
        matches!(self.head, Head::Ctc(_))
    }

    /// A CTC model's greedy per-frame ids `[batch, frames]` (int64: the argmax of `logits` at every
    /// frame, padded ones included, as transformers' `argmax(logits, -1)`) of `input_values` and
    /// an optional `attention_mask` over the samples.
    pub fn ctc_ids(&self, input_values: &Tensor, attention_mask: Option<&Tensor>) -> Result<Tensor> {
        if !self.is_ctc() {
            return Err(Error::Input("this model has no CTC head (it is not a *ForCTC model)".into()));
        }
        let mut inputs = BTreeMap::from([("input_values".to_string(), input_values.clone())]);
        if let Some(m) = attention_mask {
            inputs.insert("attention_mask".to_string(), m.clone());
        }
        let logits = self.forward_named(&inputs, false)?.swap_remove(0).1;
        Ok(logits.to_dtype(DType::F32)?.argmax(Some(-1), false)?.to_dtype(DType::I64)?.to(Device::Cpu)?)
    }

    /// The input names: `input_values` (float `[batch, samples]`), `attention_mask` and
    /// `mask_time_indices`.
    pub fn input_names(&self) -> &'static [&'static str] {
        INPUTS
    }

    /// The device of the weights.
    pub fn device(&self) -> Device {
        self.encoder_norm.weight.device()
    }

    /// The frames `samples` samples give through the convolutions (`None` for none).
    fn frames(&self, samples: usize) -> Option<usize> {
        self.convs.iter().try_fold(samples, |len, c| {
            let k = c.weight.dims()[2];
            (len >= k).then(|| (len - k) / c.stride + 1)
        })
    }

    /// Runs the model on named inputs: `input_values` (required, float `[batch, samples]`),
    /// `attention_mask` (`[batch, samples]`, each row's kept samples first) and
    /// `mask_time_indices` (`[batch, frames]`, bool or ones and zeros: those frames become
    /// `masked_spec_embed` before the encoder, where `apply_spec_augment`). Outputs:
    /// `last_hidden_state` (and `extract_features`, the normed convolution features, for
    /// `Wav2Vec2Model`), the CTC head's or the classifier's `logits`, the x-vector head's `logits`
    /// and `embeddings`, the pre-training heads' outputs (see `pretraining.rs`), and `hidden_states.*` (the
    /// first block's input, then each block's output).
    pub fn forward_named(
        &self,
        inputs: &BTreeMap<String, Tensor>,
        output_hidden_states: bool,
    ) -> Result<Vec<(String, Tensor)>> {
        check_inputs_of(inputs)?;
        let x =
            inputs.get("input_values").ok_or_else(|| Error::Input("missing input 'input_values'".into()))?;
        let &[batch, samples] = x.dims() else {
            return Err(Error::Input(format!(
                "input 'input_values' must be [batch, samples], got {:?}",
                x.dims()
            )));
        };
        let frames = self.frames(samples).filter(|&f| f > 0).ok_or_else(|| {
            Error::Input(format!(
                "input 'input_values' has {samples} samples, too few for one frame of the convolutions"
            ))
        })?;
        let mask = inputs.get("attention_mask");
        let frame_mask = mask.map(|m| self.frame_mask(m, batch, samples, frames)).transpose()?;
        let masked_frames =
            inputs.get("mask_time_indices").map(|m| masked_frames(m, batch, frames)).transpose()?;
        let device = self.device();
        let dtype = self.encoder_norm.weight.dtype();
        let x = x.to(device)?.to_dtype(dtype)?;
        // The feature encoder: `[batch, 1, samples]` → `[batch, channels, frames]`.
        let mut h = x.unsqueeze(1)?;
        for (i, c) in self.convs.iter().enumerate() {
            h = h.conv1d(&c.weight, c.bias.as_ref(), &[c.stride], 0, &[1], 1)?;
            if let Some((w, b)) = &c.norm {
                let channels = w.dims()[0];
                h = match self.feature_norm {
                    FeatureNorm::Group if i == 0 => h.group_norm(channels, Some(w), Some(b), 1e-5)?,
                    _ => {
                        h.transpose(1, 2)?.layer_norm(&[channels], Some(w), Some(b), 1e-5)?.transpose(1, 2)?
                    }
                };
            }
            h = self.feature_act.forward(&h)?;
        }
        let features = h.transpose(1, 2)?;
        let normed = match &self.projection_norm {
            Some(n) => n.forward(&features)?,
            None => features,
        };
        let mut h = match &self.projection {
            Some(p) => p.forward(&normed)?,
            None => normed.clone(),
        };
        let masked_frames = masked_frames.map(|m| m.to(device)).transpose()?;
        if let (Some(m), true) = (&masked_frames, self.spec_augment) {
            let embed = self.masked_spec_embed.as_ref().ok_or_else(|| {
                Error::Input(
                    "input 'mask_time_indices' needs masked_spec_embed, which this model lacks (the checkpoint has none, or mask_time_prob and mask_feature_prob are 0)".into(),
                )
            })?;
            let embed = embed.to_dtype(dtype)?.reshape([1, 1, embed.numel()])?;
            h = Tensor::where_cond(&m.unsqueeze(-1)?, &embed, &h)?;
        }
        let frame_mask = frame_mask.map(|m| m.to(device)).transpose()?;
        if let Some(m) = &frame_mask {
            h = Tensor::where_cond(&m.ne(0)?.unsqueeze(-1)?, &h, 0.0)?;
        }
        // (The Conformer has no positional convolution; data2vec-audio's empty stack adds `h` itself.)
        if self.conformer.is_none() {
            h = match &self.squeeze {
                Some(s) => s.pool(&h, &self.positions(&h)?)?,
                None => h.add(&self.positions(&h)?)?,
            };
        }
        if !self.stable {
            h = self.encoder_norm.forward(&h)?;
        }
        let keep = match &frame_mask {
            Some(m) => m.clone(),
            None => Tensor::ones([batch, frames], (DType::I64, device))?,
        };
        let keep = match &self.squeeze {
            Some(s) => s.pool_mask(&keep, h.dims()[1])?,
            None => keep,
        };
        let additive = padding_mask(&keep, dtype)?;
        let weighted = self.head.layer_weights().is_some();
        let bias = self.relative.as_ref().map(|r| r.bias(frames)).transpose()?;
        let mut hidden_states = Vec::new();
        if let Some(conformer) = &self.conformer {
            h = conformer.forward(
                h,
                &additive,
                self.act,
                output_hidden_states || weighted,
                &mut hidden_states,
            )?;
        }
        for (i, layer) in self.layers.iter().enumerate() {
            if output_hidden_states || weighted {
                hidden_states.push(h.clone());
            }
            h = match (&self.relative, &bias) {
                (Some(relative), Some(bias)) => {
                    layer.forward_masked_by(&h, self.heads, self.act, |input| {
                        relative.gated(i, input, bias)?.add(&additive).map_err(Into::into)
                    })?
                }
                _ => layer.forward(&h, &additive, self.heads, self.act)?,
            };
        }
        // (Without blocks transformers records no hidden states.)
        if (output_hidden_states || weighted) && self.conformer.is_none() && !self.layers.is_empty() {
            hidden_states.push(h.clone());
        }
        if let Some(s) = &self.squeeze {
            h = s.upsample(&h, frames)?;
        }
        if self.stable {
            h = self.encoder_norm.forward(&h)?;
        }
        let mut out = Vec::new();
        match &self.head {
            Head::None => {
                out.push(("last_hidden_state".to_string(), h));
                if self.extract_features {
                    out.push(("extract_features".to_string(), normed));
                }
            }
            Head::Ctc(lm_head) => out.push(("logits".to_string(), lm_head.forward(&h)?)),
            Head::PreTraining(head) => out.extend(head.forward(h, &normed, masked_frames.as_ref())?),
            Head::XVector { head, layer_weights } => {
                let h = weighted_sum(layer_weights.as_ref(), &hidden_states, h)?;
                let kept = frame_mask.as_ref().map(kept_counts).transpose()?;
                let (logits, embeddings) = head.forward(&h, kept.as_deref())?;
                out.push(("logits".to_string(), logits));
                out.push(("embeddings".to_string(), embeddings));
            }
            Head::Classifier { projector, classifier, layer_weights } => {
                let h = weighted_sum(layer_weights.as_ref(), &hidden_states, h)?;
                let Some(projector) = projector else {
                    out.push(("logits".to_string(), classifier.forward(&h)?));
                    return Ok(with_hidden_states(out, output_hidden_states, hidden_states));
                };
                let p = projector.forward(&h)?;
                let pooled = match &frame_mask {
                    Some(m) => {
                        // (SEW's weighted hidden states are squeezed: their frames are the first.)
                        let kept = m.narrow(1, 0, p.dims()[1])?.ne(0)?.unsqueeze(-1)?;
                        let sum = Tensor::where_cond(&kept, &p, 0.0)?.sum([1], false)?;
                        sum.div(&kept.to_dtype(dtype)?.sum([1], false)?)?
                    }
                    None => p.mean([1], false)?,
                };
                out.push(("logits".to_string(), classifier.forward(&pooled)?));
            }
        }
        Ok(with_hidden_states(out, output_hidden_states, hidden_states))
    }

    /// The positional convolutions' output for `h` `[batch, frames, hidden]`: each grouped over
    /// time with `kernel / 2` zeros each side (strided by SEW's squeeze; the last output dropped
    /// for an even kernel), for
    /// data2vec-audio layer-normed over the channels, and activated.
    fn positions(&self, h: &Tensor) -> Result<Tensor> {
        let mut p = h.transpose(1, 2)?;
        let stride = self.squeeze.as_ref().map_or(1, Squeeze::factor);
        for (weight, bias) in &self.positional {
            let kernel = weight.dims()[2];
            p = p.conv1d(weight, bias.as_ref(), &[stride], kernel / 2, &[1], self.pos_groups)?;
            // (An even kernel's last output is dropped: `frames` outputs unstrided.)
            let kept = p.dims()[2] - usize::from(kernel % 2 == 0);
            p = p.narrow(2, 0, kept)?;
            if self.pos_normed {
                let hidden = weight.dims()[0];
                p = p.transpose(1, 2)?.layer_norm(&[hidden], None, None, 1e-5)?.transpose(1, 2)?;
            }
            p = self.feature_act.forward(&p)?;
        }
        Ok(p.transpose(1, 2)?)
    }

    /// The frames each row keeps `[batch, frames]` (int64 ones, then zeros): a row of `attention_mask`
    /// keeping `n` samples keeps the frames `n` samples give (transformers counts the mask's ones,
    /// so the kept samples must come first).
    fn frame_mask(&self, mask: &Tensor, batch: usize, samples: usize, frames: usize) -> Result<Tensor> {
        if mask.dims() != [batch, samples] {
            return Err(Error::Input(format!(
                "input 'attention_mask' must be [{batch}, {samples}] like input_values, got {:?}",
                mask.dims()
            )));
        }
        let values = mask.to_dtype(DType::F64)?.to_vec::<f64>()?;
        let mut keep = vec![0i64; batch * frames];
        for (row, values) in values.chunks(samples.max(1)).enumerate() {
            if values.iter().any(|&v| v != 0.0 && v != 1.0) {
                return Err(Error::Input("input 'attention_mask' must hold ones and zeros".into()));
            }
            let kept = values.iter().filter(|&&v| v == 1.0).count();
            let n = self.frames(kept).filter(|&n| n > 0).ok_or_else(|| {
                Error::Input(format!(
                    "row {row} of attention_mask keeps {kept} samples, too few for one frame of the convolutions"
                ))
            })?;
            keep[row * frames..row * frames + n].fill(1);
        }
        Ok(Tensor::from_vec(keep, [batch, frames])?)
    }
}

/// The hidden states' sum weighted by the softmax of `layer_weights`, or `last` without them.
fn weighted_sum(layer_weights: Option<&Tensor>, hidden_states: &[Tensor], last: Tensor) -> Result<Tensor> {
    let Some(w) = layer_weights else { return Ok(last) };
    let dtype = last.dtype();
    let w = w.to_dtype(DType::F32)?.softmax(0, None)?.to_dtype(dtype)?;
    let stacked = Tensor::stack(&hidden_states.iter().collect::<Vec<_>>(), 1)?;
    Ok(stacked.mul(&w.reshape([1, w.numel(), 1, 1])?)?.sum([1], false)?)
}

/// Each row's kept frames, counted off a frame mask `[batch, frames]` of ones then zeros.
fn kept_counts(mask: &Tensor) -> Result<Vec<usize>> {
    let frames = mask.dims()[1];
    let values = mask.to_dtype(DType::I64)?.to(Device::Cpu)?.to_vec::<i64>()?;
    Ok(values.chunks(frames.max(1)).map(|row| row.iter().filter(|&&v| v != 0).count()).collect())
}

/// `out` and, when asked for, the `hidden_states.*`.
fn with_hidden_states(
    mut out: Vec<(String, Tensor)>,
    output_hidden_states: bool,
    hidden_states: Vec<Tensor>,
) -> Vec<(String, Tensor)> {
    if output_hidden_states {
        out.extend(hidden_states.into_iter().enumerate().map(|(i, h)| (format!("hidden_states.{i}"), h)));
    }
    out
}

/// `mask_time_indices` `[batch, frames]` (bool, or integer ones and zeros) as a bool mask.
fn masked_frames(m: &Tensor, batch: usize, frames: usize) -> Result<Tensor> {
    if m.dims() != [batch, frames] {
        return Err(Error::Input(format!(
            "input 'mask_time_indices' must be [{batch}, {frames}] (batch, frames), got {:?}",
            m.dims()
        )));
    }
    if m.dtype().is_float() {
        return Err(Error::Input(format!(
            "input 'mask_time_indices' must be a bool tensor, got {:?}",
            m.dtype()
        )));
    }
    let m = m.to(Device::Cpu)?;
    if m.dtype() != DType::Bool && m.to_dtype(DType::I64)?.to_vec::<i64>()?.iter().any(|&v| v != 0 && v != 1)
    {
        return Err(Error::Input("input 'mask_time_indices' must hold ones and zeros".into()));
    }
    Ok(m.ne(0)?)
}

/// [`check_inputs`] for `input_values` (float), `attention_mask` and `mask_time_indices`.
fn check_inputs_of(inputs: &BTreeMap<String, Tensor>) -> Result<()> {
    let values = inputs
        .iter()
        .filter(|(k, _)| !matches!(k.as_str(), "input_values" | "mask_time_indices"))
        .map(|(k, v)| (k.clone(), v.clone()));
    check_inputs(&values.collect(), INPUTS)?;
    if let Some(x) = inputs.get("input_values") {
        if !x.dtype().is_float() {
            return Err(Error::Input(format!(
                "input 'input_values' must be a float tensor, got {:?}",
                x.dtype()
            )));
        }
    }
    Ok(())
}
