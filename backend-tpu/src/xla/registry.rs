//! The process-wide device registry: one lazily opened PJRT client per device kind.
//!
//! `xla:N` devices come from the plugin named by `OXTORCH_PJRT_PLUGIN`, `tpu:N` from libtpu (with
//! `TPU_SKIP_MDS_QUERY` set when no metadata server answers, so a machine without a TPU fails fast
//! with "no TPU found" instead of hanging). Client creation options come from
//! [`set_client_options`] or, failing that, `OXTORCH_PJRT_OPTIONS` (`name=value,...`, e.g.
//! `cpu_device_count=2`). A failed open is remembered, so a missing TPU is probed once.

use std::sync::{Mutex, OnceLock};

use oxtorch_core::{Device as TorchDevice, DeviceKind, Error, Result};

use crate::pjrt::{open_client, Client, ClientOptions, Device, OptionValue};

/// The variable holding client creation options, `name=value` pairs separated by commas.
pub const OPTIONS_VAR: &str = "OXTORCH_PJRT_OPTIONS";

/// One kind's client: opened at most once, the outcome (client or error message) kept.
struct Slot {
    client: OnceLock<std::result::Result<Client, String>>,
    options: Mutex<Option<ClientOptions>>,
}

impl Slot {
    const fn new() -> Self {
        Slot { client: OnceLock::new(), options: Mutex::new(None) }
    }
}

static XLA: Slot = Slot::new();
static TPU: Slot = Slot::new();

fn slot(kind: DeviceKind) -> Result<&'static Slot> {
    match kind {
        DeviceKind::Xla => Ok(&XLA),
        DeviceKind::Tpu => Ok(&TPU),
        DeviceKind::Cpu => Err(Error::msg("cpu tensors do not run on the XLA runtime")),
    }
}

/// Sets the options the client of `kind` is created with (e.g.
/// `ClientOptions::new().cpu_device_count(2)`). Must be called before the first tensor is placed
/// on a device of that kind; later calls are an error, since the client already exists.
pub fn set_client_options(kind: DeviceKind, options: ClientOptions) -> Result<()> {
    let slot = slot(kind)?;
    if slot.client.get().is_some() {
        return Err(Error::msg(format!(
            "set_client_options: the {kind:?} client is already open; set its options before the first \
             tensor is placed on such a device"
        )));
    }
    *slot.options.lock().unwrap_or_else(|e| e.into_inner()) = Some(options);
    Ok(())
}

/// Parses `OXTORCH_PJRT_OPTIONS`-style text: `name=value` pairs separated by commas; integers become
/// `Int64`, `true`/`false` `Bool`, other numbers `Float`, anything else `String`.
pub fn parse_client_options(text: &str) -> Result<ClientOptions> {
    let mut options = ClientOptions::new();
    for pair in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let (name, value) = pair.split_once('=').ok_or_else(|| {
            Error::msg(format!("{OPTIONS_VAR}: expected name=value pairs separated by commas, got `{pair}`"))
        })?;
        let (name, value) = (name.trim(), value.trim());
        let value = if let Ok(i) = value.parse::<i64>() {
            OptionValue::Int64(i)
        } else if let Ok(b) = value.parse::<bool>() {
            OptionValue::Bool(b)
        } else if let Ok(f) = value.parse::<f32>() {
            OptionValue::Float(f)
        } else {
            OptionValue::String(value.to_string())
        };
        options = options.set(name, value);
    }
    Ok(options)
}

fn open(kind: DeviceKind, slot: &Slot) -> std::result::Result<Client, String> {
    let configured = slot.options.lock().unwrap_or_else(|e| e.into_inner()).clone();
    let options = match configured {
        Some(o) => o,
        None => match std::env::var(OPTIONS_VAR) {
            Ok(text) => parse_client_options(&text).map_err(|e| e.to_string())?,
            Err(_) => ClientOptions::new(),
        },
    };
    crate::xla::metrics::install_exit_report();
    open_client(kind, &options).map_err(|e| e.to_string())
}

/// The client of `kind`, opened on first use.
pub fn client(kind: DeviceKind) -> Result<&'static Client> {
    let slot = slot(kind)?;
    slot.client.get_or_init(|| open(kind, slot)).as_ref().map_err(|e| Error::msg(e.clone()))
}

/// The client and PJRT device behind `device` (`xla:N` or `tpu:N`), with a torch-like error for an
/// index past the client's devices.
pub fn device(device: TorchDevice) -> Result<(&'static Client, &'static Device)> {
    let index = match device {
        TorchDevice::Xla(i) | TorchDevice::Tpu(i) => i,
        TorchDevice::Cpu => return Err(Error::msg("cpu tensors do not run on the XLA runtime")),
    };
    let client = client(device.kind())?;
    let devices = client.devices();
    devices.get(index).map(|d| (client, d)).ok_or_else(|| {
        let kind = if device.kind() == DeviceKind::Tpu { "tpu" } else { "xla" };
        Error::msg(format!(
            "Invalid device {device}: the {kind} runtime ({} plugin) has {} device(s), {kind}:0 to {kind}:{}",
            client.platform_name(),
            devices.len(),
            devices.len().saturating_sub(1)
        ))
    })
}

/// The number of devices of `kind` (0 when its plugin cannot be opened).
pub fn device_count(kind: DeviceKind) -> usize {
    client(kind).map(|c| c.devices().len()).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_option_text() {
        let o = parse_client_options("cpu_device_count=2, fast=true,ratio=0.5,name=abc").unwrap();
        assert_eq!(
            o.values(),
            &[
                ("cpu_device_count".to_string(), OptionValue::Int64(2)),
                ("fast".to_string(), OptionValue::Bool(true)),
                ("ratio".to_string(), OptionValue::Float(0.5)),
                ("name".to_string(), OptionValue::String("abc".into())),
            ]
        );
        assert!(parse_client_options("cpu_device_count").is_err());
        assert!(parse_client_options("").unwrap().values().is_empty());
    }
}
