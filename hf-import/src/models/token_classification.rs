//! Per-token heads on the encoders: `*ForTokenClassification` (NER and tagging: `logits`
//! `[batch, seq, num_labels]`) and `*ForQuestionAnswering` (extractive QA: `start_logits` and
//! `end_logits` `[batch, seq]`) of BERT, RoBERTa, XLM-RoBERTa, DistilBERT, MPNet, ELECTRA, ALBERT, ModernBERT and DeBERTa-v2,
//! as transformers builds them (dropouts are the identity at inference): a linear layer
//! (`classifier`, or `qa_outputs` for QA) on every token's last hidden state, after ModernBERT's
//! `head` (dense, `classifier_activation`, norm) for ModernBERT, whose QA layer is `classifier`.

use oxtorch_tensor::Tensor;

use super::albert::load_albert;
use super::bert::{BertModel, BertOutput};
use super::classification::{num_labels, ClassifierEncoder};
use super::deberta_v2::DebertaV2Model;
use super::distilbert::DistilBertModel;
use super::electra::load_electra;
use super::modernbert::{ModernBertModel, PredictionHead};
use super::mpnet::MPNetModel;
use super::roberta::RobertaModel;
use crate::config::Config;
use crate::error::{Error, Result};
use crate::layers::Linear;
use crate::weights::Weights;

/// What the head predicts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TokenTask {
    /// a label per token (`*ForTokenClassification`)
    Tokens,
    /// where an answer starts and ends (`*ForQuestionAnswering`)
    Spans,
}

/// An encoder with a per-token head (see the module docs).
#[derive(Debug, Clone)]
pub struct TokenClassifier {
    /// the encoder
    pub encoder: ClassifierEncoder,
    /// ModernBERT's prediction head before the linear layer
    head: Option<PredictionHead>,
    linear: Linear,
    task: TokenTask,
    token_types: bool,
}

impl TokenClassifier {
    /// Loads `arch` (`{family}ForTokenClassification` or `{family}ForQuestionAnswering` for
    /// `family` one of `Bert`, `Roberta`, `XLMRoberta`, `Camembert`, `DistilBert`, `MPNet`,
    /// `Electra`, `Albert`, `ModernBert`, `Deberta`, `DebertaV2`).
    pub fn load(arch: &str, cfg: &Config, weights: &Weights) -> Result<Self> {
        let (family, task) = if let Some(f) = arch.strip_suffix("ForTokenClassification") {
            (f, TokenTask::Tokens)
        } else if let Some(f) = arch.strip_suffix("ForQuestionAnswering") {
            (f, TokenTask::Spans)
        } else {
            return Err(Error::Unsupported(format!("{arch} is not a per-token head")));
        };
        let labels = num_labels(cfg)?;
        if task == TokenTask::Spans && labels != 2 {
            return Err(Error::Config(format!("config.num_labels should be 2, but it is {labels}")));
        }
        let root = weights.vars("");
        let bert = |e: BertModel, token_types: bool| (ClassifierEncoder::Bert(e), None, token_types);
        let (encoder, head, token_types) = match family {
            "Bert" => bert(BertModel::load(cfg, weights)?, true),
            "Roberta" | "XLMRoberta" | "Camembert" => bert(RobertaModel::load(cfg, weights)?.0, true),
            "DistilBert" => bert(DistilBertModel::load(cfg, weights)?.0, false),
            "MPNet" => bert(MPNetModel::load(cfg, weights)?.0, false),
            "Electra" => bert(load_electra(cfg, weights)?, true),
            "Albert" => bert(load_albert(cfg, weights)?, true),
            "Deberta" | "DebertaV2" => {
                (ClassifierEncoder::DebertaV2(DebertaV2Model::load(cfg, weights)?), None, true)
            }
            "Gte" if task == TokenTask::Tokens => {
                let token_types = cfg.usize_or("type_vocab_size", 1)? > 0;
                (
                    ClassifierEncoder::Gte(super::nomic_bert::GteModel::load_gte(cfg, weights)?),
                    None,
                    token_types,
                )
            }
            "Esm" if task == TokenTask::Tokens => {
                (ClassifierEncoder::Esm(super::esm::EsmModel::load(cfg, weights)?), None, false)
            }
            "ModernBert" => (
                ClassifierEncoder::ModernBert(ModernBertModel::load(cfg, weights)?),
                Some(PredictionHead::load(cfg, &root.pp("head"))?),
                false,
            ),
            other => return Err(Error::Unsupported(format!("no per-token head for the {other} family"))),
        };
        let hidden = match &encoder {
            ClassifierEncoder::Bert(e) => e.config().hidden,
            ClassifierEncoder::ModernBert(_) => cfg.usize("hidden_size")?,
            ClassifierEncoder::DebertaV2(e) => e.config().hidden,
            ClassifierEncoder::Esm(_) | ClassifierEncoder::Gte(_) => cfg.usize_or("hidden_size", 768)?,
        };
        let name = match (task, family) {
            (TokenTask::Spans, f) if f != "ModernBert" => "qa_outputs",
            _ => "classifier",
        };
        let linear = Linear::load(&root.pp(name), hidden, labels, true)?;
        Ok(TokenClassifier { encoder, head, linear, task, token_types })
    }

    /// What the head predicts.
    pub fn task(&self) -> TokenTask {
        self.task
    }

    /// Whether the encoder reads `token_type_ids` (BERT's and RoBERTa's do).
    pub fn takes_token_types(&self) -> bool {
        self.token_types
    }

    /// The encoder's outputs (its pooler, where the checkpoint has one, is not run: these heads
    /// load the encoder without it).
    pub fn encode(
        &self,
        input_ids: &Tensor,
        attention_mask: Option<&Tensor>,
        token_type_ids: Option<&Tensor>,
        position_ids: Option<&Tensor>,
        output_hidden_states: bool,
    ) -> Result<BertOutput> {
        let types = if self.token_types { token_type_ids } else { None };
        let mut out =
            self.encoder.forward(input_ids, attention_mask, types, position_ids, output_hidden_states)?;
        out.pooler_output = None;
        Ok(out)
    }

    /// The head's outputs under transformers' names (`logits`, or `start_logits` and
    /// `end_logits`) and the encoder's outputs.
    pub fn forward(
        &self,
        input_ids: &Tensor,
        attention_mask: Option<&Tensor>,
        token_type_ids: Option<&Tensor>,
        position_ids: Option<&Tensor>,
        output_hidden_states: bool,
    ) -> Result<(Vec<(String, Tensor)>, BertOutput)> {
        let out =
            self.encode(input_ids, attention_mask, token_type_ids, position_ids, output_hidden_states)?;
        let h = match &self.head {
            Some(head) => head.forward(&out.last_hidden_state)?,
            None => out.last_hidden_state.clone(),
        };
        let logits = self.linear.forward(&h)?;
        let named = match self.task {
            TokenTask::Tokens => vec![("logits".to_string(), logits)],
            TokenTask::Spans => vec![
                ("start_logits".to_string(), logits.select(-1, 0)?.contiguous()?),
                ("end_logits".to_string(), logits.select(-1, 1)?.contiguous()?),
            ],
        };
        Ok((named, out))
    }
}
