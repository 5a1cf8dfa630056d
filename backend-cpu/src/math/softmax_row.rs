//! f32 softmax and log-softmax over one contiguous row (the last-dim case), in AVX-512 kernels
//! (here) or AVX2 + FMA ones ([`super::softmax_row_avx2`]), picked at runtime.
//!
//! A row of a few thousand f32 fits in L1, so the row is read from memory once: pass 1 finds the
//! maximum; pass 2 writes `e^(x - max)` into the output and sums it; pass 3 scales the output in place
//! by `1 / sum` (torch multiplies by the reciprocal too). Log-softmax sums in pass 2 without storing
//! and writes `(x - max) - ln(sum)` in pass 3. Tails shorter than a vector use masked loads and
//! stores, so rows of any length take the same path. NaN handling follows the scalar kernel: the
//! maximum ignores NaN, whose exponential then makes the whole row NaN, as in torch. (Non-temporal
//! stores for large outputs were tried and measured slower: 1.7-2.8 ms against 1.4-1.6 ms of CPU time
//! for a 4096 x 1024 softmax on one Zen 5 thread.)

#[cfg(target_arch = "x86_64")]
use std::arch::x86_64::*;
use std::mem::MaybeUninit;

#[cfg(target_arch = "x86_64")]
use super::softmax_row_avx2 as avx2;
use crate::simd::{level, Level};

/// One instruction set's three row passes (see the module doc).
#[derive(Clone, Copy)]
pub(crate) struct RowKernels {
    /// pass 1: the maximum of `x[..n]`, ignoring NaN
    max: unsafe fn(x: *const f32, n: usize) -> f32,
    /// pass 2: `Σ e^(x - max)`, storing the exponentials when given an output
    exp_sum: unsafe fn(x: *const f32, out: Option<*mut f32>, n: usize, max: f32) -> f32,
    /// pass 3 of softmax: `dst = src * a`
    scale: unsafe fn(src: *const f32, dst: *mut f32, n: usize, a: f32, b: f32),
    /// pass 3 of log-softmax: `dst = (src - a) - b`
    shift: unsafe fn(src: *const f32, dst: *mut f32, n: usize, a: f32, b: f32),
}

/// The AVX-512 passes.
#[cfg(target_arch = "x86_64")]
const AVX512: RowKernels =
    RowKernels { max: row_max, exp_sum, scale: finish::<false>, shift: finish::<true> };

/// The AVX2 + FMA passes.
#[cfg(target_arch = "x86_64")]
const AVX2: RowKernels = RowKernels {
    max: avx2::row_max,
    exp_sum: avx2::exp_sum,
    scale: avx2::finish::<false>,
    shift: avx2::finish::<true>,
};

/// The best row kernels this CPU runs, if any.
fn kernels() -> Option<RowKernels> {
    match level() {
        #[cfg(target_arch = "x86_64")]
        Level::Avx512 => Some(AVX512),
        #[cfg(target_arch = "x86_64")]
        Level::Avx2 => Some(AVX2),
        _ => None,
    }
}

/// True when this CPU runs the row kernels (AVX2 or AVX-512).
pub(crate) fn available() -> bool {
    kernels().is_some()
}

/// Softmax (or log-softmax when `log`) of each `row`-long row of `x` into `out` (same length, a
/// multiple of `row`). Callers check [`available`].
pub(crate) fn softmax_rows(x: &[f32], out: &mut [MaybeUninit<f32>], row: usize, log: bool) {
    rows_with(kernels().expect("softmax_rows needs AVX2 or AVX-512"), x, out, row, log)
}

