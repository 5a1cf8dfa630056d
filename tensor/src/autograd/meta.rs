//! The autograd state of a tensor (torch's `AutogradMeta`) and the tensor methods that read it:
//! `requires_grad`, `grad`, `grad_fn`, `is_leaf`, `detach`, `retain_grad`, hooks.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};

use oxtorch_core::{Error, Result};

use super::node::{lock, Edge, GradFn, Node, NodeKind};
use crate::tensor::TensorImpl;
use crate::Tensor;

/// A hook on a tensor's gradient: it may return a replacement gradient (torch's `register_hook`).
pub type TensorHook = Arc<dyn Fn(&Tensor) -> Option<Tensor> + Send + Sync>;

/// A hook run on a leaf after its `.grad` was updated (torch's
/// `register_post_accumulate_grad_hook`); it receives the leaf.
pub type PostAccumulateHook = Arc<dyn Fn(&Tensor) + Send + Sync>;

/// Autograd state, created the first time a tensor requires grad or is produced by a recorded op.
pub(crate) struct AutogradMeta {
    requires_grad: AtomicBool,
    pub(crate) inner: Mutex<MetaInner>,
}

/// The mutable part of [`AutogradMeta`].
#[derive(Default)]
pub(crate) struct MetaInner {
    /// The node that produced this (non-leaf) tensor.
    pub(crate) grad_fn: Option<Edge>,
    /// `.grad`: accumulated for leaves, and for non-leaves that retain it.
    pub(crate) grad: Option<Tensor>,
    /// The leaf's `AccumulateGrad` node while a graph uses it.
    pub(crate) accumulator: Weak<Node>,
    /// Hooks of a leaf, run before accumulation (non-leaf hooks live on their node).
    pub(crate) hooks: Vec<(u64, TensorHook)>,
    /// Hooks run after a leaf's `.grad` was updated.
    pub(crate) post_accumulate_hooks: Vec<(u64, PostAccumulateHook)>,
    /// Whether a non-leaf keeps its `.grad`.
    pub(crate) retains_grad: bool,
    /// For a differentiable view: the tensor whose storage it views (its base's base, if any).
    pub(crate) view_base: Option<Tensor>,
    /// A view made under `no_grad` of a tensor that required grad: writing through it in grad
    /// mode is refused, as torch does (autograd could not see the write).
    pub(crate) made_in_no_grad: bool,
    /// For output `i` of a recorded op that returns several views (split, chunk, unbind): `(i,
    /// node name)`; torch refuses to write such a view in place.
    pub(crate) multi_output_view: Option<(usize, &'static str)>,
    /// For a recorded view: the storage's version when its `grad_fn` was set. A later write to
    /// the storage by another path (the base, another view) makes it stale.
    pub(crate) view_version: u64,
}

impl AutogradMeta {
    fn new(requires_grad: bool) -> Self {
        AutogradMeta {
            requires_grad: AtomicBool::new(requires_grad),
            inner: Mutex::new(MetaInner::default()),
        }
    }
}

static NEXT_HOOK_ID: AtomicU64 = AtomicU64::new(0);

/// Removes a hook it was returned for (torch's `RemovableHandle`).
pub struct HookHandle {
    id: u64,
    target: HookTarget,
}

enum HookTarget {
    Leaf(Weak<TensorImpl>),
    Node(Weak<Node>),
}

impl HookHandle {
    /// Unregisters the hook (a no-op if the tensor or its node is gone).
    pub fn remove(self) {
        match &self.target {
            HookTarget::Leaf(w) => {
                if let Some(t) = w.upgrade() {
                    if let Some(m) = t.autograd.get() {
                        let mut inner = lock(&m.inner);
                        inner.hooks.retain(|(id, _)| *id != self.id);
                        inner.post_accumulate_hooks.retain(|(id, _)| *id != self.id);
                    }
                }
            }
            HookTarget::Node(w) => {
                if let Some(n) = w.upgrade() {
                    lock(&n.output_hooks).hooks.retain(|(_, id, _)| *id != self.id);
                }
            }
        }
    }
}

impl Tensor {
    pub(crate) fn meta(&self) -> Option<&AutogradMeta> {
        self.0.autograd.get()
    }

