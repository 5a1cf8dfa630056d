//! Causal self-attention of decoder LMs: grouped KV heads, optional q/k norms, RoPE, a KV cache
//! ([`super::KvCache`]), logit soft-capping, computed as transformers' eager attention (on the CPU,
//! outside autograd and without soft-capping, by `scaled_dot_product_attention`'s fused kernel, in
//! float32 throughout).

use oxtorch_tensor::{DType, Tensor};

use super::{
    apply_rotary, attend_rows, rms_normalized, Arena, DecoderNorm, LatentDims, LatentQkv, LayerCache, Linear,
};
use crate::error::{Error, Result};
use crate::weights::Vars;

/// The shape of one attention layer.
#[derive(Debug, Clone)]
pub struct AttentionConfig {
    /// model width
    pub hidden: usize,
    /// query heads
    pub heads: usize,
    /// key/value heads (divides `heads`)
    pub kv_heads: usize,
    /// per-head width
    pub head_dim: usize,
    /// score scale (usually `head_dim^-0.5`)
    pub scale: f64,
    /// bias on q, k and v
    pub qkv_bias: bool,
    /// bias on the output projection
    pub o_bias: bool,
    /// `tanh(s / c) * c` applied to the scores (Gemma 2)
    pub softcap: Option<f64>,
    /// q and k normed over their whole projection (OLMo 2), not per head
    pub qk_norm_whole: bool,
    /// q, k and v clamped to `[-c, c]` after the projections (OLMo's `clip_qkv`)
    pub clip_qkv: Option<f64>,
    /// The clamp comes after the whole-projection q/k norms, not before them (OLMoE)
    pub clip_after_qk_norm: bool,
    /// DeepSeek's latent attention (`head_dim` is then [`LatentDims::padded`] and `kv_heads` is
    /// `heads`); `qkv_bias` puts biases on its down-projections
    pub latent: Option<LatentDims>,
    /// A learned logit per head, `sinks`, joins each query's softmax as a key whose value is zero
    /// (gpt-oss's attention sinks)
    pub sinks: bool,
    /// The per-head q/k norms apply after RoPE, not before (HunYuan)
    pub qk_norm_after_rope: bool,
    /// The output, before `o_proj`, is gated (see [`OutputGate`])
    pub output_gate: Option<OutputGate>,
    /// Each value head's width where narrower than `head_dim` (MiMo-V2-Flash's `v_head_dim`): the
    /// values are padded with zeros to `head_dim` for attention (and the cache) and the output cut
    /// back before `o_proj`
    pub v_head_dim: Option<usize>,
    /// The values are multiplied by this (MiMo-V2-Flash's `attention_value_scale`)
    pub v_scale: Option<f64>,
    /// The values are RMS-normed per head without a scale, with this epsilon (Gemma 4's `v_norm`)
    pub v_norm: Option<f64>,
    /// The values are the keys' projection before their norm and RoPE; there is no `v_proj`
    /// (Gemma 4's `attention_k_eq_v` on its full layers)
    pub values_from_keys: bool,
    /// The layer projects queries alone and attends to another layer's keys and values (Gemma 4's
    /// KV sharing): no `k_proj`, `v_proj` or key norm
    pub query_only: bool,
    /// Differential attention (DiffLlama; see [`Differential`])
    pub differential: Option<Differential>,
    /// The projections' inputs are fake-quantized to 8-bit integers per row (BitNet's
    /// `ActQuant`, see [`super::fake_quant_int8`])
    pub activation_quant: bool,
}

/// DiffLlama's differential attention: each half of the value heads (repeated to every key/value
/// head) is attended to by every query head; the first half of the heads' outputs (both halves of
/// the values, side by side) less `λ` times the second half's, RMS-normed without a scale and
/// multiplied by `1 − lambda_init`, where `λ = exp(λq1·λk1) − exp(λq2·λk2) + lambda_init` from the
/// layer's `lambda_{q,k}{1,2}` `[head_dim]`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Differential {
    /// `0.8 − 0.6·exp(−0.3·layer)`
    pub lambda_init: f64,
    /// the norm's epsilon (`rms_norm_eps`)
    pub eps: f64,
}

impl AttentionConfig {
    /// Multi-head attention of `heads` heads of `head_dim` (each its own keys and values) over
    /// `hidden`, scaled by `head_dim^-0.5`, without biases or any of the families' extras.
    pub fn plain(hidden: usize, heads: usize, head_dim: usize) -> Self {
        AttentionConfig {
            hidden,
            heads,
            kv_heads: heads,
            head_dim,
            scale: 1.0 / (head_dim as f64).sqrt(),
            qkv_bias: false,
            o_bias: false,
            softcap: None,
            qk_norm_whole: false,
            clip_qkv: None,
            clip_after_qk_norm: false,
            latent: None,
            sinks: false,
            qk_norm_after_rope: false,
            output_gate: None,
            v_head_dim: None,
            v_scale: None,
            v_norm: None,
            values_from_keys: false,
            query_only: false,
            differential: None,
            activation_quant: false,
        }
    }

