//! Generation settings: transformers' `GenerationConfig`, read from `generation_config.json` (or,
//! without one, from the generation keys of `config.json`, as transformers' `from_model_config`).

use std::path::Path;

use oxtorch_tensor::Device;
use serde_json::Value;

use crate::config::Config;
use crate::error::{Error, Result};
use crate::layers::fixed_shapes;

/// How to pick tokens and when to stop (transformers' `GenerationConfig` fields).
#[derive(Debug, Clone, PartialEq)]
pub struct GenerationConfig {
    /// new tokens at most (setting it, clear `max_length` and `length_cap`, as the CLI's
    /// `--max-new-tokens` does)
    pub max_new_tokens: usize,
    /// new tokens at least: EOS tokens cannot be picked before (transformers'
    /// `MinNewTokensLengthLogitsProcessor`; `min_length` in `generation_config.json` counts the
    /// prompt too)
    pub min_new_tokens: usize,
    /// prompt and new tokens at most: `max_length` of a `generation_config.json` without
    /// `max_new_tokens`. [`generate`](fn@crate::generate) reads `max_new_tokens` only; [`GenerationConfig::resolve_length`]
    /// turns this into it for a prompt length (the CLI does when `--max-new-tokens` is absent).
    pub max_length: Option<usize>,
    /// sample (true) or take the most likely token (false)
    pub do_sample: bool,
    /// logits divided by this before sampling
    pub temperature: f64,
    /// keep the `top_k` most likely tokens (0: all)
    pub top_k: usize,
    /// keep the smallest set of tokens whose probability reaches `top_p`
    pub top_p: f64,
    /// drop tokens less likely than `min_p` times the most likely one (0: off)
    pub min_p: f64,
    /// CTRL-style penalty on tokens already present (1: off)
    pub repetition_penalty: f64,
    /// sampling seed
    pub seed: u64,
    /// tokens that end a sequence
    pub eos_token_ids: Vec<i64>,
    /// the configured pad token (transformers' `pad_token_id`; `None`: none configured). Finished
    /// sequences get [`GenerationConfig::pad_token`] when EOS tokens are configured (see
    /// [`GenerationConfig::pads_finished_rows`]), and prompts given without an attention mask get
    /// one inferred from it (see [`GenerationConfig::inferred_mask`]).
    pub pad_token_id: Option<i64>,
    /// which KV cache to decode with
    pub cache_implementation: CacheImplementation,
    /// prompt and new tokens at least (`min_length` of `generation_config.json`), applied with
    /// the prompt's length by [`GenerationConfig::resolve_length`]
    pub min_length: Option<usize>,
    /// prompt and new tokens at most when no length was configured: the model's
    /// `max_position_embeddings`, applied by [`GenerationConfig::resolve_length`] (transformers
    /// generates 20 new tokens by default, but never past that)
    pub length_cap: Option<usize>,
    /// no n-gram of this size occurs twice in a sequence, the prompt included (0: off)
    pub no_repeat_ngram_size: usize,
    /// no n-gram of this size of the encoder's input (a decoder-only model's prompt) occurs in
    /// the sequence: a token that would complete one is banned (0: off; Blenderbot's 3)
    pub encoder_no_repeat_ngram_size: usize,
    /// token sequences never generated: a one-token entry is always banned, a longer one bans its
    /// last token after the others
    pub bad_words_ids: Vec<Vec<i64>>,
    /// tokens never generated
    pub suppress_tokens: Vec<i64>,
    /// tokens not generated first
    pub begin_suppress_tokens: Vec<i64>,
    /// tokens forced as the last new token (the first of them most likely)
    pub forced_eos_token_ids: Vec<i64>,
    /// `forced_bos_token_id`: an encoder-decoder's first new token (mBART's target language)
    pub forced_bos_token_id: Option<i64>,
    /// beams of beam search (1: greedy or sampling)
    pub num_beams: usize,
    /// sequences returned per prompt (transformers' `num_return_sequences`): beam search's best
    /// hypotheses, or independent samples; greedy decoding returns one
    pub num_return_sequences: usize,
    /// beam search's finished scores are divided by `length ^ length_penalty`
    pub length_penalty: f64,
    /// when beam search stops (transformers' `early_stopping`)
    pub early_stopping: EarlyStopping,
    /// a sequence ends once its text ends in one of these (transformers' `stop_strings`; generating
    /// with them needs the tokenizer: [`generate_with_tokenizer`](super::generate_with_tokenizer))
    pub stop_strings: Vec<String>,
}

