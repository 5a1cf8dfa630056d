//! Whisper's generation (`WhisperForConditionalGeneration.generate` on up to 30 s of audio, its
//! short form): the decoder prompted with the start token, the language (given, or detected from
//! the audio as transformers' `detect_language`: the most likely language token after the start
//! token), the task and `<|notimestamps|>`, as transformers' `_retrieve_init_tokens` builds them
//! from `generation_config.json` (`lang_to_id`, `task_to_id`, `is_multilingual`,
//! `no_timestamps_token_id`, the older `forced_decoder_ids`); then greedy or sampled decoding with
//! the logits processors (`suppress_tokens`, `begin_suppress_tokens` at the first new token); the
//! output is transformers': each row's new tokens without its EOS and padding, padded to the
//! longest with the pad token.

use std::path::Path;

use oxtorch_tensor::{DType, Device, NoGradGuard, Tensor};
use serde_json::Value;

use super::beam::{beam_search, fill_value, repeat_rows, BeamModel};
use super::sampling::{pick, process, Rng};
use super::GenerationConfig;
use crate::config::Config;
use crate::error::{Error, Result};
use crate::layers::EncoderDecoderCache;

/// What Whisper's decoder is prompted with: `generation_config.json`'s Whisper settings, and the
/// language and task asked for.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct WhisperPrompt {
    /// `decoder_start_token_id` (`<|startoftranscript|>`)
    pub decoder_start_token_id: Option<i64>,
    /// `lang_to_id`: language tokens (`<|en|>`) to ids; empty for English-only checkpoints
    pub lang_to_id: Vec<(String, i64)>,
    /// `task_to_id`: `transcribe` and `translate` to their token ids
    pub task_to_id: Vec<(String, i64)>,
    /// `is_multilingual` (absent: `None`)
    pub is_multilingual: Option<bool>,
    /// `no_timestamps_token_id` (`<|notimestamps|>`)
    pub no_timestamps_token_id: Option<i64>,
    /// the older `forced_decoder_ids`: `(position, token)` pairs, a `None` token where the language
    /// is detected
    pub forced_decoder_ids: Vec<(i64, Option<i64>)>,
    /// the language: a token (`<|fr|>`), a code (`fr`) or a name (`french`); `None`: detected
    /// (multilingual checkpoints)
    pub language: Option<String>,
    /// `transcribe` or `translate`
    pub task: Option<String>,
    /// `return_timestamps` (timestamp decoding is not supported)
    pub return_timestamps: bool,
}

/// transformers' `TASK_IDS`.
const TASKS: [&str; 2] = ["translate", "transcribe"];

