//! sentence-transformers' `CrossEncoder`: a `*ForSequenceClassification` checkpoint that scores
//! text pairs (a query and a passage, for reranking). [`CrossEncoder::predict`] tokenizes the
//! pairs (the longer text of a pair truncated first, to the tokenizer's `model_max_length` capped
//! by `max_position_embeddings`), runs the classifier ([`SequenceClassifier::logits`], without the
//! padding on the CPU) and applies the model's activation, found as sentence-transformers 6.2
//! finds it: `activation_fn` in `config_sentence_transformers.json` (a CrossEncoder's, as 6.x
//! saves it), else `sentence_transformers.activation_fn` in `config.json` (4.x and 5.x), else
//! `sbert_ce_default_activation_function` (older), else Sigmoid for one label and Identity for
//! several. One label gives scores `[n]`, several `[n, labels]`.

use std::path::Path;

use oxtorch_tensor::{DType, Tensor};
use serde_json::Value;

use crate::config::Config;
use crate::error::{Error, Result};
use crate::models::{AutoModel, SequenceClassifier};
use crate::tokenizer::HfTokenizer;
use crate::weights::Weights;

/// The function a cross-encoder applies to its logits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScoreActivation {
    /// the logits as they are (`torch.nn.Identity`)
    Identity,
    /// `torch.nn.Sigmoid`
    Sigmoid,
    /// `torch.nn.Tanh`
    Tanh,
}

impl ScoreActivation {
    /// The activation of a dotted torch class name (`torch.nn.modules.activation.Sigmoid`).
    fn from_class_name(name: &str, file: &Path) -> Result<Self> {
        match name.rsplit('.').next() {
            Some("Identity") if name.starts_with("torch.") => Ok(ScoreActivation::Identity),
            Some("Sigmoid") if name.starts_with("torch.") => Ok(ScoreActivation::Sigmoid),
            Some("Tanh") if name.starts_with("torch.") => Ok(ScoreActivation::Tanh),
            _ => Err(Error::Unsupported(format!(
                "{}: the activation {name:?} is not supported (supported: torch.nn Identity, Sigmoid, Tanh)",
                file.display()
            ))),
        }
    }

    fn apply(self, t: &Tensor) -> Result<Tensor> {
        Ok(match self {
            ScoreActivation::Identity => t.clone(),
            ScoreActivation::Sigmoid => t.sigmoid()?,
            ScoreActivation::Tanh => t.tanh()?,
        })
    }
}

/// A cross-encoder: a sequence classifier, its tokenizer and its activation (see the module docs).
#[derive(Debug, Clone)]
pub struct CrossEncoder {
    model: SequenceClassifier,
    tokenizer: HfTokenizer,
    activation: ScoreActivation,
}

impl CrossEncoder {
    /// Loads the cross-encoder in `dir` (floats read as `dtype` when given).
    pub fn load(dir: &Path, dtype: Option<DType>) -> Result<Self> {
        let cfg = Config::load(dir)?;
        let model = match AutoModel::load(&cfg, &Weights::load(dir, dtype)?)? {
            AutoModel::SequenceClassifier(m) => m,
            _ => {
                return Err(Error::Unsupported(format!(
                    "{}: a cross-encoder is a *ForSequenceClassification checkpoint, this one is {}",
                    dir.display(),
                    AutoModel::architecture_of(&cfg)?
                )))
            }
        };
        let tokenizer = HfTokenizer::load(dir, Some(max_length(dir, &cfg)?))?;
        let activation = activation(dir, &cfg, model.num_labels())?;
        Ok(CrossEncoder { model, tokenizer, activation })
    }

    /// The number of labels (scores per pair).
    pub fn num_labels(&self) -> usize {
        self.model.num_labels()
    }

    /// The activation applied to the logits.
    pub fn activation(&self) -> ScoreActivation {
        self.activation
    }

    /// The tokenizer.
    pub fn tokenizer(&self) -> &HfTokenizer {
        &self.tokenizer
    }

    /// The classifier's logits `[n, num_labels]` of `pairs` (float32).
    pub fn logits(&self, pairs: &[(&str, &str)]) -> Result<Tensor> {
        if pairs.is_empty() {
            return Ok(Tensor::zeros([0, self.num_labels()], DType::F32)?);
        }
        let batch = self.tokenizer.encode_pairs(pairs)?;
        let logits =
            self.model.logits(&batch.input_ids, &batch.attention_mask, Some(&batch.token_type_ids))?;
        Ok(logits.to_dtype(DType::F32)?)
    }

    /// The scores of `pairs`, as sentence-transformers' `predict`: the activation of the logits,
    /// `[n]` for one label, `[n, num_labels]` for several.
    pub fn predict(&self, pairs: &[(&str, &str)]) -> Result<Tensor> {
        let scores = self.activation.apply(&self.logits(pairs)?)?;
        Ok(if self.num_labels() == 1 { scores.squeeze_dims(1)? } else { scores })
    }
}

/// The tokenizer's `model_max_length` (when it is a real limit), capped by the model's
/// `max_position_embeddings`, as sentence-transformers sets it.
fn max_length(dir: &Path, cfg: &Config) -> Result<usize> {
    let positions = cfg.usize_or("max_position_embeddings", 512)?;
    let path = dir.join("tokenizer_config.json");
    let tokenizer_max = match std::fs::read_to_string(&path) {
        Ok(text) => {
            let json: Value = serde_json::from_str(&text).map_err(|e| Error::format(&path, e.to_string()))?;
            // Tokenizers without a limit store a huge number (`int(1e30)`).
            json.get("model_max_length").and_then(Value::as_u64).filter(|&n| n < 1 << 32).map(|n| n as usize)
        }
        Err(_) => None,
    };
    Ok(tokenizer_max.map_or(positions, |n| n.min(positions)))
}

/// The activation the folder names, or the default for `num_labels` (see the module docs).
fn activation(dir: &Path, cfg: &Config, num_labels: usize) -> Result<ScoreActivation> {
    let st_path = dir.join("config_sentence_transformers.json");
    if let Ok(text) = std::fs::read_to_string(&st_path) {
        let json: Value = serde_json::from_str(&text).map_err(|e| Error::format(&st_path, e.to_string()))?;
        let cross_encoder = json.get("model_type").and_then(Value::as_str) == Some("CrossEncoder");
        if let (true, Some(name)) = (cross_encoder, json.get("activation_fn").and_then(Value::as_str)) {
            return ScoreActivation::from_class_name(name, &st_path);
        }
    }
    let config_path = dir.join("config.json");
    let named = cfg
        .get("sentence_transformers")
        .and_then(|s| s.get("activation_fn"))
        .or_else(|| cfg.get("sbert_ce_default_activation_function"))
        .and_then(Value::as_str);
    match named {
        Some(name) => ScoreActivation::from_class_name(name, &config_path),
        None if num_labels == 1 => Ok(ScoreActivation::Sigmoid),
        None => Ok(ScoreActivation::Identity),
    }
}
