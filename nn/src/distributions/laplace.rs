//! `torch.distributions.Laplace`.

use std::any::Any;
use std::sync::Arc;

use oxtorch_tensor::{Generator, Result, Tensor};

use super::{
    broadcast_all, check_params, like, resolve_validate, validate_sample, Constraint, Distribution, POSITIVE,
};

/// The Laplace distribution (torch's `Laplace`); `rsample` inverts the cdf at a uniform draw.
#[derive(Clone)]
pub struct Laplace {
    /// The location (mean).
    pub loc: Tensor,
    /// The scale.
    pub scale: Tensor,
    validate: bool,
}

impl Laplace {
    /// `Laplace(loc, scale)`, validated by default.
    pub fn new(loc: &Tensor, scale: &Tensor) -> Result<Self> {
        Self::with_validate_args(loc, scale, None)
    }

    /// `Laplace(loc, scale, validate_args=validate_args)`.
    pub fn with_validate_args(loc: &Tensor, scale: &Tensor, validate_args: Option<bool>) -> Result<Self> {
        let b = broadcast_all(&[loc, scale])?;
        let d = Laplace { loc: b[0].clone(), scale: b[1].clone(), validate: resolve_validate(validate_args) };
        if d.validate {
            check_params(
                "Laplace",
                &d.params(),
                &[("loc", &d.loc, Constraint::Real), ("scale", &d.scale, POSITIVE)],
            )?;
        }
        Ok(d)
    }
}

impl Distribution for Laplace {
    fn name(&self) -> &'static str {
        "Laplace"
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
        Ok(Arc::new(Laplace {
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
        let eps = super::finfo_eps(self.loc.dtype());
        let u = Tensor::zeros(self.extended_shape(sample_shape), like(&self.loc))?;
        u.uniform_with_(eps - 1.0, 1.0, generator)?;
        self.loc.sub(&self.scale.mul(&u.sign()?)?.mul(&u.abs()?.neg()?.log1p()?)?)
    }
    fn log_prob(&self, value: &Tensor) -> Result<Tensor> {
        validate_sample(self, value)?;
        self.scale.mul(2.0)?.log()?.neg()?.sub(&value.sub(&self.loc)?.abs()?.div(&self.scale)?)
    }
    fn entropy(&self) -> Result<Tensor> {
        self.scale.mul(2.0)?.log()?.add(1.0)
    }
    fn mean(&self) -> Result<Tensor> {
        Ok(self.loc.clone())
    }
    fn mode(&self) -> Result<Tensor> {
        Ok(self.loc.clone())
    }
    fn variance(&self) -> Result<Tensor> {
        self.scale.square()?.mul(2.0)
    }
    fn stddev(&self) -> Result<Tensor> {
        self.scale.mul(std::f64::consts::SQRT_2)
    }
    fn cdf(&self, value: &Tensor) -> Result<Tensor> {
        validate_sample(self, value)?;
        let d = value.sub(&self.loc)?;
        let t = d.sign()?.mul(&d.abs()?.neg()?.div(&self.scale)?.expm1()?)?;
        t.mul(0.5)?.rsub(0.5)
    }
    fn icdf(&self, value: &Tensor) -> Result<Tensor> {
        let term = value.sub(0.5)?;
        self.loc.sub(&self.scale.mul(&term.sign()?)?.mul(&term.abs()?.mul(-2.0)?.log1p()?)?)
    }
}
