//! `interpolate(..., antialias=True)`: torch's `_upsample_bilinear2d_aa`, `_upsample_bicubic2d_aa`
//! and `_upsample_lanczos2d_aa` on `[N, C, H, W]`.
//!
//! Each output position is a normalised window of a filter (a triangle, Keys' cubic with
//! `a = -0.5`, or Lanczos-3) centred on its source position. When downsampling by `s` the filter is
//! stretched by `s` (its support widens `s` times), so every input pixel contributes; upsampling
//! keeps the filter as it is. The weights are torch's `_compute_weights_aa`, each operation
//! rounded to the input's dtype (float32 or float64), or in double for uint8.
//!
//! As torch, the width is resampled first, then the height, each pass one `NnOp::Resample` over
//! one dim (whose gradient applies the transposed weights); a dim whose size does not change is
//! left alone (even when a scale factor other than 1 was given). uint8 follows torch's fixed-point
//! path: the weights are rounded to int16 at a precision chosen per pass, and each pass rounds to
//! nearest and saturates (the intermediate image is uint8).

use oxtorch_core::ops::{NnOp, Prim};
use oxtorch_core::{DType, Error, Result};

use super::interpolate::{output_sizes, pixel_scale};
use crate::dispatch::apply1;
use crate::Tensor;

type Taps = Vec<Vec<(usize, f64)>>;

/// The antialiasing filters (torch's `aa_filter`s).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Filter {
    /// `bilinear`: `1 - |x|` on `|x| < 1`
    Triangle,
    /// `bicubic`: Keys' cubic convolution with `a = -0.5` (Pillow's; plain bicubic uses `-0.75`)
    Cubic,
    /// `lanczos`: `sinc(x) · sinc(x / 3)` on `-3 <= x < 3`
    Lanczos,
}

/// `sin(πx) / (πx)`, 1 at 0.
fn sinc(x: f64) -> f64 {
    if x == 0.0 {
        1.0
    } else {
        let y = x * std::f64::consts::PI;
        y.sin() / y
    }
}

/// No rounding (the weights of a float64 or uint8 input are computed in double).
fn exact(v: f64) -> f64 {
    v
}

/// Rounding to float32 (the weights of a float32 input are computed in float).
fn single(v: f64) -> f64 {
    v as f32 as f64
}

impl Filter {
    /// torch's `interp_size`: the filter's support at scale 1.
    fn interp_size(self) -> f64 {
        match self {
            Filter::Triangle => 2.0,
            Filter::Cubic => 4.0,
            Filter::Lanczos => 6.0,
        }
    }

    /// The filter at `x`, each operation rounded by `r`, as torch's `aa_filter<scalar_t>`.
    fn eval(self, x: f64, r: fn(f64) -> f64) -> f64 {
        match self {
            Filter::Triangle => {
                let x = x.abs();
                if x < 1.0 {
                    r(1.0 - x)
                } else {
                    0.0
                }
            }
            Filter::Cubic => {
                const A: f64 = -0.5;
                let x = x.abs();
                if x < 1.0 {
                    // ((A + 2) * x - (A + 3)) * x * x + 1
                    r(r(r(r(r((A + 2.0) * x) - (A + 3.0)) * x) * x) + 1.0)
                } else if x < 2.0 {
                    // ((A * x - 5 * A) * x + 8 * A) * x - 4 * A
                    r(r(r(r(r(r(A * x) - 5.0 * A) * x) + 8.0 * A) * x) - 4.0 * A)
                } else {
                    0.0
                }
            }
            Filter::Lanczos => {
                if (-3.0..3.0).contains(&x) {
                    r(sinc(x) * sinc(x / 3.0))
                } else {
                    0.0
                }
            }
        }
    }
}

