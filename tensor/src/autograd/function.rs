//! Custom differentiable functions (torch's `torch.autograd.Function`).

use std::sync::{Arc, Mutex, OnceLock, Weak};

use oxtorch_core::{Error, Result};

use super::grad_mode::no_grad;
use super::node::{lock, Backward, Edge, Node, NodeKind, SavedTensor};
use super::record::needs_recording;
use crate::Tensor;

/// A differentiable function with a hand-written backward: implement `forward` (run without
/// recording) and `backward` (gradients of the inputs from those of the outputs), and call it
/// with [`Function::apply`].
///
/// ```
/// use oxtorch_tensor::{tensor, Tensor, Result};
/// use oxtorch_tensor::autograd::{Function, FunctionCtx};
///
/// /// `x^3` with its derivative `3 x^2`.
/// struct Cube;
/// impl Function for Cube {
///     fn forward(&self, ctx: &mut FunctionCtx, inputs: &[Tensor]) -> Result<Vec<Tensor>> {
///         ctx.save_for_backward(&[&inputs[0]]);
///         Ok(vec![inputs[0].pow(3.0)?])
///     }
///     fn backward(&self, ctx: &FunctionCtx, grads: &[Tensor]) -> Result<Vec<Option<Tensor>>> {
///         let x = &ctx.saved_tensors()?[0];
///         Ok(vec![Some(grads[0].mul(x.square()?.mul(3.0)?)?)])
///     }
/// }
/// # fn main() -> Result<()> {
/// let x = tensor!([1.0, 2.0]).requires_grad_(true)?;
/// let y = Cube.apply(&[x.clone()])?.remove(0);
/// y.sum_all()?.backward()?;
/// assert_eq!(x.grad().unwrap().to_vec::<f32>()?, vec![3.0, 12.0]);
/// # Ok(()) }
/// ```
pub trait Function: Send + Sync + 'static {
    /// Computes the outputs (grad mode is off inside).
    fn forward(&self, ctx: &mut FunctionCtx, inputs: &[Tensor]) -> Result<Vec<Tensor>>;

    /// The gradient of each input (one entry per input) from the gradient of each output.
    fn backward(&self, ctx: &FunctionCtx, grads: &[Tensor]) -> Result<Vec<Option<Tensor>>>;

    /// `backward` with `None` for the outputs that received no gradient, called instead of
    /// `backward` when `forward` called `ctx.set_materialize_grads(false)` (torch then passes
    /// `None` to its `backward`). The default fills those with zeros and calls `backward`.
    fn backward_unmaterialized(
        &self,
        ctx: &FunctionCtx,
        grads: &[Option<Tensor>],
    ) -> Result<Vec<Option<Tensor>>> {
        let grads = ctx.materialize_grads(grads)?;
        self.backward(ctx, &grads)
    }

    /// A name for `grad_fn` (torch uses the class name followed by `Backward`).
    fn name(&self) -> &'static str {
        "CustomFunctionBackward"
    }

    /// Runs `forward` and records the node when an input requires grad.
    fn apply(self, inputs: &[Tensor]) -> Result<Vec<Tensor>>
    where
        Self: Sized,
    {
        let refs: Vec<&Tensor> = inputs.iter().collect();
        let recording = needs_recording(&refs);
        let mut ctx = FunctionCtx {
            needs_input_grad: inputs.iter().map(|i| recording && i.requires_grad()).collect(),
            ..FunctionCtx::default()
        };
        // The inputs' histories before `forward`, which may write some of them (`mark_dirty`).
        let next: Vec<Option<Edge>> =
            if recording { inputs.iter().map(Tensor::gradient_edge).collect() } else { Vec::new() };
        let outputs = no_grad(|| self.forward(&mut ctx, inputs))?;
        if !recording {
            return Ok(outputs);
        }
        let dirty = |o: &Tensor| ctx.dirty.iter().any(|d| d.is_same(o));
        for d in &ctx.dirty {
            if !inputs.iter().any(|i| i.is_same(d)) {
                return Err(Error::msg(format!(
                    "Function {}: mark_dirty was given a tensor that is not an input",
                    self.name()
                )));
            }
            if d.is_leaf() && d.requires_grad() {
                return Err(Error::msg(
                    "a leaf Variable that requires grad has been used in an in-place operation.",
                ));
            }
            super::record::check_inplace(d)?;
        }
        for d in &ctx.dirty {
            if !outputs.iter().any(|o| o.is_same(d)) {
                return Err(Error::msg(
                    "Some elements marked as dirty during the forward method were not returned as output. The inputs that are modified inplace must all be outputs of the Function.",
                ));
            }
        }
        // Which outputs get no gradient, decided before an input returned as it is becomes a new
        // tensor below.
        let non_differentiable: Vec<bool> =
            outputs.iter().map(|o| ctx.non_differentiable.iter().any(|n| n.is_same(o))).collect();
        // An input returned as it is, unless marked dirty, is a new tensor on its storage (torch
        // returns a view of it); a dirty one is the input itself, its history rewritten below.
        let outputs: Vec<Tensor> = outputs
            .into_iter()
            .map(|o| if !dirty(&o) && inputs.iter().any(|i| i.shares_storage(&o)) { o.detach() } else { o })
            .collect();
        // A saved output (torch's `save_for_backward(result)`) is kept detached with its index:
        // holding the output itself would make output → node → ctx → output a cycle that
        // leaks whenever backward does not run. `saved_tensors` gives it its history back.
        for (saved, output) in ctx.saved.iter_mut().zip(ctx.saved_outputs.iter_mut()) {
            if let Some(i) = outputs.iter().position(|o| saved.get().is_ok_and(|t| t.is_same(o))) {
                *saved = SavedTensor::new(&outputs[i].detach(), "custom function");
                *output = Some(i);
            } else {
                // saved_hooks33: packed now that the node is recorded (torch packs after forward).
                saved.apply_hooks();
            }
        }
        let node_cell = ctx.node.clone();
        ctx.non_differentiable.clear();
        let dirty_outputs = std::mem::take(&mut ctx.dirty);
        ctx.output_shapes = outputs.iter().map(|o| (o.dims().to_vec(), o.dtype(), o.device())).collect();
        let input_shapes = inputs.iter().map(|i| (i.dims().to_vec(), i.dtype())).collect();
        let name = self.name();
        let node = Node::new(
            name,
            next,
            outputs.len(),
            NodeKind::Op(Box::new(CustomBackward {
                f: Box::new(self),
                ctx: Mutex::new(Some(ctx)),
                input_shapes,
            })),
        );
        let _ = node_cell.set(Arc::downgrade(&node));
        for (i, o) in outputs.iter().enumerate() {
            let edge = Edge { node: node.clone(), input_nr: i };
            if non_differentiable[i] || !o.is_floating_point() {
                continue;
            }
            if dirty_outputs.iter().any(|d| d.is_same(o)) {
                // As an in-place op: the input (and its base, for a view) now has this history.
                let value = o.detach();
                value.set_grad_fn(edge, None);
                super::record::rebase_after_inplace(o, Some(&value))?;
            } else {
                o.set_grad_fn(edge, None);
            }
        }
        Ok(outputs)
    }
}

