//! `torch.optim`: optimizers with param groups and state dicts, learning-rate schedulers, and
//! gradient clipping.
//!
//! Every optimizer implements [`Optimizer`]; its update runs under `no_grad` in place on the
//! parameters (tensor ops, so on any device), following torch's single-tensor implementations
//! operation by operation so that results agree with PyTorch to rounding: [`SGD`], [`Adam`],
//! [`AdamW`], [`Adafactor`], [`NAdam`], [`RAdam`], [`Adamax`], [`Adagrad`], [`Adadelta`],
//! [`RMSprop`], [`Rprop`] and [`ASGD`]; [`LBFGS`] takes a closure that re-evaluates the loss.
//! [`swa_utils`] averages weights (SWA, EMA). [`StepHooked`] adds step pre- and post-hooks to any
//! optimizer (torch's `register_step_pre_hook` / `register_step_post_hook`).

mod adadelta;
mod adafactor;
mod adagrad;
mod adam;
mod adamax;
mod asgd;
mod clip;
mod hyper;
mod lbfgs;
pub mod lr_scheduler;
mod muon;
mod nadam;
mod radam;
mod rmsprop;
mod rprop;
mod sgd;
mod state;
mod step_hooks;
pub mod swa_utils;

pub use adadelta::{Adadelta, AdadeltaOptions};
pub use adafactor::{Adafactor, AdafactorOptions};
pub use adagrad::{Adagrad, AdagradOptions};
pub use adam::{Adam, AdamOptions, AdamW};
pub use adamax::{Adamax, AdamaxOptions};
pub use asgd::{AsgdOptions, ASGD};
pub use clip::{clip_grad_norm_, clip_grad_value_};
pub use hyper::HyperParams;
pub use lbfgs::{LbfgsOptions, LBFGS};
pub use lr_scheduler::LRScheduler;
pub use muon::{zeropower_via_newtonschulz, Muon, MuonAdjustLr, MuonOptions};
pub use nadam::{NAdam, NAdamOptions};
pub use radam::{RAdam, RAdamOptions};
pub use rmsprop::{RMSprop, RMSpropOptions};
pub use rprop::{Rprop, RpropOptions};
pub use sgd::{SgdOptions, SGD};
pub use state::OptimizerState;
pub use step_hooks::{StepHookFn, StepHookHandle, StepHooked};

use oxtorch_tensor::{Result, Tensor};

/// Marks the end of a training step when dropped, after an optimizer's update: on `xla`/`tpu`
/// in fused mode the whole step (forward, backward, update) then runs as one program
/// (`torch_xla`'s `optimizer_step` + `mark_step`). A failure leaves the work pending, and the
/// next read of a result reports it.
pub(crate) struct StepEnd;

impl Drop for StepEnd {
    fn drop(&mut self) {
        let _ = oxtorch_tensor::xla_step_boundary();
    }
}

/// A set of parameters sharing hyper-parameters (torch's param group).
#[derive(Clone)]
pub struct ParamGroup<O> {
    /// the parameters
    pub params: Vec<Tensor>,
    /// their hyper-parameters (the learning rate is `options.lr`)
    pub options: O,
}

/// What every optimizer offers (torch's `Optimizer` API).
pub trait Optimizer {
    /// One update of every parameter that has a gradient.
    fn step(&mut self) -> Result<()>;

    /// torch's `step(closure)`: calls `closure` once with gradients enabled (it clears the
    /// gradients, computes the loss, calls `backward` and returns the loss), then takes one
    /// [`Optimizer::step`], and returns the closure's loss. An error from the closure is returned
    /// before anything is updated. [`LBFGS`], which re-evaluates the loss during its step, runs
    /// its own closure-driven step here (its inherent `LBFGS::step`).
    fn step_with_closure(&mut self, closure: &mut dyn FnMut() -> Result<Tensor>) -> Result<Option<Tensor>> {
        let loss = oxtorch_autograd::enable_grad(&mut *closure)?;
        self.step()?;
        Ok(Some(loss))
    }

