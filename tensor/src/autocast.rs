//! Automatic mixed precision (torch's `torch.autocast`): inside a scope, matrix products run in a
//! lower-precision float dtype (bf16 by default, f16 allowed) and losses in f32, on every device.
//!
//! Ops consult [`lower`] (matmul, linear, convolution, addmm, baddbmm, attention: their float32
//! inputs are cast to the autocast dtype, and so is the result) and [`fp32`] (losses, as torch's
//! CPU autocast lists them: lower-precision inputs are widened and the loss is float32). The casts are
//! ordinary recorded ops, so gradients flow back in each parameter's own dtype.

use std::cell::Cell;

use oxtorch_core::{DType, Error, Result};

use crate::Tensor;

thread_local! {
    static AUTOCAST: Cell<Option<DType>> = const { Cell::new(None) };
}

/// The autocast dtype of this thread, if a scope is active.
pub fn autocast_dtype() -> Option<DType> {
    AUTOCAST.with(Cell::get)
}

/// `torch.is_autocast_enabled()`: whether an autocast scope is active on this thread.
pub fn is_autocast_enabled() -> bool {
    autocast_dtype().is_some()
}

/// `torch.get_autocast_dtype(device)`: the dtype autocast lowers to — the active scope's, else
/// torch's CPU default, bf16.
pub fn get_autocast_dtype() -> DType {
    autocast_dtype().unwrap_or(DType::BF16)
}

/// `torch.set_autocast_enabled(enabled)`: turns autocast on (with the dtype of
/// [`get_autocast_dtype`]) or off for this thread, without a scope. Prefer [`AutocastGuard`], which
/// restores the previous state.
pub fn set_autocast_enabled(enabled: bool) {
    let dtype = get_autocast_dtype();
    AUTOCAST.with(|a| a.set(enabled.then_some(dtype)));
}

/// An autocast scope; the previous state returns when it drops.
#[must_use = "autocast ends as soon as the guard drops"]
pub struct AutocastGuard {
    previous: Option<DType>,
}

impl AutocastGuard {
    /// Enters autocast with `dtype` (bf16 or f16), or disables it inside with `enabled = false`.
    pub fn new(dtype: DType, enabled: bool) -> Result<Self> {
        if enabled && !matches!(dtype, DType::BF16 | DType::F16) {
            return Err(Error::msg(format!(
                "In CPU autocast, but the target dtype is not supported. Disabling autocast. CPU Autocast only supports dtype of torch.bfloat16, torch.float16 currently (got {dtype})"
            )));
        }
        let previous = AUTOCAST.with(|a| a.replace(enabled.then_some(dtype)));
        Ok(AutocastGuard { previous })
    }
}

impl Drop for AutocastGuard {
    fn drop(&mut self) {
        AUTOCAST.with(|a| a.set(self.previous));
    }
}

/// Runs `f` under autocast to `dtype` (torch's `with torch.autocast(device, dtype):`).
pub fn autocast<R>(dtype: DType, f: impl FnOnce() -> Result<R>) -> Result<R> {
    let _g = AutocastGuard::new(dtype, true)?;
    f()
}

/// For ops that autocast runs in lower precision: float32 tensors become the autocast dtype.
pub(crate) fn lower(t: &Tensor) -> Result<Tensor> {
    match autocast_dtype() {
        Some(d) if t.dtype() == DType::F32 => t.to_dtype(d),
        _ => Ok(t.clone()),
    }
}

/// True inside an autocast scope when one of `inputs` is float32: an op that autocast runs in lower
/// precision then calls itself again on [`lower`]ed inputs.
pub(crate) fn lowers(inputs: &[Option<&Tensor>]) -> bool {
    autocast_dtype().is_some() && inputs.iter().flatten().any(|t| t.dtype() == DType::F32)
}

/// For ops that autocast runs in float32 (losses): half-precision tensors are widened.
pub fn fp32(t: &Tensor) -> Result<Tensor> {
    match autocast_dtype() {
        Some(_) if matches!(t.dtype(), DType::BF16 | DType::F16) => t.to_dtype(DType::F32),
        _ => Ok(t.clone()),
    }
}
