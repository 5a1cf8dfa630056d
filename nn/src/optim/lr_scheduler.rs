//! `torch.optim.lr_scheduler`: learning-rate schedules, in torch's closed forms.
//!
//! A scheduler does not borrow its optimizer (so both can be used in a loop): pass the optimizer to
//! each `step`. Constructing one applies the epoch-0 learning rate, as torch does.
//!
//! ```
//! use oxtorch_nn::optim::{lr_scheduler::{CosineAnnealingLR, LinearLR, SequentialLR}, Optimizer, SgdOptions, SGD};
//! use oxtorch_tensor::{Result, Tensor};
//! # fn main() -> Result<()> {
//! let p = Tensor::zeros([2], ())?.requires_grad_(true)?;
//! let mut opt = SGD::new(vec![p], SgdOptions { lr: 0.1, ..Default::default() })?;
//! // 5 warm-up steps, then cosine decay over 95.
//! let warmup = LinearLR::new(&mut opt, 0.1, 1.0, 5);
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

/// The learning rate of one group at an epoch, from its base learning rate.
type Schedule = Box<dyn Fn(i64, f64) -> f64 + Send + Sync>;

/// A schedule applied to every param group of an optimizer (torch's `LRScheduler`).
pub struct Scheduler {
    schedule: Schedule,
    /// a momentum schedule `f(epoch)` (OneCycleLR's cycled momentum), set on every group
    momentum: Option<Box<dyn Fn(i64) -> f64 + Send + Sync>>,
    base_lrs: Vec<f64>,
    last_epoch: i64,
    last_lr: Vec<f64>,
    /// For torch's chainable schedules (step, multi-step, exponential, linear, cosine): the rate
    /// they approach (0, or cosine's `eta_min`), relative to which others' changes scale the
    /// schedule (see [`Scheduler::step`]).
    chain_floor: Option<f64>,
    /// Per group, the product of the changes others made to the rate since this schedule set it
    /// (1 while it runs alone).
    chain_scale: Vec<f64>,
}

impl Scheduler {
    /// A scheduler with a custom schedule `f(epoch, base_lr) -> lr`.
    pub fn new(opt: &mut dyn Optimizer, schedule: impl Fn(i64, f64) -> f64 + Send + Sync + 'static) -> Self {
        let base_lrs: Vec<f64> = (0..opt.num_groups()).map(|g| opt.lr(g)).collect();
        let mut s = Scheduler {
            schedule: Box::new(schedule),
            momentum: None,
            last_lr: base_lrs.clone(),
            base_lrs,
            last_epoch: -1,
            chain_floor: None,
            chain_scale: vec![1.0; opt.num_groups()],
        };
        s.step_to(opt, 0);
        s
    }

    /// Marks a schedule that composes with others as torch's chainable ones do.
    fn chainable(mut self, floor: f64) -> Self {
        self.chain_floor = Some(floor);
        self
    }

    /// Advances one epoch (or step) and sets the optimizer's learning rates.
    ///
    /// Chaining, as torch: where a chainable schedule (step, multi-step, exponential, linear,
    /// cosine) finds a group's rate changed since it set it (by another scheduler stepped in the
    /// same loop, or by hand), it keeps that change as a factor on its own schedule, `floor +
    /// scale · (f(e) - floor)`; so `ExponentialLR` and `MultiStepLR` stepped one after the other
    /// multiply. Alone, it sets its closed form `f(e)`. (Unlike torch, a change made while this
    /// schedule's last rate sat at its floor cannot be kept as a factor and is overwritten.)
    pub fn step(&mut self, opt: &mut dyn Optimizer) -> Result<()> {
        let epoch = self.last_epoch + 1;
        let Some(floor) = self.chain_floor else {
            self.step_to(opt, epoch);
            return Ok(());
        };
        self.last_epoch = epoch;
        for (g, &base) in self.base_lrs.iter().enumerate() {
            let (current, last, scale) = (opt.lr(g), self.last_lr[g], &mut self.chain_scale[g]);
            if current != last && last != floor {
                *scale *= (current - floor) / (last - floor);
            }
            let lr = floor + *scale * ((self.schedule)(epoch, base) - floor);
            self.last_lr[g] = lr;
            opt.set_lr(g, lr);
        }
        Ok(())
    }

