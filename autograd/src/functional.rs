//! Function transforms (torch's `torch.autograd.functional`): `vjp`, `jvp`, `jacobian`, `hessian`.
//! Inputs are taken as values: they are detached and made to require grad inside.

use oxtorch_tensor::{Error, Result, Tensor};

use crate::{grad, EnableGradGuard};

/// The function being transformed.
pub type Func<'a> = &'a dyn Fn(&[Tensor]) -> Result<Vec<Tensor>>;

fn fresh_inputs(inputs: &[Tensor]) -> Result<Vec<Tensor>> {
    inputs.iter().map(|t| t.detach().requires_grad_(true)).collect()
}

fn or_zeros(gs: Vec<Option<Tensor>>, like: &[Tensor]) -> Result<Vec<Tensor>> {
    gs.into_iter()
        .zip(like)
        .map(|(g, t)| match g {
            Some(g) => Ok(g.detach()),
            None => t.zeros_like(),
        })
        .collect()
}

/// The outputs of `f` and the vector-Jacobian product `vᵀ J` for each input.
pub fn vjp(f: Func, inputs: &[Tensor], v: &[Tensor]) -> Result<(Vec<Tensor>, Vec<Tensor>)> {
    let _g = EnableGradGuard::new();
    let xs = fresh_inputs(inputs)?;
    let outs = f(&xs)?;
    let gs = grad(&outs, &xs, Some(v), false, false, true)?;
    Ok((outs.iter().map(Tensor::detach).collect(), or_zeros(gs, &xs)?))
}

/// The outputs of `f` and the Jacobian-vector product `J v` for each output (by double backward).
pub fn jvp(f: Func, inputs: &[Tensor], v: &[Tensor]) -> Result<(Vec<Tensor>, Vec<Tensor>)> {
    if v.len() != inputs.len() {
        return Err(Error::msg(format!("jvp: expected {} tangents, got {}", inputs.len(), v.len())));
    }
    let _g = EnableGradGuard::new();
    let xs = fresh_inputs(inputs)?;
    let outs = f(&xs)?;
    let us: Vec<Tensor> = outs.iter().map(|o| o.zeros_like()?.requires_grad_(true)).collect::<Result<_>>()?;
    let gs = grad(&outs, &xs, Some(&us), true, true, true)?;
    let (gs, vs): (Vec<Tensor>, Vec<Tensor>) = gs
        .into_iter()
        .zip(v.iter().cloned())
        .filter_map(|(g, v)| g.filter(Tensor::requires_grad).map(|g| (g, v)))
        .unzip();
    let jv =
        if gs.is_empty() { vec![None; us.len()] } else { grad(&gs, &us, Some(&vs), false, false, true)? };
    Ok((outs.iter().map(Tensor::detach).collect(), or_zeros(jv, &outs)?))
}

/// `jacobian[i][j]`: d outputs[i] / d inputs[j], of shape `outputs[i].shape + inputs[j].shape`.
pub fn jacobian(f: Func, inputs: &[Tensor]) -> Result<Vec<Vec<Tensor>>> {
    jacobian_impl(f, inputs, false)
}

fn jacobian_impl(f: Func, inputs: &[Tensor], create_graph: bool) -> Result<Vec<Vec<Tensor>>> {
    let _g = EnableGradGuard::new();
    let xs: Vec<Tensor> = if create_graph { inputs.to_vec() } else { fresh_inputs(inputs)? };
    let outs = f(&xs)?;
    let mut result = Vec::with_capacity(outs.len());
    for o in &outs {
        let mut rows: Vec<Vec<Tensor>> = vec![Vec::new(); xs.len()];
        for k in 0..o.numel() {
            let seed = o.zeros_like()?;
            seed.reshape([-1])?.select(0, k as isize)?.fill_(1.0)?;
            let gs = if o.requires_grad() {
                grad(std::slice::from_ref(o), &xs, Some(&[seed]), true, create_graph, true)?
            } else {
                vec![None; xs.len()]
            };
            for (j, g) in gs.into_iter().enumerate() {
                rows[j].push(match g {
                    Some(g) if create_graph => g,
                    Some(g) => g.detach(),
                    None => xs[j].zeros_like()?,
                });
            }
        }
        let mut per_input = Vec::with_capacity(xs.len());
        for (j, row) in rows.into_iter().enumerate() {
            let refs: Vec<&Tensor> = row.iter().collect();
            let mut shape: Vec<isize> = o.dims().iter().map(|&d| d as isize).collect();
            shape.extend(xs[j].dims().iter().map(|&d| d as isize));
            let stacked = if refs.is_empty() {
                Tensor::zeros(vec![0], xs[j].same_options())?
            } else {
                Tensor::stack(&refs, 0)?
            };
            per_input.push(stacked.reshape(shape)?);
        }
        result.push(per_input);
    }
    Ok(result)
}

/// `hessian[i][j]`: d² f / d inputs[i] d inputs[j] of a scalar function, of shape
/// `inputs[i].shape + inputs[j].shape`.
pub fn hessian(f: Func, inputs: &[Tensor]) -> Result<Vec<Vec<Tensor>>> {
    let _g = EnableGradGuard::new();
    let xs = fresh_inputs(inputs)?;
    let gradient = |xs: &[Tensor]| -> Result<Vec<Tensor>> {
        let out = f(xs)?;
        if out.len() != 1 || out[0].numel() != 1 {
            return Err(Error::msg("hessian: the function must return a single scalar tensor"));
        }
        let gs = grad(&out, xs, None, true, true, true)?;
        gs.into_iter().zip(xs).map(|(g, x)| g.map_or_else(|| x.zeros_like(), Ok)).collect()
    };
    let h = jacobian_impl(&gradient, &xs, true)?;
    Ok(h.into_iter().map(|row| row.into_iter().map(|t| t.detach()).collect()).collect())
}

// torch's `hvp` and `vhp` live in their own file.
pub use crate::hessian_vector::{hvp, vhp};
