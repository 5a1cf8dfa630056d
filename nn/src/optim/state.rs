//! Optimizer state dicts: per-parameter tensors (`state.{index}.{name}`, parameters numbered across
//! groups in order, as torch does) and per-group hyper-parameters, saved as one safetensors file.

use std::collections::HashMap;

use oxtorch_tensor::{Error, Result, Tensor};

use crate::state_dict::StateDict;

/// An optimizer's resumable state.
#[derive(Clone, Default)]
pub struct OptimizerState {
    /// per-parameter tensors by `state.{param index}.{name}` (e.g. `state.0.exp_avg`, `state.0.step`)
    pub tensors: StateDict,
    /// per-group hyper-parameters by `param_groups.{group}.{name}` (e.g. `param_groups.0.lr`)
    pub hyper: Vec<(String, f64)>,
}

impl OptimizerState {
    /// The tensor `state.{index}.{name}`.
    pub fn tensor(&self, index: usize, name: &str) -> Option<&Tensor> {
        self.tensors.get(&format!("state.{index}.{name}"))
    }

    /// Stores `state.{index}.{name}` (a detached copy, so later steps do not change it).
    pub fn set_tensor(&mut self, index: usize, name: &str, t: &Tensor) -> Result<()> {
        self.tensors
            .insert(&format!("state.{index}.{name}"), oxtorch_autograd::no_grad(|| t.detach().copy())?);
        Ok(())
    }

    /// The hyper-parameter `param_groups.{group}.{name}`.
    pub fn hyper(&self, group: usize, name: &str) -> Option<f64> {
        let key = format!("param_groups.{group}.{name}");
        self.hyper.iter().find(|(k, _)| *k == key).map(|(_, v)| *v)
    }

    /// The number of parameter groups with stored hyper-parameters.
    pub fn num_groups(&self) -> usize {
        self.hyper
            .iter()
            .filter_map(|(k, _)| k.strip_prefix("param_groups.")?.split('.').next()?.parse::<usize>().ok())
            .map(|g| g.saturating_add(1))
            .max()
            .unwrap_or(0)
    }

    /// Stores a hyper-parameter.
    pub fn set_hyper(&mut self, group: usize, name: &str, v: f64) {
        self.hyper.push((format!("param_groups.{group}.{name}"), v));
    }

    /// Stores other resumable values under `{prefix}.{key}` (a scheduler's
    /// [`state_dict`](super::lr_scheduler::Scheduler::state_dict), say with prefix `"scheduler"`),
    /// saved and loaded with the optimizer's own.
    pub fn set_extra(&mut self, prefix: &str, values: &[(String, f64)]) {
        self.hyper.extend(values.iter().map(|(k, v)| (format!("{prefix}.{k}"), *v)));
    }

    /// What [`OptimizerState::set_extra`] stored under `prefix`, keys without the prefix.
    pub fn extra(&self, prefix: &str) -> Vec<(String, f64)> {
        let prefix = format!("{prefix}.");
        self.hyper.iter().filter_map(|(k, v)| k.strip_prefix(&prefix).map(|k| (k.to_string(), *v))).collect()
    }

    /// Saves atomically as safetensors (hyper-parameters in the header metadata, exact as text).
    pub fn save(&self, path: impl AsRef<std::path::Path>) -> Result<()> {
        let meta: HashMap<String, String> =
            self.hyper.iter().map(|(k, v)| (k.clone(), format!("{v:e}"))).collect();
        let mut meta = meta;
        meta.insert("format".into(), "oxtorch-optimizer".into());
        let bytes = self.tensors.to_safetensors_bytes(Some(meta))?;
        crate::state_dict::write_atomic(path.as_ref(), &bytes)
    }

    /// Loads what [`OptimizerState::save`] wrote.
    pub fn load(path: impl AsRef<std::path::Path>) -> Result<OptimizerState> {
        let path = path.as_ref();
        let bytes =
            std::fs::read(path).map_err(|e| Error::msg(format!("cannot read '{}': {e}", path.display())))?;
        let (_, meta) = safetensors::SafeTensors::read_metadata(&bytes)
            .map_err(|e| Error::msg(format!("'{}': invalid safetensors file: {e}", path.display())))?;
        let format = meta.metadata().as_ref().and_then(|m| m.get("format")).map(String::as_str);
        if format != Some("oxtorch-optimizer") {
            return Err(Error::msg(format!(
                "'{}' is not an optimizer state (its format is {}, not \"oxtorch-optimizer\")",
                path.display(),
                format.map_or("not given".to_string(), |f| format!("\"{f}\""))
            )));
        }
        let mut hyper: Vec<(String, f64)> = Vec::new();
        if let Some(m) = meta.metadata() {
            for (k, v) in m {
                match v.parse::<f64>() {
                    Ok(v) => hyper.push((k.clone(), v)),
                    // Only numbers are ours; other text (the format tag, a writer's notes) is not.
                    Err(_) if !k.starts_with("param_groups.") => {}
                    Err(_) => return Err(Error::msg(format!("bad hyper-parameter {k}={v}"))),
                }
            }
        }
        hyper.sort_by(|a, b| a.0.cmp(&b.0));
        Ok(OptimizerState { tensors: StateDict::from_safetensors_bytes(&bytes)?, hyper })
    }
}

