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
        let (cols, cs) = (self.cols, self.col_stride);
        self.drive(out, |base, dst| {
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
        });
    }

    /// [`Transposed::run`] without a conversion: 4-byte and 2-byte elements move as 16 × 16 tiles
    /// transposed in AVX-512 registers (every load and store a whole cache line or half of one, so
    /// the 4 KiB strides of typical matrices cannot thrash L1's sets), others through the scalar tiles.
    pub(crate) fn copy<T: Copy + Send + Sync>(&self, a: &[T], out: &mut [MaybeUninit<T>]) {
        #[cfg(target_arch = "x86_64")]
        if crate::simd::level() == crate::simd::Level::Avx512 {
            // SAFETY (both casts): `T` has the lane type's size and is `Copy`, so its elements move
            // bitwise as those lanes (loads, shuffles, widening and narrowing never change the bits,
            // NaN payloads included).
            match std::mem::size_of::<T>() {
                4 => {
                    let (a, out) = unsafe { (cast_slice::<T, u32>(a), cast_out::<T, u32>(out)) };
                    // SAFETY: AVX-512 is present (checked above).
                    return self.copy_tiles(a, out, |src, cs, dst, ld| unsafe {
                        avx512::tile16_u32(src, cs, dst, ld)
                    });
                }
                2 => {
                    let (a, out) = unsafe { (cast_slice::<T, u16>(a), cast_out::<T, u16>(out)) };
                    // SAFETY: AVX-512 is present (checked above).
                    return self.copy_tiles(a, out, |src, cs, dst, ld| unsafe {
                        avx512::tile16_u16(src, cs, dst, ld)
                    });
                }
                _ => {}
            }
        }
        self.run(a, out, |x| x)
    }

    /// The tiled copy: `tile(src, cs, dst, ld)` moves a 16 × 16 tile (see `avx512`), the edges move
    /// element by element.
    #[cfg(target_arch = "x86_64")]
    fn copy_tiles<L: Copy + Send + Sync>(
        &self,
        a: &[L],
        out: &mut [MaybeUninit<L>],
        tile: impl Fn(*const L, usize, *mut L, usize) + Sync,
    ) {
        let (cols, cs) = (self.cols, self.col_stride);
        self.drive(out, |base, dst| {
            let nr = dst.len() / cols;
            let (full_r, full_c) = (nr / 16 * 16, cols / 16 * 16);
            if nr > 0 {
                // Every element read below lies in `a`: the walk's layout was validated.
                assert!(base + (nr - 1) + (cols - 1) * cs < a.len());
            }
            for c0 in (0..full_c).step_by(16) {
                for r0 in (0..full_r).step_by(16) {
                    // The tile's 16 columns of 16 source elements are in bounds (assert above) and
                    // its 16 output rows of 16 elements lie inside `dst` (r0 + 16 <= nr, c0 + 16 <=
                    // cols).
                    // SAFETY: both offsets stay inside their slices, as just said.
                    let (src, out) = unsafe {
                        (a.as_ptr().add(base + r0 + c0 * cs), dst.as_mut_ptr().add(r0 * cols + c0) as *mut L)
                    };
                    tile(src, cs, out, cols);
                }
            }
            // The edges: rows past the last full tile, columns past the last full tile.
            for r in 0..nr {
                let cstart = if r < full_r { full_c } else { 0 };
                for c in cstart..cols {
                    dst[r * cols + c].write(a[base + r + c * cs]);
                }
            }
        });
    }

    /// Splits the output into bands of [`TILE`] whole rows (per batch) and calls `block(source offset
    /// of the band's first row, band)` on each, in parallel for large walks.
    fn drive<U: Send>(
        &self,
        out: &mut [MaybeUninit<U>],
        block: impl Fn(usize, &mut [MaybeUninit<U>]) + Sync,
    ) {
        let plane = self.rows * self.cols;
        if plane == 0 {
            return;
        }
        let band = TILE * self.cols;
        let start = |b: usize, i: usize| self.batch_offset(b) + i * TILE;
        if out.len() < 2 * PAR_MIN_CHUNK {
            for (b, p) in out.chunks_mut(plane).enumerate() {
                for (i, d) in p.chunks_mut(band).enumerate() {
                    block(start(b, i), d);
                }
            }
        } else {
            out.par_chunks_mut(plane).enumerate().for_each(|(b, p)| {
                p.par_chunks_mut(band).enumerate().for_each(|(i, d)| block(start(b, i), d));
            });
        }
    }
}

