//! AVX2 + FMA kernels of the f32 softmax row passes ([`super::softmax_row`] has the AVX-512 ones and
//! the driver): the same three passes on 8 lanes. Tails use `vmaskmovps` loads and stores, so rows of
//! any length take the same path.

#![cfg(target_arch = "x86_64")]

use std::arch::x86_64::*;

/// Mask of the first `rem` lanes (`rem < 8`), as `vmaskmovps` reads one: the sign bit of each lane.
#[inline(always)]
fn tail_mask(rem: usize) -> __m256i {
    const LANES: [i32; 16] = [-1, -1, -1, -1, -1, -1, -1, -1, 0, 0, 0, 0, 0, 0, 0, 0];
    // SAFETY: `8 - rem` is in `1..=8`, so the 8 lanes read lie inside `LANES`.
    unsafe { _mm256_loadu_si256(LANES.as_ptr().add(8 - rem) as *const __m256i) }
}

/// `e^x` on 8 lanes: [`crate::math::fast::exp_f32`]'s reduction and polynomial (with fused
/// multiply-adds), `2^n` applied in two steps so that subnormal results round once. NaN propagates.
#[target_feature(enable = "avx2,fma")]
#[inline]
pub(super) unsafe fn exp256(x: __m256) -> __m256 {
    // `max`/`min` return their second operand when either is NaN, so NaN passes the clamp.
    let x = _mm256_min_ps(_mm256_set1_ps(89.0), _mm256_max_ps(_mm256_set1_ps(-104.0), x));
    let n = _mm256_round_ps::<{ _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC }>(_mm256_mul_ps(
        x,
        _mm256_set1_ps(std::f32::consts::LOG2_E),
    ));
    let r = _mm256_fnmadd_ps(n, _mm256_set1_ps(0.693_145_75), x);
    let r = _mm256_fnmadd_ps(n, _mm256_set1_ps(1.428_606_8e-6), r);
    let c = |v: f32| _mm256_set1_ps(v);
    let mut p = _mm256_fmadd_ps(c(1.0 / 5040.0), r, c(1.0 / 720.0));
    p = _mm256_fmadd_ps(p, r, c(1.0 / 120.0));
    p = _mm256_fmadd_ps(p, r, c(1.0 / 24.0));
    p = _mm256_fmadd_ps(p, r, c(1.0 / 6.0));
    p = _mm256_fmadd_ps(p, r, c(0.5));
    p = _mm256_fmadd_ps(p, r, c(1.0));
    p = _mm256_fmadd_ps(p, r, c(1.0));
    // `n` is integral and within [-150, 129]; for NaN the integer is garbage but `p` is NaN.
    let ni = _mm256_cvtps_epi32(n);
    let h = _mm256_srai_epi32::<1>(ni);
    let bias = _mm256_set1_epi32(127);
    let s1 = _mm256_castsi256_ps(_mm256_slli_epi32::<23>(_mm256_add_epi32(h, bias)));
    let s2 = _mm256_castsi256_ps(_mm256_slli_epi32::<23>(_mm256_add_epi32(_mm256_sub_epi32(ni, h), bias)));
    _mm256_mul_ps(_mm256_mul_ps(p, s1), s2)
}

/// The largest lane of `v`.
#[target_feature(enable = "avx2,fma")]
#[inline]
unsafe fn reduce_max(v: __m256) -> f32 {
    let m = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps::<1>(v));
    let m = _mm_max_ps(m, _mm_movehl_ps(m, m));
    _mm_cvtss_f32(_mm_max_ss(m, _mm_movehdup_ps(m)))
}

/// The sum of the lanes of `v`.
#[target_feature(enable = "avx2,fma")]
#[inline]
unsafe fn reduce_add(v: __m256) -> f32 {
    let s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps::<1>(v));
    let s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    _mm_cvtss_f32(_mm_add_ss(s, _mm_movehdup_ps(s)))
}

