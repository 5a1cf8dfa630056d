//! Finding the plugin of a device kind: `tpu` (libtpu) and `xla` (`OXTORCH_PJRT_PLUGIN`).

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::time::Duration;

use oxtorch_core::DeviceKind;

use super::client::{Client, ClientOptions};
use super::error::{Error, ErrorCode, Result};
use super::plugin::Plugin;

/// The variable naming the plugin of `xla` devices.
pub const XLA_PLUGIN_VAR: &str = "OXTORCH_PJRT_PLUGIN";
/// The variable naming libtpu explicitly (JAX's convention).
pub const TPU_LIBRARY_VAR: &str = "TPU_LIBRARY_PATH";

/// The plugin path for `kind`: `xla` from `OXTORCH_PJRT_PLUGIN`; `tpu` from `TPU_LIBRARY_PATH`,
/// else `libtpu/libtpu.so` in a Python site-packages (virtualenv, user, system).
pub fn plugin_path(kind: DeviceKind) -> Result<PathBuf> {
    match kind {
        DeviceKind::Xla => std::env::var_os(XLA_PLUGIN_VAR).map(PathBuf::from).ok_or_else(|| {
            Error::NotFound(format!(
                "no PJRT plugin for xla devices: set {XLA_PLUGIN_VAR} to the path of a PJRT plugin \
                 (scripts/fetch_pjrt_cpu.sh fetches the OpenXLA CPU one)"
            ))
        }),
        DeviceKind::Tpu => {
            if let Some(path) = std::env::var_os(TPU_LIBRARY_VAR) {
                return Ok(PathBuf::from(path));
            }
            site_packages_dirs().into_iter().map(|d| d.join("libtpu").join("libtpu.so")).find(|p| p.is_file()).ok_or_else(
                || {
                    Error::NotFound(format!(
                        "no TPU found: libtpu is not installed (set {TPU_LIBRARY_VAR} or `pip install libtpu`)"
                    ))
                },
            )
        }
        other => Err(Error::InvalidArgument(format!("{other:?} devices do not use a PJRT plugin"))),
    }
}

/// Candidate Python `site-packages` directories, most specific first.
fn site_packages_dirs() -> Vec<PathBuf> {
    let mut roots: Vec<PathBuf> = Vec::new();
    if let Some(path) = std::env::var_os("PYTHONPATH") {
        roots.extend(std::env::split_paths(&path));
    }
    let mut lib_dirs: Vec<PathBuf> = Vec::new();
    for var in ["VIRTUAL_ENV", "CONDA_PREFIX"] {
        if let Some(prefix) = std::env::var_os(var) {
            lib_dirs.push(Path::new(&prefix).join("lib"));
        }
    }
    if let Some(home) = std::env::var_os("HOME") {
        lib_dirs.push(Path::new(&home).join(".local/lib"));
    }
    lib_dirs.extend(["/usr/local/lib", "/usr/lib"].map(PathBuf::from));
    for lib in lib_dirs {
        let Ok(entries) = std::fs::read_dir(&lib) else { continue };
        let mut pythons: Vec<PathBuf> = entries
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.starts_with("python3")))
            .collect();
        pythons.sort();
        for python in pythons.into_iter().rev() {
            roots.push(python.join("site-packages"));
            roots.push(python.join("dist-packages"));
        }
    }
    roots.push(PathBuf::from("/usr/lib/python3/dist-packages"));
    roots
}

/// Whether a GCE metadata server answers a TPU query with `200 OK` (within about a second).
/// Only a TCP connection is not enough: sandboxes often proxy 169.254.169.254 and answer 403,
/// and libtpu then retries each of its keys for about 30 s.
fn tpu_metadata_server_answers() -> bool {
    let addr = SocketAddr::from(([169, 254, 169, 254], 80));
    let timeout = Duration::from_millis(500);
    let Ok(mut stream) = TcpStream::connect_timeout(&addr, timeout) else { return false };
    if stream.set_read_timeout(Some(timeout)).is_err() || stream.set_write_timeout(Some(timeout)).is_err() {
        return false;
    }
    let request = "GET /computeMetadata/v1/instance/attributes/accelerator-type HTTP/1.0\r\n\
                   Host: metadata.google.internal\r\nMetadata-Flavor: Google\r\n\r\n";
    if stream.write_all(request.as_bytes()).is_err() {
        return false;
    }
    let mut head = [0u8; 16];
    let n = stream.read(&mut head).unwrap_or(0);
    let status = String::from_utf8_lossy(&head[..n]);
    status.starts_with("HTTP/1.") && status.get(9..12) == Some("200")
}

/// Loads the plugin of `kind` and creates a client.
///
/// For `tpu`, `TPU_SKIP_MDS_QUERY=1` is set before libtpu initialises unless a metadata server
/// answers a TPU query (otherwise `PJRT_Plugin_Initialize` polls it for minutes), and "no device" errors of
/// client creation become a clean "no TPU found".
pub fn open_client(kind: DeviceKind, options: &ClientOptions) -> Result<Client> {
    let path = plugin_path(kind)?;
    if kind == DeviceKind::Tpu
        && std::env::var_os("TPU_SKIP_MDS_QUERY").is_none()
        && !tpu_metadata_server_answers()
    {
        // Set once, before libtpu is loaded; libtpu reads it during initialisation.
        std::env::set_var("TPU_SKIP_MDS_QUERY", "1");
    }
    let plugin = Plugin::load(&path)?;
    match Client::new(plugin, options) {
        Err(Error::Plugin { code, message, .. })
            if kind == DeviceKind::Tpu
                && matches!(code, ErrorCode::NOT_FOUND | ErrorCode::FAILED_PRECONDITION) =>
        {
            Err(Error::NotFound(format!("no TPU found: libtpu at {} reports: {message}", path.display())))
        }
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_devices_have_no_plugin() {
        assert!(plugin_path(DeviceKind::Cpu).is_err());
    }
}
