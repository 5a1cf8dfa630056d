//! Errors with torch-like messages.

use crate::dtype::DType;

/// The result type of every fallible oxtorch call.
pub type Result<T> = std::result::Result<T, Error>;

/// An oxtorch error. `Display` gives a message in the style of PyTorch's.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum Error {
    /// Two shapes that must broadcast do not.
    #[error(
        "The size of tensor a ({a}) must match the size of tensor b ({b}) at non-singleton dimension {dim}"
    )]
    BroadcastMismatch {
        /// size of the first tensor at `dim`
        a: usize,
        /// size of the second tensor at `dim`
        b: usize,
        /// the dimension, counted from the left of the broadcast result
        dim: usize,
    },
    /// A dimension index outside `[-rank, rank-1]`.
    #[error("Dimension out of range (expected to be in range of [{min}, {max}], but got {dim})")]
    DimOutOfRange {
        /// the dimension asked for
        dim: isize,
        /// lowest valid value
        min: isize,
        /// highest valid value
        max: isize,
    },
    /// An index outside a dimension.
    #[error("index {index} is out of bounds for dimension {dim} with size {size}")]
    IndexOutOfRange {
        /// the index asked for
        index: isize,
        /// the dimension indexed
        dim: usize,
        /// its size
        size: usize,
    },
    /// An op that does not support a dtype.
    #[error("\"{op}\" not implemented for '{}'", dtype.scalar_type_name())]
    UnsupportedDType {
        /// the op's name
        op: &'static str,
        /// the dtype it refused
        dtype: DType,
    },
    /// Two dtypes that had to be equal are not.
    #[error("{op}: expected both tensors to have the same dtype, but got {a} and {b}")]
    DTypeMismatch {
        /// the op's name
        op: &'static str,
        /// first dtype
        a: DType,
        /// second dtype
        b: DType,
    },
    /// A shape that does not fit, with the full message.
    #[error("{0}")]
    Shape(String),
    /// Anything else, with the full message.
    #[error("{0}")]
    Msg(String),
}

impl Error {
    /// An error with a free-form message.
    pub fn msg(m: impl Into<String>) -> Self {
        Error::Msg(m.into())
    }

    /// A shape error with a free-form message.
    pub fn shape(m: impl Into<String>) -> Self {
        Error::Shape(m.into())
    }
}

/// Returns early with an [`Error::Msg`] built like `format!`.
#[macro_export]
macro_rules! bail {
    ($($arg:tt)*) => {
        return Err($crate::Error::msg(format!($($arg)*)))
    };
}
