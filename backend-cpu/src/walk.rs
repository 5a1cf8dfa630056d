//! Strided iteration: coalesced plans over operands that share one shape, walked in runs along the
//! innermost dimension, chunked across rayon's pool.

use std::mem::MaybeUninit;

use oxtorch_core::Layout;
use rayon::prelude::*;
use smallvec::SmallVec;

/// Per-dim sizes or strides; inline up to 6 dims so planning a walk does not allocate.
type Dims = SmallVec<[usize; 6]>;

/// Fewest elements a parallel chunk gets; smaller work runs on the calling thread.
pub const PAR_MIN_CHUNK: usize = 1 << 15;

/// How many elements each parallel chunk of an `n`-element job gets.
pub fn chunk_len(n: usize) -> usize {
    let threads = rayon::current_num_threads().max(1);
    n.div_ceil(threads * 4).max(PAR_MIN_CHUNK)
}

/// An iteration plan for `N` operands of the same shape: size-1 dims dropped and dims merged where
/// every operand's strides allow, so that a contiguous or simply broadcast case walks in few runs.
#[derive(Clone, Debug)]
pub struct Plan<const N: usize> {
    dims: Dims,
    strides: [Dims; N],
    offsets: [usize; N],
    numel: usize,
}

impl<const N: usize> Plan<N> {
    /// Plans a walk over `layouts`, which must all have the same shape.
    pub fn new(layouts: [&Layout; N]) -> Self {
        let shape = layouts[0].dims();
        debug_assert!(layouts.iter().all(|l| l.dims() == shape));
        let numel = layouts[0].numel();
        let mut dims = Dims::new();
        let mut strides: [Dims; N] = std::array::from_fn(|_| Dims::new());
        for d in 0..shape.len() {
            if shape[d] == 1 {
                continue;
            }
            let mergeable = !dims.is_empty()
                && (0..N).all(|k| {
                    let last = *strides[k].last().unwrap();
                    last == layouts[k].strides()[d] * shape[d]
                });
            if mergeable {
                *dims.last_mut().unwrap() *= shape[d];
                for k in 0..N {
                    *strides[k].last_mut().unwrap() = layouts[k].strides()[d];
                }
            } else {
                dims.push(shape[d]);
                for k in 0..N {
                    strides[k].push(layouts[k].strides()[d]);
                }
            }
        }
        if dims.is_empty() {
            dims.push(1);
            for s in strides.iter_mut() {
                s.push(1);
            }
        }
        let offsets = std::array::from_fn(|k| layouts[k].offset());
        Plan { dims, strides, offsets, numel }
    }

    /// Number of elements walked.
    pub fn numel(&self) -> usize {
        self.numel
    }

    /// The coalesced dims.
    pub fn dims(&self) -> &[usize] {
        &self.dims
    }

    /// Operand `k`'s strides over [`Plan::dims`].
    pub fn strides(&self, k: usize) -> &[usize] {
        &self.strides[k]
    }

    /// Each operand's storage offset.
    pub fn offsets(&self) -> [usize; N] {
        self.offsets
    }

    /// The innermost strides, one per operand.
    pub fn inner_strides(&self) -> [usize; N] {
        std::array::from_fn(|k| *self.strides[k].last().unwrap())
    }

    /// True when the whole walk is one run in which every operand has unit stride.
    pub fn is_contiguous(&self) -> bool {
        self.dims.len() == 1 && self.inner_strides().iter().all(|&s| s == 1)
    }

