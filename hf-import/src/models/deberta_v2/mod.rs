//! DeBERTa v1, v2 and v3 (`DebertaV2Model`, `DebertaV2ForMaskedLM`, which load v1's `DebertaModel`
//! and `DebertaForMaskedLM` too; the sequence, token and span
//! classifiers live with the other encoders' in `classification.rs` and
//! `token_classification.rs`): BERT's post-norm blocks with disentangled attention over relative
//! positions (`attention.rs`), embeddings of their own width with optional absolute positions and
//! token types, masked by the attention mask, and v2's convolution after the first layer.
//!
//! As in transformers, a padded query attends to no key, so its softmax is uniform over every key;
//! its (meaningless) outputs are transformers' at the inputs' own length (on the CPU), and differ
//! where a compiling device pads the sequence to its bucket. Kept tokens never see padding.

mod attention;
mod config;

use oxtorch_tensor::{DType, Device, Tensor};

pub use self::attention::log_bucket_position;
use self::attention::{DebertaLayer, RelativeInputs};
pub use self::config::{ConvConfig, DebertaV2Config, RelativeConfig};
use super::bert::{mlm_decoder, BertOutput};
use super::encoder_inputs::EncoderInputs;
use crate::config::Config;
use crate::error::{Error, Result};
use crate::layers::{pair_padding_mask, Embedding, EncoderLayer, LayerNorm, Linear};
use crate::weights::{Vars, Weights};

/// `DebertaV2Embeddings`: word embeddings, plus absolute positions (`position_biased_input`) and
/// token types (`type_vocab_size > 0`), projected to the hidden width by `embed_proj` (no bias)
/// when narrower, normed, then zeroed at padded tokens.
#[derive(Debug, Clone)]
struct Embeddings {
    word: Embedding,
    position: Option<Embedding>,
    token_type: Option<Embedding>,
    project: Option<Linear>,
    norm: LayerNorm,
}

/// `ConvLayer`: `conv` over the sequence of the embeddings' output, zeroed at padding, activated,
/// added to the first layer's output and normed, then zeroed at padding.
#[derive(Debug, Clone)]
struct Conv {
    weight: Tensor,
    bias: Tensor,
    norm: LayerNorm,
    cfg: ConvConfig,
}

impl Conv {
    fn forward(&self, embedded: &Tensor, residual: &Tensor, kept: &Tensor) -> Result<Tensor> {
        let padding = (self.cfg.kernel - 1) / 2;
        let out = embedded.transpose(1, 2)?.contiguous()?.conv1d(
            &self.weight,
            Some(&self.bias),
            &[1],
            padding,
            &[1],
            self.cfg.groups,
        )?;
        let out = out.transpose(1, 2)?.mul(kept)?;
        let out = self.norm.forward(&residual.add(&self.cfg.act.forward(&out)?)?)?;
        Ok(out.mul(kept)?)
    }
}

/// transformers' `DebertaV2Model` (its outputs have no pooler: the classifier's `ContextPooler`
/// belongs to the head).
#[derive(Debug, Clone)]
pub struct DebertaV2Model {
    embeddings: Embeddings,
    layers: Vec<DebertaLayer>,
    /// `encoder.rel_embeddings.weight` `[2 * span, hidden]`
    rel_embeddings: Option<Tensor>,
    /// `encoder.LayerNorm` on the relative embeddings (`norm_rel_ebd: "layer_norm"`)
    rel_norm: Option<LayerNorm>,
    conv: Option<Conv>,
    cfg: DebertaV2Config,
}

impl DebertaV2Model {
    /// Loads the encoder from `cfg` and `weights` (names with or without a `deberta.` prefix).
    pub fn load(cfg: &Config, weights: &Weights) -> Result<Self> {
        let c = DebertaV2Config::from_config(cfg)?;
        let root = weights.vars("");
        let v = if weights.contains("deberta.embeddings.word_embeddings.weight") {
            root.pp("deberta")
        } else {
            root
        };
        Self::load_vars(&v, c)
    }

