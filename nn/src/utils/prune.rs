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
//! [`Parametrized`]: crate::utils::parametrize::Parametrized

use std::cell::RefCell;
use std::fmt;
use std::sync::{Mutex, PoisonError};

use oxtorch_autograd::no_grad;
use oxtorch_tensor::linalg::{matrix_norm, vector_norm, NormOrd};
use oxtorch_tensor::{DType, Error, Result, Tensor};

use crate::module::{torch_size, Forward, Member, MemberMut, Module, ModuleExt};

use super::mirror::{Mirror, Slot};

// --- amounts ------------------------------------------------------------------------------------

/// How much to prune (torch's `amount`): a number of entries or channels (an `int` in torch), or a
/// fraction of them (a `float`), rounded half to even as Python's `round(amount * n)`.
///
/// Integer arguments convert to a count and floating-point ones to a fraction, as torch tells an
/// `int` from a `float`: `1` prunes one entry, `1.0` all of them.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Amount {
    /// An absolute number (must not be negative).
    Count(i64),
    /// A fraction in `[0, 1]`.
    Fraction(f64),
}

impl From<i32> for Amount {
    fn from(n: i32) -> Self {
        Amount::Count(n.into())
    }
}

impl From<i64> for Amount {
    fn from(n: i64) -> Self {
        Amount::Count(n)
    }
}

impl From<usize> for Amount {
    fn from(n: usize) -> Self {
        Amount::Count(i64::try_from(n).unwrap_or(i64::MAX))
    }
}

impl From<f64> for Amount {
    fn from(f: f64) -> Self {
        Amount::Fraction(f)
    }
}

impl fmt::Display for Amount {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Amount::Count(n) => write!(f, "{n}"),
            Amount::Fraction(x) => f.write_str(&python_float(x)),
        }
    }
}

/// Python's `repr` of a float (`1.5`, `-0.1`, `2.0`, `1e-05`, `inf`, `nan`).
fn python_float(x: f64) -> String {
    if x.is_nan() {
        return "nan".into();
    }
    if x.is_infinite() {
        return if x > 0.0 { "inf" } else { "-inf" }.into();
    }
    // Rust's Debug is the shortest round-trip string, in exponent form outside [1e-4, 1e16) as
    // Python's repr; only the exponent is spelled differently (`1e-5` for `1e-05`).
    let s = format!("{x:?}");
    match s.split_once('e') {
        Some((mantissa, exp)) => {
            let (sign, digits) = match exp.strip_prefix('-') {
                Some(d) => ('-', d),
                None => ('+', exp),
            };
            format!("{mantissa}e{sign}{digits:0>2}")
        }
        None => s,
    }
}

impl Amount {
    /// torch's `_validate_pruning_amount_init`: a non-negative count or a fraction in `[0, 1]`.
    pub fn validate(self) -> Result<()> {
        let bad = match self {
            Amount::Count(n) => n < 0,
            // (NaN passes, as in torch, and fails when rounded)
            Amount::Fraction(x) => !x.is_nan() && !(0.0..=1.0).contains(&x),
        };
        if bad {
            return Err(Error::msg(format!(
                "amount={self} should either be a float in the range [0, 1] or a non-negative integer"
            )));
        }
        Ok(())
    }

    /// How many of `tensor_size` units to prune (torch's `_compute_nparams_toprune`, then
    /// `_validate_pruning_amount`: a count may not exceed `tensor_size`).
    pub fn to_prune(self, tensor_size: usize) -> Result<usize> {
        let n = match self {
            Amount::Count(n) => n.max(0),
            Amount::Fraction(x) if x.is_nan() => {
                return Err(Error::msg("cannot convert float NaN to integer"));
            }
            Amount::Fraction(x) => (x * tensor_size as f64).round_ties_even() as i64,
        };
        if n > i64::try_from(tensor_size).unwrap_or(i64::MAX) {
            return Err(Error::msg(format!(
                "amount={n} should be smaller than the number of parameters to prune={tensor_size}"
            )));
        }
        Ok(n as usize)
    }
}

// --- pruning methods ----------------------------------------------------------------------------

/// What a method's new mask is computed on when the tensor is already pruned (torch's
/// `PRUNING_TYPE`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PruningType {
    /// the entries still unpruned, as one vector
    Unstructured,
    /// the channels (along the method's `dim`) with an unpruned entry
    Structured,
    /// the whole tensor
    Global,
}

