//! `torch.amp`'s [`GradScaler`]: dynamic loss scaling for mixed-precision training.
//!
//! The loss is multiplied by a scale before `backward` ([`GradScaler::scale`]) so that small
//! half-precision gradients do not flush to zero; [`GradScaler::unscale_`] divides the gradients
//! back and records whether any is inf/NaN, [`GradScaler::step`] skips the optimizer's update
//! when one is, and [`GradScaler::update`] then lowers the scale (`backoff_factor`) or, after
//! `growth_interval` clean steps in a row, raises it (`growth_factor`), as torch's
//! `_amp_update_scale_`. The scale is a float32 value and the growth tracker an int32, as torch's.
//!
//! ```ignore
//! let mut scaler = GradScaler::new();
//! for batch in batches {
//!     opt.zero_grad()?;
//!     let loss = model.forward(&batch)?;
//!     scaler.scale(&loss)?.backward()?;
//!     scaler.step(&mut opt)?; // unscales, skips the update on inf/NaN gradients
//!     scaler.update(None)?;
//! }
//! ```

use oxtorch_tensor::{DType, Error, Result, Tensor};

use crate::optim::Optimizer;

/// [`GradScaler`]'s options (torch's constructor arguments), with torch's defaults; set them with
/// the builder methods and build with [`GradScaler::with_options`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GradScalerOptions {
    /// the scale before the first update (65536)
    pub init_scale: f64,
    /// what the scale is multiplied by after `growth_interval` steps without inf/NaN (2)
    pub growth_factor: f64,
    /// what the scale is multiplied by after a step with inf/NaN gradients (0.5)
    pub backoff_factor: f64,
    /// the number of consecutive clean steps before the scale grows (2000)
    pub growth_interval: i64,
    /// `false` makes every method a no-op ([`GradScaler::step`] then just steps)
    pub enabled: bool,
}

impl Default for GradScalerOptions {
    fn default() -> Self {
        GradScalerOptions {
            init_scale: 65536.0,
            growth_factor: 2.0,
            backoff_factor: 0.5,
            growth_interval: 2000,
            enabled: true,
        }
    }
}

impl GradScalerOptions {
    /// Sets `init_scale`.
    pub fn init_scale(mut self, init_scale: f64) -> Self {
        self.init_scale = init_scale;
        self
    }

    /// Sets `growth_factor`.
    pub fn growth_factor(mut self, growth_factor: f64) -> Self {
        self.growth_factor = growth_factor;
        self
    }

    /// Sets `backoff_factor`.
    pub fn backoff_factor(mut self, backoff_factor: f64) -> Self {
        self.backoff_factor = backoff_factor;
        self
    }

    /// Sets `growth_interval`.
    pub fn growth_interval(mut self, growth_interval: i64) -> Self {
        self.growth_interval = growth_interval;
        self
    }

    /// Sets `enabled`.
    pub fn enabled(mut self, enabled: bool) -> Self {
        self.enabled = enabled;
        self
    }
}

/// Where an optimizer is in the current iteration (torch's `OptState`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Stage {
    Ready,
    Unscaled,
    Stepped,
}

/// What the scaler recorded for one optimizer since the last update (torch's
/// `_per_optimizer_states[id(optimizer)]`); the optimizer is known by its address.
struct OptimizerRecord {
    /// the optimizer's address (torch's `id(optimizer)`), see [`optimizer_id`]
    id: usize,
    stage: Stage,
    /// torch's `found_inf_per_device`: `None` when no parameter had a gradient (torch's empty
    /// dict), else 1.0 when a gradient had an inf/NaN, 0.0 otherwise
    found_inf: Option<f32>,
}

/// The identity the scaler keys an optimizer's record by: its address (torch's `id(optimizer)`),
/// stable while the optimizer is not moved, whatever happens to its parameters and groups.
fn optimizer_id<O: Optimizer + ?Sized>(optimizer: &O) -> usize {
    (optimizer as *const O).cast::<()>() as usize
}

