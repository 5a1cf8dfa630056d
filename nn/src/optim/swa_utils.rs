//! `torch.optim.swa_utils`: [`AveragedModel`] (stochastic weight averaging and exponential moving
//! averages of a model's parameters) and the [`SWALR`] learning-rate schedule.
//!
//! ```
//! use oxtorch_nn::optim::swa_utils::{get_ema_multi_avg_fn, AveragedModel};
//! use oxtorch_nn::{Linear, ModuleExt};
//! use oxtorch_tensor::Result;
//! # fn main() -> Result<()> {
//! let model = Linear::new(4, 2, true)?;
//! // torch deep-copies the model; here the copy is a second instance, given the model's values
//! let mut ema = AveragedModel::new(&model, Linear::new(4, 2, true)?, get_ema_multi_avg_fn(0.99)?, false)?;
//! for _ in 0..3 {
//!     // ... train `model` one step ...
//!     ema.update_parameters(&model)?;
//! }
//! assert_eq!(ema.n_averaged()?, 3);
//! let keys: Vec<String> = ema.state_dict().keys().map(String::from).collect();
//! assert_eq!(keys, ["n_averaged", "module.weight", "module.bias"]);
//! # Ok(()) }
//! ```

use std::f64::consts::PI;
use std::sync::Arc;

use oxtorch_autograd::no_grad;
use oxtorch_tensor::{DType, Error, Result, Tensor};

use super::lr_scheduler::LRScheduler;
use super::Optimizer;
use crate::module::{Buffer, Forward, Member, MemberMut, Module, ModuleExt};

/// A custom averaging function `avg_fn(averaged, current, num_averaged) -> new averaged` (torch's
/// `avg_fn`).
pub type AvgFn = Arc<dyn Fn(&Tensor, &Tensor, i64) -> Result<Tensor> + Send + Sync>;

/// How [`AveragedModel`] folds a model's values into its averages (torch's `avg_fn` /
/// `multi_avg_fn` arguments, each with torch's CPU arithmetic).
#[derive(Clone)]
pub enum Averaging {
    /// torch's default (neither function given): the equal running average
    /// `avg + (current - avg) / (n + 1)`.
    Swa,
    /// [`get_swa_multi_avg_fn`]: `avg.lerp_(current, 1 / (n + 1))`, the weight rounded to float32
    /// as torch's tensor division makes it.
    SwaMulti,
    /// [`get_ema_multi_avg_fn`]`(decay)`: `ema.lerp_(current, 1 - decay)`.
    EmaMulti(f64),
    /// [`get_ema_avg_fn`]`(decay)`: `decay * ema + (1 - decay) * current`.
    Ema(f64),
    /// A custom `avg_fn`.
    Custom(AvgFn),
}

/// Python's spelling of a float in a message (`2.0`, not `2`).
fn py_float(v: f64) -> String {
    if v.is_finite() && v.fract() == 0.0 && v.abs() < 1e16 {
        format!("{v:.1}")
    } else {
        format!("{v}")
    }
}

/// torch's decay check for the EMA functions.
fn check_decay(decay: f64) -> Result<()> {
    if !(0.0..=1.0).contains(&decay) {
        return Err(Error::msg(format!(
            "Invalid decay value {} provided. Please provide a value in [0,1] range.",
            py_float(decay)
        )));
    }
    Ok(())
}

/// torch's `get_ema_multi_avg_fn(decay=0.999)`: an exponential moving average, `W_ema ←
/// lerp(W_ema, W_model, 1 - decay)`; `decay` must lie in `[0, 1]` (torch's error).
pub fn get_ema_multi_avg_fn(decay: f64) -> Result<Averaging> {
    check_decay(decay)?;
    Ok(Averaging::EmaMulti(decay))
}

/// torch's `get_ema_avg_fn(decay=0.999)`: `decay * W_ema + (1 - decay) * W_model`.
pub fn get_ema_avg_fn(decay: f64) -> Result<Averaging> {
    check_decay(decay)?;
    Ok(Averaging::Ema(decay))
}

