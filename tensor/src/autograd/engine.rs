//! The backward pass: runs the graph's nodes from the outputs to the leaves in reverse creation
//! order, summing the gradients that meet at a node, and accumulates into leaves' `.grad`
//! (`backward`) or returns the gradients of chosen inputs (`grad`).

use std::collections::{BinaryHeap, HashMap};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use oxtorch_core::{Error, Result};

use super::grad_mode::{no_grad, GradModeGuard};
use super::node::{lock, Edge, Node};
use crate::Tensor;

static ANOMALY: AtomicBool = AtomicBool::new(false);

/// Turns anomaly detection on or off (torch's `torch.autograd.set_detect_anomaly`): every backward
/// node's outputs are checked for NaN, and the error names the forward op that produced it.
pub fn set_detect_anomaly(enabled: bool) {
    ANOMALY.store(enabled, Ordering::Relaxed);
}

/// True when anomaly detection is on.
pub fn is_anomaly_enabled() -> bool {
    ANOMALY.load(Ordering::Relaxed)
}

/// One node of the graph being run.
struct State {
    node: Arc<Node>,
    deps: usize,
    needed: bool,
    buffer: Vec<Option<Tensor>>,
}

/// Adds `g` into a gradient slot.
fn accumulate(slot: &mut Option<Tensor>, g: Tensor) -> Result<()> {
    *slot = Some(match slot.take() {
        None => g,
        Some(old) => old.add(&g)?,
    });
    Ok(())
}

/// The graph reachable from `roots`, in discovery order, with an index per node.
fn discover(roots: &[Edge]) -> (Vec<State>, HashMap<*const Node, usize>) {
    let mut states: Vec<State> = Vec::new();
    let mut index: HashMap<*const Node, usize> = HashMap::new();
    let mut stack: Vec<Arc<Node>> = Vec::new();
    for e in roots {
        if let std::collections::hash_map::Entry::Vacant(slot) = index.entry(Arc::as_ptr(&e.node)) {
            slot.insert(states.len());
            states.push(State {
                node: e.node.clone(),
                deps: 0,
                needed: false,
                buffer: vec![None; e.node.num_outputs],
            });
            stack.push(e.node.clone());
        }
    }
    while let Some(n) = stack.pop() {
        for e in n.next.iter().flatten() {
            if let std::collections::hash_map::Entry::Vacant(slot) = index.entry(Arc::as_ptr(&e.node)) {
                slot.insert(states.len());
                states.push(State {
                    node: e.node.clone(),
                    deps: 0,
                    needed: false,
                    buffer: vec![None; e.node.num_outputs],
                });
                stack.push(e.node.clone());
            }
        }
    }
    (states, index)
}

