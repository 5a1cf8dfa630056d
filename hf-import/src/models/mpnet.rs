//! MPNet (`MPNetModel`, the encoder of all-mpnet-base-v2): BERT's post-norm blocks under other
//! names, RoBERTa's positions (counted from padding id 1, whatever `pad_token_id` says, as
//! transformers' `MPNetEmbeddings`), no token types, and a relative-position bias shared by the
//! layers ([`RelativeBias`]).

use oxtorch_tensor::Tensor;

use super::bert::{BertConfig, BertModel, BertOutput, Positions};
use super::roberta::LmHead;
use crate::config::Config;
use crate::error::Result;
use crate::layers::{Embedding, EncoderLayer, LayerNorm, Linear, RelativeBias};
use crate::weights::{Vars, Weights};

/// The padding id MPNet's embeddings count positions from.
const PADDING_IDX: i64 = 1;

/// transformers' `MPNetModel`: a [`BertModel`] with MPNet's positions and relative-position bias.
#[derive(Debug, Clone)]
pub struct MPNetModel(pub BertModel);

impl MPNetModel {
    /// Loads the encoder (names with or without an `mpnet.` prefix; the pooler when present).
    pub fn load(cfg: &Config, weights: &Weights) -> Result<Self> {
        let mut c = BertConfig::from_config(cfg)?;
        c.type_vocab = 0;
        let root = weights.vars("");
        let v =
            if weights.contains("mpnet.embeddings.word_embeddings.weight") { root.pp("mpnet") } else { root };
        let e = v.pp("embeddings");
        let layers = (0..c.layers)
            .map(|i| load_layer(&v.pp("encoder").pp("layer").pp(i), &c))
            .collect::<Result<Vec<_>>>()?;
        let pooler = if v.pp("pooler").pp("dense").contains("weight") {
            Some(Linear::load(&v.pp("pooler").pp("dense"), c.hidden, c.hidden, true)?)
        } else {
            None
        };
        let buckets = cfg.usize_or("relative_attention_num_buckets", 32)?;
        let bias = RelativeBias::load(&v.pp("encoder").pp("relative_attention_bias"), buckets, c.heads)?;
        let encoder = BertModel::from_parts(
            Embedding::load(&e.pp("word_embeddings"), c.vocab, c.hidden)?,
            Embedding::load(&e.pp("position_embeddings"), c.max_positions, c.hidden)?,
            None,
            LayerNorm::load(&e.pp("LayerNorm"), c.hidden, c.eps)?,
            layers,
            pooler,
            c,
            Positions::AfterPadding { padding_idx: PADDING_IDX },
        );
        Ok(MPNetModel(encoder.with_relative_bias(bias)))
    }
}

impl std::ops::Deref for MPNetModel {
    type Target = BertModel;
    fn deref(&self) -> &BertModel {
        &self.0
    }
}

/// transformers' `MPNetForMaskedLM`: the encoder (`mpnet.*`, no pooler) and RoBERTa's `lm_head`.
#[derive(Debug, Clone)]
pub struct MPNetForMaskedLM {
    /// the encoder
    pub mpnet: MPNetModel,
    head: LmHead,
}

impl MPNetForMaskedLM {
    /// Loads `mpnet.*` and `lm_head.*`.
    pub fn load(cfg: &Config, weights: &Weights) -> Result<Self> {
        let mpnet = MPNetModel::load(cfg, weights)?;
        let head = LmHead::load(cfg, weights, &mpnet)?;
        Ok(MPNetForMaskedLM { mpnet, head })
    }

    /// Masked-LM logits `[batch, seq, vocab]` and the encoder's outputs.
    pub fn forward(
        &self,
        input_ids: &Tensor,
        attention_mask: Option<&Tensor>,
        position_ids: Option<&Tensor>,
        output_hidden_states: bool,
    ) -> Result<(Tensor, BertOutput)> {
        let out = self.mpnet.forward(input_ids, attention_mask, None, position_ids, output_hidden_states)?;
        Ok((self.head.forward(&out.last_hidden_state)?, out))
    }
}

/// Loads MPNet's names for one block: `attention.attn.{q,k,v,o}`, `attention.LayerNorm`,
/// `intermediate.dense`, `output.*`.
fn load_layer(v: &Vars<'_>, c: &BertConfig) -> Result<EncoderLayer> {
    let h = c.hidden;
    let att = v.pp("attention");
    Ok(EncoderLayer {
        query: Linear::load(&att.pp("attn").pp("q"), h, h, true)?,
        key: Linear::load(&att.pp("attn").pp("k"), h, h, true)?,
        value: Linear::load(&att.pp("attn").pp("v"), h, h, true)?,
        attn_out: Linear::load(&att.pp("attn").pp("o"), h, h, true)?,
        attn_norm: LayerNorm::load(&att.pp("LayerNorm"), h, c.eps)?,
        inner: Linear::load(&v.pp("intermediate").pp("dense"), h, c.intermediate, true)?,
        out: Linear::load(&v.pp("output").pp("dense"), c.intermediate, h, true)?,
        out_norm: LayerNorm::load(&v.pp("output").pp("LayerNorm"), h, c.eps)?,
        pre_norm: false,
    })
}