/// torch's `get_swa_multi_avg_fn()`: the equal average as an interpolation.
pub fn get_swa_multi_avg_fn() -> Averaging {
    Averaging::SwaMulti
}

/// torch's `get_swa_avg_fn()` (also the default): `avg + (current - avg) / (n + 1)`.
pub fn get_swa_avg_fn() -> Averaging {
    Averaging::Swa
}

impl Averaging {
    /// Folds `current` into `avg` in place, `n` models having been averaged (`n > 0`).
    fn update(&self, avg: &Tensor, current: &Tensor, n: i64) -> Result<()> {
        let float = avg.dtype().is_float();
        let new = match self {
            Averaging::Swa => avg.add(&current.sub(avg)?.div((n + 1) as f64)?)?,
            Averaging::SwaMulti if float => {
                // torch: `1 / (n_averaged + 1)` of an int64 tensor is a float32 tensor
                let weight = f64::from(1.0f32 / (n + 1) as f32);
                avg.lerp_(current, weight)?;
                return Ok(());
            }
            Averaging::SwaMulti => avg.add(&current.sub(avg)?.div((n + 1) as f64)?)?,
            Averaging::EmaMulti(decay) if float => {
                avg.lerp_(current, 1.0 - decay)?;
                return Ok(());
            }
            Averaging::EmaMulti(decay) => avg.mul(*decay)?.add(&current.mul(1.0 - decay)?)?,
            Averaging::Ema(decay) => avg.mul(*decay)?.add(&current.mul(1.0 - decay)?)?,
            Averaging::Custom(f) => f(&avg.detach(), current, n)?,
        };
        avg.copy_(&new)?;
        Ok(())
    }
}

/// A running average of a model's parameters (torch's `AveragedModel`): the averaged copy is
/// the child `module`, next to the int64 buffer `n_averaged`, so the state dict has torch's keys
/// (`n_averaged`, `module.<name>`). [`AveragedModel::update_parameters`] copies the model's
/// values the first time and averages them in after; without `use_buffers` the buffers (batch
/// norm's statistics) are copied each time, with it they are averaged as the parameters are.
///
/// torch deep-copies the model it is given; modules here are not `Clone`, so
/// [`AveragedModel::new`] takes a second instance of the same architecture and loads the model's
/// state dict into it (persistent entries; a non-persistent buffer keeps the copy's value).
pub struct AveragedModel<M> {
    module: M,
    n_averaged: Buffer,
    averaging: Averaging,
    use_buffers: bool,
}

/// Every buffer of `m` (persistent or not), in torch's order.
fn buffers(m: &dyn Module) -> Vec<Tensor> {
    m.named_buffers().into_iter().map(|(_, t)| t).collect()
}

impl<M: Module> AveragedModel<M> {
    /// torch's `AveragedModel(model, avg_fn=..., multi_avg_fn=..., use_buffers=...)`: `module` is
    /// the averaged copy (another instance of `model`'s architecture; it receives `model`'s
    /// values, strictly by key) and `averaging` says how values are averaged.
    pub fn new(model: &dyn Module, mut module: M, averaging: Averaging, use_buffers: bool) -> Result<Self> {
        module.load_state_dict(&model.state_dict(), true)?;
        // (on the CPU, as torch's without a `device`; `to` moves it with the module)
        let n_averaged = Buffer(Tensor::scalar_tensor(0i64, DType::I64)?);
        Ok(AveragedModel { module, n_averaged, averaging, use_buffers })
    }

    /// The averaged copy (torch's `.module`).
    pub fn module(&self) -> &M {
        &self.module
    }

    /// The averaged copy, mutably.
    pub fn module_mut(&mut self) -> &mut M {
        &mut self.module
    }