/// `a` viewed as lanes of `L` (same size as `T`).
///
/// # Safety
/// `T` and `L` must have the same size, and `L` must accept every bit pattern of `T`.
#[cfg(target_arch = "x86_64")]
unsafe fn cast_slice<T, L>(a: &[T]) -> &[L] {
    debug_assert_eq!(std::mem::size_of::<T>(), std::mem::size_of::<L>());
    // SAFETY: as the caller guarantees; the alignment of the 2- and 4-byte integers used here is at
    // most the size they share with `T`, which Rust's primitives and their wrappers align to.
    unsafe { std::slice::from_raw_parts(a.as_ptr() as *const L, a.len()) }
}

/// `out` viewed as lanes of `L` (as [`cast_slice`]).
///
/// # Safety
/// As [`cast_slice`]; only whole `T` bit patterns may be written through the result.
#[cfg(target_arch = "x86_64")]
unsafe fn cast_out<T, L>(out: &mut [MaybeUninit<T>]) -> &mut [MaybeUninit<L>] {
    debug_assert_eq!(std::mem::size_of::<T>(), std::mem::size_of::<L>());
    // SAFETY: as the caller guarantees.
    unsafe { std::slice::from_raw_parts_mut(out.as_mut_ptr() as *mut MaybeUninit<L>, out.len()) }
}

#[cfg(target_arch = "x86_64")]
mod avx512 {
    use std::arch::x86_64::*;

    /// Transposes 16 vectors of 16 lanes: lane `i` of input `j` becomes lane `j` of output `i`.
    #[target_feature(enable = "avx512f")]
    #[inline]
    fn transpose16(v: [__m512; 16]) -> [__m512; 16] {
        // Pairs of rows interleaved, then groups of four (within each 128-bit lane).
        let mut t = [_mm512_setzero_ps(); 16];
        for i in 0..8 {
            t[2 * i] = _mm512_unpacklo_ps(v[2 * i], v[2 * i + 1]);
            t[2 * i + 1] = _mm512_unpackhi_ps(v[2 * i], v[2 * i + 1]);
        }
        let mut u = [_mm512_setzero_ps(); 16];
        for g in 0..4 {
            u[4 * g] = _mm512_shuffle_ps::<0x44>(t[4 * g], t[4 * g + 2]);
            u[4 * g + 1] = _mm512_shuffle_ps::<0xEE>(t[4 * g], t[4 * g + 2]);
            u[4 * g + 2] = _mm512_shuffle_ps::<0x44>(t[4 * g + 1], t[4 * g + 3]);
            u[4 * g + 3] = _mm512_shuffle_ps::<0xEE>(t[4 * g + 1], t[4 * g + 3]);
        }
        // Then whole 128-bit lanes, twice.
        let mut w = [_mm512_setzero_ps(); 16];
        for k in 0..4 {
            w[k] = _mm512_shuffle_f32x4::<0x88>(u[k], u[4 + k]);
            w[4 + k] = _mm512_shuffle_f32x4::<0xDD>(u[k], u[4 + k]);
            w[8 + k] = _mm512_shuffle_f32x4::<0x88>(u[8 + k], u[12 + k]);
            w[12 + k] = _mm512_shuffle_f32x4::<0xDD>(u[8 + k], u[12 + k]);
        }
        let mut r = [_mm512_setzero_ps(); 16];
        for k in 0..4 {
            r[k] = _mm512_shuffle_f32x4::<0x88>(w[k], w[8 + k]);
            r[8 + k] = _mm512_shuffle_f32x4::<0xDD>(w[k], w[8 + k]);
            r[4 + k] = _mm512_shuffle_f32x4::<0x88>(w[4 + k], w[12 + k]);
            r[12 + k] = _mm512_shuffle_f32x4::<0xDD>(w[4 + k], w[12 + k]);
        }
        r
    }

    /// Transposes one 16 × 16 tile of 4-byte lanes: source column `j` (16 elements from
    /// `src + j * cs`) becomes elements `j` of the 16 output rows at `dst + i * ld`.
    ///
    /// # Safety
    /// AVX-512F must be available, and all 256 source and destination elements in bounds.
    #[target_feature(enable = "avx512f")]
    pub(super) unsafe fn tile16_u32(src: *const u32, cs: usize, dst: *mut u32, ld: usize) {
        let mut v = [_mm512_setzero_ps(); 16];
        for (j, x) in v.iter_mut().enumerate() {
            // SAFETY: the caller guarantees 16 elements at each column.
            *x = unsafe { _mm512_loadu_ps(src.add(j * cs) as *const f32) };
        }
        for (i, row) in transpose16(v).into_iter().enumerate() {
            // SAFETY: the caller guarantees 16 elements at each output row.
            unsafe { _mm512_storeu_ps(dst.add(i * ld) as *mut f32, row) };
        }
    }

