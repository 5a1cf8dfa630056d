//! Sequence classification heads (`BertForSequenceClassification`,
//! `RobertaForSequenceClassification`, `XLMRobertaForSequenceClassification`,
//! `DistilBertForSequenceClassification`, `MPNetForSequenceClassification`,
//! `ElectraForSequenceClassification`, `AlbertForSequenceClassification`,
//! `ModernBertForSequenceClassification`): logits `[batch, num_labels]` through each family's head
//! as transformers builds it (its dropouts are the identity at inference):
//! - BERT and ALBERT: the pooler (`tanh(dense(h[:, 0]))`), then `classifier`;
//! - RoBERTa, XLM-RoBERTa and MPNet: `classifier.dense`, tanh, `classifier.out_proj` on `h[:, 0]`
//!   (their encoder has no pooler here);
//! - ELECTRA: `classifier.dense`, GELU, `classifier.out_proj` on `h[:, 0]` (RoBERTa's head with
//!   GELU for tanh);
//! - DistilBERT: `pre_classifier`, ReLU, `classifier` on `h[:, 0]`;
//! - ModernBERT: `head` (dense, `classifier_activation`, norm), then `classifier`, on `h[:, 0]` or,
//!   with `classifier_pooling: "mean"`, on the mean of `h` over the tokens `attention_mask` keeps;
//! - DeBERTa-v2/v3: `pooler.dense` and `pooler_hidden_act` (the `ContextPooler`), then
//!   `classifier`, on `h[:, 0]`.

use oxtorch_tensor::{DType, Device, Tensor};

use super::albert::load_albert;
use super::bert::{BertModel, BertOutput};
use super::deberta_v2::DebertaV2Model;
use super::distilbert::DistilBertModel;
use super::electra::load_electra;
use super::modernbert::{ModernBertModel, PredictionHead};
use super::mpnet::MPNetModel;
use super::roberta::RobertaModel;
use crate::config::Config;
use crate::error::{Error, Result};
use crate::layers::{Activation, Linear};
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
    /// RoBERTa / XLM-RoBERTa / MPNet: `out_proj(tanh(dense(h[:, 0])))`; ELECTRA's with GELU.
    Roberta { dense: Linear, out_proj: Linear, act: Activation },
    /// DistilBERT: `classifier(relu(pre_classifier(h[:, 0])))`.
    Distil { pre_classifier: Linear, classifier: Linear },
    /// ModernBERT: `classifier(head(pool(h)))`, pooling `h[:, 0]` (a multiple-choice model's: each
    /// row's first kept token, `first_kept`) or (`mean`) the kept tokens' mean.
    ModernBert { head: PredictionHead, classifier: Linear, mean: bool, first_kept: bool },
    /// ELECTRA's multiple-choice head: `classifier(act(summary(pool(h))))`, its
    /// `ElectraSequenceSummary` pooling the first or last token or the mean of every token, the
    /// projection and the activation optional.
    Summary { pool: SummaryPool, summary: Option<Linear>, act: Option<Activation>, classifier: Linear },
    /// DeBERTa: `classifier(act(pooler.dense(h[:, 0])))`.
    ContextPooler { dense: Linear, act: Activation, classifier: Linear },
}

/// What ELECTRA's `ElectraSequenceSummary` pools (`summary_type`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum SummaryPool {
    /// `h[:, 0]`
    First,
    /// `h[:, -1]`
    Last,
    /// the mean over every token, padding included
    Mean,
}

/// The encoder under a classification head.
#[derive(Debug, Clone)]
pub enum ClassifierEncoder {
    /// BERT, RoBERTa, XLM-RoBERTa, DistilBERT or MPNet (a [`BertModel`] with the family's
    /// embeddings and attention bias)
    Bert(BertModel),
    /// ModernBERT
    ModernBert(ModernBertModel),
    /// DeBERTa-v2/v3
    DebertaV2(DebertaV2Model),
    /// ESM
    Esm(super::esm::EsmModel),
    /// GTE (a NomicBERT-style rotary encoder)
    Gte(super::nomic_bert::GteModel),
}

impl ClassifierEncoder {
    /// The BERT-style encoder (`None` for ModernBERT).
    pub fn bert(&self) -> Option<&BertModel> {
        match self {
            ClassifierEncoder::Bert(e) => Some(e),
            _ => None,
        }
    }

