//! Pooling: `max_pool1d/2d/3d`, `avg_pool1d/2d/3d`, `adaptive_{avg,max}_pool1d/2d/3d`, each one
//! `NnOp::MaxPool`/`AvgPool` prim over windows computed here with torch's output-size rules.

use oxtorch_core::ops::{NnOp, Prim};
use oxtorch_core::{DType, Error, Result};

use super::spread;
use crate::dispatch::{apply, apply1};
use crate::Tensor;

type Tap = (isize, usize, usize, usize);

/// torch's `pooling_output_shape`.
fn pooled_size(size: usize, k: usize, pad: usize, stride: usize, dil: usize, ceil: bool) -> isize {
    let (size, k, pad, stride, dil) =
        (size as isize, k as isize, pad as isize, stride as isize, dil as isize);
    let num = size + 2 * pad - dil * (k - 1) - 1 + if ceil { stride - 1 } else { 0 };
    let mut out = num.div_euclid(stride) + 1;
    if ceil && (out - 1) * stride >= size + pad {
        out -= 1;
    }
    out
}

/// Validated window geometry of a (non-adaptive) pooling call.
struct Geometry {
    kernel: Vec<usize>,
    stride: Vec<usize>,
    padding: Vec<usize>,
    dilation: Vec<usize>,
    out: Vec<usize>,
}

#[allow(clippy::too_many_arguments)]
fn geometry(
    op: &str,
    x: &Tensor,
    n: usize,
    kernel: &[usize],
    stride: Option<&[usize]>,
    padding: &[usize],
    dilation: &[usize],
    ceil_mode: bool,
) -> Result<Geometry> {
    let r = x.rank();
    if r != n + 1 && r != n + 2 {
        return Err(Error::shape(if n == 2 {
            "non-empty 3D or 4D (batch mode) tensor expected for input".to_string()
        } else {
            format!("{op}: Expected {}D or {}D input tensor, but got {:?}", n + 1, n + 2, x.dims())
        }));
    }
    let kernel = spread(op, "kernel_size", kernel, n)?;
    let stride = match stride {
        Some(s) if !s.is_empty() => spread(op, "stride", s, n)?,
        _ => kernel.clone(),
    };
    let padding = spread(op, "padding", padding, n)?;
    let dilation = spread(op, "dilation", dilation, n)?;
    if kernel.contains(&0) {
        return Err(Error::msg(format!("{op}: kernel_size must be greater than zero, but got {kernel:?}")));
    }
    if stride.contains(&0) {
        return Err(Error::msg(format!("{op}: stride must be greater than zero, but got {stride:?}")));
    }
    if dilation.contains(&0) {
        return Err(Error::msg(format!("{op}: dilation must be greater than zero, but got {dilation:?}")));
    }
    // Bounded so that the window arithmetic below cannot overflow (nothing real comes near).
    const LIMIT: usize = i32::MAX as usize;
    for (what, v) in
        [("kernel_size", &kernel), ("stride", &stride), ("padding", &padding), ("dilation", &dilation)]
    {
        if v.iter().any(|&x| x > LIMIT) {
            return Err(Error::msg(format!("{op}: {what} must be at most {LIMIT}, but got {v:?}")));
        }
    }
    for d in 0..n {
        if padding[d] > kernel[d] / 2 {
            return Err(Error::msg(format!(
                "pad should be at most half of effective kernel size, but got pad={}, kernel_size={} and dilation={}",
                padding[d], kernel[d], dilation[d]
            )));
        }
    }
    let spatial = &x.dims()[r - n..];
    if x.dims()[..r - n].iter().skip(usize::from(r == n + 2)).any(|&c| c == 0) || spatial.contains(&0) {
        return Err(Error::shape(format!(
            "{op}: Expected input's non-batch dimensions to have positive length, but input has a shape of {:?}",
            x.dims()
        )));
    }
    let mut out = Vec::with_capacity(n);
    for d in 0..n {
        let o = pooled_size(spatial[d], kernel[d], padding[d], stride[d], dilation[d], ceil_mode);
        if o < 1 {
            let join = |v: Vec<String>| v.join("x");
            let mut outs = vec![x.dims()[r - n - 1].to_string()];
            outs.extend((0..n).map(|d| {
                pooled_size(spatial[d], kernel[d], padding[d], stride[d], dilation[d], ceil_mode).to_string()
            }));
            return Err(Error::shape(format!(
                "Given input size: ({}). Calculated output size: ({}). Output size is too small",
                join(x.dims()[r - n - 1..].iter().map(|d| d.to_string()).collect()),
                join(outs)
            )));
        }
        out.push(o as usize);
    }
    Ok(Geometry { kernel, stride, padding, dilation, out })
}

