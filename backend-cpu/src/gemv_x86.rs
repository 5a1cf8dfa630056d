//! The x86 block kernels of the skinny product path ([`crate::gemv`]), written once as a macro and
//! instantiated per element type and instruction set ([`crate::gemv_f32`], [`crate::gemv_half`]).
//!
//! A single row of A (decode) runs each output as one sequential pass over its B column with four
//! accumulators: B is then read front to back, the access pattern the hardware prefetchers stream
//! fastest (interleaving several columns measured ~35% slower), and [`crate::gemv::prefetch_column`]
//! asks for the column 12 KiB ahead, which the hardware alone kept too few lines of in flight. Several rows run as register tiles of
//! up to 4 rows × 4 columns (2 × 4 on AVX2), so each loaded stretch of B serves every row. Narrow
//! elements are widened to f32 in registers as they are loaded, so B is read from memory once, at its
//! own width.

/// One instruction set's block kernels (see [`crate::gemv::Block`]) for elements of type `$t`, in a
/// module `$name` whose functions enable `$feat`: `$load` reads `$lanes` elements at a pointer as an
/// f32 vector (widening narrow types in registers), `$scalar` widens one element (for the tail), and
/// register tiles have up to `$maxr` rows. The module's `block::<O>` stores each f32 sum as `O`.
macro_rules! x86_kernels {
    ($name:ident, $feat:literal, $t:ty, $lanes:literal, $maxr:literal, $zero:ident, $load:path,
     $scalar:path, $fma:ident, $add:ident, $reduce:path) => {
        #[cfg(target_arch = "x86_64")]
        mod $name {
            use std::arch::x86_64::*;

            use crate::gemv::FromF32;

            /// `out[r * ldo + c] = Σ_p a[r * ars + p] · b[c * bcs + p]` for an `R × C` tile, `U`
            /// vectors per step along k for each output.
            #[target_feature(enable = $feat)]
            #[inline]
            unsafe fn tile<const R: usize, const C: usize, const U: usize, O: FromF32>(
                a: *const $t,
                ars: usize,
                b: *const $t,
                bcs: usize,
                k: usize,
                out: *mut O,
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
                                s += $scalar(*a.add(r * ars + q)) * $scalar(*b.add(c * bcs + q));
                            }
                            *out.add(r * ldo + c) = O::from_f32(s);
                        }
                    }
                }
            }

            /// Rows `0..R` of A against columns `0..n` of B, one column at a time.
            #[target_feature(enable = $feat)]
            #[inline]
            #[allow(clippy::too_many_arguments)]
            unsafe fn columns<const R: usize, O: FromF32>(
                a: *const $t,
                ars: usize,
                b: *const $t,
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
            #[target_feature(enable = $feat)]
            #[allow(clippy::too_many_arguments)]
            pub(super) unsafe fn block<O: FromF32>(
                a: *const $t,
                ars: usize,
                m: usize,
                b: *const $t,
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
                        let ahead = crate::gemv::prefetch_columns_ahead::<$t>(bcs);
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
                            let rows = (m - r).min($maxr);
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
    };
}

pub(crate) use x86_kernels;

/// The sum of a vector's 8 lanes.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
#[inline]
pub(crate) fn hsum256(v: std::arch::x86_64::__m256) -> f32 {
    use std::arch::x86_64::*;
    let s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    let s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    _mm_cvtss_f32(_mm_add_ss(s, _mm_shuffle_ps(s, s, 1)))
}
