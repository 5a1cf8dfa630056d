//! Custom functions' context (`needs_input_grad`, `mark_dirty`, `mark_non_differentiable`) and
//! the engine's `backward(inputs=...)` and `grad(materialize_grads=True)`, with the values torch
//! 2.15 gives for the same programs.

use oxtorch_tensor::autograd::{self, Function, FunctionCtx};
use oxtorch_tensor::{tensor, Result, Tensor};

fn vals(t: &Tensor) -> Vec<f32> {
    t.to_vec::<f32>().unwrap()
}

/// `backward(inputs=[w, h])` fills `w.grad` and the non-leaf `h.grad` only: `a` (also a leaf of
/// the graph) keeps no gradient.
#[test]
fn backward_with_inputs_accumulates_into_those_only() {
    let a = tensor!([1.0f32, 2.0, 3.0]).requires_grad_(true).unwrap();
    let w = tensor!([0.5f32, -1.0, 2.0]).requires_grad_(true).unwrap();
    let h = a.mul(&w).unwrap();
    let out = h.mul(&h).unwrap().sum_all().unwrap();
    out.backward_inputs(None, &[w.clone(), h.clone()], true, false).unwrap();
    assert_eq!(vals(&w.grad().unwrap()), vec![1.0, -8.0, 36.0]);
    assert_eq!(vals(&h.grad().unwrap()), vec![1.0, -4.0, 12.0]);
    assert!(a.grad().is_none());
    // A second pass adds to them.
    autograd::backward_inputs(&[out], None, std::slice::from_ref(&w), false, false).unwrap();
    assert_eq!(vals(&w.grad().unwrap()), vec![2.0, -16.0, 72.0]);
    let err = h.sum_all().unwrap().backward_inputs(None, &[], false, false).unwrap_err().to_string();
    assert!(err.contains("'inputs' argument to backward() cannot be empty"), "{err}");
}

/// `grad(..., materialize_grads=True)`: zeros for an input the output does not use.
#[test]
fn materialized_grads_are_zeros_for_unused_inputs() {
    let x = tensor!([1.0f32, 2.0]).requires_grad_(true).unwrap();
    let z = tensor!([3.0f32, 4.0]).requires_grad_(true).unwrap();
    let y = x.mul(&x).unwrap().sum_all().unwrap();
    let g = autograd::grad_materialized(&[y], &[x, z], None, false, false).unwrap();
    assert_eq!((vals(&g[0]), vals(&g[1])), (vec![2.0, 4.0], vec![0.0, 0.0]));
}

/// Doubles its input in place and says so.
struct DoubleInPlace;
impl Function for DoubleInPlace {
    fn forward(&self, ctx: &mut FunctionCtx, inputs: &[Tensor]) -> Result<Vec<Tensor>> {
        ctx.mark_dirty(&[&inputs[0]]);
        inputs[0].mul_(2.0)?;
        Ok(vec![inputs[0].clone()])
    }
    fn backward(&self, _ctx: &FunctionCtx, grads: &[Tensor]) -> Result<Vec<Option<Tensor>>> {
        Ok(vec![Some(grads[0].mul(2.0)?)])
    }
    fn name(&self) -> &'static str {
        "DoubleBackward"
    }
}

/// A dirty input is the output itself with the function's history; written through a view, its
/// base gets torch's `CopySlices`; a leaf that requires grad cannot be dirty.
#[test]
fn dirty_inputs_take_the_functions_history() {
    let a = tensor!([1.0f32, 2.0, 3.0]).requires_grad_(true).unwrap();
    let x = a.copy().unwrap();
    let y = DoubleInPlace.apply(std::slice::from_ref(&x)).unwrap().remove(0);
    assert!(y.is_same(&x));
    assert_eq!(x.grad_fn().unwrap().name(), "DoubleBackward");
    y.mul(&y).unwrap().sum_all().unwrap().backward().unwrap();
    assert_eq!(vals(&a.grad().unwrap()), vec![8.0, 16.0, 24.0]);

    let a = tensor!([1.0f32, 2.0, 3.0]).requires_grad_(true).unwrap();
    let base = a.mul(1.0).unwrap();
    let view = base.narrow(0, 1, 2).unwrap();
    DoubleInPlace.apply(&[view]).unwrap();
    assert_eq!(vals(&base), vec![1.0, 4.0, 6.0]);
    assert_eq!(base.grad_fn().unwrap().name(), "CopySlices");
    base.mul(&base).unwrap().sum_all().unwrap().backward().unwrap();
    assert_eq!(vals(&a.grad().unwrap()), vec![2.0, 16.0, 24.0]);

    let leaf = tensor!([1.0f32]).requires_grad_(true).unwrap();
    let err = DoubleInPlace.apply(&[leaf]).unwrap_err().to_string();
    assert!(
        err.contains("a leaf Variable that requires grad has been used in an in-place operation"),
        "{err}"
    );
}

