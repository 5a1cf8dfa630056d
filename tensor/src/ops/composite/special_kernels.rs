//! Scalar kernels of `torch.special`, translated from torch's CPU kernels (ATen/native/Math.h:
//! Cephes, Boost's incomplete gamma, the Faddeeva package's erfcx) operation by operation and
//! generic over f32/f64, so that each dtype is computed in its own precision as torch does (zeta
//! computes float in double, as torch's `acc_type`). Evaluated on the host by `special_ops.rs`.

// The literals are Math.h's, digit for digit (some of them spell out π/4, 2/π or e).
#![allow(clippy::excessive_precision, clippy::approx_constant)]

use std::ops::{Add, AddAssign, Div, DivAssign, Mul, MulAssign, Neg, Sub, SubAssign};

use super::special_tables::*;

/// The float operations the kernels use (the C library's functions, as torch calls them).
pub(super) trait Real:
    Copy
    + PartialOrd
    + Add<Output = Self>
    + Sub<Output = Self>
    + Mul<Output = Self>
    + Div<Output = Self>
    + Neg<Output = Self>
    + AddAssign
    + SubAssign
    + MulAssign
    + DivAssign
{
    const IS_F64: bool;
    const EPSILON: Self;
    fn c(v: f64) -> Self;
    fn f64(self) -> f64;
    fn from_i64(v: i64) -> Self;
    fn exp(self) -> Self;
    fn ln(self) -> Self;
    fn ln_1p(self) -> Self;
    fn exp_m1(self) -> Self;
    fn sqrt(self) -> Self;
    fn sin(self) -> Self;
    fn cos(self) -> Self;
    fn acos(self) -> Self;
    fn abs(self) -> Self;
    fn powf(self, e: Self) -> Self;
    fn powi(self, e: i32) -> Self;
    /// `self * a + b` rounded once: torch's build contracts the polynomials' three-term
    /// recurrences `a * q - b * p` into `fma(a, q, -(b * p))`, whose last bits the f32 values show.
    fn mul_add(self, a: Self, b: Self) -> Self;
    fn is_nan(self) -> bool;
    fn is_infinite(self) -> bool;
    fn erfc(self) -> Self;
    fn lgamma(self) -> Self;
}

macro_rules! real {
    ($t:ident, $is64:expr, $erfc:path, $lgamma:path) => {
        impl Real for $t {
            const IS_F64: bool = $is64;
            const EPSILON: Self = $t::EPSILON;
            fn c(v: f64) -> Self {
                v as $t
            }
            fn f64(self) -> f64 {
                self as f64
            }
            fn from_i64(v: i64) -> Self {
                v as $t
            }
            fn exp(self) -> Self {
                $t::exp(self)
            }
            fn ln(self) -> Self {
                $t::ln(self)
            }
            fn ln_1p(self) -> Self {
                $t::ln_1p(self)
            }
            fn exp_m1(self) -> Self {
                $t::exp_m1(self)
            }
            fn sqrt(self) -> Self {
                $t::sqrt(self)
            }
            fn sin(self) -> Self {
                $t::sin(self)
            }
            fn cos(self) -> Self {
                $t::cos(self)
            }
            fn acos(self) -> Self {
                $t::acos(self)
            }
            fn abs(self) -> Self {
                $t::abs(self)
            }
            fn powf(self, e: Self) -> Self {
                $t::powf(self, e)
            }
            fn powi(self, e: i32) -> Self {
                $t::powi(self, e)
            }
            fn mul_add(self, a: Self, b: Self) -> Self {
                $t::mul_add(self, a, b)
            }
            fn is_nan(self) -> bool {
                $t::is_nan(self)
            }
            fn is_infinite(self) -> bool {
                $t::is_infinite(self)
            }
            fn erfc(self) -> Self {
                $erfc(self)
            }
            fn lgamma(self) -> Self {
                $lgamma(self).0
            }
        }
    };
}

real!(f64, true, libm::erfc, libm::lgamma_r);
real!(f32, false, libm::erfcf, libm::lgammaf_r);

fn nan<T: Real>() -> T {
    T::c(f64::NAN)
}

fn inf<T: Real>() -> T {
    T::c(f64::INFINITY)
}

/// `for index in 0..coeffs.len() { acc = acc * z + coeffs[index] }` from 0, as the kernels' loops.
fn horner<T: Real>(z: T, coeffs: &[f64]) -> T {
    let mut acc = T::c(0.0);
    for &c in coeffs {
        acc = acc * z + T::c(c);
    }
    acc
}

/// Cephes' `polevl` as torch writes it (`result = 0`, then `result * x + A[i]`).
fn polevl<T: Real>(x: T, coeffs: &[f64]) -> T {
    horner(x, coeffs)
}

