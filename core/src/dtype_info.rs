//! Numerical limits of the dtypes: torch's `torch.finfo` and `torch.iinfo`.

use std::fmt;

use crate::dtype::DType;
use crate::error::{Error, Result};

/// The limits of a float dtype (torch's `torch.finfo`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FInfo {
    /// Number of bits of the type.
    pub bits: u32,
    /// The difference between 1.0 and the next representable value.
    pub eps: f64,
    /// The largest finite value.
    pub max: f64,
    /// The most negative finite value (`-max`).
    pub min: f64,
    /// The smallest positive normal value (an alias of `smallest_normal`).
    pub tiny: f64,
    /// The smallest positive normal value.
    pub smallest_normal: f64,
    /// The approximate decimal resolution, `10^-precision`.
    pub resolution: f64,
    /// The dtype described.
    pub dtype: DType,
}

/// The limits of an integer dtype (torch's `torch.iinfo`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IInfo {
    /// Number of bits of the type.
    pub bits: u32,
    /// The largest value.
    pub max: i64,
    /// The smallest value.
    pub min: i64,
    /// The dtype described.
    pub dtype: DType,
}

/// torch's `torch.finfo(dtype)`: the limits of a float dtype; other dtypes are torch's error.
pub fn finfo(dtype: DType) -> Result<FInfo> {
    let (bits, eps, max, normal, resolution) = match dtype {
        DType::F16 => (16, 0.0009765625, 65504.0, 6.103515625e-05, 0.001),
        DType::BF16 => (16, 0.0078125, 3.3895313892515355e38, 1.1754943508222875e-38, 0.01),
        DType::F32 => (32, f32::EPSILON as f64, f32::MAX as f64, f32::MIN_POSITIVE as f64, 1e-6),
        DType::F64 => (64, f64::EPSILON, f64::MAX, f64::MIN_POSITIVE, 1e-15),
        _ => {
            return Err(Error::msg(
                "torch.finfo() requires a floating point input type. Use torch.iinfo to handle 'torch.finfo'",
            ));
        }
    };
    Ok(FInfo { bits, eps, max, min: -max, tiny: normal, smallest_normal: normal, resolution, dtype })
}

/// torch's `torch.iinfo(dtype)`: the limits of an integer dtype; bool and floats are torch's
/// errors.
pub fn iinfo(dtype: DType) -> Result<IInfo> {
    let (bits, min, max) = match dtype {
        DType::U8 => (8, 0, u8::MAX as i64),
        DType::I8 => (8, i8::MIN as i64, i8::MAX as i64),
        DType::I16 => (16, i16::MIN as i64, i16::MAX as i64),
        DType::I32 => (32, i32::MIN as i64, i32::MAX as i64),
        DType::I64 => (64, i64::MIN, i64::MAX),
        DType::Bool => return Err(Error::msg("torch.bool is not supported by torch.iinfo")),
        _ => {
            return Err(Error::msg(
                "torch.iinfo() requires an integer input type. Use torch.finfo to handle 'torch.iinfo'",
            ));
        }
    };
    Ok(IInfo { bits, max, min, dtype })
}

/// Drops the trailing zeros (and a trailing point) of a decimal.
fn strip_zeros(s: &str) -> &str {
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.')
    } else {
        s
    }
}

/// C's `%g` (six significant digits), which torch's finfo/iinfo reprs use.
pub(crate) fn format_g(v: f64) -> String {
    if v.is_nan() {
        return "nan".into();
    }
    if v.is_infinite() {
        return if v > 0.0 { "inf".into() } else { "-inf".into() };
    }
    if v == 0.0 {
        return if v.is_sign_negative() { "-0".into() } else { "0".into() };
    }
    let sci = format!("{v:.5e}");
    let (mantissa, exp) = sci.split_once('e').unwrap_or((sci.as_str(), "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    if (-4..6).contains(&exp) {
        let fixed = format!("{:.*}", (5 - exp) as usize, v);
        strip_zeros(&fixed).to_string()
    } else {
        format!("{}e{}{:02}", strip_zeros(mantissa), if exp < 0 { '-' } else { '+' }, exp.abs())
    }
}

impl fmt::Display for FInfo {
    /// torch's repr: `finfo(resolution=1e-06, min=-3.40282e+38, ..., dtype=float32)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "finfo(resolution={}, min={}, max={}, eps={}, smallest_normal={}, tiny={}, dtype={})",
            format_g(self.resolution),
            format_g(self.min),
            format_g(self.max),
            format_g(self.eps),
            format_g(self.smallest_normal),
            format_g(self.tiny),
            self.dtype.name()
        )
    }
}

impl fmt::Display for IInfo {
    /// torch's repr: `iinfo(min=-128, max=127, dtype=int8)` (limits printed as C's `%g`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "iinfo(min={}, max={}, dtype={})",
            format_g(self.min as f64),
            format_g(self.max as f64),
            self.dtype.name()
        )
    }
}
