//! sentence-transformers models: a transformer, then the pooling in `1_Pooling/config.json`, then
//! what `modules.json` lists after it: `Dense` projections and L2 normalisation (`Normalize`).

use std::path::Path;

use oxtorch_tensor::{DType, Device, Tensor};
use serde_json::Value;

use crate::config::Config;
use crate::error::{Error, Result};
use crate::models::bucketing::{batch_on, fuse_forward, pad_columns, padded_width};
use crate::models::AutoModel;
use crate::tokenizer::HfTokenizer;
use crate::weights::Weights;

mod dense;
mod prompts;

use dense::{module_kind, Dense};
pub use prompts::Prompts;

/// One pooling of token embeddings into a sentence embedding.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PoolingMode {
    /// The first token (`[CLS]`).
    Cls,
    /// The element-wise maximum over tokens.
    Max,
    /// The mean over tokens.
    Mean,
    /// The sum over tokens divided by `sqrt(count)`.
    MeanSqrtLen,
    /// The last token that is not padding.
    LastToken,
    /// The mean weighted by position (1 for the first kept token, 2 for the next, ...).
    WeightedMean,
}

impl PoolingMode {
    /// The modes a `1_Pooling/config.json` enables, in the order sentence-transformers concatenates
    /// them; mean pooling when there is no such file.
    pub fn from_pooling_config(dir: &Path) -> Result<Vec<PoolingMode>> {
        let path = dir.join("config.json");
        let Ok(text) = std::fs::read_to_string(&path) else { return Ok(vec![PoolingMode::Mean]) };
        let json: Value = serde_json::from_str(&text).map_err(|e| Error::format(&path, e.to_string()))?;
        let by_name = |name: &str| -> Result<PoolingMode> {
            Ok(match name {
                "cls" => PoolingMode::Cls,
                "max" => PoolingMode::Max,
                "mean" => PoolingMode::Mean,
                "mean_sqrt_len_tokens" => PoolingMode::MeanSqrtLen,
                "lasttoken" => PoolingMode::LastToken,
                "weightedmean" => PoolingMode::WeightedMean,
                other => {
                    return Err(Error::Unsupported(format!(
                        "{}: pooling mode \"{other}\" is not supported (supported: cls, max, mean, mean_sqrt_len_tokens, weightedmean, lasttoken)",
                        path.display()
                    )))
                }
            })
        };
        // sentence-transformers 6 writes `pooling_mode` (a name or a list, concatenated in order);
        // earlier versions one boolean per mode (concatenated in the order of this table).
        let modes: Vec<PoolingMode> = match json.get("pooling_mode") {
            Some(Value::String(name)) => vec![by_name(name)?],
            Some(Value::Array(names)) => {
                names.iter().map(|n| by_name(n.as_str().unwrap_or("?"))).collect::<Result<_>>()?
            }
            _ => {
                let legacy = [
                    ("pooling_mode_cls_token", "cls"),
                    ("pooling_mode_max_tokens", "max"),
                    ("pooling_mode_mean_tokens", "mean"),
                    ("pooling_mode_mean_sqrt_len_tokens", "mean_sqrt_len_tokens"),
                    ("pooling_mode_weightedmean_tokens", "weightedmean"),
                    ("pooling_mode_lasttoken", "lasttoken"),
                ];
                let on = |k: &str| json.get(k).and_then(Value::as_bool).unwrap_or(false);
                legacy.iter().filter(|(k, _)| on(k)).map(|(_, n)| by_name(n)).collect::<Result<_>>()?
            }
        };
        // sentence-transformers pools by the mean when the config enables no mode.
        Ok(if modes.is_empty() { vec![PoolingMode::Mean] } else { modes })
    }

    /// Pools `tokens` `[batch, seq, dim]` under `mask` `[batch, seq]` into `[batch, dim]`, as
    /// sentence-transformers' `Pooling` does whichever side the padding is on: `Cls` takes the first
    /// token the mask keeps (position 0 of a row it keeps none of), `LastToken` the last one (zeros
    /// for a row it keeps none of).
    pub fn pool(self, tokens: &Tensor, mask: &Tensor) -> Result<Tensor> {
        self.pool_after_prompt(tokens, mask, mask)
    }

