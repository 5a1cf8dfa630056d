//! T5 and mT5 (`T5ForConditionalGeneration`, `T5Model`, `T5EncoderModel` and their `MT5*` names):
//! an encoder and a decoder ([`stack`]) over one shared embedding, the decoder reading
//! `decoder_input_ids` and attending to the encoder's states.
//!
//! The LM head is `lm_head.weight` when the checkpoint has it (T5 v1.1, Flan-T5, mT5 store their
//! own), the shared embedding otherwise. Original T5 scales the decoder's output by `d_model^-0.5`
//! before the head: as `scale_decoder_outputs` says (transformers 5 writes it), else unless
//! `tie_word_embeddings` is false (4.x configs: T5 v1.1 and Flan-T5 say so); mT5 never does.

mod stack;

use std::collections::BTreeMap;

use oxtorch_tensor::{Device, Tensor};

pub use self::stack::{StackConfig, StackOutput, T5Stack};
use super::seq2seq_io::{at_last_eos, check_inputs, ids_and_mask, outputs};
use crate::config::Config;
use crate::error::{Error, Result};
use crate::generate::EncoderDecoder;
use crate::layers::{Activation, Embedding, EncoderDecoderCache, Linear};
use crate::weights::Weights;

/// The T5 architectures, with the model type each belongs to.
pub(super) const ARCHITECTURES: &[(&str, &str)] = &[
    ("T5ForConditionalGeneration", "t5"),
    ("T5Model", "t5"),
    ("T5EncoderModel", "t5"),
    ("MT5ForConditionalGeneration", "mt5"),
    ("MT5Model", "mt5"),
    ("MT5EncoderModel", "mt5"),
    ("T5ForSequenceClassification", "t5"),
    ("MT5ForSequenceClassification", "mt5"),
    ("T5ForTokenClassification", "t5"),
    ("MT5ForTokenClassification", "mt5"),
    ("T5ForQuestionAnswering", "t5"),
    ("MT5ForQuestionAnswering", "mt5"),
    ("UMT5ForConditionalGeneration", "umt5"),
    ("UMT5Model", "umt5"),
    ("UMT5EncoderModel", "umt5"),
    ("UMT5ForSequenceClassification", "umt5"),
    ("UMT5ForTokenClassification", "umt5"),
    ("UMT5ForQuestionAnswering", "umt5"),
];

const ENCODER_INPUTS: &[&str] = &["input_ids", "attention_mask"];
const SEQ2SEQ_INPUTS: &[&str] =
    &["input_ids", "attention_mask", "decoder_input_ids", "decoder_attention_mask"];

/// `T5Config` / `MT5Config`: the stacks' sizes and the decoder's settings.
#[derive(Debug, Clone)]
pub struct T5Config {
    /// the encoder's sizes (the decoder's differ in depth and direction)
    pub encoder: StackConfig,
    /// `num_decoder_layers` (default `num_layers`)
    pub decoder_layers: usize,
    /// `vocab_size`
    pub vocab: usize,
    /// multiply the decoder's output by `d_model^-0.5` before the LM head
    pub scale_decoder_outputs: bool,
    /// `decoder_start_token_id` (default `pad_token_id`)
    pub decoder_start: Option<i64>,
    /// `pad_token_id` (default 0): what the shifted labels' `-100` become
    pub pad: Option<i64>,
    /// `eos_token_id` (default 1): the sequence classifier reads each row's last one
    pub eos: Option<i64>,
}