    /// Clears the gradients of all parameters (`set_to_none=True`, torch's default).
    fn zero_grad(&mut self) -> Result<()>;

    /// torch's `zero_grad(set_to_none)`: with `true`, as [`Optimizer::zero_grad`]; with `false`,
    /// every gradient that exists is detached and zeroed in place (the tensor and its storage
    /// stay), parameters without one are left so.
    fn zero_grad_with(&mut self, set_to_none: bool) -> Result<()> {
        if set_to_none {
            return self.zero_grad();
        }
        zero_grads_in_place(&self.params())
    }

    /// The parameters of group `i`, in order (torch's `param_groups[i]["params"]`); empty for a
    /// group out of range.
    fn group_params(&self, group: usize) -> Vec<Tensor>;

    /// Every parameter, group after group: the order in which the state dict numbers them.
    fn params(&self) -> Vec<Tensor> {
        (0..self.num_groups()).flat_map(|g| self.group_params(g)).collect()
    }

    /// Every param group with its parameters and hyper-parameters (torch's `param_groups`): a
    /// snapshot; change values with [`Optimizer::set_group_hyper`].
    fn param_groups(&self) -> Vec<ParamGroupInfo> {
        (0..self.num_groups())
            .map(|g| ParamGroupInfo { params: self.group_params(g), hyper: group_hypers(self, g) })
            .collect()
    }

    /// The hyper-parameter `name` of group `group` (torch's `param_groups[group][name]`), by the
    /// names of [`Optimizer::hyper_params`] (`"lr"`, `"weight_decay"`, `"betas.0"`, flags as 0/1;
    /// `"momentum"` is also the scheduled momentum of [`Optimizer::momentum`], `"initial_lr"` once
    /// a scheduler set it); `None` for a name the group lacks or a group out of range.
    fn group_hyper(&self, group: usize, name: &str) -> Option<f64> {
        if group >= self.num_groups() {
            return None;
        }
        group_hypers(self, group).into_iter().find(|(k, _)| k == name).map(|(_, v)| v)
    }

    /// Sets the hyper-parameter `name` of group `group` (torch's `param_groups[group][name] = v`),
    /// e.g. `set_group_hyper(0, "weight_decay", 0.0)`. Unlike [`Optimizer::set_hyper_param`], a
    /// group out of range or a name the optimizer does not have is an error.
    fn set_group_hyper(&mut self, group: usize, name: &str, value: f64) -> Result<()> {
        let n = self.num_groups();
        if group >= n {
            return Err(oxtorch_tensor::Error::msg(format!(
                "param_groups index {group} is out of range (the optimizer has {n} param groups)"
            )));
        }
        // Flags whose per-parameter buffers are made at a parameter's first step: switching one on
        // afterwards would be ignored here (torch fails at the next step with a KeyError).
        let rmsprop = self.hyper_params(group).iter().any(|(k, _)| k == "centered");
        let makes_state = match name {
            "amsgrad" | "centered" => true,
            "momentum" => rmsprop && self.group_hyper(group, "momentum") == Some(0.0),
            _ => false,
        };
        if makes_state && self.group_hyper(group, name) != Some(value) {
            let stepped = self.state_dict()?.tensors.iter().any(|(k, _)| k.starts_with("state."));
            if stepped {
                return Err(oxtorch_tensor::Error::msg(format!(
                    "param group {group}: '{name}' cannot change after the optimizer has taken a step \
                     (its per-parameter state is made at the first step)"
                )));
            }
        }
        match name {
            "lr" => self.set_lr(group, value),
            "initial_lr" => self.set_initial_lr(group, value),
            _ if self.hyper_params(group).iter().any(|(k, _)| k == name) => {
                self.set_hyper_param(group, name, value)
            }
            "momentum" if self.momentum(group).is_some() && !has_betas(self, group) => {
                self.set_momentum(group, value)
            }
            _ => {
                let names: Vec<String> = group_hypers(self, group).into_iter().map(|(k, _)| k).collect();
                return Err(oxtorch_tensor::Error::msg(format!(
                    "param group {group} has no hyper-parameter '{name}' (it has {})",
                    names.join(", ")
                )));
            }
        }
        Ok(())
    }

