//! torch's `nn.utils.parametrize` in this library's module design: [`Parametrized`] wraps a
//! module and computes one of its tensors from other tensors (the "originals") before each call.
//!
//! torch replaces the attribute by a property of a generated class; a module here is a plain
//! struct, so the wrapper owns it behind a lock and, for each call, puts the freshly computed
//! tensor (a new tensor each time, so two forward passes can be differentiated together) into
//! the member before running it. The wrapper lists the module's other members under their own
//! names and the parametrization under `parametrizations.<name>`, so its state dict, parameters
//! and buffers are torch's: `bias`, `parametrizations.weight.original0`, ...

use std::sync::{Mutex, PoisonError};

use oxtorch_autograd::no_grad;
use oxtorch_tensor::{Error, Result, Tensor};

use crate::module::{Forward, Member, MemberMut, Module, ModuleExt};

use super::call_guard::{set_member, ActiveCall};
use super::mirror::Mirror;

/// What torch keeps at `parametrizations.<name>` (a `ParametrizationList`): the original tensors
/// as parameters, the parametrization module as its child `0`, and how to compute the tensor.
pub trait Parametrization: Module {
    /// The parametrized tensor from the originals (torch's `ParametrizationList.forward`); a
    /// parametrization with state (spectral norm's power iteration) updates it in training mode.
    fn compute(&self) -> Result<Tensor>;

    /// The single original tensor, if there is one (`None` when the tensor is parametrized by
    /// several).
    fn original(&self) -> Option<Tensor>;
}

/// torch's `module.parametrizations` (a `ModuleDict`) with its one entry.
struct ParametrizationDict<P> {
    name: String,
    list: P,
}

impl<P: Parametrization> Module for ParametrizationDict<P> {
    fn visit<'m>(&'m self, f: &mut dyn FnMut(&str, Member<'m>)) {
        f(&self.name, Member::Child(&self.list));
    }

    fn visit_mut(&mut self, f: &mut dyn FnMut(&str, MemberMut<'_>)) {
        f(&self.name, MemberMut::Child(&mut self.list));
    }

    fn type_name(&self) -> &'static str {
        "ModuleDict"
    }
}

