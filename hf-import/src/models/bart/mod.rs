//! BART and mBART (`BartForConditionalGeneration`, `BartModel`, `BartForSequenceClassification`
//! and their `MBart*` names: summarisers, translators, zero-shot NLI classifiers), Marian
//! (`MarianMTModel`, `MarianModel`: OPUS-MT translators), Pegasus
//! (`PegasusForConditionalGeneration`, `PegasusModel`) and M2M100 (`M2M100ForConditionalGeneration`,
//! `M2M100Model`: M2M100 and NLLB-200 translators): an encoder and a decoder ([`stack`]) over one
//! shared embedding; BART's blocks normalise after each sub-block, the others' before, with a final
//! norm.
//!
//! Without `decoder_input_ids`, the decoder reads `input_ids` shifted right behind
//! `decoder_start_token_id` (BART's denoising setup, as transformers' `BartModel`; mBART rotates
//! the token at each row's non-padding count - 1, its last when right-padded, to the front). The LM head is `lm_head.weight` when the
//! checkpoint has it, the shared table otherwise, plus `final_logits_bias` when present.

mod stack;

use std::collections::BTreeMap;

use oxtorch_tensor::{DType, Device, Tensor};

pub use self::stack::{BartStack, PositionKind, StackConfig, StackOutput};
use super::seq2seq_io::{at_last_eos, check_inputs, ids_and_mask, outputs};
use crate::config::Config;
use crate::error::{Error, Result};
use crate::generate::EncoderDecoder;
use crate::layers::{Activation, Embedding, EncoderDecoderCache, Linear};
use crate::weights::{Vars, Weights};

/// The BART-family architectures, with the model type each belongs to.
pub(super) const ARCHITECTURES: &[(&str, &str)] = &[
    ("BartForConditionalGeneration", "bart"),
    ("BartModel", "bart"),
    ("MBartForConditionalGeneration", "mbart"),
    ("MBartModel", "mbart"),
    ("BartForSequenceClassification", "bart"),
    ("MBartForSequenceClassification", "mbart"),
    ("MarianMTModel", "marian"),
    ("MarianModel", "marian"),
    ("PegasusForConditionalGeneration", "pegasus"),
    ("PegasusModel", "pegasus"),
    ("M2M100ForConditionalGeneration", "m2m_100"),
    ("M2M100Model", "m2m_100"),
    ("PLBartForConditionalGeneration", "plbart"),
    ("PLBartModel", "plbart"),
    ("PLBartForSequenceClassification", "plbart"),
    ("BlenderbotForConditionalGeneration", "blenderbot"),
    ("BlenderbotModel", "blenderbot"),
    ("BlenderbotSmallForConditionalGeneration", "blenderbot-small"),
    ("BlenderbotSmallModel", "blenderbot-small"),
];

/// The family of a BART-like model: what its config's defaults and its layout are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BartFamily {
    /// BART: post-norm, learned positions from row 2, an embedding layer norm
    Bart,
    /// mBART: BART with pre-norm blocks and final norms
    MBart,
    /// Marian (OPUS-MT): post-norm, sinusoidal positions, its own decoder vocabulary when not shared
    Marian,
    /// Pegasus: pre-norm with final norms, sinusoidal positions
    Pegasus,
    /// M2M100 (NLLB): pre-norm with final norms, fairseq's sinusoidal positions counted from the
    /// non-padding tokens
    M2M100,
    /// PLBart: BART's layout, scaled embeddings, mBART's shift
    PLBart,
    /// Blenderbot: pre-norm with final norms, learned positions from row 0
    Blenderbot,
    /// BlenderbotSmall: post-norm, learned positions from row 0, its decoder's embedding norm
    /// before the positions are added
    BlenderbotSmall,
}

const INPUTS: &[&str] = &["input_ids", "attention_mask", "decoder_input_ids", "decoder_attention_mask"];

