//! `F.unfold` (im2col: sliding blocks as columns) and `F.fold` (col2im: columns summed back into
//! an image), as a gather and its adjoint scatter-add over the flattened padded image, so that
//! autograd and every backend get them from `index_select` and `index_add`.

use oxtorch_core::{Error, Result};

use super::spread;
use crate::Tensor;

/// Bound on kernel, dilation, padding, stride and output sizes, so that the window arithmetic
/// cannot overflow (nothing real comes near).
const LIMIT: usize = i32::MAX as usize;

/// The product of `dims` (one block's or one image's elements), refused rather than overflowing
/// when it passes `isize::MAX` bytes of 8-byte elements.
fn checked_numel(op: &str, what: &str, dims: &[usize]) -> Result<usize> {
    dims.iter()
        .try_fold(1usize, |acc, &d| acc.checked_mul(d))
        .filter(|&m| m <= isize::MAX as usize / 8)
        .ok_or_else(|| Error::msg(format!("{op}: {what} of size {dims:?} is too large")))
}

/// Kernel, dilation, padding and stride of a 2-D sliding window, each `(height, width)`.
#[derive(Clone, Copy)]
struct Window {
    kernel: [usize; 2],
    dilation: [usize; 2],
    padding: [usize; 2],
    stride: [usize; 2],
}

impl Window {
    fn new(
        op: &str,
        kernel: &[usize],
        dilation: &[usize],
        padding: &[usize],
        stride: &[usize],
    ) -> Result<Self> {
        let pair = |name: &str, v: &[usize]| -> Result<[usize; 2]> {
            let v = spread(op, name, v, 2)?;
            Ok([v[0], v[1]])
        };
        let w = Window {
            kernel: pair("kernel_size", kernel)?,
            dilation: pair("dilation", dilation)?,
            padding: pair("padding", padding)?,
            stride: pair("stride", stride)?,
        };
        for (name, [h, wd]) in [("kernel size", w.kernel), ("stride", w.stride), ("dilation", w.dilation)] {
            if h == 0 || wd == 0 {
                let key = name.replace(' ', "_").replace("kernel_size", "kernel");
                return Err(Error::msg(format!(
                    "{name} should be greater than zero, but got {key}_height: {h} {key}_width: {wd}"
                )));
            }
        }
        let all = [
            ("kernel_size", w.kernel),
            ("dilation", w.dilation),
            ("padding", w.padding),
            ("stride", w.stride),
        ];
        for (name, v) in all {
            if v.iter().any(|&x| x > LIMIT) {
                return Err(Error::msg(format!("{op}: {name} must be at most {LIMIT}, but got {v:?}")));
            }
        }
        Ok(w)
    }

    /// The number of block positions along each spatial dim of an `[h, w]` image (may be < 1).
    fn blocks(&self, size: [usize; 2]) -> [i128; 2] {
        let n = |d: usize| {
            let span = (self.dilation[d] * (self.kernel[d] - 1) + 1) as i128;
            (size[d] as i128 + 2 * self.padding[d] as i128 - span).div_euclid(self.stride[d] as i128) + 1
        };
        [n(0), n(1)]
    }

    /// For every `(kernel row, kernel col, block row, block col)` in that order, the position of
    /// the element it reads in the flattened padded `[h + 2ph, w + 2pw]` image.
    fn gather_index(
        &self,
        size: [usize; 2],
        blocks: [usize; 2],
        device: oxtorch_core::Device,
    ) -> Result<Tensor> {
        let padded_w = size[1] + 2 * self.padding[1];
        let mut index = Vec::with_capacity(self.kernel[0] * self.kernel[1] * blocks[0] * blocks[1]);
        for i in 0..self.kernel[0] {
            for j in 0..self.kernel[1] {
                for p in 0..blocks[0] {
                    for q in 0..blocks[1] {
                        let row = i * self.dilation[0] + p * self.stride[0];
                        let col = j * self.dilation[1] + q * self.stride[1];
                        index.push((row * padded_w + col) as i64);
                    }
                }
            }
        }
        let n = index.len();
        Tensor::from_vec(index, [n])?.to(device)
    }

    fn describe(&self) -> String {
        let [kh, kw] = self.kernel;
        let [dh, dw] = self.dilation;
        let [ph, pw] = self.padding;
        format!("kernel_size=({kh}, {kw}), dilation=({dh}, {dw}), padding=({ph}, {pw})")
    }
}

