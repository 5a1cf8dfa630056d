//! `Bilinear`.

use oxtorch_tensor::{DType, Error, Result, Tensor};

use crate::init;

/// `y = x1ᵀ A x2 + b` (torch's `nn.Bilinear(in1_features, in2_features, out_features, bias=True)`):
/// `weight [out, in1, in2]`, `bias [out]`, both drawn from `U(±1/√in1)` as torch does.
#[derive(oxtorch_nn_derive::Module)]
#[module(extra_repr)]
pub struct Bilinear {
    /// `[out_features, in1_features, in2_features]`
    pub weight: Tensor,
    /// `[out_features]`
    pub bias: Option<Tensor>,
}

impl Bilinear {
    /// A float32 layer with torch's initialisation.
    pub fn new(in1_features: usize, in2_features: usize, out_features: usize, bias: bool) -> Result<Self> {
        if in1_features == 0 {
            return Err(Error::msg(format!(
                "in1_features must be > 0, but got (in1_features={in1_features})"
            )));
        }
        let bound = 1.0 / (in1_features as f64).sqrt();
        let weight = Tensor::empty([out_features, in1_features, in2_features], DType::default_float())?;
        init::uniform_(&weight, -bound, bound)?;
        let bias = if bias {
            let b = Tensor::empty([out_features], DType::default_float())?;
            init::uniform_(&b, -bound, bound)?;
            Some(b.requires_grad_(true)?)
        } else {
            None
        };
        Ok(Bilinear { weight: weight.requires_grad_(true)?, bias })
    }

    /// torch's `extra_repr`: `in1_features=2, in2_features=3, out_features=4, bias=True`.
    fn extra_repr_text(&self) -> String {
        let dims = self.weight.dims();
        format!(
            "in1_features={}, in2_features={}, out_features={}, bias={}",
            dims.get(1).copied().unwrap_or(0),
            dims.get(2).copied().unwrap_or(0),
            dims.first().copied().unwrap_or(0),
            crate::module::py_bool(self.bias.is_some())
        )
    }

    /// The layer applied to `input1 [..., in1]` and `input2 [..., in2]` (same leading dims).
    pub fn forward(&self, input1: &Tensor, input2: &Tensor) -> Result<Tensor> {
        crate::functional::bilinear(input1, input2, &self.weight, self.bias.as_ref())
    }
}
