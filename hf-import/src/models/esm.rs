//! ESM (`EsmModel`, `EsmForMaskedLM`: Meta's ESM-2 protein language models, facebook/esm2_t6_8M
//! and up, and ESM-1b): a pre-norm encoder (`x + attn(norm(x))`, `x + mlp(norm(x))`, an erf-GELU
//! MLP, biases everywhere) closed by a final layer norm (`emb_layer_norm_after`), with rotary
//! positions (ESM-2) or a learned table counted from after the padding id (ESM-1b, as RoBERTa's),
//! and token dropout: with `token_dropout`, the masked tokens' embeddings are zeroed and the rest
//! scaled by `(1 - 0.15 · 0.8) / (1 - the row's share of masked tokens)`, in evaluation too.
//!
//! The checkpoint's names (`esm.embeddings.word_embeddings`, `encoder.layer.N.attention.self.query`,
//! `attention.LayerNorm`, `intermediate.dense`, `output.dense`, `LayerNorm`,
//! `encoder.emb_layer_norm_after`, `lm_head.*`) are read as they are; the contact-prediction head
//! is left out. A stored rotary `inv_freq` (a persistent buffer there) replaces the computed
//! frequencies, as transformers reads it back.

use oxtorch_tensor::{DType, Device, Tensor};

use super::bert::BertOutput;
use super::encoder_inputs::EncoderInputs;
use crate::config::Config;
use crate::error::{Error, Result};
use crate::layers::{
    padding_mask, Activation, AttentionConfig, Embedding, LayerNorm, Linear, Rotary, SelfAttention,
};
use crate::weights::{Vars, Weights};

