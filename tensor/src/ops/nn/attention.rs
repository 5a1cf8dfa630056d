//! `scaled_dot_product_attention`: `softmax(q kᵀ · scale + mask) v`, one fused kernel on the CPU
//! ([`NnOp::Attention`]) for rank-4 float inputs without dropout, a composition of prims elsewhere.

use oxtorch_core::ops::{NnOp, Prim};
use oxtorch_core::{DType, Error, Result};

use super::safe_softmax_last;
use crate::dispatch::apply1;
use crate::ops::linalg::{cpp_name, opmath};
use crate::Tensor;

/// Repeats dim -3 of `t` `r` times, each head next to its copies (torch's `repeat_interleave`).
fn repeat_heads(t: &Tensor, r: usize) -> Result<Tensor> {
    if r == 1 {
        return Ok(t.clone());
    }
    let mut expanded = t.unsqueeze(-3)?.dims().to_vec();
    let k = expanded.len();
    expanded[k - 3] = r;
    let mut shape = t.dims().to_vec();
    let h = shape.len() - 3;
    shape[h] *= r;
    t.unsqueeze(-3)?.expand(expanded)?.reshape(shape)
}

impl Tensor {
    /// torch's `scaled_dot_product_attention` with `self` as the query `[..., L, E]`, `key`
    /// `[..., S, E]`, `value` `[..., S, Ev]`. `attn_mask` is bool (true = attend) or float (added);
    /// `is_causal` masks `j > i`; `scale` defaults to `1/sqrt(E)`; `enable_gqa` lets the query have a
    /// multiple of the key/value heads (dim -3). Rows with every position masked give zeros.
    #[allow(clippy::too_many_arguments)]
    pub fn scaled_dot_product_attention(
        &self,
        key: &Tensor,
        value: &Tensor,
        attn_mask: Option<&Tensor>,
        dropout_p: f64,
        is_causal: bool,
        scale: Option<f64>,
        enable_gqa: bool,
    ) -> Result<Tensor> {
        let q = self;
        if q.dtype() != key.dtype() || q.dtype() != value.dtype() {
            return Err(Error::msg(format!(
                "Expected query, key, and value to have the same dtype, but got query.dtype: {} key.dtype: {} and value.dtype: {} instead.",
                cpp_name(q.dtype()),
                cpp_name(key.dtype()),
                cpp_name(value.dtype())
            )));
        }
        if !q.dtype().is_float() {
            return Err(Error::msg(format!(
                "expected scalar type Float but found {}",
                q.dtype().scalar_type_name()
            )));
        }
        if q.rank() < 2 || key.rank() < 2 || value.rank() < 2 {
            return Err(Error::shape(format!(
                "scaled_dot_product_attention: expected query, key and value of at least 2 dims, got {}D, {}D and {}D",
                q.rank(),
                key.rank(),
                value.rank()
            )));
        }
        if let Some(m) = attn_mask {
            // torch takes a bool mask, a float32 one with any query, or one of the query's dtype.
            if m.dtype() != DType::Bool && m.dtype() != DType::F32 && m.dtype() != q.dtype() {
                return Err(Error::msg(format!(
                    "Expected attn_mask dtype to be bool or float or to match query dtype, but got attn_mask.dtype: {} and  query.dtype: {} instead.",
                    cpp_name(m.dtype()),
                    cpp_name(q.dtype())
                )));
            }
        }
        if is_causal && attn_mask.is_some() {
            return Err(Error::msg(
                "_scaled_dot_product_attention: Explicit attn_mask should not be set when is_causal=True",
            ));
        }
        if !(0.0..=1.0).contains(&dropout_p) {
            return Err(Error::msg(format!(
                "dropout probability has to be between 0 and 1, but got {dropout_p}"
            )));
        }
        let scale = scale.unwrap_or(1.0 / (*q.dims().last().expect("rank >= 2") as f64).sqrt());
        if dropout_p == 0.0 {
            if let Some(out) = fused_on_cpu(q, key, value, attn_mask, is_causal, scale, enable_gqa)? {
                return Ok(out);
            }
        }
        let (mut k, mut v) = (key.clone(), value.clone());
        if enable_gqa && q.rank() >= 3 && k.rank() >= 3 {
            let (hq, hk, hv) = (q.dims()[q.rank() - 3], k.dims()[k.rank() - 3], v.dims()[v.rank() - 3]);
            if hk == 0 || hv == 0 || hq % hk != 0 || hq % hv != 0 {
                return Err(Error::msg(format!(
                    "Number of heads in key and value must divide the number of heads in query, got {hq}, {hk} and {hv}"
                )));
            }
            k = repeat_heads(&k, hq / hk)?;
            v = repeat_heads(&v, hq / hv)?;
        }
        let (l, s) = (q.dims()[q.rank() - 2], k.dims()[k.rank() - 2]);
        let cdt = opmath(q.dtype());
        let qc = q.to_dtype(cdt)?;
        let mut attn = qc.matmul(&k.to_dtype(cdt)?.transpose(-2, -1)?)?.mul(scale)?;
        if is_causal {
            let i = Tensor::arange(l as i64, (DType::I64, q.device()))?.reshape([l, 1])?;
            let j = Tensor::arange(s as i64, (DType::I64, q.device()))?.reshape([1, s])?;
            attn = j.gt(&i)?.where_self(f64::NEG_INFINITY, &attn)?;
        }
        if let Some(m) = attn_mask {
            attn = if m.dtype() == DType::Bool {
                m.logical_not()?.where_self(f64::NEG_INFINITY, &attn)?
            } else {
                attn.add(&m.to_dtype(cdt)?)?
            };
        }
        let mut p = safe_softmax_last(&attn)?;
        if dropout_p > 0.0 {
            p = p.dropout(dropout_p, true)?;
        }
        p.matmul(&v.to_dtype(cdt)?)?.to_dtype(q.dtype())
    }
}

