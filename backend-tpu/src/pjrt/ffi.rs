//! Hand-written bindings for the parts of `pjrt_c_api.h` that oxtorch calls.
//!
//! Written from the header shipped in the `xla-cpu-pjrt` 0.0.1 wheel (PJRT C API 0.81). Every
//! `*_Args` struct starts with `struct_size` and `extension_start`; `struct_size` must be the
//! header's `X_STRUCT_SIZE` (offset of the last field plus its size), which [`Args::STRUCT_SIZE`]
//! computes the same way. Plugins reject a smaller size and accept a larger one, so binding an
//! older header works with newer plugins.
//!
//! [`Api`] reproduces the whole function table in header order (the position of a field is its
//! ABI); the entries oxtorch does not call are typed `ApiFn<c_void>` and never used.
#![allow(non_camel_case_types, non_snake_case, missing_docs)]

use std::ffi::{c_char, c_int, c_void};

/// `PJRT_API_MAJOR` of the bound header: a plugin with another major version is refused.
pub const API_MAJOR: i32 = 0;
/// `PJRT_API_MINOR` of the bound header (informational: newer minors are compatible).
pub const API_MINOR: i32 = 81;

/// Opaque handles.
#[repr(C)]
pub struct PJRT_Error {
    _private: [u8; 0],
}
#[repr(C)]
pub struct PJRT_Event {
    _private: [u8; 0],
}
#[repr(C)]
pub struct PJRT_Client {
    _private: [u8; 0],
}
#[repr(C)]
pub struct PJRT_Device {
    _private: [u8; 0],
}
#[repr(C)]
pub struct PJRT_DeviceDescription {
    _private: [u8; 0],
}
#[repr(C)]
pub struct PJRT_Buffer {
    _private: [u8; 0],
}
#[repr(C)]
pub struct PJRT_Executable {
    _private: [u8; 0],
}
#[repr(C)]
pub struct PJRT_LoadedExecutable {
    _private: [u8; 0],
}

/// `PJRT_Extension_Base`: never followed by oxtorch, always passed as NULL.
#[repr(C)]
pub struct PJRT_Extension_Base {
    _private: [u8; 0],
}

/// A PJRT entry point: `PJRT_Error* fn(Args*)` (NULL means success).
pub type ApiFn<A> = Option<unsafe extern "C" fn(args: *mut A) -> *mut PJRT_Error>;
/// The two entry points that return nothing.
pub type VoidFn<A> = Option<unsafe extern "C" fn(args: *mut A)>;

/// A `*_Args` struct: `STRUCT_SIZE` is the header's `X_STRUCT_SIZE`.
pub trait Args: Sized {
    /// Offset of the last field plus its size, as `PJRT_STRUCT_SIZE` computes it.
    const STRUCT_SIZE: usize;

    /// An all-zero struct (NULL pointers, zero sizes) with `struct_size` set.
    fn new() -> Self;
}

/// Declares a `#[repr(C)]` args struct whose first two fields are `struct_size` and
/// `extension_start`, and implements [`Args`] from its last field.
macro_rules! pjrt_args {
    ($name:ident { $($field:ident : $ty:ty),* $(,)? } last = $last:ident : $last_ty:ty) => {
        #[repr(C)]
        pub struct $name {
            pub struct_size: usize,
            pub extension_start: *mut PJRT_Extension_Base,
            $(pub $field: $ty,)*
        }
        impl Args for $name {
            const STRUCT_SIZE: usize = std::mem::offset_of!($name, $last) + std::mem::size_of::<$last_ty>();
            fn new() -> Self {
                // SAFETY: every field is an integer, a raw pointer, a union of those, or an
                // `Option` of a function pointer, for all of which all-zero bytes are valid.
                let mut args: Self = unsafe { std::mem::zeroed() };
                args.struct_size = Self::STRUCT_SIZE;
                args
            }
        }
    };
}

pjrt_args!(PJRT_Api_Version { major_version: c_int, minor_version: c_int } last = minor_version: c_int);