    /// The ModernBERT encoder (`None` for the BERT-style ones).
    pub fn modernbert(&self) -> Option<&ModernBertModel> {
        match self {
            ClassifierEncoder::ModernBert(e) => Some(e),
            _ => None,
        }
    }

    /// The device of the weights.
    pub fn device(&self) -> Device {
        match self {
            ClassifierEncoder::Bert(e) => e.device(),
            ClassifierEncoder::ModernBert(e) => e.device(),
            ClassifierEncoder::DebertaV2(e) => e.device(),
            ClassifierEncoder::Esm(e) => e.device(),
            ClassifierEncoder::Gte(e) => e.device(),
        }
    }

    /// The encoder's forward (ModernBERT takes no `token_type_ids`).
    pub fn forward(
        &self,
        input_ids: &Tensor,
        attention_mask: Option<&Tensor>,
        token_type_ids: Option<&Tensor>,
        position_ids: Option<&Tensor>,
        output_hidden_states: bool,
    ) -> Result<BertOutput> {
        match self {
            ClassifierEncoder::Bert(e) => {
                e.forward(input_ids, attention_mask, token_type_ids, position_ids, output_hidden_states)
            }
            ClassifierEncoder::ModernBert(e) => {
                e.forward(input_ids, attention_mask, position_ids, output_hidden_states)
            }
            ClassifierEncoder::DebertaV2(e) => {
                e.forward(input_ids, attention_mask, token_type_ids, position_ids, output_hidden_states)
            }
            ClassifierEncoder::Esm(e) => {
                e.forward(input_ids, attention_mask, position_ids, output_hidden_states)
            }
            ClassifierEncoder::Gte(e) => {
                e.forward(input_ids, attention_mask, token_type_ids, position_ids, output_hidden_states)
            }
        }
    }
}

/// An encoder with a sequence classification head (see the module docs).
#[derive(Debug, Clone)]
pub struct SequenceClassifier {
    /// the encoder
    pub encoder: ClassifierEncoder,
    head: Head,
    /// whether the encoder takes `token_type_ids` (DistilBERT's, MPNet's and ModernBERT's do not)
    token_types: bool,
    /// a multiple-choice model (`BertForMultipleChoice`, ...): inputs `[batch, choices, seq]`, one
    /// score per choice (see [`super::multiple_choice`])
    pub(super) choices: bool,
}

