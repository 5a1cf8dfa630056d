//! NomicBERT (`NomicBertModel`, `model_type: "nomic_bert"`: nomic-embed-text v1 and v1.5), as
//! transformers 5 runs it natively: BERT's post-norm blocks with rotary positions (no position
//! table; base 1000 by default), a fused `Wqkv` and an output projection without biases, a SwiGLU
//! MLP (`fc12` gated, `fc11` up, `fc2` down), word and token-type embeddings with a layer norm
//! (`emb_ln`). The checkpoint keeps the hub's names (transformers 5 saves them back so), or
//! transformers' module names (`layers.N.self_attn.q_proj`, ...).
//!
//! transformers' `NomicBertConfig` reads the standard keys (`hidden_size`, ...); the hub configs'
//! own keys (`n_embd`, `rotary_emb_base`, ...) are not read, as there: its defaults are
//! nomic-embed-text-v1.5's sizes.
//!
//! GTE (`GteModel`, `model_type: "gte"`: Alibaba's gte-multilingual-base, gte-*-en-v1.5 and the
//! gte-multilingual reranker, `GteForSequenceClassification`) is the same network with biases on
//! q, k, v, the output projection and the MLP's down projection, GELU by default and a RoPE base
//! of 160000; its checkpoints keep transformers' module names or the hub's (`new.` or `gte.`
//! prefixed, `encoder.layer.N.attention.qkv_proj`, `attn_ln`, `mlp_ln`, `mlp.up_gate_proj` with
//! the up rows first), which transformers 5 converts at load, and so does this loader.

use oxtorch_tensor::{DType, Device, Tensor};

use super::bert::BertOutput;
use super::encoder_inputs::EncoderInputs;
use crate::config::Config;
use crate::error::{Error, Result};
use crate::layers::{
    padding_mask, Activation, AttentionConfig, Embedding, GatedMlp, LayerNorm, Rotary, SelfAttention,
};
use crate::weights::{Vars, Weights};

/// How [`SelfAttention::load`] loads q/k norms (NomicBERT has none).
type QkNormLoader = fn(&Vars<'_>, usize, usize) -> Result<crate::layers::DecoderNorm>;

/// One post-norm block: `norm1(x + attn(x))`, then `norm2(x + mlp(x))`.
#[derive(Debug, Clone)]
struct Layer {
    attn: SelfAttention,
    norm1: LayerNorm,
    mlp: GatedMlp,
    norm2: LayerNorm,
}

/// transformers' `NomicBertModel` (without the pooler it adds only when asked to), and
/// `GteModel` (see the module docs).
#[derive(Debug, Clone)]
pub struct NomicBertModel {
    word: Embedding,
    token_type: Option<Embedding>,
    emb_norm: LayerNorm,
    layers: Vec<Layer>,
    rotary: Rotary,
}

/// transformers' `GteModel`: a [`NomicBertModel`] with GTE's biases and defaults.
pub type GteModel = NomicBertModel;

/// Which of the two families a checkpoint is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Family {
    Nomic,
    Gte,
}

impl NomicBertModel {
    /// Loads the encoder from `cfg` (`NomicBertConfig`'s defaults) and the hub-named `weights`
    /// (with or without a `nomic_bert.` prefix).
    pub fn load(cfg: &Config, weights: &Weights) -> Result<Self> {
        Self::load_family(cfg, weights, Family::Nomic)
    }

    /// Loads GTE's encoder from `cfg` (`GteConfig`'s defaults) and `weights` under transformers'
    /// names or the hub's (with or without a `gte.` or `new.` prefix).
    pub fn load_gte(cfg: &Config, weights: &Weights) -> Result<Self> {
        Self::load_family(cfg, weights, Family::Gte)
    }

