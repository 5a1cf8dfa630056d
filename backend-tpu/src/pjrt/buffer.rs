//! `PJRT_Buffer`: device memory with a shape and an element type.

use std::sync::Arc;

use super::client::{Client, ClientInner, Device};
use super::element_type::{ElementType, TensorType};
use super::error::{Error, Result};
use super::event::Event;
use super::ffi::{self, Args};

/// An array on a device, destroyed on drop. Keeps its client alive.
pub struct Buffer {
    pub(crate) client: Arc<ClientInner>,
    pub(crate) raw: *mut ffi::PJRT_Buffer,
    pub(crate) device: *mut ffi::PJRT_Device,
    ty: TensorType,
}

// SAFETY: PJRT buffers are thread-safe; the handle is destroyed only in `drop`.
unsafe impl Send for Buffer {}
// SAFETY: as above; no method mutates through `&self`.
unsafe impl Sync for Buffer {}

impl std::fmt::Debug for Buffer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Buffer({})", self.ty)
    }
}

/// The number of bytes of a row-major array, or an error for negative or overflowing dims.
pub(crate) fn byte_size(ty: ElementType, dims: &[i64]) -> Result<usize> {
    dims.iter().try_fold(ty.size_in_bytes(), |acc, &d| {
        let d = usize::try_from(d)
            .map_err(|_| Error::InvalidArgument(format!("negative dimension {d} in shape {dims:?}")))?;
        acc.checked_mul(d).ok_or_else(|| Error::InvalidArgument(format!("shape {dims:?} is too large")))
    })
}

impl Buffer {
    /// Copies row-major `data` to `device` as an array of `element_type` with `dims`.
    ///
    /// `data.len()` must be exactly the array's byte size and `device` a device of `client`;
    /// a bool (`Pred`) array must hold only 0 and 1 bytes. Returns once the host data has been
    /// consumed (the `done_with_host_buffer` event is awaited), so `data` can be reused at once.
    pub fn from_host(
        client: &Client,
        device: &Device,
        data: &[u8],
        element_type: ElementType,
        dims: &[i64],
    ) -> Result<Buffer> {
        let expected = byte_size(element_type, dims)?;
        if data.len() != expected {
            return Err(Error::InvalidArgument(format!(
                "host data of {} bytes does not match a {} array of shape {dims:?} ({expected} bytes)",
                data.len(),
                element_type
            )));
        }
        if element_type == ElementType::Pred && data.iter().any(|&b| b > 1) {
            return Err(Error::InvalidArgument("a bool array must hold only 0 and 1 bytes".into()));
        }
        if !client.devices().iter().any(|d| d.raw == device.raw) {
            return Err(Error::InvalidArgument(format!(
                "device {} does not belong to this client",
                device.id()
            )));
        }
        let plugin = client.plugin();
        let api = plugin.api();
        let mut args = ffi::PJRT_Client_BufferFromHostBuffer_Args::new();
        args.client = client.inner.raw;
        args.data = data.as_ptr().cast();
        args.type_ = element_type.to_raw();
        args.dims = dims.as_ptr();
        args.num_dims = dims.len();
        args.host_buffer_semantics = ffi::HOST_BUFFER_IMMUTABLE_UNTIL_TRANSFER_COMPLETES;
        args.device = device.raw;
        // SAFETY: `data` and `dims` are valid for the call and checked against each other above;
        // `data` stays borrowed until `done_with_host_buffer` has fired (awaited below).
        unsafe {
            plugin.call(
                "PJRT_Client_BufferFromHostBuffer",
                api.PJRT_Client_BufferFromHostBuffer,
                &mut args,
            )?
        };
        let done = Event::from_raw(plugin, args.done_with_host_buffer);
        let buffer = (!args.buffer.is_null()).then(|| Buffer {
            client: client.inner.clone(),
            raw: args.buffer,
            device: device.raw,
            ty: TensorType::new(element_type, dims),
        });
        // Await before returning: `data` is only borrowed for this call. (The non-zero-copy
        // semantics used here never ties this event to the buffer's destruction.)
        if let Some(done) = done {
            done.wait("PJRT_Client_BufferFromHostBuffer (done_with_host_buffer)")?;
        }
        buffer.ok_or_else(|| {
            Error::InvalidArgument("PJRT_Client_BufferFromHostBuffer returned no buffer".into())
        })
    }

