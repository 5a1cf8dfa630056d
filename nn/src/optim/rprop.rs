//! `torch.optim.Rprop` (resilient backpropagation; maximize).

use oxtorch_autograd::no_grad;
use oxtorch_tensor::{Error, Result, Tensor};

use super::state::{ParamState, StateReader, StateWriter};
use super::{group_methods, state_dict_methods, zero_grads, Optimizer, OptimizerState, ParamGroup};

/// Rprop hyper-parameters with torch's defaults.
#[derive(Clone, Copy, Debug)]
pub struct RpropOptions {
    /// initial step size of every element (default 1e-2; later changes do not touch existing state)
    pub lr: f64,
    /// `(etaminus, etaplus)`: step-size factors after a sign flip and after a sign kept
    /// (default `(0.5, 1.2)`)
    pub etas: (f64, f64),
    /// `(min, max)` step size (default `(1e-6, 50)`)
    pub step_sizes: (f64, f64),
    /// maximise the objective instead
    pub maximize: bool,
}

impl Default for RpropOptions {
    fn default() -> Self {
        RpropOptions { lr: 1e-2, etas: (0.5, 1.2), step_sizes: (1e-6, 50.0), maximize: false }
    }
}

/// Per-parameter state.
#[derive(Clone)]
struct State {
    step: f64,
    /// the last gradient applied (zero where its sign had flipped)
    prev: Tensor,
    /// the per-element step sizes
    step_size: Tensor,
}

impl ParamState for State {
    fn save(&self, out: &mut StateWriter<'_>) -> Result<()> {
        out.step(self.step)?;
        out.tensor("prev", &self.prev)?;
        out.tensor("step_size", &self.step_size)
    }

    fn load(entries: &StateReader<'_>) -> Result<Option<Self>> {
        let (Some(step), Some(prev), Some(step_size)) =
            (entries.step()?, entries.tensor("prev")?, entries.tensor("step_size")?)
        else {
            return Ok(None);
        };
        Ok(Some(State { step, prev, step_size }))
    }
}

/// Rprop, as torch's single-tensor implementation: each element moves by its own step size
/// against the sign of its gradient; the step size grows by `etaplus` while the sign holds and
/// shrinks by `etaminus` when it flips, and a flipped element skips that step.
pub struct Rprop {
    groups: Vec<ParamGroup<RpropOptions>>,
    /// each group's `initial_lr` (see [`Optimizer::initial_lr`])
    initial_lrs: Vec<Option<f64>>,
    state: Vec<Option<State>>,
    /// the options an added group starts from (torch's `defaults`)
    defaults: RpropOptions,
}

impl Rprop {
    /// One group of parameters.
    pub fn new(params: Vec<Tensor>, options: RpropOptions) -> Result<Self> {
        let mut opt = Self::with_groups(vec![ParamGroup { params, options }])?;
        opt.defaults = options;
        Ok(opt)
    }

    /// Several groups (torch's errors for invalid hyper-parameters).
    pub fn with_groups(groups: Vec<ParamGroup<RpropOptions>>) -> Result<Self> {
        for g in &groups {
            let o = g.options;
            if o.lr < 0.0 {
                return Err(Error::msg(format!("Invalid learning rate: {}", o.lr)));
            }
            let (minus, plus) = o.etas;
            if !(0.0 < minus && minus < 1.0 && 1.0 < plus) {
                return Err(Error::msg(format!("Invalid eta values: {minus}, {plus}")));
            }
        }
        let n = groups.iter().map(|g| g.params.len()).sum();
        Ok(Rprop { groups, initial_lrs: Vec::new(), state: vec![None; n], defaults: RpropOptions::default() })
    }
}

impl Optimizer for Rprop {
    fn step(&mut self) -> Result<()> {
        let _end = super::StepEnd;
        no_grad(|| {
            let mut index = 0;
            for group in &self.groups {
                let o = group.options;
                let (etaminus, etaplus) = o.etas;
                let (step_size_min, step_size_max) = o.step_sizes;
                for p in &group.params {
                    let i = index;
                    index += 1;
                    let Some(g) = p.grad() else { continue };
                    let g = if o.maximize { g.neg()? } else { g };
                    let st = match &mut self.state[i] {
                        Some(s) => s,
                        slot => slot.insert(State {
                            step: 0.0,
                            prev: p.zeros_like()?,
                            step_size: g.full_like(o.lr)?,
                        }),
                    };
                    st.step += 1.0;
                    // sign[sign > 0] = etaplus; sign[sign < 0] = etaminus; sign[sign == 0] = 1
                    let sign = g.mul(&st.prev)?.sign()?;
                    let sign = Tensor::where_cond(&sign.gt(0.0)?, etaplus, &sign)?;
                    let sign = Tensor::where_cond(&sign.lt(0.0)?, etaminus, &sign)?;
                    let sign = Tensor::where_cond(&sign.eq(0.0)?, 1.0, &sign)?;
                    // step_size.mul_(sign).clamp_(step_size_min, step_size_max)
                    st.step_size.copy_(
                        &st.step_size.mul(&sign)?.clamp_min(step_size_min)?.clamp_max(step_size_max)?,
                    )?;
                    // where the sign flipped the gradient counts as zero: no move, and no flip next time
                    let g = g.masked_fill(&sign.eq(etaminus)?, 0.0)?;
                    // param.addcmul_(grad.sign(), step_size, value=-1)
                    p.sub_(&g.sign()?.mul(&st.step_size)?)?;
                    st.prev.copy_(&g)?;
                }
            }
            Ok(())
        })
    }

    group_methods!();

    state_dict_methods!();
}
