//! `torch.distributions.Poisson`.

use std::any::Any;
use std::sync::Arc;

use oxtorch_tensor::{Generator, Result, Tensor};

use super::{check_params, resolve_validate, validate_sample, Constraint, Distribution, NONNEGATIVE};

/// The Poisson distribution with rate `rate` (torch's `Poisson`).
#[derive(Clone)]
pub struct Poisson {
    /// The rate (mean).
    pub rate: Tensor,
    validate: bool,
}

impl Poisson {
    /// `Poisson(rate)`, validated by default.
    pub fn new(rate: &Tensor) -> Result<Self> {
        Self::with_validate_args(rate, None)
    }

    /// `Poisson(rate, validate_args=validate_args)`.
    pub fn with_validate_args(rate: &Tensor, validate_args: Option<bool>) -> Result<Self> {
        let d = Poisson { rate: rate.clone(), validate: resolve_validate(validate_args) };
        if d.validate {
            check_params("Poisson", &d.params(), &[("rate", &d.rate, NONNEGATIVE)])?;
        }
        Ok(d)
    }
}

impl Distribution for Poisson {
    fn name(&self) -> &'static str {
        "Poisson"
    }
    fn batch_shape(&self) -> Vec<usize> {
        self.rate.dims().to_vec()
    }
    fn params(&self) -> Vec<(&'static str, Tensor)> {
        vec![("rate", self.rate.clone())]
    }
    fn support(&self) -> Constraint {
        Constraint::IntegerGreaterThan(0)
    }
    fn validate_args(&self) -> bool {
        self.validate
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
    fn expand(&self, batch_shape: &[usize]) -> Result<Arc<dyn Distribution>> {
        Ok(Arc::new(Poisson { rate: self.rate.expand(batch_shape)?, validate: self.validate }))
    }
    fn sample_with(&self, sample_shape: &[usize], generator: Option<&Generator>) -> Result<Tensor> {
        self.rate.detach().expand(self.extended_shape(sample_shape))?.contiguous()?.poisson_with(generator)
    }
    fn log_prob(&self, value: &Tensor) -> Result<Tensor> {
        validate_sample(self, value)?;
        let b = Tensor::broadcast_tensors(&[&self.rate, value])?;
        let (rate, value) = (&b[0], &b[1]);
        value.xlogy(rate)?.sub(rate)?.sub(&value.add(1.0)?.lgamma()?)
    }
    fn mean(&self) -> Result<Tensor> {
        Ok(self.rate.clone())
    }
    fn mode(&self) -> Result<Tensor> {
        self.rate.floor()
    }
    fn variance(&self) -> Result<Tensor> {
        Ok(self.rate.clone())
    }
}