    /// [`PoolingMode::pool`] under `mask` with a prompt removed from `attention_mask`: weighted
    /// means count their weights from the first token `attention_mask` keeps, as
    /// sentence-transformers (`include_prompt: false`).
    pub fn pool_after_prompt(
        self,
        tokens: &Tensor,
        mask: &Tensor,
        attention_mask: &Tensor,
    ) -> Result<Tensor> {
        check_pool_shapes(tokens, mask, attention_mask)?;
        let m = mask.to_dtype(tokens.dtype())?.unsqueeze(-1)?;
        let kept = || Ok::<_, Error>(mask.ne(0)?.to_dtype(DType::I64)?);
        Ok(match self {
            // `argmax` gives the first of equal maxima: the first token kept, else 0.
            PoolingMode::Cls => at_positions(tokens, &kept()?.argmax(Some(1), false)?)?,
            PoolingMode::Max => {
                let blocked = mask.eq(0)?.unsqueeze(-1)?;
                tokens.masked_fill(&blocked, -1e9)?.amax(1, false)?
            }
            PoolingMode::Mean | PoolingMode::MeanSqrtLen => {
                let sum = tokens.mul(&m)?.sum(1, false)?;
                let count = m.sum(1, false)?.clamp_min(1e-9)?;
                if self == PoolingMode::Mean {
                    sum.div(&count)?
                } else {
                    sum.div(&count.sqrt()?)?
                }
            }
            PoolingMode::WeightedMean => {
                // Weights 1, 2, ... from the first kept token (left padding shifts them), as
                // sentence-transformers' `Pooling`.
                let seq = tokens.dims()[1] as i64;
                let ranks = Tensor::arange_step(1i64, seq + 1, 1, (DType::I64, mask.device()))?;
                let first = attention_mask.ne(0)?.to_dtype(DType::I64)?.argmax(Some(1), true)?;
                let w = ranks.unsqueeze(0)?.sub(&first)?.to_dtype(tokens.dtype())?.unsqueeze(-1)?.mul(&m)?;
                tokens.mul(&w)?.sum(1, false)?.div(&w.sum(1, false)?.clamp_min(1e-9)?)?
            }
            PoolingMode::LastToken => {
                // The kept position of the largest rank `1..=seq` (else 0), read from the masked
                // tokens as sentence-transformers does.
                let seq = tokens.dims()[1] as i64;
                let ranks = Tensor::arange_step(1i64, seq + 1, 1, (DType::I64, mask.device()))?;
                let last = kept()?.mul(&ranks)?.argmax(Some(1), false)?;
                at_positions(&tokens.mul(&m)?, &last)?
            }
        })
    }
}

/// The tokenizer of a sentence-transformers folder `dir` (a `SentenceTransformer`'s or a
/// `CrossEncoder`'s) as its `Transformer` module sets it up: truncation from the module's config
/// (`sentence_bert_config.json`, ...) or the tokenizer's own limit capped by the model's positions,
/// lowercasing with `do_lower_case`.
pub(crate) fn module_tokenizer(dir: &Path, cfg: &Config) -> Result<HfTokenizer> {
    TransformerSettings::load(dir)?.tokenizer(dir, cfg)
}

/// Whether every row of `mask` `[batch, seq]` keeps at least one token.
fn keeps_a_token_per_row(mask: &Tensor) -> Result<bool> {
    let seq = mask.dims().get(1).copied().unwrap_or(0);
    let kept = mask.ne(0)?.to_dtype(DType::I64)?.to_vec::<i64>()?;
    Ok(seq > 0 && kept.chunks(seq).all(|row| row.iter().any(|&k| k != 0)))
}

/// Pooling reads `tokens` as `[batch, seq, dim]` under masks of `[batch, seq]`: anything else is an
/// error naming the shapes (the positions it gathers are trusted to be in range).
fn check_pool_shapes(tokens: &Tensor, mask: &Tensor, attention_mask: &Tensor) -> Result<()> {
    let dims = tokens.dims();
    let fits = |m: &Tensor| dims.len() == 3 && m.dims() == &dims[..2];
    if fits(mask) && fits(attention_mask) {
        return Ok(());
    }
    Err(Error::Input(format!(
        "pooling expects token embeddings [batch, seq, dim] and masks [batch, seq], got {:?}, {:?} and {:?}",
        dims,
        mask.dims(),
        attention_mask.dims()
    )))
}

/// `include_prompt` of a pooling folder's `config.json` (true when absent).
fn includes_prompt(dir: &Path) -> Result<bool> {
    let path = dir.join("config.json");
    let Ok(text) = std::fs::read_to_string(&path) else { return Ok(true) };
    let json: Value = serde_json::from_str(&text).map_err(|e| Error::format(&path, e.to_string()))?;
    match json.get("include_prompt") {
        None | Some(Value::Null) => Ok(true),
        Some(v) => v
            .as_bool()
            .ok_or_else(|| Error::format(&path, format!("\"include_prompt\" must be a boolean, got {v}"))),
    }
}

