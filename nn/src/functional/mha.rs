//! `F.multi_head_attention_forward`: multi-head attention from explicit weights, written step by
//! step as torch's `torch/nn/functional.py` (sequence-first `[L, N, E]` inputs or unbatched
//! `[L, E]`, boolean or float masks, `bias_k`/`bias_v`, `add_zero_attn`, `static_k`/`static_v`,
//! weights averaged over the heads or not).

use oxtorch_tensor::{DType, Error, Result, Tensor};

use crate::module::torch_size;

/// The keyword arguments of [`multi_head_attention_forward`] after `out_proj_bias`, with torch's
/// defaults.
#[derive(Clone, Copy, Debug)]
pub struct MhaForwardOptions<'a> {
    /// training mode: dropout applies only then (default true)
    pub training: bool,
    /// `[N, S]` (unbatched `[S]`), boolean (true = ignore the key) or float (added to the scores)
    pub key_padding_mask: Option<&'a Tensor>,
    /// also return the attention weights (default true)
    pub need_weights: bool,
    /// `[L, S]` or `[N * num_heads, L, S]`, boolean (true = not allowed) or float (added)
    pub attn_mask: Option<&'a Tensor>,
    /// project with `q/k/v_proj_weight` instead of the packed `in_proj_weight` (default false)
    pub use_separate_proj_weight: bool,
    /// `[E, E]` query projection (with `use_separate_proj_weight`)
    pub q_proj_weight: Option<&'a Tensor>,
    /// `[E, kdim]` key projection (with `use_separate_proj_weight`)
    pub k_proj_weight: Option<&'a Tensor>,
    /// `[E, vdim]` value projection (with `use_separate_proj_weight`)
    pub v_proj_weight: Option<&'a Tensor>,
    /// `[N * num_heads, S, E / num_heads]` keys used as they are instead of the projected `key`
    pub static_k: Option<&'a Tensor>,
    /// `[N * num_heads, S, E / num_heads]` values used as they are instead of the projected `value`
    pub static_v: Option<&'a Tensor>,
    /// return the weights averaged over the heads (`[N, L, S]`) rather than `[N, H, L, S]`
    /// (default true)
    pub average_attn_weights: bool,
    /// the hint that `attn_mask` is the causal mask (default false)
    pub is_causal: bool,
}

impl Default for MhaForwardOptions<'_> {
    fn default() -> Self {
        MhaForwardOptions {
            training: true,
            key_padding_mask: None,
            need_weights: true,
            attn_mask: None,
            use_separate_proj_weight: false,
            q_proj_weight: None,
            k_proj_weight: None,
            v_proj_weight: None,
            static_k: None,
            static_v: None,
            average_attn_weights: true,
            is_causal: false,
        }
    }
}

/// torch's `_mha_shape_check`: whether the inputs are batched.
fn shape_check(
    query: &Tensor,
    key: &Tensor,
    value: &Tensor,
    key_padding_mask: Option<&Tensor>,
    attn_mask: Option<&Tensor>,
    num_heads: usize,
) -> Result<bool> {
    let (what, batched, kpm_rank) = match query.rank() {
        3 => ("batched (3-D)", true, 2),
        2 => ("unbatched (2-D)", false, 1),
        r => {
            return Err(Error::shape(format!(
                "query should be unbatched 2D or batched 3D tensor but received {r}-D query tensor"
            )))
        }
    };
    let rank = query.rank();
    if key.rank() != rank || value.rank() != rank {
        return Err(Error::shape(format!(
            "For {what} `query`, expected `key` and `value` to be {rank}-D but found {}-D and {}-D tensors \
             respectively",
            key.rank(),
            value.rank()
        )));
    }
    if let Some(m) = key_padding_mask {
        if m.rank() != kpm_rank {
            return Err(Error::shape(format!(
                "For {what} `query`, expected `key_padding_mask` to be `None` or {kpm_rank}-D but found {}-D \
                 tensor instead",
                m.rank()
            )));
        }
    }
    if let Some(m) = attn_mask {
        if !matches!(m.rank(), 2 | 3) {
            return Err(Error::shape(format!(
                "For {what} `query`, expected `attn_mask` to be `None`, 2-D or 3-D but found {}-D tensor \
                 instead",
                m.rank()
            )));
        }
        if !batched && m.rank() == 3 {
            let want = [num_heads, query.dims()[0], key.dims()[0]];
            if m.dims() != want {
                return Err(Error::shape(format!(
                    "Expected `attn_mask` shape to be ({}, {}, {}) but got {}",
                    want[0],
                    want[1],
                    want[2],
                    torch_size(m.dims())
                )));
            }
        }
    }
    Ok(batched)
}

