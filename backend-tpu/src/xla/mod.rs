//! The eager XLA runtime: tensors on `xla:N` and `tpu:N`.
//!
//! - [`registry`]: one lazily opened PJRT client per device kind, device lookup, client options.
//! - [`XlaStorage`]: a flat 1-D device buffer, the backend's [`oxtorch_core::BackendStorage`].
//! - `execute`: one prim = one cached program over the inputs' flat buffers; `materialize` turns a
//!   strided view into a dense value inside the program; `cache` keys programs by (prim with its
//!   parameters, input dtypes/lengths/layouts, device) without allocating on a hit.
//! - `write`: `copy_`/`fill_` through a view as a program that computes the new flat buffer.
//! - Prims without a StableHLO lowering (and data-dependent shapes such as `nonzero`) run on the
//!   host with the CPU kernels; [`metrics`] counts them with compiles, cache hits and transfers.
//!
//! Results stay on the device; only reading values (`to_vec`, `item`, printing, `.to("cpu")`)
//! copies to the host. Launches are not awaited: PJRT orders dependent work, and a download waits.

mod cache;
pub mod dynamic;
mod execute;
mod grid_box;
mod host_block;
mod host_ffi;
pub(crate) mod host_kernels;
pub mod lazy;
mod materialize;
pub mod metrics;
mod program;
pub mod registry;
mod scalar_args;
mod storage;
mod transfer;
mod write;

pub use cache::cached_programs;
pub use lazy::{
    compile, detected_period, mode, set_mode, set_repeat_detection, step_boundary, sync, take_recorded,
    with_mode, Mode, ModeGuard, Recorded,
};
pub use metrics::{metrics, Metrics};
pub use registry::{device_count, set_client_options};
pub use storage::XlaStorage;

/// A PJRT-layer error as an oxtorch error.
pub(crate) fn pjrt_err(e: crate::pjrt::Error) -> oxtorch_core::Error {
    oxtorch_core::Error::msg(e.to_string())
}
