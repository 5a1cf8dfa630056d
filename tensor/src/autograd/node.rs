//! Graph nodes: one per recorded op, holding its backward function and the edges to the nodes
//! that produced its inputs.

use std::borrow::Cow;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, Weak};

use oxtorch_core::{Error, Result};

use super::meta::TensorHook;
use crate::tensor::TensorImpl;
use crate::Tensor;

/// The derivative of one recorded op: maps the gradients of its outputs to the gradients of its
/// inputs. It is written in tensor ops, so that with `create_graph` the backward pass is itself
/// recorded (higher-order gradients).
pub trait Backward: Send + Sync {
    /// Input gradients (one per forward input, `None` where the input needs none) from output
    /// gradients (`None` where an output received none: treat it as zeros).
    fn backward(&self, grads: &[Option<Tensor>], needs: &[bool]) -> Result<Vec<Option<Tensor>>>;

    /// Frees the saved tensors (after a backward pass without `retain_graph`).
    fn release(&mut self) {}

    /// Whether the rule holds tensors saved from the forward pass. One that holds none (a view's,
    /// a join's) stays usable after a backward pass without `retain_graph`: as in torch, a second
    /// backward through it, say from another piece of a `split`, is not an error.
    fn saves_tensors(&self) -> bool {
        true
    }
}

/// Where a gradient flows: output `input_nr` of `node` (torch's `Edge`; `input_nr` is the
/// index of the node's *backward input*, which is the forward output).
#[derive(Clone)]
pub struct Edge {
    /// the node that produced the tensor
    pub(crate) node: Arc<Node>,
    /// which of the node's outputs the tensor is
    pub(crate) input_nr: usize,
}

/// What the node does when it runs.
pub(crate) enum NodeKind {
    /// An op's derivative.
    Op(Box<dyn Backward>),
    /// Accumulates into a leaf's `.grad` (torch's `AccumulateGrad`).
    Accumulate(Tensor),
}

/// Per-output bookkeeping: hooks registered on the tensors this node produced, and the tensors
/// that retain their gradient.
#[derive(Default)]
pub(crate) struct OutputHooks {
    pub(crate) hooks: Vec<(usize, u64, TensorHook)>,
    pub(crate) retained: Vec<(usize, Weak<TensorImpl>)>,
}

static NEXT_SEQ: AtomicU64 = AtomicU64::new(0);
static LIVE_NODES: AtomicU64 = AtomicU64::new(0);

/// The number of graph nodes alive in the process (for leak checks: a finished training step
/// leaves none behind).
pub fn live_nodes() -> u64 {
    LIVE_NODES.load(Ordering::Relaxed)
}

/// A node of the backward graph (torch's `grad_fn` objects).
pub struct Node {
    name: Cow<'static, str>,
    /// torch's name for a composite op whose last primitive made this node (`MeanBackward1` for
    /// the division that ends `mean(dim)`), set once by the op.
    alias: OnceLock<&'static str>,
    seq: u64,
    pub(crate) next: Vec<Option<Edge>>,
    pub(crate) num_outputs: usize,
    kind: Mutex<Option<NodeKind>>,
    pub(crate) output_hooks: Mutex<OutputHooks>,
}

impl Node {
    pub(crate) fn new(
        name: impl Into<Cow<'static, str>>,
        next: Vec<Option<Edge>>,
        num_outputs: usize,
        kind: NodeKind,
    ) -> Arc<Node> {
        LIVE_NODES.fetch_add(1, Ordering::Relaxed);
        Arc::new(Node {
            name: name.into(),
            alias: OnceLock::new(),
            seq: NEXT_SEQ.fetch_add(1, Ordering::Relaxed),
            next,
            num_outputs,
            kind: Mutex::new(Some(kind)),
            output_hooks: Mutex::new(OutputHooks::default()),
        })
    }

    /// torch's class name of the node, such as `MulBackward0` or `AccumulateGrad`.
    pub fn name(&self) -> &str {
        self.alias.get().copied().unwrap_or(&self.name)
    }

    /// Gives the node the torch name of the composite op that ended with it (once; later calls
    /// keep the first name).
    pub(crate) fn set_alias(&self, name: &'static str) {
        let _ = self.alias.set(name);
    }

