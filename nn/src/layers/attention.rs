//! `MultiheadAttention` with torch's parameters (`in_proj_weight`, `in_proj_bias`, `out_proj.*`, or
//! `q/k/v_proj_weight` when the key/value sizes differ), masks and returned weights.

use oxtorch_tensor::{DType, Error, Result, Tensor};

use crate::init;
use crate::layers::linear::Linear;
use crate::module::{Member, MemberMut, Module};

/// Constructor options of [`MultiheadAttention`], with torch's defaults.
#[derive(Clone, Debug)]
pub struct MultiheadAttentionOptions {
    /// dropout on the attention weights in training (default 0)
    pub dropout: f64,
    /// whether the input and output projections have biases (default true)
    pub bias: bool,
    /// key feature size (default `embed_dim`)
    pub kdim: Option<usize>,
    /// value feature size (default `embed_dim`)
    pub vdim: Option<usize>,
    /// inputs and outputs are `[batch, seq, feature]` instead of `[seq, batch, feature]`
    pub batch_first: bool,
    /// learned `bias_k`/`bias_v` appended to the key and value sequences (default false)
    pub add_bias_kv: bool,
    /// a zero key/value appended to every head's sequence (default false)
    pub add_zero_attn: bool,
}

impl Default for MultiheadAttentionOptions {
    fn default() -> Self {
        MultiheadAttentionOptions {
            dropout: 0.0,
            bias: true,
            kdim: None,
            vdim: None,
            batch_first: false,
            add_bias_kv: false,
            add_zero_attn: false,
        }
    }
}

/// The keyword arguments of [`MultiheadAttention::forward_with`], with torch's defaults.
#[derive(Clone, Copy, Debug)]
pub struct MultiheadAttentionArgs<'a> {
    /// `[N, S]` (unbatched `[S]`) padding of the keys, boolean (true = ignore) or float (added)
    pub key_padding_mask: Option<&'a Tensor>,
    /// also return the attention weights (default true)
    pub need_weights: bool,
    /// `[L, S]` or `[N·num_heads, L, S]` mask, boolean (true = not allowed) or float (added)
    pub attn_mask: Option<&'a Tensor>,
    /// weights averaged over the heads (`[N, L, S]`) rather than `[N, H, L, S]` (default true)
    pub average_attn_weights: bool,
    /// the hint that `attn_mask` is the causal mask (default false)
    pub is_causal: bool,
}

impl Default for MultiheadAttentionArgs<'_> {
    fn default() -> Self {
        MultiheadAttentionArgs {
            key_padding_mask: None,
            need_weights: true,
            attn_mask: None,
            average_attn_weights: true,
            is_causal: false,
        }
    }
}

/// torch's `nn.MultiheadAttention(embed_dim, num_heads, dropout=0.0, bias=True, add_bias_kv=False,
/// add_zero_attn=False, kdim=None, vdim=None, batch_first=False)`.
pub struct MultiheadAttention {
    /// `[3 E, E]` packed query/key/value projection (when `kdim == vdim == E`)
    pub in_proj_weight: Option<Tensor>,
    /// `[E, E]` query projection (when the key/value sizes differ)
    pub q_proj_weight: Option<Tensor>,
    /// `[E, kdim]` key projection (when the key/value sizes differ)
    pub k_proj_weight: Option<Tensor>,
    /// `[E, vdim]` value projection (when the key/value sizes differ)
    pub v_proj_weight: Option<Tensor>,
    /// `[3 E]` packed projection bias
    pub in_proj_bias: Option<Tensor>,
    /// `[1, 1, E]` key appended to every sequence (`add_bias_kv`)
    pub bias_k: Option<Tensor>,
    /// `[1, 1, E]` value appended to every sequence (`add_bias_kv`)
    pub bias_v: Option<Tensor>,
    /// the output projection
    pub out_proj: Linear,
    /// `E`
    pub embed_dim: usize,
    /// number of heads (dividing `E`)
    pub num_heads: usize,
    /// the options it was built with
    pub options: MultiheadAttentionOptions,
    /// training mode (attention dropout)
    pub training: bool,
}