impl WhisperPrompt {
    /// Reads the Whisper settings of `generation_config.json` in `dir` (without one, of
    /// `config.json`, as transformers' `GenerationConfig.from_model_config`); `forced_decoder_ids`
    /// falls back to `config.json`'s, as `_retrieve_init_tokens` does.
    pub fn from_model_dir(dir: &Path, cfg: &Config) -> Result<Self> {
        let path = dir.join("generation_config.json");
        let json: Value = match std::fs::read_to_string(&path) {
            Ok(text) => serde_json::from_str(&text).map_err(|e| Error::format(&path, e.to_string()))?,
            Err(_) => Value::Null,
        };
        let from_config = json.is_null();
        let get = |key: &str| -> Option<&Value> {
            let v = if from_config { cfg.get(key) } else { json.get(key) };
            v.filter(|v| !v.is_null())
        };
        let bad = |key: &str, want: &str, v: &Value| {
            let file = if from_config { dir.join("config.json") } else { path.clone() };
            Error::format(&file, format!("\"{key}\" must be {want}, got {v}"))
        };
        let int = |key: &str| -> Result<Option<i64>> {
            get(key).map(|v| v.as_i64().ok_or_else(|| bad(key, "an integer", v))).transpose()
        };
        let map = |key: &str| -> Result<Vec<(String, i64)>> {
            match get(key) {
                None => Ok(Vec::new()),
                Some(Value::Object(o)) => o
                    .iter()
                    .map(|(k, v)| {
                        Ok((k.clone(), v.as_i64().ok_or_else(|| bad(key, "a map of token ids", v))?))
                    })
                    .collect(),
                Some(v) => Err(bad(key, "a map of token ids", v)),
            }
        };
        let text = |key: &str| -> Result<Option<String>> {
            get(key)
                .map(|v| v.as_str().map(str::to_string).ok_or_else(|| bad(key, "a string", v)))
                .transpose()
        };
        let forced =
            get("forced_decoder_ids").or_else(|| cfg.get("forced_decoder_ids").filter(|v| !v.is_null()));
        let forced_decoder_ids = match forced {
            None => Vec::new(),
            Some(Value::Array(pairs)) => pairs
                .iter()
                .map(|p| match p.as_array().map(Vec::as_slice) {
                    Some([i, t]) if i.is_i64() && (t.is_i64() || t.is_null()) => {
                        Ok((i.as_i64().unwrap_or(0), t.as_i64()))
                    }
                    _ => Err(bad("forced_decoder_ids", "a list of [position, token] pairs", p)),
                })
                .collect::<Result<_>>()?,
            Some(v) => Err(bad("forced_decoder_ids", "a list of [position, token] pairs", v))?,
        };
        let flag = |key: &str| -> Result<Option<bool>> {
            get(key).map(|v| v.as_bool().ok_or_else(|| bad(key, "a boolean", v))).transpose()
        };
        Ok(WhisperPrompt {
            decoder_start_token_id: int("decoder_start_token_id")?
                .or(cfg.get("decoder_start_token_id").and_then(Value::as_i64)),
            lang_to_id: map("lang_to_id")?,
            task_to_id: map("task_to_id")?,
            is_multilingual: flag("is_multilingual")?,
            no_timestamps_token_id: int("no_timestamps_token_id")?,
            forced_decoder_ids,
            language: text("language")?,
            task: text("task")?,
            return_timestamps: flag("return_timestamps")?.unwrap_or(false),
        })
    }

    /// The id of `language` (a token, a code or a name, any case), as transformers'
    /// `language_to_id`.
    fn language_id(&self, language: &str) -> Result<i64> {
        let language = language.to_lowercase();
        let token = if self.lang_to_id.iter().any(|(t, _)| *t == language) {
            language.clone()
        } else if let Some((_, code)) = LANGUAGE_NAMES.iter().find(|(name, _)| *name == language) {
            format!("<|{code}|>")
        } else if LANGUAGE_NAMES.iter().any(|(_, code)| *code == language) {
            format!("<|{language}|>")
        } else {
            return Err(Error::Input(format!(
                "Unsupported language: {language}. Language should be a code (en, fr, ...), a name (english, \
                 french, ...) or a token of the generation config's lang_to_id"
            )));
        };
        self.lang_to_id.iter().find(|(t, _)| *t == token).map(|(_, id)| *id).ok_or_else(|| {
            Error::Input(format!(
                "{token} is not supported by this specific model as it is not in the `generation_config.lang_to_id`"
            ))
        })
    }

    /// Checks the settings as transformers' `_set_language_and_task` and `_set_return_timestamps`
    /// do, before any audio is encoded.
    fn check(&self) -> Result<()> {
        if self.return_timestamps {
            return Err(Error::Unsupported(
                "Whisper generation with timestamps (return_timestamps) is not supported".into(),
            ));
        }
        if self.is_multilingual == Some(false) && (self.task.is_some() || self.language.is_some()) {
            return Err(Error::Input(
                "Cannot specify `task` or `language` for an English-only model. If the model is intended to be \
                 multilingual, update the generation config (is_multilingual)."
                    .into(),
            ));
        }
        if self.language.is_some() && self.lang_to_id.is_empty() {
            return Err(Error::Input(
                "The generation config is outdated and is thus not compatible with the `language` argument \
                 (no lang_to_id)"
                    .into(),
            ));
        }
        if let Some(task) = &self.task {
            if self.task_to_id.is_empty() {
                return Err(Error::Input(
                    "The generation config is outdated and is thus not compatible with the `task` argument \
                     (no task_to_id)"
                        .into(),
                ));
            }
            if !TASKS.contains(&task.as_str()) {
                return Err(Error::Input(format!(
                    "The `{task}` task is not supported. The task should be one of `{TASKS:?}`"
                )));
            }
        }
        Ok(())
    }

