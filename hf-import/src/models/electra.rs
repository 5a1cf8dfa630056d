//! ELECTRA (`ElectraModel`, `ElectraForPreTraining`, `ElectraForMaskedLM`; its sequence, token and
//! span classifiers live with the other encoders' in `classification.rs` and
//! `token_classification.rs`): BERT's encoder under `electra.`, no pooler, embeddings of their own
//! width (`embedding_size`, 128 by default) projected to the hidden width by
//! `embeddings_project` when the two differ.

use oxtorch_tensor::Tensor;

use super::bert::{BertConfig, BertModel, BertOutput, Positions};
use crate::config::Config;
use crate::error::{Error, Result};
use crate::layers::{Activation, LayerNorm, Linear};
use crate::weights::Weights;

/// `ElectraConfig`'s sizes: BERT's keys, and `embedding_size` (transformers' default 128).
fn electra_config(cfg: &Config) -> Result<BertConfig> {
    let mut c = BertConfig::from_config(cfg)?;
    c.embedding = cfg.usize_or("embedding_size", 128)?;
    if c.embedding == 0 {
        return Err(Error::Config("embedding_size must be positive".into()));
    }
    Ok(c)
}

/// Loads transformers' `ElectraModel` (names with or without an `electra.` prefix) as the
/// [`BertModel`] it is.
pub fn load_electra(cfg: &Config, weights: &Weights) -> Result<BertModel> {
    let c = electra_config(cfg)?;
    let root = weights.vars("");
    let v =
        if weights.contains("electra.embeddings.word_embeddings.weight") { root.pp("electra") } else { root };
    BertModel::load_vars(&v, c, Positions::Absolute)
}

/// The head on an ELECTRA encoder.
#[derive(Debug, Clone)]
enum Head {
    /// `ElectraForPreTraining`'s `discriminator_predictions`: per token, whether it was replaced,
    /// `dense_prediction(act(dense(h)))` squeezed to `[batch, seq]`.
    Discriminator { dense: Linear, act: Activation, prediction: Linear },
    /// `ElectraForMaskedLM`: `generator_lm_head(LayerNorm(gelu(dense(h))))` (`generator_predictions`),
    /// the LM head `[vocab, embedding_size]` tied to the word embeddings unless
    /// `tie_word_embeddings` is false.
    Generator { dense: Linear, norm: LayerNorm, lm_head: Linear },
}

/// transformers' `ElectraForPreTraining` (the discriminator checkpoints, `google/electra-*-discriminator`)
/// or `ElectraForMaskedLM` (the generators): per-token logits.
#[derive(Debug, Clone)]
pub struct ElectraWithHead {
    /// the encoder
    pub electra: BertModel,
    head: Head,
}

impl ElectraWithHead {
    /// Loads `ElectraForPreTraining`: `electra.*` and `discriminator_predictions.{dense,dense_prediction}`.
    pub fn load_pretraining(cfg: &Config, weights: &Weights) -> Result<Self> {
        let electra = load_electra(cfg, weights)?;
        let (h, act) = (electra.config().hidden, electra.config().act);
        let p = weights.vars("discriminator_predictions");
        let head = Head::Discriminator {
            dense: Linear::load(&p.pp("dense"), h, h, true)?,
            act,
            prediction: Linear::load(&p.pp("dense_prediction"), h, 1, true)?,
        };
        Ok(ElectraWithHead { electra, head })
    }

    /// Loads `ElectraForMaskedLM`: `electra.*`, `generator_predictions.{dense,LayerNorm}` and
    /// `generator_lm_head` (its weight the word embeddings' when tied).
    pub fn load_masked_lm(cfg: &Config, weights: &Weights) -> Result<Self> {
        let electra = load_electra(cfg, weights)?;
        let c = electra.config().clone();
        let p = weights.vars("generator_predictions");
        let lm = weights.vars("generator_lm_head");
        let weight = if cfg.bool_or("tie_word_embeddings", true)? {
            electra.word_embeddings().clone()
        } else {
            lm.get("weight", &[c.vocab, c.embedding])?
        };
        let head = Head::Generator {
            dense: Linear::load(&p.pp("dense"), c.hidden, c.embedding, true)?,
            norm: LayerNorm::load(&p.pp("LayerNorm"), c.embedding, c.eps)?,
            lm_head: Linear { weight, bias: Some(lm.get("bias", &[c.vocab])?) },
        };
        Ok(ElectraWithHead { electra, head })
    }

    /// Whether the logits are `[batch, seq]` (the discriminator's) rather than
    /// `[batch, seq, vocab]`.
    pub fn per_token_scalar(&self) -> bool {
        matches!(self.head, Head::Discriminator { .. })
    }

    /// The logits (`[batch, seq]` for the discriminator, `[batch, seq, vocab]` for the
    /// generator) and the encoder's outputs.
    pub fn forward(
        &self,
        input_ids: &Tensor,
        attention_mask: Option<&Tensor>,
        token_type_ids: Option<&Tensor>,
        position_ids: Option<&Tensor>,
        output_hidden_states: bool,
    ) -> Result<(Tensor, BertOutput)> {
        let out = self.electra.forward(
            input_ids,
            attention_mask,
            token_type_ids,
            position_ids,
            output_hidden_states,
        )?;
        let h = &out.last_hidden_state;
        let logits = match &self.head {
            Head::Discriminator { dense, act, prediction } => {
                prediction.forward(&act.forward(&dense.forward(h)?)?)?.select(-1, 0)?.contiguous()?
            }
            Head::Generator { dense, norm, lm_head } => {
                lm_head.forward(&norm.forward(&Activation::Gelu.forward(&dense.forward(h)?)?)?)?
            }
        };
        Ok((logits, out))
    }
}