impl MultiheadAttention {
    /// A layer with torch's initialisation: Xavier-uniform projections, zero biases, and the
    /// output projection initialised as a `Linear`.
    pub fn new(embed_dim: usize, num_heads: usize, options: MultiheadAttentionOptions) -> Result<Self> {
        if embed_dim == 0 || num_heads == 0 {
            return Err(Error::msg(format!(
                "embed_dim and num_heads must be greater than 0, got embed_dim={embed_dim} and num_heads={num_heads} instead"
            )));
        }
        if !embed_dim.is_multiple_of(num_heads) {
            return Err(Error::msg("embed_dim must be divisible by num_heads"));
        }
        let kdim = options.kdim.unwrap_or(embed_dim);
        let vdim = options.vdim.unwrap_or(embed_dim);
        let xavier = |rows: usize, cols: usize| -> Result<Tensor> {
            let w = Tensor::empty([rows, cols], DType::default_float())?;
            init::xavier_uniform_(&w, 1.0)?;
            w.requires_grad_(true)
        };
        let same = kdim == embed_dim && vdim == embed_dim;
        let (in_proj_weight, q, k, v) = if same {
            let rows = embed_dim.checked_mul(3).ok_or_else(|| {
                Error::msg(format!("embed_dim {embed_dim} is too large for in_proj_weight"))
            })?;
            (Some(xavier(rows, embed_dim)?), None, None, None)
        } else {
            (
                None,
                Some(xavier(embed_dim, embed_dim)?),
                Some(xavier(embed_dim, kdim)?),
                Some(xavier(embed_dim, vdim)?),
            )
        };
        let in_proj_bias = if options.bias {
            Some(Tensor::zeros([3 * embed_dim], DType::default_float())?.requires_grad_(true)?)
        } else {
            None
        };
        let bias_kv = || -> Result<Option<Tensor>> {
            if !options.add_bias_kv {
                return Ok(None);
            }
            let t = Tensor::empty([1, 1, embed_dim], DType::default_float())?;
            init::xavier_normal_(&t, 1.0)?;
            Ok(Some(t.requires_grad_(true)?))
        };
        let (bias_k, bias_v) = (bias_kv()?, bias_kv()?);
        let out_proj = Linear::new(embed_dim, embed_dim, options.bias)?;
        if let Some(b) = &out_proj.bias {
            init::zeros_(b)?;
        }
        Ok(MultiheadAttention {
            in_proj_weight,
            q_proj_weight: q,
            k_proj_weight: k,
            v_proj_weight: v,
            in_proj_bias,
            bias_k,
            bias_v,
            out_proj,
            embed_dim,
            num_heads,
            options,
            training: true,
        })
    }

    /// Attention of `query` over `key`/`value` (torch's `forward`): returns the output and, when
    /// `need_weights`, the attention weights `[N, L, S]` (averaged over heads) or `[N, H, L, S]`.
    ///
    /// `key_padding_mask [N, S]` and `attn_mask [L, S]` / `[N·H, L, S]` are boolean (true = not
    /// allowed) or float (added to the scores). Inputs are `[L, N, E]` (`[N, L, E]` with
    /// `batch_first`) or unbatched `[L, E]`.
    #[allow(clippy::too_many_arguments)]
    pub fn forward(
        &self,
        query: &Tensor,
        key: &Tensor,
        value: &Tensor,
        key_padding_mask: Option<&Tensor>,
        need_weights: bool,
        attn_mask: Option<&Tensor>,
        average_attn_weights: bool,
    ) -> Result<(Tensor, Option<Tensor>)> {
        let args = MultiheadAttentionArgs {
            key_padding_mask,
            need_weights,
            attn_mask,
            average_attn_weights,
            is_causal: false,
        };
        self.forward_with(query, key, value, args)
    }

