//! Gated cross-attention layers among a decoder's self-attention layers (Llama 3.2 Vision's
//! `MllamaCrossAttentionDecoderLayer`), and the states they attend to.
//!
//! A layer norms the hidden states, attends from them to the image features (queries and keys
//! RMS-normed per head, no rotary positions, grouped key/value heads), and adds the result scaled by
//! `tanh(cross_attn_attn_gate)`; then its gated MLP's output, scaled by `tanh(cross_attn_mlp_gate)`
//! and zeroed on the text rows that see no image (`full_text_row_masked_out_mask`). The keys and
//! values are the same at every step of a generation: [`CrossAttentionStates`] holds them, computed
//! once per layer, with the mask rows of the prompt (a new token sees what the prompt's last token
//! sees, as transformers extends `cross_attention_mask`).

use oxtorch_tensor::{DType, Tensor};

use super::{eager_attention, lowest, Activation, GatedMlp, Linear, RmsNorm, RmsNormStyle};
use crate::error::{Error, Result};
use crate::weights::Vars;

/// The sizes of a cross-attention layer (the text config's).
#[derive(Debug, Clone, Copy)]
pub struct CrossAttentionDims {
    /// the hidden size
    pub hidden: usize,
    /// query heads
    pub heads: usize,
    /// key/value heads
    pub kv_heads: usize,
    /// the MLP's inner width
    pub intermediate: usize,
    /// the RMS norms' epsilon
    pub eps: f64,
    /// the MLP's activation
    pub act: Activation,
}

/// One gated cross-attention layer (see the module docs).
#[derive(Debug, Clone)]
pub struct CrossAttentionLayer {
    input_norm: RmsNorm,
    q_proj: Linear,
    k_proj: Linear,
    v_proj: Linear,
    o_proj: Linear,
    q_norm: RmsNorm,
    k_norm: RmsNorm,
    /// `tanh(cross_attn_attn_gate)` `[1]`
    attn_gate: Tensor,
    post_norm: RmsNorm,
    mlp: GatedMlp,
    /// `tanh(cross_attn_mlp_gate)` `[1]`
    mlp_gate: Tensor,
    heads: usize,
    kv_heads: usize,
    head_dim: usize,
}

impl CrossAttentionLayer {
    /// `vars.{input_layernorm, cross_attn.{q,k,v,o}_proj, cross_attn.{q,k}_norm,
    /// cross_attn_attn_gate, post_attention_layernorm, mlp, cross_attn_mlp_gate}`.
    pub fn load(vars: &Vars<'_>, d: &CrossAttentionDims) -> Result<Self> {
        if d.heads == 0
            || d.kv_heads == 0
            || !d.hidden.is_multiple_of(d.heads)
            || !d.heads.is_multiple_of(d.kv_heads)
        {
            return Err(Error::Config(format!(
                "cross-attention: hidden_size {} must split into {} heads, in groups of {} key/value heads",
                d.hidden, d.heads, d.kv_heads
            )));
        }
        let head_dim = d.hidden / d.heads;
        let attn = vars.pp("cross_attn");
        let rms = |v: Vars<'_>, dim| RmsNorm::load(&v, dim, d.eps, RmsNormStyle::Llama);
        let gate = |name| -> Result<Tensor> { Ok(vars.get(name, &[1])?.tanh()?) };
        Ok(CrossAttentionLayer {
            input_norm: rms(vars.pp("input_layernorm"), d.hidden)?,
            q_proj: Linear::load(&attn.pp("q_proj"), d.hidden, d.heads * head_dim, false)?,
            k_proj: Linear::load(&attn.pp("k_proj"), d.hidden, d.kv_heads * head_dim, false)?,
            v_proj: Linear::load(&attn.pp("v_proj"), d.hidden, d.kv_heads * head_dim, false)?,
            o_proj: Linear::load(&attn.pp("o_proj"), d.heads * head_dim, d.hidden, false)?,
            q_norm: rms(attn.pp("q_norm"), head_dim)?,
            k_norm: rms(attn.pp("k_norm"), head_dim)?,
            attn_gate: gate("cross_attn_attn_gate")?,
            post_norm: rms(vars.pp("post_attention_layernorm"), d.hidden)?,
            mlp: GatedMlp::load(&vars.pp("mlp"), d.hidden, d.intermediate, d.act, false)?,
            mlp_gate: gate("cross_attn_mlp_gate")?,
            heads: d.heads,
            kv_heads: d.kv_heads,
            head_dim,
        })
    }

