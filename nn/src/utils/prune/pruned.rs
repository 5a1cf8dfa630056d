//! The pruned module, [`Pruned`], and what the pruning functions ask of one ([`PruneTarget`]).

use std::sync::{Mutex, OnceLock, PoisonError};

use oxtorch_autograd::no_grad;
use oxtorch_tensor::{Error, Result, Tensor};

use crate::module::{torch_size, Forward, Member, MemberMut, Module, ModuleExt};
use crate::utils::call_guard::{set_member, ActiveCall};
use crate::utils::mirror::{Mirror, Slot};

use super::method::PruningMethod;

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
    ///
    /// Unlike torch, whose `orig.data = weight.data` gives the parameter a new storage, the values
    /// are copied into `name_orig`'s own storage (a tensor cannot be given another storage here):
    /// the parameter stays the same tensor (an optimizer holding it keeps training it), but a
    /// tensor sharing its storage sees the pruned values too, such as the `name_orig` entry of a
    /// state dict taken before (state-dict entries share the parameters' storage; take
    /// [`Tensor::copy`]s of the entries to keep the unpruned values).
    fn remove_pruning(&mut self, name: &str) -> Result<()>;
}

/// One pruned tensor (torch's forward pre-hook): its name and the methods applied, in order
/// (torch's `PruningContainer`).
struct Hook {
    name: String,
    methods: Vec<PruningMethod>,
}

/// A module whose parameters can be pruned (torch's module after `prune.*`): see the
/// [module docs](super).
///
/// Its members are the module's, each pruned parameter `name` replaced by the parameter
/// `name_orig` and the buffer `name_mask` (in torch's order: `name_orig` after the other
/// parameters, `name_mask` after the other buffers); its type name is the module's. [`Forward`]
/// runs the module's forward with every pruned tensor computed as `name_mask * name_orig`;
/// [`Pruned::call`] runs any other method so.
///
/// **Lazy modules** (`LazyLinear`, ...) can be wrapped before their first forward: the first call
/// materializes the module and the wrapper then lists the materialized members (and the
/// module's new type name, `Linear`), as torch's module after its first forward. Pruning is
/// refused until then (torch's error for an uninitialized parameter), and so is loading a state
/// dict into the wrapper of a module not yet materialized: run the module once with a dummy
/// batch (or load into the lazy module) before wrapping it.
///
/// **Threads**: calls are serialised by the lock, and a call made on the same wrapper from
/// inside a call on the same thread is an error (see [`Pruned::call`]). A thread pool does not
/// keep to that: sharing one wrapper between rayon workers that call it at the same time can
/// report a re-entrant call, because a worker that holds the lock and waits inside a nested
/// parallel kernel may be given another outer item, which calls the wrapper again on that
/// thread. Give each worker its own wrapper, or make the calls outside the pool.
pub struct Pruned<M> {
    module: Mutex<M>,
    members: Mirror,
    /// The module's members captured again by a call that changed their shapes (a lazy module's
    /// first forward materializes it); listed from then on, and moved into `members` by the next
    /// method that takes the wrapper mutably (`Pruned::sync`).
    recaptured: OnceLock<Mirror>,
    hooks: Vec<Hook>,
}

impl<M: Module> Pruned<M> {
    /// Wraps `module`, pruning nothing yet.
    pub fn new(module: M) -> Self {
        let members = Mirror::capture(&module, None);
        Pruned { module: Mutex::new(module), members, recaptured: OnceLock::new(), hooks: Vec::new() }
    }

    /// The members as they are now (the recaptured ones once a call has materialized a lazy
    /// module).
    fn mirror(&self) -> &Mirror {
        self.recaptured.get().unwrap_or(&self.members)
    }