/// `mask` `[batch, seq]` without each row's first `prompt_length` kept positions (from its first
/// kept one, so after left padding), as sentence-transformers' `_exclude_prompt_from_mask`.
fn without_prompt(mask: &Tensor, prompt_length: usize) -> Result<Tensor> {
    let seq = mask.dims()[1] as i64;
    let first = mask.ne(0)?.to_dtype(DType::I64)?.argmax(Some(1), true)?;
    let positions = Tensor::arange_step(0i64, seq, 1, (DType::I64, mask.device()))?.unsqueeze(0)?;
    let prompt = positions.lt(&first.add(prompt_length as f64)?)?;
    Ok(mask.masked_fill(&prompt, 0.0)?)
}

/// `tokens[i, positions[i], :]`: `[batch, dim]` from `tokens` `[batch, seq, dim]` and int64
/// `positions` `[batch]`.
fn at_positions(tokens: &Tensor, positions: &Tensor) -> Result<Tensor> {
    let (b, dim) = (tokens.dims()[0], tokens.dims()[2]);
    let index = positions.reshape([b, 1, 1])?.expand([b, 1, dim])?;
    // (positions of kept tokens, in range: no read-back of their range on a device)
    Ok(oxtorch_tensor::trusted_indices(|| tokens.gather(1, &index))?.squeeze_dims(1)?)
}

/// The config files of sentence-transformers' `Transformer` module, the first found read: the
/// current name, then those of older versions.
const TRANSFORMER_CONFIGS: &[&str] = &[
    "sentence_bert_config.json",
    "sentence_roberta_config.json",
    "sentence_distilbert_config.json",
    "sentence_camembert_config.json",
    "sentence_albert_config.json",
    "sentence_xlm-roberta_config.json",
    "sentence_xlnet_config.json",
];

/// What the `Transformer` module's config sets for the tokenizer.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct TransformerSettings {
    /// `max_seq_length`
    max_seq_length: Option<usize>,
    /// `model_max_length` among the tokenizer's arguments (`processor_kwargs`, `tokenizer_args`
    /// before sentence-transformers 6)
    model_max_length: Option<usize>,
    /// `do_lower_case`: texts are lowercased before the tokenizer's own normalizer
    do_lower_case: bool,
}

impl TransformerSettings {
    /// Reads the first of [`TRANSFORMER_CONFIGS`] in `dir` holding a non-empty object (defaults when
    /// none does); a value of the wrong type is an error.
    fn load(dir: &Path) -> Result<Self> {
        for name in TRANSFORMER_CONFIGS {
            let path = dir.join(name);
            let Ok(text) = std::fs::read_to_string(&path) else { continue };
            let json: Value = serde_json::from_str(&text).map_err(|e| Error::format(&path, e.to_string()))?;
            if json.as_object().is_some_and(|o| !o.is_empty()) {
                return Self::from_json(&path, &json);
            }
        }
        Ok(Self::default())
    }

    /// The settings in the config `json` read from `path`.
    fn from_json(path: &Path, json: &Value) -> Result<Self> {
        let length = |v: Option<&Value>, key: &str| match v {
            None | Some(Value::Null) => Ok(None),
            Some(v) => v.as_u64().and_then(|n| usize::try_from(n).ok()).map(Some).ok_or_else(|| {
                Error::format(path, format!("\"{key}\" must be a non-negative integer, got {v}"))
            }),
        };
        let tokenizer_args = json.get("processor_kwargs").or_else(|| json.get("tokenizer_args"));
        let model_max_length = tokenizer_args.and_then(|a| a.get("model_max_length"));
        Ok(TransformerSettings {
            max_seq_length: length(json.get("max_seq_length"), "max_seq_length")?,
            model_max_length: length(model_max_length, "model_max_length")?,
            do_lower_case: match json.get("do_lower_case") {
                None | Some(Value::Null) => false,
                Some(v) => v.as_bool().ok_or_else(|| {
                    Error::format(path, format!("\"do_lower_case\" must be a boolean, got {v}"))
                })?,
            },
        })
    }

