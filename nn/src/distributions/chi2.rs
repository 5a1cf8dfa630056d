//! `torch.distributions.Chi2`: `Gamma(df / 2, 1 / 2)`.

use std::any::Any;

use oxtorch_tensor::{Generator, Result, Tensor};

use super::{
    check_params, resolve_validate, validate_sample, Constraint, Distribution, Gamma, NONNEGATIVE, POSITIVE,
};

/// The chi-squared distribution `Gamma(df / 2, 1 / 2)` (torch's `Chi2`).
#[derive(Clone)]
pub struct Chi2 {
    /// The degrees of freedom.
    pub df: Tensor,
    gamma: Gamma,
}

impl Chi2 {
    /// `Chi2(df)`, validated by default.
    pub fn new(df: &Tensor) -> Result<Self> {
        Self::with_validate_args(df, None)
    }

    /// `Chi2(df, validate_args=validate_args)`.
    pub fn with_validate_args(df: &Tensor, validate_args: Option<bool>) -> Result<Self> {
        let validate = resolve_validate(validate_args);
        let conc = df.mul(0.5)?;
        let half = conc.detach().full_like(0.5)?;
        let gamma = Gamma::with_validate_args(&conc, &half, Some(false))?;
        if validate {
            check_params(
                "Chi2",
                &[("df", df.clone())],
                &[("concentration", &gamma.concentration, POSITIVE)],
            )?;
        }
        let gamma = Gamma::with_validate_args(&gamma.concentration, &gamma.rate, Some(validate))?;
        Ok(Chi2 { df: df.clone(), gamma })
    }

    /// The underlying `Gamma(df / 2, 1 / 2)`.
    pub fn as_gamma(&self) -> &Gamma {
        &self.gamma
    }
}

impl Distribution for Chi2 {
    fn name(&self) -> &'static str {
        "Chi2"
    }
    fn batch_shape(&self) -> Vec<usize> {
        self.gamma.batch_shape()
    }
    fn params(&self) -> Vec<(&'static str, Tensor)> {
        vec![("df", self.df.clone())]
    }
    fn support(&self) -> Constraint {
        NONNEGATIVE
    }
    fn validate_args(&self) -> bool {
        self.gamma.validate_args()
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
    fn sample_with(&self, sample_shape: &[usize], generator: Option<&Generator>) -> Result<Tensor> {
        self.gamma.sample_with(sample_shape, generator)
    }
    fn has_rsample(&self) -> bool {
        self.gamma.has_rsample()
    }
    fn rsample_with(&self, sample_shape: &[usize], generator: Option<&Generator>) -> Result<Tensor> {
        self.gamma.rsample_with(sample_shape, generator)
    }
    fn log_prob(&self, value: &Tensor) -> Result<Tensor> {
        validate_sample(self, value)?;
        self.gamma.log_prob(value)
    }
    fn entropy(&self) -> Result<Tensor> {
        self.gamma.entropy()
    }
    fn mean(&self) -> Result<Tensor> {
        self.gamma.mean()
    }
    fn mode(&self) -> Result<Tensor> {
        self.gamma.mode()
    }
    fn variance(&self) -> Result<Tensor> {
        self.gamma.variance()
    }
    fn cdf(&self, value: &Tensor) -> Result<Tensor> {
        self.gamma.cdf(value)
    }
}