    /// Calls `f(offsets, len)` for each run of consecutive elements along the innermost dim, covering
    /// the flat (row-major) positions `start..end`. Within a run operand `k` advances by
    /// `inner_strides()[k]`.
    pub fn for_runs(&self, start: usize, end: usize, mut f: impl FnMut([usize; N], usize)) {
        if start >= end {
            return;
        }
        let rank = self.dims.len();
        let mut idx: Dims = smallvec::smallvec![0; rank];
        let mut rem = start;
        for d in (0..rank).rev() {
            idx[d] = rem % self.dims[d];
            rem /= self.dims[d];
        }
        let mut offs = self.offsets;
        for k in 0..N {
            for d in 0..rank {
                offs[k] += idx[d] * self.strides[k][d];
            }
        }
        let last = rank - 1;
        let inner = self.inner_strides();
        let mut pos = start;
        while pos < end {
            let len = (self.dims[last] - idx[last]).min(end - pos);
            f(offs, len);
            pos += len;
            idx[last] += len;
            for k in 0..N {
                offs[k] += len * inner[k];
            }
            // carry into outer dims
            let mut d = last;
            while idx[d] == self.dims[d] && d > 0 {
                for k in 0..N {
                    offs[k] -= self.dims[d] * self.strides[k][d];
                }
                idx[d] = 0;
                d -= 1;
                idx[d] += 1;
                for k in 0..N {
                    offs[k] += self.strides[k][d];
                }
            }
        }
    }
}

/// Builds a vector of `n` elements by calling `fill(start, chunk)` on disjoint chunks, in parallel
/// for large `n`. `fill` must write every element of its chunk.
pub(crate) fn par_collect<U: Copy + Send + 'static>(
    n: usize,
    fill: impl Fn(usize, &mut [MaybeUninit<U>]) + Sync,
) -> Vec<U> {
    let mut out: Vec<U> = crate::pool::take(n);
    let spare = &mut out.spare_capacity_mut()[..n];
    // Small outputs (the common case of tiny ops) skip asking rayon for its thread count.
    let chunk = if n <= PAR_MIN_CHUNK { n } else { chunk_len(n) };
    if chunk >= n {
        fill(0, spare);
    } else {
        spare.par_chunks_mut(chunk).enumerate().for_each(|(i, c)| fill(i * chunk, c));
    }
    // SAFETY: `fill` initialised all `n` elements (every caller writes its whole chunk), and `U: Copy`
    // has no drop glue, so a panic above only leaks.
    unsafe { out.set_len(n) };
    out
}

/// Runs `f(start, end)` over `0..n` split into chunks, in parallel for large `n`.
pub fn par_ranges(n: usize, f: impl Fn(usize, usize) + Sync) {
    let chunk = chunk_len(n);
    if chunk >= n {
        f(0, n);
    } else {
        (0..n.div_ceil(chunk)).into_par_iter().for_each(|i| f(i * chunk, ((i + 1) * chunk).min(n)));
    }
}

/// `out[i] = f(a[i])` over a layout, into a new contiguous vector.
pub fn map1<A: Copy + Sync, U: Copy + Send + 'static>(
    a: &[A],
    la: &Layout,
    f: impl Fn(A) -> U + Sync + Copy,
) -> Vec<U> {
    if let Some(r) = la.contiguous_range() {
        let a = &a[r];
        return par_collect(a.len(), |start, out| crate::simd::map1(&a[start..start + out.len()], out, f));
    }
    let plan = Plan::new([la]);
    if let Some(t) = crate::transpose::Transposed::of(&plan) {
        let n = plan.numel();
        let mut out: Vec<U> = crate::pool::take(n);
        t.run(a, &mut out.spare_capacity_mut()[..n], f);
        // SAFETY: `run` wrote all `n` elements; `U: Copy` has no drop glue.
        unsafe { out.set_len(n) };
        return out;
    }
    let [sa] = plan.inner_strides();
    par_collect(plan.numel(), |start, out| {
        let mut o = 0;
        plan.for_runs(start, start + out.len(), |[oa], len| {
            let dst = &mut out[o..o + len];
            if sa == 1 {
                crate::simd::map1(&a[oa..oa + len], dst, f);
            } else if sa == 0 {
                let v = f(a[oa]);
                for d in dst.iter_mut() {
                    d.write(v);
                }
            } else {
                for (i, d) in dst.iter_mut().enumerate() {
                    d.write(f(a[oa + i * sa]));
                }
            }
            o += len;
        });
    })
}

