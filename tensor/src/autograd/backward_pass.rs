//! More of torch's `torch.autograd` / `torch.autograd.graph`: the scoped `detect_anomaly`,
//! `increment_version` and `register_multi_grad_hook`, with the per-backward-pass bookkeeping
//! (a pass id and callbacks run when the pass ends) that the multi-grad hooks need.

use std::cell::RefCell;
use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use oxtorch_core::Result;

use super::engine::{is_anomaly_enabled, set_detect_anomaly};
use super::meta::HookHandle;
use super::node::lock;
use crate::Tensor;

/// A scope with anomaly detection on (torch's `with torch.autograd.detect_anomaly():`); the
/// previous setting comes back when it drops.
#[must_use = "anomaly detection is restored as soon as the guard drops"]
pub struct DetectAnomalyGuard {
    previous: bool,
}

impl DetectAnomalyGuard {
    /// Sets anomaly detection to `enabled` until the guard drops (torch's
    /// `torch.autograd.set_detect_anomaly(mode)` used as a context manager).
    pub fn new(enabled: bool) -> Self {
        let previous = is_anomaly_enabled();
        set_detect_anomaly(enabled);
        DetectAnomalyGuard { previous }
    }
}

impl Drop for DetectAnomalyGuard {
    fn drop(&mut self) {
        set_detect_anomaly(self.previous);
    }
}

/// Turns anomaly detection on until the guard drops (torch's `torch.autograd.detect_anomaly()`).
pub fn detect_anomaly() -> DetectAnomalyGuard {
    DetectAnomalyGuard::new(true)
}

/// Bumps the version counter of `t`'s storage, as an in-place write would (torch's
/// `torch.autograd.graph.increment_version`): tensors saved from it before become stale.
pub fn increment_version(t: &Tensor) {
    t.storage().bump_version();
}

type Callback = Box<dyn FnOnce() -> Result<()>>;

/// One running backward pass.
struct Frame {
    id: u64,
    callbacks: Vec<Callback>,
}

static NEXT_PASS: AtomicU64 = AtomicU64::new(1);

thread_local! {
    static FRAMES: RefCell<Vec<Frame>> = const { RefCell::new(Vec::new()) };
}

/// A backward pass in progress on this thread (torch's graph task); the engine enters one per
/// pass and finishes it when the pass succeeded.
pub(crate) struct BackwardFrame {
    depth: usize,
}

impl BackwardFrame {
    /// Starts a pass with a fresh id.
    pub(crate) fn enter() -> Self {
        let id = NEXT_PASS.fetch_add(1, Ordering::Relaxed);
        let depth = FRAMES.with(|f| {
            let mut f = f.borrow_mut();
            f.push(Frame { id, callbacks: Vec::new() });
            f.len() - 1
        });
        BackwardFrame { depth }
    }

    /// Runs the callbacks queued during the pass (and those they queue), in order.
    pub(crate) fn finish(self) -> Result<()> {
        loop {
            let callbacks = FRAMES.with(|f| {
                f.borrow_mut()
                    .get_mut(self.depth)
                    .map(|fr| std::mem::take(&mut fr.callbacks))
                    .unwrap_or_default()
            });
            if callbacks.is_empty() {
                return Ok(());
            }
            for cb in callbacks {
                cb()?;
            }
        }
    }
}

impl Drop for BackwardFrame {
    fn drop(&mut self) {
        FRAMES.with(|f| f.borrow_mut().truncate(self.depth));
    }
}

/// The id of the innermost backward pass running on this thread (torch's
/// `torch._C._current_graph_task_id()`), `None` outside backward.
pub fn current_graph_task_id() -> Option<u64> {
    FRAMES.with(|f| f.borrow().last().map(|fr| fr.id))
}

/// Queues `cb` to run when the innermost backward pass ends (torch's
/// `Variable._execution_engine.queue_callback`); false outside backward.
pub(crate) fn queue_callback(cb: Callback) -> bool {
    FRAMES.with(|f| match f.borrow_mut().last_mut() {
        Some(fr) => {
            fr.callbacks.push(cb);
            true
        }
        None => false,
    })
}