    /// Jumps to `epoch`.
    pub fn step_to(&mut self, opt: &mut dyn Optimizer, epoch: i64) {
        self.last_epoch = epoch;
        self.chain_scale.fill(1.0);
        self.last_lr = self.base_lrs.iter().map(|&b| (self.schedule)(epoch, b)).collect();
        for (g, &lr) in self.last_lr.iter().enumerate() {
            opt.set_lr(g, lr);
            if let Some(momentum) = &self.momentum {
                opt.set_momentum(g, momentum(epoch));
            }
        }
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
    /// `_last_lr.{group}`, plus `chain_scale.{group}` (see [`Scheduler::step`]) (store it with [`OptimizerState::set_extra`](super::OptimizerState::set_extra)).
    pub fn state_dict(&self) -> Vec<(String, f64)> {
        let mut out = vec![("last_epoch".to_string(), self.last_epoch as f64)];
        out.extend(self.base_lrs.iter().enumerate().map(|(g, &v)| (format!("base_lrs.{g}"), v)));
        out.extend(self.last_lr.iter().enumerate().map(|(g, &v)| (format!("_last_lr.{g}"), v)));
        out.extend(self.chain_scale.iter().enumerate().map(|(g, &v)| (format!("chain_scale.{g}"), v)));
        out
    }

    /// Restores [`Scheduler::state_dict`]'s output for as many groups as this scheduler has. As
    /// torch's, it leaves the optimizer alone (its learning rates come back with its own state).
    pub fn load_state_dict(&mut self, state: &[(String, f64)]) -> Result<()> {
        self.last_epoch = required(state, "last_epoch")? as i64;
        for g in 0..self.base_lrs.len() {
            self.base_lrs[g] = required(state, &format!("base_lrs.{g}"))?;
            self.last_lr[g] = required(state, &format!("_last_lr.{g}"))?;
            self.chain_scale[g] = required(state, &format!("chain_scale.{g}")).unwrap_or(1.0);
        }
        Ok(())
    }
}

/// The value of `key` in a scheduler state, or an error naming it.
fn required(state: &[(String, f64)], key: &str) -> Result<f64> {
    state
        .iter()
        .find(|(k, _)| k == key)
        .map(|&(_, v)| v)
        .ok_or_else(|| Error::msg(format!("scheduler state_dict: missing key '{key}'")))
}

/// `lr = base * gamma^(epoch // step_size)`.
pub struct StepLR;
impl StepLR {
    /// torch's `StepLR(optimizer, step_size, gamma=0.1)`.
    #[allow(clippy::new_ret_no_self)]
    pub fn new(opt: &mut dyn Optimizer, step_size: usize, gamma: f64) -> Scheduler {
        let step = step_size.max(1) as i64;
        Scheduler::new(opt, move |e, b| b * gamma.powi((e / step) as i32)).chainable(0.0)
    }
}

/// `lr = base * gamma^(number of milestones <= epoch)`.
pub struct MultiStepLR;
impl MultiStepLR {
    /// torch's `MultiStepLR(optimizer, milestones, gamma=0.1)`.
    #[allow(clippy::new_ret_no_self)]
    pub fn new(opt: &mut dyn Optimizer, mut milestones: Vec<i64>, gamma: f64) -> Scheduler {
        milestones.sort_unstable();
        Scheduler::new(opt, move |e, b| b * gamma.powi(milestones.partition_point(|&m| m <= e) as i32))
            .chainable(0.0)
    }
}

/// `lr = base * gamma^epoch`.
pub struct ExponentialLR;
impl ExponentialLR {
    /// torch's `ExponentialLR(optimizer, gamma)`.
    #[allow(clippy::new_ret_no_self)]
    pub fn new(opt: &mut dyn Optimizer, gamma: f64) -> Scheduler {
        Scheduler::new(opt, move |e, b| b * gamma.powi(e as i32)).chainable(0.0)
    }
}

/// Cosine from `base` down to `eta_min` over `t_max` epochs (and back up after, as torch's).
pub struct CosineAnnealingLR;
impl CosineAnnealingLR {
    /// torch's `CosineAnnealingLR(optimizer, T_max, eta_min=0)`.
    #[allow(clippy::new_ret_no_self)]
    pub fn new(opt: &mut dyn Optimizer, t_max: usize, eta_min: f64) -> Scheduler {
        let t_max = t_max.max(1) as f64;
        Scheduler::new(opt, move |e, b| eta_min + (b - eta_min) * (1.0 + (PI * e as f64 / t_max).cos()) / 2.0)
            .chainable(eta_min)
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
}

/// A linear ramp of the factor from `start_factor` to `end_factor` over `total_iters` epochs.
pub struct LinearLR;
impl LinearLR {
    /// torch's `LinearLR(optimizer, start_factor=1/3, end_factor=1.0, total_iters=5)`.
    #[allow(clippy::new_ret_no_self)]
    pub fn new(opt: &mut dyn Optimizer, start_factor: f64, end_factor: f64, total_iters: usize) -> Scheduler {
        let total = total_iters.max(1) as f64;
        Scheduler::new(opt, move |e, b| {
            b * (start_factor + (end_factor - start_factor) * (e as f64).min(total) / total)
        })
        .chainable(0.0)
    }
}

/// The 1cycle policy: warm up from `max_lr / div_factor` to `max_lr`, then anneal to
/// `initial / final_div_factor`, with the momentum cycled inversely between `max_momentum` and
/// `base_momentum` (torch's `OneCycleLR`).
pub struct OneCycleLR;

/// How [`OneCycleLR`] cycles the optimizer's momentum (SGD's and RMSprop's `momentum`, Adam's
/// `beta1`): torch's `cycle_momentum`, `base_momentum` and `max_momentum`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CycleMomentum {
    /// cycle the momentum at all (torch's default `True`)
    pub enabled: bool,
    /// the momentum at the peak learning rate (0.85)
    pub base: f64,
    /// the momentum at the start and end of the cycle (0.95)
    pub max: f64,
}

impl Default for CycleMomentum {
    fn default() -> Self {
        CycleMomentum { enabled: true, base: 0.85, max: 0.95 }
    }
}

impl CycleMomentum {
    /// torch's `cycle_momentum=False`: the learning rate alone follows the cycle.
    pub fn off() -> Self {
        CycleMomentum { enabled: false, ..Default::default() }
    }
}

impl OneCycleLR {
    /// torch's `OneCycleLR(optimizer, max_lr, total_steps, pct_start=0.3, anneal_strategy="cos",
    /// div_factor=25, final_div_factor=1e4, three_phase=False)` with torch's default momentum cycle
    /// (0.95 → 0.85 → 0.95; see [`OneCycleLR::with_momentum`]), which needs an optimizer with a
    /// momentum or beta1.
    #[allow(clippy::new_ret_no_self, clippy::too_many_arguments)]
    pub fn new(
        opt: &mut dyn Optimizer,
        max_lr: f64,
        total_steps: usize,
        pct_start: f64,
        anneal_strategy: &str,
        div_factor: f64,
        final_div_factor: f64,
        three_phase: bool,
    ) -> Result<Scheduler> {
        let args = (pct_start, anneal_strategy, div_factor, final_div_factor, three_phase);
        Self::with_momentum(opt, max_lr, total_steps, args, CycleMomentum::default())
    }

