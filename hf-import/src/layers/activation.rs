//! Activation functions named as in transformers' `ACT2FN`.

use oxtorch_tensor::Tensor;

use crate::error::{Error, Result};

/// An activation from a config's `hidden_act` / `hidden_activation`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Activation {
    /// `x * sigmoid(x)` (`silu`, `swish`).
    Silu,
    /// Exact, erf-based GELU (`gelu`).
    Gelu,
    /// tanh-approximated GELU (`gelu_new`, `gelu_pytorch_tanh`, `gelu_fast`).
    GeluTanh,
    /// `max(x, 0)`.
    Relu,
    /// Hyperbolic tangent.
    Tanh,
}

impl Activation {
    /// The activation transformers calls `name`.
    pub fn from_name(name: &str) -> Result<Self> {
        Ok(match name {
            "silu" | "swish" => Activation::Silu,
            "gelu" => Activation::Gelu,
            "gelu_new" | "gelu_pytorch_tanh" | "gelu_fast" => Activation::GeluTanh,
            "relu" => Activation::Relu,
            "tanh" => Activation::Tanh,
            other => {
                return Err(Error::Unsupported(format!(
                    "activation \"{other}\" is not supported (supported: silu, swish, gelu, gelu_new, gelu_pytorch_tanh, gelu_fast, relu, tanh)"
                )))
            }
        })
    }

    /// Applies the activation.
    pub fn forward(self, x: &Tensor) -> Result<Tensor> {
        Ok(match self {
            Activation::Silu => x.silu()?,
            Activation::Gelu => x.gelu("none")?,
            Activation::GeluTanh => x.gelu("tanh")?,
            Activation::Relu => x.relu()?,
            Activation::Tanh => x.tanh()?,
        })
    }
}