/// What `forward` leaves for `backward` (torch's `ctx`).
#[derive(Default)]
pub struct FunctionCtx {
    saved: Vec<SavedTensor>,
    /// For each saved tensor, the output it is (saved detached), if any.
    saved_outputs: Vec<Option<usize>>,
    /// The function's node, once recorded (a saved output's history).
    node: Arc<OnceLock<Weak<Node>>>,
    /// Non-tensor values for backward (shapes, flags...), free-form.
    pub values: Vec<f64>,
    /// For each input, whether its gradient is needed.
    needs_input_grad: Vec<bool>,
    /// Outputs that get no gradient (`mark_non_differentiable`).
    non_differentiable: Vec<Tensor>,
    /// Inputs `forward` wrote in place and returns (`mark_dirty`).
    dirty: Vec<Tensor>,
    /// `set_materialize_grads(false)`: `backward_unmaterialized` gets `None` for outputs without
    /// a gradient.
    keep_undefined_grads: bool,
    /// Each output's shape, dtype and device (for zero gradients).
    output_shapes: Vec<(Vec<usize>, oxtorch_core::DType, oxtorch_core::Device)>,
}

impl FunctionCtx {
    /// Saves tensors for backward; they are checked for in-place modification when read.
    pub fn save_for_backward(&mut self, tensors: &[&Tensor]) {
        // saved_hooks33: saved as they are; `apply` runs the pack hooks once the node is recorded.
        self.saved = tensors.iter().map(|t| SavedTensor::unhooked(t, "custom function")).collect();
        self.saved_outputs = vec![None; self.saved.len()];
    }

    /// For each input, whether backward must compute its gradient (torch's `ctx.needs_input_grad`):
    /// `forward` can skip work for the others, and `backward` may return `None` for them.
    pub fn needs_input_grad(&self) -> &[bool] {
        &self.needs_input_grad
    }