/// x86's conversion of a float to int64 (`static_cast<int64_t>`): NaN and out-of-range values give
/// `i64::MIN`.
fn to_i64<T: Real>(n: T) -> i64 {
    let v = n.f64();
    if (-9.223372036854775808e18..9.223372036854775808e18).contains(&v) {
        v as i64
    } else {
        i64::MIN
    }
}

// ---------------------------------------------------------------------------------------------
// erfcx, log_ndtr, ndtri

fn erfcx_y100<T: Real>(y100: T) -> T {
    let case = y100.f64() as i64;
    if (0..100).contains(&case) {
        let t = (T::c(2.0) * y100 - T::from_i64(2 * case + 1)).f64();
        let c = &ERFCX_Y100[case as usize];
        // Double literals make the C++ expression double even for float.
        let v = c[0] + (c[1] + (c[2] + (c[3] + (c[4] + (c[5] + c[6] * t) * t) * t) * t) * t) * t;
        return T::c(v);
    }
    T::c(1.0)
}

/// torch's `calc_erfcx`: `exp(x²) erfc(x)`.
pub(super) fn erfcx<T: Real>(x: T) -> T {
    if x.is_nan() {
        return x;
    }
    if x >= T::c(0.0) {
        if x > T::c(50.0) {
            let ispi = T::c(0.56418958354775628694807945156);
            if x > T::c(5e7) {
                return ispi / x;
            }
            // (double literals: the expression is evaluated in double)
            let xx = x * x;
            let num = ispi.f64() * (xx.f64() * (xx.f64() + 4.5) + 2.0);
            return T::c(num / (x.f64() * ((xx * (xx + T::c(5.0))).f64() + 3.75)));
        }
        return erfcx_y100(T::c(400.0) / (T::c(4.0) + x));
    }
    if x.f64() < -26.7 {
        inf()
    } else if x.f64() < -6.1 {
        T::c(2.0) * (x * x).exp()
    } else {
        T::c(2.0) * (x * x).exp() - erfcx_y100(T::c(400.0) / (T::c(4.0) - x))
    }
}

/// torch's `calc_log_ndtr`: `log Φ(x)`.
pub(super) fn log_ndtr<T: Real>(x: T) -> T {
    let t = x * T::c(std::f64::consts::FRAC_1_SQRT_2);
    if x < T::c(-1.0) {
        (erfcx(-t) / T::c(2.0)).ln() - t * t
    } else {
        (-t.erfc() / T::c(2.0)).ln_1p()
    }
}

/// torch's `calc_ndtri`: the inverse of the standard normal CDF.
pub(super) fn ndtri<T: Real>(y0: T) -> T {
    let (zero, one) = (T::c(0.0), T::c(1.0));
    if y0 == zero {
        return -inf::<T>();
    }
    if y0 == one {
        return inf();
    }
    if y0 < zero || y0 > one {
        return nan();
    }
    let mut code = true;
    let mut y = y0;
    let e2 = T::c(0.13533528323661269189);
    if y > one - e2 {
        y = one - y;
        code = false;
    }
    if y > e2 {
        y -= T::c(0.5);
        let y2 = y * y;
        let x = y + y * (y2 * polevl(y2, &NDTRI_P0) / polevl(y2, &NDTRI_Q0));
        return x * T::c(2.50662827463100050242E0);
    }
    let mut x = (T::c(-2.0) * y.ln()).sqrt();
    let x0 = x - x.ln() / x;
    let z = one / x;
    let x1 = if x < T::c(8.0) {
        z * polevl(z, &NDTRI_P1) / polevl(z, &NDTRI_Q1)
    } else {
        z * polevl(z, &NDTRI_P2) / polevl(z, &NDTRI_Q2)
    };
    x = x0 - x1;
    if code {
        x = -x;
    }
    x
}

// ---------------------------------------------------------------------------------------------
// zeta, igamma, igammac

/// torch's Hurwitz `zeta(x, q)`, accumulated in f64 (its accumulator type for float and double on
/// the cpu; only the first power is taken in the input's type).
pub(super) fn zeta<T: Real>(xt: T, qt: T) -> f64 {
    const MACHEP: f64 = 1.11022302462515654042E-16;
    let (x, q) = (xt.f64(), qt.f64());
    if x == 1.0 {
        return f64::INFINITY;
    }
    if x < 1.0 {
        return f64::NAN;
    }
    if q <= 0.0 {
        if q == q.floor() {
            return f64::INFINITY;
        }
        if x != x.floor() {
            return f64::NAN;
        }
    }
    let mut s = qt.powf(-xt).f64();
    let mut a = q;
    let mut i = 0;
    let mut b = 0.0;
    while i < 9 || a <= 9.0 {
        i += 1;
        a += 1.0;
        b = a.powf(-x);
        s += b;
        if -MACHEP * s < b && b < MACHEP * s {
            return s;
        }
    }
    let w = a;
    s += b * w / (x - 1.0);
    s -= 0.5 * b;
    a = 1.0;
    let mut k = 0.0;
    for &ai in &ZETA_A {
        a *= x + k;
        b /= w;
        let t = a * b / ai;
        s += t;
        if (t / s).abs() < MACHEP {
            return s;
        }
        k += 1.0;
        a *= x + k;
        b /= w;
        k += 1.0;
    }
    s
}