    /// A buffer over memory the caller owns (`PJRT_Client_CreateViewOfDeviceBuffer`): the `len`
    /// bytes at `data` hold a row-major array of `element_type` with `dims` in `device`'s memory
    /// (the host's, on the CPU plugin). The plugin calls `on_delete(data, arg)` once it no longer
    /// uses the memory. `len` must be the array's byte size; bool arrays are refused.
    ///
    /// # Safety
    /// `data` must hold the array's bytes, aligned as the plugin requires, and stay valid and
    /// unaliased until `on_delete` is called; `on_delete` must be callable from any thread. After
    /// an error from the plugin itself, whether `on_delete` runs is not specified: the caller
    /// must then neither free the memory nor rely on the callback.
    pub unsafe fn view_of_memory(
        client: &Client,
        device: &Device,
        data: *mut std::ffi::c_void,
        len: usize,
        element_type: ElementType,
        dims: &[i64],
        (on_delete, arg): (ffi::OnDelete, *mut std::ffi::c_void),
    ) -> Result<Buffer> {
        if element_type == ElementType::Pred {
            return Err(Error::InvalidArgument(
                "a bool array is not made a view (its bytes go unchecked)".into(),
            ));
        }
        let expected = byte_size(element_type, dims)?;
        if len != expected {
            return Err(Error::InvalidArgument(format!(
                "a view of {len} bytes does not match a {element_type} array of shape {dims:?} ({expected} bytes)"
            )));
        }
        if !client.devices().iter().any(|d| d.raw == device.raw) {
            return Err(Error::InvalidArgument(format!(
                "device {} does not belong to this client",
                device.id()
            )));
        }
        let plugin = client.plugin();
        let mut args = ffi::PJRT_Client_CreateViewOfDeviceBuffer_Args::new();
        args.client = client.inner.raw;
        args.device_buffer_ptr = data;
        args.dims = dims.as_ptr();
        args.num_dims = dims.len();
        args.element_type = element_type.to_raw();
        args.device = device.raw;
        args.on_delete_callback = on_delete;
        args.on_delete_callback_arg = arg;
        // SAFETY: handles alive, `dims` valid for the call; the caller vouches for `data`.
        unsafe {
            plugin.call(
                "PJRT_Client_CreateViewOfDeviceBuffer",
                plugin.api().PJRT_Client_CreateViewOfDeviceBuffer,
                &mut args,
            )?
        };
        if args.buffer.is_null() {
            return Err(Error::InvalidArgument(
                "PJRT_Client_CreateViewOfDeviceBuffer returned no buffer".into(),
            ));
        }
        Ok(Buffer {
            client: client.inner.clone(),
            raw: args.buffer,
            device: device.raw,
            ty: TensorType::new(element_type, dims),
        })
    }

    /// Wraps a buffer returned by the plugin (an execution output), reading its type and shape.
    pub(crate) fn from_output(
        client: Arc<ClientInner>,
        raw: *mut ffi::PJRT_Buffer,
        device: *mut ffi::PJRT_Device,
    ) -> Result<Buffer> {
        // Owned from here on, so an error below still destroys it.
        let mut buffer = Buffer {
            client,
            raw,
            device,
            ty: TensorType { element_type: ElementType::Pred, dims: Vec::new() },
        };
        let plugin = buffer.client.plugin;
        let api = plugin.api();
        let mut et = ffi::PJRT_Buffer_ElementType_Args::new();
        et.buffer = raw;
        let mut dims = ffi::PJRT_Buffer_Dimensions_Args::new();
        dims.buffer = raw;
        // SAFETY: `raw` is a live buffer; the dims array is owned by it and copied at once.
        unsafe {
            plugin.call("PJRT_Buffer_ElementType", api.PJRT_Buffer_ElementType, &mut et)?;
            plugin.call("PJRT_Buffer_Dimensions", api.PJRT_Buffer_Dimensions, &mut dims)?;
            buffer.ty.dims = if dims.dims.is_null() {
                Vec::new()
            } else {
                std::slice::from_raw_parts(dims.dims, dims.num_dims).to_vec()
            };
        }
        buffer.ty.element_type = ElementType::from_raw(et.type_).ok_or_else(|| {
            Error::InvalidArgument(format!(
                "the plugin returned a buffer of unsupported PJRT type {}",
                et.type_
            ))
        })?;
        Ok(buffer)
    }