/// Sorts its first input; the indices are not differentiable; records `needs_input_grad`.
struct SortValues;
impl Function for SortValues {
    fn forward(&self, ctx: &mut FunctionCtx, inputs: &[Tensor]) -> Result<Vec<Tensor>> {
        assert_eq!(ctx.needs_input_grad(), &[true, false]);
        let (v, i) = inputs[0].sort(0, false)?;
        let scaled = v.mul(3.0)?;
        ctx.mark_non_differentiable(&[&i, &scaled]);
        ctx.save_for_backward(&[&i]);
        Ok(vec![v, i, scaled])
    }
    fn backward(&self, ctx: &FunctionCtx, grads: &[Tensor]) -> Result<Vec<Option<Tensor>>> {
        // Non-differentiable outputs get zeros.
        assert_eq!(grads[2].to_vec::<f32>()?, vec![0.0; 3]);
        let i = &ctx.saved_tensors()?[0];
        Ok(vec![Some(grads[0].zeros_like()?.scatter(0, i, &grads[0])?), None])
    }
}

#[test]
fn non_differentiable_outputs_do_not_require_grad() {
    let x = tensor!([3.0f32, 1.0, 2.0]).requires_grad_(true).unwrap();
    let out = SortValues.apply(&[x.clone(), tensor!([1.0f32])]).unwrap();
    assert!(out[0].requires_grad());
    assert!(!out[1].requires_grad() && !out[2].requires_grad());
    out[0].mul(tensor!([1.0f32, 2.0, 3.0])).unwrap().sum_all().unwrap().backward().unwrap();
    assert_eq!(vals(&x.grad().unwrap()), vec![3.0, 1.0, 2.0]);
}

/// Returns its input as it is, marked non-differentiable (torch: the output does not require
/// grad).
struct PassThrough;
impl Function for PassThrough {
    fn forward(&self, ctx: &mut FunctionCtx, inputs: &[Tensor]) -> Result<Vec<Tensor>> {
        ctx.mark_non_differentiable(&[&inputs[0]]);
        Ok(vec![inputs[0].clone()])
    }
    fn backward(&self, _ctx: &FunctionCtx, grads: &[Tensor]) -> Result<Vec<Option<Tensor>>> {
        Ok(vec![Some(grads[0].clone())])
    }
}

/// Writes its input in place and says so, but returns something else (torch's error).
struct DirtyNotReturned;
impl Function for DirtyNotReturned {
    fn forward(&self, ctx: &mut FunctionCtx, inputs: &[Tensor]) -> Result<Vec<Tensor>> {
        ctx.mark_dirty(&[&inputs[0]]);
        inputs[0].mul_(2.0)?;
        Ok(vec![inputs[0].add(1.0)?])
    }
    fn backward(&self, _ctx: &FunctionCtx, grads: &[Tensor]) -> Result<Vec<Option<Tensor>>> {
        Ok(vec![Some(grads[0].mul(2.0)?)])
    }
}

#[test]
fn context_marks_follow_torch_at_the_edges() {
    let x = tensor!([1.0f32, 2.0]).requires_grad_(true).unwrap();
    let y = PassThrough.apply(std::slice::from_ref(&x)).unwrap().remove(0);
    assert!(!y.requires_grad(), "a non-differentiable input returned as is");
    let a = tensor!([1.0f32]).requires_grad_(true).unwrap();
    let err = DirtyNotReturned.apply(&[a.mul(1.0).unwrap()]).unwrap_err().to_string();
    assert!(err.contains("marked as dirty during the forward method were not returned as output"), "{err}");
    // An input listed twice in backward(inputs=...) gets its gradient once.
    let x = tensor!([1.0f32, 1.0]).requires_grad_(true).unwrap();
    let y = x.mul(2.0).unwrap().sum_all().unwrap();
    y.backward_inputs(None, &[x.clone(), x.clone()], false, false).unwrap();
    assert_eq!(vals(&x.grad().unwrap()), vec![2.0, 2.0]);
}