/// [`softmax_rows`] with the kernels `k` (which this CPU must run).
fn rows_with(k: RowKernels, x: &[f32], out: &mut [MaybeUninit<f32>], row: usize, log: bool) {
    assert_eq!(x.len(), out.len(), "softmax_rows: length mismatch");
    if row == 0 || x.is_empty() {
        return;
    }
    assert!(x.len().is_multiple_of(row), "softmax_rows: not a whole number of rows");
    // SAFETY: the caller checked that this CPU runs `k`. Each pass reads `row` elements of `x` and
    // writes `row` elements of `out` at the row's offset (masked lanes past full vectors).
    unsafe {
        for (xr, or) in x.chunks_exact(row).zip(out.chunks_exact_mut(row)) {
            let (xp, op) = (xr.as_ptr(), or.as_mut_ptr() as *mut f32);
            let max = (k.max)(xp, row);
            if log {
                let sum = (k.exp_sum)(xp, None, row, max);
                (k.shift)(xp, op, row, max, sum.ln());
            } else {
                let sum = (k.exp_sum)(xp, Some(op), row, max);
                (k.scale)(op, op, row, 1.0 / sum, 0.0);
            }
        }
    }
}

/// `(max, ln Σ e^(x - max))` of one row, the two numbers from which [`softmax_rows`]' log-softmax
/// computes each output as `(x - max) - ln_sum`, bit for bit. Callers check [`available`].
pub(crate) fn log_stats(x: &[f32]) -> (f32, f32) {
    let k = kernels().expect("log_stats needs AVX2 or AVX-512");
    // SAFETY: this CPU runs `k`; both passes read exactly `x.len()` elements of `x`.
    unsafe {
        let max = (k.max)(x.as_ptr(), x.len());
        (max, (k.exp_sum)(x.as_ptr(), None, x.len(), max).ln())
    }
}

/// Softmax of one row in place, as `scaled_dot_product_attention`'s composition computes it: a row
/// whose every value is `-inf` (every position masked) becomes zeros, one holding NaN becomes NaN.
/// Runs on every CPU (a scalar loop where the row kernels are not available).
pub(crate) fn safe_softmax_in_place(x: &mut [f32]) {
    let n = x.len();
    let max = match kernels() {
        // SAFETY: this CPU runs `k`; the pass reads `n` elements of `x`.
        Some(k) => unsafe { (k.max)(x.as_ptr(), n) },
        None => x.iter().fold(f32::NEG_INFINITY, |m, &v| if v > m { v } else { m }),
    };
    if max == f32::NEG_INFINITY {
        // No value above -inf: all masked (zeros), unless NaN (which the maximum skips) is there.
        let fill = if x.iter().any(|v| v.is_nan()) { f32::NAN } else { 0.0 };
        x.fill(fill);
        return;
    }
    match kernels() {
        // SAFETY: this CPU runs `k`; each pass reads and writes the `n` elements of `x` (in place,
        // element by element).
        Some(k) => unsafe {
            let p = x.as_mut_ptr();
            let sum = (k.exp_sum)(p, Some(p), n, max);
            (k.scale)(p, p, n, 1.0 / sum, 0.0);
        },
        None => {
            let mut sum = 0.0;
            for v in x.iter_mut() {
                *v = (*v - max).exp();
                sum += *v;
            }
            let inv = 1.0 / sum;
            x.iter_mut().for_each(|v| *v *= inv);
        }
    }
}

/// Mask of the first `rem` lanes (`rem < 16`).
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn tail_mask(rem: usize) -> __mmask16 {
    ((1u32 << rem) - 1) as __mmask16
}

/// `e^x` on 16 lanes: the same Cody–Waite reduction and degree-7 polynomial as
/// [`crate::math::fast::exp_f32`], with `vscalefps` applying `2^n` in one correctly rounded step
/// (through the subnormals to 0, and to +∞ on overflow). NaN propagates.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
#[inline]
unsafe fn exp512(x: __m512) -> __m512 {
    // `max`/`min` return their second operand when either is NaN, so NaN passes the clamp.
    let x = _mm512_min_ps(_mm512_set1_ps(89.0), _mm512_max_ps(_mm512_set1_ps(-104.0), x));
    let n = _mm512_roundscale_ps::<{ _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC }>(_mm512_mul_ps(
        x,
        _mm512_set1_ps(std::f32::consts::LOG2_E),
    ));
    let r = _mm512_fnmadd_ps(n, _mm512_set1_ps(0.693_145_75), x);
    let r = _mm512_fnmadd_ps(n, _mm512_set1_ps(1.428_606_8e-6), r);
    let c = |v: f32| _mm512_set1_ps(v);
    let mut p = _mm512_fmadd_ps(c(1.0 / 5040.0), r, c(1.0 / 720.0));
    p = _mm512_fmadd_ps(p, r, c(1.0 / 120.0));
    p = _mm512_fmadd_ps(p, r, c(1.0 / 24.0));
    p = _mm512_fmadd_ps(p, r, c(1.0 / 6.0));
    p = _mm512_fmadd_ps(p, r, c(0.5));
    p = _mm512_fmadd_ps(p, r, c(1.0));
    p = _mm512_fmadd_ps(p, r, c(1.0));
    _mm512_scalef_ps(p, n)
}

