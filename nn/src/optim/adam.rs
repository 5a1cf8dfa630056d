//! `torch.optim.Adam` and `AdamW` (amsgrad, weight decay, maximize).

use oxtorch_autograd::no_grad;
use oxtorch_tensor::{AdamScalars, Result, Tensor};

use super::state::{ParamState, StateReader, StateWriter};
use super::{group_methods, state_dict_methods, zero_grads, Optimizer, OptimizerState, ParamGroup};

/// Adam/AdamW hyper-parameters with torch's defaults (Adam: `weight_decay = 0`; AdamW: `0.01`).
#[derive(Clone, Copy, Debug)]
pub struct AdamOptions {
    /// learning rate
    pub lr: f64,
    /// `(beta1, beta2)`
    pub betas: (f64, f64),
    /// added to the denominator
    pub eps: f64,
    /// L2 penalty (Adam) or decoupled decay (AdamW)
    pub weight_decay: f64,
    /// keep the maximum of the second moments
    pub amsgrad: bool,
    /// maximise the objective instead
    pub maximize: bool,
}

impl Default for AdamOptions {
    fn default() -> Self {
        AdamOptions {
            lr: 1e-3,
            betas: (0.9, 0.999),
            eps: 1e-8,
            weight_decay: 0.0,
            amsgrad: false,
            maximize: false,
        }
    }
}

/// Per-parameter moments.
#[derive(Clone)]
struct Moments {
    step: f64,
    exp_avg: Tensor,
    exp_avg_sq: Tensor,
    max_exp_avg_sq: Option<Tensor>,
}

impl ParamState for Moments {
    fn save(&self, out: &mut StateWriter<'_>) -> Result<()> {
        out.step(self.step)?;
        out.tensor("exp_avg", &self.exp_avg)?;
        out.tensor("exp_avg_sq", &self.exp_avg_sq)?;
        out.optional("max_exp_avg_sq", self.max_exp_avg_sq.as_ref())
    }

    fn load(entries: &StateReader<'_>) -> Result<Option<Self>> {
        let (Some(step), Some(exp_avg), Some(exp_avg_sq)) =
            (entries.step()?, entries.tensor("exp_avg")?, entries.tensor("exp_avg_sq")?)
        else {
            return Ok(None);
        };
        Ok(Some(Moments { step, exp_avg, exp_avg_sq, max_exp_avg_sq: entries.tensor("max_exp_avg_sq")? }))
    }
}

/// Adam (`decoupled = false`) or AdamW (`decoupled = true`), as torch's single-tensor code; on the CPU
/// each parameter's update runs as one fused pass ([`Tensor::fused_adam_`]) with the same roundings.
pub struct Adam {
    groups: Vec<ParamGroup<AdamOptions>>,
    /// each group's `initial_lr` (see [`Optimizer::initial_lr`])
    initial_lrs: Vec<Option<f64>>,
    state: Vec<Option<Moments>>,
    decoupled: bool,
    /// the options an added group starts from (torch's `defaults`)
    defaults: AdamOptions,
}

/// torch's `AdamW`: Adam with decoupled weight decay (default 0.01).
pub struct AdamW;

impl AdamW {
    /// One group of parameters; `options.weight_decay` is the decoupled decay.
    #[allow(clippy::new_ret_no_self)]
    pub fn new(params: Vec<Tensor>, options: AdamOptions) -> Result<Adam> {
        Adam::build(vec![ParamGroup { params, options }], true, options)
    }

    /// torch's AdamW defaults (`lr = 1e-3`, `weight_decay = 1e-2`).
    pub fn default_options() -> AdamOptions {
        AdamOptions { weight_decay: 1e-2, ..AdamOptions::default() }
    }

    /// Several groups.
    pub fn with_groups(groups: Vec<ParamGroup<AdamOptions>>) -> Result<Adam> {
        Adam::build(groups, true, AdamW::default_options())
    }
}

impl Adam {
    /// One group of parameters.
    pub fn new(params: Vec<Tensor>, options: AdamOptions) -> Result<Self> {
        Self::build(vec![ParamGroup { params, options }], false, options)
    }

    /// Several groups.
    pub fn with_groups(groups: Vec<ParamGroup<AdamOptions>>) -> Result<Self> {
        Self::build(groups, false, AdamOptions::default())
    }

    fn build(groups: Vec<ParamGroup<AdamOptions>>, decoupled: bool, defaults: AdamOptions) -> Result<Self> {
        for g in &groups {
            let o = g.options;
            super::check_adam_options(o.lr, o.eps, o.betas, o.weight_decay)?;
        }
        let n = groups.iter().map(|g| g.params.len()).sum();
        Ok(Adam { initial_lrs: Vec::new(), groups, state: vec![None; n], decoupled, defaults })
    }
}

