//! Float math shared by the kernels: native for f32/f64, through f32 for f16/bf16.

use half::{bf16, f16};

use crate::storage::CpuElement;

/// A float element type and the math the kernels need.
///
/// `Acc` is the type arithmetic happens in: the type itself for f32 and f64, f32 for f16 and bf16
/// (torch computes half-precision ops in f32 on CPU and rounds the result once).
pub trait Float: CpuElement {
    /// The computation type.
    type Acc: AccFloat;
    /// Widens to the computation type.
    fn to_acc(self) -> Self::Acc;
    /// Rounds from the computation type.
    fn from_acc(v: Self::Acc) -> Self;
    /// The type torch's CPU kernels carry running totals in (`at::acc_type<T, /*is_cuda=*/false>`:
    /// f64 for f32 and f64, f32 for f16 and bf16): scans and Welford statistics.
    type Wide: AccFloat;
    /// Widens to [`Float::Wide`].
    fn to_wide(self) -> Self::Wide;
    /// Rounds from [`Float::Wide`].
    fn from_wide(v: Self::Wide) -> Self;
}

/// f32 or f64: the types float kernels compute in.
pub trait AccFloat:
    Copy
    + Send
    + Sync
    + PartialOrd
    + std::ops::Add<Output = Self>
    + std::ops::Sub<Output = Self>
    + std::ops::Mul<Output = Self>
    + std::ops::Div<Output = Self>
    + std::ops::Neg<Output = Self>
    + 'static
{
    /// 0
    const ZERO: Self;
    /// 1
    const ONE: Self;
    /// e^x
    fn exp(self) -> Self;
    /// ln x
    fn ln(self) -> Self;
    /// √x
    fn sqrt(self) -> Self;
    /// sine
    fn sin(self) -> Self;
    /// cosine
    fn cos(self) -> Self;
    /// hyperbolic tangent
    fn tanh(self) -> Self;
    /// round toward -∞
    fn floor(self) -> Self;
    /// round toward +∞
    fn ceil(self) -> Self;
    /// round half to even
    fn round_even(self) -> Self;
    /// round toward zero
    fn trunc(self) -> Self;
    /// |x|
    fn abs(self) -> Self;
    /// x^y
    fn powf(self, y: Self) -> Self;
    /// `self * a + b`, rounded once
    fn mul_add(self, a: Self, b: Self) -> Self;
    /// Rounds from f64 (quantile ranks).
    fn from_f64_acc(v: f64) -> Self;
    /// C's fmod
    fn fmod(self, y: Self) -> Self;
    /// NaN test
    fn is_nan(self) -> bool;
    /// magnitude of self, sign of `sign`
    fn copysign(self, sign: Self) -> Self;
    /// 2^x
    fn exp2(self) -> Self;
    /// e^x - 1
    fn exp_m1(self) -> Self;
    /// base-2 logarithm
    fn log2(self) -> Self;
    /// base-10 logarithm
    fn log10(self) -> Self;
    /// ln(1 + x)
    fn ln_1p(self) -> Self;
    /// tangent
    fn tan(self) -> Self;
    /// arcsine
    fn asin(self) -> Self;
    /// arccosine
    fn acos(self) -> Self;
    /// arctangent
    fn atan(self) -> Self;
    /// hyperbolic sine
    fn sinh(self) -> Self;
    /// hyperbolic cosine
    fn cosh(self) -> Self;
    /// inverse hyperbolic sine
    fn asinh(self) -> Self;
    /// inverse hyperbolic cosine
    fn acosh(self) -> Self;
    /// inverse hyperbolic tangent
    fn atanh(self) -> Self;
    /// atan2(self, x)
    fn atan2(self, x: Self) -> Self;
    /// √(self² + x²)
    fn hypot(self, x: Self) -> Self;
    /// error function
    fn erf(self) -> Self;
    /// complementary error function
    fn erfc(self) -> Self;
    /// inverse error function
    fn erfinv(self) -> Self;
    /// `ln |Γ(x)|`
    fn lgamma(self) -> Self;
    /// `ψ⁽ⁿ⁾(x)`, the n-th derivative of the digamma function (`n = 0`: digamma)
    fn polygamma(self, n: u32) -> Self;
    /// ±∞ test
    fn is_infinite(self) -> bool;
    /// `e^x`, vectorisable for f32 (about 1 ulp; std's `exp` for f64)
    fn exp_fast(self) -> Self;
    /// gelu's `erf`: torch's vectorisable approximation for f32 (absolute error below 5e-7), the
    /// exact `erf` for f64
    fn erf_gelu(self) -> Self;
    /// the nearest value of this type to `v`
    fn from_f64(v: f64) -> Self;
}