/// The maximum of `x[..n]`, ignoring NaN; -∞ for an empty or all-NaN row.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn row_max(x: *const f32, n: usize) -> f32 {
    let ninf = _mm512_set1_ps(f32::NEG_INFINITY);
    let mut m = [ninf; 4];
    let mut i = 0;
    // `max(v, m)` keeps `m` when `v` is NaN.
    while i + 64 <= n {
        for (k, mk) in m.iter_mut().enumerate() {
            *mk = _mm512_max_ps(_mm512_loadu_ps(x.add(i + 16 * k)), *mk);
        }
        i += 64;
    }
    while i + 16 <= n {
        m[0] = _mm512_max_ps(_mm512_loadu_ps(x.add(i)), m[0]);
        i += 16;
    }
    if i < n {
        m[1] = _mm512_max_ps(_mm512_mask_loadu_ps(ninf, tail_mask(n - i), x.add(i)), m[1]);
    }
    let m = _mm512_max_ps(_mm512_max_ps(m[0], m[1]), _mm512_max_ps(m[2], m[3]));
    _mm512_reduce_max_ps(m)
}

/// `Σ e^(x - max)` over `x[..n]`, also storing each exponential to `out` when given.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn exp_sum(x: *const f32, out: Option<*mut f32>, n: usize, max: f32) -> f32 {
    let mv = _mm512_set1_ps(max);
    let mut s = [_mm512_setzero_ps(); 2];
    let mut i = 0;
    while i + 32 <= n {
        for (k, sk) in s.iter_mut().enumerate() {
            let e = exp512(_mm512_sub_ps(_mm512_loadu_ps(x.add(i + 16 * k)), mv));
            if let Some(o) = out {
                _mm512_storeu_ps(o.add(i + 16 * k), e);
            }
            *sk = _mm512_add_ps(*sk, e);
        }
        i += 32;
    }
    while i < n {
        let k = if n - i >= 16 { 0xFFFF } else { tail_mask(n - i) };
        let e = exp512(_mm512_sub_ps(_mm512_maskz_loadu_ps(k, x.add(i)), mv));
        if let Some(o) = out {
            _mm512_mask_storeu_ps(o.add(i), k, e);
        }
        s[0] = _mm512_mask_add_ps(s[0], k, s[0], e);
        i += 16;
    }
    _mm512_reduce_add_ps(_mm512_add_ps(s[0], s[1]))
}

