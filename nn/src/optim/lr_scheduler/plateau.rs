//! `ReduceLROnPlateau`: lowering the rate when a metric stops improving.

use oxtorch_tensor::{Error, Result};

use super::super::Optimizer;
use super::{epoch_entry, next_epoch, optional, required, required_epoch, LRScheduler};

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
    /// the scalar `min_lr` a group added later takes (`None` when given per group: torch's error)
    default_min_lr: Option<f64>,
    eps: f64,
    last_epoch: i64,
    last_lr: Vec<f64>,
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
        let min_lrs = vec![min_lr; opt.num_groups()];
        let mut s = Self::with_min_lrs(
            opt,
            mode,
            factor,
            patience,
            threshold,
            threshold_mode,
            cooldown,
            &min_lrs,
            eps,
        )?;
        s.default_min_lr = Some(min_lr);
        Ok(s)
    }

    /// [`ReduceLROnPlateau::new`] with one `min_lr` per param group (torch's list form; its
    /// error "expected {n} min_lrs, got {m}" for a list of the wrong length).
    #[allow(clippy::too_many_arguments)]
    pub fn with_min_lrs(
        opt: &dyn Optimizer,
        mode: &str,
        factor: f64,
        patience: usize,
        threshold: f64,
        threshold_mode: &str,
        cooldown: usize,
        min_lrs: &[f64],
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
        let groups = opt.num_groups();
        if min_lrs.len() != groups {
            return Err(Error::msg(format!("expected {groups} min_lrs, got {}", min_lrs.len())));
        }
        Ok(ReduceLROnPlateau {
            mode_max,
            factor,
            patience,
            threshold,
            rel,
            cooldown,
            min_lrs: min_lrs.to_vec(),
            default_min_lr: None,
            eps,
            last_epoch: 0,
            last_lr: (0..groups).map(|g| opt.lr(g)).collect(),
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
    ///
    /// With per-group `min_lrs` ([`ReduceLROnPlateau::with_min_lrs`]) and a param group added
    /// since, a reduction would have no floor for it: torch's error then comes from
    /// [`ReduceLROnPlateau::try_step`] (this method leaves the rates alone in that case).
    pub fn step(&mut self, opt: &mut dyn Optimizer, metric: f64) {
        let _ = self.try_step(opt, metric);
    }

    /// [`ReduceLROnPlateau::step`], reporting torch's error when the number of param groups
    /// changed since construction with per-group `min_lrs`.
    pub fn try_step(&mut self, opt: &mut dyn Optimizer, metric: f64) -> Result<()> {
        self.last_epoch = next_epoch(self.last_epoch)?;
        if self.is_better(metric) {
            self.best = metric;
            self.num_bad_epochs = 0;
        } else {
            self.num_bad_epochs = self.num_bad_epochs.saturating_add(1);
        }
        if self.cooldown_counter > 0 {
            self.cooldown_counter -= 1;
            self.num_bad_epochs = 0;
        }
        if self.num_bad_epochs > self.patience {
            let groups = opt.num_groups();
            if groups != self.min_lrs.len() {
                match self.default_min_lr {
                    // Groups added since (`add_param_group`) get the same floor, as torch's scalar min_lr.
                    Some(floor) => self.min_lrs = vec![floor; groups],
                    None => {
                        return Err(Error::msg(format!(
                            "The number of param groups in the `optimizer` ({groups}) differs from when \
                             `ReduceLROnPlateau` was initialized ({}), usually due to a new param group being \
                             added to the optimizer. Please modify the `min_lrs` field to match the length of the \
                             `optimizer` param groups.",
                            self.min_lrs.len()
                        )))
                    }
                }
            }
            for g in 0..groups {
                let old = opt.lr(g);
                let new = (old * self.factor).max(self.min_lrs[g]);
                if old - new > self.eps {
                    opt.set_lr(g, new);
                }
            }
            self.cooldown_counter = self.cooldown;
            self.num_bad_epochs = 0;
        }
        self.last_lr = (0..opt.num_groups()).map(|g| opt.lr(g)).collect();
        Ok(())
    }

    /// The learning rates of the groups after the last step (torch's `get_last_lr()`; at first,
    /// the rates the optimizer had when the scheduler was made).
    pub fn get_last_lr(&self) -> &[f64] {
        &self.last_lr
    }

    /// The per-group floors (torch's `min_lrs`).
    pub fn min_lrs(&self) -> &[f64] {
        &self.min_lrs
    }

    /// The number of steps taken (torch's `last_epoch`).
    pub fn last_epoch(&self) -> i64 {
        self.last_epoch
    }

    /// What resuming needs, under torch's attribute names: `best`, `num_bad_epochs`,
    /// `cooldown_counter`, `last_epoch`, `_last_lr.{group}` and `min_lrs.{group}`.
    pub fn state_dict(&self) -> Vec<(String, f64)> {
        let mut out = vec![
            ("best".to_string(), self.best),
            ("num_bad_epochs".to_string(), self.num_bad_epochs as f64),
            ("cooldown_counter".to_string(), self.cooldown_counter as f64),
            ("last_epoch".to_string(), self.last_epoch as f64),
        ];
        out.extend(self.last_lr.iter().enumerate().map(|(g, &v)| (format!("_last_lr.{g}"), v)));
        out.extend(self.min_lrs.iter().enumerate().map(|(g, &v)| (format!("min_lrs.{g}"), v)));
        out
    }

    /// Restores [`ReduceLROnPlateau::state_dict`]'s output (`best`, `num_bad_epochs` and
    /// `cooldown_counter` required; the other entries where present, for states saved without).
    pub fn load_state_dict(&mut self, state: &[(String, f64)]) -> Result<()> {
        self.best = required(state, "best")?;
        self.num_bad_epochs = required_epoch(state, "num_bad_epochs", false)? as usize;
        self.cooldown_counter = required_epoch(state, "cooldown_counter", false)? as usize;
        if let Some(e) = optional(state, "last_epoch") {
            self.last_epoch = epoch_entry("last_epoch", e, false)?;
        }
        for (g, v) in self.last_lr.iter_mut().enumerate() {
            if let Some(lr) = optional(state, &format!("_last_lr.{g}")) {
                *v = lr;
            }
        }
        for (g, v) in self.min_lrs.iter_mut().enumerate() {
            if let Some(m) = optional(state, &format!("min_lrs.{g}")) {
                *v = m;
            }
        }
        Ok(())
    }
}

/// `ReduceLROnPlateau` needs a metric: [`LRScheduler::step`] is torch's error for a call without
/// one, [`LRScheduler::step_with_metric`] is [`ReduceLROnPlateau::try_step`].
impl LRScheduler for ReduceLROnPlateau {
    fn step(&mut self, _opt: &mut dyn Optimizer) -> Result<()> {
        Err(Error::msg("ReduceLROnPlateau.step() missing 1 required positional argument: 'metrics'"))
    }

    fn step_with_metric(&mut self, opt: &mut dyn Optimizer, metric: f64) -> Result<()> {
        self.try_step(opt, metric)
    }

    fn get_last_lr(&self) -> Vec<f64> {
        self.last_lr.clone()
    }

    fn state_dict(&self) -> Vec<(String, f64)> {
        ReduceLROnPlateau::state_dict(self)
    }

    fn load_state_dict(&mut self, state: &[(String, f64)]) -> Result<()> {
        ReduceLROnPlateau::load_state_dict(self, state)
    }
}
