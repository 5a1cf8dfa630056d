//! `interpolate`: nearest, nearest-exact, (bi/tri)linear and bicubic resampling with torch's index
//! formulas, lowered to one `NnOp::Resample` prim over per-dim taps.

use oxtorch_core::ops::{NnOp, Prim};
use oxtorch_core::{bf16, f16, DType, Error, Result};

use crate::dispatch::apply1;
use crate::Tensor;

type Taps = Vec<Vec<(usize, f64)>>;

/// torch's `area_pixel_compute_scale` (the scale is `1/scale_factor` when one was given).
pub(super) fn pixel_scale(align: bool, input: usize, output: usize, scale: Option<f64>) -> f64 {
    if align {
        if output > 1 {
            (input as f64 - 1.0) / (output as f64 - 1.0)
        } else {
            0.0
        }
    } else {
        match scale {
            Some(s) if s > 0.0 => 1.0 / s,
            _ => input as f64 / output as f64,
        }
    }
}

/// Rounds through f32 unless the tensor is f64 (torch computes indices in the op's accumulate type).
fn acc(v: f64, wide: bool) -> f64 {
    if wide {
        v
    } else {
        v as f32 as f64
    }
}

/// The source index of each output position, as torch's CPU kernels pick it: `floor(o * s)`
/// (`nearest`) or `floor((o + 0.5) * s)` (`nearest-exact`) in f32, where `s` is `1 / scale_factor`
/// when one is given. Only legacy `nearest` on 4-D inputs (`upsample_nearest2d`'s
/// `nearest_idx`) short-cuts an output as long as the input (`o`) or twice as long (`o / 2`)
/// whatever the scale factor says: `scale_factor=2.1` on 5 columns gives 10 columns of `o / 2`
/// there, and `floor(o / 2.1)` on 3-D and 5-D inputs.
fn nearest(input: usize, output: usize, scale: Option<f64>, exact: bool, shortcuts: bool) -> Taps {
    // torch: `compute_scales_value<float>` and `floorf` in float.
    let s = match scale {
        Some(s) if s > 0.0 => (1.0 / s) as f32,
        _ => input as f32 / output as f32,
    };
    (0..output)
        .map(|o| {
            let i = if shortcuts && output == input {
                o
            } else if shortcuts && output == 2 * input {
                o / 2
            } else if exact {
                ((o as f32 + 0.5) * s).floor() as usize
            } else {
                (o as f32 * s).floor() as usize
            };
            vec![(i.min(input - 1), 1.0)]
        })
        .collect()
}

/// The two taps of each output position (torch's `compute_source_index_and_lambda`): a dimension
/// whose output is as long as its input is copied whatever the scale factor says (`scale_factor=1.1`
/// on 5 positions gives 5 positions, copied, not resampled at 1/1.1).
fn linear(input: usize, output: usize, scale: Option<f64>, align: bool, wide: bool) -> Taps {
    if output == input {
        return (0..output).map(|o| vec![(o, 1.0), (o, 0.0)]).collect();
    }
    let s = acc(pixel_scale(align, input, output, scale), wide);
    (0..output)
        .map(|o| {
            let real = if align {
                acc(s * o as f64, wide)
            } else {
                acc(acc(s * (o as f64 + 0.5), wide) - 0.5, wide).max(0.0)
            };
            let i0 = (real.floor() as usize).min(input - 1);
            let lambda = acc(real - i0 as f64, wide).clamp(0.0, 1.0);
            let i1 = if i0 < input - 1 { i0 + 1 } else { i0 };
            vec![(i0, acc(1.0 - lambda, wide)), (i1, lambda)]
        })
        .collect()
}

fn cubic(input: usize, output: usize, scale: Option<f64>, align: bool, wide: bool) -> Taps {
    const A: f64 = -0.75;
    let c1 = |x: f64| acc(((A + 2.0) * x - (A + 3.0)) * x * x + 1.0, wide);
    let c2 = |x: f64| acc(((A * x - 5.0 * A) * x + 8.0 * A) * x - 4.0 * A, wide);
    let s = acc(pixel_scale(align, input, output, scale), wide);
    (0..output)
        .map(|o| {
            let real = if align {
                acc(s * o as f64, wide)
            } else {
                acc(acc(s * (o as f64 + 0.5), wide) - 0.5, wide)
            };
            let fl = real.floor();
            let t = acc(real - fl, wide);
            let w = [c2(t + 1.0), c1(t), c1(1.0 - t), c2(2.0 - t)];
            (0..4)
                .map(|j| {
                    let i = (fl as isize - 1 + j as isize).clamp(0, input as isize - 1) as usize;
                    (i, w[j])
                })
                .collect()
        })
        .collect()
}

/// The output size and the scale factor (if one was given) of each spatial dim of an input whose
/// spatial dims are `spatial`, from exactly one of `size` and `scale_factor` (one value for all
/// dims, or one per dim; a factor gives `floor(in * factor)`), with torch's messages.
pub(super) fn output_sizes(
    spatial: &[usize],
    size: Option<&[usize]>,
    scale_factor: Option<&[f64]>,
) -> Result<(Vec<usize>, Vec<Option<f64>>)> {
    let n = spatial.len();
    match (size, scale_factor) {
        (Some(_), Some(_)) => Err(Error::msg("only one of size or scale_factor should be defined")),
        (None, None) => Err(Error::msg("either size or scale_factor should be defined")),
        (Some(s), None) => {
            let s = if s.len() == 1 { vec![s[0]; n] } else { s.to_vec() };
            if s.len() != n {
                return Err(Error::msg(format!(
                    "Input and output must have the same number of spatial dimensions, but got input with spatial dimensions of {spatial:?} and output size of {s:?}. Please provide input tensor in (N, C, d1, d2, ...,dK) format and output size in (o1, o2, ...,oK) format."
                )));
            }
            Ok((s, vec![None; n]))
        }
        (None, Some(f)) => {
            let f = if f.len() == 1 { vec![f[0]; n] } else { f.to_vec() };
            if f.len() != n {
                return Err(Error::msg(format!(
                    "Input and scale_factor must have the same number of spatial dimensions, but got input with spatial dimensions of {spatial:?} and scale_factor of shape {f:?}. Please provide input tensor in (N, C, d1, d2, ...,dK) format and scale_factor in (s1, s2, ...,sK) format."
                )));
            }
            Ok((
                (0..n).map(|d| (spatial[d] as f64 * f[d]).floor().max(0.0) as usize).collect(),
                f.into_iter().map(Some).collect(),
            ))
        }
    }
}