impl Optimizer for Adam {
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
                    let st = match &mut self.state[i] {
                        Some(s) => s,
                        slot => slot.insert(Moments {
                            step: 0.0,
                            exp_avg: p.zeros_like()?,
                            exp_avg_sq: p.zeros_like()?,
                            max_exp_avg_sq: if o.amsgrad { Some(p.zeros_like()?) } else { None },
                        }),
                    };
                    st.step += 1.0;
                    let scalars = AdamScalars {
                        lr: o.lr,
                        betas: o.betas,
                        eps: o.eps,
                        weight_decay: o.weight_decay,
                        decoupled: self.decoupled,
                        maximize: o.maximize,
                        step: st.step,
                    };
                    if p.fused_adam_(&g, &st.exp_avg, &st.exp_avg_sq, st.max_exp_avg_sq.as_ref(), &scalars)? {
                        continue;
                    }
                    let mut g = if o.maximize { g.neg()? } else { g };
                    if o.weight_decay != 0.0 {
                        if self.decoupled {
                            p.mul_(1.0 - o.lr * o.weight_decay)?;
                        } else {
                            g = g.add(p.mul(o.weight_decay)?)?;
                        }
                    }
                    // exp_avg.lerp_(grad, 1 - beta1); exp_avg_sq.mul_(beta2).addcmul_(grad, grad, 1 - beta2)
                    st.exp_avg.add_(&g.sub(&st.exp_avg)?.mul(1.0 - b1)?)?;
                    st.exp_avg_sq.mul_(b2)?.add_(&g.mul(&g)?.mul(1.0 - b2)?)?;
                    let bc1 = 1.0 - b1.powf(st.step);
                    let bc2_sqrt = (1.0 - b2.powf(st.step)).sqrt();
                    let second = match &st.max_exp_avg_sq {
                        Some(m) => {
                            m.copy_(&m.maximum(&st.exp_avg_sq)?)?;
                            m.clone()
                        }
                        None => st.exp_avg_sq.clone(),
                    };
                    let denom = second.sqrt()?.div(bc2_sqrt)?.add(o.eps)?;
                    p.sub_(&st.exp_avg.div(&denom)?.mul(o.lr / bc1)?)?;
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

#[cfg(test)]
mod tests {
    use oxtorch_tensor::{DType, Result, Tensor};

    use super::*;

    /// Three steps on a contiguous parameter (the fused kernel) and on a transposed view of the same
    /// values (op by op): bit-identical parameters, for every float dtype and every option.
    #[test]
    fn fused_step_matches_the_op_by_op_step() -> Result<()> {
        let _rng = crate::rng_lock();
        for dtype in [DType::F32, DType::F64, DType::F16, DType::BF16] {
            for (decoupled, amsgrad, maximize, weight_decay) in [
                (true, false, false, 0.01),
                (false, true, false, 0.1),
                (false, false, true, 0.0),
                (true, true, true, 0.05),
            ] {
                oxtorch_tensor::manual_seed(0);
                let base = Tensor::randn([7, 33], ())?.to_dtype(dtype)?;
                let fused = base.t()?.contiguous()?.requires_grad_(true)?;
                let plain = base.t()?.requires_grad_(true)?;
                assert!(!plain.is_contiguous());
                let o = AdamOptions { lr: 0.01, weight_decay, amsgrad, maximize, ..AdamOptions::default() };
                let make = |p: &Tensor| {
                    let g = vec![p.clone()];
                    if decoupled {
                        AdamW::new(g, o)
                    } else {
                        Adam::new(g, o)
                    }
                };
                let (mut a, mut b) = (make(&fused)?, make(&plain)?);
                for step in 0..3 {
                    let g = Tensor::randn([33, 7], ())?.mul(step as f64 + 0.5)?.to_dtype(dtype)?;
                    fused.set_grad(Some(g.clone()))?;
                    plain.set_grad(Some(g.t()?.contiguous()?.t()?))?;
                    a.step()?;
                    b.step()?;
                }
                let (x, y) = (
                    fused.to_dtype(DType::F64)?.to_vec::<f64>()?,
                    plain.to_dtype(DType::F64)?.contiguous()?.to_vec::<f64>()?,
                );
                // (f16's eps rounds to 0, so a zero second moment gives NaN in both)
                let same = x.iter().zip(&y).all(|(a, b)| a == b || (a.is_nan() && b.is_nan()));
                assert!(
                    same,
                    "{dtype:?} decoupled={decoupled} amsgrad={amsgrad} maximize={maximize}: {x:?} != {y:?}"
                );
            }
        }
        Ok(())
    }
}