    /// [`OneCycleLR::new`] with its remaining arguments `(pct_start, anneal_strategy, div_factor,
    /// final_div_factor, three_phase)` and an explicit momentum cycle
    /// ([`CycleMomentum::off`] for `cycle_momentum=False`).
    pub fn with_momentum(
        opt: &mut dyn Optimizer,
        max_lr: f64,
        total_steps: usize,
        (pct_start, anneal_strategy, div_factor, final_div_factor, three_phase): (f64, &str, f64, f64, bool),
        momentum: CycleMomentum,
    ) -> Result<Scheduler> {
        if total_steps == 0 {
            return Err(Error::msg("Expected positive integer total_steps, but got 0"));
        }
        if !(0.0..=1.0).contains(&pct_start) {
            return Err(Error::msg(format!("Expected float between 0 and 1 pct_start, but got {pct_start}")));
        }
        if momentum.enabled && (0..opt.num_groups()).any(|g| opt.momentum(g).is_none()) {
            return Err(Error::msg(
                "optimizer must support momentum or beta1 with `cycle_momentum` option enabled",
            ));
        }
        let cos = match anneal_strategy {
            "cos" => true,
            "linear" => false,
            s => {
                return Err(Error::msg(format!(
                    "anneal_strategy must be one of 'cos' or 'linear', instead got {s}"
                )))
            }
        };
        let initial = max_lr / div_factor;
        let min_lr = initial / final_div_factor;
        let total = total_steps as f64;
        let (lo, hi) = (momentum.base, momentum.max);
        // (last step, lr from, lr to, momentum from, momentum to)
        let phases: Vec<(f64, f64, f64, f64, f64)> = if three_phase {
            vec![
                (pct_start * total - 1.0, initial, max_lr, hi, lo),
                (2.0 * pct_start * total - 2.0, max_lr, initial, lo, hi),
                (total - 1.0, initial, min_lr, hi, hi),
            ]
        } else {
            vec![(pct_start * total - 1.0, initial, max_lr, hi, lo), (total - 1.0, max_lr, min_lr, lo, hi)]
        };
        let anneal = move |start: f64, end: f64, pct: f64| {
            if cos {
                end + (start - end) / 2.0 * ((PI * pct).cos() + 1.0)
            } else {
                (end - start) * pct + start
            }
        };
        // The phase of a step and how far into it the step is.
        let at = std::sync::Arc::new(move |e: i64| {
            let step = e as f64;
            let mut start_step = 0.0;
            for (i, &(end_step, ..)) in phases.iter().enumerate() {
                if step <= end_step || i == phases.len() - 1 {
                    let pct = if end_step > start_step {
                        (step - start_step) / (end_step - start_step)
                    } else {
                        0.0
                    };
                    return (phases[i], pct);
                }
                start_step = end_step;
            }
            unreachable!("the last phase takes every step")
        });
        let momentum_at = at.clone();
        // torch sets each group's lr to `initial` first; the schedule ignores the base lr.
        let mut s = Scheduler::new(opt, move |e, _| {
            let ((_, from, to, ..), pct) = at(e);
            anneal(from, to, pct)
        });
        if momentum.enabled {
            s.momentum = Some(Box::new(move |e| {
                let ((.., from, to), pct) = momentum_at(e);
                anneal(from, to, pct)
            }));
            let epoch = s.last_epoch;
            s.step_to(opt, epoch);
        }
        Ok(s)
    }
}

/// Runs schedulers one after another, switching at `milestones` (torch's `SequentialLR`).
pub struct SequentialLR {
    schedulers: Vec<Scheduler>,
    milestones: Vec<i64>,
    last_epoch: i64,
}

impl SequentialLR {
    /// The first scheduler runs until `milestones[0]`, the second until `milestones[1]`, ...
    pub fn new(opt: &mut dyn Optimizer, schedulers: Vec<Scheduler>, milestones: Vec<i64>) -> Result<Self> {
        if schedulers.len() != milestones.len() + 1 {
            return Err(Error::msg(format!(
                "Sequential Schedulers expects number of schedulers provided to be one more than the number of milestone points, but got number of schedulers {} and the number of milestones to be equal to {}",
                schedulers.len(),
                milestones.len()
            )));
        }
        let mut s = SequentialLR { schedulers, milestones, last_epoch: 0 };
        // Every scheduler's constructor set the lr; the first one's epoch 0 is what applies.
        let base: Vec<f64> = s.schedulers[0].base_lrs.clone();
        for sch in &mut s.schedulers {
            sch.base_lrs = base.clone();
        }
        s.schedulers[0].step_to(opt, 0);
        Ok(s)
    }