impl Tensor {
    /// torch's `F.interpolate` on `[N, C, *spatial]`: exactly one of `size` (output sizes, one value
    /// for all dims or one per dim) and `scale_factor` (likewise; output size `floor(in * scale)`,
    /// and the scale itself drives the index formula). `mode` is `"nearest"`, `"nearest-exact"`,
    /// `"linear"` (3-D input), `"bilinear"` (4-D), `"bicubic"` (4-D), `"trilinear"` (5-D) or `"area"`
    /// (adaptive average pooling);
    /// `align_corners` only applies to the interpolating modes.
    pub fn interpolate(
        &self,
        size: Option<&[usize]>,
        scale_factor: Option<&[f64]>,
        mode: &str,
        align_corners: Option<bool>,
    ) -> Result<Tensor> {
        let n = self.rank().saturating_sub(2);
        let needs = match mode {
            "nearest" | "nearest-exact" | "area" => None,
            "linear" => Some(3),
            "bilinear" | "bicubic" => Some(4),
            "trilinear" => Some(5),
            // (lanczos exists only antialiased: see `Tensor::interpolate_antialias`)
            "lanczos" if self.rank() == 4 => {
                return Err(Error::msg(if align_corners == Some(true) {
                    "Lanczos mode does not support align_corners=True"
                } else {
                    "Lanczos mode requires antialias=True"
                }))
            }
            other => {
                return Err(Error::msg(format!(
                    "Input Error: Only 3D, 4D and 5D input Tensors supported (got {}D) for the modes: nearest | linear | bilinear | bicubic | trilinear | lanczos | area | nearest-exact (got {other})",
                    self.rank()
                )))
            }
        };
        if needs.is_none() && align_corners.is_some() {
            return Err(Error::msg(
                "align_corners option can only be set with the interpolating modes: linear | bilinear | bicubic | trilinear",
            ));
        }
        if !(3..=5).contains(&self.rank()) || needs.is_some_and(|r| r != self.rank()) {
            return Err(Error::msg(format!(
                "Got {}D input, but {mode} mode needs {}D input",
                self.rank(),
                needs.unwrap_or(self.rank().clamp(3, 5))
            )));
        }
        let dt = self.dtype();
        if !(dt.is_float() || (dt == DType::U8 && needs.is_none())) {
            // torch names the kernel that refuses the dtype.
            let op = match mode {
                "linear" | "trilinear" => "compute_indices_weights_linear",
                "bicubic" => "compute_indices_weights_cubic",
                "bilinear" => "upsample_bilinear2d_channels_last",
                _ if self.rank() == 4 => "upsample_nearest2d_channels_last",
                _ => "interpolate",
            };
            return Err(Error::UnsupportedDType { op, dtype: dt });
        }
        let spatial = self.dims()[2..].to_vec();
        let (out, scales) = output_sizes(&spatial, size, scale_factor)?;
        if spatial.contains(&0) || out.contains(&0) {
            return Err(Error::msg(format!(
                "Input and output sizes should be greater than 0, but got input ({spatial:?}) and output ({out:?})"
            )));
        }
        // The per-dim index tables are built before the output: refuse an output no memory holds.
        let out_shape: Vec<usize> = self.dims()[..2].iter().chain(&out).copied().collect();
        let elements = oxtorch_core::checked_numel(&out_shape)?;
        crate::dispatch::check_allocatable(elements.saturating_mul(dt.size_in_bytes()))?;
        if mode == "area" {
            // torch's "area" mode is adaptive average pooling to the output size.
            return self.adaptive_avg_pool_nd(n, &out);
        }
        let align = align_corners.unwrap_or(false);
        let wide = dt == DType::F64;
        // torch's bicubic kernel stores its weights in the input's dtype (then computes in f32).
        let round: fn(f64) -> f64 = match dt {
            DType::F16 if mode == "bicubic" => |w| f16::from_f64(w).to_f64(),
            DType::BF16 if mode == "bicubic" => |w| bf16::from_f32(w as f32).to_f64(),
            _ => |w| w,
        };
        let taps: Vec<Taps> = (0..n)
            .map(|d| match mode {
                "nearest" => nearest(spatial[d], out[d], scales[d], false, n == 2),
                "nearest-exact" => nearest(spatial[d], out[d], scales[d], true, false),
                "bicubic" => cubic(spatial[d], out[d], scales[d], align, wide),
                _ => linear(spatial[d], out[d], scales[d], align, wide),
            })
            .map(|t: Taps| {
                t.into_iter().map(|v| v.into_iter().map(|(i, w)| (i, round(w))).collect()).collect()
            })
            .collect();
        apply1(&Prim::Nn(NnOp::Resample { taps }), &[self], self.device())
    }
}