/// torch's `_canonical_mask`: a boolean mask as `-inf` (true) / `0` (false) in `dtype`, a float
/// mask as it is (cast to `dtype`).
fn canonical_mask(mask: Option<&Tensor>, name: &str, dtype: DType) -> Result<Option<Tensor>> {
    let Some(m) = mask else { return Ok(None) };
    if m.dtype() == DType::Bool {
        Ok(Some(m.where_self(f64::NEG_INFINITY, 0.0)?.to_dtype(dtype)?))
    } else if m.dtype().is_float() {
        Ok(Some(m.to_dtype(dtype)?))
    } else {
        Err(Error::msg(format!("only bool and floating types of {name} are supported")))
    }
}

/// Rows `i * e .. (i + 1) * e` of a packed projection weight or bias.
fn part(t: &Tensor, i: usize, e: usize) -> Result<Tensor> {
    t.narrow(0, (i * e) as isize, e)
}

/// torch's `_in_projection` with separate weights, after its shape checks.
fn in_projection(
    q: &Tensor,
    k: &Tensor,
    v: &Tensor,
    w: [&Tensor; 3],
    b: [Option<Tensor>; 3],
) -> Result<(Tensor, Tensor, Tensor)> {
    let (eq, ek, ev) = (q.dims()[q.rank() - 1], k.dims()[k.rank() - 1], v.dims()[v.rank() - 1]);
    let names = ["query", "key", "value"];
    for (i, want) in [[eq, eq], [eq, ek], [eq, ev]].iter().enumerate() {
        if w[i].dims() != want {
            return Err(Error::shape(format!(
                "expecting {} weights shape of ({}, {}), but got {}",
                names[i],
                want[0],
                want[1],
                torch_size(w[i].dims())
            )));
        }
    }
    for (i, bias) in b.iter().enumerate() {
        if let Some(bias) = bias {
            if bias.dims() != [eq] {
                return Err(Error::shape(format!(
                    "expecting {} bias shape of ({eq},), but got {}",
                    names[i],
                    torch_size(bias.dims())
                )));
            }
        }
    }
    Ok((q.linear(w[0], b[0].as_ref())?, k.linear(w[1], b[1].as_ref())?, v.linear(w[2], b[2].as_ref())?))
}

