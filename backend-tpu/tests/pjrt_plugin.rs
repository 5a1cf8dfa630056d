//! Loading the CPU plugin, its versions and attributes, clients and devices.

mod common;

use oxtorch_backend_tpu::pjrt::{
    plugin_path, Client, ClientOptions, Error, OptionValue, Plugin, XLA_PLUGIN_VAR,
};
use oxtorch_core::DeviceKind;

#[test]
fn loads_once_and_reports_versions() {
    let Some(plugin) = common::plugin() else { return };
    let (major, minor) = plugin.api_version();
    assert_eq!(major, 0);
    assert!(minor >= 81, "PJRT C API 0.{minor}");
    let current = plugin.stablehlo_current_version().expect("stablehlo_current_version attribute");
    let minimum = plugin.stablehlo_minimum_version().expect("stablehlo_minimum_version attribute");
    assert!(minimum <= current, "{minimum:?} > {current:?}");
    assert!(current >= [1, 0, 0], "{current:?}");
    assert!(plugin.xla_version().is_some_and(|v| v > 0));
    // A second load of the same path returns the same, already initialised plugin.
    let again = Plugin::load(plugin.path()).unwrap();
    assert!(std::ptr::eq(plugin, again));
}

#[test]
fn client_devices_follow_the_options() {
    let Some(plugin) = common::plugin() else { return };
    let client = Client::new(plugin, &ClientOptions::new().cpu_device_count(3)).unwrap();
    assert_eq!(client.platform_name(), "cpu");
    assert_eq!(client.devices().len(), 3);
    let ids: Vec<i32> = client.devices().iter().map(|d| d.id()).collect();
    assert_eq!(ids, [0, 1, 2]);
    assert!(client.devices().iter().all(|d| d.kind() == "cpu"), "{:?}", client.devices());
    let err = client.device(3).unwrap_err().to_string();
    assert!(err.contains("device index 3 is out of range") && err.contains("3 device(s)"), "{err}");
    let one = Client::new(plugin, &ClientOptions::new().cpu_device_count(1)).unwrap();
    assert_eq!(one.devices().len(), 1);
}

/// The CPU plugin aborts the process on a mistyped `cpu_device_count`: refused before the call.
#[test]
fn a_bad_option_is_refused_before_the_call() {
    let Some(plugin) = common::plugin() else { return };
    for value in [OptionValue::String("two".into()), OptionValue::Int64(0), OptionValue::Int64(-1)] {
        let options = ClientOptions::new().set("cpu_device_count", value);
        let err = Client::new(plugin, &options).unwrap_err();
        assert!(matches!(err, Error::InvalidArgument(_)), "{err}");
        assert!(err.to_string().contains("cpu_device_count must be an integer"), "{err}");
    }
}

#[test]
fn a_missing_plugin_is_a_clear_error() {
    let err = Plugin::load("/nonexistent/dir/pjrt_plugin.so").unwrap_err();
    let text = err.to_string();
    assert!(matches!(err, Error::Load { .. }));
    assert!(text.contains("/nonexistent/dir/pjrt_plugin.so") && text.contains("no such file"), "{text}");
}

#[test]
fn a_library_without_pjrt_is_refused() {
    let Some(libc) =
        ["/lib/x86_64-linux-gnu/libc.so.6", "/lib/aarch64-linux-gnu/libc.so.6", "/usr/lib/libc.so.6"]
            .into_iter()
            .find(|p| std::path::Path::new(p).is_file())
    else {
        eprintln!("no libc.so.6 at a known path; skipping");
        return;
    };
    let err = Plugin::load(libc).unwrap_err().to_string();
    assert!(err.contains("GetPjrtApi"), "{err}");
}

#[test]
fn xla_devices_use_the_plugin_variable() {
    match std::env::var_os(XLA_PLUGIN_VAR) {
        Some(path) => assert_eq!(plugin_path(DeviceKind::Xla).unwrap(), std::path::PathBuf::from(path)),
        None => assert!(plugin_path(DeviceKind::Xla).unwrap_err().to_string().contains(XLA_PLUGIN_VAR)),
    }
}
