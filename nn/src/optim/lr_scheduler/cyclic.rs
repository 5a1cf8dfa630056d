//! Cyclic schedules: `OneCycleLR`, `CyclicLR` (both cycling the momentum too) and
//! `CosineAnnealingWarmRestarts`.

use std::f64::consts::PI;

use oxtorch_tensor::{Error, Result};

use super::super::Optimizer;
use super::Scheduler;

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
        // torch sets each group's `initial_lr` to `initial`; the schedule ignores the base lr.
        for g in 0..opt.num_groups() {
            opt.set_initial_lr(g, initial);
        }
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
        let up = step_size_up as f64;
        let total = up + step_size_down.map_or(up, |d| d as f64);
        if total == 0.0 {
            return Err(Error::msg("CyclicLR: step_size_up + step_size_down must be positive"));
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
        for g in 0..opt.num_groups() {
            opt.set_lr(g, base_lr);
            if opt.initial_lr(g).is_none() {
                opt.set_initial_lr(g, base_lr);
            }
            if momentum.enabled {
                opt.set_momentum(g, momentum.max);
            }
        }
        let mut s = Scheduler::new(opt, move |e, _| {
            let (factor, scale) = height(e);
            base_lr + (max_lr - base_lr) * factor * scale
        });
        if momentum.enabled {
            let (lo, hi) = (momentum.base, momentum.max);
            s.momentum = Some(Box::new(move |e| {
                let (factor, scale) = height(e);
                hi - (hi - lo) * factor * scale
            }));
            s.step_to(opt, 0);
        }
        s.base_lrs.fill(base_lr);
        Ok(s)
    }
}

/// Cosine annealing from the base rate to `eta_min` over `t_0` epochs, restarting at the base
/// rate with periods `t_mult` times longer each time (SGDR; torch's `CosineAnnealingWarmRestarts`).
pub struct CosineAnnealingWarmRestarts;

impl CosineAnnealingWarmRestarts {
    /// torch's `CosineAnnealingWarmRestarts(optimizer, T_0, T_mult=1, eta_min=0)`.
    #[allow(clippy::new_ret_no_self)]
    pub fn new(opt: &mut dyn Optimizer, t_0: usize, t_mult: usize, eta_min: f64) -> Result<Scheduler> {
        if t_0 == 0 {
            return Err(Error::msg("Expected positive integer T_0, but got 0"));
        }
        if t_mult < 1 {
            return Err(Error::msg(format!("Expected integer T_mult >= 1, but got {t_mult}")));
        }
        Ok(Scheduler::new(opt, move |e, b| {
            // The position in the current period, and its length.
            let (mut t_cur, mut t_i) = (e.max(0) as u128, t_0 as u128);
            if t_mult == 1 {
                t_cur %= t_i;
            }
            while t_cur >= t_i {
                t_cur -= t_i;
                t_i = t_i.saturating_mul(t_mult as u128);
            }
            eta_min + (b - eta_min) * (1.0 + (PI * t_cur as f64 / t_i as f64).cos()) / 2.0
        }))
    }
}
