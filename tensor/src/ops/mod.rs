//! Tensor ops built on the prims: type promotion and broadcasting happen here, then one prim runs.

mod compare;
mod elementwise;
mod inplace;
mod matmul;
mod operand;
mod reduce;

pub use operand::Operand;