// ---- errors ----------------------------------------------------------------------------------

pjrt_args!(PJRT_Error_Destroy_Args { error: *mut PJRT_Error } last = error: *mut PJRT_Error);
pjrt_args!(PJRT_Error_Message_Args {
    error: *const PJRT_Error,
    message: *const c_char,
    message_size: usize,
} last = message_size: usize);
pjrt_args!(PJRT_Error_GetCode_Args { error: *const PJRT_Error, code: c_int } last = code: c_int);

// ---- named values, plugin --------------------------------------------------------------------

/// `PJRT_NamedValue_Type`.
pub const NAMED_VALUE_STRING: c_int = 0;
pub const NAMED_VALUE_INT64: c_int = 1;
pub const NAMED_VALUE_INT64_LIST: c_int = 2;
pub const NAMED_VALUE_FLOAT: c_int = 3;
pub const NAMED_VALUE_BOOL: c_int = 4;

/// The anonymous value union of `PJRT_NamedValue`.
#[repr(C)]
#[derive(Clone, Copy)]
pub union PJRT_NamedValue_Value {
    pub string_value: *const c_char,
    pub int64_value: i64,
    pub int64_array_value: *const i64,
    pub float_value: f32,
    pub bool_value: bool,
}

pjrt_args!(PJRT_NamedValue {
    name: *const c_char,
    name_size: usize,
    type_: c_int,
    value: PJRT_NamedValue_Value,
    value_size: usize,
} last = value_size: usize);

pjrt_args!(PJRT_Plugin_Initialize_Args {} last = extension_start: *mut PJRT_Extension_Base);
pjrt_args!(PJRT_Plugin_Attributes_Args {
    attributes: *const PJRT_NamedValue,
    num_attributes: usize,
} last = num_attributes: usize);

// ---- events ----------------------------------------------------------------------------------

pjrt_args!(PJRT_Event_Destroy_Args { event: *mut PJRT_Event } last = event: *mut PJRT_Event);
pjrt_args!(PJRT_Event_Await_Args { event: *mut PJRT_Event } last = event: *mut PJRT_Event);

// ---- client and devices ----------------------------------------------------------------------

pjrt_args!(PJRT_Client_Create_Args {
    create_options: *const PJRT_NamedValue,
    num_options: usize,
    kv_get_callback: *mut c_void,
    kv_get_user_arg: *mut c_void,
    kv_put_callback: *mut c_void,
    kv_put_user_arg: *mut c_void,
    client: *mut PJRT_Client,
    kv_try_get_callback: *mut c_void,
    kv_try_get_user_arg: *mut c_void,
} last = kv_try_get_user_arg: *mut c_void);
pjrt_args!(PJRT_Client_Destroy_Args { client: *mut PJRT_Client } last = client: *mut PJRT_Client);
pjrt_args!(PJRT_Client_PlatformName_Args {
    client: *mut PJRT_Client,
    platform_name: *const c_char,
    platform_name_size: usize,
} last = platform_name_size: usize);
pjrt_args!(PJRT_Client_PlatformVersion_Args {
    client: *mut PJRT_Client,
    platform_version: *const c_char,
    platform_version_size: usize,
} last = platform_version_size: usize);
pjrt_args!(PJRT_Client_AddressableDevices_Args {
    client: *mut PJRT_Client,
    addressable_devices: *const *mut PJRT_Device,
    num_addressable_devices: usize,
} last = num_addressable_devices: usize);
pjrt_args!(PJRT_Device_GetDescription_Args {
    device: *mut PJRT_Device,
    device_description: *mut PJRT_DeviceDescription,
} last = device_description: *mut PJRT_DeviceDescription);
pjrt_args!(PJRT_DeviceDescription_Id_Args {
    device_description: *mut PJRT_DeviceDescription,
    id: c_int,
} last = id: c_int);
pjrt_args!(PJRT_DeviceDescription_Kind_Args {
    device_description: *mut PJRT_DeviceDescription,
    device_kind: *const c_char,
    device_kind_size: usize,
} last = device_kind_size: usize);