/// `BartConfig` / `MBartConfig`: both stacks' sizes and the token settings.
#[derive(Debug, Clone)]
pub struct BartConfig {
    /// the encoder's sizes
    pub encoder: StackConfig,
    /// the decoder's sizes
    pub decoder: StackConfig,
    /// `vocab_size`
    pub vocab: usize,
    /// the decoder's vocabulary (Marian's `decoder_vocab_size` when the tables are not shared)
    pub decoder_vocab: usize,
    /// one token table for both stacks (all but Marian with `share_encoder_decoder_embeddings: false`)
    pub shared_tables: bool,
    /// `pad_token_id`
    pub pad: i64,
    /// `decoder_start_token_id`
    pub decoder_start: Option<i64>,
    /// which family's defaults and layout
    pub family: BartFamily,
    /// `eos_token_id`: the sequence classifier reads each row's last one
    pub eos: Option<i64>,
}

/// What a family's config class defaults (`BartConfig`, `BlenderbotConfig`, ...): its sizes and
/// special tokens, for the keys a config leaves out (transformers 5 saves only the values that
/// differ from them).
struct FamilyDefaults {
    vocab: usize,
    d_model: usize,
    /// encoder and decoder blocks
    layers: (usize, usize),
    heads: usize,
    ffn: usize,
    max_positions: usize,
    activation: &'static str,
    scale_embedding: bool,
    /// `pad_token_id`, `eos_token_id`, `decoder_start_token_id`
    pad: i64,
    eos: i64,
    start: Option<i64>,
}

impl BartFamily {
    /// The family of a model type (BART's for any other).
    fn of(model_type: &str) -> Self {
        match model_type {
            "mbart" => BartFamily::MBart,
            "marian" => BartFamily::Marian,
            "pegasus" => BartFamily::Pegasus,
            "m2m_100" => BartFamily::M2M100,
            "plbart" => BartFamily::PLBart,
            "blenderbot" => BartFamily::Blenderbot,
            "blenderbot-small" => BartFamily::BlenderbotSmall,
            _ => BartFamily::Bart,
        }
    }

    fn defaults(self) -> FamilyDefaults {
        let bart = FamilyDefaults {
            vocab: 50265,
            d_model: 1024,
            layers: (12, 12),
            heads: 16,
            ffn: 4096,
            max_positions: 1024,
            activation: "gelu",
            scale_embedding: false,
            pad: 1,
            eos: 2,
            start: Some(2),
        };
        match self {
            BartFamily::Bart => bart,
            BartFamily::MBart => FamilyDefaults { start: None, ..bart },
            BartFamily::Marian => {
                FamilyDefaults { vocab: 58101, pad: 58100, eos: 0, start: Some(58100), ..bart }
            }
            BartFamily::Pegasus => FamilyDefaults { pad: 0, eos: 1, start: Some(0), ..bart },
            BartFamily::M2M100 => {
                FamilyDefaults { vocab: 128112, activation: "relu", scale_embedding: true, ..bart }
            }
            BartFamily::PLBart => FamilyDefaults {
                vocab: 50005,
                d_model: 768,
                layers: (6, 6),
                heads: 12,
                ffn: 3072,
                scale_embedding: true,
                pad: 1,
                eos: 2,
                start: None,
                ..bart
            },
            BartFamily::Blenderbot => FamilyDefaults {
                vocab: 8008,
                d_model: 2560,
                layers: (2, 24),
                heads: 32,
                ffn: 10240,
                max_positions: 128,
                pad: 0,
                eos: 2,
                start: Some(1),
                ..bart
            },
            BartFamily::BlenderbotSmall => FamilyDefaults {
                d_model: 512,
                layers: (8, 8),
                ffn: 2048,
                max_positions: 512,
                pad: 0,
                eos: 2,
                start: Some(1),
                ..bart
            },
        }
    }

    /// Norms before each sub-block, with a final norm after the last block.
    fn pre_norm(self) -> bool {
        !matches!(
            self,
            BartFamily::Bart | BartFamily::Marian | BartFamily::PLBart | BartFamily::BlenderbotSmall
        )
    }

    /// Without `decoder_input_ids` the decoder reads `input_ids` shifted right (BART's and mBART's
    /// base models; PLBart's shift is mBART's).
    fn shifts_inputs(self) -> bool {
        matches!(self, BartFamily::Bart | BartFamily::MBart | BartFamily::PLBart)
    }
}

