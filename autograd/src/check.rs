//! Numerical gradient checks (torch's `gradcheck` and `gradgradcheck`): the analytical Jacobian
//! from backward against central finite differences.

use oxtorch_tensor::{DType, Error, Result, Tensor};

use crate::{grad, no_grad, EnableGradGuard};

/// Tolerances of [`gradcheck`] (torch's defaults).
#[derive(Clone, Copy, Debug)]
pub struct GradcheckOptions {
    /// finite-difference step
    pub eps: f64,
    /// absolute tolerance
    pub atol: f64,
    /// relative tolerance
    pub rtol: f64,
}

impl Default for GradcheckOptions {
    fn default() -> Self {
        GradcheckOptions { eps: 1e-6, atol: 1e-5, rtol: 1e-3 }
    }
}

/// The function under test: inputs to outputs.
type F<'a> = &'a dyn Fn(&[Tensor]) -> Result<Vec<Tensor>>;

/// Outputs of `f` flattened into one f64 vector (only floating-point outputs count).
fn flat_outputs(f: F, inputs: &[Tensor]) -> Result<Vec<f64>> {
    let outs = no_grad(|| f(inputs))?;
    let mut v = Vec::new();
    for o in outs.iter().filter(|o| o.is_floating_point()) {
        v.extend(o.to_f64_vec()?);
    }
    Ok(v)
}

/// Checks the gradients of `f` w.r.t. every input that requires grad (f64 inputs recommended)
/// against finite differences; the error names the input, output and element that disagree.
pub fn gradcheck(f: F, inputs: &[Tensor], opts: GradcheckOptions) -> Result<()> {
    for t in inputs.iter().filter(|t| t.requires_grad()) {
        if t.dtype() != DType::F64 {
            return Err(Error::msg(format!(
                "gradcheck: input of dtype {} requires grad; use float64 inputs for a meaningful check",
                t.dtype()
            )));
        }
    }
    let outs = f(inputs)?;
    let outs: Vec<Tensor> = outs.into_iter().filter(|o| o.is_floating_point()).collect();
    let n_out: usize = outs.iter().map(Tensor::numel).sum();
    let wrt: Vec<usize> = (0..inputs.len()).filter(|&i| inputs[i].requires_grad()).collect();
    // Analytical Jacobian, one backward per output element.
    let mut analytical: Vec<Vec<f64>> = wrt.iter().map(|&i| vec![0.0; inputs[i].numel() * n_out]).collect();
    // Outputs are seeded by position: two outputs may be the same tensor object.
    let diff: Vec<usize> = (0..outs.len()).filter(|&i| outs[i].requires_grad()).collect();
    let diff_outs: Vec<Tensor> = diff.iter().map(|&i| outs[i].clone()).collect();
    let mut row = 0;
    for (oi, o) in outs.iter().enumerate() {
        for k in 0..o.numel() {
            if o.requires_grad() {
                let seeds: Vec<Tensor> = diff
                    .iter()
                    .map(|&di| {
                        let d = &outs[di];
                        let s = Tensor::zeros(d.dims().to_vec(), d.same_options())?;
                        if di == oi {
                            s.reshape([-1])?.select(0, k as isize)?.fill_(1.0)?;
                        }
                        Ok(s)
                    })
                    .collect::<Result<_>>()?;
                let targets: Vec<Tensor> = wrt.iter().map(|&i| inputs[i].clone()).collect();
                let gs = grad(&diff_outs, &targets, Some(&seeds), true, false, true)?;
                for (j, g) in gs.iter().enumerate() {
                    if let Some(g) = g {
                        let vals = g.to_f64_vec()?;
                        let n = inputs[wrt[j]].numel();
                        if vals.len() != n {
                            return Err(Error::msg(format!(
                                "gradcheck: gradient of input {} has {} elements, expected {n}",
                                wrt[j],
                                vals.len()
                            )));
                        }
                        for (e, v) in vals.into_iter().enumerate() {
                            analytical[j][e * n_out + row] = v;
                        }
                    }
                }
            }
            row += 1;
        }
    }
    // Numerical Jacobian by central differences on copies of the inputs.
    for (j, &i) in wrt.iter().enumerate() {
        let n = inputs[i].numel();
        for e in 0..n {
            let eval = |delta: f64| -> Result<Vec<f64>> {
                let mut perturbed: Vec<Tensor> = inputs.to_vec();
                let p = no_grad(|| inputs[i].detach().copy())?;
                let flat = p.reshape([-1])?;
                let cell = flat.select(0, e as isize)?;
                let v = cell.item::<f64>()?;
                no_grad(|| cell.fill_(v + delta).map(|_| ()))?;
                perturbed[i] = p;
                flat_outputs(f, &perturbed)
            };
            let (plus, minus) = (eval(opts.eps)?, eval(-opts.eps)?);
            for r in 0..n_out {
                let num = (plus[r] - minus[r]) / (2.0 * opts.eps);
                let ana = analytical[j][e * n_out + r];
                // A NaN on either side fails, as torch's allclose without equal_nan.
                let close = (ana - num).abs() <= opts.atol + opts.rtol * num.abs();
                if !close {
                    return Err(Error::msg(format!(
                        "gradcheck: Jacobian mismatch for output element {r} with respect to input {i}, element {e}: numerical {num} vs analytical {ana}"
                    )));
                }
            }
        }
    }
    Ok(())
}

/// Checks second derivatives: `gradcheck` of the map `(inputs, v) -> vjp(f, inputs, v)`, with
/// random f64 seeds `v` that require grad.
pub fn gradgradcheck(f: F, inputs: &[Tensor], opts: GradcheckOptions) -> Result<()> {
    let outs = f(inputs)?;
    let seeds: Vec<Tensor> = outs
        .iter()
        .filter(|o| o.requires_grad())
        .map(|o| Tensor::randn(o.dims().to_vec(), (DType::F64, o.device()))?.requires_grad_(true))
        .collect::<Result<_>>()?;
    let n_in = inputs.len();
    let wrt: Vec<usize> = (0..n_in).filter(|&i| inputs[i].requires_grad()).collect();
    let vjp = move |all: &[Tensor]| -> Result<Vec<Tensor>> {
        let _grad = EnableGradGuard::new();
        let (xs, vs) = all.split_at(n_in);
        // Finite-difference evaluations pass plain copies: make them differentiable again.
        let xs: Vec<Tensor> = xs
            .iter()
            .enumerate()
            .map(|(i, x)| {
                if wrt.contains(&i) && !x.requires_grad() {
                    x.detach().requires_grad_(true)
                } else {
                    Ok(x.clone())
                }
            })
            .collect::<Result<_>>()?;
        let xs = &xs[..];
        let outs: Vec<Tensor> = f(xs)?.into_iter().filter(|o| o.requires_grad()).collect();
        let targets: Vec<Tensor> = wrt.iter().map(|&i| xs[i].clone()).collect();
        let gs = grad(&outs, &targets, Some(vs), true, true, true)?;
        gs.into_iter()
            .zip(&targets)
            .map(|(g, t)| match g {
                Some(g) => Ok(g),
                None => t.zeros_like(),
            })
            .collect()
    };
    let mut all = inputs.to_vec();
    all.extend(seeds);
    gradcheck(&vjp, &all, opts)
}
