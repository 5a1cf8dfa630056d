//! torch's `torch.autograd.forward_ad`: `dual_level`, `make_dual`, `unpack_dual`.
//!
//! There is no forward-mode engine: a dual tensor is a tensor that requires grad, registered with
//! its tangent for the current level, and [`unpack_dual`] computes the tangent of a result as the
//! Jacobian-vector product with the registered tangents, by the double-backward trick (as
//! [`crate::func::jvp`]). Ops on dual tensors must therefore run with grad mode on.

use std::cell::RefCell;
use std::collections::HashSet;

use oxtorch_tensor::{Error, Result, Tensor};

use crate::{grad, EnableGradGuard};

/// One dual tensor of the current level.
struct Dual {
    /// the dual tensor (the differentiation point)
    dual: Tensor,
    tangent: Tensor,
}

thread_local! {
    /// The current level's dual tensors; `None` outside a level.
    static LEVEL: RefCell<Option<Vec<Dual>>> = const { RefCell::new(None) };
}

/// The scope of a forward-AD level (torch's `with fwAD.dual_level():`): dual tensors made inside
/// lose their tangents when it drops.
#[must_use = "the level ends as soon as the guard drops"]
pub struct DualLevel {
    _private: (),
}

impl Drop for DualLevel {
    fn drop(&mut self) {
        LEVEL.with(|l| *l.borrow_mut() = None);
    }
}

/// Enters a forward-AD level (torch's `torch.autograd.forward_ad.dual_level()`); levels do not
/// nest, as in torch.
pub fn dual_level() -> Result<DualLevel> {
    LEVEL.with(|l| {
        let mut l = l.borrow_mut();
        if l.is_some() {
            return Err(Error::msg("Nested forward mode AD is not supported at the moment"));
        }
        *l = Some(Vec::new());
        Ok(DualLevel { _private: () })
    })
}

/// A dual tensor with value `primal` and forward gradient `tangent` (torch's
/// `torch.autograd.forward_ad.make_dual`), inside a [`dual_level`].
///
/// Unlike torch's, the result always requires grad (the tangents are computed by backward
/// passes through it): a leaf of its own when `primal` does not require grad, else a view of
/// `primal` that keeps its history.
pub fn make_dual(primal: &Tensor, tangent: &Tensor) -> Result<Tensor> {
    if LEVEL.with(|l| l.borrow().is_none()) {
        return Err(Error::msg(
            "Trying to create a dual Tensor for forward AD but no level exists, make sure to enter_dual_level() first.",
        ));
    }
    for (what, x) in [("primal", primal), ("tangent", tangent)] {
        if !x.is_floating_point() {
            return Err(Error::msg(format!(
                "Expected {what} to be floating point or complex, but got: {}",
                x.dtype()
            )));
        }
    }
    if primal.dims() != tangent.dims() {
        return Err(Error::msg(format!(
            "Trying to set a forward gradient that has a different size than that of the original Tensor, this is not supported. Tensor is of size {:?} while the given forward gradient is of size {:?}.",
            primal.dims(),
            tangent.dims()
        )));
    }
    let _g = EnableGradGuard::new();
    let dual = if primal.requires_grad() {
        primal.view_as(primal)?
    } else {
        primal.detach().requires_grad_(true)?
    };
    LEVEL.with(|l| {
        if let Some(duals) = l.borrow_mut().as_mut() {
            duals.push(Dual { dual: dual.clone(), tangent: tangent.clone() });
        }
    });
    Ok(dual)
}

/// The primal and the tangent of `t` (torch's `torch.autograd.forward_ad.unpack_dual`).
///
/// Outside a level, and for a tensor that depends on no dual tensor, the primal is `t` itself
/// (history kept) and the tangent `None`. Otherwise the primal keeps `t`'s backward history when
/// that reaches a leaf requiring grad other than the dual tensors (torch's
/// `unpack_dual(make_dual(x, v) * w).primal` has `w`'s history; here a backward through it also
/// reaches the dual tensors, which require grad in this design), and is detached otherwise.
pub fn unpack_dual(t: &Tensor) -> Result<(Tensor, Option<Tensor>)> {
    // (the registry is cloned out: computing the tangent runs user-visible backward passes)
    let duals: Vec<(Tensor, Tensor)> = LEVEL.with(|l| {
        l.borrow()
            .as_ref()
            .map(|ds| ds.iter().map(|d| (d.dual.clone(), d.tangent.clone())).collect())
            .unwrap_or_default()
    });
    if duals.is_empty() || !t.requires_grad() {
        return Ok((t.clone(), None));
    }
    let dual_tensors: Vec<Tensor> = duals.iter().map(|d| d.0.clone()).collect();
    // Computed before grad mode is forced on below (under no_grad the alias records nothing).
    let primal = || -> Result<Tensor> {
        if reaches_non_dual_leaf(t, &dual_tensors) {
            t.view_as(t)
        } else {
            Ok(t.detach())
        }
    };
    if let Some(d) = duals.iter().find(|d| d.0.is_same(t)) {
        return Ok((primal()?, Some(d.1.clone())));
    }
    let primal = primal()?;
    let _g = EnableGradGuard::new();
    let u = t.zeros_like()?.requires_grad_(true)?;
    let gs = grad(std::slice::from_ref(t), &dual_tensors, Some(std::slice::from_ref(&u)), true, true, true)?;
    if gs.iter().all(Option::is_none) {
        return Ok((t.clone(), None));
    }
    // g = Jᵀ u is linear in u; its vjp with the tangents is J · tangents.
    let (gs, vs): (Vec<Tensor>, Vec<Tensor>) = gs
        .into_iter()
        .zip(duals.iter().map(|d| d.1.clone()))
        .filter_map(|(g, v)| g.filter(Tensor::requires_grad).map(|g| (g, v)))
        .unzip();
    let jv = if gs.is_empty() {
        None
    } else {
        grad(&gs, std::slice::from_ref(&u), Some(&vs), false, false, true)?.swap_remove(0)
    };
    let tangent = match jv {
        Some(jv) => jv.detach(),
        None => t.detach().zeros_like()?,
    };
    Ok((primal, Some(tangent)))
}

/// Whether the backward history of `t` reaches a leaf that requires grad and is none of `duals`
/// (a dual made from a primal that requires grad is a view of it: the walk goes on to its
/// leaves).
fn reaches_non_dual_leaf(t: &Tensor, duals: &[Tensor]) -> bool {
    let is_dual = |x: &Tensor| duals.iter().any(|d| d.is_same(x));
    let Some(root) = t.grad_fn() else { return t.requires_grad() && !is_dual(t) };
    let mut seen = HashSet::new();
    let mut stack = vec![root];
    while let Some(f) = stack.pop() {
        if !seen.insert(f.sequence_nr()) {
            continue;
        }
        if let Some(leaf) = f.variable() {
            if !is_dual(&leaf) {
                return true;
            }
            continue;
        }
        stack.extend(f.next_functions().into_iter().flatten().map(|(g, _)| g));
    }
    false
}
