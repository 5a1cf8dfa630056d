//! Compiling StableHLO text and executing it.

use std::ffi::c_char;
use std::sync::Arc;

use super::buffer::Buffer;
use super::client::{Client, ClientInner};
use super::element_type::TensorType;
use super::error::{Error, Result};
use super::event::Event;
use super::ffi::{self, Args};
use super::signature::{parse_main_signature, Signature};

/// The `xla.CompileOptionsProto` fields oxtorch sets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CompileOptions {
    /// `executable_build_options.num_replicas`.
    pub num_replicas: u64,
    /// `executable_build_options.num_partitions`.
    pub num_partitions: u64,
    /// The device (its `PJRT_DeviceDescription_Id`) a single-device program is compiled for, as
    /// `executable_build_options.device_assignment`; `None` leaves the plugin's default (device 0).
    pub device_id: Option<i64>,
}

impl Default for CompileOptions {
    /// One replica, one partition: a single-device program.
    fn default() -> Self {
        CompileOptions { num_replicas: 1, num_partitions: 1, device_id: None }
    }
}

impl CompileOptions {
    /// One replica and partition, placed on the device with id `device_id`.
    pub fn for_device(device_id: i64) -> Self {
        CompileOptions { device_id: Some(device_id), ..CompileOptions::default() }
    }

    /// The serialized `CompileOptionsProto`. Empty options abort some plugins
    /// ("Check failed: replica_count > 0"), so both counts are always written.
    pub fn to_proto_bytes(&self) -> Vec<u8> {
        // ExecutableBuildOptionsProto: num_replicas = field 4, num_partitions = field 5 (varints).
        let mut build = vec![0x20];
        put_varint(&mut build, self.num_replicas);
        build.push(0x28);
        put_varint(&mut build, self.num_partitions);
        if let Some(id) = self.device_id {
            // DeviceAssignmentProto { replica_count = 1, computation_count = 1,
            //   computation_devices = [{ replica_device_ids = [id] }] } (fields 1, 2, 3 / 1).
            let mut ids = Vec::new();
            put_varint(&mut ids, id as u64);
            let mut computation = vec![0x0a];
            put_varint(&mut computation, ids.len() as u64);
            computation.extend_from_slice(&ids);
            let mut assignment = vec![0x08, 0x01, 0x10, 0x01, 0x1a];
            put_varint(&mut assignment, computation.len() as u64);
            assignment.extend_from_slice(&computation);
            // executable_build_options.device_assignment = field 9 (length-delimited).
            build.push(0x4a);
            put_varint(&mut build, assignment.len() as u64);
            build.extend_from_slice(&assignment);
        }
        // CompileOptionsProto: executable_build_options = field 3 (length-delimited).
        let mut out = vec![0x1a];
        put_varint(&mut out, build.len() as u64);
        out.extend_from_slice(&build);
        out
    }
}

fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// A compiled program loaded on a client's device, destroyed on drop.
pub struct Executable {
    client: Arc<ClientInner>,
    raw: *mut ffi::PJRT_LoadedExecutable,
    signature: Signature,
    num_outputs: usize,
    device: *mut ffi::PJRT_Device,
}

// SAFETY: PJRT executables are thread-safe; the handle is destroyed only in `drop`.
unsafe impl Send for Executable {}
// SAFETY: as above.
unsafe impl Sync for Executable {}

impl std::fmt::Debug for Executable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Executable").field("signature", &self.signature).finish()
    }
}

