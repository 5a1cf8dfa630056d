//! [`RemovableHandle`]: what registering a module hook returns (torch's
//! `torch.utils.hooks.RemovableHandle`).

use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Weak;

/// The next hook id: ids are unique across every module and hook kind, as torch's
/// `RemovableHandle.next_id`.
static NEXT_ID: AtomicU64 = AtomicU64::new(0);

/// A fresh hook id.
pub(crate) fn next_id() -> u64 {
    NEXT_ID.fetch_add(1, Ordering::Relaxed)
}

/// Where a handle's hook is registered: removes a hook by id from every list it may be in.
pub(crate) trait RemoveHook: Send + Sync {
    /// Takes the hook `id` off (nothing when it is not registered).
    fn remove_hook(&self, id: u64);
}

/// Unregisters the hook it was returned for (torch's `RemovableHandle`).
///
/// [`remove`](RemovableHandle::remove) may be called any number of times (the later calls do
/// nothing) and does nothing once the module is gone. Dropping the handle does **not** remove the
/// hook, as in torch: a hook registered for the module's lifetime can ignore its handle.
#[derive(Clone)]
pub struct RemovableHandle {
    id: u64,
    store: Weak<dyn RemoveHook>,
}

impl RemovableHandle {
    /// A handle for hook `id` of `store`.
    pub(crate) fn new(id: u64, store: Weak<dyn RemoveHook>) -> Self {
        RemovableHandle { id, store }
    }

    /// The hook's id (torch's `handle.id`), unique in the process.
    pub fn id(&self) -> u64 {
        self.id
    }

    /// Unregisters the hook: it is not called by later forward passes (a backward pass of a
    /// forward pass already run still calls it, as torch's backward hooks are those of the
    /// forward pass). Idempotent.
    pub fn remove(&self) {
        if let Some(store) = self.store.upgrade() {
            store.remove_hook(self.id);
        }
    }
}

impl fmt::Debug for RemovableHandle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RemovableHandle").field("id", &self.id).finish()
    }
}
