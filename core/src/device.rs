//! Devices: where a tensor's storage lives and its ops execute.

use std::fmt;
use std::str::FromStr;

use crate::error::{Error, Result};

/// The kind of a device, without its index.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DeviceKind {
    /// Host memory, executed by `oxtorch-backend-cpu`.
    Cpu,
    /// A TPU chip driven through libtpu's PJRT plugin.
    Tpu,
    /// Any PJRT plugin named by `OXTORCH_PJRT_PLUGIN` (XLA CPU in tests, CUDA on GPUs).
    Xla,
}

/// A device: `cpu`, `tpu:N` or `xla:N` (torch's `torch.device`).
///
/// Parse one from a string with `"tpu:1".parse::<Device>()` or `Device::try_from("xla:0")`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Device {
    /// The host CPU.
    #[default]
    Cpu,
    /// TPU chip `N`.
    Tpu(usize),
    /// PJRT device `N` of the plugin named by `OXTORCH_PJRT_PLUGIN`.
    Xla(usize),
}

impl Device {
    /// The device's kind.
    pub const fn kind(self) -> DeviceKind {
        match self {
            Device::Cpu => DeviceKind::Cpu,
            Device::Tpu(_) => DeviceKind::Tpu,
            Device::Xla(_) => DeviceKind::Xla,
        }
    }

    /// True for the host CPU.
    pub const fn is_cpu(self) -> bool {
        matches!(self, Device::Cpu)
    }
}

impl fmt::Display for Device {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Device::Cpu => write!(f, "cpu"),
            Device::Tpu(i) => write!(f, "tpu:{i}"),
            Device::Xla(i) => write!(f, "xla:{i}"),
        }
    }
}

impl FromStr for Device {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self> {
        let bad = || {
            Error::msg(format!(
                "Expected one of cpu, tpu, tpu:N, xla, xla:N device type at start of device string: {s}"
            ))
        };
        let (kind, index) = match s.split_once(':') {
            Some((k, i)) => {
                let i: usize = i.parse().map_err(|_| {
                    Error::msg(format!(
                        "Invalid device string: '{s}' (the index must be a non-negative integer)"
                    ))
                })?;
                (k, i)
            }
            None => (s, 0),
        };
        match kind {
            "cpu" if s.contains(':') && index != 0 => Err(Error::msg(format!(
                "Invalid device string: '{s}' (there is only one cpu device, cpu:0)"
            ))),
            "cpu" => Ok(Device::Cpu),
            "tpu" => Ok(Device::Tpu(index)),
            "xla" => Ok(Device::Xla(index)),
            "cuda" | "mps" | "meta" => Err(Error::msg(format!(
                "device '{s}' is not supported by oxtorch: use cpu, tpu[:N] or xla[:N] (GPUs run through xla with the CUDA PJRT plugin)"
            ))),
            _ => Err(bad()),
        }
    }
}

impl TryFrom<&str> for Device {
    type Error = Error;
    fn try_from(s: &str) -> Result<Self> {
        s.parse()
    }
}

impl TryFrom<String> for Device {
    type Error = Error;
    fn try_from(s: String) -> Result<Self> {
        s.parse()
    }
}
