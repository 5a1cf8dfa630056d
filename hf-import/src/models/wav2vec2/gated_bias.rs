//! WavLM's gated relative position bias: one learned value per head and bucket of `key frame −
//! query frame` (T5's bidirectional buckets, `num_buckets` of them, log-spaced up to
//! `max_bucket_distance`), kept in the first block and shared by all, which each block scales per
//! head and query frame by a gate read off the attention's input:
//! `gate = a · (b · c − 1) + 2`, with `a`, `b` the sigmoids of the two sums of four of
//! `gru_rel_pos_linear(x_head)` and `c` the block's learned `gru_rel_pos_const`.

use oxtorch_tensor::Tensor;

use crate::error::{Error, Result};
use crate::layers::Linear;
use crate::weights::Vars;

/// One block's gate: `gru_rel_pos_linear` `[8, head_dim]` and `gru_rel_pos_const` `[1, heads, 1, 1]`.
#[derive(Debug, Clone)]
struct Gate {
    linear: Linear,
    scale: Tensor,
}

/// WavLM's relative position bias and every block's gate (see the module docs).
#[derive(Debug, Clone)]
pub(super) struct GatedRelativeBias {
    /// the first block's `rel_attn_embed.weight` `[num_buckets, heads]`
    table: Tensor,
    max_distance: usize,
    gates: Vec<Gate>,
}

impl GatedRelativeBias {
    /// The table in `layers.0.attention.rel_attn_embed` and each of `blocks` blocks' gate in
    /// `layers.{i}.attention`.
    pub(super) fn load(
        layers: &Vars<'_>,
        blocks: usize,
        heads: usize,
        head_dim: usize,
        num_buckets: usize,
        max_distance: usize,
    ) -> Result<Self> {
        if max_distance == 0 {
            // (transformers' `math.log(0)` fails.)
            return Err(Error::Config("max_bucket_distance must be positive, got 0".into()));
        }
        let table = layers.pp(0).pp("attention").pp("rel_attn_embed").get("weight", &[num_buckets, heads])?;
        let gates = (0..blocks)
            .map(|i| {
                let att = layers.pp(i).pp("attention");
                Ok(Gate {
                    linear: Linear::load(&att.pp("gru_rel_pos_linear"), head_dim, 8, true)?,
                    scale: att.get("gru_rel_pos_const", &[1, heads, 1, 1])?,
                })
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(GatedRelativeBias { table, max_distance, gates })
    }

    /// The ungated bias `[1, heads, frames, frames]` of query frame `i` attending to key frame `j`,
    /// in the table's dtype and on its device; an error where the config's buckets do not index
    /// the table (as transformers' lookup fails).
    pub(super) fn bias(&self, frames: usize) -> Result<Tensor> {
        let (buckets, heads) = (self.table.dims()[0], self.table.dims()[1]);
        let of_distance = |d: i64| -> Result<i64> {
            let b = wavlm_bucket(d, buckets, self.max_distance);
            match (0..buckets as i64).contains(&b) {
                true => Ok(b),
                false => Err(Error::Config(format!(
                    "num_buckets ({buckets}) and max_bucket_distance ({}) put relative distance {d} \
                     outside the position bias table",
                    self.max_distance
                ))),
            }
        };
        let span = frames as i64 - 1;
        let by_distance = (-span..=span).map(of_distance).collect::<Result<Vec<_>>>()?;
        let index: Vec<i64> = (0..frames)
            .flat_map(|i| (0..frames).map(move |j| j + span as usize - i))
            .map(|k| by_distance[k])
            .collect();
        let index = Tensor::from_vec(index, [frames * frames])?.to(self.table.device())?;
        let values = self.table.index_select(0, &index)?.reshape([frames, frames, heads])?;
        Ok(values.permute([2, 0, 1])?.unsqueeze(0)?)
    }

    /// `bias` `[1, heads, frames, frames]` scaled by block `block`'s gate of the attention input
    /// `x` `[batch, frames, hidden]`: `[batch, heads, frames, frames]`.
    pub(super) fn gated(&self, block: usize, x: &Tensor, bias: &Tensor) -> Result<Tensor> {
        let gate = &self.gates[block];
        let &[batch, frames, hidden] = x.dims() else { unreachable!("the encoder's hidden states are 3-D") };
        let heads = self.table.dims()[1];
        let per_head = x.reshape([batch, frames, heads, hidden / heads])?.transpose(1, 2)?;
        let sums = gate.linear.forward(&per_head)?.reshape([batch, heads, frames, 2, 4])?.sum([4], false)?;
        let sig = sums.sigmoid()?;
        let (a, b) = (sig.narrow(3, 0, 1)?, sig.narrow(3, 1, 1)?);
        let factor = a.mul(&b.mul(&gate.scale)?.sub(1.0)?)?.add(2.0)?;
        Ok(factor.mul(bias)?)
    }
}

/// transformers' `WavLMAttention._relative_positions_bucket` of `relative` (key frame − query
/// frame): keys after the query take the upper half of the buckets; below a quarter of
/// `num_buckets` each distance has a bucket, then log-spaced ones up to `max_distance`, then the
/// side's last. Computed in float32 and truncated as torch does on x86 (the offset added before
/// the truncation, unlike T5's; a value that is not finite becomes `i64::MIN`). A config with
/// too few buckets gives a bucket outside `0..num_buckets`: the caller checks.
pub(super) fn wavlm_bucket(relative: i64, num_buckets: usize, max_distance: usize) -> i64 {
    let half = num_buckets as i64 / 2;
    let base = if relative > 0 { half } else { 0 };
    let n = relative.abs();
    let max_exact = half / 2;
    if n < max_exact {
        return base + n;
    }
    let ratio = (n as f32 / max_exact as f32).ln();
    let span = (max_distance as f64 / max_exact as f64).ln() as f32;
    let large = max_exact as f32 + ratio / span * (half - max_exact) as f32;
    let truncated = if large.is_finite() && large.abs() < 9.2e18 { large as i64 } else { i64::MIN };
    base.wrapping_add(truncated.min(half - 1))
}

#[cfg(test)]
mod tests {
    use super::wavlm_bucket;

    /// WavLM's defaults (320 buckets up to distance 800): 80 exact distances a side, then
    /// log-spaced buckets reaching the side's last (159, 319) at 800.
    #[test]
    fn buckets_split_by_side_and_grow_logarithmically() {
        let b = |r| wavlm_bucket(r, 320, 800);
        assert_eq!((b(0), b(-1), b(1), b(-79), b(79)), (0, 1, 161, 79, 239));
        // 80 + ln(n / 80) / ln(10) · 80: n = 160 → 104.08, n = 400 → 135.9.
        assert_eq!((b(-80), b(-160), b(-400), b(400)), (80, 104, 135, 295));
        assert_eq!((b(-799), b(-800), b(-5000), b(5000)), (159, 159, 159, 319));
        // Too few buckets for one exact distance: no bucket in range.
        assert!(wavlm_bucket(3, 2, 800) < 0);
    }
}