    fn meta_or_init(&self) -> &AutogradMeta {
        self.0.autograd.get_or_init(|| AutogradMeta::new(false))
    }

    /// True when ops on this tensor are recorded for backward (a leaf that requires grad, or the
    /// output of a recorded op).
    #[inline]
    pub fn requires_grad(&self) -> bool {
        self.0.autograd.get().is_some_and(|m| m.requires_grad.load(Ordering::Relaxed))
    }

    /// Sets whether this leaf requires grad (torch's `requires_grad_()`); returns the tensor.
    /// Only floating-point tensors can require grad, and only leaves can change the flag.
    pub fn requires_grad_(&self, requires_grad: bool) -> Result<Tensor> {
        if requires_grad && !self.dtype().is_float() {
            return Err(Error::msg("only Tensors of floating point and complex dtype can require gradients"));
        }
        if !self.is_leaf() {
            if requires_grad {
                return Ok(self.clone());
            }
            return Err(Error::msg(
                "you can only change requires_grad flags of leaf variables. If you want to use a computed variable in a subgraph that doesn't require differentiation use var_no_grad = var.detach().",
            ));
        }
        if requires_grad || self.meta().is_some() {
            self.meta_or_init().requires_grad.store(requires_grad, Ordering::Relaxed);
        }
        Ok(self.clone())
    }

    /// True for tensors not produced by a recorded op (torch's `is_leaf`).
    pub fn is_leaf(&self) -> bool {
        self.meta().is_none_or(|m| lock(&m.inner).grad_fn.is_none())
    }

    /// Names this tensor's `grad_fn`, made by an op on `input`, as torch names the composite op
    /// (`MeanBackward0`); nothing for a tensor without history or one that kept `input`'s node
    /// (an op that returned its input).
    pub(crate) fn alias_grad_fn(&self, input: &Tensor, name: &'static str) {
        let (Some(GradFn(node)), before) = (self.grad_fn(), input.grad_fn()) else { return };
        if before.is_none_or(|b| !Arc::ptr_eq(&b.0, &node)) {
            node.set_alias(name);
        }
    }

    /// The node that produced this tensor (torch's `grad_fn`), `None` for leaves.
    pub fn grad_fn(&self) -> Option<GradFn> {
        let m = self.meta()?;
        let mut inner = lock(&m.inner);
        self.refresh_view_history(&mut inner);
        inner.grad_fn.as_ref().map(|e| GradFn(e.node.clone()))
    }

    /// For a recorded view whose storage was written since its `grad_fn` was set (through its
    /// base or another view): rebuilds the node over the base's current history, as torch does, so
    /// that the gradient sees the write.
    fn refresh_view_history(&self, inner: &mut MetaInner) {
        let (Some(base), Some(_)) = (&inner.view_base, &inner.grad_fn) else { return };
        let now = self.version();
        if now == inner.view_version {
            return;
        }
        if let Some(edge) = super::record::regenerated_view_edge(self.layout(), base) {
            self.replace_grad_fn(inner, edge);
        }
        inner.view_version = now;
    }

    /// Makes `edge` this tensor's history; a retained `.grad` follows it (the old node no longer
    /// fills it).
    fn replace_grad_fn(&self, inner: &mut MetaInner, edge: Edge) {
        if inner.retains_grad {
            if let Some(old) = &inner.grad_fn {
                let me = Arc::as_ptr(&self.0);
                lock(&old.node.output_hooks)
                    .retained
                    .retain(|(nr, w)| !(*nr == old.input_nr && std::ptr::eq(w.as_ptr(), me)));
            }
            lock(&edge.node.output_hooks).retained.push((edge.input_nr, Arc::downgrade(&self.0)));
        }
        inner.grad_fn = Some(edge);
    }

    /// The accumulated gradient (torch's `.grad`).
    pub fn grad(&self) -> Option<Tensor> {
        self.meta().and_then(|m| lock(&m.inner).grad.clone())
    }