impl T5Config {
    /// Reads `T5Config`'s (or `MT5Config`'s) keys and defaults.
    pub fn from_config(cfg: &Config) -> Result<Self> {
        let model_type = cfg.model_type()?;
        let (mt5, umt5) = (model_type == "mt5", model_type == "umt5");
        // (UMT5's defaults are mT5's.)
        let multilingual = mt5 || umt5;
        let proj = cfg.str_or("feed_forward_proj", if multilingual { "gated-gelu" } else { "relu" })?;
        let (gated, act) = match proj.split('-').collect::<Vec<_>>().as_slice() {
            ["gated", "gelu"] => (true, "gelu_new"),
            ["gated", act] => (true, *act),
            [act] => (false, *act),
            _ => {
                return Err(Error::Config(format!(
                    "feed_forward_proj \"{proj}\" must be an activation or gated-ACTIVATION (as \"relu\", \"gated-gelu\")"
                )))
            }
        };
        let layers_or = |key: &str, default: usize| -> Result<usize> {
            match cfg.get(key) {
                Some(v) if !v.is_null() => cfg.layers(key),
                _ => Ok(default),
            }
        };
        let layers = layers_or("num_layers", if multilingual { 8 } else { 6 })?;
        let heads = cfg.usize_or("num_heads", if multilingual { 6 } else { 8 })?;
        let d_kv = cfg.usize_or("d_kv", 64)?;
        if heads == 0 || d_kv == 0 || heads.checked_mul(d_kv).is_none() {
            return Err(Error::Config(format!(
                "num_heads ({heads}) and d_kv ({d_kv}) must be positive, their product a width"
            )));
        }
        let encoder = StackConfig {
            d_model: cfg.usize_or("d_model", 512)?,
            d_kv,
            d_ff: cfg.usize_or("d_ff", if multilingual { 1024 } else { 2048 })?,
            heads,
            layers,
            buckets: cfg.usize_or("relative_attention_num_buckets", 32)?,
            max_distance: cfg.usize_or("relative_attention_max_distance", 128)?,
            eps: cfg.f64_or("layer_norm_epsilon", 1e-6)?,
            act: Activation::from_name(act)?,
            gated,
            decoder: false,
            bias_per_block: umt5,
        };
        let pad = cfg.opt_usize("pad_token_id").ok().flatten().map(|p| p as i64).or(Some(0));
        let decoder_start = match cfg.get("decoder_start_token_id") {
            Some(v) if !v.is_null() => Some(v.as_i64().ok_or_else(|| {
                Error::Config(format!("decoder_start_token_id must be an integer, got {v}"))
            })?),
            _ => pad,
        };
        Ok(T5Config {
            decoder_layers: layers_or("num_decoder_layers", layers)?,
            vocab: cfg.usize_or("vocab_size", if multilingual { 250112 } else { 32128 })?,
            // transformers 5 writes `scale_decoder_outputs`; 4.x configs say it with `tie_word_embeddings`.
            scale_decoder_outputs: !mt5
                && match cfg.get("scale_decoder_outputs").and_then(|v| v.as_bool()) {
                    Some(scale) => scale,
                    None => cfg.get("tie_word_embeddings").and_then(|v| v.as_bool()) != Some(false),
                },
            decoder_start,
            pad,
            eos: cfg.nullable_usize_or("eos_token_id", Some(1))?.map(|e| e as i64),
            encoder,
        })
    }

    /// The decoder's sizes.
    pub fn decoder(&self) -> StackConfig {
        StackConfig { layers: self.decoder_layers, decoder: true, ..self.encoder.clone() }
    }
}

/// A T5 model, as the architecture named in `config.json`.
#[derive(Debug, Clone)]
pub struct T5 {
    config: T5Config,
    /// `shared` `[vocab, d_model]`
    shared: Embedding,
    encoder: T5Stack,
    /// none for `T5EncoderModel`
    decoder: Option<T5Stack>,
    /// `T5ForConditionalGeneration`'s head (`lm_head.weight`, or the shared embedding)
    lm_head: Option<Linear>,
    /// `T5ForSequenceClassification`'s `classification_head`: `dense`, `tanh`, `out_proj`, on the
    /// decoder's state at each row's last EOS
    classifier: Option<(Linear, Linear)>,
    /// `T5ForTokenClassification`'s `classifier` on each encoder state
    token_classifier: Option<Linear>,
    /// `T5ForQuestionAnswering`'s `qa_outputs` (start and end) on each decoder state
    qa_outputs: Option<Linear>,
}