/// transformers' `BertForSequenceClassification`.
pub type BertForSequenceClassification = SequenceClassifier;
/// transformers' `RobertaForSequenceClassification` (and `XLMRobertaForSequenceClassification`).
pub type RobertaForSequenceClassification = SequenceClassifier;
/// transformers' `DistilBertForSequenceClassification`.
pub type DistilBertForSequenceClassification = SequenceClassifier;
/// transformers' `MPNetForSequenceClassification`.
pub type MPNetForSequenceClassification = SequenceClassifier;
/// transformers' `ModernBertForSequenceClassification`.
pub type ModernBertForSequenceClassification = SequenceClassifier;

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
        Ok(Self::bert_style(encoder, Head::Pooled { classifier }, true))
    }

    /// Loads `RobertaForSequenceClassification` or `XLMRobertaForSequenceClassification`:
    /// `roberta.*` and `classifier.{dense,out_proj}.*`.
    pub fn load_roberta(cfg: &Config, weights: &Weights) -> Result<Self> {
        let encoder = RobertaModel::load(cfg, weights)?.0;
        let head = Self::roberta_head(cfg, weights, encoder.config().hidden)?;
        Ok(Self::bert_style(encoder, head, true))
    }

    /// Loads `AlbertForSequenceClassification`: `albert.*` (with its pooler) and `classifier.*`
    /// on the pooler's output, as BERT's.
    pub fn load_albert(cfg: &Config, weights: &Weights) -> Result<Self> {
        let encoder = load_albert(cfg, weights)?;
        if !encoder.has_pooler() {
            return Err(Error::Weight(
                "tensor 'albert.pooler.weight' is missing from the checkpoint (AlbertForSequenceClassification classifies the pooler's output)".into(),
            ));
        }
        let (hidden, labels) = (encoder.config().hidden, num_labels(cfg)?);
        let classifier = Linear::load(&weights.vars("classifier"), hidden, labels, true)?;
        Ok(Self::bert_style(encoder, Head::Pooled { classifier }, true))
    }

    /// Loads `ElectraForSequenceClassification`: `electra.*` and `classifier.{dense,out_proj}.*`
    /// (RoBERTa's head, with GELU).
    pub fn load_electra(cfg: &Config, weights: &Weights) -> Result<Self> {
        let encoder = load_electra(cfg, weights)?;
        let Head::Roberta { dense, out_proj, .. } =
            Self::roberta_head(cfg, weights, encoder.config().hidden)?
        else {
            unreachable!("roberta_head builds a RoBERTa head")
        };
        Ok(Self::bert_style(encoder, Head::Roberta { dense, out_proj, act: Activation::Gelu }, true))
    }

    /// Loads `EsmForSequenceClassification`: `esm.*` and `classifier.{dense,out_proj}.*` (RoBERTa's
    /// head on the first token; ESM takes no token types).
    pub fn load_esm(cfg: &Config, weights: &Weights) -> Result<Self> {
        let encoder = super::esm::EsmModel::load(cfg, weights)?;
        let head = Self::roberta_head(cfg, weights, cfg.usize_or("hidden_size", 768)?)?;
        Ok(SequenceClassifier {
            encoder: ClassifierEncoder::Esm(encoder),
            head,
            token_types: false,
            choices: false,
        })
    }

    /// Loads `GteForSequenceClassification` (the gte-multilingual reranker): `gte.*` (or the hub's
    /// `new.*`) and `classifier` on the pooler's output, `tanh(gte.pooler.dense(h[:, 0]))`.
    pub fn load_gte(cfg: &Config, weights: &Weights) -> Result<Self> {
        let encoder = super::nomic_bert::GteModel::load_gte(cfg, weights)?;
        let hidden = cfg.usize_or("hidden_size", 768)?;
        let prefix =
            ["gte.", "new."].into_iter().find(|p| weights.contains(&format!("{p}pooler.dense.weight")));
        let pooler = weights.vars(prefix.unwrap_or("gte.").trim_end_matches('.')).pp("pooler");
        let head = Head::Roberta {
            dense: Linear::load(&pooler.pp("dense"), hidden, hidden, true)?,
            out_proj: Linear::load(&weights.vars("classifier"), hidden, num_labels(cfg)?, true)?,
            act: Activation::Tanh,
        };
        let token_types = cfg.usize_or("type_vocab_size", 1)? > 0;
        Ok(SequenceClassifier { encoder: ClassifierEncoder::Gte(encoder), head, token_types, choices: false })
    }

    /// Loads `MPNetForSequenceClassification`: `mpnet.*` and `classifier.{dense,out_proj}.*`
    /// (RoBERTa's head; MPNet takes no token types).
    pub fn load_mpnet(cfg: &Config, weights: &Weights) -> Result<Self> {
        let encoder = MPNetModel::load(cfg, weights)?.0;
        let head = Self::roberta_head(cfg, weights, encoder.config().hidden)?;
        Ok(Self::bert_style(encoder, head, false))
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
        Ok(Self::bert_style(encoder, head, false))
    }

    /// Loads `ModernBertForSequenceClassification`: `model.*`, `head.{dense,norm}.*` and
    /// `classifier.*`, pooling as `classifier_pooling` says (`"cls"`, the default, or `"mean"`).
    pub fn load_modernbert(cfg: &Config, weights: &Weights) -> Result<Self> {
        let encoder = ModernBertModel::load(cfg, weights)?;
        let mean = match cfg.str_or("classifier_pooling", "cls")? {
            "cls" => false,
            "mean" => true,
            other => {
                return Err(Error::Config(format!(
                    "classifier_pooling must be \"cls\" or \"mean\", got {other:?}"
                )))
            }
        };
        let (hidden, labels) = (cfg.usize("hidden_size")?, num_labels(cfg)?);
        let root = weights.vars("");
        let head = Head::ModernBert {
            head: PredictionHead::load(cfg, &root.pp("head"))?,
            classifier: Linear::load(&root.pp("classifier"), hidden, labels, true)?,
            mean,
            first_kept: false,
        };
        Ok(SequenceClassifier {
            encoder: ClassifierEncoder::ModernBert(encoder),
            head,
            token_types: false,
            choices: false,
        })
    }

    /// Loads `DebertaV2ForSequenceClassification` (or v1's `DebertaForSequenceClassification`):
    /// `deberta.*`, the `ContextPooler`'s
    /// `pooler.dense` (`pooler_hidden_act` after it) and `classifier.*` on `h[:, 0]`.
    pub fn load_deberta_v2(cfg: &Config, weights: &Weights) -> Result<Self> {
        let encoder = DebertaV2Model::load(cfg, weights)?;
        let c = encoder.config();
        if c.pooler_hidden != c.hidden {
            return Err(Error::Unsupported(format!(
                "pooler_hidden_size ({}) differs from hidden_size ({}): the pooler reads the first token's hidden state",
                c.pooler_hidden, c.hidden
            )));
        }
        let head = Head::ContextPooler {
            dense: Linear::load(&weights.vars("pooler").pp("dense"), c.hidden, c.hidden, true)?,
            act: c.pooler_act,
            classifier: Linear::load(&weights.vars("classifier"), c.hidden, num_labels(cfg)?, true)?,
        };
        Ok(SequenceClassifier {
            encoder: ClassifierEncoder::DebertaV2(encoder),
            head,
            token_types: true,
            choices: false,
        })
    }

    /// Loads `ElectraForMultipleChoice`: `electra.*`, `sequence_summary.summary.*` (the
    /// `ElectraSequenceSummary` of `summary_type`, `summary_use_proj` and `summary_activation`, as
    /// `ElectraConfig` defaults them) and a one-output `classifier.*`.
    pub(super) fn load_electra_choices(cfg: &Config, weights: &Weights) -> Result<Self> {
        let encoder = load_electra(cfg, weights)?;
        let hidden = encoder.config().hidden;
        let pool = match cfg.str_or("summary_type", "first")? {
            "first" => SummaryPool::First,
            "last" => SummaryPool::Last,
            "mean" => SummaryPool::Mean,
            other => {
                return Err(Error::Unsupported(format!(
                    "summary_type {other:?} is not supported (\"first\", \"last\" or \"mean\")"
                )))
            }
        };
        let summary = if cfg.bool_or("summary_use_proj", true)? {
            let to_labels = cfg.bool_or("summary_proj_to_labels", false)? && num_labels(cfg)? > 0;
            let width = if to_labels { num_labels(cfg)? } else { hidden };
            if width != hidden {
                return Err(Error::Config(format!(
                    "summary_proj_to_labels projects the summary to num_labels ({width}), but the classifier reads hidden_size ({hidden}) features"
                )));
            }
            Some(Linear::load(&weights.vars("sequence_summary").pp("summary"), hidden, hidden, true)?)
        } else {
            None
        };
        let act = match cfg.get("summary_activation") {
            None => Some(Activation::from_name("gelu")?),
            Some(serde_json::Value::Null) => None,
            Some(serde_json::Value::String(name)) if name.is_empty() => None,
            Some(serde_json::Value::String(name)) => Some(Activation::from_name(name)?),
            Some(other) => {
                return Err(Error::Config(format!(
                    "summary_activation must be a string or null, got {other}"
                )))
            }
        };
        let classifier = Linear::load(&weights.vars("classifier"), hidden, 1, true)?;
        Ok(Self::bert_style(encoder, Head::Summary { pool, summary, act, classifier }, true))
    }

    /// Makes a ModernBERT head's `"cls"` pooling read each row's first kept token rather than its
    /// first token (`ModernBertForMultipleChoice`'s, for left or right padding).
    pub(super) fn pool_first_kept_token(&mut self) {
        if let Head::ModernBert { mean: false, first_kept, .. } = &mut self.head {
            *first_kept = true;
        }
    }

    fn bert_style(encoder: BertModel, head: Head, token_types: bool) -> Self {
        SequenceClassifier { encoder: ClassifierEncoder::Bert(encoder), head, token_types, choices: false }
    }

    /// `classifier.*` (`labels` outputs) on the pooler's output of `encoder`, which must have one
    /// (`pooler` names its weight in the error).
    pub(super) fn on_pooler(
        encoder: BertModel,
        weights: &Weights,
        labels: usize,
        token_types: bool,
        pooler: &str,
    ) -> Result<Self> {
        if !encoder.has_pooler() {
            return Err(Error::Weight(format!(
                "tensor '{pooler}' is missing from the checkpoint (the classifier reads the pooler's output)"
            )));
        }
        let classifier = Linear::load(&weights.vars("classifier"), encoder.config().hidden, labels, true)?;
        Ok(Self::bert_style(encoder, Head::Pooled { classifier }, token_types))
    }

    /// RoBERTa's `classifier.dense` and `classifier.out_proj`.
    fn roberta_head(cfg: &Config, weights: &Weights, hidden: usize) -> Result<Head> {
        let head = weights.vars("classifier");
        Ok(Head::Roberta {
            dense: Linear::load(&head.pp("dense"), hidden, hidden, true)?,
            out_proj: Linear::load(&head.pp("out_proj"), hidden, num_labels(cfg)?, true)?,
            act: Activation::Tanh,
        })
    }

    /// Whether the encoder reads `token_type_ids` (DistilBERT's, MPNet's and ModernBERT's have none).
    pub fn takes_token_types(&self) -> bool {
        self.token_types
    }

    /// Whether this is a multiple-choice model (inputs `[batch, num_choices, seq]`).
    pub fn is_multiple_choice(&self) -> bool {
        self.choices
    }

    /// The number of labels (the logits' last dim).
    pub fn num_labels(&self) -> usize {
        match &self.head {
            Head::Pooled { classifier }
            | Head::Distil { classifier, .. }
            | Head::ModernBert { classifier, .. }
            | Head::ContextPooler { classifier, .. }
            | Head::Summary { classifier, .. } => classifier.weight.dims()[0],
            Head::Roberta { out_proj, .. } => out_proj.weight.dims()[0],
        }
    }

    /// The encoder's outputs alone: `token_type_ids` are ignored by encoders without them.
    pub fn encode(
        &self,
        input_ids: &Tensor,
        attention_mask: Option<&Tensor>,
        token_type_ids: Option<&Tensor>,
        position_ids: Option<&Tensor>,
        output_hidden_states: bool,
    ) -> Result<BertOutput> {
        let types = if self.token_types { token_type_ids } else { None };
        self.encoder.forward(input_ids, attention_mask, types, position_ids, output_hidden_states)
    }

    /// Logits `[batch, num_labels]` and the encoder's outputs. `token_type_ids` are ignored by
    /// encoders without them.
    pub fn forward(
        &self,
        input_ids: &Tensor,
        attention_mask: Option<&Tensor>,
        token_type_ids: Option<&Tensor>,
        position_ids: Option<&Tensor>,
        output_hidden_states: bool,
    ) -> Result<(Tensor, BertOutput)> {
        if self.choices {
            return super::multiple_choice::forward(
                self,
                input_ids,
                attention_mask,
                token_type_ids,
                position_ids,
                output_hidden_states,
            );
        }
        let out =
            self.encode(input_ids, attention_mask, token_type_ids, position_ids, output_hidden_states)?;
        let logits = self.logits_of(&out.last_hidden_state, out.pooler_output.as_ref(), attention_mask)?;
        Ok((logits, out))
    }

    /// The logits `[batch, num_labels]` alone, of token ids `[batch, seq]` under `attention_mask`.
    /// On the CPU the encoder skips the padding ([`BertModel::last_hidden_state_packed`],
    /// [`ModernBertModel::last_hidden_state_packed`]) when the head reads only kept tokens: a
    /// mean over them, or the first token when every row keeps it (right padding, as BERT-style
    /// tokenizers pad), which never attends to padding; the logits are then
    /// [`SequenceClassifier::forward`]'s.
    pub fn logits(
        &self,
        input_ids: &Tensor,
        attention_mask: &Tensor,
        token_type_ids: Option<&Tensor>,
    ) -> Result<Tensor> {
        let types = if self.token_types { token_type_ids } else { None };
        let packs = !matches!(
            self.encoder,
            ClassifierEncoder::DebertaV2(_) | ClassifierEncoder::Esm(_) | ClassifierEncoder::Gte(_)
        ) && !self.choices;
        if self.encoder.device() == Device::Cpu && packs {
            let ids = super::ids_as_i64("input_ids", input_ids)?;
            super::check_input_dtype("attention_mask", attention_mask)?;
            if let Some(types) = types {
                super::check_input_dtype("token_type_ids", types)?;
            }
            let mean = matches!(self.head, Head::ModernBert { mean: true, .. });
            let first_kept = match attention_mask.dims() {
                [b, s] if *b > 0 && *s > 0 => {
                    let first = attention_mask.narrow(1, 0, 1)?.ne(0)?.to_dtype(DType::I64)?;
                    first.to_vec::<i64>()?.iter().all(|&k| k != 0)
                }
                _ => false,
            };
            if first_kept || (mean && attention_mask.dims().len() == 2) {
                let h = match &self.encoder {
                    ClassifierEncoder::Bert(e) => e.last_hidden_state_packed(&ids, attention_mask, types)?,
                    ClassifierEncoder::ModernBert(e) => e.last_hidden_state_packed(&ids, attention_mask)?,
                    ClassifierEncoder::DebertaV2(_)
                    | ClassifierEncoder::Esm(_)
                    | ClassifierEncoder::Gte(_) => {
                        unreachable!("DeBERTa, ESM and GTE are not packed")
                    }
                };
                return self.logits_of(&h, None, Some(attention_mask));
            }
        }
        Ok(self.forward(input_ids, Some(attention_mask), types, None, false)?.0)
    }

    /// The head on a last hidden state `[batch, seq, hidden]` (and BERT's pooler output, when
    /// already computed; the mask for mean pooling): logits `[batch, num_labels]`.
    pub(super) fn logits_of(
        &self,
        last_hidden_state: &Tensor,
        pooled: Option<&Tensor>,
        attention_mask: Option<&Tensor>,
    ) -> Result<Tensor> {
        let first = || last_hidden_state.select(1, 0);
        Ok(match &self.head {
            Head::Pooled { classifier } => match (pooled, self.encoder.bert()) {
                (Some(p), _) => classifier.forward(p)?,
                (None, Some(bert)) => {
                    let p = bert.pooler_output(last_hidden_state)?.ok_or_else(|| {
                        Error::Weight("this BERT classifier's encoder has no pooler to classify".into())
                    })?;
                    classifier.forward(&p)?
                }
                (None, None) => unreachable!("a pooled head sits on a BERT encoder"),
            },
            Head::Roberta { dense, out_proj, act } => {
                out_proj.forward(&act.forward(&dense.forward(&first()?)?)?)?
            }
            Head::Distil { pre_classifier, classifier } => {
                classifier.forward(&pre_classifier.forward(&first()?)?.relu()?)?
            }
            Head::ModernBert { head, classifier, mean, first_kept } => {
                let pooled = match (mean, first_kept, attention_mask) {
                    (true, _, _) => mean_over_kept(last_hidden_state, attention_mask)?,
                    (false, true, Some(mask)) => first_kept_token(last_hidden_state, mask)?,
                    (false, _, _) => first()?,
                };
                classifier.forward(&head.forward(&pooled)?)?
            }
            Head::Summary { pool, summary, act, classifier } => {
                let mut x = match pool {
                    SummaryPool::First => first()?,
                    SummaryPool::Last => last_hidden_state.select(1, -1)?,
                    SummaryPool::Mean => last_hidden_state.mean(1, false)?,
                };
                if let Some(summary) = summary {
                    x = summary.forward(&x)?;
                }
                if let Some(act) = act {
                    x = act.forward(&x)?;
                }
                classifier.forward(&x)?
            }
            Head::ContextPooler { dense, act, classifier } => {
                classifier.forward(&act.forward(&dense.forward(&first()?)?)?)?
            }
        })
    }
}