// ---- compile ---------------------------------------------------------------------------------

pjrt_args!(PJRT_Program {
    code: *mut c_char,
    code_size: usize,
    format: *const c_char,
    format_size: usize,
} last = format_size: usize);
pjrt_args!(PJRT_Client_Compile_Args {
    client: *mut PJRT_Client,
    program: *const PJRT_Program,
    compile_options: *const c_char,
    compile_options_size: usize,
    executable: *mut PJRT_LoadedExecutable,
} last = executable: *mut PJRT_LoadedExecutable);

// ---- buffers ---------------------------------------------------------------------------------

/// `PJRT_HostBufferSemantics_kImmutableUntilTransferCompletes`: the host data must stay valid
/// until `done_with_host_buffer` fires (oxtorch awaits it before returning). Unlike the zero-copy
/// modes, that event does not wait for the buffer to be destroyed.
pub const HOST_BUFFER_IMMUTABLE_UNTIL_TRANSFER_COMPLETES: c_int = 1;

pjrt_args!(PJRT_Client_BufferFromHostBuffer_Args {
    client: *mut PJRT_Client,
    data: *const c_void,
    type_: c_int,
    dims: *const i64,
    num_dims: usize,
    byte_strides: *const i64,
    num_byte_strides: usize,
    host_buffer_semantics: c_int,
    device: *mut PJRT_Device,
    memory: *mut c_void,
    device_layout: *mut c_void,
    done_with_host_buffer: *mut PJRT_Event,
    buffer: *mut PJRT_Buffer,
} last = buffer: *mut PJRT_Buffer);
/// The `on_delete_callback` of a view: called with the viewed memory and the user argument once
/// the plugin is done with it.
pub type OnDelete = Option<unsafe extern "C" fn(device_buffer_ptr: *mut c_void, user_arg: *mut c_void)>;
pjrt_args!(PJRT_Client_CreateViewOfDeviceBuffer_Args {
    client: *mut PJRT_Client,
    device_buffer_ptr: *mut c_void,
    dims: *const i64,
    num_dims: usize,
    element_type: c_int,
    layout: *mut c_void,
    device: *mut PJRT_Device,
    on_delete_callback: OnDelete,
    on_delete_callback_arg: *mut c_void,
    stream: isize,
    buffer: *mut PJRT_Buffer,
    memory: *mut c_void,
} last = memory: *mut c_void);
pjrt_args!(PJRT_Buffer_Destroy_Args { buffer: *mut PJRT_Buffer } last = buffer: *mut PJRT_Buffer);
pjrt_args!(PJRT_Buffer_ReadyEvent_Args {
    buffer: *mut PJRT_Buffer,
    event: *mut PJRT_Event,
} last = event: *mut PJRT_Event);
pjrt_args!(PJRT_Buffer_ElementType_Args { buffer: *mut PJRT_Buffer, type_: c_int } last = type_: c_int);
pjrt_args!(PJRT_Buffer_Dimensions_Args {
    buffer: *mut PJRT_Buffer,
    dims: *const i64,
    num_dims: usize,
} last = num_dims: usize);
pjrt_args!(PJRT_Buffer_Device_Args {
    buffer: *mut PJRT_Buffer,
    device: *mut PJRT_Device,
} last = device: *mut PJRT_Device);
pjrt_args!(PJRT_Buffer_ToHostBuffer_Args {
    src: *mut PJRT_Buffer,
    host_layout: *mut c_void,
    dst: *mut c_void,
    dst_size: usize,
    event: *mut PJRT_Event,
} last = event: *mut PJRT_Event);

// ---- executables -----------------------------------------------------------------------------