/// torch's `F.multi_head_attention_forward(query, key, value, embed_dim_to_check, num_heads,
/// in_proj_weight, in_proj_bias, bias_k, bias_v, add_zero_attn, dropout_p, out_proj_weight,
/// out_proj_bias, ...)`, the keyword arguments in [`MhaForwardOptions`].
///
/// `query [L, N, E]`, `key [S, N, kdim]`, `value [S, N, vdim]` (or unbatched `[L, E]`, `[S, kdim]`,
/// `[S, vdim]`). Returns the output `[L, N, E]` (`[L, E]`) and, with `need_weights`, the attention
/// weights `[N, L, S]` averaged over the heads or `[N, num_heads, L, S]` (without the batch dim for
/// unbatched inputs). `bias_k`/`bias_v` (`[1, 1, E]`) append a key and a value to every sequence,
/// `add_zero_attn` a zero key and value to every head's; masks grow by those columns, unmasked.
/// Without `need_weights` the attention is `scaled_dot_product_attention`'s, as torch's.
#[allow(clippy::too_many_arguments)]
pub fn multi_head_attention_forward(
    query: &Tensor,
    key: &Tensor,
    value: &Tensor,
    embed_dim_to_check: usize,
    num_heads: usize,
    in_proj_weight: Option<&Tensor>,
    in_proj_bias: Option<&Tensor>,
    bias_k: Option<&Tensor>,
    bias_v: Option<&Tensor>,
    add_zero_attn: bool,
    dropout_p: f64,
    out_proj_weight: &Tensor,
    out_proj_bias: Option<&Tensor>,
    options: &MhaForwardOptions<'_>,
) -> Result<(Tensor, Option<Tensor>)> {
    let o = options;
    let batched = shape_check(query, key, value, o.key_padding_mask, o.attn_mask, num_heads)?;
    let (query, key, value, kpm) = if batched {
        (query.clone(), key.clone(), value.clone(), o.key_padding_mask.cloned())
    } else {
        (
            query.unsqueeze(1)?,
            key.unsqueeze(1)?,
            value.unsqueeze(1)?,
            o.key_padding_mask.map(|m| m.unsqueeze(0)).transpose()?,
        )
    };
    let (l, n, e) = (query.dims()[0], query.dims()[1], query.dims()[2]);
    let dtype = query.dtype();
    let mut kpm = canonical_mask(kpm.as_ref(), "key_padding_mask", dtype)?;
    if o.is_causal && o.attn_mask.is_none() {
        return Err(Error::msg(
            "Need attn_mask if specifying the is_causal hint. You may use the Transformer module method \
             `generate_square_subsequent_mask` to create this mask.",
        ));
    }
    let mut is_causal = o.is_causal;
    let mut attn_mask = if is_causal && kpm.is_none() && !o.need_weights {
        None
    } else {
        if kpm.is_some() {
            is_causal = false;
        }
        canonical_mask(o.attn_mask, "attn_mask", dtype)?
    };
    if e != embed_dim_to_check {
        return Err(Error::shape(format!(
            "was expecting embedding dimension of {embed_dim_to_check}, but got {e}"
        )));
    }
    if num_heads == 0 {
        return Err(Error::msg("integer division or modulo by zero"));
    }
    let h = num_heads;
    let hd = e / h;
    if hd * h != e {
        return Err(Error::shape(format!("embed_dim {e} not divisible by num_heads {h}")));
    }
    if o.use_separate_proj_weight {
        if key.dims()[..2] != value.dims()[..2] {
            return Err(Error::shape(format!(
                "key's sequence and batch dims {} do not match value's {}",
                torch_size(&key.dims()[..2]),
                torch_size(&value.dims()[..2])
            )));
        }
    } else if key.dims() != value.dims() {
        return Err(Error::shape(format!(
            "key shape {} does not match value shape {}",
            torch_size(key.dims()),
            torch_size(value.dims())
        )));
    }
    let (q, mut k, mut v) = if !o.use_separate_proj_weight {
        let w = in_proj_weight
            .ok_or_else(|| Error::msg("use_separate_proj_weight is False but in_proj_weight is None"))?;
        let b = |i: usize| in_proj_bias.map(|b| part(b, i, e)).transpose();
        (
            query.linear(&part(w, 0, e)?, b(0)?.as_ref())?,
            key.linear(&part(w, 1, e)?, b(1)?.as_ref())?,
            value.linear(&part(w, 2, e)?, b(2)?.as_ref())?,
        )
    } else {
        let missing = |name: &str| Error::msg(format!("use_separate_proj_weight is True but {name} is None"));
        let wq = o.q_proj_weight.ok_or_else(|| missing("q_proj_weight"))?;
        let wk = o.k_proj_weight.ok_or_else(|| missing("k_proj_weight"))?;
        let wv = o.v_proj_weight.ok_or_else(|| missing("v_proj_weight"))?;
        let b = match in_proj_bias {
            None => [None, None, None],
            Some(b) => {
                let c = b.chunk(3, 0)?;
                if c.len() != 3 {
                    return Err(Error::shape(format!(
                        "not enough values to unpack (expected 3, got {})",
                        c.len()
                    )));
                }
                let mut it = c.into_iter();
                [it.next(), it.next(), it.next()]
            }
        };
        in_projection(&query, &key, &value, [wq, wk, wv], b)?
    };
    let s = key.dims()[0];
    if let Some(m) = attn_mask.take() {
        attn_mask = Some(match m.rank() {
            2 if m.dims() == [l, s] => m.unsqueeze(0)?,
            2 => {
                return Err(Error::shape(format!(
                    "The shape of the 2D attn_mask is {}, but should be ({l}, {s}).",
                    torch_size(m.dims())
                )))
            }
            3 if m.dims() == [n * h, l, s] => m,
            3 => {
                return Err(Error::shape(format!(
                    "The shape of the 3D attn_mask is {}, but should be ({}, {l}, {s}).",
                    torch_size(m.dims()),
                    n * h
                )))
            }
            r => return Err(Error::shape(format!("attn_mask's dimension {r} is not supported"))),
        });
    }
    let pad_one = |m: Option<Tensor>| m.map(|m| m.pad(&[0, 1], "constant", Some(0.0))).transpose();
    match (bias_k, bias_v) {
        (Some(bk), Some(bv)) => {
            if o.static_k.is_some() {
                return Err(Error::msg("bias cannot be added to static key."));
            }
            if o.static_v.is_some() {
                return Err(Error::msg("bias cannot be added to static value."));
            }
            k = Tensor::cat(&[&k, &bk.repeat([1, n, 1])?], 0)?;
            v = Tensor::cat(&[&v, &bv.repeat([1, n, 1])?], 0)?;
            attn_mask = pad_one(attn_mask)?;
            kpm = pad_one(kpm)?;
        }
        (Some(_), None) => return Err(Error::msg("bias_k is set but bias_v is None")),
        (None, Some(_)) => return Err(Error::msg("bias_v is set but bias_k is None")),
        (None, None) => {}
    }
    // [len, N, E] -> [N * H, len, hd]
    let heads = |t: &Tensor| -> Result<Tensor> { t.reshape([t.dims()[0], n * h, hd])?.transpose(0, 1) };
    let q = heads(&q)?;
    let check_static = |t: &Tensor, name: &str| -> Result<()> {
        if t.rank() != 3 {
            return Err(Error::shape(format!("expecting {name} to be 3-D, but got {}-D", t.rank())));
        }
        if t.dims()[0] != n * h {
            return Err(Error::shape(format!(
                "expecting {name}.size(0) of {}, but got {}",
                n * h,
                t.dims()[0]
            )));
        }
        if t.dims()[2] != hd {
            return Err(Error::shape(format!("expecting {name}.size(2) of {hd}, but got {}", t.dims()[2])));
        }
        Ok(())
    };
    k = match o.static_k {
        None => heads(&k)?,
        Some(sk) => {
            check_static(sk, "static_k")?;
            sk.clone()
        }
    };
    v = match o.static_v {
        None => heads(&v)?,
        Some(sv) => {
            check_static(sv, "static_v")?;
            sv.clone()
        }
    };
    if add_zero_attn {
        let k_zeros = Tensor::zeros([n * h, 1, hd], (k.dtype(), k.device()))?;
        let v_zeros = Tensor::zeros([n * h, 1, hd], (v.dtype(), v.device()))?;
        k = Tensor::cat(&[&k, &k_zeros], 1)?;
        v = Tensor::cat(&[&v, &v_zeros], 1)?;
        attn_mask = pad_one(attn_mask)?;
        kpm = pad_one(kpm)?;
    }
    let s = k.dims()[1];
    if let Some(m) = kpm {
        if m.dims()[0] != n {
            return Err(Error::shape(format!(
                "Expected key_padded_mask.shape[0] to be {n}, but got {}",
                m.dims()[0]
            )));
        }
        if m.dims()[1] != s {
            return Err(Error::shape(format!(
                "Expected key_padded_mask.shape[1] to be {s}, but got {}",
                m.dims()[1]
            )));
        }
        let m = m.reshape([n, 1, 1, s])?.expand([n, h, 1, s])?.reshape([n * h, 1, s])?;
        attn_mask = Some(match attn_mask {
            None => m,
            Some(a) => a.add(&m)?,
        });
    }
    let dropout_p = if o.training { dropout_p } else { 0.0 };
    let finish = |attn: Tensor| -> Result<Tensor> {
        let out = attn.transpose(0, 1)?.reshape([l * n, e])?.linear(out_proj_weight, out_proj_bias)?;
        let out = out.reshape([l, n, out.dims()[1]])?;
        if batched {
            Ok(out)
        } else {
            out.squeeze_dims(1)
        }
    };
    if o.need_weights {
        let q_scaled = q.mul((1.0 / hd as f64).sqrt())?;
        let mut weights = q_scaled.matmul(&k.transpose(-2, -1)?)?;
        if let Some(m) = &attn_mask {
            weights = m.add(&weights)?;
        }
        let mut weights = weights.softmax(-1, None)?;
        if dropout_p > 0.0 {
            weights = weights.dropout(dropout_p, true)?;
        }
        let out = finish(weights.matmul(&v)?)?;
        let mut w = weights.reshape([n, h, l, s])?;
        if o.average_attn_weights {
            w = w.mean(1, false)?;
        }
        if !batched {
            w = w.squeeze_dims(0)?;
        }
        Ok((out, Some(w)))
    } else {
        let attn =
            q.scaled_dot_product_attention(&k, &v, attn_mask.as_ref(), dropout_p, is_causal, None, false)?;
        Ok((finish(attn)?, None))
    }
}
