//! The pending graph: nodes that say how to compute flat device buffers from other buffers and
//! nodes, without computing them yet.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, Weak};

use oxtorch_core::ops::Prim;
use oxtorch_core::{DType, Device, Layout, Scalar};

use crate::pjrt::Buffer;
use crate::xla::dynamic::Extent;

/// Where a storage's elements are.
#[derive(Clone, Debug)]
pub(crate) enum Data {
    /// In a device buffer; padded beyond the storage's elements for a dynamic tensor.
    Ready(Arc<Buffer>, Option<Extent>),
    /// Output `.1` of a node of the pending graph (computed once the node has a result).
    Pending(Arc<Node>, usize),
}

impl Data {
    /// The device buffer, if the data is computed.
    pub fn ready(&self) -> Option<&Arc<Buffer>> {
        match self {
            Data::Ready(b, _) => Some(b),
            Data::Pending(node, i) => node.result.get().map(|r| &r[*i]),
        }
    }

    /// The rows of a padded (dynamic) buffer; `None` for an exact one, or one not computed yet.
    pub fn extent(&self) -> Option<Extent> {
        match self {
            Data::Ready(_, extent) => *extent,
            Data::Pending(node, i) => node.extents.get().and_then(|e| e.get(*i).copied().flatten()),
        }
    }

    /// The pending node, if the data is not computed yet.
    pub fn pending(&self) -> Option<&Arc<Node>> {
        match self {
            Data::Pending(node, _) if node.result.get().is_none() && !node.has_run() => Some(node),
            _ => None,
        }
    }
}

/// What a node computes; the same programs the eager runtime runs, in one fused program.
#[derive(Debug)]
pub(crate) enum Step {
    /// A prim on its inputs.
    Prim(Prim),
    /// `dst[layout] = cast(src[layout])`: inputs (dst, src); the output is the new flat dst.
    CopyInto,
    /// `dst[layout] = value`: input dst and a scalar; the output is the new flat dst.
    FillInto,
    /// A flat buffer of `numel` copies of a scalar.
    Full { numel: usize },
}

/// An input of a node.
#[derive(Debug)]
pub(crate) enum Arg {
    /// A view of a storage's data.
    View { data: Data, dtype: DType, len: usize, layout: Layout },
    /// A 0-d value of `dtype` (a program argument, so a new value never compiles again).
    Scalar(Scalar, DType),
}

/// One pending op.
#[derive(Debug)]
pub(crate) struct Node {
    /// Creation order: inputs are always older than the nodes that use them.
    pub id: u64,
    pub step: Step,
    pub device: Device,
    /// Dtype and flat length of each output.
    pub outputs: Vec<(DType, usize)>,
    /// Emptied once the node is computed, so computed history is freed.
    pub args: Mutex<Vec<Arg>>,
    /// The output buffers, once computed.
    pub result: OnceLock<Vec<Arc<Buffer>>>,
    /// Per output, the rows of its buffer when a generalized graph computed it padded.
    pub extents: OnceLock<Vec<Option<Extent>>>,
    /// Whether the node still counts as pending in [`pending_nodes`].
    counted: AtomicBool,
    /// The recording thread ([`current_thread`]).
    pub thread: u64,
}

/// A small id of the calling thread, for telling which thread recorded a node.
pub(crate) fn current_thread() -> u64 {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    thread_local! {
        static ID: u64 = NEXT.fetch_add(1, Ordering::Relaxed);
    }
    ID.with(|id| *id)
}

static NEXT_ID: AtomicU64 = AtomicU64::new(0);

/// The nodes not yet computed, for [`super::sync`]; pruned as they are computed or dropped.
static LIVE: Mutex<Vec<Weak<Node>>> = Mutex::new(Vec::new());
/// Nodes recorded and not yet run (nor dropped unrun): what the graph bound limits.
static PENDING: AtomicU64 = AtomicU64::new(0);

