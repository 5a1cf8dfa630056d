//! Lazy modules (torch's `LazyLinear`, `LazyConv1d/2d/3d`, `LazyConvTranspose1d/2d/3d`,
//! `LazyBatchNorm1d/2d/3d`, `LazyInstanceNorm1d/2d/3d`): the input size is left open until the
//! first forward, which reads it from the input and builds the concrete module (torch's
//! initialisation, from the default generator, in the placeholders' dtype and on their device).
//! From then on the lazy module *is* that module: its members, names, `type_name` (`Linear`,
//! torch's `cls_to_become`), training flag and forward. (A module materialized by a load keeps
//! the lazy `type_name` until its first forward, as torch keeps the lazy class.)
//!
//! Before that, each not yet sized parameter or buffer is a placeholder, an empty `[0]` tensor
//! (torch's `UninitializedParameter`/`UninitializedBuffer`): `named_parameters` and `state_dict`
//! list them under torch's names, and `to(dtype)`/`to(device)` or `requires_grad_` on them carry
//! over to the materialized tensors.
//!
//! **Loading before the first forward** materializes the module from the checkpoint's shapes
//! (torch's `_lazy_load_hook`): `ModuleExt::load_state_dict` on any module of a tree holding lazy
//! modules calls [`materialize_from_state_dict`] first. A placeholder entry (`[0]`, a checkpoint
//! of a module never run) leaves the module lazy, as in torch. A checkpoint that gives a lazy
//! module's entries without the one its size is read from (`LazyLinear`'s `bias` without its
//! `weight`, one shard of a split checkpoint) leaves it lazy too, and reports the ones missing
//! (torch's `missing_keys=['weight']`); the entries whose shape is known without the input
//! ([`LazySpec::known_shape`]: the convolutions' and `LazyLinear`'s `bias`) are loaded all the
//! same, as torch's hook materializes each parameter on its own: until the module materializes
//! they show in `named_parameters`/`state_dict` with their values, and the module materialized
//! later (by a load giving `weight`, or the first forward) keeps them. (torch's first forward
//! after such a partial load fails with an `AttributeError`; here it materializes from the
//! input, initializes the members still open and keeps the loaded ones.) An entry for such a
//! member with another shape is a size mismatch.
//!
//! **Optimizers**: an optimizer built over a lazy module's parameters before its first forward
//! (or a load) holds the `[0]` placeholders, not the materialized tensors (torch materializes
//! in place, so there it would train them): create optimizers after the first forward or a load.
//!
//! **`functional_call`** on a module not yet materialized, given tensors for all its open
//! members, runs a concrete module built around those tensors for that call only (torch's result)
//! and leaves the module lazy; given only some of them, it is an error.

mod conv;
mod linear;
mod loading;
mod norm;

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, OnceLock, PoisonError};

use oxtorch_tensor::{DType, Device, Error, Result, Tensor};

use crate::module::{Forward, Member, MemberMut, Module, ModuleExt};

pub use conv::{
    LazyConv1d, LazyConv2d, LazyConv3d, LazyConvSpec, LazyConvTranspose1d, LazyConvTranspose2d,
    LazyConvTranspose3d, LazyConvTransposeSpec,
};
pub use linear::{LazyLinear, LazyLinearSpec};
pub use loading::materialize_from_state_dict;
pub use norm::{
    LazyBatchNorm1d, LazyBatchNorm2d, LazyBatchNorm3d, LazyBatchNormSpec, LazyInstanceNorm1d,
    LazyInstanceNorm2d, LazyInstanceNorm3d, LazyInstanceNormSpec,
};

/// Whether a lazy member is a parameter or a buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LazyRole {
    /// a trainable tensor
    Param,
    /// a buffer saved in the state dict
    Buffer,
}

