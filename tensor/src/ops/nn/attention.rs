//! `scaled_dot_product_attention` as a composition: `softmax(q kᵀ · scale + mask) v`.

use oxtorch_core::{DType, Error, Result};

use super::safe_softmax_last;
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
        let e = *q.dims().last().expect("rank >= 2");
        let (l, s) = (q.dims()[q.rank() - 2], k.dims()[k.rank() - 2]);
        let scale = scale.unwrap_or(1.0 / (e as f64).sqrt());
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