    /// torch's full `forward(query, key, value, key_padding_mask=None, need_weights=True,
    /// attn_mask=None, average_attn_weights=True, is_causal=False)`, the keyword arguments in
    /// `args`. `is_causal` is a hint that `attn_mask` is the causal mask and needs one (torch's
    /// error otherwise); without a key padding mask and without weights the attention is then
    /// `scaled_dot_product_attention`'s causal one and `attn_mask` itself goes unused, as torch's.
    pub fn forward_with(
        &self,
        query: &Tensor,
        key: &Tensor,
        value: &Tensor,
        args: MultiheadAttentionArgs<'_>,
    ) -> Result<(Tensor, Option<Tensor>)> {
        let MultiheadAttentionArgs {
            key_padding_mask,
            need_weights,
            attn_mask,
            average_attn_weights,
            is_causal,
        } = args;
        let unbatched = query.rank() == 2;
        if !unbatched && query.rank() != 3 {
            return Err(Error::shape(format!(
                "query should be unbatched 2D or batched 3D tensor but received {}-D query tensor",
                query.rank()
            )));
        }
        let expect = if unbatched { 2 } else { 3 };
        if key.rank() != expect || value.rank() != expect {
            return Err(Error::shape(format!(
                "For {}D query, key and value should be {}D but found {}-D and {}-D tensors respectively",
                expect,
                expect,
                key.rank(),
                value.rank()
            )));
        }
        // To [seq, batch, feature].
        let to_seq_first = |t: &Tensor| -> Result<Tensor> {
            if unbatched {
                t.unsqueeze(1)
            } else if self.options.batch_first {
                t.transpose(0, 1)
            } else {
                Ok(t.clone())
            }
        };
        if is_causal && attn_mask.is_none() {
            return Err(Error::msg(
                "Need attn_mask if specifying the is_causal hint. You may use the Transformer module method \
                 `generate_square_subsequent_mask` to create this mask.",
            ));
        }
        let (q, k, v) = (to_seq_first(query)?, to_seq_first(key)?, to_seq_first(value)?);
        let kpm = match key_padding_mask {
            Some(m) if unbatched => Some(m.unsqueeze(0)?),
            m => m.cloned(),
        };
        // torch hands the hint to scaled_dot_product_attention, dropping the mask, only when
        // there is no padding to merge and no weights to return.
        let causal = is_causal && kpm.is_none() && !need_weights;
        let attn_mask = if causal { None } else { attn_mask };
        let (out, weights) =
            self.attend(&q, &k, &v, kpm.as_ref(), need_weights, attn_mask, average_attn_weights, causal)?;
        let out = if unbatched {
            out.squeeze_dims(1)?
        } else if self.options.batch_first {
            out.transpose(0, 1)?
        } else {
            out
        };
        let weights = match weights {
            Some(w) if unbatched => Some(w.squeeze_dims(0)?),
            w => w,
        };
        Ok((out, weights))
    }

