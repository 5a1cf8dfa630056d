//! `torch.optim.Adamax` (Adam with the infinity norm; weight decay, maximize).

use oxtorch_autograd::no_grad;
use oxtorch_tensor::{Result, Tensor};

use super::state::{ParamState, StateReader, StateWriter};
use super::{group_methods, state_dict_methods, zero_grads, Optimizer, OptimizerState, ParamGroup};

/// Adamax hyper-parameters with torch's defaults.
#[derive(Clone, Copy, Debug)]
pub struct AdamaxOptions {
    /// learning rate (default 2e-3)
    pub lr: f64,
    /// `(beta1, beta2)` (default `(0.9, 0.999)`)
    pub betas: (f64, f64),
    /// added to the infinity norm (default 1e-8)
    pub eps: f64,
    /// L2 penalty
    pub weight_decay: f64,
    /// maximise the objective instead
    pub maximize: bool,
}

impl Default for AdamaxOptions {
    fn default() -> Self {
        AdamaxOptions { lr: 2e-3, betas: (0.9, 0.999), eps: 1e-8, weight_decay: 0.0, maximize: false }
    }
}

/// Per-parameter state.
#[derive(Clone)]
struct State {
    step: f64,
    exp_avg: Tensor,
    exp_inf: Tensor,
}

impl ParamState for State {
    fn save(&self, out: &mut StateWriter<'_>) -> Result<()> {
        out.step(self.step)?;
        out.tensor("exp_avg", &self.exp_avg)?;
        out.tensor("exp_inf", &self.exp_inf)
    }

    fn load(entries: &StateReader<'_>) -> Result<Option<Self>> {
        let (Some(step), Some(exp_avg), Some(exp_inf)) =
            (entries.step()?, entries.tensor("exp_avg")?, entries.tensor("exp_inf")?)
        else {
            return Ok(None);
        };
        Ok(Some(State { step, exp_avg, exp_inf }))
    }
}

/// Adamax, as torch's single-tensor implementation.
pub struct Adamax {
    groups: Vec<ParamGroup<AdamaxOptions>>,
    /// each group's `initial_lr` (see [`Optimizer::initial_lr`])
    initial_lrs: Vec<Option<f64>>,
    state: Vec<Option<State>>,
    /// the options an added group starts from (torch's `defaults`)
    defaults: AdamaxOptions,
}

impl Adamax {
    /// One group of parameters.
    pub fn new(params: Vec<Tensor>, options: AdamaxOptions) -> Result<Self> {
        let mut opt = Self::with_groups(vec![ParamGroup { params, options }])?;
        opt.defaults = options;
        Ok(opt)
    }

    /// Several groups (torch's errors for invalid hyper-parameters).
    pub fn with_groups(groups: Vec<ParamGroup<AdamaxOptions>>) -> Result<Self> {
        for g in &groups {
            let o = g.options;
            super::check_adam_options(o.lr, o.eps, o.betas, o.weight_decay)?;
        }
        let n = groups.iter().map(|g| g.params.len()).sum();
        Ok(Adamax {
            groups,
            initial_lrs: Vec::new(),
            state: vec![None; n],
            defaults: AdamaxOptions::default(),
        })
    }
}

impl Optimizer for Adamax {
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
                            exp_inf: p.zeros_like()?,
                        }),
                    };
                    st.step += 1.0;
                    if o.weight_decay != 0.0 {
                        g = g.add(p.mul(o.weight_decay)?)?;
                    }
                    st.exp_avg.copy_(&st.exp_avg.lerp(&g, 1.0 - b1)?)?;
                    // torch.maximum(exp_inf.mul_(beta2), grad.abs().add_(eps), out=exp_inf)
                    st.exp_inf.copy_(&st.exp_inf.mul(b2)?.maximum(g.abs()?.add(o.eps)?)?)?;
                    let clr = o.lr / (1.0 - b1.powf(st.step));
                    // addcdiv_(exp_avg, exp_inf, value=-clr): `p + (-clr * exp_avg) / exp_inf`
                    p.add_(&st.exp_avg.mul(-clr)?.div(&st.exp_inf)?)?;
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