macro_rules! acc_float {
    ($t:ty, $lgamma:path, $polygamma:path) => {
        impl AccFloat for $t {
            const ZERO: Self = 0.0;
            const ONE: Self = 1.0;
            #[inline(always)]
            fn exp(self) -> Self {
                <$t>::exp(self)
            }
            #[inline(always)]
            fn ln(self) -> Self {
                <$t>::ln(self)
            }
            #[inline(always)]
            fn sqrt(self) -> Self {
                <$t>::sqrt(self)
            }
            #[inline(always)]
            fn sin(self) -> Self {
                <$t>::sin(self)
            }
            #[inline(always)]
            fn cos(self) -> Self {
                <$t>::cos(self)
            }
            #[inline(always)]
            fn tanh(self) -> Self {
                <$t>::tanh(self)
            }
            #[inline(always)]
            fn floor(self) -> Self {
                <$t>::floor(self)
            }
            #[inline(always)]
            fn ceil(self) -> Self {
                <$t>::ceil(self)
            }
            #[inline(always)]
            fn round_even(self) -> Self {
                <$t>::round_ties_even(self)
            }
            #[inline(always)]
            fn trunc(self) -> Self {
                <$t>::trunc(self)
            }
            #[inline(always)]
            fn abs(self) -> Self {
                <$t>::abs(self)
            }
            #[inline(always)]
            fn powf(self, y: Self) -> Self {
                <$t>::powf(self, y)
            }
            #[inline(always)]
            fn mul_add(self, a: Self, b: Self) -> Self {
                <$t>::mul_add(self, a, b)
            }
            #[inline(always)]
            fn from_f64_acc(v: f64) -> Self {
                v as $t
            }
            #[inline(always)]
            fn fmod(self, y: Self) -> Self {
                self % y
            }
            #[inline(always)]
            fn is_nan(self) -> bool {
                <$t>::is_nan(self)
            }
            #[inline(always)]
            fn copysign(self, sign: Self) -> Self {
                <$t>::copysign(self, sign)
            }
            #[inline(always)]
            fn exp2(self) -> Self {
                <$t>::exp2(self)
            }
            #[inline(always)]
            fn exp_m1(self) -> Self {
                <$t>::exp_m1(self)
            }
            #[inline(always)]
            fn log2(self) -> Self {
                <$t>::log2(self)
            }
            #[inline(always)]
            fn log10(self) -> Self {
                <$t>::log10(self)
            }
            #[inline(always)]
            fn ln_1p(self) -> Self {
                <$t>::ln_1p(self)
            }
            #[inline(always)]
            fn tan(self) -> Self {
                <$t>::tan(self)
            }
            #[inline(always)]
            fn asin(self) -> Self {
                <$t>::asin(self)
            }
            #[inline(always)]
            fn acos(self) -> Self {
                <$t>::acos(self)
            }
            #[inline(always)]
            fn atan(self) -> Self {
                <$t>::atan(self)
            }
            #[inline(always)]
            fn sinh(self) -> Self {
                <$t>::sinh(self)
            }
            #[inline(always)]
            fn cosh(self) -> Self {
                <$t>::cosh(self)
            }
            #[inline(always)]
            fn asinh(self) -> Self {
                <$t>::asinh(self)
            }
            #[inline(always)]
            fn acosh(self) -> Self {
                <$t>::acosh(self)
            }
            #[inline(always)]
            fn atanh(self) -> Self {
                <$t>::atanh(self)
            }
            #[inline(always)]
            fn atan2(self, x: Self) -> Self {
                <$t>::atan2(self, x)
            }
            #[inline(always)]
            fn hypot(self, x: Self) -> Self {
                <$t>::hypot(self, x)
            }
            #[inline(always)]
            fn erf(self) -> Self {
                crate::math::special::erf(self as f64) as $t
            }
            #[inline(always)]
            fn erfc(self) -> Self {
                crate::math::special::erfc(self as f64) as $t
            }
            #[inline(always)]
            fn erfinv(self) -> Self {
                crate::math::special::erfinv(self as f64) as $t
            }
            #[inline(always)]
            fn lgamma(self) -> Self {
                $lgamma(self)
            }
            #[inline(always)]
            fn polygamma(self, n: u32) -> Self {
                $polygamma(n, self)
            }
            #[inline(always)]
            fn is_infinite(self) -> bool {
                <$t>::is_infinite(self)
            }
            #[inline(always)]
            fn exp_fast(self) -> Self {
                FastMath::exp_fast(self)
            }
            #[inline(always)]
            fn erf_gelu(self) -> Self {
                FastMath::erf_gelu(self)
            }
            #[inline(always)]
            fn from_f64(v: f64) -> Self {
                v as $t
            }
        }
    };
}
acc_float!(f32, crate::math::gamma::lgammaf, crate::math::gamma::polygammaf);
acc_float!(f64, crate::math::gamma::lgamma, crate::math::gamma::polygamma);