fn machep<T: Real>() -> T {
    T::c(if T::IS_F64 { 1.11022302462515654042E-16 } else { 5.9604644775390625E-8 })
}

fn ratevl<T: Real>(x: T, num: &[f64], denom: &[f64]) -> T {
    let absx = x.abs();
    let big = absx > T::c(1.0);
    let y = if big { T::c(1.0) / x } else { x };
    let eval = |c: &[f64]| {
        let mut v = c.to_vec();
        if big {
            v.reverse();
        }
        let mut ans = T::c(v[0]);
        for &k in &v[1..] {
            ans = ans * y + T::c(k);
        }
        ans
    };
    let (n, d) = (eval(num), eval(denom));
    if big {
        let i = denom.len() as i32 - num.len() as i32;
        x.powi(i) * n / d
    } else {
        n / d
    }
}

fn igam_fac<T: Real>(a: T, x: T) -> T {
    let maxlog = T::c(if T::IS_F64 { 7.09782712893383996843E2 } else { 88.72283905206835 });
    let exp1 = T::c(2.718281828459045);
    let lanczos_g = T::c(6.024680040776729583740234375);
    if (a - x).abs().f64() > 0.4 * a.abs().f64() {
        let ax = a * x.ln() - x - a.lgamma();
        if ax < -maxlog {
            return T::c(0.0);
        }
        return ax.exp();
    }
    let fac = a + lanczos_g - T::c(0.5);
    let mut res = (fac / exp1).sqrt() / ratevl(a, &LANCZOS_NUM, &LANCZOS_DENOM);
    if a < T::c(200.0) && x < T::c(200.0) {
        res *= (a - x).exp() * (x / fac).powf(a);
    } else {
        let num = x - a - lanczos_g + T::c(0.5);
        let numfac = num / fac;
        res *= (a * (numfac.ln_1p() - numfac) + x * (T::c(0.5) - lanczos_g) / fac).exp();
    }
    res
}

fn igam_series<T: Real>(a: T, x: T) -> T {
    let ax = igam_fac(a, x);
    if ax == T::c(0.0) {
        return T::c(0.0);
    }
    let (mut r, mut c, mut ans) = (a, T::c(1.0), T::c(1.0));
    for _ in 0..2000 {
        r += T::c(1.0);
        c *= x / r;
        ans += c;
        if c <= machep::<T>() * ans {
            break;
        }
    }
    ans * ax / a
}

fn igamc_series<T: Real>(a: T, x: T) -> T {
    let mut fac = T::c(1.0);
    let mut sum = T::c(0.0);
    for n in 1..2000 {
        let n = T::from_i64(n);
        fac *= -x / n;
        let term = fac / (a + n);
        sum += term;
        if term.abs() <= machep::<T>() * sum.abs() {
            break;
        }
    }
    let logx = x.ln();
    let term = -(a * logx - (T::c(1.0) + a).lgamma()).exp_m1();
    term - (a * logx - a.lgamma()).exp() * sum
}

#[allow(clippy::needless_range_loop)]
fn igam_asymptotic<T: Real>(a: T, x: T, igam: bool) -> T {
    let eps = machep::<T>();
    let lambda = x / a;
    let sigma = (x - a) / a;
    let mut absoldterm = inf::<T>();
    let mut etapow = [T::c(0.0); 25];
    etapow[0] = T::c(1.0);
    let mut maxpow = 0;
    let mut sum = T::c(0.0);
    let mut afac = T::c(1.0);
    let sgn = T::c(if igam { -1.0 } else { 1.0 });
    let eta = if lambda > T::c(1.0) {
        (T::c(-2.0) * (sigma.ln_1p() - sigma)).sqrt()
    } else if lambda < T::c(1.0) {
        -(T::c(-2.0) * (sigma.ln_1p() - sigma)).sqrt()
    } else {
        T::c(0.0)
    };
    // (`0.5 * erfc(...)`: double literal, so double for float too; erfc of a float argument)
    let res = T::c(0.5 * (sgn * eta * (a / T::c(2.0)).sqrt()).erfc().f64());
    for row in IGAM_D.iter() {
        let mut ck = T::c(row[0]);
        for n in 1..25 {
            if n > maxpow {
                etapow[n] = eta * etapow[n - 1];
                maxpow += 1;
            }
            let ckterm = T::c(row[n]) * etapow[n];
            ck += ckterm;
            if ckterm.abs() < eps * ck.abs() {
                break;
            }
        }
        let term = ck * afac;
        let absterm = term.abs();
        if absterm > absoldterm {
            break;
        }
        sum += term;
        if absterm < eps * sum.abs() {
            break;
        }
        absoldterm = absterm;
        afac /= a;
    }
    // `-0.5 * a * eta * eta` and `2 * pi<float> * a` follow C++'s promotions.
    let e = (-0.5 * a.f64() * eta.f64() * eta.f64()).exp();
    let d = (T::c(2.0 * std::f32::consts::PI as f64) * a).sqrt();
    if T::IS_F64 {
        res + sgn * T::c(e) * sum / d
    } else {
        T::c(res.f64() + sgn.f64() * e * sum.f64() / d.f64())
    }
}