    /// Each value head's width (`v_head_dim`, else `head_dim`).
    pub fn value_width(&self) -> usize {
        self.v_head_dim.unwrap_or(self.head_dim)
    }
}

/// How attention's output is gated by the layer's input `x` before `o_proj`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutputGate {
    /// `out · sigmoid(gate_proj(x))`, a gate per channel (Qwen3.5's and Qwen3-Next's gated
    /// attention, AFMoE's); `gate_proj` has a bias with `bias`
    Sigmoid {
        /// `gate_proj.bias`
        bias: bool,
    },
    /// `out · sigmoid(g_proj(x))`, a gate per head (`g_proj` `[heads, hidden]`) broadcast over its
    /// channels (LFM3's `use_attention_gate`)
    SigmoidPerHead,
    /// `out · softplus(g_proj(x))`, the softplus in float32, a gate per head broadcast over its
    /// channels (`per_head`) or per channel (Laguna's)
    Softplus {
        /// one gate per head, `g_proj` `[heads, hidden]`
        per_head: bool,
    },
}

/// `softmax(q kᵀ · scale [softcapped] + mask) v` with the softmax in float32, as transformers'
/// `eager_attention_forward`; `k`/`v` may have fewer heads than `q` (grouped-query attention).
/// Without soft-capping, on the CPU, this is `scaled_dot_product_attention`'s fused kernel, which
/// computes the products in float32 too.
///
/// With grouped heads and a mask shared by the heads (`[batch or 1, 1, queries, keys]`), each group's
/// queries are stacked into one `[rep · queries, head_dim]` matrix against its one key/value head,
/// instead of copying k and v `rep` times (transformers' `repeat_kv`): the same products, without
/// the copies.
pub fn eager_attention(
    q: &Tensor,
    k: &Tensor,
    v: &Tensor,
    mask: Option<&Tensor>,
    scale: f64,
    softcap: Option<f64>,
) -> Result<Tensor> {
    let rep = q.dims()[1] / k.dims()[1].max(1);
    if softcap.is_none() && fused_on_cpu(q, k, v, mask) {
        // One fused kernel on the CPU (the scores never reach memory), in float32 throughout.
        return Ok(q.scaled_dot_product_attention(k, v, mask, 0.0, false, Some(scale), rep > 1)?);
    }
    let shared_mask = mask.is_none_or(|m| m.rank() == 4 && m.dims()[1] == 1);
    if rep == 1 || !shared_mask || q.rank() != 4 {
        let (k, v) = (repeat_kv(k, rep)?, repeat_kv(v, rep)?);
        return attend(q, &k, &v, mask, scale, softcap, 1);
    }
    let (b, heads, s, d) = (q.dims()[0], q.dims()[1], q.dims()[2], q.dims()[3]);
    let kv = k.dims()[1];
    let grouped = q.reshape([b, kv, rep * s, d])?;
    // The mask `[b, 1, s, keys]` applies to every head of a group: `[b, 1, 1, s, keys]` against the
    // scores viewed as `[b, kv, rep, s, keys]`.
    let mask = mask.map(|m| m.unsqueeze(1)).transpose()?;
    let out = attend(&grouped, k, v, mask.as_ref(), scale, softcap, rep)?;
    Ok(out.reshape([b, heads, s, d])?)
}

/// True where `scaled_dot_product_attention` may run its fused CPU kernel on these operands: rank
/// 4, on the CPU, computed in float32, with nothing for autograd to record (it composes otherwise,
/// and this module's own composition stacks grouped heads instead of copying k and v).
fn fused_on_cpu(q: &Tensor, k: &Tensor, v: &Tensor, mask: Option<&Tensor>) -> bool {
    let operands = || [Some(q), Some(k), Some(v), mask].into_iter().flatten();
    let recorded = oxtorch_tensor::autograd::is_grad_enabled() && operands().any(Tensor::requires_grad);
    q.rank() == 4
        && matches!(q.dtype(), DType::F32 | DType::F16 | DType::BF16)
        && operands().all(|t| t.device().is_cpu())
        && !recorded
}

