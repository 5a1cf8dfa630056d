//! ERNIE 1.0–3.0 (model type `ernie`: `ErnieModel`, `ErnieForMaskedLM`, the sequence, token,
//! multiple-choice and question-answering heads; nghuyong/ernie-3.0-base-zh and its kin): BERT
//! under the `ernie.` prefix, plus, with `use_task_id`, a task-type embedding added to every
//! token's (row 0: transformers' default `task_type_ids`, which hf-import does not take). That row
//! is folded into the token-type table at load, so the model is BERT's and runs as BERT does.

use oxtorch_tensor::Tensor;

use crate::config::Config;
use crate::error::{Error, Result};
use crate::weights::Weights;

/// ERNIE's architectures and the BERT ones they run as.
pub(super) fn bert_architecture(arch: &str) -> Option<String> {
    let head = arch.strip_prefix("Ernie")?;
    matches!(
        head,
        "Model"
            | "ForMaskedLM"
            | "ForSequenceClassification"
            | "ForTokenClassification"
            | "ForQuestionAnswering"
            | "ForMultipleChoice"
    )
    .then(|| format!("Bert{head}"))
}

/// The checkpoint under BERT's names: `ernie.` as `bert.`, and with `use_task_id` the task-type
/// embeddings' row 0 added to every token-type row (`task_type_embeddings` itself left out).
pub(super) fn bert_weights(cfg: &Config, weights: &Weights) -> Result<Weights> {
    let renamed = weights.renamed(|n| {
        Some(match n.strip_prefix("ernie.") {
            Some(rest) => format!("bert.{rest}"),
            None => n.to_string(),
        })
    });
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
    fn ernie_heads_are_berts() {
        assert_eq!(bert_architecture("ErnieForMaskedLM").as_deref(), Some("BertForMaskedLM"));
        assert_eq!(bert_architecture("ErnieModel").as_deref(), Some("BertModel"));
        assert_eq!(bert_architecture("ErnieForCausalLM"), None);
        assert_eq!(bert_architecture("Ernie4_5ForCausalLM"), None);
    }
}
