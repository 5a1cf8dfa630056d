//! f32 block kernels of the skinny product path ([`crate::gemv`]): AVX-512 and AVX2 + FMA, picked at
//! runtime, and a plain loop elsewhere.
//!
//! A single row of A (decode) runs each output as one sequential pass over its B column with four
//! accumulators: B is then read front to back, the access pattern the hardware prefetchers stream
//! fastest (interleaving several columns measured ~35% slower). Several rows run as register tiles of
//! up to 4 rows × 4 columns (2 × 4 on AVX2), so each loaded stretch of B serves every row.

use crate::gemv::{self, Block, Skinny};
use crate::simd::{level, Level};

/// `p.a · p.b` for every batch, row-major `[batches, m, n]`.
pub fn matmul(p: &Skinny<f32>) -> Vec<f32> {
    gemv::run(p, block())
}

/// The block kernel for this processor.
fn block() -> Block<f32, f32> {
    match level() {
        #[cfg(target_arch = "x86_64")]
        Level::Avx512 => avx512::block,
        #[cfg(target_arch = "x86_64")]
        Level::Avx2 => avx2::block,
        _ => plain_block,
    }
}

/// The portable kernel: one dot product per output, 8 partial sums.
///
/// # Safety
/// As [`Block`].
#[allow(clippy::too_many_arguments)]
unsafe fn plain_block(
    a: *const f32,
    ars: usize,
    m: usize,
    b: *const f32,
    bcs: usize,
    n: usize,
    k: usize,
    out: *mut f32,
    ldo: usize,
) {
    for r in 0..m {
        // SAFETY: the caller guarantees rows `0..m` and columns `0..n` of length `k` are in bounds.
        let x = unsafe { std::slice::from_raw_parts(a.add(r * ars), k) };
        for j in 0..n {
            let y = unsafe { std::slice::from_raw_parts(b.add(j * bcs), k) };
            let mut acc = [0f32; 8];
            let (xc, yc) = (x.chunks_exact(8), y.chunks_exact(8));
            let tail: f32 = xc.remainder().iter().zip(yc.remainder()).map(|(u, v)| u * v).sum();
            for (xs, ys) in xc.zip(yc) {
                for l in 0..8 {
                    acc[l] += xs[l] * ys[l];
                }
            }
            unsafe { *out.add(r * ldo + j) = acc.iter().sum::<f32>() + tail };
        }
    }
}

/// One instruction set's kernels: `$v` vectors of `$lanes` f32, `$maxr` rows per register tile.
macro_rules! x86_kernels {
    ($name:ident, $feat:literal, $lanes:literal, $maxr:literal, $zero:ident, $load:ident, $fma:ident,
     $add:ident, $reduce:path) => {
        #[cfg(target_arch = "x86_64")]
        mod $name {
            use std::arch::x86_64::*;

            /// `out[r * ldo + c] = Σ_p a[r * ars + p] · b[c * bcs + p]` for an `R × C` tile, `U`
            /// vectors per step along k for each output.
            #[target_feature(enable = $feat)]
            #[inline]
            unsafe fn tile<const R: usize, const C: usize, const U: usize>(
                a: *const f32,
                ars: usize,
                b: *const f32,
                bcs: usize,
                k: usize,
                out: *mut f32,
                ldo: usize,
            ) {
                // SAFETY (all pointer reads and writes): the caller guarantees `R` rows and `C`
                // columns of `k` elements, and `R × C` outputs at row stride `ldo`.
                unsafe {
                    let mut acc = [[[$zero(); U]; C]; R];
                    let mut p = 0;
                    while p + U * $lanes <= k {
                        for u in 0..U {
                            let mut bv = [$zero(); C];
                            for c in 0..C {
                                bv[c] = $load(b.add(c * bcs + p + u * $lanes));
                            }
                            for r in 0..R {
                                let av = $load(a.add(r * ars + p + u * $lanes));
                                for c in 0..C {
                                    acc[r][c][u] = $fma(av, bv[c], acc[r][c][u]);
                                }
                            }
                        }
                        p += U * $lanes;
                    }
                    while p + $lanes <= k {
                        for r in 0..R {
                            let av = $load(a.add(r * ars + p));
                            for c in 0..C {
                                acc[r][c][0] = $fma(av, $load(b.add(c * bcs + p)), acc[r][c][0]);
                            }
                        }
                        p += $lanes;
                    }
                    for r in 0..R {
                        for c in 0..C {
                            let mut v = acc[r][c][0];
                            for u in 1..U {
                                v = $add(v, acc[r][c][u]);
                            }
                            let mut s = $reduce(v);
                            for q in p..k {
                                s += *a.add(r * ars + q) * *b.add(c * bcs + q);
                            }
                            *out.add(r * ldo + c) = s;
                        }
                    }
                }
            }

            /// Rows `0..R` of A against columns `0..n` of B, one column at a time.
            #[target_feature(enable = $feat)]
            #[inline]
            #[allow(clippy::too_many_arguments)]
            unsafe fn columns<const R: usize>(
                a: *const f32,
                ars: usize,
                b: *const f32,
                bcs: usize,
                n: usize,
                k: usize,
                out: *mut f32,
                ldo: usize,
            ) {
                let mut j = 0;
                // SAFETY: columns `j..j + 4` (or `j`) are below `n`.
                unsafe {
                    while j + 4 <= n {
                        tile::<R, 4, 1>(a, ars, b.add(j * bcs), bcs, k, out.add(j), ldo);
                        j += 4;
                    }
                    while j < n {
                        tile::<R, 1, 1>(a, ars, b.add(j * bcs), bcs, k, out.add(j), ldo);
                        j += 1;
                    }
                }
            }

            /// See [`crate::gemv::Block`].
            #[target_feature(enable = $feat)]
            #[allow(clippy::too_many_arguments)]
            pub(super) unsafe fn block(
                a: *const f32,
                ars: usize,
                m: usize,
                b: *const f32,
                bcs: usize,
                n: usize,
                k: usize,
                out: *mut f32,
                ldo: usize,
            ) {
                // SAFETY: every tile stays inside rows `0..m` and columns `0..n`.
                unsafe {
                    if m == 1 {
                        for j in 0..n {
                            tile::<1, 1, 4>(a, ars, b.add(j * bcs), bcs, k, out.add(j), ldo);
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
                            let rows = (m - r).min($maxr);
                            let (ar, or) = (a.add(r * ars), oj.add(r * ldo));
                            match rows {
                                4 => columns::<4>(ar, ars, bj, bcs, nb, k, or, ldo),
                                3 => columns::<3>(ar, ars, bj, bcs, nb, k, or, ldo),
                                2 => columns::<2>(ar, ars, bj, bcs, nb, k, or, ldo),
                                _ => columns::<1>(ar, ars, bj, bcs, nb, k, or, ldo),
                            }
                            r += rows;
                        }
                    }
                }
            }
        }
    };
}