impl PruningType {
    /// torch's spelling (`"unstructured"`, `"structured"`, `"global"`).
    pub fn as_str(self) -> &'static str {
        match self {
            PruningType::Unstructured => "unstructured",
            PruningType::Structured => "structured",
            PruningType::Global => "global",
        }
    }
}

/// torch's pruning methods (`prune.Identity`, `prune.L1Unstructured`, ...) with their arguments.
#[derive(Clone, Debug)]
pub enum PruningMethod {
    /// Prunes nothing (a mask of ones).
    Identity,
    /// Prunes `amount` of the (unpruned) entries at random.
    RandomUnstructured {
        /// how many entries
        amount: Amount,
    },
    /// Prunes the `amount` (unpruned) entries of smallest absolute value.
    L1Unstructured {
        /// how many entries
        amount: Amount,
    },
    /// Prunes `amount` of the (unpruned) channels along `dim` at random.
    RandomStructured {
        /// how many channels
        amount: Amount,
        /// the channel dim
        dim: isize,
    },
    /// Prunes the `amount` (unpruned) channels along `dim` of smallest `n`-norm.
    LnStructured {
        /// how many channels
        amount: Amount,
        /// the norm's order (a number, `'fro'` or `'nuc'`, as `torch.norm`)
        n: NormOrd,
        /// the channel dim
        dim: isize,
    },
    /// Prunes where `mask` is 0.
    CustomFromMask {
        /// the mask (the tensor's shape)
        mask: Tensor,
    },
}

impl PruningMethod {
    /// `L1Unstructured(amount)`.
    pub fn l1_unstructured(amount: impl Into<Amount>) -> Self {
        PruningMethod::L1Unstructured { amount: amount.into() }
    }

    /// `RandomUnstructured(amount)`.
    pub fn random_unstructured(amount: impl Into<Amount>) -> Self {
        PruningMethod::RandomUnstructured { amount: amount.into() }
    }

    /// `RandomStructured(amount, dim)`.
    pub fn random_structured(amount: impl Into<Amount>, dim: isize) -> Self {
        PruningMethod::RandomStructured { amount: amount.into(), dim }
    }

    /// `LnStructured(amount, n, dim)`.
    pub fn ln_structured(amount: impl Into<Amount>, n: impl Into<NormOrd>, dim: isize) -> Self {
        PruningMethod::LnStructured { amount: amount.into(), n: n.into(), dim }
    }