    /// Marks outputs as not differentiable (torch's `ctx.mark_non_differentiable`): they do not
    /// require grad, and `backward` gets zeros as their gradients.
    pub fn mark_non_differentiable(&mut self, outputs: &[&Tensor]) {
        self.non_differentiable.extend(outputs.iter().map(|&t| t.clone()));
    }

    /// Whether outputs that receive no gradient get zeros (torch's `ctx.set_materialize_grads`,
    /// true by default): with `false`, [`Function::backward_unmaterialized`] is called instead of
    /// `backward`, with `None` for them, so that it can skip their part of the work.
    pub fn set_materialize_grads(&mut self, value: bool) {
        self.keep_undefined_grads = !value;
    }

    /// The gradients given to `backward_unmaterialized` with zeros (of each output's shape, dtype
    /// and device) where an output received none, as `backward` gets them.
    pub fn materialize_grads(&self, grads: &[Option<Tensor>]) -> Result<Vec<Tensor>> {
        grads
            .iter()
            .zip(&self.output_shapes)
            .map(|(g, (dims, dt, dev))| match g {
                Some(g) => Ok(g.clone()),
                None => Tensor::zeros(dims.clone(), (*dt, *dev)),
            })
            .collect()
    }

    /// Marks inputs that `forward` modified in place and returns (torch's `ctx.mark_dirty`): the
    /// input itself is the output, its history (and its base's, for a view) goes through this
    /// function as after an in-place op. A leaf that requires grad cannot be dirty.
    pub fn mark_dirty(&mut self, inputs: &[&Tensor]) {
        self.dirty.extend(inputs.iter().map(|&t| t.clone()));
    }

    /// The saved tensors; a saved output carries its history (this function's node) again, so
    /// that a backward under `create_graph` differentiates through it.
    pub fn saved_tensors(&self) -> Result<Vec<Tensor>> {
        self.saved
            .iter()
            .zip(&self.saved_outputs)
            .map(|(s, output)| {
                let t = s.get()?;
                match (output, self.node.get().and_then(Weak::upgrade)) {
                    (Some(i), Some(node)) if t.is_floating_point() => {
                        let with_history = t.detach();
                        with_history.set_grad_fn(Edge { node, input_nr: *i }, None);
                        Ok(with_history)
                    }
                    _ => Ok(t),
                }
            })
            .collect()
    }
}

struct CustomBackward {
    f: Box<dyn Function>,
    ctx: Mutex<Option<FunctionCtx>>,
    /// The inputs' shapes and dtypes, which the returned gradients must fit.
    input_shapes: Vec<(Vec<usize>, oxtorch_core::DType)>,
}

impl Backward for CustomBackward {
    fn backward(&self, grads: &[Option<Tensor>], _needs: &[bool]) -> Result<Vec<Option<Tensor>>> {
        let guard = lock(&self.ctx);
        let ctx = guard.as_ref().ok_or_else(|| Error::msg("custom function: saved context already freed"))?;
        // The user's backward: its gather/scatter indices are checked as anywhere else.
        let out = if ctx.keep_undefined_grads {
            crate::ops::untrusted_indices(|| self.f.backward_unmaterialized(ctx, grads))?
        } else {
            let grads = ctx.materialize_grads(grads)?;
            crate::ops::untrusted_indices(|| self.f.backward(ctx, &grads))?
        };
        if out.len() != self.input_shapes.len() {
            return Ok(out); // the engine reports the count
        }
        // As torch's `validate_outputs`: a gradient that broadcasts to its input is summed down to
        // the input's shape and cast to its dtype; any other shape is an error.
        out.into_iter()
            .zip(&self.input_shapes)
            .enumerate()
            .map(|(i, (g, (dims, dt)))| {
                let Some(g) = g else { return Ok(None) };
                let g = if g.dims() == dims.as_slice() {
                    g
                } else {
                    g.sum_to_size(dims).map_err(|_| {
                        Error::shape(format!(
                            "Function {} returned an invalid gradient at index {i} - got {:?} but expected shape compatible with {:?}",
                            self.f.name(),
                            g.dims(),
                            dims
                        ))
                    })?
                };
                Ok(Some(g.to_dtype(*dt)?))
            })
            .collect()
    }

    fn release(&mut self) {
        *lock(&self.ctx) = None;
    }

    /// A function that saved no tensors can be differentiated again without `retain_graph`.
    fn saves_tensors(&self) -> bool {
        lock(&self.ctx).as_ref().is_none_or(|c| !c.saved.is_empty())
    }
}
