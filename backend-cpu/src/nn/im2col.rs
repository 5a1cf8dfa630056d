//! im2col (window patches as matrix columns) and its adjoint col2im, for any number of spatial dims.

use oxtorch_core::ops::NnOp;
use oxtorch_core::{BackendStorage, Error, Layout, Result};
use rayon::prelude::*;
use std::mem::MaybeUninit;

use super::{contiguous_strides, for_each_index, narrow, widen, Wide};
use crate::storage::CpuElement;
use crate::{with_storage, CpuStorage};

/// Per spatial dim, per kernel offset, per window position: the input position, or `None` in padding.
fn position_tables(
    input: &[usize],
    positions: &[usize],
    kernel: &[usize],
    stride: &[usize],
    padding: &[usize],
    dilation: &[usize],
) -> Vec<Vec<Vec<Option<usize>>>> {
    (0..kernel.len())
        .map(|d| {
            (0..kernel[d])
                .map(|k| {
                    (0..positions[d])
                        .map(|p| {
                            let i = (p * stride[d] + k * dilation[d]) as isize - padding[d] as isize;
                            (i >= 0 && (i as usize) < input[d]).then_some(i as usize)
                        })
                        .collect()
                })
                .collect()
        })
        .collect()
}

/// The geometry shared by both directions.
pub(super) struct Geometry {
    /// spatial sizes of the image side
    image: Vec<usize>,
    /// window positions per spatial dim
    pub(super) positions: Vec<usize>,
    /// `tables[d][k][p]`
    tables: Vec<Vec<Vec<Option<usize>>>>,
    kernel: Vec<usize>,
}

impl Geometry {
    pub(super) fn new(
        image: &[usize],
        kernel: &[usize],
        stride: &[usize],
        padding: &[usize],
        dilation: &[usize],
    ) -> Self {
        let positions: Vec<usize> = (0..kernel.len())
            .map(|d| NnOp::window_positions(image[d], kernel[d], stride[d], padding[d], dilation[d]))
            .collect();
        Self::with_grid(image, positions, kernel, stride, padding, dilation)
    }

    fn with_grid(
        image: &[usize],
        positions: Vec<usize>,
        kernel: &[usize],
        stride: &[usize],
        padding: &[usize],
        dilation: &[usize],
    ) -> Self {
        let tables = position_tables(image, &positions, kernel, stride, padding, dilation);
        Geometry { image: image.to_vec(), positions, tables, kernel: kernel.to_vec() }
    }

    /// Calls `f(column, image_offset)` for each window position of kernel offset `k` that is not in
    /// the padding (`image_offset` is the flat spatial index).
    fn for_each_tap(&self, k: &[usize], mut f: impl FnMut(usize, usize)) {
        let img_strides = contiguous_strides(&self.image);
        for_each_index(&self.positions, |col, p| {
            let mut off = 0;
            for d in 0..p.len() {
                match self.tables[d][k[d]][p[d]] {
                    Some(i) => off += i * img_strides[d],
                    None => return,
                }
            }
            f(col, off);
        });
    }
}

/// The 2-D case of im2col for one image plane and the output rows `rows`, writing every element of
/// `block` (`kh * kw` rows of `rows.len() * ow` columns) exactly once: per kernel tap and output row,
/// the valid output columns form one interval `lo..hi`, copied as a slice when the stride is 1; only
/// the padding around it is zeroed.
pub(super) fn im2col_plane_2d<T: CpuElement>(
    src: &[T],
    block: &mut [MaybeUninit<T>],
    g: &Geometry,
    rows: std::ops::Range<usize>,
) {
    let (w_img, ow) = (g.image[1], g.positions[1]);
    let (kh, kw) = (g.kernel[0], g.kernel[1]);
    let l = rows.len() * ow;
    let zero = |d: &mut [MaybeUninit<T>]| d.fill(MaybeUninit::new(T::ZERO));
    for ki in 0..kh {
        for kj in 0..kw {
            let row = &mut block[(ki * kw + kj) * l..(ki * kw + kj + 1) * l];
            let cols = &g.tables[1][kj];
            let Some(lo) = cols.iter().position(Option::is_some) else {
                zero(row);
                continue;
            };
            let hi = cols.iter().rposition(Option::is_some).map_or(lo, |h| h + 1);
            let iw0 = cols[lo].unwrap_or(0);
            let unit_stride = hi - lo <= 1 || cols[lo + 1] == Some(iw0 + 1);
            for (p, ih) in g.tables[0][ki][rows.clone()].iter().enumerate() {
                let d = &mut row[p * ow..(p + 1) * ow];
                let Some(ih) = *ih else {
                    zero(d);
                    continue;
                };
                let s = &src[ih * w_img..(ih + 1) * w_img];
                zero(&mut d[..lo]);
                zero(&mut d[hi..]);
                if unit_stride {
                    // SAFETY: `MaybeUninit<T>` has `T`'s layout; a `&[T]` viewed as initialised
                    // `MaybeUninit<T>`s is always valid to read.
                    let s: &[MaybeUninit<T>] = unsafe {
                        std::slice::from_raw_parts(s.as_ptr().add(iw0) as *const MaybeUninit<T>, hi - lo)
                    };
                    d[lo..hi].copy_from_slice(s);
                } else {
                    for o in lo..hi {
                        d[o] = MaybeUninit::new(cols[o].map_or(T::ZERO, |iw| s[iw]));
                    }
                }
            }
        }
    }
}

