//! torch's `torch.autograd.forward_ad`: `dual_level`, `make_dual`, `unpack_dual`.
//!
//! There is no forward-mode engine: a dual tensor is a tensor that requires grad, registered with
//! its tangent for the current level, and [`unpack_dual`] computes the tangent of a result as the
//! Jacobian-vector product with the registered tangents, by the double-backward trick (as
//! [`crate::func::jvp`]). Ops on dual tensors must therefore run with grad mode on.

use std::cell::RefCell;

use oxtorch_tensor::{Error, Result, Tensor};

use crate::{grad, EnableGradGuard};

/// One dual tensor of the current level.
struct Dual {
    /// the dual tensor (the differentiation point)
    dual: Tensor,
    tangent: Tensor,
    /// whether its primal required grad (then the dual keeps the primal's backward history)
    primal_requires_grad: bool,
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
    let primal_requires_grad = primal.requires_grad();
    let dual =
        if primal_requires_grad { primal.view_as(primal)? } else { primal.detach().requires_grad_(true)? };
    LEVEL.with(|l| {
        if let Some(duals) = l.borrow_mut().as_mut() {
            duals.push(Dual { dual: dual.clone(), tangent: tangent.clone(), primal_requires_grad });
        }
    });
    Ok(dual)
}

/// The primal and the tangent of `t` (torch's `torch.autograd.forward_ad.unpack_dual`): the
/// tangent is `None` outside a level and for a tensor that depends on no dual tensor.
pub fn unpack_dual(t: &Tensor) -> Result<(Tensor, Option<Tensor>)> {
    // (the registry is cloned out: computing the tangent runs user-visible backward passes)
    let duals: Vec<(Tensor, Tensor, bool)> = LEVEL.with(|l| {
        l.borrow()
            .as_ref()
            .map(|ds| {
                ds.iter().map(|d| (d.dual.clone(), d.tangent.clone(), d.primal_requires_grad)).collect()
            })
            .unwrap_or_default()
    });
    // Without a real backward history the primal is a plain value (the dual's grad is ours).
    let primal = if duals.iter().any(|d| d.2) { t.view_as(t)? } else { t.detach() };
    if duals.is_empty() || !t.requires_grad() {
        return Ok((primal, None));
    }
    if let Some(d) = duals.iter().find(|d| d.0.is_same(t)) {
        return Ok((primal, Some(d.1.clone())));
    }
    let _g = EnableGradGuard::new();
    let xs: Vec<Tensor> = duals.iter().map(|d| d.0.clone()).collect();
    let u = t.zeros_like()?.requires_grad_(true)?;
    let gs = grad(std::slice::from_ref(t), &xs, Some(std::slice::from_ref(&u)), true, true, true)?;
    if gs.iter().all(Option::is_none) {
        return Ok((primal, None));
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
