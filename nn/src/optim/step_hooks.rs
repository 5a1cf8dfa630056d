//! Optimizer step hooks (torch's `Optimizer.register_step_pre_hook` /
//! `register_step_post_hook`): [`StepHooked`] wraps any [`Optimizer`] and runs its hooks around
//! every step, as [`Hooked`](crate::hooks::Hooked) does for a module's forward pass.
//!
//! ```ignore
//! let opt = StepHooked::new(SGD::new(params, SgdOptions { lr: 0.1, ..Default::default() })?);
//! let handle = opt.register_step_pre_hook(|opt: &mut SGD| {
//!     opt.set_lr(0, opt.lr(0) * 0.5); // torch's hook(optimizer, args, kwargs)
//!     Ok(())
//! });
//! // ... opt.step()? runs the hook first ...
//! handle.remove();
//! ```

use std::fmt;
use std::ops::{Deref, DerefMut};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, Weak};

use oxtorch_tensor::{Result, Tensor};

use super::{Optimizer, OptimizerState, ParamGroupInfo};

/// A step hook: the optimizer, mutable (torch's `hook(optimizer, args, kwargs)`; the step takes
/// no arguments here, so there are none to replace). An error ends the step with it.
pub type StepHookFn<O> = dyn Fn(&mut O) -> Result<()> + Send + Sync;

/// The next step-hook id, unique across every optimizer and hook kind.
static NEXT_ID: AtomicU64 = AtomicU64::new(0);

/// The hooks of one optimizer, each list in calling order.
struct StepHookLists<O> {
    pre: Vec<(u64, Arc<StepHookFn<O>>)>,
    post: Vec<(u64, Arc<StepHookFn<O>>)>,
}

/// The hooks of a [`StepHooked`], shared (weakly) with its handles.
struct StepHookStore<O> {
    lists: Mutex<StepHookLists<O>>,
}

impl<O> StepHookStore<O> {
    fn lock(&self) -> MutexGuard<'_, StepHookLists<O>> {
        self.lists.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Where a [`StepHookHandle`]'s hook is registered.
trait RemoveStepHook: Send + Sync {
    /// Takes the hook `id` off (nothing when it is not registered).
    fn remove_hook(&self, id: u64);
}

impl<O> RemoveStepHook for StepHookStore<O> {
    fn remove_hook(&self, id: u64) {
        let mut lists = self.lock();
        lists.pre.retain(|(i, _)| *i != id);
        lists.post.retain(|(i, _)| *i != id);
    }
}

/// Unregisters the step hook it was returned for (torch's `RemovableHandle`): `remove` may be
/// called any number of times and does nothing once the optimizer is gone. Dropping the handle
/// does not remove the hook, as in torch.
#[derive(Clone)]
pub struct StepHookHandle {
    id: u64,
    store: Weak<dyn RemoveStepHook>,
}

impl StepHookHandle {
    /// The hook's id (torch's `handle.id`), unique in the process among step hooks.
    pub fn id(&self) -> u64 {
        self.id
    }

    /// Unregisters the hook: later steps do not call it. Idempotent.
    pub fn remove(&self) {
        if let Some(store) = self.store.upgrade() {
            store.remove_hook(self.id);
        }
    }
}

impl fmt::Debug for StepHookHandle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StepHookHandle").field("id", &self.id).finish()
    }
}

/// An optimizer with step hooks: every [`Optimizer::step`] (and
/// [`Optimizer::step_with_closure`]) first calls the pre-hooks in registration order, then the
/// optimizer's step, then the post-hooks, each with the optimizer mutable. A hook's error is
/// returned at once (a pre-hook's before anything is updated). The hooks registered when the step
/// begins are the ones called. Everything else is the wrapped optimizer's: it derefs to it, and
/// its [`Optimizer`] methods (state dict, param groups, ...) pass through.
pub struct StepHooked<O> {
    optimizer: O,
    hooks: Arc<StepHookStore<O>>,
}

