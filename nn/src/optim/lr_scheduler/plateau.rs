//! `ReduceLROnPlateau`: lowering the rate when a metric stops improving.

use oxtorch_tensor::{Error, Result};

use super::super::Optimizer;
use super::required;

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
            // Groups added since (`add_param_group`) get the same floor, as torch's scalar min_lr.
            let floor = self.min_lrs.first().copied().unwrap_or(0.0);
            self.min_lrs.resize(opt.num_groups().max(self.min_lrs.len()), floor);
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
