//! `torch.func`'s closure transforms: [`grad`], [`grad_and_value`], [`vjp`], [`jvp`],
//! [`linearize`], [`jacrev`], [`jacfwd`] and [`hessian`], each over functions of a slice of
//! tensors returning a vector of tensors (the shape [`oxtorch_tensor::vmap`] uses), so that they
//! nest: `grad(grad(f))`, `jacrev(jacrev(f))`, `vmap(grad(f))`.
//!
//! torch.func takes plain tensors: the differentiated inputs are wrapped internally (a fresh leaf
//! for an input that does not require grad, a view of it for one that does) and never mutated.
//! When an input already requires grad (ordinary autograd outside) or the transform runs inside
//! another one, the derivatives are taken with `create_graph`, so the results stay differentiable
//! w.r.t. the inputs and w.r.t. tensors a nested function captured from an enclosing transform.
//! Otherwise the results are detached.
//!
//! Structure: a function's outputs and the transforms' results are flat vectors. Gradients are
//! listed in `argnums` order; Jacobians output-major (`result[i * argnums.len() + j]` is
//! d `output[i]` / d `inputs[argnums[j]]`, of shape `output[i].shape + input.shape`), which is the
//! flattening of torch's nested tuples. `has_aux` functions return `[output, aux...]`.
//!
//! Differences from torch: forward mode is computed by reverse mode (the double-backward trick
//! for [`jvp`], row by row Jacobians for [`jacfwd`]), with equal results; a top-level transform
//! whose inputs do not require grad treats tensors its function captured as constants (torch
//! keeps the results differentiable w.r.t. captured tensors that require grad).

use std::cell::Cell;

use oxtorch_tensor::autograd::{grad as autograd_grad, is_grad_enabled, EnableGradGuard};
use oxtorch_tensor::{Error, Result, Tensor};

thread_local! {
    /// How many transforms are running on this thread (enclosing the current call).
    static DEPTH: Cell<usize> = const { Cell::new(0) };
}

/// One running transform: grad mode on, the nesting depth raised, and whether derivatives must
/// keep their graph.
struct Scope {
    create_graph: bool,
    _grad: EnableGradGuard,
}

impl Scope {
    /// Enters a transform; `inputs_require_grad`: some input is differentiable from outside.
    fn enter(inputs_require_grad: bool) -> Self {
        let nested = DEPTH.with(Cell::get) > 0;
        let create_graph = is_grad_enabled() && (nested || inputs_require_grad);
        DEPTH.with(|d| d.set(d.get() + 1));
        Scope { create_graph, _grad: EnableGradGuard::new() }
    }

    /// A result as returned to the caller: detached unless the graph is kept.
    fn finish(&self, t: Tensor) -> Tensor {
        if self.create_graph {
            t
        } else {
            t.detach()
        }
    }
}

impl Drop for Scope {
    fn drop(&mut self) {
        DEPTH.with(|d| d.set(d.get().saturating_sub(1)));
    }
}

fn any_requires_grad(ts: &[Tensor]) -> bool {
    ts.iter().any(Tensor::requires_grad)
}

/// The differentiated stand-in of an input: a view (a new graph node) of one that requires grad,
/// so gradients flow on to it; a fresh leaf otherwise.
fn differentiable(x: &Tensor) -> Result<Tensor> {
    if !x.is_floating_point() {
        // (torch.func's wording)
        return Err(Error::msg("only Tensors of floating point dtype can require gradients"));
    }
    if x.requires_grad() {
        x.view_as(x).or_else(|_| x.reshape(x.dims()))
    } else {
        x.detach().requires_grad_(true)
    }
}

/// Python's repr of a tuple of ints: `(0,)`, `(0, 1)`.
fn tuple_repr(items: &[usize]) -> String {
    let items: Vec<String> = items.iter().map(ToString::to_string).collect();
    if items.len() == 1 {
        format!("({},)", items[0])
    } else {
        format!("({})", items.join(", "))
    }
}

/// A pytree repr of `n` leaves in a tuple: `(*,)`, `(*, *)`.
fn leaves_repr(n: usize) -> String {
    if n == 1 {
        "(*,)".to_string()
    } else {
        format!("({})", vec!["*"; n].join(", "))
    }
}

/// torch's `torch.Size([2, 3])`.
fn size_repr(dims: &[usize]) -> String {
    let dims: Vec<String> = dims.iter().map(ToString::to_string).collect();
    format!("torch.Size([{}])", dims.join(", "))
}