    /// The tokenizer of `dir` as the `Transformer` module sets it up: truncated as
    /// [`TransformerSettings::truncation`] says, lowercased with `do_lower_case`.
    fn tokenizer(&self, dir: &Path, cfg: &Config) -> Result<HfTokenizer> {
        let mut tokenizer = HfTokenizer::load(dir, self.truncation(dir, cfg)?)?;
        if self.do_lower_case {
            tokenizer.lowercase_inputs();
        }
        Ok(tokenizer)
    }

    /// The length texts are truncated to (`None`: not truncated), as sentence-transformers'
    /// `Transformer` sets the tokenizer's `model_max_length`: `model_max_length` from the module's
    /// tokenizer arguments, else its `max_seq_length` (neither capped), else the limit in
    /// `tokenizer_config.json` capped at the model's `max_position_embeddings`. RoBERTa's position
    /// offset is not taken off, as there.
    fn truncation(&self, dir: &Path, cfg: &Config) -> Result<Option<usize>> {
        if let Some(n) = self.model_max_length.or(self.max_seq_length) {
            return Ok(Some(n));
        }
        // transformers' "no limit" is 1e30, not an integer JSON reads exactly: taken as none.
        let tokenizer_limit = std::fs::read_to_string(dir.join("tokenizer_config.json"))
            .ok()
            .and_then(|t| serde_json::from_str::<Value>(&t).ok())
            .and_then(|v| v.get("model_max_length").and_then(Value::as_u64))
            .filter(|&n| n < 1 << 30)
            .map(|n| n as usize);
        let positions = cfg.opt_usize("max_position_embeddings")?;
        Ok(match (tokenizer_limit, positions) {
            (Some(t), Some(p)) => Some(t.min(p)),
            (t, p) => t.or(p),
        })
    }
}

/// A sentence-transformers model: encoder, pooling, optional normalisation, tokenizer.
#[derive(Debug, Clone)]
pub struct SentenceTransformer {
    model: AutoModel,
    pooling: Vec<PoolingMode>,
    /// What `modules.json` lists after the pooling, in order.
    after_pooling: Vec<AfterPooling>,
    tokenizer: Option<HfTokenizer>,
    /// the prompts of `config_sentence_transformers.json`
    prompts: Prompts,
    /// whether pooling reads the prompt's tokens (`include_prompt` of the pooling config)
    include_prompt: bool,
}

/// A module applied to the pooled embedding.
#[derive(Debug, Clone)]
enum AfterPooling {
    Dense(Dense),
    Normalize,
}

/// The `modules.json` entry types a folder may list.
const SUPPORTED_MODULES: &str = "the backbone (first), Pooling, Dense, Dropout, Normalize";

impl SentenceTransformer {
    /// Loads the model folder `dir`: `config.json` + weights, `modules.json` (pooling folder and
    /// `Normalize`), `sentence_bert_config.json` and `tokenizer_config.json` (truncation, lowercasing)
    /// and `tokenizer.json` when present.
    pub fn load(dir: &Path, dtype: Option<DType>) -> Result<Self> {
        Self::load_on_device(dir, dtype, Device::Cpu)
    }

    /// [`SentenceTransformer::load`], with the weights moved to `device` (read on the host, uploaded
    /// once); embeddings are then computed there.
    pub fn load_on_device(dir: &Path, dtype: Option<DType>, device: Device) -> Result<Self> {
        let cfg = Config::load(dir)?;
        let weights = Weights::load(dir, dtype)?.to_device(device)?;
        // As sentence-transformers: the family's base model, whatever head the config names.
        let model = AutoModel::load_base(&cfg, &weights)?;
        let mut pooling_dir = dir.join("1_Pooling");
        let mut after_pooling = Vec::new();
        let modules = dir.join("modules.json");
        let described = modules.is_file();
        if let Ok(text) = std::fs::read_to_string(&modules) {
            let json: Value =
                serde_json::from_str(&text).map_err(|e| Error::format(&modules, e.to_string()))?;
            for (i, m) in json.as_array().into_iter().flatten().enumerate() {
                let path = dir.join(m.get("path").and_then(Value::as_str).unwrap_or(""));
                match module_kind(m) {
                    // The backbone: `Transformer`, or an older name (`BERT`, `RoBERTa`, ...).
                    _ if i == 0 => {}
                    "Pooling" => pooling_dir = path,
                    "Dense" => after_pooling.push(AfterPooling::Dense(Dense::load(&path, dtype, device)?)),
                    "Normalize" => after_pooling.push(AfterPooling::Normalize),
                    // Dropout does nothing at inference.
                    "Dropout" => {}
                    other => {
                        return Err(Error::format(
                            &modules,
                            format!(
                                "module {i} \"{other}\" is not supported (supported: {SUPPORTED_MODULES})"
                            ),
                        ))
                    }
                }
            }
        }
        // A plain transformers folder (no modules.json) is what sentence-transformers builds then:
        // the last token of a causal LM (unless `is_causal` is false), else the mean, with the
        // tokenizer's own settings (1_Pooling and sentence_bert_config.json are not read).
        let (pooling, include_prompt) = if described {
            (PoolingMode::from_pooling_config(&pooling_dir)?, includes_prompt(&pooling_dir)?)
        } else {
            let causal = cfg.architectures().first().is_some_and(|a| a.ends_with("ForCausalLM"))
                && cfg.bool_or("is_causal", true)?;
            (vec![if causal { PoolingMode::LastToken } else { PoolingMode::Mean }], true)
        };
        let prompts = if described { Prompts::load(dir)? } else { Prompts::default() };
        let tokenizer = if HfTokenizer::in_folder(dir)? {
            let settings =
                if described { TransformerSettings::load(dir)? } else { TransformerSettings::default() };
            Some(settings.tokenizer(dir, &cfg)?)
        } else {
            None
        };
        Ok(SentenceTransformer { model, pooling, after_pooling, tokenizer, prompts, include_prompt })
    }