impl BartConfig {
    /// Reads the keys of `BartConfig` (or of the other families' config classes) and their
    /// defaults.
    pub fn from_config(cfg: &Config) -> Result<Self> {
        let family = BartFamily::of(cfg.model_type()?);
        let defaults = family.defaults();
        let d = cfg.usize_or("d_model", defaults.d_model)?;
        let layers = |key: &str, default: usize| -> Result<usize> {
            match cfg.get(key) {
                Some(v) if !v.is_null() => cfg.layers(key),
                _ => Ok(default),
            }
        };
        let int = |key: &str, default: Option<i64>| -> Result<Option<i64>> {
            match cfg.get(key) {
                None => Ok(default),
                Some(v) if v.is_null() => Ok(None),
                Some(v) => v
                    .as_i64()
                    .map(Some)
                    .ok_or_else(|| Error::Config(format!("{key} must be an integer, got {v}"))),
            }
        };
        let pad = int("pad_token_id", Some(defaults.pad))?.unwrap_or(defaults.pad);
        let scale = cfg.bool_or("scale_embedding", defaults.scale_embedding)?;
        let positions = match family {
            BartFamily::Marian | BartFamily::Pegasus => PositionKind::Sinusoidal,
            BartFamily::M2M100 => PositionKind::Fairseq { padding: pad },
            BartFamily::Blenderbot | BartFamily::BlenderbotSmall => PositionKind::Learned { offset: 0 },
            BartFamily::Bart | BartFamily::MBart | BartFamily::PLBart => PositionKind::Learned { offset: 2 },
        };
        let stack = |decoder: bool| -> Result<StackConfig> {
            let side = if decoder { "decoder" } else { "encoder" };
            let depth = if decoder { defaults.layers.1 } else { defaults.layers.0 };
            // BlenderbotSmall's decoder never applies its `embed_scale` (transformers 5.24).
            let small_decoder = decoder && family == BartFamily::BlenderbotSmall;
            Ok(StackConfig {
                d_model: d,
                heads: cfg.usize_or(&format!("{side}_attention_heads"), defaults.heads)?,
                ffn: cfg.usize_or(&format!("{side}_ffn_dim"), defaults.ffn)?,
                layers: layers(&format!("{side}_layers"), depth)?,
                max_positions: cfg.usize_or("max_position_embeddings", defaults.max_positions)?,
                act: Activation::from_name(cfg.str_or("activation_function", defaults.activation)?)?,
                embed_scale: if scale && !small_decoder { (d as f64).sqrt() } else { 1.0 },
                pre_norm: family.pre_norm(),
                decoder,
                positions,
                key_bias: true,
                // BlenderbotSmall's decoder norms its token embeddings before adding positions.
                norm_before_positions: small_decoder,
            })
        };
        let vocab = cfg.usize_or("vocab_size", defaults.vocab)?;
        let shared = family != BartFamily::Marian || cfg.bool_or("share_encoder_decoder_embeddings", true)?;
        Ok(BartConfig {
            encoder: stack(false)?,
            decoder: stack(true)?,
            vocab,
            decoder_vocab: if shared {
                vocab
            } else {
                cfg.nullable_usize_or("decoder_vocab_size", Some(vocab))?.unwrap_or(vocab)
            },
            shared_tables: shared,
            pad,
            decoder_start: int("decoder_start_token_id", defaults.start)?,
            family,
            eos: int("eos_token_id", Some(defaults.eos))?,
        })
    }
}

/// A BART-family model, as the architecture named in `config.json`.
#[derive(Debug, Clone)]
pub struct Bart {
    config: BartConfig,
    /// the encoder's token table (`shared`)
    shared: Embedding,
    /// the decoder's (the same table unless Marian's are not shared)
    decoder_tokens: Embedding,
    encoder: BartStack,
    decoder: BartStack,
    /// the generation model's head and `final_logits_bias` `[1, vocab]`
    head: Option<(Linear, Option<Tensor>)>,
    /// the sequence classifier's `classification_head`: `dense`, then `tanh`, then `out_proj`
    classifier: Option<(Linear, Linear)>,
}