    /// How many models have been averaged (torch's `n_averaged`).
    pub fn n_averaged(&self) -> Result<i64> {
        self.n_averaged.item::<i64>()
    }

    /// Folds `model`'s current values into the averages (torch's `update_parameters`): the
    /// parameters (and, with `use_buffers`, the buffers after them) pair up in order, as many as
    /// both have; the first call copies them. Without `use_buffers` every buffer is copied, which
    /// needs as many buffers in both (torch's `zip(strict=True)` error otherwise).
    pub fn update_parameters(&mut self, model: &dyn Module) -> Result<()> {
        let (mine, theirs) = if self.use_buffers {
            let mut mine = self.module.parameters();
            mine.extend(buffers(&self.module));
            let mut theirs = model.parameters();
            theirs.extend(buffers(model));
            (mine, theirs)
        } else {
            (self.module.parameters(), model.parameters())
        };
        let n = self.n_averaged()?;
        no_grad(|| -> Result<()> {
            for (avg, current) in mine.iter().zip(&theirs) {
                let current = current.detach().to(avg.device())?;
                if n == 0 {
                    avg.copy_(&current)?;
                } else {
                    self.averaging.update(avg, &current, n)?;
                }
            }
            if !self.use_buffers {
                let (mine, theirs) = (buffers(&self.module), buffers(model));
                if mine.len() != theirs.len() {
                    let how = if theirs.len() < mine.len() { "shorter" } else { "longer" };
                    return Err(Error::msg(format!("zip() argument 2 is {how} than argument 1")));
                }
                for (b, current) in mine.iter().zip(&theirs) {
                    b.copy_(&current.detach().to(b.device())?)?;
                }
            }
            self.n_averaged.fill_(n + 1)?;
            Ok(())
        })
    }
}

impl<M: Module> Module for AveragedModel<M> {
    fn visit<'m>(&'m self, f: &mut dyn FnMut(&str, Member<'m>)) {
        f("module", Member::Child(&self.module));
        f("n_averaged", Member::Buffer(&self.n_averaged.0));
    }

    fn visit_mut(&mut self, f: &mut dyn FnMut(&str, MemberMut<'_>)) {
        f("module", MemberMut::Child(&mut self.module));
        f("n_averaged", MemberMut::Buffer(&mut self.n_averaged.0));
    }

    fn type_name(&self) -> &'static str {
        "AveragedModel"
    }
}

/// The averaged copy's forward (torch's `forward(*args)` calls `self.module`).
impl<M: Module + Forward> Forward for AveragedModel<M> {
    fn forward(&self, input: &Tensor) -> Result<Tensor> {
        self.module.forward(input)
    }
}

/// torch's `reset_running_stats` for a batch norm tracking them: mean 0, variance 1, no batches
/// tracked (a batch norm without running statistics has none of these buffers).
fn reset_running_stats(m: &dyn Module) -> Result<()> {
    let mut buffers = Vec::new();
    m.visit(&mut |name, member| {
        if let Member::Buffer(t) = member {
            if matches!(name, "running_mean" | "running_var" | "num_batches_tracked") {
                buffers.push((name.to_string(), t.clone()));
            }
        }
    });
    no_grad(|| {
        buffers.iter().try_for_each(|(name, t)| -> Result<()> {
            match name.as_str() {
                "running_var" => t.fill_(1.0)?,
                _ => t.zero_()?,
            };
            Ok(())
        })
    })
}

