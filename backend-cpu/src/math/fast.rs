//! Branch-free f32 kernels of `exp` and gelu's `erf` that the compiler can vectorise (the standard
//! library's calls into libm cannot be): used by the activation and softmax kernels.

/// `e^x` in f32 within about 1 ulp, NaN-propagating, overflowing to +∞ and underflowing through
/// the subnormals to 0. Cody–Waite reduction `x = n ln2 + r`, `|r| <= ln2/2`, then a degree-7
/// Taylor polynomial and a scale by `2^n` in two steps (so subnormal results round once).
#[inline(always)]
pub(crate) fn exp_f32(x: f32) -> f32 {
    const LOG2E: f32 = std::f32::consts::LOG2_E;
    const LN2_HI: f32 = 0.693_145_75;
    const LN2_LO: f32 = 1.428_606_8e-6;
    let xc = x.clamp(-104.0, 89.0);
    let n = (xc * LOG2E).round_ties_even();
    let r = (xc - n * LN2_HI) - n * LN2_LO;
    let p = 1.0
        + r * (1.0
            + r * (0.5
                + r * (1.0 / 6.0
                    + r * (1.0 / 24.0 + r * (1.0 / 120.0 + r * (1.0 / 720.0 + r * (1.0 / 5040.0)))))));
    // `n` is integral and within ±2^22 (x was clamped; NaN stays NaN and propagates through `p`), so
    // adding 1.5 * 2^23 puts it in the mantissa: a bit-level float-to-int that vectorises, unlike `as`.
    let ni = ((n + 12_582_912.0).to_bits() as i32) - 0x4B40_0000;
    let h = ni >> 1;
    let s1 = f32::from_bits(((h + 127) as u32) << 23);
    let s2 = f32::from_bits(((ni - h + 127) as u32) << 23);
    p * s1 * s2
}

/// `erf(x)` in f32 with absolute error below 5e-7 (Abramowitz–Stegun 7.1.26, the formula torch's
/// vectorised CPU erf uses): `sign(x) (1 - t P(t) e^(-x²))`, `t = 1 / (1 + p|x|)`.
#[inline(always)]
pub(crate) fn erf_f32(x: f32) -> f32 {
    let a = x.abs();
    let t = 1.0 / (1.0 + 0.327_591_1 * a);
    let poly = 0.254_829_6 + t * (-0.284_496_74 + t * (1.421_413_8 + t * (-1.453_152_1 + t * 1.061_405_4)));
    let y = 1.0 - t * poly * exp_f32(-(a * a));
    y.copysign(x)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exp_matches_std() {
        let mut x = -110.0f32;
        while x < 90.0 {
            let (got, want) = (exp_f32(x), x.exp());
            let tol = want.abs() * 4.0 * f32::EPSILON + 2.0 * f32::from_bits(1);
            assert!(got == want || (got - want).abs() <= tol, "exp({x}) = {got}, want {want}");
            x += 0.0137;
        }
        assert_eq!(exp_f32(f32::INFINITY), f32::INFINITY);
        assert_eq!(exp_f32(f32::NEG_INFINITY), 0.0);
        assert!(exp_f32(f32::NAN).is_nan());
        assert_eq!(exp_f32(0.0), 1.0);
    }

    #[test]
    fn erf_is_close() {
        let mut x = -6.0f32;
        while x < 6.0 {
            let want = crate::math::special::erf(x as f64);
            let err = (erf_f32(x) as f64 - want).abs();
            assert!(err <= 5e-7, "erf({x}): error {err}");
            x += 0.01;
        }
        assert_eq!(erf_f32(f32::INFINITY), 1.0);
        assert_eq!(erf_f32(f32::NEG_INFINITY), -1.0);
        assert!(erf_f32(f32::NAN).is_nan());
    }
}
