//! torch's `torch.autograd.functional.hvp` and `vhp`: products of a vector with the Hessian of a
//! scalar function, with torch's `create_graph` and `strict` arguments and its error messages.
//!
//! As in torch, `inputs` given as one tensor (a slice of length 1) get the single-tensor error
//! wording, several the tuple wording.

use oxtorch_tensor::{Error, Result, Tensor};

use crate::functional::Func;
use crate::{grad, is_grad_enabled, EnableGradGuard, GradModeGuard};

/// torch's `_grad_preprocess`: inputs that carry history keep it (through a view) when
/// `create_graph`; the others are detached, and made to require grad when `need_graph`.
fn preprocess(xs: &[Tensor], create_graph: bool, need_graph: bool) -> Result<Vec<Tensor>> {
    xs.iter()
        .map(|x| {
            if create_graph && x.requires_grad() {
                x.view_as(x)
            } else if need_graph {
                x.detach().requires_grad_(true)
            } else {
                Ok(x.detach())
            }
        })
        .collect()
}

/// torch's `_validate_v`.
fn validate_v(v: &[Tensor], other: &[Tensor]) -> Result<()> {
    let is_tuple = other.len() != 1;
    if v.len() != other.len() {
        return Err(Error::msg(if is_tuple {
            format!("v is a tuple of invalid length: should be {} but got {}.", other.len(), v.len())
        } else {
            "The given v should contain a single Tensor.".to_string()
        }));
    }
    for (idx, (a, b)) in v.iter().zip(other).enumerate() {
        if a.dims() != b.dims() {
            let prepend = if is_tuple { format!("Entry {idx} in ") } else { String::new() };
            return Err(Error::msg(format!(
                "{prepend}v has invalid size: should be torch.Size({:?}) but got torch.Size({:?}).",
                b.dims(),
                a.dims()
            )));
        }
    }
    Ok(())
}

/// Which check [`check_requires_grad`] makes (torch's `input_type`).
#[derive(Clone, Copy, PartialEq)]
enum Stage {
    Outputs,
    Jacobian,
    Hessian,
}

/// torch's `_check_requires_grad` (strict mode only).
fn check_requires_grad(xs: &[Option<Tensor>], stage: Stage, strict: bool) -> Result<()> {
    if !strict {
        return Ok(());
    }
    for (i, x) in xs.iter().enumerate() {
        let Some(x) = x else {
            return Err(Error::msg(format!(
                "The output of the user-provided function is independent of input {i}. This is not allowed in strict mode."
            )));
        };
        if !x.requires_grad() {
            return Err(Error::msg(match stage {
                Stage::Hessian => format!(
                    "The hessian of the user-provided function with respect to input {i} is independent of the input. This is not allowed in strict mode. You should ensure that your function is thrice differentiable and that the hessian depends on the inputs."
                ),
                Stage::Jacobian => format!(
                    "While computing the hessian, found that the jacobian of the user-provided function with respect to input {i} is independent of the input. This is not allowed in strict mode. You should ensure that your function is twice differentiable and that the jacobian depends on the inputs (this would be violated by a linear function for example)."
                ),
                Stage::Outputs => format!(
                    "Output {i} of the user-provided function does not require gradients. The outputs must be computed in a differentiable manner from the input when running in strict mode."
                ),
            }));
        }
    }
    Ok(())
}

/// torch's `_autograd_grad`: `grad` over the outputs that require grad only (all `None` when
/// none does); `retain_graph` defaults to `create_graph`.
fn autograd_grad(
    outputs: &[Option<Tensor>],
    inputs: &[Tensor],
    grad_outputs: Option<&[Tensor]>,
    create_graph: bool,
    retain_graph: bool,
) -> Result<Vec<Option<Tensor>>> {
    let mut outs = Vec::new();
    let mut seeds = Vec::new();
    for (k, o) in outputs.iter().enumerate() {
        if let Some(o) = o.as_ref().filter(|o| o.requires_grad()) {
            outs.push(o.clone());
            if let Some(g) = grad_outputs {
                seeds.push(g[k].clone());
            }
        }
    }
    if outs.is_empty() {
        return Ok(vec![None; inputs.len()]);
    }
    let seed_slice = grad_outputs.map(|_| seeds.as_slice());
    grad(&outs, inputs, seed_slice, retain_graph, create_graph, true)
}

/// torch's `_fill_in_zeros` for the `double_back` (`vhp`) and `double_back_trick` (`hvp`) stages.
fn fill_in_zeros(
    grads: Vec<Option<Tensor>>,
    refs: &[Tensor],
    strict: bool,
    create_graph: bool,
    trick: bool,
) -> Result<Vec<Tensor>> {
    grads
        .into_iter()
        .zip(refs)
        .enumerate()
        .map(|(i, (g, r))| match g {
            None if strict && trick => Err(Error::msg(format!(
                "The hessian of the user-provided function is independent of entry {i} in the grad_jacobian. This is not allowed in strict mode as it prevents from using the double backward trick to replace forward mode AD."
            ))),
            None if strict => Err(Error::msg(format!(
                "The jacobian of the user-provided function is independent of input {i}. This is not allowed in strict mode."
            ))),
            None => r.zeros_like(),
            Some(g) if strict && create_graph && !g.requires_grad() => Err(Error::msg(format!(
                "The hessian of the user-provided function is independent of input {i}. This is not allowed in strict mode when create_graph=True."
            ))),
            Some(g) => Ok(g),
        })
        .collect()
}

