//! Loading a PJRT plugin: `dlopen`, `GetPjrtApi`, version checks, `PJRT_Plugin_Initialize`.

use std::collections::HashMap;
use std::ffi::c_char;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

use super::error::{Error, ErrorCode, Result};
use super::ffi::{self, Args};

/// A plugin attribute value (`PJRT_NamedValue`).
#[derive(Clone, Debug, PartialEq)]
pub enum AttributeValue {
    /// `kString`.
    String(String),
    /// `kInt64`.
    Int64(i64),
    /// `kInt64List`.
    Int64List(Vec<i64>),
    /// `kFloat`.
    Float(f32),
    /// `kBool`.
    Bool(bool),
}

/// A loaded and initialised PJRT plugin. Plugins live until the process exits: a plugin is
/// never `dlclose`d (some plugins crash at exit after that), so [`Plugin::load`] hands out
/// `&'static` references and loads each path once.
pub struct Plugin {
    path: PathBuf,
    api: ffi::Api,
    version: (i32, i32),
    attributes: Vec<(String, AttributeValue)>,
}

// SAFETY: the PJRT C API is thread-safe; `Plugin` only holds a copy of the function table and
// owned metadata.
unsafe impl Send for Plugin {}
// SAFETY: as above; no method takes `&mut self`.
unsafe impl Sync for Plugin {}

impl std::fmt::Debug for Plugin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Plugin").field("path", &self.path).field("api_version", &self.version).finish()
    }
}

static LOADED: OnceLock<Mutex<HashMap<PathBuf, &'static Plugin>>> = OnceLock::new();

