//! Multiple-choice heads (`BertForMultipleChoice`, `RobertaForMultipleChoice`,
//! `XLMRobertaForMultipleChoice`, `CamembertForMultipleChoice`, `AlbertForMultipleChoice`,
//! `DistilBertForMultipleChoice`, `MPNetForMultipleChoice`, `DebertaV2ForMultipleChoice`,
//! `ElectraForMultipleChoice`, `ModernBertForMultipleChoice`), as
//! transformers builds them: inputs `[batch, num_choices, seq]`, every choice encoded as a
//! sequence of its own (the inputs viewed as `[batch * num_choices, seq]`), a one-output
//! classifier scoring each, and the scores viewed as logits `[batch, num_choices]`. The heads are
//! the sequence classifiers' with one output, except that RoBERTa's and MPNet's score the
//! pooler's output (their sequence classifiers use a head of their own), ELECTRA's its
//! `ElectraSequenceSummary`, and ModernBERT's `"cls"` pooling reads each row's first kept token.

use std::collections::BTreeMap;

use oxtorch_tensor::Tensor;

use super::albert::load_albert;
use super::bert::{BertModel, BertOutput};
use super::classification::SequenceClassifier;
use super::mpnet::MPNetModel;
use super::roberta::RobertaModel;
use crate::config::Config;
use crate::error::{Error, Result};
use crate::weights::Weights;

/// Loads the multiple-choice architecture `arch` (one of the module's list): its
/// encoder under the family's prefix and a `classifier` with one output, whatever `num_labels`
/// the config declares (as transformers does).
pub fn load(arch: &str, cfg: &Config, weights: &Weights) -> Result<SequenceClassifier> {
    let mut json = cfg.json().clone();
    json.insert("num_labels".into(), 1.into());
    json.remove("id2label");
    let one = &Config::from_map(json);
    let pooled = |encoder: BertModel, token_types: bool, pooler: &str| {
        SequenceClassifier::on_pooler(encoder, weights, 1, token_types, pooler)
    };
    let mut model = match arch {
        "BertForMultipleChoice" => pooled(BertModel::load(cfg, weights)?, true, "bert.pooler.dense.weight")?,
        "AlbertForMultipleChoice" => pooled(load_albert(cfg, weights)?, true, "albert.pooler.weight")?,
        "RobertaForMultipleChoice" | "XLMRobertaForMultipleChoice" | "CamembertForMultipleChoice" => {
            pooled(RobertaModel::load(cfg, weights)?.0, true, "roberta.pooler.dense.weight")?
        }
        "MPNetForMultipleChoice" => {
            pooled(MPNetModel::load(cfg, weights)?.0, false, "mpnet.pooler.dense.weight")?
        }
        "DistilBertForMultipleChoice" => SequenceClassifier::load_distilbert(one, weights)?,
        "DebertaV2ForMultipleChoice" => SequenceClassifier::load_deberta_v2(one, weights)?,
        "ElectraForMultipleChoice" => SequenceClassifier::load_electra_choices(cfg, weights)?,
        "ModernBertForMultipleChoice" => {
            let mut model = SequenceClassifier::load_modernbert(one, weights)?;
            model.pool_first_kept_token();
            model
        }
        other => return Err(Error::Unsupported(format!("{other} is not a multiple-choice architecture"))),
    };
    model.choices = true;
    Ok(model)
}

/// Checks named inputs' shapes: `input_ids` `[batch, num_choices, seq]` with `seq` > 0, every other
/// input the same shape (the error names the input).
pub(super) fn check_input_shapes(inputs: &BTreeMap<String, Tensor>) -> Result<()> {
    let Some(ids) = inputs.get("input_ids") else { return Ok(()) };
    if !matches!(ids.dims(), &[_, _, s] if s > 0) {
        return Err(Error::Input(format!(
            "input 'input_ids' must be [batch, num_choices, seq] with seq > 0 for a multiple-choice model, got {:?}",
            ids.dims()
        )));
    }
    for (name, t) in inputs {
        if t.dims() != ids.dims() {
            return Err(Error::Input(format!(
                "input '{name}' has shape {:?}, which does not fit input_ids of shape {:?}",
                t.dims(),
                ids.dims()
            )));
        }
    }
    Ok(())
}

/// The multiple-choice forward of `m`: logits `[batch, num_choices]`, and the encoder's outputs
/// over the `[batch * num_choices, seq]` sequences.
pub(super) fn forward(
    m: &SequenceClassifier,
    input_ids: &Tensor,
    attention_mask: Option<&Tensor>,
    token_type_ids: Option<&Tensor>,
    position_ids: Option<&Tensor>,
    output_hidden_states: bool,
) -> Result<(Tensor, BertOutput)> {
    let &[b, c, s] = input_ids.dims() else {
        return Err(Error::Input(format!(
            "input_ids must be a 3-D tensor [batch, num_choices, seq] for a multiple-choice model, got {:?}",
            input_ids.dims()
        )));
    };
    let flat = |name: &str, t: Option<&Tensor>| -> Result<Option<Tensor>> {
        let Some(t) = t else { return Ok(None) };
        if t.dims() != [b, c, s] {
            return Err(Error::Input(format!("{name} must have shape [{b}, {c}, {s}], got {:?}", t.dims())));
        }
        Ok(Some(t.reshape([b * c, s])?))
    };
    let ids = flat("input_ids", Some(input_ids))?.expect("input_ids are given");
    let mask = flat("attention_mask", attention_mask)?;
    let types = flat("token_type_ids", token_type_ids)?;
    let positions = flat("position_ids", position_ids)?;
    let out = m.encode(&ids, mask.as_ref(), types.as_ref(), positions.as_ref(), output_hidden_states)?;
    let scores = m.logits_of(&out.last_hidden_state, out.pooler_output.as_ref(), mask.as_ref())?;
    Ok((scores.reshape([b, c])?, out))
}