    /// The attention on `[L, N, E]` inputs.
    #[allow(clippy::too_many_arguments)]
    fn attend(
        &self,
        q: &Tensor,
        k: &Tensor,
        v: &Tensor,
        key_padding_mask: Option<&Tensor>,
        need_weights: bool,
        attn_mask: Option<&Tensor>,
        average: bool,
        is_causal: bool,
    ) -> Result<(Tensor, Option<Tensor>)> {
        let (l, n, e) = (q.dims()[0], q.dims()[1], q.dims()[2]);
        if e != self.embed_dim {
            return Err(Error::shape(format!(
                "was expecting embedding dimension of {}, but got {e}",
                self.embed_dim
            )));
        }
        let s = k.dims()[0];
        if k.dims()[..2] != v.dims()[..2] {
            return Err(Error::shape(format!(
                "key shape {:?} does not match value shape {:?}",
                k.dims(),
                v.dims()
            )));
        }
        let h = self.num_heads;
        let hd = e / h;
        let (q, mut k, mut v) = self.project(q, k, v)?;
        let mut mask = self.merged_mask(attn_mask, key_padding_mask, q.dtype(), n, l, s)?;
        let mut len = s;
        if let (Some(bk), Some(bv)) = (&self.bias_k, &self.bias_v) {
            k = Tensor::cat(&[&k, &bk.expand([1, n, e])?], 0)?;
            v = Tensor::cat(&[&v, &bv.expand([1, n, e])?], 0)?;
            len += 1;
        }
        // [len, N, E] -> [N*H, len, hd]
        let heads = |t: Tensor, len: usize| t.reshape([len, n * h, hd]).and_then(|t| t.transpose(0, 1));
        let (q, mut k, mut v) = (heads(q, l)?, heads(k, len)?, heads(v, len)?);
        if self.options.add_zero_attn {
            let zeros = Tensor::zeros([n * h, 1, hd], (k.dtype(), k.device()))?;
            k = Tensor::cat(&[&k, &zeros], 1)?;
            v = Tensor::cat(&[&v, &zeros], 1)?;
            len += 1;
        }
        // The appended keys are never masked.
        if len > s {
            mask = mask.map(|m| m.pad(&[0, (len - s) as isize], "constant", Some(0.0))).transpose()?;
        }
        let s = len;
        if !need_weights {
            // torch takes scaled_dot_product_attention here, whose rows with every key masked (a
            // fully padded sequence) are zeros: the plain softmax's NaN would reach every gradient.
            let p = if self.training { self.options.dropout } else { 0.0 };
            let scale = Some(1.0 / (hd as f64).sqrt());
            let out = q.scaled_dot_product_attention(&k, &v, mask.as_ref(), p, is_causal, scale, false)?;
            let out = out.transpose(0, 1)?.reshape([l * n, e])?;
            return Ok((self.out_proj_forward(&out)?.reshape([l, n, e])?, None));
        }
        let mut scores = q.mul(1.0 / (hd as f64).sqrt())?.matmul(&k.transpose(-2, -1)?)?;
        if let Some(m) = &mask {
            scores = scores.add(m)?;
        }
        let mut weights = scores.softmax(-1, None)?;
        if self.training && self.options.dropout > 0.0 {
            weights = weights.dropout(self.options.dropout, true)?;
        }
        let out = weights.matmul(&v)?.transpose(0, 1)?.reshape([l * n, e])?;
        let out = self.out_proj_forward(&out)?.reshape([l, n, e])?;
        let w = weights.reshape([n, h, l, s])?;
        Ok((out, Some(if average { w.mean(1, false)? } else { w })))
    }

    fn out_proj_forward(&self, x: &Tensor) -> Result<Tensor> {
        x.linear(&self.out_proj.weight, self.out_proj.bias.as_ref())
    }

    /// The query, key and value projections.
    fn project(&self, q: &Tensor, k: &Tensor, v: &Tensor) -> Result<(Tensor, Tensor, Tensor)> {
        let e = self.embed_dim;
        let bias = |i: usize| -> Result<Option<Tensor>> {
            self.in_proj_bias.as_ref().map(|b| b.narrow(0, (i * e) as isize, e)).transpose()
        };
        let weight = |i: usize| -> Result<Tensor> {
            match &self.in_proj_weight {
                Some(w) => w.narrow(0, (i * e) as isize, e),
                None => {
                    let w = [&self.q_proj_weight, &self.k_proj_weight, &self.v_proj_weight][i];
                    w.clone().ok_or_else(|| Error::msg("MultiheadAttention: missing projection weight"))
                }
            }
        };
        Ok((
            q.linear(&weight(0)?, bias(0)?.as_ref())?,
            k.linear(&weight(1)?, bias(1)?.as_ref())?,
            v.linear(&weight(2)?, bias(2)?.as_ref())?,
        ))
    }