    /// Advances one epoch.
    pub fn step(&mut self, opt: &mut dyn Optimizer) -> Result<()> {
        self.last_epoch += 1;
        let idx = self.milestones.partition_point(|&m| m <= self.last_epoch);
        if idx > 0 && self.milestones[idx - 1] == self.last_epoch {
            self.schedulers[idx].step_to(opt, 0);
        } else {
            self.schedulers[idx].step(opt)?;
        }
        Ok(())
    }

    /// The learning rates set by the last step.
    pub fn get_last_lr(&self) -> Vec<f64> {
        let idx = self.milestones.partition_point(|&m| m <= self.last_epoch);
        self.schedulers[idx].get_last_lr().to_vec()
    }

    /// What resuming needs: `last_epoch` and each scheduler's [`Scheduler::state_dict`] under
    /// `_schedulers.{i}.` (torch's layout).
    pub fn state_dict(&self) -> Vec<(String, f64)> {
        let mut out = vec![("last_epoch".to_string(), self.last_epoch as f64)];
        for (i, s) in self.schedulers.iter().enumerate() {
            out.extend(s.state_dict().into_iter().map(|(k, v)| (format!("_schedulers.{i}.{k}"), v)));
        }
        out
    }

    /// Restores [`SequentialLR::state_dict`]'s output.
    pub fn load_state_dict(&mut self, state: &[(String, f64)]) -> Result<()> {
        self.last_epoch = required(state, "last_epoch")? as i64;
        for (i, s) in self.schedulers.iter_mut().enumerate() {
            let prefix = format!("_schedulers.{i}.");
            let inner: Vec<(String, f64)> = state
                .iter()
                .filter_map(|(k, v)| k.strip_prefix(&prefix).map(|k| (k.to_string(), *v)))
                .collect();
            s.load_state_dict(&inner)?;
        }
        Ok(())
    }
}

/// Lowers the learning rate when a metric stops improving (torch's `ReduceLROnPlateau`).
pub struct ReduceLROnPlateau {
    /// "min" or "max"
    mode_max: bool,
    factor: f64,
    patience: usize,
    threshold: f64,
    rel: bool,
    cooldown: usize,
    min_lrs: Vec<f64>,
    eps: f64,
    best: f64,
    num_bad_epochs: usize,
    cooldown_counter: usize,
}

impl ReduceLROnPlateau {
    /// torch's `ReduceLROnPlateau(optimizer, mode="min", factor=0.1, patience=10, threshold=1e-4,
    /// threshold_mode="rel", cooldown=0, min_lr=0, eps=1e-8)`.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        opt: &dyn Optimizer,
        mode: &str,
        factor: f64,
        patience: usize,
        threshold: f64,
        threshold_mode: &str,
        cooldown: usize,
        min_lr: f64,
        eps: f64,
    ) -> Result<Self> {
        if factor >= 1.0 {
            return Err(Error::msg("Factor should be < 1.0."));
        }
        let mode_max = match mode {
            "min" => false,
            "max" => true,
            m => return Err(Error::msg(format!("mode {m} is unknown!"))),
        };
        let rel = match threshold_mode {
            "rel" => true,
            "abs" => false,
            m => return Err(Error::msg(format!("threshold mode {m} is unknown!"))),
        };
        Ok(ReduceLROnPlateau {
            mode_max,
            factor,
            patience,
            threshold,
            rel,
            cooldown,
            min_lrs: vec![min_lr; opt.num_groups()],
            eps,
            best: if mode_max { f64::NEG_INFINITY } else { f64::INFINITY },
            num_bad_epochs: 0,
            cooldown_counter: 0,
        })
    }

