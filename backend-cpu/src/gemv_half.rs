//! Skinny products ([`crate::gemv`]) of half-precision operands without half-precision dot-product
//! instructions: bf16 where the processor lacks AVX512-BF16 (AVX2 machines, Zen 3, Skylake and Ice
//! Lake servers), and f16 everywhere.
//!
//! On AVX-512 and AVX2 the f32 kernels of [`crate::gemv_x86`] widen each vector of B (the weight) as
//! it is loaded, so the weight is read from memory once, at its own width. Elsewhere each task widens
//! its rows of A once and B a panel of columns at a time into an f32 scratch that stays in L1, and
//! runs the plain f32 kernel on it. Either way each output is rounded once. (Widening the whole
//! weight before a gemm, as this replaced, wrote and re-read twice its size per product: bf16 decode
//! of the bench's Llama-125M ran at 6.6 tokens/s, against 129 with the dot-product kernel.)

use std::cell::RefCell;
use std::mem::MaybeUninit;

use half::{bf16, f16};

use crate::gemv::{self, Block, FromF32, Skinny};
use crate::simd::{level, Level};

/// A half-precision element that widens exactly to f32.
pub trait Widen: Copy + Sync + 'static {
    /// Writes `src` widened into `dst` (of equal length).
    fn widen(src: &[Self], dst: &mut [f32]);

    /// The block kernel for this processor, storing outputs as `O`.
    fn block<O: FromF32>() -> Block<Self, O>;
}

impl Widen for bf16 {
    fn block<O: FromF32>() -> Block<bf16, O> {
        match level() {
            #[cfg(target_arch = "x86_64")]
            Level::Avx512 => bf16_avx512::block::<O>,
            #[cfg(target_arch = "x86_64")]
            Level::Avx2 => bf16_avx2::block::<O>,
            _ => panel_block::<bf16, O>,
        }
    }

    fn widen(src: &[bf16], dst: &mut [f32]) {
        // SAFETY: `MaybeUninit<f32>` has `f32`'s layout, and `map1` writes only initialised values.
        let dst = unsafe { &mut *(dst as *mut [f32] as *mut [MaybeUninit<f32>]) };
        // A bf16 is the upper half of an f32's bits.
        crate::simd::map1(src, dst, |x: bf16| f32::from_bits(u32::from(x.to_bits()) << 16));
    }
}

impl Widen for f16 {
    fn block<O: FromF32>() -> Block<f16, O> {
        match level() {
            #[cfg(target_arch = "x86_64")]
            Level::Avx512 => f16_avx512::block::<O>,
            #[cfg(target_arch = "x86_64")]
            Level::Avx2 => f16_avx2::block::<O>,
            _ => panel_block::<f16, O>,
        }
    }

    fn widen(src: &[f16], dst: &mut [f32]) {
        use half::slice::HalfFloatSliceExt;
        // Uses F16C conversions where the processor has them.
        src.convert_to_f32_slice(dst);
    }
}

/// Widened f32 elements of B per panel: 32 KiB, within every current x86 core's L1 data cache.
const PANEL_ELEMS: usize = 8 * 1024;

/// `p.a · p.b` for every batch, row-major `[batches, m, n]`, accumulated in f32 and rounded once.
pub fn matmul<T: Widen, O: FromF32>(p: &Skinny<T>) -> Vec<O> {
    gemv::run(p, T::block::<O>())
}

/// Loads of 16 (AVX-512) or 8 (AVX2) narrow elements as an f32 vector.
#[cfg(target_arch = "x86_64")]
mod load {
    use std::arch::x86_64::*;

    use half::{bf16, f16};

    /// 16 bf16 at `p` (a bf16 is the upper half of an f32's bits).
    #[target_feature(enable = "avx512f")]
    #[inline]
    pub(super) unsafe fn bf16x16(p: *const bf16) -> __m512 {
        // SAFETY: the caller guarantees 16 readable elements.
        let v = unsafe { _mm256_loadu_si256(p as *const __m256i) };
        _mm512_castsi512_ps(_mm512_slli_epi32::<16>(_mm512_cvtepu16_epi32(v)))
    }

    /// 16 f16 at `p`.
    #[target_feature(enable = "avx512f")]
    #[inline]
    pub(super) unsafe fn f16x16(p: *const f16) -> __m512 {
        // SAFETY: the caller guarantees 16 readable elements.
        _mm512_cvtph_ps(unsafe { _mm256_loadu_si256(p as *const __m256i) })
    }

    /// 8 bf16 at `p`.
    #[target_feature(enable = "avx2")]
    #[inline]
    pub(super) unsafe fn bf16x8(p: *const bf16) -> __m256 {
        // SAFETY: the caller guarantees 8 readable elements.
        let v = unsafe { _mm_loadu_si128(p as *const __m128i) };
        _mm256_castsi256_ps(_mm256_slli_epi32::<16>(_mm256_cvtepu16_epi32(v)))
    }

