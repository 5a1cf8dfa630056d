//! The PJRT FFI extension (`pjrt_c_api_ffi_extension.h`): registering an XLA FFI handler, a host
//! function that programs call through `stablehlo.custom_call` (typed FFI, `api_version = 4`).
//!
//! Bound by hand from the extension's header and checked against the 0.81 CPU plugin's machine
//! code, whose argument struct differs from the published headers; plugins of another API
//! version are not asked. Only `register_handler` is called.

use std::ffi::{c_char, c_int, c_void};

use super::error::{Error, Result};
use super::ffi::PJRT_Error;
use super::plugin::Plugin;

/// `PJRT_Extension_Type_FFI` in the `PJRT_Extension_Type` enum.
const EXTENSION_TYPE_FFI: c_int = 5;

/// `PJRT_Extension_Base` with its fields: every extension starts with it, linked through `next`.
#[repr(C)]
struct ExtensionBase {
    struct_size: usize,
    type_: c_int,
    next: *const ExtensionBase,
}

/// `PJRT_FFI_Register_Handler_Args` as the PJRT 0.81 CPU plugin reads it (from its machine
/// code: no `extension_start`, and no `api_version` field any more, every handler being typed).
#[repr(C)]
struct RegisterHandlerArgs {
    struct_size: usize,
    target_name: *const c_char,
    target_name_size: usize,
    handler: *mut c_void,
    platform_name: *const c_char,
    platform_name_size: usize,
    traits: c_int,
}

/// `PJRT_FFI_Extension`: its base, then three entry points.
#[repr(C)]
struct FfiExtension {
    base: ExtensionBase,
    type_id_register: *const c_void,
    user_data_add: *const c_void,
    register_handler: Option<unsafe extern "C" fn(args: *mut RegisterHandlerArgs) -> *mut PJRT_Error>,
}

/// An XLA FFI handler: `XLA_FFI_Error* handler(XLA_FFI_CallFrame*)`.
pub type FfiHandler = unsafe extern "C" fn(call_frame: *mut c_void) -> *mut c_void;

impl Plugin {
    /// The plugin's FFI extension, when it has one.
    fn ffi_extension(&self) -> Option<&FfiExtension> {
        let mut at = self.api().extension_start as *const ExtensionBase;
        // SAFETY: the extension chain is owned by the plugin, which is never unloaded; each
        // entry starts with `PJRT_Extension_Base`, and the FFI one is a `PJRT_FFI_Extension`.
        unsafe {
            while !at.is_null() {
                if (*at).type_ == EXTENSION_TYPE_FFI {
                    return Some(&*(at as *const FfiExtension));
                }
                at = (*at).next;
            }
        }
        None
    }

    /// Registers `handler` as the typed XLA FFI handler of custom-call target `target` on
    /// `platform` (`"Host"` for the CPU plugin). Programs compiled afterwards may call it.
    ///
    /// # Safety
    /// `handler` must implement the XLA FFI calling convention for every call frame XLA passes
    /// (including the metadata query made at registration) and must stay callable for the life
    /// of the process.
    pub unsafe fn register_ffi_handler(
        &'static self,
        target: &str,
        platform: &str,
        handler: FfiHandler,
    ) -> Result<()> {
        // The argument struct changed between header versions without a major version bump; a
        // plugin reading another layout would take a wrong string length and abort the process.
        if self.api_version() != (0, 81) {
            return Err(Error::Unsupported(format!(
                "FFI handlers are registered only with PJRT API 0.81 plugins (the layout bound here), the plugin has {:?}",
                self.api_version()
            )));
        }
        let register = self.ffi_extension().and_then(|e| e.register_handler).ok_or_else(|| {
            Error::Unsupported(format!("the plugin {} has no FFI extension", self.path().display()))
        })?;
        let mut args = RegisterHandlerArgs {
            struct_size: std::mem::size_of::<RegisterHandlerArgs>(),
            target_name: target.as_ptr().cast(),
            target_name_size: target.len(),
            handler: handler as *mut c_void,
            platform_name: platform.as_ptr().cast(),
            platform_name_size: platform.len(),
            traits: 0,
        };
        // SAFETY: `args` is a complete `PJRT_FFI_Register_Handler_Args` whose strings outlive the
        // call (the plugin copies them); the caller vouches for `handler`.
        let error = unsafe { register(&mut args) };
        if error.is_null() {
            return Ok(());
        }
        // SAFETY: `error` is a live error returned by this plugin.
        let e = unsafe { self.take_error("PJRT_FFI_Register_Handler", error) };
        Err(Error::Unsupported(format!("registering the FFI handler {target}: {e}")))
    }
}
