//! `torch.optim.Adafactor` (factored second moments, relative step size, update clipping,
//! decoupled weight decay, maximize).

use oxtorch_autograd::no_grad;
use oxtorch_tensor::{DType, Error, Result, Tensor};

use super::state::{ParamState, StateReader, StateWriter};
use super::{
    group_methods, state_dict_methods, zero_grads, HyperParams, Optimizer, OptimizerState, ParamGroup,
};

/// Adafactor hyper-parameters with torch's defaults.
#[derive(Clone, Copy, Debug)]
pub struct AdafactorOptions {
    /// learning rate: the weight decay's coefficient and the largest relative step size
    /// (default 1e-2)
    pub lr: f64,
    /// the decay rate τ of beta2 (`1 - beta2_t = t^τ`; default -0.8)
    pub beta2_decay: f64,
    /// `(eps1, eps2)`: eps1 bounds the variance estimate from below (`None`: the parameter
    /// dtype's machine epsilon, torch's `finfo(dtype).eps`), eps2 the parameter scale
    /// (default `(None, 1e-3)`)
    pub eps: (Option<f64>, f64),
    /// the update clipping threshold (default 1.0)
    pub d: f64,
    /// decoupled weight decay (`p *= 1 - lr * weight_decay`)
    pub weight_decay: f64,
    /// maximise the objective instead
    pub maximize: bool,
}

impl Default for AdafactorOptions {
    fn default() -> Self {
        AdafactorOptions {
            lr: 1e-2,
            beta2_decay: -0.8,
            eps: (None, 1e-3),
            d: 1.0,
            weight_decay: 0.0,
            maximize: false,
        }
    }
}

/// torch's `param_groups` keys: `lr`, `beta2_decay`, `eps.0` (NaN for `None`), `eps.1`, `d`,
/// `weight_decay`, `maximize` (0/1).
impl HyperParams for AdafactorOptions {
    fn hyper_params(&self) -> Vec<(String, f64)> {
        vec![
            ("lr".to_string(), self.lr),
            ("beta2_decay".to_string(), self.beta2_decay),
            ("eps.0".to_string(), self.eps.0.unwrap_or(f64::NAN)),
            ("eps.1".to_string(), self.eps.1),
            ("d".to_string(), self.d),
            ("weight_decay".to_string(), self.weight_decay),
            ("maximize".to_string(), f64::from(u8::from(self.maximize))),
        ]
    }

    fn set_hyper_param(&mut self, name: &str, value: f64) {
        match name {
            "lr" => self.lr = value,
            "beta2_decay" => self.beta2_decay = value,
            "eps.0" => self.eps.0 = if value.is_nan() { None } else { Some(value) },
            "eps.1" => self.eps.1 = value,
            "d" => self.d = value,
            "weight_decay" => self.weight_decay = value,
            "maximize" => self.maximize = value != 0.0,
            _ => {}
        }
    }
}

/// Per-parameter state: `row_var` and `col_var` (the second moment's factors over the last two
/// dims) for a parameter of two dims or more, `variance` otherwise.
#[derive(Clone)]
struct State {
    step: f64,
    row_var: Option<Tensor>,
    col_var: Option<Tensor>,
    variance: Option<Tensor>,
}

impl ParamState for State {
    fn save(&self, out: &mut StateWriter<'_>) -> Result<()> {
        out.step(self.step)?;
        out.optional("row_var", self.row_var.as_ref())?;
        out.optional("col_var", self.col_var.as_ref())?;
        out.optional("variance", self.variance.as_ref())
    }

    fn load(entries: &StateReader<'_>) -> Result<Option<Self>> {
        let Some(step) = entries.step()? else { return Ok(None) };
        let (row_var, col_var, variance) =
            (entries.tensor("row_var")?, entries.tensor("col_var")?, entries.tensor("variance")?);
        // either both factors or the variance
        if !((row_var.is_some() && col_var.is_some()) || variance.is_some()) {
            return Ok(None);
        }
        Ok(Some(State { step, row_var, col_var, variance }))
    }
}

/// A float as Python's `str` writes it (`-1.0`, not Rust's `-1`), for torch's messages.
fn py_float(x: f64) -> String {
    if x.is_finite() && x.fract() == 0.0 && x.abs() < 1e16 {
        format!("{x:.1}")
    } else {
        format!("{x}")
    }
}

/// `torch.finfo(dtype).eps`.
fn machine_eps(dtype: DType) -> f64 {
    match dtype {
        DType::F64 => f64::EPSILON,
        DType::F16 => 0.0009765625,
        DType::BF16 => 0.0078125,
        _ => f64::from(f32::EPSILON),
    }
}

/// Adafactor, as torch's single-tensor implementation.
pub struct Adafactor {
    groups: Vec<ParamGroup<AdafactorOptions>>,
    /// each group's `initial_lr` (see [`Optimizer::initial_lr`])
    initial_lrs: Vec<Option<f64>>,
    state: Vec<Option<State>>,
    /// the options an added group starts from (torch's `defaults`)
    defaults: AdafactorOptions,
}

impl Adafactor {
    /// One group of parameters.
    pub fn new(params: Vec<Tensor>, options: AdafactorOptions) -> Result<Self> {
        let mut opt = Self::with_groups(vec![ParamGroup { params, options }])?;
        opt.defaults = options;
        Ok(opt)
    }