    /// Loads the encoder from the tensors under `v`.
    pub fn load_vars(v: &Vars<'_>, c: DebertaV2Config) -> Result<Self> {
        let (e, width, h) = (v.pp("embeddings"), c.embedding, c.hidden);
        let embeddings = Embeddings {
            word: Embedding::load(&e.pp("word_embeddings"), c.vocab, width)?,
            position: if c.position_biased_input {
                Some(Embedding::load(&e.pp("position_embeddings"), c.max_positions, width)?)
            } else {
                None
            },
            token_type: if c.type_vocab > 0 {
                Some(Embedding::load(&e.pp("token_type_embeddings"), c.type_vocab, width)?)
            } else {
                None
            },
            project: if width != h {
                Some(Linear::load(&e.pp("embed_proj"), width, h, false)?)
            } else {
                None
            },
            norm: LayerNorm::load(&e.pp("LayerNorm"), h, c.eps)?,
        };
        let enc = v.pp("encoder");
        let layers = (0..c.layers).map(|i| load_layer(&enc.pp("layer").pp(i), &c)).collect::<Result<_>>()?;
        let (rel_embeddings, rel_norm) = match &c.relative {
            Some(rel) => (
                Some(enc.get("rel_embeddings.weight", &[2 * rel.span, h])?),
                if rel.norm { Some(LayerNorm::load(&enc.pp("LayerNorm"), h, c.eps)?) } else { None },
            ),
            None => (None, None),
        };
        let conv = match &c.conv {
            Some(cc) => {
                let p = enc.pp("conv");
                Some(Conv {
                    weight: p.get("conv.weight", &[h, h / cc.groups, cc.kernel])?,
                    bias: p.get("conv.bias", &[h])?,
                    norm: LayerNorm::load(&p.pp("LayerNorm"), h, c.eps)?,
                    cfg: cc.clone(),
                })
            }
            None => None,
        };
        Ok(DebertaV2Model { embeddings, layers, rel_embeddings, rel_norm, conv, cfg: c })
    }

    /// The model's sizes and options.
    pub fn config(&self) -> &DebertaV2Config {
        &self.cfg
    }

    /// The dtype of the weights.
    pub fn dtype(&self) -> DType {
        self.embeddings.word.weight.dtype()
    }

    /// The device of the weights, where inputs are moved and outputs are.
    pub fn device(&self) -> Device {
        self.embeddings.word.weight.device()
    }

    /// The word embedding table `[vocab, embedding width]` (what the MLM heads reuse).
    pub fn word_embeddings(&self) -> &Tensor {
        &self.embeddings.word.weight
    }

    /// The longest input the model takes: `max_position_embeddings` with absolute positions;
    /// none with relative positions alone (v3: distances past the table share its last rows).
    pub fn max_positions(&self) -> Option<usize> {
        self.embeddings.position.as_ref().map(|_| self.cfg.max_positions)
    }

    /// Encodes `input_ids` `[batch, seq]`; `attention_mask` (1 = token) defaults to all ones,
    /// `token_type_ids` to zeros, `position_ids` to `0..seq` (read only with absolute positions).
    /// Inputs are moved to the weights' device, where the outputs stay.
    pub fn forward(
        &self,
        input_ids: &Tensor,
        attention_mask: Option<&Tensor>,
        token_type_ids: Option<&Tensor>,
        position_ids: Option<&Tensor>,
        output_hidden_states: bool,
    ) -> Result<BertOutput> {
        let device = self.device();
        let inputs = EncoderInputs::on(device, input_ids, attention_mask, token_type_ids, position_ids)?;
        let (b, s) = (inputs.batch, inputs.seq);
        let (mask, types, positions) = (inputs.attention_mask, inputs.token_type_ids, inputs.position_ids);
        let mask = match mask {
            Some(m) => m,
            None => Tensor::ones([b, s], (DType::I64, device))?,
        };
        // `[batch, seq, 1]` ones at kept tokens, zeros at padding.
        let kept = mask.ne(0)?.to_dtype(self.dtype())?.unsqueeze(-1)?;
        let embedded = self.embed(&inputs.input_ids, types.as_ref(), positions.as_ref(), &kept)?;
        let pair_mask = pair_padding_mask(&mask, embedded.dtype())?;
        let relative = match (&self.rel_embeddings, &self.cfg.relative) {
            (Some(table), Some(rel)) => Some(RelativeInputs::new(table, self.rel_norm.as_ref(), rel, s)?),
            _ => None,
        };
        let mut hidden_states = Vec::new();
        if output_hidden_states {
            hidden_states.push(embedded.clone());
        }
        let mut h = embedded.clone();
        for (i, layer) in self.layers.iter().enumerate() {
            h = layer.forward(&h, &pair_mask, relative.as_ref(), &self.cfg)?;
            if i == 0 {
                if let Some(conv) = &self.conv {
                    h = conv.forward(&embedded, &h, &kept)?;
                }
            }
            if output_hidden_states {
                hidden_states.push(h.clone());
            }
        }
        Ok(BertOutput { last_hidden_state: h, pooler_output: None, hidden_states })
    }

