//! `LazyLinear`.

use oxtorch_tensor::{DType, Error, Result, Tensor};

use super::{Lazy, LazyRole, LazySpec};
use crate::layers::Linear;

/// torch's `nn.LazyLinear(out_features, bias=True)`.
pub type LazyLinear = Lazy<LazyLinearSpec>;

/// The hyper-parameters of [`LazyLinear`].
#[derive(Clone, Debug)]
pub struct LazyLinearSpec {
    /// output features
    pub out_features: usize,
    /// whether the layer has a bias
    pub bias: bool,
}

impl LazySpec for LazyLinearSpec {
    type Module = Linear;
    fn name(&self) -> &'static str {
        "LazyLinear"
    }
    fn members(&self) -> Result<Vec<(&'static str, LazyRole, Option<Tensor>)>> {
        let mut m = vec![("weight", LazyRole::Param, None)];
        if self.bias {
            m.push(("bias", LazyRole::Param, None));
        }
        Ok(m)
    }
    fn infer(&self, input: &Tensor) -> Result<usize> {
        input.dims().last().copied().ok_or_else(|| Error::msg("tuple index out of range"))
    }
    fn infer_from(&self, name: &str, dims: &[usize]) -> Option<usize> {
        (name == "weight" && dims.len() == 2).then(|| dims[1])
    }
    fn known_shape(&self, name: &str) -> Option<Vec<usize>> {
        (name == "bias" && self.bias).then(|| vec![self.out_features])
    }
    fn build(&self, size: usize, dtype: DType) -> Result<Linear> {
        Linear::with_dtype(size, self.out_features, self.bias, dtype)
    }
    fn extra_repr(&self) -> String {
        format!(
            "in_features=0, out_features={}, bias={}",
            self.out_features,
            crate::module::py_bool(self.bias)
        )
    }
}

impl Lazy<LazyLinearSpec> {
    /// torch's `LazyLinear(out_features, bias)`: `in_features` is the last dim of the first input.
    pub fn new(out_features: usize, bias: bool) -> Result<Self> {
        Self::from_spec(LazyLinearSpec { out_features, bias })
    }
}
