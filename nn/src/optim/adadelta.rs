//! `torch.optim.Adadelta` (weight decay, maximize).

use oxtorch_autograd::no_grad;
use oxtorch_tensor::{DType, Error, Result, Tensor};

use super::state::state_for;
use super::{group_methods, load_lrs, save_lrs, zero_grads, Optimizer, OptimizerState, ParamGroup};

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

/// Adadelta, as torch's single-tensor implementation.
pub struct Adadelta {
    groups: Vec<ParamGroup<AdadeltaOptions>>,
    /// each group's `initial_lr` (see [`Optimizer::initial_lr`])
    initial_lrs: Vec<Option<f64>>,
    state: Vec<Option<State>>,
}

impl Adadelta {
    /// One group of parameters.
    pub fn new(params: Vec<Tensor>, options: AdadeltaOptions) -> Result<Self> {
        Self::with_groups(vec![ParamGroup { params, options }])
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
        Ok(Adadelta { groups, initial_lrs: Vec::new(), state: vec![None; n] })
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

    fn state_dict(&self) -> Result<OptimizerState> {
        let mut s = OptimizerState::default();
        for (i, st) in self.state.iter().enumerate() {
            if let Some(st) = st {
                s.set_tensor(i, "step", &Tensor::scalar_tensor(st.step, DType::F64)?)?;
                s.set_tensor(i, "square_avg", &st.square_avg)?;
                s.set_tensor(i, "acc_delta", &st.acc_delta)?;
            }
        }
        save_lrs(self, &mut s);
        Ok(s)
    }

    fn load_state_dict(&mut self, state: &OptimizerState) -> Result<()> {
        super::check_groups(self, state)?;
        let params: Vec<Tensor> = self.groups.iter().flat_map(|g| g.params.iter().cloned()).collect();
        for (i, slot) in self.state.iter_mut().enumerate() {
            *slot = match (
                state.tensor(i, "step"),
                state.tensor(i, "square_avg"),
                state.tensor(i, "acc_delta"),
            ) {
                (Some(step), Some(sq), Some(acc)) => Some(State {
                    step: step.item::<f64>()?,
                    square_avg: state_for(sq, &params[i])?,
                    acc_delta: state_for(acc, &params[i])?,
                }),
                _ => None,
            };
        }
        load_lrs(self, state);
        Ok(())
    }
}