/// Windows of adaptive pooling: `[floor(o * in / out), ceil((o + 1) * in / out))`.
fn adaptive_taps(op: &str, x: &Tensor, output_size: &[usize], n: usize) -> Result<Vec<Vec<Tap>>> {
    let r = x.rank();
    if r != n + 1 && r != n + 2 {
        return Err(Error::shape(format!(
            "{op}(): Expected {}D or {}D tensor, but got {:?}",
            n + 1,
            n + 2,
            x.dims()
        )));
    }
    for i in usize::from(r == n + 2)..r {
        if x.dims()[i] == 0 {
            return Err(Error::shape(format!(
                "{op}(): Expected input to have non-zero size for non-batch dimensions, but input has sizes {:?} with dimension {i} being empty",
                x.dims()
            )));
        }
    }
    let out = spread(op, "output_size", output_size, n)?;
    // Bounded (as `geometry` bounds windows) and sized before anything is allocated.
    const LIMIT: usize = i32::MAX as usize;
    if out.iter().any(|&o| o > LIMIT) {
        return Err(Error::msg(format!("{op}: output_size must be at most {LIMIT}, but got {out:?}")));
    }
    let mut shape = x.dims()[..r - n].to_vec();
    shape.extend(&out);
    let numel = shape.iter().try_fold(1usize, |acc, &d| acc.checked_mul(d));
    if numel.and_then(|m| m.checked_mul(x.dtype().size_in_bytes())).is_none_or(|b| b > isize::MAX as usize) {
        return Err(Error::msg(format!("{op}: output of size {shape:?} is too large")));
    }
    let spatial = &x.dims()[r - n..];
    Ok((0..n)
        .map(|d| {
            let (i, o) = (spatial[d] as u128, out[d] as u128);
            (0..o)
                .map(|k| {
                    let start = (k * i / o) as usize;
                    let end = ((k + 1) * i).div_ceil(o) as usize;
                    (start as isize, 1, end - start, end - start)
                })
                .collect()
        })
        .collect())
}

fn check_dtype(op: &'static str, x: &Tensor, ints: bool) -> Result<()> {
    let d = x.dtype();
    if d.is_float() || (ints && d.is_int()) {
        Ok(())
    } else {
        Err(Error::UnsupportedDType { op, dtype: d })
    }
}

fn run_max(x: &Tensor, taps: Vec<Vec<Tap>>) -> Result<(Tensor, Tensor)> {
    let mut outs = apply(&Prim::Nn(NnOp::MaxPool { taps }), &[x], x.device())?;
    let idx = outs.pop().expect("two outputs");
    Ok((outs.pop().expect("two outputs"), idx))
}

