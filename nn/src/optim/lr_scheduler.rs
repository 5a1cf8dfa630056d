//! `torch.optim.lr_scheduler`: learning-rate schedules, as torch computes them.
//!
//! A scheduler does not borrow its optimizer (so both can be used in a loop): pass the optimizer to
//! each `step`. Constructing one applies the epoch-0 learning rate, as torch does; its base rates
//! are the groups' `initial_lr` (recorded by the first scheduler attached).
//!
//! ```
//! use oxtorch_nn::optim::{lr_scheduler::{CosineAnnealingLR, LinearLR, SequentialLR}, Optimizer, SgdOptions, SGD};
//! use oxtorch_tensor::{Result, Tensor};
//! # fn main() -> Result<()> {
//! let p = Tensor::zeros([2], ())?.requires_grad_(true)?;
//! let mut opt = SGD::new(vec![p], SgdOptions { lr: 0.1, ..Default::default() })?;
//! // 5 warm-up steps, then cosine decay over 95.
//! let warmup = LinearLR::new(&mut opt, 0.1, 1.0, 5)?;
//! let cosine = CosineAnnealingLR::new(&mut opt, 95, 0.0);
//! let mut sched = SequentialLR::new(&mut opt, vec![warmup, cosine], vec![5])?;
//! for _ in 0..10 {
//!     // ... forward, backward, opt.step() ...
//!     sched.step(&mut opt)?;
//! }
//! assert!(opt.lr(0) < 0.1);
//! # Ok(()) }
//! ```

use std::f64::consts::PI;

use oxtorch_tensor::{Error, Result};

use super::Optimizer;

mod compose;
mod cyclic;
mod plateau;

pub use compose::{ChainedScheduler, SequentialLR};
pub use cyclic::{CosineAnnealingWarmRestarts, CycleMomentum, CyclicLR, OneCycleLR, OneCycleSteps};
pub use plateau::ReduceLROnPlateau;

/// What every learning-rate scheduler offers (torch's `LRScheduler` base class, which
/// `ReduceLROnPlateau` shares in torch 2.x): stepping, the last rates, and a resumable state.
///
/// [`LRScheduler::step`] takes no metric; [`ReduceLROnPlateau`] needs one (torch's
/// `step(metrics)`), so its `step` here is torch's error for a call without it, and loops that
/// drive any scheduler call [`LRScheduler::step_with_metric`], which the other schedulers take
/// as a plain step (ignoring the metric).
///
/// The types' own methods of the same names stay (and are what `sched.step(&mut opt)` calls);
/// the trait makes them usable behind `&mut dyn LRScheduler` / `Box<dyn LRScheduler>`.
pub trait LRScheduler {
    /// Advances one epoch (or batch) and sets the optimizer's learning rates (torch's `step()`).
    fn step(&mut self, opt: &mut dyn Optimizer) -> Result<()>;

    /// A step given this epoch's metric (torch's `ReduceLROnPlateau.step(metrics)`); schedulers
    /// that do not read a metric ignore it and step.
    fn step_with_metric(&mut self, opt: &mut dyn Optimizer, _metric: f64) -> Result<()> {
        self.step(opt)
    }

    /// The learning rates of the groups after the last step (torch's `get_last_lr()`).
    fn get_last_lr(&self) -> Vec<f64>;

    /// What resuming needs, by torch's attribute names (see each type's `state_dict`).
    fn state_dict(&self) -> Vec<(String, f64)>;

    /// Restores [`LRScheduler::state_dict`]'s output.
    fn load_state_dict(&mut self, state: &[(String, f64)]) -> Result<()>;
}

/// The learning rate of a group at an epoch, from its base learning rate (a closed form):
/// `f(group, epoch, base lr)`.
type Schedule = Box<dyn Fn(usize, i64, f64) -> f64 + Send + Sync>;

/// The next learning rate of a group from its current one (torch's chainable `get_lr`):
/// `f(group, epoch, current lr, base lr)`.
type Recursive = Box<dyn Fn(usize, i64, f64, f64) -> f64 + Send + Sync>;