fn igamc_continued_fraction<T: Real>(a: T, x: T) -> T {
    let big = T::c(if T::IS_F64 { 4.503599627370496e15 } else { 16777216.0 });
    let biginv = T::c(if T::IS_F64 { 2.22044604925031308085e-16 } else { 5.9604644775390625E-8 });
    let ax = igam_fac(a, x);
    if ax == T::c(0.0) {
        return T::c(0.0);
    }
    let one = T::c(1.0);
    let mut y = one - a;
    let mut z = x + y + one;
    let mut c = T::c(0.0);
    let mut pkm2 = one;
    let mut qkm2 = x;
    let mut pkm1 = x + one;
    let mut qkm1 = z * x;
    let mut ans = pkm1 / qkm1;
    for _ in 0..2000 {
        c += one;
        y += one;
        z += T::c(2.0);
        let yc = y * c;
        let pk = pkm1 * z - pkm2 * yc;
        let qk = qkm1 * z - qkm2 * yc;
        let t = if qk != T::c(0.0) {
            let r = pk / qk;
            let t = ((ans - r) / r).abs();
            ans = r;
            t
        } else {
            one
        };
        pkm2 = pkm1;
        pkm1 = pk;
        qkm2 = qkm1;
        qkm1 = qk;
        if pk.abs() > big {
            pkm2 *= biginv;
            pkm1 *= biginv;
            qkm2 *= biginv;
            qkm1 *= biginv;
        }
        if t <= machep::<T>() {
            break;
        }
    }
    ans * ax
}

/// The asymptotic series' domain, shared by igamma and igammac.
fn igam_use_asymptotic<T: Real>(a: T, x: T) -> bool {
    let absxma_a = (x - a).abs() / a;
    (a > T::c(20.0) && a < T::c(200.0) && absxma_a < T::c(0.3))
        || (a > T::c(200.0) && absxma_a < T::c(4.5) / a.sqrt())
}

/// torch's `calc_igammac(a, x)`: the regularized upper incomplete gamma function.
pub(super) fn igammac<T: Real>(a: T, x: T) -> T {
    let zero = T::c(0.0);
    if x < zero || a < zero {
        return nan();
    } else if a == zero {
        return if x > zero { zero } else { nan() };
    } else if x == zero {
        return T::c(1.0);
    } else if a.is_infinite() {
        return if x.is_infinite() { nan() } else { T::c(1.0) };
    } else if x.is_infinite() {
        return zero;
    }
    if igam_use_asymptotic(a, x) {
        return igam_asymptotic(a, x, false);
    }
    if x.f64() > 1.1 {
        if x < a {
            T::c(1.0) - igam_series(a, x)
        } else {
            igamc_continued_fraction(a, x)
        }
    } else if x <= T::c(0.5) {
        if -0.4 / x.ln().f64() < a.f64() {
            T::c(1.0) - igam_series(a, x)
        } else {
            igamc_series(a, x)
        }
    } else if x.f64() * 1.1 < a.f64() {
        T::c(1.0) - igam_series(a, x)
    } else {
        igamc_series(a, x)
    }
}

/// torch's `calc_igamma(a, x)`: the regularized lower incomplete gamma function.
pub(super) fn igamma<T: Real>(a: T, x: T) -> T {
    let zero = T::c(0.0);
    if x < zero || a < zero {
        return nan();
    } else if a == zero {
        return if x > zero { T::c(1.0) } else { nan() };
    } else if x == zero {
        return zero;
    } else if a.is_infinite() {
        return if x.is_infinite() { nan() } else { zero };
    } else if x.is_infinite() {
        return T::c(1.0);
    }
    if igam_use_asymptotic(a, x) {
        return igam_asymptotic(a, x, true);
    }
    if x > T::c(1.0) && x > a {
        return T::c(1.0) - igammac(a, x);
    }
    igam_series(a, x)
}

