//! `lp_pool1d/2d/3d`: power-average pooling, torch's formula operation by operation
//! (`avg_pool(x^p)`, then `sign(out) * relu(|out|) * kernel_numel`, to the power `1/p`), so that
//! values and gradients agree with torch's.

use oxtorch_tensor::{Error, Result, Tensor};

/// torch's `lp_pool{n}d(input, norm_type, kernel_size, stride=None, ceil_mode=False)`: one
/// kernel/stride value broadcasts over the `n` spatial dims; `norm_type` `±inf` is max pooling of
/// `|x|` (negated for `-inf`), 0 is torch's error.
fn lp_pool_nd(
    n: usize,
    input: &Tensor,
    norm_type: f64,
    kernel_size: &[usize],
    stride: Option<&[usize]>,
    ceil_mode: bool,
) -> Result<Tensor> {
    if norm_type == 0.0 {
        return Err(Error::msg(format!("norm_type must be a non-zero value, but got {norm_type}")));
    }
    if norm_type == f64::INFINITY {
        return input
            .abs()?
            .max_pool_nd_with_indices(n, kernel_size, stride, &[0], &[1], ceil_mode)
            .map(|r| r.0);
    }
    if norm_type == f64::NEG_INFINITY {
        let m =
            input.abs()?.neg()?.max_pool_nd_with_indices(n, kernel_size, stride, &[0], &[1], ceil_mode)?.0;
        return m.neg();
    }
    let out = input.pow(norm_type)?.avg_pool_nd(n, kernel_size, stride, &[0], ceil_mode, true, None)?;
    let numel: usize =
        if kernel_size.len() == 1 { kernel_size[0].pow(n as u32) } else { kernel_size.iter().product() };
    out.sign()?.mul(&out.abs()?.relu()?)?.mul(numel as f64)?.pow(1.0 / norm_type)
}

/// 1-D power-average pooling (torch's `F.lp_pool1d`; `stride` `None` means `kernel_size`).
pub fn lp_pool1d(
    input: &Tensor,
    norm_type: f64,
    kernel_size: &[usize],
    stride: Option<&[usize]>,
    ceil_mode: bool,
) -> Result<Tensor> {
    lp_pool_nd(1, input, norm_type, kernel_size, stride, ceil_mode)
}

/// 2-D power-average pooling (torch's `F.lp_pool2d`).
pub fn lp_pool2d(
    input: &Tensor,
    norm_type: f64,
    kernel_size: &[usize],
    stride: Option<&[usize]>,
    ceil_mode: bool,
) -> Result<Tensor> {
    lp_pool_nd(2, input, norm_type, kernel_size, stride, ceil_mode)
}

/// 3-D power-average pooling (torch's `F.lp_pool3d`).
pub fn lp_pool3d(
    input: &Tensor,
    norm_type: f64,
    kernel_size: &[usize],
    stride: Option<&[usize]>,
    ceil_mode: bool,
) -> Result<Tensor> {
    lp_pool_nd(3, input, norm_type, kernel_size, stride, ceil_mode)
}
