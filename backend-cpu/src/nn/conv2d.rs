//! 2-D convolution for inference ([`NnOp::Conv2d`]) without the full im2col matrix.
//!
//! The composed form writes `[C·kH·kW, OH·OW]` columns per image to memory (58 MB for a batch of
//! eight 64-channel 56×56 images) and reads them back in the matmul. Here each task takes one image,
//! one channel group and one band of output rows, builds that band's columns in a buffer that stays
//! in the core's L2 cache, and multiplies the group's weights by it straight into the output.
//!
//! [`NnOp::Conv2d`]: oxtorch_core::ops::NnOp::Conv2d

use std::borrow::Cow;
use std::mem::MaybeUninit;

use gemm::Parallelism;
use oxtorch_core::{BackendStorage, DType, Error, Layout, Result};
use rayon::prelude::*;

use super::im2col::{im2col_plane_2d, Geometry};
use crate::storage::CpuElement;
use crate::CpuStorage;

/// Bytes of columns built per task (a band of output rows), sized to stay in L2.
const BAND_BYTES: usize = 512 << 10;

/// Fewest output positions per task: narrower bands would re-pack large weights too often.
const MIN_BAND_COLUMNS: usize = 256;

/// The window geometry of a convolution.
pub struct ConvArgs {
    /// stride per spatial dim
    pub stride: [usize; 2],
    /// zero padding on both sides per spatial dim
    pub padding: [usize; 2],
    /// kernel dilation per spatial dim
    pub dilation: [usize; 2],
    /// channel groups
    pub groups: usize,
}

/// The elements of `(s, l)` in row-major order: borrowed when contiguous, copied otherwise.
fn dense<'a, T: CpuElement>(s: &'a CpuStorage, l: &Layout) -> Result<Cow<'a, [T]>> {
    Ok(match l.contiguous_range() {
        Some(r) => Cow::Borrowed(&s.as_slice::<T>()?[r]),
        None => Cow::Owned(crate::copy::to_contiguous(s, l, s.dtype())?.as_slice::<T>()?.to_vec()),
    })
}

/// A raw output pointer shared by tasks that write disjoint parts of the output.
#[derive(Clone, Copy)]
struct OutPtr<T>(*mut T);
// SAFETY: each task writes only its own (image, group, band) block of the output.
unsafe impl<T> Send for OutPtr<T> {}
// SAFETY: as above.
unsafe impl<T> Sync for OutPtr<T> {}

impl<T> OutPtr<T> {
    /// The pointer (a method, so that closures capture the `Sync` wrapper and not its field).
    fn get(self) -> *mut T {
        self.0
    }
}

/// Convolves `x` `[B, C, H, W]` with `w` `[C_out, C / groups, kH, kW]` (f32 or f64, no bias).
pub fn conv2d(
    (x, lx): (&CpuStorage, &Layout),
    (w, lw): (&CpuStorage, &Layout),
    args: &ConvArgs,
) -> Result<CpuStorage> {
    let (xd, wd) = (lx.dims(), lw.dims());
    let groups = args.groups;
    if xd.len() != 4
        || wd.len() != 4
        || groups == 0
        || wd[0] % groups != 0
        || wd[1].checked_mul(groups) != Some(xd[1])
    {
        return Err(Error::shape(format!(
            "conv2d: input {} and weight {} do not match with groups={groups}",
            lx.shape(),
            lw.shape()
        )));
    }
    match (x.dtype(), w.dtype()) {
        (DType::F32, DType::F32) => {
            Ok(CpuStorage::from_vec(conv_typed::<f32>(&dense(x, lx)?, &dense(w, lw)?, xd, wd, args)))
        }
        (DType::F64, DType::F64) => {
            Ok(CpuStorage::from_vec(conv_typed::<f64>(&dense(x, lx)?, &dense(w, lw)?, xd, wd, args)))
        }
        (a, b) if a != b => Err(Error::DTypeMismatch { op: "conv2d", a, b }),
        (dtype, _) => Err(Error::UnsupportedDType { op: "conv2d", dtype }),
    }
}

