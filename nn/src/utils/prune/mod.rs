//! torch's `nn.utils.prune`: masks that zero entries (or whole channels) of a module's parameter.
//!
//! torch prunes a tensor `name` of a module by replacing the parameter `name` with a parameter
//! `name_orig` (the same tensor) and a buffer `name_mask`, and recomputing the attribute `name` as
//! `name_orig * name_mask` before each forward (a forward pre-hook). A module here is a plain struct,
//! so the module to prune is wrapped once in a [`Pruned`] (as [`Parametrized`] wraps one for
//! `parametrize`): the wrapper lists the module's members under their own names, with each pruned
//! parameter `name` replaced by `name_orig` and `name_mask` in torch's places, so state dicts are
//! key-compatible with torch's (`bias`, `weight_orig`, `weight_mask`; a torch state dict of a
//! pruned model loads into a [`Pruned`] pruned the same way), and each call computes
//! `name_mask * name_orig` (differentiably, so gradients reach `name_orig`, masked) and puts it into
//! the module before running it. A [`Pruned`] that nothing has pruned yet is transparent: the same
//! members, keys and forward as its module.
//!
//! The pruning functions ([`identity`], [`random_unstructured`], [`l1_unstructured`],
//! [`random_structured`], [`ln_structured`], [`custom_from_mask`], [`global_unstructured`],
//! [`remove`]) take any [`PruneTarget`] (a [`Pruned`]), and compute torch's masks the way torch
//! does: pruning a tensor again computes the new mask on its entries (or channels) that are still
//! unpruned and combines it with the old one (torch's `PruningContainer`); an amount is a count
//! ([`Amount::Count`], torch's `int`) or a fraction ([`Amount::Fraction`], torch's `float`,
//! rounded as Python's `round`, half to even), with torch's checks and messages.
//!
//! Which entries are pruned is picked as torch does, with `topk` on the importance (`|w|`, or the
//! channels' norms), whose CPU kernel here follows torch's, equal values included (torch's own
//! choice among equal importances is an implementation detail; ours matches its CPU one). The
//! random methods draw from this library's generator, so their masks differ from torch's for a
//! given seed; how many entries or channels they prune is the same.
//!
//! To prune a layer inside a larger model, make that field a `Pruned<Layer>` (its state-dict keys
//! become `fc1.weight_orig`, `fc1.weight_mask`, as torch's).
//!
//! Differences from torch:
//! - pruning a tensor again ranks `name_mask * name_orig` as it is then, where torch ranks
//!   `getattr(module, name)`, the value its pre-hook computed at the last forward (or pruning):
//!   they differ when `name_orig` was changed in place (an optimizer step) with no forward since;
//! - [`remove`] copies the pruned values into `name_orig`'s storage (torch gives the parameter a
//!   new one), so a state dict taken before sees them too (see [`PruneTarget::remove_pruning`]);
//! - a lazy module ([`LazyLinear`], ...) can be wrapped before its first forward, but not pruned
//!   before it (torch's error); the first call materializes it (see [`Pruned`]);
//! - sharing one [`Pruned`] between rayon workers that call it at the same time can report a
//!   re-entrant call: give each worker its own wrapper (see [`Pruned`]).
//!
//! [`Parametrized`]: crate::utils::parametrize::Parametrized
//! [`LazyLinear`]: crate::LazyLinear

mod amount;
mod mask;
mod method;
mod pruned;

use oxtorch_autograd::no_grad;
use oxtorch_tensor::linalg::NormOrd;
use oxtorch_tensor::{Error, Result, Tensor};

use crate::module::{Member, Module, ModuleExt};

pub use amount::Amount;
pub use method::{PruningMethod, PruningType};
pub use pruned::{PruneTarget, Pruned};

/// `prune.identity(module, name)`: prunes nothing, but sets up `name_orig` and a mask of ones.
pub fn identity<P: PruneTarget + ?Sized>(module: &mut P, name: &str) -> Result<()> {
    module.apply_pruning(name, PruningMethod::Identity, None)
}

/// `prune.random_unstructured(module, name, amount)`: prunes `amount` of the unpruned entries
/// of `name`, at random (this library's generator).
pub fn random_unstructured<P: PruneTarget + ?Sized>(
    module: &mut P,
    name: &str,
    amount: impl Into<Amount>,
) -> Result<()> {
    module.apply_pruning(name, PruningMethod::random_unstructured(amount), None)
}

/// `prune.l1_unstructured(module, name, amount, importance_scores)`: prunes the `amount`
/// unpruned entries of `name` of smallest absolute value (of `importance_scores` when given).
pub fn l1_unstructured<P: PruneTarget + ?Sized>(
    module: &mut P,
    name: &str,
    amount: impl Into<Amount>,
    importance_scores: Option<&Tensor>,
) -> Result<()> {
    module.apply_pruning(name, PruningMethod::l1_unstructured(amount), importance_scores)
}

/// `prune.random_structured(module, name, amount, dim)`: prunes `amount` of the unpruned
/// channels of `name` along `dim`, at random (this library's generator).
pub fn random_structured<P: PruneTarget + ?Sized>(
    module: &mut P,
    name: &str,
    amount: impl Into<Amount>,
    dim: isize,
) -> Result<()> {
    module.apply_pruning(name, PruningMethod::random_structured(amount, dim), None)
}