    /// The state of `param` (torch's `optimizer.state[param]`): its tensors by name (`step`,
    /// `exp_avg`, `exp_avg_sq`, `momentum_buffer`, ...), as copies (what
    /// [`Optimizer::state_dict`] holds), sorted by name; empty for a parameter not stepped yet. A
    /// tensor that is not one of this optimizer's parameters is an error.
    fn param_state(&self, param: &Tensor) -> Result<Vec<(String, Tensor)>> {
        let Some(index) = self.params().iter().position(|p| p.is_same(param)) else {
            return Err(oxtorch_tensor::Error::msg(
                "param_state: the tensor is not a parameter of this optimizer",
            ));
        };
        let state = self.state_dict()?;
        let prefix = format!("state.{index}.");
        let mut out: Vec<(String, Tensor)> = state
            .tensors
            .iter()
            .filter_map(|(k, t)| k.strip_prefix(&prefix).map(|k| (k.to_string(), t.clone())))
            .collect();
        out.sort_by(|a, b| a.0.cmp(&b.0));
        Ok(out)
    }

    /// One tensor of [`Optimizer::param_state`] (e.g. `"exp_avg"`), `None` when the parameter
    /// has no such state (yet).
    fn param_state_tensor(&self, param: &Tensor, name: &str) -> Result<Option<Tensor>> {
        Ok(self.param_state(param)?.into_iter().find(|(k, _)| k == name).map(|(_, t)| t))
    }

    /// Number of param groups.
    fn num_groups(&self) -> usize;

    /// The learning rate of group `i`.
    fn lr(&self, group: usize) -> f64;

    /// Sets the learning rate of group `i` (what schedulers do).
    fn set_lr(&mut self, group: usize, lr: f64);

    /// The learning rate group `i` had when the first scheduler was attached (torch's
    /// `initial_lr`, which schedulers take as their base rate), `None` before.
    fn initial_lr(&self, _group: usize) -> Option<f64> {
        None
    }

    /// Records [`Optimizer::initial_lr`] (schedulers do, once).
    fn set_initial_lr(&mut self, _group: usize, _lr: f64) {}

    /// Every hyper-parameter of group `i`, by torch's name (what its state dict keeps).
    fn hyper_params(&self, _group: usize) -> Vec<(String, f64)> {
        Vec::new()
    }

    /// Sets the hyper-parameter `name` of group `i` (an unknown name is ignored).
    fn set_hyper_param(&mut self, _group: usize, _name: &str, _value: f64) {}

    /// The momentum of group `i` that schedulers may cycle (SGD's and RMSprop's `momentum`,
    /// Adam's `beta1`), or `None` for an optimizer without one.
    fn momentum(&self, _group: usize) -> Option<f64> {
        None
    }

    /// Sets what [`Optimizer::momentum`] reads; ignored by an optimizer without a momentum.
    fn set_momentum(&mut self, _group: usize, _momentum: f64) {}

    /// The number of parameters in group `i`, when the optimizer can tell (its state dict then
    /// records it, and loading checks it).
    fn group_len(&self, _group: usize) -> Option<usize> {
        None
    }

    /// Everything needed to resume bit-exactly: per-parameter state and hyper-parameters.
    fn state_dict(&self) -> Result<OptimizerState>;

    /// Restores [`Optimizer::state_dict`]'s output (same parameter layout required).
    fn load_state_dict(&mut self, state: &OptimizerState) -> Result<()>;

