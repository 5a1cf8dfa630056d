//! torch's `pixel_shuffle`, `pixel_unshuffle` and `channel_shuffle`: reshapes and a permutation,
//! so any dtype works and the gradient is the inverse permutation.

use oxtorch_tensor::{Error, Result, Tensor};

/// `dims[..rank - 3]` followed by `tail`.
fn leading_then(dims: &[usize], tail: &[usize]) -> Vec<usize> {
    let mut shape = dims[..dims.len() - 3].to_vec();
    shape.extend_from_slice(tail);
    shape
}

/// The identity permutation of the `batch` leading dims followed by `tail` (offsets past them).
fn permutation(batch: usize, tail: &[usize]) -> Vec<usize> {
    (0..batch).chain(tail.iter().map(|&d| batch + d)).collect()
}

/// torch's `pixel_shuffle(input, upscale_factor)`: `[*, C r², H, W]` to `[*, C, H r, W r]`, each
/// group of `r²` channels spread over an `r × r` block of pixels (any number of leading dims).
pub fn pixel_shuffle(input: &Tensor, upscale_factor: i64) -> Result<Tensor> {
    let rank = input.rank();
    if rank < 3 {
        return Err(Error::shape(format!(
            "pixel_shuffle expects input to have at least 3 dimensions, but got input with {rank} dimension(s)"
        )));
    }
    if upscale_factor <= 0 {
        return Err(Error::msg(format!(
            "pixel_shuffle expects a positive upscale_factor, but got {upscale_factor}"
        )));
    }
    let dims = input.dims();
    let (c, h, w) = (dims[rank - 3], dims[rank - 2], dims[rank - 1]);
    let r = upscale_factor as usize;
    let r2 = r.saturating_mul(r);
    if !c.is_multiple_of(r2) {
        return Err(Error::shape(format!(
            "pixel_shuffle expects its input's 'channel' dimension to be divisible by the square of upscale_factor, but input.size(-3)={c} is not divisible by {}",
            (upscale_factor as i128) * (upscale_factor as i128)
        )));
    }
    let split = leading_then(dims, &[c / r2, r, r, h, w]);
    // [*, C, r, r, H, W] -> [*, C, H, r, W, r]
    let perm = permutation(rank - 3, &[0, 3, 1, 4, 2]);
    let out = leading_then(dims, &[c / r2, h.saturating_mul(r), w.saturating_mul(r)]);
    input.reshape(split)?.permute(perm)?.reshape(out)
}

/// torch's `pixel_unshuffle(input, downscale_factor)`, the inverse of [`pixel_shuffle`]:
/// `[*, C, H r, W r]` to `[*, C r², H, W]`. An empty input comes back with its own shape, as
/// torch's.
pub fn pixel_unshuffle(input: &Tensor, downscale_factor: i64) -> Result<Tensor> {
    let rank = input.rank();
    if rank < 3 {
        return Err(Error::shape(format!(
            "pixel_unshuffle expects input to have at least 3 dimensions, but got input with {rank} dimension(s)"
        )));
    }
    if downscale_factor <= 0 {
        return Err(Error::msg(format!(
            "pixel_unshuffle expects a positive downscale_factor, but got {downscale_factor}"
        )));
    }
    let dims = input.dims();
    let (c, h, w) = (dims[rank - 3], dims[rank - 2], dims[rank - 1]);
    let r = usize::try_from(downscale_factor).unwrap_or(usize::MAX);
    if !h.is_multiple_of(r) {
        return Err(Error::shape(format!(
            "pixel_unshuffle expects height to be divisible by downscale_factor, but input.size(-2)={h} is not divisible by {downscale_factor}"
        )));
    }
    if !w.is_multiple_of(r) {
        return Err(Error::shape(format!(
            "pixel_unshuffle expects width to be divisible by downscale_factor, but input.size(-1)={w} is not divisible by {downscale_factor}"
        )));
    }
    if input.numel() == 0 {
        // (torch returns an empty input as it is, shape included)
        return input.reshape(dims.to_vec());
    }
    let split = leading_then(dims, &[c, h / r, r, w / r, r]);
    // [*, C, H, r, W, r] -> [*, C, r, r, H, W]
    let perm = permutation(rank - 3, &[0, 2, 4, 1, 3]);
    let out = leading_then(dims, &[c.saturating_mul(r).saturating_mul(r), h / r, w / r]);
    input.reshape(split)?.permute(perm)?.reshape(out)
}

/// torch's `channel_shuffle(input, groups)` on `[N, C, *]` (three or more dims): the channels,
/// seen as `groups` groups of `C / groups`, are interleaved (`[N, g, C/g, *]` transposed to
/// `[N, C/g, g, *]`).
pub fn channel_shuffle(input: &Tensor, groups: i64) -> Result<Tensor> {
    let dims = input.dims();
    if dims.len() <= 2 {
        return Err(Error::shape(format!(
            "channel_shuffle expects input with > 2 dims, but got input with sizes {dims:?}"
        )));
    }
    if groups <= 0 {
        return Err(Error::msg(format!(
            "Number of groups to divide channels in must be positive. Value of groups:{groups}"
        )));
    }
    let (n, c) = (dims[0], dims[1]);
    let g = usize::try_from(groups).unwrap_or(usize::MAX);
    if !c.is_multiple_of(g) {
        return Err(Error::shape(format!(
            "Number of channels must be divisible by groups. Got {c} channels and {groups} groups."
        )));
    }
    let mut split = vec![n, g, c / g];
    split.extend_from_slice(&dims[2..]);
    input.reshape(split)?.transpose(1, 2)?.reshape(dims.to_vec())
}