    /// The embeddings' output `[batch, seq, hidden]`, zeroed where `kept` `[batch, seq, 1]` is 0.
    fn embed(
        &self,
        input_ids: &Tensor,
        token_type_ids: Option<&Tensor>,
        position_ids: Option<&Tensor>,
        kept: &Tensor,
    ) -> Result<Tensor> {
        let (s, device) = (input_ids.dims()[1], self.device());
        let e = &self.embeddings;
        let mut h = e.word.forward(input_ids)?;
        if let Some(table) = &e.position {
            let positions = match position_ids {
                Some(p) => p.to_dtype(DType::I64)?,
                None => Tensor::arange(s as i64, (DType::I64, device))?.unsqueeze(0)?,
            };
            let last = if positions.numel() > 0 { positions.max()?.item::<i64>()? } else { 0 };
            let first = if positions.numel() > 0 { positions.min()?.item::<i64>()? } else { 0 };
            if first < 0 || last as usize >= self.cfg.max_positions {
                return Err(Error::Input(format!(
                    "position id {} is out of range for max_position_embeddings ({})",
                    if first < 0 { first } else { last },
                    self.cfg.max_positions
                )));
            }
            h = h.add(&table.forward(&positions)?)?;
        }
        if let Some(tt) = &e.token_type {
            let types = match token_type_ids {
                Some(t) => t.to_dtype(DType::I64)?,
                None => Tensor::zeros([1, s], (DType::I64, device))?,
            };
            h = h.add(&tt.forward(&types)?)?;
        }
        if let Some(project) = &e.project {
            h = project.forward(&h)?;
        }
        Ok(e.norm.forward(&h)?.mul(kept)?)
    }
}

/// v1's `in_proj` `[3 * hidden, hidden]` (no bias; per head, its query, key and value rows in
/// turn) as the query, key and value projections, with `q_bias` and `v_bias`.
fn load_in_proj(att: &Vars<'_>, c: &DebertaV2Config) -> Result<(Linear, Linear, Linear)> {
    let (h, heads, d) = (c.hidden, c.heads, c.head_dim);
    let fused = att.get("in_proj.weight", &[3 * h, h])?.reshape([heads, 3, d, h])?;
    let part =
        |i: usize| -> Result<Tensor> { Ok(fused.select(1, i as isize)?.reshape([h, h])?.contiguous()?) };
    Ok((
        Linear { weight: part(0)?, bias: Some(att.get("q_bias", &[h])?) },
        Linear { weight: part(1)?, bias: None },
        Linear { weight: part(2)?, bias: Some(att.get("v_bias", &[h])?) },
    ))
}