pjrt_args!(PJRT_LoadedExecutable_Destroy_Args {
    executable: *mut PJRT_LoadedExecutable,
} last = executable: *mut PJRT_LoadedExecutable);
pjrt_args!(PJRT_LoadedExecutable_GetExecutable_Args {
    loaded_executable: *mut PJRT_LoadedExecutable,
    executable: *mut PJRT_Executable,
} last = executable: *mut PJRT_Executable);
pjrt_args!(PJRT_LoadedExecutable_AddressableDevices_Args {
    executable: *mut PJRT_LoadedExecutable,
    addressable_devices: *const *mut PJRT_Device,
    num_addressable_devices: usize,
} last = num_addressable_devices: usize);
pjrt_args!(PJRT_Executable_Destroy_Args { executable: *mut PJRT_Executable } last = executable: *mut PJRT_Executable);
pjrt_args!(PJRT_Executable_NumOutputs_Args {
    executable: *mut PJRT_Executable,
    num_outputs: usize,
} last = num_outputs: usize);
/// Opaque owner of the bytes returned by `PJRT_Executable_Serialize`.
#[repr(C)]
pub struct PJRT_SerializedExecutable {
    _private: [u8; 0],
}
pjrt_args!(PJRT_Executable_Serialize_Args {
    executable: *const PJRT_Executable,
    serialized_bytes: *const c_char,
    serialized_bytes_size: usize,
    serialized_executable: *mut PJRT_SerializedExecutable,
    serialized_executable_deleter: Option<unsafe extern "C" fn(exec: *mut PJRT_SerializedExecutable)>,
} last = serialized_executable_deleter: Option<unsafe extern "C" fn(exec: *mut PJRT_SerializedExecutable)>);
pjrt_args!(PJRT_Executable_DeserializeAndLoad_Args {
    client: *mut PJRT_Client,
    serialized_executable: *const c_char,
    serialized_executable_size: usize,
    loaded_executable: *mut PJRT_LoadedExecutable,
    overridden_serialized_compile_options: *const c_char,
    overridden_serialized_compile_options_size: usize,
} last = overridden_serialized_compile_options_size: usize);
pjrt_args!(PJRT_ExecuteOptions {
    send_callbacks: *mut c_void,
    recv_callbacks: *mut c_void,
    num_send_ops: usize,
    num_recv_ops: usize,
    launch_id: c_int,
    non_donatable_input_indices: *const i64,
    num_non_donatable_input_indices: usize,
    context: *mut c_void,
    call_location: *const c_char,
    num_tasks: usize,
    task_ids: *mut c_int,
    incarnation_ids: *mut i64,
} last = incarnation_ids: *mut i64);
pjrt_args!(PJRT_LoadedExecutable_Execute_Args {
    executable: *mut PJRT_LoadedExecutable,
    options: *mut PJRT_ExecuteOptions,
    argument_lists: *const *const *mut PJRT_Buffer,
    num_devices: usize,
    num_args: usize,
    output_lists: *const *mut *mut PJRT_Buffer,
    device_complete_events: *mut *mut PJRT_Event,
    execute_device: *mut PJRT_Device,
} last = execute_device: *mut PJRT_Device);

// ---- the function table ----------------------------------------------------------------------

type Unused = ApiFn<c_void>;

/// `PJRT_Api`, every field in header order.
#[repr(C)]
pub struct Api {
    pub struct_size: usize,
    pub extension_start: *mut PJRT_Extension_Base,
    pub pjrt_api_version: PJRT_Api_Version,

    pub PJRT_Error_Destroy: VoidFn<PJRT_Error_Destroy_Args>,
    pub PJRT_Error_Message: VoidFn<PJRT_Error_Message_Args>,
    pub PJRT_Error_GetCode: ApiFn<PJRT_Error_GetCode_Args>,

    pub PJRT_Plugin_Initialize: ApiFn<PJRT_Plugin_Initialize_Args>,
    pub PJRT_Plugin_Attributes: ApiFn<PJRT_Plugin_Attributes_Args>,

