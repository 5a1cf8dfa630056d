//! Derivative formulas, one per primitive op (torch's `derivatives.yaml`), written in tensor ops so
//! that they run on every device and can be differentiated again.
//!
//! Each family file has a `saves` function (which inputs and outputs its formulas read, so that
//! only those are kept alive and checked for in-place modification) and a `backward` function.

mod elementwise;
mod index;
mod nn;
mod reduce;
mod sort;

use oxtorch_core::ops::{Prim, ShapeOp};
use oxtorch_core::{DType, Error, Result};
use smallvec::SmallVec;

use super::grad_mode::is_recording;
use super::node::{Backward, SavedTensor};
use crate::dispatch::apply;
use crate::Tensor;

/// Which inputs and outputs a formula reads.
pub(crate) struct Saves {
    /// per input: keep it
    pub(crate) inputs: SmallVec<[bool; 4]>,
    /// keep the outputs (the inputs are then kept too, to recompute the outputs with history
    /// for higher-order gradients)
    pub(crate) outputs: bool,
}

impl Saves {
    pub(crate) fn none(n: usize) -> Self {
        Saves { inputs: SmallVec::from_elem(false, n), outputs: false }
    }

    pub(crate) fn all_inputs(n: usize) -> Self {
        Saves { inputs: SmallVec::from_elem(true, n), outputs: false }
    }

    pub(crate) fn outputs(n: usize) -> Self {
        Saves { inputs: SmallVec::from_elem(true, n), outputs: true }
    }
}

/// The saved state of one recorded prim.
pub(crate) struct PrimBackward {
    prim: Prim,
    inputs: Vec<Option<SavedTensor>>,
    outputs: Vec<Option<SavedTensor>>,
    input_dims: Vec<Vec<usize>>,
    input_dtypes: Vec<DType>,
    /// the prim's own output shapes, when the recorded outputs were reshaped
    prim_dims: Option<Vec<Vec<usize>>>,
    /// a `MatMul` whose second input is a column-major matrix (a weight used as `w.t()`)
    mat2_column_major: bool,
}

impl PrimBackward {
    pub(crate) fn new(
        prim: &Prim,
        inputs: &[&Tensor],
        outputs: &[Tensor],
        requires: &[bool],
        prim_dims: Option<Vec<Vec<usize>>>,
    ) -> Self {
        let saves = saves(prim, requires);
        let name = prim.name();
        PrimBackward {
            prim: prim.clone(),
            inputs: inputs
                .iter()
                .zip(&saves.inputs)
                .map(|(t, &keep)| keep.then(|| SavedTensor::new(t, name)))
                .collect(),
            outputs: outputs
                .iter()
                .enumerate()
                .map(|(i, t)| {
                    saves.outputs.then(|| {
                        let t = match &prim_dims {
                            Some(d) => t.detach().with_layout(oxtorch_core::Layout::contiguous(d[i].clone())),
                            None => t.detach(),
                        };
                        SavedTensor::new(&t, name)
                    })
                })
                .collect(),
            input_dims: inputs.iter().map(|t| t.dims().to_vec()).collect(),
            input_dtypes: inputs.iter().map(|t| t.dtype()).collect(),
            prim_dims,
            mat2_column_major: matches!(prim, Prim::MatMul) && is_column_major(inputs[1]),
        }
    }
}

/// What a formula reads: saved inputs and outputs, and the inputs' shapes and dtypes.
pub(crate) struct Ctx<'a> {
    b: &'a PrimBackward,
}

impl Ctx<'_> {
    /// Saved input `i`.
    pub(crate) fn input(&self, i: usize) -> Result<Tensor> {
        match &self.b.inputs[i] {
            Some(s) => s.get(),
            None => Err(Error::msg(format!(
                "autograd internal error: input {i} of {} was not saved for backward",
                self.b.prim.name()
            ))),
        }
    }

    /// Saved output `i`. When the backward pass is itself recorded (`create_graph`), the output is
    /// recomputed from the saved inputs so that it carries its history.
    pub(crate) fn output(&self, i: usize) -> Result<Tensor> {
        // A saved output written in place since is an error either way, as in torch.
        // saved_hooks33: checked and read without unpacking (unpack runs once per read, as torch's).
        if let Some(s) = &self.b.outputs[i] {
            s.check_version()?;
        }
        let inputs_need_grad = self.b.inputs.iter().flatten().any(SavedTensor::requires_grad);
        if is_recording() && inputs_need_grad {
            let inputs = (0..self.b.inputs.len()).map(|j| self.input(j)).collect::<Result<Vec<_>>>()?;
            let refs: Vec<&Tensor> = inputs.iter().collect();
            let device = refs.first().map_or(oxtorch_core::Device::Cpu, |t| t.device());
            return Ok(apply(&self.b.prim, &refs, device)?.swap_remove(i));
            // (recomputed outputs have the prim's own shapes)
        }
        match &self.b.outputs[i] {
            Some(s) => s.get(),
            None => Err(Error::msg(format!(
                "autograd internal error: output {i} of {} was not saved for backward",
                self.b.prim.name()
            ))),
        }
    }

    /// Shape of input `i`.
    pub(crate) fn dims(&self, i: usize) -> &[usize] {
        &self.b.input_dims[i]
    }

    /// Dtype of input `i`.
    pub(crate) fn dtype(&self, i: usize) -> DType {
        self.b.input_dtypes[i]
    }
}

