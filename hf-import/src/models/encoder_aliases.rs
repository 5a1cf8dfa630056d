//! Encoders that run as BERT or RoBERTa under their own names: ERNIE 1.0–3.0 (model type `ernie`:
//! `ErnieModel`, `ErnieForMaskedLM` and the sequence, token, multiple-choice and question-answering
//! heads; nghuyong/ernie-3.0-base-zh and its kin), BERT under the `ernie.` prefix plus, with
//! `use_task_id`, a task-type embedding added to every token (row 0: transformers' default
//! `task_type_ids`, which hf-import does not take), folded into the token-type table at load; and
//! data2vec-text (model type `data2vec-text`: `Data2VecTextModel`, ...; facebook/data2vec-text-base),
//! RoBERTa under the `data2vec_text.` prefix; and the pre-norm encoders ([`super::NormLayout`],
//! read from the model type): RoBERTa-PreLayerNorm (`RobertaPreLayerNormModel`, ...) as RoBERTa
//! under `roberta_prelayernorm.`, XLM-RoBERTa-XL (`XLMRobertaXLModel`, ...) as RoBERTa, and
//! Megatron-BERT (`MegatronBertModel`, ...) as BERT.

use oxtorch_tensor::Tensor;

use crate::config::Config;
use crate::error::{Error, Result};
use crate::weights::Weights;

/// The encoder heads every family here has.
const HEADS: [&str; 6] = [
    "Model",
    "ForMaskedLM",
    "ForSequenceClassification",
    "ForTokenClassification",
    "ForQuestionAnswering",
    "ForMultipleChoice",
];

/// The pre-training heads ERNIE and Megatron-BERT share with BERT.
const BERT_PRETRAINING_HEADS: [&str; 2] = ["ForPreTraining", "ForNextSentencePrediction"];

/// The architecture `arch` runs as with its weights renamed (`BertForMaskedLM` for
/// `ErnieForMaskedLM`, ...), and those weights; `None` for an architecture of neither family.
pub(super) fn aliased(arch: &str, cfg: &Config, weights: &Weights) -> Result<Option<(String, Weights)>> {
    let head = |family: &str| arch.strip_prefix(family).filter(|h| HEADS.contains(h));
    let bert_head = |family: &str| {
        head(family).or_else(|| arch.strip_prefix(family).filter(|h| BERT_PRETRAINING_HEADS.contains(h)))
    };
    if let Some(head) = bert_head("Ernie") {
        return Ok(Some((format!("Bert{head}"), ernie_weights(cfg, weights)?)));
    }
    if let Some(head) = head("Data2VecText") {
        return Ok(Some((format!("Roberta{head}"), with_prefix(weights, "data2vec_text.", "roberta."))));
    }
    if let Some(head) = head("RobertaPreLayerNorm") {
        let weights = with_prefix(weights, "roberta_prelayernorm.", "roberta.");
        return Ok(Some((format!("Roberta{head}"), weights)));
    }
    if let Some(head) = head("XLMRobertaXL") {
        return Ok(Some((format!("Roberta{head}"), weights.clone())));
    }
    if let Some(head) = bert_head("MegatronBert") {
        return Ok(Some((format!("Bert{head}"), weights.clone())));
    }
    Ok(None)
}

/// `weights` with the prefix `own` read as `runs_as`.
fn with_prefix(weights: &Weights, own: &str, runs_as: &str) -> Weights {
    weights.renamed(|n| {
        Some(match n.strip_prefix(own) {
            Some(rest) => format!("{runs_as}{rest}"),
            None => n.to_string(),
        })
    })
}

/// ERNIE's checkpoint under BERT's names: `ernie.` as `bert.`, and with `use_task_id` the
/// task-type embeddings' row 0 added to every token-type row (`task_type_embeddings` itself left
/// out).
fn ernie_weights(cfg: &Config, weights: &Weights) -> Result<Weights> {
    let renamed = with_prefix(weights, "ernie.", "bert.");
    if !cfg.bool_or("use_task_id", false)? {
        return Ok(renamed);
    }
    let prefix = if renamed.contains("bert.embeddings.word_embeddings.weight") { "bert." } else { "" };
    let task_name = format!("{prefix}embeddings.task_type_embeddings.weight");
    let type_name = format!("{prefix}embeddings.token_type_embeddings.weight");
    let missing =
        |name: &str| Error::Weight(format!("tensor '{name}' is missing from the checkpoint (use_task_id)"));
    let task = renamed.get(&task_name)?.ok_or_else(|| missing(&task_name))?;
    let hidden = cfg.usize("hidden_size")?;
    if task.rank() != 2 || task.dims()[1] != hidden || task.dims()[0] == 0 {
        return Err(Error::Weight(format!(
            "tensor '{task_name}' has shape {:?}; expected [task_type_vocab_size, {hidden}]",
            task.dims()
        )));
    }
    let row: Tensor = task.narrow(0, 0, 1)?;
    let folded = renamed.replaced(|name, t| match name == type_name {
        true if t.rank() == 2 && t.dims()[1] == hidden => Ok(Some(t.add(&row.to_dtype(t.dtype())?)?)),
        _ => Ok(None),
    })?;
    Ok(folded.renamed(|n| (n != task_name).then(|| n.to_string())))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_aliases_run_as_bert_and_roberta() {
        let cfg = Config::from_json_str("{}").unwrap();
        let weights = Weights::from_tensors([]);
        let arch = |a: &str| aliased(a, &cfg, &weights).unwrap().map(|(arch, _)| arch);
        assert_eq!(arch("ErnieForMaskedLM").as_deref(), Some("BertForMaskedLM"));
        assert_eq!(arch("ErnieModel").as_deref(), Some("BertModel"));
        assert_eq!(arch("Data2VecTextForMultipleChoice").as_deref(), Some("RobertaForMultipleChoice"));
        assert_eq!(arch("RobertaPreLayerNormForMaskedLM").as_deref(), Some("RobertaForMaskedLM"));
        assert_eq!(arch("XLMRobertaXLModel").as_deref(), Some("RobertaModel"));
        assert_eq!(arch("MegatronBertForTokenClassification").as_deref(), Some("BertForTokenClassification"));
        assert_eq!(arch("MegatronBertForPreTraining").as_deref(), Some("BertForPreTraining"));
        assert_eq!(arch("ErnieForNextSentencePrediction").as_deref(), Some("BertForNextSentencePrediction"));
        for other in [
            "ErnieForCausalLM",
            "Ernie4_5ForCausalLM",
            "Data2VecTextForCausalLM",
            "Data2VecAudioModel",
            "XLMRobertaXLForCausalLM",
            "RobertaPreLayerNormForPreTraining",
            "Data2VecTextForNextSentencePrediction",
        ] {
            assert_eq!(arch(other), None, "{other}");
        }
    }
}
