//! Fractional max pooling (torch's `F.fractional_max_pool2d` / `F.fractional_max_pool3d`, Graham's
//! "Fractional Max-Pooling"): each plane's windows start at pseudo-random offsets drawn from one
//! sample per spatial dim, with torch's interval formula (`generate_intervals` in ATen's
//! `FractionalMaxPooling.h`, evaluated in the input's dtype):
//!
//! ```text
//! alpha = (input - pool) / (output - 1)
//! start[i] = int((i + sample) * alpha) - int(sample * alpha)    (i < output - 1)
//! start[output - 1] = input - pool
//! ```
//!
//! The window starts are computed on the host from the samples; the pooling itself is a `gather`
//! of every window's taps and a `max` over them, so it runs on any device and its gradient is
//! torch's: the output gradient added into the input at each maximum's position.

use oxtorch_tensor::{bf16, f16, trusted_indices, DType, Error, Result, Tensor};

/// 2-D fractional max pooling over `[N, C, H, W]` or `[C, H, W]`: `kernel_size` (one value or
/// `[kh, kw]`), and `output_size` (one value or `[oh, ow]`) or else `output_ratio` (the output is
/// `int(size * ratio)` per dim). `random_samples` (`[N, C, 2]`, the input's dtype, values in
/// `[0, 1)`; index 0 places the width's windows, 1 the height's, as in torch) fixes the windows;
/// without it they are drawn from the default generator (`rand([N, C, 2])`).
pub fn fractional_max_pool2d(
    input: &Tensor,
    kernel_size: &[usize],
    output_size: Option<&[usize]>,
    output_ratio: Option<&[f64]>,
    random_samples: Option<&Tensor>,
) -> Result<Tensor> {
    Ok(fractional_max_pool_nd(2, input, kernel_size, output_size, output_ratio, random_samples)?.0)
}

/// [`fractional_max_pool2d`] with the flat `H·W` index (int64) of each maximum
/// (`return_indices=True`), as `max_unpool2d` takes them.
pub fn fractional_max_pool2d_with_indices(
    input: &Tensor,
    kernel_size: &[usize],
    output_size: Option<&[usize]>,
    output_ratio: Option<&[f64]>,
    random_samples: Option<&Tensor>,
) -> Result<(Tensor, Tensor)> {
    fractional_max_pool_nd(2, input, kernel_size, output_size, output_ratio, random_samples)
}

/// 3-D fractional max pooling over `[N, C, T, H, W]` or `[C, T, H, W]` (see
/// [`fractional_max_pool2d`]); `random_samples` is `[N, C, 3]` (indices 0, 1, 2 place the time,
/// height and width windows).
pub fn fractional_max_pool3d(
    input: &Tensor,
    kernel_size: &[usize],
    output_size: Option<&[usize]>,
    output_ratio: Option<&[f64]>,
    random_samples: Option<&Tensor>,
) -> Result<Tensor> {
    Ok(fractional_max_pool_nd(3, input, kernel_size, output_size, output_ratio, random_samples)?.0)
}

/// [`fractional_max_pool3d`] with the flat `T·H·W` index (int64) of each maximum.
pub fn fractional_max_pool3d_with_indices(
    input: &Tensor,
    kernel_size: &[usize],
    output_size: Option<&[usize]>,
    output_ratio: Option<&[f64]>,
    random_samples: Option<&Tensor>,
) -> Result<(Tensor, Tensor)> {
    fractional_max_pool_nd(3, input, kernel_size, output_size, output_ratio, random_samples)
}

/// One value broadcast to `n`, or `n` values; `None` otherwise.
fn spread<T: Copy>(v: &[T], n: usize) -> Option<Vec<T>> {
    match v.len() {
        1 => Some(vec![v[0]; n]),
        l if l == n => Some(v.to_vec()),
        _ => None,
    }
}

/// Rounds an exactly computed value to the input dtype, as ATen's `scalar_t` arithmetic does
/// (f16/bf16 compute in f32 and round each result).
fn rounding(dtype: DType) -> fn(f64) -> f64 {
    match dtype {
        DType::F32 => |x| x as f32 as f64,
        DType::F16 => |x| f16::from_f32(x as f32).to_f64(),
        DType::BF16 => |x| bf16::from_f32(x as f32).to_f64(),
        _ => |x| x,
    }
}

/// torch's `generate_intervals`: the window starts along one dim.
fn intervals(sample: f64, input: usize, output: usize, pool: usize, round: fn(f64) -> f64) -> Vec<i64> {
    let mut seq = vec![0i64; output];
    let span = input as i64 - pool as i64;
    if output > 1 {
        let alpha = round(round(span as f64) / round((output - 1) as f64));
        let base = round(sample * alpha) as i64;
        for (i, s) in seq.iter_mut().enumerate().take(output - 1) {
            *s = round(round(i as f64 + sample) * alpha) as i64 - base;
        }
    }
    if output > 0 {
        seq[output - 1] = span;
    }
    seq
}

