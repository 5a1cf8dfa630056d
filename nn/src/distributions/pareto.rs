//! `torch.distributions.Pareto`, which torch builds as a `TransformedDistribution` over
//! `Exponential(alpha)`; here it is written out in closed form (see `closed_form.rs`), validating
//! `alpha` first with the base Exponential's message as torch's.

use std::any::Any;
use std::sync::Arc;

use oxtorch_tensor::{Generator, Result, Tensor};

use super::closed_form::std_exponential;
use super::common_methods::common;
use super::{
    broadcast_all, check_params, resolve_validate, validate_sample, Constraint, Distribution, POSITIVE,
};

/// The Pareto type 1 distribution (torch's `Pareto`): `scale · exp(E / alpha)` for `E` standard
/// exponential.
#[derive(Clone)]
pub struct Pareto {
    /// The scale (the support's lower bound).
    pub scale: Tensor,
    /// The shape `α`.
    pub alpha: Tensor,
    validate: bool,
}

impl Pareto {
    /// `Pareto(scale, alpha)`, validated by default.
    pub fn new(scale: &Tensor, alpha: &Tensor) -> Result<Self> {
        Self::with_validate_args(scale, alpha, None)
    }

    /// `Pareto(scale, alpha, validate_args=validate_args)`.
    pub fn with_validate_args(scale: &Tensor, alpha: &Tensor, validate_args: Option<bool>) -> Result<Self> {
        let b = broadcast_all(&[scale, alpha])?;
        let d =
            Pareto { scale: b[0].clone(), alpha: b[1].clone(), validate: resolve_validate(validate_args) };
        if d.validate {
            // (torch builds the base `Exponential(alpha)` first, which checks `rate`)
            check_params("Exponential", &[("rate", d.alpha.clone())], &[("rate", &d.alpha, POSITIVE)])?;
            check_params(
                "Pareto",
                &d.params(),
                &[("alpha", &d.alpha, POSITIVE), ("scale", &d.scale, POSITIVE)],
            )?;
        }
        Ok(d)
    }
}

impl Distribution for Pareto {
    common!("Pareto", scale);
    fn expand(&self, batch_shape: &[usize]) -> Result<Arc<dyn Distribution>> {
        Ok(Arc::new(Pareto {
            scale: self.scale.expand(batch_shape)?,
            alpha: self.alpha.expand(batch_shape)?,
            validate: self.validate,
        }))
    }
    fn params(&self) -> Vec<(&'static str, Tensor)> {
        vec![("alpha", self.alpha.clone()), ("scale", self.scale.clone())]
    }
    /// torch's `constraints.greater_than_eq(scale)`.
    fn support(&self) -> Constraint {
        Constraint::GreaterThanEqTensor(self.scale.detach())
    }
    fn sample_with(&self, sample_shape: &[usize], generator: Option<&Generator>) -> Result<Tensor> {
        Ok(self.rsample_with(sample_shape, generator)?.detach())
    }
    fn has_rsample(&self) -> bool {
        true
    }
    fn rsample_with(&self, sample_shape: &[usize], generator: Option<&Generator>) -> Result<Tensor> {
        let e = std_exponential(self.extended_shape(sample_shape), &self.scale, generator)?;
        e.div(&self.alpha)?.exp()?.mul(&self.scale)
    }
    fn log_prob(&self, value: &Tensor) -> Result<Tensor> {
        validate_sample(self, value)?;
        let x = value.div(&self.scale)?.log()?;
        self.alpha.log()?.sub(&self.alpha.mul(&x)?)?.sub(&x)?.sub(&self.scale.log()?)
    }
    fn entropy(&self) -> Result<Tensor> {
        self.scale.div(&self.alpha)?.log()?.add(&self.alpha.reciprocal()?.add(1.0)?)
    }
    fn mean(&self) -> Result<Tensor> {
        let a = self.alpha.clamp_min(1.0)?;
        a.mul(&self.scale)?.div(&a.sub(1.0)?)
    }
    fn mode(&self) -> Result<Tensor> {
        Ok(self.scale.clone())
    }
    fn variance(&self) -> Result<Tensor> {
        let a = self.alpha.clamp_min(2.0)?;
        self.scale.square()?.mul(&a)?.div(&a.sub(1.0)?.square()?.mul(&a.sub(2.0)?)?)
    }
    fn cdf(&self, value: &Tensor) -> Result<Tensor> {
        validate_sample(self, value)?;
        value.div(&self.scale)?.log()?.mul(&self.alpha)?.neg()?.exp()?.rsub(1.0)
    }
    fn icdf(&self, value: &Tensor) -> Result<Tensor> {
        value.neg()?.log1p()?.neg()?.div(&self.alpha)?.exp()?.mul(&self.scale)
    }
}