    pub PJRT_Event_Destroy: ApiFn<PJRT_Event_Destroy_Args>,
    pub PJRT_Event_IsReady: Unused,
    pub PJRT_Event_Error: Unused,
    pub PJRT_Event_Await: ApiFn<PJRT_Event_Await_Args>,
    pub PJRT_Event_OnReady: Unused,

    pub PJRT_Client_Create: ApiFn<PJRT_Client_Create_Args>,
    pub PJRT_Client_Destroy: ApiFn<PJRT_Client_Destroy_Args>,
    pub PJRT_Client_PlatformName: ApiFn<PJRT_Client_PlatformName_Args>,
    pub PJRT_Client_ProcessIndex: Unused,
    pub PJRT_Client_PlatformVersion: ApiFn<PJRT_Client_PlatformVersion_Args>,
    pub PJRT_Client_Devices: Unused,
    pub PJRT_Client_AddressableDevices: ApiFn<PJRT_Client_AddressableDevices_Args>,
    pub PJRT_Client_LookupDevice: Unused,
    pub PJRT_Client_LookupAddressableDevice: Unused,
    pub PJRT_Client_AddressableMemories: Unused,
    pub PJRT_Client_Compile: ApiFn<PJRT_Client_Compile_Args>,
    pub PJRT_Client_DefaultDeviceAssignment: Unused,
    pub PJRT_Client_BufferFromHostBuffer: ApiFn<PJRT_Client_BufferFromHostBuffer_Args>,

    pub PJRT_DeviceDescription_Id: ApiFn<PJRT_DeviceDescription_Id_Args>,
    pub PJRT_DeviceDescription_ProcessIndex: Unused,
    pub PJRT_DeviceDescription_Attributes: Unused,
    pub PJRT_DeviceDescription_Kind: ApiFn<PJRT_DeviceDescription_Kind_Args>,
    pub PJRT_DeviceDescription_DebugString: Unused,
    pub PJRT_DeviceDescription_ToString: Unused,

    pub PJRT_Device_GetDescription: ApiFn<PJRT_Device_GetDescription_Args>,
    pub PJRT_Device_IsAddressable: Unused,
    pub PJRT_Device_LocalHardwareId: Unused,
    pub PJRT_Device_AddressableMemories: Unused,
    pub PJRT_Device_DefaultMemory: Unused,
    pub PJRT_Device_MemoryStats: Unused,

    pub PJRT_Memory_Id: Unused,
    pub PJRT_Memory_Kind: Unused,
    pub PJRT_Memory_DebugString: Unused,
    pub PJRT_Memory_ToString: Unused,
    pub PJRT_Memory_AddressableByDevices: Unused,

    pub PJRT_Executable_Destroy: ApiFn<PJRT_Executable_Destroy_Args>,
    pub PJRT_Executable_Name: Unused,
    pub PJRT_Executable_NumReplicas: Unused,
    pub PJRT_Executable_NumPartitions: Unused,
    pub PJRT_Executable_NumOutputs: ApiFn<PJRT_Executable_NumOutputs_Args>,
    pub PJRT_Executable_SizeOfGeneratedCodeInBytes: Unused,
    pub PJRT_Executable_GetCostAnalysis: Unused,
    pub PJRT_Executable_OutputMemoryKinds: Unused,
    pub PJRT_Executable_OptimizedProgram: Unused,
    pub PJRT_Executable_Serialize: ApiFn<PJRT_Executable_Serialize_Args>,

    pub PJRT_LoadedExecutable_Destroy: ApiFn<PJRT_LoadedExecutable_Destroy_Args>,
    pub PJRT_LoadedExecutable_GetExecutable: ApiFn<PJRT_LoadedExecutable_GetExecutable_Args>,
    pub PJRT_LoadedExecutable_AddressableDevices: ApiFn<PJRT_LoadedExecutable_AddressableDevices_Args>,
    pub PJRT_LoadedExecutable_Delete: Unused,
    pub PJRT_LoadedExecutable_IsDeleted: Unused,
    pub PJRT_LoadedExecutable_Execute: ApiFn<PJRT_LoadedExecutable_Execute_Args>,
    pub PJRT_Executable_DeserializeAndLoad: ApiFn<PJRT_Executable_DeserializeAndLoad_Args>,
    pub PJRT_LoadedExecutable_Fingerprint: Unused,