/// The KV cache [`generate`](fn@crate::generate) decodes with (transformers' `cache_implementation`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum CacheImplementation {
    /// `Static` on devices that compile a program per shape (xla, tpu), `Dynamic` on the cpu.
    #[default]
    Auto,
    /// Attention reads the filled part of the cache (`"dynamic"`): no work on empty slots.
    Dynamic,
    /// Fixed shapes (`"static"`): the prompt padded to a [`bucket`](crate::layers::bucket), a cache of a bucketed capacity
    /// read whole under a mask, so that every decode step runs the same programs.
    Static,
}

impl CacheImplementation {
    /// Whether generation on `device` keeps shapes fixed.
    pub(super) fn is_static(self, device: Device) -> bool {
        match self {
            CacheImplementation::Auto => fixed_shapes(device),
            CacheImplementation::Dynamic => false,
            CacheImplementation::Static => true,
        }
    }
}

impl Default for GenerationConfig {
    fn default() -> Self {
        GenerationConfig {
            max_new_tokens: 20,
            min_new_tokens: 0,
            max_length: None,
            do_sample: false,
            temperature: 1.0,
            top_k: 50,
            top_p: 1.0,
            min_p: 0.0,
            repetition_penalty: 1.0,
            seed: 0,
            eos_token_ids: Vec::new(),
            pad_token_id: None,
            cache_implementation: CacheImplementation::Auto,
            min_length: None,
            length_cap: None,
            no_repeat_ngram_size: 0,
            encoder_no_repeat_ngram_size: 0,
            bad_words_ids: Vec::new(),
            suppress_tokens: Vec::new(),
            begin_suppress_tokens: Vec::new(),
            forced_eos_token_ids: Vec::new(),
            forced_bos_token_id: None,
            num_beams: 1,
            num_return_sequences: 1,
            length_penalty: 1.0,
            early_stopping: EarlyStopping::Heuristic,
            stop_strings: Vec::new(),
        }
    }
}

/// When beam search stops, as transformers' `early_stopping`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EarlyStopping {
    /// `false`: once no running beam can beat the finished ones at its current length
    Heuristic,
    /// `true`: as soon as `num_beams` sequences have finished
    WhenFull,
    /// `"never"`: only once no running beam can beat them at any length (canonical beam search)
    Never,
}

fn ids_of(file: &Path, key: &str, v: Option<&Value>) -> Result<Vec<i64>> {
    let ids = match v {
        None | Some(Value::Null) => Some(Vec::new()),
        Some(Value::Number(n)) => n.as_i64().map(|id| vec![id]),
        Some(Value::Array(a)) => a.iter().map(Value::as_i64).collect(),
        Some(_) => None,
    };
    ids.ok_or_else(|| {
        Error::format(
            file,
            format!("\"{key}\" must be a token id or a list of token ids, got {}", v.unwrap_or(&Value::Null)),
        )
    })
}

/// The generation settings of a model folder as transformers reads them: `generation_config.json`,
/// or without one the generation keys of `config.json` (a nested `text_config`'s where the outer
/// config has none), as `GenerationConfig.from_model_config`. Returns them with the file they
/// came from.
fn settings_of(dir: &Path, cfg: &Config) -> Result<(std::path::PathBuf, serde_json::Map<String, Value>)> {
    let path = dir.join("generation_config.json");
    match std::fs::read_to_string(&path) {
        Ok(text) => match serde_json::from_str(&text).map_err(|e| Error::format(&path, e.to_string()))? {
            Value::Object(json) => Ok((path, json)),
            _ => Err(Error::format(&path, "not a JSON object")),
        },
        Err(_) => {
            let mut json = serde_json::Map::new();
            for key in GENERATION_KEYS {
                let nested = cfg.get("text_config").and_then(|t| t.get(key)).filter(|v| !v.is_null());
                if let Some(v) = cfg.get(key).or(nested) {
                    json.insert(key.to_string(), v.clone());
                }
            }
            Ok((dir.join("config.json"), json))
        }
    }
}

