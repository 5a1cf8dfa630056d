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

use std::cell::RefCell;
use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, OnceLock, PoisonError};

use oxtorch_tensor::{DType, Device, Error, Result, Tensor};

use super::{BatchNorm, ConvNd, ConvOptions, ConvTransposeNd, ConvTransposeOptions, InstanceNorm, Linear};
use crate::module::{torch_size, Forward, Member, MemberMut, Module, ModuleExt};
use crate::state_dict::StateDict;

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

/// torch's `nn.LazyLinear(out_features, bias=True)`.
pub type LazyLinear = Lazy<LazyLinearSpec>;
/// torch's `nn.LazyConv1d`.
pub type LazyConv1d = Lazy<LazyConvSpec<1>>;
/// torch's `nn.LazyConv2d`.
pub type LazyConv2d = Lazy<LazyConvSpec<2>>;
/// torch's `nn.LazyConv3d`.
pub type LazyConv3d = Lazy<LazyConvSpec<3>>;
/// torch's `nn.LazyConvTranspose1d`.
pub type LazyConvTranspose1d = Lazy<LazyConvTransposeSpec<1>>;
/// torch's `nn.LazyConvTranspose2d`.
pub type LazyConvTranspose2d = Lazy<LazyConvTransposeSpec<2>>;
/// torch's `nn.LazyConvTranspose3d`.
pub type LazyConvTranspose3d = Lazy<LazyConvTransposeSpec<3>>;
/// torch's `nn.LazyBatchNorm1d`.
pub type LazyBatchNorm1d = Lazy<LazyBatchNormSpec<1>>;
/// torch's `nn.LazyBatchNorm2d`.
pub type LazyBatchNorm2d = Lazy<LazyBatchNormSpec<2>>;
/// torch's `nn.LazyBatchNorm3d`.
pub type LazyBatchNorm3d = Lazy<LazyBatchNormSpec<3>>;
/// torch's `nn.LazyInstanceNorm1d`.
pub type LazyInstanceNorm1d = Lazy<LazyInstanceNormSpec<1>>;
/// torch's `nn.LazyInstanceNorm2d`.
pub type LazyInstanceNorm2d = Lazy<LazyInstanceNormSpec<2>>;
/// torch's `nn.LazyInstanceNorm3d`.
pub type LazyInstanceNorm3d = Lazy<LazyInstanceNormSpec<3>>;

/// A placeholder: torch's uninitialized tensor, here an empty `[0]` tensor.
fn placeholder(role: LazyRole) -> Result<Tensor> {
    let t = Tensor::empty([0], DType::default_float())?;
    Ok(if role == LazyRole::Param { t.requires_grad_(true)? } else { t })
}

/// Whether a checkpoint entry is a placeholder (a lazy module saved before its first forward).
fn is_placeholder(t: &Tensor) -> bool {
    t.dims() == [0]
}