    /// torch's class name (`"L1Unstructured"`, ...).
    pub fn class_name(&self) -> &'static str {
        match self {
            PruningMethod::Identity => "Identity",
            PruningMethod::RandomUnstructured { .. } => "RandomUnstructured",
            PruningMethod::L1Unstructured { .. } => "L1Unstructured",
            PruningMethod::RandomStructured { .. } => "RandomStructured",
            PruningMethod::LnStructured { .. } => "LnStructured",
            PruningMethod::CustomFromMask { .. } => "CustomFromMask",
        }
    }

    /// torch's `PRUNING_TYPE` of the method.
    pub fn pruning_type(&self) -> PruningType {
        match self {
            PruningMethod::Identity
            | PruningMethod::RandomUnstructured { .. }
            | PruningMethod::L1Unstructured { .. } => PruningType::Unstructured,
            PruningMethod::RandomStructured { .. } | PruningMethod::LnStructured { .. } => {
                PruningType::Structured
            }
            PruningMethod::CustomFromMask { .. } => PruningType::Global,
        }
    }

    /// The channel dim of a structured method.
    pub fn dim(&self) -> Option<isize> {
        match self {
            PruningMethod::RandomStructured { dim, .. } | PruningMethod::LnStructured { dim, .. } => {
                Some(*dim)
            }
            _ => None,
        }
    }

    /// The checks torch makes when it builds the method (`_validate_pruning_amount_init`).
    pub fn validate(&self) -> Result<()> {
        match self {
            PruningMethod::RandomUnstructured { amount }
            | PruningMethod::L1Unstructured { amount }
            | PruningMethod::RandomStructured { amount, .. }
            | PruningMethod::LnStructured { amount, .. } => amount.validate(),
            PruningMethod::Identity | PruningMethod::CustomFromMask { .. } => Ok(()),
        }
    }

    /// torch's `compute_mask(t, default_mask)`: the mask of `t` (the importance scores) on top of
    /// `default_mask` (ones for a tensor not pruned yet), computed on the whole of `t`.
    pub fn compute_mask(&self, t: &Tensor, default_mask: &Tensor) -> Result<Tensor> {
        match self {
            PruningMethod::Identity => Ok(default_mask.clone()),
            PruningMethod::RandomUnstructured { amount } => unstructured(t, default_mask, *amount, true),
            PruningMethod::L1Unstructured { amount } => unstructured(t, default_mask, *amount, false),
            PruningMethod::RandomStructured { amount, dim } => {
                let d = channel_dim(t, *dim)?;
                let size = t.dims()[d];
                let k = amount.to_prune(size)?;
                if k == 0 {
                    return Ok(default_mask.clone());
                }
                // torch: a uniform number per channel (float32, on the CPU); the k lowest are pruned
                let prob = Tensor::rand([size], DType::F32)?;
                let threshold = prob.kthvalue(k as i64, 0, false)?.0;
                let keep = prob.gt(&threshold)?;
                let mask = channel_mask(t, d, &keep)?;
                mask.mul(&default_mask.to_dtype(mask.dtype())?)
            }
            PruningMethod::LnStructured { amount, n, dim } => {
                let d = channel_dim(t, *dim)?;
                let size = t.dims()[d];
                let k = amount.to_prune(size)?;
                let norm = channel_norm(t, n, d)?;
                if k == 0 {
                    return Ok(default_mask.clone());
                }
                // torch keeps the `size - k` channels of largest norm
                let keep_n = size - k;
                let mut keep = Tensor::zeros(vec![size], (t.dtype(), t.device()))?;
                if keep_n > 0 {
                    let (_, idx) = norm.topk(keep_n as i64, -1, true, true)?;
                    keep = keep.index_fill(0, &idx.reshape([-1])?, 1.0)?;
                }
                let mask = channel_mask(t, d, &keep)?;
                mask.mul(&default_mask.to_dtype(mask.dtype())?)
            }
            PruningMethod::CustomFromMask { mask } => {
                if default_mask.dims() != mask.dims() {
                    return Err(Error::msg(format!(
                        "default_mask shape {} must match self.mask shape {}",
                        torch_size(default_mask.dims()),
                        torch_size(mask.dims())
                    )));
                }
                default_mask.mul(&mask.to(default_mask.device())?.to_dtype(default_mask.dtype())?)
            }
        }
    }

    /// torch's `PruningContainer.compute_mask` with this method last: the new mask is computed on
    /// the part of `t` that `mask` leaves unpruned (the entries still 1 as one vector, the channels
    /// with an unpruned entry, or all of `t`, by [`PruningMethod::pruning_type`]) and written over
    /// that part of `mask` (as `t`'s dtype).
    ///
    /// torch gives a structured method on a 1-D tensor, or with `dim` out of range, odd results
    /// here (a 1-D tensor is indexed with a 0-d boolean); this refuses them with the messages of a
    /// first pruning.
    pub fn combine_mask(&self, t: &Tensor, mask: &Tensor) -> Result<Tensor> {
        let new_mask = mask.to_dtype(t.dtype())?;
        match self.pruning_type() {
            PruningType::Unstructured => {
                let slc = mask.eq(1.0)?;
                let partial = self.compute_mask(&t.masked_select(&slc)?, &mask.masked_select(&slc)?)?;
                new_mask.masked_scatter(&slc, &partial.to_dtype(new_mask.dtype())?)
            }
            PruningType::Structured => {
                let d = channel_dim(t, self.dim().unwrap_or(-1))?;
                let others: Vec<isize> = (0..t.rank()).filter(|&i| i != d).map(|i| i as isize).collect();
                let keep = mask.sum(others, false)?.ne(0.0)?;
                let idx = keep.nonzero()?.reshape([-1])?;
                let d = d as isize;
                let partial = self.compute_mask(&t.index_select(d, &idx)?, &mask.index_select(d, &idx)?)?;
                new_mask.index_copy(d, &idx, &partial.to_dtype(new_mask.dtype())?)
            }
            PruningType::Global => self.compute_mask(t, mask)?.to_dtype(new_mask.dtype()),
        }
    }

    /// torch's `method.prune(t, default_mask, importance_scores)`: `t` times the mask computed from
    /// `importance_scores` (`t` without) on top of `default_mask` (ones without).
    pub fn prune(
        &self,
        t: &Tensor,
        default_mask: Option<&Tensor>,
        importance_scores: Option<&Tensor>,
    ) -> Result<Tensor> {
        self.validate()?;
        if let Some(s) = importance_scores {
            if s.dims() != t.dims() {
                return Err(Error::msg(format!(
                    "importance_scores should have the same shape as tensor t, got {} vs {}",
                    torch_size(s.dims()),
                    torch_size(t.dims())
                )));
            }
        }
        let scores = importance_scores.unwrap_or(t);
        let mask = match default_mask {
            Some(m) => no_grad(|| self.compute_mask(scores, m))?,
            None => no_grad(|| -> Result<Tensor> { self.compute_mask(scores, &t.ones_like()?) })?,
        };
        t.mul(&mask)
    }
}