impl Plugin {
    /// Loads and initialises the plugin at `path`, or returns the one already loaded from it.
    ///
    /// Refuses a plugin whose PJRT C API major version differs from the bound header's, or whose
    /// function table lacks an entry point oxtorch calls.
    pub fn load(path: impl AsRef<Path>) -> Result<&'static Plugin> {
        let given = path.as_ref();
        let load_err = |reason: String| Error::Load { path: given.to_path_buf(), reason };
        if !given.is_file() {
            return Err(load_err("no such file".into()));
        }
        let key = given.canonicalize().map_err(|e| load_err(e.to_string()))?;
        let registry = LOADED.get_or_init(Default::default);
        // The lock is held during initialisation so that a plugin is initialised exactly once.
        let mut loaded = registry.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some(plugin) = loaded.get(&key) {
            return Ok(plugin);
        }
        let mut plugin = Self::open(&key)?;
        plugin.initialize()?;
        plugin.attributes = plugin.read_attributes()?;
        let plugin: &'static Plugin = Box::leak(Box::new(plugin));
        loaded.insert(key, plugin);
        Ok(plugin)
    }

    /// `dlopen` (never closed), `GetPjrtApi`, and the ABI checks.
    fn open(path: &Path) -> Result<Plugin> {
        let load_err = |reason: String| Error::Load { path: path.to_path_buf(), reason };
        let incompatible = |reason: String| Error::Incompatible { path: path.to_path_buf(), reason };
        // SAFETY: loading a shared library runs its initialisers; a PJRT plugin is trusted code.
        let library = unsafe { libloading::Library::new(path) }.map_err(|e| load_err(e.to_string()))?;
        // SAFETY: `GetPjrtApi` has this signature in every PJRT plugin.
        let get_api = unsafe { library.get::<ffi::GetPjrtApiFn>(b"GetPjrtApi\0") }
            .map_err(|e| load_err(format!("no GetPjrtApi symbol: {e}")))?;
        // SAFETY: plain call into the plugin, no arguments.
        let raw = unsafe { get_api() };
        // Never dlclose: the library stays mapped for the life of the process.
        std::mem::forget(library);
        if raw.is_null() {
            return Err(load_err("GetPjrtApi returned NULL".into()));
        }
        // SAFETY: `raw` points to a `PJRT_Api` whose first field is its size; only that many bytes
        // are read, and entries past them stay `None` (reported as missing when called).
        let api = unsafe {
            let plugin_size = (*raw).struct_size;
            let mut api: ffi::Api = std::mem::zeroed();
            let n = plugin_size.min(std::mem::size_of::<ffi::Api>());
            std::ptr::copy_nonoverlapping(raw.cast::<u8>(), (&mut api as *mut ffi::Api).cast::<u8>(), n);
            api
        };
        let version = (api.pjrt_api_version.major_version, api.pjrt_api_version.minor_version);
        if version.0 != ffi::API_MAJOR {
            return Err(incompatible(format!(
                "PJRT C API {}.{}, oxtorch is built for {}.x (header {}.{})",
                version.0,
                version.1,
                ffi::API_MAJOR,
                ffi::API_MAJOR,
                ffi::API_MINOR
            )));
        }
        let required: [(&str, bool); 5] = [
            ("PJRT_Error_Destroy", api.PJRT_Error_Destroy.is_some()),
            ("PJRT_Error_Message", api.PJRT_Error_Message.is_some()),
            ("PJRT_Error_GetCode", api.PJRT_Error_GetCode.is_some()),
            ("PJRT_Plugin_Initialize", api.PJRT_Plugin_Initialize.is_some()),
            ("PJRT_Client_Create", api.PJRT_Client_Create.is_some()),
        ];
        if let Some((name, _)) = required.iter().find(|(_, present)| !present) {
            return Err(incompatible(format!("the plugin does not provide {name}")));
        }
        Ok(Plugin { path: path.to_path_buf(), api, version, attributes: Vec::new() })
    }

    fn initialize(&self) -> Result<()> {
        let mut args = ffi::PJRT_Plugin_Initialize_Args::new();
        // SAFETY: valid args; called once per plugin (under the registry lock).
        unsafe { self.call("PJRT_Plugin_Initialize", self.api.PJRT_Plugin_Initialize, &mut args) }
    }

    fn read_attributes(&self) -> Result<Vec<(String, AttributeValue)>> {
        let mut args = ffi::PJRT_Plugin_Attributes_Args::new();
        // SAFETY: valid args; the returned array is owned by the plugin and outlives this call.
        unsafe { self.call("PJRT_Plugin_Attributes", self.api.PJRT_Plugin_Attributes, &mut args)? };
        if args.attributes.is_null() || args.num_attributes == 0 {
            return Ok(Vec::new());
        }
        // SAFETY: the plugin returned `num_attributes` values at `attributes`.
        let values = unsafe { std::slice::from_raw_parts(args.attributes, args.num_attributes) };
        Ok(values.iter().filter_map(|v| unsafe { read_named_value(v) }).collect())
    }

    /// The plugin path (canonical).
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The plugin's PJRT C API version `(major, minor)`.
    pub fn api_version(&self) -> (i32, i32) {
        self.version
    }

    /// All attributes reported by `PJRT_Plugin_Attributes`.
    pub fn attributes(&self) -> &[(String, AttributeValue)] {
        &self.attributes
    }

    /// One attribute by name.
    pub fn attribute(&self, name: &str) -> Option<&AttributeValue> {
        self.attributes.iter().find(|(n, _)| n == name).map(|(_, v)| v)
    }

    /// The `xla_version` attribute (an XLA build number), when reported.
    pub fn xla_version(&self) -> Option<i64> {
        match self.attribute("xla_version") {
            Some(AttributeValue::Int64(v)) => Some(*v),
            _ => None,
        }
    }

    /// The newest StableHLO version the plugin reads, `[major, minor, patch]`.
    pub fn stablehlo_current_version(&self) -> Option<[i64; 3]> {
        self.version_attribute("stablehlo_current_version")
    }

    /// The oldest StableHLO version the plugin reads, `[major, minor, patch]`.
    pub fn stablehlo_minimum_version(&self) -> Option<[i64; 3]> {
        self.version_attribute("stablehlo_minimum_version")
    }

    fn version_attribute(&self, name: &str) -> Option<[i64; 3]> {
        match self.attribute(name) {
            Some(AttributeValue::Int64List(v)) => v.as_slice().try_into().ok(),
            _ => None,
        }
    }

    pub(crate) fn api(&self) -> &ffi::Api {
        &self.api
    }

    /// Calls a PJRT entry point and converts a returned `PJRT_Error` into [`Error::Plugin`],
    /// destroying the error object.
    ///
    /// # Safety
    /// `args` must be valid for `f` (handles alive, pointers valid for the call).
    pub(crate) unsafe fn call<A>(
        &self,
        function: &'static str,
        f: ffi::ApiFn<A>,
        args: &mut A,
    ) -> Result<()> {
        let Some(f) = f else {
            return Err(Error::Incompatible {
                path: self.path.clone(),
                reason: format!("the plugin does not provide {function}"),
            });
        };
        // SAFETY: the caller guarantees `args`.
        let error = unsafe { f(args) };
        if error.is_null() {
            Ok(())
        } else {
            // SAFETY: `error` is a live error returned by this plugin.
            Err(unsafe { self.take_error(function, error) })
        }
    }

    /// Copies code and message out of `error` and destroys it.
    pub(super) unsafe fn take_error(&self, function: &'static str, error: *mut ffi::PJRT_Error) -> Error {
        let api = &self.api;
        let mut code_args = ffi::PJRT_Error_GetCode_Args::new();
        code_args.error = error;
        let mut message_args = ffi::PJRT_Error_Message_Args::new();
        message_args.error = error;
        // SAFETY: `error` is live; both functions were checked present in `open`.
        let message = unsafe {
            let code_error = (api.PJRT_Error_GetCode.expect("checked in open"))(&mut code_args);
            if !code_error.is_null() {
                // An error about the error: report UNKNOWN and do not leak it.
                self.destroy_error(code_error);
                code_args.code = ErrorCode::UNKNOWN.0;
            }
            (api.PJRT_Error_Message.expect("checked in open"))(&mut message_args);
            let message = string_from(message_args.message, message_args.message_size);
            self.destroy_error(error);
            message
        };
        Error::Plugin { function, code: ErrorCode(code_args.code), message }
    }

    unsafe fn destroy_error(&self, error: *mut ffi::PJRT_Error) {
        let mut args = ffi::PJRT_Error_Destroy_Args::new();
        args.error = error;
        // SAFETY: `error` is live and destroyed exactly once.
        unsafe { (self.api.PJRT_Error_Destroy.expect("checked in open"))(&mut args) };
    }
}

