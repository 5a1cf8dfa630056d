//! Recording the graph: op nodes from `dispatch::apply`, view nodes from the view ops, and the
//! history rewrite of in-place ops (torch's `rebase_history` and `CopySlices`).

use std::sync::Arc;

use oxtorch_core::ops::Prim;
use oxtorch_core::{DType, Device, Error, Layout, Result};
use smallvec::SmallVec;

use super::formulas::{self, PrimBackward};
use super::grad_mode::{is_recording, no_grad};
use super::node::{Backward, Edge, Node, NodeKind};
use crate::Tensor;

/// True when an op on `inputs` must be recorded.
#[inline]
pub(crate) fn needs_recording(inputs: &[&Tensor]) -> bool {
    inputs.iter().any(|t| t.requires_grad()) && is_recording()
}

/// Records `prim` applied to `inputs` as the `grad_fn` of its floating-point `outputs`.
///
/// `prim_dims` holds the shapes the prim produced when the outputs were reshaped since (a
/// reduction without keepdim): gradients are reshaped back before the formula runs.
pub(crate) fn record_prim(
    prim: &Prim,
    inputs: &[&Tensor],
    outputs: &[Tensor],
    prim_dims: Option<Vec<Vec<usize>>>,
) {
    let next: Vec<Option<Edge>> = inputs.iter().map(|t| t.gradient_edge()).collect();
    let requires: SmallVec<[bool; 4]> = next.iter().map(Option::is_some).collect();
    let backward = PrimBackward::new(prim, inputs, outputs, &requires, prim_dims);
    let name = formulas::node_name(prim, inputs);
    let node = Node::new(name, next, outputs.len(), NodeKind::Op(Box::new(backward)));
    for (i, out) in outputs.iter().enumerate() {
        if out.is_floating_point() {
            out.set_grad_fn(Edge { node: node.clone(), input_nr: i }, None);
        }
    }
}

/// `value` kept in `ignored`'s graph with a zero gradient: torch gives an input whose values a
/// formula ignores (addmm's `self` with `beta = 0`, `matrix_power(A, 0)`) a zero gradient rather
/// than none. A select that never picks `ignored` (broadcast to `value`'s shape) does it without
/// reading its values, so a NaN there stays out of the result. `value` as it is when `ignored`
/// does not require grad or nothing is recorded.
pub(crate) fn with_zero_grad_to(value: Tensor, ignored: &Tensor) -> Result<Tensor> {
    if !needs_recording(&[ignored]) {
        return Ok(value);
    }
    let never = Tensor::zeros((), DType::Bool)?.to(value.device())?;
    let ignored = ignored.to_dtype(value.dtype())?.broadcast_to(value.dims())?;
    Tensor::where_cond(&never, &ignored, &value)
}

/// Replays a view op on another tensor of the same shape (picks the same elements).
pub(crate) type Replay = Arc<dyn Fn(&Tensor) -> Result<Tensor> + Send + Sync>;

/// How a view's gradient maps back to its input.
#[derive(Clone)]
pub(crate) enum ViewKind {
    /// Same elements, another shape: reshape the gradient back.
    Reshape,
    /// Dims reordered by this permutation: apply its inverse.
    Permute(Vec<usize>),
    /// Broadcast: sum the gradient over the broadcast dims.
    Expand,
    /// A range `start..` of dim `dim` (narrow, a slice with step 1): the gradient padded with
    /// zeros along that dim, written once.
    Narrow {
        /// the narrowed dim
        dim: usize,
        /// the range's first index
        start: usize,
    },
    /// A selection of elements (select, a stepped slice, diagonal, unfold): replaying the view on a
    /// tensor of the input's shape picks the same elements; the gradient is scattered back.
    Replay(Replay),
}

impl Tensor {
    /// A view of this tensor with `layout`, recorded for autograd as `name` with gradient rule `kind`.
    pub(crate) fn view_with(
        &self,
        layout: Layout,
        name: &'static str,
        kind: impl FnOnce() -> ViewKind,
    ) -> Tensor {
        let out = self.with_layout(layout);
        if needs_recording(&[self]) {
            let base = self.view_base().unwrap_or_else(|| self.clone());
            let backward = ViewBackward { kind: kind(), input_dims: self.dims().to_vec() };
            let node = Node::new(name, vec![self.gradient_edge()], 1, NodeKind::Op(Box::new(backward)));
            out.set_grad_fn(Edge { node, input_nr: 0 }, Some(base));
        } else {
            // Every view knows its base: an in-place write through it later gives the base its
            // history (a buffer filled slice by slice from tensors that require grad).
            let base = self.view_base().unwrap_or_else(|| self.clone());
            let made_in_no_grad = !is_recording() && (self.requires_grad() || self.made_in_no_grad());
            out.set_view_base(base, made_in_no_grad);
        }
        out
    }
}

