//! ALBERT (`AlbertModel`, `AlbertForMaskedLM`; its sequence, token and span classifiers live with
//! the other encoders' in `classification.rs` and `token_classification.rs`): BERT's post-norm
//! blocks under ALBERT's names, shared across depth (`num_hidden_groups` groups of
//! `inner_group_num` blocks, layer `i` running group `⌊i / (layers / groups)⌋`), narrow embeddings
//! (`embedding_size`, 128 by default) mapped to the hidden width by
//! `encoder.embedding_hidden_mapping_in`, and a pooler `tanh(pooler(h[:, 0]))`.

use oxtorch_tensor::Tensor;

use super::bert::{BertConfig, BertModel, BertOutput, MlmHead, Positions};
use crate::config::Config;
use crate::error::{Error, Result};
use crate::layers::{Activation, Embedding, EncoderLayer, LayerNorm, Linear};
use crate::weights::{Vars, Weights};

/// `AlbertConfig`'s sizes: BERT's keys with ALBERT's defaults (`embedding_size` 128,
/// `hidden_act` `gelu_new`).
fn albert_config(cfg: &Config) -> Result<BertConfig> {
    let mut c = BertConfig::from_config(cfg)?;
    c.embedding = cfg.usize_or("embedding_size", 128)?;
    c.act = Activation::from_name(cfg.str_or("hidden_act", "gelu_new")?)?;
    if c.embedding == 0 {
        return Err(Error::Config("embedding_size must be positive".into()));
    }
    Ok(c)
}

/// One `AlbertLayer`: `attention.{query,key,value,dense,LayerNorm}`, `ffn`, `ffn_output`,
/// `full_layer_layer_norm`.
fn load_layer(v: &Vars<'_>, c: &BertConfig) -> Result<EncoderLayer> {
    let (h, att) = (c.hidden, v.pp("attention"));
    Ok(EncoderLayer {
        query: Linear::load(&att.pp("query"), h, h, true)?,
        key: Linear::load(&att.pp("key"), h, h, true)?,
        value: Linear::load(&att.pp("value"), h, h, true)?,
        attn_out: Linear::load(&att.pp("dense"), h, h, true)?,
        attn_norm: LayerNorm::load(&att.pp("LayerNorm"), h, c.eps)?,
        inner: Linear::load(&v.pp("ffn"), h, c.intermediate, true)?,
        out: Linear::load(&v.pp("ffn_output"), c.intermediate, h, true)?,
        out_norm: LayerNorm::load(&v.pp("full_layer_layer_norm"), h, c.eps)?,
        pre_norm: false,
    })
}

/// Loads transformers' `AlbertModel` (names with or without an `albert.` prefix; the pooler when
/// the checkpoint has one) as the [`BertModel`] it runs as: its shared blocks repeated in the
/// order transformers runs them (the copies share their weights).
pub fn load_albert(cfg: &Config, weights: &Weights) -> Result<BertModel> {
    let c = albert_config(cfg)?;
    let root = weights.vars("");
    let v =
        if weights.contains("albert.embeddings.word_embeddings.weight") { root.pp("albert") } else { root };
    let groups = cfg.usize_or("num_hidden_groups", 1)?;
    let inner = cfg.usize_or("inner_group_num", 1)?;
    if groups == 0 || inner == 0 {
        return Err(Error::Config(format!(
            "num_hidden_groups ({groups}) and inner_group_num ({inner}) must be positive"
        )));
    }
    let stored = (0..groups)
        .map(|g| {
            let group = v.pp("encoder").pp("albert_layer_groups").pp(g).pp("albert_layers");
            (0..inner).map(|j| load_layer(&group.pp(j), &c)).collect::<Result<Vec<_>>>()
        })
        .collect::<Result<Vec<_>>>()?;
    let mut layers = Vec::with_capacity(c.layers * inner);
    for i in 0..c.layers {
        // transformers' `int(i / (num_hidden_layers / num_hidden_groups))`, in floats.
        let g = (i as f64 / (c.layers as f64 / groups as f64)) as usize;
        let group = stored.get(g).ok_or_else(|| {
            Error::Config(format!("layer {i} runs group {g}, but num_hidden_groups is {groups}"))
        })?;
        layers.extend(group.iter().cloned());
    }
    let e = v.pp("embeddings");
    let width = c.embedding;
    let token_type = if c.type_vocab > 0 {
        Some(Embedding::load(&e.pp("token_type_embeddings"), c.type_vocab, width)?)
    } else {
        None
    };
    let pooler = if v.pp("pooler").contains("weight") {
        Some(Linear::load(&v.pp("pooler"), c.hidden, c.hidden, true)?)
    } else {
        None
    };
    let project = Linear::load(&v.pp("encoder").pp("embedding_hidden_mapping_in"), width, c.hidden, true)?;
    Ok(BertModel::from_parts(
        Embedding::load(&e.pp("word_embeddings"), c.vocab, width)?,
        Embedding::load(&e.pp("position_embeddings"), c.max_positions, width)?,
        token_type,
        LayerNorm::load(&e.pp("LayerNorm"), width, c.eps)?,
        layers,
        pooler,
        c,
        Positions::Absolute,
    )
    .with_projection(project))
}

/// transformers' `AlbertForMaskedLM`: `predictions.{dense, LayerNorm}` (hidden to embedding width,
/// `hidden_act`, norm) and `predictions.decoder`, tied to the word embeddings (its bias then
/// `predictions.bias`) unless `tie_word_embeddings` is false.
#[derive(Debug, Clone)]
pub struct AlbertForMaskedLM {
    /// the encoder
    pub albert: BertModel,
    head: MlmHead,
}

impl AlbertForMaskedLM {
    /// Loads `albert.*` and `predictions.*`.
    pub fn load(cfg: &Config, weights: &Weights) -> Result<Self> {
        let albert = load_albert(cfg, weights)?;
        Ok(AlbertForMaskedLM { head: MlmHead::load_albert(cfg, weights, &albert)?, albert })
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
        let mut out = self.albert.forward(
            input_ids,
            attention_mask,
            token_type_ids,
            position_ids,
            output_hidden_states,
        )?;
        // (`AlbertForMaskedLM` builds its encoder without the pooler.)
        out.pooler_output = None;
        Ok((self.head.forward(&out.last_hidden_state)?, out))
    }
}