/// The kernels' fast paths: the vectorisable f32 versions, and std/fdlibm for f64.
pub trait FastMath {
    /// `e^x`
    fn exp_fast(self) -> Self;
    /// gelu's erf
    fn erf_gelu(self) -> Self;
}

impl FastMath for f32 {
    #[inline(always)]
    fn exp_fast(self) -> Self {
        crate::math::fast::exp_f32(self)
    }
    #[inline(always)]
    fn erf_gelu(self) -> Self {
        crate::math::fast::erf_f32(self)
    }
}

impl FastMath for f64 {
    #[inline(always)]
    fn exp_fast(self) -> Self {
        self.exp()
    }
    #[inline(always)]
    fn erf_gelu(self) -> Self {
        crate::math::special::erf(self)
    }
}

impl Float for f32 {
    type Acc = f32;
    type Wide = f64;
    #[inline(always)]
    fn to_wide(self) -> f64 {
        f64::from(self)
    }
    #[inline(always)]
    fn from_wide(v: f64) -> Self {
        v as f32
    }
    #[inline(always)]
    fn to_acc(self) -> f32 {
        self
    }
    #[inline(always)]
    fn from_acc(v: f32) -> Self {
        v
    }
}

impl Float for f64 {
    type Acc = f64;
    type Wide = f64;
    #[inline(always)]
    fn to_wide(self) -> f64 {
        self
    }
    #[inline(always)]
    fn from_wide(v: f64) -> Self {
        v
    }
    #[inline(always)]
    fn to_acc(self) -> f64 {
        self
    }
    #[inline(always)]
    fn from_acc(v: f64) -> Self {
        v
    }
}

impl Float for f16 {
    type Acc = f32;
    type Wide = f32;
    #[inline(always)]
    fn to_wide(self) -> f32 {
        self.to_acc()
    }
    #[inline(always)]
    fn from_wide(v: f32) -> Self {
        Self::from_acc(v)
    }
    #[inline(always)]
    fn to_acc(self) -> f32 {
        oxtorch_core::half_convert::f16_to_f32(self)
    }
    #[inline(always)]
    fn from_acc(v: f32) -> Self {
        oxtorch_core::half_convert::f32_to_f16(v)
    }
}

impl Float for bf16 {
    type Acc = f32;
    type Wide = f32;
    #[inline(always)]
    fn to_wide(self) -> f32 {
        self.to_acc()
    }
    #[inline(always)]
    fn from_wide(v: f32) -> Self {
        Self::from_acc(v)
    }
    #[inline(always)]
    fn to_acc(self) -> f32 {
        oxtorch_core::half_convert::bf16_to_f32(self)
    }
    #[inline(always)]
    fn from_acc(v: f32) -> Self {
        oxtorch_core::half_convert::f32_to_bf16(v)
    }
}

/// Python's floor division for floats, with torch's rounding fix-ups (`div_floor`).
#[inline(always)]
pub fn floor_div<A: AccFloat>(a: A, b: A) -> A {
    if b == A::ZERO {
        return a / b;
    }
    let m = a.fmod(b);
    let mut div = (a - m) / b;
    if m != A::ZERO && ((b < A::ZERO) != (m < A::ZERO)) {
        div = div - A::ONE;
    }
    if div != A::ZERO {
        let mut fl = div.floor();
        if div - fl > A::ONE / (A::ONE + A::ONE) {
            fl = fl + A::ONE;
        }
        fl
    } else {
        A::ZERO.copysign(a / b)
    }
}

/// Python's `%` for floats: the result takes the sign of `b`.
#[inline(always)]
pub fn remainder<A: AccFloat>(a: A, b: A) -> A {
    let m = a.fmod(b);
    if m != A::ZERO && ((b < A::ZERO) != (m < A::ZERO)) {
        m + b
    } else {
        m
    }
}
