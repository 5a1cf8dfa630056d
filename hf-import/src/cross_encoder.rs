//! sentence-transformers' `CrossEncoder`: a `*ForSequenceClassification` checkpoint that scores
//! text pairs (a query and a passage, for reranking). [`CrossEncoder::predict`] tokenizes the
//! pairs (the longer text of a pair truncated first, to the length the folder's
//! sentence-transformers config sets, else the tokenizer's `model_max_length` capped by
//! `max_position_embeddings`), runs the classifier ([`SequenceClassifier::logits`], without the
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
use crate::sentence::module_tokenizer;
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
        let architecture = AutoModel::architecture_of(&cfg)?;
        let not_a_classifier = || {
            Error::Unsupported(format!(
                "{}: a cross-encoder is a *ForSequenceClassification checkpoint, this one is {architecture}",
                dir.display()
            ))
        };
        if !architecture.ends_with("ForSequenceClassification") {
            return Err(not_a_classifier());
        }
        let AutoModel::SequenceClassifier(model) = AutoModel::load(&cfg, &Weights::load(dir, dtype)?)? else {
            return Err(not_a_classifier());
        };
        let tokenizer = module_tokenizer(dir, &cfg)?;
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