    /// The task's token id.
    fn task_id(&self, task: &str) -> Result<i64> {
        self.task_to_id
            .iter()
            .find(|(t, _)| t == task)
            .map(|(_, id)| *id)
            .ok_or_else(|| Error::Config(format!("the generation config's task_to_id has no \"{task}\"")))
    }
}

/// Whisper as generation sees it: the audio encoded into a cache once, then one decoder step per
/// token.
pub trait SpeechSeq2Seq {
    /// The device the model runs on.
    fn device(&self) -> Device;
    /// The decoder's positions (`max_target_positions`).
    fn max_target_positions(&self) -> usize;
    /// Encodes `input_features` `[batch, mel bins, frames]` and starts a generation's cache.
    fn start_generation(&self, input_features: &Tensor) -> Result<EncoderDecoderCache>;
    /// The next-token logits `[batch, vocab]` after `ids` `[batch, 1]`, extending `cache`.
    fn next_logits(&self, ids: &Tensor, cache: &mut EncoderDecoderCache) -> Result<Tensor>;
}

/// Transcribes (or translates) `input_features` `[batch, mel bins, frames]` as transformers'
/// `WhisperForConditionalGeneration.generate` does for audio of up to 30 s: see the module docs.
/// `g` gives the lengths (`max_length` counting the prompt tokens, capped at the decoder's
/// positions, else `max_new_tokens`), EOS and pad tokens, the logits processors and sampling;
/// `on_token(row, token)` is told each row's output tokens once decoding ends. With
/// `g.num_beams` > 1 this is beam search from each row's prompt (`generate/beam.rs`). Returns
/// `[batch, longest]` int64.
pub fn generate_whisper(
    model: &impl SpeechSeq2Seq,
    input_features: &Tensor,
    prompt: &WhisperPrompt,
    g: &GenerationConfig,
    on_token: impl FnMut(usize, i64),
) -> Result<Tensor> {
    g.validate()?;
    prompt.check()?;
    if g.num_return_sequences > 1 {
        return Err(Error::Unsupported("num_return_sequences with Whisper is not supported".into()));
    }
    if !g.stop_strings.is_empty() {
        return Err(Error::Unsupported("stop strings with Whisper are not supported".into()));
    }
    let _no_grad = NoGradGuard::new();
    let start = prompt
        .decoder_start_token_id
        .ok_or_else(|| Error::Config("Whisper generation needs decoder_start_token_id".into()))?;
    let b = match input_features.dims() {
        [b, _, _] => *b,
        d => {
            return Err(Error::Input(format!(
                "input 'input_features' must be [batch, mel bins, frames], got {d:?}"
            )))
        }
    };
    let device = model.device();
    let mut cache = model.start_generation(&input_features.to(device)?)?;
    let step = |ids: Vec<i64>, cache: &mut EncoderDecoderCache| -> Result<Vec<Vec<f32>>> {
        let ids = Tensor::from_vec(ids, [b, 1])?.to(device)?;
        Ok(model.next_logits(&ids, cache)?.to_dtype(DType::F32)?.to(Device::Cpu)?.to_vec2::<f32>()?)
    };
    // The start token, then each row's prompt (`_retrieve_init_tokens`): the forced tokens (when
    // neither language nor task is set), the language (given, or the most likely language token
    // after the start token), the task, `<|notimestamps|>`.
    let mut init = vec![Some(start)];
    let forced = &prompt.forced_decoder_ids;
    if prompt.language.is_none() && prompt.task.is_none() && forced.first().is_some_and(|&(i, _)| i == 1) {
        for (i, &(at, token)) in (1..).zip(forced) {
            if at != i {
                return Err(Error::Config(format!(
                    "forced_decoder_ids do not follow Whisper's prompt pattern: no entry for position {i}"
                )));
            }
            init.push(token);
        }
    }
    let mut logits = step(vec![start; b], &mut cache)?;
    let undefined_language = init.len() <= 1 || init[1].is_none();
    let languages: Option<Vec<i64>> = match &prompt.language {
        Some(language) => Some(vec![prompt.language_id(language)?; b]),
        None if !prompt.lang_to_id.is_empty() && undefined_language => {
            // transformers' `detect_language`: the argmax over the language tokens (the first one
            // on ties).
            let ids: Vec<i64> = prompt.lang_to_id.iter().map(|(_, id)| *id).collect();
            let detected = logits
                .iter()
                .map(|row| {
                    let score = |id: i64| usize::try_from(id).ok().and_then(|i| row.get(i)).copied();
                    let mut best: Option<(i64, f32)> = None;
                    for i in 0..row.len() as i64 {
                        if !ids.contains(&i) {
                            continue;
                        }
                        let s = score(i).unwrap_or(f32::NEG_INFINITY);
                        if best.is_none_or(|(_, b)| s > b) {
                            best = Some((i, s));
                        }
                    }
                    best.map(|(i, _)| i)
                        .ok_or_else(|| Error::Config("lang_to_id has no token in the vocabulary".into()))
                })
                .collect::<Result<Vec<_>>>()?;
            Some(detected)
        }
        None => None,
    };
    let mut rows: Vec<Vec<i64>> = Vec::with_capacity(b);
    for r in 0..b {
        let mut row = init.clone();
        if let Some(languages) = &languages {
            if row.len() > 1 {
                row[1] = Some(languages[r]);
            } else {
                row.push(Some(languages[r]));
            }
        }
        if let Some(task) = &prompt.task {
            // (transformers' `replace_or_add` after it changes nothing: its result is dropped.)
            row.push(Some(prompt.task_id(task)?));
        } else if prompt.language.is_some() && !prompt.task_to_id.is_empty() {
            let task_ids: Vec<i64> = prompt.task_to_id.iter().map(|(_, id)| *id).collect();
            if !row.iter().any(|t| t.is_some_and(|t| task_ids.contains(&t))) {
                row.push(Some(prompt.task_id("transcribe")?));
            }
        }
        if let Some(nt) = prompt.no_timestamps_token_id {
            if row.last() != Some(&Some(nt)) {
                row.push(Some(nt));
            }
        }
        rows.push(row.into_iter().flatten().collect());
    }
    let init_len = rows[0].len();
    // `_set_max_new_tokens_and_length`.
    let max_target = model.max_target_positions();
    let max_new = match g.max_length {
        Some(total) => total
            .saturating_add(init_len.min((max_target / 2).saturating_sub(1)))
            .min(max_target)
            .saturating_sub(init_len),
        None if g.max_new_tokens + init_len > max_target => {
            return Err(Error::Input(format!(
                "The length of `decoder_input_ids`, including special start tokens, prompt tokens, and previous \
                 tokens, is {init_len}, and `max_new_tokens` is {}. Thus, the combined length of \
                 `decoder_input_ids` and `max_new_tokens` is: {}. This exceeds the `max_target_positions` of the \
                 Whisper model: {max_target}.",
                g.max_new_tokens,
                g.max_new_tokens + init_len
            )))
        }
        None => g.max_new_tokens,
    };
    let min_new = match (g.min_length, g.min_new_tokens) {
        (Some(total), 0) => total.saturating_sub(init_len),
        (_, n) => n,
    };
    let g = GenerationConfig { max_new_tokens: max_new, min_new_tokens: min_new, ..g.clone() };
    let pad = g.pad_token();
    if g.num_beams > 1 {
        // Beam search over the audio encoded once per beam, from each row's prompt; the
        // hypotheses padded as transformers pads them, then stripped as below.
        let nb = g.num_beams;
        let copies = Tensor::from_vec(repeat_rows(&(0..b as i64).collect::<Vec<_>>(), nb), [b * nb])?;
        let features = input_features.to(device)?.index_select(0, &copies.to(device)?)?;
        let cache = model.start_generation(&features)?;
        drop(logits);
        let best = beam_search(
            &mut Beamed { model, cache, fed: 0 },
            &rows,
            &vec![0; b],
            Some(&vec![Vec::new(); b]),
            None,
            &g,
        )?;
        let width = best.iter().map(Vec::len).max().unwrap_or(0);
        rows = best
            .into_iter()
            .map(|mut r| {
                r.resize(width, fill_value(&g));
                r
            })
            .collect();
        return whisper_output(&rows, init_len, &g, prompt, on_token);
    }
    // The rest of each row's prompt, after the start token.
    for k in 1..init_len {
        logits = step(rows.iter().map(|r| r[k]).collect(), &mut cache)?;
    }
    let mut done = vec![false; b];
    let mut rng = Rng(g.seed);
    for n in 0..max_new {
        let next: Vec<i64> = logits
            .iter_mut()
            .enumerate()
            .map(|(r, row)| {
                if done[r] && g.pads_finished_rows() {
                    pad
                } else {
                    // (No token ids in: transformers' encoder n-gram ban needs them.)
                    process(row, &rows[r], 0, n, &g, &[]);
                    pick(row, &g, &mut rng)
                }
            })
            .collect();
        for (r, &t) in next.iter().enumerate() {
            rows[r].push(t);
            done[r] |= g.eos_token_ids.contains(&t);
        }
        if done.iter().all(|&d| d) || n + 1 == max_new {
            break;
        }
        logits = step(next, &mut cache)?;
    }
    whisper_output(&rows, init_len, &g, prompt, on_token)
}