/// The keys [`GenerationConfig::from_model_dir`] reads (from `config.json` without a
/// `generation_config.json`).
const GENERATION_KEYS: &[&str] = &[
    "do_sample",
    "temperature",
    "top_k",
    "top_p",
    "min_p",
    "repetition_penalty",
    "max_new_tokens",
    "max_length",
    "min_new_tokens",
    "min_length",
    "cache_implementation",
    "eos_token_id",
    "pad_token_id",
    "no_repeat_ngram_size",
    "encoder_no_repeat_ngram_size",
    "bad_words_ids",
    "suppress_tokens",
    "begin_suppress_tokens",
    "forced_eos_token_id",
    "forced_bos_token_id",
    "num_beams",
    "num_return_sequences",
    "length_penalty",
    "early_stopping",
    "stop_strings",
];

impl GenerationConfig {
    /// Reads the generation settings of a model folder: `generation_config.json`, or without one the
    /// generation keys of `config.json` (as transformers). Sampling settings, lengths,
    /// `eos_token_id` as a number or list, `pad_token_id`, `cache_implementation`
    /// `"static"`/`"dynamic"` and the token bans (`no_repeat_ngram_size`, `bad_words_ids`,
    /// `encoder_no_repeat_ngram_size`, `suppress_tokens`, `begin_suppress_tokens`, `forced_eos_token_id`,
    /// `forced_bos_token_id`), all from the one file
    /// (EOS and pad tokens included: transformers 5 does not fall back to `config.json`'s when
    /// `generation_config.json` lacks them). Without a configured length, 20 new tokens, capped at
    /// the model's `max_position_embeddings`.
    pub fn from_model_dir(dir: &Path, cfg: &Config) -> Result<Self> {
        let (path, json) = settings_of(dir, cfg)?;
        let mut g = GenerationConfig::default();
        // A setting of the wrong type is an error, not silently the default.
        let num = |k: &str| match json.get(k) {
            None | Some(Value::Null) => Ok(None),
            Some(v) => v
                .as_f64()
                .map(Some)
                .ok_or_else(|| Error::format(&path, format!("\"{k}\" must be a number, got {v}"))),
        };
        let count = |k: &str| match json.get(k) {
            None | Some(Value::Null) => Ok(None),
            Some(v) => v.as_u64().and_then(|n| usize::try_from(n).ok()).map(Some).ok_or_else(|| {
                Error::format(&path, format!("\"{k}\" must be a non-negative integer, got {v}"))
            }),
        };
        g.do_sample = match json.get("do_sample") {
            None | Some(Value::Null) => false,
            Some(v) => v
                .as_bool()
                .ok_or_else(|| Error::format(&path, format!("\"do_sample\" must be a boolean, got {v}")))?,
        };
        g.num_beams = count("num_beams")?.unwrap_or(1).max(1);
        g.num_return_sequences = count("num_return_sequences")?.unwrap_or(1).max(1);
        g.length_penalty = num("length_penalty")?.unwrap_or(1.0);
        g.early_stopping = match json.get("early_stopping") {
            None | Some(Value::Null) | Some(Value::Bool(false)) => EarlyStopping::Heuristic,
            Some(Value::Bool(true)) => EarlyStopping::WhenFull,
            Some(Value::String(s)) if s == "never" => EarlyStopping::Never,
            Some(v) => {
                return Err(Error::format(
                    &path,
                    format!("\"early_stopping\" must be true, false or \"never\", got {v}"),
                ))
            }
        };
        g.temperature = num("temperature")?.unwrap_or(1.0);
        g.top_k = count("top_k")?.unwrap_or(50);
        g.top_p = num("top_p")?.unwrap_or(1.0);
        g.min_p = num("min_p")?.unwrap_or(0.0);
        g.repetition_penalty = num("repetition_penalty")?.unwrap_or(1.0);
        if let Some(n) = count("max_new_tokens")? {
            g.max_new_tokens = n;
        } else if let Some(n) = count("max_length")? {
            // As transformers: the whole sequence's length, the prompt included.
            g.max_length = Some(n);
        } else {
            let nested = cfg.get("text_config").and_then(|t| t.get("max_position_embeddings"));
            g.length_cap = cfg
                .get("max_position_embeddings")
                .or(nested)
                .and_then(Value::as_u64)
                .and_then(|n| usize::try_from(n).ok());
        }
        g.min_new_tokens = count("min_new_tokens")?.unwrap_or(0);
        g.min_length = count("min_length")?;
        g.cache_implementation = match json.get("cache_implementation").and_then(Value::as_str) {
            Some("static") => CacheImplementation::Static,
            Some("dynamic") => CacheImplementation::Dynamic,
            _ => CacheImplementation::Auto,
        };
        g.no_repeat_ngram_size = count("no_repeat_ngram_size")?.unwrap_or(0);
        g.encoder_no_repeat_ngram_size = count("encoder_no_repeat_ngram_size")?.unwrap_or(0);
        g.bad_words_ids = match json.get("bad_words_ids") {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::Array(seqs)) if !seqs.is_empty() => seqs
                .iter()
                .map(|s| match ids_of(&path, "bad_words_ids", Some(s)) {
                    Ok(ids) if s.is_array() && !ids.is_empty() && ids.iter().all(|&t| t >= 0) => Ok(ids),
                    _ => Err(Error::format(
                        &path,
                        format!("\"bad_words_ids\" must be a list of lists of positive token ids, got {s}"),
                    )),
                })
                .collect::<Result<_>>()?,
            Some(v) => {
                return Err(Error::format(
                    &path,
                    format!("\"bad_words_ids\" must be a non-empty list of token id lists, got {v}"),
                ))
            }
        };
        g.suppress_tokens = ids_of(&path, "suppress_tokens", json.get("suppress_tokens"))?;
        g.begin_suppress_tokens = ids_of(&path, "begin_suppress_tokens", json.get("begin_suppress_tokens"))?;
        g.forced_eos_token_ids = ids_of(&path, "forced_eos_token_id", json.get("forced_eos_token_id"))?;
        g.forced_bos_token_id =
            ids_of(&path, "forced_bos_token_id", json.get("forced_bos_token_id"))?.first().copied();
        g.stop_strings = match json.get("stop_strings") {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::String(s)) => vec![s.clone()],
            Some(Value::Array(a)) if a.iter().all(Value::is_string) => {
                a.iter().filter_map(Value::as_str).map(str::to_string).collect()
            }
            Some(v) => {
                return Err(Error::format(
                    &path,
                    format!("\"stop_strings\" must be a string or a list of strings, got {v}"),
                ))
            }
        };
        // From the settings' file only: with a `generation_config.json`, transformers 5 reads neither
        // token from `config.json` (checked with 5.24: a `generation_config.json` without
        // `eos_token_id` generates without EOS tokens, whatever `config.json` says).
        g.eos_token_ids = ids_of(&path, "eos_token_id", json.get("eos_token_id"))?;
        // transformers drops bad words that are an EOS token alone.
        g.bad_words_ids.retain(|s| !(s.len() == 1 && g.eos_token_ids.contains(&s[0])));
        g.pad_token_id = ids_of(&path, "pad_token_id", json.get("pad_token_id"))?.first().copied();
        Ok(g)
    }
}