/// The state of [`CosineAnnealingWarmRestarts`] (torch's `T_0`, `T_i`, `T_mult`, `T_cur`,
/// `eta_min`), stepped by torch's `step()` / `step(epoch)` rules rather than a closed form.
#[derive(Clone, Copy, Debug)]
struct WarmRestarts {
    t_0: f64,
    t_mult: f64,
    eta_min: f64,
    t_i: f64,
    t_cur: f64,
}

impl WarmRestarts {
    /// torch's `step()`: one epoch further, restarting at the end of a period.
    fn advance(&mut self) {
        self.t_cur += 1.0;
        if self.t_cur >= self.t_i {
            self.t_cur %= self.t_i;
            self.t_i *= self.t_mult;
        }
    }

    /// torch's `step(epoch)` (`epoch >= 0`, fractional allowed): the period of `epoch` and the
    /// position in it, by torch's log formula.
    fn jump(&mut self, epoch: f64) {
        if epoch >= self.t_0 {
            if self.t_mult == 1.0 {
                self.t_cur = epoch % self.t_0;
            } else {
                let x = epoch / self.t_0 * (self.t_mult - 1.0) + 1.0;
                // Python's `int(math.log(x, T_mult))`: ln over ln, truncated
                let n = (x.ln() / self.t_mult.ln()) as i32;
                self.t_cur = epoch - self.t_0 * (self.t_mult.powi(n) - 1.0) / (self.t_mult - 1.0);
                self.t_i = self.t_0 * self.t_mult.powi(n);
            }
        } else {
            self.t_i = self.t_0;
            self.t_cur = epoch;
        }
    }

    /// torch's `get_lr` for a base rate.
    fn lr(&self, base: f64) -> f64 {
        self.eta_min + (base - self.eta_min) * (1.0 + (PI * self.t_cur / self.t_i).cos()) / 2.0
    }
}

/// A schedule applied to every param group of an optimizer (torch's `LRScheduler`).
pub struct Scheduler {
    /// the rate at an epoch from the base rate (torch's `_get_closed_form_lr`, or `get_lr` for
    /// schedules that have no other form)
    schedule: Schedule,
    /// for torch's chainable schedules, the next rate from the group's current one: another
    /// scheduler's changes (stepped in the same loop, or made by hand) carry through
    recursive: Option<Recursive>,
    /// a momentum schedule `f(epoch)` (the cycled momentum of OneCycleLR, CyclicLR)
    momentum: Option<Box<dyn Fn(i64) -> f64 + Send + Sync>>,
    base_lrs: Vec<f64>,
    last_epoch: i64,
    last_lr: Vec<f64>,
    /// the last epoch `step` may reach (OneCycleLR's total steps)
    max_epoch: Option<i64>,
    /// CosineAnnealingWarmRestarts' period state (its rates come from it, not `schedule`)
    restarts: Option<WarmRestarts>,
    /// `false` for schedules torch gives no closed form (MultiplicativeLR): `step_to` then applies
    /// the recursive rule to the groups' current rates, as torch's `step(epoch)` calls `get_lr()`
    jumps_by_closed_form: bool,
}

/// Each group's `initial_lr`, recorded from its current rate where no scheduler did yet (torch's
/// `group.setdefault("initial_lr", group["lr"])`).
fn initial_lrs(opt: &mut dyn Optimizer) -> Vec<f64> {
    (0..opt.num_groups())
        .map(|g| {
            opt.initial_lr(g).unwrap_or_else(|| {
                let lr = opt.lr(g);
                opt.set_initial_lr(g, lr);
                lr
            })
        })
        .collect()
}

impl Scheduler {
    /// A scheduler with a custom schedule `f(epoch, base_lr) -> lr` (as `LambdaLR`).
    pub fn new(opt: &mut dyn Optimizer, schedule: impl Fn(i64, f64) -> f64 + Send + Sync + 'static) -> Self {
        Self::per_group(opt, move |_, e, b| schedule(e, b))
    }

    /// A scheduler with a schedule per group: `f(group, epoch, base_lr) -> lr`.
    fn per_group(
        opt: &mut dyn Optimizer,
        schedule: impl Fn(usize, i64, f64) -> f64 + Send + Sync + 'static,
    ) -> Self {
        let base_lrs = initial_lrs(opt);
        let mut s = Scheduler {
            schedule: Box::new(schedule),
            recursive: None,
            momentum: None,
            last_lr: base_lrs.clone(),
            base_lrs,
            last_epoch: -1,
            max_epoch: None,
            restarts: None,
            jumps_by_closed_form: true,
        };
        s.step_to(opt, 0);
        s
    }

