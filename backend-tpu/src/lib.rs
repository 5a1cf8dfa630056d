//! # oxtorch-backend-tpu
//!
//! The XLA backend: tensors on `tpu:N` (libtpu) and `xla:N` (any PJRT plugin named by
//! `OXTORCH_PJRT_PLUGIN`, such as the OpenXLA CPU plugin or the CUDA plugin).
//!
//! Plan (see `ARCHITECTURE.md`): an XLA storage implements [`oxtorch_core::BackendStorage`]; each
//! [`oxtorch_core::ops::Prim`] lowers to a StableHLO function, compiled once per (prim, parameters,
//! input shapes and dtypes) through the PJRT C API and cached. The same lowering serves the deferred
//! and traced modes, where many prims form one program. Until it lands, tensors can name these
//! devices but creating or moving a tensor there returns a clear error.

pub mod compiler;
pub mod pjrt;
pub mod stablehlo;