// ---------------------------------------------------------------------------------------------
// Bessel and Airy functions

/// torch's `airy_ai_forward`.
pub(super) fn airy_ai<T: Real>(x: T) -> T {
    let c = T::c;
    if x.is_infinite() {
        return nan();
    }
    if x > c(103.892) {
        return c(0.0);
    }
    let mut domain_flag = 0;
    let mut ai = c(0.0);
    if x < c(-2.09) {
        let z = c(1.0) / (c(-2.0) * x * (-x).sqrt() / c(3.0));
        let afn = horner(z * z, &AIRY_AFN);
        let afd = horner(z * z, &AIRY_AFD);
        let agn = horner(z * z, &AIRY_AGN);
        let agd = horner(z * z, &AIRY_AGD);
        let t = c(-2.0) * x * (-x).sqrt() / c(3.0) + c(0.25) * c(std::f64::consts::PI);
        return c(5.64189583547756286948e-01) / (-x).sqrt().sqrt()
            * (t.sin() * (c(1.0) + z * z * afn / afd) - t.cos() * (z * agn / agd));
    }
    if x >= c(2.09) {
        domain_flag = 5;
        let zeta = c(2.0) * x * x.sqrt() / c(3.0);
        let an = horner(c(1.0) / zeta, &AIRY_AN);
        let ad = horner(c(1.0) / zeta, &AIRY_AD);
        ai = c(5.64189583547756286948e-01) * (an / ad) / (c(2.0) * x.sqrt().sqrt() * zeta.exp());
        if x > c(8.3203353) {
            return ai;
        }
    }
    let mut f = c(1.0);
    let mut g = x;
    let mut k = c(1.0);
    let mut m = c(1.0);
    let mut n = x;
    let mut t = c(1.0);
    let z = x * x * x;
    while t > T::EPSILON {
        m *= z;
        k += c(1.0);
        m /= k;
        n *= z;
        k += c(1.0);
        n /= k;
        m /= k;
        f += m;
        k += c(1.0);
        n /= k;
        g += n;
        t = (m / f).abs();
    }
    if domain_flag & 1 == 0 {
        return c(0.355028053887817239260) * f - c(0.258819403792806798405) * g;
    }
    ai
}

/// The large-argument form shared by J0/J1/Y0/Y1: `(p cos(x - shift) ∓ 5/x q sin(x - shift)) √(2/(πx))`
/// with `w` the kernels' `25/(x x)` or `5/x (5/x)`, `sine` picking Y's sin/cos order.
#[allow(clippy::too_many_arguments)]
fn bessel_far<T: Real>(x: T, w: T, pp: &[f64], pq: &[f64], qp: &[f64], qq: &[f64], shift: f64, y: bool) -> T {
    let c = T::c;
    let (p, q) = (horner(w, pp) / horner(w, pq), horner(w, qp) / horner(w, qq));
    let s = x - c(shift);
    let v = if y { p * s.sin() + c(5.0) / x * q * s.cos() } else { p * s.cos() - c(5.0) / x * q * s.sin() };
    v * c(0.797884560802865355879892119868763737) / x.sqrt()
}

/// torch's `bessel_j0_forward`.
pub(super) fn bessel_j0<T: Real>(x: T) -> T {
    let c = T::c;
    let x = if x < c(0.0) { -x } else { x };
    if x <= c(5.0) {
        if x < c(0.00001) {
            return c(1.0) - x * x / c(4.0);
        }
        let rp = horner(x * x, &J0_RP);
        let rq = horner(x * x, &J0_RQ);
        return (x * x - c(5.78318596294678452118e+00)) * (x * x - c(3.04712623436620863991e+01)) * rp / rq;
    }
    bessel_far(
        x,
        c(25.0) / (x * x),
        &J0_PP,
        &J0_PQ,
        &J0_QP,
        &J0_QQ,
        0.785398163397448309615660845819875721,
        false,
    )
}

/// torch's `bessel_j1_forward`.
pub(super) fn bessel_j1<T: Real>(x: T) -> T {
    let c = T::c;
    if x < c(0.0) {
        return -bessel_j1(-x);
    }
    if x <= c(5.0) {
        let rp = horner(x * x, &J1_RP);
        let rq = horner(x * x, &J1_RQ);
        return rp / rq
            * x
            * (x * x - c(1.46819706421238932572e+01))
            * (x * x - c(4.92184563216946036703e+01));
    }
    let w = c(5.0) / x * (c(5.0) / x);
    bessel_far(x, w, &J1_PP, &J1_PQ, &J1_QP, &J1_QQ, 2.356194490192344928846982537459627163, false)
}