/// The state-dict key of member `name` of the module at `prefix`.
fn dotted(prefix: &str, name: &str) -> String {
    if prefix.is_empty() {
        name.to_string()
    } else {
        format!("{prefix}.{name}")
    }
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

    /// Materializes from the state dict being loaded (see [`materialize_from_state_dict`]).
    /// When the module stays lazy, fills the open members of known shape that the state dict
    /// gives (for the load to copy into) and records the names of the placeholders left.
    fn load_hook(&self) {
        if self.inner.get().is_some() {
            return;
        }
        let Some((prefix, found, fill)) = LOADING.with(|cell| {
            let cell = cell.try_borrow().ok()?;
            let loading = Option::as_ref(&*cell)?;
            let key = |name: &str| dotted(&loading.prefix, name);
            let found = self.slots.iter().filter(|s| s.placeholder).find_map(|s| {
                let t = loading.sd.get(&key(s.name))?;
                if is_placeholder(t) {
                    return None;
                }
                self.spec.infer_from(s.name, t.dims())
            });
            let fill: Vec<&'static str> = self
                .slots
                .iter()
                .filter(|s| s.unfilled() && self.spec.known_shape(s.name).is_some())
                .filter(|s| loading.sd.get(&key(s.name)).is_some_and(|t| !is_placeholder(t)))
                .map(|s| s.name)
                .collect();
            Some((loading.prefix.clone(), found, fill))
        }) else {
            return;
        };
        let mut outcome = match found {
            Some(size) => self.materialize(size).map(|_| ()),
            None => Ok(()),
        };
        let still_lazy = self.inner.get().is_none();
        if still_lazy && outcome.is_ok() {
            outcome = self.fill(&fill);
        }
        let keys: Vec<String> = if still_lazy {
            self.slots
                .iter()
                .filter(|s| s.unfilled() && is_placeholder(&s.tensor))
                .map(|s| dotted(&prefix, s.name))
                .collect()
        } else {
            Vec::new()
        };
        LOADING.with(|cell| {
            if let Ok(mut cell) = cell.try_borrow_mut() {
                if let Some(loading) = Option::as_mut(&mut *cell) {
                    if let Err(e) = outcome {
                        loading.error.get_or_insert(e);
                    }
                    loading.pending.extend(keys);
                }
            }
        });
    }

    /// Gives the open members `names`, of shapes known without the input, a tensor of that
    /// shape (zeros, in the placeholder's dtype, device and `requires_grad`) for a load to copy
    /// its entry into (torch's hook materializes each parameter of the checkpoint on its own).
    fn fill(&self, names: &[&str]) -> Result<()> {
        for s in self.slots.iter().filter(|s| s.unfilled() && names.contains(&s.name)) {
            let Some(shape) = self.spec.known_shape(s.name) else { continue };
            let mut t = Tensor::zeros(shape, s.tensor.dtype())?;
            if s.tensor.device() != Device::Cpu {
                t = t.to(s.tensor.device())?;
            }
            if s.tensor.requires_grad() {
                t = t.requires_grad_(true)?;
            }
            // (a load running at the same time on another thread may have filled it first)
            let _ = s.loaded.set(t);
        }
        Ok(())
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
    fn training_flag(&self) -> Option<bool> {
        match self.inner.get() {
            Some(m) => m.training_flag(),
            None => self.spec.has_training_flag().then_some(self.training),
        }
    }
}

/// The state dict being loaded and the dotted name of the module being visited, read by lazy
/// modules' `visit` while [`materialize_from_state_dict`] walks a tree.
struct Loading {
    prefix: String,
    sd: StateDict,
    error: Option<Error>,
    /// dotted names of the placeholders of modules left lazy
    pending: HashSet<String>,
}

thread_local! {
    static LOADING: RefCell<Option<Loading>> = const { RefCell::new(None) };
}

/// Puts back the [`LOADING`] state of an enclosing load (or none) when a walk ends, also by a
/// panic.
struct LoadingReset(Option<Loading>);

impl Drop for LoadingReset {
    fn drop(&mut self) {
        let previous = self.0.take();
        LOADING.with(|cell| {
            if let Ok(mut cell) = cell.try_borrow_mut() {
                *cell = previous;
            }
        });
    }
}

/// Whether the tree under `m` holds a placeholder (an empty `[0]` parameter or buffer, as a lazy
/// module not yet materialized has).
fn has_placeholder(m: &dyn Module) -> bool {
    let mut found = false;
    m.visit(&mut |_, member| {
        if found {
            return;
        }
        match member {
            Member::Param(t) | Member::Buffer(t) | Member::NonPersistentBuffer(t) => {
                found = is_placeholder(t)
            }
            Member::Child(c) => found = has_placeholder(c),
        }
    });
    found
}

/// Materializes every lazy module of the tree under `module` whose entries in `sd` have shapes
/// (torch's lazy load hook), so that `ModuleExt::load_state_dict` then copies into tensors of
/// the checkpoint's shapes. Modules without entries, or with placeholder entries, stay lazy;
/// their open members of known shape ([`LazySpec::known_shape`]) that `sd` gives get a tensor
/// of that shape for the load to copy into. Returns the dotted names of the placeholders left
/// (their entries, if any, are not copied: torch's hook fills them without materializing the
/// module).
pub fn materialize_from_state_dict(module: &dyn Module, sd: &StateDict) -> Result<HashSet<String>> {
    fn rec(m: &dyn Module, prefix: &str) {
        LOADING.with(|cell| {
            if let Some(loading) = Option::as_mut(&mut *cell.borrow_mut()) {
                loading.prefix = prefix.to_string();
            }
        });
        // A lazy module materializes itself at the start of its visit.
        let mut children: Vec<(String, &dyn Module)> = Vec::new();
        m.visit(&mut |name, member| {
            if let Member::Child(c) = member {
                children.push((name.to_string(), c));
            }
        });
        for (name, c) in children {
            let full = if prefix.is_empty() { name } else { format!("{prefix}.{name}") };
            rec(c, &full);
        }
    }
    // An enclosing load's state is set aside and put back when this one ends.
    let _reset = LoadingReset(LOADING.with(|cell| cell.replace(None)));
    // Nothing to do (and no copy of the state dict) for a tree without lazy modules.
    if !has_placeholder(module) {
        return Ok(HashSet::new());
    }
    LOADING.with(|cell| {
        *cell.borrow_mut() =
            Some(Loading { prefix: String::new(), sd: sd.clone(), error: None, pending: HashSet::new() });
    });
    rec(module, "");
    let (error, pending) = LOADING.with(|cell| match Option::as_mut(&mut *cell.borrow_mut()) {
        Some(l) => (l.error.take(), std::mem::take(&mut l.pending)),
        None => (None, HashSet::new()),
    });
    match error {
        Some(e) => Err(e),
        None => Ok(pending),
    }
}

/// One value broadcast to `n`, or `n` values.
fn spread(what: &str, v: &[usize], n: usize) -> Result<Vec<usize>> {
    match v.len() {
        1 => Ok(vec![v[0]; n]),
        l if l == n => Ok(v.to_vec()),
        l => Err(Error::msg(format!("{what} must have 1 or {n} values, got {l}"))),
    }
}

/// torch's `_LazyConvXdMixin._get_in_channels`: the channels of an unbatched (`N + 1` dims) or
/// batched (`N + 2`) input.
fn conv_in_channels(class: &str, n: usize, input: &Tensor) -> Result<usize> {
    let r = input.rank();
    if r != n + 1 && r != n + 2 {
        return Err(Error::shape(format!(
            "Expected {}D (unbatched) or {}D (batched) input to {class}, but got input of size: {}",
            n + 1,
            n + 2,
            torch_size(input.dims())
        )));
    }
    Ok(input.dims()[r - n - 1])
}

/// torch's checks of a convolution's constructor that do not need the input channels.
fn check_conv_groups(groups: usize, out_channels: usize) -> Result<()> {
    if groups == 0 {
        return Err(Error::msg("groups must be a positive integer"));
    }
    if !out_channels.is_multiple_of(groups) {
        return Err(Error::msg("out_channels must be divisible by groups"));
    }
    Ok(())
}

// --- LazyLinear ----------------------------------------------------------------------------------

/// The hyper-parameters of [`LazyLinear`].
#[derive(Clone, Debug)]
pub struct LazyLinearSpec {
    /// output features
    pub out_features: usize,
    /// whether the layer has a bias
    pub bias: bool,
}

impl LazySpec for LazyLinearSpec {
    type Module = Linear;
    fn name(&self) -> &'static str {
        "LazyLinear"
    }
    fn members(&self) -> Result<Vec<(&'static str, LazyRole, Option<Tensor>)>> {
        let mut m = vec![("weight", LazyRole::Param, None)];
        if self.bias {
            m.push(("bias", LazyRole::Param, None));
        }
        Ok(m)
    }
    fn infer(&self, input: &Tensor) -> Result<usize> {
        input.dims().last().copied().ok_or_else(|| Error::msg("tuple index out of range"))
    }
    fn infer_from(&self, name: &str, dims: &[usize]) -> Option<usize> {
        (name == "weight" && dims.len() == 2).then(|| dims[1])
    }
    fn known_shape(&self, name: &str) -> Option<Vec<usize>> {
        (name == "bias" && self.bias).then(|| vec![self.out_features])
    }
    fn build(&self, size: usize, dtype: DType) -> Result<Linear> {
        Linear::with_dtype(size, self.out_features, self.bias, dtype)
    }
}