/// [`NnOp::Attention`] on the CPU for rank-4 `q` `[B, H, L, E]`, `k` `[B, Hk, S, E]`, `v`
/// `[B, Hk, S, Ev]` (`Hk` = `H`, or a divisor of it with `enable_gqa`) of f32, f16 or bf16 (computed
/// in f32, as the composition does), with the mask, if any, broadcast to `[B, H, L, S]`. `None`
/// where the composition should run instead: other devices, other ranks or dtypes, shapes that
/// only broadcast (the composition reports any error).
fn fused_on_cpu(
    q: &Tensor,
    k: &Tensor,
    v: &Tensor,
    mask: Option<&Tensor>,
    causal: bool,
    scale: f64,
    gqa: bool,
) -> Result<Option<Tensor>> {
    let operands: Vec<&Tensor> = [Some(q), Some(k), Some(v), mask].into_iter().flatten().collect();
    // Under autograd the composition runs: it keeps the probabilities for the backward pass, which
    // a formula for the kernel would have to recompute (a causal `[8, 4, 128, 64]` forward and
    // backward measured 15-17 ms that way against 10 ms composed).
    if crate::autograd::record::needs_recording(&operands) {
        return Ok(None);
    }
    if !operands.iter().all(|t| t.device().is_cpu())
        || q.rank() != 4
        || k.rank() != 4
        || v.rank() != 4
        || opmath(q.dtype()) != DType::F32
    {
        return Ok(None);
    }
    let (qd, kd, vd) = (q.dims(), k.dims(), v.dims());
    if qd[1] == 0 {
        return Ok(None);
    }
    let heads_fit = kd[1] == qd[1] || (gqa && kd[1] > 0 && qd[1] % kd[1] == 0);
    if !heads_fit || kd[0] != qd[0] || vd[..3] != kd[..3] || kd[3] != qd[3] {
        return Ok(None);
    }
    let scores = [qd[0], qd[1], qd[2], kd[2]];
    let mask = match mask {
        None => None,
        Some(m) => {
            // A bool mask becomes an additive one (-inf where false), as torch's math backend
            // adds it: a NaN or +inf score at a masked position then still poisons its row.
            let m = if m.dtype() == DType::Bool {
                m.logical_not()?.where_self(f64::NEG_INFINITY, 0.0)?.to_dtype(DType::F32)?
            } else {
                m.to_dtype(DType::F32)?
            };
            match m.broadcast_to(&scores) {
                Ok(m) => Some(m),
                Err(_) => return Ok(None),
            }
        }
    };
    let (q32, k32, v32) = (q.to_dtype(DType::F32)?, k.to_dtype(DType::F32)?, v.to_dtype(DType::F32)?);
    let prim = Prim::Nn(NnOp::Attention { scale, causal, masked: mask.is_some() });
    let mut inputs = vec![&q32, &k32, &v32];
    inputs.extend(mask.as_ref());
    Ok(Some(apply1(&prim, &inputs, q.device())?.to_dtype(q.dtype())?))
}