/// The convolution on contiguous buffers; `T` is f32 or f64 (what `gemm` multiplies).
fn conv_typed<T: CpuElement>(x: &[T], w: &[T], xd: &[usize], wd: &[usize], args: &ConvArgs) -> Vec<T> {
    let (b, c, h, wi) = (xd[0], xd[1], xd[2], xd[3]);
    let (cout, cin_g, kh, kw) = (wd[0], wd[1], wd[2], wd[3]);
    let g = Geometry::new(&[h, wi], &[kh, kw], &args.stride, &args.padding, &args.dilation);
    let (oh, ow) = (g.positions[0], g.positions[1]);
    let (l, kk, groups) = (oh * ow, kh * kw, args.groups);
    let (k, cout_g) = (cin_g * kk, cout / groups);
    let n = b * cout * l;
    if n == 0 {
        return Vec::new();
    }
    if k == 0 {
        return crate::pool::filled(n, T::ZERO);
    }
    let rows_for = |cols: usize| cols.div_ceil(ow);
    let band =
        (BAND_BYTES / (k * std::mem::size_of::<T>() * ow)).max(rows_for(MIN_BAND_COLUMNS)).clamp(1, oh);
    let bands = oh.div_ceil(band);
    let plane = h * wi;
    let mut out: Vec<T> = crate::pool::take(n);
    let dst = OutPtr(out.spare_capacity_mut().as_mut_ptr() as *mut T);
    (0..b * groups * bands).into_par_iter().for_each_init(
        Vec::new,
        |cols: &mut Vec<MaybeUninit<T>>, task| {
            let (img, grp, bi) = (task / (groups * bands), task / bands % groups, task % bands);
            let rows = bi * band..((bi + 1) * band).min(oh);
            let lt = rows.len() * ow;
            cols.resize(k * lt, MaybeUninit::uninit());
            for ci in 0..cin_g {
                let ch = img * c + grp * cin_g + ci;
                let block = &mut cols[ci * kk * lt..(ci + 1) * kk * lt];
                im2col_plane_2d(&x[ch * plane..(ch + 1) * plane], block, &g, rows.clone());
            }
            // SAFETY: `im2col_plane_2d` wrote all `k * lt` columns; the weights hold `cout * k` elements
            // and this group's `cout_g` rows start at `grp * cout_g * k`; the output block (rows
            // `img * cout + grp * cout_g ..+ cout_g` of `l` elements, columns `rows.start * ow ..+ lt`)
            // lies inside the `n` allocated elements and no other task writes it; with
            // `read_dst = false` gemm never reads the uninitialised output.
            unsafe {
                gemm::gemm(
                    cout_g,
                    lt,
                    k,
                    dst.get().add((img * cout + grp * cout_g) * l + rows.start * ow),
                    1,
                    l as isize,
                    false,
                    w.as_ptr().add(grp * cout_g * k),
                    1,
                    k as isize,
                    cols.as_ptr() as *const T,
                    1,
                    lt as isize,
                    T::ZERO,
                    T::ONE,
                    false,
                    false,
                    false,
                    Parallelism::None,
                )
            }
        },
    );
    // SAFETY: the tasks tile every (image, output channel, position) of the `n` elements.
    unsafe { out.set_len(n) };
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The definition: a sum over input channels of the group and kernel taps inside the image.
    fn naive(x: &[f64], w: &[f64], xd: [usize; 4], wd: [usize; 4], a: &ConvArgs) -> Vec<f64> {
        let pos = |d: usize| {
            oxtorch_core::ops::NnOp::window_positions(
                xd[2 + d],
                wd[2 + d],
                a.stride[d],
                a.padding[d],
                a.dilation[d],
            )
        };
        let (oh, ow, cout_g) = (pos(0), pos(1), wd[0] / a.groups);
        let mut out = crate::pool::checked_vec(xd[0] * wd[0] * oh * ow, 0.0);
        for b in 0..xd[0] {
            for o in 0..wd[0] {
                for (p, q) in (0..oh).flat_map(|p| (0..ow).map(move |q| (p, q))) {
                    let mut acc = 0.0;
                    for ci in 0..wd[1] {
                        let ch = (o / cout_g) * wd[1] + ci;
                        for (i, j) in (0..wd[2]).flat_map(|i| (0..wd[3]).map(move |j| (i, j))) {
                            let r = (p * a.stride[0] + i * a.dilation[0]) as isize - a.padding[0] as isize;
                            let s = (q * a.stride[1] + j * a.dilation[1]) as isize - a.padding[1] as isize;
                            if (0..xd[2] as isize).contains(&r) && (0..xd[3] as isize).contains(&s) {
                                let xv = x[((b * xd[1] + ch) * xd[2] + r as usize) * xd[3] + s as usize];
                                acc += xv * w[((o * wd[1] + ci) * wd[2] + i) * wd[3] + j];
                            }
                        }
                    }
                    out[((b * wd[0] + o) * oh + p) * ow + q] = acc;
                }
            }
        }
        out
    }

    #[test]
    fn matches_the_definition() {
        let cases = [
            (
                [2, 4, 9, 7],
                [6, 2, 3, 3],
                ConvArgs { stride: [1, 2], padding: [1, 2], dilation: [2, 1], groups: 2 },
            ),
            (
                [1, 3, 30, 40],
                [5, 3, 3, 3],
                ConvArgs { stride: [1, 1], padding: [1, 1], dilation: [1, 1], groups: 1 },
            ),
            (
                [1, 1, 50, 600],
                [2, 1, 3, 5],
                ConvArgs { stride: [1, 1], padding: [0, 2], dilation: [1, 1], groups: 1 },
            ),
        ];
        for (xd, wd, args) in cases {
            let value = |i: usize| ((i * 7919) % 23) as f64 / 8.0 - 1.4;
            let x: Vec<f64> = (0..xd.iter().product()).map(value).collect();
            let w: Vec<f64> = (0..wd.iter().product()).map(|i| value(i + 5)).collect();
            let got = conv2d(
                (&CpuStorage::from_vec(x.clone()), &Layout::contiguous(xd.to_vec())),
                (&CpuStorage::from_vec(w.clone()), &Layout::contiguous(wd.to_vec())),
                &args,
            )
            .unwrap();
            let want = naive(&x, &w, xd, wd, &args);
            let got = got.as_slice::<f64>().unwrap();
            assert_eq!(got.len(), want.len(), "{xd:?} {wd:?}");
            for (i, (g, e)) in got.iter().zip(&want).enumerate() {
                assert!((g - e).abs() <= 1e-12 * (1.0 + e.abs()), "{xd:?} {wd:?} [{i}]: {g} vs {e}");
            }
        }
    }

    #[test]
    fn mismatched_shapes_and_dtypes_are_errors() {
        let x = CpuStorage::from_vec(vec![0.0f32; 2 * 3 * 4 * 4]);
        let args = ConvArgs { stride: [1, 1], padding: [0, 0], dilation: [1, 1], groups: 1 };
        let lx = Layout::contiguous(vec![2, 3, 4, 4]);
        let w = CpuStorage::from_vec(vec![0.0f32; 5 * 2 * 3 * 3]);
        assert!(conv2d((&x, &lx), (&w, &Layout::contiguous(vec![5, 2, 3, 3])), &args).is_err());
        let w64 = CpuStorage::from_vec(vec![0.0f64; 5 * 3 * 9]);
        assert!(conv2d((&x, &lx), (&w64, &Layout::contiguous(vec![5, 3, 3, 3])), &args).is_err());
    }
}
