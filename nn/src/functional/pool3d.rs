//! The 3-D pooling functions (torch's `F.max_pool3d`, `F.avg_pool3d`, `F.adaptive_avg_pool3d`,
//! `F.adaptive_max_pool3d`) over `[N, C, D, H, W]` or unbatched `[C, D, H, W]` inputs; one value
//! in a size list broadcasts over the three dims.

use oxtorch_tensor::{Result, Tensor};

/// 3-D max pooling (`stride` `None` means `kernel_size`).
pub fn max_pool3d(
    input: &Tensor,
    kernel_size: &[usize],
    stride: Option<&[usize]>,
    padding: &[usize],
    dilation: &[usize],
    ceil_mode: bool,
) -> Result<Tensor> {
    input.max_pool3d(kernel_size, stride, padding, dilation, ceil_mode)
}

/// 3-D max pooling with the flat `D·H·W` index of each maximum (`return_indices=True`).
pub fn max_pool3d_with_indices(
    input: &Tensor,
    kernel_size: &[usize],
    stride: Option<&[usize]>,
    padding: &[usize],
    dilation: &[usize],
    ceil_mode: bool,
) -> Result<(Tensor, Tensor)> {
    input.max_pool_nd_with_indices(3, kernel_size, stride, padding, dilation, ceil_mode)
}

/// 3-D average pooling (`stride` `None` means `kernel_size`).
#[allow(clippy::too_many_arguments)]
pub fn avg_pool3d(
    input: &Tensor,
    kernel_size: &[usize],
    stride: Option<&[usize]>,
    padding: &[usize],
    ceil_mode: bool,
    count_include_pad: bool,
    divisor_override: Option<i64>,
) -> Result<Tensor> {
    input.avg_pool_nd(3, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override)
}

/// 3-D adaptive average pooling (`output_size`: one value or `[od, oh, ow]`).
pub fn adaptive_avg_pool3d(input: &Tensor, output_size: &[usize]) -> Result<Tensor> {
    input.adaptive_avg_pool_nd(3, output_size)
}

/// 3-D adaptive max pooling (`output_size`: one value or `[od, oh, ow]`).
pub fn adaptive_max_pool3d(input: &Tensor, output_size: &[usize]) -> Result<Tensor> {
    Ok(input.adaptive_max_pool_nd_with_indices(3, output_size)?.0)
}

/// 3-D adaptive max pooling with the flat `D·H·W` index of each maximum.
pub fn adaptive_max_pool3d_with_indices(input: &Tensor, output_size: &[usize]) -> Result<(Tensor, Tensor)> {
    input.adaptive_max_pool_nd_with_indices(3, output_size)
}