/// [`eager_attention`] on equal head counts, or with `rep` > 1 on `q` `[b, kv, rep · s, d]` (each
/// group's queries stacked) and a mask `[b, 1, 1, s, keys]`.
fn attend(
    q: &Tensor,
    k: &Tensor,
    v: &Tensor,
    mask: Option<&Tensor>,
    scale: f64,
    softcap: Option<f64>,
    rep: usize,
) -> Result<Tensor> {
    let mut scores = q.matmul(&k.transpose(2, 3)?)?.mul(scale)?;
    if let Some(c) = softcap {
        scores = scores.div(c)?.tanh()?.mul(c)?;
    }
    if let Some(m) = mask {
        scores = if rep > 1 {
            let d = scores.dims().to_vec();
            let (b, kv, rows, keys) = (d[0], d[1], d[2], d[3]);
            scores.reshape([b, kv, rep, rows / rep, keys])?.add(m)?.reshape([b, kv, rows, keys])?
        } else {
            scores.add(m)?
        };
    }
    let probs = scores.softmax(-1, Some(DType::F32))?.to_dtype(q.dtype())?;
    Ok(probs.matmul(v)?)
}

/// `[b, kv, s, d] -> [b, kv * rep, s, d]`, each head next to its copies.
fn repeat_kv(x: &Tensor, rep: usize) -> Result<Tensor> {
    if rep == 1 {
        return Ok(x.clone());
    }
    let d = x.dims().to_vec();
    Ok(x.unsqueeze(2)?.expand([d[0], d[1], rep, d[2], d[3]])?.reshape([d[0], d[1] * rep, d[2], d[3]])?)
}

/// `k` and `v` `[batch, kv_heads, keys, head_dim]` with one more key of zeros, and the additive
/// `mask` (`[batch or 1, 1 or heads, queries, keys]`; none: zeros) widened to
/// `[batch, heads, queries, keys + 1]`, the new column each head's `sinks` logit: the softmax then
/// shares each query's attention between its keys and the sink, whose value adds nothing
/// (gpt-oss's `torch.cat([scores, sinks])` then dropping the sink's probability).
fn with_sink(
    q: &Tensor,
    k: &Tensor,
    v: &Tensor,
    mask: Option<&Tensor>,
    sinks: &Tensor,
) -> Result<(Tensor, Tensor, Tensor)> {
    let (b, heads, s) = (q.dims()[0], q.dims()[1], q.dims()[2]);
    let (kv, keys, d) = (k.dims()[1], k.dims()[2], k.dims()[3]);
    let zero = Tensor::zeros([b, kv, 1, d], (k.dtype(), k.device()))?;
    let (k, v) = (Tensor::cat(&[k, &zero], 2)?, Tensor::cat(&[v, &zero.to_dtype(v.dtype())?], 2)?);
    let mask = match mask {
        Some(m) => m.expand([b, heads, s, keys])?,
        None => Tensor::zeros([b, heads, s, keys], (q.dtype(), q.device()))?,
    };
    let sink = sinks.to_dtype(mask.dtype())?.reshape([1, heads, 1, 1])?.expand([b, heads, s, 1])?;
    Ok((k, v, Tensor::cat(&[&mask, &sink], -1)?))
}

/// One self-attention layer: `q_proj`, `k_proj`, `v_proj` (or a fused `qkv_proj`, or DeepSeek's
/// latent projections), `o_proj`.
#[derive(Debug, Clone)]
pub struct SelfAttention {
    qkv: Qkv,
    o: Linear,
    q_norm: Option<DecoderNorm>,
    k_norm: Option<DecoderNorm>,
    /// `[heads]` (see [`AttentionConfig::sinks`])
    sinks: Option<Tensor>,
    /// `gate_proj` or `g_proj` (see [`AttentionConfig::output_gate`])
    gate: Option<Linear>,
    /// The differential attention's `λ` (see [`Differential`]).
    lambda: Option<f64>,
    /// A norm of the attention's output before `o_proj` (BitNet's `attn_sub_norm`)
    output_norm: Option<DecoderNorm>,
    cfg: AttentionConfig,
}

#[derive(Debug, Clone)]
enum Qkv {
    Split {
        q: Linear,
        k: Linear,
        v: Linear,
    },
    Fused(Linear),
    Latent(Box<LatentQkv>),
    /// The values are the keys' projection (see [`AttentionConfig::values_from_keys`]).
    KeysAsValues {
        q: Linear,
        k: Linear,
    },
    /// Queries alone (see [`AttentionConfig::query_only`]).
    QueryOnly(Linear),
}

