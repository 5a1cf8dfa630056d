//! Hooks on the tensors saved for backward (torch's `torch.autograd.graph.saved_tensors_hooks`,
//! `save_on_cpu` and `disable_saved_tensors_hooks`).
//!
//! While a [`SavedTensorsHooksGuard`] is alive, every tensor that a recorded op saves for its
//! backward (the built-in prims' formulas and custom functions' `save_for_backward`, all of which
//! go through [`super::SavedTensor::new`]) is handed to the innermost `pack` hook, and only what
//! it returns is kept; the backward pass calls `unpack` each time it reads the tensor. The hooks
//! are per thread and nest: the innermost registered pair applies.

use std::any::Any;
use std::cell::{Cell, RefCell};
use std::sync::Arc;

use oxtorch_core::{Device, Error, Result};

use super::grad_mode::no_grad;
use crate::Tensor;

/// What a pack hook returned, type-erased.
pub(crate) type PackedValue = Box<dyn Any + Send + Sync>;
type ErasedPack = dyn Fn(&Tensor) -> Result<PackedValue> + Send + Sync;
type ErasedUnpack = dyn Fn(&(dyn Any + Send + Sync + 'static)) -> Result<Tensor> + Send + Sync;

/// One registered `(pack, unpack)` pair.
pub(crate) struct HookPair {
    pack: Box<ErasedPack>,
    /// Shared with every tensor packed by `pack`, which calls it when backward reads it.
    pub(crate) unpack: Arc<ErasedUnpack>,
}

thread_local! {
    static STACK: RefCell<Vec<Arc<HookPair>>> = const { RefCell::new(Vec::new()) };
    static DISABLED: RefCell<Option<String>> = const { RefCell::new(None) };
    /// Set while a pack hook runs: tensors saved by the ops inside it are not packed again.
    static PACKING: Cell<bool> = const { Cell::new(false) };
}

/// Scope of a `(pack, unpack)` pair registered by [`saved_tensors_hooks`]; dropping it
/// unregisters the pair (torch's `with saved_tensors_hooks(pack, unpack):`).
#[must_use = "the hooks are unregistered as soon as the guard drops"]
pub struct SavedTensorsHooksGuard {
    depth: usize,
}

impl Drop for SavedTensorsHooksGuard {
    fn drop(&mut self) {
        STACK.with(|s| s.borrow_mut().truncate(self.depth));
    }
}

/// Registers `pack` / `unpack` for the tensors saved for backward until the returned guard drops
/// (torch's `torch.autograd.graph.saved_tensors_hooks`). `pack` gets each saved tensor as it is
/// saved and returns what to keep instead (it runs with grad mode off, as torch's); `unpack` turns
/// that back into the tensor whenever the backward pass reads it, which gets the original's
/// history (grad_fn) back, not that of what `unpack` computed it from. A packed tensor is not
/// checked against in-place writes made after it was saved (as torch). Fails with the given
/// message inside [`disable_saved_tensors_hooks`].
///
/// An error from `pack` is reported when backward reads the tensor (the recording op itself
/// cannot fail).
pub fn saved_tensors_hooks<P: Send + Sync + 'static>(
    pack: impl Fn(&Tensor) -> Result<P> + Send + Sync + 'static,
    unpack: impl Fn(&P) -> Result<Tensor> + Send + Sync + 'static,
) -> Result<SavedTensorsHooksGuard> {
    if let Some(message) = DISABLED.with(|d| d.borrow().clone()) {
        return Err(Error::msg(message));
    }
    let pair = HookPair {
        pack: Box::new(move |t: &Tensor| -> Result<PackedValue> { Ok(Box::new(pack(t)?)) }),
        unpack: Arc::new(move |v: &(dyn Any + Send + Sync + 'static)| -> Result<Tensor> {
            let v = v
                .downcast_ref::<P>()
                .ok_or_else(|| Error::msg("saved_tensors_hooks: packed value of an unexpected type"))?;
            unpack(v)
        }),
    };
    let depth = STACK.with(|s| {
        let mut s = s.borrow_mut();
        s.push(Arc::new(pair));
        s.len() - 1
    });
    Ok(SavedTensorsHooksGuard { depth })
}

/// What [`save_on_cpu`] keeps for a saved tensor: a CPU copy and the device to return it to.
pub struct CpuSaved {
    /// the CPU copy
    pub tensor: Tensor,
    /// the device the saved tensor was on
    pub device: Device,
}

/// Saves every tensor saved for backward as a CPU copy, moved back to its device when backward
/// reads it (torch's `torch.autograd.graph.save_on_cpu`; `pin_memory` has no meaning here).
pub fn save_on_cpu() -> Result<SavedTensorsHooksGuard> {
    saved_tensors_hooks(
        |t: &Tensor| {
            let device = t.device();
            // Always a copy, as torch's (which copies into a fresh CPU tensor).
            let tensor =
                no_grad(
                    || if device == Device::Cpu { t.detach().copy() } else { t.detach().to(Device::Cpu) },
                )?;
            Ok(CpuSaved { tensor, device })
        },
        |p: &CpuSaved| {
            if p.device == Device::Cpu {
                Ok(p.tensor.clone())
            } else {
                no_grad(|| p.tensor.to(p.device))
            }
        },
    )
}

/// Scope in which registering saved-tensors hooks fails with `message` (torch's
/// `torch.autograd.graph.disable_saved_tensors_hooks`); dropping it restores the previous state.
#[must_use = "saved tensors hooks are allowed again as soon as the guard drops"]
pub struct DisableSavedTensorsHooksGuard {
    previous: Option<String>,
}

impl Drop for DisableSavedTensorsHooksGuard {
    fn drop(&mut self) {
        let previous = self.previous.take();
        DISABLED.with(|d| *d.borrow_mut() = previous);
    }
}

/// Forbids saved-tensors hooks until the guard drops: registering one fails with `message`, and
/// so does entering this scope while hooks are registered (as torch).
pub fn disable_saved_tensors_hooks(message: &str) -> Result<DisableSavedTensorsHooksGuard> {
    if STACK.with(|s| !s.borrow().is_empty()) {
        return Err(Error::msg(message.to_string()));
    }
    let previous = DISABLED.with(|d| d.borrow_mut().replace(message.to_string()));
    Ok(DisableSavedTensorsHooksGuard { previous })
}

/// True while saved-tensors hooks are registered on this thread.
pub fn saved_tensors_hooks_active() -> bool {
    STACK.with(|s| !s.borrow().is_empty())
}

/// A saved tensor as the innermost pack hook left it.
pub(crate) struct Packed {
    /// what `pack` returned, or its error (reported when the tensor is read)
    pub(crate) value: Result<PackedValue>,
    pub(crate) unpack: Arc<ErasedUnpack>,
}

impl Packed {
    /// The tensor back from `unpack`.
    pub(crate) fn unpack(&self) -> Result<Tensor> {
        match &self.value {
            Ok(v) => (self.unpack)(&**v),
            Err(e) => Err(e.clone()),
        }
    }
}

/// Runs the innermost pack hook on `t` under no-grad, if one is registered (and none is running
/// already).
pub(crate) fn pack(t: &Tensor) -> Option<Packed> {
    if PACKING.with(Cell::get) {
        return None;
    }
    let pair = STACK.with(|s| s.borrow().last().cloned())?;
    PACKING.with(|p| p.set(true));
    struct Reset;
    impl Drop for Reset {
        fn drop(&mut self) {
            PACKING.with(|p| p.set(false));
        }
    }
    let _reset = Reset;
    // As torch's: the ops inside the pack hook are not recorded.
    let value = no_grad(|| (pair.pack)(t));
    Some(Packed { value, unpack: pair.unpack.clone() })
}
