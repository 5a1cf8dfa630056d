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
            .map(|g| g + 1)
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