impl Lazy<LazyLinearSpec> {
    /// torch's `LazyLinear(out_features, bias)`: `in_features` is the last dim of the first input.
    pub fn new(out_features: usize, bias: bool) -> Result<Self> {
        Self::from_spec(LazyLinearSpec { out_features, bias })
    }
}

// --- LazyConv1d/2d/3d ----------------------------------------------------------------------------

/// The hyper-parameters of [`LazyConv1d`], [`LazyConv2d`], [`LazyConv3d`].
#[derive(Clone, Debug)]
pub struct LazyConvSpec<const N: usize> {
    /// output channels
    pub out_channels: usize,
    /// kernel size per spatial dim
    pub kernel_size: Vec<usize>,
    /// the other hyper-parameters (`options.dtype` is the placeholders' dtype)
    pub options: ConvOptions,
}

impl<const N: usize> LazySpec for LazyConvSpec<N> {
    type Module = ConvNd<N>;
    fn name(&self) -> &'static str {
        ["LazyConv1d", "LazyConv2d", "LazyConv3d"].get(N.wrapping_sub(1)).copied().unwrap_or("LazyConvNd")
    }
    fn members(&self) -> Result<Vec<(&'static str, LazyRole, Option<Tensor>)>> {
        let mut m = vec![("weight", LazyRole::Param, None)];
        if self.options.bias {
            m.push(("bias", LazyRole::Param, None));
        }
        Ok(m)
    }
    fn infer(&self, input: &Tensor) -> Result<usize> {
        conv_in_channels(self.name(), N, input)
    }
    fn infer_from(&self, name: &str, dims: &[usize]) -> Option<usize> {
        (name == "weight" && dims.len() == N + 2).then(|| dims[1] * self.options.groups)
    }
    fn known_shape(&self, name: &str) -> Option<Vec<usize>> {
        (name == "bias" && self.options.bias).then(|| vec![self.out_channels])
    }
    fn build(&self, size: usize, dtype: DType) -> Result<ConvNd<N>> {
        ConvNd::new(size, self.out_channels, &self.kernel_size, ConvOptions { dtype, ..self.options.clone() })
    }
}