    /// Appends a param group (torch's `add_param_group({"params": params, **options})`), e.g. to
    /// train layers unfrozen during fine-tuning. `options` names hyper-parameters as
    /// [`Optimizer::hyper_params`] does (`"lr"`, `"weight_decay"`, `"betas.0"`, flags as 0/1);
    /// every one not named takes the optimizer's default: the options given to `new`, or the
    /// type's defaults for an optimizer built `with_groups` (torch called without keyword
    /// arguments). As torch, the values are not validated, the new parameters start without
    /// state, number after the existing ones in the state dict, and the errors are torch's: "can't
    /// optimize a non-leaf Tensor", "some parameters appear in more than one parameter group".
    /// An unknown name is an error (torch would store it unused). Optimizers that take no groups
    /// (LBFGS) refuse.
    fn add_param_group(&mut self, _params: Vec<Tensor>, _options: &[(&str, f64)]) -> Result<()> {
        Err(oxtorch_tensor::Error::msg("this optimizer does not support add_param_group"))
    }
}

/// One param group as [`Optimizer::param_groups`] lists it (torch's `param_groups[i]`).
#[derive(Clone)]
pub struct ParamGroupInfo {
    /// the group's parameters (torch's `"params"`)
    pub params: Vec<Tensor>,
    /// every other entry by torch's name (`lr`, `weight_decay`, `betas.0`, ..., `initial_lr` once
    /// a scheduler set it), as [`Optimizer::group_hyper`] reads them
    pub hyper: Vec<(String, f64)>,
}

impl ParamGroupInfo {
    /// The hyper-parameter `name` (torch's `group[name]`), `None` when the group lacks it.
    pub fn get(&self, name: &str) -> Option<f64> {
        self.hyper.iter().find(|(k, _)| k == name).map(|(_, v)| *v)
    }
}

/// True when group `g` has `betas` (Adam and its kin: their scheduled momentum is `betas.0`).
fn has_betas(opt: &(impl Optimizer + ?Sized), g: usize) -> bool {
    opt.hyper_params(g).iter().any(|(k, _)| k == "betas.0")
}

/// Group `g`'s hyper-parameters with its `lr` (current), its `momentum` where the optimizer
/// cycles one under another name, and `initial_lr` once recorded.
fn group_hypers(opt: &(impl Optimizer + ?Sized), g: usize) -> Vec<(String, f64)> {
    let mut out = opt.hyper_params(g);
    let lr = opt.lr(g);
    match out.iter_mut().find(|(k, _)| k == "lr") {
        Some(entry) => entry.1 = lr,
        None => out.insert(0, ("lr".to_string(), lr)),
    }
    if let Some(m) = opt.momentum(g) {
        // (the betas optimizers cycle `betas.0`, listed already: torch's groups have no `momentum`)
        if !out.iter().any(|(k, _)| k == "momentum" || k == "betas.0") {
            out.push(("momentum".to_string(), m));
        }
    }
    if let Some(initial) = opt.initial_lr(g) {
        out.push(("initial_lr".to_string(), initial));
    }
    out
}

/// `state_dict` and `load_state_dict` of an optimizer whose per-parameter state is
/// `self.state: Vec<Option<S>>` with `S: ParamState`: the states, then the learning rates.
macro_rules! state_dict_methods {
    () => {
        fn state_dict(&self) -> Result<OptimizerState> {
            let mut s = OptimizerState::default();
            $crate::optim::state::save_states(&self.state, &mut s)?;
            $crate::optim::save_lrs(self, &mut s);
            Ok(s)
        }

        fn load_state_dict(&mut self, state: &OptimizerState) -> Result<()> {
            $crate::optim::check_groups(self, state)?;
            let params = self.groups.iter().flat_map(|g| g.params.iter());
            $crate::optim::state::load_states(&mut self.state, params, state)?;
            $crate::optim::load_lrs(self, state);
            Ok(())
        }
    };
}
pub(crate) use state_dict_methods;

