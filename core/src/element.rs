//! Rust element types and their conversions, following torch's casting rules.

use std::fmt::Debug;

use half::{bf16, f16};

use crate::dtype::DType;
use crate::scalar::Scalar;

/// A Rust type that stores one element of a [`DType`].
///
/// Conversions follow torch (c10's `static_cast_with_inter_type`): float to integer truncates toward
/// zero and wraps through int64 (so `-1.0` as uint8 is 255), integer to integer wraps, anything to bool
/// is `!= 0` (NaN is true), float to narrower float rounds to nearest even.
pub trait Element: Copy + Send + Sync + PartialEq + PartialOrd + Debug + Default + 'static {
    /// The runtime dtype of this type.
    const DTYPE: DType;
    /// Zero of this type.
    const ZERO: Self;
    /// One of this type.
    const ONE: Self;
    /// Converts to f64 (exact for every type but large int64).
    fn to_f64(self) -> f64;
    /// Converts to i64 (floats truncate toward zero, saturating).
    fn to_i64(self) -> i64;
    /// Converts from f64 with torch's float-to-`Self` rule.
    fn from_f64(v: f64) -> Self;
    /// Converts from i64 with torch's integer-to-`Self` rule.
    fn from_i64(v: i64) -> Self;
    /// The value as a [`Scalar`] of its category.
    fn to_scalar(self) -> Scalar;
    /// Converts a scalar into this type with torch's rules.
    fn from_scalar(s: Scalar) -> Self {
        match s {
            Scalar::Bool(b) => Self::from_i64(b as i64),
            Scalar::Int(i) => Self::from_i64(i),
            Scalar::Float(f) => Self::from_f64(f),
        }
    }
    /// Converts from another element type with torch's casting rules.
    #[inline(always)]
    fn cast_from<S: Element>(v: S) -> Self {
        if S::DTYPE.is_float() {
            Self::from_f64(v.to_f64())
        } else {
            Self::from_i64(v.to_i64())
        }
    }
}

macro_rules! int_element {
    ($t:ty, $d:ident) => {
        impl Element for $t {
            const DTYPE: DType = DType::$d;
            const ZERO: Self = 0;
            const ONE: Self = 1;
            #[inline(always)]
            fn to_f64(self) -> f64 {
                self as f64
            }
            #[inline(always)]
            fn to_i64(self) -> i64 {
                self as i64
            }
            #[inline(always)]
            fn from_f64(v: f64) -> Self {
                (v as i64) as $t
            }
            #[inline(always)]
            fn from_i64(v: i64) -> Self {
                v as $t
            }
            fn to_scalar(self) -> Scalar {
                Scalar::Int(self as i64)
            }
        }
    };
}
int_element!(u8, U8);
int_element!(i8, I8);
int_element!(i16, I16);
int_element!(i32, I32);
int_element!(i64, I64);

impl Element for bool {
    const DTYPE: DType = DType::Bool;
    const ZERO: Self = false;
    const ONE: Self = true;
    #[inline(always)]
    fn to_f64(self) -> f64 {
        self as i64 as f64
    }
    #[inline(always)]
    fn to_i64(self) -> i64 {
        self as i64
    }
    #[inline(always)]
    fn from_f64(v: f64) -> Self {
        v != 0.0
    }
    #[inline(always)]
    fn from_i64(v: i64) -> Self {
        v != 0
    }
    fn to_scalar(self) -> Scalar {
        Scalar::Bool(self)
    }
}

impl Element for f32 {
    const DTYPE: DType = DType::F32;
    const ZERO: Self = 0.0;
    const ONE: Self = 1.0;
    #[inline(always)]
    fn to_f64(self) -> f64 {
        self as f64
    }
    #[inline(always)]
    fn to_i64(self) -> i64 {
        self as i64
    }
    #[inline(always)]
    fn from_f64(v: f64) -> Self {
        v as f32
    }
    #[inline(always)]
    fn from_i64(v: i64) -> Self {
        v as f32
    }
    fn to_scalar(self) -> Scalar {
        Scalar::Float(self as f64)
    }
}

impl Element for f64 {
    const DTYPE: DType = DType::F64;
    const ZERO: Self = 0.0;
    const ONE: Self = 1.0;
    #[inline(always)]
    fn to_f64(self) -> f64 {
        self
    }
    #[inline(always)]
    fn to_i64(self) -> i64 {
        self as i64
    }
    #[inline(always)]
    fn from_f64(v: f64) -> Self {
        v
    }
    #[inline(always)]
    fn from_i64(v: i64) -> Self {
        v as f64
    }
    fn to_scalar(self) -> Scalar {
        Scalar::Float(self)
    }
}

macro_rules! half_element {
    ($t:ty, $d:ident, $to_f32:path, $from_f32:path) => {
        impl Element for $t {
            const DTYPE: DType = DType::$d;
            const ZERO: Self = <$t>::ZERO;
            const ONE: Self = <$t>::ONE;
            #[inline(always)]
            fn to_f64(self) -> f64 {
                f64::from($to_f32(self))
            }
            #[inline(always)]
            fn to_i64(self) -> i64 {
                $to_f32(self) as i64
            }
            /// Through f32, rounding to nearest even there and again to the half type (as torch's
            /// casts from float64 do): `half`'s direct `bf16::from_f64` (2.7) misrounds values just
            /// above a tie, such as 63.62502 (0x427E8005) to 63.5 instead of 63.75.
            #[inline(always)]
            fn from_f64(v: f64) -> Self {
                $from_f32(v as f32)
            }
            #[inline(always)]
            fn from_i64(v: i64) -> Self {
                $from_f32(v as f32)
            }
            fn to_scalar(self) -> Scalar {
                Scalar::Float(f64::from($to_f32(self)))
            }
        }
    };
}
// Through our vectorisable conversions (see `half_convert`).
half_element!(f16, F16, crate::half_convert::f16_to_f32, crate::half_convert::f32_to_f16);
half_element!(bf16, BF16, crate::half_convert::bf16_to_f32, crate::half_convert::f32_to_bf16);

#[cfg(test)]
mod tests {
    use super::*;

    /// Every f32 reaches a half type by the same rounding from `f32` and from `f64`.
    #[test]
    fn half_types_from_f64_round_as_from_f32() {
        let just_above_a_tie = f32::from_bits(0x427E_8005); // 63.62502: bf16 63.75, not 63.5
        assert_eq!(<bf16 as Element>::from_f64(just_above_a_tie as f64), bf16::from_f32(just_above_a_tie));
        assert_eq!(<bf16 as Element>::from_f64(just_above_a_tie as f64).to_f32(), 63.75);
        let mut x: u32 = 12345;
        for _ in 0..200_000 {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            let v = f32::from_bits(x);
            let b = <bf16 as Element>::from_f64(v as f64);
            assert!(b.to_bits() == bf16::from_f32(v).to_bits() || (v.is_nan() && b.is_nan()), "{v:e}");
            let h = <f16 as Element>::from_f64(v as f64);
            assert!(h.to_bits() == f16::from_f32(v).to_bits() || (v.is_nan() && h.is_nan()), "{v:e}");
        }
    }
}