/// A view's node rebuilt over its base's current history (torch's regeneration of a view's
/// `grad_fn` as `AsStridedBackward0` when its base was written in place since the view was made):
/// the gradient lands at the view's elements of a base-shaped zero tensor. `None` when the base
/// does not require grad or is not contiguous (its shape alone then does not say where the view's
/// elements are).
pub(crate) fn regenerated_view_edge(view: &Layout, base: &Tensor) -> Option<Edge> {
    let base_edge = base.gradient_edge()?;
    let (base_layout, view) = (base.layout(), view.clone());
    if !base_layout.is_contiguous() || view.offset() < base_layout.offset() {
        return None;
    }
    let offset = view.offset() - base_layout.offset();
    let replay: Replay = Arc::new(move |t: &Tensor| t.as_strided(view.dims(), view.strides(), Some(offset)));
    let backward = ViewBackward { kind: ViewKind::Replay(replay), input_dims: base.dims().to_vec() };
    let node = Node::new("AsStridedBackward0", vec![Some(base_edge)], 1, NodeKind::Op(Box::new(backward)));
    Some(Edge { node, input_nr: 0 })
}

/// How the gradients of views that tile their input along one dim join back into the input's
/// gradient: stacked (`unbind`) or concatenated (`split`) along that dim.
#[derive(Clone, Copy)]
pub(crate) enum Join {
    /// The views are the input's indices along this dim, the dim removed.
    Stack(usize),
    /// The views are consecutive ranges of this dim.
    Cat(usize),
}

impl Tensor {
    /// Views of this tensor with `layouts`, which tile it along one dim, recorded as one node
    /// `name` (torch's `UnbindBackward0`, `SplitBackward0`): its backward writes each view's
    /// gradient once, joined by `join`, where a node per view would fill a zero tensor of the
    /// input's shape for every view and add them all.
    pub(crate) fn view_group(&self, layouts: Vec<Layout>, name: &'static str, join: Join) -> Vec<Tensor> {
        let outs: Vec<Tensor> = layouts.into_iter().map(|l| self.with_layout(l)).collect();
        let base = self.view_base().unwrap_or_else(|| self.clone());
        if outs.is_empty() {
            return outs;
        }
        if needs_recording(&[self]) {
            let pieces = outs.iter().map(|t| t.dims().to_vec()).collect();
            let backward = JoinBackward {
                join,
                pieces,
                input_dims: self.dims().to_vec(),
                memory_order: memory_order(self.layout()),
                options: (self.dtype(), self.device()),
            };
            let node =
                Node::new(name, vec![self.gradient_edge()], outs.len(), NodeKind::Op(Box::new(backward)));
            for (i, t) in outs.iter().enumerate() {
                t.set_grad_fn(Edge { node: node.clone(), input_nr: i }, Some(base.clone()));
                t.set_multi_output_view(i, name);
            }
        } else {
            let made_in_no_grad = !is_recording() && (self.requires_grad() || self.made_in_no_grad());
            for t in &outs {
                t.set_view_base(base.clone(), made_in_no_grad);
            }
        }
        outs
    }
}

/// The gradient rule of [`Tensor::view_group`]: the views' gradients joined, zeros for a view
/// that received none.
struct JoinBackward {
    join: Join,
    /// The shape of each view.
    pieces: Vec<Vec<usize>>,
    input_dims: Vec<usize>,
    /// The input's dims from the largest stride to the smallest, when the input is a permutation
    /// of a dense block other than the identity (`qkv.permute(..).unbind(0)` in attention): the
    /// gradient is then joined in that order, so that it has the input's strides and the
    /// backward of the permute and reshape before it are free views instead of a copy.
    memory_order: Option<Vec<usize>>,
    /// The input's dtype and device, for the zero fills.
    options: (DType, Device),
}