impl Node {
    /// Records a new pending node.
    pub fn record(step: Step, device: Device, args: Vec<Arg>, outputs: Vec<(DType, usize)>) -> Arc<Node> {
        let node = Arc::new(Node {
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
            step,
            device,
            outputs,
            args: Mutex::new(args),
            result: OnceLock::new(),
            extents: OnceLock::new(),
            counted: AtomicBool::new(true),
            thread: current_thread(),
        });
        let mut live = LIVE.lock().unwrap_or_else(|e| e.into_inner());
        if live.len() >= 1024 && live.len().is_power_of_two() {
            live.retain(|w| w.upgrade().is_some_and(|n| n.result.get().is_none()));
        }
        live.push(Arc::downgrade(&node));
        PENDING.fetch_add(1, Ordering::Relaxed);
        node
    }

    /// Stops counting the node as pending (it ran, inside a program or on its own).
    pub fn ran(&self) {
        if self.counted.swap(false, Ordering::Relaxed) {
            PENDING.fetch_sub(1, Ordering::Relaxed);
        }
    }

    /// The node's arguments (empty once computed).
    pub fn args(&self) -> std::sync::MutexGuard<'_, Vec<Arg>> {
        self.args.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Stores the computed outputs and frees the inputs.
    pub fn complete(&self, buffers: Vec<Arc<Buffer>>) {
        let _ = self.result.set(buffers);
        self.args().clear();
    }
}

impl Node {
    /// Whether the node ran (inside a program, as an output or not, or on its own): a node that
    /// ran without being an output has no result and must never be collected again.
    pub fn has_run(&self) -> bool {
        !self.counted.load(Ordering::Relaxed)
    }
}

/// Moves the pending inputs of `args` onto `stack`.
fn push_inputs(args: Vec<Arg>, stack: &mut Vec<Arc<Node>>) {
    for arg in args {
        if let Arg::View { data: Data::Pending(node, _), .. } = arg {
            stack.push(node);
        }
    }
}

impl Drop for Node {
    /// Drops the chain of inputs only this node holds iteratively: a long pending chain dropped
    /// unread would otherwise recurse once per node.
    fn drop(&mut self) {
        self.ran();
        let mut stack = Vec::new();
        push_inputs(std::mem::take(self.args.get_mut().unwrap_or_else(|e| e.into_inner())), &mut stack);
        while let Some(node) = stack.pop() {
            if let Ok(mut node) = Arc::try_unwrap(node) {
                push_inputs(
                    std::mem::take(node.args.get_mut().unwrap_or_else(|e| e.into_inner())),
                    &mut stack,
                );
            }
        }
    }
}

/// Every pending node still referenced; with `thread`, only those that thread recorded (the others
/// stay registered).
pub(crate) fn take_live(thread: Option<u64>) -> Vec<Arc<Node>> {
    let mut live = LIVE.lock().unwrap_or_else(|e| e.into_inner());
    let pending: Vec<Arc<Node>> = live
        .drain(..)
        .filter_map(|w| w.upgrade())
        .filter(|n| n.result.get().is_none() && !n.has_run())
        .collect();
    let (taken, kept): (Vec<_>, Vec<_>) =
        pending.into_iter().partition(|n| thread.is_none_or(|t| n.thread == t));
    live.extend(kept.iter().map(Arc::downgrade));
    taken
}

/// Registers `nodes` again for [`take_live`] (nodes a failed sync took; those that ran are skipped).
pub(crate) fn relive(nodes: Vec<Weak<Node>>) {
    let mut live = LIVE.lock().unwrap_or_else(|e| e.into_inner());
    live.extend(
        nodes.into_iter().filter(|w| w.upgrade().is_some_and(|n| n.result.get().is_none() && !n.has_run())),
    );
}

/// How many recorded nodes have not run yet (and are not dropped).
pub(crate) fn pending_nodes() -> u64 {
    PENDING.load(Ordering::Relaxed)
}