    pub PJRT_Buffer_Destroy: ApiFn<PJRT_Buffer_Destroy_Args>,
    pub PJRT_Buffer_ElementType: ApiFn<PJRT_Buffer_ElementType_Args>,
    pub PJRT_Buffer_Dimensions: ApiFn<PJRT_Buffer_Dimensions_Args>,
    pub PJRT_Buffer_UnpaddedDimensions: Unused,
    pub PJRT_Buffer_DynamicDimensionIndices: Unused,
    pub PJRT_Buffer_GetMemoryLayout: Unused,
    pub PJRT_Buffer_OnDeviceSizeInBytes: Unused,
    pub PJRT_Buffer_Device: ApiFn<PJRT_Buffer_Device_Args>,
    pub PJRT_Buffer_Memory: Unused,
    pub PJRT_Buffer_Delete: Unused,
    pub PJRT_Buffer_IsDeleted: Unused,
    pub PJRT_Buffer_CopyToDevice: Unused,
    pub PJRT_Buffer_ToHostBuffer: ApiFn<PJRT_Buffer_ToHostBuffer_Args>,
    pub PJRT_Buffer_IsOnCpu: Unused,
    pub PJRT_Buffer_ReadyEvent: ApiFn<PJRT_Buffer_ReadyEvent_Args>,
    pub PJRT_Buffer_UnsafePointer: Unused,
    pub PJRT_Buffer_IncreaseExternalReferenceCount: Unused,
    pub PJRT_Buffer_DecreaseExternalReferenceCount: Unused,
    pub PJRT_Buffer_OpaqueDeviceMemoryDataPointer: Unused,

    pub PJRT_CopyToDeviceStream_Destroy: Unused,
    pub PJRT_CopyToDeviceStream_AddChunk: Unused,
    pub PJRT_CopyToDeviceStream_TotalBytes: Unused,
    pub PJRT_CopyToDeviceStream_GranuleSize: Unused,
    pub PJRT_CopyToDeviceStream_CurrentBytes: Unused,

    pub PJRT_TopologyDescription_Create: Unused,
    pub PJRT_TopologyDescription_Destroy: Unused,
    pub PJRT_TopologyDescription_PlatformName: Unused,
    pub PJRT_TopologyDescription_PlatformVersion: Unused,
    pub PJRT_TopologyDescription_GetDeviceDescriptions: Unused,
    pub PJRT_TopologyDescription_Serialize: Unused,
    pub PJRT_TopologyDescription_Attributes: Unused,

    pub PJRT_Compile: Unused,

    pub PJRT_Executable_OutputElementTypes: Unused,
    pub PJRT_Executable_OutputDimensions: Unused,
    pub PJRT_Buffer_CopyToMemory: Unused,
    pub PJRT_Client_CreateViewOfDeviceBuffer: ApiFn<PJRT_Client_CreateViewOfDeviceBuffer_Args>,
    pub PJRT_Executable_Fingerprint: Unused,
    pub PJRT_Client_TopologyDescription: Unused,
    pub PJRT_Executable_GetCompiledMemoryStats: Unused,
    pub PJRT_Memory_Kind_Id: Unused,
    pub PJRT_ExecuteContext_Create: Unused,
    pub PJRT_ExecuteContext_Destroy: Unused,
    pub PJRT_Buffer_CopyRawToHost: Unused,
    pub PJRT_AsyncHostToDeviceTransferManager_Destroy: Unused,
    pub PJRT_AsyncHostToDeviceTransferManager_TransferData: Unused,
    pub PJRT_Client_CreateBuffersForAsyncHostToDevice: Unused,
    pub PJRT_AsyncHostToDeviceTransferManager_RetrieveBuffer: Unused,
    pub PJRT_AsyncHostToDeviceTransferManager_Device: Unused,
    pub PJRT_AsyncHostToDeviceTransferManager_BufferCount: Unused,
    pub PJRT_AsyncHostToDeviceTransferManager_BufferSize: Unused,
    pub PJRT_AsyncHostToDeviceTransferManager_SetBufferError: Unused,
    pub PJRT_AsyncHostToDeviceTransferManager_AddMetadata: Unused,
    pub PJRT_Client_DmaMap: Unused,
    pub PJRT_Client_DmaUnmap: Unused,
    pub PJRT_Client_CreateUninitializedBuffer: Unused,
    pub PJRT_Client_UpdateGlobalProcessInfo: Unused,
    pub PJRT_TopologyDescription_Deserialize: Unused,
    pub PJRT_Client_CreateAliasBuffer: Unused,
    pub PJRT_Client_FulfillAliasBuffer: Unused,
    pub PJRT_LoadedExecutable_GetDeviceAssignment: Unused,
}