    /// 8 f16 at `p`.
    #[target_feature(enable = "avx2,f16c")]
    #[inline]
    pub(super) unsafe fn f16x8(p: *const f16) -> __m256 {
        // SAFETY: the caller guarantees 8 readable elements.
        _mm256_cvtph_ps(unsafe { _mm_loadu_si128(p as *const __m128i) })
    }
}

crate::gemv_x86::x86_kernels!(
    bf16_avx512,
    "avx512f",
    half::bf16,
    16,
    4,
    _mm512_setzero_ps,
    super::load::bf16x16,
    half::bf16::to_f32,
    _mm512_fmadd_ps,
    _mm512_add_ps,
    _mm512_reduce_add_ps
);

crate::gemv_x86::x86_kernels!(
    f16_avx512,
    "avx512f",
    half::f16,
    16,
    4,
    _mm512_setzero_ps,
    super::load::f16x16,
    half::f16::to_f32,
    _mm512_fmadd_ps,
    _mm512_add_ps,
    _mm512_reduce_add_ps
);

crate::gemv_x86::x86_kernels!(
    bf16_avx2,
    "avx2,fma",
    half::bf16,
    8,
    2,
    _mm256_setzero_ps,
    super::load::bf16x8,
    half::bf16::to_f32,
    _mm256_fmadd_ps,
    _mm256_add_ps,
    crate::gemv_x86::hsum256
);

crate::gemv_x86::x86_kernels!(
    f16_avx2,
    "avx2,fma,f16c",
    half::f16,
    8,
    2,
    _mm256_setzero_ps,
    super::load::f16x8,
    half::f16::to_f32,
    _mm256_fmadd_ps,
    _mm256_add_ps,
    crate::gemv_x86::hsum256
);

thread_local! {
    /// Each pool thread's f32 scratch: A's widened rows, a widened B panel and its f32 outputs.
    static SCRATCH: RefCell<Vec<f32>> = const { RefCell::new(Vec::new()) };
}