/// Copies `size` bytes at `ptr` into a `String` (lossy UTF-8); empty for NULL.
///
/// # Safety
/// `ptr` must be NULL or valid for `size` bytes.
pub(crate) unsafe fn string_from(ptr: *const c_char, size: usize) -> String {
    if ptr.is_null() {
        return String::new();
    }
    // SAFETY: guaranteed by the caller.
    let bytes = unsafe { std::slice::from_raw_parts(ptr.cast::<u8>(), size) };
    String::from_utf8_lossy(bytes).into_owned()
}

/// Reads one `PJRT_NamedValue`; `None` for an unknown type.
///
/// # Safety
/// `v` must be a value returned by the plugin (pointers valid for their sizes).
unsafe fn read_named_value(v: &ffi::PJRT_NamedValue) -> Option<(String, AttributeValue)> {
    // SAFETY: per the C API, `name` has `name_size` bytes and the union member matches `type_`.
    unsafe {
        let name = string_from(v.name, v.name_size);
        let value = match v.type_ {
            ffi::NAMED_VALUE_STRING => {
                AttributeValue::String(string_from(v.value.string_value, v.value_size))
            }
            ffi::NAMED_VALUE_INT64 => AttributeValue::Int64(v.value.int64_value),
            ffi::NAMED_VALUE_INT64_LIST => {
                let ptr = v.value.int64_array_value;
                let list = if ptr.is_null() {
                    Vec::new()
                } else {
                    std::slice::from_raw_parts(ptr, v.value_size).to_vec()
                };
                AttributeValue::Int64List(list)
            }
            ffi::NAMED_VALUE_FLOAT => AttributeValue::Float(v.value.float_value),
            ffi::NAMED_VALUE_BOOL => AttributeValue::Bool(v.value.bool_value),
            _ => return None,
        };
        Some((name, value))
    }
}