impl<O: Optimizer + 'static> StepHooked<O> {
    /// `optimizer` without hooks yet.
    pub fn new(optimizer: O) -> Self {
        let lists = StepHookLists { pre: Vec::new(), post: Vec::new() };
        StepHooked { optimizer, hooks: Arc::new(StepHookStore { lists: Mutex::new(lists) }) }
    }

    /// The wrapped optimizer.
    pub fn inner(&self) -> &O {
        &self.optimizer
    }

    /// The wrapped optimizer, mutable.
    pub fn inner_mut(&mut self) -> &mut O {
        &mut self.optimizer
    }

    /// The optimizer without its hooks (their handles then do nothing).
    pub fn into_inner(self) -> O {
        self.optimizer
    }

    /// Registers a hook called before every step (torch's `register_step_pre_hook`).
    pub fn register_step_pre_hook(
        &self,
        hook: impl Fn(&mut O) -> Result<()> + Send + Sync + 'static,
    ) -> StepHookHandle {
        self.add(Arc::new(hook), true)
    }

    /// Registers a hook called after every step (torch's `register_step_post_hook`).
    pub fn register_step_post_hook(
        &self,
        hook: impl Fn(&mut O) -> Result<()> + Send + Sync + 'static,
    ) -> StepHookHandle {
        self.add(Arc::new(hook), false)
    }

    /// Whether any step hook is registered.
    pub fn has_hooks(&self) -> bool {
        let lists = self.hooks.lock();
        !lists.pre.is_empty() || !lists.post.is_empty()
    }

    fn add(&self, hook: Arc<StepHookFn<O>>, pre: bool) -> StepHookHandle {
        let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
        {
            let mut lists = self.hooks.lock();
            let list = if pre { &mut lists.pre } else { &mut lists.post };
            list.push((id, hook));
        }
        let weak: Weak<StepHookStore<O>> = Arc::downgrade(&self.hooks);
        let store: Weak<dyn RemoveStepHook> = weak;
        StepHookHandle { id, store }
    }

    /// Calls the pre-hooks, `step` on the optimizer, then the post-hooks.
    fn hooked<R>(&mut self, step: impl FnOnce(&mut O) -> Result<R>) -> Result<R> {
        let (pre, post) = {
            let lists = self.hooks.lock();
            (snapshot(&lists.pre), snapshot(&lists.post))
        };
        for hook in &pre {
            hook(&mut self.optimizer)?;
        }
        let out = step(&mut self.optimizer)?;
        for hook in &post {
            hook(&mut self.optimizer)?;
        }
        Ok(out)
    }
}

/// The hooks of a list, to call without the lock held.
fn snapshot<O>(list: &[(u64, Arc<StepHookFn<O>>)]) -> Vec<Arc<StepHookFn<O>>> {
    list.iter().map(|(_, f)| Arc::clone(f)).collect()
}

impl<O> Deref for StepHooked<O> {
    type Target = O;

    fn deref(&self) -> &O {
        &self.optimizer
    }
}

impl<O> DerefMut for StepHooked<O> {
    fn deref_mut(&mut self) -> &mut O {
        &mut self.optimizer
    }
}

impl<O: Optimizer + 'static> Optimizer for StepHooked<O> {
    fn step(&mut self) -> Result<()> {
        self.hooked(|o| o.step())
    }

    fn step_with_closure(&mut self, closure: &mut dyn FnMut() -> Result<Tensor>) -> Result<Option<Tensor>> {
        self.hooked(|o| o.step_with_closure(closure))
    }

    fn zero_grad(&mut self) -> Result<()> {
        self.optimizer.zero_grad()
    }

    fn zero_grad_with(&mut self, set_to_none: bool) -> Result<()> {
        self.optimizer.zero_grad_with(set_to_none)
    }

    fn group_params(&self, group: usize) -> Vec<Tensor> {
        self.optimizer.group_params(group)
    }

    fn params(&self) -> Vec<Tensor> {
        self.optimizer.params()
    }

    fn param_groups(&self) -> Vec<ParamGroupInfo> {
        self.optimizer.param_groups()
    }

    fn group_hyper(&self, group: usize, name: &str) -> Option<f64> {
        self.optimizer.group_hyper(group, name)
    }

    fn set_group_hyper(&mut self, group: usize, name: &str, value: f64) -> Result<()> {
        self.optimizer.set_group_hyper(group, name, value)
    }

    fn param_state(&self, param: &Tensor) -> Result<Vec<(String, Tensor)>> {
        self.optimizer.param_state(param)
    }

    fn param_state_tensor(&self, param: &Tensor, name: &str) -> Result<Option<Tensor>> {
        self.optimizer.param_state_tensor(param, name)
    }

    fn num_groups(&self) -> usize {
        self.optimizer.num_groups()
    }

    fn lr(&self, group: usize) -> f64 {
        self.optimizer.lr(group)
    }

    fn set_lr(&mut self, group: usize, lr: f64) {
        self.optimizer.set_lr(group, lr)
    }

    fn initial_lr(&self, group: usize) -> Option<f64> {
        self.optimizer.initial_lr(group)
    }

    fn set_initial_lr(&mut self, group: usize, lr: f64) {
        self.optimizer.set_initial_lr(group, lr)
    }

    fn hyper_params(&self, group: usize) -> Vec<(String, f64)> {
        self.optimizer.hyper_params(group)
    }

    fn set_hyper_param(&mut self, group: usize, name: &str, value: f64) {
        self.optimizer.set_hyper_param(group, name, value)
    }

    fn momentum(&self, group: usize) -> Option<f64> {
        self.optimizer.momentum(group)
    }

    fn set_momentum(&mut self, group: usize, momentum: f64) {
        self.optimizer.set_momentum(group, momentum)
    }

    fn group_len(&self, group: usize) -> Option<usize> {
        self.optimizer.group_len(group)
    }

    fn state_dict(&self) -> Result<OptimizerState> {
        self.optimizer.state_dict()
    }

    fn load_state_dict(&mut self, state: &OptimizerState) -> Result<()> {
        self.optimizer.load_state_dict(state)
    }

    fn add_param_group(&mut self, params: Vec<Tensor>, options: &[(&str, f64)]) -> Result<()> {
        self.optimizer.add_param_group(params, options)
    }
}