    /// The pooling modes, concatenated in this order.
    pub fn pooling(&self) -> &[PoolingMode] {
        &self.pooling
    }

    /// Whether embeddings are L2-normalised (last).
    pub fn normalizes(&self) -> bool {
        matches!(self.after_pooling.last(), Some(AfterPooling::Normalize))
    }

    /// The prompts of `config_sentence_transformers.json`.
    pub fn prompts(&self) -> &Prompts {
        &self.prompts
    }

    /// The tokenizer, when the folder has one.
    pub fn tokenizer(&self) -> Option<&HfTokenizer> {
        self.tokenizer.as_ref()
    }

    /// The device the model runs on.
    pub fn device(&self) -> Device {
        self.model.device()
    }

    /// Sentence embeddings `[batch, dim]` of tokenized inputs, on the model's device.
    pub fn embed_ids(
        &self,
        input_ids: &Tensor,
        attention_mask: &Tensor,
        token_type_ids: Option<&Tensor>,
    ) -> Result<Tensor> {
        self.embed_ids_after_prompt(input_ids, attention_mask, token_type_ids, 0)
    }

    /// [`SentenceTransformer::embed_ids`] of inputs that begin with a prompt of `prompt_length`
    /// tokens (after any left padding), which pooling skips unless the model includes prompts.
    pub fn embed_ids_after_prompt(
        &self,
        input_ids: &Tensor,
        attention_mask: &Tensor,
        token_type_ids: Option<&Tensor>,
        prompt_length: usize,
    ) -> Result<Tensor> {
        // On a compiling device: padded to the length's bucket (masked, so pooling ignores it)
        // and fused, so every length of a bucket runs the same program.
        let device = self.device();
        let seq = input_ids.dims().get(1).copied().unwrap_or(0);
        let width = padded_width(device, seq, self.model.max_positions());
        let _fused = fuse_forward(device);
        let (input_ids, attention_mask, token_type_ids) = if width == seq {
            (input_ids.clone(), attention_mask.clone(), token_type_ids.cloned())
        } else {
            (
                pad_columns(input_ids, width, self.model.padding_token())?,
                pad_columns(attention_mask, width, 0)?,
                token_type_ids.map(|t| pad_columns(t, width, 0)).transpose()?,
            )
        };
        // The batch marked dynamic too: batches of any size in a bucket share the programs.
        let input_ids = batch_on(&input_ids, device)?;
        let token_type_ids = token_type_ids.map(|t| batch_on(&t, device)).transpose()?;
        let attention_mask = &batch_on(&attention_mask, device)?;
        let pool_mask = match prompt_length {
            n if n > 0 && !self.include_prompt => &without_prompt(attention_mask, n)?,
            _ => attention_mask,
        };
        // Pooling reads kept tokens only, so the padding need not be computed (the packed forward
        // runs on the CPU only); except that `Cls` reads position 0 of a row that keeps no token,
        // which only the full forward has.
        let packed = device.is_cpu()
            && (!self.pooling.contains(&PoolingMode::Cls) || keeps_a_token_per_row(pool_mask)?);
        let tokens = if packed {
            self.model.last_hidden_state_at_tokens(&input_ids, attention_mask, token_type_ids.as_ref())?
        } else {
            self.model.last_hidden_state_bucketed(
                &input_ids,
                Some(attention_mask),
                token_type_ids.as_ref(),
                seq,
            )?
        };
        let pooled = self
            .pooling
            .iter()
            .map(|p| p.pool_after_prompt(&tokens, pool_mask, attention_mask))
            .collect::<Result<Vec<_>>>()?;
        let mut out = if pooled.len() == 1 {
            pooled[0].clone()
        } else {
            Tensor::cat(&pooled.iter().collect::<Vec<_>>(), 1)?
        };
        for module in &self.after_pooling {
            out = match module {
                AfterPooling::Dense(dense) => dense.forward(&out)?,
                AfterPooling::Normalize => {
                    let norm = out.to_dtype(DType::F32)?.norm(2.0, 1, true)?.clamp_min(1e-12)?;
                    out.to_dtype(DType::F32)?.div(&norm)?.to_dtype(out.dtype())?
                }
            };
        }
        Ok(out)
    }