impl<const N: usize> Lazy<LazyConvSpec<N>> {
    /// torch's `LazyConv{N}d(out_channels, kernel_size, ...)`: `in_channels` is dim 1 of the
    /// first (batched) input, dim 0 of an unbatched one.
    pub fn new(out_channels: usize, kernel_size: &[usize], options: ConvOptions) -> Result<Self> {
        check_conv_groups(options.groups, out_channels)?;
        if !["zeros", "reflect", "replicate", "circular"].contains(&options.padding_mode) {
            return Err(Error::msg(format!(
                "padding_mode must be one of {{'reflect', 'replicate', 'zeros', 'circular'}}, but got padding_mode='{}'",
                options.padding_mode
            )));
        }
        let kernel_size = spread("kernel_size", kernel_size, N)?;
        let dtype = options.dtype;
        let mut lazy = Self::from_spec(LazyConvSpec { out_channels, kernel_size, options })?;
        if dtype != DType::default_float() {
            lazy.to(dtype)?;
        }
        Ok(lazy)
    }
}

// --- LazyConvTranspose1d/2d/3d -------------------------------------------------------------------

/// The hyper-parameters of [`LazyConvTranspose1d`], [`LazyConvTranspose2d`],
/// [`LazyConvTranspose3d`].
#[derive(Clone, Debug)]
pub struct LazyConvTransposeSpec<const N: usize> {
    /// output channels
    pub out_channels: usize,
    /// kernel size per spatial dim
    pub kernel_size: Vec<usize>,
    /// the other hyper-parameters (`options.dtype` is the placeholders' dtype)
    pub options: ConvTransposeOptions,
}

impl<const N: usize> LazySpec for LazyConvTransposeSpec<N> {
    type Module = ConvTransposeNd<N>;
    fn name(&self) -> &'static str {
        ["LazyConvTranspose1d", "LazyConvTranspose2d", "LazyConvTranspose3d"]
            .get(N.wrapping_sub(1))
            .copied()
            .unwrap_or("LazyConvTransposeNd")
    }
    fn members(&self) -> Result<Vec<(&'static str, LazyRole, Option<Tensor>)>> {
        let mut m = vec![("weight", LazyRole::Param, None)];
        if self.options.bias {
            m.push(("bias", LazyRole::Param, None));
        }
        Ok(m)
    }
    fn infer(&self, input: &Tensor) -> Result<usize> {
        conv_in_channels(self.name(), N, input)
    }
    fn infer_from(&self, name: &str, dims: &[usize]) -> Option<usize> {
        (name == "weight" && dims.len() == N + 2).then(|| dims[0])
    }
    fn known_shape(&self, name: &str) -> Option<Vec<usize>> {
        (name == "bias" && self.options.bias).then(|| vec![self.out_channels])
    }
    fn build(&self, size: usize, dtype: DType) -> Result<ConvTransposeNd<N>> {
        ConvTransposeNd::new(
            size,
            self.out_channels,
            &self.kernel_size,
            ConvTransposeOptions { dtype, ..self.options.clone() },
        )
    }
}