/// torch's class name of a parametrized module, `Parametrized<Name>` (made once per name).
fn parametrized_name(inner: &'static str) -> &'static str {
    static NAMES: Mutex<Vec<(&'static str, &'static str)>> = Mutex::new(Vec::new());
    let mut names = NAMES.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some(&(_, name)) = names.iter().find(|(i, _)| *i == inner) {
        return name;
    }
    let name: &'static str = Box::leak(format!("Parametrized{inner}").into_boxed_str());
    names.push((inner, name));
    name
}

/// A module whose tensor `name` is computed by a [`Parametrization`] before every call (torch's
/// module after `register_parametrization`); [`crate::utils::parametrizations::weight_norm`] and
/// [`spectral_norm`](crate::utils::parametrizations::spectral_norm) make one.
///
/// Its members are the module's others, under their names, then `parametrizations.<name>.*`;
/// its type name is torch's `Parametrized<Module>`. [`Forward`] runs the module's forward;
/// [`Parametrized::call`] runs any other method with the tensor in place.
pub struct Parametrized<M, P> {
    module: Mutex<M>,
    members: Mirror,
    name: String,
    parametrizations: ParametrizationDict<P>,
    type_name: &'static str,
    training: bool,
}

impl<M: Module, P: Parametrization> Parametrized<M, P> {
    /// torch's `register_parametrization(module, name, parametrization, unsafe=...)`: `make`
    /// builds the parametrization from the current value of the parameter `name` (a direct
    /// parameter of `module`); unless `unsafe_` it is evaluated once (in the module's mode, as
    /// torch) and must give the original's shape and dtype (torch's errors). A lazy module is
    /// refused before its first forward, as torch refuses its uninitialized parameters.
    pub fn register(
        module: M,
        name: &str,
        make: impl FnOnce(&Tensor) -> Result<P>,
        unsafe_: bool,
    ) -> Result<Self> {
        let mut original = None;
        module.visit(&mut |n, member| {
            if let (true, Member::Param(t)) = (n == name, member) {
                original = Some(t.clone());
            }
        });
        let Some(original) = original else {
            return Err(Error::msg(format!(
                "Module '{}' does not have a parameter, a buffer, or a parametrized element with name '{name}'",
                module.type_name()
            )));
        };
        if original.dims() == [0] && module.type_name().starts_with("Lazy") {
            // a lazy module's placeholder (torch's `UninitializedParameter`)
            return Err(Error::msg(
                "Can't access the shape of an uninitialized parameter or buffer. This error usually happens in `load_state_dict` when trying to load an uninitialized parameter into an initialized one. Call `forward` to initialize the parameters before accessing their attributes.",
            ));
        }
        let mut list = make(&original)?;
        // the parametrization (and its child, spectral norm's state) take the module's mode
        let training = module.is_training();
        ModuleExt::train(&mut list, training);
        if !unsafe_ {
            let z = no_grad(|| list.compute())?;
            if z.dtype() != original.dtype() {
                return Err(Error::msg(format!(
                    "Registering a parametrization may not change the dtype of the tensor, unless `unsafe` flag is enabled.\nunparametrized dtype: torch.{}\nparametrized dtype: torch.{}",
                    original.dtype().name(),
                    z.dtype().name()
                )));
            }
            if z.dims() != original.dims() {
                return Err(Error::msg(format!(
                    "Registering a parametrization may not change the shape of the tensor, unless `unsafe` flag is enabled.\nunparametrized shape: {}\nparametrized shape: {}",
                    crate::module::torch_size(original.dims()),
                    crate::module::torch_size(z.dims())
                )));
            }
        }
        let members = Mirror::capture(&module, Some(name));
        Ok(Parametrized {
            type_name: parametrized_name(module.type_name()),
            module: Mutex::new(module),
            members,
            name: name.to_string(),
            parametrizations: ParametrizationDict { name: name.to_string(), list },
            training,
        })
    }

    /// The name of the parametrized tensor.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The parametrization (torch's `module.parametrizations[name]`): the originals and state.
    pub fn parametrization(&self) -> &P {
        &self.parametrizations.list
    }

    /// The parametrization, mutably.
    pub fn parametrization_mut(&mut self) -> &mut P {
        &mut self.parametrizations.list
    }

    /// The parametrized tensor computed now (torch's `module.<name>`; spectral norm's power
    /// iteration runs in training mode, as on every torch access).
    pub fn weight(&self) -> Result<Tensor> {
        self.parametrizations.list.compute()
    }

    /// Runs `f` on the module with its members in place and the parametrized tensor computed
    /// (differentiably) for this call: any method of the module, such as a forward with several
    /// inputs. Calls are serialised (the module sits behind a lock, taken after the
    /// parametrization has run and held only while `f` runs).
    ///
    /// A call made from inside `f` on the same module and thread (a re-entrant call: `f`, or code
    /// it runs, reaching this module again, through an `Arc` say) cannot have the module with its
    /// own value in place while the outer call holds it: it is an error, not a deadlock. The
    /// parametrized tensor itself ([`Parametrized::weight`]) can be computed at any time.
    ///
    /// The check is per thread, and a thread pool does not keep to it: sharing one wrapper
    /// between rayon workers that call it at the same time can report a re-entrant call, as a
    /// worker that holds the lock and waits inside a nested parallel kernel may be given another
    /// outer item, which calls the wrapper again on that thread. Give each worker its own wrapper,
    /// or make the calls outside the pool.
    pub fn call<R>(&self, f: impl FnOnce(&M) -> Result<R>) -> Result<R> {
        if ActiveCall::is_active(self) {
            return Err(Error::msg(format!(
                "{}: re-entrant call: the module is already running a call on this thread (its '{}' is computed for that call and cannot be replaced until it returns); compute the tensor with `weight()` or restructure the call",
                self.type_name, self.name
            )));
        }
        let value = self.parametrizations.list.compute()?;
        // (another thread's call on this module: wait for it)
        let mut m = self.module.lock().unwrap_or_else(PoisonError::into_inner);
        let _active = ActiveCall::enter(self);
        self.members.install(&mut *m);
        set_member(&mut *m, &self.name, &value);
        let out = f(&*m);
        // The module keeps the value, not the graph that made it.
        set_member(&mut *m, &self.name, &value.detach());
        out
    }

    /// Takes the parametrization off (torch's `remove_parametrizations(module, name,
    /// leave_parametrized)`): the module gets back a parameter `name` holding the parametrized
    /// value (`leave_parametrized`; a single original is that parameter, updated in place, as
    /// torch's `set_`) or the original (torch's error when there are several).
    pub fn remove_parametrizations(self, leave_parametrized: bool) -> Result<M> {
        let Parametrized { module, members, name, parametrizations, .. } = self;
        let list = parametrizations.list;
        let value = match (leave_parametrized, list.original()) {
            (true, Some(original)) => {
                let value = no_grad(|| list.compute())?;
                no_grad(|| original.copy_(&value).map(|_| ()))?;
                original
            }
            (true, None) => no_grad(|| list.compute())?.detach().requires_grad_(true)?,
            (false, Some(original)) => original,
            (false, None) => {
                return Err(Error::msg(
                    "Cannot leave unparametrized (`leave_parametrized=False`) a tensor that is parametrized in terms of a sequence of tensors.",
                ))
            }
        };
        let mut m = module.into_inner().unwrap_or_else(PoisonError::into_inner);
        members.install(&mut m);
        set_member(&mut m, &name, &value);
        Ok(m)
    }
}

impl<M: Module, P: Parametrization> Module for Parametrized<M, P> {
    fn visit<'m>(&'m self, f: &mut dyn FnMut(&str, Member<'m>)) {
        self.members.visit(f);
        f("parametrizations", Member::Child(&self.parametrizations));
    }

    fn visit_mut(&mut self, f: &mut dyn FnMut(&str, MemberMut<'_>)) {
        self.members.visit_mut(f);
        f("parametrizations", MemberMut::Child(&mut self.parametrizations));
    }

    fn type_name(&self) -> &'static str {
        self.type_name
    }

    /// Sets the wrapper's mode and the whole wrapped module's (its children are not visited
    /// through the wrapper: their members are).
    fn set_training(&mut self, training: bool) {
        self.training = training;
        let m = self.module.get_mut().unwrap_or_else(PoisonError::into_inner);
        m.train(training);
    }

    fn training_flag(&self) -> Option<bool> {
        Some(self.training)
    }

    fn batch_norm_momentum(&mut self, f: &mut dyn FnMut(&mut Option<f64>)) -> bool {
        self.module.get_mut().unwrap_or_else(PoisonError::into_inner).batch_norm_momentum(f)
    }
}

/// The wrapped module's forward with the parametrized tensor computed for the call.
impl<M: Module + Forward, P: Parametrization> Forward for Parametrized<M, P> {
    fn forward(&self, input: &Tensor) -> Result<Tensor> {
        self.call(|m| m.forward(input))
    }
}