/// torch's argnums checks: each in `-n..n` (wrapped), non-empty, unique.
fn wrap_argnums(argnums: &[isize], n: usize) -> Result<Vec<usize>> {
    let n_i = n as isize;
    let mut out = Vec::with_capacity(argnums.len());
    for &a in argnums {
        if a < -n_i || a >= n_i {
            return Err(Error::msg(format!("Got argnum={a}, but only {n} positional inputs")));
        }
        out.push(if a < 0 { (a + n_i) as usize } else { a as usize });
    }
    if out.is_empty() {
        return Err(Error::msg("argnums must be non-empty"));
    }
    if out.iter().enumerate().any(|(i, a)| out[..i].contains(a)) {
        return Err(Error::msg(format!("argnums elements must be unique, got {}", tuple_repr(&out))));
    }
    Ok(out)
}

/// The inputs with those at `argnums` replaced by their differentiable stand-ins, and those.
fn prepare(primals: &[Tensor], argnums: &[usize]) -> Result<(Vec<Tensor>, Vec<Tensor>)> {
    let mut args = primals.to_vec();
    let mut diff = Vec::with_capacity(argnums.len());
    for &a in argnums {
        let d = differentiable(&primals[a])?;
        args[a] = d.clone();
        diff.push(d);
    }
    Ok((args, diff))
}

/// Gradients (zeros for an input the outputs do not reach) of `outputs` seeded with `seeds`.
fn grads_or_zeros(
    outputs: &[Tensor],
    seeds: &[Tensor],
    inputs: &[Tensor],
    create_graph: bool,
) -> Result<Vec<Tensor>> {
    let (outs, seeds): (Vec<Tensor>, Vec<Tensor>) = outputs
        .iter()
        .zip(seeds)
        .filter(|(o, _)| o.requires_grad())
        .map(|(o, s)| (o.clone(), s.clone()))
        .unzip();
    let gs = if outs.is_empty() {
        vec![None; inputs.len()]
    } else {
        autograd_grad(&outs, inputs, Some(&seeds), true, create_graph, true)?
    };
    gs.into_iter().zip(inputs).map(|(g, x)| g.map_or_else(|| x.zeros_like(), Ok)).collect()
}

/// (gradients in argnums order, value, aux) of one call of `grad_and_value(f)`.
fn grad_and_value_impl<F>(
    f: &F,
    argnums: &[isize],
    has_aux: bool,
    primals: &[Tensor],
) -> Result<(Vec<Tensor>, Tensor, Vec<Tensor>)>
where
    F: Fn(&[Tensor]) -> Result<Vec<Tensor>>,
{
    let argnums = wrap_argnums(argnums, primals.len())?;
    let scope = Scope::enter(any_requires_grad(primals));
    let (args, diff) = prepare(primals, &argnums)?;
    let mut outs = f(&args)?;
    if has_aux && outs.len() < 2 {
        return Err(Error::msg(
            "grad_and_value(f)(*args): output of function f should be a tuple: (output, aux) if has_aux is True",
        ));
    }
    if !has_aux && outs.len() != 1 {
        return Err(Error::msg(
            "grad_and_value(f)(*args): Expected f(*args) to return a Tensor, got <class 'tuple'>",
        ));
    }
    let aux = outs.split_off(1);
    let out = outs.remove(0);
    if out.dim() != 0 {
        return Err(Error::msg(format!(
            "grad_and_value(f)(*args): Expected f(*args) to return a scalar Tensor, got tensor with {} dims. \
             Maybe you wanted to use the vjp or jacrev APIs instead?",
            out.dim()
        )));
    }
    let seed = out.ones_like()?;
    let gs = grads_or_zeros(std::slice::from_ref(&out), &[seed], &diff, scope.create_graph)?;
    let gs = gs.into_iter().map(|g| scope.finish(g)).collect();
    let aux = aux.into_iter().map(|a| scope.finish(a)).collect();
    Ok((gs, scope.finish(out), aux))
}

/// `torch.func.grad(f, argnums, has_aux)`: a function returning the gradients of `f`'s scalar
/// (0-d) output w.r.t. the inputs at `argnums` (negative counts from the end), in that order,
/// followed with `has_aux` by `f`'s auxiliary outputs (`f` returns `[output, aux...]`).
pub fn grad<F>(f: F, argnums: &[isize], has_aux: bool) -> impl Fn(&[Tensor]) -> Result<Vec<Tensor>>
where
    F: Fn(&[Tensor]) -> Result<Vec<Tensor>>,
{
    let argnums = argnums.to_vec();
    move |primals: &[Tensor]| -> Result<Vec<Tensor>> {
        let (mut gs, _, aux) = grad_and_value_impl(&f, &argnums, has_aux, primals)?;
        gs.extend(aux);
        Ok(gs)
    }
}