impl GenerationConfig {
    /// The token finished sequences get: the configured pad token, else the first EOS token (as
    /// transformers' `_prepare_special_tokens`), else 0.
    pub fn pad_token(&self) -> i64 {
        self.pad_token_id.or(self.eos_token_ids.first().copied()).unwrap_or(0)
    }

    /// Whether a batch's finished rows get [`GenerationConfig::pad_token`] while the others go on:
    /// only when EOS tokens are configured, as transformers' `has_eos_stopping_criteria` (an
    /// `EosTokenCriteria` among the stopping criteria; a stop string's criterion is not one). A row
    /// that completed a stop string without them keeps generating its own tokens (its stop string
    /// included, its text going on past it) until every row has finished, a configured pad token
    /// or not.
    pub fn pads_finished_rows(&self) -> bool {
        !self.eos_token_ids.is_empty()
    }

    /// The attention mask `[batch × seq]` (flat, ones and zeros) of prompts `ids` given without one,
    /// as transformers' `_prepare_attention_mask_for_generation` infers it: `ids != pad_token_id`
    /// when a pad token is configured, occurs in `ids`, and is none of the EOS tokens (or no EOS
    /// token is configured); all ones otherwise. A pad token that is not configured is the first EOS
    /// token there (`_prepare_special_tokens`), so it never masks anything. Inside a prompt too: a
    /// single prompt holding the pad token gets zeros where it occurs.
    pub fn inferred_mask(&self, ids: &[i64]) -> Vec<i64> {
        match self.pad_token_id {
            Some(pad) if ids.contains(&pad) && !self.eos_token_ids.contains(&pad) => {
                ids.iter().map(|&t| i64::from(t != pad)).collect()
            }
            _ => vec![1; ids.len()],
        }
    }

