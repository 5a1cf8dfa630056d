//! Masked-LM checkpoints saved without their head. Sentence-transformers folders often name
//! `BertForMaskedLM` or `MPNetForMaskedLM` in `config.json` (all-mpnet-base-v2 does) and ship the
//! encoder alone; transformers' `AutoModel` and sentence-transformers load such a folder as the
//! family's base model, and so does [`AutoModel::load_or_base`], with a note saying so.

use super::AutoModel;
use crate::config::Config;
use crate::error::Result;
use crate::weights::Weights;

/// The top-level tensor-name prefixes a masked-LM (or ELECTRA pre-training) head owns, by
/// architecture.
fn masked_lm_head(arch: &str) -> Option<&'static [&'static str]> {
    Some(match arch {
        "BertForMaskedLM"
        | "ErnieForMaskedLM"
        | "MegatronBertForMaskedLM"
        | "BertForPreTraining"
        | "ErnieForPreTraining"
        | "MegatronBertForPreTraining"
        | "BertForNextSentencePrediction"
        | "ErnieForNextSentencePrediction"
        | "MegatronBertForNextSentencePrediction" => &["cls."],
        "RobertaForMaskedLM"
        | "XLMRobertaForMaskedLM"
        | "CamembertForMaskedLM"
        | "Data2VecTextForMaskedLM"
        | "RobertaPreLayerNormForMaskedLM"
        | "XLMRobertaXLForMaskedLM"
        | "MPNetForMaskedLM" => &["lm_head."],
        "DistilBertForMaskedLM" => &["vocab_transform.", "vocab_layer_norm.", "vocab_projector."],
        "ModernBertForMaskedLM" => &["head.", "decoder."],
        "ElectraForMaskedLM" => &["generator_predictions.", "generator_lm_head."],
        "AlbertForMaskedLM" => &["predictions."],
        "AlbertForPreTraining" => &["predictions.", "sop_classifier."],
        "EsmForMaskedLM" | "EuroBertForMaskedLM" => &["lm_head."],
        "DebertaForMaskedLM" | "DebertaV2ForMaskedLM" => &["cls.", "lm_predictions."],
        // (The discriminator's head too: its checkpoints are fine-tuned and saved as encoders.)
        "ElectraForPreTraining" => &["discriminator_predictions."],
        // (wav2vec 2.0's and UniSpeech's contrastive heads: their encoders are what users run.)
        "Wav2Vec2ForPreTraining" | "UniSpeechForPreTraining" => &["quantizer.", "project_hid.", "project_q."],
        _ => return None,
    })
}

impl AutoModel {
    /// [`AutoModel::load`], except that a masked-LM architecture whose checkpoint holds none of its
    /// head's tensors loads the family's base model ([`AutoModel::load_base`]) and returns a note
    /// saying so: its outputs are then `last_hidden_state` (and `hidden_states.*`), as
    /// transformers' `AutoModel` gives, not `logits`. A head that is only partly there, and every
    /// other failure, is `load`'s error.
    pub fn load_or_base(cfg: &Config, weights: &Weights) -> Result<(Self, Option<String>)> {
        let arch = Self::architecture_of(cfg)?;
        if let Some(prefixes) = masked_lm_head(&arch) {
            if !weights.names().any(|n| prefixes.iter().any(|p| n.starts_with(p))) {
                let model = Self::load_base(cfg, weights)?;
                let head: Vec<String> = prefixes.iter().map(|p| format!("{p}*")).collect();
                let note = format!(
                    "config.json names {arch}, but the checkpoint holds none of its head's tensors ({}): \
                     running the base model, whose outputs are last_hidden_state",
                    head.join(", ")
                );
                return Ok((model, Some(note)));
            }
        }
        Ok((Self::load(cfg, weights)?, None))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every masked-LM architecture hf-import runs has its head's prefixes here.
    #[test]
    fn every_masked_lm_head_is_listed() {
        for arch in super::super::SUPPORTED_ARCHITECTURES.iter().filter(|a| a.ends_with("ForMaskedLM")) {
            assert!(masked_lm_head(arch).is_some(), "{arch}");
        }
    }
}
