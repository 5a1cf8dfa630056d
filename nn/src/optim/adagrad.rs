//! `torch.optim.Adagrad`.

use oxtorch_autograd::no_grad;
use oxtorch_tensor::{DType, Error, Result, Tensor};

use super::{group_methods, load_lrs, save_lrs, zero_grads, Optimizer, OptimizerState, ParamGroup};

/// Adagrad hyper-parameters with torch's defaults.
#[derive(Clone, Copy, Debug)]
pub struct AdagradOptions {
    /// learning rate (default 1e-2)
    pub lr: f64,
    /// learning-rate decay per step
    pub lr_decay: f64,
    /// L2 penalty
    pub weight_decay: f64,
    /// starting value of the squared-gradient sums
    pub initial_accumulator_value: f64,
    /// added to the denominator (default 1e-10)
    pub eps: f64,
    /// maximise the objective instead
    pub maximize: bool,
}

impl Default for AdagradOptions {
    fn default() -> Self {
        AdagradOptions {
            lr: 1e-2,
            lr_decay: 0.0,
            weight_decay: 0.0,
            initial_accumulator_value: 0.0,
            eps: 1e-10,
            maximize: false,
        }
    }
}

/// Adagrad, as torch's single-tensor implementation.
pub struct Adagrad {
    groups: Vec<ParamGroup<AdagradOptions>>,
    /// each group's `initial_lr` (see [`Optimizer::initial_lr`])
    initial_lrs: Vec<Option<f64>>,
    steps: Vec<f64>,
    sums: Vec<Tensor>,
}

impl Adagrad {
    /// One group of parameters.
    pub fn new(params: Vec<Tensor>, options: AdagradOptions) -> Result<Self> {
        Self::with_groups(vec![ParamGroup { params, options }])
    }

    /// Several groups (state is created eagerly, as torch does).
    pub fn with_groups(groups: Vec<ParamGroup<AdagradOptions>>) -> Result<Self> {
        let mut sums = Vec::new();
        for g in &groups {
            let o = g.options;
            for (name, v) in [
                ("learning rate", o.lr),
                ("lr_decay value", o.lr_decay),
                ("weight_decay value", o.weight_decay),
                ("initial_accumulator_value value", o.initial_accumulator_value),
                ("epsilon value", o.eps),
            ] {
                if v < 0.0 {
                    return Err(Error::msg(format!("Invalid {name}: {v}")));
                }
            }
            for p in &g.params {
                sums.push(p.detach().full_like(o.initial_accumulator_value)?);
            }
        }
        Ok(Adagrad { initial_lrs: Vec::new(), steps: vec![0.0; sums.len()], groups, sums })
    }
}

impl Optimizer for Adagrad {
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
                    self.steps[i] += 1.0;
                    if o.weight_decay != 0.0 {
                        g = g.add(p.mul(o.weight_decay)?)?;
                    }
                    let clr = o.lr / (1.0 + (self.steps[i] - 1.0) * o.lr_decay);
                    self.sums[i].add_(&g.mul(&g)?)?;
                    let std = self.sums[i].sqrt()?.add(o.eps)?;
                    p.sub_(&g.div(&std)?.mul(clr)?)?;
                }
            }
            Ok(())
        })
    }

    group_methods!();

    fn state_dict(&self) -> Result<OptimizerState> {
        let mut s = OptimizerState::default();
        for (i, (step, sum)) in self.steps.iter().zip(&self.sums).enumerate() {
            s.set_tensor(i, "step", &Tensor::scalar_tensor(*step, DType::F64)?)?;
            s.set_tensor(i, "sum", sum)?;
        }
        save_lrs(self, &mut s);
        Ok(s)
    }

    fn load_state_dict(&mut self, state: &OptimizerState) -> Result<()> {
        super::check_groups(self, state)?;
        let params: Vec<Tensor> = self.groups.iter().flat_map(|g| g.params.iter().cloned()).collect();
        for (i, param) in params.iter().enumerate().take(self.sums.len()) {
            if let (Some(step), Some(sum)) = (state.tensor(i, "step"), state.tensor(i, "sum")) {
                self.steps[i] = step.item::<f64>()?;
                self.sums[i] = super::state::state_for(sum, param)?;
            }
        }
        load_lrs(self, state);
        Ok(())
    }
}