    /// Creation order: later nodes run first in backward (torch's `sequence_nr`).
    pub(crate) fn seq(&self) -> u64 {
        self.seq
    }

    /// The nodes that produced this node's inputs, with the output index of each (torch's
    /// `next_functions`); `None` for inputs that do not require grad.
    pub fn next_functions(&self) -> Vec<Option<(GradFn, usize)>> {
        self.next.iter().map(|e| e.as_ref().map(|e| (GradFn(e.node.clone()), e.input_nr))).collect()
    }

    pub(crate) fn kind(&self) -> MutexGuard<'_, Option<NodeKind>> {
        lock(&self.kind)
    }

    /// The leaf a `AccumulateGrad` node writes to.
    pub(crate) fn leaf(&self) -> Option<Tensor> {
        match &*self.kind() {
            Some(NodeKind::Accumulate(t)) => Some(t.clone()),
            _ => None,
        }
    }

    /// Frees saved tensors; a later backward through this node fails with torch's message.
    pub(crate) fn release(&self) {
        let mut kind = self.kind();
        if let Some(NodeKind::Op(b)) = &mut *kind {
            if !b.saves_tensors() {
                return;
            }
            b.release();
            *kind = None;
        }
    }

    /// Runs the node's derivative.
    ///
    /// The node's `kind` lock is held while the derivative runs, and so while it reads its saved
    /// tensors: an unpack hook of [`super::saved_tensors_hooks`] runs under it, so it must not run
    /// a backward pass through this same node (that would wait on the lock forever). Hooks that
    /// only move or rebuild the tensor (all the usual ones) are unaffected.
    pub(crate) fn apply(&self, grads: &[Option<Tensor>], needs: &[bool]) -> Result<Vec<Option<Tensor>>> {
        match &*self.kind() {
            Some(NodeKind::Op(b)) => b.backward(grads, needs),
            Some(NodeKind::Accumulate(_)) => Ok(Vec::new()),
            None => Err(Error::msg(format!(
                "Trying to backward through the graph a second time (or directly access saved tensors after they have already been freed). Saved intermediate values of the graph are freed when you call .backward() or autograd.grad(). Specify retain_graph=True if you need to backward through the graph a second time or if you need to access saved tensors after calling backward. (node: {})",
                self.name()
            ))),
        }
    }
}

impl Drop for Node {
    /// Frees the chain of producers iteratively: dropping the last reference to a graph of a
    /// million nodes (a long recurrence) must not overflow the stack.
    fn drop(&mut self) {
        LIVE_NODES.fetch_sub(1, Ordering::Relaxed);
        let mut stack: Vec<Arc<Node>> = self.next.drain(..).flatten().map(|e| e.node).collect();
        while let Some(node) = stack.pop() {
            if let Ok(mut node) = Arc::try_unwrap(node) {
                stack.extend(node.next.drain(..).flatten().map(|e| e.node));
            }
        }
    }
}

/// A tensor's `grad_fn`: a handle to the node that produced it.
#[derive(Clone)]
pub struct GradFn(pub(crate) Arc<Node>);

impl GradFn {
    /// torch's class name, such as `MulBackward0`.
    pub fn name(&self) -> &str {
        self.0.name()
    }

    /// torch's `next_functions`.
    pub fn next_functions(&self) -> Vec<Option<(GradFn, usize)>> {
        self.0.next_functions()
    }

    /// torch's `_sequence_nr()`: the node's creation order, unique in the process.
    pub fn sequence_nr(&self) -> u64 {
        self.0.seq()
    }

    /// For an `AccumulateGrad` node, the leaf it accumulates into (torch's
    /// `AccumulateGrad.variable`); `None` for other nodes.
    pub fn variable(&self) -> Option<Tensor> {
        self.0.leaf()
    }

    /// True when both handles name the same node.
    pub fn ptr_eq(&self, other: &GradFn) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl std::fmt::Debug for GradFn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "<{}>", self.name())
    }
}

