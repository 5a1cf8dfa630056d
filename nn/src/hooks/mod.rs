//! Module hooks (torch's `register_forward_pre_hook`, `register_forward_hook`,
//! `register_full_backward_pre_hook` and `register_full_backward_hook`): [`Hooked`] wraps a module
//! and runs the hooks registered on it around each call, each registration returning a
//! [`RemovableHandle`].
//!
//! torch keeps the hooks in dictionaries on every module; a module here is a plain struct, so the
//! hooks live in a wrapper that is transparent to everything else: a `Hooked<Linear>` has the
//! state-dict keys (`weight`, `bias`), parameters, type name and training flag of its `Linear`, and
//! is a [`Forward`](crate::Forward) (and so a [`Layer`](crate::Layer), for a
//! [`Sequential`](crate::Sequential)) when the module is.
//!
//! ```
//! use oxtorch_nn::hooks::Hooked;
//! use oxtorch_nn::{Forward, Linear, ModuleExt};
//! use oxtorch_tensor::{Result, Tensor};
//!
//! # fn main() -> Result<()> {
//! let lin = Hooked::new(Linear::new(3, 2, true)?);
//! // double the input, add one to the output
//! lin.register_forward_pre_hook(|_m, x| Ok(Some(x.mul(2.0)?)));
//! let handle = lin.register_forward_hook(|_m, _x, out| Ok(Some(out.add(1.0)?)));
//! let x = Tensor::randn([4, 3], ())?;
//! let y = lin.forward(&x)?;
//! let plain = lin.inner().forward(&x.mul(2.0)?)?.add(1.0)?;
//! assert_eq!(y.to_f64_vec()?, plain.to_f64_vec()?);
//! handle.remove();
//! let keys: Vec<String> = lin.state_dict().keys().map(String::from).collect();
//! assert_eq!(keys, ["weight", "bias"]);
//! # Ok(()) }
//! ```
//!
//! **Order.** Hooks of one kind run in registration order, a hook registered with
//! [`HookOptions::prepend`] before those registered earlier; each one is given what the one
//! before it returned (`Some` replaces the input, output or gradients, `None` keeps them). A call
//! runs the hooks registered when it starts: a hook that registers or removes hooks (it may, the
//! lists are not locked while hooks run) changes the next call. The backward hooks are those of
//! the forward pass that made the graph, as in torch: removing one after the forward pass does not
//! keep the backward pass from calling it.
//!
//! **Backward hooks** work as torch's `BackwardHook`: the module's input (after the forward
//! pre-hooks, when it requires grad) and its output (after the forward hooks) pass through an
//! identity autograd function, `BackwardHookFunctionBackward`. When the output's gradient arrives,
//! the backward pre-hooks see it (and may replace it); when the input's gradient has been
//! computed, the backward hooks see it as `grad_input` with the output's (`grad_output`) and may
//! replace it. For an input that does not require grad, the backward hooks are called from the
//! output's gradient with `grad_input = [None]`, and must return `None` (or only `None`s), as
//! torch.
//!
//! **The module during backward.** The backward hooks get the module too, so the wrapper keeps it
//! in an `Arc` that the graph also reaches (the module outlives the wrapper while a graph needs
//! it, as in torch). Changing the module ([`Hooked::inner_mut`], or through the wrapper: `to`,
//! `train`, `load_state_dict`) waits for a backward hook running on another thread; a backward
//! hook must not change its own wrapper's module (it would wait for itself). After
//! [`Hooked::into_inner`] the backward passes of earlier forward passes no longer call the hooks.

mod backward;
mod forward;
mod handle;

use std::ops::{Deref, DerefMut};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, RwLock, RwLockWriteGuard, Weak};

use oxtorch_tensor::{Result, Tensor};

use crate::module::{Member, MemberMut, Module};

pub use handle::RemovableHandle;
use handle::{next_id, RemoveHook};

/// A forward pre-hook: the module and its input; `Some` replaces the input.
pub(crate) type ForwardPreFn<M> = dyn Fn(&M, &Tensor) -> Result<Option<Tensor>> + Send + Sync;

/// A forward hook: the module, its input and its output (`None` only for an always-called hook
/// when the forward pass failed before giving one); `Some` replaces the output.
pub(crate) type ForwardFn<M> = dyn Fn(&M, &Tensor, Option<&Tensor>) -> Result<Option<Tensor>> + Send + Sync;

/// What a backward hook returns: `Some` replaces the gradients it was given (one entry per input
/// or output, `None` for no gradient), `None` keeps them.
pub type ReplacedGrads = Option<Vec<Option<Tensor>>>;