/// The portable kernel (see [`gemv::Block`]): panels of B widened into an f32 scratch, then the
/// f32 kernel this processor runs.
///
/// # Safety
/// As [`gemv::Block`].
#[allow(clippy::too_many_arguments)]
unsafe fn panel_block<T: Widen, O: FromF32>(
    a: *const T,
    ars: usize,
    m: usize,
    b: *const T,
    bcs: usize,
    n: usize,
    k: usize,
    out: *mut O,
    ldo: usize,
) {
    // Columns per panel: a multiple of the f32 kernels' 4-column tile, at least one tile.
    let cols = (PANEL_ELEMS / k).max(4).next_multiple_of(4).min(n);
    let f32_block = crate::gemv_f32::block();
    SCRATCH.with_borrow_mut(|scratch| {
        let need = m * k + cols * k + m * cols;
        if scratch.len() < need {
            scratch.resize(need, 0.0);
        }
        let (aw, rest) = scratch.split_at_mut(m * k);
        let (bw, ow) = rest.split_at_mut(cols * k);
        for (r, row) in aw.chunks_exact_mut(k).enumerate() {
            // SAFETY: the caller guarantees rows `0..m` of `k` elements at stride `ars`.
            T::widen(unsafe { std::slice::from_raw_parts(a.add(r * ars), k) }, row);
        }
        let mut j0 = 0;
        while j0 < n {
            let c = cols.min(n - j0);
            for (j, col) in bw.chunks_exact_mut(k).take(c).enumerate() {
                // SAFETY: the caller guarantees columns `0..n` of `k` elements at stride `bcs`.
                T::widen(unsafe { std::slice::from_raw_parts(b.add((j0 + j) * bcs), k) }, col);
            }
            // SAFETY: `aw` holds `m` rows and `bw` at least `c` columns of `k`; `ow` holds `m × cols`
            // outputs, written at row stride `cols`; the kernel is the one `level()` allows.
            unsafe { f32_block(aw.as_ptr(), k, m, bw.as_ptr(), k, c, k, ow.as_mut_ptr(), cols) };
            for r in 0..m {
                for j in 0..c {
                    // SAFETY: output `(r, j0 + j)` is inside the caller's `m × n` block.
                    unsafe { *out.add(r * ldo + j0 + j) = O::from_f32(ow[r * cols + j]) };
                }
            }
            j0 += c;
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gemv::test_values as values;

    /// `(name, f32-output kernel, narrow-output kernel)` for each of `T`'s kernels.
    type Kernels<T> = Vec<(&'static str, Block<T, f32>, Block<T, T>)>;

    /// Every kernel this processor runs, for `T` (widened by `to_f64`), with both output widths,
    /// against an f64 reference on odd sizes, offsets and strides; the narrow output is the wide one
    /// rounded once.
    fn check<T: Widen + FromF32 + PartialEq + std::fmt::Debug>(kernels: Kernels<T>, to_f64: fn(T) -> f64) {
        for (name, wide_kernel, narrow_kernel) in kernels {
            for &(batches, m, k, n) in &crate::gemv::KERNEL_TEST_CASES {
                let (ars, bcs) = (k + 3, k + 5);
                let a: Vec<T> = values(batches * m * ars + 11, 1).into_iter().map(T::from_f32).collect();
                let b: Vec<T> = values(batches * n * bcs + 13, 2).into_iter().map(T::from_f32).collect();
                let a_offs: Vec<usize> = (0..batches).map(|i| 5 + i * m * ars).collect();
                let b_offs: Vec<usize> = (0..batches).map(|i| 7 + i * n * bcs).collect();
                let p = Skinny { a: &a, a_offs: &a_offs, ars, b: &b, b_offs: &b_offs, bcs, m, n, k };
                let wide = gemv::run(&p, wide_kernel);
                let narrow = gemv::run(&p, narrow_kernel);
                let (a64, b64): (Vec<f64>, Vec<f64>) =
                    (a.iter().map(|&x| to_f64(x)).collect(), b.iter().map(|&x| to_f64(x)).collect());
                let want = gemv::reference(&Skinny {
                    a: &a64,
                    a_offs: &a_offs,
                    ars,
                    b: &b64,
                    b_offs: &b_offs,
                    bcs,
                    m,
                    n,
                    k,
                });
                assert_eq!(wide.len(), want.len());
                for (i, ((g, r), w)) in wide.iter().zip(&narrow).zip(&want).enumerate() {
                    let tol = 1e-5 * (k as f64).sqrt() * (1.0 + w.abs());
                    assert!((*g as f64 - w).abs() <= tol, "{name} ({batches},{m},{k},{n})[{i}]: {g} vs {w}");
                    assert_eq!(*r, T::from_f32(*g), "{name} ({batches},{m},{k},{n})[{i}] rounding");
                }
            }
        }
    }

    /// `(name, f32-output kernel, narrow-output kernel)` for each of `T`'s kernels this processor runs.
    macro_rules! kernels {
        ($t:ty, $avx2:ident, $avx512:ident) => {{
            let mut k: Kernels<$t> = vec![("panel", panel_block::<$t, f32>, panel_block::<$t, $t>)];
            #[cfg(target_arch = "x86_64")]
            {
                if matches!(level(), Level::Avx2 | Level::Avx512) {
                    k.push(("avx2", $avx2::block::<f32>, $avx2::block::<$t>));
                }
                if level() == Level::Avx512 {
                    k.push(("avx512", $avx512::block::<f32>, $avx512::block::<$t>));
                }
            }
            k
        }};
    }

    #[test]
    fn bf16_kernels_match_reference() {
        check::<bf16>(kernels!(bf16, bf16_avx2, bf16_avx512), |x| x.to_f64());
    }

    #[test]
    fn f16_kernels_match_reference() {
        check::<f16>(kernels!(f16, f16_avx2, f16_avx512), |x| x.to_f64());
    }

    /// Widening is exact, NaN and infinities included, on lengths around the vector widths.
    #[test]
    fn widening_is_exact() {
        let specials = [0.0, -0.0, 1.5, -2.25, f32::INFINITY, f32::NEG_INFINITY, 65504.0, 1e-7];
        for len in [0, 1, 7, 8, 15, 16, 17, 33, 100] {
            let src: Vec<f32> = (0..len).map(|i| specials[i % specials.len()] * (1 + i / 8) as f32).collect();
            let (hb, hf): (Vec<bf16>, Vec<f16>) = (
                src.iter().map(|&x| bf16::from_f32(x)).collect(),
                src.iter().map(|&x| f16::from_f32(x)).collect(),
            );
            let (mut wb, mut wf) = (vec![0f32; len], vec![0f32; len]);
            bf16::widen(&hb, &mut wb);
            f16::widen(&hf, &mut wf);
            for i in 0..len {
                assert_eq!(wb[i].to_bits(), hb[i].to_f32().to_bits(), "bf16 [{i}] of {len}");
                assert_eq!(wf[i].to_bits(), hf[i].to_f32().to_bits(), "f16 [{i}] of {len}");
            }
            let nan = [bf16::NAN];
            let mut w = [0f32];
            bf16::widen(&nan, &mut w);
            assert!(w[0].is_nan());
        }
    }
}
