//! torch's full `F.interpolate(input, size, scale_factor, mode, align_corners,
//! recompute_scale_factor, antialias)`.

use oxtorch_tensor::{Error, Result, Tensor};

/// The options of torch's `F.interpolate` beyond the sizes and the mode, with torch's defaults
/// (`align_corners=None, recompute_scale_factor=None, antialias=False`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct InterpolateOptions {
    /// for the interpolating modes: align the corner pixels' centres (`None`: `false`; must be
    /// `None` for `"nearest"`, `"nearest-exact"` and `"area"`)
    pub align_corners: Option<bool>,
    /// `Some(true)`: compute the output size from `scale_factor` and resample as if that size had
    /// been given (the scale then follows from the sizes, not the factor); not with `size`
    pub recompute_scale_factor: Option<bool>,
    /// `"bilinear"`, `"bicubic"` and `"lanczos"` on 4-D input only: widen the filter by the scale
    /// when downsampling (see [`Tensor::interpolate_antialias`]); `"lanczos"` requires it
    pub antialias: bool,
}

/// torch's `F.interpolate(input, size, scale_factor, mode, align_corners, recompute_scale_factor,
/// antialias)`: [`Tensor::interpolate`], or [`Tensor::interpolate_antialias`] with
/// `options.antialias`. Exactly one of `size` and `scale_factor` (one value for all spatial dims,
/// or one per dim).
pub fn interpolate_with(
    input: &Tensor,
    size: Option<&[usize]>,
    scale_factor: Option<&[f64]>,
    mode: &str,
    options: InterpolateOptions,
) -> Result<Tensor> {
    let InterpolateOptions { align_corners, recompute_scale_factor, antialias } = options;
    let n = input.rank().saturating_sub(2);
    // (a misused align_corners, both sizes or a length mismatch: the op below gives torch's
    // earlier message)
    let fits = |l: usize| l == 1 || l == n;
    let align_misused = align_corners.is_some() && matches!(mode, "nearest" | "nearest-exact" | "area");
    let mut recomputed = None;
    if recompute_scale_factor == Some(true) && !align_misused {
        match (size, scale_factor) {
            (Some(s), None) if fits(s.len()) => {
                return Err(Error::msg("recompute_scale_factor is not meaningful with an explicit size."))
            }
            (None, Some(f)) if fits(f.len()) && input.rank() >= 2 => {
                // torch: the size `floor(in * factor)`, then no factor.
                let spatial = &input.dims()[2..];
                let factor = |d: usize| if f.len() == 1 { f[0] } else { f[d] };
                let out: Vec<usize> =
                    (0..n).map(|d| (spatial[d] as f64 * factor(d)).floor().max(0.0) as usize).collect();
                recomputed = Some(out);
            }
            _ => {}
        }
    }
    let (size, scale_factor) = match &recomputed {
        Some(s) => (Some(s.as_slice()), None),
        None => (size, scale_factor),
    };
    if antialias {
        input.interpolate_antialias(size, scale_factor, mode, align_corners)
    } else {
        input.interpolate(size, scale_factor, mode, align_corners)
    }
}
