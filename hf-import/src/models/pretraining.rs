//! The pre-training heads of BERT's family: `BertForPreTraining` (the masked-LM head
//! `cls.predictions` over every token and the next-sentence head `cls.seq_relationship` over the
//! pooled first token), `BertForNextSentencePrediction` (`cls.seq_relationship` alone) and ALBERT's
//! `AlbertForPreTraining` (`predictions` and the sentence-order head `sop_classifier.classifier`).
//! Megatron-BERT's and ERNIE's heads of the same names run as BERT's (`encoder_aliases.rs`).
//! Their outputs carry transformers' names: `prediction_logits` and `seq_relationship_logits`
//! (`sop_logits` for ALBERT), or `logits` for the next-sentence model.

use oxtorch_tensor::Tensor;

use super::albert::load_albert;
use super::bert::{BertModel, BertOutput, MlmHead};
use crate::config::Config;
use crate::error::{Error, Result};
use crate::layers::Linear;
use crate::weights::Weights;

/// Which of the pre-training models, by architecture name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// `BertForPreTraining`
    BertPreTraining,
    /// `BertForNextSentencePrediction`
    NextSentence,
    /// `AlbertForPreTraining`
    AlbertPreTraining,
}

/// transformers' `BertForPreTraining`, `BertForNextSentencePrediction` or `AlbertForPreTraining`:
/// an encoder with its pooler, an optional masked-LM head and a sentence-pair head on the pooled
/// output.
#[derive(Debug, Clone)]
pub struct PreTraining {
    /// the encoder (with its pooler)
    pub encoder: BertModel,
    /// the masked-LM head (absent for next-sentence prediction)
    mlm: Option<MlmHead>,
    /// the sentence-pair classifier over the pooled output: next sentence (2 classes) or sentence
    /// order (ALBERT's `num_labels`)
    pair: Linear,
    kind: Kind,
}

/// The architectures [`PreTraining::load`] builds (Megatron-BERT's and ERNIE's run as BERT's).
pub(super) const ARCHITECTURES: [&str; 3] =
    ["BertForPreTraining", "BertForNextSentencePrediction", "AlbertForPreTraining"];

impl PreTraining {
    /// Loads `arch` (one of [`ARCHITECTURES`]): BERT's `bert.*` and `cls.*`, ALBERT's `albert.*`,
    /// `predictions.*` and `sop_classifier.*`. The encoder's pooler must be in the checkpoint.
    pub fn load(arch: &str, cfg: &Config, weights: &Weights) -> Result<Self> {
        let kind = match arch {
            "BertForPreTraining" => Kind::BertPreTraining,
            "BertForNextSentencePrediction" => Kind::NextSentence,
            "AlbertForPreTraining" => Kind::AlbertPreTraining,
            other => {
                return Err(Error::Unsupported(format!(
                    "architecture \"{other}\" is not a pre-training model"
                )))
            }
        };
        let encoder = match kind {
            Kind::AlbertPreTraining => load_albert(cfg, weights)?,
            _ => BertModel::load(cfg, weights)?,
        };
        if !encoder.has_pooler() {
            let name = if kind == Kind::AlbertPreTraining {
                "albert.pooler.weight"
            } else {
                "bert.pooler.dense.weight"
            };
            return Err(Error::Weight(format!(
                "tensor '{name}' is missing from the checkpoint ({arch} reads the pooled first token)"
            )));
        }
        let hidden = encoder.config().hidden;
        let (mlm, pair) = match kind {
            Kind::BertPreTraining => (
                Some(MlmHead::load_bert(cfg, weights, &encoder)?),
                Linear::load(&weights.vars("cls.seq_relationship"), hidden, 2, true)?,
            ),
            Kind::NextSentence => {
                (None, Linear::load(&weights.vars("cls.seq_relationship"), hidden, 2, true)?)
            }
            Kind::AlbertPreTraining => {
                let labels = super::classification::num_labels(cfg)?;
                let sop = Linear::load(&weights.vars("sop_classifier.classifier"), hidden, labels, true)?;
                (Some(MlmHead::load_albert(cfg, weights, &encoder)?), sop)
            }
        };
        Ok(PreTraining { encoder, mlm, pair, kind })
    }

    /// The heads' outputs under transformers' names (`prediction_logits` `[batch, seq, vocab]`
    /// and `seq_relationship_logits` / `sop_logits` `[batch, labels]`, or the next-sentence
    /// model's `logits` `[batch, 2]`) and the encoder's outputs.
    pub fn forward(
        &self,
        input_ids: &Tensor,
        attention_mask: Option<&Tensor>,
        token_type_ids: Option<&Tensor>,
        position_ids: Option<&Tensor>,
        output_hidden_states: bool,
    ) -> Result<(Vec<(String, Tensor)>, BertOutput)> {
        let out = self.encoder.forward(
            input_ids,
            attention_mask,
            token_type_ids,
            position_ids,
            output_hidden_states,
        )?;
        let pooled = out.pooler_output.as_ref().expect("load checked the pooler");
        let pair = self.pair.forward(pooled)?;
        let mut named = Vec::new();
        if let Some(mlm) = &self.mlm {
            named.push(("prediction_logits".to_string(), mlm.forward(&out.last_hidden_state)?));
        }
        let pair_name = match self.kind {
            Kind::BertPreTraining => "seq_relationship_logits",
            Kind::NextSentence => "logits",
            Kind::AlbertPreTraining => "sop_logits",
        };
        named.push((pair_name.to_string(), pair));
        Ok((named, out))
    }
}
