//! The gamma function family in f64: `lgamma`, `digamma`, `trigamma`, `polygamma` and the Hurwitz
//! zeta function behind it, with torch's values at poles and on the negative axis.
//!
//! `lgamma` is the C library's (the `libm` crate's port of FreeBSD's `e_lgamma_r.c`, as glibc's,
//! which torch calls). `digamma` and `trigamma` use the reflection formula below their asymptotic
//! range, the recurrence `ψ(x) = ψ(x + 1) - 1/x` up to it, and the Stirling-type series (Bernoulli
//! numbers) above it. `polygamma(n, x)` for `n ≥ 2` is `(-1)^(n+1) n! ζ(n + 1, x)` with the zeta
//! function summed by Euler–Maclaurin.

// The constants are written to full double precision, as published.
#![allow(clippy::excessive_precision)]

/// `ln |Γ(x)|`: +∞ at the poles (0 and the negative integers), NaN for NaN.
pub fn lgamma(x: f64) -> f64 {
    libm::lgamma_r(x).0
}

/// `ln |Γ(x)|` computed in f32 (torch's float kernel calls the C library's `lgammaf`).
pub fn lgammaf(x: f32) -> f32 {
    libm::lgammaf_r(x).0
}

/// `digamma` and `trigamma` for one float type, computed in that type as torch's kernels do
/// (f16/bf16 reach the f32 forms through their f32 accumulator).
macro_rules! psi_functions {
    ($t:ident, $digamma:ident, $trigamma:ident) => {
        /// The digamma function `ψ(x) = Γ'(x) / Γ(x)`: ∓∞ at ±0 (torch: `copysign(inf, -x)`),
        /// NaN at the negative integers.
        pub fn $digamma(x: $t) -> $t {
            // ψ(10), where the recurrence stops for integer and small arguments.
            const PSI_10: $t = 2.251_752_589_066_721_107_6;
            if x == 0.0 {
                return $t::INFINITY.copysign(-x);
            }
            if x < 0.0 {
                if x == x.trunc() {
                    return $t::NAN;
                }
                // ψ(x) = ψ(1 - x) - π / tan(π x), the fractional part keeping tan's argument small;
                // the reflection term in f64 whatever the type, as torch's float kernel does.
                let r = x.fract() as f64;
                let reflection = std::f64::consts::PI / (std::f64::consts::PI * r).tan();
                return $digamma(1.0 - x) - reflection as $t;
            }
            let mut x = x;
            let mut shift = 0.0;
            while x < 10.0 {
                shift -= 1.0 / x;
                x += 1.0;
            }
            if x == 10.0 {
                return shift + PSI_10;
            }
            // ψ(x) ~ ln x - 1/(2x) - Σ B_2k / (2k x^2k)
            const SERIES: [$t; 7] = [
                1.0 / 12.0,
                -1.0 / 120.0,
                1.0 / 252.0,
                -1.0 / 240.0,
                1.0 / 132.0,
                -691.0 / 32760.0,
                1.0 / 12.0,
            ];
            let tail = if x < 1e17 {
                let z = 1.0 / (x * x);
                z * SERIES.iter().rev().fold(0.0, |acc, c| acc * z + c)
            } else {
                0.0
            };
            shift + x.ln() - 0.5 / x - tail
        }

        /// The trigamma function `ψ'(x)`, through the reflection
        /// `ψ'(x) = π² / sin²(π x) - ψ'(1 - x)` below 1/2 (+∞ at 0, huge but finite at the
        /// negative integers, where `sin(π x)` rounds to a tiny number, as torch's).
        pub fn $trigamma(x: $t) -> $t {
            use std::$t::consts::PI;
            let (mut x, mut sign, mut result): ($t, $t, $t) = (x, 1.0, 0.0);
            if x < 0.5 {
                sign = -1.0;
                let s = (PI * x).sin();
                result -= PI * PI / (s * s);
                x = 1.0 - x;
            }
            for _ in 0..6 {
                result += 1.0 / (x * x);
                x += 1.0;
            }
            // ψ'(x) ~ 1/x + 1/(2x²) + Σ B_2k / x^(2k+1)
            let z = 1.0 / (x * x);
            result += (1.0 + 1.0 / (2.0 * x) + z * (1.0 / 6.0 - z * (1.0 / 30.0 - z * (1.0 / 42.0)))) / x;
            sign * result
        }
    };
}

psi_functions!(f64, digamma, trigamma);
psi_functions!(f32, digammaf, trigammaf);

/// `ψ⁽ⁿ⁾(x)` for f32: digamma and trigamma in f32 (as torch), higher orders in f64.
pub fn polygammaf(n: u32, x: f32) -> f32 {
    match n {
        0 => digammaf(x),
        1 => trigammaf(x),
        _ => polygamma(n, x as f64) as f32,
    }
}

/// The polygamma function `ψ⁽ⁿ⁾(x)`, the n-th derivative of digamma.
pub fn polygamma(n: u32, x: f64) -> f64 {
    match n {
        0 => digamma(x),
        1 => trigamma(x),
        _ => {
            let n = n as f64;
            let sign = if n % 2.0 == 1.0 { 1.0 } else { -1.0 };
            sign * lgamma(n + 1.0).exp() * zeta(n + 1.0, x)
        }
    }
}