/// torch's `torch.amp.GradScaler`: see the [module docs](self).
///
/// The scaler knows an optimizer by its address, as torch by `id(optimizer)`: two optimizers
/// have separate records even over the same parameters, and changing an optimizer's parameters
/// (e.g. `add_param_group`) between [`GradScaler::unscale_`] and [`GradScaler::step`] keeps its
/// record, so its gradients are not unscaled twice. The optimizer must therefore stay where it is
/// between `unscale_` and [`GradScaler::update`] (the records are cleared there): one moved in
/// between (e.g. into a `Vec` that reallocates; a boxed optimizer's heap object does not move)
/// reads as a new optimizer, whose gradients `step` would unscale again.
pub struct GradScaler {
    options: GradScalerOptions,
    /// torch's `_scale` (float32), `None` until the first [`GradScaler::scale`]
    scale: Option<f32>,
    /// torch's `_growth_tracker` (int32), made with `scale`
    growth_tracker: Option<i32>,
    /// torch's `_init_growth_tracker` (what a loaded state dict set before the first `scale`)
    init_growth_tracker: i32,
    records: Vec<OptimizerRecord>,
}

impl Default for GradScaler {
    fn default() -> Self {
        Self::new()
    }
}

impl GradScaler {
    /// A scaler with torch's defaults (init_scale 65536, growth_factor 2, backoff_factor 0.5,
    /// growth_interval 2000, enabled).
    pub fn new() -> Self {
        GradScaler {
            options: GradScalerOptions::default(),
            scale: None,
            growth_tracker: None,
            init_growth_tracker: 0,
            records: Vec::new(),
        }
    }

    /// A scaler with `options`; when enabled, a `growth_factor` not above 1 or a `backoff_factor`
    /// not below 1 is torch's error.
    pub fn with_options(options: GradScalerOptions) -> Result<Self> {
        if options.enabled {
            // (NaN fails too, as torch's `assert growth_factor > 1.0`)
            if options.growth_factor <= 1.0 || options.growth_factor.is_nan() {
                return Err(Error::msg("The growth factor must be > 1.0."));
            }
            if options.backoff_factor >= 1.0 || options.backoff_factor.is_nan() {
                return Err(Error::msg("The backoff factor must be < 1.0."));
            }
        }
        Ok(GradScaler { options, ..Self::new() })
    }

    /// Whether the scaler is enabled (torch's `is_enabled`).
    pub fn is_enabled(&self) -> bool {
        self.options.enabled
    }

    /// The current scale (torch's `get_scale`): `init_scale` before the first
    /// [`GradScaler::scale`], 1.0 when disabled.
    pub fn get_scale(&self) -> f64 {
        if !self.options.enabled {
            return 1.0;
        }
        self.scale.map_or(self.options.init_scale, f64::from)
    }

    /// The number of consecutive clean steps since the scale last changed (torch's
    /// `_get_growth_tracker`); 0 when disabled.
    pub fn get_growth_tracker(&self) -> i64 {
        if !self.options.enabled {
            return 0;
        }
        i64::from(self.growth_tracker.unwrap_or(self.init_growth_tracker))
    }

    /// torch's `get_growth_factor`.
    pub fn get_growth_factor(&self) -> f64 {
        self.options.growth_factor
    }

    /// torch's `set_growth_factor`.
    pub fn set_growth_factor(&mut self, new_factor: f64) {
        self.options.growth_factor = new_factor;
    }

    /// torch's `get_backoff_factor`.
    pub fn get_backoff_factor(&self) -> f64 {
        self.options.backoff_factor
    }

    /// torch's `set_backoff_factor`.
    pub fn set_backoff_factor(&mut self, new_factor: f64) {
        self.options.backoff_factor = new_factor;
    }

    /// torch's `get_growth_interval`.
    pub fn get_growth_interval(&self) -> i64 {
        self.options.growth_interval
    }

    /// torch's `set_growth_interval`.
    pub fn set_growth_interval(&mut self, new_interval: i64) {
        self.options.growth_interval = new_interval;
    }

    /// `outputs` (usually the loss) times the scale, in the dtype of `outputs` (the scale is a
    /// 0-dim float32 tensor); the first call makes the scale. Disabled: `outputs` unchanged.
    pub fn scale(&mut self, outputs: &Tensor) -> Result<Tensor> {
        if !self.options.enabled {
            return Ok(outputs.clone());
        }
        let scale = self.lazy_init();
        outputs.mul(Tensor::scalar_tensor(scale, (DType::F32, outputs.device()))?)
    }

