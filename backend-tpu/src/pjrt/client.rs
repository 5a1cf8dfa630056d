//! `PJRT_Client`: creation with options, platform, devices.

use std::ffi::CString;
use std::sync::Arc;

use super::error::{Error, Result};
use super::ffi::{self, Args};
use super::plugin::{string_from, Plugin};

/// A client creation option (`PJRT_NamedValue`), e.g. `cpu_device_count` for the CPU plugin.
#[derive(Clone, Debug, PartialEq)]
pub enum OptionValue {
    /// A string option.
    String(String),
    /// An integer option.
    Int64(i64),
    /// An integer-list option.
    Int64List(Vec<i64>),
    /// A float option.
    Float(f32),
    /// A boolean option.
    Bool(bool),
}

/// Options passed to `PJRT_Client_Create`; which names a plugin understands is plugin-specific.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ClientOptions {
    values: Vec<(String, OptionValue)>,
}

impl ClientOptions {
    /// No options: the plugin's defaults.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds or replaces an option.
    pub fn set(mut self, name: &str, value: OptionValue) -> Self {
        self.values.retain(|(n, _)| n != name);
        self.values.push((name.to_string(), value));
        self
    }

    /// Sets `cpu_device_count`, the number of devices of the OpenXLA CPU plugin (default 4).
    pub fn cpu_device_count(self, count: i64) -> Self {
        self.set("cpu_device_count", OptionValue::Int64(count))
    }

    /// The options, in order.
    pub fn values(&self) -> &[(String, OptionValue)] {
        &self.values
    }

    /// Checks the options whose type is known. A plugin reads an option with the type it
    /// expects, and the CPU plugin aborts the process (an uncaught C++ exception) on a
    /// `cpu_device_count` of another type, so mistakes must be caught here.
    fn validate(&self) -> Result<()> {
        for (name, value) in &self.values {
            if name == "cpu_device_count" {
                match value {
                    OptionValue::Int64(n) if (1..=MAX_CPU_DEVICES).contains(n) => {}
                    other => {
                        return Err(Error::InvalidArgument(format!(
                            "client option cpu_device_count must be an integer in 1..={MAX_CPU_DEVICES}, \
                             got {other:?}"
                        )))
                    }
                }
            }
        }
        Ok(())
    }
}

/// The largest `cpu_device_count` oxtorch passes on.
const MAX_CPU_DEVICES: i64 = 1024;

pub(crate) struct ClientInner {
    pub(crate) plugin: &'static Plugin,
    pub(crate) raw: *mut ffi::PJRT_Client,
}

// SAFETY: PJRT clients are thread-safe objects; the handle is only destroyed in `drop`.
unsafe impl Send for ClientInner {}
// SAFETY: as above.
unsafe impl Sync for ClientInner {}

impl Drop for ClientInner {
    fn drop(&mut self) {
        let mut args = ffi::PJRT_Client_Destroy_Args::new();
        args.client = self.raw;
        let api = self.plugin.api();
        // SAFETY: every buffer and executable holds an `Arc` of this client, so none is alive.
        let _ = unsafe { self.plugin.call("PJRT_Client_Destroy", api.PJRT_Client_Destroy, &mut args) };
    }
}

/// A PJRT client: owns the devices of one plugin. Cheap to clone (shared).
#[derive(Clone)]
pub struct Client {
    pub(crate) inner: Arc<ClientInner>,
    devices: Arc<[Device]>,
    platform_name: String,
    platform_version: String,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("platform", &self.platform_name)
            .field("devices", &self.devices.len())
            .finish()
    }
}

/// An addressable device of a client.
#[derive(Clone, Debug)]
pub struct Device {
    pub(crate) raw: *mut ffi::PJRT_Device,
    id: i32,
    kind: String,
}

// SAFETY: a device handle is owned by its client and immutable.
unsafe impl Send for Device {}
// SAFETY: as above.
unsafe impl Sync for Device {}

impl Device {
    /// The device id (`PJRT_DeviceDescription_Id`).
    pub fn id(&self) -> i32 {
        self.id
    }

    /// The device kind, e.g. `cpu` or `TPU v5 lite`.
    pub fn kind(&self) -> &str {
        &self.kind
    }
}