/// The maximum of `x[..n]`, ignoring NaN; -∞ for an empty or all-NaN row.
///
/// # Safety
/// AVX2 and FMA must be available, and `x[..n]` readable.
#[target_feature(enable = "avx2,fma")]
pub(super) unsafe fn row_max(x: *const f32, n: usize) -> f32 {
    let ninf = _mm256_set1_ps(f32::NEG_INFINITY);
    let mut m = [ninf; 4];
    let mut i = 0;
    // `max(v, m)` keeps `m` when `v` is NaN.
    while i + 32 <= n {
        for (k, mk) in m.iter_mut().enumerate() {
            *mk = _mm256_max_ps(_mm256_loadu_ps(x.add(i + 8 * k)), *mk);
        }
        i += 32;
    }
    while i + 8 <= n {
        m[0] = _mm256_max_ps(_mm256_loadu_ps(x.add(i)), m[0]);
        i += 8;
    }
    if i < n {
        let k = tail_mask(n - i);
        let v = _mm256_blendv_ps(ninf, _mm256_maskload_ps(x.add(i), k), _mm256_castsi256_ps(k));
        m[1] = _mm256_max_ps(v, m[1]);
    }
    reduce_max(_mm256_max_ps(_mm256_max_ps(m[0], m[1]), _mm256_max_ps(m[2], m[3])))
}

/// `Σ e^(x - max)` over `x[..n]`, also storing each exponential to `out` when given.
///
/// # Safety
/// AVX2 and FMA must be available, `x[..n]` readable and `out[..n]` writable.
#[target_feature(enable = "avx2,fma")]
pub(super) unsafe fn exp_sum(x: *const f32, out: Option<*mut f32>, n: usize, max: f32) -> f32 {
    let mv = _mm256_set1_ps(max);
    let mut s = [_mm256_setzero_ps(); 2];
    let mut i = 0;
    while i + 16 <= n {
        for (k, sk) in s.iter_mut().enumerate() {
            let e = exp256(_mm256_sub_ps(_mm256_loadu_ps(x.add(i + 8 * k)), mv));
            if let Some(o) = out {
                _mm256_storeu_ps(o.add(i + 8 * k), e);
            }
            *sk = _mm256_add_ps(*sk, e);
        }
        i += 16;
    }
    while i < n {
        let full = n - i >= 8;
        let k = if full { _mm256_set1_epi32(-1) } else { tail_mask(n - i) };
        let e = exp256(_mm256_sub_ps(_mm256_maskload_ps(x.add(i), k), mv));
        // Lanes past the row add 0.
        let e = _mm256_and_ps(e, _mm256_castsi256_ps(k));
        if let Some(o) = out {
            _mm256_maskstore_ps(o.add(i), k, e);
        }
        s[0] = _mm256_add_ps(s[0], e);
        i += 8;
    }
    reduce_add(_mm256_add_ps(s[0], s[1]))
}

/// `dst[i] = src[i] * a` (softmax) or `dst[i] = (src[i] - a) - b` (log-softmax, `LOG`) over `..n`;
/// `src` may be `dst`.
///
/// # Safety
/// AVX2 and FMA must be available, `src[..n]` readable and `dst[..n]` writable.
#[target_feature(enable = "avx2,fma")]
pub(super) unsafe fn finish<const LOG: bool>(src: *const f32, dst: *mut f32, n: usize, a: f32, b: f32) {
    let (av, bv) = (_mm256_set1_ps(a), _mm256_set1_ps(b));
    let f = |v: __m256| if LOG { _mm256_sub_ps(_mm256_sub_ps(v, av), bv) } else { _mm256_mul_ps(v, av) };
    let mut i = 0;
    while i + 8 <= n {
        _mm256_storeu_ps(dst.add(i), f(_mm256_loadu_ps(src.add(i))));
        i += 8;
    }
    if i < n {
        let k = tail_mask(n - i);
        _mm256_maskstore_ps(dst.add(i), k, f(_mm256_maskload_ps(src.add(i), k)));
    }
}