impl<const N: usize> Lazy<LazyConvTransposeSpec<N>> {
    /// torch's `LazyConvTranspose{N}d(out_channels, kernel_size, ...)`.
    pub fn new(out_channels: usize, kernel_size: &[usize], options: ConvTransposeOptions) -> Result<Self> {
        check_conv_groups(options.groups, out_channels)?;
        let kernel_size = spread("kernel_size", kernel_size, N)?;
        let dtype = options.dtype;
        let mut lazy = Self::from_spec(LazyConvTransposeSpec { out_channels, kernel_size, options })?;
        if dtype != DType::default_float() {
            lazy.to(dtype)?;
        }
        Ok(lazy)
    }

    /// torch's `forward(input, output_size)` (materializing first).
    pub fn forward_with_output_size(&self, x: &Tensor, output_size: &[usize]) -> Result<Tensor> {
        self.forward_module(x)?.forward_with_output_size(x, output_size)
    }
}

// --- LazyBatchNorm / LazyInstanceNorm ------------------------------------------------------------

/// The members of batch and instance norms: `weight`, `bias` (with `affine`), `running_mean`,
/// `running_var` (with `track_running_stats`) open; `num_batches_tracked` a 0-d int64 zero.
fn norm_members(affine: bool, track: bool) -> Result<Vec<(&'static str, LazyRole, Option<Tensor>)>> {
    let mut m = Vec::new();
    if affine {
        m.push(("weight", LazyRole::Param, None));
        m.push(("bias", LazyRole::Param, None));
    }
    if track {
        m.push(("running_mean", LazyRole::Buffer, None));
        m.push(("running_var", LazyRole::Buffer, None));
        m.push(("num_batches_tracked", LazyRole::Buffer, Some(Tensor::zeros([], DType::I64)?)));
    }
    Ok(m)
}

/// The channel count read from a norm's checkpoint entry.
fn norm_infer_from(name: &str, dims: &[usize]) -> Option<usize> {
    (["weight", "bias", "running_mean", "running_var"].contains(&name) && dims.len() == 1).then(|| dims[0])
}

/// The hyper-parameters of [`LazyBatchNorm1d`], [`LazyBatchNorm2d`], [`LazyBatchNorm3d`]
/// (torch's defaults: `eps 1e-5, momentum 0.1, affine, track_running_stats`).
#[derive(Clone, Debug)]
pub struct LazyBatchNormSpec<const K: usize> {
    /// added to the variance
    pub eps: f64,
    /// running-statistics factor (`None`: cumulative average)
    pub momentum: Option<f64>,
    /// whether there are `weight` and `bias`
    pub affine: bool,
    /// whether running statistics are kept
    pub track_running_stats: bool,
}

impl<const K: usize> LazySpec for LazyBatchNormSpec<K> {
    type Module = BatchNorm;
    fn name(&self) -> &'static str {
        ["LazyBatchNorm1d", "LazyBatchNorm2d", "LazyBatchNorm3d"]
            .get(K.wrapping_sub(1))
            .copied()
            .unwrap_or("LazyBatchNorm")
    }
    fn members(&self) -> Result<Vec<(&'static str, LazyRole, Option<Tensor>)>> {
        norm_members(self.affine, self.track_running_stats)
    }
    fn infer(&self, input: &Tensor) -> Result<usize> {
        let r = input.rank();
        let ok = match K {
            1 => r == 2 || r == 3,
            k => r == k + 2,
        };
        if !ok {
            return Err(Error::shape(match K {
                1 => format!("expected 2D or 3D input (got {r}D input)"),
                k => format!("expected {}D input (got {r}D input)", k + 2),
            }));
        }
        Ok(input.dims()[1])
    }
    fn infer_from(&self, name: &str, dims: &[usize]) -> Option<usize> {
        norm_infer_from(name, dims)
    }
    fn build(&self, size: usize, dtype: DType) -> Result<BatchNorm> {
        let (eps, momentum, affine, track) = (self.eps, self.momentum, self.affine, self.track_running_stats);
        let mut m = match K {
            1 => BatchNorm::new_1d_with(size, eps, momentum, affine, track)?,
            2 => BatchNorm::new_2d_with(size, eps, momentum, affine, track)?,
            _ => BatchNorm::new_3d_with(size, eps, momentum, affine, track)?,
        };
        if dtype != DType::default_float() {
            m.to(dtype)?;
        }
        Ok(m)
    }
    fn has_training_flag(&self) -> bool {
        true
    }
}