    /// A chainable scheduler: `closed(epoch, base)` for [`Scheduler::step_to`], `next(epoch,
    /// current, base)` for [`Scheduler::step`] and for its epoch 0, from the groups' current rates.
    fn chainable(
        opt: &mut dyn Optimizer,
        closed: impl Fn(i64, f64) -> f64 + Send + Sync + 'static,
        next: impl Fn(i64, f64, f64) -> f64 + Send + Sync + 'static,
    ) -> Self {
        Self::chainable_per_group(opt, move |_, e, b| closed(e, b), move |_, e, lr, b| next(e, lr, b))
    }

    /// [`Scheduler::chainable`] with schedules per group (`group` first).
    fn chainable_per_group(
        opt: &mut dyn Optimizer,
        closed: impl Fn(usize, i64, f64) -> f64 + Send + Sync + 'static,
        next: impl Fn(usize, i64, f64, f64) -> f64 + Send + Sync + 'static,
    ) -> Self {
        let base_lrs = initial_lrs(opt);
        let mut s = Scheduler {
            schedule: Box::new(closed),
            recursive: Some(Box::new(next)),
            momentum: None,
            last_lr: base_lrs.clone(),
            base_lrs,
            last_epoch: -1,
            max_epoch: None,
            restarts: None,
            jumps_by_closed_form: true,
        };
        s.advance(opt, 0);
        s
    }

    /// Sets every group's rate (and momentum) for `epoch`: the recursive form from the current
    /// rates where the schedule has one, else the closed form.
    fn advance(&mut self, opt: &mut dyn Optimizer, epoch: i64) {
        self.last_epoch = epoch;
        // A group added since (`add_param_group`) joins with its current rate as its base: torch's
        // chainable schedules scale every group's current rate.
        for g in self.base_lrs.len()..opt.num_groups() {
            self.base_lrs.push(opt.lr(g));
            self.last_lr.push(opt.lr(g));
        }
        if let Some(r) = &mut self.restarts {
            if epoch == 0 {
                r.jump(0.0);
            } else {
                r.advance();
            }
        }
        for (g, &base) in self.base_lrs.iter().enumerate() {
            let lr = match (&self.restarts, &self.recursive) {
                (Some(r), _) => r.lr(base),
                (None, Some(next)) => next(g, epoch, opt.lr(g), base),
                (None, None) => (self.schedule)(g, epoch, base),
            };
            self.last_lr[g] = lr;
            opt.set_lr(g, lr);
            if let Some(momentum) = &self.momentum {
                opt.set_momentum(g, momentum(epoch));
            }
        }
    }

    /// Advances one epoch (or step) and sets the optimizer's learning rates. Chainable schedules
    /// (step, multi-step, exponential, linear, constant, polynomial, multiplicative, cosine)
    /// compute the next rate from the current one, as torch: schedulers stepped one after the other
    /// compose, and a rate set by hand carries on.
    pub fn step(&mut self, opt: &mut dyn Optimizer) -> Result<()> {
        let epoch = next_epoch(self.last_epoch)?;
        if let Some(max) = self.max_epoch {
            if epoch > max {
                return Err(Error::msg(format!(
                    "Tried to step {epoch} times. The specified number of total steps is {max}"
                )));
            }
        }
        self.advance(opt, epoch);
        Ok(())
    }

    /// Jumps to `epoch` (the closed form from the base rates, as torch's `step(epoch)`; for
    /// MultiplicativeLR, which torch gives no closed form, the factor of `epoch` applied to the
    /// current rates, none at epoch 0).
    pub fn step_to(&mut self, opt: &mut dyn Optimizer, epoch: i64) {
        if let Some(r) = &mut self.restarts {
            r.jump(epoch.max(0) as f64);
        }
        self.last_epoch = epoch;
        self.last_lr = match (&self.restarts, &self.recursive) {
            (Some(r), _) => self.base_lrs.iter().map(|&b| r.lr(b)).collect(),
            (None, Some(next)) if !self.jumps_by_closed_form => {
                self.base_lrs.iter().enumerate().map(|(g, &b)| next(g, epoch, opt.lr(g), b)).collect()
            }
            (None, _) => {
                self.base_lrs.iter().enumerate().map(|(g, &b)| (self.schedule)(g, epoch, b)).collect()
            }
        };
        self.apply_last_lr(opt, epoch);
    }

