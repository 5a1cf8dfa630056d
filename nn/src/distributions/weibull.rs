//! `torch.distributions.Weibull`, which torch builds as a `TransformedDistribution` over
//! `Exponential(1)`; here it is written out in closed form (see `closed_form.rs`), with `cdf`
//! through that base as torch's.

use std::any::Any;
use std::sync::Arc;

use oxtorch_tensor::{Generator, Result, Tensor};

use super::closed_form::{monotonize_cdf, std_exponential, EULER};
use super::common_methods::common;
use super::{
    broadcast_all, check_params, resolve_validate, validate_sample, Constraint, Distribution, Exponential,
    POSITIVE,
};

/// The two-parameter Weibull distribution (torch's `Weibull`): `scale · E^(1/concentration)` for
/// `E` standard exponential.
#[derive(Clone)]
pub struct Weibull {
    /// The scale `λ`.
    pub scale: Tensor,
    /// The shape `k`.
    pub concentration: Tensor,
    validate: bool,
}

impl Weibull {
    /// `Weibull(scale, concentration)`, validated by default.
    pub fn new(scale: &Tensor, concentration: &Tensor) -> Result<Self> {
        Self::with_validate_args(scale, concentration, None)
    }

    /// `Weibull(scale, concentration, validate_args=validate_args)`.
    pub fn with_validate_args(
        scale: &Tensor,
        concentration: &Tensor,
        validate_args: Option<bool>,
    ) -> Result<Self> {
        let b = broadcast_all(&[scale, concentration])?;
        let d = Weibull {
            scale: b[0].clone(),
            concentration: b[1].clone(),
            validate: resolve_validate(validate_args),
        };
        if d.validate {
            check_params(
                "Weibull",
                &d.params(),
                &[("scale", &d.scale, POSITIVE), ("concentration", &d.concentration, POSITIVE)],
            )?;
        }
        Ok(d)
    }
}

impl Distribution for Weibull {
    common!("Weibull", scale);
    fn expand(&self, batch_shape: &[usize]) -> Result<Arc<dyn Distribution>> {
        Ok(Arc::new(Weibull {
            scale: self.scale.expand(batch_shape)?,
            concentration: self.concentration.expand(batch_shape)?,
            validate: self.validate,
        }))
    }
    fn params(&self) -> Vec<(&'static str, Tensor)> {
        vec![("scale", self.scale.clone()), ("concentration", self.concentration.clone())]
    }
    fn support(&self) -> Constraint {
        POSITIVE
    }
    fn sample_with(&self, sample_shape: &[usize], generator: Option<&Generator>) -> Result<Tensor> {
        Ok(self.rsample_with(sample_shape, generator)?.detach())
    }
    fn has_rsample(&self) -> bool {
        true
    }
    fn rsample_with(&self, sample_shape: &[usize], generator: Option<&Generator>) -> Result<Tensor> {
        let e = std_exponential(self.extended_shape(sample_shape), &self.scale, generator)?;
        e.pow(&self.concentration.reciprocal()?)?.mul(&self.scale)
    }
    fn log_prob(&self, value: &Tensor) -> Result<Tensor> {
        validate_sample(self, value)?;
        let k = &self.concentration;
        let z = value.div(&self.scale)?;
        k.log()?.sub(&self.scale.log()?)?.add(&k.sub(1.0)?.mul(&z.log()?)?)?.sub(&z.pow(k)?)
    }
    fn entropy(&self) -> Result<Tensor> {
        let kr = self.concentration.reciprocal()?;
        kr.rsub(1.0)?.mul(EULER)?.add(&self.scale.mul(&kr)?.log()?)?.add(1.0)
    }
    fn mean(&self) -> Result<Tensor> {
        self.scale.mul(&self.concentration.reciprocal()?.add(1.0)?.lgamma()?.exp()?)
    }
    fn mode(&self) -> Result<Tensor> {
        let k = &self.concentration;
        self.scale.mul(&k.sub(1.0)?.div(k)?.pow(&k.reciprocal()?)?)
    }
    fn variance(&self) -> Result<Tensor> {
        let kr = self.concentration.reciprocal()?;
        let a = kr.mul(2.0)?.add(1.0)?.lgamma()?.exp()?;
        let b = kr.add(1.0)?.lgamma()?.mul(2.0)?.exp()?;
        self.scale.square()?.mul(&a.sub(&b)?)
    }
    /// torch's `TransformedDistribution.cdf`: the value pulled back to the base `Exponential(1)`
    /// (`(value / scale)^concentration`), checked against the base's support (so `0` is in, and
    /// a negative value whose power is a nonnegative number too, as torch's), then its cdf.
    fn cdf(&self, value: &Tensor) -> Result<Tensor> {
        let exponent = self.concentration.reciprocal()?;
        let x = value.div(&self.scale)?.pow(&exponent.reciprocal()?)?;
        let base = Exponential::with_validate_args(&self.scale.detach().ones_like()?, Some(self.validate))?;
        validate_sample(&base, &x)?;
        monotonize_cdf(&base.cdf(&x)?, true)
    }
    fn icdf(&self, value: &Tensor) -> Result<Tensor> {
        value.neg()?.log1p()?.neg()?.pow(&self.concentration.reciprocal()?)?.mul(&self.scale)
    }
}
