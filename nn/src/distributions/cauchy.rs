//! `torch.distributions.Cauchy`.

use std::any::Any;
use std::f64::consts::PI;
use std::sync::Arc;

use oxtorch_tensor::{Generator, Result, Tensor};

use super::{
    broadcast_all, check_params, like, resolve_validate, validate_sample, Constraint, Distribution, POSITIVE,
};

/// The Cauchy distribution (torch's `Cauchy`); `rsample` is `loc + tan(π(u - ½)) * scale`.
#[derive(Clone)]
pub struct Cauchy {
    /// The median.
    pub loc: Tensor,
    /// The half width at half maximum.
    pub scale: Tensor,
    validate: bool,
}

impl Cauchy {
    /// `Cauchy(loc, scale)`, validated by default.
    pub fn new(loc: &Tensor, scale: &Tensor) -> Result<Self> {
        Self::with_validate_args(loc, scale, None)
    }

    /// `Cauchy(loc, scale, validate_args=validate_args)`.
    pub fn with_validate_args(loc: &Tensor, scale: &Tensor, validate_args: Option<bool>) -> Result<Self> {
        let b = broadcast_all(&[loc, scale])?;
        let d = Cauchy { loc: b[0].clone(), scale: b[1].clone(), validate: resolve_validate(validate_args) };
        if d.validate {
            check_params(
                "Cauchy",
                &d.params(),
                &[("loc", &d.loc, Constraint::Real), ("scale", &d.scale, POSITIVE)],
            )?;
        }
        Ok(d)
    }
}

impl Distribution for Cauchy {
    fn name(&self) -> &'static str {
        "Cauchy"
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
        Ok(Arc::new(Cauchy {
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
        let u = Tensor::rand_with(self.extended_shape(sample_shape), like(&self.loc), generator)?;
        let eps = u.sub(0.5)?.mul(PI)?.tan()?;
        self.loc.add(&eps.mul(&self.scale)?)
    }
    fn log_prob(&self, value: &Tensor) -> Result<Tensor> {
        validate_sample(self, value)?;
        let z = value.sub(&self.loc)?.div(&self.scale)?;
        self.scale.log()?.neg()?.sub(PI.ln())?.sub(&z.square()?.log1p()?)
    }
    fn entropy(&self) -> Result<Tensor> {
        self.scale.log()?.add((4.0 * PI).ln())
    }
    fn mean(&self) -> Result<Tensor> {
        self.loc.full_like(f64::NAN)
    }
    fn mode(&self) -> Result<Tensor> {
        Ok(self.loc.clone())
    }
    fn variance(&self) -> Result<Tensor> {
        self.loc.full_like(f64::INFINITY)
    }
    fn cdf(&self, value: &Tensor) -> Result<Tensor> {
        validate_sample(self, value)?;
        value.sub(&self.loc)?.div(&self.scale)?.atan()?.div(PI)?.add(0.5)
    }
    fn icdf(&self, value: &Tensor) -> Result<Tensor> {
        value.sub(0.5)?.mul(PI)?.tan()?.mul(&self.scale)?.add(&self.loc)
    }
}