    /// Sets the groups' rates to `last_lr` (and the momentum of `epoch`).
    fn apply_last_lr(&self, opt: &mut dyn Optimizer, epoch: i64) {
        for (g, &lr) in self.last_lr.iter().enumerate() {
            opt.set_lr(g, lr);
            if let Some(momentum) = &self.momentum {
                opt.set_momentum(g, momentum(epoch));
            }
        }
    }

    /// torch's `step(epoch)` with a fractional epoch, for [`CosineAnnealingWarmRestarts`]
    /// stepped within an epoch (`sched.step_epoch(&mut opt, epoch as f64 + i as f64 / iters)`):
    /// `T_cur` and `T_i` by torch's formula (the log formula past `T_0` when `T_mult > 1`),
    /// `last_epoch` the epoch's floor. Plain [`Scheduler::step`]s may follow (torch's
    /// interleaving: `T_cur + 1`). Other schedulers take only whole epochs here (as
    /// [`Scheduler::step_to`]). A negative epoch is torch's error.
    pub fn step_epoch(&mut self, opt: &mut dyn Optimizer, epoch: f64) -> Result<()> {
        if epoch < 0.0 || epoch.is_nan() {
            return Err(Error::msg(format!("Expected non-negative epoch, but got {epoch}")));
        }
        if epoch > MAX_EPOCH {
            return Err(Error::msg(format!("epoch {epoch} is beyond the largest supported epoch (2^53)")));
        }
        if let Some(mut r) = self.restarts {
            r.jump(epoch);
            self.restarts = Some(r);
            self.last_epoch = epoch.floor() as i64;
            self.last_lr = self.base_lrs.iter().map(|&b| r.lr(b)).collect();
            self.apply_last_lr(opt, self.last_epoch);
            return Ok(());
        }
        if epoch.fract() != 0.0 {
            return Err(Error::msg(format!(
                "step_epoch: a fractional epoch ({epoch}) needs CosineAnnealingWarmRestarts; this schedule takes \
                 whole epochs"
            )));
        }
        self.step_to(opt, epoch as i64);
        Ok(())
    }

    /// The learning rates set by the last step (torch's `get_last_lr()`).
    pub fn get_last_lr(&self) -> &[f64] {
        &self.last_lr
    }

    /// The current epoch counter.
    pub fn last_epoch(&self) -> i64 {
        self.last_epoch
    }

    /// What resuming needs, under torch's attribute names: `last_epoch`, `base_lrs.{group}` and
    /// `_last_lr.{group}` (store it with [`OptimizerState::set_extra`](super::OptimizerState::set_extra)).
    pub fn state_dict(&self) -> Vec<(String, f64)> {
        let mut out = vec![("last_epoch".to_string(), self.last_epoch as f64)];
        out.extend(self.base_lrs.iter().enumerate().map(|(g, &v)| (format!("base_lrs.{g}"), v)));
        out.extend(self.last_lr.iter().enumerate().map(|(g, &v)| (format!("_last_lr.{g}"), v)));
        if let Some(r) = &self.restarts {
            out.extend([("T_cur".to_string(), r.t_cur), ("T_i".to_string(), r.t_i)]);
        }
        out
    }

    /// Restores [`Scheduler::state_dict`]'s output for as many groups as this scheduler has. As
    /// torch's, it leaves the optimizer alone (its learning rates come back with its own state).
    pub fn load_state_dict(&mut self, state: &[(String, f64)]) -> Result<()> {
        self.last_epoch = required_epoch(state, "last_epoch", true)?;
        for g in 0..self.base_lrs.len() {
            self.base_lrs[g] = required(state, &format!("base_lrs.{g}"))?;
            self.last_lr[g] = required(state, &format!("_last_lr.{g}"))?;
        }
        if let Some(r) = &mut self.restarts {
            // (a state saved before these keys existed: the closed form of the epoch)
            match (optional(state, "T_cur"), optional(state, "T_i")) {
                (Some(t_cur), Some(t_i)) => (r.t_cur, r.t_i) = (t_cur, t_i),
                _ => r.jump(self.last_epoch.max(0) as f64),
            }
        }
        Ok(())
    }
}