/// torch's `torch.optim.swa_utils.update_bn(loader, model)`: recomputes every batch norm's
/// running statistics over one pass of `loader` (the input batches, e.g. after
/// [`AveragedModel`] averaged the weights). As torch: each batch norm (a module answering
/// [`Module::batch_norm_momentum`]) has its statistics reset and its momentum set to `None`
/// (a cumulative average), the model runs forward on each batch in training mode (no gradients
/// recorded), then the momenta and the model's training flag are restored — also when a forward
/// fails, whose error is returned. A model without batch norms is left alone.
pub fn update_bn<M, I>(loader: I, model: &mut M) -> Result<()>
where
    M: Module + Forward,
    I: IntoIterator,
    I::Item: std::borrow::Borrow<Tensor>,
{
    let mut momenta: Vec<Option<f64>> = Vec::new();
    let mut reset = Ok(());
    model.apply(&mut |m: &mut dyn Module| {
        if m.batch_norm_momentum(&mut |momentum| momenta.push(momentum.take())) && reset.is_ok() {
            reset = reset_running_stats(&*m);
        }
    });
    if momenta.is_empty() {
        return Ok(());
    }
    let was_training = model.is_training();
    model.train(true);
    let pass = reset.and_then(|()| {
        no_grad(|| {
            loader.into_iter().try_for_each(|input| {
                model.forward(std::borrow::Borrow::<Tensor>::borrow(&input)).map(|_| ())
            })
        })
    });
    let mut saved = momenta.into_iter();
    model.apply(&mut |m: &mut dyn Module| {
        m.batch_norm_momentum(&mut |momentum| *momentum = saved.next().flatten());
    });
    model.train(was_training);
    pass
}

/// Anneals every group's learning rate to a fixed `swa_lr` over `anneal_epochs` epochs, by
/// cosine or linearly (torch's `torch.optim.swa_utils.SWALR`), from the rate each group has when
/// the scheduler is made (after another schedule, typically). As torch's `get_lr`, each step
/// recovers the rate the annealing started from out of the current one, so a rate changed by
/// hand carries on. Constructing one applies epoch 0 (the rates stay), as torch does; step it
/// once per epoch, after the optimizer.
pub struct SWALR {
    swa_lrs: Vec<f64>,
    anneal_epochs: usize,
    cos: bool,
    base_lrs: Vec<f64>,
    last_epoch: i64,
    /// torch's `_step_count` (the steps taken, construction's included)
    step_count: i64,
    last_lr: Vec<f64>,
}

impl SWALR {
    /// torch's `SWALR(optimizer, swa_lr, anneal_epochs=10, anneal_strategy="cos")` with one
    /// `swa_lr` for every group.
    pub fn new(
        opt: &mut dyn Optimizer,
        swa_lr: f64,
        anneal_epochs: usize,
        anneal_strategy: &str,
    ) -> Result<Self> {
        let swa_lrs = vec![swa_lr; opt.num_groups()];
        Self::with_group_lrs(opt, &swa_lrs, anneal_epochs, anneal_strategy)
    }

    /// [`SWALR::new`] with one `swa_lr` per group (torch's list form, with its error for a list
    /// of the wrong length); `anneal_strategy` is `"cos"` or `"linear"`.
    pub fn with_group_lrs(
        opt: &mut dyn Optimizer,
        swa_lrs: &[f64],
        anneal_epochs: usize,
        anneal_strategy: &str,
    ) -> Result<Self> {
        let groups = opt.num_groups();
        if swa_lrs.len() != groups {
            return Err(Error::msg(format!(
                "swa_lr must have the same length as optimizer.param_groups. swa_lr has {} values, param_groups has {groups}.",
                swa_lrs.len()
            )));
        }
        let cos = match anneal_strategy {
            "cos" => true,
            "linear" => false,
            other => {
                return Err(Error::msg(format!(
                    "anneal_strategy must be one of 'cos' or 'linear', instead got {other}"
                )))
            }
        };
        // torch's `group.setdefault("initial_lr", group["lr"])`
        let base_lrs = (0..groups)
            .map(|g| {
                opt.initial_lr(g).unwrap_or_else(|| {
                    let lr = opt.lr(g);
                    opt.set_initial_lr(g, lr);
                    lr
                })
            })
            .collect::<Vec<f64>>();
        let mut s = SWALR {
            swa_lrs: swa_lrs.to_vec(),
            anneal_epochs,
            cos,
            last_lr: base_lrs.clone(),
            base_lrs,
            last_epoch: -1,
            step_count: 0,
        };
        s.step(opt);
        Ok(s)
    }

