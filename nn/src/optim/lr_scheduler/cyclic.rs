//! Cyclic schedules: `OneCycleLR`, `CyclicLR` (both cycling the momentum too) and
//! `CosineAnnealingWarmRestarts`.

use std::f64::consts::PI;

use oxtorch_tensor::{Error, Result};

use super::super::Optimizer;
use super::{Scheduler, WarmRestarts};

/// How many steps [`OneCycleLR`] runs: torch's `total_steps`, or `epochs * steps_per_epoch`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OneCycleSteps {
    /// `total_steps`
    Total(usize),
    /// `epochs` and `steps_per_epoch` (their product)
    Epochs {
        /// the number of epochs
        epochs: usize,
        /// the steps (batches) in each
        steps_per_epoch: usize,
    },
}

/// torch's `_format_param` check of a per-group list.
fn check_group_list(opt: &dyn Optimizer, name: &str, values: &[f64]) -> Result<()> {
    let groups = opt.num_groups();
    if values.len() != groups {
        return Err(Error::msg(format!(
            "{name} must have the same length as optimizer.param_groups. {name} has {} values, param_groups has {groups}.",
            values.len()
        )));
    }
    Ok(())
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
        let max_lrs = vec![max_lr; opt.num_groups()];
        let args = (pct_start, anneal_strategy, div_factor, final_div_factor, three_phase);
        Self::with_group_max_lrs(opt, &max_lrs, OneCycleSteps::Total(total_steps), args, momentum)
    }

    /// torch's `OneCycleLR` in full: one `max_lr` per param group (torch's list form, with its
    /// error for a list of the wrong length), the length as `total_steps` or as `epochs` and
    /// `steps_per_epoch`, the remaining arguments `(pct_start, anneal_strategy, div_factor,
    /// final_div_factor, three_phase)`, and the momentum cycle.
    pub fn with_group_max_lrs(
        opt: &mut dyn Optimizer,
        max_lrs: &[f64],
        steps: OneCycleSteps,
        (pct_start, anneal_strategy, div_factor, final_div_factor, three_phase): (f64, &str, f64, f64, bool),
        momentum: CycleMomentum,
    ) -> Result<Scheduler> {
        let total_steps = match steps {
            OneCycleSteps::Total(0) => {
                return Err(Error::msg("Expected positive integer total_steps, but got 0"))
            }
            OneCycleSteps::Total(n) => n,
            OneCycleSteps::Epochs { epochs: 0, .. } => {
                return Err(Error::msg("Expected positive integer epochs, but got 0"))
            }
            OneCycleSteps::Epochs { steps_per_epoch: 0, .. } => {
                return Err(Error::msg("Expected positive integer steps_per_epoch, but got 0"))
            }
            OneCycleSteps::Epochs { epochs, steps_per_epoch } => {
                epochs.checked_mul(steps_per_epoch).filter(|&n| i64::try_from(n).is_ok()).ok_or_else(
                    || Error::msg(format!("OneCycleLR: {epochs} epochs of {steps_per_epoch} steps overflow")),
                )?
            }
        };
        check_group_list(opt, "max_lr", max_lrs)?;
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
        // Each group's rates: [initial_lr, max_lr, min_lr] (torch's group entries).
        let group_lrs: Vec<[f64; 3]> = max_lrs
            .iter()
            .map(|&max_lr| {
                let initial = max_lr / div_factor;
                [initial, max_lr, initial / final_div_factor]
            })
            .collect();
        let total = total_steps as f64;
        let (lo, hi) = (momentum.base, momentum.max);
        const INITIAL: usize = 0;
        const MAX: usize = 1;
        const MIN: usize = 2;
        // (last step, lr from, lr to (indices into a group's rates), momentum from, momentum to)
        let phases: Vec<(f64, usize, usize, f64, f64)> = if three_phase {
            vec![
                (pct_start * total - 1.0, INITIAL, MAX, hi, lo),
                (2.0 * pct_start * total - 2.0, MAX, INITIAL, lo, hi),
                (total - 1.0, INITIAL, MIN, hi, hi),
            ]
        } else {
            vec![(pct_start * total - 1.0, INITIAL, MAX, hi, lo), (total - 1.0, MAX, MIN, lo, hi)]
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
        // torch sets each group's `initial_lr` to `max_lr / div_factor`; the schedule ignores the
        // base lr (a group added later keeps it).
        for (g, lrs) in group_lrs.iter().enumerate() {
            opt.set_initial_lr(g, lrs[INITIAL]);
        }
        let mut s = Scheduler::per_group(opt, move |g, e, base| match group_lrs.get(g) {
            Some(lrs) => {
                let ((_, from, to, ..), pct) = at(e);
                anneal(lrs[from], lrs[to], pct)
            }
            None => base,
        });
        if momentum.enabled {
            s.momentum = Some(Box::new(move |e| {
                let ((.., from, to), pct) = momentum_at(e);
                anneal(from, to, pct)
            }));
            let epoch = s.last_epoch;
            s.step_to(opt, epoch);
        }
        s.max_epoch = Some(total_steps as i64);
        Ok(s)
    }
}