    /// Sentence embeddings `[texts.len(), dim]` of `texts`, on the model's device, after the
    /// default prompt (`default_prompt_name`) if the model has one.
    pub fn encode(&self, texts: &[&str]) -> Result<Tensor> {
        self.encode_with_prompt(texts, None, None)
    }

    /// [`SentenceTransformer::encode`] after a prompt, as sentence-transformers' `encode(prompt=,
    /// prompt_name=)`: the text `prompt`, else the prompt named `prompt_name`, else the default one.
    /// Pooling skips the prompt's tokens when the pooling config says `include_prompt: false`.
    pub fn encode_with_prompt(
        &self,
        texts: &[&str],
        prompt: Option<&str>,
        prompt_name: Option<&str>,
    ) -> Result<Tensor> {
        let tok = self.tokenizer.as_ref().ok_or_else(|| {
            Error::Input(
                "this model folder has no tokenizer (tokenizer.json, a BERT vocab.txt or a DeBERTa-v2 spm.model)".into(),
            )
        })?;
        let Some(prompt) = self.prompts.resolve(prompt, prompt_name)? else {
            let batch = tok.encode_batch(texts)?;
            return self.embed_ids(&batch.input_ids, &batch.attention_mask, Some(&batch.token_type_ids));
        };
        let prompted: Vec<String> = texts.iter().map(|t| format!("{prompt}{t}")).collect();
        let batch = tok.encode_batch(&prompted.iter().map(String::as_str).collect::<Vec<_>>())?;
        let length = if self.include_prompt { 0 } else { prompts::prompt_length(tok, prompt)? };
        self.embed_ids_after_prompt(
            &batch.input_ids,
            &batch.attention_mask,
            Some(&batch.token_type_ids),
            length,
        )
    }
}

#[cfg(test)]
mod pooling_tests {
    use super::*;

    /// Weighted mean: weights 1, 2, ... from the first kept token, whichever side the padding is.
    #[test]
    fn weighted_mean_counts_from_the_first_kept_token() {
        let tokens = Tensor::from_slice(&[1.0f32, 10.0, 2.0, 20.0, 3.0, 30.0], [1, 3, 2]).unwrap();
        let right = Tensor::from_vec(vec![1i64, 1, 0], [1, 3]).unwrap();
        let left = Tensor::from_vec(vec![0i64, 1, 1], [1, 3]).unwrap();
        let v = |m: &Tensor| PoolingMode::WeightedMean.pool(&tokens, m).unwrap().to_vec::<f32>().unwrap();
        // (1·1 + 2·2) / 3 and (1·2 + 2·3) / 3
        assert_eq!(v(&right), vec![5.0 / 3.0, 50.0 / 3.0]);
        assert_eq!(v(&left), vec![8.0 / 3.0, 80.0 / 3.0]);
    }

    /// A pooling config that enables no mode pools by the mean, as sentence-transformers.
    #[test]
    fn no_enabled_mode_is_the_mean() {
        let dir = std::env::temp_dir().join(format!("oxtorch-pooling-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join("config.json"),
            r#"{"word_embedding_dimension": 4, "pooling_mode_cls_token": false}"#,
        )
        .unwrap();
        assert_eq!(PoolingMode::from_pooling_config(&dir).unwrap(), vec![PoolingMode::Mean]);
        std::fs::write(dir.join("config.json"), r#"{"pooling_mode": ["weightedmean"]}"#).unwrap();
        assert_eq!(PoolingMode::from_pooling_config(&dir).unwrap(), vec![PoolingMode::WeightedMean]);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