/// `L1Unstructured` / `RandomUnstructured`'s mask: the `k` entries of smallest `|t|` (largest
/// uniform draw) set to 0 in a copy of `default_mask`.
fn unstructured(t: &Tensor, default_mask: &Tensor, amount: Amount, random: bool) -> Result<Tensor> {
    let k = amount.to_prune(t.numel())?;
    let mask = default_mask.contiguous()?;
    if k == 0 {
        return Ok(mask);
    }
    let scores = if random { t.rand_like()? } else { t.abs()? };
    let (_, idx) = scores.reshape([-1])?.topk(k as i64, 0, random, true)?;
    mask.reshape([-1])?.index_fill(0, &idx, 0.0)?.reshape(default_mask.dims())
}

/// The channel dim `dim` of `t` for a structured method, with torch's checks
/// (`_validate_structured_pruning`, `_validate_pruning_dim`, then `t.shape[dim]`).
fn channel_dim(t: &Tensor, dim: isize) -> Result<usize> {
    if t.rank() <= 1 {
        return Err(Error::msg(format!(
            "Structured pruning can only be applied to multidimensional tensors. Found tensor of shape {} with {} dims",
            torch_size(t.dims()),
            t.rank()
        )));
    }
    let rank = t.rank() as isize;
    if dim >= rank {
        return Err(Error::msg(format!("Invalid index {dim} for tensor of size {}", torch_size(t.dims()))));
    }
    if dim < -rank {
        return Err(Error::msg("tuple index out of range"));
    }
    Ok(if dim < 0 { dim + rank } else { dim } as usize)
}

/// A mask shaped like `t` that is `keep[c]` on channel `c` along dim `d` (torch's `mask[slc] = 1`).
fn channel_mask(t: &Tensor, d: usize, keep: &Tensor) -> Result<Tensor> {
    let mut shape = vec![1usize; t.rank()];
    shape[d] = t.dims()[d];
    keep.to(t.device())?.to_dtype(t.dtype())?.reshape(shape)?.expand(t.dims())?.contiguous()
}

/// torch's `_compute_norm(t, n, dim)`: the `n`-norm of each channel along `d` (over every other
/// dim); `'nuc'`, and `'fro'` over exactly two other dims, are matrix norms.
fn channel_norm(t: &Tensor, n: &NormOrd, d: usize) -> Result<Tensor> {
    let dims: Vec<isize> = (0..t.rank()).filter(|&i| i != d).map(|i| i as isize).collect();
    let is_matrix = dims.len() == 2;
    match n {
        NormOrd::Nuc => {
            matrix_norm(t, NormOrd::Nuc, if is_matrix { dims } else { vec![-2, -1] }, false, None)
        }
        NormOrd::Fro if is_matrix => matrix_norm(t, NormOrd::Fro, dims, false, None),
        NormOrd::Fro => vector_norm(t, 2.0, dims, false, None),
        NormOrd::P(p) => vector_norm(t, *p, dims, false, None),
        NormOrd::Other(s) => Err(Error::msg(format!("linalg.vector_norm: ord must be a number, got '{s}'"))),
    }
}

// --- the pruned module --------------------------------------------------------------------------

/// A module whose parameters can be pruned (what the pruning functions take): a [`Pruned`].
pub trait PruneTarget: Module {
    /// Prunes the tensor `name` with `method` (torch's `BasePruningMethod.apply`): on its first
    /// pruning the parameter `name` becomes `name_orig` and the buffer `name_mask` holds the mask;
    /// later ones combine the new mask with the old one. `importance_scores` (the tensor's shape)
    /// replace the tensor's values when the mask is computed.
    fn apply_pruning(
        &mut self,
        name: &str,
        method: PruningMethod,
        importance_scores: Option<&Tensor>,
    ) -> Result<()>;