    /// `attn_mask` and `key_padding_mask` as one additive float mask, broadcastable to
    /// `[N*H, L, S]`.
    fn merged_mask(
        &self,
        attn_mask: Option<&Tensor>,
        key_padding_mask: Option<&Tensor>,
        dtype: DType,
        n: usize,
        l: usize,
        s: usize,
    ) -> Result<Option<Tensor>> {
        let h = self.num_heads;
        let attn = match attn_mask {
            None => None,
            Some(m) => {
                let m = additive(m, dtype)?;
                Some(match m.rank() {
                    2 if m.dims() == [l, s] => m.unsqueeze(0)?,
                    2 => {
                        return Err(Error::shape(format!(
                            "The shape of the 2D attn_mask is {}, but should be ({l}, {s}).",
                            crate::module::torch_size(m.dims())
                        )))
                    }
                    3 if m.dims() == [n * h, l, s] => m,
                    3 => {
                        return Err(Error::shape(format!(
                            "The shape of the 3D attn_mask is {}, but should be ({}, {l}, {s}).",
                            crate::module::torch_size(m.dims()),
                            n * h
                        )))
                    }
                    r => return Err(Error::shape(format!("attn_mask's dimension {r} is not supported"))),
                })
            }
        };
        let kpm = match key_padding_mask {
            None => None,
            Some(m) => {
                if m.dims() != [n, s] {
                    return Err(Error::shape(format!(
                        "expecting key_padding_mask shape of ({n}, {s}), but got {}",
                        crate::module::torch_size(m.dims())
                    )));
                }
                let m = additive(m, dtype)?;
                Some(m.reshape([n, 1, 1, s])?.expand([n, h, 1, s])?.reshape([n * h, 1, s])?)
            }
        };
        Ok(match (attn, kpm) {
            (Some(a), Some(k)) => Some(a.add(&k)?),
            (a, k) => a.or(k),
        })
    }
}

/// A boolean mask (true = masked) as `-inf`/`0`, or a float mask as it is.
pub(crate) fn additive(mask: &Tensor, dtype: DType) -> Result<Tensor> {
    if mask.dtype() == DType::Bool {
        mask.where_self(f64::NEG_INFINITY, 0.0)?.to_dtype(dtype)
    } else if mask.dtype().is_float() {
        mask.to_dtype(dtype)
    } else {
        Err(Error::msg(format!(
            "only bool and floating types of masks are supported, got {}",
            mask.dtype().scalar_type_name()
        )))
    }
}

impl Module for MultiheadAttention {
    fn visit<'m>(&'m self, f: &mut dyn FnMut(&str, Member<'m>)) {
        let params = [
            ("in_proj_weight", &self.in_proj_weight),
            ("q_proj_weight", &self.q_proj_weight),
            ("k_proj_weight", &self.k_proj_weight),
            ("v_proj_weight", &self.v_proj_weight),
            ("in_proj_bias", &self.in_proj_bias),
            ("bias_k", &self.bias_k),
            ("bias_v", &self.bias_v),
        ];
        for (name, p) in params {
            if let Some(p) = p {
                f(name, Member::Param(p));
            }
        }
        f("out_proj", Member::Child(&self.out_proj));
    }
    fn visit_mut(&mut self, f: &mut dyn FnMut(&str, MemberMut<'_>)) {
        let params = [
            ("in_proj_weight", &mut self.in_proj_weight),
            ("q_proj_weight", &mut self.q_proj_weight),
            ("k_proj_weight", &mut self.k_proj_weight),
            ("v_proj_weight", &mut self.v_proj_weight),
            ("in_proj_bias", &mut self.in_proj_bias),
            ("bias_k", &mut self.bias_k),
            ("bias_v", &mut self.bias_v),
        ];
        for (name, p) in params {
            if let Some(p) = p {
                f(name, MemberMut::Param(p));
            }
        }
        f("out_proj", MemberMut::Child(&mut self.out_proj));
    }
    fn type_name(&self) -> &'static str {
        "MultiheadAttention"
    }
    fn set_training(&mut self, training: bool) {
        self.training = training;
    }
    fn training_flag(&self) -> Option<bool> {
        Some(self.training)
    }
}
