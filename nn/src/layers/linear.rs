//! `Linear`, `Identity`, `Flatten`, `Unflatten`.

use oxtorch_tensor::{DType, Result, Tensor};

use crate::init;
use crate::module::Forward;

/// `y = x Wᵀ + b` (torch's `nn.Linear`): `weight [out, in]`, `bias [out]`, both drawn from
/// `U(-1/√in, 1/√in)` as torch does.
#[derive(oxtorch_nn_derive::Module)]
#[module(extra_repr)]
pub struct Linear {
    /// `[out_features, in_features]`
    pub weight: Tensor,
    /// `[out_features]`
    pub bias: Option<Tensor>,
}

impl Linear {
    /// A float32 layer with torch's initialisation.
    pub fn new(in_features: usize, out_features: usize, bias: bool) -> Result<Self> {
        Self::with_dtype(in_features, out_features, bias, DType::default_float())
    }

    /// A layer of the given dtype.
    pub fn with_dtype(in_features: usize, out_features: usize, bias: bool, dtype: DType) -> Result<Self> {
        let weight = Tensor::empty([out_features, in_features], dtype)?;
        init::kaiming_uniform_(&weight, 5f64.sqrt(), "fan_in", "leaky_relu")?;
        let bound = if in_features > 0 { 1.0 / (in_features as f64).sqrt() } else { 0.0 };
        let bias = if bias {
            let b = Tensor::empty([out_features], dtype)?;
            init::uniform_(&b, -bound, bound)?;
            Some(b.requires_grad_(true)?)
        } else {
            None
        };
        Ok(Linear { weight: weight.requires_grad_(true)?, bias })
    }

    /// A layer over given tensors (for loading pretrained weights).
    pub fn from_weights(weight: Tensor, bias: Option<Tensor>) -> Self {
        Linear { weight, bias }
    }
}

impl Linear {
    /// torch's `extra_repr`: `in_features=4, out_features=3, bias=True`.
    fn extra_repr_text(&self) -> String {
        let dims = self.weight.dims();
        format!(
            "in_features={}, out_features={}, bias={}",
            dims.get(1).copied().unwrap_or(0),
            dims.first().copied().unwrap_or(0),
            crate::module::py_bool(self.bias.is_some())
        )
    }
}

impl Forward for Linear {
    fn forward(&self, x: &Tensor) -> Result<Tensor> {
        x.linear(&self.weight, self.bias.as_ref())
    }
}

/// Returns its input (torch's `nn.Identity`).
#[derive(oxtorch_nn_derive::Module, Default)]
pub struct Identity;

impl Forward for Identity {
    fn forward(&self, x: &Tensor) -> Result<Tensor> {
        Ok(x.clone())
    }
}

/// Flattens dims `start_dim..=end_dim` (torch's `nn.Flatten`, defaults 1 and -1).
#[derive(oxtorch_nn_derive::Module)]
#[module(extra_repr)]
pub struct Flatten {
    /// first dim flattened
    pub start_dim: isize,
    /// last dim flattened
    pub end_dim: isize,
}

impl Default for Flatten {
    fn default() -> Self {
        Flatten { start_dim: 1, end_dim: -1 }
    }
}

impl Flatten {
    /// torch's `extra_repr`: `start_dim=1, end_dim=-1`.
    fn extra_repr_text(&self) -> String {
        format!("start_dim={}, end_dim={}", self.start_dim, self.end_dim)
    }
}

impl Forward for Flatten {
    fn forward(&self, x: &Tensor) -> Result<Tensor> {
        x.flatten(self.start_dim, self.end_dim)
    }
}

/// Splits one dim into several (torch's `nn.Unflatten`).
#[derive(oxtorch_nn_derive::Module)]
#[module(extra_repr)]
pub struct Unflatten {
    /// the dim split
    pub dim: isize,
    /// its new sizes
    pub sizes: Vec<isize>,
}

impl Unflatten {
    /// torch's `extra_repr`: `dim=1, unflattened_size=(2, 3)`.
    fn extra_repr_text(&self) -> String {
        format!("dim={}, unflattened_size={}", self.dim, crate::module::py_tuple(&self.sizes))
    }
}

impl Forward for Unflatten {
    fn forward(&self, x: &Tensor) -> Result<Tensor> {
        x.unflatten(self.dim, self.sizes.clone())
    }
}