impl Bart {
    /// `arch` (one of [`ARCHITECTURES`]) from `cfg` and `weights` (under `model.`, or at the top
    /// for a base model's checkpoint).
    pub fn load(arch: &str, cfg: &Config, weights: &Weights) -> Result<Self> {
        let model_type = cfg.model_type()?;
        if !ARCHITECTURES.iter().any(|(a, t)| *a == arch && *t == model_type) {
            return Err(Error::Unsupported(format!(
                "architecture \"{arch}\" with model_type \"{model_type}\""
            )));
        }
        let config = BartConfig::from_config(cfg)?;
        let root = weights.vars("");
        let model =
            if root.contains("model.encoder.layers.0.fc1.weight") || root.contains("model.shared.weight") {
                root.pp("model")
            } else {
                root.clone()
            };
        let d = config.encoder.d_model;
        let (shared, decoder_tokens) = if config.shared_tables {
            let shared = Self::shared_table(&model, config.vocab, d)?;
            (shared.clone(), shared)
        } else {
            (
                Embedding::load(&model.pp("encoder.embed_tokens"), config.vocab, d)?,
                Embedding::load(&model.pp("decoder.embed_tokens"), config.decoder_vocab, d)?,
            )
        };
        let (dtype, device) = (shared.weight.dtype(), shared.weight.device());
        let encoder = BartStack::load(&model.pp("encoder"), config.encoder.clone(), dtype, device)?;
        let decoder = BartStack::load(&model.pp("decoder"), config.decoder.clone(), dtype, device)?;
        let head = if arch.ends_with("ForConditionalGeneration") || arch == "MarianMTModel" {
            let target = config.decoder_vocab;
            let weight = root
                .get_opt("lm_head.weight", &[target, d])?
                .unwrap_or_else(|| decoder_tokens.weight.clone());
            let bias = root.get_opt("final_logits_bias", &[1, target])?;
            Some((Linear { weight, bias: None }, bias))
        } else {
            None
        };
        let classifier = if arch.ends_with("ForSequenceClassification") {
            let vars = root.pp("classification_head");
            let labels = super::num_labels(cfg)?;
            Some((
                Linear::load(&vars.pp("dense"), d, d, true)?,
                Linear::load(&vars.pp("out_proj"), d, labels, true)?,
            ))
        } else {
            None
        };
        Ok(Bart { config, shared, decoder_tokens, encoder, decoder, head, classifier })
    }

    /// `shared.weight`, or the encoder's own copy when the checkpoint keeps only that.
    fn shared_table(model: &Vars<'_>, vocab: usize, d: usize) -> Result<Embedding> {
        for name in ["shared", "encoder.embed_tokens", "decoder.embed_tokens"] {
            if model.contains(&format!("{name}.weight")) {
                return Embedding::load(&model.pp(name), vocab, d);
            }
        }
        Embedding::load(&model.pp("shared"), vocab, d)
    }

    /// The sizes this model was built with.
    pub fn config(&self) -> &BartConfig {
        &self.config
    }