impl T5 {
    /// `arch` (one of [`ARCHITECTURES`]) from `cfg` and `weights`.
    pub fn load(arch: &str, cfg: &Config, weights: &Weights) -> Result<Self> {
        let model_type = cfg.model_type()?;
        if !ARCHITECTURES.iter().any(|(a, t)| *a == arch && *t == model_type) {
            return Err(Error::Unsupported(format!(
                "architecture \"{arch}\" with model_type \"{model_type}\""
            )));
        }
        let config = T5Config::from_config(cfg)?;
        let top = weights.vars("");
        // The sequence classifier keeps its `T5Model` under `transformer.`.
        let classifies = arch.ends_with("ForSequenceClassification");
        let tags = arch.ends_with("ForTokenClassification");
        // Both classifiers keep their T5 model (a `T5EncoderModel` for tokens) under `transformer.`.
        let nested = classifies || tags;
        let root = if nested && top.contains("transformer.encoder.final_layer_norm.weight") {
            top.pp("transformer")
        } else {
            top.clone()
        };
        let d = config.encoder.d_model;
        // `shared.weight`; checkpoints of the encoder alone may hold only its own copy.
        let table = if root.contains("shared.weight") || !root.contains("encoder.embed_tokens.weight") {
            "shared"
        } else {
            "encoder.embed_tokens"
        };
        let shared = Embedding::load(&root.pp(table), config.vocab, d)?;
        let encoder = T5Stack::load(&root.pp("encoder"), config.encoder.clone())?;
        let decoder = if arch.ends_with("EncoderModel") || tags {
            None
        } else {
            Some(T5Stack::load(&root.pp("decoder"), config.decoder())?)
        };
        let lm_head = if arch.ends_with("ForConditionalGeneration") {
            Some(match root.get_opt("lm_head.weight", &[config.vocab, d])? {
                Some(weight) => Linear { weight, bias: None },
                None => Linear { weight: shared.weight.clone(), bias: None },
            })
        } else {
            None
        };
        let classifier = if classifies {
            let head = top.pp("classification_head");
            Some((
                Linear::load(&head.pp("dense"), d, d, true)?,
                Linear::load(&head.pp("out_proj"), d, super::num_labels(cfg)?, true)?,
            ))
        } else {
            None
        };
        let token_classifier = if tags {
            Some(Linear::load(&top.pp("classifier"), d, super::num_labels(cfg)?, true)?)
        } else {
            None
        };
        let qa_outputs = if arch.ends_with("ForQuestionAnswering") {
            let labels = super::num_labels(cfg)?;
            if labels != 2 {
                return Err(Error::Config(format!(
                    "T5ForQuestionAnswering needs num_labels 2 (start and end logits), got {labels}"
                )));
            }
            Some(Linear::load(&top.pp("qa_outputs"), d, 2, true)?)
        } else {
            None
        };
        Ok(T5 { config, shared, encoder, decoder, lm_head, classifier, token_classifier, qa_outputs })
    }

    /// The sizes this model was built with.
    pub fn config(&self) -> &T5Config {
        &self.config
    }

    /// The device of the weights.
    pub fn device(&self) -> Device {
        self.shared.weight.device()
    }

