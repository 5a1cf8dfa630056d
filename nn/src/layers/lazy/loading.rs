//! Loading a checkpoint into a tree holding lazy modules before their first forward (torch's
//! `_lazy_load_hook`): the thread-local state a walk of the tree reads, each lazy module's hook,
//! and [`materialize_from_state_dict`].

use std::cell::RefCell;
use std::collections::HashSet;

use oxtorch_tensor::{Error, Result, Tensor};

use super::{is_placeholder, Lazy, LazySpec};
use crate::module::{Member, Module};
use crate::state_dict::StateDict;

/// The state-dict key of member `name` of the module at `prefix`.
fn dotted(prefix: &str, name: &str) -> String {
    if prefix.is_empty() {
        name.to_string()
    } else {
        format!("{prefix}.{name}")
    }
}

impl<S: LazySpec> Lazy<S> {
    /// Materializes from the state dict being loaded (see [`materialize_from_state_dict`]).
    /// When the module stays lazy, fills the open members of known shape that the state dict
    /// gives (for the load to copy into) and records the names of the placeholders left.
    pub(super) fn load_hook(&self) {
        if self.inner.get().is_some() {
            return;
        }
        let Some((prefix, found, fill)) = LOADING.with(|cell| {
            let cell = cell.try_borrow().ok()?;
            let loading = Option::as_ref(&*cell)?;
            let key = |name: &str| dotted(&loading.prefix, name);
            let found = self.slots.iter().filter(|s| s.placeholder).find_map(|s| {
                let t = loading.sd.get(&key(s.name))?;
                if is_placeholder(t) {
                    return None;
                }
                self.spec.infer_from(s.name, t.dims())
            });
            let fill: Vec<&'static str> = self
                .slots
                .iter()
                .filter(|s| s.unfilled() && self.spec.known_shape(s.name).is_some())
                .filter(|s| loading.sd.get(&key(s.name)).is_some_and(|t| !is_placeholder(t)))
                .map(|s| s.name)
                .collect();
            Some((loading.prefix.clone(), found, fill))
        }) else {
            return;
        };
        let mut outcome = match found {
            Some(size) => self.materialize(size).map(|_| ()),
            None => Ok(()),
        };
        let still_lazy = self.inner.get().is_none();
        if still_lazy && outcome.is_ok() {
            outcome = self.fill(&fill);
        }
        let keys: Vec<String> = if still_lazy {
            self.slots
                .iter()
                .filter(|s| s.unfilled() && is_placeholder(&s.tensor))
                .map(|s| dotted(&prefix, s.name))
                .collect()
        } else {
            Vec::new()
        };
        LOADING.with(|cell| {
            if let Ok(mut cell) = cell.try_borrow_mut() {
                if let Some(loading) = Option::as_mut(&mut *cell) {
                    if let Err(e) = outcome {
                        loading.error.get_or_insert(e);
                    }
                    loading.pending.extend(keys);
                }
            }
        });
    }

    /// Gives the open members `names`, of shapes known without the input, a tensor of that
    /// shape (zeros, in the placeholder's dtype, device and `requires_grad`) for a load to copy
    /// its entry into (torch's hook materializes each parameter of the checkpoint on its own).
    fn fill(&self, names: &[&str]) -> Result<()> {
        for s in self.slots.iter().filter(|s| s.unfilled() && names.contains(&s.name)) {
            let Some(shape) = self.spec.known_shape(s.name) else { continue };
            let mut t = Tensor::zeros(shape, (s.tensor.dtype(), s.tensor.device()))?;
            if s.tensor.requires_grad() {
                t = t.requires_grad_(true)?;
            }
            // (a load running at the same time on another thread may have filled it first)
            let _ = s.loaded.set(t);
        }
        Ok(())
    }
}

/// The state dict being loaded and the dotted name of the module being visited, read by lazy
/// modules' `visit` while [`materialize_from_state_dict`] walks a tree.
struct Loading {
    prefix: String,
    sd: StateDict,
    error: Option<Error>,
    /// dotted names of the placeholders of modules left lazy
    pending: HashSet<String>,
}

thread_local! {
    static LOADING: RefCell<Option<Loading>> = const { RefCell::new(None) };
}

/// Puts back the [`LOADING`] state of an enclosing load (or none) when a walk ends, also by a
/// panic.
struct LoadingReset(Option<Loading>);

impl Drop for LoadingReset {
    fn drop(&mut self) {
        let previous = self.0.take();
        LOADING.with(|cell| {
            if let Ok(mut cell) = cell.try_borrow_mut() {
                *cell = previous;
            }
        });
    }
}

/// Whether the tree under `m` holds a placeholder (an empty `[0]` parameter or buffer, as a lazy
/// module not yet materialized has).
fn has_placeholder(m: &dyn Module) -> bool {
    let mut found = false;
    m.visit(&mut |_, member| {
        if found {
            return;
        }
        match member {
            Member::Param(t) | Member::Buffer(t) | Member::NonPersistentBuffer(t) => {
                found = is_placeholder(t)
            }
            Member::Child(c) => found = has_placeholder(c),
        }
    });
    found
}

/// Materializes every lazy module of the tree under `module` whose entries in `sd` have shapes
/// (torch's lazy load hook), so that `ModuleExt::load_state_dict` then copies into tensors of
/// the checkpoint's shapes. Modules without entries, or with placeholder entries, stay lazy;
/// their open members of known shape ([`LazySpec::known_shape`]) that `sd` gives get a tensor
/// of that shape for the load to copy into. Returns the dotted names of the placeholders left
/// (their entries, if any, are not copied: torch's hook fills them without materializing the
/// module).
pub fn materialize_from_state_dict(module: &dyn Module, sd: &StateDict) -> Result<HashSet<String>> {
    fn rec(m: &dyn Module, prefix: &str) {
        LOADING.with(|cell| {
            if let Some(loading) = Option::as_mut(&mut *cell.borrow_mut()) {
                loading.prefix = prefix.to_string();
            }
        });
        // A lazy module materializes itself at the start of its visit.
        let mut children: Vec<(String, &dyn Module)> = Vec::new();
        m.visit(&mut |name, member| {
            if let Member::Child(c) = member {
                children.push((name.to_string(), c));
            }
        });
        for (name, c) in children {
            let full = if prefix.is_empty() { name } else { format!("{prefix}.{name}") };
            rec(c, &full);
        }
    }
    // An enclosing load's state is set aside and put back when this one ends.
    let _reset = LoadingReset(LOADING.with(|cell| cell.replace(None)));
    // Nothing to do (and no copy of the state dict) for a tree without lazy modules.
    if !has_placeholder(module) {
        return Ok(HashSet::new());
    }
    LOADING.with(|cell| {
        *cell.borrow_mut() =
            Some(Loading { prefix: String::new(), sd: sd.clone(), error: None, pending: HashSet::new() });
    });
    rec(module, "");
    let (error, pending) = LOADING.with(|cell| match Option::as_mut(&mut *cell.borrow_mut()) {
        Some(l) => (l.error.take(), std::mem::take(&mut l.pending)),
        None => (None, HashSet::new()),
    });
    match error {
        Some(e) => Err(e),
        None => Ok(pending),
    }
}