/// How [`SelfAttention::load`] loads q/k norms (ESM has none).
type QkNormLoader = fn(&Vars<'_>, usize, usize) -> Result<crate::layers::DecoderNorm>;

/// The masked share ESM was trained with (15 % of tokens picked, 80 % of those masked).
const MASK_RATIO_TRAIN: f64 = 0.15 * 0.8;

/// One pre-norm block.
#[derive(Debug, Clone)]
struct Layer {
    attn_norm: LayerNorm,
    attn: SelfAttention,
    mlp_norm: LayerNorm,
    up: Linear,
    down: Linear,
}

/// How token positions enter the model.
#[derive(Debug, Clone)]
enum Positions {
    /// ESM-2: rotary angles of `position_ids` (default `0..seq`).
    Rotary(Rotary),
    /// ESM-1b: a learned table indexed from `padding_idx + 1` over the non-padding ids.
    Absolute { table: Embedding, padding_idx: i64 },
}

/// transformers' `EsmModel` (with its pooler where the checkpoint has one).
#[derive(Debug, Clone)]
pub struct EsmModel {
    word: Embedding,
    positions: Positions,
    emb_norm: Option<LayerNorm>,
    layers: Vec<Layer>,
    final_norm: LayerNorm,
    pooler: Option<Linear>,
    /// `mask_token_id` where `token_dropout` is on.
    token_dropout: Option<i64>,
}

/// transformers' `EsmForMaskedLM`: [`EsmModel`] and `lm_head` (dense, GELU, layer norm, the
/// decoder tied to the word embeddings, a bias).
#[derive(Debug, Clone)]
pub struct EsmForMaskedLM {
    /// the encoder
    pub esm: EsmModel,
    dense: Linear,
    norm: LayerNorm,
    decoder: Linear,
}

/// The checkpoint's encoder tensors (under `esm.` or not) without the prefix, attention's
/// projections under [`SelfAttention`]'s names (`attention.q_proj`, ..., `attention.o_proj`).
fn encoder_weights(weights: &Weights) -> Weights {
    let prefixed = weights.contains("esm.embeddings.word_embeddings.weight");
    weights.renamed(|name| {
        let name = if prefixed { name.strip_prefix("esm.")? } else { name };
        if name.starts_with("lm_head.") || name.starts_with("contact_head.") {
            return None;
        }
        Some(
            name.replace(".attention.self.query.", ".attention.q_proj.")
                .replace(".attention.self.key.", ".attention.k_proj.")
                .replace(".attention.self.value.", ".attention.v_proj.")
                .replace(".attention.output.dense.", ".attention.o_proj."),
        )
    })
}

impl EsmModel {
    /// Loads the encoder from `cfg` (`EsmConfig`'s defaults) and `weights` (with or without `esm.`).
    pub fn load(cfg: &Config, weights: &Weights) -> Result<Self> {
        let weights = encoder_weights(weights);
        let root = weights.vars("");
        let hidden = cfg.usize_or("hidden_size", 768)?;
        let heads = cfg.usize_or("num_attention_heads", 12)?;
        if heads == 0 || !hidden.is_multiple_of(heads) {
            return Err(Error::Config(format!(
                "The hidden size ({hidden}) is not a multiple of the number of attention heads ({heads})"
            )));
        }
        let head_dim = hidden / heads;
        let intermediate = cfg.usize_or("intermediate_size", 3072)?;
        let layers =
            if cfg.get("num_hidden_layers").is_some() { cfg.layers("num_hidden_layers")? } else { 12 };
        let vocab = cfg
            .nullable_usize_or("vocab_size", None)?
            .ok_or_else(|| Error::Config("ESM's config must give vocab_size".into()))?;
        let eps = cfg.nullable_f64_or("layer_norm_eps", Some(1e-12))?.unwrap_or(1e-12);
        let embeddings = root.pp("embeddings");
        let word = Embedding::load(&embeddings.pp("word_embeddings"), vocab, hidden)?;
        let device = word.weight.device();
        let positions = match cfg.str_or("position_embedding_type", "absolute")? {
            "rotary" => {
                let rotary = Rotary::new(&cfg.rope(None)?, head_dim)?;
                // (The frequencies the checkpoint stores, as transformers reads them back: the
                // model's buffer, saved under the old per-layer name, `*` or the first layer's.)
                let mut stored = None;
                for p in [
                    "rotary_embeddings",
                    "encoder.layer.*.attention.self.rotary_embeddings",
                    "encoder.layer.0.attention.self.rotary_embeddings",
                ] {
                    stored = stored.or(root.pp(p).get_opt("inv_freq", &[head_dim / 2])?);
                }
                let rotary = match stored {
                    Some(inv_freq) => rotary.with_inv_freq(&inv_freq)?,
                    None => rotary,
                };
                Positions::Rotary(rotary.to_device(device)?)
            }
            "absolute" => {
                let padding_idx = cfg.nullable_usize_or("pad_token_id", None)?.ok_or_else(|| {
                    Error::Config(
                        "ESM with absolute positions must give pad_token_id (its positions count from it)"
                            .into(),
                    )
                })?;
                let rows = cfg.usize_or("max_position_embeddings", 1026)?;
                Positions::Absolute {
                    table: Embedding::load(&embeddings.pp("position_embeddings"), rows, hidden)?,
                    padding_idx: padding_idx as i64,
                }
            }
            other => {
                return Err(Error::Unsupported(format!(
                    "ESM position_embedding_type \"{other}\" is not supported (supported: rotary, absolute)"
                )))
            }
        };
        let emb_norm = if cfg.bool_or("emb_layer_norm_before", false)? {
            Some(LayerNorm::load(&embeddings.pp("layer_norm"), hidden, eps)?)
        } else {
            None
        };
        let token_dropout = if cfg.bool_or("token_dropout", false)? {
            cfg.nullable_usize_or("mask_token_id", None)?.map(|id| id as i64)
        } else {
            None
        };
        let attn_cfg = AttentionConfig {
            qkv_bias: true,
            o_bias: true,
            ..AttentionConfig::plain(hidden, heads, head_dim)
        };
        let no_norm: Option<QkNormLoader> = None;
        let layers = (0..layers)
            .map(|i| {
                let v = root.pp("encoder").pp("layer").pp(i);
                let a = v.pp("attention");
                Ok(Layer {
                    attn_norm: LayerNorm::load(&a.pp("LayerNorm"), hidden, eps)?,
                    attn: SelfAttention::load(&a, attn_cfg.clone(), no_norm)?,
                    mlp_norm: LayerNorm::load(&v.pp("LayerNorm"), hidden, eps)?,
                    up: Linear::load(&v.pp("intermediate.dense"), hidden, intermediate, true)?,
                    down: Linear::load(&v.pp("output.dense"), intermediate, hidden, true)?,
                })
            })
            .collect::<Result<Vec<_>>>()?;
        let final_norm = LayerNorm::load(&root.pp("encoder").pp("emb_layer_norm_after"), hidden, eps)?;
        let pooler = if root.pp("pooler.dense").contains("weight") {
            Some(Linear::load(&root.pp("pooler.dense"), hidden, hidden, true)?)
        } else {
            None
        };
        Ok(EsmModel { word, positions, emb_norm, layers, final_norm, pooler, token_dropout })
    }

    /// The device of the weights, where inputs are moved and outputs are.
    pub fn device(&self) -> Device {
        self.word.weight.device()
    }

    /// The embeddings (token dropout, absolute positions, the optional norm, padding zeroed).
    fn embed(&self, ids: &Tensor, mask: Option<&Tensor>, positions: Option<&Tensor>) -> Result<Tensor> {
        let mut h = self.word.forward(ids)?;
        let dtype = h.dtype();
        if let Some(mask_id) = self.token_dropout {
            let masked = ids.eq(mask_id)?;
            h = h.masked_fill(&masked.unsqueeze(2)?, 0.0)?;
            let seq = ids.dims()[1] as f64;
            let lengths = match mask {
                Some(m) => m.to_dtype(DType::F32)?.sum(1, false)?,
                None => Tensor::full([ids.dims()[0]], seq, (DType::F32, ids.device()))?,
            };
            let observed = masked.to_dtype(DType::F32)?.sum(1, false)?.div(&lengths)?;
            let scale = observed.neg()?.add(1.0)?.reciprocal()?.mul(1.0 - MASK_RATIO_TRAIN)?;
            h = h.to_dtype(DType::F32)?.mul(&scale.reshape([ids.dims()[0], 1, 1])?)?.to_dtype(dtype)?;
        }
        if let Positions::Absolute { table, padding_idx } = &self.positions {
            let positions = match positions {
                Some(p) => p.to_dtype(DType::I64)?,
                None => {
                    let kept = ids.ne(*padding_idx)?.to_dtype(DType::I64)?;
                    kept.cumsum(1, None)?.mul(&kept)?.add(*padding_idx)?
                }
            };
            h = h.add(&table.forward(&positions)?)?;
        }
        if let Some(norm) = &self.emb_norm {
            h = norm.forward(&h)?;
        }
        if let Some(m) = mask {
            h = h.mul(&m.to_dtype(dtype)?.unsqueeze(2)?)?;
        }
        Ok(h)
    }

    /// Encodes `input_ids` `[batch, seq]`; `attention_mask` (1 = token) defaults to all ones,
    /// `position_ids` to `0..seq` (rotary) or the count after the padding id (absolute).
    pub fn forward(
        &self,
        input_ids: &Tensor,
        attention_mask: Option<&Tensor>,
        position_ids: Option<&Tensor>,
        output_hidden_states: bool,
    ) -> Result<BertOutput> {
        let inputs = EncoderInputs::on(self.device(), input_ids, attention_mask, None, position_ids)?;
        let ids = inputs.input_ids.to_dtype(DType::I64)?;
        let mask = inputs.attention_mask.map(|m| m.ne(0.0)?.to_dtype(DType::I64)).transpose()?;
        let mut h = self.embed(&ids, mask.as_ref(), inputs.position_ids.as_ref())?;
        let dtype = h.dtype();
        let (cos, sin) = match &self.positions {
            Positions::Rotary(rotary) => {
                let positions = match &inputs.position_ids {
                    Some(p) => p.to_dtype(DType::I64)?,
                    None => Tensor::arange(inputs.seq as i64, (DType::I64, self.device()))?.unsqueeze(0)?,
                };
                rotary.cos_sin(&positions, dtype)?
            }
            Positions::Absolute { .. } => {
                let none = Rotary::none()?.to_device(self.device())?;
                none.cos_sin(&Tensor::zeros([1, inputs.seq], (DType::I64, self.device()))?, dtype)?
            }
        };
        let additive = mask.as_ref().map(|m| padding_mask(m, dtype)).transpose()?;
        let mut hidden_states = Vec::new();
        for layer in &self.layers {
            if output_hidden_states {
                hidden_states.push(h.clone());
            }
            let attn =
                layer.attn.forward(&layer.attn_norm.forward(&h)?, &cos, &sin, additive.as_ref(), None)?;
            h = h.add(&attn)?;
            let inner = Activation::Gelu.forward(&layer.up.forward(&layer.mlp_norm.forward(&h)?)?)?;
            h = h.add(&layer.down.forward(&inner)?)?;
        }
        let h = self.final_norm.forward(&h)?;
        if output_hidden_states {
            hidden_states.push(h.clone());
        }
        let pooler_output = match &self.pooler {
            Some(p) => Some(p.forward(&h.select(1, 0)?)?.tanh()?),
            None => None,
        };
        Ok(BertOutput { last_hidden_state: h, pooler_output, hidden_states })
    }
}

impl EsmForMaskedLM {
    /// Loads the encoder (`esm.*`) and `lm_head.*` (its decoder tied to the word embeddings
    /// unless the checkpoint unties it).
    pub fn load(cfg: &Config, weights: &Weights) -> Result<Self> {
        let esm = EsmModel::load(cfg, weights)?;
        let hidden = cfg.usize_or("hidden_size", 768)?;
        let eps = cfg.nullable_f64_or("layer_norm_eps", Some(1e-12))?.unwrap_or(1e-12);
        let head = weights.vars("lm_head");
        let vocab = esm.word.weight.dims()[0];
        let weight = match head.pp("decoder").get_opt("weight", &[vocab, hidden])? {
            Some(w) if !cfg.bool_or("tie_word_embeddings", true)? => w,
            _ => esm.word.weight.clone(),
        };
        Ok(EsmForMaskedLM {
            dense: Linear::load(&head.pp("dense"), hidden, hidden, true)?,
            norm: LayerNorm::load(&head.pp("layer_norm"), hidden, eps)?,
            decoder: Linear { weight, bias: Some(head.get("bias", &[vocab])?) },
            esm,
        })
    }

    /// Logits `[batch, seq, vocab]` and the encoder's output.
    pub fn forward(
        &self,
        input_ids: &Tensor,
        attention_mask: Option<&Tensor>,
        position_ids: Option<&Tensor>,
        output_hidden_states: bool,
    ) -> Result<(Tensor, BertOutput)> {
        let out = self.esm.forward(input_ids, attention_mask, position_ids, output_hidden_states)?;
        let x = Activation::Gelu.forward(&self.dense.forward(&out.last_hidden_state)?)?;
        Ok((self.decoder.forward(&self.norm.forward(&x)?)?, out))
    }
}