/// A full backward pre-hook: the module and `grad_output`; `Some` replaces `grad_output`.
pub(crate) type BackwardPreFn<M> = dyn Fn(&M, &[Option<Tensor>]) -> Result<ReplacedGrads> + Send + Sync;

/// A full backward hook: the module, `grad_input` and `grad_output`; `Some` replaces `grad_input`.
pub(crate) type BackwardFn<M> =
    dyn Fn(&M, &[Option<Tensor>], &[Option<Tensor>]) -> Result<ReplacedGrads> + Send + Sync;

/// Where the graph reaches the module (`None` once the wrapper gave it back).
pub(crate) type Link<M> = Arc<RwLock<Option<Arc<M>>>>;

/// How a hook is registered (torch's keyword arguments).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HookOptions {
    /// Run the hook before the hooks of its kind registered earlier (torch's `prepend=True`);
    /// otherwise after them.
    pub prepend: bool,
}

/// One registered hook.
pub(crate) struct Entry<F: ?Sized> {
    /// its handle's id
    pub(crate) id: u64,
    /// a forward hook run even when the call fails (torch's `always_call=True`)
    pub(crate) always_call: bool,
    pub(crate) f: Arc<F>,
}

impl<F: ?Sized> Clone for Entry<F> {
    fn clone(&self) -> Self {
        Entry { id: self.id, always_call: self.always_call, f: Arc::clone(&self.f) }
    }
}

/// The hooks of one module, each list in calling order.
pub(crate) struct HookLists<M> {
    pub(crate) forward_pre: Vec<Entry<ForwardPreFn<M>>>,
    pub(crate) forward: Vec<Entry<ForwardFn<M>>>,
    pub(crate) backward_pre: Vec<Entry<BackwardPreFn<M>>>,
    pub(crate) backward: Vec<Entry<BackwardFn<M>>>,
}

impl<M> Default for HookLists<M> {
    fn default() -> Self {
        HookLists {
            forward_pre: Vec::new(),
            forward: Vec::new(),
            backward_pre: Vec::new(),
            backward: Vec::new(),
        }
    }
}

impl<M> Clone for HookLists<M> {
    fn clone(&self) -> Self {
        HookLists {
            forward_pre: self.forward_pre.clone(),
            forward: self.forward.clone(),
            backward_pre: self.backward_pre.clone(),
            backward: self.backward.clone(),
        }
    }
}

impl<M> HookLists<M> {
    /// Whether no hook is registered.
    pub(crate) fn is_empty(&self) -> bool {
        self.forward_pre.is_empty()
            && self.forward.is_empty()
            && self.backward_pre.is_empty()
            && self.backward.is_empty()
    }
}

/// Puts `entry` first (`prepend`) or last in `list`.
fn insert<F: ?Sized>(list: &mut Vec<Entry<F>>, entry: Entry<F>, prepend: bool) {
    if prepend {
        list.insert(0, entry);
    } else {
        list.push(entry);
    }
}

/// The hooks of a [`Hooked`], shared with its handles.
pub(crate) struct HookStore<M> {
    lists: Mutex<HookLists<M>>,
}

impl<M> HookStore<M> {
    fn lock(&self) -> MutexGuard<'_, HookLists<M>> {
        self.lists.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The hooks registered now (the lock is not held while they run).
    pub(crate) fn snapshot(&self) -> HookLists<M> {
        self.lock().clone()
    }
}

impl<M: 'static> RemoveHook for HookStore<M> {
    fn remove_hook(&self, id: u64) {
        let mut lists = self.lock();
        lists.forward_pre.retain(|e| e.id != id);
        lists.forward.retain(|e| e.id != id);
        lists.backward_pre.retain(|e| e.id != id);
        lists.backward.retain(|e| e.id != id);
    }
}

/// A module with hooks (torch's module after `register_*_hook`): see the [module docs](self).
///
/// Its members, type name, training flag and `extra_repr` are the module's, so its state dict,
/// parameters and printout are too. [`Forward`](crate::Forward) runs the module's forward with
/// the hooks; [`Hooked::call`] runs any other single-tensor method so.
pub struct Hooked<M> {
    module: Arc<M>,
    /// The module as the graphs of earlier calls reach it (for the backward hooks): the same `Arc`,
    /// taken out while the module is changed.
    link: Link<M>,
    hooks: Arc<HookStore<M>>,
}

impl<M: Module> Hooked<M> {
    /// Wraps `module`, with no hooks yet.
    pub fn new(module: M) -> Self {
        let module = Arc::new(module);
        Hooked {
            link: Arc::new(RwLock::new(Some(Arc::clone(&module)))),
            module,
            hooks: Arc::new(HookStore { lists: Mutex::new(HookLists::default()) }),
        }
    }