    /// The input names this model takes.
    pub fn input_names(&self) -> &'static [&'static str] {
        if self.decoder.is_some() {
            SEQ2SEQ_INPUTS
        } else {
            ENCODER_INPUTS
        }
    }

    /// The encoder's output on `input_ids` `[batch, seq]` (int64) and `attention_mask`.
    pub fn encode(
        &self,
        input_ids: &Tensor,
        attention_mask: Option<&Tensor>,
        output_hidden_states: bool,
    ) -> Result<StackOutput> {
        self.encoder.forward(&self.shared.forward(input_ids)?, attention_mask, None, output_hidden_states)
    }

    /// The decoder's output on `decoder_input_ids` (int64) attending to `encoded` (where
    /// `encoder_mask` keeps), and the LM head's logits for the generation model.
    pub fn decode(
        &self,
        decoder_input_ids: &Tensor,
        decoder_mask: Option<&Tensor>,
        encoded: &Tensor,
        encoder_mask: Option<&Tensor>,
        output_hidden_states: bool,
    ) -> Result<(Option<Tensor>, StackOutput)> {
        let decoder =
            self.decoder.as_ref().ok_or_else(|| Error::Input("T5EncoderModel has no decoder".into()))?;
        let embeds = self.shared.forward(decoder_input_ids)?;
        let out =
            decoder.forward(&embeds, decoder_mask, Some((encoded, encoder_mask)), output_hidden_states)?;
        let logits = match &self.lm_head {
            Some(head) => {
                let h = &out.last_hidden_state;
                let h = if self.config.scale_decoder_outputs {
                    h.mul((self.config.encoder.d_model as f64).powf(-0.5))?
                } else {
                    h.clone()
                };
                Some(head.forward(&h)?)
            }
            None => None,
        };
        Ok((logits, out))
    }

    /// `ids` shifted one step right behind `decoder_start_token_id`, `-100` as `pad_token_id`
    /// (transformers' `_shift_right`).
    fn shifted_right(&self, ids: &Tensor) -> Result<Tensor> {
        let start = self.config.decoder_start.ok_or_else(|| {
            Error::Config("decoder_start_token_id is needed to shift input_ids into decoder inputs".into())
        })?;
        let pad = self.config.pad.unwrap_or(0);
        let rows = ids.to(Device::Cpu)?.to_vec2::<i64>()?;
        let mut out = Vec::new();
        for row in &rows {
            out.push(start);
            out.extend(row[..row.len().saturating_sub(1)].iter().map(|&t| if t == -100 { pad } else { t }));
        }
        let (b, s) = (rows.len(), rows.first().map_or(0, Vec::len));
        Ok(Tensor::from_vec(out, [b, s])?.to(ids.device())?)
    }

    /// Whether this model has the LM head generation needs (`*ForConditionalGeneration`).
    pub fn can_generate(&self) -> bool {
        self.lm_head.is_some()
    }

    /// Runs the model on named inputs: `T5EncoderModel` gives `last_hidden_state` and
    /// `hidden_states.*`; `T5Model` the decoder's `last_hidden_state`, `decoder_hidden_states.*`,
    /// `encoder_last_hidden_state` and `encoder_hidden_states.*`; `T5ForConditionalGeneration`
    /// `logits` in place of `last_hidden_state`. The decoder needs `decoder_input_ids`.
    pub fn forward_named(
        &self,
        inputs: &BTreeMap<String, Tensor>,
        output_hidden_states: bool,
    ) -> Result<Vec<(String, Tensor)>> {
        check_inputs(inputs, self.input_names())?;
        let (ids, mask) = ids_and_mask(inputs, "input_ids", "attention_mask")?;
        let encoded = self.encode(&ids, mask.as_ref(), output_hidden_states)?;
        if self.decoder.is_none() {
            let first = match &self.token_classifier {
                Some(classifier) => ("logits".to_string(), classifier.forward(&encoded.last_hidden_state)?),
                None => ("last_hidden_state".to_string(), encoded.last_hidden_state),
            };
            let mut out = vec![first];
            let hs = encoded.hidden_states.into_iter().enumerate();
            out.extend(hs.map(|(i, h)| (format!("hidden_states.{i}"), h)));
            return Ok(out);
        }
        let (dec_ids, dec_mask) = match inputs.contains_key("decoder_input_ids") {
            true => ids_and_mask(inputs, "decoder_input_ids", "decoder_attention_mask")?,
            // The classifier and the QA model decode the sources shifted right without them, as
            // transformers' do.
            false if self.classifier.is_some() || self.qa_outputs.is_some() => {
                (self.shifted_right(&ids)?, None)
            }
            false => {
                return Err(Error::Input(
                    "missing input 'decoder_input_ids': the decoder needs them (generation starts from \
                     decoder_start_token_id)"
                        .into(),
                ))
            }
        };
        let (lm_logits, decoded) = self.decode(
            &dec_ids,
            dec_mask.as_ref(),
            &encoded.last_hidden_state,
            mask.as_ref(),
            output_hidden_states,
        )?;
        let decoded_states = (decoded.last_hidden_state, decoded.hidden_states);
        let encoded_states = (encoded.last_hidden_state, encoded.hidden_states);
        if let Some(qa) = &self.qa_outputs {
            let logits = qa.forward(&decoded_states.0)?;
            let mut out = vec![
                ("start_logits".to_string(), logits.select(-1, 0)?.contiguous()?),
                ("end_logits".to_string(), logits.select(-1, 1)?.contiguous()?),
            ];
            // (The decoder's last hidden state is not among transformers' outputs here.)
            out.extend(outputs(None, decoded_states, encoded_states).into_iter().skip(1));
            return Ok(out);
        }
        let logits = match &self.classifier {
            Some((dense, out_proj)) => {
                let sentence = at_last_eos(&ids, &decoded_states.0, self.config.eos)?;
                Some(out_proj.forward(&dense.forward(&sentence)?.tanh()?)?)
            }
            None => lm_logits,
        };
        Ok(outputs(logits, decoded_states, encoded_states))
    }
}

impl EncoderDecoder for T5 {
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
        let decoder =
            self.decoder.as_ref().ok_or_else(|| Error::Input("T5EncoderModel has no decoder".into()))?;
        let encoded = self.encode(input_ids, attention_mask, false)?;
        decoder.start_cache(&encoded.last_hidden_state, attention_mask)
    }

    fn next_logits(&self, ids: &Tensor, cache: &mut EncoderDecoderCache) -> Result<Tensor> {
        let (Some(decoder), Some(head)) = (&self.decoder, &self.lm_head) else {
            return Err(Error::Input("generation needs T5ForConditionalGeneration's LM head".into()));
        };
        let h = decoder.step(&self.shared.forward(ids)?, cache)?;
        let h = if self.config.scale_decoder_outputs {
            h.mul((self.config.encoder.d_model as f64).powf(-0.5))?
        } else {
            h
        };
        let b = h.dims()[0];
        Ok(head.forward(&h)?.reshape([b, self.config.vocab])?)
    }
}
