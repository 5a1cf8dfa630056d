//! Shared set-up of the PJRT tests: the CPU plugin named by `OXTORCH_PJRT_PLUGIN`.
#![allow(dead_code)]

use oxtorch_backend_tpu::pjrt::{Buffer, Client, ClientOptions, ElementType, Plugin, XLA_PLUGIN_VAR};

/// The plugin, or `None` (with a loud message) when `OXTORCH_PJRT_PLUGIN` is unset.
/// `scripts/test.sh` always sets it, so these tests never skip there.
pub fn plugin() -> Option<&'static Plugin> {
    let Some(path) = std::env::var_os(XLA_PLUGIN_VAR) else {
        // Written to the real stderr (not the test harness's captured `eprintln!`), once per binary.
        static BANNER: std::sync::Once = std::sync::Once::new();
        BANNER.call_once(|| {
            use std::io::Write;
            let _ = writeln!(
                std::io::stderr(),
                "\n!!! SKIPPED: {XLA_PLUGIN_VAR} is unset, so the PJRT tests did not run.\n\
                 !!! Run `export {XLA_PLUGIN_VAR}=$(scripts/fetch_pjrt_cpu.sh)` (scripts/test.sh does).\n"
            );
        });
        return None;
    };
    Some(Plugin::load(path).expect("loading the plugin named by OXTORCH_PJRT_PLUGIN"))
}

/// A client of the CPU plugin with 2 devices.
pub fn client() -> Option<Client> {
    let plugin = plugin()?;
    Some(Client::new(plugin, &ClientOptions::new().cpu_device_count(2)).expect("creating a CPU client"))
}

/// Uploads f32 values to device 0.
pub fn f32_buffer(client: &Client, values: &[f32], dims: &[i64]) -> Buffer {
    let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
    Buffer::from_host(client, client.device(0).unwrap(), &bytes, ElementType::F32, dims).unwrap()
}

/// Reads an f32 buffer back.
pub fn f32_values(buffer: &Buffer) -> Vec<f32> {
    assert_eq!(buffer.element_type(), ElementType::F32);
    buffer.to_host().unwrap().chunks_exact(4).map(|c| f32::from_le_bytes(c.try_into().unwrap())).collect()
}