/// `torch.func.grad_and_value(f, argnums, has_aux)`: like [`grad`], returning
/// `[gradients..., value, aux...]`.
pub fn grad_and_value<F>(f: F, argnums: &[isize], has_aux: bool) -> impl Fn(&[Tensor]) -> Result<Vec<Tensor>>
where
    F: Fn(&[Tensor]) -> Result<Vec<Tensor>>,
{
    let argnums = argnums.to_vec();
    move |primals: &[Tensor]| -> Result<Vec<Tensor>> {
        let (mut gs, value, aux) = grad_and_value_impl(&f, &argnums, has_aux, primals)?;
        gs.push(value);
        gs.extend(aux);
        Ok(gs)
    }
}

/// `torch.func.grad(f)` of a function of one tensor returning a 0-d tensor.
pub fn grad1<F>(f: F) -> impl Fn(&Tensor) -> Result<Tensor>
where
    F: Fn(&Tensor) -> Result<Tensor>,
{
    let g = grad(move |xs: &[Tensor]| -> Result<Vec<Tensor>> { Ok(vec![f(&xs[0])?]) }, &[0], false);
    move |x: &Tensor| -> Result<Tensor> { Ok(g(std::slice::from_ref(x))?.remove(0)) }
}

/// `torch.func.vjp(f, *primals)`: `f`'s outputs and a function mapping cotangents (one per output,
/// of its shape) to the vector-Jacobian products, one per primal (zeros where unused). The
/// returned function may be called any number of times.
#[allow(clippy::type_complexity)] // (an `impl Fn` in a tuple has no alias on stable Rust)
pub fn vjp<F>(f: F, primals: &[Tensor]) -> Result<(Vec<Tensor>, impl Fn(&[Tensor]) -> Result<Vec<Tensor>>)>
where
    F: FnOnce(&[Tensor]) -> Result<Vec<Tensor>>,
{
    let scope = Scope::enter(any_requires_grad(primals));
    let diff: Vec<Tensor> = primals.iter().map(differentiable).collect::<Result<_>>()?;
    let outs = f(&diff)?;
    if outs.is_empty() {
        return Err(Error::msg(
            "vjp(f, *primals): Expected f to be a function that has non-empty output (got output = ())",
        ));
    }
    if let Some(o) = outs.iter().find(|o| !o.is_floating_point()) {
        return Err(Error::msg(format!(
            "vjp(f, ...): All outputs of f must be floating-point or complex Tensors, got Tensor with dtype {}",
            o.dtype()
        )));
    }
    let values: Vec<Tensor> = outs.iter().map(|o| scope.finish(o.clone())).collect();
    let kept = scope.create_graph;
    drop(scope);
    let vjp_fn = move |cotangents: &[Tensor]| -> Result<Vec<Tensor>> {
        if cotangents.len() != outs.len() {
            return Err(Error::msg(format!(
                "Expected pytree structure of cotangents to be the same as pytree structure of outputs to the \
                 function. cotangents: {}, primal output: {}",
                leaves_repr(cotangents.len()),
                leaves_repr(outs.len())
            )));
        }
        for (i, (c, o)) in cotangents.iter().zip(&outs).enumerate() {
            if c.dims() != o.dims() {
                return Err(Error::msg(format!(
                    "Mismatch in shape: grad_output[{i}] has a shape of {} and output[{i}] has a shape of {}.",
                    size_repr(c.dims()),
                    size_repr(o.dims())
                )));
            }
        }
        let nested = DEPTH.with(Cell::get) > 0;
        let create_graph = kept || (is_grad_enabled() && (nested || any_requires_grad(cotangents)));
        let _g = EnableGradGuard::new();
        let gs = grads_or_zeros(&outs, cotangents, &diff, create_graph)?;
        Ok(gs.into_iter().map(|g| if create_graph { g } else { g.detach() }).collect())
    };
    Ok((values, vjp_fn))
}