fn im2col_typed<T: CpuElement>(x: &[T], dims: &[usize], g: &Geometry) -> Vec<T> {
    let (b, c) = (dims[0], dims[1]);
    let img: usize = g.image.iter().product();
    let kk: usize = g.kernel.iter().product();
    let l: usize = g.positions.iter().product();
    let n = b * c * kk * l;
    if n == 0 {
        return Vec::new();
    }
    if g.kernel.len() == 2 {
        let mut out = crate::pool::take::<T>(n);
        out.spare_capacity_mut()[..n].par_chunks_mut(kk * l).enumerate().for_each(|(bc, block)| {
            im2col_plane_2d(&x[bc * img..(bc + 1) * img], block, g, 0..g.positions[0]);
        });
        // SAFETY: `im2col_plane_2d` wrote every element of each `kk * l` block, and the blocks tile
        // the first `n` elements.
        unsafe { out.set_len(n) };
        return out;
    }
    let mut out = crate::pool::filled(n, T::ZERO);
    out.par_chunks_mut(kk * l).enumerate().for_each(|(bc, block)| {
        let src = &x[bc * img..(bc + 1) * img];
        for_each_index(&g.kernel, |ki, k| {
            let row = &mut block[ki * l..(ki + 1) * l];
            g.for_each_tap(k, |col, off| row[col] = src[off]);
        });
    });
    out
}

/// im2col of `(s, l)` (shape `[B, C, *spatial]`); see [`NnOp::Im2col`].
pub fn im2col(
    s: &CpuStorage,
    l: &Layout,
    kernel: &[usize],
    stride: &[usize],
    padding: &[usize],
    dilation: &[usize],
) -> Result<CpuStorage> {
    let dims = l.dims();
    if dims.len() != kernel.len() + 2 {
        return Err(Error::shape(format!(
            "im2col: expected a {}-D input, got {}",
            kernel.len() + 2,
            l.shape()
        )));
    }
    let g = Geometry::new(&dims[2..], kernel, stride, padding, dilation);
    if let Some(r) = l.contiguous_range() {
        return Ok(with_storage!(s, v => CpuStorage::from_vec(im2col_typed(&v[r], dims, &g))));
    }
    let x = crate::copy::to_contiguous(s, l, s.dtype())?;
    Ok(with_storage!(&x, v => CpuStorage::from_vec(im2col_typed(v, dims, &g))))
}

/// A sum type: f64 adds, i64 wraps (as torch's integer kernels do).
pub(crate) trait Accumulate: Copy + Default + Send + Sync {
    /// `self += v`
    fn accumulate(&mut self, v: Self);
}

impl Accumulate for f64 {
    fn accumulate(&mut self, v: Self) {
        *self += v;
    }
}

/// f16 sums round after every addition, as torch's f16 col2im does.
impl Accumulate for half::f16 {
    fn accumulate(&mut self, v: Self) {
        use oxtorch_core::half_convert::{f16_to_f32, f32_to_f16};
        *self = f32_to_f16(f16_to_f32(*self) + f16_to_f32(v));
    }
}

impl Accumulate for i64 {
    fn accumulate(&mut self, v: Self) {
        *self = self.wrapping_add(v);
    }
}

fn col2im_typed<A: Accumulate>(x: &[A], b: usize, c: usize, g: &Geometry) -> Vec<A> {
    let img: usize = g.image.iter().product();
    let kk: usize = g.kernel.iter().product();
    let l: usize = g.positions.iter().product();
    let mut out = crate::pool::checked_vec(b * c * img, A::default());
    if out.is_empty() {
        return out;
    }
    out.par_chunks_mut(img).enumerate().for_each(|(bc, dst)| {
        let block = &x[bc * kk * l..(bc + 1) * kk * l];
        for_each_index(&g.kernel, |ki, k| {
            let row = &block[ki * l..(ki + 1) * l];
            g.for_each_tap(k, |col, off| dst[off].accumulate(row[col]));
        });
    });
    out
}

/// The window parameters of a col2im call, one entry per spatial dim each.
pub struct WindowArgs<'a> {
    /// kernel sizes
    pub kernel: &'a [usize],
    /// strides
    pub stride: &'a [usize],
    /// paddings
    pub padding: &'a [usize],
    /// dilations
    pub dilation: &'a [usize],
}

/// col2im of `(s, l)` (shape `[B, C * prod(kernel), prod(grid)]`); see [`NnOp::Col2im`].
pub fn col2im(
    s: &CpuStorage,
    l: &Layout,
    output_size: &[usize],
    grid: &[usize],
    w: &WindowArgs<'_>,
) -> Result<CpuStorage> {
    let dims = l.dims();
    let n = w.kernel.len();
    if [output_size.len(), grid.len(), w.stride.len(), w.padding.len(), w.dilation.len()]
        .iter()
        .any(|&x| x != n)
    {
        return Err(Error::shape(
            "col2im: the window parameters must have one entry per spatial dim".to_string(),
        ));
    }
    let kk: usize = w.kernel.iter().product();
    let g = Geometry::with_grid(output_size, grid.to_vec(), w.kernel, w.stride, w.padding, w.dilation);
    let npos: usize = g.positions.iter().product();
    if dims.len() != 3 || kk == 0 || !dims[1].is_multiple_of(kk) || dims[2] != npos {
        return Err(Error::shape(format!(
            "col2im: expected an input of shape [B, C * {kk}, {npos}], got {}",
            l.shape()
        )));
    }
    let (b, c) = (dims[0], dims[1] / kk);
    if s.dtype() == oxtorch_core::DType::F16 {
        let x = crate::copy::to_contiguous(s, l, s.dtype())?;
        return Ok(CpuStorage::F16(col2im_typed(x.as_slice::<half::f16>()?, b, c, &g).into()));
    }
    let out = match widen("col2im", s, l)? {
        Wide::F(v) => Wide::F(col2im_typed(&v, b, c, &g)),
        Wide::I(v) => Wide::I(col2im_typed(&v, b, c, &g)),
    };
    narrow(out, s.dtype())
}
