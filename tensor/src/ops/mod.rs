//! Tensor ops built on the prims: type promotion and broadcasting happen here, then one prim runs.
//!
//! One file per op family; each family's prims are listed in `core/src/ops/<family>.rs` and run by
//! `backend-cpu/src/<family>/`.

mod activation;
mod aliases;
mod compare;
mod composite;
mod default_device;
mod elementwise;
mod index;
mod inplace;
mod inplace_aliases;
mod inplace_variants;
mod inplace_views;
mod linalg;
mod matmul;
mod matrix_aliases;
mod nn;
mod operand;
mod optim;
mod reduce;
mod resize;
mod scatter_variants;
mod shape;
mod sort;
mod stats;
mod strides_and_complex;
mod view_copies;
mod view_dtype;

pub use default_device::{get_default_device, set_default_device};
pub use index::trusted_indices;
pub(crate) use index::untrusted_indices;
pub use linalg::api as linalg_api;
pub(crate) use linalg::cpp_name;
pub use nn::Padding;
pub use operand::Operand;
pub use optim::AdamScalars;
pub use strides_and_complex::NestedList;
