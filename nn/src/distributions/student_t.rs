//! `torch.distributions.StudentT`; `rsample` goes through a reparameterized `Chi2` draw as
//! torch's.

use std::any::Any;
use std::f64::consts::PI;
use std::sync::Arc;

use oxtorch_tensor::{Generator, Result, Tensor};

use super::{
    broadcast_all, check_params, like, resolve_validate, validate_sample, Chi2, Constraint, Distribution,
    POSITIVE,
};

/// Student's t distribution (torch's `StudentT`).
#[derive(Clone)]
pub struct StudentT {
    /// The degrees of freedom.
    pub df: Tensor,
    /// The location.
    pub loc: Tensor,
    /// The scale.
    pub scale: Tensor,
    validate: bool,
}

impl StudentT {
    /// `StudentT(df, loc, scale)`, validated by default.
    pub fn new(df: &Tensor, loc: &Tensor, scale: &Tensor) -> Result<Self> {
        Self::with_validate_args(df, loc, scale, None)
    }

    /// `StudentT(df, loc, scale, validate_args=validate_args)`.
    pub fn with_validate_args(
        df: &Tensor,
        loc: &Tensor,
        scale: &Tensor,
        validate_args: Option<bool>,
    ) -> Result<Self> {
        let b = broadcast_all(&[df, loc, scale])?;
        let d = StudentT {
            df: b[0].clone(),
            loc: b[1].clone(),
            scale: b[2].clone(),
            validate: resolve_validate(validate_args),
        };
        if d.validate {
            check_params(
                "StudentT",
                &d.params(),
                &[("df", &d.df, POSITIVE), ("loc", &d.loc, Constraint::Real), ("scale", &d.scale, POSITIVE)],
            )?;
        }
        Ok(d)
    }
}

impl Distribution for StudentT {
    fn name(&self) -> &'static str {
        "StudentT"
    }
    fn batch_shape(&self) -> Vec<usize> {
        self.df.dims().to_vec()
    }
    fn params(&self) -> Vec<(&'static str, Tensor)> {
        vec![("df", self.df.clone()), ("loc", self.loc.clone()), ("scale", self.scale.clone())]
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
        Ok(Arc::new(StudentT {
            df: self.df.expand(batch_shape)?,
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
    /// torch's: `loc + scale · X · rsqrt(Z / df)` with `X` standard normal and `Z` a
    /// reparameterized `Chi2(df)` draw, differentiable in `df`, `loc` and `scale`.
    fn rsample_with(&self, sample_shape: &[usize], generator: Option<&Generator>) -> Result<Tensor> {
        let shape = self.extended_shape(sample_shape);
        let x = Tensor::randn_with(shape.clone(), like(&self.loc), generator)?;
        let chi2 = Chi2::with_validate_args(&self.df, Some(false))?;
        let z = chi2.rsample_with(sample_shape, generator)?;
        let y = x.mul(&z.div(&self.df)?.rsqrt()?)?;
        self.loc.add(&self.scale.mul(&y)?)
    }
    fn log_prob(&self, value: &Tensor) -> Result<Tensor> {
        validate_sample(self, value)?;
        let df = &self.df;
        let y = value.sub(&self.loc)?.div(&self.scale)?;
        let z = self
            .scale
            .log()?
            .add(&df.log()?.mul(0.5)?)?
            .add(0.5 * PI.ln())?
            .add(&df.mul(0.5)?.lgamma()?)?
            .sub(&df.add(1.0)?.mul(0.5)?.lgamma()?)?;
        df.add(1.0)?.mul(-0.5)?.mul(&y.square()?.div(df)?.log1p()?)?.sub(&z)
    }
    fn entropy(&self) -> Result<Tensor> {
        let df = &self.df;
        let half = df.mul(0.5)?;
        let half1 = df.add(1.0)?.mul(0.5)?;
        // lgamma(0.5) = ln(sqrt(pi))
        let lbeta = half.lgamma()?.add(0.5 * PI.ln())?.sub(&half1.lgamma()?)?;
        self.scale
            .log()?
            .add(&df.add(1.0)?.mul(0.5)?.mul(&half1.digamma()?.sub(&half.digamma()?)?)?)?
            .add(&df.log()?.mul(0.5)?)?
            .add(&lbeta)
    }
    fn mean(&self) -> Result<Tensor> {
        Tensor::where_cond(&self.df.le(1.0)?, f64::NAN, &self.loc)
    }
    fn mode(&self) -> Result<Tensor> {
        Ok(self.loc.clone())
    }
    fn variance(&self) -> Result<Tensor> {
        let df = &self.df;
        let big = self.scale.square()?.mul(df)?.div(&df.sub(2.0)?)?;
        let mid = Tensor::where_cond(&df.gt(1.0)?, &df.full_like(f64::INFINITY)?, &df.full_like(f64::NAN)?)?;
        Tensor::where_cond(&df.gt(2.0)?, &big, &mid)
    }
}
