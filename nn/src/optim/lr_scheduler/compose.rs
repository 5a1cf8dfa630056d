//! Schedulers run in sequence (`SequentialLR`) or together (`ChainedScheduler`).

use oxtorch_tensor::{Error, Result};

use super::super::Optimizer;
use super::{next_epoch, required_epoch, LRScheduler, Scheduler};

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
        self.last_epoch = next_epoch(self.last_epoch)?;
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
        self.last_epoch = required_epoch(state, "last_epoch", false)?;
        load_each(&mut self.schedulers, state)
    }
}

/// Steps several schedulers together, each changing the rate the previous one set (torch's
/// `ChainedScheduler`; the schedulers must be chainable ones to compose).
pub struct ChainedScheduler {
    schedulers: Vec<Scheduler>,
}

impl ChainedScheduler {
    /// Chains `schedulers` (already constructed on `opt`, in order).
    pub fn new(schedulers: Vec<Scheduler>) -> Result<Self> {
        if schedulers.is_empty() {
            return Err(Error::msg("ChainedScheduler expects at least one scheduler"));
        }
        Ok(ChainedScheduler { schedulers })
    }

    /// Steps every scheduler, in order.
    pub fn step(&mut self, opt: &mut dyn Optimizer) -> Result<()> {
        self.schedulers.iter_mut().try_for_each(|s| s.step(opt))
    }

    /// The learning rates the last scheduler set.
    pub fn get_last_lr(&self) -> Vec<f64> {
        self.schedulers.last().map(|s| s.get_last_lr().to_vec()).unwrap_or_default()
    }

    /// Each scheduler's [`Scheduler::state_dict`] under `_schedulers.{i}.` (torch's layout).
    pub fn state_dict(&self) -> Vec<(String, f64)> {
        let mut out = Vec::new();
        for (i, s) in self.schedulers.iter().enumerate() {
            out.extend(s.state_dict().into_iter().map(|(k, v)| (format!("_schedulers.{i}.{k}"), v)));
        }
        out
    }

    /// Restores [`ChainedScheduler::state_dict`]'s output.
    pub fn load_state_dict(&mut self, state: &[(String, f64)]) -> Result<()> {
        load_each(&mut self.schedulers, state)
    }
}

impl LRScheduler for SequentialLR {
    fn step(&mut self, opt: &mut dyn Optimizer) -> Result<()> {
        SequentialLR::step(self, opt)
    }

    fn get_last_lr(&self) -> Vec<f64> {
        SequentialLR::get_last_lr(self)
    }

    fn state_dict(&self) -> Vec<(String, f64)> {
        SequentialLR::state_dict(self)
    }

    fn load_state_dict(&mut self, state: &[(String, f64)]) -> Result<()> {
        SequentialLR::load_state_dict(self, state)
    }
}

impl LRScheduler for ChainedScheduler {
    fn step(&mut self, opt: &mut dyn Optimizer) -> Result<()> {
        ChainedScheduler::step(self, opt)
    }

    fn get_last_lr(&self) -> Vec<f64> {
        ChainedScheduler::get_last_lr(self)
    }

    fn state_dict(&self) -> Vec<(String, f64)> {
        ChainedScheduler::state_dict(self)
    }

    fn load_state_dict(&mut self, state: &[(String, f64)]) -> Result<()> {
        ChainedScheduler::load_state_dict(self, state)
    }
}

/// Restores each of `schedulers` from its `_schedulers.{i}.` entries of `state`.
fn load_each(schedulers: &mut [Scheduler], state: &[(String, f64)]) -> Result<()> {
    for (i, s) in schedulers.iter_mut().enumerate() {
        let prefix = format!("_schedulers.{i}.");
        let inner: Vec<(String, f64)> =
            state.iter().filter_map(|(k, v)| k.strip_prefix(&prefix).map(|k| (k.to_string(), *v))).collect();
        s.load_state_dict(&inner)?;
    }
    Ok(())
}