x86_kernels!(
    avx512,
    "avx512f",
    16,
    4,
    _mm512_setzero_ps,
    _mm512_loadu_ps,
    _mm512_fmadd_ps,
    _mm512_add_ps,
    _mm512_reduce_add_ps
);

x86_kernels!(
    avx2,
    "avx2,fma",
    8,
    2,
    _mm256_setzero_ps,
    _mm256_loadu_ps,
    _mm256_fmadd_ps,
    _mm256_add_ps,
    super::hsum256
);

/// The sum of a vector's 8 lanes.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
#[inline]
fn hsum256(v: std::arch::x86_64::__m256) -> f32 {
    use std::arch::x86_64::*;
    let s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    let s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    _mm_cvtss_f32(_mm_add_ss(s, _mm_shuffle_ps(s, s, 1)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn values(n: usize, seed: u64) -> Vec<f32> {
        let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
        (0..n)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                ((x >> 40) % 2001) as f32 / 1000.0 - 1.0
            })
            .collect()
    }

    /// Every kernel this processor runs against an f64 reference, on odd sizes, offsets and strides.
    #[test]
    fn kernels_match_reference() {
        let mut kernels: Vec<(&str, Block<f32, f32>)> = vec![("plain", plain_block)];
        #[cfg(target_arch = "x86_64")]
        {
            if matches!(level(), Level::Avx2 | Level::Avx512) {
                kernels.push(("avx2", avx2::block));
            }
            if level() == Level::Avx512 {
                kernels.push(("avx512", avx512::block));
            }
        }
        let cases = crate::gemv::KERNEL_TEST_CASES;
        for (name, kernel) in kernels {
            for &(batches, m, k, n) in &cases {
                // A rows padded to k + 3, B columns to k + 5, every batch at its own odd offset.
                let (ars, bcs) = (k + 3, k + 5);
                let a = values(batches * m * ars + 11, 1);
                let b = values(batches * n * bcs + 13, 2);
                let a_offs: Vec<usize> = (0..batches).map(|i| 5 + i * m * ars).collect();
                let b_offs: Vec<usize> = (0..batches).map(|i| 7 + i * n * bcs).collect();
                let p = Skinny { a: &a, a_offs: &a_offs, ars, b: &b, b_offs: &b_offs, bcs, m, n, k };
                let got = gemv::run(&p, kernel);
                let (a64, b64): (Vec<f64>, Vec<f64>) =
                    (a.iter().map(|&x| x as f64).collect(), b.iter().map(|&x| x as f64).collect());
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
                assert_eq!(got.len(), want.len());
                for (i, (g, w)) in got.iter().zip(&want).enumerate() {
                    let tol = 1e-5 * (k as f64).sqrt() * (1.0 + w.abs());
                    assert!((*g as f64 - w).abs() <= tol, "{name} ({batches},{m},{k},{n})[{i}]: {g} vs {w}");
                }
            }
        }
    }
}