impl LRScheduler for Scheduler {
    fn step(&mut self, opt: &mut dyn Optimizer) -> Result<()> {
        Scheduler::step(self, opt)
    }

    fn get_last_lr(&self) -> Vec<f64> {
        self.last_lr.clone()
    }

    fn state_dict(&self) -> Vec<(String, f64)> {
        Scheduler::state_dict(self)
    }

    fn load_state_dict(&mut self, state: &[(String, f64)]) -> Result<()> {
        Scheduler::load_state_dict(self, state)
    }
}

/// The value of `key` in a scheduler state, if there.
fn optional(state: &[(String, f64)], key: &str) -> Option<f64> {
    state.iter().find(|(k, _)| k == key).map(|&(_, v)| v)
}

/// torch's check of a per-group lambda list: one per param group.
fn check_lambdas(opt: &dyn Optimizer, got: usize) -> Result<()> {
    let n = opt.num_groups();
    if got != n {
        return Err(Error::msg(format!("Expected {n} lr_lambdas, but got {got}")));
    }
    Ok(())
}

/// A learning-rate factor of the epoch (torch's `lr_lambda`), boxed for per-group lists.
pub type LrLambda = Box<dyn Fn(i64) -> f64 + Send + Sync>;

/// The value of `key` in a scheduler state, or an error naming it.
fn required(state: &[(String, f64)], key: &str) -> Result<f64> {
    state
        .iter()
        .find(|(k, _)| k == key)
        .map(|&(_, v)| v)
        .ok_or_else(|| Error::msg(format!("scheduler state_dict: missing key '{key}'")))
}

/// The largest epoch or step count a scheduler takes: every integer up to it is exact in the `f64`
/// its state is saved as.
const MAX_EPOCH: f64 = 9_007_199_254_740_992.0;

/// `epoch + 1`, or an error past [`MAX_EPOCH`] (a state loaded with a huge `last_epoch`).
fn next_epoch(epoch: i64) -> Result<i64> {
    match epoch.checked_add(1) {
        Some(next) if next as f64 <= MAX_EPOCH => Ok(next),
        _ => Err(Error::msg(format!("cannot step past epoch {epoch}: the largest supported epoch is 2^53"))),
    }
}

/// The whole-number entry `key` of a scheduler state (an epoch or a counter): from -2^53 when
/// `signed` (a [`Scheduler`] can be stepped to any epoch), else from 0, to [`MAX_EPOCH`].
fn required_epoch(state: &[(String, f64)], key: &str, signed: bool) -> Result<i64> {
    epoch_entry(key, required(state, key)?, signed)
}

/// `value` of the state entry `key` as a whole number (see [`required_epoch`]).
fn epoch_entry(key: &str, value: f64, signed: bool) -> Result<i64> {
    let min = if signed { -MAX_EPOCH } else { 0.0 };
    if value.fract() == 0.0 && value >= min && value <= MAX_EPOCH {
        Ok(value as i64)
    } else {
        let from = if signed { "-2^53" } else { "0" };
        Err(Error::msg(format!(
            "scheduler state_dict: '{key}' must be a whole number from {from} to 2^53, got {value}"
        )))
    }
}

/// `lr = base * gamma^(epoch // step_size)`.
pub struct StepLR;
impl StepLR {
    /// torch's `StepLR(optimizer, step_size, gamma=0.1)`.
    #[allow(clippy::new_ret_no_self)]
    pub fn new(opt: &mut dyn Optimizer, step_size: usize, gamma: f64) -> Scheduler {
        let step = step_size.max(1) as i64;
        Scheduler::chainable(
            opt,
            move |e, b| b * gamma.powi((e / step) as i32),
            move |e, lr, _| if e == 0 || e % step != 0 { lr } else { lr * gamma },
        )
    }
}