impl Executable {
    /// Compiles StableHLO `text` (MLIR, `func.func @main` as entry) for a single device.
    ///
    /// Parse and verification errors come back as [`Error::Plugin`] (code `UNKNOWN` on the CPU
    /// plugin) with the MLIR diagnostic as message.
    pub fn compile(client: &Client, text: &str, options: &CompileOptions) -> Result<Executable> {
        let plugin = client.plugin();
        let api = plugin.api();
        let format = "mlir";
        let mut program = ffi::PJRT_Program::new();
        // The plugin does not write through `code` (the header just lacks `const`).
        program.code = text.as_ptr().cast::<c_char>().cast_mut();
        program.code_size = text.len();
        program.format = format.as_ptr().cast();
        program.format_size = format.len();
        let options = options.to_proto_bytes();
        let mut args = ffi::PJRT_Client_Compile_Args::new();
        args.client = client.inner.raw;
        args.program = &program;
        args.compile_options = options.as_ptr().cast();
        args.compile_options_size = options.len();
        // SAFETY: `text`, `format` and `options` outlive the call.
        unsafe { plugin.call("PJRT_Client_Compile", api.PJRT_Client_Compile, &mut args)? };
        Executable::from_loaded(client, args.executable, text, "PJRT_Client_Compile")
    }

    /// Takes ownership of a loaded executable made from `text`, and reads its outputs and device.
    fn from_loaded(
        client: &Client,
        raw: *mut ffi::PJRT_LoadedExecutable,
        text: &str,
        function: &str,
    ) -> Result<Executable> {
        if raw.is_null() {
            return Err(Error::InvalidArgument(format!("{function} returned no executable")));
        }
        // Owned from here on: an error below destroys it.
        let mut exe = Executable {
            client: client.inner.clone(),
            raw,
            signature: Signature { args: Vec::new(), results: Vec::new() },
            num_outputs: 0,
            device: std::ptr::null_mut(),
        };
        exe.num_outputs = exe.query_num_outputs()?;
        exe.device = exe.query_device()?;
        exe.signature = parse_main_signature(text)?;
        if exe.signature.results.len() != exe.num_outputs {
            return Err(Error::InvalidArgument(format!(
                "func.func @main declares {} result(s) but the compiled program has {} output(s)",
                exe.signature.results.len(),
                exe.num_outputs
            )));
        }
        Ok(exe)
    }

    /// The plugin's serialization of this executable (for a persistent compilation cache). The
    /// bytes are only valid for the same plugin build; [`Executable::deserialize`] reloads them.
    pub fn serialize(&self) -> Result<Vec<u8>> {
        let plugin = self.client.plugin;
        let bytes = self.with_executable(|exe| {
            let mut ser = ffi::PJRT_Executable_Serialize_Args::new();
            ser.executable = exe;
            // SAFETY: `exe` is live for this call; the serialized bytes live until their deleter
            // runs, after they are copied.
            unsafe {
                plugin.call("PJRT_Executable_Serialize", plugin.api().PJRT_Executable_Serialize, &mut ser)?;
                let bytes = if ser.serialized_bytes.is_null() {
                    Vec::new()
                } else {
                    std::slice::from_raw_parts(ser.serialized_bytes.cast::<u8>(), ser.serialized_bytes_size)
                        .to_vec()
                };
                if let (Some(deleter), false) =
                    (ser.serialized_executable_deleter, ser.serialized_executable.is_null())
                {
                    deleter(ser.serialized_executable);
                }
                Ok(bytes)
            }
        })?;
        if bytes.is_empty() {
            return Err(Error::InvalidArgument("PJRT_Executable_Serialize returned no bytes".into()));
        }
        Ok(bytes)
    }

    /// Loads an executable from bytes made by [`Executable::serialize`] on the same plugin build;
    /// `text` is the StableHLO program it was compiled from (its `@main` signature is checked on
    /// every execute, as for a compiled one).
    pub fn deserialize(client: &Client, bytes: &[u8], text: &str) -> Result<Executable> {
        let plugin = client.plugin();
        let api = plugin.api();
        let mut args = ffi::PJRT_Executable_DeserializeAndLoad_Args::new();
        args.client = client.inner.raw;
        args.serialized_executable = bytes.as_ptr().cast();
        args.serialized_executable_size = bytes.len();
        // SAFETY: `bytes` outlives the call; the loaded executable is owned by the result.
        unsafe {
            plugin.call(
                "PJRT_Executable_DeserializeAndLoad",
                api.PJRT_Executable_DeserializeAndLoad,
                &mut args,
            )?
        };
        Executable::from_loaded(client, args.loaded_executable, text, "PJRT_Executable_DeserializeAndLoad")
    }

