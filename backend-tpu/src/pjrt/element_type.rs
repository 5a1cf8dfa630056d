//! Element types of PJRT buffers and StableHLO tensors.

use std::fmt;

use oxtorch_core::DType;

/// The element types oxtorch moves through PJRT (`PJRT_Buffer_Type` values).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ElementType {
    /// `PRED`: bool, one byte (0 or 1); StableHLO `i1`.
    Pred,
    /// `S8`; StableHLO `i8`.
    S8,
    /// `S16`; StableHLO `i16`.
    S16,
    /// `S32`; StableHLO `i32`.
    S32,
    /// `S64`; StableHLO `i64`.
    S64,
    /// `U8`; StableHLO `ui8`.
    U8,
    /// `U16`; StableHLO `ui16`.
    U16,
    /// `U32`; StableHLO `ui32`.
    U32,
    /// `U64`; StableHLO `ui64`.
    U64,
    /// `F16`; StableHLO `f16`.
    F16,
    /// `BF16`; StableHLO `bf16`.
    BF16,
    /// `F32`; StableHLO `f32`.
    F32,
    /// `F64`; StableHLO `f64`.
    F64,
}

impl ElementType {
    /// Every supported type.
    pub const ALL: [ElementType; 13] = [
        ElementType::Pred,
        ElementType::S8,
        ElementType::S16,
        ElementType::S32,
        ElementType::S64,
        ElementType::U8,
        ElementType::U16,
        ElementType::U32,
        ElementType::U64,
        ElementType::F16,
        ElementType::BF16,
        ElementType::F32,
        ElementType::F64,
    ];

    /// The `PJRT_Buffer_Type` value.
    pub fn to_raw(self) -> i32 {
        match self {
            ElementType::Pred => 1,
            ElementType::S8 => 2,
            ElementType::S16 => 3,
            ElementType::S32 => 4,
            ElementType::S64 => 5,
            ElementType::U8 => 6,
            ElementType::U16 => 7,
            ElementType::U32 => 8,
            ElementType::U64 => 9,
            ElementType::F16 => 10,
            ElementType::F32 => 11,
            ElementType::F64 => 12,
            ElementType::BF16 => 13,
        }
    }

    /// The type of a `PJRT_Buffer_Type` value, `None` for types oxtorch does not handle.
    pub fn from_raw(raw: i32) -> Option<ElementType> {
        ElementType::ALL.into_iter().find(|t| t.to_raw() == raw)
    }

    /// Bytes per element on the host.
    pub fn size_in_bytes(self) -> usize {
        match self {
            ElementType::Pred | ElementType::S8 | ElementType::U8 => 1,
            ElementType::S16 | ElementType::U16 | ElementType::F16 | ElementType::BF16 => 2,
            ElementType::S32 | ElementType::U32 | ElementType::F32 => 4,
            ElementType::S64 | ElementType::U64 | ElementType::F64 => 8,
        }
    }

    /// The StableHLO spelling, e.g. `f32`, `i1`, `ui32`.
    pub fn mlir_name(self) -> &'static str {
        match self {
            ElementType::Pred => "i1",
            ElementType::S8 => "i8",
            ElementType::S16 => "i16",
            ElementType::S32 => "i32",
            ElementType::S64 => "i64",
            ElementType::U8 => "ui8",
            ElementType::U16 => "ui16",
            ElementType::U32 => "ui32",
            ElementType::U64 => "ui64",
            ElementType::F16 => "f16",
            ElementType::BF16 => "bf16",
            ElementType::F32 => "f32",
            ElementType::F64 => "f64",
        }
    }

    /// Parses a StableHLO element type (signless or `si` integers).
    pub fn from_mlir_name(name: &str) -> Option<ElementType> {
        let name = match name {
            "si8" => "i8",
            "si16" => "i16",
            "si32" => "i32",
            "si64" => "i64",
            other => other,
        };
        ElementType::ALL.into_iter().find(|t| t.mlir_name() == name)
    }

    /// The oxtorch dtype stored with this element type, if any (unsigned 16/32/64-bit have none).
    pub fn dtype(self) -> Option<DType> {
        Some(match self {
            ElementType::Pred => DType::Bool,
            ElementType::S8 => DType::I8,
            ElementType::S16 => DType::I16,
            ElementType::S32 => DType::I32,
            ElementType::S64 => DType::I64,
            ElementType::U8 => DType::U8,
            ElementType::F16 => DType::F16,
            ElementType::BF16 => DType::BF16,
            ElementType::F32 => DType::F32,
            ElementType::F64 => DType::F64,
            ElementType::U16 | ElementType::U32 | ElementType::U64 => return None,
        })
    }
}

impl From<DType> for ElementType {
    fn from(dtype: DType) -> Self {
        match dtype {
            DType::Bool => ElementType::Pred,
            DType::U8 => ElementType::U8,
            DType::I8 => ElementType::S8,
            DType::I16 => ElementType::S16,
            DType::I32 => ElementType::S32,
            DType::I64 => ElementType::S64,
            DType::F16 => ElementType::F16,
            DType::BF16 => ElementType::BF16,
            DType::F32 => ElementType::F32,
            DType::F64 => ElementType::F64,
        }
    }
}

impl fmt::Display for ElementType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.mlir_name())
    }
}

/// A tensor type: element type and dimensions (row-major), e.g. `tensor<2x3xf32>`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct TensorType {
    /// The element type.
    pub element_type: ElementType,
    /// The dimensions; empty for a 0-d scalar.
    pub dims: Vec<i64>,
}

impl TensorType {
    /// A tensor type.
    pub fn new(element_type: ElementType, dims: &[i64]) -> Self {
        TensorType { element_type, dims: dims.to_vec() }
    }
}

impl fmt::Display for TensorType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("tensor<")?;
        for d in &self.dims {
            write!(f, "{d}x")?;
        }
        write!(f, "{}>", self.element_type)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn raw_values_follow_the_header_enum() {
        assert_eq!(ElementType::Pred.to_raw(), 1);
        assert_eq!(ElementType::F32.to_raw(), 11);
        assert_eq!(ElementType::BF16.to_raw(), 13);
        for t in ElementType::ALL {
            assert_eq!(ElementType::from_raw(t.to_raw()), Some(t));
            assert_eq!(ElementType::from_mlir_name(t.mlir_name()), Some(t));
        }
        assert_eq!(ElementType::from_raw(0), None);
        assert_eq!(ElementType::from_raw(14), None);
    }

    #[test]
    fn every_dtype_has_an_element_type_of_its_size() {
        for dtype in DType::ALL {
            let t = ElementType::from(dtype);
            assert_eq!(t.dtype(), Some(dtype));
            assert_eq!(t.size_in_bytes(), dtype.size_in_bytes());
        }
    }

    #[test]
    fn tensor_types_print_as_mlir() {
        assert_eq!(TensorType::new(ElementType::F32, &[2, 3]).to_string(), "tensor<2x3xf32>");
        assert_eq!(TensorType::new(ElementType::Pred, &[]).to_string(), "tensor<i1>");
    }
}