/// One dim's windows, torch's `_compute_index_ranges_weights` with `antialias=true`: output
/// position `i` reads the inputs `xmin..xmin + xsize` around `center = scale · (i + 0.5)` with
/// the filter stretched by `scale` when that is at least 1, its weights divided by their sum.
/// `r` rounds each operation to the dtype torch computes in (the casts mirror its C++: a product
/// of a float and a double is a double, rounded when stored).
fn aa_taps(
    input: usize,
    output: usize,
    scale: Option<f64>,
    align: bool,
    filter: Filter,
    r: fn(f64) -> f64,
) -> Taps {
    // (`area_pixel_compute_scale<scalar_t>`: in float, `(in - 1) / (out - 1)`, `1 / factor` and
    // `in / out` are one correctly rounded operation each, as the f64 result rounded once.)
    let scale = r(pixel_scale(align, input, output, scale));
    let half = filter.interp_size() * 0.5;
    let support = if scale >= 1.0 { r(half * scale) } else { half };
    let max_size = support.ceil() as i64 * 2 + 1;
    let invscale = if scale >= 1.0 { r(1.0 / scale) } else { 1.0 };
    (0..output)
        .map(|i| {
            let center = r(scale * (i as f64 + 0.5));
            // (`as i64` truncates toward zero, as C++'s cast)
            let xmin = ((r(center - support) + 0.5) as i64).max(0);
            let xmax = ((r(center + support) + 0.5) as i64).min(input as i64);
            let xsize = (xmax - xmin).clamp(0, max_size) as usize;
            let xmin = xmin as usize;
            let mut w: Vec<f64> = (0..xsize)
                .map(|j| filter.eval(r((r((j + xmin) as f64 - center) + 0.5) * invscale), r))
                .collect();
            let total = w.iter().fold(0.0, |t, &v| r(t + v));
            if total != 0.0 {
                for v in &mut w {
                    *v = r(*v / total);
                }
            }
            w.into_iter().enumerate().map(|(j, v)| (xmin + j, v)).collect()
        })
        .collect()
}

/// torch's int16 weights for uint8 images (`_compute_index_ranges_int16_weights`): the largest
/// precision (below 22 bits) at which twice the largest weight still rounds below `2^15`, each
/// weight rounded half away from zero to a multiple of `2^-precision`. The weights are returned
/// as those multiples, so that the f64 sums are torch's integer sums scaled exactly, and rounding
/// them to nearest is torch's `(sum + 2^(precision-1)) >> precision` (clamped to `[0, 255]`).
fn quantize(taps: Taps) -> Taps {
    let wt_max = taps.iter().flatten().fold(0.0f64, |m, &(_, w)| m.max(w));
    let mut precision = 0u32;
    while precision < 22 {
        let next = (0.5 + wt_max * (1u64 << (precision + 1)) as f64) as i64;
        if next >= 1 << 15 {
            break;
        }
        precision += 1;
    }
    let unit = (1u64 << precision) as f64;
    taps.into_iter()
        .map(|t| {
            t.into_iter()
                .map(|(i, w)| {
                    let v = w * unit;
                    let q = if v < 0.0 { (v - 0.5) as i64 } else { (v + 0.5) as i64 };
                    (i, q as i16 as f64 / unit)
                })
                .collect()
        })
        .collect()
}

/// One resampling pass over the height (`dim == 2`) or the width (`dim == 3`) of `[N, C, H, W]`.
fn pass(x: &Tensor, dim: usize, taps: Taps) -> Result<Tensor> {
    let prim = Prim::Nn(NnOp::Resample { taps: vec![taps] });
    if dim == 3 {
        apply1(&prim, &[x], x.device())
    } else {
        // The height as the last dim (a view), resampled, and put back.
        let t = x.transpose(2, 3)?;
        apply1(&prim, &[&t], x.device())?.transpose(2, 3)?.contiguous()
    }
}

