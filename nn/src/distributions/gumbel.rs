//! `torch.distributions.Gumbel`, which torch builds as a `TransformedDistribution` over
//! `Uniform(tiny, 1 - eps)`; here it is written out in closed form (see `closed_form.rs`), with
//! `cdf`/`icdf` through that base as torch's.

use std::any::Any;
use std::f64::consts::PI;
use std::sync::Arc;

use oxtorch_tensor::{Generator, Result, Tensor};

use super::closed_form::{monotonize_cdf, EULER};
use super::common_methods::common;
use super::{
    broadcast_all, check_params, finfo_eps, finfo_tiny, like, resolve_validate, validate_sample, Constraint,
    Distribution, Uniform, POSITIVE,
};

/// The Gumbel distribution (torch's `Gumbel`): `loc - scale · log(-log U)` for `U` uniform on
/// `[tiny, 1 - eps]`.
#[derive(Clone)]
pub struct Gumbel {
    /// The location.
    pub loc: Tensor,
    /// The scale.
    pub scale: Tensor,
    validate: bool,
}

impl Gumbel {
    /// `Gumbel(loc, scale)`, validated by default.
    pub fn new(loc: &Tensor, scale: &Tensor) -> Result<Self> {
        Self::with_validate_args(loc, scale, None)
    }

    /// `Gumbel(loc, scale, validate_args=validate_args)`.
    pub fn with_validate_args(loc: &Tensor, scale: &Tensor, validate_args: Option<bool>) -> Result<Self> {
        let b = broadcast_all(&[loc, scale])?;
        let d = Gumbel { loc: b[0].clone(), scale: b[1].clone(), validate: resolve_validate(validate_args) };
        if d.validate {
            check_params(
                "Gumbel",
                &d.params(),
                &[("loc", &d.loc, Constraint::Real), ("scale", &d.scale, POSITIVE)],
            )?;
        }
        Ok(d)
    }

    /// torch's base distribution `Uniform(full_like(loc, tiny), full_like(loc, 1 - eps))`.
    fn base_uniform(&self) -> Result<Uniform> {
        let dt = self.loc.dtype();
        let loc = self.loc.detach();
        let low = loc.full_like(finfo_tiny(dt))?;
        let high = loc.full_like(1.0 - finfo_eps(dt))?;
        Uniform::with_validate_args(&low, &high, Some(self.validate))
    }
}

impl Distribution for Gumbel {
    common!("Gumbel", loc);
    fn expand(&self, batch_shape: &[usize]) -> Result<Arc<dyn Distribution>> {
        Ok(Arc::new(Gumbel {
            loc: self.loc.expand(batch_shape)?,
            scale: self.scale.expand(batch_shape)?,
            validate: self.validate,
        }))
    }
    fn params(&self) -> Vec<(&'static str, Tensor)> {
        vec![("loc", self.loc.clone()), ("scale", self.scale.clone())]
    }
    fn support(&self) -> Constraint {
        Constraint::Real
    }
    fn sample_with(&self, sample_shape: &[usize], generator: Option<&Generator>) -> Result<Tensor> {
        Ok(self.rsample_with(sample_shape, generator)?.detach())
    }
    fn has_rsample(&self) -> bool {
        true
    }
    fn rsample_with(&self, sample_shape: &[usize], generator: Option<&Generator>) -> Result<Tensor> {
        let dt = self.loc.dtype();
        let (lo, hi) = (finfo_tiny(dt), 1.0 - finfo_eps(dt));
        let u = Tensor::rand_with(self.extended_shape(sample_shape), like(&self.loc), generator)?;
        let u = u.mul(hi - lo)?.add(lo)?;
        self.loc.sub(&self.scale.mul(&u.log()?.neg()?.log()?)?)
    }
    fn log_prob(&self, value: &Tensor) -> Result<Tensor> {
        validate_sample(self, value)?;
        let y = self.loc.sub(value)?.div(&self.scale)?;
        y.sub(&y.exp()?)?.sub(&self.scale.log()?)
    }
    fn entropy(&self) -> Result<Tensor> {
        self.scale.log()?.add(1.0 + EULER)
    }
    fn mean(&self) -> Result<Tensor> {
        self.loc.add(&self.scale.mul(EULER)?)
    }
    fn mode(&self) -> Result<Tensor> {
        Ok(self.loc.clone())
    }
    fn stddev(&self) -> Result<Tensor> {
        self.scale.mul(PI / 6f64.sqrt())
    }
    fn variance(&self) -> Result<Tensor> {
        self.stddev()?.square()
    }
    /// torch's `TransformedDistribution.cdf`: the value pulled back to the base
    /// `Uniform(tiny, 1 - eps)`, checked against its support (so values whose pull-back rounds
    /// outside `[tiny, 1 - eps]` are rejected, as torch's), then the base's cdf.
    fn cdf(&self, value: &Tensor) -> Result<Tensor> {
        let u = value.sub(&self.loc)?.div(&self.scale.neg()?)?.exp()?.neg()?.exp()?;
        let base = self.base_uniform()?;
        validate_sample(&base, &u)?;
        monotonize_cdf(&base.cdf(&u)?, true)
    }
    /// torch's `TransformedDistribution.icdf`: the base `Uniform(tiny, 1 - eps)`'s icdf pushed
    /// through the transforms (so `icdf(0)` and `icdf(1)` are finite).
    fn icdf(&self, value: &Tensor) -> Result<Tensor> {
        let base = self.base_uniform()?;
        let u = base.icdf(&monotonize_cdf(value, true)?)?;
        self.loc.sub(&self.scale.mul(&u.log()?.neg()?.log()?)?)
    }
}