/// `lr = base * gamma^(number of milestones <= epoch)` (a milestone listed twice counts twice).
pub struct MultiStepLR;
impl MultiStepLR {
    /// torch's `MultiStepLR(optimizer, milestones, gamma=0.1)`.
    #[allow(clippy::new_ret_no_self)]
    pub fn new(opt: &mut dyn Optimizer, mut milestones: Vec<i64>, gamma: f64) -> Scheduler {
        milestones.sort_unstable();
        let at = milestones.clone();
        Scheduler::chainable(
            opt,
            move |e, b| b * gamma.powi(milestones.partition_point(|&m| m <= e) as i32),
            move |e, lr, _| lr * gamma.powi(at.iter().filter(|&&m| m == e).count() as i32),
        )
    }
}

/// `lr = base * gamma^epoch`.
pub struct ExponentialLR;
impl ExponentialLR {
    /// torch's `ExponentialLR(optimizer, gamma)`.
    #[allow(clippy::new_ret_no_self)]
    pub fn new(opt: &mut dyn Optimizer, gamma: f64) -> Scheduler {
        Scheduler::chainable(
            opt,
            move |e, b| b * gamma.powi(e as i32),
            move |e, lr, _| if e == 0 { lr } else { lr * gamma },
        )
    }
}

/// `lr = lr * f(epoch)` at every epoch after the first.
pub struct MultiplicativeLR;
impl MultiplicativeLR {
    /// torch's `MultiplicativeLR(optimizer, lr_lambda)`.
    #[allow(clippy::new_ret_no_self)]
    pub fn new(opt: &mut dyn Optimizer, lr_lambda: impl Fn(i64) -> f64 + Send + Sync + 'static) -> Scheduler {
        let f = std::sync::Arc::new(lr_lambda);
        let g = f.clone();
        let mut s = Scheduler::chainable(
            opt,
            move |e, b| (1..=e).fold(b, |lr, k| lr * f(k)),
            move |e, lr, _| if e > 0 { lr * g(e) } else { lr },
        );
        s.jumps_by_closed_form = false;
        s
    }

    /// torch's `MultiplicativeLR(optimizer, [lr_lambda, ...])`: one factor function per param
    /// group (torch's error "Expected {n} lr_lambdas, but got {m}" otherwise).
    pub fn with_lambdas(opt: &mut dyn Optimizer, lr_lambdas: Vec<LrLambda>) -> Result<Scheduler> {
        check_lambdas(opt, lr_lambdas.len())?;
        let f = std::sync::Arc::new(lr_lambdas);
        let g = f.clone();
        // (a group added later has no lambda: its rate stays, as torch's zip over the lambdas)
        let mut s = Scheduler::chainable_per_group(
            opt,
            move |i, e, b| f.get(i).map_or(b, |f| (1..=e).fold(b, |lr, k| lr * f(k))),
            move |i, e, lr, _| match g.get(i) {
                Some(g) if e > 0 => lr * g(e),
                _ => lr,
            },
        );
        s.jumps_by_closed_form = false;
        Ok(s)
    }
}

/// Cosine from `base` down to `eta_min` over `t_max` epochs (and back up after, as torch's).
pub struct CosineAnnealingLR;
impl CosineAnnealingLR {
    /// torch's `CosineAnnealingLR(optimizer, T_max, eta_min=0)`.
    #[allow(clippy::new_ret_no_self)]
    pub fn new(opt: &mut dyn Optimizer, t_max: usize, eta_min: f64) -> Scheduler {
        let period = t_max.max(1) as i64;
        let t = period as f64;
        Scheduler::chainable(
            opt,
            move |e, b| eta_min + (b - eta_min) * (1.0 + (PI * e as f64 / t).cos()) / 2.0,
            move |e, lr, b| {
                if e == 0 {
                    lr
                } else if (e - 1 - period).rem_euclid(2 * period) == 0 {
                    // At the bottom of a period, the rate climbs back as torch's restart step.
                    lr + (b - eta_min) * (1.0 - (PI / t).cos()) / 2.0
                } else {
                    (1.0 + (PI * e as f64 / t).cos()) / (1.0 + (PI * (e - 1) as f64 / t).cos())
                        * (lr - eta_min)
                        + eta_min
                }
            },
        )
    }
}

