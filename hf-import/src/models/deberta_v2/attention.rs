//! DeBERTa's disentangled self-attention: content-to-content scores plus, with relative
//! attention, content-to-position (`c2p`: each query against the embedding of its distance to each
//! key) and position-to-content (`p2c`: each key against the embedding of its distance to each
//! query), the distances log-bucketed past half of `position_buckets`, all divided by
//! `sqrt(head_dim * scale_factor)`.

use oxtorch_tensor::Tensor;

use super::config::{DebertaV2Config, RelativeConfig};
use crate::error::Result;
use crate::layers::{eager_attention, EncoderLayer, LayerNorm, Linear};

/// transformers' `make_log_bucket_position` for one relative position, in float32 as torch
/// computes it: distances within `bucket_size / 2` are kept, longer ones are mapped to
/// `mid + ceil(log(|rel| / mid) / log((max_position - 1) / mid) * (mid - 1))`, with the sign.
pub fn log_bucket_position(relative: i64, bucket_size: i64, max_position: i64) -> i64 {
    let mid = bucket_size / 2;
    let abs = if relative < mid && relative > -mid { mid - 1 } else { relative.abs() };
    if abs <= mid {
        return relative;
    }
    let ratio = ((max_position - 1) as f64 / mid as f64) as f32;
    let log_pos = ((abs as f32 / mid as f32).ln() / ratio.ln() * (mid - 1) as f32).ceil() + mid as f32;
    let bucket = log_pos * relative.signum() as f32;
    // A degenerate config (`max_relative_positions - 1 == position_buckets / 2`) divides by
    // log(1): torch's conversion of the infinity (or NaN) to int64 on x86 gives int64's minimum.
    // (The indices are clamped to the table either way.)
    if bucket.is_finite() && bucket.abs() < 9.2e18 {
        bucket as i64
    } else {
        i64::MIN
    }
}

/// `build_relative_position` for query `i` and key `j`: `i - j`, log-bucketed when the config has
/// buckets.
fn relative_position(i: usize, j: usize, rel: &RelativeConfig) -> i64 {
    let d = i as i64 - j as i64;
    if rel.buckets > 0 && rel.max_relative > 0 {
        log_bucket_position(d, rel.buckets, rel.max_relative)
    } else {
        d
    }
}

/// What every layer of one forward shares: the rows of the (normed) relative embeddings the
/// sequence's distances reach, and the indices into them of each query/key pair.
#[derive(Debug, Clone)]
pub struct RelativeInputs {
    /// the rows `lo..=hi` of the relative embeddings `[rows, hidden]`
    embeddings: Tensor,
    /// `c2p_pos - lo` `[1, 1, seq, seq]`: the row of the distance from query `i` to key `j`
    c2p: Tensor,
    /// `p2c_pos - lo` `[1, 1, seq, seq]`: the row of the distance from key `i` to query `j`
    p2c: Tensor,
}

impl RelativeInputs {
    /// The inputs for a sequence of `seq` tokens: the relative embeddings `table` `[2 * span,
    /// hidden]` (normed by `norm` when the config says so) cut to the rows the distances use.
    pub fn new(table: &Tensor, norm: Option<&LayerNorm>, rel: &RelativeConfig, seq: usize) -> Result<Self> {
        let span = rel.span as i64;
        let clamp = |p: i64| (p + span).clamp(0, 2 * span - 1);
        let mut c2p = Vec::with_capacity(seq * seq);
        let mut p2c = Vec::with_capacity(seq * seq);
        for i in 0..seq {
            for j in 0..seq {
                let r = relative_position(i, j, rel);
                c2p.push(clamp(r));
                p2c.push(clamp(-r));
            }
        }
        let lo = c2p.iter().chain(&p2c).copied().min().unwrap_or(0);
        let hi = c2p.iter().chain(&p2c).copied().max().unwrap_or(0);
        let device = table.device();
        let index = |v: Vec<i64>| -> Result<Tensor> {
            let shifted = v.into_iter().map(|x| x - lo).collect();
            Ok(Tensor::from_vec(shifted, [1, 1, seq, seq])?.to(device)?)
        };
        let rows = table.narrow(0, lo as isize, (hi - lo + 1) as usize)?;
        let embeddings = match norm {
            Some(norm) => norm.forward(&rows)?,
            None => rows,
        };
        Ok(RelativeInputs { embeddings, c2p: index(c2p)?, p2c: index(p2c)? })
    }
}