impl Backward for PrimBackward {
    fn backward(&self, grads: &[Option<Tensor>], needs: &[bool]) -> Result<Vec<Option<Tensor>>> {
        let n = self.input_dims.len();
        let Some(g) = &grads[0] else { return Ok(vec![None; n]) };
        let g = match &self.prim_dims {
            Some(d) => g.reshape(d[0].iter().map(|&x| x as isize).collect::<Vec<_>>())?,
            None => g.clone(),
        };
        let ctx = Ctx { b: self };
        let mut out = backward(&self.prim, &ctx, &g, needs)?;
        out.resize(n, None);
        // Gradients of non-float inputs (indices, masks) are never propagated.
        for (i, o) in out.iter_mut().enumerate() {
            if !needs[i] || !self.input_dtypes[i].is_float() {
                *o = None;
            }
        }
        Ok(out)
    }

    fn release(&mut self) {
        self.inputs.clear();
        self.outputs.clear();
    }

    /// Only tensors worth freeing count: a node that saved nothing but single numbers (a mean's
    /// division by the count, a scalar sum's product) keeps them, so that backward can run through
    /// it again as through torch's nodes that capture scalars by value.
    fn saves_tensors(&self) -> bool {
        self.inputs.iter().chain(&self.outputs).flatten().any(|s| !s.is_scalar())
    }
}

/// torch's class name of a prim's backward node (`MulBackward0`, `SumBackward1`, ...).
pub(crate) fn node_name(prim: &Prim, inputs: &[&Tensor]) -> String {
    let name = match prim {
        // torch names a product of two matrices `MmBackward0`, a batched one `BmmBackward0`.
        Prim::MatMul if inputs.first().is_some_and(|t| t.rank() == 2) => "mm",
        Prim::Cast(_) => "_to_copy",
        Prim::Copy => "clone",
        Prim::MatMul => "bmm",
        Prim::Reduce { op, .. } => op.name(),
        Prim::ArgReduce { .. } => prim.name(),
        _ => prim.name(),
    };
    let mut s = String::with_capacity(name.len() + 9);
    for part in name.split('_').filter(|p| !p.is_empty()) {
        let mut c = part.chars();
        if let Some(f) = c.next() {
            s.extend(f.to_uppercase());
            s.push_str(c.as_str());
        }
    }
    s.push_str("Backward0");
    s
}

/// Which inputs and outputs `prim`'s formula reads, given which inputs require grad.
fn saves(prim: &Prim, requires: &[bool]) -> Saves {
    let n = requires.len();
    match prim {
        Prim::Unary(op) => elementwise::saves_unary(*op),
        Prim::Binary(op) => elementwise::saves_binary(*op, requires),
        Prim::Where => Saves { inputs: SmallVec::from_slice(&[true, false, false]), outputs: false },
        Prim::Cast(_) | Prim::Copy | Prim::Full { .. } | Prim::Compare(_) | Prim::Shape(_) => Saves::none(n),
        Prim::MatMul => Saves { inputs: SmallVec::from_slice(&[requires[1], requires[0]]), outputs: false },
        Prim::Reduce { op, .. } => reduce::saves(*op),
        Prim::ArgReduce { .. } => Saves::outputs(n),
        Prim::Index(op) => index::saves(op, n),
        Prim::Sort(op) => sort::saves(op, n),
        // As MatMul: x for the weight's gradient, the weight for x's.
        Prim::Nn(oxtorch_core::ops::NnOp::Linear) => {
            Saves { inputs: SmallVec::from_slice(&[requires[1], requires[0], false]), outputs: false }
        }
        Prim::Nn(op) => nn::saves(op, n),
    }
}

