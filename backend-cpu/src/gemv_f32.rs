//! f32 block kernels of the skinny product path ([`crate::gemv`]): AVX-512 and AVX2 + FMA (the
//! kernels of [`crate::gemv_x86`]), picked at runtime, and a plain loop elsewhere.

use crate::gemv::{self, Block, Skinny};
use crate::simd::{level, Level};

/// `p.a · p.b` for every batch, row-major `[batches, m, n]`.
pub fn matmul(p: &Skinny<f32>) -> Vec<f32> {
    gemv::run(p, block())
}

/// [`matmul`] into `out` (exactly the result's length, written entirely).
pub fn matmul_into(p: &Skinny<f32>, out: &mut [std::mem::MaybeUninit<f32>]) {
    gemv::run_into(p, block(), out)
}

/// The block kernel for this processor.
pub(crate) fn block() -> Block<f32, f32> {
    match level() {
        #[cfg(target_arch = "x86_64")]
        Level::Avx512 => avx512::block::<f32>,
        #[cfg(target_arch = "x86_64")]
        Level::Avx2 => avx2::block::<f32>,
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

crate::gemv_x86::x86_kernels!(
    avx512,
    "avx512f",
    f32,
    16,
    4,
    _mm512_setzero_ps,
    _mm512_loadu_ps,
    f32::from,
    _mm512_fmadd_ps,
    _mm512_add_ps,
    _mm512_reduce_add_ps
);

crate::gemv_x86::x86_kernels!(
    avx2,
    "avx2,fma",
    f32,
    8,
    2,
    _mm256_setzero_ps,
    _mm256_loadu_ps,
    f32::from,
    _mm256_fmadd_ps,
    _mm256_add_ps,
    crate::gemv_x86::hsum256
);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gemv::test_values as values;

    /// Every kernel this processor runs against an f64 reference, on odd sizes, offsets and strides.
    #[test]
    fn kernels_match_reference() {
        let mut kernels: Vec<(&str, Block<f32, f32>)> = vec![("plain", plain_block)];
        #[cfg(target_arch = "x86_64")]
        {
            if matches!(level(), Level::Avx2 | Level::Avx512) {
                kernels.push(("avx2", avx2::block::<f32>));
            }
            if level() == Level::Avx512 {
                kernels.push(("avx512", avx512::block::<f32>));
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
