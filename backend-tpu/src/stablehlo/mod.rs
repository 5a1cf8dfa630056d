//! A StableHLO text emitter (generic op syntax) and the lowering of primitive ops to it.
//!
//! The generic form (`%1 = "stablehlo.add"(%a, %b) : (t, t) -> t`) is used throughout: every op
//! spells out its full type, so nothing depends on a plugin's type inference or on the custom
//! assembly formats, which change between StableHLO versions.
//!
//! [`lower`] is the one entry point: it dispatches each [`oxtorch_core::ops::Prim`] family to its
//! file (`elementwise`/`unary`/`binary`/`softmax`, `cast` for where/cast/copy/full, `reduce`,
//! `matmul`, `shape`, `index`, `nn` and `cross_entropy`, `sort`), built on the typed helpers of `emit`. Every lowering
//! follows the CPU backend's semantics (which are torch's); a prim whose output size depends on the
//! data, or whose result among ties follows an unstable C++ algorithm (topk, kthvalue, mode), or a
//! dtype the CPU backend refuses, returns [`crate::pjrt::Error::Unsupported`] instead of a program.

mod binary;
mod builder;
mod cast;
mod cross_entropy;
mod elementwise;
mod emit;
mod host_call;
mod index;
mod lower;
mod matmul;
mod nn;
mod reduce;
mod shape;
mod softmax;
mod sort;
mod unary;

pub use builder::{literal, FunctionBuilder, Value};
pub use cross_entropy::{host_cross_entropy, host_cross_entropy_target};
pub use elementwise::{
    binary_program, compare_program, lower_binary, lower_compare, lower_unary, unary_program,
};
pub use emit::{array, dense_padding, is_float};
pub use host_call::{HostOffset, HostOperand, HostView};
pub use lower::{lower, prim_program};
pub use matmul::{host_matmul_target, host_product};
