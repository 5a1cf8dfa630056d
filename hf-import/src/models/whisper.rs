//! Whisper (`WhisperForConditionalGeneration`, `WhisperModel`): log-mel `input_features`
//! `[batch, mel bins, frames]` through two convolutions (the second halving the frames) and GELUs,
//! plus the encoder's stored sinusoidal positions, into pre-norm BART-style blocks with a final
//! norm; the decoder is BART's pre-norm decoder with learned positions from 0 and no `k_proj` bias.
//! The head (`proj_out`) is tied to the decoder's token table unless the checkpoint has its own.

use std::collections::BTreeMap;

use oxtorch_tensor::{Device, Tensor};

use super::audio_tower::AudioTower;
use super::bart::{BartStack, PositionKind, StackConfig, StackOutput};
use super::seq2seq_io::{check_inputs, ids_and_mask, outputs};
use crate::config::Config;
use crate::error::{Error, Result};
use crate::generate::SpeechSeq2Seq;
use crate::layers::{Activation, Embedding, EncoderDecoderCache, Linear};
use crate::weights::Weights;

/// The Whisper architectures.
pub(super) const ARCHITECTURES: &[&str] = &["WhisperForConditionalGeneration", "WhisperModel"];

const INPUTS: &[&str] = &["input_features", "decoder_input_ids", "decoder_attention_mask"];

/// `WhisperConfig`'s sizes.
#[derive(Debug, Clone)]
pub struct WhisperConfig {
    /// the encoder's blocks (`max_positions` is `max_source_positions`)
    pub encoder: StackConfig,
    /// the decoder's blocks (`max_positions` is `max_target_positions`)
    pub decoder: StackConfig,
    /// `num_mel_bins`
    pub mel_bins: usize,
    /// `vocab_size`
    pub vocab: usize,
    /// `decoder_start_token_id`
    pub decoder_start: Option<i64>,
}

impl WhisperConfig {
    /// Reads `WhisperConfig`'s keys and defaults.
    pub fn from_config(cfg: &Config) -> Result<Self> {
        let d = cfg.usize_or("d_model", 384)?;
        let layers = |key: &str| -> Result<usize> {
            match cfg.get(key) {
                Some(v) if !v.is_null() => cfg.layers(key),
                _ => Ok(4),
            }
        };
        let act = Activation::from_name(cfg.str_or("activation_function", "gelu")?)?;
        let stack = |decoder: bool| -> Result<StackConfig> {
            let side = if decoder { "decoder" } else { "encoder" };
            Ok(StackConfig {
                d_model: d,
                heads: cfg.usize_or(&format!("{side}_attention_heads"), 6)?,
                ffn: cfg.usize_or(&format!("{side}_ffn_dim"), 1536)?,
                layers: layers(&format!("{side}_layers"))?,
                max_positions: if decoder {
                    cfg.usize_or("max_target_positions", 448)?
                } else {
                    cfg.usize_or("max_source_positions", 1500)?
                },
                act,
                // (WhisperConfig's `scale_embedding` is never applied by its modules.)
                embed_scale: 1.0,
                pre_norm: true,
                decoder,
                positions: PositionKind::Learned { offset: 0 },
                key_bias: false,
                norm_before_positions: false,
            })
        };
        let decoder_start = match cfg.get("decoder_start_token_id") {
            None => Some(50257),
            Some(v) if v.is_null() => None,
            Some(v) => Some(v.as_i64().ok_or_else(|| {
                Error::Config(format!("decoder_start_token_id must be an integer, got {v}"))
            })?),
        };
        Ok(WhisperConfig {
            encoder: stack(false)?,
            decoder: stack(true)?,
            mel_bins: cfg.usize_or("num_mel_bins", 80)?,
            vocab: cfg.usize_or("vocab_size", 51865)?,
            decoder_start,
        })
    }
}

/// A Whisper model, as the architecture named in `config.json`.
#[derive(Debug, Clone)]
pub struct Whisper {
    config: WhisperConfig,
    encoder: AudioTower,
    /// the decoder's `embed_tokens`
    tokens: Embedding,
    decoder: BartStack,
    /// `proj_out` (the generation model)
    proj_out: Option<Linear>,
}