    /// Replaces `.grad` (torch's `x.grad = g` / `x.grad = None`); the shape must match.
    pub fn set_grad(&self, grad: Option<Tensor>) -> Result<()> {
        if let Some(g) = &grad {
            if g.is_same(self) {
                // (the next backward would add into the tensor itself)
                return Err(Error::msg("can't assign Variable as its own grad"));
            }
            if g.dims() != self.dims() {
                return Err(Error::shape(format!(
                    "attempting to assign a gradient of size '{:?}' to a tensor of size '{:?}'. Please ensure that the gradient and the tensor are the same size",
                    g.dims(),
                    self.dims()
                )));
            }
            if g.dtype() != self.dtype() {
                return Err(Error::msg(format!(
                    "attempting to assign a gradient with dtype '{}' to a tensor with grad_dtype '{}'. The gradient must match the tensor's grad_dtype (defaults to the tensor's dtype).",
                    crate::ops::cpp_name(g.dtype()),
                    self.dtype().scalar_type_name()
                )));
            }
        }
        if grad.is_none() && self.meta().is_none() {
            return Ok(());
        }
        lock(&self.meta_or_init().inner).grad = grad;
        Ok(())
    }

    /// A tensor sharing this one's storage, cut from the graph (torch's `detach()`).
    pub fn detach(&self) -> Tensor {
        self.with_layout(self.layout().clone())
    }

    /// Cuts this tensor from the graph in place: it becomes a leaf that does not require grad.
    pub fn detach_(&self) -> Result<&Tensor> {
        if let Some(m) = self.meta() {
            let mut inner = lock(&m.inner);
            if inner.view_base.is_some() {
                return Err(Error::msg("Can't detach views in-place. Use detach() instead."));
            }
            inner.grad_fn = None;
            m.requires_grad.store(false, Ordering::Relaxed);
        }
        Ok(self)
    }

    /// Makes this non-leaf keep its gradient in `.grad` after backward (no-op on leaves).
    pub fn retain_grad(&self) -> Result<()> {
        if !self.requires_grad() {
            return Err(Error::msg("can't retain_grad on Tensor that has requires_grad=False"));
        }
        let m = self.meta_or_init();
        let mut inner = lock(&m.inner);
        if inner.retains_grad {
            return Ok(());
        }
        // A view whose base was written since has a new node: the retained gradient is its.
        self.refresh_view_history(&mut inner);
        if let Some(edge) = &inner.grad_fn {
            lock(&edge.node.output_hooks).retained.push((edge.input_nr, Arc::downgrade(&self.0)));
            inner.retains_grad = true;
        }
        Ok(())
    }

    /// True for a non-leaf that keeps its gradient (torch's `retains_grad`).
    pub fn retains_grad(&self) -> bool {
        self.meta().is_some_and(|m| lock(&m.inner).retains_grad)
    }

    /// Registers a hook called with this tensor's gradient each time it is computed; a hook that
    /// returns `Some(g)` replaces the gradient (torch's `register_hook`).
    pub fn register_hook(
        &self,
        hook: impl Fn(&Tensor) -> Option<Tensor> + Send + Sync + 'static,
    ) -> Result<HookHandle> {
        if !self.requires_grad() {
            return Err(Error::msg("cannot register a hook on a tensor that doesn't require gradient"));
        }
        let hook: TensorHook = Arc::new(hook);
        let id = NEXT_HOOK_ID.fetch_add(1, Ordering::Relaxed);
        let m = self.meta_or_init();
        let mut inner = lock(&m.inner);
        // A view whose base was written since has a new node: the hook goes on it.
        self.refresh_view_history(&mut inner);
        match &inner.grad_fn {
            Some(edge) => {
                lock(&edge.node.output_hooks).hooks.push((edge.input_nr, id, hook));
                Ok(HookHandle { id, target: HookTarget::Node(Arc::downgrade(&edge.node)) })
            }
            None => {
                drop(inner);
                lock(&m.inner).hooks.push((id, hook));
                Ok(HookHandle { id, target: HookTarget::Leaf(Arc::downgrade(&self.0)) })
            }
        }
    }

