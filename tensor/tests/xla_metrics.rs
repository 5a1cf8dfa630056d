//! The XLA runtime's executable cache and metrics: a repeated op is a cache hit, a new scalar value
//! never compiles again, unlowered ops are counted as host fallbacks, and `OXTORCH_METRICS=1`
//! prints one JSON line at exit. One test function touches the device, so that no other test of
//! this binary changes the process-wide counters between its reads.

mod xla_common;

use oxtorch_backend_tpu::xla::metrics;
use oxtorch_tensor::{manual_seed, Device, Result, Tensor};
use xla_common::xla;

#[test]
fn cache_hits_and_scalars_do_not_recompile() -> Result<()> {
    let Some(dev) = xla() else { return Ok(()) };
    manual_seed(0);
    let x = Tensor::randn([3, 5], ())?.to(dev)?;
    let y = Tensor::randn([3, 5], ())?.to(dev)?;

    let first = x.add(1.0)?;
    let before = metrics();
    let second = x.add(2.0)?;
    let other = y.add(-7.5)?;
    let after = metrics();
    assert_eq!(
        after.new_programs(),
        before.new_programs(),
        "a new scalar or a new tensor of the same layout compiled again"
    );
    assert!(after.cache_hits >= before.cache_hits + 2, "{before:?} -> {after:?}");
    let host = x.to("cpu")?;
    assert_eq!(first.to_vec::<f32>()?, host.add(1.0)?.to_vec::<f32>()?);
    assert_eq!(second.to_vec::<f32>()?, host.add(2.0)?.to_vec::<f32>()?);
    assert_eq!(other.to_vec::<f32>()?, y.to("cpu")?.add(-7.5)?.to_vec::<f32>()?);

    // A second identical op is a hit; a new layout (a transposed view) is a new program.
    let before = metrics();
    x.mul(&y)?;
    let mid = metrics();
    x.mul(&y)?;
    let after = metrics();
    assert_eq!(after.new_programs(), mid.new_programs());
    assert_eq!(after.cache_hits, mid.cache_hits + 1);
    assert!(mid.new_programs() <= before.new_programs() + 1);
    x.t()?.mul(&y.t()?)?;
    assert_eq!(
        metrics().new_programs(),
        after.new_programs() + 1,
        "a transposed layout needs its own program"
    );

    // A view moving along its storage (a sliding window, a cache position) is one program: the
    // offset is a runtime input. Reads and writes through it stay right.
    let h = host.clone();
    x.narrow(1, 1, 2)?.mul(2.0)?;
    let wide = Tensor::zeros([3, 9], dev)?;
    wide.narrow(1, 1, 5)?.copy_(&y)?;
    wide.narrow(1, 1, 2)?.fill_(4.0)?;
    let before = metrics();
    for k in 2..=4 {
        let window = x.narrow(1, k as isize - 1, 2)?.mul(2.0)?;
        assert_eq!(window.to_vec::<f32>()?, h.narrow(1, k as isize - 1, 2)?.mul(2.0)?.to_vec::<f32>()?);
        wide.narrow(1, k as isize, 5)?.copy_(&y)?;
        wide.narrow(1, k as isize, 2)?.fill_(-(k as f64))?;
    }
    assert_eq!(metrics().new_programs(), before.new_programs(), "moving a view compiled again");
    let expect = Tensor::zeros([3, 9], ())?;
    let yh = y.to("cpu")?;
    expect.narrow(1, 1, 5)?.copy_(&yh)?;
    expect.narrow(1, 1, 2)?.fill_(4.0)?;
    for k in 2..=4 {
        expect.narrow(1, k as isize, 5)?.copy_(&yh)?;
        expect.narrow(1, k as isize, 2)?.fill_(-(k as f64))?;
    }
    assert_eq!(wide.to_vec::<f32>()?, expect.to_vec::<f32>()?);

    // Full of any value: one program per shape and dtype.
    Tensor::full([4, 4], 3.0, dev)?;
    let before = metrics();
    let f = Tensor::full([4, 4], -1.25, dev)?;
    assert_eq!(metrics().new_programs(), before.new_programs());
    assert_eq!(f.to_vec::<f32>()?, vec![-1.25; 16]);

    // Results stay on the device: nothing is downloaded until a value is read.
    let before = metrics();
    let z = x.mul(2.0)?.add(&y)?.relu()?;
    assert_eq!(metrics().transfers_from_device, before.transfers_from_device);
    z.to_vec::<f32>()?;
    assert!(metrics().transfers_from_device > before.transfers_from_device);

    // An op without a lowering runs on the host, is counted, and is right.
    let before = metrics().host_fallbacks.get("nonzero").copied().unwrap_or(0);
    let nz = x.gt(0.0)?.nonzero()?;
    assert!(metrics().host_fallbacks.get("nonzero").copied().unwrap_or(0) > before);
    assert_eq!(nz.device(), dev);
    assert_eq!(nz.to("cpu")?.to_vec::<i64>()?, host.gt(0.0)?.nonzero()?.to_vec::<i64>()?);
    Ok(())
}

