//! # oxtorch-backend-cpu
//!
//! The CPU backend: a [`CpuStorage`] buffer per tensor and kernels for every [`Prim`] over strided,
//! broadcast inputs of every dtype.
//!
//! How a kernel is built:
//! * [`walk`] coalesces the operands' layouts and splits the output's flat index range into chunks run
//!   on rayon's pool; each chunk is walked as runs along the innermost dim, and runs whose operands are
//!   all unit-stride take a slice fast path that the compiler vectorises;
//! * [`simd`] compiles those slice loops a second time for AVX2 and AVX-512 and picks one at runtime;
//! * f16 and bf16 compute in f32 and round once per op, as torch does on CPU.
//!
//! [`Prim`]: oxtorch_core::ops::Prim

// Kernels walk several operands with one index; iterator rewrites of those loops read worse.
#![allow(clippy::needless_range_loop)]

mod aligned;
pub mod aligned_alloc;
mod arg_reduce;
mod binary;
pub mod buffer;
mod compare;
mod copy;
mod float;
mod gemm_amx;
pub mod gemm_bf16;
pub mod gemm_f32_avx2;
mod gemv;
mod gemv_bf16;
mod gemv_f32;
mod gemv_half;
mod gemv_x86;
mod hugepage;
mod index;
mod int;
pub mod malloc;
mod math;
mod matmul;
mod nn;
pub mod optim;
pub mod par;
pub mod pool;
mod reduce;
mod shape;
pub mod simd;
mod sort;
mod storage;
mod transpose;
mod unary;
pub mod walk;
mod where_cond;

pub use aligned_alloc::AlignedAllocator;
pub use buffer::{Buffer, SharedBytes};
pub use matmul::{matmul_slices, matmul_slices_into, SliceMatmul};
pub use nn::cross_entropy::CrossEntropyRows;
pub use storage::{CpuElement, CpuStorage};
