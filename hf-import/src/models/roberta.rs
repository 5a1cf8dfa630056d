//! RoBERTa (`RobertaModel`, `RobertaForMaskedLM`): BERT's encoder under `roberta.*`, with positions
//! counted from `pad_token_id + 1` over the non-padding tokens, and its own masked-LM head.

use oxtorch_tensor::Tensor;

use super::bert::{mlm_decoder, BertConfig, BertModel, BertOutput, Positions};
use crate::config::Config;
use crate::error::Result;
use crate::layers::{Activation, LayerNorm, Linear};
use crate::weights::Weights;

/// transformers' `RobertaModel`: a [`BertModel`] with RoBERTa's positions.
#[derive(Debug, Clone)]
pub struct RobertaModel(pub BertModel);

impl RobertaModel {
    /// Loads the encoder (names with or without a `roberta.` prefix).
    pub fn load(cfg: &Config, weights: &Weights) -> Result<Self> {
        let c = BertConfig::from_config(cfg)?;
        let positions = Positions::AfterPadding { padding_idx: cfg.usize_or("pad_token_id", 1)? as i64 };
        let root = weights.vars("");
        let v = if weights.contains("roberta.embeddings.word_embeddings.weight") {
            root.pp("roberta")
        } else {
            root
        };
        Ok(RobertaModel(BertModel::load_vars(&v, c, positions)?))
    }
}

impl std::ops::Deref for RobertaModel {
    type Target = BertModel;
    fn deref(&self) -> &BertModel {
        &self.0
    }
}

/// transformers' `RobertaForMaskedLM`: the encoder and `lm_head` (`LmHead`).
#[derive(Debug, Clone)]
pub struct RobertaForMaskedLM {
    /// the encoder
    pub roberta: RobertaModel,
    head: LmHead,
}

impl RobertaForMaskedLM {
    /// Loads `roberta.*` and `lm_head.*`.
    pub fn load(cfg: &Config, weights: &Weights) -> Result<Self> {
        let roberta = RobertaModel::load(cfg, weights)?;
        let head = LmHead::load(cfg, weights, &roberta)?;
        Ok(RobertaForMaskedLM { roberta, head })
    }

    /// Masked-LM logits `[batch, seq, vocab]` and the encoder's outputs.
    pub fn forward(
        &self,
        input_ids: &Tensor,
        attention_mask: Option<&Tensor>,
        token_type_ids: Option<&Tensor>,
        position_ids: Option<&Tensor>,
        output_hidden_states: bool,
    ) -> Result<(Tensor, BertOutput)> {
        let out = self.roberta.forward(
            input_ids,
            attention_mask,
            token_type_ids,
            position_ids,
            output_hidden_states,
        )?;
        Ok((self.head.forward(&out.last_hidden_state)?, out))
    }
}

/// RoBERTa's and MPNet's masked-LM head `lm_head`: dense, exact GELU, layer norm, then the decoder
/// (tied to the word embeddings unless the checkpoint stores its own) with its bias.
#[derive(Debug, Clone)]
pub(crate) struct LmHead {
    dense: Linear,
    norm: LayerNorm,
    decoder: Linear,
}

impl LmHead {
    /// Loads `lm_head.*` for `encoder` (whose word embeddings a tied decoder reuses).
    pub(crate) fn load(cfg: &Config, weights: &Weights, encoder: &BertModel) -> Result<Self> {
        let c = encoder.config();
        let head = weights.vars("lm_head");
        let tied = cfg.bool_or("tie_word_embeddings", true)?;
        let decoder = mlm_decoder(&head, tied, encoder.word_embeddings(), c.vocab, c.hidden)?;
        Ok(LmHead {
            dense: Linear::load(&head.pp("dense"), c.hidden, c.hidden, true)?,
            norm: LayerNorm::load(&head.pp("layer_norm"), c.hidden, c.eps)?,
            decoder,
        })
    }

    /// Logits `[batch, seq, vocab]` of the encoder's last hidden state.
    pub(crate) fn forward(&self, h: &Tensor) -> Result<Tensor> {
        let h = Activation::Gelu.forward(&self.dense.forward(h)?)?;
        self.decoder.forward(&self.norm.forward(&h)?)
    }
}