/// The learning rate cycled between `base_lr` and `max_lr` (triangular waves), and the momentum
/// inversely (torch's `CyclicLR`, stepped after every batch).
pub struct CyclicLR;

impl CyclicLR {
    /// torch's `CyclicLR(optimizer, base_lr, max_lr, step_size_up=2000, step_size_down=None,
    /// mode="triangular", gamma=1.0)` (modes `triangular`, `triangular2`, `exp_range`) with torch's
    /// default momentum cycle (0.9 → 0.8 → 0.9; see [`CyclicLR::with_momentum`]), which needs an
    /// optimizer with a momentum or beta1.
    #[allow(clippy::new_ret_no_self)]
    pub fn new(
        opt: &mut dyn Optimizer,
        (base_lr, max_lr): (f64, f64),
        step_size_up: usize,
        step_size_down: Option<usize>,
        mode: &str,
        gamma: f64,
    ) -> Result<Scheduler> {
        let momentum = CycleMomentum { enabled: true, base: 0.8, max: 0.9 };
        Self::with_momentum(opt, (base_lr, max_lr), (step_size_up, step_size_down), (mode, gamma), momentum)
    }

    /// [`CyclicLR::new`] with an explicit momentum cycle ([`CycleMomentum::off`] for
    /// `cycle_momentum=False`): the momentum is `max` at `base_lr` and `base` at `max_lr`.
    pub fn with_momentum(
        opt: &mut dyn Optimizer,
        (base_lr, max_lr): (f64, f64),
        (step_size_up, step_size_down): (usize, Option<usize>),
        (mode, gamma): (&str, f64),
        momentum: CycleMomentum,
    ) -> Result<Scheduler> {
        let n = opt.num_groups();
        let (base_lrs, max_lrs) = (vec![base_lr; n], vec![max_lr; n]);
        Self::with_group_lrs(
            opt,
            (&base_lrs[..], &max_lrs[..]),
            (step_size_up, step_size_down),
            (mode, gamma),
            momentum,
        )
    }

