//! `torch.distributions.NegativeBinomial`; sampling is torch's Gamma–Poisson mixture.

use std::any::Any;
use std::sync::Arc;

use oxtorch_tensor::{Error, Generator, Result, Tensor};

use super::geometric::binary_params;
use super::{
    broadcast_all, check_params, resolve_validate, validate_sample, Constraint, Distribution, Gamma,
    NONNEGATIVE,
};

/// The negative binomial distribution: successes before `total_count` failures, each trial
/// succeeding with `probs` (torch's `NegativeBinomial`).
#[derive(Clone)]
pub struct NegativeBinomial {
    /// The number of failures to stop at.
    pub total_count: Tensor,
    /// The success probability.
    pub probs: Tensor,
    /// The log-odds of success.
    pub logits: Tensor,
    by_logits: bool,
    validate: bool,
}

impl NegativeBinomial {
    /// `NegativeBinomial(total_count, probs=probs)`.
    pub fn from_probs(total_count: &Tensor, probs: &Tensor) -> Result<Self> {
        Self::with_validate_args(total_count, Some(probs), None, None)
    }

    /// `NegativeBinomial(total_count, logits=logits)`.
    pub fn from_logits(total_count: &Tensor, logits: &Tensor) -> Result<Self> {
        Self::with_validate_args(total_count, None, Some(logits), None)
    }

    /// `NegativeBinomial(total_count, probs, logits, validate_args)`.
    pub fn with_validate_args(
        total_count: &Tensor,
        probs: Option<&Tensor>,
        logits: Option<&Tensor>,
        validate_args: Option<bool>,
    ) -> Result<Self> {
        let param = probs
            .or(logits)
            .ok_or_else(|| Error::msg("Either `probs` or `logits` must be specified, but not both."))?;
        let b = broadcast_all(&[total_count, param])?;
        let tc = b[0].type_as(param)?;
        let (probs, logits, by_logits) = match (probs, logits) {
            (Some(_), None) => binary_params(Some(&b[1]), None)?,
            (None, Some(_)) => binary_params(None, Some(&b[1]))?,
            _ => return Err(Error::msg("Either `probs` or `logits` must be specified, but not both.")),
        };
        let validate = resolve_validate(validate_args);
        let d = NegativeBinomial { total_count: tc, probs, logits, by_logits, validate };
        if d.validate {
            let (name, v, c) = if d.by_logits {
                ("logits", &d.logits, Constraint::Real)
            } else {
                ("probs", &d.probs, Constraint::HalfOpenInterval(0.0, 1.0))
            };
            check_params(
                "NegativeBinomial",
                &d.params(),
                &[("total_count", &d.total_count, NONNEGATIVE), (name, v, c)],
            )?;
        }
        Ok(d)
    }
}

impl Distribution for NegativeBinomial {
    fn name(&self) -> &'static str {
        "NegativeBinomial"
    }
    fn batch_shape(&self) -> Vec<usize> {
        self.probs.dims().to_vec()
    }
    fn params(&self) -> Vec<(&'static str, Tensor)> {
        let p = if self.by_logits { ("logits", self.logits.clone()) } else { ("probs", self.probs.clone()) };
        vec![("total_count", self.total_count.clone()), p]
    }
    fn support(&self) -> Constraint {
        Constraint::IntegerGreaterThan(0)
    }
    fn validate_args(&self) -> bool {
        self.validate
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
    fn expand(&self, batch_shape: &[usize]) -> Result<Arc<dyn Distribution>> {
        Ok(Arc::new(NegativeBinomial {
            total_count: self.total_count.expand(batch_shape)?,
            probs: self.probs.expand(batch_shape)?,
            logits: self.logits.expand(batch_shape)?,
            by_logits: self.by_logits,
            validate: self.validate,
        }))
    }
    /// torch's Gamma–Poisson mixture: `poisson(Gamma(total_count, exp(-logits)).sample())`.
    fn sample_with(&self, sample_shape: &[usize], generator: Option<&Generator>) -> Result<Tensor> {
        let rate = self.logits.detach().neg()?.exp()?;
        let gamma = Gamma::with_validate_args(&self.total_count.detach(), &rate, Some(false))?;
        gamma.sample_with(sample_shape, generator)?.poisson_with(generator)
    }
    fn log_prob(&self, value: &Tensor) -> Result<Tensor> {
        validate_sample(self, value)?;
        let (tc, l) = (&self.total_count, &self.logits);
        // logsigmoid(x) = -softplus(-x)
        let ls_neg = l.softplus(1.0, 20.0)?.neg()?;
        let ls_pos = l.neg()?.softplus(1.0, 20.0)?.neg()?;
        let unnorm = tc.mul(&ls_neg)?.add(&value.mul(&ls_pos)?)?;
        let norm = tc.add(value)?.lgamma()?.neg()?.add(&value.add(1.0)?.lgamma()?)?.add(&tc.lgamma()?)?;
        let norm = Tensor::where_cond(&tc.add(value)?.eq(0.0)?, 0.0, &norm)?;
        unnorm.sub(&norm)
    }
    fn mean(&self) -> Result<Tensor> {
        self.total_count.mul(&self.logits.exp()?)
    }
    fn mode(&self) -> Result<Tensor> {
        self.total_count.sub(1.0)?.mul(&self.logits.exp()?)?.floor()?.clamp_min(0.0)
    }
    fn variance(&self) -> Result<Tensor> {
        self.mean()?.div(&self.logits.neg()?.sigmoid()?)
    }
}