    /// The argument and result types of `@main`.
    pub fn signature(&self) -> &Signature {
        &self.signature
    }

    /// The number of outputs.
    pub fn num_outputs(&self) -> usize {
        self.num_outputs
    }

    fn query_num_outputs(&self) -> Result<usize> {
        let plugin = self.client.plugin;
        self.with_executable(|exe| {
            let mut num = ffi::PJRT_Executable_NumOutputs_Args::new();
            num.executable = exe;
            // SAFETY: `exe` is live for this call.
            unsafe {
                plugin.call(
                    "PJRT_Executable_NumOutputs",
                    plugin.api().PJRT_Executable_NumOutputs,
                    &mut num,
                )?
            };
            Ok(num.num_outputs)
        })
    }

    /// Runs `f` on the `PJRT_Executable` behind this loaded executable, destroying that handle after.
    fn with_executable<R>(&self, f: impl FnOnce(*mut ffi::PJRT_Executable) -> Result<R>) -> Result<R> {
        let plugin = self.client.plugin;
        let api = plugin.api();
        let mut get = ffi::PJRT_LoadedExecutable_GetExecutable_Args::new();
        get.loaded_executable = self.raw;
        // SAFETY: live executable; the returned `PJRT_Executable` is ours to destroy, once.
        unsafe {
            plugin.call(
                "PJRT_LoadedExecutable_GetExecutable",
                api.PJRT_LoadedExecutable_GetExecutable,
                &mut get,
            )?;
            let result = f(get.executable);
            let mut destroy = ffi::PJRT_Executable_Destroy_Args::new();
            destroy.executable = get.executable;
            plugin.call("PJRT_Executable_Destroy", api.PJRT_Executable_Destroy, &mut destroy)?;
            result
        }
    }

    fn query_device(&self) -> Result<*mut ffi::PJRT_Device> {
        let plugin = self.client.plugin;
        let api = plugin.api();
        let mut args = ffi::PJRT_LoadedExecutable_AddressableDevices_Args::new();
        args.executable = self.raw;
        // SAFETY: live executable; the array is owned by it.
        unsafe {
            plugin.call(
                "PJRT_LoadedExecutable_AddressableDevices",
                api.PJRT_LoadedExecutable_AddressableDevices,
                &mut args,
            )?;
            if args.num_addressable_devices != 1 || args.addressable_devices.is_null() {
                return Err(Error::InvalidArgument(format!(
                    "expected a single-device executable, the plugin loaded it on {} devices",
                    args.num_addressable_devices
                )));
            }
            Ok(*args.addressable_devices)
        }
    }

    /// Checks `args` against the signature: count, element types, shapes, client and device.
    fn check_args(&self, args: &[&Buffer]) -> Result<()> {
        let expected = &self.signature.args;
        if args.len() != expected.len() {
            return Err(Error::InvalidArgument(format!(
                "the program takes {} argument(s) but {} were given",
                expected.len(),
                args.len()
            )));
        }
        for (i, (buffer, ty)) in args.iter().zip(expected).enumerate() {
            if buffer.tensor_type() != ty {
                return Err(Error::InvalidArgument(format!(
                    "argument {i}: expected {ty}, got {}",
                    buffer.tensor_type()
                )));
            }
            if !Arc::ptr_eq(&buffer.client, &self.client) {
                return Err(Error::InvalidArgument(format!("argument {i} belongs to another client")));
            }
            if buffer.device != self.device {
                return Err(Error::InvalidArgument(format!(
                    "argument {i} is on another device than the one the program was compiled for"
                )));
            }
        }
        Ok(())
    }

    /// Runs the program on `args` (checked against the signature first) and waits for it to
    /// finish. The outputs stay on the device.
    pub fn execute(&self, args: &[&Buffer]) -> Result<Vec<Buffer>> {
        let (outputs, done) = self.execute_async(args)?;
        if let Some(done) = done {
            done.wait("PJRT_LoadedExecutable_Execute (device_complete_event)")?;
        }
        Ok(outputs)
    }