    /// The annealing weight at progress `t` in `[0, 1]`.
    fn anneal(&self, t: f64) -> f64 {
        if self.cos {
            (1.0 - (PI * t).cos()) / 2.0
        } else {
            t
        }
    }

    /// Advances one epoch and sets the groups' rates (torch's `step()` with `get_lr`).
    pub fn step(&mut self, opt: &mut dyn Optimizer) {
        self.step_count += 1;
        self.last_epoch += 1;
        let mut step = self.step_count - 1;
        if self.anneal_epochs == 0 {
            step = step.max(1);
        }
        let epochs = self.anneal_epochs.max(1) as f64;
        let prev_t = ((step - 1) as f64 / epochs).clamp(0.0, 1.0);
        let prev_alpha = self.anneal(prev_t);
        let t = (step as f64 / epochs).clamp(0.0, 1.0);
        let alpha = self.anneal(t);
        for g in 0..self.swa_lrs.len().min(opt.num_groups()) {
            let swa_lr = self.swa_lrs[g];
            // the rate the annealing started from (torch's `_get_initial_lr`)
            let lr = opt.lr(g);
            let start =
                if prev_alpha == 1.0 { swa_lr } else { (lr - prev_alpha * swa_lr) / (1.0 - prev_alpha) };
            let new = swa_lr * alpha + start * (1.0 - alpha);
            opt.set_lr(g, new);
            self.last_lr[g] = new;
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

    /// What resuming needs, under torch's attribute names: `last_epoch`, `_step_count`,
    /// `anneal_epochs`, `base_lrs.{group}`, `_last_lr.{group}` and `swa_lr.{group}` (torch keeps
    /// the last in the optimizer's groups); the strategy is the constructor's.
    pub fn state_dict(&self) -> Vec<(String, f64)> {
        let mut out = vec![
            ("last_epoch".to_string(), self.last_epoch as f64),
            ("_step_count".to_string(), self.step_count as f64),
            ("anneal_epochs".to_string(), self.anneal_epochs as f64),
        ];
        for (name, values) in
            [("base_lrs", &self.base_lrs), ("_last_lr", &self.last_lr), ("swa_lr", &self.swa_lrs)]
        {
            out.extend(values.iter().enumerate().map(|(g, &v)| (format!("{name}.{g}"), v)));
        }
        out
    }

    /// Restores [`SWALR::state_dict`]'s output (every key required).
    pub fn load_state_dict(&mut self, state: &[(String, f64)]) -> Result<()> {
        let get = |key: &str| {
            state
                .iter()
                .find(|(k, _)| k == key)
                .map(|&(_, v)| v)
                .ok_or_else(|| Error::msg(format!("scheduler state_dict: missing key '{key}'")))
        };
        self.last_epoch = get("last_epoch")? as i64;
        self.step_count = get("_step_count")? as i64;
        self.anneal_epochs = get("anneal_epochs")? as usize;
        for g in 0..self.swa_lrs.len() {
            self.base_lrs[g] = get(&format!("base_lrs.{g}"))?;
            self.last_lr[g] = get(&format!("_last_lr.{g}"))?;
            self.swa_lrs[g] = get(&format!("swa_lr.{g}"))?;
        }
        Ok(())
    }
}

impl LRScheduler for SWALR {
    fn step(&mut self, opt: &mut dyn Optimizer) -> Result<()> {
        SWALR::step(self, opt);
        Ok(())
    }

    fn get_last_lr(&self) -> Vec<f64> {
        self.last_lr.clone()
    }

    fn state_dict(&self) -> Vec<(String, f64)> {
        SWALR::state_dict(self)
    }

    fn load_state_dict(&mut self, state: &[(String, f64)]) -> Result<()> {
        SWALR::load_state_dict(self, state)
    }
}
