//! DeepSeek's multi-head latent attention (MLA, DeepSeek-V2 and V3): the keys and values of every
//! head come out of one low-rank latent per token, `kv_b_proj(norm(kv_a_proj(x)))`, and each key
//! ends with a rotary part shared by all heads; queries come from `q_proj`, or through a low-rank
//! `q_b_proj(norm(q_a_proj(x)))`.
//!
//! The heads are laid out for the ordinary attention kernel and KV cache: each query and key head
//! is `[rotary part, the rest]` (transformers puts the rotary part last; the order of a head's dims
//! does not change its scores, as long as q and k agree) so that [`super::apply_rotary`] rotates its
//! first dims, with an interleaved rotation (`rope_interleave`, and DeepSeek-V2's complex one) turned
//! into the half-split one by reordering the projections' rows at load
//! ([`super::halves_from_interleaved`]). Keys and values of different widths are padded with zeros
//! to one width, which leaves the scores and the values' own dims as they were.

use oxtorch_tensor::Tensor;

use super::{apply_rotary, halves_from_interleaved, Linear, RmsNorm, RmsNormStyle};
use crate::error::{Error, Result};
use crate::weights::Vars;

/// The widths of one latent attention layer (transformers' `DeepseekV3Config` names).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LatentDims {
    /// `q_lora_rank`: the queries' low rank, `None` for a full `q_proj`
    pub q_rank: Option<usize>,
    /// `kv_lora_rank`: the keys' and values' shared latent width
    pub kv_rank: usize,
    /// `qk_nope_head_dim`: each key's and query's dims without rotation
    pub nope: usize,
    /// `qk_rope_head_dim`: each key's and query's rotated dims (the key's shared by the heads)
    pub rope: usize,
    /// `v_head_dim`: each value's width
    pub v: usize,
    /// The rotary dims are interleaved pairs in the checkpoint (`rope_interleave`; always in V2).
    pub interleaved: bool,
}

impl LatentDims {
    /// Each query and key head's width, `nope + rope`.
    pub fn qk(&self) -> usize {
        self.nope + self.rope
    }

    /// The width the attention kernel sees for every head of q, k and v: the larger of `qk` and `v`.
    pub fn padded(&self) -> usize {
        self.qk().max(self.v)
    }
}

/// The queries' projection: full, or low-rank through a norm.
#[derive(Debug, Clone)]
enum Query {
    Full(Linear),
    LowRank { a: Linear, norm: RmsNorm, b: Linear },
}

/// The projections of one latent attention layer, which give q, k and v as ordinary heads.
#[derive(Debug, Clone)]
pub struct LatentQkv {
    q: Query,
    /// `kv_a_proj_with_mqa`: hidden → latent (`kv_rank`) and the shared rotary key (`rope`)
    kv_a: Linear,
    kv_norm: RmsNorm,
    /// `kv_b_proj`: latent → each head's key (`nope`) then value (`v`)
    kv_b: Linear,
    dims: LatentDims,
    heads: usize,
}

/// The low-rank norms' epsilon: `DeepseekV3RMSNorm`'s default, whatever `rms_norm_eps` says.
const LATENT_NORM_EPS: f64 = 1e-6;