    /// Registers a hook run after this leaf's `.grad` was updated by backward.
    pub fn register_post_accumulate_grad_hook(
        &self,
        hook: impl Fn(&Tensor) + Send + Sync + 'static,
    ) -> Result<HookHandle> {
        if !self.is_leaf() {
            return Err(Error::msg("post accumulate grad hooks cannot be registered on non-leaf tensors"));
        }
        if !self.requires_grad() {
            return Err(Error::msg("cannot register a hook on a tensor that doesn't require gradient"));
        }
        let id = NEXT_HOOK_ID.fetch_add(1, Ordering::Relaxed);
        lock(&self.meta_or_init().inner).post_accumulate_hooks.push((id, Arc::new(hook)));
        Ok(HookHandle { id, target: HookTarget::Leaf(Arc::downgrade(&self.0)) })
    }

    /// The edge gradients of this tensor flow into: its `grad_fn`, or its leaf accumulator.
    /// `None` when it does not require grad.
    pub(crate) fn gradient_edge(&self) -> Option<Edge> {
        let m = self.meta()?;
        if !m.requires_grad.load(Ordering::Relaxed) {
            return None;
        }
        let mut inner = lock(&m.inner);
        self.refresh_view_history(&mut inner);
        if let Some(e) = &inner.grad_fn {
            return Some(e.clone());
        }
        let node = match inner.accumulator.upgrade() {
            Some(n) => n,
            None => {
                let n = Node::new("AccumulateGrad", Vec::new(), 1, NodeKind::Accumulate(self.clone()));
                inner.accumulator = Arc::downgrade(&n);
                n
            }
        };
        Some(Edge { node, input_nr: 0 })
    }

    /// Makes a freshly created output of a recorded op point at its node.
    pub(crate) fn set_grad_fn(&self, edge: Edge, view_base: Option<Tensor>) {
        let m = self.meta_or_init();
        let mut inner = lock(&m.inner);
        inner.grad_fn = Some(edge);
        inner.view_base = view_base;
        inner.view_version = self.version();
        m.requires_grad.store(true, Ordering::Relaxed);
    }

    /// Replaces this tensor's history after an in-place op (torch's `rebase_history`).
    pub(crate) fn rebase_grad_fn(&self, edge: Edge) {
        let m = self.meta_or_init();
        let mut inner = lock(&m.inner);
        self.replace_grad_fn(&mut inner, edge);
        inner.view_version = self.version();
        m.requires_grad.store(true, Ordering::Relaxed);
    }

    /// For a differentiable view, the tensor it views.
    pub(crate) fn view_base(&self) -> Option<Tensor> {
        self.meta().and_then(|m| lock(&m.inner).view_base.clone())
    }

    /// True when `self` and `other` are the same tensor object (not just the same storage).
    pub fn is_same(&self, other: &Tensor) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl Tensor {
    /// Remembers the tensor a (non-recorded) view views, for in-place checks and history.
    pub(crate) fn set_view_base(&self, base: Tensor, made_in_no_grad: bool) {
        let m = self.meta_or_init();
        let mut inner = lock(&m.inner);
        inner.view_base = Some(base);
        inner.made_in_no_grad = made_in_no_grad;
    }

    /// Marks output `i` of the multi-view op `name` (see [`Tensor::multi_output_view`]).
    pub(crate) fn set_multi_output_view(&self, i: usize, name: &'static str) {
        lock(&self.meta_or_init().inner).multi_output_view = Some((i, name));
    }

    /// `(i, op name)` for output `i` of a recorded op that returns several views, which torch
    /// refuses to write in place; a later in-place history (a `rebase`) does not clear it.
    pub(crate) fn multi_output_view(&self) -> Option<(usize, &'static str)> {
        self.meta().and_then(|m| lock(&m.inner).multi_output_view)
    }

    /// True for a view made under `no_grad` of a tensor that required grad.
    pub(crate) fn made_in_no_grad(&self) -> bool {
        self.meta().is_some_and(|m| lock(&m.inner).made_in_no_grad)
    }
}