/// `PJRT_Api_STRUCT_SIZE` of the bound header.
pub const API_STRUCT_SIZE: usize =
    std::mem::offset_of!(Api, PJRT_LoadedExecutable_GetDeviceAssignment) + std::mem::size_of::<Unused>();

/// `const PJRT_Api* GetPjrtApi(void)`, the plugin's only exported symbol.
pub type GetPjrtApiFn = unsafe extern "C" fn() -> *const Api;

#[cfg(test)]
mod tests {
    use super::*;

    /// Values computed by a C compiler from the 0.81 header (x86-64 / aarch64 LP64).
    #[test]
    fn struct_sizes_match_the_header() {
        assert_eq!(PJRT_Error_GetCode_Args::STRUCT_SIZE, 28);
        assert_eq!(std::mem::size_of::<PJRT_Error_GetCode_Args>(), 32);
        assert_eq!(PJRT_Plugin_Initialize_Args::STRUCT_SIZE, 16);
        assert_eq!(PJRT_NamedValue::STRUCT_SIZE, 56);
        assert_eq!(PJRT_Client_Create_Args::STRUCT_SIZE, 88);
        assert_eq!(PJRT_Client_BufferFromHostBuffer_Args::STRUCT_SIZE, 120);
        assert_eq!(PJRT_Client_CreateViewOfDeviceBuffer_Args::STRUCT_SIZE, 112);
        assert_eq!(PJRT_ExecuteOptions::STRUCT_SIZE, 112);
        assert_eq!(PJRT_LoadedExecutable_Execute_Args::STRUCT_SIZE, 80);
        assert_eq!(PJRT_DeviceDescription_Id_Args::STRUCT_SIZE, 28);
        assert_eq!(PJRT_Api_Version::STRUCT_SIZE, 24);
        assert_eq!(PJRT_Buffer_ToHostBuffer_Args::STRUCT_SIZE, 56);
        assert_eq!(PJRT_Client_Compile_Args::STRUCT_SIZE, 56);
        assert_eq!(PJRT_Program::STRUCT_SIZE, 48);
        assert_eq!(PJRT_Buffer_Device_Args::STRUCT_SIZE, 32);
        assert_eq!(PJRT_LoadedExecutable_AddressableDevices_Args::STRUCT_SIZE, 40);
        assert_eq!(PJRT_Buffer_Dimensions_Args::STRUCT_SIZE, 40);
        assert_eq!(PJRT_Executable_Serialize_Args::STRUCT_SIZE, 56);
        assert_eq!(PJRT_Executable_DeserializeAndLoad_Args::STRUCT_SIZE, 64);
    }

    #[test]
    fn api_table_has_every_header_entry() {
        // `PJRT_Api_STRUCT_SIZE` of the 0.81 header: 2 words, the 24-byte version, 118 functions.
        assert_eq!(API_STRUCT_SIZE, 984);
        assert_eq!(std::mem::size_of::<Api>(), API_STRUCT_SIZE);
    }
}