    /// Applies `max_length` (prompt included) to prompts of `prompt_len` tokens as transformers
    /// does: `max_new_tokens` becomes what is left of it; a prompt already that long is an error.
    /// Without a configured length, the sequence stops at `length_cap` (the model's positions).
    pub fn resolve_length(&mut self, prompt_len: usize) -> Result<()> {
        // As transformers: `min_new_tokens`, when set, decides; else `min_length` counts the prompt.
        if let Some(total) = self.min_length.take() {
            if self.min_new_tokens == 0 {
                self.min_new_tokens = total.saturating_sub(prompt_len);
            }
        }
        let cap = self.length_cap.take().map(|cap| cap.min(prompt_len.saturating_add(self.max_new_tokens)));
        if let Some(total) = self.max_length.take().or(cap) {
            if prompt_len >= total {
                return Err(Error::Input(format!(
                    "Input length of input_ids is {prompt_len}, but `max_length` is set to {total}. This can lead to unexpected behavior. You should consider increasing `max_length` or, better yet, setting `max_new_tokens`."
                )));
            }
            self.max_new_tokens = total - prompt_len;
        }
        Ok(())
    }

    /// Checks the settings as transformers' logits processors do: a repetition penalty must be
    /// positive, and when sampling, the temperature positive and `top_p` and `min_p` in [0, 1].
    /// Sampling settings are not read by greedy decoding, so they are not checked then.
    pub fn validate(&self) -> Result<()> {
        let bad = |what: String| Err(Error::Input(what));
        if self.stop_strings.iter().any(String::is_empty) {
            return bad("stop_strings must not contain an empty string".into());
        }
        if !(self.repetition_penalty > 0.0 && self.repetition_penalty.is_finite()) {
            return bad(format!(
                "`repetition_penalty` has to be a strictly positive float, but is {}",
                self.repetition_penalty
            ));
        }
        if self.num_return_sequences > 1 && !self.do_sample && self.num_beams == 1 {
            return bad(format!(
                "Greedy methods without beam search do not support `num_return_sequences` different than 1 \
                 (got {}).",
                self.num_return_sequences
            ));
        }
        if self.num_beams > 1 && self.num_return_sequences > self.num_beams {
            return bad("`num_return_sequences` has to be smaller or equal to `num_beams`.".into());
        }
        if self.do_sample && self.num_beams > 1 {
            return bad(format!(
                "num_beams = {} with do_sample asks for beam sampling, which is not supported (beam search \
                 without do_sample, or sampling with num_beams = 1)",
                self.num_beams
            ));
        }
        if self.do_sample {
            if !(self.temperature > 0.0 && self.temperature.is_finite()) {
                return bad(format!(
                    "`temperature` (={}) has to be a strictly positive float, otherwise your next token scores will be invalid",
                    self.temperature
                ));
            }
            if !(0.0..=1.0).contains(&self.top_p) {
                return bad(format!(
                    "`top_p` has to be a float in the [0, 1] interval, but is {}",
                    self.top_p
                ));
            }
            if !(0.0..=1.0).contains(&self.min_p) {
                return bad(format!(
                    "`min_p` has to be a float in the [0, 1] interval, but is {}",
                    self.min_p
                ));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A model folder holding `config.json` (and `generation_config.json` when given).
    fn folder(name: &str, config: &str, generation: Option<&str>) -> (std::path::PathBuf, Config) {
        let dir = std::env::temp_dir().join(format!("oxtorch-gencfg-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("config.json"), config).unwrap();
        if let Some(g) = generation {
            std::fs::write(dir.join("generation_config.json"), g).unwrap();
        }
        let cfg = Config::load(&dir).unwrap();
        (dir, cfg)
    }

    /// Without `generation_config.json` the generation keys of `config.json` apply (transformers'
    /// `from_model_config`, checked with transformers 5.24: do_sample, temperature, max_length,
    /// min_length, no_repeat_ngram_size, repetition_penalty, top_k, eos_token_id all carried over);
    /// with one, `config.json`'s are ignored, EOS and pad tokens included (transformers 5.24:
    /// `generation_config.eos_token_id` is then `None`).
    #[test]
    fn config_json_holds_the_settings_without_a_generation_config() {
        let config = r#"{"model_type": "llama", "max_position_embeddings": 40, "do_sample": true,
            "temperature": 0.5, "max_length": 30, "no_repeat_ngram_size": 2, "repetition_penalty": 1.3,
            "top_k": 7, "eos_token_id": 5, "min_length": 3, "suppress_tokens": [4, 9],
            "bad_words_ids": [[5], [1, 2]]}"#;
        let (dir, cfg) = folder("legacy", config, None);
        let g = GenerationConfig::from_model_dir(&dir, &cfg).unwrap();
        assert!(g.do_sample);
        assert_eq!((g.temperature, g.top_k, g.repetition_penalty), (0.5, 7, 1.3));
        assert_eq!((g.max_length, g.min_length, g.length_cap), (Some(30), Some(3), None));
        assert_eq!((g.no_repeat_ngram_size, g.eos_token_ids.clone()), (2, vec![5]));
        assert_eq!(g.suppress_tokens, vec![4, 9]);
        // `[5]` is the EOS token alone: transformers drops it from the bad words.
        assert_eq!(g.bad_words_ids, vec![vec![1, 2]]);
        std::fs::write(dir.join("generation_config.json"), r#"{"top_k": 3}"#).unwrap();
        let g = GenerationConfig::from_model_dir(&dir, &cfg).unwrap();
        assert!(!g.do_sample);
        assert_eq!((g.top_k, g.temperature, g.no_repeat_ngram_size), (3, 1.0, 0));
        assert_eq!((g.max_length, g.length_cap, g.eos_token_ids.clone()), (None, Some(40), vec![]));
        assert_eq!((g.pad_token_id, g.pad_token()), (None, 0));
        std::fs::remove_dir_all(&dir).ok();
    }

    /// The attention mask `generate` infers for prompts given without one, and where the pad and
    /// EOS tokens come from, case by case as transformers 5.24 does (`from_pretrained` then
    /// `generate` on prompts `[[5, 5, 3, 4], [1, 2, 3, 4]]`, the mask its first forward received;
    /// `_prepare_attention_mask_for_generation`: `ids != pad` when the pad token is set, occurs in
    /// the ids, and `eos_token_id is None or pad not in eos_token_id`; `_prepare_special_tokens`
    /// sets an unset pad token to the first EOS token first).
    #[test]
    fn the_inferred_mask_follows_transformers() {
        let padded = [0, 0, 1, 1, 1, 1, 1, 1];
        let ones = [1; 8];
        for (config, generation, want) in [
            // pad 5 configured, EOS 2
            (r#""pad_token_id": 5, "eos_token_id": 2"#, None, padded),
            // pad configured, no EOS at all (null or absent)
            (r#""pad_token_id": 5, "eos_token_id": null"#, None, padded),
            (r#""pad_token_id": 5"#, None, padded),
            // pad one of a list of EOS tokens; or not one of them
            (r#""pad_token_id": 5, "eos_token_id": [2, 5]"#, None, ones),
            (r#""pad_token_id": 5, "eos_token_id": [2, 7]"#, None, padded),
            // no pad: the first EOS token pads, and never masks
            (r#""pad_token_id": null, "eos_token_id": 5"#, None, ones),
            (r#""eos_token_id": null"#, None, ones),
            // with a generation_config.json, config.json's tokens are not read
            (r#""pad_token_id": 5, "eos_token_id": 2"#, Some(r#"{"eos_token_id": [2, 7]}"#), ones),
            (r#""pad_token_id": null, "eos_token_id": 5"#, Some(r#"{"pad_token_id": 5}"#), padded),
            (r#""pad_token_id": 5, "eos_token_id": 2"#, Some("{}"), ones),
            (r#""pad_token_id": 5"#, Some(r#"{"pad_token_id": null}"#), ones),
        ] {
            let config = format!(r#"{{"model_type": "llama", {config}}}"#);
            let (dir, cfg) = folder("mask", &config, generation);
            let g = GenerationConfig::from_model_dir(&dir, &cfg).unwrap();
            std::fs::remove_dir_all(&dir).ok();
            assert_eq!(g.inferred_mask(&[5, 5, 3, 4, 1, 2, 3, 4]), want, "{config} {generation:?}");
            // A pad token absent from the prompts masks nothing.
            assert_eq!(g.inferred_mask(&[6, 6, 3, 4, 1, 2, 3, 4]), ones, "{config} {generation:?}");
        }
        // A configured pad token 0 without EOS tokens masks (transformers: [[0, 0, 1, 1], ...]);
        // an unconfigured one is not a pad token.
        let pad0 = GenerationConfig { pad_token_id: Some(0), ..GenerationConfig::default() };
        assert_eq!(pad0.inferred_mask(&[0, 0, 3, 4]), [0, 0, 1, 1]);
        assert_eq!(GenerationConfig::default().inferred_mask(&[0, 0, 3, 4]), [1; 4]);
        // A single prompt holding the pad token gets a zero there (transformers: [[1, 0, 1]]).
        let pad5 = GenerationConfig { pad_token_id: Some(5), eos_token_ids: vec![2], ..pad0 };
        assert_eq!(pad5.inferred_mask(&[3, 5, 4]), [1, 0, 1]);
    }

    /// Without a configured length: 20 new tokens, but the sequence never past
    /// `max_position_embeddings` (transformers' `_prepare_generated_length`), and a prompt that
    /// already fills it is transformers' error.
    #[test]
    fn the_default_length_stops_at_the_model_positions() {
        let (dir, cfg) = folder("cap", r#"{"model_type": "llama", "max_position_embeddings": 30}"#, None);
        let g = GenerationConfig::from_model_dir(&dir, &cfg).unwrap();
        let resolved = |prompt: usize| {
            let mut g = g.clone();
            g.resolve_length(prompt).map(|()| g.max_new_tokens).map_err(|e| e.to_string())
        };
        assert_eq!(resolved(5), Ok(20));
        assert_eq!(resolved(25), Ok(5));
        let err = resolved(30).unwrap_err();
        assert!(err.contains("Input length of input_ids is 30, but `max_length` is set to 30"), "{err}");
        std::fs::remove_dir_all(&dir).ok();
    }

    /// Settings transformers would refuse or that ask for what is not supported are errors.
    #[test]
    fn unsupported_or_malformed_settings_are_errors() {
        for (json, needle) in [
            (r#"{"bad_words_ids": [3]}"#, "bad_words_ids"),
            (r#"{"bad_words_ids": [[]]}"#, "bad_words_ids"),
            (r#"{"no_repeat_ngram_size": -1}"#, "no_repeat_ngram_size"),
            (r#"{"suppress_tokens": "x"}"#, "suppress_tokens"),
        ] {
            let (dir, cfg) = folder("bad", r#"{"model_type": "llama"}"#, Some(json));
            let err = GenerationConfig::from_model_dir(&dir, &cfg).unwrap_err().to_string();
            assert!(err.contains(needle) && err.contains("generation_config.json"), "{json}: {err}");
            std::fs::remove_dir_all(&dir).ok();
        }
    }
}