/// `lr = base * f(epoch)`.
pub struct LambdaLR;
impl LambdaLR {
    /// torch's `LambdaLR(optimizer, lr_lambda)`.
    #[allow(clippy::new_ret_no_self)]
    pub fn new(opt: &mut dyn Optimizer, lr_lambda: impl Fn(i64) -> f64 + Send + Sync + 'static) -> Scheduler {
        Scheduler::new(opt, move |e, b| b * lr_lambda(e))
    }

    /// torch's `LambdaLR(optimizer, [lr_lambda, ...])`: one factor function per param group
    /// (torch's error "Expected {n} lr_lambdas, but got {m}" otherwise).
    pub fn with_lambdas(opt: &mut dyn Optimizer, lr_lambdas: Vec<LrLambda>) -> Result<Scheduler> {
        check_lambdas(opt, lr_lambdas.len())?;
        // (a group added later has no lambda: it keeps its base rate)
        Ok(Scheduler::per_group(opt, move |i, e, b| lr_lambdas.get(i).map_or(b, |f| b * f(e))))
    }
}

/// A linear ramp of the factor from `start_factor` to `end_factor` over `total_iters` epochs.
pub struct LinearLR;
impl LinearLR {
    /// torch's `LinearLR(optimizer, start_factor=1/3, end_factor=1.0, total_iters=5)`; the factors
    /// must be in (0, 1] and [0, 1].
    #[allow(clippy::new_ret_no_self)]
    pub fn new(
        opt: &mut dyn Optimizer,
        start_factor: f64,
        end_factor: f64,
        total_iters: usize,
    ) -> Result<Scheduler> {
        if !(start_factor > 0.0 && start_factor <= 1.0) {
            return Err(Error::msg(
                "Starting multiplicative factor expected to be greater than 0 and less or equal to 1.",
            ));
        }
        if !(0.0..=1.0).contains(&end_factor) {
            return Err(Error::msg("Ending multiplicative factor expected to be between 0 and 1."));
        }
        let total = total_iters as i64;
        let (start, end) = (start_factor, end_factor);
        Ok(Scheduler::chainable(
            opt,
            move |e, b| match total {
                0 => b * start,
                _ => b * (start + (end - start) * e.min(total) as f64 / total as f64),
            },
            move |e, lr, _| {
                if e == 0 {
                    lr * start
                } else if e > total {
                    lr
                } else {
                    lr * (1.0 + (end - start) / (total as f64 * start + (e - 1) as f64 * (end - start)))
                }
            },
        ))
    }
}

/// The rate times `factor` until epoch `total_iters`, then the rate itself.
pub struct ConstantLR;
impl ConstantLR {
    /// torch's `ConstantLR(optimizer, factor=1/3, total_iters=5)`; `factor` must be in [0, 1].
    #[allow(clippy::new_ret_no_self)]
    pub fn new(opt: &mut dyn Optimizer, factor: f64, total_iters: usize) -> Result<Scheduler> {
        if !(0.0..=1.0).contains(&factor) {
            return Err(Error::msg("Constant multiplicative factor expected to be between 0 and 1."));
        }
        let total = total_iters as i64;
        Ok(Scheduler::chainable(
            opt,
            move |e, b| if e >= total { b } else { b * factor },
            move |e, lr, _| {
                if e == 0 {
                    lr * factor
                } else if e != total {
                    lr
                } else {
                    lr * (1.0 / factor)
                }
            },
        ))
    }
}

/// A polynomial decay to zero over `total_iters` epochs: `base * (1 - epoch / total_iters)^power`.
pub struct PolynomialLR;
impl PolynomialLR {
    /// torch's `PolynomialLR(optimizer, total_iters=5, power=1.0)`.
    #[allow(clippy::new_ret_no_self)]
    pub fn new(opt: &mut dyn Optimizer, total_iters: usize, power: f64) -> Scheduler {
        let total = total_iters as i64;
        Scheduler::chainable(
            opt,
            move |e, b| match total {
                0 => b,
                _ => b * (1.0 - e.min(total) as f64 / total as f64).powf(power),
            },
            move |e, lr, _| {
                if e == 0 || e > total {
                    lr
                } else {
                    let t = total as f64;
                    lr * ((1.0 - e as f64 / t) / (1.0 - (e - 1) as f64 / t)).powf(power)
                }
            },
        )
    }
}