impl<const K: usize> Lazy<LazyBatchNormSpec<K>> {
    /// torch's `LazyBatchNorm{K}d()` with its defaults.
    pub fn new() -> Result<Self> {
        Self::new_with(1e-5, Some(0.1), true, true)
    }

    /// torch's `LazyBatchNorm{K}d(eps, momentum, affine, track_running_stats)`.
    pub fn new_with(
        eps: f64,
        momentum: Option<f64>,
        affine: bool,
        track_running_stats: bool,
    ) -> Result<Self> {
        Self::from_spec(LazyBatchNormSpec { eps, momentum, affine, track_running_stats })
    }
}

/// The hyper-parameters of [`LazyInstanceNorm1d`], [`LazyInstanceNorm2d`],
/// [`LazyInstanceNorm3d`] (torch's defaults: `eps 1e-5, momentum 0.1, affine,
/// track_running_stats`, unlike the eager instance norms).
#[derive(Clone, Debug)]
pub struct LazyInstanceNormSpec<const K: usize> {
    /// added to the variance
    pub eps: f64,
    /// running-statistics factor
    pub momentum: Option<f64>,
    /// whether there are `weight` and `bias`
    pub affine: bool,
    /// whether running statistics are kept
    pub track_running_stats: bool,
}

impl<const K: usize> LazySpec for LazyInstanceNormSpec<K> {
    type Module = InstanceNorm;
    fn name(&self) -> &'static str {
        ["LazyInstanceNorm1d", "LazyInstanceNorm2d", "LazyInstanceNorm3d"]
            .get(K.wrapping_sub(1))
            .copied()
            .unwrap_or("LazyInstanceNorm")
    }
    fn members(&self) -> Result<Vec<(&'static str, LazyRole, Option<Tensor>)>> {
        norm_members(self.affine, self.track_running_stats)
    }
    fn infer(&self, input: &Tensor) -> Result<usize> {
        // torch's `_LazyNormBase` reads `input.shape[1]` whatever the rank: for an unbatched
        // input that is a spatial dim, not the channels, and the forward then reports the
        // mismatch (with `affine`) as torch's does.
        let r = input.rank();
        if r != K + 1 && r != K + 2 {
            return Err(Error::shape(format!("expected {}D or {}D input (got {r}D input)", K + 1, K + 2)));
        }
        Ok(input.dims()[1])
    }
    fn infer_from(&self, name: &str, dims: &[usize]) -> Option<usize> {
        norm_infer_from(name, dims)
    }
    fn build(&self, size: usize, dtype: DType) -> Result<InstanceNorm> {
        let mut m =
            InstanceNorm::new(K, size, self.eps, self.momentum, self.affine, self.track_running_stats)?;
        if dtype != DType::default_float() {
            m.to(dtype)?;
        }
        Ok(m)
    }
    fn has_training_flag(&self) -> bool {
        true
    }
}

impl<const K: usize> Lazy<LazyInstanceNormSpec<K>> {
    /// torch's `LazyInstanceNorm{K}d()` with its defaults (`affine` and `track_running_stats`
    /// on, as torch's lazy instance norms have them).
    pub fn new() -> Result<Self> {
        Self::new_with(1e-5, Some(0.1), true, true)
    }

    /// torch's `LazyInstanceNorm{K}d(eps, momentum, affine, track_running_stats)`.
    pub fn new_with(
        eps: f64,
        momentum: Option<f64>,
        affine: bool,
        track_running_stats: bool,
    ) -> Result<Self> {
        Self::from_spec(LazyInstanceNormSpec { eps, momentum, affine, track_running_stats })
    }
}