/// `dst[i] = src[i] * a` (softmax) or `dst[i] = (src[i] - a) - b` (log-softmax, `LOG`) over `..n`;
/// `src` may be `dst`.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn finish<const LOG: bool>(src: *const f32, dst: *mut f32, n: usize, a: f32, b: f32) {
    let (av, bv) = (_mm512_set1_ps(a), _mm512_set1_ps(b));
    let f = |v: __m512| if LOG { _mm512_sub_ps(_mm512_sub_ps(v, av), bv) } else { _mm512_mul_ps(v, av) };
    let mut i = 0;
    while i + 16 <= n {
        _mm512_storeu_ps(dst.add(i), f(_mm512_loadu_ps(src.add(i))));
        i += 16;
    }
    if i < n {
        let k = tail_mask(n - i);
        _mm512_mask_storeu_ps(dst.add(i), k, f(_mm512_maskz_loadu_ps(k, src.add(i))));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The scalar definition: `e^(x - max) / Σ` (or its log), max ignoring NaN, with `x - max` rounded
    /// to f32 as in the kernel (and torch) and the rest in f64.
    fn reference(x: &[f32], log: bool) -> Vec<f64> {
        let max = x.iter().fold(f32::NEG_INFINITY, |m, &v| if v > m { v } else { m });
        let d: Vec<f64> = x.iter().map(|&v| (v - max) as f64).collect();
        let sum: f64 = d.iter().map(|v| v.exp()).sum();
        d.iter().map(|&v| if log { v - sum.ln() } else { v.exp() / sum }).collect()
    }

    /// Every kernel set this CPU runs, named.
    fn every() -> Vec<(&'static str, RowKernels)> {
        let mut all = Vec::new();
        #[cfg(target_arch = "x86_64")]
        {
            if matches!(level(), Level::Avx2 | Level::Avx512) {
                all.push(("avx2", AVX2));
            }
            if level() == Level::Avx512 {
                all.push(("avx512", AVX512));
            }
        }
        all
    }

    fn run(k: RowKernels, x: &[f32], log: bool) -> Vec<f32> {
        let mut out = vec![MaybeUninit::new(f32::from_bits(0x7fc0_dead)); x.len()];
        rows_with(k, x, &mut out, x.len(), log);
        // SAFETY: every element was initialised above (and overwritten by `softmax_rows`).
        out.iter().map(|v| unsafe { v.assume_init() }).collect()
    }

    fn close(got: f32, want: f64) -> bool {
        (got.is_nan() && want.is_nan())
            || got as f64 == want
            || (got as f64 - want).abs() <= 4.0 * f32::EPSILON as f64 * want.abs().max(1e-30)
    }

    #[test]
    fn matches_reference_for_all_tail_lengths() {
        for (name, k) in every() {
            for_all_tail_lengths(name, k);
        }
    }

    fn for_all_tail_lengths(name: &str, k: RowKernels) {
        for n in (0..70).chain([127, 128, 129, 1000, 1024, 1031]) {
            let x: Vec<f32> = (0..n).map(|i| ((i * 7919 % 113) as f32 - 56.0) * 0.37).collect();
            for log in [false, true] {
                let (got, want) = (run(k, &x, log), reference(&x, log));
                for (i, (&g, &w)) in got.iter().zip(&want).enumerate() {
                    // Log-softmax subtracts `ln(sum)`, rounded in f32: allow for cancellation.
                    let ok = if log {
                        (g as f64 - w).abs() <= 8.0 * f32::EPSILON as f64 * w.abs().max(1.0)
                    } else {
                        close(g, w)
                    };
                    assert!(ok, "{name}: n={n} log={log} [{i}]: {g} vs {w}");
                }
            }
        }
    }

    #[test]
    fn several_rows_of_odd_length() {
        for (name, k) in every() {
            rows_of_odd_length(name, k);
        }
    }

    fn rows_of_odd_length(name: &str, k: RowKernels) {
        let (rows, row) = (5, 37);
        let x: Vec<f32> = (0..rows * row).map(|i| ((i * 31 % 17) as f32) * 0.5 - (i / row) as f32).collect();
        for log in [false, true] {
            let mut out = vec![MaybeUninit::new(0.0f32); x.len()];
            rows_with(k, &x, &mut out, row, log);
            for r in 0..rows {
                let want = reference(&x[r * row..(r + 1) * row], log);
                for (j, w) in want.iter().enumerate() {
                    // SAFETY: initialised above.
                    let g = unsafe { out[r * row + j].assume_init() };
                    assert!(
                        (g as f64 - w).abs() <= 1e-6 * w.abs().max(1.0),
                        "{name}: row {r}[{j}]: {g} vs {w}"
                    );
                }
            }
        }
    }

    #[test]
    fn special_values() {
        for (_, k) in every() {
            special_values_with(k);
        }
        assert_eq!(available(), !every().is_empty());
    }

    fn special_values_with(k: RowKernels) {
        let run = |x: &[f32], log: bool| run(k, x, log);
        let nan = f32::NAN;
        let inf = f32::INFINITY;
        for n in [5usize, 16, 37] {
            // A NaN anywhere makes the whole row NaN.
            let mut x = vec![1.0f32; n];
            x[n - 1] = nan;
            assert!(run(&x, false).iter().all(|v| v.is_nan()));
            assert!(run(&x, true).iter().all(|v| v.is_nan()));
            // +∞ gives NaN (∞ - ∞), as in torch.
            let mut x = vec![1.0f32; n];
            x[n / 2] = inf;
            assert!(run(&x, false).iter().all(|v| v.is_nan()));
            // -∞ entries get probability 0 (log: -∞); an all -∞ row is NaN.
            let mut x = vec![0.0f32; n];
            x[0] = -inf;
            let p = run(&x, false);
            assert_eq!(p[0], 0.0);
            assert!(close(p[1], 1.0 / (n - 1) as f64));
            assert_eq!(run(&x, true)[0], f32::NEG_INFINITY);
            assert!(run(&vec![-inf; n], false).iter().all(|v| v.is_nan()));
            // Huge spreads underflow to 0 without NaN; one dominant element gets 1.
            let mut x = vec![-1e30f32; n];
            x[3] = 50.0;
            let p = run(&x, false);
            assert_eq!(p[3], 1.0);
            assert!(p.iter().enumerate().all(|(i, &v)| i == 3 || v == 0.0));
        }
        assert!(run(&[], false).is_empty());
    }

    /// `exp` of 16 lanes through the AVX-512 kernel, or two halves through the AVX2 one.
    fn exp16(avx512: bool, v: &[f32]) -> [f32; 16] {
        let mut got = [0.0f32; 16];
        // SAFETY: the caller checked that this CPU runs the kernel; `v` and `got` hold 16 f32.
        unsafe {
            if avx512 {
                _mm512_storeu_ps(got.as_mut_ptr(), exp512(_mm512_loadu_ps(v.as_ptr())));
            } else {
                for h in [0, 8] {
                    let e = avx2::exp256(_mm256_loadu_ps(v.as_ptr().add(h)));
                    _mm256_storeu_ps(got.as_mut_ptr().add(h), e);
                }
            }
        }
        got
    }

    #[test]
    fn exp_matches_scalar_kernel() {
        for (name, _) in every() {
            let avx512 = name == "avx512";
            let xs: Vec<f32> =
                (0..4096).map(|i| -110.0 + i as f32 * 0.048).chain([0.0, -0.0, 1e-8]).collect();
            for ch in xs.chunks(16).filter(|c| c.len() == 16) {
                let got = exp16(avx512, ch);
                for (&x, &g) in ch.iter().zip(&got) {
                    let want = (x as f64).exp();
                    let tol = want * 2.0 * f32::EPSILON as f64 + f32::from_bits(1) as f64;
                    assert!((g as f64 - want).abs() <= tol, "{name}: exp({x}) = {g}, want {want}");
                }
            }
            let special = [f32::NAN, f32::INFINITY, f32::NEG_INFINITY, 100.0, -200.0, 0.0, -87.5, -100.0];
            let mut v = [0.0f32; 16];
            v[..8].copy_from_slice(&special);
            v[8..].copy_from_slice(&special);
            let got = exp16(avx512, &v);
            for half in [&got[..8], &got[8..]] {
                assert!(half[0].is_nan(), "{name}");
                assert_eq!(&half[1..6], &[f32::INFINITY, 0.0, f32::INFINITY, 0.0, 1.0], "{name}");
                assert!((half[6] as f64 - (-87.5f64).exp()).abs() <= f32::from_bits(1) as f64);
                assert!((half[7] as f64 - (-100f64).exp()).abs() <= f32::from_bits(1) as f64);
            }
        }
    }
}
