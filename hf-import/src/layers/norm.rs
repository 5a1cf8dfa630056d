//! Layer norm and RMS norm as transformers computes them.

use oxtorch_tensor::{DType, Tensor};

use crate::error::Result;
use crate::weights::Vars;

/// `nn.LayerNorm` over the last dim.
#[derive(Debug, Clone)]
pub struct LayerNorm {
    /// scale `[dim]`
    pub weight: Tensor,
    /// shift `[dim]`
    pub bias: Option<Tensor>,
    /// added to the variance
    pub eps: f64,
}

impl LayerNorm {
    /// `vars.weight` and `vars.bias` (absent in old checkpoints that call them `gamma`/`beta`).
    pub fn load(vars: &Vars<'_>, dim: usize, eps: f64) -> Result<Self> {
        let (w, b) = if !vars.contains("weight") && vars.contains("gamma") {
            ("gamma", "beta")
        } else {
            ("weight", "bias")
        };
        Ok(LayerNorm { weight: vars.get(w, &[dim])?, bias: vars.get_opt(b, &[dim])?, eps })
    }

    /// Normalises the last dim of `x`.
    pub fn forward(&self, x: &Tensor) -> Result<Tensor> {
        let dim = *x.dims().last().unwrap_or(&0);
        Ok(x.layer_norm(&[dim], Some(&self.weight), self.bias.as_ref(), self.eps)?)
    }
}

/// A decoder's norm: RMS (Llama, Gemma, ...) or a layer norm with its shift (GPT-2).
#[derive(Debug, Clone)]
pub enum DecoderNorm {
    /// [`RmsNorm`]
    Rms(RmsNorm),
    /// [`LayerNorm`]
    Layer(LayerNorm),
    /// No norm (OLMo 2 has none before attention and the MLP).
    Identity,
}

impl DecoderNorm {
    /// Normalises the last dim of `x`.
    pub fn forward(&self, x: &Tensor) -> Result<Tensor> {
        match self {
            DecoderNorm::Rms(n) => n.forward(x),
            DecoderNorm::Layer(n) => n.forward(x),
            DecoderNorm::Identity => Ok(x.clone()),
        }
    }
}

/// `x / rms(x)` over the last dim, computed in float32 and rounded back to `x`'s dtype: an RMS norm
/// without a scale (Gemma 4's `with_scale=False` norms).
pub fn rms_normalized(x: &Tensor, eps: f64) -> Result<Tensor> {
    let x32 = x.to_dtype(DType::F32)?;
    let var = x32.square()?.mean(-1, true)?;
    Ok(x32.mul(&var.add(eps)?.rsqrt()?)?.to_dtype(x.dtype())?)
}

/// Where an RMS norm rounds back to the input dtype and how it applies its scale.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RmsNormStyle {
    /// Llama: `w * (x / rms(x)).to(dtype)`.
    Llama,
    /// Gemma: `((x / rms(x)) * (1 + w)).to(dtype)`, all in float32.
    Gemma,
    /// OLMo 2: `(w * (x / rms(x))).to(dtype)`, the product in float32.
    ScaleInFloat32,
    /// Cohere's `CohereLayerNorm`, a layer norm without shift: `(w * (x - mean) / std(x)).to(dtype)`,
    /// all in float32.
    Cohere,
}

/// RMS normalisation over the last dim, computed in float32.
#[derive(Debug, Clone)]
pub struct RmsNorm {
    /// scale `[dim]`
    pub weight: Tensor,
    /// added to the mean square
    pub eps: f64,
    /// the family's variant
    pub style: RmsNormStyle,
}

impl RmsNorm {
    /// `vars.weight` `[dim]`.
    pub fn load(vars: &Vars<'_>, dim: usize, eps: f64, style: RmsNormStyle) -> Result<Self> {
        Self::load_shaped(vars, &[dim], eps, style)
    }

    /// `vars.weight` of `shape` (`[heads, head_dim]`: a scale per head, Cohere's q/k norms; the
    /// norm runs over the last dim).
    pub fn load_shaped(vars: &Vars<'_>, shape: &[usize], eps: f64, style: RmsNormStyle) -> Result<Self> {
        Ok(RmsNorm { weight: vars.get("weight", shape)?, eps, style })
    }

    /// Normalises the last dim of `x`.
    pub fn forward(&self, x: &Tensor) -> Result<Tensor> {
        let dtype = x.dtype();
        let mut x32 = x.to_dtype(DType::F32)?;
        if self.style == RmsNormStyle::Cohere {
            x32 = x32.sub(&x32.mean(-1, true)?)?;
        }
        let var = x32.square()?.mean(-1, true)?;
        let normed = x32.mul(&var.add(self.eps)?.rsqrt()?)?;
        Ok(match self.style {
            RmsNormStyle::Llama => self.weight.mul(&normed.to_dtype(dtype)?)?,
            RmsNormStyle::Gemma => {
                normed.mul(&self.weight.to_dtype(DType::F32)?.add(1.0)?)?.to_dtype(dtype)?
            }
            RmsNormStyle::ScaleInFloat32 | RmsNormStyle::Cohere => {
                normed.mul(&self.weight.to_dtype(DType::F32)?)?.to_dtype(dtype)?
            }
        })
    }
}

/// `nn.BatchNorm2d` in inference mode: the running statistics normalise each channel of
/// `[batch, channels, ...]`.
#[derive(Debug, Clone)]
pub struct BatchNorm2d {
    /// scale, shift, running mean, running variance, each `[channels]`
    pub stats: [Tensor; 4],
    /// added to the variance
    pub eps: f64,
}

impl BatchNorm2d {
    /// `vars.weight`, `vars.bias`, `vars.running_mean`, `vars.running_var`.
    pub fn load(vars: &Vars<'_>, channels: usize, eps: f64) -> Result<Self> {
        let get = |name: &str| vars.get(name, &[channels]);
        Ok(BatchNorm2d {
            stats: [get("weight")?, get("bias")?, get("running_mean")?, get("running_var")?],
            eps,
        })
    }

    /// Normalises the channels (dim 1) of `x`.
    pub fn forward(&self, x: &Tensor) -> Result<Tensor> {
        let [w, b, mean, var] = &self.stats;
        Ok(x.batch_norm(Some(mean), Some(var), Some(w), Some(b), false, 0.1, self.eps)?)
    }
}