/// Each row's first kept token `[batch, hidden]` (the first column where `mask` `[batch, seq]` is
/// the largest, as `argmax` finds it: the first token of a row that keeps none), as
/// `ModernBertForMultipleChoice` pools for left or right padding.
fn first_kept_token(h: &Tensor, mask: &Tensor) -> Result<Tensor> {
    let (n, hidden) = (h.dims()[0], h.dims()[2]);
    let at = mask.to(h.device())?.to_dtype(DType::F32)?.argmax(Some(-1), false)?;
    let index = at.reshape([n, 1, 1])?.expand([n, 1, hidden])?;
    Ok(h.gather(1, &index)?.reshape([n, hidden])?)
}

/// transformers' ModernBERT mean pooling: `(h * mask[..., None]).sum(1) / mask.sum(1, keepdim)`,
/// the count rounded to `h`'s dtype as torch promotes it (a row that keeps no token gives NaN, as
/// there); every token without a mask.
fn mean_over_kept(h: &Tensor, attention_mask: Option<&Tensor>) -> Result<Tensor> {
    let Some(mask) = attention_mask else {
        return Ok(h.mean(1, false)?);
    };
    let mask = mask.to(h.device())?;
    let kept = mask.to_dtype(h.dtype())?.unsqueeze(-1)?;
    let count = mask.to_dtype(DType::F32)?.sum(1, true)?.to_dtype(h.dtype())?;
    Ok(h.mul(&kept)?.sum(1, false)?.div(&count)?)
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
