//! oxtorch's own layer over the PJRT C API (`pjrt_c_api.h`).
//!
//! - [`Plugin`]: `dlopen` + `GetPjrtApi` + version checks + `PJRT_Plugin_Initialize`; attributes.
//!   Plugins are loaded once per path and never unloaded.
//! - [`Client`]: `PJRT_Client_Create` with [`ClientOptions`]; its [`Device`]s.
//! - [`Buffer`]: host bytes to device and back, with type and shape checked before each call.
//! - [`Executable`]: StableHLO text compiled with [`CompileOptions`], executed with arguments
//!   checked against `@main`'s signature (the CPU plugin silently runs mismatched buffers).
//! - [`open_client`]: device discovery for `tpu` and `xla`.
//!
//! Every handle is destroyed by `Drop`, every `PJRT_Error` becomes an [`Error`] with its code and
//! message, and every event is awaited or destroyed.

mod buffer;
mod client;
mod discovery;
mod element_type;
mod error;
mod event;
mod executable;
pub mod ffi;
mod ffi_extension;
mod plugin;
mod signature;

pub use buffer::Buffer;
pub use client::{Client, ClientOptions, Device, OptionValue};
pub use discovery::{open_client, plugin_path, TPU_LIBRARY_VAR, XLA_PLUGIN_VAR};
pub use element_type::{ElementType, TensorType};
pub use error::{Error, ErrorCode, Result};
pub use event::Event;
pub use executable::{CompileOptions, Executable};
pub use ffi_extension::FfiHandler;
pub use plugin::{AttributeValue, Plugin};
pub use signature::{parse_main_signature, parse_tensor_type, Signature};