#[test]
fn tpu_without_a_tpu_is_a_clean_error() {
    match Tensor::zeros([2], Device::Tpu(0)) {
        Ok(t) => assert_eq!(t.device(), Device::Tpu(0)),
        Err(e) => assert!(e.to_string().contains("no TPU found"), "{e}"),
    }
}

const CHILD: &str = "OXTORCH_XLA_METRICS_CHILD";

/// Run as a child process by `metrics_json_line_at_exit`: one op on the device.
#[test]
fn child_runs_one_op() -> Result<()> {
    if std::env::var_os(CHILD).is_none() {
        return Ok(());
    }
    let Some(dev) = xla() else { return Ok(()) };
    Tensor::ones([3], dev)?.add(1.0)?.to_vec::<f32>()?;
    Ok(())
}

#[test]
fn metrics_json_line_at_exit() {
    if xla().is_none() || std::env::var_os(CHILD).is_some() {
        return;
    }
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "child_runs_one_op", "--test-threads", "1"])
        .env(CHILD, "1")
        .env("OXTORCH_METRICS", "1")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let stderr = String::from_utf8_lossy(&out.stderr);
    let line = stderr.lines().find(|l| l.starts_with("{\"oxtorch_metrics\": {")).unwrap_or_else(|| {
        panic!("no metrics line on stderr:\n{stderr}");
    });
    assert!(line.contains("\"compiles\": ") && line.contains("\"host_fallbacks\": {"), "{line}");
    assert!(!line.contains("\"transfers_to_device\": 0,"), "{line}");
    assert!(line.ends_with("}}"), "{line}");
}

/// The metrics line a child process running `child_runs_one_op` prints at exit, with `env` set.
fn child_metrics_line(env: &[(&str, &str)]) -> String {
    let mut cmd = std::process::Command::new(std::env::current_exe().unwrap());
    cmd.args(["--exact", "child_runs_one_op", "--test-threads", "1"])
        .env(CHILD, "1")
        .env("OXTORCH_METRICS", "1");
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{stderr}");
    stderr.lines().find(|l| l.starts_with("{\"oxtorch_metrics\": {")).map(str::to_string).unwrap_or_else(
        || {
            panic!("no metrics line on stderr:\n{stderr}");
        },
    )
}

#[test]
fn a_second_process_compiles_nothing() {
    if xla().is_none() || std::env::var_os(CHILD).is_some() {
        return;
    }
    let dir = std::env::temp_dir().join(format!("oxtorch-xla-cache-test-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let dir_s = dir.to_string_lossy().into_owned();
    let env = [("OXTORCH_XLA_CACHE_DIR", dir_s.as_str()), ("OXTORCH_XLA_CACHE", "1")];
    let first = child_metrics_line(&env);
    assert!(!first.contains("\"compiles\": 0,"), "the first process compiled nothing: {first}");
    assert!(first.contains("\"persistent_cache_hits\": 0,"), "{first}");
    let second = child_metrics_line(&env);
    assert!(second.contains("\"compiles\": 0,"), "the second process compiled: {second}");
    assert!(!second.contains("\"persistent_cache_hits\": 0,"), "{second}");
    let _ = std::fs::remove_dir_all(&dir);
}