    fn load_family(cfg: &Config, weights: &Weights, family: Family) -> Result<Self> {
        let gte = family == Family::Gte;
        let hidden = cfg.usize_or("hidden_size", 768)?;
        let heads = cfg.usize_or("num_attention_heads", 12)?;
        if heads == 0 || !hidden.is_multiple_of(heads) {
            return Err(Error::Config(format!(
                "hidden_size ({hidden}) must be a multiple of num_attention_heads ({heads})"
            )));
        }
        let head_dim = cfg.nullable_usize_or("head_dim", None)?.unwrap_or(hidden / heads);
        let intermediate = cfg.usize_or("intermediate_size", 3072)?;
        let layers =
            if cfg.get("num_hidden_layers").is_some() { cfg.layers("num_hidden_layers")? } else { 12 };
        let (vocab, types) = match gte {
            true => (cfg.usize_or("vocab_size", 250_048)?, cfg.usize_or("type_vocab_size", 1)?),
            false => (cfg.usize_or("vocab_size", 30_528)?, cfg.usize_or("type_vocab_size", 2)?),
        };
        let eps = cfg.f64_or("layer_norm_eps", 1e-12)?;
        let act = Activation::from_name(cfg.str_or("hidden_act", if gte { "gelu" } else { "silu" })?)?;
        let prefixes: &[&str] = if gte { &["gte.", "new."] } else { &["nomic_bert."] };
        let prefix = prefixes
            .iter()
            .find(|p| weights.contains(&format!("{p}embeddings.word_embeddings.weight")))
            .copied()
            .unwrap_or("");
        let weights = &match gte {
            true => split_up_gate(weights)?,
            false => weights.clone(),
        };
        // The MLP and attention under the names the shared layers read; transformers' own module
        // names (a `torch.save` of its state dict: `layers.N.self_attn.q_proj`, ...) as the hub's.
        // (GTE's hub names: `encoder.layer.N.attention.{qkv_proj,o_proj}`, `attn_ln`, `mlp_ln`.)
        let w = weights.renamed(|n| {
            let n = n.strip_prefix(prefix)?;
            let n = match (n.strip_prefix("layers."), n.strip_prefix("encoder.layer.")) {
                (Some(rest), _) | (None, Some(rest)) => format!("encoder.layers.{rest}"),
                (None, None) => n.replace("embeddings.LayerNorm.", "emb_ln."),
            };
            Some(
                n.replace(".self_attn.", ".attn.")
                    .replace(".attention.", ".attn.")
                    .replace(".attn_ln.", ".norm1.")
                    .replace(".mlp_ln.", ".norm2.")
                    .replace(".post_attention_layernorm.", ".norm1.")
                    .replace(".post_mlp_layernorm.", ".norm2.")
                    .replace(".mlp.fc11.", ".mlp.up_proj.")
                    .replace(".mlp.fc12.", ".mlp.gate_proj.")
                    .replace(".mlp.fc2.", ".mlp.down_proj.")
                    .replace(".attn.Wqkv.", ".attn.qkv_proj.")
                    .replace(".attn.out_proj.", ".attn.o_proj."),
            )
        });
        let root = w.vars("");
        let attn_cfg =
            AttentionConfig { qkv_bias: gte, o_bias: gte, ..AttentionConfig::plain(hidden, heads, head_dim) };
        let no_norm: Option<QkNormLoader> = None;
        let layers = (0..layers)
            .map(|i| {
                let v = root.pp("encoder").pp("layers").pp(i);
                Ok(Layer {
                    attn: SelfAttention::load(&v.pp("attn"), attn_cfg.clone(), no_norm)?,
                    norm1: LayerNorm::load(&v.pp("norm1"), hidden, eps)?,
                    mlp: match gte {
                        true => GatedMlp::load(&v.pp("mlp"), hidden, intermediate, act, false)?
                            .with_down_bias(v.pp("mlp").pp("down_proj").get("bias", &[hidden])?),
                        false => GatedMlp::load(&v.pp("mlp"), hidden, intermediate, act, false)?,
                    },
                    norm2: LayerNorm::load(&v.pp("norm2"), hidden, eps)?,
                })
            })
            .collect::<Result<_>>()?;
        let e = root.pp("embeddings");
        let word = Embedding::load(&e.pp("word_embeddings"), vocab, hidden)?;
        let device = word.weight.device();
        Ok(NomicBertModel {
            token_type: if types > 0 {
                Some(Embedding::load(&e.pp("token_type_embeddings"), types, hidden)?)
            } else {
                None
            },
            word,
            emb_norm: LayerNorm::load(&root.pp("emb_ln"), hidden, eps)?,
            layers,
            rotary: Rotary::new(&cfg.rope(None)?, head_dim)?.to_device(device)?,
        })
    }

