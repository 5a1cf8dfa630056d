//! Token classification on the decoders (transformers' `LlamaForTokenClassification`,
//! `Qwen2ForTokenClassification`, `GPT2ForTokenClassification`, ...): a linear layer on every
//! token's final hidden state (after the decoder's final norm; the dropout before it is the
//! identity at inference). Most families build it as transformers'
//! `GenericForTokenClassification` does, a layer named `score` with a bias unless the config sets
//! `token_classification_bias` to false; the GPT-2-style ones (GPT-2, GPT-Neo, GPT-NeoX,
//! GPTBigCode, BLOOM, Falcon, MPT, BioGPT) and EuroBERT (`EuroBertForTokenClassification`, over
//! its bidirectional states) name it `classifier` and always give it a bias.

use oxtorch_tensor::Tensor;

use super::classification::num_labels;
use super::decoder::CausalLm;
use crate::config::Config;
use crate::error::{Error, Result};
use crate::layers::Linear;
use crate::weights::Weights;

/// The families whose token classifier names its layer `classifier` (with a bias).
const CLASSIFIER_NAMED: &[&str] =
    &["GPT2", "GPTNeo", "GPTNeoX", "GPTBigCode", "Bloom", "Falcon", "Mpt", "BioGpt", "EuroBert"];

/// The families whose token classifier takes no `position_ids`: transformers' Falcon one drops
/// them (its rotary positions then count from 0), which is refused rather than ignored. (BLOOM's
/// and MPT's drop them too, but their ALiBi reads none: they are accepted, as by the sequence
/// classifiers.)
const WITHOUT_POSITION_IDS: &[&str] = &["Falcon"];

/// A decoder with a per-token classification head (see the module docs).
#[derive(Debug, Clone)]
pub struct DecoderForTokenClassification {
    /// the decoder (without an LM head)
    pub model: CausalLm,
    head: Linear,
    takes_position_ids: bool,
}

impl DecoderForTokenClassification {
    /// The head of `{family}ForTokenClassification` (`family` as in `Llama`, `GPT2`) over `model`,
    /// the decoder already loaded from the checkpoint's base-model prefix.
    pub fn load(family: &str, model: CausalLm, cfg: &Config, weights: &Weights) -> Result<Self> {
        let hidden = model.hidden_size();
        let labels = num_labels(cfg)?;
        let (name, bias) = if CLASSIFIER_NAMED.contains(&family) {
            ("classifier", true)
        } else {
            ("score", cfg.bool_or("token_classification_bias", true)?)
        };
        let head = Linear::load(&weights.vars(name), hidden, labels, bias)?;
        let takes_position_ids = !WITHOUT_POSITION_IDS.contains(&family);
        Ok(DecoderForTokenClassification { model, head, takes_position_ids })
    }

    /// Whether the model takes `position_ids` (not Falcon's, see [`WITHOUT_POSITION_IDS`]).
    pub fn takes_position_ids(&self) -> bool {
        self.takes_position_ids
    }

    /// The number of labels (the logits' last dim).
    pub fn num_labels(&self) -> usize {
        self.head.weight.dims()[0]
    }

    /// Logits `[batch, seq, num_labels]` and, with `output_hidden_states`, the decoder's hidden
    /// states (the embeddings, then each layer's output, the last after the final norm).
    pub fn forward(
        &self,
        input_ids: &Tensor,
        token_type_ids: Option<&Tensor>,
        attention_mask: Option<&Tensor>,
        position_ids: Option<&Tensor>,
        output_hidden_states: bool,
    ) -> Result<(Tensor, Vec<Tensor>)> {
        if position_ids.is_some() && !self.takes_position_ids {
            return Err(Error::Input(
                "this token classifier takes no position_ids (transformers' FalconForTokenClassification counts positions from 0)"
                    .into(),
            ));
        }
        let (h, hidden_states) = self.model.hidden_states_with_token_types(
            input_ids,
            token_type_ids,
            attention_mask,
            position_ids,
            output_hidden_states,
        )?;
        Ok((self.head.forward(&h)?, hidden_states))
    }
}
