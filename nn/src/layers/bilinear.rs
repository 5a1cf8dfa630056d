//! `Bilinear`.

use oxtorch_tensor::{DType, Error, Result, Tensor};

use crate::init;

/// `y = x1ᵀ A x2 + b` (torch's `nn.Bilinear(in1_features, in2_features, out_features, bias=True)`):
/// `weight [out, in1, in2]`, `bias [out]`, both drawn from `U(±1/√in1)` as torch does.
#[derive(oxtorch_nn_derive::Module)]
pub struct Bilinear {
    /// `[out_features, in1_features, in2_features]`
    pub weight: Tensor,
    /// `[out_features]`
    pub bias: Option<Tensor>,
}

impl Bilinear {
    /// A float32 layer with torch's initialisation.
    pub fn new(in1_features: usize, in2_features: usize, out_features: usize, bias: bool) -> Result<Self> {
        let bound = if in1_features > 0 { 1.0 / (in1_features as f64).sqrt() } else { 0.0 };
        let weight = Tensor::empty([out_features, in1_features, in2_features], DType::F32)?;
        init::uniform_(&weight, -bound, bound)?;
        let bias = if bias {
            let b = Tensor::empty([out_features], DType::F32)?;
            init::uniform_(&b, -bound, bound)?;
            Some(b.requires_grad_(true)?)
        } else {
            None
        };
        Ok(Bilinear { weight: weight.requires_grad_(true)?, bias })
    }

    /// The layer applied to `input1 [..., in1]` and `input2 [..., in2]` (same leading dims).
    pub fn forward(&self, input1: &Tensor, input2: &Tensor) -> Result<Tensor> {
        let (w1, w2) = (self.weight.dims()[1], self.weight.dims()[2]);
        let (r1, r2) = (input1.rank(), input2.rank());
        if r1 == 0 || r2 == 0 || input1.dims()[..r1 - 1] != input2.dims()[..r2 - 1] {
            return Err(Error::shape(format!(
                "bilinear(): input batch dimensions do not match: got {:?} and {:?}",
                input1.dims(),
                input2.dims()
            )));
        }
        if input1.dims()[r1 - 1] != w1 {
            return Err(Error::shape(format!(
                "bilinear(): input1 size does not match weight size: got {} but expected {w1}",
                input1.dims()[r1 - 1]
            )));
        }
        if input2.dims()[r2 - 1] != w2 {
            return Err(Error::shape(format!(
                "bilinear(): input2 size does not match weight size: got {} but expected {w2}",
                input2.dims()[r2 - 1]
            )));
        }
        let y = Tensor::einsum("...i,oij,...j->...o", &[input1, &self.weight, input2])?;
        match &self.bias {
            Some(b) => y.add(b),
            None => Ok(y),
        }
    }
}