/// torch's `bessel_y0_forward`.
pub(super) fn bessel_y0<T: Real>(x: T) -> T {
    let c = T::c;
    if x <= c(5.0) {
        if x == c(0.0) {
            return -inf::<T>();
        }
        if x < c(0.0) {
            return nan();
        }
        let yp = horner(x * x, &Y0_YP);
        let yq = horner(x * x, &Y0_YQ);
        return yp / yq + (c(0.636619772367581343075535053490057448) * x.ln() * bessel_j0(x));
    }
    bessel_far(
        x,
        c(25.0) / (x * x),
        &Y0_PP,
        &Y0_PQ,
        &Y0_QP,
        &Y0_QQ,
        0.785398163397448309615660845819875721,
        true,
    )
}

/// torch's `bessel_y1_forward`.
pub(super) fn bessel_y1<T: Real>(x: T) -> T {
    let c = T::c;
    if x <= c(5.0) {
        if x == c(0.0) {
            return -inf::<T>();
        }
        if x <= c(0.0) {
            return nan();
        }
        let yp = horner(x * x, &Y1_YP);
        let yq = horner(x * x, &Y1_YQ);
        return x * (yp / yq)
            + (c(0.636619772367581343075535053490057448) * (bessel_j1(x) * x.ln() - c(1.0) / x));
    }
    let w = c(5.0) / x * (c(5.0) / x);
    bessel_far(x, w, &Y1_PP, &Y1_PQ, &Y1_QP, &Y1_QQ, 2.356194490192344928846982537459627163, true)
}

/// The kernels' Chebyshev loop: `a = coeffs[0]`, then `p = q; q = a; a = y q - p + c`; returns
/// `(a, p)`.
fn cheb<T: Real>(y: T, coeffs: &[f64]) -> (T, T) {
    let mut p = T::c(0.0);
    let mut q = T::c(0.0);
    let mut a = T::c(coeffs[0]);
    for &c in &coeffs[1..] {
        p = q;
        q = a;
        a = y * q - p + T::c(c);
    }
    (a, p)
}

/// torch's `modified_bessel_i0_forward`.
pub(super) fn modified_bessel_i0<T: Real>(x: T) -> T {
    let c = T::c;
    let ax = x.abs();
    if ax <= c(8.0) {
        let (a, p) = cheb(ax / c(2.0) - c(2.0), &I0_A);
        return ax.exp() * (c(0.5) * (a - p));
    }
    let (b, p) = cheb(c(32.0) / ax - c(2.0), &I0_B);
    ax.exp() * (c(0.5) * (b - p)) / ax.sqrt()
}

/// torch's `modified_bessel_i1_forward`.
pub(super) fn modified_bessel_i1<T: Real>(x: T) -> T {
    let c = T::c;
    let ax = x.abs();
    let v = if ax <= c(8.0) {
        let (a, p) = cheb(ax / c(2.0) - c(2.0), &I1_A);
        c(0.5) * (a - p) * ax * ax.exp()
    } else {
        let (b, p) = cheb(c(32.0) / ax - c(2.0), &I1_B);
        ax.exp() * (c(0.5) * (b - p)) / ax.sqrt()
    };
    if x < c(0.0) {
        -v
    } else {
        v
    }
}

/// torch's `modified_bessel_k0_forward` (`scaled`: `scaled_modified_bessel_k0_forward`).
pub(super) fn modified_bessel_k0<T: Real>(x: T, scaled: bool) -> T {
    let c = T::c;
    if x == c(0.0) {
        return inf();
    }
    if x < c(0.0) {
        return nan();
    }
    let (ta, tb) = if scaled { (&K0E_A, &K0E_B) } else { (&K0_A, &K0_B) };
    if x <= c(2.0) {
        let (a, p) = cheb(x * x - c(2.0), ta);
        if scaled {
            return (c(0.5) * (a - p) - (c(0.5) * x).ln() * modified_bessel_i0(x)) * x.exp();
        }
        // `std::log(0.5 * x)`: a double logarithm, so the expression is double for float.
        let v = c(0.5) * (a - p);
        return T::c(v.f64() - (0.5 * x.f64()).ln() * modified_bessel_i0(x).f64());
    }
    let (b, p) = cheb(c(8.0) / x - c(2.0), tb);
    if scaled {
        return c(0.5) * (b - p) / x.sqrt();
    }
    (-x).exp() * (c(0.5) * (b - p)) / x.sqrt()
}

