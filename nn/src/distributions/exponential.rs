//! `torch.distributions.Exponential`.

use std::any::Any;
use std::sync::Arc;

use oxtorch_tensor::{Generator, Result, Tensor};

use super::{
    check_params, like, resolve_validate, validate_sample, Constraint, Distribution, NONNEGATIVE, POSITIVE,
};

/// The exponential distribution with rate `rate` (torch's `Exponential`); `rsample` is `e / rate`
/// for a standard exponential draw `e`.
#[derive(Clone)]
pub struct Exponential {
    /// The rate `λ` (`1 / mean`).
    pub rate: Tensor,
    validate: bool,
}

impl Exponential {
    /// `Exponential(rate)`, validated by default.
    pub fn new(rate: &Tensor) -> Result<Self> {
        Self::with_validate_args(rate, None)
    }

    /// `Exponential(rate, validate_args=validate_args)`.
    pub fn with_validate_args(rate: &Tensor, validate_args: Option<bool>) -> Result<Self> {
        let d = Exponential { rate: rate.clone(), validate: resolve_validate(validate_args) };
        if d.validate {
            check_params("Exponential", &d.params(), &[("rate", &d.rate, POSITIVE)])?;
        }
        Ok(d)
    }
}

impl Distribution for Exponential {
    fn name(&self) -> &'static str {
        "Exponential"
    }
    fn batch_shape(&self) -> Vec<usize> {
        self.rate.dims().to_vec()
    }
    fn params(&self) -> Vec<(&'static str, Tensor)> {
        vec![("rate", self.rate.clone())]
    }
    fn support(&self) -> Constraint {
        NONNEGATIVE
    }
    fn validate_args(&self) -> bool {
        self.validate
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
    fn expand(&self, batch_shape: &[usize]) -> Result<Arc<dyn Distribution>> {
        Ok(Arc::new(Exponential { rate: self.rate.expand(batch_shape)?, validate: self.validate }))
    }
    fn sample_with(&self, sample_shape: &[usize], generator: Option<&Generator>) -> Result<Tensor> {
        Ok(self.rsample_with(sample_shape, generator)?.detach())
    }
    fn has_rsample(&self) -> bool {
        true
    }
    fn rsample_with(&self, sample_shape: &[usize], generator: Option<&Generator>) -> Result<Tensor> {
        let e = Tensor::zeros(self.extended_shape(sample_shape), like(&self.rate))?;
        e.exponential_with_(1.0, generator)?;
        e.div(&self.rate)
    }
    fn log_prob(&self, value: &Tensor) -> Result<Tensor> {
        validate_sample(self, value)?;
        self.rate.log()?.sub(&self.rate.mul(value)?)
    }
    fn entropy(&self) -> Result<Tensor> {
        self.rate.log()?.rsub(1.0)
    }
    fn mean(&self) -> Result<Tensor> {
        self.rate.reciprocal()
    }
    fn mode(&self) -> Result<Tensor> {
        self.rate.zeros_like()
    }
    fn variance(&self) -> Result<Tensor> {
        self.rate.pow(-2.0)
    }
    fn stddev(&self) -> Result<Tensor> {
        self.rate.reciprocal()
    }
    fn cdf(&self, value: &Tensor) -> Result<Tensor> {
        validate_sample(self, value)?;
        self.rate.neg()?.mul(value)?.exp()?.rsub(1.0)
    }
    fn icdf(&self, value: &Tensor) -> Result<Tensor> {
        value.neg()?.log1p()?.neg()?.div(&self.rate)
    }
}
