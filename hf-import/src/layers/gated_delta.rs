//! The gated delta rule's linear attention (transformers' `Qwen3_5GatedDeltaNet`, Qwen3.5's and
//! Qwen3-Next's `linear_attention` layers): q, k and v from one projection through a causal
//! depthwise convolution, then per value head a `[key dim, value dim]` state that decays by
//! `exp(g)`, is corrected toward each new value by the delta rule (`beta` its step), and is read
//! by the query; the output is normed per head, gated by `silu(z)`, and projected back.
//!
//! The recurrence runs on the host in float32, as transformers' `torch_recurrent_gated_delta_rule`
//! (its chunked form over a prompt is the same sum, blockwise), each value head of each row on
//! its own thread.

use oxtorch_tensor::{DType, Device, Tensor};
use rayon::prelude::*;

use super::{masked, Activation, CausalConv, Linear, SsmState};
use crate::error::{Error, Result};
use crate::weights::Vars;

/// A gated delta net's sizes (`linear_*` keys of Qwen3.5's config).
#[derive(Debug, Clone, Copy)]
pub struct DeltaNetDims {
    /// the model's hidden size
    pub hidden: usize,
    /// query/key heads (`linear_num_key_heads`) of `key_dim` (`linear_key_head_dim`)
    pub key_heads: usize,
    pub key_dim: usize,
    /// value heads (`linear_num_value_heads`, a multiple of the key heads) of `value_dim`
    pub value_heads: usize,
    pub value_dim: usize,
    /// the convolution's width (`linear_conv_kernel_dim`)
    pub kernel: usize,
    /// the convolution's activation (`hidden_act`)
    pub act: Activation,
    /// the output norm's epsilon (`rms_norm_eps`)
    pub eps: f64,
}

impl DeltaNetDims {
    /// Checks the sizes: all positive, the value heads a multiple of the key heads, the
    /// projections' widths (queries and keys, values and their gate) representable.
    pub(crate) fn check(&self) -> Result<()> {
        let DeltaNetDims { hidden, key_heads, key_dim, value_heads, value_dim, kernel, .. } = *self;
        let widths = key_heads
            .checked_mul(key_dim)
            .and_then(|k| k.checked_mul(2)?.checked_add(value_heads.checked_mul(value_dim)?.checked_mul(2)?));
        if widths.is_none() {
            return Err(Error::Config(format!(
                "a gated delta net of {key_heads} key heads of {key_dim} and {value_heads} value heads of \
                 {value_dim} is too large"
            )));
        }
        if [hidden, key_heads, key_dim, value_heads, value_dim, kernel].contains(&0)
            || value_heads % key_heads != 0
        {
            return Err(Error::Config(format!(
                "a gated delta net needs positive sizes and value heads ({value_heads}) a multiple of the key heads \
                 ({key_heads}), got {key_dim}-wide keys, {value_dim}-wide values, a convolution of {kernel}"
            )));
        }
        Ok(())
    }
}

/// One `linear_attention` layer.
#[derive(Debug, Clone)]
pub struct GatedDeltaNet {
    in_proj_qkv: Linear,
    in_proj_z: Linear,
    in_proj_b: Linear,
    in_proj_a: Linear,
    conv: CausalConv,
    /// `dt_bias` `[value heads]`
    dt_bias: Tensor,
    /// `-exp(A_log)` `[value heads]`, float32
    neg_a: Tensor,
    /// the per-head output norm's scale `[value dim]`
    norm_weight: Tensor,
    out_proj: Linear,
    dims: DeltaNetDims,
}

