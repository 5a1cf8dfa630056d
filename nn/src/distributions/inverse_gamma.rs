//! `torch.distributions.InverseGamma`, which torch builds as a `TransformedDistribution` of
//! `Gamma(concentration, rate)` through `PowerTransform(-1)`; here it is written out in closed
//! form (see `closed_form.rs`), with `cdf` through the base Gamma as torch's.

use std::any::Any;

use oxtorch_tensor::{Generator, Result, Tensor};

use super::closed_form::monotonize_cdf;
use super::{resolve_validate, validate_sample, Constraint, Distribution, Gamma, POSITIVE};

/// The inverse gamma distribution: `1 / X` for `X ~ Gamma(concentration, rate)` (torch's
/// `InverseGamma`).
#[derive(Clone)]
pub struct InverseGamma {
    /// The base `Gamma(concentration, rate)`.
    pub base: Gamma,
    validate: bool,
}

impl InverseGamma {
    /// `InverseGamma(concentration, rate)`, validated by default.
    pub fn new(concentration: &Tensor, rate: &Tensor) -> Result<Self> {
        Self::with_validate_args(concentration, rate, None)
    }

    /// `InverseGamma(concentration, rate, validate_args=validate_args)` (the base Gamma checks
    /// the parameters, with Gamma's message, as torch's).
    pub fn with_validate_args(
        concentration: &Tensor,
        rate: &Tensor,
        validate_args: Option<bool>,
    ) -> Result<Self> {
        let base = Gamma::with_validate_args(concentration, rate, validate_args)?;
        Ok(InverseGamma { base, validate: resolve_validate(validate_args) })
    }

    /// The shape `α`.
    pub fn concentration(&self) -> &Tensor {
        &self.base.concentration
    }

    /// The rate `β`.
    pub fn rate(&self) -> &Tensor {
        &self.base.rate
    }

    /// `Gamma.log_prob` at `x` without the support check.
    fn gamma_log_prob(&self, x: &Tensor) -> Result<Tensor> {
        let (a, b) = (&self.base.concentration, &self.base.rate);
        a.xlogy(b)?.add(&a.sub(1.0)?.xlogy(x)?)?.sub(&b.mul(x)?)?.sub(&a.lgamma()?)
    }
}

impl Distribution for InverseGamma {
    fn name(&self) -> &'static str {
        "InverseGamma"
    }
    fn batch_shape(&self) -> Vec<usize> {
        self.base.batch_shape()
    }
    fn validate_args(&self) -> bool {
        self.validate
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
    /// None, as torch's repr shows (`InverseGamma()`: its parameters live on the base Gamma).
    fn params(&self) -> Vec<(&'static str, Tensor)> {
        Vec::new()
    }
    fn support(&self) -> Constraint {
        POSITIVE
    }
    fn sample_with(&self, sample_shape: &[usize], generator: Option<&Generator>) -> Result<Tensor> {
        self.base.sample_with(sample_shape, generator)?.reciprocal()
    }
    fn has_rsample(&self) -> bool {
        true
    }
    fn rsample_with(&self, sample_shape: &[usize], generator: Option<&Generator>) -> Result<Tensor> {
        self.base.rsample_with(sample_shape, generator)?.reciprocal()
    }
    fn log_prob(&self, value: &Tensor) -> Result<Tensor> {
        validate_sample(self, value)?;
        // PowerTransform(-1): x = 1 / y, log|det J| = log|-1 · y / x|
        let x = value.reciprocal()?;
        let ladj = value.neg()?.div(&x)?.abs()?.log()?;
        self.gamma_log_prob(&x)?.sub(&ladj)
    }
    fn entropy(&self) -> Result<Tensor> {
        let a = &self.base.concentration;
        a.add(&self.base.rate.log()?)?.add(&a.lgamma()?)?.sub(&a.add(1.0)?.mul(&a.digamma()?)?)
    }
    fn mean(&self) -> Result<Tensor> {
        let a = &self.base.concentration;
        let result = self.base.rate.div(&a.sub(1.0)?)?;
        Tensor::where_cond(&a.gt(1.0)?, &result, f64::INFINITY)
    }
    fn mode(&self) -> Result<Tensor> {
        self.base.rate.div(&self.base.concentration.add(1.0)?)
    }
    fn variance(&self) -> Result<Tensor> {
        let a = &self.base.concentration;
        let result = self.base.rate.square()?.div(&a.sub(1.0)?.square()?.mul(&a.sub(2.0)?)?)?;
        Tensor::where_cond(&a.gt(2.0)?, &result, f64::INFINITY)
    }
    /// torch's `TransformedDistribution.cdf`: the base Gamma's cdf at `1 / value` (checked
    /// against the Gamma's support, so `0` maps to `inf` and is in) monotonized for the decreasing
    /// `PowerTransform(-1)`.
    fn cdf(&self, value: &Tensor) -> Result<Tensor> {
        let x = value.reciprocal()?;
        monotonize_cdf(&self.base.cdf(&x)?, false)
    }
}