/// `prune.ln_structured(module, name, amount, n, dim, importance_scores)`: prunes the `amount`
/// unpruned channels of `name` along `dim` of smallest `n`-norm (a number, `"fro"` or `"nuc"`),
/// of `importance_scores` when given.
pub fn ln_structured<P: PruneTarget + ?Sized>(
    module: &mut P,
    name: &str,
    amount: impl Into<Amount>,
    n: impl Into<NormOrd>,
    dim: isize,
    importance_scores: Option<&Tensor>,
) -> Result<()> {
    module.apply_pruning(name, PruningMethod::ln_structured(amount, n, dim), importance_scores)
}

/// `prune.custom_from_mask(module, name, mask)`: prunes `name` where `mask` is 0 (on top of an
/// earlier mask).
pub fn custom_from_mask<P: PruneTarget + ?Sized>(module: &mut P, name: &str, mask: &Tensor) -> Result<()> {
    module.apply_pruning(name, PruningMethod::CustomFromMask { mask: mask.clone() }, None)
}

/// `prune.global_unstructured(parameters, pruning_method, importance_scores, **kwargs)`: prunes
/// the tensors `parameters` as one vector with `method` (an unstructured one, its amount counting
/// the entries of all of them), then gives each its part of the mask as a
/// [`PruningMethod::CustomFromMask`].
///
/// torch's `(module, name)` pairs are `(index into modules, name)` pairs here (a module can then
/// give several tensors, as in torch: `&[(0, "weight"), (1, "weight"), (1, "bias")]`), in torch's
/// order. `importance_scores` (torch's dict keyed by `(module, name)`) has one entry per pair, in
/// order; `None` entries use the tensor's values.
pub fn global_unstructured(
    modules: &mut [&mut dyn PruneTarget],
    parameters: &[(usize, &str)],
    method: PruningMethod,
    importance_scores: Option<&[Option<Tensor>]>,
) -> Result<()> {
    if let Some(&(i, _)) = parameters.iter().find(|(i, _)| *i >= modules.len()) {
        return Err(Error::msg(format!(
            "global_unstructured(): parameter of module {i}, but {} modules were given",
            modules.len()
        )));
    }
    if let Some(s) = importance_scores {
        if s.len() != parameters.len() {
            return Err(Error::msg(format!(
                "global_unstructured(): importance_scores must have one entry per parameter, got {} for {}",
                s.len(),
                parameters.len()
            )));
        }
    }
    let (scores, masks) = no_grad(|| -> Result<(Vec<Tensor>, Vec<Tensor>)> {
        let mut scores = Vec::with_capacity(parameters.len());
        let mut masks = Vec::with_capacity(parameters.len());
        for (k, &(i, name)) in parameters.iter().enumerate() {
            let m = &*modules[i];
            let value = m.pruned_tensor(name)?.detach();
            let score = importance_scores.and_then(|s| s[k].clone()).unwrap_or_else(|| value.clone());
            scores.push(score.detach().reshape([-1])?);
            let mask = match m.pruning_mask(name) {
                Some(mask) => mask.detach(),
                None => value.ones_like()?,
            };
            masks.push(mask.reshape([-1])?);
        }
        Ok((scores, masks))
    })?;
    method.validate()?;
    if method.pruning_type() != PruningType::Unstructured {
        return Err(Error::msg(format!(
            "Only \"unstructured\" PRUNING_TYPE supported for the `pruning_method`. Found method <class 'torch.nn.utils.prune.{}'> of type {}",
            method.class_name(),
            method.pruning_type().as_str()
        )));
    }
    let scores = Tensor::cat(&scores.iter().collect::<Vec<_>>(), 0)?;
    let default_mask = Tensor::cat(&masks.iter().collect::<Vec<_>>(), 0)?;
    let final_mask = no_grad(|| method.combine_mask(&scores, &default_mask))?;
    let mut pointer = 0usize;
    for &(i, name) in parameters {
        let m = &mut *modules[i];
        let dims = m.pruned_tensor(name)?.dims().to_vec();
        let n: usize = dims.iter().product();
        let mask = final_mask.narrow(0, pointer as isize, n)?.reshape(dims)?;
        m.apply_pruning(name, PruningMethod::CustomFromMask { mask }, None)?;
        pointer += n;
    }
    Ok(())
}

/// `prune.remove(module, name)`: makes the pruning of `name` permanent
/// ([`PruneTarget::remove_pruning`]): the parameter `name` is `name_orig`'s tensor, holding
/// the pruned values.
///
/// torch's `orig.data = weight.data` gives the parameter a new storage; here the values are
/// copied into its own, so anything sharing that storage (the `name_orig` entry of an earlier
/// `state_dict()`, whose entries share the parameters' storage) sees the pruned values as well.
/// Copy such entries ([`Tensor::copy`]) to keep the unpruned values.
pub fn remove<P: PruneTarget + ?Sized>(module: &mut P, name: &str) -> Result<()> {
    module.remove_pruning(name)
}

/// `prune.is_pruned(module)`: whether a module of the tree has a pruned tensor (a parameter
/// `<name>_orig` with a buffer `<name>_mask`, which is what pruning leaves and what a torch state
/// dict of a pruned module holds).
pub fn is_pruned(module: &dyn Module) -> bool {
    module.named_modules().into_iter().any(|(_, m)| has_pruned_tensor(m))
}

fn has_pruned_tensor(m: &dyn Module) -> bool {
    let mut params = Vec::new();
    let mut buffers = Vec::new();
    m.visit(&mut |name, member| match member {
        Member::Param(_) => params.push(name.to_string()),
        Member::Buffer(_) | Member::NonPersistentBuffer(_) => buffers.push(name.to_string()),
        Member::Child(_) => {}
    });
    params
        .iter()
        .filter_map(|p| p.strip_suffix("_orig"))
        .any(|base| buffers.iter().any(|b| b.strip_suffix("_mask") == Some(base)))
}
