//! `torch.optim.NAdam` (Nesterov-accelerated Adam: momentum decay, L2 or decoupled weight decay,
//! maximize).

use oxtorch_autograd::no_grad;
use oxtorch_tensor::{DType, Error, Result, Tensor};

use super::state::{ParamState, StateReader, StateWriter};
use super::{group_methods, state_dict_methods, zero_grads, Optimizer, OptimizerState, ParamGroup};

/// NAdam hyper-parameters with torch's defaults.
#[derive(Clone, Copy, Debug)]
pub struct NAdamOptions {
    /// learning rate (default 2e-3)
    pub lr: f64,
    /// `(beta1, beta2)` (default `(0.9, 0.999)`)
    pub betas: (f64, f64),
    /// added to the denominator (default 1e-8)
    pub eps: f64,
    /// L2 penalty, or the decoupled decay with `decoupled_weight_decay`
    pub weight_decay: f64,
    /// momentum decay ψ of the momentum schedule (default 4e-3)
    pub momentum_decay: f64,
    /// decay the weights directly, as AdamW does (NAdamW)
    pub decoupled_weight_decay: bool,
    /// maximise the objective instead
    pub maximize: bool,
}

impl Default for NAdamOptions {
    fn default() -> Self {
        NAdamOptions {
            lr: 2e-3,
            betas: (0.9, 0.999),
            eps: 1e-8,
            weight_decay: 0.0,
            momentum_decay: 4e-3,
            decoupled_weight_decay: false,
            maximize: false,
        }
    }
}

/// Per-parameter state.
#[derive(Clone)]
struct State {
    step: f64,
    /// the product of the momentum schedule; torch keeps it as a tensor of the default dtype
    /// (float32), so every `mu_product *= mu` rounds to f32
    mu_product: f32,
    exp_avg: Tensor,
    exp_avg_sq: Tensor,
}

impl ParamState for State {
    fn save(&self, out: &mut StateWriter<'_>) -> Result<()> {
        out.step(self.step)?;
        out.scalar("mu_product", f64::from(self.mu_product), DType::F32)?;
        out.tensor("exp_avg", &self.exp_avg)?;
        out.tensor("exp_avg_sq", &self.exp_avg_sq)
    }

    fn load(entries: &StateReader<'_>) -> Result<Option<Self>> {
        let (Some(step), Some(mu_product), Some(exp_avg), Some(exp_avg_sq)) = (
            entries.step()?,
            entries.scalar("mu_product")?,
            entries.tensor("exp_avg")?,
            entries.tensor("exp_avg_sq")?,
        ) else {
            return Ok(None);
        };
        Ok(Some(State { step, mu_product: mu_product as f32, exp_avg, exp_avg_sq }))
    }
}

/// NAdam, as torch's single-tensor implementation.
pub struct NAdam {
    groups: Vec<ParamGroup<NAdamOptions>>,
    /// each group's `initial_lr` (see [`Optimizer::initial_lr`])
    initial_lrs: Vec<Option<f64>>,
    state: Vec<Option<State>>,
    /// the options an added group starts from (torch's `defaults`)
    defaults: NAdamOptions,
}

impl NAdam {
    /// One group of parameters.
    pub fn new(params: Vec<Tensor>, options: NAdamOptions) -> Result<Self> {
        let mut opt = Self::with_groups(vec![ParamGroup { params, options }])?;
        opt.defaults = options;
        Ok(opt)
    }

    /// Several groups (torch's errors for invalid hyper-parameters).
    pub fn with_groups(groups: Vec<ParamGroup<NAdamOptions>>) -> Result<Self> {
        for g in &groups {
            let o = g.options;
            super::check_adam_options(o.lr, o.eps, o.betas, o.weight_decay)?;
            if o.momentum_decay < 0.0 {
                return Err(Error::msg(format!("Invalid momentum_decay value: {}", o.momentum_decay)));
            }
        }
        let n = groups.iter().map(|g| g.params.len()).sum();
        Ok(NAdam { groups, initial_lrs: Vec::new(), state: vec![None; n], defaults: NAdamOptions::default() })
    }
}

impl Optimizer for NAdam {
    fn step(&mut self) -> Result<()> {
        let _end = super::StepEnd;
        no_grad(|| {
            let mut index = 0;
            for group in &self.groups {
                let o = group.options;
                let (b1, b2) = o.betas;
                for p in &group.params {
                    let i = index;
                    index += 1;
                    let Some(g) = p.grad() else { continue };
                    let mut g = if o.maximize { g.neg()? } else { g };
                    let st = match &mut self.state[i] {
                        Some(s) => s,
                        slot => slot.insert(State {
                            step: 0.0,
                            mu_product: 1.0,
                            exp_avg: p.zeros_like()?,
                            exp_avg_sq: p.zeros_like()?,
                        }),
                    };
                    st.step += 1.0;
                    let step = st.step;
                    let bias_correction2 = 1.0 - b2.powf(step);
                    if o.weight_decay != 0.0 {
                        if o.decoupled_weight_decay {
                            p.mul_(1.0 - o.lr * o.weight_decay)?;
                        } else {
                            g = g.add(p.mul(o.weight_decay)?)?;
                        }
                    }
                    // the momentum cache mu_t and mu_{t+1}
                    let mu = b1 * (1.0 - 0.5 * 0.96f64.powf(step * o.momentum_decay));
                    let mu_next = b1 * (1.0 - 0.5 * 0.96f64.powf((step + 1.0) * o.momentum_decay));
                    // a float32 tensor times a Python float: both operands in f32, one rounding
                    st.mu_product *= mu as f32;
                    let mu_product = f64::from(st.mu_product);
                    let mu_product_next = mu_product * mu_next;
                    // exp_avg.lerp_(grad, 1 - beta1); exp_avg_sq.mul_(beta2).addcmul_(grad, grad, 1 - beta2)
                    st.exp_avg.copy_(&st.exp_avg.lerp(&g, 1.0 - b1)?)?;
                    st.exp_avg_sq.mul_(b2)?.add_(&g.mul(1.0 - b2)?.mul(&g)?)?;
                    let denom = st.exp_avg_sq.div(bias_correction2)?.sqrt()?.add(o.eps)?;
                    // addcdiv_(t1, t2, value) is `p + value * t1 / t2`, left to right
                    let grad_value = -o.lr * (1.0 - mu) / (1.0 - mu_product);
                    p.add_(&g.mul(grad_value)?.div(&denom)?)?;
                    let avg_value = (-o.lr * mu_next) / (1.0 - mu_product_next);
                    p.add_(&st.exp_avg.mul(avg_value)?.div(&denom)?)?;
                }
            }
            Ok(())
        })
    }

    group_methods!();

    fn momentum(&self, group: usize) -> Option<f64> {
        Some(self.groups[group].options.betas.0)
    }

    fn set_momentum(&mut self, group: usize, momentum: f64) {
        self.groups[group].options.betas.0 = momentum;
    }

    state_dict_methods!();
}