impl SelfAttention {
    /// Loads `vars.{q,k,v,o}_proj` (or `qkv_proj`) and, when given, per-head q/k norms (`qk_norm`
    /// loads one from its variables, head count and width).
    pub fn load(
        vars: &Vars<'_>,
        cfg: AttentionConfig,
        qk_norm: Option<impl Fn(&Vars<'_>, usize, usize) -> Result<DecoderNorm>>,
    ) -> Result<Self> {
        let (h, hd) = (cfg.hidden, cfg.head_dim);
        // (Checked: a corrupt config's sizes give an error, not an overflow.)
        let too_large = || {
            Error::Config(format!("the attention's projections ({} heads of {hd}) are too large", cfg.heads))
        };
        let (qd, kvd) = (
            cfg.heads.checked_mul(hd).ok_or_else(too_large)?,
            cfg.kv_heads.checked_mul(hd).ok_or_else(too_large)?,
        );
        let vd = cfg.kv_heads.checked_mul(cfg.value_width()).ok_or_else(too_large)?;
        let qkv = if let Some(dims) = cfg.latent {
            Qkv::Latent(Box::new(LatentQkv::load(vars, h, cfg.heads, dims, cfg.qkv_bias)?))
        } else if cfg.query_only {
            Qkv::QueryOnly(Linear::load(&vars.pp("q_proj"), h, qd, cfg.qkv_bias)?)
        } else if cfg.values_from_keys {
            Qkv::KeysAsValues {
                q: Linear::load(&vars.pp("q_proj"), h, qd, cfg.qkv_bias)?,
                k: Linear::load(&vars.pp("k_proj"), h, kvd, cfg.qkv_bias)?,
            }
        } else if vars.pp("qkv_proj").contains("weight") {
            let rows = qd.checked_add(kvd).and_then(|n| n.checked_add(vd)).ok_or_else(too_large)?;
            Qkv::Fused(Linear::load(&vars.pp("qkv_proj"), h, rows, cfg.qkv_bias)?)
        } else {
            Qkv::Split {
                q: Linear::load(&vars.pp("q_proj"), h, qd, cfg.qkv_bias)?,
                k: Linear::load(&vars.pp("k_proj"), h, kvd, cfg.qkv_bias)?,
                v: Linear::load(&vars.pp("v_proj"), h, vd, cfg.qkv_bias)?,
            }
        };
        let o_in = cfg.latent.map_or(cfg.heads * cfg.value_width(), |d| cfg.heads * d.v);
        let o = Linear::load(&vars.pp("o_proj"), o_in, h, cfg.o_bias)?;
        // Per head (`head_dim`), or over the whole projection (OLMo 2).
        let (q_dim, k_dim) = if cfg.qk_norm_whole { (qd, kvd) } else { (hd, hd) };
        let (q_norm, k_norm) = match qk_norm {
            Some(load) if cfg.query_only => (Some(load(&vars.pp("q_norm"), cfg.heads, q_dim)?), None),
            Some(load) => (
                Some(load(&vars.pp("q_norm"), cfg.heads, q_dim)?),
                Some(load(&vars.pp("k_norm"), cfg.kv_heads, k_dim)?),
            ),
            None => (None, None),
        };
        let sinks = if cfg.sinks { Some(vars.get("sinks", &[cfg.heads])?) } else { None };
        // (Not packed: read as the model's dtype.)
        let gate = match cfg.output_gate {
            Some(OutputGate::Sigmoid { bias }) => {
                Some(Linear::load(&vars.pp("gate_proj").casting_matrices(), h, qd, bias)?)
            }
            Some(OutputGate::SigmoidPerHead) => {
                Some(Linear::load(&vars.pp("g_proj").casting_matrices(), h, cfg.heads, false)?)
            }
            Some(OutputGate::Softplus { per_head }) => {
                let width = if per_head { cfg.heads } else { qd };
                Some(Linear::load(&vars.pp("g_proj").casting_matrices(), h, width, false)?)
            }
            None => None,
        };
        let lambda = match cfg.differential {
            Some(d) => {
                if !cfg.heads.is_multiple_of(2) || !cfg.kv_heads.is_multiple_of(2) {
                    return Err(Error::Config(format!(
                        "differential attention splits the heads and the key/value heads in two: num_attention_heads \
                         ({}) and num_key_value_heads ({}) must be even",
                        cfg.heads, cfg.kv_heads
                    )));
                }
                // (In float32, as transformers sums and exponentiates them.)
                let read = |name: &str| -> Result<Vec<f32>> {
                    Ok(vars
                        .get_as_stored(name, &[hd])?
                        .to_dtype(DType::F32)?
                        .to(oxtorch_tensor::Device::Cpu)?
                        .contiguous()?
                        .to_vec::<f32>()?)
                };
                let dot = |a: &[f32], b: &[f32]| a.iter().zip(b).map(|(x, y)| x * y).sum::<f32>().exp();
                let (q1, k1, q2, k2) =
                    (read("lambda_q1")?, read("lambda_k1")?, read("lambda_q2")?, read("lambda_k2")?);
                Some((dot(&q1, &k1) - dot(&q2, &k2)) as f64 + d.lambda_init)
            }
            None => None,
        };
        Ok(SelfAttention { qkv, o, q_norm, k_norm, sinks, gate, lambda, output_norm: None, cfg })
    }

    /// This attention with `norm` applied to its output before `o_proj` (BitNet's
    /// `attn_sub_norm`).
    pub fn with_output_norm(mut self, norm: DecoderNorm) -> Self {
        self.output_norm = Some(norm);
        self
    }

    /// `x` as the projections read it: fake-quantized to 8-bit integers per row with
    /// [`AttentionConfig::activation_quant`], else as it is.
    fn projection_input(&self, x: &Tensor) -> Result<Tensor> {
        match self.cfg.activation_quant {
            true => super::fake_quant_int8(x),
            false => Ok(x.clone()),
        }
    }

    /// The projection weights in the order [`SelfAttention::unpack`] takes them back: q, k, v (or the
    /// fused qkv), o.
    pub fn matrices(&self) -> Vec<&Tensor> {
        let mut m = match &self.qkv {
            Qkv::Split { q, k, v } => vec![&q.weight, &k.weight, &v.weight],
            Qkv::Fused(l) => vec![&l.weight],
            Qkv::KeysAsValues { q, k } => vec![&q.weight, &k.weight],
            Qkv::QueryOnly(q) => vec![&q.weight],
            // (The latent projections keep their own matrices.)
            Qkv::Latent(_) => Vec::new(),
        };
        m.push(&self.o.weight);
        m
    }

    /// Takes the weights back from `arena` (packed from [`SelfAttention::matrices`]), fusing q, k and v
    /// into one projection (their rows are neighbours there) when their biases agree.
    pub fn unpack(&mut self, arena: &mut Arena) -> Result<()> {
        let c = &self.cfg;
        let (qd, kvd, vd) = (c.heads * c.head_dim, c.kv_heads * c.head_dim, c.kv_heads * c.value_width());
        self.qkv = match &self.qkv {
            Qkv::Split { q, k, v } => match (&q.bias, &k.bias, &v.bias) {
                (None, None, None) => {
                    Qkv::Fused(Linear { weight: arena.next(&[qd + kvd + vd, c.hidden])?, bias: None })
                }
                (Some(qb), Some(kb), Some(vb)) => Qkv::Fused(Linear {
                    weight: arena.next(&[qd + kvd + vd, c.hidden])?,
                    bias: Some(Tensor::cat(&[qb, kb, vb], 0)?),
                }),
                _ => Qkv::Split {
                    q: Linear { weight: arena.next(&[qd, c.hidden])?, bias: q.bias.clone() },
                    k: Linear { weight: arena.next(&[kvd, c.hidden])?, bias: k.bias.clone() },
                    v: Linear { weight: arena.next(&[vd, c.hidden])?, bias: v.bias.clone() },
                },
            },
            Qkv::Fused(l) => {
                Qkv::Fused(Linear { weight: arena.next(&[qd + kvd + vd, c.hidden])?, bias: l.bias.clone() })
            }
            Qkv::Latent(l) => Qkv::Latent(l.clone()),
            Qkv::KeysAsValues { q, k } => Qkv::KeysAsValues {
                q: Linear { weight: arena.next(&[qd, c.hidden])?, bias: q.bias.clone() },
                k: Linear { weight: arena.next(&[kvd, c.hidden])?, bias: k.bias.clone() },
            },
            Qkv::QueryOnly(q) => {
                Qkv::QueryOnly(Linear { weight: arena.next(&[qd, c.hidden])?, bias: q.bias.clone() })
            }
        };
        self.o.weight =
            arena.next(&[c.hidden, c.latent.map_or(c.heads * c.value_width(), |d| c.heads * d.v)])?;
        Ok(())
    }

    /// `x` `[batch, seq, hidden]` attending to itself and the cached positions; `cos`/`sin` from
    /// [`super::Rotary::cos_sin`], `mask` additive `[batch, 1, seq, keys]` where `keys` is what the
    /// cache's `prepare(seq)` returned (`seq` without a cache).
    pub fn forward(
        &self,
        x: &Tensor,
        cos: &Tensor,
        sin: &Tensor,
        mask: Option<&Tensor>,
        cache: Option<&mut LayerCache>,
    ) -> Result<Tensor> {
        self.forward_scaled(x, cos, sin, None, mask, cache)
    }

    /// [`SelfAttention::forward`] with the rotated queries multiplied by `q_scale`
    /// `[batch, 1, seq, 1]` (Ministral 3's per-position scale), when given.
    pub fn forward_scaled(
        &self,
        x: &Tensor,
        cos: &Tensor,
        sin: &Tensor,
        q_scale: Option<&Tensor>,
        mask: Option<&Tensor>,
        cache: Option<&mut LayerCache>,
    ) -> Result<Tensor> {
        Ok(self.forward_sharing(x, cos, sin, q_scale, mask, cache, None)?.0)
    }

    /// [`SelfAttention::forward_scaled`] that also returns the keys and values attention read
    /// (`[batch, kv_heads, keys, head_dim]`, the cache's when there is one), for the later layers
    /// that attend to them (Gemma 4's KV sharing); or, given `shared` keys and values, attending to
    /// those with this layer's queries alone (the cache is then not written).
    #[allow(clippy::too_many_arguments)]
    pub fn forward_sharing(
        &self,
        x: &Tensor,
        cos: &Tensor,
        sin: &Tensor,
        q_scale: Option<&Tensor>,
        mask: Option<&Tensor>,
        cache: Option<&mut LayerCache>,
        shared: Option<&(Tensor, Tensor)>,
    ) -> Result<(Tensor, (Tensor, Tensor))> {
        let (q, k, v) = match shared {
            Some((k, v)) => (self.project_query(x, cos, sin, q_scale)?, k.clone(), v.clone()),
            None => {
                let (q, k, v) = self.project(x, cos, sin, q_scale)?;
                let (k, v) = match cache {
                    Some(cache) => cache.update(k, v)?,
                    None => (k, v),
                };
                (q, k, v)
            }
        };
        let out = self.attend(&q, &k, &v, mask, x)?;
        Ok((out, (k, v)))
    }

    /// Attention of `q` to `k`, `v` under `mask`, through the output projection (`x` is the
    /// layer's input, which an output gate reads).
    fn attend(
        &self,
        q: &Tensor,
        k: &Tensor,
        v: &Tensor,
        mask: Option<&Tensor>,
        x: &Tensor,
    ) -> Result<Tensor> {
        if let (Some(lambda), Some(d)) = (self.lambda, self.cfg.differential) {
            return self.attend_differentially(q, k, v, mask, x, lambda, d);
        }
        if let Some(sinks) = &self.sinks {
            let (k, v, mask) = with_sink(q, k, v, mask, sinks)?;
            let out = eager_attention(q, &k, &v, Some(&mask), self.cfg.scale, self.cfg.softcap)?;
            return self.output(&out.transpose(1, 2)?, x);
        }
        let out = eager_attention(q, k, v, mask, self.cfg.scale, self.cfg.softcap)?;
        self.output(&out.transpose(1, 2)?, x)
    }

    /// DiffLlama's attention (see [`Differential`]) of `q` to `k`, `v` `[batch, heads, keys,
    /// head_dim]`, through the output projection.
    #[allow(clippy::too_many_arguments)]
    fn attend_differentially(
        &self,
        q: &Tensor,
        k: &Tensor,
        v: &Tensor,
        mask: Option<&Tensor>,
        x: &Tensor,
        lambda: f64,
        d: Differential,
    ) -> Result<Tensor> {
        let half = v.dims()[1] / 2;
        let (c, heads) = (&self.cfg, q.dims()[1]);
        let mut outputs = Vec::with_capacity(2);
        for part in [v.narrow(1, 0, half)?, v.narrow(1, half as isize, half)?] {
            let values = Tensor::cat(&[&part, &part], 1)?;
            outputs.push(eager_attention(q, k, &values, mask, c.scale, c.softcap)?);
        }
        let both = Tensor::cat(&[&outputs[0], &outputs[1]], -1)?;
        let (first, second) =
            (both.narrow(1, 0, heads / 2)?, both.narrow(1, (heads / 2) as isize, heads / 2)?);
        let lambda = Tensor::full([], lambda, (both.dtype(), both.device()))?;
        let diff = first.sub(&second.mul(&lambda)?)?;
        let out = rms_normalized(&diff, d.eps)?.mul(1.0 - d.lambda_init)?;
        self.output(&out.transpose(1, 2)?, x)
    }

    /// Whether the layer has attention sinks or differential attention (which
    /// [`SelfAttention::forward_packed`] does not take).
    pub fn has_sinks(&self) -> bool {
        self.sinks.is_some() || self.lambda.is_some()
    }

    /// [`SelfAttention::forward`] of several sequences' tokens packed into one `x`
    /// `[1, tokens, hidden]` (`cos`/`sin`, and `q_scale` when given, at each token's own position),
    /// without a cache: the
    /// projections run once over all tokens, attention per sequence over its own tokens. `rows`
    /// gives each sequence's `(first token, token count)` in `x`, `masks` its additive mask
    /// `[1, 1, count, count]`.
    pub fn forward_packed(
        &self,
        x: &Tensor,
        cos: &Tensor,
        sin: &Tensor,
        q_scale: Option<&Tensor>,
        rows: &[(usize, usize)],
        masks: &[Tensor],
    ) -> Result<Tensor> {
        let (q, k, v) = self.project(x, cos, sin, q_scale)?;
        let c = &self.cfg;
        self.output(&attend_rows(&q, &k, &v, rows, Some(masks), c.scale, c.softcap)?, x)
    }

    /// The queries of `x` `[batch, seq, hidden]` as `[batch, heads, seq, head_dim]`, normed (when
    /// the layer has a q norm), rotated and multiplied by `q_scale`: what a layer that attends to
    /// another's keys and values computes.
    fn project_query(
        &self,
        x: &Tensor,
        cos: &Tensor,
        sin: &Tensor,
        q_scale: Option<&Tensor>,
    ) -> Result<Tensor> {
        let Qkv::QueryOnly(proj) = &self.qkv else {
            return Ok(self.project(x, cos, sin, q_scale)?.0);
        };
        let (b, s) = (x.dims()[0], x.dims()[1]);
        let c = &self.cfg;
        let mut q = proj.forward(&self.projection_input(x)?)?.reshape([b, s, c.heads, c.head_dim])?;
        if let (Some(qn), false) = (&self.q_norm, c.qk_norm_after_rope) {
            q = qn.forward(&q)?;
        }
        let mut q = apply_rotary(&q.transpose(1, 2)?, cos, sin)?;
        if let (Some(qn), true) = (&self.q_norm, c.qk_norm_after_rope) {
            q = qn.forward(&q)?;
        }
        match q_scale {
            Some(scale) => Ok(q.mul(scale)?),
            None => Ok(q),
        }
    }

    /// q, k and v of `x` `[batch, seq, hidden]` as `[batch, heads, seq, head_dim]`, q and k normed
    /// (when the layer has q/k norms) and rotated, q then multiplied by `q_scale`.
    fn project(
        &self,
        x: &Tensor,
        cos: &Tensor,
        sin: &Tensor,
        q_scale: Option<&Tensor>,
    ) -> Result<(Tensor, Tensor, Tensor)> {
        let (q, k, v) = self.project_rotated(x, cos, sin)?;
        match q_scale {
            Some(scale) => Ok((q.mul(scale)?, k, v)),
            None => Ok((q, k, v)),
        }
    }

    /// q, k and v of `x` `[batch, seq, hidden]` as `[batch, heads, seq, head_dim]`, q and k normed
    /// (when the layer has q/k norms) and rotated.
    fn project_rotated(&self, x: &Tensor, cos: &Tensor, sin: &Tensor) -> Result<(Tensor, Tensor, Tensor)> {
        let x = &self.projection_input(x)?;
        let (b, s) = (x.dims()[0], x.dims()[1]);
        let c = &self.cfg;
        let (qd, kvd) = (c.heads * c.head_dim, c.kv_heads * c.head_dim);
        let vd = c.kv_heads * c.value_width();
        let heads = |t: &Tensor, n: usize| -> Result<Tensor> {
            Ok(t.reshape([b, s, n, c.head_dim])?.transpose(1, 2)?)
        };
        // The values as heads: scaled, and padded to `head_dim` where narrower.
        let value_heads = |t: &Tensor| -> Result<Tensor> {
            let t = match c.v_scale {
                Some(scale) => t.mul(scale)?,
                None => t.clone(),
            };
            let width = c.value_width();
            let v = t.reshape([b, s, c.kv_heads, width])?;
            let v = match c.v_norm {
                Some(eps) => rms_normalized(&v, eps)?,
                None => v,
            };
            let v = if width < c.head_dim {
                let zeros = Tensor::zeros([b, s, c.kv_heads, c.head_dim - width], (v.dtype(), v.device()))?;
                Tensor::cat(&[&v, &zeros], -1)?
            } else {
                v
            };
            Ok(v.transpose(1, 2)?)
        };
        let plain = self.q_norm.is_none() && c.clip_qkv.is_none();
        Ok(match &self.qkv {
            Qkv::Latent(l) => l.project(x, cos, sin)?,
            Qkv::Fused(l) if plain => {
                // q and k are neighbours in the fused output: one rotary pass over both.
                let all = l.forward(x)?;
                let qk =
                    apply_rotary(&heads(&all.narrow(-1, 0, qd + kvd)?, c.heads + c.kv_heads)?, cos, sin)?;
                let v = value_heads(&all.narrow(-1, (qd + kvd) as isize, vd)?)?;
                (qk.narrow(1, 0, c.heads)?, qk.narrow(1, c.heads as isize, c.kv_heads)?, v)
            }
            _ => {
                let (mut q, mut k, mut v) = match &self.qkv {
                    Qkv::Split { q, k, v } => (q.forward(x)?, k.forward(x)?, v.forward(x)?),
                    Qkv::KeysAsValues { q, k } => {
                        let k = k.forward(x)?;
                        (q.forward(x)?, k.clone(), k)
                    }
                    Qkv::QueryOnly(_) => return Err(Error::Input(
                        "this attention layer reads another layer's keys and values, which were not given"
                            .into(),
                    )),
                    Qkv::Fused(l) => {
                        let all = l.forward(x)?;
                        let parts = all.split_with_sizes(&[qd, kvd, vd], -1)?;
                        (parts[0].clone(), parts[1].clone(), parts[2].clone())
                    }
                    Qkv::Latent(_) => unreachable!("latent projections are matched above"),
                };
                let clip = |q: &mut Tensor, k: &mut Tensor, v: &mut Tensor| -> Result<()> {
                    if let Some(c) = c.clip_qkv {
                        let clamp = |t: &Tensor| t.clamp(Some((-c).into()), Some(c.into()));
                        (*q, *k, *v) = (clamp(q)?, clamp(k)?, clamp(v)?);
                    }
                    Ok(())
                };
                if !c.clip_after_qk_norm {
                    clip(&mut q, &mut k, &mut v)?;
                }
                if let (true, Some(qn), Some(kn)) = (c.qk_norm_whole, &self.q_norm, &self.k_norm) {
                    (q, k) = (qn.forward(&q)?, kn.forward(&k)?);
                }
                if c.clip_after_qk_norm {
                    clip(&mut q, &mut k, &mut v)?;
                }
                let (mut q, mut k) =
                    (q.reshape([b, s, c.heads, c.head_dim])?, k.reshape([b, s, c.kv_heads, c.head_dim])?);
                let per_head = self.q_norm.as_ref().zip(self.k_norm.as_ref()).filter(|_| !c.qk_norm_whole);
                if let (Some((qn, kn)), false) = (per_head, c.qk_norm_after_rope) {
                    q = qn.forward(&q)?;
                    k = kn.forward(&k)?;
                }
                let mut q = apply_rotary(&q.transpose(1, 2)?, cos, sin)?;
                let mut k = apply_rotary(&k.transpose(1, 2)?, cos, sin)?;
                if let (Some((qn, kn)), true) = (per_head, c.qk_norm_after_rope) {
                    q = qn.forward(&q)?;
                    k = kn.forward(&k)?;
                }
                (q, k, value_heads(&v)?)
            }
        })
    }

    /// The output projection of the attention `out` `[batch, seq, heads, head_dim]`.
    fn output(&self, out: &Tensor, x: &Tensor) -> Result<Tensor> {
        if let Qkv::Latent(l) = &self.qkv {
            return self.o.forward(&self.projection_input(&l.values(out)?)?);
        }
        let (b, s) = (out.dims()[0], out.dims()[1]);
        let (heads, head_dim) = (self.cfg.heads, self.cfg.value_width());
        // (Values narrower than the heads: their padding cut off.)
        let out = if head_dim < self.cfg.head_dim {
            out.narrow(-1, 0, head_dim)?.contiguous()?
        } else {
            out.clone()
        };
        let out = out.reshape([b, s, heads * head_dim])?;
        let gated = match (&self.gate, self.cfg.output_gate) {
            (Some(gate), Some(OutputGate::Sigmoid { .. })) => out.mul(&gate.forward(x)?.sigmoid()?)?,
            (Some(gate), Some(OutputGate::SigmoidPerHead)) => {
                let g = gate.forward(x)?.sigmoid()?.unsqueeze(-1)?;
                out.reshape([b, s, heads, head_dim])?.mul(&g)?.reshape([b, s, heads * head_dim])?
            }
            (Some(gate), Some(OutputGate::Softplus { per_head })) => {
                let g = gate.forward(x)?.to_dtype(DType::F32)?.softplus(1.0, 20.0)?.to_dtype(out.dtype())?;
                match per_head {
                    true => out.reshape([b, s, heads, head_dim])?.mul(&g.unsqueeze(-1)?)?.reshape([
                        b,
                        s,
                        heads * head_dim,
                    ])?,
                    false => out.mul(&g)?,
                }
            }
            _ => out,
        };
        let normed = match &self.output_norm {
            Some(norm) => norm.forward(&gated)?,
            None => gated,
        };
        self.o.forward(&self.projection_input(&normed)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::weights::Weights;

    /// Projection sizes past `usize` (a corrupt config's) are an error, never an overflow.
    #[test]
    fn oversized_projections_are_an_error() {
        let weights = Weights::from_tensors([(
            "qkv_proj.weight".to_string(),
            Tensor::zeros([3, 2], DType::F32).unwrap(),
        )]);
        let huge = usize::MAX / 2;
        let cfg = AttentionConfig::plain(huge, 1, huge);
        type NormLoader = fn(&Vars<'_>, usize, usize) -> Result<DecoderNorm>;
        let no_norm: Option<NormLoader> = None;
        let Err(err) = SelfAttention::load(&weights.vars(""), cfg, no_norm) else { panic!("loaded") };
        let err = err.to_string();
        assert!(err.contains("too large"), "{err}");
    }
}