    /// The wrapped module.
    pub fn inner(&self) -> &M {
        &self.module
    }

    /// The wrapped module, mutably (held until the returned guard is dropped; this waits for a
    /// backward hook of this module running on another thread).
    pub fn inner_mut(&mut self) -> InnerMut<'_, M> {
        let mut link = self.link.write().unwrap_or_else(PoisonError::into_inner);
        // The graphs' reference is the only other one: without it the module is this wrapper's.
        *link = None;
        InnerMut { module: &mut self.module, link }
    }

    /// The module back, without its hooks (the backward passes of earlier calls no longer call
    /// them).
    pub fn into_inner(self) -> M {
        let Hooked { module, link, .. } = self;
        *link.write().unwrap_or_else(PoisonError::into_inner) = None;
        match Arc::try_unwrap(module) {
            Ok(m) => m,
            Err(_) => unreachable!("Hooked: the module is shared only with the graphs, through the link"),
        }
    }

    /// Whether any hook is registered.
    pub fn has_hooks(&self) -> bool {
        !self.hooks.lock().is_empty()
    }
}

impl<M: Module + 'static> Hooked<M> {
    /// Registers `put`'s hook under a fresh id.
    fn add(&self, put: impl FnOnce(&mut HookLists<M>, u64)) -> RemovableHandle {
        let id = next_id();
        put(&mut self.hooks.lock(), id);
        let weak = Arc::downgrade(&self.hooks);
        let store: Weak<dyn RemoveHook> = weak;
        RemovableHandle::new(id, store)
    }

    /// torch's `register_forward_pre_hook(hook)`: `hook(module, input)` runs before each forward
    /// pass; `Some(x)` replaces the input (for the later hooks and the forward pass).
    pub fn register_forward_pre_hook(
        &self,
        hook: impl Fn(&M, &Tensor) -> Result<Option<Tensor>> + Send + Sync + 'static,
    ) -> RemovableHandle {
        self.register_forward_pre_hook_with(hook, HookOptions::default())
    }

    /// [`register_forward_pre_hook`](Self::register_forward_pre_hook) with torch's `prepend`.
    pub fn register_forward_pre_hook_with(
        &self,
        hook: impl Fn(&M, &Tensor) -> Result<Option<Tensor>> + Send + Sync + 'static,
        options: HookOptions,
    ) -> RemovableHandle {
        let f: Arc<ForwardPreFn<M>> = Arc::new(hook);
        self.add(|lists, id| {
            insert(&mut lists.forward_pre, Entry { id, always_call: false, f }, options.prepend)
        })
    }

    /// torch's `register_forward_hook(hook)`: `hook(module, input, output)` runs after each
    /// forward pass (given the input the forward pass was given); `Some(y)` replaces the output.
    pub fn register_forward_hook(
        &self,
        hook: impl Fn(&M, &Tensor, &Tensor) -> Result<Option<Tensor>> + Send + Sync + 'static,
    ) -> RemovableHandle {
        self.register_forward_hook_with(hook, HookOptions::default())
    }

    /// [`register_forward_hook`](Self::register_forward_hook) with torch's `prepend`.
    pub fn register_forward_hook_with(
        &self,
        hook: impl Fn(&M, &Tensor, &Tensor) -> Result<Option<Tensor>> + Send + Sync + 'static,
        options: HookOptions,
    ) -> RemovableHandle {
        let f = forward_fn(move |m: &M, input: &Tensor, output: Option<&Tensor>| match output {
            Some(output) => hook(m, input, output),
            None => Ok(None),
        });
        self.add(|lists, id| insert(&mut lists.forward, Entry { id, always_call: false, f }, options.prepend))
    }

    /// torch's `register_forward_hook(hook, always_call=True)`: a forward hook that also runs
    /// when the call fails (a pre-hook, the forward pass or an earlier forward hook returned an
    /// error), given the output so far (`None` when the forward pass gave none). On a failed call
    /// its result and its own error are ignored, and the call's error is returned (torch silences
    /// the hook's exception with a warning and raises the forward's).
    pub fn register_forward_hook_always_call(
        &self,
        hook: impl Fn(&M, &Tensor, Option<&Tensor>) -> Result<Option<Tensor>> + Send + Sync + 'static,
        options: HookOptions,
    ) -> RemovableHandle {
        let f = forward_fn(hook);
        self.add(|lists, id| insert(&mut lists.forward, Entry { id, always_call: true, f }, options.prepend))
    }

    /// torch's `register_full_backward_pre_hook(hook)`: `hook(module, grad_output)` runs when
    /// the gradient of the module's output is computed; `Some(g)` (one entry per output) replaces
    /// it, for the later hooks and the backward pass through the module.
    pub fn register_full_backward_pre_hook(
        &self,
        hook: impl Fn(&M, &[Option<Tensor>]) -> Result<ReplacedGrads> + Send + Sync + 'static,
    ) -> RemovableHandle {
        self.register_full_backward_pre_hook_with(hook, HookOptions::default())
    }

    /// [`register_full_backward_pre_hook`](Self::register_full_backward_pre_hook) with torch's
    /// `prepend`.
    pub fn register_full_backward_pre_hook_with(
        &self,
        hook: impl Fn(&M, &[Option<Tensor>]) -> Result<ReplacedGrads> + Send + Sync + 'static,
        options: HookOptions,
    ) -> RemovableHandle {
        let f: Arc<BackwardPreFn<M>> = Arc::new(hook);
        self.add(|lists, id| {
            insert(&mut lists.backward_pre, Entry { id, always_call: false, f }, options.prepend)
        })
    }

    /// torch's `register_full_backward_hook(hook)`: `hook(module, grad_input, grad_output)` runs
    /// when the gradient of the module's input is computed (`grad_output` as the backward
    /// pre-hooks left it); `Some(g)` (one entry per input) replaces `grad_input`. For an input
    /// that does not require grad it runs from the output's gradient, with `grad_input = [None]`,
    /// and may only return `None` (or `None`s).
    pub fn register_full_backward_hook<F>(&self, hook: F) -> RemovableHandle
    where
        F: Fn(&M, &[Option<Tensor>], &[Option<Tensor>]) -> Result<ReplacedGrads> + Send + Sync + 'static,
    {
        self.register_full_backward_hook_with(hook, HookOptions::default())
    }

    /// [`register_full_backward_hook`](Self::register_full_backward_hook) with torch's `prepend`.
    pub fn register_full_backward_hook_with<F>(&self, hook: F, options: HookOptions) -> RemovableHandle
    where
        F: Fn(&M, &[Option<Tensor>], &[Option<Tensor>]) -> Result<ReplacedGrads> + Send + Sync + 'static,
    {
        let f: Arc<BackwardFn<M>> = Arc::new(hook);
        self.add(|lists, id| {
            insert(&mut lists.backward, Entry { id, always_call: false, f }, options.prepend)
        })
    }
}