impl Tensor {
    /// Max pooling over the last `n` dims with indices (torch's `max_pool{n}d_with_indices`): the
    /// values and the flat spatial index of each maximum (int64).
    #[allow(clippy::too_many_arguments)]
    pub fn max_pool_nd_with_indices(
        &self,
        n: usize,
        kernel_size: &[usize],
        stride: Option<&[usize]>,
        padding: &[usize],
        dilation: &[usize],
        ceil_mode: bool,
    ) -> Result<(Tensor, Tensor)> {
        let op = ["max_pool1d", "max_pool2d", "max_pool3d"][n.clamp(1, 3) - 1];
        check_dtype(if n == 3 { "max_pool3d" } else { "max_pool2d" }, self, true)?;
        let g = geometry(op, self, n, kernel_size, stride, padding, dilation, ceil_mode)?;
        let taps = (0..n)
            .map(|d| {
                (0..g.out[d])
                    .map(|o| {
                        ((o * g.stride[d]) as isize - g.padding[d] as isize, g.dilation[d], g.kernel[d], 1)
                    })
                    .collect()
            })
            .collect();
        run_max(self, taps)
    }

    /// 1-D max pooling (`[N, C, L]` or `[C, L]`); `stride` `None` means `kernel_size`.
    pub fn max_pool1d(
        &self,
        kernel_size: &[usize],
        stride: Option<&[usize]>,
        padding: &[usize],
        dilation: &[usize],
        ceil_mode: bool,
    ) -> Result<Tensor> {
        // torch's max_pool1d without indices has a float-only kernel; with indices it takes integers.
        check_dtype("max_pool1d", self, false)?;
        Ok(self.max_pool_nd_with_indices(1, kernel_size, stride, padding, dilation, ceil_mode)?.0)
    }

    /// 2-D max pooling (`[N, C, H, W]` or `[C, H, W]`); `stride` `None` means `kernel_size`.
    pub fn max_pool2d(
        &self,
        kernel_size: &[usize],
        stride: Option<&[usize]>,
        padding: &[usize],
        dilation: &[usize],
        ceil_mode: bool,
    ) -> Result<Tensor> {
        Ok(self.max_pool_nd_with_indices(2, kernel_size, stride, padding, dilation, ceil_mode)?.0)
    }

    /// 3-D max pooling (`[N, C, D, H, W]` or unbatched).
    pub fn max_pool3d(
        &self,
        kernel_size: &[usize],
        stride: Option<&[usize]>,
        padding: &[usize],
        dilation: &[usize],
        ceil_mode: bool,
    ) -> Result<Tensor> {
        Ok(self.max_pool_nd_with_indices(3, kernel_size, stride, padding, dilation, ceil_mode)?.0)
    }

    /// Average pooling over the last `n` dims (torch's `avg_pool{n}d`): `count_include_pad` counts
    /// the zero padding in the divisor; `divisor_override` replaces the divisor.
    #[allow(clippy::too_many_arguments)]
    pub fn avg_pool_nd(
        &self,
        n: usize,
        kernel_size: &[usize],
        stride: Option<&[usize]>,
        padding: &[usize],
        ceil_mode: bool,
        count_include_pad: bool,
        divisor_override: Option<i64>,
    ) -> Result<Tensor> {
        let op = ["avg_pool1d", "avg_pool2d", "avg_pool3d"][n.clamp(1, 3) - 1];
        if !self.dtype().is_float() && self.dtype() != DType::I64 {
            let op = if n == 3 { "avg_pool3d" } else { "avg_pool2d" };
            return Err(Error::UnsupportedDType { op, dtype: self.dtype() });
        }
        if divisor_override == Some(0) {
            return Err(Error::msg("divisor must be not zero"));
        }
        let g = geometry(op, self, n, kernel_size, stride, padding, &[1], ceil_mode)?;
        let spatial = &self.dims()[self.rank() - n..];
        // torch's 3-d average pooling (alone among the pools) refuses a kernel larger than the
        // unpadded input.
        if n == 3 && spatial.iter().zip(&g.kernel).any(|(&s, &k)| s < k) {
            return Err(Error::shape(format!(
                "input image (T: {} H: {} W: {}) smaller than kernel size (kT: {} kH: {} kW: {})",
                spatial[0], spatial[1], spatial[2], g.kernel[0], g.kernel[1], g.kernel[2]
            )));
        }
        let taps = (0..n)
            .map(|d| {
                let (size, pad, k) = (spatial[d] as isize, g.padding[d] as isize, g.kernel[d] as isize);
                (0..g.out[d])
                    .map(|o| {
                        let start = o as isize * g.stride[d] as isize - pad;
                        let end = (start + k).min(size + pad);
                        let pool = (end - start) as usize;
                        let clipped = (end.min(size) - start.max(0)).max(0) as usize;
                        (start, 1, pool, if count_include_pad { pool } else { clipped })
                    })
                    .collect()
            })
            .collect();
        apply1(&Prim::Nn(NnOp::AvgPool { taps, divisor_override }), &[self], self.device())
    }

