//! Runtime element types.

use std::fmt;
use std::str::FromStr;
use std::sync::atomic::{AtomicU8, Ordering};

use crate::error::{Error, Result};

/// The element type of a tensor, chosen at runtime (torch's `torch.dtype`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum DType {
    /// `torch.bool`
    Bool,
    /// `torch.uint8`
    U8,
    /// `torch.int8`
    I8,
    /// `torch.int16`
    I16,
    /// `torch.int32`
    I32,
    /// `torch.int64`
    I64,
    /// `torch.float16`
    F16,
    /// `torch.bfloat16`
    BF16,
    /// `torch.float32`
    F32,
    /// `torch.float64`
    F64,
}

impl DType {
    /// Every dtype, in promotion order.
    pub const ALL: [DType; 10] = [
        DType::Bool,
        DType::U8,
        DType::I8,
        DType::I16,
        DType::I32,
        DType::I64,
        DType::F16,
        DType::BF16,
        DType::F32,
        DType::F64,
    ];

    /// Size of one element in bytes.
    pub const fn size_in_bytes(self) -> usize {
        match self {
            DType::Bool | DType::U8 | DType::I8 => 1,
            DType::I16 | DType::F16 | DType::BF16 => 2,
            DType::I32 | DType::F32 => 4,
            DType::I64 | DType::F64 => 8,
        }
    }

    /// True for f16, bf16, f32 and f64 (torch's `is_floating_point`).
    #[inline]
    pub const fn is_float(self) -> bool {
        matches!(self, DType::F16 | DType::BF16 | DType::F32 | DType::F64)
    }

    /// True for the integer dtypes (not bool).
    pub const fn is_int(self) -> bool {
        matches!(self, DType::U8 | DType::I8 | DType::I16 | DType::I32 | DType::I64)
    }

    /// True for bool.
    pub const fn is_bool(self) -> bool {
        matches!(self, DType::Bool)
    }

    /// True for dtypes that can hold negative values.
    pub const fn is_signed(self) -> bool {
        !matches!(self, DType::Bool | DType::U8)
    }

    /// torch's name without the `torch.` prefix: `float32`, `int64`, `bfloat16`, ...
    pub const fn name(self) -> &'static str {
        match self {
            DType::Bool => "bool",
            DType::U8 => "uint8",
            DType::I8 => "int8",
            DType::I16 => "int16",
            DType::I32 => "int32",
            DType::I64 => "int64",
            DType::F16 => "float16",
            DType::BF16 => "bfloat16",
            DType::F32 => "float32",
            DType::F64 => "float64",
        }
    }

    /// The name torch uses in kernel error messages (`Float`, `Long`, `Half`, ...).
    pub const fn scalar_type_name(self) -> &'static str {
        match self {
            DType::Bool => "Bool",
            DType::U8 => "Byte",
            DType::I8 => "Char",
            DType::I16 => "Short",
            DType::I32 => "Int",
            DType::I64 => "Long",
            DType::F16 => "Half",
            DType::BF16 => "BFloat16",
            DType::F32 => "Float",
            DType::F64 => "Double",
        }
    }

    /// The default float dtype (`torch.get_default_dtype()`): float32 unless
    /// [`DType::set_default_float`] changed it. Creation functions without a dtype, Python-like
    /// float numbers in type promotion, and integer inputs of float-only ops use it.
    pub fn default_float() -> DType {
        DType::ALL[DEFAULT_FLOAT.load(Ordering::Relaxed) as usize]
    }

    /// Sets the process-wide default float dtype (`torch.set_default_dtype`); only float dtypes
    /// are accepted, as in torch. Like torch's, the setting is global: set it at start-up, not
    /// while other threads create tensors.
    pub fn set_default_float(dtype: DType) -> Result<()> {
        if !dtype.is_float() {
            return Err(Error::msg("only floating-point types are supported as the default type"));
        }
        let index = DType::ALL.iter().position(|&d| d == dtype).expect("every dtype is in ALL");
        DEFAULT_FLOAT.store(index as u8, Ordering::Relaxed);
        Ok(())
    }
}

/// The index in [`DType::ALL`] of the default float dtype (float32 at start).
static DEFAULT_FLOAT: AtomicU8 = AtomicU8::new(8);

impl fmt::Display for DType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "torch.{}", self.name())
    }
}

impl FromStr for DType {
    type Err = Error;

    /// Parses torch names (`float32`, `torch.bfloat16`, `half`, `long`) and short forms (`f32`, `bf16`, `i64`).
    fn from_str(s: &str) -> Result<Self> {
        let s = s.strip_prefix("torch.").unwrap_or(s);
        Ok(match s {
            "bool" => DType::Bool,
            "uint8" | "u8" => DType::U8,
            "int8" | "i8" => DType::I8,
            "int16" | "short" | "i16" => DType::I16,
            "int32" | "int" | "i32" => DType::I32,
            "int64" | "long" | "i64" => DType::I64,
            "float16" | "half" | "f16" => DType::F16,
            "bfloat16" | "bf16" => DType::BF16,
            "float32" | "float" | "f32" => DType::F32,
            "float64" | "double" | "f64" => DType::F64,
            _ => return Err(Error::msg(format!("unknown dtype '{s}'"))),
        })
    }
}