    /// The input names this model takes.
    pub fn input_names(&self) -> &'static [&'static str] {
        INPUTS
    }

    /// Whether this model has the LM head generation needs.
    pub fn can_generate(&self) -> bool {
        self.head.is_some()
    }

    /// The encoder's output on `input_ids` (int64) and `attention_mask`.
    pub fn encode(
        &self,
        input_ids: &Tensor,
        attention_mask: Option<&Tensor>,
        output_hidden_states: bool,
    ) -> Result<StackOutput> {
        self.encoder.forward(
            &self.shared.forward(input_ids)?,
            Some(input_ids),
            attention_mask,
            None,
            output_hidden_states,
        )
    }

    /// The logits of the decoder's states `h` (with the LM head), `None` for a base model.
    fn logits(&self, h: &Tensor) -> Result<Option<Tensor>> {
        let Some((head, bias)) = &self.head else { return Ok(None) };
        let logits = head.forward(h)?;
        Ok(Some(match bias {
            Some(b) => logits.add(b)?,
            None => logits,
        }))
    }

    /// transformers' default decoder input: `input_ids` shifted right behind the start token (BART),
    /// or behind the token at each row's non-padding count - 1 (mBART's `shift_tokens_right`: its last
    /// token when right-padded).
    fn shifted(&self, ids: &Tensor) -> Result<Tensor> {
        let rows = ids.to_dtype(DType::I64)?.to(Device::Cpu)?.to_vec2::<i64>()?;
        let pad = self.config.pad;
        let mut out = Vec::new();
        for row in &rows {
            let first = if matches!(self.config.family, BartFamily::MBart | BartFamily::PLBart) {
                // As transformers' mBART `shift_tokens_right`: the token at (non-padding count - 1),
                // which is the last one of a right-padded row.
                let kept = row.iter().filter(|&&t| t != pad).count();
                let at = kept.checked_sub(1).ok_or_else(|| {
                    Error::Input(format!(
                        "a row of input_ids is all padding (id {pad}): mBART's decoder has no start token"
                    ))
                })?;
                row[at]
            } else {
                self.config.decoder_start.ok_or_else(|| {
                    Error::Input(
                        "missing input 'decoder_input_ids' (and no decoder_start_token_id to make them)"
                            .into(),
                    )
                })?
            };
            out.push(first);
            out.extend(row[..row.len() - 1].iter().map(|&t| if t == -100 { pad } else { t }));
        }
        let (b, s) = (rows.len(), rows.first().map_or(0, Vec::len));
        Ok(Tensor::from_vec(out, [b, s])?.to(ids.device())?)
    }

    /// Runs the model on named inputs: `logits` (the generation model, the sequence classifier) or the decoder's
    /// `last_hidden_state`, `decoder_hidden_states.*`, `encoder_last_hidden_state` and
    /// `encoder_hidden_states.*`.
    pub fn forward_named(
        &self,
        inputs: &BTreeMap<String, Tensor>,
        output_hidden_states: bool,
    ) -> Result<Vec<(String, Tensor)>> {
        check_inputs(inputs, INPUTS)?;
        let (ids, mask) = ids_and_mask(inputs, "input_ids", "attention_mask")?;
        let encoded = self.encode(&ids, mask.as_ref(), output_hidden_states)?;
        let (dec_ids, dec_mask) = match inputs.contains_key("decoder_input_ids") {
            true => ids_and_mask(inputs, "decoder_input_ids", "decoder_attention_mask")?,
            false if self.config.family.shifts_inputs() => (self.shifted(&ids)?, None),
            false => {
                return Err(Error::Input(
                    "missing input 'decoder_input_ids': the decoder needs them (generation starts from \
                     decoder_start_token_id)"
                        .into(),
                ))
            }
        };
        let decoded = self.decoder.forward(
            &self.decoder_tokens.forward(&dec_ids)?,
            Some(&dec_ids),
            dec_mask.as_ref(),
            Some((&encoded.last_hidden_state, mask.as_ref())),
            output_hidden_states,
        )?;
        let logits = match &self.classifier {
            Some((dense, out_proj)) => {
                let sentence = at_last_eos(&ids, &decoded.last_hidden_state, self.config.eos)?;
                Some(out_proj.forward(&dense.forward(&sentence)?.tanh()?)?)
            }
            None => self.logits(&decoded.last_hidden_state)?,
        };
        Ok(outputs(
            logits,
            (decoded.last_hidden_state, decoded.hidden_states),
            (encoded.last_hidden_state, encoded.hidden_states),
        ))
    }
}

impl EncoderDecoder for Bart {
    fn decoder_start_token(&self) -> Option<i64> {
        self.config.decoder_start
    }

    fn device(&self) -> Device {
        self.shared.weight.device()
    }

    fn start_generation(
        &self,
        input_ids: &Tensor,
        attention_mask: Option<&Tensor>,
    ) -> Result<EncoderDecoderCache> {
        let encoded = self.encode(input_ids, attention_mask, false)?;
        self.decoder.start_cache(&encoded.last_hidden_state, attention_mask)
    }

    fn next_logits(&self, ids: &Tensor, cache: &mut EncoderDecoderCache) -> Result<Tensor> {
        let h = self.decoder.step(&self.decoder_tokens.forward(ids)?, Some(ids), cache)?;
        let b = h.dims()[0];
        let logits =
            self.logits(&h)?.ok_or_else(|| Error::Input("generation needs the model's LM head".into()))?;
        Ok(logits.reshape([b, self.config.decoder_vocab])?)
    }
}
