//! torch's process-wide algorithm settings: `use_deterministic_algorithms`, the deterministic
//! debug mode and `set_float32_matmul_precision`. The flags are stored and readable so code
//! written against torch runs unchanged; the CPU kernels are deterministic already (scatter and
//! index accumulation run serially in index order, reductions use fixed splits; atomics only hand
//! out work), and float32 matmuls always compute in full float32 precision.

use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};

use oxtorch_core::{Error, Result};

/// `use_deterministic_algorithms(mode)`.
static DETERMINISTIC: AtomicBool = AtomicBool::new(false);
/// `use_deterministic_algorithms(.., warn_only)`.
static WARN_ONLY: AtomicBool = AtomicBool::new(false);
/// 0 = "highest", 1 = "high", 2 = "medium".
static MATMUL_PRECISION: AtomicU8 = AtomicU8::new(0);

/// The names of the float32 matmul precisions, by stored index.
const PRECISIONS: [&str; 3] = ["highest", "high", "medium"];

/// Records whether deterministic algorithms are required (torch's
/// `torch.use_deterministic_algorithms(mode, warn_only=...)`).
pub fn use_deterministic_algorithms(mode: bool, warn_only: bool) {
    DETERMINISTIC.store(mode, Ordering::SeqCst);
    WARN_ONLY.store(warn_only, Ordering::SeqCst);
}

/// Whether deterministic algorithms are required (torch's `are_deterministic_algorithms_enabled`).
pub fn are_deterministic_algorithms_enabled() -> bool {
    DETERMINISTIC.load(Ordering::SeqCst)
}

/// Whether a nondeterministic op would only warn (torch's
/// `is_deterministic_algorithms_warn_only_enabled`).
pub fn is_deterministic_algorithms_warn_only_enabled() -> bool {
    WARN_ONLY.load(Ordering::SeqCst)
}

/// A value accepted by [`set_deterministic_debug_mode`]: 0/1/2 or "default"/"warn"/"error".
pub trait DeterministicDebugMode {
    /// The mode as 0, 1 or 2, or torch's error for another value.
    fn debug_mode(self) -> Result<i64>;
}

impl DeterministicDebugMode for i64 {
    fn debug_mode(self) -> Result<i64> {
        if (0..=2).contains(&self) {
            Ok(self)
        } else {
            Err(Error::msg(format!("invalid value of debug_mode, expected 0, 1, or 2, but got {self}")))
        }
    }
}

impl DeterministicDebugMode for &str {
    fn debug_mode(self) -> Result<i64> {
        match self {
            "default" => Ok(0),
            "warn" => Ok(1),
            "error" => Ok(2),
            other => Err(Error::msg(format!(
                "invalid value of debug_mode, expected one of `default`, `warn`, `error`, but got {other}"
            ))),
        }
    }
}

/// torch's `set_deterministic_debug_mode`: 0/"default" turns deterministic algorithms off,
/// 1/"warn" on with warn_only, 2/"error" on without.
pub fn set_deterministic_debug_mode(mode: impl DeterministicDebugMode) -> Result<()> {
    match mode.debug_mode()? {
        0 => use_deterministic_algorithms(false, false),
        1 => use_deterministic_algorithms(true, true),
        _ => use_deterministic_algorithms(true, false),
    }
    Ok(())
}

/// torch's `get_deterministic_debug_mode`: 0 when off, 1 when on with warn_only, 2 when on.
pub fn get_deterministic_debug_mode() -> i64 {
    match (are_deterministic_algorithms_enabled(), is_deterministic_algorithms_warn_only_enabled()) {
        (false, _) => 0,
        (true, true) => 1,
        (true, false) => 2,
    }
}

/// torch's `set_float32_matmul_precision`: "highest", "high" or "medium" (stored; oxtorch's CPU
/// matmuls always use full float32). Another value leaves the setting unchanged and is an error
/// carrying the text of torch's warning (torch only warns).
pub fn set_float32_matmul_precision(precision: &str) -> Result<()> {
    match PRECISIONS.iter().position(|&p| p == precision) {
        Some(i) => {
            MATMUL_PRECISION.store(i as u8, Ordering::SeqCst);
            Ok(())
        }
        None => Err(Error::msg(format!(
            "{precision} is not one of 'highest', 'high', or 'medium'; the current setFloat32MatmulPrecision call has no effect."
        ))),
    }
}

/// torch's `get_float32_matmul_precision`: "highest" (the default), "high" or "medium".
pub fn get_float32_matmul_precision() -> &'static str {
    PRECISIONS[usize::from(MATMUL_PRECISION.load(Ordering::SeqCst)).min(2)]
}
