//! Sequence classification heads on the BERT-style encoders (`BertForSequenceClassification`,
//! `RobertaForSequenceClassification`, `XLMRobertaForSequenceClassification`,
//! `DistilBertForSequenceClassification`): logits `[batch, num_labels]` from the first token,
//! through each family's head as transformers builds it (its dropouts are the identity at
//! inference):
//! - BERT: the pooler (`tanh(dense(h[:, 0]))`), then `classifier`;
//! - RoBERTa and XLM-RoBERTa: `classifier.dense`, tanh, `classifier.out_proj` on `h[:, 0]` (their
//!   encoder has no pooler here);
//! - DistilBERT: `pre_classifier`, ReLU, `classifier` on `h[:, 0]`.

use oxtorch_tensor::{DType, Device, Tensor};

use super::bert::{BertModel, BertOutput};
use super::distilbert::DistilBertModel;
use super::roberta::RobertaModel;
use crate::config::Config;
use crate::error::{Error, Result};
use crate::layers::Linear;
use crate::weights::Weights;

/// The number of labels a config declares, as transformers' `PretrainedConfig` reads it:
/// `num_labels` when given (it wins over a disagreeing `id2label`, which transformers then
/// replaces), else the size of `id2label`, else 2.
pub fn num_labels(cfg: &Config) -> Result<usize> {
    if let Some(n) = cfg.nullable_usize_or("num_labels", None)? {
        return Ok(n);
    }
    Ok(id2label(cfg)?.map_or(2, |labels| labels.len()))
}

/// `id2label` when the config has a non-empty one.
fn id2label(cfg: &Config) -> Result<Option<&serde_json::Map<String, serde_json::Value>>> {
    match cfg.get("id2label") {
        Some(serde_json::Value::Object(labels)) if !labels.is_empty() => Ok(Some(labels)),
        Some(serde_json::Value::Object(_)) | Some(serde_json::Value::Null) | None => Ok(None),
        Some(other) => Err(Error::Config(format!("id2label must be an object of label names, got {other}"))),
    }
}

/// The label names by id: `id2label`'s, or `LABEL_0`, `LABEL_1`, ... where the config names none
/// or `num_labels` disagrees with it (as transformers does).
pub fn label_names(cfg: &Config) -> Result<Vec<String>> {
    let n = num_labels(cfg)?;
    let named = id2label(cfg)?.filter(|labels| labels.len() == n);
    (0..n)
        .map(|i| match named.map(|labels| labels.get(&i.to_string())) {
            None => Ok(format!("LABEL_{i}")),
            Some(Some(serde_json::Value::String(name))) => Ok(name.clone()),
            Some(Some(other)) => {
                Err(Error::Config(format!("id2label[\"{i}\"] must be a string, got {other}")))
            }
            Some(None) => {
                Err(Error::Config(format!("id2label has no label for id {i} (ids must be 0..{n})")))
            }
        })
        .collect()
}

/// The classification head on top of the encoder.
#[derive(Debug, Clone)]
enum Head {
    /// BERT: `classifier` on the pooler's output.
    Pooled { classifier: Linear },
    /// RoBERTa / XLM-RoBERTa: `out_proj(tanh(dense(h[:, 0])))`.
    Roberta { dense: Linear, out_proj: Linear },
    /// DistilBERT: `classifier(relu(pre_classifier(h[:, 0])))`.
    Distil { pre_classifier: Linear, classifier: Linear },
}

/// A BERT-style encoder with a sequence classification head (see the module docs).
#[derive(Debug, Clone)]
pub struct SequenceClassifier {
    /// the encoder
    pub encoder: BertModel,
    head: Head,
    /// whether the encoder takes `token_type_ids` (DistilBERT's does not)
    token_types: bool,
}