impl Whisper {
    /// `arch` (one of [`ARCHITECTURES`]) from `cfg` and `weights` (under `model.`, or at the top
    /// for a base model's checkpoint).
    pub fn load(arch: &str, cfg: &Config, weights: &Weights) -> Result<Self> {
        let model_type = cfg.model_type()?;
        if model_type != "whisper" || !ARCHITECTURES.contains(&arch) {
            return Err(Error::Unsupported(format!(
                "architecture \"{arch}\" with model_type \"{model_type}\""
            )));
        }
        let config = WhisperConfig::from_config(cfg)?;
        let root = weights.vars("");
        let model = if root.contains("model.encoder.conv1.weight") { root.pp("model") } else { root.clone() };
        let d = config.encoder.d_model;
        let enc = model.pp("encoder");
        let tokens = Embedding::load(&model.pp("decoder.embed_tokens"), config.vocab, d)?;
        let proj_out = if arch == "WhisperForConditionalGeneration" {
            let weight =
                root.get_opt("proj_out.weight", &[config.vocab, d])?.unwrap_or_else(|| tokens.weight.clone());
            Some(Linear { weight, bias: None })
        } else {
            None
        };
        Ok(Whisper {
            encoder: AudioTower::load(
                &enc,
                config.encoder.clone(),
                config.mel_bins,
                "Whisper",
                tokens.weight.dtype(),
            )?,
            decoder: BartStack::load(
                &model.pp("decoder"),
                config.decoder.clone(),
                tokens.weight.dtype(),
                tokens.weight.device(),
            )?,
            tokens,
            proj_out,
            config,
        })
    }

    /// The sizes this model was built with.
    pub fn config(&self) -> &WhisperConfig {
        &self.config
    }

    /// The input names this model takes.
    pub fn input_names(&self) -> &'static [&'static str] {
        INPUTS
    }

    /// The device of the weights.
    pub fn device(&self) -> Device {
        self.tokens.weight.device()
    }

    /// `[mel bins, frames]` of the `input_features` this model takes (frames: twice
    /// `max_source_positions`, as transformers requires).
    pub fn features_shape(&self) -> [usize; 2] {
        self.encoder.features_shape()
    }

    /// The encoder on `input_features` `[batch, mel bins, frames]` (float).
    pub fn encode(&self, input_features: &Tensor, output_hidden_states: bool) -> Result<StackOutput> {
        self.encoder.encode(input_features, output_hidden_states)
    }

    /// Runs the model on named inputs (`input_features` and `decoder_input_ids` required): `logits`
    /// (the generation model) or the decoder's `last_hidden_state`, `decoder_hidden_states.*`,
    /// `encoder_last_hidden_state` and `encoder_hidden_states.*`.
    pub fn forward_named(
        &self,
        inputs: &BTreeMap<String, Tensor>,
        output_hidden_states: bool,
    ) -> Result<Vec<(String, Tensor)>> {
        check_inputs(inputs, INPUTS)?;
        let features = inputs
            .get("input_features")
            .ok_or_else(|| Error::Input("missing input 'input_features'".into()))?;
        if !inputs.contains_key("decoder_input_ids") {
            return Err(Error::Input(
                "missing input 'decoder_input_ids': Whisper's decoder needs them (generation starts from \
                 decoder_start_token_id)"
                    .into(),
            ));
        }
        let encoded = self.encode(features, output_hidden_states)?;
        let (dec_ids, dec_mask) = ids_and_mask(inputs, "decoder_input_ids", "decoder_attention_mask")?;
        if dec_ids.dims()[0] != features.dims()[0] {
            return Err(Error::Input(format!(
                "input 'decoder_input_ids' has {} rows, but input_features has {}",
                dec_ids.dims()[0],
                features.dims()[0]
            )));
        }
        let decoded = self.decoder.forward(
            &self.tokens.forward(&dec_ids)?,
            None,
            dec_mask.as_ref(),
            Some((&encoded.last_hidden_state, None)),
            output_hidden_states,
        )?;
        let logits =
            self.proj_out.as_ref().map(|head| head.forward(&decoded.last_hidden_state)).transpose()?;
        Ok(outputs(
            logits,
            (decoded.last_hidden_state, decoded.hidden_states),
            (encoded.last_hidden_state, encoded.hidden_states),
        ))
    }
}

impl Whisper {
    /// Whether this is the generation model (`WhisperForConditionalGeneration`, with `proj_out`).
    pub fn can_generate(&self) -> bool {
        self.proj_out.is_some()
    }
}

impl SpeechSeq2Seq for Whisper {
    fn device(&self) -> Device {
        Whisper::device(self)
    }

    fn max_target_positions(&self) -> usize {
        self.config.decoder.max_positions
    }

    fn start_generation(&self, input_features: &Tensor) -> Result<EncoderDecoderCache> {
        if self.proj_out.is_none() {
            return Err(Error::Input(
                "generation needs WhisperForConditionalGeneration (WhisperModel has no head)".into(),
            ));
        }
        let encoded = self.encode(input_features, false)?;
        self.decoder.start_cache(&encoded.last_hidden_state, None)
    }

    fn next_logits(&self, ids: &Tensor, cache: &mut EncoderDecoderCache) -> Result<Tensor> {
        let head =
            self.proj_out.as_ref().ok_or_else(|| Error::Input("generation needs the model's head".into()))?;
        let h = self.decoder.step(&self.tokens.forward(ids)?, None, cache)?;
        let b = h.dims()[0];
        Ok(head.forward(&h)?.reshape([b, self.config.vocab])?)
    }
}