    /// 1-D average pooling.
    pub fn avg_pool1d(
        &self,
        kernel_size: &[usize],
        stride: Option<&[usize]>,
        padding: &[usize],
        ceil_mode: bool,
        count_include_pad: bool,
    ) -> Result<Tensor> {
        self.avg_pool_nd(1, kernel_size, stride, padding, ceil_mode, count_include_pad, None)
    }

    /// 2-D average pooling.
    #[allow(clippy::too_many_arguments)]
    pub fn avg_pool2d(
        &self,
        kernel_size: &[usize],
        stride: Option<&[usize]>,
        padding: &[usize],
        ceil_mode: bool,
        count_include_pad: bool,
        divisor_override: Option<i64>,
    ) -> Result<Tensor> {
        self.avg_pool_nd(2, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override)
    }

    /// Adaptive average pooling over the last `n` dims to `output_size`.
    pub fn adaptive_avg_pool_nd(&self, n: usize, output_size: &[usize]) -> Result<Tensor> {
        let op = ["adaptive_avg_pool1d", "adaptive_avg_pool2d", "adaptive_avg_pool3d"][n.clamp(1, 3) - 1];
        check_dtype(if n == 3 { "adaptive_avg_pool3d" } else { "adaptive_avg_pool2d" }, self, false)?;
        let taps = adaptive_taps(op, self, output_size, n)?;
        apply1(&Prim::Nn(NnOp::AvgPool { taps, divisor_override: None }), &[self], self.device())
    }

    /// 1-D adaptive average pooling.
    pub fn adaptive_avg_pool1d(&self, output_size: usize) -> Result<Tensor> {
        self.adaptive_avg_pool_nd(1, &[output_size])
    }

    /// 2-D adaptive average pooling (`output_size`: one value or `[oh, ow]`).
    pub fn adaptive_avg_pool2d(&self, output_size: &[usize]) -> Result<Tensor> {
        self.adaptive_avg_pool_nd(2, output_size)
    }

    /// Adaptive max pooling over the last `n` dims, with the flat spatial indices of the maxima.
    pub fn adaptive_max_pool_nd_with_indices(
        &self,
        n: usize,
        output_size: &[usize],
    ) -> Result<(Tensor, Tensor)> {
        let op = ["adaptive_max_pool1d", "adaptive_max_pool2d", "adaptive_max_pool3d"][n.clamp(1, 3) - 1];
        check_dtype(if n == 3 { "adaptive_max_pool3d" } else { "adaptive_max_pool2d" }, self, false)?;
        let taps = adaptive_taps(op, self, output_size, n)?;
        run_max(self, taps)
    }

    /// 1-D adaptive max pooling.
    pub fn adaptive_max_pool1d(&self, output_size: usize) -> Result<Tensor> {
        Ok(self.adaptive_max_pool_nd_with_indices(1, &[output_size])?.0)
    }

    /// 2-D adaptive max pooling.
    pub fn adaptive_max_pool2d(&self, output_size: &[usize]) -> Result<Tensor> {
        Ok(self.adaptive_max_pool_nd_with_indices(2, output_size)?.0)
    }
}