/// A loaded state tensor as the optimizer keeps it: an own copy on `param`'s device, in its
/// dtype when both are floating point (torch's `load_state_dict` casts moments to their
/// parameter's; `step` counters are not read through here).
pub(crate) fn state_for(
    t: &oxtorch_tensor::Tensor,
    param: &oxtorch_tensor::Tensor,
) -> oxtorch_tensor::Result<oxtorch_tensor::Tensor> {
    oxtorch_tensor::no_grad(|| {
        let t = t.to(param.device())?;
        if t.dtype().is_float() && param.dtype().is_float() && t.dtype() != param.dtype() {
            t.to_dtype(param.dtype())
        } else {
            t.copy()
        }
    })
}

/// One parameter's optimizer state, saved as `state.{index}.{name}` entries (torch's per-parameter
/// state dict). Optimizers keeping `Vec<Option<S>>` get their `state_dict`/`load_state_dict` from
/// [`state_dict_methods!`](crate::optim::state_dict_methods).
pub(crate) trait ParamState: Sized {
    /// Writes this state's entries.
    fn save(&self, out: &mut StateWriter<'_>) -> Result<()>;

    /// Reads a state back; `None` when the checkpoint holds none for the parameter (it had not
    /// been stepped), or lacks one of the entries that every state has.
    fn load(entries: &StateReader<'_>) -> Result<Option<Self>>;
}

/// Where [`ParamState::save`] writes one parameter's entries.
pub(crate) struct StateWriter<'a> {
    state: &'a mut OptimizerState,
    index: usize,
}

impl StateWriter<'_> {
    /// The step counter, as torch keeps it: a float64 0-d tensor `step`.
    pub(crate) fn step(&mut self, step: f64) -> Result<()> {
        self.scalar("step", step, oxtorch_tensor::DType::F64)
    }

    /// A number kept as a 0-d tensor of `dtype` (torch's `mu_product`, `eta`, ...).
    pub(crate) fn scalar(&mut self, name: &str, value: f64, dtype: oxtorch_tensor::DType) -> Result<()> {
        self.tensor(name, &Tensor::scalar_tensor(value, dtype)?)
    }

    /// A tensor entry (copied).
    pub(crate) fn tensor(&mut self, name: &str, t: &Tensor) -> Result<()> {
        self.state.set_tensor(self.index, name, t)
    }

    /// A tensor entry when there is one.
    pub(crate) fn optional(&mut self, name: &str, t: Option<&Tensor>) -> Result<()> {
        t.map_or(Ok(()), |t| self.tensor(name, t))
    }
}

/// Where [`ParamState::load`] reads one parameter's entries from.
pub(crate) struct StateReader<'a> {
    state: &'a OptimizerState,
    index: usize,
    param: &'a Tensor,
}

impl StateReader<'_> {
    /// The step counter.
    pub(crate) fn step(&self) -> Result<Option<f64>> {
        self.scalar("step")
    }

    /// A number kept as a 0-d tensor.
    pub(crate) fn scalar(&self, name: &str) -> Result<Option<f64>> {
        self.state.tensor(self.index, name).map(|t| t.item::<f64>()).transpose()
    }

    /// A tensor entry as the optimizer keeps it: on the parameter's device, in its dtype (see
    /// [`state_for`]).
    pub(crate) fn tensor(&self, name: &str) -> Result<Option<Tensor>> {
        self.state.tensor(self.index, name).map(|t| state_for(t, self.param)).transpose()
    }
}

/// Saves every parameter's state (parameters numbered across groups).
pub(crate) fn save_states<S: ParamState>(states: &[Option<S>], out: &mut OptimizerState) -> Result<()> {
    for (index, st) in states.iter().enumerate() {
        if let Some(st) = st {
            st.save(&mut StateWriter { state: out, index })?;
        }
    }
    Ok(())
}

/// Loads every parameter's state from `state` (parameters numbered across groups, `params` in
/// that order); a parameter without one starts afresh.
pub(crate) fn load_states<'p, S: ParamState>(
    states: &mut [Option<S>],
    params: impl Iterator<Item = &'p Tensor>,
    state: &OptimizerState,
) -> Result<()> {
    for (index, (slot, param)) in states.iter_mut().zip(params).enumerate() {
        *slot = S::load(&StateReader { state, index, param })?;
    }
    Ok(())
}