impl Tensor {
    /// torch's `F.unfold(input, kernel_size, dilation=1, padding=0, stride=1)` (im2col): the
    /// sliding blocks of a `[N, C, H, W]` (or `[C, H, W]`) input as columns, `[N, C·kh·kw, L]` with
    /// `L` block positions, channels outermost then kernel rows and columns (a conv as a matmul).
    /// One-value arguments apply to both spatial dims.
    pub fn im2col(
        &self,
        kernel_size: &[usize],
        dilation: &[usize],
        padding: &[usize],
        stride: &[usize],
    ) -> Result<Tensor> {
        let w = Window::new("unfold", kernel_size, dilation, padding, stride)?;
        let batched = match self.rank() {
            4 => self.clone(),
            3 => self.unsqueeze(0)?,
            _ => {
                return Err(Error::shape(format!(
                    "Input Error: Only 3D or 4D input Tensors are supported (got {}D)",
                    self.rank()
                )))
            }
        };
        let d = batched.dims().to_vec();
        if d[1] == 0 || d[2] == 0 || d[3] == 0 {
            return Err(Error::shape(format!(
                "Expected 3D or 4D (batch mode) tensor with possibly 0 batch size and other non-zero dimensions for input, but got: {d:?}"
            )));
        }
        let size = [d[2], d[3]];
        let [bh, bw] = w.blocks(size);
        if bh < 1 || bw < 1 {
            return Err(Error::shape(format!(
                "Given input with spatial size ({}, {}), {}, calculated shape of the array of sliding blocks as ({bh}, {bw}), but its components must be at least one.",
                size[0],
                size[1],
                w.describe()
            )));
        }
        let blocks = [bh as usize, bw as usize];
        let [ph, pw] = w.padding;
        let [kh, kw] = w.kernel;
        let plane = checked_numel("unfold", "padded input", &[size[0] + 2 * ph, size[1] + 2 * pw])?;
        checked_numel("unfold", "output", &[d[1], kh, kw, blocks[0], blocks[1]])?;
        let padded =
            batched.pad(&[pw as isize, pw as isize, ph as isize, ph as isize], "constant", Some(0.0))?;
        // (sizes spelled out: an empty batch leaves nothing to infer a `-1` from)
        let flat = padded.reshape([d[0], d[1], plane])?;
        let index = w.gather_index(size, blocks, self.device())?;
        let cols = flat.index_select(2, &index)?;
        let out = cols.reshape([d[0], d[1] * kh * kw, blocks[0] * blocks[1]])?;
        if self.rank() == 3 {
            out.squeeze_dims(0)
        } else {
            Ok(out)
        }
    }

    /// torch's `F.fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1)` (col2im):
    /// columns `[N, C·kh·kw, L]` (or `[C·kh·kw, L]`) summed back into a `[N, C, H, W]` image, the
    /// adjoint of [`Tensor::im2col`] (overlapping blocks add up).
    pub fn col2im(
        &self,
        output_size: &[usize],
        kernel_size: &[usize],
        dilation: &[usize],
        padding: &[usize],
        stride: &[usize],
    ) -> Result<Tensor> {
        let w = Window::new("fold", kernel_size, dilation, padding, stride)?;
        let out = spread("fold", "output_size", output_size, 2)?;
        if out.iter().any(|&x| x > LIMIT) {
            return Err(Error::msg(format!("fold: output_size must be at most {LIMIT}, but got {out:?}")));
        }
        let size = [out[0], out[1]];
        let batched = match self.rank() {
            3 => self.clone(),
            2 => self.unsqueeze(0)?,
            _ => {
                return Err(Error::shape(format!(
                    "Input Error: Only unbatched (2D) or batched (3D) input Tensors are supported (got {}D)",
                    self.rank()
                )))
            }
        };
        let d = batched.dims().to_vec();
        let per_block = w.kernel[0] * w.kernel[1];
        if d[1] == 0 || d[1] % per_block != 0 {
            return Err(Error::shape(format!(
                "Expected size of input's dimension 1 to be divisible by the product of kernel_size, but got input.size(1)={} and kernel_size=({}, {}).",
                d[1], w.kernel[0], w.kernel[1]
            )));
        }
        let [bh, bw] = w.blocks(size);
        if bh < 1 || bw < 1 || bh * bw != d[2] as i128 {
            let [sh, sw] = w.stride;
            return Err(Error::shape(format!(
                "Given output_size=({}, {}), {}, stride=({sh}, {sw}), expected size of input's dimension 2 to match the calculated number of sliding blocks {bh} * {bw} = {}, but got input.size(2)={}.",
                size[0],
                size[1],
                w.describe(),
                bh * bw,
                d[2]
            )));
        }
        let blocks = [bh as usize, bw as usize];
        let channels = d[1] / per_block;
        let [ph, pw] = w.padding;
        let (hp, wp) = (size[0] + 2 * ph, size[1] + 2 * pw);
        let plane = checked_numel("fold", "padded output", &[hp, wp])?;
        checked_numel("fold", "columns", &[w.kernel[0], w.kernel[1], blocks[0], blocks[1]])?;
        let index = w.gather_index(size, blocks, self.device())?;
        let cols = batched.reshape([d[0], channels, per_block * d[2]])?;
        let image = Tensor::zeros([d[0], channels, plane], (self.dtype(), self.device()))?;
        let image = image.index_add(2, &index, &cols, 1.0)?.reshape([d[0], channels, hp, wp])?;
        let image = image.narrow(2, ph as isize, size[0])?.narrow(3, pw as isize, size[1])?;
        if self.rank() == 2 {
            image.squeeze_dims(0)
        } else {
            Ok(image)
        }
    }
}