    /// The keys and values `[batch, kv_heads, n, head_dim]` of `states` `[batch, n, hidden]`.
    fn keys_values(&self, states: &Tensor) -> Result<(Tensor, Tensor)> {
        let (b, n) = (states.dims()[0], states.dims()[1]);
        let split = |t: Tensor| -> Result<Tensor> {
            Ok(t.reshape([b, n, self.kv_heads, self.head_dim])?.transpose(1, 2)?)
        };
        let k = self.k_norm.forward(&split(self.k_proj.forward(states)?)?)?;
        let v = split(self.v_proj.forward(states)?)?.contiguous()?;
        Ok((k.contiguous()?, v))
    }

    /// `h` `[batch, seq, hidden]` after the layer, attending to `kv` (see
    /// [`CrossAttentionStates`]) under the mask `rows` of these tokens (`None`: every key seen).
    fn forward(&self, h: &Tensor, kv: &(Tensor, Tensor), rows: Option<&MaskRows>) -> Result<Tensor> {
        let (b, s) = (h.dims()[0], h.dims()[1]);
        let normed = self.input_norm.forward(h)?;
        let q = self.q_proj.forward(&normed)?.reshape([b, s, self.heads, self.head_dim])?.transpose(1, 2)?;
        let q = self.q_norm.forward(&q)?;
        let scale = 1.0 / (self.head_dim as f64).sqrt();
        let ctx = eager_attention(&q, &kv.0, &kv.1, rows.map(|r| &r.bias), scale, None)?;
        let ctx = ctx.transpose(1, 2)?.reshape([b, s, self.heads * self.head_dim])?;
        let h = h.add(&self.o_proj.forward(&ctx)?.mul(&self.attn_gate)?)?;
        let mut mlp = self.mlp.forward(&self.post_norm.forward(&h)?)?;
        if let Some(rows) = rows {
            mlp = mlp.mul(&rows.kept)?;
        }
        Ok(h.add(&mlp.mul(&self.mlp_gate)?)?)
    }
}

/// A cross-attention mask's rows for some tokens.
#[derive(Debug, Clone)]
struct MaskRows {
    /// additive `[batch, 1, rows, keys]`: 0 where a token sees a key, the dtype's lowest elsewhere;
    /// all 0 on a row that sees no key
    bias: Tensor,
    /// `[batch, rows, 1]`: 1 where a row sees some key, else 0 (its MLP output dropped)
    kept: Tensor,
}

/// What the cross-attention layers attend to: each layer's keys and values of the image
/// features, and the prompt's rows of the cross-attention mask (a token past the prompt sees what
/// its last token sees). Made by [`crate::models::CausalLm`] for its layers; a generation keeps it in
/// its [`super::KvCache`].
#[derive(Debug, Clone)]
pub struct CrossAttentionStates {
    /// per cross-attention layer, in order: keys and values `[batch, kv_heads, keys, head_dim]`
    kv: Vec<(Tensor, Tensor)>,
    /// the prompt's mask rows; `None`: every token sees every key
    mask: Option<MaskRows>,
}

impl CrossAttentionStates {
    /// The states of `layers` for `features` `[batch, keys, hidden]`, with `mask` `[batch, seq,
    /// keys]` (bool: which keys each token sees; `None`: all).
    pub(crate) fn new(
        layers: &[&CrossAttentionLayer],
        features: &Tensor,
        mask: Option<&Tensor>,
    ) -> Result<Self> {
        let (b, keys) = (features.dims()[0], features.dims()[1]);
        let kv = layers.iter().map(|l| l.keys_values(features)).collect::<Result<Vec<_>>>()?;
        let mask = match mask {
            Some(m) => {
                if m.rank() != 3 || m.dims()[0] != b || m.dims()[2] != keys || m.dtype() != DType::Bool {
                    return Err(Error::Input(format!(
                        "the cross-attention mask must be a bool [{b}, seq, {keys}] (one column per image \
                         feature), got {:?} of dtype {:?}",
                        m.dims(),
                        m.dtype()
                    )));
                }
                let dtype = features.dtype();
                let m = m.to(features.device())?;
                let kept = m.any_dim(-1, true)?;
                let zeros = Tensor::zeros(m.dims().to_vec(), (dtype, m.device()))?;
                // (A row that sees no key attends to all of them, its MLP output dropped: transformers'.)
                let seen = m.logical_or(&kept.logical_not()?)?;
                let bias = seen.logical_not()?.where_self(lowest(dtype), &zeros)?.unsqueeze(1)?;
                Some(MaskRows { bias, kept: kept.to_dtype(dtype)? })
            }
            None => None,
        };
        Ok(CrossAttentionStates { kv, mask })
    }