/// Loads one block: `attention.self.{query,key,value}_proj` (and `pos_key_proj`,
/// `pos_query_proj` without `share_att_key`; v1's `in_proj`, `q_bias`, `v_bias`, `pos_proj`,
/// `pos_q_proj`), `attention.output.*`, `intermediate.dense`, `output.*`.
fn load_layer(v: &Vars<'_>, c: &DebertaV2Config) -> Result<DebertaLayer> {
    let h = c.hidden;
    let (att, out) = (v.pp("attention").pp("self"), v.pp("attention").pp("output"));
    let separate = c.relative.as_ref().is_some_and(|r| !r.share_att_key);
    let (query, key, value) = if c.v1 {
        load_in_proj(&att, c)?
    } else {
        (
            Linear::load(&att.pp("query_proj"), h, h, true)?,
            Linear::load(&att.pp("key_proj"), h, h, true)?,
            Linear::load(&att.pp("value_proj"), h, h, true)?,
        )
    };
    // (v1 names them `pos_proj`, without a bias, and `pos_q_proj`.)
    let (pos_key, pos_query) =
        if c.v1 { ("pos_proj", "pos_q_proj") } else { ("pos_key_proj", "pos_query_proj") };
    Ok(DebertaLayer {
        block: EncoderLayer {
            query,
            key,
            value,
            attn_out: Linear::load(&out.pp("dense"), h, h, true)?,
            attn_norm: LayerNorm::load(&out.pp("LayerNorm"), h, c.eps)?,
            inner: Linear::load(&v.pp("intermediate").pp("dense"), h, c.intermediate, true)?,
            out: Linear::load(&v.pp("output").pp("dense"), c.intermediate, h, true)?,
            out_norm: LayerNorm::load(&v.pp("output").pp("LayerNorm"), h, c.eps)?,
            pre_norm: false,
        },
        pos_key: if separate && c.c2p { Some(Linear::load(&att.pp(pos_key), h, h, !c.v1)?) } else { None },
        pos_query: if separate && c.p2c { Some(Linear::load(&att.pp(pos_query), h, h, true)?) } else { None },
    })
}

/// transformers' `DebertaV2ForMaskedLM`.
#[derive(Debug, Clone)]
pub struct DebertaV2ForMaskedLM {
    /// the encoder
    pub deberta: DebertaV2Model,
    /// `legacy: true` (the default): `cls.predictions.transform.dense`, to the embedding width;
    /// `legacy: false`: `lm_predictions.lm_head.dense` (the head v3's pretraining checkpoints hold)
    dense: Linear,
    /// the norm after the dense layer and activation
    norm: LayerNorm,
    /// legacy: `cls.predictions.decoder` tied to the word embeddings (with `cls.predictions.bias`);
    /// else the word embeddings' transpose and `lm_predictions.lm_head.bias`
    decoder: Linear,
}

impl DebertaV2ForMaskedLM {
    /// Loads `deberta.*` and the head `legacy` names (`cls.predictions.*` or
    /// `lm_predictions.lm_head.*`).
    pub fn load(cfg: &Config, weights: &Weights) -> Result<Self> {
        let deberta = DebertaV2Model::load(cfg, weights)?;
        let c = deberta.cfg.clone();
        let legacy = cfg.bool_or("legacy", true)?;
        let (dense, norm, decoder) = if legacy {
            let p = weights.vars("cls.predictions");
            if !p.pp("transform").pp("dense").contains("weight")
                && weights.contains("lm_predictions.lm_head.dense.weight")
            {
                return Err(Error::Weight(
                    "tensor 'cls.predictions.transform.dense.weight' is missing from the checkpoint, which holds \
                     'lm_predictions.lm_head.*' instead: set \"legacy\": false in config.json to use that head"
                        .into(),
                ));
            }
            let tied = cfg.bool_or("tie_word_embeddings", true)?;
            (
                Linear::load(&p.pp("transform").pp("dense"), c.hidden, c.embedding, true)?,
                LayerNorm::load(&p.pp("transform").pp("LayerNorm"), c.embedding, c.eps)?,
                mlm_decoder(&p, tied, deberta.word_embeddings(), c.vocab, c.embedding)?,
            )
        } else {
            if c.embedding != c.hidden {
                return Err(Error::Unsupported(format!(
                    "DebertaV2ForMaskedLM with legacy false multiplies hidden states ({}) by the word embeddings ({}): \
                     they must be as wide",
                    c.hidden, c.embedding
                )));
            }
            let p = weights.vars("lm_predictions.lm_head");
            (
                Linear::load(&p.pp("dense"), c.hidden, c.hidden, true)?,
                LayerNorm::load(&p.pp("LayerNorm"), c.hidden, c.eps)?,
                Linear { weight: deberta.word_embeddings().clone(), bias: Some(p.get("bias", &[c.vocab])?) },
            )
        };
        Ok(DebertaV2ForMaskedLM { deberta, dense, norm, decoder })
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
        let out = self.deberta.forward(
            input_ids,
            attention_mask,
            token_type_ids,
            position_ids,
            output_hidden_states,
        )?;
        let h = self.deberta.cfg.act.forward(&self.dense.forward(&out.last_hidden_state)?)?;
        Ok((self.decoder.forward(&self.norm.forward(&h)?)?, out))
    }
}
