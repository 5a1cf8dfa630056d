//! `torch.optim.ASGD` (averaged stochastic gradient descent; weight decay, maximize).

use oxtorch_autograd::no_grad;
use oxtorch_tensor::{DType, Error, Result, Tensor};

use super::state::{ParamState, StateReader, StateWriter};
use super::{group_methods, state_dict_methods, zero_grads, Optimizer, OptimizerState, ParamGroup};

/// ASGD hyper-parameters with torch's defaults.
#[derive(Clone, Copy, Debug)]
pub struct AsgdOptions {
    /// learning rate (default 1e-2)
    pub lr: f64,
    /// decay term (default 1e-4)
    pub lambd: f64,
    /// power of the learning-rate decay (default 0.75)
    pub alpha: f64,
    /// the step after which averaging starts (default 1e6)
    pub t0: f64,
    /// L2 penalty
    pub weight_decay: f64,
    /// maximise the objective instead
    pub maximize: bool,
}

impl Default for AsgdOptions {
    fn default() -> Self {
        AsgdOptions { lr: 1e-2, lambd: 1e-4, alpha: 0.75, t0: 1e6, weight_decay: 0.0, maximize: false }
    }
}

/// Per-parameter state. torch keeps `eta` and `mu` as tensors of the default dtype (float32):
/// every value they take is rounded to f32, and the update reads them back as such.
#[derive(Clone)]
struct State {
    step: f64,
    eta: f32,
    mu: f32,
    /// the running average of the parameter
    ax: Tensor,
}

impl ParamState for State {
    fn save(&self, out: &mut StateWriter<'_>) -> Result<()> {
        out.step(self.step)?;
        out.scalar("eta", f64::from(self.eta), DType::F32)?;
        out.scalar("mu", f64::from(self.mu), DType::F32)?;
        out.tensor("ax", &self.ax)
    }

    fn load(entries: &StateReader<'_>) -> Result<Option<Self>> {
        let (Some(step), Some(eta), Some(mu), Some(ax)) =
            (entries.step()?, entries.scalar("eta")?, entries.scalar("mu")?, entries.tensor("ax")?)
        else {
            return Ok(None);
        };
        Ok(Some(State { step, eta: eta as f32, mu: mu as f32, ax }))
    }
}

/// ASGD, as torch's single-tensor implementation.
#[allow(clippy::upper_case_acronyms)]
pub struct ASGD {
    groups: Vec<ParamGroup<AsgdOptions>>,
    /// each group's `initial_lr` (see [`Optimizer::initial_lr`])
    initial_lrs: Vec<Option<f64>>,
    state: Vec<Option<State>>,
    /// the options an added group starts from (torch's `defaults`)
    defaults: AsgdOptions,
}

impl ASGD {
    /// One group of parameters.
    pub fn new(params: Vec<Tensor>, options: AsgdOptions) -> Result<Self> {
        let mut opt = Self::with_groups(vec![ParamGroup { params, options }])?;
        opt.defaults = options;
        Ok(opt)
    }

    /// Several groups (torch's errors for invalid hyper-parameters).
    pub fn with_groups(groups: Vec<ParamGroup<AsgdOptions>>) -> Result<Self> {
        for g in &groups {
            let o = g.options;
            for (name, v) in [
                ("learning rate", o.lr),
                ("lambd value", o.lambd),
                ("alpha value", o.alpha),
                ("weight_decay value", o.weight_decay),
            ] {
                if v < 0.0 {
                    return Err(Error::msg(format!("Invalid {name}: {v}")));
                }
            }
        }
        let n = groups.iter().map(|g| g.params.len()).sum();
        Ok(ASGD { groups, initial_lrs: Vec::new(), state: vec![None; n], defaults: AsgdOptions::default() })
    }

    /// The running average `ax` of parameter `index` (numbered across groups), once it has
    /// taken a step.
    pub fn averaged(&self, index: usize) -> Option<&Tensor> {
        self.state.get(index)?.as_ref().map(|s| &s.ax)
    }
}

impl Optimizer for ASGD {
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
                        slot => {
                            slot.insert(State { step: 0.0, eta: o.lr as f32, mu: 1.0, ax: p.zeros_like()? })
                        }
                    };
                    st.step += 1.0;
                    if o.weight_decay != 0.0 {
                        g = g.add(p.mul(o.weight_decay)?)?;
                    }
                    let eta = f64::from(st.eta);
                    // decay term, then param.add_(grad, alpha=-eta)
                    p.mul_(1.0 - o.lambd * eta)?;
                    p.add_(&g.mul(-eta)?)?;
                    // averaging
                    if st.mu != 1.0 {
                        st.ax.add_(&p.sub(&st.ax)?.mul(f64::from(st.mu))?)?;
                    } else {
                        st.ax.copy_(p)?;
                    }
                    let step = st.step;
                    st.eta = (o.lr / (1.0 + o.lambd * o.lr * step).powf(o.alpha)) as f32;
                    st.mu = (1.0 / (step - o.t0).max(1.0)) as f32;
                }
            }
            Ok(())
        })
    }

    group_methods!();

    state_dict_methods!();
}