impl Tensor {
    /// torch's `F.interpolate(input, size, scale_factor, mode, align_corners, antialias=True)`
    /// on `[N, C, H, W]`: `mode` `"bilinear"`, `"bicubic"` or `"lanczos"` (Lanczos-3, which torch
    /// only has antialiased and without `align_corners=True`); exactly one of `size` and
    /// `scale_factor` (one value for both dims or one per dim; a factor gives `floor(in · factor)`
    /// and, unless `align_corners`, the scale `1 / factor`). float32, float64 and uint8 (torch's
    /// fixed-point path: the same values).
    ///
    /// Downsampling widens the filter by the scale, averaging every input pixel (the point of
    /// antialiasing). Upsampling with `"bilinear"` and `align_corners=False` equals
    /// [`Tensor::interpolate`]; otherwise the results differ even when upsampling, as torch's do:
    /// the antialiased cubic is Keys' with `a = -0.5` (plain bicubic uses `-0.75`), and the
    /// antialiased kernels centre output `i` at `scale · (i + 0.5)` even with `align_corners`
    /// (only the scale, `(in - 1) / (out - 1)`, follows it).
    ///
    /// The gradient (float inputs) is the transpose of the resampling, as torch's backward.
    pub fn interpolate_antialias(
        &self,
        size: Option<&[usize]>,
        scale_factor: Option<&[f64]>,
        mode: &str,
        align_corners: Option<bool>,
    ) -> Result<Tensor> {
        // torch's Python checks, in its order.
        if matches!(mode, "nearest" | "nearest-exact" | "area") && align_corners.is_some() {
            return Err(Error::msg(
                "align_corners option can only be set with the interpolating modes: linear | bilinear | bicubic | trilinear",
            ));
        }
        let sized =
            if self.rank() >= 2 { Some(output_sizes(&self.dims()[2..], size, scale_factor)?) } else { None };
        let filter = match mode {
            "bilinear" => Some(Filter::Triangle),
            "bicubic" => Some(Filter::Cubic),
            "lanczos" => Some(Filter::Lanczos),
            _ => None,
        };
        let (Some(filter), Some((out, scales)), 4) = (filter, sized, self.rank()) else {
            return Err(Error::msg(
                "Anti-alias option is restricted to bilinear, bicubic, and lanczos modes and requires a 4-D tensor as input",
            ));
        };
        if filter == Filter::Lanczos && align_corners == Some(true) {
            return Err(Error::msg("Lanczos mode does not support align_corners=True"));
        }
        // torch's C++ checks (`upsample_2d_common_check`, then the kernel's dtypes).
        let d = self.dims();
        let (h, w) = (d[2], d[3]);
        if h == 0 || w == 0 || out[0] == 0 || out[1] == 0 {
            return Err(Error::msg(format!(
                "Input and output sizes should be greater than 0, but got input (H: {h}, W: {w}) output (H: {}, W: {})",
                out[0], out[1]
            )));
        }
        if d[1] == 0 {
            return Err(Error::msg(format!(
                "Non-empty 4D data tensor expected but got a tensor with sizes {d:?}"
            )));
        }
        let dt = self.dtype();
        let r: fn(f64) -> f64 = match dt {
            DType::F32 => single,
            DType::F64 | DType::U8 => exact,
            _ => return Err(Error::UnsupportedDType { op: "compute_index_ranges_weights", dtype: dt }),
        };
        let align = align_corners.unwrap_or(false);
        let taps = |dim: usize| {
            let t = aa_taps(d[dim], out[dim - 2], scales[dim - 2], align, filter, r);
            if dt == DType::U8 {
                quantize(t)
            } else {
                t
            }
        };
        // The width first, then the height (torch's order; it shows in uint8's rounding).
        let mut y = self.clone();
        let mut resampled = false;
        for dim in [3, 2] {
            if out[dim - 2] != d[dim] {
                y = pass(&y, dim, taps(dim))?;
                resampled = true;
            }
        }
        if resampled {
            Ok(y)
        } else {
            // Nothing to resample: a copy (torch's `output.copy_(input)`), in the graph.
            pass(self, 3, (0..w).map(|o| vec![(o, 1.0)]).collect())
        }
    }
}