    /// The tensor `name` as the module sees it (torch's `getattr(module, name)`): `name_mask *
    /// name_orig` for a pruned tensor (differentiable), the member itself otherwise.
    fn pruned_tensor(&self, name: &str) -> Result<Tensor>;

    /// The mask of the pruned tensor `name` (torch's `name_mask` buffer), if it is pruned.
    fn pruning_mask(&self, name: &str) -> Option<Tensor>;

    /// Makes the pruning of `name` permanent (torch's `prune.remove`): the parameter `name` holds
    /// `name_mask * name_orig` (`name_orig` itself, updated in place) and `name_orig` and
    /// `name_mask` are gone.
    fn remove_pruning(&mut self, name: &str) -> Result<()>;
}

/// Sets `m`'s direct tensor member `name` to `value`.
fn set_member(m: &mut dyn Module, name: &str, value: &Tensor) {
    m.visit_mut(&mut |n, member| {
        if let (true, MemberMut::Param(t) | MemberMut::Buffer(t) | MemberMut::NonPersistentBuffer(t)) =
            (n == name, member)
        {
            *t = value.clone();
        }
    });
}

thread_local! {
    /// The [`Pruned`] wrappers (by address) whose [`Pruned::call`] is running on this thread: a
    /// second call on one of them would wait for its own lock.
    static ACTIVE_CALLS: RefCell<Vec<usize>> = const { RefCell::new(Vec::new()) };
}

/// Marks a wrapper's call as running on this thread until dropped (also when `f` panics).
struct ActiveCall(usize);

impl ActiveCall {
    fn enter(at: usize) -> ActiveCall {
        ACTIVE_CALLS.with(|active| active.borrow_mut().push(at));
        ActiveCall(at)
    }
}

impl Drop for ActiveCall {
    fn drop(&mut self) {
        ACTIVE_CALLS.with(|active| {
            let mut active = active.borrow_mut();
            if let Some(i) = active.iter().rposition(|&a| a == self.0) {
                active.remove(i);
            }
        });
    }
}

/// One pruned tensor (torch's forward pre-hook): its name and the methods applied, in order
/// (torch's `PruningContainer`).
struct Hook {
    name: String,
    methods: Vec<PruningMethod>,
}

/// A module whose parameters can be pruned (torch's module after `prune.*`): see the
/// [module docs](self).
///
/// Its members are the module's, each pruned parameter `name` replaced by the parameter
/// `name_orig` and the buffer `name_mask` (in torch's order: `name_orig` after the other
/// parameters, `name_mask` after the other buffers); its type name is the module's. [`Forward`]
/// runs the module's forward with every pruned tensor computed as `name_mask * name_orig`;
/// [`Pruned::call`] runs any other method so.
pub struct Pruned<M> {
    module: Mutex<M>,
    members: Mirror,
    hooks: Vec<Hook>,
}

impl<M: Module> Pruned<M> {
    /// Wraps `module`, pruning nothing yet.
    pub fn new(module: M) -> Self {
        let members = Mirror::capture(&module, None);
        Pruned { module: Mutex::new(module), members, hooks: Vec::new() }
    }

    /// Whether a tensor of this module is pruned (torch's `prune.is_pruned` of this module alone).
    pub fn is_pruned(&self) -> bool {
        !self.hooks.is_empty()
    }

    /// The names of the pruned tensors, in the order they were first pruned.
    pub fn pruned_names(&self) -> Vec<&str> {
        self.hooks.iter().map(|h| h.name.as_str()).collect()
    }

    /// The methods that pruned `name`, in order (torch's hook, a `PruningContainer` after the
    /// second), if it is pruned.
    pub fn pruning_methods(&self, name: &str) -> Option<&[PruningMethod]> {
        self.hooks.iter().find(|h| h.name == name).map(|h| h.methods.as_slice())
    }

    /// The tensor `name` as the module sees it now ([`PruneTarget::pruned_tensor`]).
    pub fn tensor(&self, name: &str) -> Result<Tensor> {
        self.pruned_tensor(name)
    }