impl Client {
    /// Creates a client of `plugin` with `options`.
    pub fn new(plugin: &'static Plugin, options: &ClientOptions) -> Result<Client> {
        options.validate()?;
        let api = plugin.api();
        // The names, strings and lists must outlive the call: they are kept in these vectors.
        let names: Vec<CString> = options
            .values
            .iter()
            .map(|(n, _)| {
                CString::new(n.as_str()).map_err(|_| {
                    Error::InvalidArgument(format!("client option name {n:?} contains a NUL byte"))
                })
            })
            .collect::<Result<_>>()?;
        let named: Vec<ffi::PJRT_NamedValue> = options
            .values
            .iter()
            .zip(&names)
            .map(|((_, value), name)| {
                let mut v = ffi::PJRT_NamedValue::new();
                v.name = name.as_ptr();
                v.name_size = name.as_bytes().len();
                match value {
                    OptionValue::String(s) => {
                        v.type_ = ffi::NAMED_VALUE_STRING;
                        v.value.string_value = s.as_ptr().cast();
                        v.value_size = s.len();
                    }
                    OptionValue::Int64(i) => {
                        v.type_ = ffi::NAMED_VALUE_INT64;
                        v.value.int64_value = *i;
                        v.value_size = 1;
                    }
                    OptionValue::Int64List(list) => {
                        v.type_ = ffi::NAMED_VALUE_INT64_LIST;
                        v.value.int64_array_value = list.as_ptr();
                        v.value_size = list.len();
                    }
                    OptionValue::Float(x) => {
                        v.type_ = ffi::NAMED_VALUE_FLOAT;
                        v.value.float_value = *x;
                        v.value_size = 1;
                    }
                    OptionValue::Bool(b) => {
                        v.type_ = ffi::NAMED_VALUE_BOOL;
                        v.value.bool_value = *b;
                        v.value_size = 1;
                    }
                }
                v
            })
            .collect();
        let mut args = ffi::PJRT_Client_Create_Args::new();
        args.create_options = named.as_ptr();
        args.num_options = named.len();
        // SAFETY: the options point into `names`/`options`, alive for the call.
        unsafe { plugin.call("PJRT_Client_Create", api.PJRT_Client_Create, &mut args)? };
        if args.client.is_null() {
            return Err(Error::InvalidArgument("PJRT_Client_Create returned no client".into()));
        }
        let inner = Arc::new(ClientInner { plugin, raw: args.client });
        let platform_name = inner.platform_name()?;
        let platform_version = inner.platform_version()?;
        let devices = inner.addressable_devices()?.into();
        Ok(Client { inner, devices, platform_name, platform_version })
    }

    /// The plugin this client belongs to.
    pub fn plugin(&self) -> &'static Plugin {
        self.inner.plugin
    }

    /// The platform name, e.g. `cpu`, `tpu`, `cuda`.
    pub fn platform_name(&self) -> &str {
        &self.platform_name
    }

    /// The platform version string.
    pub fn platform_version(&self) -> &str {
        &self.platform_version
    }

    /// The addressable devices, in the plugin's order.
    pub fn devices(&self) -> &[Device] {
        &self.devices
    }

    /// The device at `index`, or a torch-like error naming the device count.
    pub fn device(&self, index: usize) -> Result<&Device> {
        self.devices.get(index).ok_or_else(|| {
            Error::InvalidArgument(format!(
                "device index {index} is out of range: the {} client has {} device(s)",
                self.platform_name,
                self.devices.len()
            ))
        })
    }
}

impl ClientInner {
    fn platform_name(&self) -> Result<String> {
        let mut args = ffi::PJRT_Client_PlatformName_Args::new();
        args.client = self.raw;
        let api = self.plugin.api();
        // SAFETY: live client; the returned string is owned by the client.
        unsafe {
            self.plugin.call("PJRT_Client_PlatformName", api.PJRT_Client_PlatformName, &mut args)?;
            Ok(string_from(args.platform_name, args.platform_name_size))
        }
    }

    fn platform_version(&self) -> Result<String> {
        let mut args = ffi::PJRT_Client_PlatformVersion_Args::new();
        args.client = self.raw;
        let api = self.plugin.api();
        // SAFETY: live client; the returned string is owned by the client.
        unsafe {
            self.plugin.call("PJRT_Client_PlatformVersion", api.PJRT_Client_PlatformVersion, &mut args)?;
            Ok(string_from(args.platform_version, args.platform_version_size))
        }
    }

    fn addressable_devices(&self) -> Result<Vec<Device>> {
        let mut args = ffi::PJRT_Client_AddressableDevices_Args::new();
        args.client = self.raw;
        let api = self.plugin.api();
        // SAFETY: live client; the array is owned by the client.
        let raws = unsafe {
            self.plugin.call(
                "PJRT_Client_AddressableDevices",
                api.PJRT_Client_AddressableDevices,
                &mut args,
            )?;
            if args.addressable_devices.is_null() {
                &[]
            } else {
                std::slice::from_raw_parts(args.addressable_devices, args.num_addressable_devices)
            }
        };
        raws.iter().map(|&raw| self.describe(raw)).collect()
    }

    fn describe(&self, raw: *mut ffi::PJRT_Device) -> Result<Device> {
        let api = self.plugin.api();
        let plugin = self.plugin;
        // SAFETY: `raw` is a device of this live client; descriptions are owned by the device.
        unsafe {
            let mut desc = ffi::PJRT_Device_GetDescription_Args::new();
            desc.device = raw;
            plugin.call("PJRT_Device_GetDescription", api.PJRT_Device_GetDescription, &mut desc)?;
            let mut id = ffi::PJRT_DeviceDescription_Id_Args::new();
            id.device_description = desc.device_description;
            plugin.call("PJRT_DeviceDescription_Id", api.PJRT_DeviceDescription_Id, &mut id)?;
            let mut kind = ffi::PJRT_DeviceDescription_Kind_Args::new();
            kind.device_description = desc.device_description;
            plugin.call("PJRT_DeviceDescription_Kind", api.PJRT_DeviceDescription_Kind, &mut kind)?;
            Ok(Device { raw, id: id.id, kind: string_from(kind.device_kind, kind.device_kind_size) })
        }
    }
}