    /// Several groups (torch's errors for invalid hyper-parameters, in its order).
    pub fn with_groups(groups: Vec<ParamGroup<AdafactorOptions>>) -> Result<Self> {
        for g in &groups {
            let o = g.options;
            // (NaN fails too, as torch's `not 0.0 <= x`)
            let bad = |what: String| Err(Error::msg(what));
            let negative = |x: f64| x < 0.0 || x.is_nan();
            if negative(o.lr) {
                return bad(format!("Learning rate should be >= 0 but is: {}", py_float(o.lr)));
            }
            if o.beta2_decay > 0.0 || o.beta2_decay.is_nan() {
                return bad(format!("beta2_decay should be <= 0 but is: {}", py_float(o.beta2_decay)));
            }
            if let Some(eps1) = o.eps.0 {
                if negative(eps1) {
                    return bad(format!("epsilon1 should be >= 0 but is: {}", py_float(eps1)));
                }
            }
            if negative(o.eps.1) {
                return bad(format!("epsilon2 should be >= 0 but is: {}", py_float(o.eps.1)));
            }
            if o.d < 1.0 || o.d.is_nan() {
                return bad(format!("Clipping threshold d should be >= 1 but is: {}", py_float(o.d)));
            }
            if negative(o.weight_decay) {
                return bad(format!("weight_decay should be >= 0 but is: {}", py_float(o.weight_decay)));
            }
        }
        let n = groups.iter().map(|g| g.params.len()).sum();
        Ok(Adafactor {
            groups,
            initial_lrs: Vec::new(),
            state: vec![None; n],
            defaults: AdafactorOptions::default(),
        })
    }
}

impl Optimizer for Adafactor {
    fn step(&mut self) -> Result<()> {
        let _end = super::StepEnd;
        no_grad(|| {
            let mut index = 0;
            for group in &self.groups {
                let o = group.options;
                // torch sets eps1 from the first stepped parameter's dtype and keeps it for the
                // rest of the group
                let mut eps1 = o.eps.0;
                for p in &group.params {
                    let i = index;
                    index += 1;
                    let Some(g) = p.grad() else { continue };
                    let g = if o.maximize { g.neg()? } else { g };
                    let st = match &mut self.state[i] {
                        Some(s) => s,
                        slot => {
                            let s = if g.dim() > 1 {
                                let mut row_shape = g.dims().to_vec();
                                let n = row_shape.len();
                                row_shape[n - 1] = 1;
                                let mut col_shape = g.dims().to_vec();
                                col_shape[n - 2] = 1;
                                State {
                                    step: 0.0,
                                    row_var: Some(g.new_zeros(row_shape)?),
                                    col_var: Some(g.new_zeros(col_shape)?),
                                    variance: None,
                                }
                            } else {
                                State {
                                    step: 0.0,
                                    row_var: None,
                                    col_var: None,
                                    variance: Some(g.zeros_like()?),
                                }
                            };
                            slot.insert(s)
                        }
                    };
                    let eps1 = *eps1.get_or_insert_with(|| machine_eps(p.dtype()));
                    st.step += 1.0;
                    let step = st.step;
                    let one_minus_beta2_t = step.powf(o.beta2_decay);
                    let rho_t = o.lr.min(1.0 / step.powf(0.5));
                    let rms = p.norm(2.0, Vec::<isize>::new(), false)?.item::<f64>()?
                        / (p.numel() as f64).powf(0.5);
                    let alpha = o.eps.1.max(rms) * rho_t;
                    if o.weight_decay != 0.0 {
                        p.mul_(1.0 - o.lr * o.weight_decay)?;
                    }
                    let var_estimate = if g.dim() > 1 {
                        let (Some(row_var), Some(col_var)) = (&st.row_var, &st.col_var) else {
                            return Err(Error::msg(
                                "row_var and col_var should be defined when grad is multidimensional",
                            ));
                        };
                        // (g * g).mean(dim=-1) as torch computes it: the norm squared, divided
                        let row_mean = g.norm(2.0, -1, true)?.square()?.div(g.size(-1)? as f64)?;
                        row_var.lerp_(&row_mean, one_minus_beta2_t)?;
                        let col_mean = g.norm(2.0, -2, true)?.square()?.div(g.size(-2)? as f64)?;
                        col_var.lerp_(&col_mean, one_minus_beta2_t)?;
                        let v = row_var.matmul(col_var)?;
                        v.div(&row_var.mean(-2, true)?.clamp_min(eps1)?)?
                    } else {
                        let Some(variance) = &st.variance else {
                            return Err(Error::msg("variance should be defined when grad is a vector"));
                        };
                        variance.lerp_(&g.mul(&g)?, one_minus_beta2_t)?;
                        variance.copy()?
                    };
                    // eps1 squared, as the square root follows
                    let update = var_estimate.clamp_min(eps1 * eps1)?.rsqrt()?.mul(&g)?;
                    let update_rms = update.norm(2.0, Vec::<isize>::new(), false)?.item::<f64>()?
                        / ((update.numel() as f64).powf(0.5) * o.d);
                    let denom = 1.0f64.max(update_rms);
                    p.add_(&update.mul(-alpha / denom)?)?;
                }
            }
            Ok(())
        })
    }

    group_methods!();

    state_dict_methods!();
}
