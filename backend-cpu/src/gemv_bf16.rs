//! bf16 block kernels of the skinny product path ([`crate::gemv`]) on the AVX512-BF16 dot-product
//! instruction (`vdpbf16ps`: pairs of bf16 products summed into f32 lanes), rounding each output once.
//! Used only where [`crate::gemm_bf16::available`]; elsewhere bf16 products widen to f32.
//!
//! As the f32 kernels ([`crate::gemv_f32`]): one row of A streams each B column front to back with
//! four accumulators; several rows run as 4 × 4 register tiles over column blocks kept in cache.

use half::bf16;

use crate::gemm_bf16::MatRef;
use crate::gemv::{self, FromF32, Skinny};

/// Products with at most this many rows of A (and both operands contiguous along k) that
/// [`crate::gemm_bf16::gemm`] hands to [`gemv`] (`matmul` sends up to [`gemv::SKINNY_MAX_M`] rows
/// here itself).
const DOT_MAX_M: usize = 2;

/// `p.a · p.b` for every batch, row-major `[batches, m, n]`, accumulated in f32 and rounded once.
///
/// Callers must check [`crate::gemm_bf16::available`] first.
pub fn matmul<O: FromF32>(p: &Skinny<bf16>) -> Vec<O> {
    assert!(crate::gemm_bf16::available(), "gemv_bf16 needs avx512bf16");
    gemv::run(p, block::<O>)
}

/// Whether [`crate::gemm_bf16::gemm`] runs an `m`-row product of `a` and `b` here.
pub fn applies(m: usize, a: &MatRef, b: &MatRef) -> bool {
    m <= DOT_MAX_M && a.cs == 1 && b.rs == 1
}

/// `c = a · b` (`m × k` by `k × n`, row-major f32 `c`) for A rows and B columns contiguous along k.
///
/// Callers must check [`crate::gemm_bf16::available`] and [`applies`] first.
pub fn gemv(m: usize, n: usize, k: usize, a: MatRef, b: MatRef, c: &mut [f32]) {
    let p = Skinny {
        a: a.data,
        a_offs: &[a.offset],
        ars: a.rs,
        b: b.data,
        b_offs: &[b.offset],
        bcs: b.cs,
        m,
        n,
        k,
    };
    c.copy_from_slice(&matmul::<f32>(&p));
}