impl GatedDeltaNet {
    /// `v.in_proj_qkv`, `v.in_proj_z`, `v.in_proj_b`, `v.in_proj_a`, `v.conv1d` (no bias),
    /// `v.dt_bias`, `v.A_log`, `v.norm.weight`, `v.out_proj`.
    pub fn load(v: &Vars<'_>, dims: &DeltaNetDims) -> Result<Self> {
        dims.check()?;
        let DeltaNetDims { hidden, key_heads, key_dim, value_heads, value_dim, kernel, act, .. } = *dims;
        let (keys, values) = (key_heads * key_dim, value_heads * value_dim);
        let neg_a = v.get_as_stored("A_log", &[value_heads])?.to_dtype(DType::F32)?.exp()?.neg()?;
        Ok(GatedDeltaNet {
            in_proj_qkv: Linear::load(&v.pp("in_proj_qkv"), hidden, 2 * keys + values, false)?,
            in_proj_z: Linear::load(&v.pp("in_proj_z"), hidden, values, false)?,
            in_proj_b: Linear::load(&v.pp("in_proj_b"), hidden, value_heads, false)?,
            in_proj_a: Linear::load(&v.pp("in_proj_a"), hidden, value_heads, false)?,
            conv: CausalConv::load(&v.pp("conv1d"), 2 * keys + values, kernel, false, act)?,
            dt_bias: v.get("dt_bias", &[value_heads])?,
            neg_a,
            norm_weight: v.get("norm.weight", &[value_dim])?,
            out_proj: Linear::load(&v.pp("out_proj"), values, hidden, false)?,
            dims: *dims,
        })
    }

    /// An empty state for `batch` new sequences: the convolution's last inputs (in `dtype`) and
    /// each value head's `[key dim, value dim]` state (float32).
    pub fn new_state(&self, batch: usize, dtype: DType) -> Result<SsmState> {
        let d = &self.dims;
        let device = self.neg_a.device();
        Ok(SsmState {
            conv: Tensor::zeros([batch, self.conv.channels(), d.kernel - 1], (dtype, device))?,
            ssm: Tensor::zeros([batch, d.value_heads, d.key_dim, d.value_dim], (DType::F32, device))?,
        })
    }

    /// The layer on `h` `[batch, seq, hidden]` (`mask` `[batch, seq]`: the padded tokens' zeros)
    /// after the tokens `state` holds, which it advances past these.
    pub fn forward(&self, h: &Tensor, mask: Option<&Tensor>, state: &mut SsmState) -> Result<Tensor> {
        let d = &self.dims;
        let (batch, seq, dtype) = (h.dims()[0], h.dims()[1], h.dtype());
        let x = masked(h, mask)?;
        let qkv = self.conv.forward(&self.in_proj_qkv.forward(&x)?.transpose(1, 2)?, &mut state.conv)?;
        let qkv = qkv.transpose(1, 2)?;
        let keys = d.key_heads * d.key_dim;
        let q = qkv.narrow(-1, 0, keys)?;
        let k = qkv.narrow(-1, keys as isize, keys)?;
        let v = qkv.narrow(-1, 2 * keys as isize, d.value_heads * d.value_dim)?;
        let beta = self.in_proj_b.forward(&x)?.sigmoid()?;
        let a = self.in_proj_a.forward(&x)?.to_dtype(DType::F32)?;
        let g = a.add(&self.dt_bias.to_dtype(DType::F32)?)?.softplus(1.0, 20.0)?.mul(&self.neg_a)?;
        let core = delta_rule(d, &q, &k, &v, &g, &beta, &mut state.ssm)?.to_dtype(dtype)?;
        // The per-head norm (its scale applied in the input's dtype), then the gate in float32.
        let core = core.reshape([batch, seq, d.value_heads, d.value_dim])?;
        let c32 = core.to_dtype(DType::F32)?;
        let normed = c32.mul(&c32.square()?.mean(-1, true)?.add(d.eps)?.rsqrt()?)?.to_dtype(dtype)?;
        let z = self.in_proj_z.forward(&x)?.reshape([batch, seq, d.value_heads, d.value_dim])?;
        let gated =
            self.norm_weight.mul(&normed)?.to_dtype(DType::F32)?.mul(&z.to_dtype(DType::F32)?.silu()?)?;
        let out = gated.to_dtype(dtype)?.reshape([batch, seq, d.value_heads * d.value_dim])?;
        self.out_proj.forward(&out)
    }
}