/// The dims of `layout` from the largest stride to the smallest, when the layout is a
/// permutation of a dense block (ignoring size-1 dims) other than row-major order; `None`
/// otherwise.
fn memory_order(layout: &Layout) -> Option<Vec<usize>> {
    if layout.is_contiguous() {
        return None;
    }
    let (dims, strides) = (layout.dims(), layout.strides());
    let mut order: Vec<usize> = (0..dims.len()).collect();
    // Size-1 dims keep their place relative to each other after the others (any stride works).
    order.sort_by_key(|&d| (dims[d] == 1, std::cmp::Reverse(strides[d])));
    let mut expected = 1usize;
    for &d in order.iter().rev().filter(|&&d| dims[d] != 1) {
        if strides[d] != expected {
            return None;
        }
        expected *= dims[d];
    }
    Some(order)
}

/// The inverse of the permutation `order`.
fn inverse(order: &[usize]) -> Vec<usize> {
    let mut inv = vec![0; order.len()];
    for (i, &d) in order.iter().enumerate() {
        inv[d] = i;
    }
    inv
}

impl JoinBackward {
    /// View `i` replayed on a tensor of the input's shape.
    fn replay(&self, i: usize) -> Replay {
        match self.join {
            Join::Stack(d) => Arc::new(move |t: &Tensor| t.select(d as isize, i as isize)),
            Join::Cat(d) => {
                let start: usize = self.pieces[..i].iter().map(|p| p[d]).sum();
                let len = self.pieces[i][d];
                Arc::new(move |t: &Tensor| t.narrow(d as isize, start as isize, len))
            }
        }
    }
}

impl JoinBackward {
    /// The pieces joined into a dense block whose dims are the input's in `order` (largest
    /// stride first), returned permuted back to the input's dims: the input's gradient with the
    /// input's strides, written in one pass.
    fn join_in_memory_order(&self, pieces: &[Tensor], order: &[usize]) -> Result<Tensor> {
        let at = |d: usize| order.iter().position(|&o| o == d).expect("a permutation");
        let joined = match self.join {
            Join::Stack(d) => {
                // A piece lacks dim `d`: its dims in memory order are the others', renumbered.
                let rest: Vec<usize> =
                    order.iter().filter(|&&o| o != d).map(|&o| if o > d { o - 1 } else { o }).collect();
                let moved = pieces.iter().map(|p| p.permute(rest.clone())).collect::<Result<Vec<_>>>()?;
                Tensor::stack(&moved.iter().collect::<Vec<_>>(), at(d) as isize)?
            }
            Join::Cat(d) => {
                let moved = pieces.iter().map(|p| p.permute(order.to_vec())).collect::<Result<Vec<_>>>()?;
                Tensor::cat(&moved.iter().collect::<Vec<_>>(), at(d) as isize)?
            }
        };
        joined.permute(inverse(order))
    }
}

impl Backward for JoinBackward {
    fn saves_tensors(&self) -> bool {
        false
    }

    fn backward(&self, grads: &[Option<Tensor>], _needs: &[bool]) -> Result<Vec<Option<Tensor>>> {
        let present = grads.iter().flatten().count();
        if present == 0 {
            return Ok(vec![None]);
        }
        if present * 2 < grads.len() {
            // Few of many pieces used (one row of a long `unbind`): each gradient into its own
            // zero fill, summed, rather than a zero tensor for every unused piece.
            let mut sum: Option<Tensor> = None;
            for (i, g) in grads.iter().enumerate() {
                if let Some(g) = g {
                    let part = scatter_into_zeros(g, &self.input_dims, self.replay(i))?;
                    sum = Some(match sum {
                        Some(s) => s.add(&part)?,
                        None => part,
                    });
                }
            }
            return Ok(vec![sum]);
        }
        let filled = grads
            .iter()
            .zip(&self.pieces)
            .map(|(g, dims)| match g {
                Some(g) => Ok(g.clone()),
                None => Tensor::zeros(dims.clone(), self.options),
            })
            .collect::<Result<Vec<Tensor>>>()?;
        if let Some(order) = &self.memory_order {
            return Ok(vec![Some(self.join_in_memory_order(&filled, order)?)]);
        }
        let refs: Vec<&Tensor> = filled.iter().collect();
        let joined = match self.join {
            Join::Stack(d) => Tensor::stack(&refs, d as isize)?,
            Join::Cat(d) => Tensor::cat(&refs, d as isize)?,
        };
        Ok(vec![Some(joined)])
    }
}

/// The gradient rule of a view op.
struct ViewBackward {
    kind: ViewKind,
    input_dims: Vec<usize>,
}

impl Backward for ViewBackward {
    fn saves_tensors(&self) -> bool {
        false
    }