/// transformers' `BertForSequenceClassification`.
pub type BertForSequenceClassification = SequenceClassifier;
/// transformers' `RobertaForSequenceClassification` (and `XLMRobertaForSequenceClassification`).
pub type RobertaForSequenceClassification = SequenceClassifier;
/// transformers' `DistilBertForSequenceClassification`.
pub type DistilBertForSequenceClassification = SequenceClassifier;

impl SequenceClassifier {
    /// Loads `BertForSequenceClassification`: `bert.*` (with its pooler) and `classifier.*`.
    pub fn load_bert(cfg: &Config, weights: &Weights) -> Result<Self> {
        let encoder = BertModel::load(cfg, weights)?;
        if !encoder.has_pooler() {
            return Err(Error::Weight(
                "tensor 'bert.pooler.dense.weight' is missing from the checkpoint (BertForSequenceClassification classifies the pooler's output)".into(),
            ));
        }
        let (hidden, labels) = (encoder.config().hidden, num_labels(cfg)?);
        let classifier = Linear::load(&weights.vars("classifier"), hidden, labels, true)?;
        Ok(SequenceClassifier { encoder, head: Head::Pooled { classifier }, token_types: true })
    }

    /// Loads `RobertaForSequenceClassification` or `XLMRobertaForSequenceClassification`:
    /// `roberta.*` and `classifier.{dense,out_proj}.*`.
    pub fn load_roberta(cfg: &Config, weights: &Weights) -> Result<Self> {
        let encoder = RobertaModel::load(cfg, weights)?.0;
        let (hidden, labels) = (encoder.config().hidden, num_labels(cfg)?);
        let head = weights.vars("classifier");
        let head = Head::Roberta {
            dense: Linear::load(&head.pp("dense"), hidden, hidden, true)?,
            out_proj: Linear::load(&head.pp("out_proj"), hidden, labels, true)?,
        };
        Ok(SequenceClassifier { encoder, head, token_types: true })
    }

    /// Loads `DistilBertForSequenceClassification`: `distilbert.*`, `pre_classifier.*` and
    /// `classifier.*`.
    pub fn load_distilbert(cfg: &Config, weights: &Weights) -> Result<Self> {
        let encoder = DistilBertModel::load(cfg, weights)?.0;
        let (hidden, labels) = (encoder.config().hidden, num_labels(cfg)?);
        let head = Head::Distil {
            pre_classifier: Linear::load(&weights.vars("pre_classifier"), hidden, hidden, true)?,
            classifier: Linear::load(&weights.vars("classifier"), hidden, labels, true)?,
        };
        Ok(SequenceClassifier { encoder, head, token_types: false })
    }

    /// Whether the encoder reads `token_type_ids` (DistilBERT's has none).
    pub fn takes_token_types(&self) -> bool {
        self.token_types
    }

    /// The number of labels (the logits' last dim).
    pub fn num_labels(&self) -> usize {
        match &self.head {
            Head::Pooled { classifier } | Head::Distil { classifier, .. } => classifier.weight.dims()[0],
            Head::Roberta { out_proj, .. } => out_proj.weight.dims()[0],
        }
    }

    /// Logits `[batch, num_labels]` and the encoder's outputs. `token_type_ids` are ignored by
    /// DistilBERT, which has none.
    pub fn forward(
        &self,
        input_ids: &Tensor,
        attention_mask: Option<&Tensor>,
        token_type_ids: Option<&Tensor>,
        position_ids: Option<&Tensor>,
        output_hidden_states: bool,
    ) -> Result<(Tensor, BertOutput)> {
        let types = if self.token_types { token_type_ids } else { None };
        let out =
            self.encoder.forward(input_ids, attention_mask, types, position_ids, output_hidden_states)?;
        let logits = self.logits_of(&out.last_hidden_state, out.pooler_output.as_ref())?;
        Ok((logits, out))
    }