    /// Makes the scale and growth tracker (torch's `_lazy_init_scale_growth_tracker`).
    fn lazy_init(&mut self) -> f32 {
        if self.growth_tracker.is_none() {
            self.growth_tracker = Some(self.init_growth_tracker);
        }
        *self.scale.get_or_insert(self.options.init_scale as f32)
    }

    /// torch's `_check_scale_growth_tracker`: the scale, or its error naming `funcname`.
    fn check_scale(&self, funcname: &str) -> Result<f32> {
        self.scale.ok_or_else(|| {
            Error::msg(format!(
                "Attempted {funcname} but _scale is None.  This may indicate your script did not use \
                 scaler.scale(loss or outputs) earlier in the iteration."
            ))
        })
    }

    /// The record of the optimizer known by `id` ([`optimizer_id`]), made `Ready` when new.
    fn record(&mut self, id: usize) -> &mut OptimizerRecord {
        let found = self.records.iter().position(|r| r.id == id);
        let i = match found {
            Some(i) => i,
            None => {
                self.records.push(OptimizerRecord { id, stage: Stage::Ready, found_inf: None });
                self.records.len() - 1
            }
        };
        &mut self.records[i]
    }

    /// Divides every gradient of `optimizer`'s parameters in place by the scale (a multiply by the
    /// float32 reciprocal, computed in float64 as torch's) and records whether any had an inf or
    /// NaN (torch's `unscale_`). Call it before changing gradients by their true values (e.g.
    /// [`clip_grad_norm_`](crate::optim::clip_grad_norm_)); [`GradScaler::step`] then does not
    /// unscale again. Errors as torch's: a second call before [`GradScaler::update`], a call after
    /// `step`, a float16 gradient ("Attempting to unscale FP16 gradients."), no
    /// [`GradScaler::scale`] before. Disabled: nothing.
    pub fn unscale_<O: Optimizer + ?Sized>(&mut self, optimizer: &mut O) -> Result<()> {
        if !self.options.enabled {
            return Ok(());
        }
        let scale = self.check_scale("unscale_")?;
        let id = optimizer_id(optimizer);
        let params = optimizer.params();
        match self.record(id).stage {
            Stage::Unscaled => {
                return Err(Error::msg(
                    "unscale_() has already been called on this optimizer since the last update().",
                ))
            }
            Stage::Stepped => return Err(Error::msg("unscale_() is being called after step().")),
            Stage::Ready => {}
        }
        let inv_scale = (1.0 / f64::from(scale)) as f32;
        let grads: Vec<Tensor> = params.iter().filter_map(Tensor::grad).collect();
        if grads.iter().any(|g| g.dtype() == DType::F16) {
            return Err(Error::msg("Attempting to unscale FP16 gradients."));
        }
        let mut found_inf = None;
        oxtorch_autograd::no_grad(|| -> Result<()> {
            for g in &grads {
                let finite = g.isfinite()?.all()?.item::<bool>()?;
                let flag = found_inf.get_or_insert(0.0f32);
                if !finite {
                    *flag = 1.0;
                }
                g.mul_(Tensor::scalar_tensor(inv_scale, (DType::F32, g.device()))?)?;
            }
            Ok(())
        })?;
        let record = self.record(id);
        record.found_inf = found_inf;
        record.stage = Stage::Unscaled;
        Ok(())
    }

    /// Unscales `optimizer`'s gradients unless [`GradScaler::unscale_`] did already this iteration,
    /// then takes its step unless a gradient had an inf or NaN (torch's `step`): `Some(())` when it
    /// stepped, `None` when the step was skipped. Errors as torch's: a second `step` before
    /// [`GradScaler::update`], no gradient at all ("No inf checks were recorded for this
    /// optimizer."), no [`GradScaler::scale`] before. Disabled: just the optimizer's step.
    pub fn step<O: Optimizer + ?Sized>(&mut self, optimizer: &mut O) -> Result<Option<()>> {
        if !self.options.enabled {
            optimizer.step()?;
            return Ok(Some(()));
        }
        self.check_scale("step")?;
        let id = optimizer_id(optimizer);
        let stage = self.record(id).stage;
        if stage == Stage::Stepped {
            return Err(Error::msg("step() has already been called since the last update()."));
        }
        if stage == Stage::Ready {
            self.unscale_(optimizer)?;
        }
        let record = self.record(id);
        let Some(found_inf) = record.found_inf else {
            return Err(Error::msg("No inf checks were recorded for this optimizer."));
        };
        let stepped = if found_inf == 0.0 {
            optimizer.step()?;
            Some(())
        } else {
            None
        };
        self.record(id).stage = Stage::Stepped;
        Ok(stepped)
    }