    fn backward(&self, grads: &[Option<Tensor>], _needs: &[bool]) -> Result<Vec<Option<Tensor>>> {
        let Some(g) = &grads[0] else { return Ok(vec![None]) };
        let gi = match &self.kind {
            ViewKind::Reshape => {
                g.reshape(self.input_dims.iter().map(|&d| d as isize).collect::<Vec<_>>())?
            }
            ViewKind::Permute(p) => {
                let mut inv = vec![0isize; p.len()];
                for (i, &d) in p.iter().enumerate() {
                    inv[d] = i as isize;
                }
                g.permute(inv)?
            }
            ViewKind::Expand => g.sum_to_size(&self.input_dims)?,
            ViewKind::Narrow { dim, start } => pad_narrowed(g, *dim, *start, self.input_dims[*dim])?,
            ViewKind::Replay(replay) => scatter_into_zeros(g, &self.input_dims, replay.clone())?,
        };
        Ok(vec![Some(gi)])
    }
}

/// The gradient of a narrow of `size` elements along `dim` from `start`: `g` with zeros before and
/// after along `dim`, one pass over the result (a zero fill and a copy into it took two). Recorded
/// as the `pad` it is when `g` requires grad, for higher-order gradients.
fn pad_narrowed(g: &Tensor, dim: usize, start: usize, size: usize) -> Result<Tensor> {
    let after = size - start - g.dims()[dim];
    // `pad` lists (before, after) pairs from the last dim backwards.
    let mut pads = vec![0isize; 2 * (g.rank() - dim)];
    let k = 2 * (g.rank() - 1 - dim);
    pads[k] = start as isize;
    pads[k + 1] = after as isize;
    g.pad(&pads, "constant", None)
}

/// `zeros(dims)` with `replay(zeros) = g`: the adjoint of a selecting view. Recorded (its own
/// adjoint is the view again) when `g` requires grad, for higher-order gradients.
fn scatter_into_zeros(g: &Tensor, dims: &[usize], replay: Replay) -> Result<Tensor> {
    let out = no_grad(|| -> Result<Tensor> {
        let z = Tensor::zeros(dims.to_vec(), (g.dtype(), g.device()))?;
        let view = replay(&z)?;
        if !view.layout().may_overlap() {
            view.copy_(g)?;
            return Ok(z);
        }
        // A view that reads some input elements several times (unfold with step < size,
        // as_strided): sum the gradients of every read.
        let n = z.numel();
        let positions = Tensor::arange(n as i64, g.device())?
            .reshape(dims.iter().map(|&d| d as isize).collect::<Vec<_>>())?;
        let idx = replay(&positions)?.reshape([-1])?;
        Tensor::zeros([n], (g.dtype(), g.device()))?
            .index_add(0, &idx, &g.reshape([-1])?, 1)?
            .reshape(dims.iter().map(|&d| d as isize).collect::<Vec<_>>())
    })?;
    if needs_recording(&[g]) {
        let node = Node::new(
            "ViewScatterBackward0",
            vec![g.gradient_edge()],
            1,
            NodeKind::Op(Box::new(ReplayBackward { replay })),
        );
        out.set_grad_fn(Edge { node, input_nr: 0 }, None);
    }
    Ok(out)
}

/// The adjoint of [`scatter_into_zeros`]: the view again.
struct ReplayBackward {
    replay: Replay,
}

impl Backward for ReplayBackward {
    fn saves_tensors(&self) -> bool {
        false
    }

    fn backward(&self, grads: &[Option<Tensor>], _needs: &[bool]) -> Result<Vec<Option<Tensor>>> {
        let Some(g) = &grads[0] else { return Ok(vec![None]) };
        Ok(vec![Some((self.replay)(g)?.contiguous()?)])
    }
}

