//! Which execution mode XLA ops run in: per process (`OXTORCH_XLA_MODE`, [`set_mode`]) and per
//! scope on one thread ([`ModeGuard`], [`with_mode`]).

use std::cell::Cell;
use std::sync::atomic::{AtomicU8, Ordering};

/// How ops on `xla`/`tpu` tensors run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Mode {
    /// One cached program per op, launched at once (strict eager, the default).
    Eager,
    /// Ops gather into a pending graph that runs as one fused program at a sync point: reading
    /// values (`item`, `to_vec`, `.to("cpu")`, printing), [`super::sync`], an optimizer step,
    /// or when the graph grows past its bound. Same results as eager.
    Fused,
}

impl Mode {
    /// Parses `eager`, `fused` (alias `lazy`) or `compiled` (fused, with whole steps as programs).
    pub fn parse(text: &str) -> Option<Mode> {
        match text.trim().to_ascii_lowercase().as_str() {
            "eager" | "" => Some(Mode::Eager),
            "fused" | "lazy" | "defer" | "compiled" => Some(Mode::Fused),
            _ => None,
        }
    }
}

const UNSET: u8 = 0;
const EAGER: u8 = 1;
const FUSED: u8 = 2;

static PROCESS_MODE: AtomicU8 = AtomicU8::new(UNSET);

thread_local! {
    static SCOPED: Cell<Option<Mode>> = const { Cell::new(None) };
}

fn encode(mode: Mode) -> u8 {
    match mode {
        Mode::Eager => EAGER,
        Mode::Fused => FUSED,
    }
}

fn process_mode() -> Mode {
    match PROCESS_MODE.load(Ordering::Relaxed) {
        EAGER => Mode::Eager,
        FUSED => Mode::Fused,
        _ => {
            let mode = match std::env::var("OXTORCH_XLA_MODE") {
                Ok(text) => Mode::parse(&text).unwrap_or_else(|| {
                    eprintln!(
                        "oxtorch: OXTORCH_XLA_MODE={text} is not eager, fused or compiled; using eager"
                    );
                    Mode::Eager
                }),
                Err(_) => Mode::Eager,
            };
            // Another thread may have set a mode meanwhile: keep theirs.
            let _ = PROCESS_MODE.compare_exchange(UNSET, encode(mode), Ordering::Relaxed, Ordering::Relaxed);
            process_mode()
        }
    }
}

/// The mode ops on this thread run in now.
pub fn mode() -> Mode {
    SCOPED.with(Cell::get).unwrap_or_else(process_mode)
}

/// Sets the process-wide mode (threads inside a [`ModeGuard`] keep theirs).
pub fn set_mode(mode: Mode) {
    PROCESS_MODE.store(encode(mode), Ordering::Relaxed);
}

/// Runs ops of this thread in `mode` until dropped, then restores the previous mode.
#[must_use = "the mode holds only while the guard lives"]
pub struct ModeGuard {
    previous: Option<Mode>,
}

impl ModeGuard {
    /// Enters `mode` on this thread.
    pub fn new(mode: Mode) -> ModeGuard {
        ModeGuard { previous: SCOPED.with(|s| s.replace(Some(mode))) }
    }
}

impl Drop for ModeGuard {
    fn drop(&mut self) {
        SCOPED.with(|s| s.set(self.previous));
    }
}

/// Runs `f` with this thread's ops in `mode`.
pub fn with_mode<R>(mode: Mode, f: impl FnOnce() -> R) -> R {
    let _guard = ModeGuard::new(mode);
    f()
}

/// Whether ops of this thread are deferred into the pending graph.
pub(crate) fn deferring() -> bool {
    mode() == Mode::Fused
}