/// `torch.func.jvp(f, primals, tangents)`: `f`'s outputs and the Jacobian-vector products
/// `J · tangents`, one per output (computed by double backward).
pub fn jvp<F>(f: F, primals: &[Tensor], tangents: &[Tensor]) -> Result<(Vec<Tensor>, Vec<Tensor>)>
where
    F: FnOnce(&[Tensor]) -> Result<Vec<Tensor>>,
{
    if primals.len() != tangents.len() {
        let spec = |n: usize| format!("TreeSpec(tuple, None, [{}])", vec!["*"; n].join(",\n  "));
        return Err(Error::msg(format!(
            "jvp(f, primals, tangents): Expected primals and tangents to have the same python structure. For \
             example, if primals is a tuple of 3 tensors, tangents also must be. Got primals with structure {} \
             and tangents with structure {}",
            spec(primals.len()),
            spec(tangents.len())
        )));
    }
    for (p, t) in primals.iter().zip(tangents) {
        for (what, x) in [("primal", p), ("tangent", t)] {
            if !x.is_floating_point() {
                return Err(Error::msg(format!(
                    "Expected {what} to be floating point or complex, but got: {}",
                    x.dtype()
                )));
            }
        }
        if p.dims() != t.dims() {
            return Err(Error::msg(format!(
                "Trying to set a forward gradient that has a different size than that of the original Tensor, \
                 this is not supported. Tensor is of size {:?} while the given forward gradient is of size {:?}.",
                p.dims(),
                t.dims()
            )));
        }
    }
    let scope = Scope::enter(any_requires_grad(primals) || any_requires_grad(tangents));
    let diff: Vec<Tensor> = primals.iter().map(differentiable).collect::<Result<_>>()?;
    let outs = f(&diff)?;
    if outs.is_empty() {
        return Err(Error::msg(
            "jvp(f, primals, tangents): Expected f to be a function that has non-empty output (got output = ())",
        ));
    }
    // g = Σ uᵢᵀ Jᵢ is linear in the dummy cotangents u; its vjp with the tangents is J · tangents.
    // (only for the float outputs the inputs reach: the others' tangents are zeros, as torch)
    let reached: Vec<usize> = (0..outs.len()).filter(|&i| outs[i].requires_grad()).collect();
    let us: Vec<Tensor> = outs
        .iter()
        .map(|o| if o.requires_grad() { o.zeros_like()?.requires_grad_(true) } else { o.zeros_like() })
        .collect::<Result<_>>()?;
    let mut jv: Vec<Option<Tensor>> = vec![None; outs.len()];
    if !reached.is_empty() {
        let os: Vec<Tensor> = reached.iter().map(|&i| outs[i].clone()).collect();
        let ur: Vec<Tensor> = reached.iter().map(|&i| us[i].clone()).collect();
        let gs = autograd_grad(&os, &diff, Some(&ur), true, true, true)?;
        let (gs, ts): (Vec<Tensor>, Vec<Tensor>) = gs
            .into_iter()
            .zip(tangents.iter().cloned())
            .filter_map(|(g, t)| g.filter(Tensor::requires_grad).map(|g| (g, t)))
            .unzip();
        if !gs.is_empty() {
            let r = autograd_grad(&gs, &ur, Some(&ts), true, scope.create_graph, true)?;
            for (&i, g) in reached.iter().zip(r) {
                jv[i] = g;
            }
        }
    }
    let tangents_out = jv
        .into_iter()
        .zip(&outs)
        .map(|(g, o)| -> Result<Tensor> { Ok(scope.finish(g.map_or_else(|| o.zeros_like(), Ok)?)) })
        .collect::<Result<Vec<Tensor>>>()?;
    let values = outs.into_iter().map(|o| scope.finish(o)).collect();
    Ok((values, tangents_out))
}

/// `torch.func.linearize(f, *primals)`: `f(primals)` and a function mapping tangents to
/// `J · tangents` at `primals` (each call is a [`jvp`]).
#[allow(clippy::type_complexity)] // (an `impl Fn` in a tuple has no alias on stable Rust)
pub fn linearize<F>(
    f: F,
    primals: &[Tensor],
) -> Result<(Vec<Tensor>, impl Fn(&[Tensor]) -> Result<Vec<Tensor>>)>
where
    F: Fn(&[Tensor]) -> Result<Vec<Tensor>>,
{
    let values = f(primals)?;
    let primals = primals.to_vec();
    let jvp_fn = move |tangents: &[Tensor]| -> Result<Vec<Tensor>> { Ok(jvp(&f, &primals, tangents)?.1) };
    Ok((values, jvp_fn))
}