    /// [`tile16_u32`] for 2-byte lanes, widened to 4 bytes on loading and narrowed on storing.
    ///
    /// # Safety
    /// As [`tile16_u32`].
    #[target_feature(enable = "avx512f")]
    pub(super) unsafe fn tile16_u16(src: *const u16, cs: usize, dst: *mut u16, ld: usize) {
        let mut v = [_mm512_setzero_ps(); 16];
        for (j, x) in v.iter_mut().enumerate() {
            // SAFETY: the caller guarantees 16 elements at each column.
            let narrow = unsafe { _mm256_loadu_si256(src.add(j * cs) as *const __m256i) };
            *x = _mm512_castsi512_ps(_mm512_cvtepu16_epi32(narrow));
        }
        for (i, row) in transpose16(v).into_iter().enumerate() {
            let narrow = _mm512_cvtepi32_epi16(_mm512_castps_si512(row));
            // SAFETY: the caller guarantees 16 elements at each output row.
            unsafe { _mm256_storeu_si256(dst.add(i * ld) as *mut __m256i, narrow) };
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
            (&[48, 1024], &[1, 48], 0),
            (&[1024, 33], &[1, 1024], 5),
            (&[2, 17, 40], &[17 * 40 + 3, 1, 17], 0),
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
                plan.for_runs(0, plan.numel(), |[o], n| {
                    v.extend((0..n).map(|i| src[o + i * s] as f64 * 2.0))
                });
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
            // The plain copy (AVX-512 tiles for 4-byte elements) moves bits: NaN payloads included.
            let bits: Vec<u32> = src.iter().map(|x| x.to_bits() ^ 0x7fc0_0001).collect();
            let mut out = vec![MaybeUninit::<u32>::uninit(); n];
            Transposed::of(&plan).unwrap().copy(&bits, &mut out);
            let got: Vec<u32> = out.iter().map(|x| unsafe { x.assume_init() }).collect();
            let want: Vec<u32> = expect.iter().map(|&x| ((x / 2.0) as f32).to_bits() ^ 0x7fc0_0001).collect();
            assert_eq!(got, want, "copy {dims:?} {strides:?}");
            let fl: Vec<f32> = bits.iter().map(|&b| f32::from_bits(b)).collect();
            let mut out = vec![MaybeUninit::<f32>::uninit(); n];
            Transposed::of(&plan).unwrap().copy(&fl, &mut out);
            let got: Vec<u32> = out.iter().map(|x| unsafe { x.assume_init() }.to_bits()).collect();
            assert_eq!(got, want, "f32 copy {dims:?} {strides:?}");
            // 2-byte elements (AVX-512 tiles too): distinct bit patterns, NaNs among them.
            let halves: Vec<half::bf16> =
                (0..len).map(|i| half::bf16::from_bits((i as u16).wrapping_mul(40503) ^ 0x7fc1)).collect();
            let want16: Vec<u16> = {
                let [s] = plan.inner_strides();
                let mut v = Vec::new();
                plan.for_runs(0, n, |[o], k| v.extend((0..k).map(|i| halves[o + i * s].to_bits())));
                v
            };
            let mut out = vec![MaybeUninit::<half::bf16>::uninit(); n];
            Transposed::of(&plan).unwrap().copy(&halves, &mut out);
            let got: Vec<u16> = out.iter().map(|x| unsafe { x.assume_init() }.to_bits()).collect();
            assert_eq!(got, want16, "bf16 copy {dims:?} {strides:?}");
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
        let src32: Vec<i32> = src.iter().map(|&x| x as i32).collect();
        let mut out32 = vec![MaybeUninit::<i32>::uninit(); plan.numel()];
        t.copy(&src32, &mut out32);
        for b in 0..3 {
            for r in 0..300 {
                for c in 0..200 {
                    let want = b * 60000 + r + c * 300;
                    assert_eq!(unsafe { out[(b * 300 + r) * 200 + c].assume_init() }, want as i64);
                    assert_eq!(unsafe { out32[(b * 300 + r) * 200 + c].assume_init() }, want as i32);
                }
            }
        }
    }
}
