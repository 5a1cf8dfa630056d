//! `torch.distributions.HalfCauchy`.

use std::any::Any;
use std::f64::consts::LN_2;

use oxtorch_tensor::{Generator, Result, Tensor};

use super::half_normal::folded_log_prob;
use super::{validate_sample, Cauchy, Constraint, Distribution, NONNEGATIVE};

/// The half-Cauchy distribution `|Cauchy(0, scale)|` (torch's `HalfCauchy`).
#[derive(Clone)]
pub struct HalfCauchy {
    /// The scale of the base Cauchy.
    pub scale: Tensor,
    base: Cauchy,
}

impl HalfCauchy {
    /// `HalfCauchy(scale)`, validated by default.
    pub fn new(scale: &Tensor) -> Result<Self> {
        Self::with_validate_args(scale, None)
    }

    /// `HalfCauchy(scale, validate_args=validate_args)`.
    pub fn with_validate_args(scale: &Tensor, validate_args: Option<bool>) -> Result<Self> {
        let base = Cauchy::with_validate_args(&scale.detach().zeros_like()?, scale, validate_args)?;
        Ok(HalfCauchy { scale: base.scale.clone(), base })
    }
}

impl Distribution for HalfCauchy {
    fn name(&self) -> &'static str {
        "HalfCauchy"
    }
    fn batch_shape(&self) -> Vec<usize> {
        self.scale.dims().to_vec()
    }
    fn params(&self) -> Vec<(&'static str, Tensor)> {
        vec![("scale", self.scale.clone())]
    }
    fn support(&self) -> Constraint {
        NONNEGATIVE
    }
    fn validate_args(&self) -> bool {
        self.base.validate_args()
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
    fn sample_with(&self, sample_shape: &[usize], generator: Option<&Generator>) -> Result<Tensor> {
        self.base.sample_with(sample_shape, generator)?.abs()
    }
    fn has_rsample(&self) -> bool {
        true
    }
    fn rsample_with(&self, sample_shape: &[usize], generator: Option<&Generator>) -> Result<Tensor> {
        self.base.rsample_with(sample_shape, generator)?.abs()
    }
    fn log_prob(&self, value: &Tensor) -> Result<Tensor> {
        validate_sample(self, value)?;
        folded_log_prob(self.base.log_prob(value)?, value)
    }
    fn entropy(&self) -> Result<Tensor> {
        self.base.entropy()?.sub(LN_2)
    }
    fn mean(&self) -> Result<Tensor> {
        self.scale.full_like(f64::INFINITY)
    }
    fn mode(&self) -> Result<Tensor> {
        self.scale.zeros_like()
    }
    fn variance(&self) -> Result<Tensor> {
        self.scale.full_like(f64::INFINITY)
    }
    fn cdf(&self, value: &Tensor) -> Result<Tensor> {
        validate_sample(self, value)?;
        self.base.cdf(value)?.mul(2.0)?.sub(1.0)
    }
    fn icdf(&self, prob: &Tensor) -> Result<Tensor> {
        self.base.icdf(&prob.add(1.0)?.div(2.0)?)
    }
}