/// The [`Optimizer`] methods that only touch the param groups (`self.groups`, options with `lr`),
/// the initial learning rates (`self.initial_lrs`), and, for `add_param_group`, the options new
/// groups start from (`self.defaults`) and the per-parameter state (`self.state: Vec<Option<_>>`,
/// parameters numbered across groups).
macro_rules! group_methods {
    () => {
        fn add_param_group(
            &mut self,
            params: Vec<oxtorch_tensor::Tensor>,
            options: &[(&str, f64)],
        ) -> oxtorch_tensor::Result<()> {
            let group = $crate::optim::new_param_group(&self.groups, &self.defaults, params, options)?;
            let added = group.params.len();
            self.groups.push(group);
            self.state.resize_with(self.state.len() + added, || None);
            Ok(())
        }

        fn zero_grad(&mut self) -> Result<()> {
            zero_grads(&self.groups)
        }

        fn num_groups(&self) -> usize {
            self.groups.len()
        }

        fn group_params(&self, group: usize) -> Vec<oxtorch_tensor::Tensor> {
            self.groups.get(group).map_or_else(Vec::new, |g| g.params.clone())
        }

        fn group_len(&self, group: usize) -> Option<usize> {
            Some(self.groups[group].params.len())
        }

        fn lr(&self, group: usize) -> f64 {
            self.groups[group].options.lr
        }

        fn set_lr(&mut self, group: usize, lr: f64) {
            self.groups[group].options.lr = lr;
        }

        fn hyper_params(&self, group: usize) -> Vec<(String, f64)> {
            $crate::optim::HyperParams::hyper_params(&self.groups[group].options)
        }

        fn set_hyper_param(&mut self, group: usize, name: &str, value: f64) {
            $crate::optim::HyperParams::set_hyper_param(&mut self.groups[group].options, name, value)
        }

        fn initial_lr(&self, group: usize) -> Option<f64> {
            self.initial_lrs.get(group).copied().flatten()
        }

        fn set_initial_lr(&mut self, group: usize, lr: f64) {
            if self.initial_lrs.len() < self.groups.len() {
                self.initial_lrs.resize(self.groups.len(), None);
            }
            self.initial_lrs[group] = Some(lr);
        }
    };
}
pub(crate) use group_methods;

/// Stores every group's hyper-parameters as `param_groups.{g}.{name}` (torch's `param_groups`:
/// `lr`, `weight_decay`, `betas.0`, flags as 0/1, ...; `initial_lr` once a scheduler set it, the
/// group's size), and the momentum a scheduler may cycle ([`Optimizer::momentum`]) as
/// `param_groups.{g}.momentum`.
pub(crate) fn save_lrs(opt: &dyn Optimizer, s: &mut OptimizerState) {
    for g in 0..opt.num_groups() {
        for (name, value) in opt.hyper_params(g) {
            s.set_hyper(g, &name, value);
        }
        s.set_hyper(g, "lr", opt.lr(g));
        if let Some(initial) = opt.initial_lr(g) {
            s.set_hyper(g, "initial_lr", initial);
        }
        if let Some(n) = opt.group_len(g) {
            s.set_hyper(g, "num_params", n as f64);
        }
        if let Some(m) = opt.momentum(g) {
            s.set_hyper(g, "momentum", m);
        }
    }
}

/// Checks that `state` was saved for this optimizer's layout (torch's two errors): as many
/// parameter groups, each as long as recorded. Called before anything is loaded.
pub(crate) fn check_groups(opt: &dyn Optimizer, state: &OptimizerState) -> Result<()> {
    let saved = state.num_groups();
    if saved != 0 && saved != opt.num_groups() {
        return Err(oxtorch_tensor::Error::msg(
            "loaded state dict has a different number of parameter groups",
        ));
    }
    for g in 0..opt.num_groups() {
        if let (Some(n), Some(len)) = (state.hyper(g, "num_params"), opt.group_len(g)) {
            if n != len as f64 {
                return Err(oxtorch_tensor::Error::msg(
                    "loaded state dict contains a parameter group that doesn't match the size of optimizer's group",
                ));
            }
        }
    }
    Ok(())
}