    /// Updates the scale (torch's `update`): with `new_scale`, sets it; otherwise, from what the
    /// optimizers recorded this iteration, as torch's `_amp_update_scale_`: after an inf/NaN the
    /// scale times `backoff_factor` and the tracker reset; else the tracker counts the clean step
    /// and, reaching `growth_interval`, the scale grows by `growth_factor` (unless that overflows
    /// float32) and the tracker resets. Then every optimizer's record is cleared. Errors as torch's:
    /// no [`GradScaler::scale`] before, no `unscale_`/`step` before ("No inf checks were recorded
    /// prior to update."). Disabled: nothing.
    pub fn update(&mut self, new_scale: Option<f64>) -> Result<()> {
        if !self.options.enabled {
            return Ok(());
        }
        let scale = self.check_scale("update")?;
        let tracker = self.growth_tracker.unwrap_or(self.init_growth_tracker);
        if let Some(new_scale) = new_scale {
            self.scale = Some(new_scale as f32);
        } else {
            let found: Vec<f32> = self.records.iter().filter_map(|r| r.found_inf).collect();
            if found.is_empty() {
                return Err(Error::msg("No inf checks were recorded prior to update."));
            }
            let found_inf: f32 = found.iter().sum();
            let o = self.options;
            let (scale, tracker) = if found_inf != 0.0 {
                ((f64::from(scale) * o.backoff_factor) as f32, 0)
            } else {
                let successful = tracker.wrapping_add(1);
                if i64::from(successful) == o.growth_interval {
                    let grown = (f64::from(scale) * o.growth_factor) as f32;
                    (if grown.is_finite() { grown } else { scale }, 0)
                } else {
                    (scale, successful)
                }
            };
            self.scale = Some(scale);
            self.growth_tracker = Some(tracker);
        }
        self.records.clear();
        Ok(())
    }

    /// torch's `state_dict`: `scale`, `growth_factor`, `backoff_factor`, `growth_interval` and
    /// `_growth_tracker`, in that order (integers as f64); empty when disabled.
    pub fn state_dict(&self) -> Vec<(String, f64)> {
        if !self.options.enabled {
            return Vec::new();
        }
        vec![
            ("scale".to_string(), self.get_scale()),
            ("growth_factor".to_string(), self.options.growth_factor),
            ("backoff_factor".to_string(), self.options.backoff_factor),
            ("growth_interval".to_string(), self.options.growth_interval as f64),
            ("_growth_tracker".to_string(), self.get_growth_tracker() as f64),
        ]
    }

    /// Restores [`GradScaler::state_dict`]'s output (torch's `load_state_dict`). Disabled: nothing.
    /// An empty state is torch's error, as is a missing key (torch's `KeyError`, named).
    pub fn load_state_dict(&mut self, state: &[(String, f64)]) -> Result<()> {
        if !self.options.enabled {
            return Ok(());
        }
        if state.is_empty() {
            return Err(Error::msg(
                "The source state dict is empty, possibly because it was saved from a disabled instance of \
                 GradScaler.",
            ));
        }
        let get = |key: &str| {
            state
                .iter()
                .find(|(k, _)| k == key)
                .map(|(_, v)| *v)
                .ok_or_else(|| Error::msg(format!("KeyError: '{key}'")))
        };
        let scale = get("scale")?;
        let growth_factor = get("growth_factor")?;
        let backoff_factor = get("backoff_factor")?;
        let growth_interval = get("growth_interval")?;
        let tracker = get("_growth_tracker")?;
        self.options.init_scale = scale;
        if self.scale.is_some() {
            self.scale = Some(scale as f32);
        }
        self.options.growth_factor = growth_factor;
        self.options.backoff_factor = backoff_factor;
        self.options.growth_interval = growth_interval as i64;
        self.init_growth_tracker = tracker as i32;
        if self.growth_tracker.is_some() {
            self.growth_tracker = Some(tracker as i32);
        }
        Ok(())
    }
}