    /// Runs `f` on the module with its members in place and every pruned tensor computed
    /// (differentiably) for this call: any method of the module, such as a forward with several
    /// inputs. Calls are serialised (the module sits behind a lock, held while `f` runs); a call
    /// made from inside `f` on the same wrapper and thread is an error, not a deadlock.
    pub fn call<R>(&self, f: impl FnOnce(&M) -> Result<R>) -> Result<R> {
        let me = self as *const Self as usize;
        if ACTIVE_CALLS.with(|active| active.borrow().contains(&me)) {
            return Err(Error::msg(format!(
                "{}: re-entrant call: the module is already running a call on this thread (its pruned tensors are computed for that call and cannot be replaced until it returns)",
                self.members.type_name()
            )));
        }
        let values = self
            .hooks
            .iter()
            .map(|h| Ok((h.name.as_str(), self.pruned_tensor(&h.name)?)))
            .collect::<Result<Vec<_>>>()?;
        let mut m = self.module.lock().unwrap_or_else(PoisonError::into_inner);
        let _active = ActiveCall::enter(me);
        self.members.install(&mut *m);
        for (name, value) in &values {
            set_member(&mut *m, name, value);
        }
        let out = f(&*m);
        // The module keeps the values, not the graphs that made them.
        for (name, value) in &values {
            set_member(&mut *m, name, &value.detach());
        }
        out
    }

    /// The module back, with every pruning made permanent first ([`remove`] of each pruned
    /// tensor).
    pub fn into_inner(mut self) -> Result<M> {
        while let Some(name) = self.hooks.first().map(|h| h.name.clone()) {
            self.remove_pruning(&name)?;
        }
        let Pruned { module, members, .. } = self;
        let mut m = module.into_inner().unwrap_or_else(PoisonError::into_inner);
        members.install(&mut m);
        Ok(m)
    }

    fn hook(&self, name: &str) -> Option<usize> {
        self.hooks.iter().position(|h| h.name == name)
    }

    /// The parameter `name` of a tensor not pruned yet, with torch's errors for anything else.
    fn unpruned_param(&self, name: &str) -> Result<Tensor> {
        let type_name = self.members.type_name();
        match self.members.slot(name) {
            Some(Slot::Param(t)) => Ok(t.clone()),
            Some(Slot::Buffer(t) | Slot::NonPersistent(t)) => Err(Error::msg(format!(
                "cannot assign 'torch.{}Tensor' object to parameter '{name}_orig' (torch.nn.Parameter or None required)",
                t.dtype().scalar_type_name()
            ))),
            Some(Slot::Child(c)) => Err(Error::msg(format!(
                "cannot assign '{}' object to parameter '{name}_orig' (torch.nn.Parameter or None required)",
                c.type_name()
            ))),
            None => Err(Error::msg(format!("'{type_name}' object has no attribute '{name}'"))),
        }
    }
}

impl<M: Module> PruneTarget for Pruned<M> {
    fn apply_pruning(
        &mut self,
        name: &str,
        method: PruningMethod,
        importance_scores: Option<&Tensor>,
    ) -> Result<()> {
        method.validate()?;
        let hook = self.hook(name);
        let orig = match hook {
            Some(_) => no_grad(|| self.pruned_tensor(name))?,
            None => self.unpruned_param(name)?,
        };
        if let Some(s) = importance_scores {
            if s.dims() != orig.dims() {
                return Err(Error::msg(format!(
                    "importance_scores should have the same shape as parameter {name} of {}, got {} vs {}",
                    self.members.type_name(),
                    torch_size(s.dims()),
                    torch_size(orig.dims())
                )));
            }
        }
        let scores = importance_scores.unwrap_or(&orig).detach();
        let mask_name = format!("{name}_mask");
        let mask = no_grad(|| -> Result<Tensor> {
            match hook {
                Some(_) => {
                    let old = self.members.tensor(&mask_name).expect("a pruned tensor has its mask").detach();
                    method.combine_mask(&scores, &old)
                }
                None => method.compute_mask(&scores, &orig.ones_like()?),
            }
        });
        let mask = match mask {
            Ok(mask) => mask.detach(),
            Err(e) => {
                if hook.is_none() {
                    // as torch, which had moved the parameter and registers it again: it goes last
                    if let Some(slot) = self.members.take(name) {
                        self.members.push(name.to_string(), slot);
                    }
                }
                return Err(e);
            }
        };
        match hook {
            Some(i) => {
                if let Some(at) = self.members.position(&mask_name) {
                    self.members.replace(at, Slot::Buffer(mask));
                }
                self.hooks[i].methods.push(method);
            }
            None => {
                self.members.take(name);
                self.members.push(format!("{name}_orig"), Slot::Param(orig));
                self.members.push(mask_name, Slot::Buffer(mask));
                self.hooks.push(Hook { name: name.to_string(), methods: vec![method] });
            }
        }
        Ok(())
    }

