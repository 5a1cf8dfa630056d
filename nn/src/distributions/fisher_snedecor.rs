//! `torch.distributions.FisherSnedecor`: the ratio of two `Gamma(df / 2, df)` draws.

use std::any::Any;

use oxtorch_tensor::{Generator, Result, Tensor};

use super::common_methods::common;
use super::{
    broadcast_all, check_params, finfo_tiny, resolve_validate, validate_sample, Constraint, Distribution,
    Gamma, POSITIVE,
};

/// The Fisher–Snedecor (F) distribution (torch's `FisherSnedecor`); `rsample` is the ratio of
/// two reparameterized `Gamma(df / 2, df)` draws.
#[derive(Clone)]
pub struct FisherSnedecor {
    /// The numerator degrees of freedom.
    pub df1: Tensor,
    /// The denominator degrees of freedom.
    pub df2: Tensor,
    gamma1: Gamma,
    gamma2: Gamma,
    validate: bool,
}

impl FisherSnedecor {
    /// `FisherSnedecor(df1, df2)`, validated by default.
    pub fn new(df1: &Tensor, df2: &Tensor) -> Result<Self> {
        Self::with_validate_args(df1, df2, None)
    }

    /// `FisherSnedecor(df1, df2, validate_args=validate_args)`. As torch's, the inner
    /// `Gamma(df / 2, df)`s are built (and validated) with the default `validate_args`.
    pub fn with_validate_args(df1: &Tensor, df2: &Tensor, validate_args: Option<bool>) -> Result<Self> {
        let b = broadcast_all(&[df1, df2])?;
        let (df1, df2) = (b[0].clone(), b[1].clone());
        let gamma1 = Gamma::new(&df1.mul(0.5)?, &df1)?;
        let gamma2 = Gamma::new(&df2.mul(0.5)?, &df2)?;
        let d = FisherSnedecor { df1, df2, gamma1, gamma2, validate: resolve_validate(validate_args) };
        if d.validate {
            check_params(
                "FisherSnedecor",
                &d.params(),
                &[("df1", &d.df1, POSITIVE), ("df2", &d.df2, POSITIVE)],
            )?;
        }
        Ok(d)
    }
}

impl Distribution for FisherSnedecor {
    common!("FisherSnedecor", df1);
    fn params(&self) -> Vec<(&'static str, Tensor)> {
        vec![("df1", self.df1.clone()), ("df2", self.df2.clone())]
    }
    fn support(&self) -> Constraint {
        POSITIVE
    }
    fn sample_with(&self, sample_shape: &[usize], generator: Option<&Generator>) -> Result<Tensor> {
        let shape = self.extended_shape(sample_shape);
        let tiny = finfo_tiny(self.df1.dtype());
        let x1 = self.gamma1.sample_with(sample_shape, generator)?.reshape(shape.clone())?;
        let x2 = self.gamma2.sample_with(sample_shape, generator)?.reshape(shape)?.clamp_min(tiny)?;
        x1.div(&x2)?.clamp_min(tiny)
    }
    fn has_rsample(&self) -> bool {
        true
    }
    fn rsample_with(&self, sample_shape: &[usize], generator: Option<&Generator>) -> Result<Tensor> {
        let shape = self.extended_shape(sample_shape);
        let tiny = finfo_tiny(self.df1.dtype());
        let x1 = self.gamma1.rsample_with(sample_shape, generator)?.reshape(shape.clone())?;
        let x2 = self.gamma2.rsample_with(sample_shape, generator)?.reshape(shape)?.clamp_min(tiny)?;
        x1.div(&x2)?.clamp_min(tiny)
    }
    fn log_prob(&self, value: &Tensor) -> Result<Tensor> {
        validate_sample(self, value)?;
        let ct1 = self.df1.mul(0.5)?;
        let ct2 = self.df2.mul(0.5)?;
        let ct3 = self.df1.div(&self.df2)?;
        let t1 = ct1.add(&ct2)?.lgamma()?.sub(&ct1.lgamma()?)?.sub(&ct2.lgamma()?)?;
        let t2 = ct1.mul(&ct3.log()?)?.add(&ct1.sub(1.0)?.mul(&value.log()?)?)?;
        let t3 = ct1.add(&ct2)?.mul(&ct3.mul(value)?.log1p()?)?;
        t1.add(&t2)?.sub(&t3)
    }
    fn mean(&self) -> Result<Tensor> {
        let df2 = self.df2.masked_fill(&self.df2.le(2.0)?, f64::NAN)?;
        df2.div(&df2.sub(2.0)?)
    }
    fn mode(&self) -> Result<Tensor> {
        let (df1, df2) = (&self.df1, &self.df2);
        let mode = df1.sub(2.0)?.div(df1)?.mul(df2)?.div(&df2.add(2.0)?)?;
        mode.masked_fill(&df1.le(2.0)?, f64::NAN)
    }
    fn variance(&self) -> Result<Tensor> {
        let df1 = &self.df1;
        let df2 = self.df2.masked_fill(&self.df2.le(4.0)?, f64::NAN)?;
        let num = df2.square()?.mul(2.0)?.mul(&df1.add(&df2)?.sub(2.0)?)?;
        num.div(&df1.mul(&df2.sub(2.0)?.square()?)?.mul(&df2.sub(4.0)?)?)
    }
}
