//! Max and average pooling over precomputed windows (see [`NnOp::MaxPool`]).
//!
//! [`NnOp::MaxPool`]: oxtorch_core::ops::NnOp::MaxPool

use oxtorch_core::{BackendStorage, Error, Layout, Result};
use rayon::prelude::*;

use super::{contiguous_strides, for_each_index, narrow, widen, Wide};
use crate::CpuStorage;

type Tap = (isize, usize, usize, usize);

/// The in-range input positions of one tap.
fn tap_positions(&(start, step, len, _): &Tap, size: usize) -> impl Iterator<Item = usize> {
    (0..len).filter_map(move |j| {
        let i = start + (j * step) as isize;
        (i >= 0 && (i as usize) < size).then_some(i as usize)
    })
}

/// Shapes of a pooling problem: batch count, spatial input sizes, output sizes.
struct Problem {
    batch: usize,
    spatial: Vec<usize>,
    out: Vec<usize>,
}

fn problem(op: &str, l: &Layout, taps: &[Vec<Tap>]) -> Result<Problem> {
    let dims = l.dims();
    let n = taps.len();
    if dims.len() < n {
        return Err(Error::shape(format!("{op}: expected at least {n} dims, got {}", l.shape())));
    }
    let spatial = dims[dims.len() - n..].to_vec();
    Ok(Problem {
        batch: dims[..dims.len() - n].iter().product(),
        spatial,
        out: taps.iter().map(Vec::len).collect(),
    })
}

/// Calls `f(flat_input_index)` for every in-range input position of the window at output `o`.
fn for_window(
    taps: &[Vec<Tap>],
    spatial: &[usize],
    strides: &[usize],
    o: &[usize],
    f: &mut impl FnMut(usize),
) {
    fn rec(
        d: usize,
        base: usize,
        taps: &[Vec<Tap>],
        spatial: &[usize],
        strides: &[usize],
        o: &[usize],
        f: &mut impl FnMut(usize),
    ) {
        if d == taps.len() {
            f(base);
            return;
        }
        for i in tap_positions(&taps[d][o[d]], spatial[d]) {
            rec(d + 1, base + i * strides[d], taps, spatial, strides, o, f);
        }
    }
    rec(0, 0, taps, spatial, strides, o, f)
}

/// Max of a window with its index: NaN wins (the last NaN, as torch's `val > max || isnan(val)`).
trait MaxElem: Copy + Send + Sync {
    const LOWEST: Self;
    fn beats(self, max: Self) -> bool;
}

impl MaxElem for f64 {
    const LOWEST: Self = f64::NEG_INFINITY;
    fn beats(self, max: Self) -> bool {
        self > max || self.is_nan()
    }
}

impl MaxElem for i64 {
    const LOWEST: Self = i64::MIN;
    fn beats(self, max: Self) -> bool {
        self > max
    }
}

fn max_typed<T: MaxElem>(x: &[T], p: &Problem, taps: &[Vec<Tap>]) -> (Vec<T>, Vec<i64>) {
    let img: usize = p.spatial.iter().product();
    let per: usize = p.out.iter().product();
    let strides = contiguous_strides(&p.spatial);
    let mut vals = crate::pool::checked_vec(p.batch * per, T::LOWEST);
    let mut idxs = crate::pool::checked_vec(p.batch * per, 0i64);
    if per == 0 {
        return (vals, idxs);
    }
    vals.par_chunks_mut(per).zip(idxs.par_chunks_mut(per)).enumerate().for_each(|(b, (vo, io))| {
        let src = &x[b * img..(b + 1) * img];
        for_each_index(&p.out, |flat, o| {
            let (mut best, mut at, mut first) = (T::LOWEST, 0usize, true);
            for_window(taps, &p.spatial, &strides, o, &mut |i| {
                if first {
                    at = i;
                    first = false;
                }
                if src[i].beats(best) {
                    best = src[i];
                    at = i;
                }
            });
            vo[flat] = best;
            io[flat] = at as i64;
        });
    });
    (vals, idxs)
}

/// Max pooling; outputs `(values, i64 indices)`.
pub fn max_pool(s: &CpuStorage, l: &Layout, taps: &[Vec<Tap>]) -> Result<Vec<CpuStorage>> {
    let p = problem("max_pool", l, taps)?;
    let (vals, idxs) = match widen("max_pool", s, l)? {
        Wide::F(v) => {
            let (a, i) = max_typed(&v, &p, taps);
            (Wide::F(a), i)
        }
        Wide::I(v) => {
            let (a, i) = max_typed(&v, &p, taps);
            (Wide::I(a), i)
        }
    };
    Ok(vec![narrow(vals, s.dtype())?, CpuStorage::I64(idxs.into())])
}

/// Average pooling.
pub fn avg_pool(
    s: &CpuStorage,
    l: &Layout,
    taps: &[Vec<Tap>],
    divisor_override: Option<i64>,
) -> Result<CpuStorage> {
    let p = problem("avg_pool", l, taps)?;
    let img: usize = p.spatial.iter().product();
    let per: usize = p.out.iter().product();
    let strides = contiguous_strides(&p.spatial);
    let divisor = |o: &[usize]| -> i64 {
        divisor_override.unwrap_or_else(|| o.iter().enumerate().map(|(d, &i)| taps[d][i].3 as i64).product())
    };
    let out = match widen("avg_pool", s, l)? {
        Wide::F(x) => {
            let mut out = crate::pool::checked_vec(p.batch * per, 0.0f64);
            if per > 0 {
                out.par_chunks_mut(per).enumerate().for_each(|(b, dst)| {
                    let src = &x[b * img..(b + 1) * img];
                    for_each_index(&p.out, |flat, o| {
                        let mut sum = 0.0;
                        for_window(taps, &p.spatial, &strides, o, &mut |i| sum += src[i]);
                        dst[flat] = sum / divisor(o) as f64;
                    });
                });
            }
            Wide::F(out)
        }
        Wide::I(x) => {
            let mut out = crate::pool::checked_vec(p.batch * per, 0i64);
            if per > 0 {
                out.par_chunks_mut(per).enumerate().for_each(|(b, dst)| {
                    let src = &x[b * img..(b + 1) * img];
                    for_each_index(&p.out, |flat, o| {
                        let mut sum = 0i64;
                        for_window(taps, &p.spatial, &strides, o, &mut |i| sum = sum.wrapping_add(src[i]));
                        let div = divisor(o);
                        dst[flat] = if div == 0 { 0 } else { sum.wrapping_div(div) };
                    });
                });
            }
            Wide::I(out)
        }
    };
    narrow(out, s.dtype())
}