/// torch's `modified_bessel_k1_forward` (`scaled`: `scaled_modified_bessel_k1_forward`).
pub(super) fn modified_bessel_k1<T: Real>(x: T, scaled: bool) -> T {
    let c = T::c;
    if x == c(0.0) {
        return inf();
    }
    if x < c(0.0) {
        return nan();
    }
    let (ta, tb) = if scaled { (&K1E_A, &K1E_B) } else { (&K1_A, &K1_B) };
    if x <= c(2.0) {
        let (a, p) = cheb(x * x - c(2.0), ta);
        let v = (c(0.5) * x).ln() * modified_bessel_i1(x) + c(0.5) * (a - p) / x;
        return if scaled { v * x.exp() } else { v };
    }
    let (b, p) = cheb(c(8.0) / x - c(2.0), tb);
    if scaled {
        return c(0.5) * (b - p) / x.sqrt();
    }
    (-x).exp() * (c(0.5) * (b - p)) / x.sqrt()
}

/// torch's `spherical_bessel_j0_forward`: `sin(x) / x`.
pub(super) fn spherical_bessel_j0<T: Real>(x: T) -> T {
    let c = T::c;
    if x.is_infinite() {
        return c(0.0);
    }
    if x.abs() < c(0.5) {
        let x2 = x * x;
        return c(1.0)
            + x2 * (c(-1.0) / c(6.0)
                + x2 * (c(1.0) / c(120.0)
                    + x2 * (c(-1.0) / c(5040.0)
                        + x2 * (c(1.0) / c(362880.0)
                            + x2 * (c(-1.0) / c(39916800.0) + x2 * (c(1.0) / c(6227020800.0)))))));
    }
    x.sin() / x
}

// ---------------------------------------------------------------------------------------------
// Orthogonal polynomials

/// Which polynomial family.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum Poly {
    ChebyshevT,
    ChebyshevU,
    ChebyshevV,
    ChebyshevW,
    ShiftedT,
    ShiftedU,
    ShiftedV,
    ShiftedW,
    HermiteH,
    HermiteHe,
    Laguerre,
    Legendre,
}

/// The three-term recurrence `r = two_x q - p` from `(p, q) = (1, q1)` for `k = 2..=n`, stopping
/// once `q` is NaN.
fn recur2<T: Real>(two_x: T, q1: T, n: i64) -> T {
    let mut p = T::c(1.0);
    let mut q = q1;
    let mut r = q1;
    let mut k = 2;
    while k <= n && !q.is_nan() {
        r = two_x.mul_add(q, -p);
        p = q;
        q = r;
        k += 1;
    }
    r
}