/// See [`gemv::Block`]; the processor must have AVX512-BF16.
#[allow(clippy::too_many_arguments)]
unsafe fn block<O: FromF32>(
    a: *const bf16,
    ars: usize,
    m: usize,
    b: *const bf16,
    bcs: usize,
    n: usize,
    k: usize,
    out: *mut O,
    ldo: usize,
) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: `matmul` checked the instructions; the caller guarantees the bounds.
    unsafe {
        x86::block(a, ars, m, b, bcs, n, k, out, ldo)
    }
    #[cfg(not(target_arch = "x86_64"))]
    unreachable!(
        "gemm_bf16::available() is false off x86-64: {a:?} {ars} {m} {b:?} {bcs} {n} {k} {out:?} {ldo}"
    )
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use std::arch::x86_64::*;

    use half::bf16;

    use crate::gemv::FromF32;

    /// `out[r * ldo + c] = Σ_p a[r * ars + p] · b[c * bcs + p]` for an `R × C` tile, `U` vectors of
    /// 32 bf16 per step along k for each output; the tail is read with masked loads.
    #[target_feature(enable = "avx512f,avx512bw,avx512bf16")]
    #[inline]
    #[allow(clippy::too_many_arguments)]
    unsafe fn tile<const R: usize, const C: usize, const U: usize, O: FromF32>(
        a: *const bf16,
        ars: usize,
        b: *const bf16,
        bcs: usize,
        k: usize,
        out: *mut O,
        ldo: usize,
    ) {
        let (a, b) = (a as *const i16, b as *const i16);
        let bh = |v: __m512i| -> __m512bh {
            // SAFETY: both types are 512 plain bits.
            unsafe { std::mem::transmute::<__m512i, __m512bh>(v) }
        };
        // SAFETY (all pointer reads and writes): the caller guarantees `R` rows and `C` columns of `k`
        // elements, and `R × C` outputs at row stride `ldo`; masked loads read only `k - p` elements.
        unsafe {
            let mut acc = [[[_mm512_setzero_ps(); U]; C]; R];
            let mut p = 0;
            while p + U * 32 <= k {
                for u in 0..U {
                    let mut bv = [_mm512_setzero_si512(); C];
                    for c in 0..C {
                        bv[c] = _mm512_loadu_si512(b.add(c * bcs + p + u * 32) as *const _);
                    }
                    for r in 0..R {
                        let av = bh(_mm512_loadu_si512(a.add(r * ars + p + u * 32) as *const _));
                        for c in 0..C {
                            acc[r][c][u] = _mm512_dpbf16_ps(acc[r][c][u], av, bh(bv[c]));
                        }
                    }
                }
                p += U * 32;
            }
            while p < k {
                let mask: __mmask32 = if k - p >= 32 { u32::MAX } else { (1u32 << (k - p)) - 1 };
                for r in 0..R {
                    let av = bh(_mm512_maskz_loadu_epi16(mask, a.add(r * ars + p)));
                    for c in 0..C {
                        let bv = bh(_mm512_maskz_loadu_epi16(mask, b.add(c * bcs + p)));
                        acc[r][c][0] = _mm512_dpbf16_ps(acc[r][c][0], av, bv);
                    }
                }
                p += 32;
            }
            for r in 0..R {
                for c in 0..C {
                    let mut v = acc[r][c][0];
                    for u in 1..U {
                        v = _mm512_add_ps(v, acc[r][c][u]);
                    }
                    *out.add(r * ldo + c) = O::from_f32(_mm512_reduce_add_ps(v));
                }
            }
        }
    }

    /// Rows `0..R` of A against columns `0..n` of B, four columns at a time.
    #[target_feature(enable = "avx512f,avx512bw,avx512bf16")]
    #[inline]
    #[allow(clippy::too_many_arguments)]
    unsafe fn columns<const R: usize, O: FromF32>(
        a: *const bf16,
        ars: usize,
        b: *const bf16,
        bcs: usize,
        n: usize,
        k: usize,
        out: *mut O,
        ldo: usize,
    ) {
        let mut j = 0;
        // SAFETY: columns `j..j + 4` (or `j`) are below `n`.
        unsafe {
            while j + 4 <= n {
                tile::<R, 4, 1, O>(a, ars, b.add(j * bcs), bcs, k, out.add(j), ldo);
                j += 4;
            }
            while j < n {
                tile::<R, 1, 1, O>(a, ars, b.add(j * bcs), bcs, k, out.add(j), ldo);
                j += 1;
            }
        }
    }

    /// See [`crate::gemv::Block`].
    #[target_feature(enable = "avx512f,avx512bw,avx512bf16")]
    #[allow(clippy::too_many_arguments)]
    pub(super) unsafe fn block<O: FromF32>(
        a: *const bf16,
        ars: usize,
        m: usize,
        b: *const bf16,
        bcs: usize,
        n: usize,
        k: usize,
        out: *mut O,
        ldo: usize,
    ) {
        // SAFETY: every tile stays inside rows `0..m` and columns `0..n`.
        unsafe {
            if m == 1 {
                // The weight streams from memory once: fetch a few columns ahead.
                let ahead = crate::gemv::prefetch_columns_ahead::<bf16>(bcs);
                for j in 0..n {
                    if j + ahead < n {
                        crate::gemv::prefetch_column(b.wrapping_add((j + ahead) * bcs), k, bcs);
                    }
                    tile::<1, 1, 4, O>(a, ars, b.add(j * bcs), bcs, k, out.add(j), ldo);
                }
                return;
            }
            // Column blocks whose B stretch stays in cache while every row tile passes over it.
            const NB: usize = 64;
            for j in (0..n).step_by(NB) {
                let nb = NB.min(n - j);
                let (bj, oj) = (b.add(j * bcs), out.add(j));
                let mut r = 0;
                while r < m {
                    let rows = (m - r).min(4);
                    let (ar, or) = (a.add(r * ars), oj.add(r * ldo));
                    match rows {
                        4 => columns::<4, O>(ar, ars, bj, bcs, nb, k, or, ldo),
                        3 => columns::<3, O>(ar, ars, bj, bcs, nb, k, or, ldo),
                        2 => columns::<2, O>(ar, ars, bj, bcs, nb, k, or, ldo),
                        _ => columns::<1, O>(ar, ars, bj, bcs, nb, k, or, ldo),
                    }
                    r += rows;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn values(n: usize, seed: u64) -> Vec<bf16> {
        crate::gemv::test_values(n, seed).into_iter().map(bf16::from_f32).collect()
    }

    /// Both output types against an f64 reference, on odd sizes, offsets and strides.
    #[test]
    fn kernels_match_reference() {
        if !crate::gemm_bf16::available() {
            return;
        }
        let cases = crate::gemv::KERNEL_TEST_CASES;
        for &(batches, m, k, n) in &cases {
            let (ars, bcs) = (k + 3, k + 5);
            let a = values(batches * m * ars + 11, 1);
            let b = values(batches * n * bcs + 13, 2);
            let a_offs: Vec<usize> = (0..batches).map(|i| 5 + i * m * ars).collect();
            let b_offs: Vec<usize> = (0..batches).map(|i| 7 + i * n * bcs).collect();
            let p = Skinny { a: &a, a_offs: &a_offs, ars, b: &b, b_offs: &b_offs, bcs, m, n, k };
            let wide: Vec<f32> = matmul(&p);
            let rounded: Vec<bf16> = matmul(&p);
            let (a64, b64): (Vec<f64>, Vec<f64>) =
                (a.iter().map(|x| x.to_f64()).collect(), b.iter().map(|x| x.to_f64()).collect());
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
            for (i, ((g, r), w)) in wide.iter().zip(&rounded).zip(&want).enumerate() {
                let tol = 1e-5 * (k as f64).sqrt() * (1.0 + w.abs());
                assert!((*g as f64 - w).abs() <= tol, "({batches},{m},{k},{n})[{i}]: {g} vs {w}");
                assert_eq!(*r, bf16::from_f32(*g), "({batches},{m},{k},{n})[{i}] rounding");
            }
        }
    }
}
