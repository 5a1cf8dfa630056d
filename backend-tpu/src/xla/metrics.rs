//! Counters of the eager runtime, like torch_xla's `metrics_report()`: compiles, cache hits, compile
//! and execute time, bytes moved between host and device, and host fallbacks per op.
//!
//! Every counter is an atomic, so the hot path pays a few relaxed adds. [`metrics`] takes a
//! snapshot; with `OXTORCH_METRICS=1` the snapshot is printed at process exit as one JSON line
//! `{"oxtorch_metrics": {...}}` on stderr.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, Once};
use std::time::Duration;

static COMPILES: AtomicU64 = AtomicU64::new(0);
static CACHE_HITS: AtomicU64 = AtomicU64::new(0);
static PERSISTENT_HITS: AtomicU64 = AtomicU64::new(0);
static PERSISTENT_NS: AtomicU64 = AtomicU64::new(0);
static COMPILE_NS: AtomicU64 = AtomicU64::new(0);
static EXECUTES: AtomicU64 = AtomicU64::new(0);
static EXECUTE_NS: AtomicU64 = AtomicU64::new(0);
static TO_DEVICE_BYTES: AtomicU64 = AtomicU64::new(0);
static TO_DEVICE_TRANSFERS: AtomicU64 = AtomicU64::new(0);
static FROM_DEVICE_BYTES: AtomicU64 = AtomicU64::new(0);
static FROM_DEVICE_TRANSFERS: AtomicU64 = AtomicU64::new(0);
static FUSED_RUNS: AtomicU64 = AtomicU64::new(0);
static FUSED_OPS: AtomicU64 = AtomicU64::new(0);
static DONATED: AtomicU64 = AtomicU64::new(0);
static DYNAMIC_RUNS: AtomicU64 = AtomicU64::new(0);
static DYNAMIC_REFUSALS: AtomicU64 = AtomicU64::new(0);
static HOST_KERNEL_CALLS: AtomicU64 = AtomicU64::new(0);
static FALLBACKS: Mutex<BTreeMap<&'static str, u64>> = Mutex::new(BTreeMap::new());

/// A snapshot of the runtime's counters (totals since the process started).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Metrics {
    /// Programs compiled (cache misses that reached the compiler).
    pub compiles: u64,
    /// Executable-cache hits: prims run with an already compiled program.
    pub cache_hits: u64,
    /// Total time spent compiling.
    pub compile_time: Duration,
    /// Programs loaded from the persistent compilation cache instead of compiled.
    pub persistent_cache_hits: u64,
    /// Total time spent loading programs from the persistent cache.
    pub persistent_cache_time: Duration,
    /// Programs launched.
    pub executes: u64,
    /// Total time spent launching programs (the device may still be running when a launch returns).
    pub execute_time: Duration,
    /// Bytes copied from the host to devices.
    pub bytes_to_device: u64,
    /// Host-to-device copies.
    pub transfers_to_device: u64,
    /// Bytes copied from devices to the host.
    pub bytes_from_device: u64,
    /// Device-to-host copies.
    pub transfers_from_device: u64,
    /// Fused programs launched (fused mode: one per sync point with pending work).
    pub fused_runs: u64,
    /// Ops computed by fused programs.
    pub fused_ops: u64,
    /// Input buffers donated to fused programs (written over by a result instead of doubling
    /// memory: parameters and optimizer state updated in place).
    pub donated_buffers: u64,
    /// Fused programs run generalized to the bucket of their dynamic rows (`mark_dynamic`).
    pub dynamic_runs: u64,
    /// Fused graphs reading dynamic rows that ran with their exact shapes instead (they mix rows).
    pub dynamic_refusals: u64,
    /// Calls from programs to oxtorch's host kernels (matrix products on the CPU plugin).
    pub host_kernel_calls: u64,
    /// Bytes of host memory the CPU plugin uses in place for large uploads, now (a gauge, not a
    /// total: it falls when those buffers are freed).
    pub host_block_bytes: u64,
    /// Prims run on the host because the backend has no lowering for them (or their output shape
    /// depends on the data), counted per prim name.
    pub host_fallbacks: BTreeMap<String, u64>,
}

