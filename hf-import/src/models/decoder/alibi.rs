//! ALiBi (BLOOM, MPT): instead of position embeddings, each head's attention scores are biased by
//! `slope_h · j` for key `j`'s position: its index among its row's kept tokens (BLOOM) or its
//! column (MPT). Softmax ignores a bias constant along a query's row, so this is the paper's
//! `-slope · (i - j)` without building it per query.

use oxtorch_tensor::{DType, Device, Tensor};

use crate::error::Result;

/// A family's ALiBi: its heads' slopes and what counts a key's position.
#[derive(Debug, Clone, PartialEq)]
pub struct Alibi {
    /// One slope per attention head.
    pub slopes: Vec<f32>,
    /// Keys are counted over each row's kept tokens (BLOOM's `cumsum(mask) - 1`), not by column.
    pub by_kept_tokens: bool,
}

impl Alibi {
    /// BLOOM's: [`bloom_slopes`], keys counted over the kept tokens.
    pub fn bloom(heads: usize) -> Self {
        Alibi { slopes: bloom_slopes(heads), by_kept_tokens: true }
    }

    /// MPT's: [`mpt_slopes`] with `alibi_bias_max`, keys by column.
    pub fn mpt(heads: usize, bias_max: f64) -> Self {
        Alibi { slopes: mpt_slopes(heads, bias_max), by_kept_tokens: false }
    }
}

/// Each head's slope as transformers' `_get_alibi_slopes` (BLOOM) makes them: for `n` the largest
/// power of two up to `heads`, `b^1 .. b^n` with `b = 2^(-8/n)`; the remaining heads take the odd
/// powers of the next power of two's base, `c^1, c^3, ...` with `c = 2^(-4/n)`.
pub fn bloom_slopes(heads: usize) -> Vec<f32> {
    if heads == 0 {
        return Vec::new();
    }
    let closest = 1usize << heads.ilog2();
    let base = |n: usize| 2f64.powf(-(2f64.powf(-((n as f64).log2() - 3.0)))) as f32;
    let mut out: Vec<f32> = (1..=closest as i32).map(|p| base(closest).powi(p)).collect();
    let extra = base(2 * closest);
    let remaining = closest.min(heads - closest);
    out.extend((0..remaining as i32).map(|i| extra.powi(2 * i + 1)));
    out
}

/// Each head's slope as transformers' `build_mpt_alibi_tensor` makes them: for `n` the smallest
/// power of two from `heads` on, `2^(-k · bias_max / n)` for `k` in `1..=n`; with fewer heads than
/// `n`, the odd `k` first and then the even ones, the first `heads` of those.
pub fn mpt_slopes(heads: usize, bias_max: f64) -> Vec<f32> {
    if heads == 0 {
        return Vec::new();
    }
    let n = heads.next_power_of_two();
    let step = (bias_max / n as f64) as f32;
    let all: Vec<f32> = (1..=n).map(|k| 1.0 / 2f32.powf(k as f32 * step)).collect();
    if n == heads {
        return all;
    }
    all.iter().skip(1).step_by(2).chain(all.iter().step_by(2)).take(heads).copied().collect()
}

/// The slopes as a `[1, heads, 1, 1]` float32 tensor on `device`.
pub(super) fn slope_tensor(alibi: &Alibi, device: Device) -> Result<Tensor> {
    let heads = alibi.slopes.len();
    Ok(Tensor::from_vec(alibi.slopes.clone(), [1, heads, 1, 1])?.to(device)?)
}

/// The biases `[rows, heads, 1, keys]` in `dtype` (made in float32 and cast, as transformers'
/// `build_alibi_tensor`) of `slopes` `[1, heads, 1, 1]`: with `kept` (`[rows, keys]`, 1 = token)
/// each key's index among its row's kept tokens (`(cumsum(mask) - 1) · mask`, padding at 0), else
/// its column.
pub(super) fn bias(slopes: &Tensor, kept: Option<&Tensor>, keys: usize, dtype: DType) -> Result<Tensor> {
    let positions = match kept {
        Some(m) => {
            let m = m.to_dtype(DType::I64)?;
            m.cumsum(1, None)?.sub(1)?.mul(&m)?
        }
        None => Tensor::arange(keys as i64, (DType::I64, slopes.device()))?.unsqueeze(0)?,
    };
    biased(slopes, &positions, dtype)
}

/// The biases `[rows, heads, 1, keys]` in `dtype` of keys at `positions` (`[rows, keys]`).
pub(super) fn biased(slopes: &Tensor, positions: &Tensor, dtype: DType) -> Result<Tensor> {
    let positions = positions.to_dtype(DType::F32)?.unsqueeze(1)?.unsqueeze(1)?;
    Ok(slopes.mul(&positions)?.to_dtype(dtype)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: &[f32], b: &[f32]) -> bool {
        a.len() == b.len() && a.iter().zip(b).all(|(x, y)| (x - y).abs() < 1e-7)
    }

    /// transformers' BLOOM slopes (`_get_alibi_slopes`) for a power of two and for the heads past one.
    #[test]
    fn bloom_slopes_match_transformers() {
        let slopes = bloom_slopes;
        assert!(close(&slopes(4), &[0.25, 0.0625, 0.015625, 0.00390625]), "{:?}", slopes(4));
        // 6 heads: 4 from 2^-2 and two odd powers of 2^-1.
        assert!(close(&slopes(6), &[0.25, 0.0625, 0.015625, 0.00390625, 0.5, 0.125]), "{:?}", slopes(6));
        assert!(close(&slopes(1), &[0.00390625]), "{:?}", slopes(1));
        assert!(slopes(0).is_empty());
    }

    /// transformers' MPT slopes (`build_mpt_alibi_tensor`): powers of two, and 6 heads of 8's (odd
    /// exponents first), with `alibi_bias_max` 8 and 4.
    #[test]
    fn mpt_slopes_match_transformers() {
        let slopes = mpt_slopes;
        assert!(close(&slopes(4, 8.0), &[0.25, 0.0625, 0.015625, 0.00390625]), "{:?}", slopes(4, 8.0));
        let want = [0.25, 0.0625, 0.015625, 0.00390625, 0.5, 0.125];
        assert!(close(&slopes(6, 8.0), &want), "{:?}", slopes(6, 8.0));
        assert!(close(&slopes(2, 4.0), &[0.25, 0.0625]), "{:?}", slopes(2, 4.0));
        assert!(close(&slopes(1, 8.0), &[0.00390625]), "{:?}", slopes(1, 8.0));
    }

    /// Keys are counted over each row's kept tokens; without a mask, by column.
    #[test]
    fn bias_counts_kept_tokens() {
        let s = slope_tensor(&Alibi::bloom(2), Device::Cpu).unwrap();
        let mask = Tensor::from_vec(vec![0i64, 1, 1, 1], [1, 4]).unwrap();
        let b = bias(&s, Some(&mask), 4, DType::F32).unwrap();
        assert_eq!(b.dims(), [1, 2, 1, 4]);
        let (h0, h1) = (0.0625, 0.00390625);
        assert_eq!(b.to_vec::<f32>().unwrap(), vec![0.0, 0.0, h0, 2.0 * h0, 0.0, 0.0, h1, 2.0 * h1]);
        let b = bias(&s, None, 3, DType::F32).unwrap();
        assert_eq!(b.to_vec::<f32>().unwrap(), vec![0.0, h0, 2.0 * h0, 0.0, h1, 2.0 * h1]);
    }
}
