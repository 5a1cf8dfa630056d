//! `torch.distributions.Uniform`.

use std::any::Any;
use std::sync::Arc;

use oxtorch_tensor::{Generator, Result, Tensor};

use super::{broadcast_all, check_params, like, resolve_validate, validate_sample, Constraint, Distribution};

/// The uniform distribution on `[low, high)` (torch's `Uniform`); `rsample` is
/// `low + u * (high - low)`.
#[derive(Clone)]
pub struct Uniform {
    /// The lower bound (inclusive).
    pub low: Tensor,
    /// The upper bound (exclusive).
    pub high: Tensor,
    validate: bool,
}

impl Uniform {
    /// `Uniform(low, high)`, validated by default.
    pub fn new(low: &Tensor, high: &Tensor) -> Result<Self> {
        Self::with_validate_args(low, high, None)
    }

    /// `Uniform(low, high, validate_args=validate_args)`.
    pub fn with_validate_args(low: &Tensor, high: &Tensor, validate_args: Option<bool>) -> Result<Self> {
        let b = broadcast_all(&[low, high])?;
        let d = Uniform { low: b[0].clone(), high: b[1].clone(), validate: resolve_validate(validate_args) };
        if d.validate {
            check_params(
                "Uniform",
                &d.params(),
                &[
                    ("low", &d.low, Constraint::LessThanTensor(d.high.clone())),
                    ("high", &d.high, Constraint::GreaterThanTensor(d.low.clone())),
                ],
            )?;
        }
        Ok(d)
    }
}

impl Distribution for Uniform {
    fn name(&self) -> &'static str {
        "Uniform"
    }
    fn batch_shape(&self) -> Vec<usize> {
        self.low.dims().to_vec()
    }
    fn params(&self) -> Vec<(&'static str, Tensor)> {
        vec![("low", self.low.clone()), ("high", self.high.clone())]
    }
    fn support(&self) -> Constraint {
        Constraint::TensorInterval(self.low.clone(), self.high.clone())
    }
    fn validate_args(&self) -> bool {
        self.validate
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
    fn expand(&self, batch_shape: &[usize]) -> Result<Arc<dyn Distribution>> {
        Ok(Arc::new(Uniform {
            low: self.low.expand(batch_shape)?,
            high: self.high.expand(batch_shape)?,
            validate: self.validate,
        }))
    }
    fn sample_with(&self, sample_shape: &[usize], generator: Option<&Generator>) -> Result<Tensor> {
        Ok(self.rsample_with(sample_shape, generator)?.detach())
    }
    fn has_rsample(&self) -> bool {
        true
    }
    fn rsample_with(&self, sample_shape: &[usize], generator: Option<&Generator>) -> Result<Tensor> {
        let u = Tensor::rand_with(self.extended_shape(sample_shape), like(&self.low), generator)?;
        self.low.add(&u.mul(&self.high.sub(&self.low)?)?)
    }
    fn log_prob(&self, value: &Tensor) -> Result<Tensor> {
        validate_sample(self, value)?;
        let lb = self.low.le(value)?.type_as(&self.low)?;
        let ub = self.high.gt(value)?.type_as(&self.low)?;
        lb.mul(&ub)?.log()?.sub(&self.high.sub(&self.low)?.log()?)
    }
    fn entropy(&self) -> Result<Tensor> {
        self.high.sub(&self.low)?.log()
    }
    fn mean(&self) -> Result<Tensor> {
        self.high.add(&self.low)?.div(2.0)
    }
    fn mode(&self) -> Result<Tensor> {
        self.high.mul(f64::NAN)
    }
    fn variance(&self) -> Result<Tensor> {
        self.high.sub(&self.low)?.square()?.div(12.0)
    }
    fn stddev(&self) -> Result<Tensor> {
        self.high.sub(&self.low)?.div(12f64.sqrt())
    }
    fn cdf(&self, value: &Tensor) -> Result<Tensor> {
        validate_sample(self, value)?;
        value.sub(&self.low)?.div(&self.high.sub(&self.low)?)?.clamp(Some(0.0f64.into()), Some(1.0f64.into()))
    }
    fn icdf(&self, value: &Tensor) -> Result<Tensor> {
        value.mul(&self.high.sub(&self.low)?)?.add(&self.low)
    }
}
