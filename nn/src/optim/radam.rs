//! `torch.optim.RAdam` (rectified Adam: L2 or decoupled weight decay, maximize).

use oxtorch_autograd::no_grad;
use oxtorch_tensor::{Result, Tensor};

use super::state::{ParamState, StateReader, StateWriter};
use super::{group_methods, state_dict_methods, zero_grads, Optimizer, OptimizerState, ParamGroup};

/// RAdam hyper-parameters with torch's defaults.
#[derive(Clone, Copy, Debug)]
pub struct RAdamOptions {
    /// learning rate (default 1e-3)
    pub lr: f64,
    /// `(beta1, beta2)` (default `(0.9, 0.999)`)
    pub betas: (f64, f64),
    /// added to the denominator (default 1e-8)
    pub eps: f64,
    /// L2 penalty, or the decoupled decay with `decoupled_weight_decay`
    pub weight_decay: f64,
    /// decay the weights directly, as AdamW does (RAdamW)
    pub decoupled_weight_decay: bool,
    /// maximise the objective instead
    pub maximize: bool,
}

impl Default for RAdamOptions {
    fn default() -> Self {
        RAdamOptions {
            lr: 1e-3,
            betas: (0.9, 0.999),
            eps: 1e-8,
            weight_decay: 0.0,
            decoupled_weight_decay: false,
            maximize: false,
        }
    }
}

/// Per-parameter moments.
#[derive(Clone)]
struct State {
    step: f64,
    exp_avg: Tensor,
    exp_avg_sq: Tensor,
}

impl ParamState for State {
    fn save(&self, out: &mut StateWriter<'_>) -> Result<()> {
        out.step(self.step)?;
        out.tensor("exp_avg", &self.exp_avg)?;
        out.tensor("exp_avg_sq", &self.exp_avg_sq)
    }

    fn load(entries: &StateReader<'_>) -> Result<Option<Self>> {
        let (Some(step), Some(exp_avg), Some(exp_avg_sq)) =
            (entries.step()?, entries.tensor("exp_avg")?, entries.tensor("exp_avg_sq")?)
        else {
            return Ok(None);
        };
        Ok(Some(State { step, exp_avg, exp_avg_sq }))
    }
}

/// RAdam, as torch's single-tensor implementation: plain momentum SGD until the variance of the
/// adaptive learning rate is tractable (`rho_t > 5`), rectified Adam from then on.
pub struct RAdam {
    groups: Vec<ParamGroup<RAdamOptions>>,
    /// each group's `initial_lr` (see [`Optimizer::initial_lr`])
    initial_lrs: Vec<Option<f64>>,
    state: Vec<Option<State>>,
    /// the options an added group starts from (torch's `defaults`)
    defaults: RAdamOptions,
}

impl RAdam {
    /// One group of parameters.
    pub fn new(params: Vec<Tensor>, options: RAdamOptions) -> Result<Self> {
        let mut opt = Self::with_groups(vec![ParamGroup { params, options }])?;
        opt.defaults = options;
        Ok(opt)
    }

    /// Several groups (torch's errors for invalid hyper-parameters).
    pub fn with_groups(groups: Vec<ParamGroup<RAdamOptions>>) -> Result<Self> {
        for g in &groups {
            let o = g.options;
            super::check_adam_options(o.lr, o.eps, o.betas, o.weight_decay)?;
        }
        let n = groups.iter().map(|g| g.params.len()).sum();
        Ok(RAdam { groups, initial_lrs: Vec::new(), state: vec![None; n], defaults: RAdamOptions::default() })
    }
}

impl Optimizer for RAdam {
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
                            exp_avg: p.zeros_like()?,
                            exp_avg_sq: p.zeros_like()?,
                        }),
                    };
                    st.step += 1.0;
                    let step = st.step;
                    if o.weight_decay != 0.0 {
                        if o.decoupled_weight_decay {
                            p.mul_(1.0 - o.lr * o.weight_decay)?;
                        } else {
                            g = g.add(p.mul(o.weight_decay)?)?;
                        }
                    }
                    // exp_avg.lerp_(grad, 1 - beta1); exp_avg_sq.mul_(beta2).addcmul_(grad, grad, 1 - beta2)
                    st.exp_avg.copy_(&st.exp_avg.lerp(&g, 1.0 - b1)?)?;
                    st.exp_avg_sq.mul_(b2)?.add_(&g.mul(1.0 - b2)?.mul(&g)?)?;
                    let bias_correction1 = 1.0 - b1.powf(step);
                    let bias_correction2 = 1.0 - b2.powf(step);
                    let bias_corrected_exp_avg = st.exp_avg.div(bias_correction1)?;
                    // the maximum and the current length of the approximated SMA
                    let rho_inf = 2.0 / (1.0 - b2) - 1.0;
                    let rho_t = rho_inf - 2.0 * step * b2.powf(step) / bias_correction2;
                    let update = if rho_t > 5.0 {
                        let rect = ((rho_t - 4.0) * (rho_t - 2.0) * rho_inf
                            / ((rho_inf - 4.0) * (rho_inf - 2.0) * rho_t))
                            .powf(0.5);
                        // `bias_correction2 ** 0.5 / denom`: torch's `number / tensor` is
                        // `tensor.reciprocal() * number`
                        let adaptive_lr = st
                            .exp_avg_sq
                            .sqrt()?
                            .add(o.eps)?
                            .reciprocal()?
                            .mul(bias_correction2.powf(0.5))?;
                        bias_corrected_exp_avg.mul(o.lr)?.mul(&adaptive_lr)?.mul(rect)?
                    } else {
                        bias_corrected_exp_avg.mul(o.lr)?
                    };
                    p.sub_(&update)?;
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