/// The gated delta rule over a sequence (q, k `[batch, seq, key heads × key dim]`, v
/// `[batch, seq, value heads × value dim]`, g and beta `[batch, seq, value heads]`) from `state`
/// `[batch, value heads, key dim, value dim]`, which it replaces with the state after the last
/// token; returns the outputs `[batch, seq, value heads × value dim]` (float32). q and k are
/// L2-normed (epsilon 1e-6) and q scaled by `key dim^-1/2`; value head `j` reads key head
/// `j / (value heads / key heads)`.
fn delta_rule(
    d: &DeltaNetDims,
    q: &Tensor,
    k: &Tensor,
    v: &Tensor,
    g: &Tensor,
    beta: &Tensor,
    state: &mut Tensor,
) -> Result<Tensor> {
    let (batch, seq) = (q.dims()[0], q.dims()[1]);
    let (hk, dk, hv, dv) = (d.key_heads, d.key_dim, d.value_heads, d.value_dim);
    let device = q.device();
    let host = |t: &Tensor| -> Result<Vec<f32>> {
        Ok(t.to(Device::Cpu)?.to_dtype(DType::F32)?.contiguous()?.to_vec::<f32>()?)
    };
    let (q, k, v, g, beta) = (host(q)?, host(k)?, host(v)?, host(g)?, host(beta)?);
    let mut s = host(state)?;
    let mut out = vec![0f32; batch * seq * hv * dv];
    // One task per (row, value head): its state, and its outputs gathered after.
    let per_head: Vec<Vec<f32>> = s
        .par_chunks_mut(dk * dv)
        .enumerate()
        .map(|(task, s)| {
            let (r, j) = (task / hv, task % hv);
            let kh = j / (hv / hk);
            let scale = 1.0 / (dk as f32).sqrt();
            let mut ys = vec![0f32; seq * dv];
            let (mut qn, mut kn, mut mem) = (vec![0f32; dk], vec![0f32; dk], vec![0f32; dv]);
            let l2 = |x: &[f32], out: &mut [f32], scale: f32| {
                let inv = 1.0 / (x.iter().map(|a| a * a).sum::<f32>() + 1e-6).sqrt();
                out.iter_mut().zip(x).for_each(|(o, a)| *o = a * inv * scale);
            };
            for t in 0..seq {
                let row = r * seq + t;
                let at_k = (row * hk + kh) * dk;
                l2(&q[at_k..at_k + dk], &mut qn, scale);
                l2(&k[at_k..at_k + dk], &mut kn, 1.0);
                let vt = &v[(row * hv + j) * dv..(row * hv + j + 1) * dv];
                let (decay, b) = (g[row * hv + j].exp(), beta[row * hv + j]);
                s.iter_mut().for_each(|x| *x *= decay);
                mem.iter_mut().for_each(|m| *m = 0.0);
                for (kk, &kv) in kn.iter().enumerate() {
                    let srow = &s[kk * dv..(kk + 1) * dv];
                    mem.iter_mut().zip(srow).for_each(|(m, &x)| *m += x * kv);
                }
                for (m, &vv) in mem.iter_mut().zip(vt) {
                    *m = (vv - *m) * b;
                }
                let y = &mut ys[t * dv..(t + 1) * dv];
                for kk in 0..dk {
                    let srow = &mut s[kk * dv..(kk + 1) * dv];
                    let (kv, qv) = (kn[kk], qn[kk]);
                    for ((x, &delta), yv) in srow.iter_mut().zip(mem.iter()).zip(y.iter_mut()) {
                        *x += kv * delta;
                        *yv += *x * qv;
                    }
                }
            }
            ys
        })
        .collect();
    for (task, ys) in per_head.into_iter().enumerate() {
        let (r, j) = (task / hv, task % hv);
        for t in 0..seq {
            let at = ((r * seq + t) * hv + j) * dv;
            out[at..at + dv].copy_from_slice(&ys[t * dv..(t + 1) * dv]);
        }
    }
    *state = Tensor::from_vec(s, [batch, hv, dk, dv])?.to(device)?;
    Ok(Tensor::from_vec(out, [batch, seq, hv * dv])?.to(device)?)
}
