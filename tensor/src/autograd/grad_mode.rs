//! Thread-local grad mode: whether ops record the graph (`no_grad`, `enable_grad`, `inference_mode`).

use std::cell::Cell;

thread_local! {
    static GRAD_ENABLED: Cell<bool> = const { Cell::new(true) };
    static INFERENCE_MODE: Cell<bool> = const { Cell::new(false) };
}

/// True when ops on tensors that require grad record the graph (torch's `torch.is_grad_enabled()`).
#[inline]
pub fn is_grad_enabled() -> bool {
    GRAD_ENABLED.with(Cell::get)
}

/// True when ops record the graph: grad mode on and not in inference mode (torch: inside
/// `inference_mode`, even `enable_grad` records nothing).
#[inline]
pub(crate) fn is_recording() -> bool {
    GRAD_ENABLED.with(Cell::get) && !INFERENCE_MODE.with(Cell::get)
}

/// True inside an [`InferenceMode`] scope (torch's `torch.is_inference_mode_enabled()`).
pub fn is_inference_mode_enabled() -> bool {
    INFERENCE_MODE.with(Cell::get)
}

/// Sets grad mode for this thread and returns the previous setting (prefer the scoped guards).
pub fn set_grad_enabled(enabled: bool) -> bool {
    GRAD_ENABLED.with(|g| g.replace(enabled))
}

/// A scope with grad mode set to a value; the previous mode comes back when it drops
/// (torch's `torch.set_grad_enabled(mode)` used as a context manager).
#[must_use = "grad mode is restored as soon as the guard drops"]
pub struct GradModeGuard {
    previous: bool,
}

impl GradModeGuard {
    /// Sets grad mode to `enabled` until the guard drops.
    pub fn new(enabled: bool) -> Self {
        GradModeGuard { previous: set_grad_enabled(enabled) }
    }
}

impl Drop for GradModeGuard {
    fn drop(&mut self) {
        set_grad_enabled(self.previous);
    }
}

/// A scope in which no graph is recorded (torch's `with torch.no_grad():`).
pub struct NoGradGuard(#[allow(dead_code)] GradModeGuard);

impl NoGradGuard {
    /// Disables grad mode until the guard drops.
    #[must_use = "grad mode is restored as soon as the guard drops"]
    pub fn new() -> Self {
        NoGradGuard(GradModeGuard::new(false))
    }
}

impl Default for NoGradGuard {
    fn default() -> Self {
        Self::new()
    }
}

/// A scope in which the graph is recorded even inside `no_grad` (torch's `torch.enable_grad()`).
pub struct EnableGradGuard(#[allow(dead_code)] GradModeGuard);

impl EnableGradGuard {
    /// Enables grad mode until the guard drops.
    #[must_use = "grad mode is restored as soon as the guard drops"]
    pub fn new() -> Self {
        EnableGradGuard(GradModeGuard::new(true))
    }
}

impl Default for EnableGradGuard {
    fn default() -> Self {
        Self::new()
    }
}

/// torch's `torch.inference_mode()`: no graph is recorded and the scope is marked as inference, for
/// code that will never need gradients of what it computes.
#[must_use = "inference mode ends as soon as the guard drops"]
pub struct InferenceMode {
    _grad: GradModeGuard,
    previous: bool,
}

impl InferenceMode {
    /// Enters inference mode until the guard drops.
    pub fn new() -> Self {
        let previous = INFERENCE_MODE.with(|m| m.replace(true));
        InferenceMode { _grad: GradModeGuard::new(false), previous }
    }
}

impl Default for InferenceMode {
    fn default() -> Self {
        Self::new()
    }
}

impl Drop for InferenceMode {
    fn drop(&mut self) {
        INFERENCE_MODE.with(|m| m.set(self.previous));
    }
}

/// Runs `f` without recording the graph (torch's `torch.no_grad()` as a decorator).
pub fn no_grad<R>(f: impl FnOnce() -> R) -> R {
    let _g = NoGradGuard::new();
    f()
}

/// Runs `f` with grad mode on.
pub fn enable_grad<R>(f: impl FnOnce() -> R) -> R {
    let _g = EnableGradGuard::new();
    f()
}

/// Runs `f` in inference mode.
pub fn inference_mode<R>(f: impl FnOnce() -> R) -> R {
    let _g = InferenceMode::new();
    f()
}

/// Runs `f` with grad mode set to `enabled`.
pub fn with_grad_enabled<R>(enabled: bool, f: impl FnOnce() -> R) -> R {
    let _g = GradModeGuard::new(enabled);
    f()
}