/// The shared first half: preprocessed inputs and `v`, the function's output, its gradient.
struct Prepared {
    inputs: Vec<Tensor>,
    v: Option<Vec<Tensor>>,
    output: Tensor,
    jac: Vec<Option<Tensor>>,
}

fn prepare(
    name: &str,
    f: Func,
    inputs: &[Tensor],
    v: Option<&[Tensor]>,
    create_graph: bool,
    strict: bool,
) -> Result<Prepared> {
    let inputs = preprocess(inputs, create_graph, true)?;
    let v = match v {
        Some(v) => {
            let v = preprocess(v, create_graph, false)?;
            validate_v(&v, &inputs)?;
            Some(v)
        }
        None => {
            if inputs.len() != 1 || inputs[0].numel() != 1 {
                return Err(Error::msg(
                    "The vector v can only be None if the input to the user-provided function is a single Tensor with a single element.",
                ));
            }
            None
        }
    };
    let outputs = f(&inputs)?;
    let outs: Vec<Option<Tensor>> = outputs.iter().cloned().map(Some).collect();
    check_requires_grad(&outs, Stage::Outputs, strict)?;
    if outputs.len() != 1 {
        return Err(Error::msg(format!("The function given to {name} should return a single Tensor")));
    }
    if outputs[0].numel() != 1 {
        return Err(Error::msg(format!(
            "The Tensor returned by the function given to {name} should contain a single element"
        )));
    }
    let jac = autograd_grad(&outs, &inputs, None, true, true)?;
    check_requires_grad(&jac, Stage::Jacobian, strict)?;
    Ok(Prepared { inputs, v, output: outputs[0].clone(), jac })
}

/// Detaches unless `create_graph` (torch's `_grad_postprocess`).
fn post(t: Tensor, create_graph: bool) -> Tensor {
    if create_graph {
        t
    } else {
        t.detach()
    }
}

/// torch's `torch.autograd.functional.vhp(func, inputs, v, create_graph, strict)`: the output of
/// the scalar function `f` at `inputs` and the vector-Hessian product `vᵀ H`, one tensor per
/// input. `v` may be `None` only for a single one-element input. With `create_graph` the results
/// are differentiable; with `strict`, an input the result does not depend on is an error.
pub fn vhp(
    f: Func,
    inputs: &[Tensor],
    v: Option<&[Tensor]>,
    create_graph: bool,
    strict: bool,
) -> Result<(Tensor, Vec<Tensor>)> {
    let p = {
        let _g = EnableGradGuard::new();
        prepare("vhp", f, inputs, v, create_graph, strict)?
    };
    let res = {
        let _g = GradModeGuard::new(create_graph || is_grad_enabled());
        let g = autograd_grad(&p.jac, &p.inputs, p.v.as_deref(), create_graph, create_graph)?;
        fill_in_zeros(g, &p.inputs, strict, create_graph, false)?
    };
    Ok((post(p.output, create_graph), res.into_iter().map(|t| post(t, create_graph)).collect()))
}

/// torch's `torch.autograd.functional.hvp(func, inputs, v, create_graph, strict)`: the output of
/// the scalar function `f` at `inputs` and the Hessian-vector product `H v` (by the double
/// backward trick), one tensor per input. Arguments as [`vhp`].
pub fn hvp(
    f: Func,
    inputs: &[Tensor],
    v: Option<&[Tensor]>,
    create_graph: bool,
    strict: bool,
) -> Result<(Tensor, Vec<Tensor>)> {
    let (p, double_back, grad_jac) = {
        let _g = EnableGradGuard::new();
        let p = prepare("hvp", f, inputs, v, create_graph, strict)?;
        let grad_jac: Vec<Tensor> =
            p.inputs.iter().map(|x| x.zeros_like()?.requires_grad_(true)).collect::<Result<_>>()?;
        let double_back = autograd_grad(&p.jac, &p.inputs, Some(&grad_jac), true, true)?;
        // (torch checks the jacobian again here)
        check_requires_grad(&p.jac, Stage::Hessian, strict)?;
        (p, double_back, grad_jac)
    };
    let res = {
        let _g = GradModeGuard::new(create_graph || is_grad_enabled());
        let g = autograd_grad(&double_back, &grad_jac, p.v.as_deref(), create_graph, create_graph)?;
        fill_in_zeros(g, &p.inputs, strict, create_graph, true)?
    };
    Ok((post(p.output, create_graph), res.into_iter().map(|t| post(t, create_graph)).collect()))
}