/// What a lazy module needs to know about its concrete module: its members before
/// materialization, how the open size is read from an input or a checkpoint entry, and how the
/// concrete module is built.
pub trait LazySpec: Send + Sync + 'static {
    /// The module a materialized lazy module becomes.
    type Module: Module + Forward;

    /// torch's class name of the lazy module (`LazyLinear`).
    fn name(&self) -> &'static str;

    /// The members before materialization, in torch's order: `(name, role, None)` for a
    /// placeholder, `(name, role, Some(t))` for a member that exists already (batch norm's
    /// `num_batches_tracked`).
    fn members(&self) -> Result<Vec<(&'static str, LazyRole, Option<Tensor>)>>;

    /// The open size (`in_features`, `in_channels`, `num_features`) read from an input, or
    /// torch's error for an input the module cannot take.
    fn infer(&self, input: &Tensor) -> Result<usize>;

    /// The open size read from a checkpoint entry for member `name` of shape `dims`.
    fn infer_from(&self, name: &str, dims: &[usize]) -> Option<usize>;

    /// The shape of the open member `name` when it does not depend on the open size
    /// (`LazyLinear`'s `bias`, `[out_features]`): a load can fill it before the module
    /// materializes. `None` (the default) for the members sized by the input.
    fn known_shape(&self, _name: &str) -> Option<Vec<usize>> {
        None
    }

    /// The concrete module for the open size, with parameters of `dtype`.
    fn build(&self, size: usize, dtype: DType) -> Result<Self::Module>;

    /// Whether the concrete module has its own training flag (the norms).
    fn has_training_flag(&self) -> bool {
        false
    }

    /// torch's `extra_repr` before materialization, with the open size printed as 0
    /// (`in_features=0, out_features=3, bias=True`); empty by default.
    fn extra_repr(&self) -> String {
        String::new()
    }
}

/// A member of a lazy module before materialization.
struct Slot {
    name: &'static str,
    role: LazyRole,
    tensor: Tensor,
    placeholder: bool,
    /// For an open member of known shape ([`LazySpec::known_shape`]), the tensor a load filled
    /// before materialization; it stands for the member from then on, and materialization
    /// puts it into the concrete module.
    loaded: OnceLock<Tensor>,
}

impl Slot {
    /// The tensor the member shows: the one a load filled, else its own.
    fn current(&self) -> &Tensor {
        self.loaded.get().unwrap_or(&self.tensor)
    }

    /// The tensor the member shows, mutably.
    fn current_mut(&mut self) -> &mut Tensor {
        match self.loaded.get_mut() {
            Some(t) => t,
            None => &mut self.tensor,
        }
    }

    /// Whether the member is open and no load filled it.
    fn unfilled(&self) -> bool {
        self.placeholder && self.loaded.get().is_none()
    }
}

/// A lazy module: the members of [`LazySpec`] until the first forward (or a load) materializes
/// it, then the concrete module (see the module docs).
pub struct Lazy<S: LazySpec> {
    spec: S,
    slots: Vec<Slot>,
    inner: OnceLock<S::Module>,
    /// Serializes materialization (two threads running the first forward at once build once).
    init: Mutex<()>,
    training: bool,
    /// Whether a forward has run on the materialized module (torch's class change, which a load
    /// alone does not make).
    formed: AtomicBool,
}

/// A placeholder: torch's uninitialized tensor, here an empty `[0]` tensor.
fn placeholder(role: LazyRole) -> Result<Tensor> {
    let t = Tensor::empty([0], DType::default_float())?;
    Ok(if role == LazyRole::Param { t.requires_grad_(true)? } else { t })
}

/// Whether a checkpoint entry is a placeholder (a lazy module saved before its first forward).
fn is_placeholder(t: &Tensor) -> bool {
    t.dims() == [0]
}

