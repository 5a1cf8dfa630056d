//! `torch.optim.RMSprop` (centered, momentum, weight decay, maximize).

use oxtorch_autograd::no_grad;
use oxtorch_tensor::{Error, Result, Tensor};

use super::state::{ParamState, StateReader, StateWriter};
use super::{group_methods, state_dict_methods, zero_grads, Optimizer, OptimizerState, ParamGroup};

/// RMSprop hyper-parameters with torch's defaults.
#[derive(Clone, Copy, Debug)]
pub struct RMSpropOptions {
    /// learning rate (default 1e-2)
    pub lr: f64,
    /// smoothing constant (default 0.99)
    pub alpha: f64,
    /// added to the denominator (default 1e-8)
    pub eps: f64,
    /// L2 penalty
    pub weight_decay: f64,
    /// momentum factor
    pub momentum: f64,
    /// normalise by the estimated variance of the gradient
    pub centered: bool,
    /// maximise the objective instead
    pub maximize: bool,
}

impl Default for RMSpropOptions {
    fn default() -> Self {
        RMSpropOptions {
            lr: 1e-2,
            alpha: 0.99,
            eps: 1e-8,
            weight_decay: 0.0,
            momentum: 0.0,
            centered: false,
            maximize: false,
        }
    }
}

#[derive(Clone)]
struct State {
    step: f64,
    square_avg: Tensor,
    grad_avg: Option<Tensor>,
    momentum_buffer: Option<Tensor>,
}

impl ParamState for State {
    fn save(&self, out: &mut StateWriter<'_>) -> Result<()> {
        out.step(self.step)?;
        out.tensor("square_avg", &self.square_avg)?;
        out.optional("grad_avg", self.grad_avg.as_ref())?;
        out.optional("momentum_buffer", self.momentum_buffer.as_ref())
    }

    fn load(entries: &StateReader<'_>) -> Result<Option<Self>> {
        let (Some(step), Some(square_avg)) = (entries.step()?, entries.tensor("square_avg")?) else {
            return Ok(None);
        };
        Ok(Some(State {
            step,
            square_avg,
            grad_avg: entries.tensor("grad_avg")?,
            momentum_buffer: entries.tensor("momentum_buffer")?,
        }))
    }
}

/// RMSprop, as torch's single-tensor implementation.
#[allow(clippy::upper_case_acronyms)]
pub struct RMSprop {
    groups: Vec<ParamGroup<RMSpropOptions>>,
    /// each group's `initial_lr` (see [`Optimizer::initial_lr`])
    initial_lrs: Vec<Option<f64>>,
    state: Vec<Option<State>>,
    /// the options an added group starts from (torch's `defaults`)
    defaults: RMSpropOptions,
}

impl RMSprop {
    /// One group of parameters.
    pub fn new(params: Vec<Tensor>, options: RMSpropOptions) -> Result<Self> {
        let mut opt = Self::with_groups(vec![ParamGroup { params, options }])?;
        opt.defaults = options;
        Ok(opt)
    }

    /// Several groups.
    pub fn with_groups(groups: Vec<ParamGroup<RMSpropOptions>>) -> Result<Self> {
        for g in &groups {
            let o = g.options;
            for (name, v) in [
                ("learning rate", o.lr),
                ("epsilon value", o.eps),
                ("momentum value", o.momentum),
                ("weight_decay value", o.weight_decay),
                ("alpha value", o.alpha),
            ] {
                if v < 0.0 {
                    return Err(Error::msg(format!("Invalid {name}: {v}")));
                }
            }
        }
        let n = groups.iter().map(|g| g.params.len()).sum();
        Ok(RMSprop {
            initial_lrs: Vec::new(),
            groups,
            state: vec![None; n],
            defaults: RMSpropOptions::default(),
        })
    }
}

impl Optimizer for RMSprop {
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
                            grad_avg: if o.centered { Some(p.zeros_like()?) } else { None },
                            momentum_buffer: if o.momentum > 0.0 { Some(p.zeros_like()?) } else { None },
                        }),
                    };
                    st.step += 1.0;
                    if o.weight_decay != 0.0 {
                        g = g.add(p.mul(o.weight_decay)?)?;
                    }
                    st.square_avg.mul_(o.alpha)?.add_(&g.mul(&g)?.mul(1.0 - o.alpha)?)?;
                    let avg = match &st.grad_avg {
                        Some(ga) => {
                            ga.add_(&g.sub(ga)?.mul(1.0 - o.alpha)?)?;
                            st.square_avg.sub(ga.mul(ga)?)?.sqrt()?.add(o.eps)?
                        }
                        None => st.square_avg.sqrt()?.add(o.eps)?,
                    };
                    match &st.momentum_buffer {
                        Some(buf) => {
                            buf.mul_(o.momentum)?.add_(&g.div(&avg)?)?;
                            p.sub_(&buf.mul(o.lr)?)?;
                        }
                        None => {
                            p.sub_(&g.div(&avg)?.mul(o.lr)?)?;
                        }
                    }
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

    state_dict_methods!();
}
