//! Shared set-up of the XLA runtime tests: the device `xla:0` of the plugin named by
//! `OXTORCH_PJRT_PLUGIN`, and the cpu-vs-xla comparison.
#![allow(dead_code)]

use oxtorch_tensor::{manual_seed, DType, Device, Tensor};

/// `xla:0`, or `None` (with a loud message) when `OXTORCH_PJRT_PLUGIN` is unset. `scripts/test.sh`
/// always sets it, so these tests never skip there.
pub fn xla() -> Option<Device> {
    if std::env::var_os("OXTORCH_PJRT_PLUGIN").is_none() {
        static BANNER: std::sync::Once = std::sync::Once::new();
        BANNER.call_once(|| {
            use std::io::Write;
            let _ = writeln!(
                std::io::stderr(),
                "\n!!! SKIPPED: OXTORCH_PJRT_PLUGIN is unset, so the XLA runtime tests did not run.\n\
                 !!! Run `export OXTORCH_PJRT_PLUGIN=$(scripts/fetch_pjrt_cpu.sh)` (scripts/test.sh does).\n"
            );
        });
        return None;
    }
    Some(Device::Xla(0))
}

/// Asserts that `x` (any device) equals the cpu result `c`: shape and dtype exactly, floats within
/// a relative 1e-4 / absolute 1e-5 (2e-2 for the half types) with NaN where `c` has NaN, every other
/// dtype exactly.
pub fn assert_same(what: &str, c: &Tensor, x: &Tensor) {
    assert_eq!(c.dims(), x.dims(), "{what}: shape");
    assert_eq!(c.dtype(), x.dtype(), "{what}: dtype");
    let cv = c.to_f64_vec().unwrap();
    let xv = x.to("cpu").unwrap().to_f64_vec().unwrap();
    let (rtol, atol) = match c.dtype() {
        DType::F16 | DType::BF16 => (2e-2, 1e-3),
        DType::F32 => (1e-4, 1e-5),
        DType::F64 => (1e-9, 1e-12),
        _ => (0.0, 0.0),
    };
    for (i, (a, b)) in cv.iter().zip(&xv).enumerate() {
        let ok = if a.is_nan() { b.is_nan() } else { (a - b).abs() <= atol + rtol * a.abs() };
        assert!(ok, "{what}: element {i}: cpu {a} vs xla {b}\ncpu {cv:?}\nxla {xv:?}");
    }
}

/// A seeded standard-normal cpu tensor of `shape`.
pub fn randn(shape: &[usize], seed: u64) -> Tensor {
    manual_seed(seed);
    Tensor::randn(shape.to_vec(), ()).unwrap()
}

/// Tests that read the process-wide counters (compiles, fused runs) run one at a time.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Holds the lock of the tests that read the process-wide counters.
pub fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}
