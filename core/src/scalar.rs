//! Python-like scalars.

use std::fmt;

use half::{bf16, f16};

use crate::dtype::DType;

/// A number passed to an op the way Python passes one to torch: a bool, an integer or a float.
///
/// In type promotion a scalar is a "wrapped number": it does not raise a tensor's dtype within the same
/// category (`f16_tensor + 1.0` stays f16) but does lift the category (`int_tensor * 2.5` is float).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Scalar {
    /// A Python `bool`.
    Bool(bool),
    /// A Python `int`.
    Int(i64),
    /// A Python `float`.
    Float(f64),
}

impl Scalar {
    /// The dtype this scalar has as a wrapped number: bool, int64 or the default float dtype.
    pub fn wrapped_dtype(self) -> DType {
        match self {
            Scalar::Bool(_) => DType::Bool,
            Scalar::Int(_) => DType::I64,
            Scalar::Float(_) => DType::default_float(),
        }
    }

    /// The natural dtype of the value at full precision: bool, int64 or float64.
    pub fn natural_dtype(self) -> DType {
        match self {
            Scalar::Bool(_) => DType::Bool,
            Scalar::Int(_) => DType::I64,
            Scalar::Float(_) => DType::F64,
        }
    }

    /// The value as f64.
    pub fn to_f64(self) -> f64 {
        match self {
            Scalar::Bool(b) => b as i64 as f64,
            Scalar::Int(i) => i as f64,
            Scalar::Float(f) => f,
        }
    }

    /// The value as i64 (floats truncate toward zero).
    pub fn to_i64(self) -> i64 {
        match self {
            Scalar::Bool(b) => b as i64,
            Scalar::Int(i) => i,
            Scalar::Float(f) => f as i64,
        }
    }

    /// The value as bool (non-zero is true).
    pub fn to_bool(self) -> bool {
        match self {
            Scalar::Bool(b) => b,
            Scalar::Int(i) => i != 0,
            Scalar::Float(f) => f != 0.0,
        }
    }

    /// True for a float scalar.
    pub fn is_float(self) -> bool {
        matches!(self, Scalar::Float(_))
    }

    /// Checks that the value can be stored in `dtype` as torch's `fill_`, `full`, `where` and
    /// constant `pad` require (c10's `checked_convert`): integers within the
    /// dtype's range (unsigned ones also take down to `-max`, wrapping as two's complement), floats
    /// into an integer dtype finite and from its lowest up to below `max + 1`, floats into float32
    /// finite-or-infinite but not beyond its range. Half types and bool take anything (torch fills
    /// them through float and `!= 0`). Binary ops do not check (`u8 + 300` wraps).
    pub fn check_fits(self, dtype: DType) -> crate::Result<()> {
        let int_range = |dt: DType| -> Option<(i64, i64)> {
            Some(match dt {
                DType::U8 => (0, u8::MAX as i64),
                DType::I8 => (i8::MIN as i64, i8::MAX as i64),
                DType::I16 => (i16::MIN as i64, i16::MAX as i64),
                DType::I32 => (i32::MIN as i64, i32::MAX as i64),
                DType::I64 => (i64::MIN, i64::MAX),
                _ => return None,
            })
        };
        let fits = match (self, int_range(dtype)) {
            (Scalar::Bool(_), _) => true,
            (Scalar::Int(i), Some((0, hi))) => i <= hi && i >= -hi,
            (Scalar::Int(i), Some((lo, hi))) => (lo..=hi).contains(&i),
            (Scalar::Float(f), Some((lo, hi))) => f.is_finite() && f >= lo as f64 && f < hi as f64 + 1.0,
            (Scalar::Float(f), None) if dtype == DType::F32 => !f.is_finite() || f.abs() <= f32::MAX as f64,
            _ => true,
        };
        if fits {
            return Ok(());
        }
        let cpp = match dtype {
            DType::U8 => "uint8_t",
            DType::I8 => "int8_t",
            DType::I16 => "int16_t",
            DType::I32 => "int",
            DType::I64 => "int64_t",
            _ => "float",
        };
        Err(crate::Error::msg(format!("value cannot be converted to type {cpp} without overflow")))
    }

    /// torch's checked conversion of a number to an op's element type (`Scalar::to<T>`, as
    /// `clamp` bounds, `masked_fill`/`index_fill` values and `pow` exponents take it): as
    /// [`Scalar::check_fits`], and a finite number beyond float16's or bfloat16's largest value
    /// overflows those too (where `full` and `fill_` round it to infinity).
    pub fn check_converts(self, dtype: DType) -> crate::Result<()> {
        let limit = match dtype {
            DType::F16 => Some((f16::MAX.to_f64(), "c10::Half")),
            DType::BF16 => Some((bf16::MAX.to_f64(), "c10::BFloat16")),
            _ => None,
        };
        match (self, limit) {
            (Scalar::Float(f), Some((max, cpp))) if f.is_finite() && f.abs() > max => {
                Err(crate::Error::msg(format!("value cannot be converted to type {cpp} without overflow")))
            }
            (Scalar::Int(i), Some((max, cpp))) if (i as f64).abs() > max => {
                Err(crate::Error::msg(format!("value cannot be converted to type {cpp} without overflow")))
            }
            _ => self.check_fits(dtype),
        }
    }
}

impl fmt::Display for Scalar {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Scalar::Bool(b) => write!(f, "{}", if *b { "True" } else { "False" }),
            Scalar::Int(i) => write!(f, "{i}"),
            Scalar::Float(x) => write!(f, "{x}"),
        }
    }
}

macro_rules! from_int {
    ($($t:ty),*) => {$(
        impl From<$t> for Scalar {
            fn from(v: $t) -> Self { Scalar::Int(v as i64) }
        }
    )*};
}
from_int!(u8, i8, i16, u16, i32, u32, i64, usize, isize);

impl From<bool> for Scalar {
    fn from(v: bool) -> Self {
        Scalar::Bool(v)
    }
}
impl From<f32> for Scalar {
    fn from(v: f32) -> Self {
        Scalar::Float(v as f64)
    }
}
impl From<f64> for Scalar {
    fn from(v: f64) -> Self {
        Scalar::Float(v)
    }
}
impl From<f16> for Scalar {
    fn from(v: f16) -> Self {
        Scalar::Float(v.to_f64())
    }
}
impl From<bf16> for Scalar {
    fn from(v: bf16) -> Self {
        Scalar::Float(v.to_f64())
    }
}