    /// Moves members recaptured by a call into `members`, so that they are changed in one place.
    fn sync(&mut self) {
        if let Some(m) = self.recaptured.take() {
            self.members = m;
        }
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
    /// made from inside `f` on the same wrapper and thread is an error, not a deadlock (sharing
    /// one wrapper between rayon workers can hit it: see the [`Pruned`] docs).
    ///
    /// A call that materializes a lazy module (its first forward) recaptures its members, which
    /// the wrapper lists from then on.
    pub fn call<R>(&self, f: impl FnOnce(&M) -> Result<R>) -> Result<R> {
        if ActiveCall::is_active(self) {
            return Err(Error::msg(format!(
                "{}: re-entrant call: the module is already running a call on this thread (its pruned tensors are computed for that call and cannot be replaced until it returns)",
                self.mirror().type_name()
            )));
        }
        let values = self
            .hooks
            .iter()
            .map(|h| Ok((h.name.as_str(), self.pruned_tensor(&h.name)?)))
            .collect::<Result<Vec<_>>>()?;
        let mut m = self.module.lock().unwrap_or_else(PoisonError::into_inner);
        let _active = ActiveCall::enter(self);
        let mirror = self.mirror();
        mirror.install(&mut *m);
        for (name, value) in &values {
            set_member(&mut *m, name, value);
        }
        let out = f(&*m);
        // The module keeps the values, not the graphs that made them.
        for (name, value) in &values {
            set_member(&mut *m, name, &value.detach());
        }
        // A lazy module materialized by this call holds new tensors of other shapes: list them
        // (and put them back on the next call) instead of the placeholders. Pruning is refused
        // before materialization, so there is nothing pruned to carry over.
        if self.hooks.is_empty() && self.recaptured.get().is_none() && !mirror.shapes_match(&*m) {
            // (another thread cannot have set it: the lock is held)
            let _ = self.recaptured.set(Mirror::capture(&*m, None));
        }
        out
    }

    /// The module back, with every pruning made permanent first ([`remove`](super::remove) of
    /// each pruned tensor).
    pub fn into_inner(mut self) -> Result<M> {
        self.sync();
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
        let type_name = self.mirror().type_name();
        match self.mirror().slot(name) {
            // a lazy module's placeholder (torch's `UninitializedParameter`)
            Some(Slot::Param(t)) if t.dims() == [0] && type_name.starts_with("Lazy") => {
                Err(Error::msg(format!(
                    "Attempted to use an uninitialized parameter in prune ('{name}' of {type_name}). This error happens when you are using a `LazyModule` or explicitly manipulating `torch.nn.parameter.UninitializedParameter` objects. When using LazyModules Call `forward` with a dummy batch to initialize the parameters before calling torch functions"
                )))
            }
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
        self.sync();
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
            let orig = self.mirror().tensor(&format!("{name}_orig"));
            let mask = self.mirror().tensor(&format!("{name}_mask"));
            let (Some(orig), Some(mask)) = (orig, mask) else {
                return Err(Error::msg(format!(
                    "'{}' object has no attribute '{name}_orig'",
                    self.mirror().type_name()
                )));
            };
            return mask.to_dtype(orig.dtype())?.mul(orig);
        }
        match self.mirror().tensor(name) {
            Some(t) => Ok(t.clone()),
            None => {
                Err(Error::msg(format!("'{}' object has no attribute '{name}'", self.mirror().type_name())))
            }
        }
    }

    fn pruning_mask(&self, name: &str) -> Option<Tensor> {
        self.hook(name)?;
        self.mirror().tensor(&format!("{name}_mask")).cloned()
    }

    fn remove_pruning(&mut self, name: &str) -> Result<()> {
        self.sync();
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
        // torch's `orig.data = weight.data`, as a copy: the same parameter, holding the pruned
        // values in its own storage (see `PruneTarget::remove_pruning`)
        let copied = no_grad(|| orig.copy_(&value).map(|_| ()));
        self.members.take(&format!("{name}_mask"));
        self.members.push(name.to_string(), Slot::Param(orig));
        self.hooks.remove(i);
        copied
    }
}

impl<M: Module> Module for Pruned<M> {
    fn visit<'m>(&'m self, f: &mut dyn FnMut(&str, Member<'m>)) {
        self.mirror().visit(f);
    }

    fn visit_mut(&mut self, f: &mut dyn FnMut(&str, MemberMut<'_>)) {
        self.sync();
        self.members.visit_mut(f);
    }

    fn type_name(&self) -> &'static str {
        self.mirror().type_name()
    }

    /// Sets the wrapper's mode and the whole wrapped module's (its children are not visited
    /// through the wrapper: their members are).
    fn set_training(&mut self, training: bool) {
        self.sync();
        self.members.set_training(training);
        let m = self.module.get_mut().unwrap_or_else(PoisonError::into_inner);
        m.train(training);
    }

    fn training_flag(&self) -> Option<bool> {
        self.mirror().training_flag()
    }

    fn batch_norm_momentum(&mut self, f: &mut dyn FnMut(&mut Option<f64>)) -> bool {
        self.module.get_mut().unwrap_or_else(PoisonError::into_inner).batch_norm_momentum(f)
    }
}

/// The wrapped module's forward with the pruned tensors computed for the call (torch's forward
/// pre-hook).
impl<M: Module + Forward> Forward for Pruned<M> {
    fn forward(&self, input: &Tensor) -> Result<Tensor> {
        self.call(|m| m.forward(input))
    }
}