/// A tensor saved for backward, with the storage version it had when saved: using it after an
/// in-place write fails with torch's message instead of computing a wrong gradient.
///
/// (saved_hooks33) While saved-tensors hooks are registered ([`super::saved_tensors_hooks`]), only
/// what the pack hook returned is kept, and each read calls the unpack hook. As in torch, a packed
/// tensor is not checked against in-place writes (the hook decides what is kept).
pub struct SavedTensor {
    /// the tensor itself, when no pack hook took it
    tensor: Option<Tensor>,
    /// what the pack hook kept, with the history of the tensor it packed (boxed: every recorded
    /// op saves tensors, and most are not packed)
    packed: Option<Box<PackedSaved>>,
    version: u64,
    op: &'static str,
}

/// A packed saved tensor: what the hook kept, and the original's gradient edge (given back to
/// the unpacked tensor, as torch's).
struct PackedSaved {
    value: super::saved_hooks::Packed,
    edge: Option<Edge>,
}

impl SavedTensor {
    /// Saves `tensor` as it is now (through the innermost saved-tensors pack hook, if any).
    pub fn new(tensor: &Tensor, op: &'static str) -> Self {
        let mut saved = SavedTensor::unhooked(tensor, op);
        saved.apply_hooks();
        saved
    }

    /// Saves `tensor` as it is now, without running saved-tensors hooks.
    pub(crate) fn unhooked(tensor: &Tensor, op: &'static str) -> Self {
        SavedTensor { tensor: Some(tensor.clone()), packed: None, version: tensor.version(), op }
    }

    /// Hands the tensor to the innermost pack hook, if one is registered (the version saved
    /// stays).
    pub(crate) fn apply_hooks(&mut self) {
        let Some(t) = &self.tensor else { return };
        let Some(value) = super::saved_hooks::pack(t) else { return };
        let packed = PackedSaved { value, edge: t.gradient_edge() };
        self.tensor = None;
        self.packed = Some(Box::new(packed));
    }

    /// Whether the saved tensor is a single number held as it was saved (not packed by a hook): a
    /// 0-d tensor, or one value seen at every position (a number operand broadcast to the other
    /// operand's shape, as in `x * 2.0`). Freeing it frees nothing worth having.
    pub(crate) fn is_scalar(&self) -> bool {
        self.tensor.as_ref().is_some_and(|t| t.strides().iter().all(|&s| s == 0))
    }

    /// Whether the saved tensor requires grad (without unpacking it).
    pub(crate) fn requires_grad(&self) -> bool {
        match (&self.tensor, &self.packed) {
            (Some(t), _) => t.requires_grad(),
            (None, Some(p)) => p.edge.is_some(),
            (None, None) => false,
        }
    }

    /// Torch's error when the saved tensor was modified in place since it was saved. A tensor
    /// packed by a saved-tensors hook is not checked ("Only check version counter in the case
    /// without hooks", as torch).
    pub(crate) fn check_version(&self) -> Result<()> {
        let Some(t) = &self.tensor else { return Ok(()) };
        let now = t.version();
        if now != self.version {
            return Err(Error::msg(format!(
                "one of the variables needed for gradient computation has been modified by an inplace operation: [{}{:?}] (saved by {}), is at version {now}; expected version {} instead. Hint: the backtrace further above can show the operation that failed to compute its gradient. The variable in question was changed in there or anywhere later. Good luck!",
                t.dtype().scalar_type_name(),
                t.dims(),
                self.op,
                self.version
            )));
        }
        Ok(())
    }

    /// The saved tensor (unpacked by the hook that packed it), or torch's error when it was
    /// modified in place since.
    pub fn get(&self) -> Result<Tensor> {
        self.check_version()?;
        match (&self.tensor, &self.packed) {
            (Some(t), _) => Ok(t.clone()),
            (None, Some(p)) => {
                // As torch's: the unpacked tensor carries the original's history (its grad_fn or
                // leaf accumulator), never the history of what unpack computed it from.
                let t = p.value.unpack()?.detach();
                if let Some(edge) = &p.edge {
                    if t.is_floating_point() {
                        t.set_grad_fn(edge.clone(), None);
                    }
                }
                Ok(t)
            }
            (None, None) => Err(Error::msg("autograd internal error: empty saved tensor")),
        }
    }
}

/// Locks a mutex, recovering from a poisoned lock (a panicking hook must not wedge the graph).
pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}