/// `generate_with_fallback` and `_retrieve_segment` on the generated `rows` (prompt of `init_len`
/// tokens, then the new ones, as long as each other): the new tokens without the padding (as many
/// tokens as there are pad tokens in the row, one fewer when the pad token is the EOS) and the
/// EOS, reported to `on_token` and padded to the longest with the pad token.
fn whisper_output(
    rows: &[Vec<i64>],
    init_len: usize,
    g: &GenerationConfig,
    prompt: &WhisperPrompt,
    mut on_token: impl FnMut(usize, i64),
) -> Result<Tensor> {
    let (b, pad) = (rows.len(), g.pad_token());
    let eos = g.eos_token_ids.first().copied();
    let mut out = Vec::with_capacity(b);
    for (r, row) in rows.iter().enumerate() {
        let mut seq = row[init_len..].to_vec();
        if seq.last() == Some(&pad) {
            let mut paddings = seq.iter().filter(|&&t| t == pad).count();
            if Some(pad) == eos {
                paddings -= 1;
            }
            seq.truncate(seq.len() - paddings);
        }
        if seq.last().is_some() && seq.last() == eos.as_ref() {
            seq.pop();
        }
        // Timestamp tokens in pairs would split the audio into segments (and decode the rest of
        // it again): transformers' long-form path.
        if let Some(nt) = prompt.no_timestamps_token_id {
            if seq.windows(2).any(|w| w[0] > nt && w[1] > nt) {
                return Err(Error::Unsupported(format!(
                    "row {r} holds consecutive timestamp tokens, which transformers decodes as segments of the \
                     audio: not supported"
                )));
            }
        }
        seq.iter().for_each(|&t| on_token(r, t));
        out.push(seq);
    }
    let width = out.iter().map(Vec::len).max().unwrap_or(0);
    let flat: Vec<i64> =
        out.iter().flat_map(|s| s.iter().copied().chain(std::iter::repeat_n(pad, width - s.len()))).collect();
    Ok(Tensor::from_vec(flat, [b, width])?)
}