    /// The number of rows (prompts).
    pub fn batch(&self) -> usize {
        self.kv.first().map_or(0, |(k, _)| k.dims()[0])
    }

    /// The number of rows of the prompt's mask (the tokens it was made for), where there is one.
    pub fn mask_rows(&self) -> Option<usize> {
        self.mask.as_ref().map(|m| m.kept.dims()[1])
    }

    /// The states as a generation keeps them after its prefill: the mask's last row alone, the one
    /// every new token reads.
    pub(crate) fn after_prompt(&self) -> Result<Self> {
        let mask = match &self.mask {
            Some(m) => {
                let last = m.kept.dims()[1].saturating_sub(1);
                Some(MaskRows {
                    bias: m.bias.narrow(2, last as isize, 1)?,
                    kept: m.kept.narrow(1, last as isize, 1)?,
                })
            }
            None => None,
        };
        Ok(CrossAttentionStates { kv: self.kv.clone(), mask })
    }

    /// The number of cross-attention layers these states are for.
    pub(crate) fn layers(&self) -> usize {
        self.kv.len()
    }

    /// The states of rows `index` (`[n]` int64: repeated prompts, beam search's reordering).
    pub(crate) fn select_rows(&self, index: &Tensor) -> Result<Self> {
        let pick = |t: &Tensor| -> Result<Tensor> { Ok(t.index_select(0, &index.to(t.device())?)?) };
        let kv = self.kv.iter().map(|(k, v)| Ok((pick(k)?, pick(v)?))).collect::<Result<Vec<_>>>()?;
        let mask = match &self.mask {
            Some(m) => Some(MaskRows { bias: pick(&m.bias)?, kept: pick(&m.kept)? }),
            None => None,
        };
        Ok(CrossAttentionStates { kv, mask })
    }

    /// The mask rows of `s` tokens after `past` (rows past the prompt's last repeat it).
    fn rows(&self, past: usize, s: usize) -> Result<Option<MaskRows>> {
        let Some(m) = &self.mask else { return Ok(None) };
        let prompt = m.kept.dims()[1];
        if prompt == 0 {
            return Err(Error::Input("the cross-attention mask has no rows".into()));
        }
        if past == 0 && s == prompt {
            return Ok(Some(m.clone()));
        }
        if past == 0 && s < prompt {
            return Err(Error::Input(format!("the cross-attention mask has {prompt} rows, the tokens {s}")));
        }
        let index: Vec<i64> = (past..past + s).map(|i| i.min(prompt - 1) as i64).collect();
        let index = Tensor::from_vec(index, [s])?.to(m.kept.device())?;
        Ok(Some(MaskRows { bias: m.bias.index_select(2, &index)?, kept: m.kept.index_select(1, &index)? }))
    }
}

/// Runs cross-attention layers over a forward pass's tokens: those of [`CrossAttentionStates`]
/// with the mask rows of the pass's `s` tokens after `past`.
#[derive(Debug)]
pub(crate) struct CrossAttentionPass<'a> {
    states: &'a CrossAttentionStates,
    rows: Option<MaskRows>,
}

impl<'a> CrossAttentionPass<'a> {
    /// The pass of `s` tokens after `past` over `states`.
    pub(crate) fn new(states: &'a CrossAttentionStates, past: usize, s: usize) -> Result<Self> {
        Ok(CrossAttentionPass { states, rows: states.rows(past, s)? })
    }

    /// `h` after `layer`, the `index`-th cross-attention layer.
    pub(crate) fn forward(&self, layer: &CrossAttentionLayer, index: usize, h: &Tensor) -> Result<Tensor> {
        let kv = self.states.kv.get(index).ok_or_else(|| {
            Error::Input(format!(
                "the cross-attention states are for {} layers, not layer {index}",
                self.states.kv.len()
            ))
        })?;
        if kv.0.dims()[0] != h.dims()[0] {
            return Err(Error::Input(format!(
                "the cross-attention states have {} rows, the tokens {}",
                kv.0.dims()[0],
                h.dims()[0]
            )));
        }
        layer.forward(h, kv, self.rows.as_ref())
    }
}