/// Marks the nodes from which a capture point can be reached (all of them when `captures` is None).
fn mark_needed(states: &mut [State], index: &HashMap<*const Node, usize>, captures: Option<&[Edge]>) {
    let Some(captures) = captures else {
        states.iter_mut().for_each(|s| s.needed = true);
        return;
    };
    for c in captures {
        if let Some(&i) = index.get(&Arc::as_ptr(&c.node)) {
            states[i].needed = true;
        }
    }
    // Children are discovered after their parents, so sweeping backwards until nothing changes
    // settles in a few passes.
    loop {
        let mut changed = false;
        for i in (0..states.len()).rev() {
            if states[i].needed {
                continue;
            }
            let child_needed =
                states[i].node.next.iter().flatten().any(|e| states[index[&Arc::as_ptr(&e.node)]].needed);
            if child_needed {
                states[i].needed = true;
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
}

/// Applies the hooks registered on a leaf, then adds the gradient into its `.grad`.
fn accumulate_into_leaf(leaf: &Tensor, grad: Tensor, create_graph: bool) -> Result<()> {
    let grad = run_leaf_hooks(leaf, grad)?;
    let grad = if grad.dtype() != leaf.dtype() { grad.to_dtype(leaf.dtype())? } else { grad };
    // torch's gradient layout contract: `.grad` is laid out like its (dense) leaf. A weight used through
    // `w.t()` would otherwise get a transposed gradient, and every optimizer pass over it would walk
    // memory across the grain.
    let grad = if !grad.is_contiguous() && leaf.is_contiguous() {
        if create_graph {
            grad.contiguous()?
        } else {
            no_grad(|| grad.contiguous())?
        }
    } else {
        grad
    };
    let meta = leaf.meta().expect("a leaf with an accumulator has autograd state");
    let old = lock(&meta.inner).grad.clone();
    let new = match old {
        // torch stores a (differentiable) copy: the caller's gradient must not become `.grad`,
        // which a later backward adds to in place.
        None if create_graph && sole_owner(&grad) => grad,
        None if create_graph => grad.copy()?,
        // Keep the gradient itself only when nothing else can see its storage.
        None if sole_owner(&grad) => grad.detach(),
        None => no_grad(|| grad.copy())?,
        Some(old) if create_graph || old.requires_grad() => old.add(&grad)?,
        Some(old) => {
            no_grad(|| old.add_(&grad).map(|_| ()))?;
            old
        }
    };
    lock(&meta.inner).grad = Some(new);
    let post: Vec<_> = lock(&meta.inner).post_accumulate_hooks.iter().map(|(_, h)| h.clone()).collect();
    for h in post {
        h(leaf);
    }
    Ok(())
}

/// Whether nothing but `grad` can see its storage: no other handle to it, and no other tensor on its
/// storage except the base it views (a weight gradient computed as `(g^T a)^T` arrives as a view),
/// when only `grad` holds that base.
fn sole_owner(grad: &Tensor) -> bool {
    if Arc::strong_count(&grad.0) != 1 {
        return false;
    }
    match Arc::strong_count(grad.storage()) {
        1 => true,
        // `base` is the clone just taken plus the one in `grad`'s autograd state.
        2 => grad.view_base().is_some_and(|base| Arc::strong_count(&base.0) == 2),
        _ => false,
    }
}

/// Runs a leaf's gradient hooks in registration order.
fn run_leaf_hooks(leaf: &Tensor, mut grad: Tensor) -> Result<Tensor> {
    let hooks: Vec<_> = match leaf.meta() {
        Some(m) => lock(&m.inner).hooks.iter().map(|(_, h)| h.clone()).collect(),
        None => Vec::new(),
    };
    for h in hooks {
        if let Some(g) = h(&grad) {
            check_hook_result(&grad, &g)?;
            grad = g;
        }
    }
    if grad.dims() != leaf.dims() {
        return Err(Error::shape(format!(
            "Function AccumulateGrad returned an invalid gradient - got {:?} but expected shape compatible with {:?}",
            grad.dims(),
            leaf.dims()
        )));
    }
    Ok(grad)
}

fn check_hook_result(old: &Tensor, new: &Tensor) -> Result<()> {
    if old.dims() != new.dims() {
        return Err(Error::shape(format!(
            "hook 'hook' has changed the size of value: expected {:?}, got {:?}",
            old.dims(),
            new.dims()
        )));
    }
    if old.dtype() != new.dtype() {
        return Err(Error::msg(format!(
            "hook 'hook' has changed the type of value (was torch.{}Tensor got torch.{}Tensor)",
            old.dtype().scalar_type_name(),
            new.dtype().scalar_type_name()
        )));
    }
    Ok(())
}

/// Runs the hooks and retain_grad bookkeeping registered on a node's outputs (a retained `.grad`
/// is itself differentiable under `create_graph`, as torch's).
fn run_output_hooks(node: &Node, grads: &mut [Option<Tensor>], create_graph: bool) -> Result<()> {
    let (hooks, retained) = {
        let h = lock(&node.output_hooks);
        if h.hooks.is_empty() && h.retained.is_empty() {
            return Ok(());
        }
        (h.hooks.clone(), h.retained.clone())
    };
    for (nr, _, hook) in hooks {
        if let Some(g) = &grads[nr] {
            if let Some(new) = hook(g) {
                check_hook_result(g, &new)?;
                grads[nr] = Some(new);
            }
        }
    }
    for (nr, weak) in retained {
        if let (Some(t), Some(g)) = (weak.upgrade(), &grads[nr]) {
            let t = Tensor(t);
            let meta = t.meta().expect("a retaining tensor has autograd state");
            let mut inner = lock(&meta.inner);
            inner.grad = Some(match (inner.grad.take(), create_graph) {
                (None, false) => no_grad(|| g.detach().copy())?,
                (Some(old), false) => no_grad(|| old.add(g))?,
                (None, true) => g.copy()?,
                (Some(old), true) => old.add(g)?,
            });
        }
    }
    Ok(())
}

/// Fails when a backward node produced NaN (anomaly mode).
fn check_anomaly(node: &Node, grads: &[Option<Tensor>]) -> Result<()> {
    for (i, g) in grads.iter().enumerate() {
        if let Some(g) = g {
            if g.is_floating_point() && no_grad(|| g.isnan()?.any()?.item::<bool>())? {
                return Err(Error::msg(format!(
                    "Function '{}' returned nan values in its {i}th output. (anomaly mode: the forward op that produced it is the one named by the node)",
                    node.name()
                )));
            }
        }
    }
    Ok(())
}

/// The root edge of a tensor that backward starts from.
fn root_edge(t: &Tensor, i: usize) -> Result<Edge> {
    t.gradient_edge().ok_or_else(|| {
        Error::msg(format!("element {i} of tensors does not require grad and does not have a grad_fn"))
    })
}

/// Where a backward pass puts the gradients it computes.
#[derive(Clone, Copy)]
pub(crate) enum Sink<'a> {
    /// Into the `.grad` of every leaf reached (torch's `backward()`).
    Leaves,
    /// Returned, for these tensors only (torch's `autograd.grad`); an unused one is an error
    /// unless `allow_unused`.
    Return { inputs: &'a [Tensor], allow_unused: bool },
    /// Into the `.grad` of these tensors only, leaves or not (torch's `backward(inputs=...)`).
    Into(&'a [Tensor]),
}

/// Runs backward from `roots` seeded with `grads`, delivering the gradients to `sink`. Returns
/// the gradients of [`Sink::Return`]'s inputs, else an empty vector.
pub(crate) fn run_backward(
    roots: &[Tensor],
    grads: Vec<Tensor>,
    retain_graph: bool,
    create_graph: bool,
    sink: Sink<'_>,
) -> Result<Vec<Option<Tensor>>> {
    // Each pass has an id and runs the callbacks queued during it (multi-grad hooks) at its end.
    let frame = super::backward_pass::BackwardFrame::enter();
    let out = run_backward_pass(roots, grads, retain_graph, create_graph, sink)?;
    frame.finish()?;
    Ok(out)
}

/// [`run_backward`] without the pass bookkeeping.
fn run_backward_pass(
    roots: &[Tensor],
    grads: Vec<Tensor>,
    retain_graph: bool,
    create_graph: bool,
    sink: Sink<'_>,
) -> Result<Vec<Option<Tensor>>> {
    let (inputs, allow_unused) = match sink {
        Sink::Leaves => (None, false),
        Sink::Return { inputs, allow_unused } => (Some(inputs), allow_unused),
        Sink::Into(inputs) => {
            if inputs.is_empty() {
                return Err(Error::msg("'inputs' argument to backward() cannot be empty."));
            }
            (Some(inputs), true)
        }
    };
    let into = matches!(sink, Sink::Into(_));
    let root_edges = roots.iter().enumerate().map(|(i, t)| root_edge(t, i)).collect::<Result<Vec<_>>>()?;
    let captures = match inputs {
        Some(inputs) => Some(
            inputs
                .iter()
                .map(|t| {
                    t.gradient_edge()
                        .ok_or_else(|| Error::msg("One of the differentiated Tensors does not require grad"))
                })
                .collect::<Result<Vec<_>>>()?,
        ),
        None => None,
    };
    let _mode = GradModeGuard::new(create_graph);
    let (mut states, index) = discover(&root_edges);
    mark_needed(&mut states, &index, captures.as_deref());
    for i in 0..states.len() {
        if !states[i].needed {
            continue;
        }
        for e in states[i].node.next.clone().iter().flatten() {
            let j = index[&Arc::as_ptr(&e.node)];
            if states[j].needed {
                states[j].deps += 1;
            }
        }
    }
    for (e, g) in root_edges.iter().zip(grads) {
        let i = index[&Arc::as_ptr(&e.node)];
        accumulate(&mut states[i].buffer[e.input_nr], g)?;
    }
    let mut captured: Vec<Option<Tensor>> = vec![None; captures.as_ref().map_or(0, Vec::len)];
    let mut ready: BinaryHeap<(u64, usize)> = states
        .iter()
        .enumerate()
        .filter(|(_, s)| s.needed && s.deps == 0)
        .map(|(i, s)| (s.node.seq(), i))
        .collect();
    while let Some((_, i)) = ready.pop() {
        let node = states[i].node.clone();
        let mut grads = std::mem::take(&mut states[i].buffer);
        run_output_hooks(&node, &mut grads, create_graph)?;
        if let Some(caps) = &captures {
            for (k, c) in caps.iter().enumerate() {
                if Arc::ptr_eq(&c.node, &node) {
                    if let Some(g) = &grads[c.input_nr] {
                        let g = match node.leaf() {
                            // Accumulating runs them (`into`).
                            Some(leaf) if !into => run_leaf_hooks(&leaf, g.clone())?,
                            _ => g.clone(),
                        };
                        captured[k] = Some(g);
                    }
                }
            }
        }
        if let Some(leaf) = node.leaf() {
            if captures.is_none() {
                if let Some(g) = grads.swap_remove(0) {
                    accumulate_into_leaf(&leaf, g, create_graph)?;
                }
            }
            continue;
        }
        let needs: Vec<bool> = node
            .next
            .iter()
            .map(|e| e.as_ref().is_some_and(|e| states[index[&Arc::as_ptr(&e.node)]].needed))
            .collect();
        if needs.iter().any(|&n| n) {
            // Formulas index with positions their forward computed (argmax, sort): in range.
            let outs = crate::ops::trusted_indices(|| node.apply(&grads, &needs))?;
            drop(grads);
            if outs.len() != node.next.len() {
                return Err(Error::msg(format!(
                    "function {} returned an incorrect number of gradients (expected {}, got {})",
                    node.name(),
                    node.next.len(),
                    outs.len()
                )));
            }
            if is_anomaly_enabled() {
                check_anomaly(&node, &outs)?;
            }
            for ((e, g), &need) in node.next.iter().zip(outs).zip(&needs) {
                let (Some(e), true) = (e, need) else { continue };
                let j = index[&Arc::as_ptr(&e.node)];
                if let Some(g) = g {
                    accumulate(&mut states[j].buffer[e.input_nr], g)?;
                }
                states[j].deps -= 1;
                if states[j].deps == 0 {
                    ready.push((states[j].node.seq(), j));
                }
            }
            // Only a node that ran frees what it saved: one skipped (a non-leaf captured by
            // `grad` whose history was not needed) stays usable, as in torch.
            if !retain_graph {
                node.release();
            }
        }
    }
    let Some(inputs) = inputs else { return Ok(Vec::new()) };
    if into {
        for (k, (input, g)) in inputs.iter().zip(captured).enumerate() {
            let Some(g) = g else { continue };
            // An input listed twice gets its gradient once, as torch's.
            if inputs[..k].iter().any(|earlier| earlier.is_same(input)) {
                continue;
            }
            if input.is_leaf() {
                accumulate_into_leaf(input, g, create_graph)?;
            } else if !input.retains_grad() {
                // A non-leaf's `.grad` (a retained one already has it from its hook).
                let old = input.grad();
                let new = match old {
                    Some(old) if create_graph => old.add(&g)?,
                    Some(old) => no_grad(|| old.add(&g))?,
                    None if create_graph => g,
                    None if sole_owner(&g) => g.detach(),
                    None => no_grad(|| g.copy())?,
                };
                input.set_grad(Some(new))?;
            }
        }
        return Ok(Vec::new());
    }
    for (i, c) in captured.iter_mut().enumerate() {
        if c.is_none() {
            if !allow_unused {
                return Err(Error::msg(
                    "One of the differentiated Tensors appears to not have been used in the graph. Set allow_unused=True if this is the desired behavior.",
                ));
            }
            let _ = &inputs[i];
        }
    }
    Ok(captured)
}

/// Checks a `backward`/`grad` seed against its output.
fn check_seed(out: &Tensor, g: &Tensor) -> Result<()> {
    if out.dims() != g.dims() {
        return Err(Error::shape(format!(
            "Mismatch in shape: grad_output[0] has a shape of {:?} and output[0] has a shape of {:?}.",
            g.dims(),
            out.dims()
        )));
    }
    Ok(())
}

/// The seeds of a backward pass: the given gradients, or ones for scalar outputs.
pub(crate) fn seeds(outputs: &[Tensor], grads: Option<&[Tensor]>) -> Result<Vec<Tensor>> {
    match grads {
        Some(g) => {
            if g.len() != outputs.len() {
                return Err(Error::msg(format!(
                    "grad requires one grad_output per output: got {} grad_outputs for {} outputs",
                    g.len(),
                    outputs.len()
                )));
            }
            // Cast to the output's dtype, as torch does (an f64 or integer seed for an f32 output).
            outputs
                .iter()
                .zip(g)
                .map(|(o, g)| {
                    check_seed(o, g)?;
                    if g.dtype() == o.dtype() {
                        Ok(g.clone())
                    } else {
                        g.to_dtype(o.dtype())
                    }
                })
                .collect()
        }
        None => outputs
            .iter()
            .map(|o| {
                if o.numel() != 1 {
                    return Err(Error::msg("grad can be implicitly created only for scalar outputs"));
                }
                if !o.is_floating_point() {
                    return Err(Error::msg(format!(
                        "grad can be implicitly created only for real scalar outputs but got {}",
                        o.dtype().scalar_type_name()
                    )));
                }
                no_grad(|| o.ones_like())
            })
            .collect(),
    }
}

impl Tensor {
    /// Computes the gradient of this scalar w.r.t. the leaves of its graph and accumulates it into
    /// their `.grad` (torch's `backward()`); the graph's saved tensors are freed.
    pub fn backward(&self) -> Result<()> {
        self.backward_with(None, false, false)
    }

    /// `backward(gradient, retain_graph, create_graph)`: `gradient` seeds a non-scalar output.
    pub fn backward_with(
        &self,
        gradient: Option<&Tensor>,
        retain_graph: bool,
        create_graph: bool,
    ) -> Result<()> {
        let outs = std::slice::from_ref(self);
        let g = seeds(outs, gradient.map(std::slice::from_ref))?;
        run_backward(outs, g, retain_graph || create_graph, create_graph, Sink::Leaves).map(|_| ())
    }

    /// `backward(gradient, retain_graph, create_graph, inputs=...)`: accumulates gradients into the
    /// `.grad` of `inputs` only (leaves or not), running just the part of the graph they need.
    pub fn backward_inputs(
        &self,
        gradient: Option<&Tensor>,
        inputs: &[Tensor],
        retain_graph: bool,
        create_graph: bool,
    ) -> Result<()> {
        let outs = std::slice::from_ref(self);
        let g = seeds(outs, gradient.map(std::slice::from_ref))?;
        run_backward(outs, g, retain_graph || create_graph, create_graph, Sink::Into(inputs)).map(|_| ())
    }
}

/// torch's `torch.autograd.grad`: the gradients of `outputs` (seeded with `grad_outputs`, ones for
/// scalars when `None`) w.r.t. `inputs`, without touching `.grad`. `retain_graph` defaults to
/// `create_graph` in torch; pass it explicitly here. Unused inputs give `None` with `allow_unused`,
/// an error otherwise.
pub fn grad(
    outputs: &[Tensor],
    inputs: &[Tensor],
    grad_outputs: Option<&[Tensor]>,
    retain_graph: bool,
    create_graph: bool,
    allow_unused: bool,
) -> Result<Vec<Option<Tensor>>> {
    let g = seeds(outputs, grad_outputs)?;
    let sink = Sink::Return { inputs, allow_unused };
    run_backward(outputs, g, retain_graph || create_graph, create_graph, sink)
}

/// [`grad`] with `materialize_grads=True`: an input the outputs do not depend on gets zeros (of
/// its shape and dtype) rather than `None`.
pub fn grad_materialized(
    outputs: &[Tensor],
    inputs: &[Tensor],
    grad_outputs: Option<&[Tensor]>,
    retain_graph: bool,
    create_graph: bool,
) -> Result<Vec<Tensor>> {
    grad(outputs, inputs, grad_outputs, retain_graph, create_graph, true)?
        .into_iter()
        .zip(inputs)
        .map(|(g, input)| match g {
            Some(g) => Ok(g),
            None => no_grad(|| input.zeros_like()),
        })
        .collect()
}

/// torch's `torch.autograd.backward`: backward from several outputs at once, each seeded with its
/// gradient (ones for scalars when `None`), accumulating into the leaves' `.grad`.
pub fn backward(
    outputs: &[Tensor],
    grad_outputs: Option<&[Tensor]>,
    retain_graph: bool,
    create_graph: bool,
) -> Result<()> {
    let g = seeds(outputs, grad_outputs)?;
    run_backward(outputs, g, retain_graph || create_graph, create_graph, Sink::Leaves).map(|_| ())
}

/// torch's `torch.autograd.backward(..., inputs=...)`: [`backward`] accumulating into the `.grad`
/// of `inputs` only (leaves or not).
pub fn backward_inputs(
    outputs: &[Tensor],
    grad_outputs: Option<&[Tensor]>,
    inputs: &[Tensor],
    retain_graph: bool,
    create_graph: bool,
) -> Result<()> {
    let g = seeds(outputs, grad_outputs)?;
    run_backward(outputs, g, retain_graph || create_graph, create_graph, Sink::Into(inputs)).map(|_| ())
}