/// Whisper under beam search: its cache and how many of each hypothesis' tokens it has seen.
struct Beamed<'m, M> {
    model: &'m M,
    cache: EncoderDecoderCache,
    /// the tokens the cache holds (the prompt is fed on the first call, a token at a time)
    fed: usize,
}

impl<M: SpeechSeq2Seq> BeamModel for Beamed<'_, M> {
    fn next_logits(&mut self, rows: &[&[i64]]) -> Result<Tensor> {
        let len = rows.first().map_or(0, |r| r.len());
        let device = self.model.device();
        let mut logits = None;
        for k in self.fed..len {
            let ids: Vec<i64> = rows.iter().map(|r| r[k]).collect();
            let ids = Tensor::from_vec(ids, [rows.len(), 1])?.to(device)?;
            logits = Some(self.model.next_logits(&ids, &mut self.cache)?);
        }
        self.fed = len;
        logits.ok_or_else(|| Error::Input("beam search asked for logits without a new token".into()))
    }

    fn reorder(&mut self, from: &[i64]) -> Result<()> {
        self.cache.reorder(from)
    }
}

/// transformers' `TO_LANGUAGE_CODE`: language names (and aliases) to codes.
const LANGUAGE_NAMES: [(&str, &str); 112] = [
    ("afrikaans", "af"),
    ("albanian", "sq"),
    ("amharic", "am"),
    ("arabic", "ar"),
    ("armenian", "hy"),
    ("assamese", "as"),
    ("azerbaijani", "az"),
    ("bashkir", "ba"),
    ("basque", "eu"),
    ("belarusian", "be"),
    ("bengali", "bn"),
    ("bosnian", "bs"),
    ("breton", "br"),
    ("bulgarian", "bg"),
    ("burmese", "my"),
    ("cantonese", "yue"),
    ("castilian", "es"),
    ("catalan", "ca"),
    ("chinese", "zh"),
    ("croatian", "hr"),
    ("czech", "cs"),
    ("danish", "da"),
    ("dutch", "nl"),
    ("english", "en"),
    ("estonian", "et"),
    ("faroese", "fo"),
    ("finnish", "fi"),
    ("flemish", "nl"),
    ("french", "fr"),
    ("galician", "gl"),
    ("georgian", "ka"),
    ("german", "de"),
    ("greek", "el"),
    ("gujarati", "gu"),
    ("haitian", "ht"),
    ("haitian creole", "ht"),
    ("hausa", "ha"),
    ("hawaiian", "haw"),
    ("hebrew", "he"),
    ("hindi", "hi"),
    ("hungarian", "hu"),
    ("icelandic", "is"),
    ("indonesian", "id"),
    ("italian", "it"),
    ("japanese", "ja"),
    ("javanese", "jw"),
    ("kannada", "kn"),
    ("kazakh", "kk"),
    ("khmer", "km"),
    ("korean", "ko"),
    ("lao", "lo"),
    ("latin", "la"),
    ("latvian", "lv"),
    ("letzeburgesch", "lb"),
    ("lingala", "ln"),
    ("lithuanian", "lt"),
    ("luxembourgish", "lb"),
    ("macedonian", "mk"),
    ("malagasy", "mg"),
    ("malay", "ms"),
    ("malayalam", "ml"),
    ("maltese", "mt"),
    ("mandarin", "zh"),
    ("maori", "mi"),
    ("marathi", "mr"),
    ("moldavian", "ro"),
    ("moldovan", "ro"),
    ("mongolian", "mn"),
    ("myanmar", "my"),
    ("nepali", "ne"),
    ("norwegian", "no"),
    ("nynorsk", "nn"),
    ("occitan", "oc"),
    ("panjabi", "pa"),
    ("pashto", "ps"),
    ("persian", "fa"),
    ("polish", "pl"),
    ("portuguese", "pt"),
    ("punjabi", "pa"),
    ("pushto", "ps"),
    ("romanian", "ro"),
    ("russian", "ru"),
    ("sanskrit", "sa"),
    ("serbian", "sr"),
    ("shona", "sn"),
    ("sindhi", "sd"),
    ("sinhala", "si"),
    ("sinhalese", "si"),
    ("slovak", "sk"),
    ("slovenian", "sl"),
    ("somali", "so"),
    ("spanish", "es"),
    ("sundanese", "su"),
    ("swahili", "sw"),
    ("swedish", "sv"),
    ("tagalog", "tl"),
    ("tajik", "tg"),
    ("tamil", "ta"),
    ("tatar", "tt"),
    ("telugu", "te"),
    ("thai", "th"),
    ("tibetan", "bo"),
    ("turkish", "tr"),
    ("turkmen", "tk"),
    ("ukrainian", "uk"),
    ("urdu", "ur"),
    ("uzbek", "uz"),
    ("valencian", "ca"),
    ("vietnamese", "vi"),
    ("welsh", "cy"),
    ("yiddish", "yi"),
    ("yoruba", "yo"),
];
