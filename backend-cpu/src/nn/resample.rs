//! Separable resampling (nearest, linear, cubic) over precomputed taps (see [`NnOp::Resample`]).
//!
//! [`NnOp::Resample`]: oxtorch_core::ops::NnOp::Resample

use oxtorch_core::{BackendStorage, Error, Layout, Result};
use rayon::prelude::*;

use super::{contiguous_strides, for_each_index, narrow, widen, Wide};
use crate::CpuStorage;

type Taps = [Vec<Vec<(usize, f64)>>];

fn sum_taps(src: &[f64], taps: &Taps, strides: &[usize], o: &[usize], d: usize, base: usize, w: f64) -> f64 {
    if d == taps.len() {
        return w * src[base];
    }
    taps[d][o[d]]
        .iter()
        .map(|&(i, wi)| sum_taps(src, taps, strides, o, d + 1, base + i * strides[d], w * wi))
        .sum()
}

/// Resamples the trailing `taps.len()` dims of `(s, l)`.
pub fn resample(s: &CpuStorage, l: &Layout, taps: &Taps) -> Result<CpuStorage> {
    let dims = l.dims();
    let n = taps.len();
    if dims.len() < n {
        return Err(Error::shape(format!("interpolate: expected at least {n} dims, got {}", l.shape())));
    }
    let spatial = &dims[dims.len() - n..];
    for (d, t) in taps.iter().enumerate() {
        if t.iter().flatten().any(|&(i, _)| i >= spatial[d]) {
            return Err(Error::shape("interpolate: a tap lies outside the input".to_string()));
        }
    }
    let batch: usize = dims[..dims.len() - n].iter().product();
    let img: usize = spatial.iter().product();
    let out_sp: Vec<usize> = taps.iter().map(Vec::len).collect();
    let per: usize = out_sp.iter().product();
    let strides = contiguous_strides(spatial);
    let x = match widen("interpolate", s, l)? {
        Wide::F(v) => v,
        Wide::I(v) => v.into_iter().map(|e| e as f64).collect(),
    };
    let mut out = crate::pool::checked_vec(batch * per, 0.0f64);
    if per > 0 {
        out.par_chunks_mut(per).enumerate().for_each(|(b, dst)| {
            let src = &x[b * img..(b + 1) * img];
            for_each_index(&out_sp, |flat, o| dst[flat] = sum_taps(src, taps, &strides, o, 0, 0, 1.0));
        });
    }
    if s.dtype().is_float() {
        narrow(Wide::F(out), s.dtype())
    } else {
        // Integer images (uint8) round to nearest and saturate, as torch's uint8 resampling does.
        narrow(Wide::I(out.into_iter().map(|v| v.round().clamp(0.0, 255.0) as i64).collect()), s.dtype())
    }
}
