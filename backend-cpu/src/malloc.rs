//! glibc `malloc` settings for tensor workloads.
//!
//! glibc hands every block above its mmap threshold (at most 32 MiB) back to the kernel when freed,
//! so the next block of that size is mapped afresh and the kernel faults in and zeroes each of its
//! 4 KiB pages on first touch. Tensor programs allocate and free the same large blocks every step;
//! those faults cost more than the arithmetic on many of them.
//!
//! Two levels of tuning:
//! * [`tune_lazily`] runs on the CPU backend's first pooled allocation: blocks up to 32 MiB come from
//!   the heap, and the heap top is not trimmed.
//! * [`tune_process_allocator`], called first thing in `main`, also puts every thread on glibc's one
//!   main heap and turns fresh mappings off. Without it, a thread that is not `main` allocates from
//!   its own arena, whose heaps hold at most 64 MiB: every larger block, such as the one block of
//!   temporaries an XLA CPU program takes per run (170 MB for a GPT-small training step), is a fresh
//!   mapping whatever the settings. glibc reads this choice when a thread first allocates, so it
//!   must come before any thread starts.
//!
//! Memory held stays near the peak in use (one heap can fragment, so somewhat above it). Set
//! `OXTORCH_MALLOC_TUNING=0` to leave glibc's defaults.

/// What [`tune_process_allocator`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AllocatorTuning {
    /// Every thread allocates from one heap that keeps freed blocks.
    Applied,
    /// Other threads were already running (`threads` in all), so only the lazy tuning was applied.
    TooLate {
        /// The threads the process had.
        threads: usize,
    },
    /// `OXTORCH_MALLOC_TUNING=0` asked for glibc's defaults.
    Disabled,
    /// Not a glibc target; nothing to tune.
    Unsupported,
}

/// Whether `OXTORCH_MALLOC_TUNING=0` asks to leave the allocator alone.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn disabled() -> bool {
    std::env::var("OXTORCH_MALLOC_TUNING").is_ok_and(|v| v == "0")
}

#[cfg(all(target_os = "linux", target_env = "gnu"))]
mod glibc {
    pub const M_TRIM_THRESHOLD: i32 = -1;
    pub const M_MMAP_MAX: i32 = -4;
    pub const M_MMAP_THRESHOLD: i32 = -3;
    pub const M_ARENA_MAX: i32 = -8;
    extern "C" {
        fn mallopt(param: i32, value: i32) -> i32;
    }

    /// Sets one allocator parameter.
    pub fn set(param: i32, value: i32) {
        // SAFETY: mallopt only adjusts glibc allocator parameters; callers pass values in range.
        unsafe { mallopt(param, value) };
    }
}

/// Keeps glibc from handing freed multi-megabyte blocks back to the kernel: blocks up to 32 MiB come
/// from the heap instead of fresh mappings, and the heap's free top goes back to the kernel only
/// once it exceeds 1 GiB. This covers
/// the scratch buffers that libraries like `gemm` allocate per call. Safe to call at any time.
pub fn tune_lazily() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    if !disabled() {
        glibc::set(glibc::M_MMAP_THRESHOLD, 32 << 20);
        glibc::set(glibc::M_TRIM_THRESHOLD, 1 << 30);
    }
}

/// Tunes glibc's allocator for the whole process: call it first thing in `main`, before any thread
/// starts (rayon's pool, an XLA client, a runtime).
///
/// Every thread then allocates from glibc's main heap and no block is a fresh mapping, so a large
/// block freed by one step is reused, already faulted in, by the next. This is what makes an XLA
/// CPU program's per-run temporaries free after the first run. Threads share one allocator lock;
/// the small blocks that contend for it are served from glibc's per-thread cache first.
///
/// Called after other threads started, it applies only [`tune_lazily`]'s part and says so. (A
/// thread that started and already ended is not seen: the next thread takes over its arena.)
///
/// ```
/// // The first line of `main`:
/// let tuning = oxtorch_backend_cpu::malloc::tune_process_allocator();
/// println!("allocator: {tuning:?}"); // Applied
/// ```
pub fn tune_process_allocator() -> AllocatorTuning {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        if disabled() {
            return AllocatorTuning::Disabled;
        }
        tune_lazily();
        let threads = thread_count();
        if threads > 1 {
            return AllocatorTuning::TooLate { threads };
        }
        glibc::set(glibc::M_ARENA_MAX, 1);
        glibc::set(glibc::M_MMAP_MAX, 0);
        AllocatorTuning::Applied
    }
    #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
    AllocatorTuning::Unsupported
}

/// The process's thread count from `/proc/self/status` (1 when it cannot be read).
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn thread_count() -> usize {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| s.lines().find_map(|l| l.strip_prefix("Threads:").and_then(|n| n.trim().parse().ok())))
        .unwrap_or(1)
}
