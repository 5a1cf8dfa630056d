//! `torch.distributions.Normal`.

use std::any::Any;
use std::f64::consts::{PI, SQRT_2};
use std::sync::Arc;

use oxtorch_tensor::{Generator, Result, Tensor};

use super::{
    broadcast_all, check_params, like, resolve_validate, validate_sample, Constraint, Distribution, POSITIVE,
};

/// The normal distribution `N(loc, scale²)` (torch's `Normal`); `rsample` is `loc + eps * scale`.
#[derive(Clone)]
pub struct Normal {
    /// The mean (broadcast with `scale`).
    pub loc: Tensor,
    /// The standard deviation (broadcast with `loc`).
    pub scale: Tensor,
    validate: bool,
}

impl Normal {
    /// `Normal(loc, scale)`, validated by default.
    pub fn new(loc: &Tensor, scale: &Tensor) -> Result<Self> {
        Self::with_validate_args(loc, scale, None)
    }

    /// `Normal(loc, scale, validate_args=validate_args)`.
    pub fn with_validate_args(loc: &Tensor, scale: &Tensor, validate_args: Option<bool>) -> Result<Self> {
        let mut b = broadcast_all(&[loc, scale])?;
        let scale = b.pop().unwrap_or_else(|| scale.clone());
        let loc = b.pop().unwrap_or_else(|| loc.clone());
        let d = Normal { loc, scale, validate: resolve_validate(validate_args) };
        if d.validate {
            check_params(
                "Normal",
                &d.params(),
                &[("loc", &d.loc, Constraint::Real), ("scale", &d.scale, POSITIVE)],
            )?;
        }
        Ok(d)
    }
}

impl Distribution for Normal {
    fn name(&self) -> &'static str {
        "Normal"
    }
    fn batch_shape(&self) -> Vec<usize> {
        self.loc.dims().to_vec()
    }
    fn params(&self) -> Vec<(&'static str, Tensor)> {
        vec![("loc", self.loc.clone()), ("scale", self.scale.clone())]
    }
    fn support(&self) -> Constraint {
        Constraint::Real
    }
    fn validate_args(&self) -> bool {
        self.validate
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
    fn expand(&self, batch_shape: &[usize]) -> Result<Arc<dyn Distribution>> {
        Ok(Arc::new(Normal {
            loc: self.loc.expand(batch_shape)?,
            scale: self.scale.expand(batch_shape)?,
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
        let eps = Tensor::randn_with(self.extended_shape(sample_shape), like(&self.loc), generator)?;
        self.loc.add(&eps.mul(&self.scale)?)
    }
    fn log_prob(&self, value: &Tensor) -> Result<Tensor> {
        validate_sample(self, value)?;
        let var = self.scale.square()?;
        let log_scale = self.scale.log()?;
        value
            .sub(&self.loc)?
            .square()?
            .neg()?
            .div(&var.mul(2.0)?)?
            .sub(&log_scale)?
            .sub((2.0 * PI).sqrt().ln())
    }
    fn entropy(&self) -> Result<Tensor> {
        self.scale.log()?.add(0.5 + 0.5 * (2.0 * PI).ln())
    }
    fn mean(&self) -> Result<Tensor> {
        Ok(self.loc.clone())
    }
    fn mode(&self) -> Result<Tensor> {
        Ok(self.loc.clone())
    }
    fn variance(&self) -> Result<Tensor> {
        self.scale.square()
    }
    fn stddev(&self) -> Result<Tensor> {
        Ok(self.scale.clone())
    }
    fn cdf(&self, value: &Tensor) -> Result<Tensor> {
        validate_sample(self, value)?;
        value.sub(&self.loc)?.mul(&self.scale.reciprocal()?)?.div(SQRT_2)?.erf()?.add(1.0)?.mul(0.5)
    }
    fn icdf(&self, value: &Tensor) -> Result<Tensor> {
        self.loc.add(&self.scale.mul(&value.mul(2.0)?.sub(1.0)?.erfinv()?)?.mul(SQRT_2)?)
    }
}