    /// The device of the weights, where inputs are moved and outputs are.
    pub fn device(&self) -> Device {
        self.word.weight.device()
    }

    /// Encodes `input_ids` `[batch, seq]`; `attention_mask` (1 = token) defaults to all ones,
    /// `token_type_ids` to zeros, `position_ids` (the rotary angles') to `0..seq`.
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
        let s = inputs.seq;
        let (mask, types, positions) = (inputs.attention_mask, inputs.token_type_ids, inputs.position_ids);
        let mut h = self.word.forward(&inputs.input_ids)?;
        if let Some(tt) = &self.token_type {
            let types = match types {
                Some(t) => t.to_dtype(DType::I64)?,
                None => Tensor::zeros([1, s], (DType::I64, device))?,
            };
            h = h.add(&tt.forward(&types)?)?;
        }
        let mut h = self.emb_norm.forward(&h)?;
        let positions = match positions {
            Some(p) => p.to_dtype(DType::I64)?,
            None => Tensor::arange(s as i64, (DType::I64, device))?.unsqueeze(0)?,
        };
        let (cos, sin) = self.rotary.cos_sin(&positions, h.dtype())?;
        let mask = match mask {
            Some(m) => Some(padding_mask(&m, h.dtype())?),
            None => None,
        };
        let mut hidden_states = Vec::new();
        for layer in &self.layers {
            if output_hidden_states {
                hidden_states.push(h.clone());
            }
            let attn = layer.attn.forward(&h, &cos, &sin, mask.as_ref(), None)?;
            h = layer.norm1.forward(&h.add(&attn)?)?;
            h = layer.norm2.forward(&h.add(&layer.mlp.forward(&h)?)?)?;
        }
        if output_hidden_states {
            hidden_states.push(h.clone());
        }
        Ok(BertOutput { last_hidden_state: h, pooler_output: None, hidden_states })
    }
}

/// `weights` with each fused `mlp.up_gate_proj` of GTE's hub checkpoints (`[2 · intermediate,
/// hidden]`, the up rows first) split into `mlp.up_proj` and `mlp.gate_proj`.
fn split_up_gate(weights: &Weights) -> Result<Weights> {
    if !weights.names().any(|n| n.ends_with(".mlp.up_gate_proj.weight")) {
        return Ok(weights.clone());
    }
    let mut out = Vec::with_capacity(weights.len() + 8);
    for item in weights.iter() {
        let (name, t) = item?;
        let Some(prefix) = name.strip_suffix(".mlp.up_gate_proj.weight") else {
            out.push((name.clone(), t));
            continue;
        };
        let rows = t.dims().first().copied().unwrap_or(0);
        if t.rank() != 2 || rows % 2 != 0 {
            return Err(Error::Weight(format!(
                "tensor '{name}' has shape {:?}; expected [2 × intermediate_size, hidden_size]",
                t.dims()
            )));
        }
        out.push((format!("{prefix}.mlp.up_proj.weight"), t.narrow(0, 0, rows / 2)?.contiguous()?));
        out.push((
            format!("{prefix}.mlp.gate_proj.weight"),
            t.narrow(0, (rows / 2) as isize, rows / 2)?.contiguous()?,
        ));
    }
    Ok(Weights::from_tensors(out))
}