/// `(2k)! / B_2k` for k = 1..=12: the Euler–Maclaurin correction terms' denominators.
const EULER_MACLAURIN: [f64; 12] = [
    12.0,
    -720.0,
    30240.0,
    -1209600.0,
    47900160.0,
    -1.892_437_580_318_379_2e9,
    7.472_424_96e10,
    -2.950_130_727_918_164_2e12,
    1.164_678_281_435_006_7e14,
    -4.597_978_722_407_472_6e15,
    1.815_210_540_194_354_7e17,
    -7.166_165_256_175_667e18,
];

/// The Hurwitz zeta function `ζ(s, q) = Σ_k (q + k)^-s` for `s > 1`: +∞ at `s = 1` and at the
/// poles `q = 0, -1, -2, ...`; NaN for `s < 1` and for a negative `q` with a fractional `s`.
pub fn zeta(s: f64, q: f64) -> f64 {
    if s == 1.0 {
        return f64::INFINITY;
    }
    if s < 1.0 || s.is_nan() || q.is_nan() {
        return f64::NAN;
    }
    if q <= 0.0 {
        if q == q.floor() {
            return f64::INFINITY;
        }
        if s != s.floor() {
            return f64::NAN;
        }
    }
    // Sum the first terms directly until `a = q + i` is past 9 (and at least 9 terms).
    let mut sum = q.powf(-s);
    let (mut a, mut i) = (q, 0);
    let mut b = 0.0;
    while i < 9 || a <= 9.0 {
        i += 1;
        a += 1.0;
        b = a.powf(-s);
        sum += b;
        if (b / sum).abs() < f64::EPSILON / 2.0 {
            return sum;
        }
    }
    // The integral of the tail, half its first term, then the Bernoulli corrections.
    let w = a;
    sum += b * w / (s - 1.0);
    sum -= 0.5 * b;
    let mut rising = 1.0;
    let mut k = 0.0;
    for d in EULER_MACLAURIN {
        rising *= s + k;
        b /= w;
        let t = rising * b / d;
        sum += t;
        if (t / sum).abs() < f64::EPSILON / 2.0 {
            break;
        }
        k += 1.0;
        rising *= s + k;
        b /= w;
        k += 1.0;
    }
    sum
}

#[cfg(test)]
mod tests {
    use std::f64::consts::PI;

    use super::*;

    fn close(a: f64, b: f64, rel: f64) -> bool {
        (a - b).abs() <= rel * b.abs().max(1e-300)
    }

    #[test]
    fn digamma_known_values() {
        // ψ(1) = -γ, ψ(1/2) = -γ - 2 ln 2, ψ(10) by the recurrence's constant.
        let gamma = 0.577_215_664_901_532_9;
        assert!(close(digamma(1.0), -gamma, 1e-15), "{}", digamma(1.0));
        assert!(close(digamma(0.5), -gamma - 2.0 * 2f64.ln(), 1e-15));
        assert!(close(digamma(10.5), digamma(9.5) + 1.0 / 9.5, 1e-15));
        assert_eq!(digamma(0.0), f64::NEG_INFINITY);
        assert_eq!(digamma(-0.0), f64::INFINITY);
        assert!(digamma(-3.0).is_nan());
        // Reflection: ψ(-0.5) = ψ(1.5) + π / tan(π · -0.5)... = 0.03648997397857652
        assert!(close(digamma(-0.5), 0.036_489_973_978_576_52, 1e-14), "{}", digamma(-0.5));
    }

    #[test]
    fn trigamma_and_zeta_known_values() {
        // ψ'(1) = π²/6 = ζ(2), ψ'(1/2) = π²/2: torch's short series is good to about 5e-10, and
        // these are torch 2.15's float64 values.
        assert!(close(trigamma(1.0), PI * PI / 6.0, 1e-9));
        assert!(close(trigamma(0.5), PI * PI / 2.0, 1e-9));
        assert!(close(trigamma(1.0), 1.6449340676383375, 1e-15));
        assert!(close(trigamma(0.5), 4.934802202073678, 1e-15));
        // ζ(3) (Apéry's constant) and ψ''(1) = -2 ζ(3).
        let apery = 1.202_056_903_159_594_3;
        assert!(close(zeta(3.0, 1.0), apery, 1e-15));
        assert!(close(polygamma(2, 1.0), -2.0 * apery, 1e-15));
        // ψ'''(1) = 6 ζ(4) = π⁴/15.
        assert!(close(polygamma(3, 1.0), PI.powi(4) / 15.0, 1e-14));
        assert_eq!(zeta(2.0, 0.0), f64::INFINITY);
        assert_eq!(zeta(2.0, -2.0), f64::INFINITY);
        assert!(zeta(0.5, 1.0).is_nan());
    }

    #[test]
    fn lgamma_values() {
        assert_eq!(lgamma(1.0), 0.0);
        assert_eq!(lgamma(2.0), 0.0);
        assert!(close(lgamma(0.5), PI.sqrt().ln(), 1e-15));
        assert_eq!(lgamma(0.0), f64::INFINITY);
        assert_eq!(lgamma(-2.0), f64::INFINITY);
    }
}
