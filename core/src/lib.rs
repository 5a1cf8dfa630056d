//! # oxtorch-core
//!
//! The vocabulary every other oxtorch crate speaks:
//!
//! * [`DType`] and [`Element`]: the runtime element types and their Rust counterparts;
//! * [`Device`]: where a tensor lives (`cpu`, `tpu:N`, `xla:N`);
//! * [`Shape`] and [`Layout`]: sizes, strides and storage offset of a strided view;
//! * [`Scalar`]: a Python-like number (bool, integer or float) passed to ops;
//! * [`ops`]: the primitive op vocabulary that backends execute, the XLA backend lowers,
//!   tracing records and autograd formulas are written in;
//! * [`BackendStorage`]: the small contract a backend implements;
//! * [`Error`]: torch-like error messages.
//!
//! This crate holds no tensor and runs no kernel; see `oxtorch-tensor` and the backends.

pub mod backend;
pub mod device;
pub mod dtype;
pub mod dtype_info;
pub mod element;
pub mod error;
pub mod half_convert;
pub mod layout;
pub mod memory_format;
pub mod ops;
pub mod promote;
pub mod scalar;
pub mod shape;

pub use backend::BackendStorage;
pub use device::{Device, DeviceKind};
pub use dtype::DType;
pub use dtype_info::{finfo, iinfo, FInfo, IInfo};
pub use element::Element;
pub use error::{Error, Result};
pub use layout::Layout;
pub use memory_format::MemoryFormat;
pub use promote::{promote_types, ResultTypeState};
pub use scalar::Scalar;
pub use shape::{broadcast_shapes, checked_numel, wrap_dim, Dim, Shape};

/// Half-precision float types re-exported from the `half` crate.
pub use half::{bf16, f16};
