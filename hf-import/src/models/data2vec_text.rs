//! data2vec-text (model type `data2vec-text`: `Data2VecTextModel`, `Data2VecTextForMaskedLM`, the
//! sequence, token, multiple-choice and question-answering heads; facebook/data2vec-text-base):
//! RoBERTa's encoder under the `data2vec_text.` prefix, run as RoBERTa.

use crate::weights::Weights;

/// data2vec-text's architectures and the RoBERTa ones they run as.
pub(super) fn roberta_architecture(arch: &str) -> Option<String> {
    let head = arch.strip_prefix("Data2VecText")?;
    matches!(
        head,
        "Model"
            | "ForMaskedLM"
            | "ForSequenceClassification"
            | "ForTokenClassification"
            | "ForQuestionAnswering"
            | "ForMultipleChoice"
    )
    .then(|| format!("Roberta{head}"))
}

/// The checkpoint under RoBERTa's names (`data2vec_text.` as `roberta.`).
pub(super) fn roberta_weights(weights: &Weights) -> Weights {
    weights.renamed(|n| {
        Some(match n.strip_prefix("data2vec_text.") {
            Some(rest) => format!("roberta.{rest}"),
            None => n.to_string(),
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn data2vec_text_heads_are_robertas() {
        assert_eq!(roberta_architecture("Data2VecTextForMaskedLM").as_deref(), Some("RobertaForMaskedLM"));
        assert_eq!(roberta_architecture("Data2VecTextModel").as_deref(), Some("RobertaModel"));
        assert_eq!(roberta_architecture("Data2VecTextForCausalLM"), None);
        assert_eq!(roberta_architecture("Data2VecAudioModel"), None);
    }
}
