//! DistilBERT (`DistilBertModel`, `DistilBertForMaskedLM`): BERT's encoder without token types or
//! pooler, stored as `embeddings.*` and `transformer.layer.N.{attention.{q,k,v,out}_lin,
//! sa_layer_norm, ffn.lin1, ffn.lin2, output_layer_norm}`, with config keys `dim`, `n_heads`, ....

use oxtorch_tensor::Tensor;

use super::bert::{BertConfig, BertModel, BertOutput, Positions};
use super::pre_norm_bert::NormLayout;
use crate::config::Config;
use crate::error::{Error, Result};
use crate::layers::{Activation, Embedding, EncoderLayer, LayerNorm, Linear};
use crate::weights::Weights;

/// DistilBERT's layer norms use a fixed epsilon.
const EPS: f64 = 1e-12;

fn distil_config(cfg: &Config) -> Result<BertConfig> {
    let hidden = cfg.usize("dim")?;
    let c = BertConfig {
        hidden,
        embedding: hidden,
        heads: cfg.usize("n_heads")?,
        intermediate: cfg.usize("hidden_dim")?,
        layers: cfg.layers("n_layers")?,
        vocab: cfg.usize("vocab_size")?,
        max_positions: cfg.usize_or("max_position_embeddings", 512)?,
        type_vocab: 0,
        eps: EPS,
        act: Activation::from_name(cfg.str_or("activation", "gelu")?)?,
        norms: NormLayout::PostNorm,
    };
    if c.heads == 0 || !c.hidden.is_multiple_of(c.heads) {
        return Err(Error::Config(format!("dim ({}) must be a multiple of n_heads ({})", c.hidden, c.heads)));
    }
    Ok(c)
}

/// transformers' `DistilBertModel`: [`BertModel::forward`] without token types (`position_ids`,
/// like transformers' `DistilBertModel.forward`, default to `0..seq`).
#[derive(Debug, Clone)]
pub struct DistilBertModel(pub BertModel);

impl DistilBertModel {
    /// Loads the encoder (names with or without a `distilbert.` prefix).
    pub fn load(cfg: &Config, weights: &Weights) -> Result<Self> {
        let c = distil_config(cfg)?;
        let root = weights.vars("");
        let v = if weights.contains("distilbert.embeddings.word_embeddings.weight") {
            root.pp("distilbert")
        } else {
            root
        };
        let (h, e) = (c.hidden, v.pp("embeddings"));
        let mut layers = Vec::with_capacity(c.layers);
        for i in 0..c.layers {
            let l = v.pp("transformer").pp("layer").pp(i);
            let a = l.pp("attention");
            layers.push(EncoderLayer {
                query: Linear::load(&a.pp("q_lin"), h, h, true)?,
                key: Linear::load(&a.pp("k_lin"), h, h, true)?,
                value: Linear::load(&a.pp("v_lin"), h, h, true)?,
                attn_out: Linear::load(&a.pp("out_lin"), h, h, true)?,
                attn_norm: LayerNorm::load(&l.pp("sa_layer_norm"), h, EPS)?,
                inner: Linear::load(&l.pp("ffn").pp("lin1"), h, c.intermediate, true)?,
                out: Linear::load(&l.pp("ffn").pp("lin2"), c.intermediate, h, true)?,
                out_norm: LayerNorm::load(&l.pp("output_layer_norm"), h, EPS)?,
                pre_norm: false,
            });
        }
        Ok(DistilBertModel(BertModel::from_parts(
            Embedding::load(&e.pp("word_embeddings"), c.vocab, h)?,
            Embedding::load(&e.pp("position_embeddings"), c.max_positions, h)?,
            None,
            LayerNorm::load(&e.pp("LayerNorm"), h, EPS)?,
            layers,
            None,
            c,
            Positions::Absolute,
        )))
    }
}

impl std::ops::Deref for DistilBertModel {
    type Target = BertModel;
    fn deref(&self) -> &BertModel {
        &self.0
    }
}

/// transformers' `DistilBertForMaskedLM`: `vocab_transform`, activation, `vocab_layer_norm`,
/// `vocab_projector` (tied to the word embeddings unless stored).
#[derive(Debug, Clone)]
pub struct DistilBertForMaskedLM {
    /// the encoder
    pub distilbert: DistilBertModel,
    transform: Linear,
    norm: LayerNorm,
    projector: Linear,
}

impl DistilBertForMaskedLM {
    /// Loads `distilbert.*` and the `vocab_*` head.
    pub fn load(cfg: &Config, weights: &Weights) -> Result<Self> {
        let distilbert = DistilBertModel::load(cfg, weights)?;
        let c = distilbert.config().clone();
        let root = weights.vars("");
        let tied = cfg.bool_or("tie_word_embeddings", true)?;
        let p = root.pp("vocab_projector");
        let weight = match p.get_opt("weight", &[c.vocab, c.hidden])? {
            Some(w) if !tied => w,
            _ if tied => distilbert.word_embeddings().clone(),
            _ => {
                return Err(Error::Weight(
                    "tensor 'vocab_projector.weight' is missing from the checkpoint".into(),
                ))
            }
        };
        Ok(DistilBertForMaskedLM {
            transform: Linear::load(&root.pp("vocab_transform"), c.hidden, c.hidden, true)?,
            norm: LayerNorm::load(&root.pp("vocab_layer_norm"), c.hidden, EPS)?,
            projector: Linear { weight, bias: Some(p.get("bias", &[c.vocab])?) },
            distilbert,
        })
    }

    /// Masked-LM logits `[batch, seq, vocab]` and the encoder's outputs. `position_ids` default to
    /// `0..seq`, as in transformers' `DistilBertForMaskedLM.forward`.
    pub fn forward(
        &self,
        input_ids: &Tensor,
        attention_mask: Option<&Tensor>,
        position_ids: Option<&Tensor>,
        output_hidden_states: bool,
    ) -> Result<(Tensor, BertOutput)> {
        let out =
            self.distilbert.forward(input_ids, attention_mask, None, position_ids, output_hidden_states)?;
        let c = self.distilbert.config();
        let h = c.act.forward(&self.transform.forward(&out.last_hidden_state)?)?;
        let logits = self.projector.forward(&self.norm.forward(&h)?)?;
        Ok((logits, out))
    }
}