/// Restores what [`save_lrs`] stored: every hyper-parameter the state has (groups keep the ones
/// it lacks), as torch's `load_state_dict` takes the saved `param_groups`.
pub(crate) fn load_lrs(opt: &mut dyn Optimizer, state: &OptimizerState) {
    for g in 0..opt.num_groups() {
        // Every saved hyper-parameter, as torch's `load_state_dict` restores `param_groups`.
        for (name, _) in opt.hyper_params(g) {
            if let Some(value) = state.hyper(g, &name) {
                opt.set_hyper_param(g, &name, value);
            }
        }
        if let Some(lr) = state.hyper(g, "lr") {
            opt.set_lr(g, lr);
        }
        if let Some(initial) = state.hyper(g, "initial_lr") {
            opt.set_initial_lr(g, initial);
        }
        if let Some(m) = state.hyper(g, "momentum") {
            opt.set_momentum(g, m);
        }
    }
}

/// torch's checks of an Adam-family optimizer's options, in its order and words: the learning
/// rate and epsilon not negative, each beta in `[0, 1)`, the weight decay not negative.
pub(crate) fn check_adam_options(lr: f64, eps: f64, betas: (f64, f64), weight_decay: f64) -> Result<()> {
    let bad = |what: String| Err(oxtorch_tensor::Error::msg(what));
    // (NaN fails too, as torch's `0.0 <= lr`)
    if lr < 0.0 || lr.is_nan() {
        return bad(format!("Invalid learning rate: {lr}"));
    }
    if eps < 0.0 || eps.is_nan() {
        return bad(format!("Invalid epsilon value: {eps}"));
    }
    for (i, beta) in [betas.0, betas.1].into_iter().enumerate() {
        if !(0.0..1.0).contains(&beta) {
            return bad(format!("Invalid beta parameter at index {i}: {beta}"));
        }
    }
    if weight_decay < 0.0 || weight_decay.is_nan() {
        return bad(format!("Invalid weight_decay value: {weight_decay}"));
    }
    Ok(())
}

/// The group torch's `add_param_group` appends, after its checks in its order: every parameter a
/// leaf (or one that retains its gradient), `defaults` with the named `options` set (an unknown
/// name is an error here), no parameter already in one of `groups`.
pub(crate) fn new_param_group<O: HyperParams + Clone>(
    groups: &[ParamGroup<O>],
    defaults: &O,
    params: Vec<Tensor>,
    options: &[(&str, f64)],
) -> Result<ParamGroup<O>> {
    if params.iter().any(|p| !(p.is_leaf() || p.retains_grad())) {
        return Err(oxtorch_tensor::Error::msg("can't optimize a non-leaf Tensor"));
    }
    let mut group_options = defaults.clone();
    let known = group_options.hyper_params();
    for &(name, value) in options {
        if !known.iter().any(|(k, _)| k == name) {
            let names: Vec<&str> = known.iter().map(|(k, _)| k.as_str()).collect();
            return Err(oxtorch_tensor::Error::msg(format!(
                "add_param_group: unknown optimization parameter '{name}' (this optimizer has {})",
                names.join(", ")
            )));
        }
        group_options.set_hyper_param(name, value);
    }
    if groups.iter().flat_map(|g| &g.params).any(|p| params.iter().any(|q| q.is_same(p))) {
        return Err(oxtorch_tensor::Error::msg("some parameters appear in more than one parameter group"));
    }
    Ok(ParamGroup { params, options: group_options })
}

/// torch's `zero_grad(set_to_none=False)`: each existing `.grad` detached (kept if already
/// detached, as torch's `requires_grad_(False)`) and zeroed in place.
pub(crate) fn zero_grads_in_place(params: &[Tensor]) -> Result<()> {
    for p in params {
        if let Some(g) = p.grad() {
            let g = if g.requires_grad() {
                let d = g.detach();
                p.set_grad(Some(d.clone()))?;
                d
            } else {
                g
            };
            oxtorch_autograd::no_grad(|| g.zero_().map(|_| ()))?;
        }
    }
    Ok(())
}

/// Clears `.grad` of every parameter of `groups`.
pub(crate) fn zero_grads<O>(groups: &[ParamGroup<O>]) -> Result<()> {
    groups.iter().flat_map(|g| &g.params).try_for_each(|p| p.set_grad(None))
}
