//! libtpu on a machine without a TPU: a clean "no TPU found" error, not a hang
//! (libtpu polls the GCE metadata server unless `TPU_SKIP_MDS_QUERY` is set) and not an abort.
//!
//! Runs when `OXTORCH_LIBTPU` names a `libtpu.so` (PyPI `libtpu`, `libtpu/libtpu.so` in the
//! wheel); skips with a message otherwise.

use std::time::{Duration, Instant};

use oxtorch_backend_tpu::pjrt::{open_client, ClientOptions, Error, TPU_LIBRARY_VAR};
use oxtorch_core::DeviceKind;

#[test]
fn no_tpu_is_a_clean_error() {
    let Some(libtpu) = std::env::var_os("OXTORCH_LIBTPU") else {
        use std::io::Write;
        let _ = writeln!(
            std::io::stderr(),
            "\n!!! SKIPPED: OXTORCH_LIBTPU is unset; the libtpu test did not run.\n"
        );
        return;
    };
    // This test binary holds only this test, so changing the environment races with nothing.
    std::env::set_var(TPU_LIBRARY_VAR, &libtpu);
    std::env::set_var("TPU_LOG_DIR", std::env::temp_dir().join("oxtorch-libtpu-logs"));
    let start = Instant::now();
    let result = open_client(DeviceKind::Tpu, &ClientOptions::new());
    let elapsed = start.elapsed();
    match result {
        Err(Error::NotFound(message)) => {
            assert!(message.starts_with("no TPU found"), "{message}");
            eprintln!("{message}");
            assert_eq!(std::env::var("TPU_SKIP_MDS_QUERY").as_deref(), Ok("1"));
        }
        Ok(client) => eprintln!("this machine has a TPU: {:?}", client.devices()),
        Err(other) => panic!("expected a clean 'no TPU found', got: {other}"),
    }
    // A liveness bound, not a speed figure: libtpu answers in a few seconds when idle but has
    // taken over 20 s on a loaded 2-core CI machine, while the metadata-server poll it must
    // skip retries for many minutes.
    assert!(elapsed < Duration::from_secs(120), "took {elapsed:?}");
    eprintln!("libtpu answered in {elapsed:?}");
}