impl Metrics {
    /// Programs this process had to build: compiled, or loaded from the persistent cache (each is
    /// a miss of the in-memory executable cache).
    pub fn new_programs(&self) -> u64 {
        self.compiles + self.persistent_cache_hits
    }

    /// The total number of host fallbacks over all prims.
    pub fn total_host_fallbacks(&self) -> u64 {
        self.host_fallbacks.values().sum()
    }

    /// The snapshot as one JSON line: `{"oxtorch_metrics": {...}}`.
    pub fn to_json_line(&self) -> String {
        let fallbacks: Vec<String> =
            self.host_fallbacks.iter().map(|(name, n)| format!("\"{}\": {n}", escape(name))).collect();
        format!(
            "{{\"oxtorch_metrics\": {{\"compiles\": {}, \"cache_hits\": {}, \"compile_time_us\": {}, \
             \"persistent_cache_hits\": {}, \"persistent_cache_time_us\": {}, \"executes\": {}, \"execute_time_us\": {}, \"bytes_to_device\": {}, \"transfers_to_device\": {}, \
             \"bytes_from_device\": {}, \"transfers_from_device\": {}, \"fused_runs\": {}, \"fused_ops\": {}, \"donated_buffers\": {}, \"dynamic_runs\": {}, \"dynamic_refusals\": {}, \"host_kernel_calls\": {}, \"host_block_bytes\": {}, \"host_fallbacks\": {{{}}}}}}}",
            self.compiles,
            self.cache_hits,
            self.compile_time.as_micros(),
            self.persistent_cache_hits,
            self.persistent_cache_time.as_micros(),
            self.executes,
            self.execute_time.as_micros(),
            self.bytes_to_device,
            self.transfers_to_device,
            self.bytes_from_device,
            self.transfers_from_device,
            self.fused_runs,
            self.fused_ops,
            self.donated_buffers,
            self.dynamic_runs,
            self.dynamic_refusals,
            self.host_kernel_calls,
            self.host_block_bytes,
            fallbacks.join(", ")
        )
    }
}

fn escape(s: &str) -> String {
    s.chars()
        .flat_map(|c| match c {
            '"' => vec!['\\', '"'],
            '\\' => vec!['\\', '\\'],
            c if (c as u32) < 0x20 => format!("\\u{:04x}", c as u32).chars().collect(),
            c => vec![c],
        })
        .collect()
}

/// A snapshot of the eager runtime's counters.
pub fn metrics() -> Metrics {
    let load = |c: &AtomicU64| c.load(Ordering::Relaxed);
    let fallbacks = FALLBACKS.lock().unwrap_or_else(|e| e.into_inner());
    Metrics {
        compiles: load(&COMPILES),
        cache_hits: load(&CACHE_HITS),
        compile_time: Duration::from_nanos(load(&COMPILE_NS)),
        persistent_cache_hits: load(&PERSISTENT_HITS),
        persistent_cache_time: Duration::from_nanos(load(&PERSISTENT_NS)),
        executes: load(&EXECUTES),
        execute_time: Duration::from_nanos(load(&EXECUTE_NS)),
        bytes_to_device: load(&TO_DEVICE_BYTES),
        transfers_to_device: load(&TO_DEVICE_TRANSFERS),
        bytes_from_device: load(&FROM_DEVICE_BYTES),
        transfers_from_device: load(&FROM_DEVICE_TRANSFERS),
        fused_runs: load(&FUSED_RUNS),
        fused_ops: load(&FUSED_OPS),
        donated_buffers: load(&DONATED),
        dynamic_runs: load(&DYNAMIC_RUNS),
        dynamic_refusals: load(&DYNAMIC_REFUSALS),
        host_kernel_calls: load(&HOST_KERNEL_CALLS),
        host_block_bytes: super::host_block::live_bytes() as u64,
        host_fallbacks: fallbacks.iter().map(|(k, v)| (k.to_string(), *v)).collect(),
    }
}