/// A forward hook as stored (the closure's signature fixed by the bound).
fn forward_fn<M: 'static>(
    f: impl Fn(&M, &Tensor, Option<&Tensor>) -> Result<Option<Tensor>> + Send + Sync + 'static,
) -> Arc<ForwardFn<M>> {
    Arc::new(f)
}

/// The module of a [`Hooked`], mutably ([`Hooked::inner_mut`]); the graphs of earlier calls reach
/// it again when this is dropped.
pub struct InnerMut<'a, M> {
    module: &'a mut Arc<M>,
    link: RwLockWriteGuard<'a, Option<Arc<M>>>,
}

impl<M> Deref for InnerMut<'_, M> {
    type Target = M;

    fn deref(&self) -> &M {
        self.module
    }
}

impl<M> DerefMut for InnerMut<'_, M> {
    fn deref_mut(&mut self) -> &mut M {
        match Arc::get_mut(self.module) {
            Some(m) => m,
            None => unreachable!("Hooked: the module is shared only with the graphs, through the link"),
        }
    }
}

impl<M> Drop for InnerMut<'_, M> {
    fn drop(&mut self) {
        *self.link = Some(Arc::clone(self.module));
    }
}

impl<M: Module> Module for Hooked<M> {
    fn visit<'m>(&'m self, f: &mut dyn FnMut(&str, Member<'m>)) {
        self.module.visit(f);
    }

    fn visit_mut(&mut self, f: &mut dyn FnMut(&str, MemberMut<'_>)) {
        self.inner_mut().visit_mut(f);
    }

    fn type_name(&self) -> &'static str {
        self.module.type_name()
    }

    fn set_training(&mut self, training: bool) {
        self.inner_mut().set_training(training);
    }

    fn training_flag(&self) -> Option<bool> {
        self.module.training_flag()
    }

    fn extra_repr(&self) -> String {
        self.module.extra_repr()
    }

    fn batch_norm_momentum(&mut self, f: &mut dyn FnMut(&mut Option<f64>)) -> bool {
        self.inner_mut().batch_norm_momentum(f)
    }
}
