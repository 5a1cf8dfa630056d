//! Layer normalisation in one pass over memory ([`NnOp::LayerNorm`]).
//!
//! Composed, `layer_norm` is a mean, a subtraction, a square, a second mean, an rsqrt, a product
//! and the affine product and sum: six passes over the whole input and as many buffers. Here each
//! row is read from memory once (it stays in L1 for the three row passes: the mean, the centred
//! sum of squares, then `(x - mean) · rstd · w + b` into the output). The statistics accumulate in
//! f64, so they are at least as accurate as the composition's f32 reductions.
//!
//! [`NnOp::LayerNorm`]: oxtorch_core::ops::NnOp::LayerNorm

use std::mem::MaybeUninit;

use oxtorch_core::{BackendStorage, DType, Error, Layout, Result};

use crate::simd::{fold_lanes, level, multiversion, Level};
use crate::CpuStorage;

/// Output elements per parallel task (whole rows).
const TASK_ELEMS: usize = 16 << 10;

/// `(x - mean) / sqrt(var + eps) · weight + bias` over the rows of `x` `[R, C]` (biased variance),
/// with `weight` and `bias` `[C]` when given; all f32. Output `[R, C]`.
pub fn layer_norm(
    (x, lx): (&CpuStorage, &Layout),
    weight: Option<(&CpuStorage, &Layout)>,
    bias: Option<(&CpuStorage, &Layout)>,
    eps: f64,
) -> Result<CpuStorage> {
    let dims = lx.dims();
    let params_fit =
        [weight, bias].into_iter().flatten().all(|(_, l)| l.dims().len() == 1 && l.dims()[0] == dims[1]);
    if dims.len() != 2 || !params_fit {
        return Err(Error::shape(format!(
            "layer_norm: input {}{}{} do not fit (expected [R, C] and [C])",
            lx.shape(),
            weight.map(|(_, l)| format!(", weight {}", l.shape())).unwrap_or_default(),
            bias.map(|(_, l)| format!(", bias {}", l.shape())).unwrap_or_default(),
        )));
    }
    for (s, _) in [Some((x, lx)), weight, bias].into_iter().flatten() {
        if s.dtype() != DType::F32 {
            return Err(Error::UnsupportedDType { op: "layer_norm", dtype: s.dtype() });
        }
    }
    let (rows, cols) = (dims[0], dims[1]);
    let n = rows * cols;
    // A contiguous input is read in place; any other layout through a copy.
    let copied;
    let xs: &[f32] = if lx.is_contiguous() {
        &x.as_slice::<f32>()?[lx.offset()..lx.offset() + n]
    } else {
        copied = crate::copy::to_contiguous(x, lx, DType::F32)?;
        copied.as_slice::<f32>()?
    };
    let contiguous = |(s, l): (&CpuStorage, &Layout)| crate::copy::to_contiguous(s, l, DType::F32);
    let (w, b) = (weight.map(contiguous).transpose()?, bias.map(contiguous).transpose()?);
    let (w, b) = (
        w.as_ref().map(|w| w.as_slice::<f32>()).transpose()?,
        b.as_ref().map(|b| b.as_slice::<f32>()).transpose()?,
    );
    let mut out: Vec<f32> = crate::pool::take(n);
    // No rows to normalise when `cols` is 0.
    if let Some(fit) = TASK_ELEMS.checked_div(cols) {
        let rows_per_task = fit.max(1);
        let dst = &mut out.spare_capacity_mut()[..n];
        crate::par::for_each_chunk_mut(dst, rows_per_task * cols, &|i, chunk| {
            let start = i * rows_per_task * cols;
            let src = &xs[start..start + chunk.len()];
            normalize_rows(src, cols, w, b, eps, chunk);
        });
    }
    // SAFETY: every row was written above (there are none when `cols` is 0).
    unsafe { out.set_len(n) };
    Ok(CpuStorage::from_vec(out))
}

multiversion! {
    /// Normalises each row of `cols` values of `x` into `out` (as long as `x`).
    pub fn normalize_rows<>(x: &[f32], cols: usize, w: Option<&[f32]>, b: Option<&[f32]>, eps: f64, out: &mut [MaybeUninit<f32>]) where [] {
        for (row, dst) in x.chunks_exact(cols).zip(out.chunks_exact_mut(cols)) {
            let (mean, rstd) = moments(row, eps);
            let (mean, rstd) = (mean as f32, rstd as f32);
            match (w, b) {
                (Some(w), Some(b)) => {
                    for (((o, &v), &w), &b) in dst.iter_mut().zip(row).zip(w).zip(b) {
                        o.write((v - mean) * rstd * w + b);
                    }
                }
                (Some(w), None) => {
                    for ((o, &v), &w) in dst.iter_mut().zip(row).zip(w) {
                        o.write((v - mean) * rstd * w);
                    }
                }
                (None, Some(b)) => {
                    for ((o, &v), &b) in dst.iter_mut().zip(row).zip(b) {
                        o.write((v - mean) * rstd + b);
                    }
                }
                (None, None) => {
                    for (o, &v) in dst.iter_mut().zip(row) {
                        o.write((v - mean) * rstd);
                    }
                }
            }
        }
    }
}

/// The mean of `row` and `1 / sqrt(var + eps)` (biased variance, from the centred values), in f64.
#[inline(always)]
fn moments(row: &[f32], eps: f64) -> (f64, f64) {
    let n = row.len() as f64;
    let add = |a: f64, b: f64| a + b;
    let mean = fold_lanes(row, 0.0, |acc, v| acc + v as f64, add) / n;
    let var = fold_lanes(
        row,
        0.0,
        |acc, v| {
            let d = v as f64 - mean;
            acc + d * d
        },
        add,
    ) / n;
    (mean, 1.0 / (var + eps).sqrt())
}
