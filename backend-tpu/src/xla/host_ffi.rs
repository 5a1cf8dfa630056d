//! The XLA FFI calling convention (`xla/ffi/api/c_api.h`, API 0.1), as far as a host kernel
//! needs it: the call frame with its buffer arguments and results, the metadata query XLA makes
//! when a handler is registered, and error values. Bound by hand; [`call`] turns a frame into
//! slices and dims for a safe Rust kernel, so the unsafe part stays in this file.

use std::ffi::{c_char, c_int, c_void, CString};

/// `XLA_FFI_Extension_Base`.
#[repr(C)]
struct ExtensionBase {
    struct_size: usize,
    type_: c_int,
    next: *mut ExtensionBase,
}

/// `XLA_FFI_Extension_Metadata` in `XLA_FFI_Extension_Type`.
const EXTENSION_METADATA: c_int = 1;

/// `XLA_FFI_Api_Version`.
#[repr(C)]
struct ApiVersion {
    struct_size: usize,
    extension_start: *mut ExtensionBase,
    major_version: c_int,
    minor_version: c_int,
}

/// `XLA_FFI_Metadata`: what a handler reports about itself.
#[repr(C)]
struct Metadata {
    struct_size: usize,
    api_version: ApiVersion,
    traits: u32,
}

/// `XLA_FFI_Metadata_Extension`.
#[repr(C)]
struct MetadataExtension {
    base: ExtensionBase,
    metadata: *mut Metadata,
}

/// `XLA_FFI_Args` and `XLA_FFI_Rets` (same layout): `size` entries, each a buffer.
#[repr(C)]
struct List {
    struct_size: usize,
    extension_start: *mut ExtensionBase,
    size: i64,
    types: *const c_int,
    values: *const *mut c_void,
}

/// `XLA_FFI_Attrs`.
#[repr(C)]
struct Attrs {
    struct_size: usize,
    extension_start: *mut ExtensionBase,
    size: i64,
    types: *const c_int,
    names: *const *const c_void,
    attrs: *const *mut c_void,
}

/// `XLA_FFI_CallFrame`.
#[repr(C)]
pub(crate) struct CallFrame {
    struct_size: usize,
    extension_start: *mut ExtensionBase,
    api: *const Api,
    ctx: *mut c_void,
    stage: c_int,
    args: List,
    rets: List,
    attrs: Attrs,
    future: *mut c_void,
}

/// `XLA_FFI_ExecutionStage_EXECUTE`.
const STAGE_EXECUTE: c_int = 3;

/// `XLA_FFI_ArgType_BUFFER` / `XLA_FFI_RetType_BUFFER`.
const BUFFER: c_int = 1;

/// `XLA_FFI_Buffer`.
#[repr(C)]
struct RawBuffer {
    struct_size: usize,
    extension_start: *mut ExtensionBase,
    dtype: c_int,
    data: *mut c_void,
    rank: i64,
    dims: *const i64,
}

/// `XLA_FFI_Error_Create_Args`.
#[repr(C)]
struct ErrorCreateArgs {
    struct_size: usize,
    extension_start: *mut ExtensionBase,
    message: *const c_char,
    errc: c_int,
}

/// `XLA_FFI_Error_Code_INTERNAL`, `..._INVALID_ARGUMENT`.
const ERROR_INTERNAL: c_int = 13;
const ERROR_INVALID_ARGUMENT: c_int = 3;

/// The head of `XLA_FFI_Api`, up to the entry point used here.
#[repr(C)]
struct Api {
    struct_size: usize,
    extension_start: *mut ExtensionBase,
    api_version: ApiVersion,
    internal_api: *mut c_void,
    error_create: Option<unsafe extern "C" fn(args: *mut ErrorCreateArgs) -> *mut c_void>,
}

/// The `XLA_FFI_DataType` of each element type a host kernel takes.
pub(crate) const S64: c_int = 5;
pub(crate) const F32: c_int = 11;
pub(crate) const F64: c_int = 12;

/// One buffer argument or result of a call: its data and dims.
pub(crate) struct BufferRef {
    pub dtype: c_int,
    pub data: *mut c_void,
    pub dims: Vec<usize>,
}

impl BufferRef {
    /// The number of elements.
    pub fn numel(&self) -> usize {
        self.dims.iter().product()
    }
}

/// Why a host kernel refused a call (its arguments, as XLA's `INVALID_ARGUMENT`).
pub(crate) struct Failure(pub String);

/// Runs `kernel` on the buffer arguments and results of `frame`, answering XLA's metadata query
/// and its non-execute stages itself, and turning a failure or a panic into an XLA FFI error.
///
/// # Safety
/// `frame` must be the call frame XLA passed to a handler.
pub(crate) unsafe fn call(
    frame: *mut CallFrame,
    kernel: impl FnOnce(&[BufferRef], &[BufferRef]) -> Result<(), Failure>,
) -> *mut c_void {
    // SAFETY (whole body): XLA passes a valid frame; its lists hold `size` entries of the given
    // types, and each buffer entry is an `XLA_FFI_Buffer` with `rank` dims.
    unsafe {
        let frame = &*frame;
        let mut ext = frame.extension_start;
        while !ext.is_null() {
            if (*ext).type_ == EXTENSION_METADATA {
                let meta = &mut *(*(ext as *mut MetadataExtension)).metadata;
                meta.api_version.major_version = 0;
                meta.api_version.minor_version = 1;
                meta.traits = 0;
                return std::ptr::null_mut();
            }
            ext = (*ext).next;
        }
        if frame.stage != STAGE_EXECUTE {
            return std::ptr::null_mut();
        }
        let read = |list: &List| -> Option<Vec<BufferRef>> {
            (0..list.size.max(0) as usize)
                .map(|i| {
                    if *list.types.add(i) != BUFFER {
                        return None;
                    }
                    let b = &*(*list.values.add(i) as *const RawBuffer);
                    let dims =
                        (0..b.rank.max(0) as usize).map(|d| (*b.dims.add(d)).max(0) as usize).collect();
                    Some(BufferRef { dtype: b.dtype, data: b.data, dims })
                })
                .collect()
        };
        let (Some(args), Some(rets)) = (read(&frame.args), read(&frame.rets)) else {
            return error(
                frame,
                ERROR_INVALID_ARGUMENT,
                "oxtorch host kernel: a non-buffer argument or result",
            );
        };
        match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| kernel(&args, &rets))) {
            Ok(Ok(())) => std::ptr::null_mut(),
            Ok(Err(Failure(m))) => error(frame, ERROR_INVALID_ARGUMENT, &m),
            Err(_) => error(frame, ERROR_INTERNAL, "oxtorch host kernel panicked"),
        }
    }
}

/// An XLA FFI error with `message`, made through the frame's API table.
unsafe fn error(frame: &CallFrame, code: c_int, message: &str) -> *mut c_void {
    let text = CString::new(message.replace('\0', " ")).unwrap_or_default();
    let mut args = ErrorCreateArgs {
        struct_size: std::mem::offset_of!(ErrorCreateArgs, errc) + std::mem::size_of::<c_int>(),
        extension_start: std::ptr::null_mut(),
        message: text.as_ptr(),
        errc: code,
    };
    // SAFETY: the frame's API table is XLA's; `Error_Create` copies the message.
    unsafe {
        match frame.api.as_ref().and_then(|api| api.error_create) {
            Some(create) => create(&mut args),
            // No way to report it: XLA would take a NULL for success, so stop here instead.
            None => std::process::abort(),
        }
    }
}