/// When a multi-grad hook fires (torch's `mode` argument).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MultiGradMode {
    /// Once per backward pass, after the gradients of all the tensors that the pass reaches were
    /// computed: the hook gets one entry per tensor, `None` for those the pass did not reach.
    All,
    /// Once per backward pass, with the first gradient computed among the tensors: the hook gets
    /// a single entry.
    Any,
}

/// The user's multi-grad hook.
pub type MultiGradHook = Arc<dyn Fn(&[Option<Tensor>]) + Send + Sync>;

/// Removes every per-tensor hook of a multi-grad hook (torch's `_MultiHandle`).
pub struct MultiGradHookHandle {
    handles: Vec<HookHandle>,
}

impl MultiGradHookHandle {
    /// Unregisters the hook.
    pub fn remove(self) {
        self.handles.into_iter().for_each(HookHandle::remove);
    }
}

/// Per-hook state, keyed by backward pass id: a nested pass (a `grad` call inside a hook) or a
/// pass on another thread has its own entry, removed by the callback queued when it ends.
enum MultiState {
    /// the gradients gathered so far in each running pass
    All(HashMap<u64, Vec<Option<Tensor>>>),
    /// the passes in which the hook already fired
    Any(HashSet<u64>),
}

/// Registers `hook` on several tensors at once (torch's
/// `torch.autograd.graph.register_multi_grad_hook(tensors, fn, mode=...)`).
///
/// With [`MultiGradMode::All`] every tensor must require grad; the hook runs once per backward
/// pass that reaches any of them, when the pass ends, with their gradients (`None` for those not
/// reached). With [`MultiGradMode::Any`] tensors that do not require grad are skipped, and the
/// hook runs with the first gradient computed in each pass. The hook observes gradients; it does
/// not change them. Each backward pass is tracked on its own, so nested passes (a `grad` call in
/// a tensor hook) and passes on other threads do not disturb each other.
pub fn register_multi_grad_hook(
    tensors: &[Tensor],
    hook: impl Fn(&[Option<Tensor>]) + Send + Sync + 'static,
    mode: MultiGradMode,
) -> Result<MultiGradHookHandle> {
    let hook: MultiGradHook = Arc::new(hook);
    let n = tensors.len();
    let state = Arc::new(Mutex::new(match mode {
        MultiGradMode::All => MultiState::All(HashMap::new()),
        MultiGradMode::Any => MultiState::Any(HashSet::new()),
    }));
    let mut handles = Vec::with_capacity(n);
    for (i, t) in tensors.iter().enumerate() {
        let (hook, state) = (hook.clone(), state.clone());
        let handle = match mode {
            MultiGradMode::All => t.register_hook(move |g: &Tensor| {
                let pass = current_graph_task_id()?;
                let mut st = lock(&state);
                let MultiState::All(passes) = &mut *st else { return None };
                let grads = passes.entry(pass).or_insert_with(|| {
                    let (hook, state) = (hook.clone(), state.clone());
                    queue_callback(Box::new(move || -> Result<()> {
                        let grads = match &mut *lock(&state) {
                            MultiState::All(passes) => passes.remove(&pass),
                            MultiState::Any(_) => None,
                        };
                        if let Some(grads) = grads {
                            hook(&grads);
                        }
                        Ok(())
                    }));
                    vec![None; n]
                });
                grads[i] = Some(g.clone());
                None
            }),
            MultiGradMode::Any => {
                if !t.requires_grad() {
                    continue;
                }
                t.register_hook(move |g: &Tensor| {
                    let pass = current_graph_task_id()?;
                    {
                        let mut st = lock(&state);
                        let MultiState::Any(fired) = &mut *st else { return None };
                        if !fired.insert(pass) {
                            return None;
                        }
                    }
                    let state = state.clone();
                    queue_callback(Box::new(move || -> Result<()> {
                        if let MultiState::Any(fired) = &mut *lock(&state) {
                            fired.remove(&pass);
                        }
                        Ok(())
                    }));
                    hook(&[Some(g.clone())]);
                    None
                })
            }
        };
        match handle {
            Ok(h) => handles.push(h),
            Err(e) => {
                handles.into_iter().for_each(HookHandle::remove);
                return Err(e);
            }
        }
    }
    Ok(MultiGradHookHandle { handles })
}
