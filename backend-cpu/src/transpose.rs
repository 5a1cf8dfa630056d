//! Cache-blocked copies of transposed views.
//!
//! Making `w.t()` (or any view whose unit-stride dim is not the innermost) contiguous walks the source
//! across the grain: element by element, each read on another cache line and, for large matrices,
//! another page. The blocked copy instead moves square tiles of [`TILE`] × [`TILE`] elements, whose
//! source and destination lines all stay in L1 while the tile is copied.

use std::mem::MaybeUninit;

use rayon::prelude::*;
use smallvec::SmallVec;

use crate::walk::{Plan, PAR_MIN_CHUNK};

/// Side of the square tiles copied at once.
const TILE: usize = 32;

/// A walk whose innermost dim (the output's columns) has a non-unit source stride while the next one
/// (the output's rows) has unit stride: the pattern of a transposed matrix, batched over outer dims.
#[derive(Debug)]
pub(crate) struct Transposed {
    /// `(size, source stride)` of the batch dims, outermost first.
    outer: SmallVec<[(usize, usize); 4]>,
    rows: usize,
    cols: usize,
    /// The source stride between consecutive output columns.
    col_stride: usize,
    offset: usize,
}

impl Transposed {
    /// Recognises a transposed walk over one operand; `None` for any other pattern.
    pub(crate) fn of(plan: &Plan<1>) -> Option<Self> {
        let (dims, strides) = (plan.dims(), plan.strides(0));
        let r = dims.len();
        if r < 2 || strides[r - 1] <= 1 || strides[r - 2] != 1 {
            return None;
        }
        Some(Transposed {
            outer: dims[..r - 2].iter().copied().zip(strides[..r - 2].iter().copied()).collect(),
            rows: dims[r - 2],
            cols: dims[r - 1],
            col_stride: strides[r - 1],
            offset: plan.offsets()[0],
        })
    }

    /// The source offset of batch `b`'s first element.
    fn batch_offset(&self, mut b: usize) -> usize {
        let mut off = self.offset;
        for &(size, stride) in self.outer.iter().rev() {
            off += (b % size) * stride;
            b /= size;
        }
        off
    }

    /// Writes `f(source element)` for every element of the walk, in row-major order, into `out`
    /// (as long as the walk), in parallel for large walks.
    pub(crate) fn run<A: Copy + Sync, U: Copy + Send>(
        &self,
        a: &[A],
        out: &mut [MaybeUninit<U>],
        f: impl Fn(A) -> U + Sync + Copy,
    ) {
        let (rows, cols, cs) = (self.rows, self.cols, self.col_stride);
        let plane = rows * cols;
        if plane == 0 {
            return;
        }
        // Rows `r0..` of batch `b` into `dst` (whole rows).
        let block = |b: usize, r0: usize, dst: &mut [MaybeUninit<U>]| {
            let base = self.batch_offset(b) + r0;
            let nr = dst.len() / cols;
            for c0 in (0..cols).step_by(TILE) {
                let c1 = (c0 + TILE).min(cols);
                for r in 0..nr {
                    let row = &mut dst[r * cols + c0..r * cols + c1];
                    let src = base + r + c0 * cs;
                    for (j, d) in row.iter_mut().enumerate() {
                        d.write(f(a[src + j * cs]));
                    }
                }
            }
        };
        let band = TILE * cols;
        if out.len() < 2 * PAR_MIN_CHUNK {
            for (b, p) in out.chunks_mut(plane).enumerate() {
                for (i, d) in p.chunks_mut(band).enumerate() {
                    block(b, i * TILE, d);
                }
            }
        } else {
            out.par_chunks_mut(plane).enumerate().for_each(|(b, p)| {
                p.par_chunks_mut(band).enumerate().for_each(|(i, d)| block(b, i * TILE, d));
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use oxtorch_core::Layout;

    use super::*;

    /// The blocked copy against an element-by-element walk, on odd shapes, offsets and strides.
    #[test]
    fn matches_the_plain_walk() {
        let cases: &[(&[usize], &[usize], usize)] = &[
            (&[3, 5], &[1, 3], 0),
            (&[37, 70], &[1, 37], 0),
            (&[70, 37], &[1, 71], 3),
            (&[2, 33, 65], &[33 * 65, 1, 33], 1),
            (&[4, 3, 40, 50], &[7000, 2000, 1, 40], 2),
            (&[300, 257], &[1, 300], 0),
            (&[1, 1], &[1, 1], 0),
            (&[0, 4], &[1, 1], 0),
        ];
        for &(dims, strides, offset) in cases {
            let l = Layout::new(dims.to_vec(), strides.to_vec(), offset).unwrap();
            let len = l.checked_storage_extent().unwrap().max(1);
            let src: Vec<f32> = (0..len).map(|i| i as f32 * 0.5 - 3.0).collect();
            let plan = Plan::new([&l]);
            let expect: Vec<f64> = {
                let [s] = plan.inner_strides();
                let mut v = Vec::new();
                plan.for_runs(0, plan.numel(), |[o], n| v.extend((0..n).map(|i| src[o + i * s] as f64 * 2.0)));
                v
            };
            let n = plan.numel();
            let mut out = vec![MaybeUninit::<f64>::uninit(); n];
            match Transposed::of(&plan) {
                Some(t) => t.run(&src, &mut out, |x| x as f64 * 2.0),
                None => {
                    assert!(dims.iter().product::<usize>() <= 1, "{dims:?} {strides:?} not recognised");
                    continue;
                }
            }
            let got: Vec<f64> = out.iter().map(|x| unsafe { x.assume_init() }).collect();
            assert_eq!(got, expect, "{dims:?} {strides:?}");
        }
    }

    /// Large walks (the parallel path) and a batched one.
    #[test]
    fn parallel_matches() {
        let l = Layout::new(vec![3, 300, 200], vec![200 * 300, 1, 300], 0).unwrap();
        let src: Vec<i64> = (0..3 * 300 * 200).collect();
        let plan = Plan::new([&l]);
        let t = Transposed::of(&plan).unwrap();
        let mut out = vec![MaybeUninit::<i64>::uninit(); plan.numel()];
        t.run(&src, &mut out, |x| x);
        for b in 0..3 {
            for r in 0..300 {
                for c in 0..200 {
                    let got = unsafe { out[(b * 300 + r) * 200 + c].assume_init() };
                    assert_eq!(got, (b * 60000 + r + c * 300) as i64);
                }
            }
        }
    }
}