impl LatentQkv {
    /// Loads `vars.{q_proj | q_a_proj, q_a_layernorm, q_b_proj}`, `vars.kv_a_proj_with_mqa`,
    /// `vars.kv_a_layernorm` and `vars.kv_b_proj` (`bias`: on `q_a_proj` and `kv_a_proj_with_mqa`,
    /// transformers' `attention_bias`), the query rows of each head reordered `[rotary, rest]`.
    pub fn load(vars: &Vars<'_>, hidden: usize, heads: usize, dims: LatentDims, bias: bool) -> Result<Self> {
        let qk = dims.qk();
        let overflow = || {
            Error::Config(format!("{heads} heads of {qk} query dims and {} value dims are too many", dims.v))
        };
        let q_width = heads.checked_mul(qk).ok_or_else(overflow)?;
        let kv_width =
            dims.nope.checked_add(dims.v).and_then(|w| w.checked_mul(heads)).ok_or_else(overflow)?;
        let kv_a_width = dims.kv_rank.checked_add(dims.rope).ok_or_else(overflow)?;
        if dims.rope % 2 == 1 {
            return Err(Error::Config(format!(
                "qk_rope_head_dim ({}) must be even: RoPE rotates pairs of dims",
                dims.rope
            )));
        }
        // (Read cast to the model's dtype: these matrices are not packed with the others.)
        let linear = |v: &Vars<'_>, input: usize, output: usize, bias: bool| -> Result<Linear> {
            Ok(Linear {
                weight: v.get("weight", &[output, input])?,
                bias: if bias { Some(v.get("bias", &[output])?) } else { None },
            })
        };
        let norm = |v: &Vars<'_>, dim: usize| RmsNorm::load(v, dim, LATENT_NORM_EPS, RmsNormStyle::Llama);
        let reorder = |t: &Tensor| -> Result<Tensor> { rotary_first(t, heads, dims) };
        let q = match dims.q_rank {
            None => {
                let full = linear(&vars.pp("q_proj"), hidden, q_width, false)?;
                Query::Full(Linear { weight: reorder(&full.weight)?, bias: None })
            }
            Some(rank) => {
                let b = linear(&vars.pp("q_b_proj"), rank, q_width, false)?;
                Query::LowRank {
                    a: linear(&vars.pp("q_a_proj"), hidden, rank, bias)?,
                    norm: norm(&vars.pp("q_a_layernorm"), rank)?,
                    b: Linear { weight: reorder(&b.weight)?, bias: None },
                }
            }
        };
        let mut kv_a = linear(&vars.pp("kv_a_proj_with_mqa"), hidden, kv_a_width, bias)?;
        if dims.interleaved {
            // The shared rotary key: the last `rope` rows, one head of `rope` dims.
            let halves = |t: &Tensor| -> Result<Tensor> {
                let rot = t.narrow(0, dims.kv_rank as isize, dims.rope)?;
                let rot = halves_from_interleaved(&rot, 1, dims.rope, dims.rope).map_err(Error::Weight)?;
                Ok(Tensor::cat(&[&t.narrow(0, 0, dims.kv_rank)?, &rot], 0)?)
            };
            kv_a.weight = halves(&kv_a.weight)?;
            kv_a.bias = kv_a.bias.as_ref().map(halves).transpose()?;
        }
        Ok(LatentQkv {
            q,
            kv_a,
            kv_norm: norm(&vars.pp("kv_a_layernorm"), dims.kv_rank)?,
            kv_b: linear(&vars.pp("kv_b_proj"), dims.kv_rank, kv_width, false)?,
            dims,
            heads,
        })
    }

    /// q, k and v of `x` `[batch, seq, hidden]` as `[batch, heads, seq, padded]` (see
    /// [`LatentDims::padded`]), q and k rotated by `cos`/`sin` `[batch, seq, rope]`.
    pub fn project(&self, x: &Tensor, cos: &Tensor, sin: &Tensor) -> Result<(Tensor, Tensor, Tensor)> {
        let (b, s) = (x.dims()[0], x.dims()[1]);
        let (d, h) = (self.dims, self.heads);
        let q = match &self.q {
            Query::Full(l) => l.forward(x)?,
            Query::LowRank { a, norm, b } => b.forward(&norm.forward(&a.forward(x)?)?)?,
        };
        let q = apply_rotary(&q.reshape([b, s, h, d.qk()])?.transpose(1, 2)?, cos, sin)?;
        let compressed = self.kv_a.forward(x)?;
        let latent = self.kv_norm.forward(&compressed.narrow(-1, 0, d.kv_rank)?)?;
        let k_rot = compressed.narrow(-1, d.kv_rank as isize, d.rope)?.reshape([b, 1, s, d.rope])?;
        let k_rot = apply_rotary(&k_rot, cos, sin)?.expand([b, h, s, d.rope])?;
        let kv = self.kv_b.forward(&latent)?.reshape([b, s, h, d.nope + d.v])?.transpose(1, 2)?;
        let k = Tensor::cat(&[&k_rot, &kv.narrow(-1, 0, d.nope)?], -1)?;
        let v = kv.narrow(-1, d.nope as isize, d.v)?;
        let pad = |t: Tensor, width: usize| -> Result<Tensor> {
            if width == d.padded() {
                return Ok(t.contiguous()?);
            }
            let zeros = Tensor::zeros([b, h, s, d.padded() - width], (t.dtype(), t.device()))?;
            Ok(Tensor::cat(&[&t, &zeros], -1)?)
        };
        Ok((pad(q, d.qk())?, pad(k, d.qk())?, pad(v, d.v)?))
    }

    /// The attention's output `[batch, seq, heads, padded]` cut back to the values' width,
    /// `[batch, seq, heads · v]`, what `o_proj` reads.
    pub fn values(&self, out: &Tensor) -> Result<Tensor> {
        let (b, s) = (out.dims()[0], out.dims()[1]);
        let out =
            if self.dims.v == self.dims.padded() { out.clone() } else { out.narrow(-1, 0, self.dims.v)? };
        Ok(out.reshape([b, s, self.heads * self.dims.v])?)
    }
}