/// `out[i] = f(a[i], b[i])` over two layouts of one shape, into a new contiguous vector.
pub fn map2<A: Copy + Sync, B: Copy + Sync, U: Copy + Send + 'static>(
    a: &[A],
    la: &Layout,
    b: &[B],
    lb: &Layout,
    f: impl Fn(A, B) -> U + Sync + Copy,
) -> Vec<U> {
    if let (Some(ra), Some(rb)) = (la.contiguous_range(), lb.contiguous_range()) {
        let (a, b) = (&a[ra], &b[rb]);
        return par_collect(a.len(), |start, out| {
            let end = start + out.len();
            crate::simd::map2(&a[start..end], &b[start..end], out, f)
        });
    }
    let plan = Plan::new([la, lb]);
    let [sa, sb] = plan.inner_strides();
    par_collect(plan.numel(), |start, out| {
        let mut o = 0;
        plan.for_runs(start, start + out.len(), |[oa, ob], len| {
            let dst = &mut out[o..o + len];
            match (sa, sb) {
                (1, 1) => crate::simd::map2(&a[oa..oa + len], &b[ob..ob + len], dst, f),
                (1, 0) => {
                    let y = b[ob];
                    crate::simd::map1(&a[oa..oa + len], dst, move |x| f(x, y))
                }
                (0, 1) => {
                    let x = a[oa];
                    crate::simd::map1(&b[ob..ob + len], dst, move |y| f(x, y))
                }
                _ => {
                    for (i, d) in dst.iter_mut().enumerate() {
                        d.write(f(a[oa + i * sa], b[ob + i * sb]));
                    }
                }
            }
            o += len;
        });
    })
}

/// `out[i] = f(a[i], b[i], c[i])` over three layouts of one shape, into a new contiguous vector.
pub fn map3<A: Copy + Sync, B: Copy + Sync, C: Copy + Sync, U: Copy + Send + 'static>(
    (a, la): (&[A], &Layout),
    (b, lb): (&[B], &Layout),
    (c, lc): (&[C], &Layout),
    f: impl Fn(A, B, C) -> U + Sync + Copy,
) -> Vec<U> {
    let plan = Plan::new([la, lb, lc]);
    let [sa, sb, sc] = plan.inner_strides();
    par_collect(plan.numel(), |start, out| {
        let mut o = 0;
        plan.for_runs(start, start + out.len(), |[oa, ob, oc], len| {
            let dst = &mut out[o..o + len];
            let (ra, rb, rc) = (oa..oa + len, ob..ob + len, oc..oc + len);
            // Unit-stride and broadcast (stride-0) operands take the vectorised slice loops.
            match (sa, sb, sc) {
                (1, 1, 1) => crate::simd::map3(&a[ra], &b[rb], &c[rc], dst, f),
                (1, 0, 1) => {
                    let y = b[ob];
                    crate::simd::map2(&a[ra], &c[rc], dst, move |x, z| f(x, y, z))
                }
                (1, 1, 0) => {
                    let z = c[oc];
                    crate::simd::map2(&a[ra], &b[rb], dst, move |x, y| f(x, y, z))
                }
                (1, 0, 0) => {
                    let (y, z) = (b[ob], c[oc]);
                    crate::simd::map1(&a[ra], dst, move |x| f(x, y, z))
                }
                (0, 1, 1) => {
                    let x = a[oa];
                    crate::simd::map2(&b[rb], &c[rc], dst, move |y, z| f(x, y, z))
                }
                _ => {
                    for (i, d) in dst.iter_mut().enumerate() {
                        d.write(f(a[oa + i * sa], b[ob + i * sb], c[oc + i * sc]));
                    }
                }
            }
            o += len;
        });
    })
}
