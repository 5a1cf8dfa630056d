//! # oxtorch-tensor
//!
//! The [`Tensor`]: one type with a runtime dtype and device, strided views that share storage,
//! in-place ops with a version counter, broadcasting and torch's type promotion.
//!
//! Every op is a method returning [`Result`] with a torch-like message; the operator forms
//! (`&a + &b`) panic with the same message. Computation reaches a backend through one path,
//! `dispatch::apply`, which runs a primitive op ([`oxtorch_core::ops::Prim`]).
//!
//! ```
//! use oxtorch_tensor::{tensor, Tensor, DType};
//! # fn main() -> oxtorch_tensor::Result<()> {
//! let a = tensor!([[1.0, 2.0], [3.0, 4.0]]);
//! let b = Tensor::ones([2], DType::F32)?;
//! let c = a.matmul(&b)?.add(0.5)?;            // [3.5, 7.5]
//! assert_eq!(c.to_vec::<f32>()?, vec![3.5, 7.5]);
//! let v = a.t()?;                             // a view: shares a's storage
//! v.select(0, 0)?.fill_(0.0)?;                // writes through to `a`
//! assert_eq!(a.to_vec::<f32>()?, vec![0.0, 2.0, 0.0, 4.0]);
//! # Ok(()) }
//! ```

pub mod autocast;
pub mod autograd;
mod convert;
mod create;
pub mod determinism;
mod dims;
mod dispatch;
mod display;
mod dynamic;
mod indexing;
mod literal;
mod memory_format;
#[cfg(feature = "ndarray")]
mod ndarray_conv;
mod ops;
mod options;
mod print;
pub mod random;
mod std_ops;
mod storage;
mod tensor;
pub mod testing;
mod view;
mod vmap;

pub use autograd::{grad, no_grad, GradFn, NoGradGuard};
pub use dims::{IntoDims, SliceRange};
pub use indexing::{Ellipsis, IntoIndices, NewAxis, TensorIndex};
pub use literal::TensorLiteral;
pub use ops::linalg_api as linalg;
pub use ops::{get_default_device, set_default_device};
pub use ops::{trusted_indices, AdamScalars, NestedList, Operand, Padding};
pub use options::{TensorOptions, ToTarget};
pub use print::{get_printoptions, set_printoptions, with_printoptions, PrintOptions};
pub use random::{default_generator, manual_seed, Generator};
pub use tensor::Tensor;
pub use vmap::{vmap, vmap1, vmap_with, Randomness, VmapOptions};

pub use oxtorch_backend_cpu::malloc::{tune_process_allocator, AllocatorTuning};
pub use oxtorch_backend_cpu::AlignedAllocator;
pub use oxtorch_backend_cpu::{CpuElement, SharedBytes};
pub use oxtorch_backend_tpu::xla::step_boundary as xla_step_boundary;
pub use oxtorch_core::ops::{ArgReduceOp, BinaryOp, CmpOp, ReduceOp, UnaryOp};
pub use oxtorch_core::{
    bf16, f16, promote_types, DType, Device, Element, Error, Layout, MemoryFormat, Result, Scalar, Shape,
};
