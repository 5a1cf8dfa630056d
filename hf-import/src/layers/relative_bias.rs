//! MPNet's relative-position attention bias (T5's bidirectional buckets): one learned value per
//! head and bucket of `key position − query position`, added to every layer's attention scores.

use oxtorch_tensor::{DType, Tensor};

use crate::error::{Error, Result};
use crate::weights::Vars;

/// The buckets transformers' `MPNetEncoder.compute_position_bias` uses, whatever the config says
/// (its table has `relative_attention_num_buckets` rows).
const BUCKETS: usize = 32;
/// Distances from this one on share the last bucket of their side.
const MAX_DISTANCE: i64 = 128;

/// `relative_attention_bias` `[buckets, heads]`.
#[derive(Debug, Clone)]
pub struct RelativeBias {
    table: Tensor,
}

impl RelativeBias {
    /// `vars.weight` `[buckets, heads]`, with at least the 32 buckets the model indexes.
    pub fn load(vars: &Vars<'_>, buckets: usize, heads: usize) -> Result<Self> {
        if buckets < BUCKETS {
            return Err(Error::Config(format!(
                "relative_attention_num_buckets ({buckets}) must be at least {BUCKETS}: MPNet indexes {BUCKETS} buckets"
            )));
        }
        Ok(RelativeBias { table: vars.get("weight", &[buckets, heads])? })
    }

    /// `[1, heads, seq, seq]`: the bias of query `i` attending to key `j`, in `dtype`, on the
    /// table's device.
    pub fn bias(&self, seq: usize, dtype: DType) -> Result<Tensor> {
        self.bias_at(&(0..seq).collect::<Vec<_>>(), dtype)
    }

    /// [`RelativeBias::bias`] between tokens at `positions` of a row (a packed sequence's tokens
    /// at their padded places): `[1, heads, n, n]`.
    pub fn bias_at(&self, positions: &[usize], dtype: DType) -> Result<Tensor> {
        let n = positions.len();
        let index: Vec<i64> = positions
            .iter()
            .flat_map(|&i| positions.iter().map(move |&j| bucket(j as i64 - i as i64) as i64))
            .collect();
        let index = Tensor::from_vec(index, [n * n])?.to(self.table.device())?;
        let heads = self.table.dims()[1];
        let values = self.table.index_select(0, &index)?.reshape([n, n, heads])?;
        Ok(values.permute([2, 0, 1])?.unsqueeze(0)?.to_dtype(dtype)?)
    }
}

/// transformers' `MPNetEncoder.relative_position_bucket(relative, 32, 128)`: keys before the
/// query take buckets 0..16, keys after it 16..32; distances below 8 have a bucket each, larger
/// ones log-spaced buckets up to distance 128, then the side's last bucket.
pub fn bucket(relative: i64) -> usize {
    let half = BUCKETS as i64 / 2;
    let n = -relative;
    let side = if n < 0 { half } else { 0 };
    let n = n.abs();
    let exact = half / 2;
    if n < exact {
        return (side + n) as usize;
    }
    // `exact + log(n / exact) / log(128 / exact) * (half - exact)`, truncated: transformers computes
    // it in float32, exact at the powers of two (16 → 10, 32 → 12, 64 → 14), which f64 rounding
    // could put a hair below; other distances are at least 0.01 from a bucket's edge.
    let scaled =
        (n as f64 / exact as f64).ln() / (MAX_DISTANCE as f64 / exact as f64).ln() * (half - exact) as f64;
    let large = (exact + (scaled + 1e-9) as i64).min(half - 1);
    (side + large) as usize
}

/// transformers' `T5Attention._relative_position_bucket` of `relative` (key position − query
/// position): with `bidirectional` attention (encoders) keys after the query take the upper half of
/// the buckets; without it (decoders) keys after the query share bucket 0. Below `max_exact` (half
/// the side's buckets) each distance has a bucket, then log-spaced buckets up to `max_distance`, then
/// the side's last. The log-spaced bucket is computed in float32 and truncated as torch does on x86
/// (exact at the powers of two, where float64 could land a hair below; a value that is not finite
/// or does not fit becomes `i64::MIN`). With too few buckets or a `max_distance` inside the exact
/// ones the result can fall outside `0..num_buckets` (transformers then fails to index its table):
/// the caller checks.
pub fn t5_bucket(relative: i64, bidirectional: bool, num_buckets: usize, max_distance: usize) -> i64 {
    let (mut buckets, mut base) = (num_buckets as i64, 0i64);
    let n = if bidirectional {
        buckets /= 2;
        if relative > 0 {
            base = buckets;
        }
        relative.abs()
    } else {
        (-relative).max(0)
    };
    let max_exact = buckets / 2;
    if n < max_exact {
        return base + n;
    }
    let ratio = (n as f32 / max_exact as f32).ln();
    let span = (max_distance as f64 / max_exact as f64).ln() as f32;
    let scaled = ratio / span * (buckets - max_exact) as f32;
    // x86's conversion (cvttss2si): anything that is not a finite i64 becomes i64::MIN.
    let truncated = if scaled.is_finite() && scaled.abs() < 9.2e18 { scaled as i64 } else { i64::MIN };
    base.wrapping_add(max_exact.wrapping_add(truncated).min(buckets - 1))
}

#[cfg(test)]
mod tests {
    use super::{bucket, t5_bucket};

    /// T5's buckets with MPNet's sizes are MPNet's; the decoder's put every key after the query in
    /// bucket 0 and use all 32 for the keys before it.
    #[test]
    fn t5_buckets_match_mpnets_and_the_one_sided_ones() {
        for rel in -300..=300 {
            assert_eq!(t5_bucket(rel, true, 32, 128), bucket(rel) as i64, "{rel}");
        }
        assert_eq!([t5_bucket(5, false, 32, 128), t5_bucket(0, false, 32, 128)], [0, 0]);
        assert_eq!(
            [t5_bucket(-1, false, 32, 128), t5_bucket(-15, false, 32, 128), t5_bucket(-16, false, 32, 128)],
            [1, 15, 16]
        );
        // 16 + log(n / 16) / log(8) * 16: 32 → 21, 64 → 26, 127 → 31, 128 and on → 31.
        assert_eq!(
            [t5_bucket(-32, false, 32, 128), t5_bucket(-64, false, 32, 128), t5_bucket(-500, false, 32, 128)],
            [21, 26, 31]
        );
    }

    /// Spot values of transformers' buckets (the whole range -200..=200 is checked against its
    /// golden in `families.rs`).
    #[test]
    fn buckets_split_by_side_and_grow_logarithmically() {
        assert_eq!(bucket(0), 0);
        assert_eq!(
            [bucket(-1), bucket(-7), bucket(-8), bucket(-16), bucket(-64), bucket(-200)],
            [1, 7, 8, 10, 14, 15]
        );
        assert_eq!(
            [bucket(1), bucket(7), bucket(8), bucket(16), bucket(127), bucket(128)],
            [17, 23, 24, 26, 31, 31]
        );
    }
}