    fn is_better(&self, a: f64) -> bool {
        match (self.mode_max, self.rel) {
            (false, true) => a < self.best * (1.0 - self.threshold),
            (false, false) => a < self.best - self.threshold,
            (true, true) => a > self.best * (1.0 + self.threshold),
            (true, false) => a > self.best + self.threshold,
        }
    }

    /// Records this epoch's metric and lowers the learning rates after `patience` bad epochs.
    pub fn step(&mut self, opt: &mut dyn Optimizer, metric: f64) {
        if self.is_better(metric) {
            self.best = metric;
            self.num_bad_epochs = 0;
        } else {
            self.num_bad_epochs += 1;
        }
        if self.cooldown_counter > 0 {
            self.cooldown_counter -= 1;
            self.num_bad_epochs = 0;
        }
        if self.num_bad_epochs > self.patience {
            for g in 0..opt.num_groups() {
                let old = opt.lr(g);
                let new = (old * self.factor).max(self.min_lrs[g]);
                if old - new > self.eps {
                    opt.set_lr(g, new);
                }
            }
            self.cooldown_counter = self.cooldown;
            self.num_bad_epochs = 0;
        }
    }

    /// What resuming needs, under torch's attribute names: `best`, `num_bad_epochs` and
    /// `cooldown_counter`.
    pub fn state_dict(&self) -> Vec<(String, f64)> {
        vec![
            ("best".to_string(), self.best),
            ("num_bad_epochs".to_string(), self.num_bad_epochs as f64),
            ("cooldown_counter".to_string(), self.cooldown_counter as f64),
        ]
    }

    /// Restores [`ReduceLROnPlateau::state_dict`]'s output.
    pub fn load_state_dict(&mut self, state: &[(String, f64)]) -> Result<()> {
        self.best = required(state, "best")?;
        self.num_bad_epochs = required(state, "num_bad_epochs")? as usize;
        self.cooldown_counter = required(state, "cooldown_counter")? as usize;
        Ok(())
    }
}
