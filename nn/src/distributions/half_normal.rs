//! `torch.distributions.HalfNormal`, and the folding at zero it shares with `HalfCauchy`.

use std::any::Any;
use std::f64::consts::{LN_2, PI};

use oxtorch_tensor::{Generator, Result, Tensor};

use super::{validate_sample, Constraint, Distribution, Normal, NONNEGATIVE};

/// A distribution folded at zero: `|X|` for a symmetric `X` around 0 (torch's `HalfNormal` and
/// `HalfCauchy` formulas over their base).
pub(super) fn folded_log_prob(base_lp: Tensor, value: &Tensor) -> Result<Tensor> {
    let lp = base_lp.add(LN_2)?;
    Tensor::where_cond(&value.ge(0.0)?, &lp, f64::NEG_INFINITY)
}

/// The half-normal distribution `|N(0, scale²)|` (torch's `HalfNormal`).
#[derive(Clone)]
pub struct HalfNormal {
    /// The scale of the base normal.
    pub scale: Tensor,
    base: Normal,
}

impl HalfNormal {
    /// `HalfNormal(scale)`, validated by default.
    pub fn new(scale: &Tensor) -> Result<Self> {
        Self::with_validate_args(scale, None)
    }

    /// `HalfNormal(scale, validate_args=validate_args)`.
    pub fn with_validate_args(scale: &Tensor, validate_args: Option<bool>) -> Result<Self> {
        let base = Normal::with_validate_args(&scale.detach().zeros_like()?, scale, validate_args)?;
        Ok(HalfNormal { scale: base.scale.clone(), base })
    }
}

impl Distribution for HalfNormal {
    fn name(&self) -> &'static str {
        "HalfNormal"
    }
    fn batch_shape(&self) -> Vec<usize> {
        self.scale.dims().to_vec()
    }
    fn params(&self) -> Vec<(&'static str, Tensor)> {
        vec![("scale", self.scale.clone())]
    }
    fn support(&self) -> Constraint {
        NONNEGATIVE
    }
    fn validate_args(&self) -> bool {
        self.base.validate_args()
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
    fn sample_with(&self, sample_shape: &[usize], generator: Option<&Generator>) -> Result<Tensor> {
        self.base.sample_with(sample_shape, generator)?.abs()
    }
    fn has_rsample(&self) -> bool {
        true
    }
    fn rsample_with(&self, sample_shape: &[usize], generator: Option<&Generator>) -> Result<Tensor> {
        self.base.rsample_with(sample_shape, generator)?.abs()
    }
    fn log_prob(&self, value: &Tensor) -> Result<Tensor> {
        validate_sample(self, value)?;
        folded_log_prob(self.base.log_prob(value)?, value)
    }
    fn entropy(&self) -> Result<Tensor> {
        self.base.entropy()?.sub(LN_2)
    }
    fn mean(&self) -> Result<Tensor> {
        self.scale.mul((2.0 / PI).sqrt())
    }
    fn mode(&self) -> Result<Tensor> {
        self.scale.zeros_like()
    }
    fn variance(&self) -> Result<Tensor> {
        self.scale.square()?.mul(1.0 - 2.0 / PI)
    }
    fn cdf(&self, value: &Tensor) -> Result<Tensor> {
        validate_sample(self, value)?;
        self.base.cdf(value)?.mul(2.0)?.sub(1.0)
    }
    fn icdf(&self, prob: &Tensor) -> Result<Tensor> {
        self.base.icdf(&prob.add(1.0)?.div(2.0)?)
    }
}