/// Refuses in-place writes that would corrupt a leaf's gradient.
pub(crate) fn check_inplace(t: &Tensor) -> Result<()> {
    if !is_recording() {
        return Ok(());
    }
    if t.is_leaf() && t.requires_grad() {
        return Err(Error::msg("a leaf Variable that requires grad is being used in an in-place operation."));
    }
    if let Some((i, name)) = t.multi_output_view() {
        return Err(Error::msg(format!(
            "Output {i} of {} is a view and is being modified inplace. This view is the output of a function that returns multiple views. Such functions do not allow the output views to be modified inplace. You should replace the inplace operation by an out-of-place one.",
            name.trim_end_matches("Backward0")
        )));
    }
    if t.made_in_no_grad() {
        return Err(Error::msg(
            "A view was created in no_grad mode and is being modified inplace with grad mode enabled. Given that this use case is ambiguous and error-prone, it is forbidden. You can clarify your code by moving both the view and the inplace either both inside the no_grad block (if you don't want the inplace to be tracked) or both outside (if you want the inplace to be tracked).",
        ));
    }
    if let Some(base) = t.view_base() {
        if base.is_leaf() && base.requires_grad() {
            return Err(Error::msg(
                "a view of a leaf Variable that requires grad is being used in an in-place operation.",
            ));
        }
    }
    Ok(())
}

/// After `value` was written into `t` in place, gives `t` (and its base, for a view) the history
/// of `value` (torch's `rebase_history`).
pub(crate) fn rebase_after_inplace(t: &Tensor, value: Option<&Tensor>) -> Result<()> {
    let value_edge = value.and_then(Tensor::gradient_edge);
    if !is_recording() || !(t.requires_grad() || value_edge.is_some()) {
        return Ok(());
    }
    match t.view_base() {
        None => {
            let edge = match value_edge {
                Some(e) => e,
                None => {
                    // The new value is a constant: the old history gets no gradient.
                    let node = Node::new(
                        "FillBackward0",
                        vec![t.gradient_edge()],
                        1,
                        NodeKind::Op(Box::new(ConstantBackward)),
                    );
                    Edge { node, input_nr: 0 }
                }
            };
            t.rebase_grad_fn(edge);
        }
        Some(base) => {
            let base_layout = base.layout();
            if !base_layout.is_contiguous() {
                return Err(Error::msg(
                    "autograd: an in-place op on a view of a non-contiguous tensor that requires grad is not supported; clone() the base first",
                ));
            }
            let rel = t.storage_offset() - base.storage_offset();
            let (dims, strides) = (t.dims().to_vec(), t.strides().to_vec());
            let replay: Replay =
                Arc::new(move |b: &Tensor| b.contiguous()?.as_strided(&dims, &strides, Some(rel)));
            let copy_slices = CopySlices { replay: replay.clone() };
            let node = Node::new(
                "CopySlices",
                vec![base.gradient_edge(), value_edge],
                1,
                NodeKind::Op(Box::new(copy_slices)),
            );
            base.rebase_grad_fn(Edge { node, input_nr: 0 });
            let view = ViewBackward { kind: ViewKind::Replay(replay), input_dims: base.dims().to_vec() };
            let node =
                Node::new("AsStridedBackward0", vec![base.gradient_edge()], 1, NodeKind::Op(Box::new(view)));
            t.rebase_grad_fn(Edge { node, input_nr: 0 });
        }
    }
    Ok(())
}

/// The new history of a base after an in-place write into one of its views: the written region's
/// gradient goes to the written value, the rest to the base's old history.
struct CopySlices {
    replay: Replay,
}

impl Backward for CopySlices {
    fn saves_tensors(&self) -> bool {
        false
    }

    fn backward(&self, grads: &[Option<Tensor>], needs: &[bool]) -> Result<Vec<Option<Tensor>>> {
        let Some(g) = &grads[0] else { return Ok(vec![None, None]) };
        let base_grad = if needs[0] {
            let mask = no_grad(|| -> Result<Tensor> {
                let m = g.ones_like()?;
                (self.replay)(&m)?.zero_()?;
                Ok(m)
            })?;
            Some(g.mul(&mask)?)
        } else {
            None
        };
        let value_grad = if needs[1] { Some((self.replay)(g)?.contiguous()?) } else { None };
        Ok(vec![base_grad, value_grad])
    }
}

/// The history of a tensor overwritten with a constant: a zero gradient flows (torch's `fill_`).
struct ConstantBackward;

impl Backward for ConstantBackward {
    fn saves_tensors(&self) -> bool {
        false
    }

    fn backward(&self, grads: &[Option<Tensor>], needs: &[bool]) -> Result<Vec<Option<Tensor>>> {
        // torch's `fill_`/`copy_` formula for the overwritten value: zeros, not an undefined
        // gradient, so the inputs behind it still get a (zero) `.grad`, as optimizers expect.
        match (grads.first(), needs.first()) {
            (Some(Some(g)), Some(true)) => Ok(vec![Some(g.zeros_like()?)]),
            _ => Ok(vec![None]),
        }
    }
}