/// One DeBERTa-v2 block: BERT's post-norm block (its `query_proj`, `key_proj`, `value_proj` as
/// query, key and value) with disentangled attention scores.
#[derive(Debug, Clone)]
pub struct DebertaLayer {
    /// the projections, output, norms and MLP
    pub block: EncoderLayer,
    /// `pos_key_proj` (c2p without `share_att_key`)
    pub pos_key: Option<Linear>,
    /// `pos_query_proj` (p2c without `share_att_key`)
    pub pos_query: Option<Linear>,
}

impl DebertaLayer {
    /// `x` `[batch, seq, hidden]` under the additive `mask` `[batch, 1, seq, seq]`, with the
    /// relative positions' inputs when the model has relative attention.
    pub fn forward(
        &self,
        x: &Tensor,
        mask: &Tensor,
        relative: Option<&RelativeInputs>,
        c: &DebertaV2Config,
    ) -> Result<Tensor> {
        let (b, s, (heads, d)) = (x.dims()[0], x.dims()[1], (c.heads, c.head_dim));
        let split = |t: Tensor| -> Result<Tensor> { Ok(t.reshape([b, s, heads, d])?.transpose(1, 2)?) };
        let block = &self.block;
        let q = split(block.query.forward(x)?)?;
        let k = split(block.key.forward(x)?)?;
        let v = split(block.value.forward(x)?)?;
        // `sqrt(head_dim * scale_factor)` in float32, as transformers computes it.
        let scale = ((d as f32) * c.scale_factor as f32).sqrt();
        let bias = match relative {
            Some(rel) => self.relative_scores(&q, &k, rel, c)?.map(|r| r.div(scale as f64)).transpose()?,
            None => None,
        };
        let bias = match bias {
            Some(r) => r.add(mask)?,
            None => mask.clone(),
        };
        let ctx = eager_attention(&q, &k, &v, Some(&bias), 1.0 / scale as f64, None)?;
        let ctx = ctx.transpose(1, 2)?.reshape([b, s, heads * d])?;
        block.after_attention(&ctx, x, c.act)
    }

    /// `c2p + p2c` `[batch, heads, seq, seq]` (not yet divided by the scale), `None` when
    /// `pos_att_type` names neither.
    fn relative_scores(
        &self,
        q: &Tensor,
        k: &Tensor,
        rel: &RelativeInputs,
        c: &DebertaV2Config,
    ) -> Result<Option<Tensor>> {
        let (b, heads, s, d) = (q.dims()[0], q.dims()[1], q.dims()[2], c.head_dim);
        let rows = rel.embeddings.dims()[0];
        // A projection of the relative embeddings as `[1, heads, head_dim, rows]`.
        let positions = |proj: &Linear| -> Result<Tensor> {
            Ok(proj.forward(&rel.embeddings)?.reshape([rows, heads, d])?.permute([1, 2, 0])?.unsqueeze(0)?)
        };
        let expand = |index: &Tensor| index.expand([b, heads, s, s]);
        let mut score: Option<Tensor> = None;
        if c.c2p {
            let proj = self.pos_key.as_ref().unwrap_or(&self.block.key);
            let c2p = q.matmul(&positions(proj)?)?.gather(-1, &expand(&rel.c2p)?)?;
            score = Some(c2p);
        }
        if c.p2c {
            let proj = self.pos_query.as_ref().unwrap_or(&self.block.query);
            let p2c = k.matmul(&positions(proj)?)?.gather(-1, &expand(&rel.p2c)?)?.transpose(-1, -2)?;
            score = Some(match score {
                Some(c2p) => c2p.add(&p2c)?,
                None => p2c,
            });
        }
        Ok(score)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Distances within half the buckets are kept; longer ones grow logarithmically up to
    /// `max_position`, antisymmetric (v3's 256 buckets over 512 positions).
    #[test]
    fn log_buckets() {
        for r in -128..=128 {
            assert_eq!(log_bucket_position(r, 256, 512), r);
        }
        assert_eq!(log_bucket_position(129, 256, 512), 129);
        assert_eq!(log_bucket_position(511, 256, 512), 255);
        for r in 1..2000 {
            assert_eq!(log_bucket_position(-r, 256, 512), -log_bucket_position(r, 256, 512));
            assert!(log_bucket_position(r + 1, 256, 512) >= log_bucket_position(r, 256, 512));
        }
    }
}