/// torch's `*_polynomial_*_forward(x, n)` (the tensor-`n` forms: `n` converted to int64 as the
/// kernels' `static_cast`, Hermite's NaN/∞ `n` taken as -1).
pub(super) fn polynomial<T: Real>(kind: Poly, x: T, n_float: T) -> T {
    let c = T::c;
    let n = if matches!(kind, Poly::HermiteH) && (n_float.is_nan() || n_float.is_infinite()) {
        -1
    } else {
        to_i64(n_float)
    };
    if n < 0 {
        return c(0.0);
    }
    let nf = T::from_i64(n);
    let odd = n % 2 != 0;
    let sgn = |v: T| if odd { -v } else { v };
    let n1 = T::from_i64(n.wrapping_add(1));
    let n21 = T::from_i64(n.wrapping_add(n).wrapping_add(1));
    match kind {
        Poly::ChebyshevT | Poly::ChebyshevU | Poly::ChebyshevV | Poly::ChebyshevW => {
            if x.abs() == c(1.0) {
                let pos = x > c(0.0);
                return match kind {
                    Poly::ChebyshevT => {
                        if pos {
                            c(1.0)
                        } else {
                            sgn(c(1.0))
                        }
                    }
                    Poly::ChebyshevU => {
                        if pos {
                            n1
                        } else {
                            sgn(n1)
                        }
                    }
                    Poly::ChebyshevV => {
                        if pos {
                            c(1.0)
                        } else {
                            sgn(n21)
                        }
                    }
                    _ => {
                        if pos {
                            n21
                        } else {
                            sgn(c(1.0))
                        }
                    }
                };
            }
            let limit = if kind == Poly::ChebyshevT { 6 } else { 8 };
            if n > limit && x.abs() < c(1.0) {
                let t = x.acos();
                match kind {
                    Poly::ChebyshevT => return (nf * t).cos(),
                    Poly::ChebyshevU => {
                        if t.sin() != c(0.0) {
                            return (n1 * t).sin() / t.sin();
                        }
                        return n1 * (n1 * t).cos() / x;
                    }
                    Poly::ChebyshevV => {
                        if (t / c(2.0)).sin() != c(1.0) {
                            return ((nf + c(0.5)) * t).cos() / (t / c(2.0)).cos();
                        }
                        return sgn(n21);
                    }
                    _ => {
                        if (t / c(2.0)).cos() != c(1.0) {
                            return ((nf + c(0.5)) * t).sin() / (t / c(2.0)).sin();
                        }
                        if x > c(0.0) {
                            return n21;
                        }
                        return sgn(c(1.0));
                    }
                }
            }
            let q1 = match kind {
                Poly::ChebyshevT => x,
                Poly::ChebyshevU => x + x,
                Poly::ChebyshevV => x + x - c(1.0),
                _ => x + x + c(1.0),
            };
            if n == 0 {
                return c(1.0);
            }
            if n == 1 {
                return q1;
            }
            recur2(x + x, q1, n)
        }
        Poly::ShiftedT | Poly::ShiftedU | Poly::ShiftedV | Poly::ShiftedW => {
            if x == c(1.0) {
                return match kind {
                    Poly::ShiftedT | Poly::ShiftedV => c(1.0),
                    Poly::ShiftedU => n1,
                    _ => n21,
                };
            }
            if x == c(0.0) {
                return match kind {
                    Poly::ShiftedT | Poly::ShiftedW => sgn(c(1.0)),
                    Poly::ShiftedU => sgn(n1),
                    _ => sgn(n21),
                };
            }
            let y = x + x - c(1.0);
            let limit = if kind == Poly::ShiftedW { 4 } else { 6 };
            if n > limit && y.abs() < c(1.0) {
                let t = y.acos();
                match kind {
                    Poly::ShiftedT => return (nf * t).cos(),
                    Poly::ShiftedU => {
                        if t.sin() != c(0.0) {
                            return (n1 * t).sin() / t.sin();
                        }
                        return n1 * (n1 * t).cos() / y;
                    }
                    Poly::ShiftedV => {
                        if (t / c(2.0)).sin() != c(1.0) {
                            return ((nf + c(0.5)) * t).cos() / (t / c(2.0)).cos();
                        }
                        return sgn(n21);
                    }
                    _ => {
                        if (t / c(2.0)).cos() != c(1.0) {
                            return ((nf + c(0.5)) * t).sin() / (t / c(2.0)).sin();
                        }
                        return sgn(c(1.0));
                    }
                }
            }
            let q1 = match kind {
                Poly::ShiftedT => y,
                Poly::ShiftedU => y + y,
                Poly::ShiftedV => y + y - c(1.0),
                _ => y + y + c(1.0),
            };
            if n == 0 {
                return c(1.0);
            }
            if n == 1 {
                return q1;
            }
            recur2(y + y, q1, n)
        }
        Poly::HermiteH | Poly::HermiteHe => {
            let h = kind == Poly::HermiteH;
            if n == 0 {
                return c(1.0);
            }
            if n == 1 {
                return if h { x + x } else { x };
            }
            if n > if T::IS_F64 { 512 } else { 128 } {
                return nan();
            }
            let mut p = c(1.0);
            if h {
                let mut q = x + x;
                let mut r = c(0.0);
                let mut k = 2;
                while k < n + n {
                    r = (x + x).mul_add(q, -(T::from_i64(k) * p));
                    p = q;
                    q = r;
                    k += 2;
                }
                r
            } else {
                let mut q = x;
                let mut r = x;
                for k in 1..n {
                    r = x.mul_add(q, -(T::from_i64(k) * p));
                    p = q;
                    q = r;
                }
                r
            }
        }
        Poly::Laguerre => {
            if x.abs() == c(0.0) {
                return c(1.0);
            }
            if n == 0 {
                return c(1.0);
            }
            if n == 1 {
                return c(1.0) - x;
            }
            let mut p = c(1.0);
            let mut q = c(1.0) - x;
            let mut r = q;
            let mut k = 1;
            while k < n && !q.is_nan() {
                let a = T::from_i64(k + k) + (c(1.0) - x);
                r = a.mul_add(q, -(T::from_i64(k) * p)) / T::from_i64(k + 1);
                p = q;
                q = r;
                k += 1;
            }
            r
        }
        Poly::Legendre => {
            if x.abs() == c(1.0) {
                return if x > c(0.0) || !odd { c(1.0) } else { c(-1.0) };
            }
            if n == 0 {
                return c(1.0);
            }
            if n == 1 {
                return x;
            }
            let mut p = c(1.0);
            let mut q = x;
            let mut r = q;
            let mut k = 1;
            while k < n && !q.is_nan() {
                r = (T::from_i64(k + k + 1) * x).mul_add(q, -(T::from_i64(k) * p)) / T::from_i64(k + 1);
                p = q;
                q = r;
                k += 1;
            }
            r
        }
    }
}