    fn pruned_tensor(&self, name: &str) -> Result<Tensor> {
        if self.hook(name).is_some() {
            let orig = self.members.tensor(&format!("{name}_orig"));
            let mask = self.members.tensor(&format!("{name}_mask"));
            let (Some(orig), Some(mask)) = (orig, mask) else {
                return Err(Error::msg(format!(
                    "'{}' object has no attribute '{name}_orig'",
                    self.members.type_name()
                )));
            };
            return mask.to_dtype(orig.dtype())?.mul(orig);
        }
        match self.members.tensor(name) {
            Some(t) => Ok(t.clone()),
            None => {
                Err(Error::msg(format!("'{}' object has no attribute '{name}'", self.members.type_name())))
            }
        }
    }

    fn pruning_mask(&self, name: &str) -> Option<Tensor> {
        self.hook(name)?;
        self.members.tensor(&format!("{name}_mask")).cloned()
    }

    fn remove_pruning(&mut self, name: &str) -> Result<()> {
        let Some(i) = self.hook(name) else {
            return Err(Error::msg(format!(
                "Parameter '{name}' of module {} has to be pruned before pruning can be removed",
                self.members.type_name()
            )));
        };
        let value = no_grad(|| self.pruned_tensor(name))?;
        let orig_name = format!("{name}_orig");
        let Some(Slot::Param(orig)) = self.members.take(&orig_name) else {
            return Err(Error::msg(format!(
                "'{}' object has no attribute '{orig_name}'",
                self.members.type_name()
            )));
        };
        // torch's `orig.data = weight.data`: the same parameter, holding the pruned values
        let copied = no_grad(|| orig.copy_(&value).map(|_| ()));
        self.members.take(&format!("{name}_mask"));
        self.members.push(name.to_string(), Slot::Param(orig));
        self.hooks.remove(i);
        copied
    }
}

impl<M: Module> Module for Pruned<M> {
    fn visit<'m>(&'m self, f: &mut dyn FnMut(&str, Member<'m>)) {
        self.members.visit(f);
    }

    fn visit_mut(&mut self, f: &mut dyn FnMut(&str, MemberMut<'_>)) {
        self.members.visit_mut(f);
    }

    fn type_name(&self) -> &'static str {
        self.members.type_name()
    }

    /// Sets the wrapper's mode and the whole wrapped module's (its children are not visited
    /// through the wrapper: their members are).
    fn set_training(&mut self, training: bool) {
        self.members.set_training(training);
        let m = self.module.get_mut().unwrap_or_else(PoisonError::into_inner);
        m.train(training);
    }

    fn training_flag(&self) -> Option<bool> {
        self.members.training_flag()
    }
}

/// The wrapped module's forward with the pruned tensors computed for the call (torch's forward
/// pre-hook).
impl<M: Module + Forward> Forward for Pruned<M> {
    fn forward(&self, input: &Tensor) -> Result<Tensor> {
        self.call(|m| m.forward(input))
    }
}

// --- torch's functions --------------------------------------------------------------------------

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
/// ([`PruneTarget::remove_pruning`]).
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn python_float_spelling() {
        assert_eq!(python_float(1.5), "1.5");
        assert_eq!(python_float(-0.1), "-0.1");
        assert_eq!(python_float(2.0), "2.0");
        assert_eq!(python_float(-1e-5), "-1e-05");
        assert_eq!(python_float(1e20), "1e+20");
        assert_eq!(python_float(f64::INFINITY), "inf");
    }

    #[test]
    fn amounts_round_half_to_even() -> Result<()> {
        assert_eq!(Amount::from(0.125).to_prune(20)?, 2); // round(2.5) = 2
        assert_eq!(Amount::from(0.375).to_prune(20)?, 8); // round(7.5) = 8
        assert_eq!(Amount::from(1.0).to_prune(7)?, 7);
        assert_eq!(Amount::from(3).to_prune(3)?, 3);
        assert!(Amount::from(4).to_prune(3).is_err());
        Ok(())
    }
}