    /// Launches the program on `args` and returns its outputs with the completion event (when
    /// the plugin provides one). Reading an output waits for the data it depends on.
    pub fn execute_async(&self, args: &[&Buffer]) -> Result<(Vec<Buffer>, Option<Event>)> {
        self.check_args(args)?;
        let plugin = self.client.plugin;
        let api = plugin.api();
        let arg_ptrs: Vec<*mut ffi::PJRT_Buffer> = args.iter().map(|b| b.raw).collect();
        let arg_lists: [*const *mut ffi::PJRT_Buffer; 1] = [arg_ptrs.as_ptr()];
        let mut outputs: Vec<*mut ffi::PJRT_Buffer> = vec![std::ptr::null_mut(); self.num_outputs];
        let output_lists: [*mut *mut ffi::PJRT_Buffer; 1] = [outputs.as_mut_ptr()];
        let mut events: [*mut ffi::PJRT_Event; 1] = [std::ptr::null_mut()];
        let mut options = ffi::PJRT_ExecuteOptions::new();
        let mut exec = ffi::PJRT_LoadedExecutable_Execute_Args::new();
        exec.executable = self.raw;
        exec.options = &mut options;
        exec.argument_lists = arg_lists.as_ptr();
        exec.num_devices = 1;
        exec.num_args = arg_ptrs.len();
        exec.output_lists = output_lists.as_ptr();
        exec.device_complete_events = events.as_mut_ptr();
        // SAFETY: one device; `arg_lists` holds `num_args` live buffers (kept alive by `args`),
        // `outputs` has room for `num_outputs` handles; all arrays outlive the call.
        unsafe {
            plugin.call("PJRT_LoadedExecutable_Execute", api.PJRT_LoadedExecutable_Execute, &mut exec)?
        };
        let done = Event::from_raw(plugin, events[0]);
        // Take ownership of every output before reading any metadata, so none leaks on error.
        let mut owned = Vec::with_capacity(outputs.len());
        let mut first_error = None;
        for raw in outputs {
            if raw.is_null() {
                first_error.get_or_insert(Error::InvalidArgument("the plugin returned a NULL output".into()));
                continue;
            }
            match Buffer::from_output(self.client.clone(), raw, self.device) {
                Ok(b) => owned.push(b),
                Err(e) => {
                    first_error.get_or_insert(e);
                }
            }
        }
        if let Some(e) = first_error {
            return Err(e);
        }
        for (i, (buffer, ty)) in owned.iter().zip(&self.signature.results).enumerate() {
            if buffer.tensor_type() != ty {
                return Err(Error::InvalidArgument(format!(
                    "output {i}: the program declares {ty} but the plugin returned {}",
                    buffer.tensor_type()
                )));
            }
        }
        Ok((owned, done))
    }

    /// The type of each output.
    pub fn output_types(&self) -> &[TensorType] {
        &self.signature.results
    }
}

impl Drop for Executable {
    fn drop(&mut self) {
        let plugin = self.client.plugin;
        let mut args = ffi::PJRT_LoadedExecutable_Destroy_Args::new();
        args.executable = self.raw;
        // SAFETY: live and owned; nothing uses it afterwards.
        let _ = unsafe {
            plugin.call(
                "PJRT_LoadedExecutable_Destroy",
                plugin.api().PJRT_LoadedExecutable_Destroy,
                &mut args,
            )
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_options_are_the_minimal_proto() {
        assert_eq!(CompileOptions::default().to_proto_bytes(), [0x1a, 0x04, 0x20, 0x01, 0x28, 0x01]);
        let big = CompileOptions { num_replicas: 300, num_partitions: 1, device_id: None }.to_proto_bytes();
        assert_eq!(big, [0x1a, 0x05, 0x20, 0xac, 0x02, 0x28, 0x01]);
        let placed = CompileOptions::for_device(3).to_proto_bytes();
        assert_eq!(
            placed,
            [
                0x1a, 0x0f, 0x20, 0x01, 0x28, 0x01, 0x4a, 0x09, 0x08, 0x01, 0x10, 0x01, 0x1a, 0x03, 0x0a,
                0x01, 0x03
            ]
        );
    }
}
