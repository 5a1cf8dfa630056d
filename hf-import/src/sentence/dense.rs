//! sentence-transformers' `Dense` module on the pooled embedding: `activation(linear(x))`, plus `x`
//! (or a bias-free projection of it) with `use_residual`. Its folder holds `config.json`
//! (`in_features`, `out_features`, `bias`, `activation_function`, `use_residual`) and the weights
//! (`linear.weight`, `linear.bias`, `residual.weight`) as `model.safetensors` or `pytorch_model.bin`.

use std::path::Path;

use oxtorch_tensor::{DType, Device, Tensor};
use serde_json::Value;

use crate::config::Config;
use crate::error::{Error, Result};
use crate::layers::Activation;
use crate::weights::Weights;

/// The activations a `Dense` config names by their torch class.
const SUPPORTED: &str = "Identity, Tanh, ReLU, GELU, SiLU, Sigmoid";

/// One `Dense` module.
#[derive(Debug, Clone)]
pub(crate) struct Dense {
    weight: Tensor,
    bias: Option<Tensor>,
    /// `None`: the identity.
    activation: Option<DenseActivation>,
    residual: Option<Residual>,
}

/// What `use_residual` adds.
#[derive(Debug, Clone)]
enum Residual {
    /// `x` itself (`in_features == out_features`).
    Input,
    /// `x @ weight.T`.
    Projection(Tensor),
}

#[derive(Debug, Clone, Copy)]
enum DenseActivation {
    Act(Activation),
    Sigmoid,
}

impl Dense {
    /// Loads the module folder `dir`, its weights in `dtype` (default: as stored) on `device`.
    pub fn load(dir: &Path, dtype: Option<DType>, device: Device) -> Result<Self> {
        let cfg = Config::load(dir)?;
        let (inputs, outputs) = (cfg.usize("in_features")?, cfg.usize("out_features")?);
        let activation = activation(cfg.str_or("activation_function", "torch.nn.modules.activation.Tanh")?)?;
        let weights = Weights::load(dir, dtype)?.to_device(device)?;
        let weight = weights.tensor("linear.weight", &[outputs, inputs])?;
        let bias =
            if cfg.bool_or("bias", true)? { Some(weights.tensor("linear.bias", &[outputs])?) } else { None };
        let residual = match (cfg.bool_or("use_residual", false)?, inputs == outputs) {
            (false, _) => None,
            (true, true) => Some(Residual::Input),
            (true, false) => {
                Some(Residual::Projection(weights.tensor("residual.weight", &[outputs, inputs])?))
            }
        };
        Ok(Dense { weight, bias, activation, residual })
    }

    /// The module on pooled embeddings `[batch, in_features]`.
    pub fn forward(&self, x: &Tensor) -> Result<Tensor> {
        let mut out = x.matmul(&self.weight.t()?)?;
        if let Some(b) = &self.bias {
            out = out.add(b)?;
        }
        out = match self.activation {
            None => out,
            Some(DenseActivation::Act(a)) => a.forward(&out)?,
            Some(DenseActivation::Sigmoid) => out.sigmoid()?,
        };
        Ok(match &self.residual {
            None => out,
            Some(Residual::Input) => out.add(x)?,
            Some(Residual::Projection(w)) => out.add(&x.matmul(&w.t()?)?)?,
        })
    }
}

/// The activation a config names by its torch class (`torch.nn.modules.activation.Tanh`).
fn activation(name: &str) -> Result<Option<DenseActivation>> {
    let class = name.rsplit('.').next().unwrap_or(name);
    Ok(Some(match class {
        "Identity" => return Ok(None),
        "Tanh" => DenseActivation::Act(Activation::Tanh),
        "ReLU" => DenseActivation::Act(Activation::Relu),
        "GELU" => DenseActivation::Act(Activation::Gelu),
        "SiLU" => DenseActivation::Act(Activation::Silu),
        "Sigmoid" => DenseActivation::Sigmoid,
        _ => {
            return Err(Error::Unsupported(format!(
                "Dense activation_function \"{name}\" is not supported (supported: {SUPPORTED})"
            )))
        }
    }))
}

/// The `type` of a `modules.json` entry, for matching (`sentence_transformers.models.Dense` and
/// the newer `sentence_transformers.sentence_transformer.modules.Dense` both end the same way).
pub(crate) fn module_kind(entry: &Value) -> &str {
    let kind = entry.get("type").and_then(Value::as_str).unwrap_or("");
    kind.rsplit('.').next().unwrap_or(kind)
}