/// The Jacobians of `f` at `primals` w.r.t. the inputs at `argnums`, output-major.
fn jacobian_impl<F>(f: &F, argnums: &[isize], primals: &[Tensor], api: &str) -> Result<Vec<Tensor>>
where
    F: Fn(&[Tensor]) -> Result<Vec<Tensor>>,
{
    let argnums = wrap_argnums(argnums, primals.len())?;
    let scope = Scope::enter(any_requires_grad(primals));
    let (args, diff) = prepare(primals, &argnums)?;
    let outs = f(&args)?;
    if outs.is_empty() {
        return Err(Error::msg(format!(
            "{api}(f, ...)(*args): Expected f to be a function that has non-empty output (got output = ())"
        )));
    }
    if let Some(o) = outs.iter().find(|o| !o.is_floating_point()) {
        return Err(Error::msg(format!(
            "vjp(f, ...): All outputs of f must be floating-point or complex Tensors, got Tensor with dtype {}",
            o.dtype()
        )));
    }
    let mut result = Vec::with_capacity(outs.len() * diff.len());
    for o in &outs {
        let n = o.numel();
        let mut rows: Vec<Vec<Tensor>> = vec![Vec::with_capacity(n); diff.len()];
        for k in 0..n {
            let gs = if o.requires_grad() {
                let seed = Tensor::zeros(vec![n], o.same_options())?;
                seed.select(0, k as isize)?.fill_(1.0)?;
                let seed = seed.reshape(o.dims())?;
                autograd_grad(std::slice::from_ref(o), &diff, Some(&[seed]), true, scope.create_graph, true)?
            } else {
                vec![None; diff.len()]
            };
            for (j, g) in gs.into_iter().enumerate() {
                rows[j].push(g.map_or_else(|| diff[j].zeros_like(), Ok)?);
            }
        }
        for (j, row) in rows.into_iter().enumerate() {
            let mut shape = o.dims().to_vec();
            shape.extend_from_slice(diff[j].dims());
            let jac = if row.is_empty() {
                Tensor::zeros(shape, diff[j].same_options())?
            } else {
                let refs: Vec<&Tensor> = row.iter().collect();
                Tensor::stack(&refs, 0)?.reshape(shape)?
            };
            result.push(scope.finish(jac));
        }
    }
    Ok(result)
}

/// `torch.func.jacrev(f, argnums)`: a function returning the Jacobians of every output of `f`
/// w.r.t. the inputs at `argnums`, output-major: entry `i * argnums.len() + j` is
/// d `output[i]` / d `inputs[argnums[j]]`, of shape `output[i].shape + input.shape`.
pub fn jacrev<F>(f: F, argnums: &[isize]) -> impl Fn(&[Tensor]) -> Result<Vec<Tensor>>
where
    F: Fn(&[Tensor]) -> Result<Vec<Tensor>>,
{
    let argnums = argnums.to_vec();
    move |primals: &[Tensor]| -> Result<Vec<Tensor>> { jacobian_impl(&f, &argnums, primals, "jacrev") }
}

/// `torch.func.jacfwd(f, argnums)`: the Jacobians of [`jacrev`] (same layout and values), here
/// also computed by reverse mode.
pub fn jacfwd<F>(f: F, argnums: &[isize]) -> impl Fn(&[Tensor]) -> Result<Vec<Tensor>>
where
    F: Fn(&[Tensor]) -> Result<Vec<Tensor>>,
{
    let argnums = argnums.to_vec();
    move |primals: &[Tensor]| -> Result<Vec<Tensor>> { jacobian_impl(&f, &argnums, primals, "jacfwd") }
}

/// `torch.func.hessian(f, argnums)` = `jacfwd(jacrev(f, argnums), argnums)`: for a scalar `f`,
/// entry `i * argnums.len() + j` is d² f / d `inputs[argnums[i]]` d `inputs[argnums[j]]`, of shape
/// `input_i.shape + input_j.shape`.
pub fn hessian<F>(f: F, argnums: &[isize]) -> impl Fn(&[Tensor]) -> Result<Vec<Tensor>>
where
    F: Fn(&[Tensor]) -> Result<Vec<Tensor>>,
{
    jacfwd(jacrev(f, argnums), argnums)
}

/// `torch.func.jacrev(f)` of a function of one tensor returning one tensor.
pub fn jacrev1<F>(f: F) -> impl Fn(&Tensor) -> Result<Tensor>
where
    F: Fn(&Tensor) -> Result<Tensor>,
{
    let j = jacrev(move |xs: &[Tensor]| -> Result<Vec<Tensor>> { Ok(vec![f(&xs[0])?]) }, &[0]);
    move |x: &Tensor| -> Result<Tensor> { Ok(j(std::slice::from_ref(x))?.remove(0)) }
}

/// `torch.func.hessian(f)` of a function of one tensor returning a scalar: of shape
/// `x.shape + x.shape`.
pub fn hessian1<F>(f: F) -> impl Fn(&Tensor) -> Result<Tensor>
where
    F: Fn(&Tensor) -> Result<Tensor>,
{
    let h = hessian(move |xs: &[Tensor]| -> Result<Vec<Tensor>> { Ok(vec![f(&xs[0])?]) }, &[0]);
    move |x: &Tensor| -> Result<Tensor> { Ok(h(std::slice::from_ref(x))?.remove(0)) }
}