    /// [`CyclicLR::with_momentum`] with one `base_lr` and one `max_lr` per param group (torch's
    /// list forms, with its error for a list of the wrong length).
    pub fn with_group_lrs(
        opt: &mut dyn Optimizer,
        (base_lrs, max_lrs): (&[f64], &[f64]),
        (step_size_up, step_size_down): (usize, Option<usize>),
        (mode, gamma): (&str, f64),
        momentum: CycleMomentum,
    ) -> Result<Scheduler> {
        check_group_list(opt, "base_lr", base_lrs)?;
        let up = step_size_up as f64;
        let total = up + step_size_down.map_or(up, |d| d as f64);
        if total == 0.0 {
            return Err(Error::msg("CyclicLR: step_size_up + step_size_down must be positive"));
        }
        if up == 0.0 {
            // (torch divides by the up phase's share: a ZeroDivisionError)
            return Err(Error::msg("CyclicLR: step_size_up must be positive (float division by zero)"));
        }
        let step_ratio = up / total;
        // (scale of a cycle or iteration, whether it reads the cycle)
        let scale: fn(f64, f64) -> f64 = match mode {
            "triangular" => |_, _| 1.0,
            "triangular2" => |x, _| 1.0 / 2f64.powf(x - 1.0),
            "exp_range" => |x, gamma| gamma.powf(x),
            m => return Err(Error::msg(format!("mode is invalid and scale_fn is None: {m}"))),
        };
        let by_cycle = mode != "exp_range";
        if momentum.enabled && (0..opt.num_groups()).any(|g| opt.momentum(g).is_none()) {
            return Err(Error::msg(
                "optimizer must support momentum or beta1 with `cycle_momentum` option enabled",
            ));
        }
        // The wave's height at an iteration (0 at `base_lr`, 1 at `max_lr`), times the mode's scale.
        let height = move |e: i64| {
            let cycle = (1.0 + e as f64 / total).floor();
            let x = 1.0 + e as f64 / total - cycle;
            let factor = if x <= step_ratio { x / step_ratio } else { (x - 1.0) / (step_ratio - 1.0) };
            (factor, scale(if by_cycle { cycle } else { e as f64 }, gamma))
        };
        // (torch's order: base_lr checked and set, then max_lr checked)
        for (g, &base_lr) in base_lrs.iter().enumerate() {
            opt.set_lr(g, base_lr);
            if opt.initial_lr(g).is_none() {
                opt.set_initial_lr(g, base_lr);
            }
        }
        check_group_list(opt, "max_lr", max_lrs)?;
        if momentum.enabled {
            for g in 0..opt.num_groups() {
                opt.set_momentum(g, momentum.max);
            }
        }
        let lrs: Vec<(f64, f64)> = base_lrs.iter().copied().zip(max_lrs.iter().copied()).collect();
        let mut s = Scheduler::per_group(opt, move |g, e, b| match lrs.get(g) {
            Some(&(base_lr, max_lr)) => {
                let (factor, scale) = height(e);
                base_lr + (max_lr - base_lr) * factor * scale
            }
            None => b,
        });
        if momentum.enabled {
            let (lo, hi) = (momentum.base, momentum.max);
            s.momentum = Some(Box::new(move |e| {
                let (factor, scale) = height(e);
                hi - (hi - lo) * factor * scale
            }));
            s.step_to(opt, 0);
        }
        for (b, &base_lr) in s.base_lrs.iter_mut().zip(base_lrs) {
            *b = base_lr;
        }
        Ok(s)
    }
}

/// Cosine annealing from the base rate to `eta_min` over `t_0` epochs, restarting at the base
/// rate with periods `t_mult` times longer each time (SGDR; torch's `CosineAnnealingWarmRestarts`).
pub struct CosineAnnealingWarmRestarts;

impl CosineAnnealingWarmRestarts {
    /// torch's `CosineAnnealingWarmRestarts(optimizer, T_0, T_mult=1, eta_min=0)`. Step it once
    /// per epoch, or within epochs with fractional epochs through [`Scheduler::step_epoch`]
    /// (torch's `scheduler.step(epoch + i / iters)`).
    #[allow(clippy::new_ret_no_self)]
    pub fn new(opt: &mut dyn Optimizer, t_0: usize, t_mult: usize, eta_min: f64) -> Result<Scheduler> {
        if t_0 == 0 {
            return Err(Error::msg("Expected positive integer T_0, but got 0"));
        }
        if t_mult < 1 {
            return Err(Error::msg(format!("Expected integer T_mult >= 1, but got {t_mult}")));
        }
        let (t_0, t_mult) = (t_0 as f64, t_mult as f64);
        let restarts = WarmRestarts { t_0, t_mult, eta_min, t_i: t_0, t_cur: 0.0 };
        // (the rates come from `restarts`, stepped as torch's `T_cur`; the closure is unused)
        let mut s = Scheduler::new(opt, |_, b| b);
        s.restarts = Some(restarts);
        s.step_to(opt, 0);
        Ok(s)
    }
}