/// The input gradients of `prim` given the gradient `g` of its first output.
fn backward(prim: &Prim, ctx: &Ctx, g: &Tensor, needs: &[bool]) -> Result<Vec<Option<Tensor>>> {
    match prim {
        Prim::Unary(op) => Ok(vec![Some(elementwise::unary(*op, ctx, g)?)]),
        Prim::Binary(op) => elementwise::binary(*op, ctx, g, needs),
        Prim::Where => {
            let cond = ctx.input(0)?;
            let a = if needs[1] { Some(Tensor::where_cond(&cond, g, 0.0)?) } else { None };
            let b = if needs[2] { Some(Tensor::where_cond(&cond, 0.0, g)?) } else { None };
            Ok(vec![None, a, b])
        }
        Prim::Cast(_) => Ok(vec![Some(g.to_dtype(ctx.dtype(0))?)]),
        Prim::Copy => Ok(vec![Some(g.clone())]),
        Prim::MatMul => {
            let ga = if needs[0] { Some(g.matmul(&ctx.input(1)?.transpose(-1, -2)?)?) } else { None };
            let gb = if needs[1] {
                let a = ctx.input(0)?;
                Some(if ctx.b.mat2_column_major {
                    // laid out like `b` (a weight used as `w.t()`) without a transposing copy later
                    // (torch's `mm_mat2_backward`)
                    g.transpose(-1, -2)?.matmul(&a)?.transpose(-1, -2)?
                } else {
                    a.transpose(-1, -2)?.matmul(g)?
                })
            } else {
                None
            };
            Ok(vec![ga, gb])
        }
        Prim::Reduce { op, dims } => Ok(vec![Some(reduce::reduce(*op, dims, ctx, g)?)]),
        Prim::ArgReduce { dim, .. } => {
            let idx = ctx.output(1)?;
            Ok(vec![Some(g.zeros_like_shape(ctx.dims(0))?.scatter(*dim as isize, &idx, g)?)])
        }
        Prim::Shape(ShapeOp::Cat { dim, n }) => {
            let mut start = 0;
            (0..*n)
                .map(|i| {
                    let len = ctx.dims(i)[*dim];
                    let gi = g.narrow(*dim as isize, start as isize, len)?;
                    start += len;
                    Ok(Some(gi))
                })
                .collect()
        }
        Prim::Index(op) => index::backward(op, ctx, g, needs),
        Prim::Sort(op) => sort::backward(op, ctx, g),
        Prim::Nn(op) => nn::backward(op, ctx, g, needs),
        Prim::Compare(_) | Prim::Full { .. } => Ok(Vec::new()),
    }
}

/// A matrix stored column by column (`w.t()` of a contiguous `w`).
fn is_column_major(b: &Tensor) -> bool {
    b.rank() == 2 && b.dims()[0] > 1 && b.dims()[1] > 1 && b.strides() == [1, b.dims()[0]]
}

/// The error for ops torch does not differentiate either.
pub(crate) fn not_differentiable(name: &str) -> Error {
    Error::msg(format!("the derivative for '{name}' is not implemented."))
}

impl Tensor {
    /// Zeros of `dims` with this tensor's dtype and device.
    pub(crate) fn zeros_like_shape(&self, dims: &[usize]) -> Result<Tensor> {
        Tensor::zeros(dims.to_vec(), (self.dtype(), self.device()))
    }

    /// Sums a broadcast gradient back to `dims` (torch's `sum_to_size`).
    pub fn sum_to_size(&self, dims: &[usize]) -> Result<Tensor> {
        if self.dims() == dims {
            return Ok(self.clone());
        }
        let lead = self.rank().checked_sub(dims.len()).ok_or_else(|| {
            Error::shape(format!("size {:?} is not expandable to size {:?}", dims, self.dims()))
        })?;
        let mut reduce: Vec<isize> = (0..lead as isize).collect();
        for (i, &d) in dims.iter().enumerate() {
            let s = self.dims()[lead + i];
            if d == 1 && s != 1 {
                reduce.push((lead + i) as isize);
            } else if d != s {
                return Err(Error::shape(format!(
                    "size {:?} is not expandable to size {:?}",
                    dims,
                    self.dims()
                )));
            }
        }
        let summed = if reduce.is_empty() { self.clone() } else { self.sum(reduce, true)? };
        summed.reshape(dims.iter().map(|&d| d as isize).collect::<Vec<_>>())
    }
}
