//! `torch.optim.SGD` (momentum, dampening, Nesterov, weight decay, maximize).

use oxtorch_autograd::no_grad;
use oxtorch_tensor::{Error, Result, Tensor};

use super::{group_methods, load_lrs, save_lrs, zero_grads, Optimizer, OptimizerState, ParamGroup};

/// SGD hyper-parameters with torch's defaults (`lr` is required in torch; 1e-3 here).
#[derive(Clone, Copy, Debug)]
pub struct SgdOptions {
    /// learning rate
    pub lr: f64,
    /// momentum factor
    pub momentum: f64,
    /// dampening of the momentum
    pub dampening: f64,
    /// L2 penalty added to the gradient
    pub weight_decay: f64,
    /// Nesterov momentum
    pub nesterov: bool,
    /// maximise the objective instead
    pub maximize: bool,
}

impl Default for SgdOptions {
    fn default() -> Self {
        SgdOptions {
            lr: 1e-3,
            momentum: 0.0,
            dampening: 0.0,
            weight_decay: 0.0,
            nesterov: false,
            maximize: false,
        }
    }
}

/// Stochastic gradient descent, as torch's single-tensor implementation.
pub struct SGD {
    groups: Vec<ParamGroup<SgdOptions>>,
    /// each group's `initial_lr` (see [`Optimizer::initial_lr`])
    initial_lrs: Vec<Option<f64>>,
    /// each parameter's momentum buffer (torch's `momentum_buffer` state)
    state: Vec<Option<Tensor>>,
    /// the options an added group starts from (torch's `defaults`)
    defaults: SgdOptions,
}

impl SGD {
    /// One group of parameters.
    pub fn new(params: Vec<Tensor>, options: SgdOptions) -> Result<Self> {
        let mut opt = Self::with_groups(vec![ParamGroup { params, options }])?;
        opt.defaults = options;
        Ok(opt)
    }

    /// Several groups with their own hyper-parameters.
    pub fn with_groups(groups: Vec<ParamGroup<SgdOptions>>) -> Result<Self> {
        for g in &groups {
            let o = g.options;
            if o.lr < 0.0 {
                return Err(Error::msg(format!("Invalid learning rate: {}", o.lr)));
            }
            if o.momentum < 0.0 {
                return Err(Error::msg(format!("Invalid momentum value: {}", o.momentum)));
            }
            if o.weight_decay < 0.0 {
                return Err(Error::msg(format!("Invalid weight_decay value: {}", o.weight_decay)));
            }
            if o.nesterov && (o.momentum <= 0.0 || o.dampening != 0.0) {
                return Err(Error::msg("Nesterov momentum requires a momentum and zero dampening"));
            }
        }
        let n = groups.iter().map(|g| g.params.len()).sum();
        Ok(SGD { initial_lrs: Vec::new(), groups, state: vec![None; n], defaults: SgdOptions::default() })
    }
}

impl Optimizer for SGD {
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
                    if o.weight_decay != 0.0 {
                        g = g.add(p.mul(o.weight_decay)?)?;
                    }
                    if o.momentum != 0.0 {
                        let buf = match &self.state[i] {
                            None => g.detach().copy()?,
                            Some(buf) => {
                                buf.mul_(o.momentum)?.add_(&g.mul(1.0 - o.dampening)?)?;
                                buf.clone()
                            }
                        };
                        g = if o.nesterov { g.add(buf.mul(o.momentum)?)? } else { buf.clone() };
                        self.state[i] = Some(buf);
                    }
                    p.sub_(&g.mul(o.lr)?)?;
                }
            }
            Ok(())
        })
    }

    group_methods!();

    fn momentum(&self, group: usize) -> Option<f64> {
        Some(self.groups[group].options.momentum)
    }

    fn set_momentum(&mut self, group: usize, momentum: f64) {
        self.groups[group].options.momentum = momentum;
    }

    fn state_dict(&self) -> Result<OptimizerState> {
        let mut s = OptimizerState::default();
        for (i, b) in self.state.iter().enumerate() {
            if let Some(b) = b {
                s.set_tensor(i, "momentum_buffer", b)?;
            }
        }
        save_lrs(self, &mut s);
        Ok(s)
    }

    fn load_state_dict(&mut self, state: &OptimizerState) -> Result<()> {
        super::check_groups(self, state)?;
        let params: Vec<Tensor> = self.groups.iter().flat_map(|g| g.params.iter().cloned()).collect();
        for (i, b) in self.state.iter_mut().enumerate() {
            *b = state
                .tensor(i, "momentum_buffer")
                .map(|t| super::state::state_for(t, &params[i]))
                .transpose()?;
        }
        load_lrs(self, state);
        Ok(())
    }
}