fn nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

pub(crate) fn record_dynamic_run() {
    DYNAMIC_RUNS.fetch_add(1, Ordering::Relaxed);
}

pub(crate) fn record_host_kernel_call() {
    HOST_KERNEL_CALLS.fetch_add(1, Ordering::Relaxed);
}

pub(crate) fn record_dynamic_refusal() {
    DYNAMIC_REFUSALS.fetch_add(1, Ordering::Relaxed);
}

pub(crate) fn record_fused(ops: usize, donated: usize) {
    FUSED_RUNS.fetch_add(1, Ordering::Relaxed);
    FUSED_OPS.fetch_add(ops as u64, Ordering::Relaxed);
    DONATED.fetch_add(donated as u64, Ordering::Relaxed);
}

pub(crate) fn record_compile(took: Duration) {
    install_exit_report();
    COMPILES.fetch_add(1, Ordering::Relaxed);
    COMPILE_NS.fetch_add(nanos(took), Ordering::Relaxed);
}

pub(crate) fn record_persistent_cache_hit(took: Duration) {
    install_exit_report();
    PERSISTENT_HITS.fetch_add(1, Ordering::Relaxed);
    PERSISTENT_NS.fetch_add(nanos(took), Ordering::Relaxed);
}

pub(crate) fn record_cache_hit() {
    CACHE_HITS.fetch_add(1, Ordering::Relaxed);
}

pub(crate) fn record_execute(took: Duration) {
    EXECUTES.fetch_add(1, Ordering::Relaxed);
    EXECUTE_NS.fetch_add(nanos(took), Ordering::Relaxed);
}

pub(crate) fn record_to_device(bytes: usize) {
    install_exit_report();
    TO_DEVICE_TRANSFERS.fetch_add(1, Ordering::Relaxed);
    TO_DEVICE_BYTES.fetch_add(bytes as u64, Ordering::Relaxed);
}

pub(crate) fn record_from_device(bytes: usize) {
    FROM_DEVICE_TRANSFERS.fetch_add(1, Ordering::Relaxed);
    FROM_DEVICE_BYTES.fetch_add(bytes as u64, Ordering::Relaxed);
}

pub(crate) fn record_fallback(prim: &'static str) {
    *FALLBACKS.lock().unwrap_or_else(|e| e.into_inner()).entry(prim).or_insert(0) += 1;
}

extern "C" {
    fn atexit(f: extern "C" fn()) -> i32;
}

extern "C" fn print_at_exit() {
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "{}", metrics().to_json_line());
}

/// With `OXTORCH_METRICS=1` (or any value but `0`), registers the exit report, once. Called when
/// the runtime first touches a device.
pub(crate) fn install_exit_report() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        if std::env::var_os("OXTORCH_METRICS").is_some_and(|v| v != "0" && !v.is_empty()) {
            // SAFETY: `atexit` is the C library's; the handler only reads atomics and writes stderr.
            unsafe {
                atexit(print_at_exit);
            }
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_line_has_every_counter() {
        let mut m = Metrics { compiles: 3, cache_hits: 7, ..Metrics::default() };
        m.host_fallbacks.insert("sort".into(), 2);
        m.host_fallbacks.insert("a\"b".into(), 1);
        let line = m.to_json_line();
        assert!(line.starts_with("{\"oxtorch_metrics\": {\"compiles\": 3, \"cache_hits\": 7,"), "{line}");
        assert!(line.ends_with("\"host_fallbacks\": {\"a\\\"b\": 1, \"sort\": 2}}}"), "{line}");
        assert_eq!(m.total_host_fallbacks(), 3);
    }
}