    /// The element type.
    pub fn element_type(&self) -> ElementType {
        self.ty.element_type
    }

    /// The dimensions.
    pub fn dims(&self) -> &[i64] {
        &self.ty.dims
    }

    /// The tensor type (element type and dimensions).
    pub fn tensor_type(&self) -> &TensorType {
        &self.ty
    }

    /// The number of bytes of the array on the host.
    pub fn byte_size(&self) -> usize {
        // Checked when the buffer was made or read back from the plugin.
        byte_size(self.ty.element_type, &self.ty.dims).unwrap_or(0)
    }

    /// Whether the plugin can make buffers over caller-owned memory ([`Buffer::view_of_memory`]).
    pub fn client_makes_views(client: &Client) -> bool {
        client.plugin().api().PJRT_Client_CreateViewOfDeviceBuffer.is_some()
    }

    /// Blocks until the work producing this array has finished (JAX's `block_until_ready`),
    /// returning the error of that work, if any.
    pub fn wait_ready(&self) -> Result<()> {
        let plugin = self.client.plugin;
        let mut args = ffi::PJRT_Buffer_ReadyEvent_Args::new();
        args.buffer = self.raw;
        // SAFETY: live buffer; the returned event is owned (and destroyed) by `Event`.
        unsafe { plugin.call("PJRT_Buffer_ReadyEvent", plugin.api().PJRT_Buffer_ReadyEvent, &mut args)? };
        match Event::from_raw(plugin, args.event) {
            Some(event) => event.wait("PJRT_Buffer_ReadyEvent"),
            None => Ok(()),
        }
    }

    /// Copies the array to the host (row-major bytes), waiting for pending work on it.
    pub fn to_host(&self) -> Result<Vec<u8>> {
        let plugin = self.client.plugin;
        let api = plugin.api();
        // First call with dst = NULL: the plugin reports the size it will write.
        let mut size_args = ffi::PJRT_Buffer_ToHostBuffer_Args::new();
        size_args.src = self.raw;
        // SAFETY: live buffer; no destination is written.
        unsafe { plugin.call("PJRT_Buffer_ToHostBuffer", api.PJRT_Buffer_ToHostBuffer, &mut size_args)? };
        if let Some(event) = Event::from_raw(plugin, size_args.event) {
            event.wait("PJRT_Buffer_ToHostBuffer")?;
        }
        let expected = self.byte_size();
        if size_args.dst_size != expected {
            return Err(Error::InvalidArgument(format!(
                "the plugin reports {} bytes for a {} array, expected {expected}",
                size_args.dst_size, self.ty
            )));
        }
        let mut out = vec![0u8; expected];
        let mut args = ffi::PJRT_Buffer_ToHostBuffer_Args::new();
        args.src = self.raw;
        args.dst = out.as_mut_ptr().cast();
        args.dst_size = out.len();
        // SAFETY: `out` has `dst_size` writable bytes and outlives the event awaited below.
        unsafe { plugin.call("PJRT_Buffer_ToHostBuffer", api.PJRT_Buffer_ToHostBuffer, &mut args)? };
        if let Some(event) = Event::from_raw(plugin, args.event) {
            event.wait("PJRT_Buffer_ToHostBuffer")?;
        }
        Ok(out)
    }
}

impl Drop for Buffer {
    fn drop(&mut self) {
        let plugin = self.client.plugin;
        let mut args = ffi::PJRT_Buffer_Destroy_Args::new();
        args.buffer = self.raw;
        // SAFETY: the buffer is live and owned; nothing uses it afterwards.
        let _ = unsafe { plugin.call("PJRT_Buffer_Destroy", plugin.api().PJRT_Buffer_Destroy, &mut args) };
    }
}