impl<S: LazySpec> Lazy<S> {
    /// A lazy module of `spec`, with placeholders for its open members.
    pub fn from_spec(spec: S) -> Result<Self> {
        let slots = spec
            .members()?
            .into_iter()
            .map(|(name, role, t)| {
                Ok(match t {
                    Some(tensor) => Slot { name, role, tensor, placeholder: false, loaded: OnceLock::new() },
                    None => Slot {
                        name,
                        role,
                        tensor: placeholder(role)?,
                        placeholder: true,
                        loaded: OnceLock::new(),
                    },
                })
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(Lazy {
            spec,
            slots,
            inner: OnceLock::new(),
            init: Mutex::new(()),
            training: true,
            formed: AtomicBool::new(false),
        })
    }

    /// The specification (the hyper-parameters).
    pub fn spec(&self) -> &S {
        &self.spec
    }

    /// True until the module is materialized (torch's `has_uninitialized_params`).
    pub fn has_uninitialized_params(&self) -> bool {
        self.inner.get().is_none()
    }

    /// The concrete module, once materialized.
    pub fn module(&self) -> Option<&S::Module> {
        self.inner.get()
    }

    /// The concrete module, mutably, once materialized.
    pub fn module_mut(&mut self) -> Option<&mut S::Module> {
        self.inner.get_mut()
    }

    /// The concrete module, once materialized.
    pub fn into_module(self) -> Option<S::Module> {
        self.inner.into_inner()
    }

    /// Materializes from `input`'s size unless already done (torch's `initialize_parameters`,
    /// run by the first forward); returns the concrete module.
    pub fn initialize_parameters(&self, input: &Tensor) -> Result<&S::Module> {
        if let Some(m) = self.inner.get() {
            return Ok(m);
        }
        let size = self.spec.infer(input)?;
        self.materialize(size)
    }

    /// Materializes for the open size `size` (`in_features`, `in_channels`, `num_features`)
    /// unless already done: builds the concrete module with torch's initialisation in the
    /// placeholders' dtype, moves it to their device, and carries over their `requires_grad`
    /// and the training flag. The members a load filled already (a `bias` loaded without its
    /// `weight`) keep their tensors.
    pub fn materialize(&self, size: usize) -> Result<&S::Module> {
        let _guard = self.init.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(m) = self.inner.get() {
            return Ok(m);
        }
        if let Some(s) = self.slots.iter().find(|s| s.unfilled() && !is_placeholder(&s.tensor)) {
            // Another tensor stands in the slot (`functional_call`): a module built now would
            // ignore it, and putting the placeholder back would break the module.
            return Err(Error::msg(format!(
                "{}: cannot materialize while '{}' is replaced by another tensor (functional_call)",
                self.spec.name(),
                s.name
            )));
        }
        let first = self.slots.iter().find(|s| s.placeholder && s.current().dtype().is_float());
        let dtype = first.map_or(DType::default_float(), |s| s.current().dtype());
        let device = first.map_or(Device::Cpu, |s| s.current().device());
        let mut m = self.spec.build(size, dtype)?;
        if device != Device::Cpu {
            m.to(device)?;
        }
        let frozen: Vec<&str> = self
            .slots
            .iter()
            .filter(|s| s.role == LazyRole::Param && s.unfilled() && !s.tensor.requires_grad())
            .map(|s| s.name)
            .collect();
        let mut result = Ok(());
        if !frozen.is_empty() {
            m.visit(&mut |name, member| {
                if let Member::Param(t) = member {
                    if frozen.contains(&name) {
                        if let Err(e) = t.requires_grad_(false) {
                            result = Err(e);
                        }
                    }
                }
            });
        }
        result?;
        // The members a load filled before: their tensors (values, dtype, device,
        // `requires_grad`) become the module's.
        let loaded: HashMap<&str, &Tensor> =
            self.slots.iter().filter_map(|s| Some((s.name, s.loaded.get()?))).collect();
        if !loaded.is_empty() {
            m.visit_mut(&mut |name, member| match member {
                MemberMut::Param(t) | MemberMut::Buffer(t) | MemberMut::NonPersistentBuffer(t) => {
                    if let Some(l) = loaded.get(name) {
                        *t = (*l).clone();
                    }
                }
                MemberMut::Child(_) => {}
            });
        }
        m.set_training(self.training);
        // Cannot fail: the lock is held and the cell was empty.
        let _ = self.inner.set(m);
        Ok(self.inner.get().expect("just set"))
    }
    /// For a forward while the module is not materialized but its open slots hold other tensors
    /// (`functional_call`): a concrete module around those tensors, for this call only (torch
    /// runs the given tensors); `None` when the slots hold the placeholders.
    fn swapped_module(&self, x: &Tensor) -> Result<Option<S::Module>> {
        let open: Vec<&Slot> = self.slots.iter().filter(|s| s.placeholder).collect();
        // The members a load filled count as the module's own (a `functional_call` may replace
        // them too): the call is told by the members still open.
        let unfilled: Vec<&Slot> = open.iter().copied().filter(|s| s.unfilled()).collect();
        if unfilled.iter().all(|s| is_placeholder(&s.tensor)) {
            return Ok(None);
        }
        let missing: Vec<String> =
            unfilled.iter().filter(|s| is_placeholder(&s.tensor)).map(|s| format!("'{}'", s.name)).collect();
        if !missing.is_empty() {
            return Err(Error::msg(format!(
                "{} is not materialized and functional_call gave no tensor for [{}]: give every uninitialized parameter and buffer, or run a forward (or load a state dict) first",
                self.spec.name(),
                missing.join(", ")
            )));
        }
        let size = match open.iter().find_map(|s| self.spec.infer_from(s.name, s.current().dims())) {
            Some(size) => size,
            None => self.spec.infer(x)?,
        };
        let dtype =
            open.iter().map(|s| s.current().dtype()).find(|d| d.is_float()).unwrap_or(DType::default_float());
        let mut m = self.spec.build(size, dtype)?;
        let given: HashMap<&str, &Tensor> = self.slots.iter().map(|s| (s.name, s.current())).collect();
        m.visit_mut(&mut |name, member| match member {
            MemberMut::Param(t) | MemberMut::Buffer(t) | MemberMut::NonPersistentBuffer(t) => {
                if let Some(g) = given.get(name) {
                    *t = (*g).clone();
                }
            }
            MemberMut::Child(_) => {}
        });
        m.set_training(self.training);
        Ok(Some(m))
    }

    /// The module a forward runs: the materialized one (materializing it from `x` first), or for
    /// a `functional_call` on a lazy module, a temporary one around the given tensors.
    fn forward_module(&self, x: &Tensor) -> Result<Forwarded<'_, S::Module>> {
        if self.inner.get().is_none() {
            if let Some(m) = self.swapped_module(x)? {
                return Ok(Forwarded::Temporary(m));
            }
        }
        let m = self.initialize_parameters(x)?;
        // torch's hook changes the class once the parameters are initialized, before forward.
        self.formed.store(true, Ordering::Relaxed);
        Ok(Forwarded::Own(m))
    }
}

/// The module a lazy module's forward runs (see `Lazy::forward_module`).
enum Forwarded<'a, M> {
    Own(&'a M),
    Temporary(M),
}

impl<M> std::ops::Deref for Forwarded<'_, M> {
    type Target = M;
    fn deref(&self) -> &M {
        match self {
            Forwarded::Own(m) => m,
            Forwarded::Temporary(m) => m,
        }
    }
}

