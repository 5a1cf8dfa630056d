//! Histograms: `histc` (equal-width bins over a float range) and `bincount` (integer values).

use oxtorch_core::{Error, Layout, Result};

use super::rows::contiguous;
use crate::float::{AccFloat, Float};
use crate::storage::CpuElement;

/// torch's linear-bin histogram: bin `((x - lo) * bins / (hi - lo))` computed in the input dtype
/// (each step rounded, as `c10::Half` arithmetic does), `x == hi` in the last bin, elements outside
/// `[lo, hi]` and NaN skipped.
pub(crate) fn histc<T: Float>(v: &[T], l: &Layout, bins: usize, min: f64, max: f64) -> Vec<T> {
    let x = contiguous(v, l);
    let r = |a: T::Acc| T::from_acc(a).to_acc();
    let (lo, hi) = (T::from_f64(min), T::from_f64(max));
    let (lo_a, hi_a) = (lo.to_acc(), hi.to_acc());
    let nb = T::from_f64(bins as f64).to_acc();
    let width = r(hi_a - lo_a);
    let mut hist = crate::pool::checked_vec(bins, <T::Acc as AccFloat>::ZERO);
    for e in x {
        if !(e >= lo && e <= hi) {
            continue;
        }
        let pos = r(r(r(e.to_acc() - lo_a) * nb) / width);
        let mut p = T::from_acc(pos).to_f64() as usize;
        if p >= bins {
            p = bins - 1;
        }
        hist[p] = r(hist[p] + <T::Acc as AccFloat>::ONE);
    }
    hist.into_iter().map(T::from_acc).collect()
}

/// The value of every element of a non-negative integer tensor as an index below `length`.
fn bins_of<T: CpuElement>(v: &[T], l: &Layout, length: usize) -> Result<Vec<usize>> {
    contiguous(v, l)
        .into_iter()
        .map(|x| {
            let i = x.to_i64();
            if i < 0 || i as u64 >= length as u64 {
                Err(Error::msg(format!("bincount: value {i} is out of bounds for {length} bins")))
            } else {
                Ok(i as usize)
            }
        })
        .collect()
}

/// The number of occurrences of each value.
pub(crate) fn bincount<T: CpuElement>(v: &[T], l: &Layout, length: usize) -> Result<Vec<i64>> {
    let mut out = crate::pool::checked_vec(length, 0i64);
    for i in bins_of(v, l, length)? {
        out[i] += 1;
    }
    Ok(out)
}

/// The sum of the weights of each value (weights f32 or f64, accumulated in their type).
pub(crate) fn bincount_weighted<T: CpuElement, W: CpuElement + std::ops::Add<Output = W>>(
    v: &[T],
    l: &Layout,
    (wv, wl): (&[W], &Layout),
    length: usize,
) -> Result<Vec<W>> {
    let w = contiguous(wv, wl);
    let idx = bins_of(v, l, length)?;
    if w.len() != idx.len() {
        return Err(Error::msg("weights should be 1-d and have the same length as input"));
    }
    let mut out = crate::pool::checked_vec(length, W::ZERO);
    for (i, x) in idx.into_iter().zip(w) {
        out[i] = out[i] + x;
    }
    Ok(out)
}