    /// The logits `[batch, num_labels]` alone, of token ids `[batch, seq]` under `attention_mask`.
    /// On the CPU, when every row's first token is kept (right padding, as BERT-style tokenizers
    /// pad), the encoder skips the padding ([`BertModel::last_hidden_state_packed`]): the head
    /// reads the first token only, which never attends to padding, so the logits are
    /// [`SequenceClassifier::forward`]'s.
    pub fn logits(
        &self,
        input_ids: &Tensor,
        attention_mask: &Tensor,
        token_type_ids: Option<&Tensor>,
    ) -> Result<Tensor> {
        let types = if self.token_types { token_type_ids } else { None };
        if self.encoder.device() == Device::Cpu {
            let ids = super::ids_as_i64("input_ids", input_ids)?;
            super::check_input_dtype("attention_mask", attention_mask)?;
            if let Some(types) = types {
                super::check_input_dtype("token_type_ids", types)?;
            }
            let first_kept = match attention_mask.dims() {
                [b, s] if *b > 0 && *s > 0 => {
                    let first = attention_mask.narrow(1, 0, 1)?.ne(0)?.to_dtype(DType::I64)?;
                    first.to_vec::<i64>()?.iter().all(|&k| k != 0)
                }
                _ => false,
            };
            if first_kept {
                let h = self.encoder.last_hidden_state_packed(&ids, attention_mask, types)?;
                return self.logits_of(&h, None);
            }
        }
        Ok(self.forward(input_ids, Some(attention_mask), types, None, false)?.0)
    }

    /// The head on a last hidden state `[batch, seq, hidden]` (and BERT's pooler output, when
    /// already computed): logits `[batch, num_labels]`.
    fn logits_of(&self, last_hidden_state: &Tensor, pooled: Option<&Tensor>) -> Result<Tensor> {
        let first = || last_hidden_state.select(1, 0);
        Ok(match &self.head {
            Head::Pooled { classifier } => match pooled {
                Some(p) => classifier.forward(p)?,
                None => {
                    let p = self.encoder.pooler_output(last_hidden_state)?.ok_or_else(|| {
                        Error::Weight("this BERT classifier's encoder has no pooler to classify".into())
                    })?;
                    classifier.forward(&p)?
                }
            },
            Head::Roberta { dense, out_proj } => out_proj.forward(&dense.forward(&first()?)?.tanh()?)?,
            Head::Distil { pre_classifier, classifier } => {
                classifier.forward(&pre_classifier.forward(&first()?)?.relu()?)?
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels(json: &str) -> (usize, Vec<String>) {
        let cfg = Config::from_json_str(json).unwrap();
        (num_labels(&cfg).unwrap(), label_names(&cfg).unwrap())
    }

    /// transformers 5.24's `PretrainedConfig`: `num_labels` wins over a disagreeing `id2label`
    /// (whose names are then `LABEL_i`), `id2label` alone gives the count, neither gives 2.
    #[test]
    fn labels_as_transformers_reads_them() {
        assert_eq!(labels("{}"), (2, vec!["LABEL_0".into(), "LABEL_1".into()]));
        assert_eq!(labels(r#"{"id2label": {"0": "neg", "1": "pos", "2": "mid"}}"#).1, ["neg", "pos", "mid"]);
        assert_eq!(labels(r#"{"num_labels": 1, "id2label": null}"#), (1, vec!["LABEL_0".into()]));
        let disagree = labels(r#"{"num_labels": 3, "id2label": {"0": "a", "1": "b"}}"#);
        assert_eq!(disagree, (3, vec!["LABEL_0".into(), "LABEL_1".into(), "LABEL_2".into()]));
        let cfg = Config::from_json_str(r#"{"id2label": {"0": "a", "2": "c"}}"#).unwrap();
        assert!(label_names(&cfg).unwrap_err().to_string().contains("no label for id 1"));
        let cfg = Config::from_json_str(r#"{"id2label": ["a", "b"]}"#).unwrap();
        assert!(num_labels(&cfg).unwrap_err().to_string().contains("id2label must be an object"));
    }
}
