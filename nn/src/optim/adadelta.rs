//! `torch.optim.Adadelta` (weight decay, maximize).

use oxtorch_autograd::no_grad;
use oxtorch_tensor::{Error, Result, Tensor};

use super::state::{ParamState, StateReader, StateWriter};
use super::{group_methods, state_dict_methods, zero_grads, Optimizer, OptimizerState, ParamGroup};

/// Adadelta hyper-parameters with torch's defaults.
#[derive(Clone, Copy, Debug)]
pub struct AdadeltaOptions {
    /// coefficient that scales the delta before it is applied (default 1.0)
    pub lr: f64,
    /// decay of the running averages of squared gradients and updates (default 0.9)
    pub rho: f64,
    /// added inside the square roots (default 1e-6)
    pub eps: f64,
    /// L2 penalty
    pub weight_decay: f64,
    /// maximise the objective instead
    pub maximize: bool,
}

impl Default for AdadeltaOptions {
    fn default() -> Self {
        AdadeltaOptions { lr: 1.0, rho: 0.9, eps: 1e-6, weight_decay: 0.0, maximize: false }
    }
}

/// Per-parameter state.
#[derive(Clone)]
struct State {
    step: f64,
    square_avg: Tensor,
    acc_delta: Tensor,
}

impl ParamState for State {
    fn save(&self, out: &mut StateWriter<'_>) -> Result<()> {
        out.step(self.step)?;
        out.tensor("square_avg", &self.square_avg)?;
        out.tensor("acc_delta", &self.acc_delta)
    }

    fn load(entries: &StateReader<'_>) -> Result<Option<Self>> {
        let (Some(step), Some(square_avg), Some(acc_delta)) =
            (entries.step()?, entries.tensor("square_avg")?, entries.tensor("acc_delta")?)
        else {
            return Ok(None);
        };
        Ok(Some(State { step, square_avg, acc_delta }))
    }
}

/// Adadelta, as torch's single-tensor implementation.
pub struct Adadelta {
    groups: Vec<ParamGroup<AdadeltaOptions>>,
    /// each group's `initial_lr` (see [`Optimizer::initial_lr`])
    initial_lrs: Vec<Option<f64>>,
    state: Vec<Option<State>>,
    /// the options an added group starts from (torch's `defaults`)
    defaults: AdadeltaOptions,
}

impl Adadelta {
    /// One group of parameters.
    pub fn new(params: Vec<Tensor>, options: AdadeltaOptions) -> Result<Self> {
        let mut opt = Self::with_groups(vec![ParamGroup { params, options }])?;
        opt.defaults = options;
        Ok(opt)
    }

    /// Several groups (torch's errors for invalid hyper-parameters).
    pub fn with_groups(groups: Vec<ParamGroup<AdadeltaOptions>>) -> Result<Self> {
        for g in &groups {
            let o = g.options;
            if o.lr < 0.0 {
                return Err(Error::msg(format!("Invalid learning rate: {}", o.lr)));
            }
            if !(0.0..=1.0).contains(&o.rho) {
                return Err(Error::msg(format!("Invalid rho value: {}", o.rho)));
            }
            if o.eps < 0.0 {
                return Err(Error::msg(format!("Invalid epsilon value: {}", o.eps)));
            }
            if o.weight_decay < 0.0 {
                return Err(Error::msg(format!("Invalid weight_decay value: {}", o.weight_decay)));
            }
        }
        let n = groups.iter().map(|g| g.params.len()).sum();
        Ok(Adadelta {
            groups,
            initial_lrs: Vec::new(),
            state: vec![None; n],
            defaults: AdadeltaOptions::default(),
        })
    }
}

impl Optimizer for Adadelta {
    fn step(&mut self) -> Result<()> {
        let _end = super::StepEnd;
        no_grad(|| {
            let mut index = 0;
            for group in &self.groups {
                let o = group.options;
                for p in &group.params {
                    let i = index;
                    index += 1;
                    let Some(g) = p.grad() else { continue };
                    let mut g = if o.maximize { g.neg()? } else { g };
                    let st = match &mut self.state[i] {
                        Some(s) => s,
                        slot => slot.insert(State {
                            step: 0.0,
                            square_avg: p.zeros_like()?,
                            acc_delta: p.zeros_like()?,
                        }),
                    };
                    st.step += 1.0;
                    if o.weight_decay != 0.0 {
                        g = g.add(p.mul(o.weight_decay)?)?;
                    }
                    // square_avg.mul_(rho).addcmul_(grad, grad, value=1 - rho)
                    st.square_avg.mul_(o.rho)?.add_(&g.mul(1.0 - o.rho)?.mul(&g)?)?;
                    let std = st.square_avg.add(o.eps)?.sqrt()?;
                    let delta = st.acc_delta.add(o.eps)?.sqrt()?.div(&std)?.mul(&g)?;
                    st.acc_delta.mul_(o.rho)?.add_(&delta.mul(1.0 - o.rho)?.mul(&delta)?)?;
                    // param.add_(delta, alpha=-lr)
                    p.add_(&delta.mul(-o.lr)?)?;
                }
            }
            Ok(())
        })
    }

    group_methods!();

    state_dict_methods!();
}
