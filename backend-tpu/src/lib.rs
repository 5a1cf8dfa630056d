//! # oxtorch-backend-tpu
//!
//! The XLA backend: tensors on `tpu:N` (libtpu) and `xla:N` (any PJRT plugin named by
//! `OXTORCH_PJRT_PLUGIN`, such as the OpenXLA CPU plugin or the CUDA plugin).
//!
//! - [`pjrt`]: our own safe layer over the PJRT C API (plugins, clients, buffers, executables).
//! - [`stablehlo`]: the StableHLO emitter; each [`oxtorch_core::ops::Prim`] lowers through one
//!   entry point, [`stablehlo::lower`].
//! - [`xla`]: the eager runtime. [`xla::XlaStorage`] implements [`oxtorch_core::BackendStorage`];
//!   each prim runs as a program compiled once per (prim, parameters, input layouts and dtypes,
//!   device) and cached; scalars are program inputs, so new values never recompile; prims without a
//!   lowering run on the host and are counted in [`xla::metrics`].

pub mod compiler;
pub mod pjrt;
pub mod stablehlo;
pub mod xla;