impl<S: LazySpec> Forward for Lazy<S> {
    fn forward(&self, x: &Tensor) -> Result<Tensor> {
        self.forward_module(x)?.forward(x)
    }
}

impl<S: LazySpec> Module for Lazy<S> {
    fn visit<'m>(&'m self, f: &mut dyn FnMut(&str, Member<'m>)) {
        self.load_hook();
        if let Some(m) = self.inner.get() {
            return m.visit(f);
        }
        for s in &self.slots {
            match s.role {
                LazyRole::Param => f(s.name, Member::Param(s.current())),
                LazyRole::Buffer => f(s.name, Member::Buffer(s.current())),
            }
        }
    }
    fn visit_mut(&mut self, f: &mut dyn FnMut(&str, MemberMut<'_>)) {
        if let Some(m) = self.inner.get_mut() {
            return m.visit_mut(f);
        }
        for s in &mut self.slots {
            let (name, role) = (s.name, s.role);
            match role {
                LazyRole::Param => f(name, MemberMut::Param(s.current_mut())),
                LazyRole::Buffer => f(name, MemberMut::Buffer(s.current_mut())),
            }
        }
    }
    fn type_name(&self) -> &'static str {
        match self.inner.get() {
            Some(m) if self.formed.load(Ordering::Relaxed) => m.type_name(),
            _ => self.spec.name(),
        }
    }
    fn set_training(&mut self, training: bool) {
        self.training = training;
        if let Some(m) = self.inner.get_mut() {
            m.set_training(training);
        }
    }
    fn extra_repr(&self) -> String {
        match self.inner.get() {
            Some(m) => m.extra_repr(),
            None => self.spec.extra_repr(),
        }
    }
    fn batch_norm_momentum(&mut self, f: &mut dyn FnMut(&mut Option<f64>)) -> bool {
        self.inner.get_mut().is_some_and(|m| m.batch_norm_momentum(f))
    }
    fn training_flag(&self) -> Option<bool> {
        match self.inner.get() {
            Some(m) => m.training_flag(),
            None => self.spec.has_training_flag().then_some(self.training),
        }
    }
}
