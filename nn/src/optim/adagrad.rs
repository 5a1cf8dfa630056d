//! `torch.optim.Adagrad`.

use oxtorch_autograd::no_grad;
use oxtorch_tensor::{Error, Result, Tensor};

use super::state::{ParamState, StateReader, StateWriter};
use super::{group_methods, state_dict_methods, zero_grads, Optimizer, OptimizerState, ParamGroup};

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

/// One parameter's state: the step count and the sum of squared gradients.
#[derive(Clone)]
struct Sum {
    step: f64,
    sum: Tensor,
}

impl ParamState for Sum {
    fn save(&self, out: &mut StateWriter<'_>) -> Result<()> {
        out.step(self.step)?;
        out.tensor("sum", &self.sum)
    }

    fn load(entries: &StateReader<'_>) -> Result<Option<Self>> {
        let (Some(step), Some(sum)) = (entries.step()?, entries.tensor("sum")?) else {
            return Ok(None);
        };
        Ok(Some(Sum { step, sum }))
    }
}

/// Adagrad, as torch's single-tensor implementation.
pub struct Adagrad {
    groups: Vec<ParamGroup<AdagradOptions>>,
    /// each group's `initial_lr` (see [`Optimizer::initial_lr`])
    initial_lrs: Vec<Option<f64>>,
    /// created eagerly for the groups given at construction, as torch does; a parameter without
    /// one (an added group, a checkpoint without its entry) starts from the defaults'
    /// `initial_accumulator_value` at its first step, as torch's `_init_group`
    state: Vec<Option<Sum>>,
    /// the options an added group starts from (torch's `defaults`)
    defaults: AdagradOptions,
}

impl Adagrad {
    /// One group of parameters.
    pub fn new(params: Vec<Tensor>, options: AdagradOptions) -> Result<Self> {
        Self::with_defaults(vec![ParamGroup { params, options }], options)
    }

    /// Several groups (state is created eagerly, as torch does), with the type's defaults as the
    /// constructor's.
    pub fn with_groups(groups: Vec<ParamGroup<AdagradOptions>>) -> Result<Self> {
        Self::with_defaults(groups, AdagradOptions::default())
    }

    /// The groups, with `defaults` as torch's constructor arguments.
    fn with_defaults(groups: Vec<ParamGroup<AdagradOptions>>, defaults: AdagradOptions) -> Result<Self> {
        let mut state = Vec::new();
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
        }
        // torch fills every sum from the constructor's `initial_accumulator_value` (a group's own
        // value is never read).
        for p in groups.iter().flat_map(|g| &g.params) {
            state.push(Some(Sum {
                step: 0.0,
                sum: p.detach().full_like(defaults.initial_accumulator_value)?,
            }));
        }
        Ok(Adagrad { initial_lrs: Vec::new(), groups, state, defaults })
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
                    let st = match &mut self.state[i] {
                        Some(s) => s,
                        slot => slot.insert(Sum {
                            step: 0.0,
                            sum: p.detach().full_like(self.defaults.initial_accumulator_value)?,
                        }),
                    };
                    let mut g = if o.maximize { g.neg()? } else { g };
                    st.step += 1.0;
                    if o.weight_decay != 0.0 {
                        g = g.add(p.mul(o.weight_decay)?)?;
                    }
                    let clr = o.lr / (1.0 + (st.step - 1.0) * o.lr_decay);
                    st.sum.add_(&g.mul(&g)?)?;
                    let std = st.sum.sqrt()?.add(o.eps)?;
                    p.sub_(&g.div(&std)?.mul(clr)?)?;
                }
            }
            Ok(())
        })
    }

    group_methods!();

    state_dict_methods!();
}