/// The shared 2-D/3-D implementation: values and flat spatial indices of the maxima.
fn fractional_max_pool_nd(
    n: usize,
    input: &Tensor,
    kernel_size: &[usize],
    output_size: Option<&[usize]>,
    output_ratio: Option<&[f64]>,
    random_samples: Option<&Tensor>,
) -> Result<(Tensor, Tensor)> {
    let name = if n == 2 { "fractional_max_pool2d" } else { "fractional_max_pool3d" };
    // ATen's 3-D kernel names itself with an `_out` suffix in its messages.
    let aten = if n == 2 { "fractional_max_pool2d" } else { "fractional_max_pool3d_out" };
    let ints = if n == 2 { "tuple of Ints" } else { "tuple of three Ints" };
    let dims = input.dims().to_vec();
    let r = dims.len();
    // The Python layer: the output size from the ratio.
    let out_arg: Vec<usize> = match (output_size, output_ratio) {
        (Some(s), _) => s.to_vec(),
        (None, Some(ratio)) => {
            if n == 2 && ratio.len() > 2 {
                return Err(Error::msg(
                    "fractional_max_pool2d requires output_ratio to either be a single Int or tuple of Ints.",
                ));
            }
            let ratio = spread(ratio, n).ok_or_else(|| {
                Error::msg(format!("{name} requires output_ratio to either be a single float or {ints}"))
            })?;
            if r < n {
                return Err(Error::msg(format!(
                    "Dimension out of range (expected to be in range of [-{r}, {}], but got -{n})",
                    r.saturating_sub(1)
                )));
            }
            (0..n).map(|d| (dims[r - n + d] as f64 * ratio[d]).max(0.0) as usize).collect()
        }
        (None, None) => {
            return Err(Error::msg(format!(
                "{name} requires specifying either an output_size or an output_ratio"
            )))
        }
    };
    // ATen's checks, in its order.
    let kernel = spread(kernel_size, n)
        .ok_or_else(|| Error::msg(format!("{name}: kernel_size must either be a single Int or {ints}")))?;
    let out = spread(&out_arg, n)
        .ok_or_else(|| Error::msg(format!("{name}: output_size must either be a single Int or {ints}")))?;
    if kernel.contains(&0) {
        let k: Vec<String> = kernel.iter().map(usize::to_string).collect();
        return Err(Error::msg(format!(
            "{aten}(): kernel size should be greater than zero, but got {}",
            k.join("x")
        )));
    }
    if r != n + 1 && r != n + 2 {
        return Err(Error::shape(format!(
            "{aten}(): Expected {}D or {}D tensor, but got: {dims:?}",
            n + 1,
            n + 2
        )));
    }
    if let Some(i) = (1..r).find(|&i| dims[i] == 0) {
        return Err(Error::shape(format!(
            "{aten}(): Expected input to have non-zero size for non-batch dimensions, but got{dims:?} with dimension {i} being empty."
        )));
    }
    let spatial = &dims[r - n..];
    if n == 2 {
        for (d, what) in [(0, "height"), (1, "width")] {
            // (out + kernel > input + 1, without overflow for huge sizes)
            if out[d].checked_add(kernel[d]).is_none_or(|s| s > spatial[d].saturating_add(1)) {
                return Err(Error::shape(format!(
                    "fractional_max_pool2d(): pool {what} {} too large relative to input {what} {}",
                    kernel[d], spatial[d]
                )));
            }
        }
    } else {
        for (d, what) in [(0, "time"), (2, "width"), (1, "height")] {
            if kernel[d] > spatial[d] || out[d].checked_add(kernel[d]).is_none_or(|s| s > spatial[d]) {
                return Err(Error::shape(format!(
                    "fractional_max_pool3d_out(): pool {what} {} too large relative to input {what} {}",
                    kernel[d], spatial[d]
                )));
            }
        }
    }
    let (batch, channels) = if r == n + 1 { (1, dims[0]) } else { (dims[0], dims[1]) };
    let drawn;
    let samples = match random_samples {
        Some(s) => s,
        None => {
            drawn = Tensor::rand([batch, channels, n], (input.dtype(), input.device()))?;
            &drawn
        }
    };
    if samples.dtype() != input.dtype() {
        return Err(Error::msg("Expect _random_samples to have the same dtype as input"));
    }
    if samples.rank() != 3 {
        return Err(Error::shape(format!(
            "Expect _random_samples to have 3 dimensions, got {}",
            samples.rank()
        )));
    }
    let sd = samples.dims();
    if sd[0] < batch {
        return Err(Error::shape("Expect _random_samples.size(0) no less then input batch size."));
    }
    if sd[1] != channels {
        return Err(Error::shape("Expect _random_samples.size(1) equals to input channel size."));
    }
    if sd[2] != n {
        return Err(Error::shape(format!("Expect _random_samples.size(2) equals to {n}; got {}.", sd[2])));
    }
    let mut out_shape: Vec<usize> = dims[..r - n].to_vec();
    out_shape.extend(&out);
    let outn: usize = out.iter().product();
    if outn == 0 || batch == 0 {
        let values = Tensor::zeros(out_shape.clone(), (input.dtype(), input.device()))?;
        // Keep the result connected to the input (a zero gradient), as torch's empty output is.
        let values = if input.requires_grad() { input.sum_all()?.mul(0.0)?.add(&values)? } else { values };
        return Ok((values, Tensor::zeros(out_shape, (DType::I64, input.device()))?));
    }
    let samples = samples.to_f64_vec()?;
    let round = rounding(input.dtype());
    let taps: usize = kernel.iter().product();
    let plane: usize = spatial.iter().product();
    let mut stride = vec![1usize; n];
    for d in (0..n.saturating_sub(1)).rev() {
        stride[d] = stride[d + 1] * spatial[d + 1];
    }
    // The sample that places dim d: 2-D takes (W, H), 3-D (T, H, W).
    let sample_of = |d: usize| if n == 2 { 1 - d } else { d };
    let mut index: Vec<i64> = Vec::with_capacity(batch * channels * outn * taps);
    let mut oi = vec![0usize; n];
    let mut ki = vec![0usize; n];
    for b in 0..batch {
        for c in 0..channels {
            let s = &samples[(b * channels + c) * n..(b * channels + c + 1) * n];
            let starts: Vec<Vec<i64>> =
                (0..n).map(|d| intervals(s[sample_of(d)], spatial[d], out[d], kernel[d], round)).collect();
            for (d, st) in starts.iter().enumerate() {
                if st.iter().any(|&v| v < 0 || v as usize + kernel[d] > spatial[d]) {
                    return Err(Error::msg(format!(
                        "{name}: _random_samples must lie in [0, 1): a window of plane ({b}, {c}) falls outside the input"
                    )));
                }
            }
            for o in 0..outn {
                let mut rem = o;
                for d in (0..n).rev() {
                    oi[d] = rem % out[d];
                    rem /= out[d];
                }
                for t in 0..taps {
                    let mut rem = t;
                    for d in (0..n).rev() {
                        ki[d] = rem % kernel[d];
                        rem /= kernel[d];
                    }
                    let flat: i64 =
                        (0..n).map(|d| (starts[d][oi[d]] + ki[d] as i64) * stride[d] as i64).sum();
                    index.push(flat);
                }
            }
        }
    }
    let x = if r == n + 1 { input.unsqueeze(0)? } else { input.clone() };
    let flat = x.reshape([batch, channels, plane])?;
    let index = Tensor::from_vec_on(index, vec![batch, channels, outn * taps], input.device())?;
    let gathered = trusted_indices(|| flat.gather(2, &index))?.reshape([batch, channels, outn, taps])?;
    // torch scans each window in order (the last dim fastest) keeping `val > max || isnan(val)`:
    // the first maximum, or the last NaN of a window holding NaNs.
    let (_, mut arg) = gathered.max_dim(3, false)?;
    if input.dtype().is_float() {
        let rank = Tensor::arange_step(1i64, taps as i64 + 1, 1i64, (DType::I64, input.device()))?;
        // (1 + the position of the last NaN, 0 without NaN)
        let last_nan = gathered.isnan()?.to_dtype(DType::I64)?.mul(&rank)?.max_dim(3, false)?.0;
        arg = Tensor::where_cond(&last_nan.gt(0i64)?, &last_nan.sub(1i64)?, &arg)?;
    }
    // The values gathered at the chosen taps, so that the gradient goes there.
    let values = trusted_indices(|| gathered.gather(3, &arg.unsqueeze(3)?))?;
    let positions =
        trusted_indices(|| index.reshape([batch, channels, outn, taps])?.gather(3, &arg.unsqueeze(3)?))?;
    Ok((values.reshape(out_shape.clone())?, positions.reshape(out_shape)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// torch 2.15: `generate_intervals` for a few samples in float64 and float32.
    #[test]
    fn intervals_match_torch_formula() {
        let id: fn(f64) -> f64 = |x| x;
        assert_eq!(intervals(0.3, 9, 5, 3, id), vec![0, 1, 3, 4, 6]);
        assert_eq!(intervals(0.0, 7, 1, 2, id), vec![5]);
        assert_eq!(intervals(0.99, 10, 4, 2, rounding(DType::F32)), vec![0, 3, 5, 8]);
    }
}