/// A query projection's rows `[heads · (nope + rope), ...]` with each head's rows reordered
/// `[rope, nope]`, the rotary rows de-interleaved when the checkpoint interleaves them.
fn rotary_first(t: &Tensor, heads: usize, dims: LatentDims) -> Result<Tensor> {
    let qk = dims.qk();
    let rest: Vec<usize> = t.dims()[1..].to_vec();
    let per_head = t.reshape([heads, qk, rest.iter().product()])?;
    let rot = per_head.narrow(1, dims.nope as isize, dims.rope)?.contiguous()?;
    let rot = if dims.interleaved {
        let flat = rot.reshape([heads * dims.rope, rest.iter().product()])?;
        halves_from_interleaved(&flat, heads, dims.rope, dims.rope).map_err(Error::Weight)?.reshape([
            heads,
            dims.rope,
            rest.iter().product(),
        ])?
    } else {
        rot
    };
    let reordered = Tensor::cat(&[&rot, &per_head.narrow(1, 0, dims.nope)?], 1)?;
    Ok(reordered.reshape(t.dims())?)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each head's rows come out `[rotary (de-interleaved), rest]`.
    #[test]
    fn query_rows_put_the_rotary_part_first() {
        let dims = LatentDims { q_rank: None, kv_rank: 2, nope: 2, rope: 4, v: 3, interleaved: true };
        let rows: Vec<f32> = (0..12).map(|i| i as f32).collect();
        let t = Tensor::from_vec(rows, [12, 1]).unwrap();
        let out = rotary_first(&t, 2, dims).unwrap().reshape([12]).unwrap().to_vec::<f32>().unwrap();
        // Head 0: nope rows 0, 1; rope rows 2, 3, 4, 5 (pairs (2, 3), (4, 5)) → 2, 4, 3, 5.
        assert_eq!(out, vec![2., 4., 3., 5., 0., 1., 8., 10., 9., 11., 6., 7.]);
        let plain = LatentDims { interleaved: false, ..dims };
        let out = rotary_first(&t, 2, plain).unwrap().reshape([12]).unwrap().to_vec::<f32>().unwrap();
        assert_eq!(out, vec![2., 3., 4., 5., 0., 1., 8., 9., 10., 11., 6., 7.]);
        assert_eq!((dims.qk(), dims.padded()), (6, 6));
        assert_eq!(LatentDims { v: 9, ..dims }.padded(), 9);
    }
}
