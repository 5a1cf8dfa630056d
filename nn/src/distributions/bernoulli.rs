//! `torch.distributions.Bernoulli`.

use std::any::Any;
use std::sync::Arc;

use oxtorch_tensor::{Error, Generator, Result, Tensor};

use super::{
    check_params, clamp_probs, resolve_validate, validate_sample, Constraint, Distribution, UNIT_INTERVAL,
};

/// The Bernoulli distribution, by `probs` or by `logits` (torch's `Bernoulli`).
#[derive(Clone)]
pub struct Bernoulli {
    /// The probability of a 1.
    pub probs: Tensor,
    /// The log-odds of a 1.
    pub logits: Tensor,
    by_logits: bool,
    validate: bool,
}

/// torch's `binary_cross_entropy_with_logits(x, z, reduction="none")`.
pub(crate) fn bce_with_logits(x: &Tensor, z: &Tensor) -> Result<Tensor> {
    // (the loss's own formula, whose gradient is right at x = 0 too, as torch's fused kernel)
    crate::loss::binary_cross_entropy_with_logits(x, z, None, "none", None)
}

impl Bernoulli {
    /// `Bernoulli(probs=probs)`, validated by default.
    pub fn from_probs(probs: &Tensor) -> Result<Self> {
        Self::with_validate_args(Some(probs), None, None)
    }

    /// `Bernoulli(logits=logits)`, validated by default.
    pub fn from_logits(logits: &Tensor) -> Result<Self> {
        Self::with_validate_args(None, Some(logits), None)
    }

    /// `Bernoulli(probs, logits, validate_args)`: exactly one of `probs` and `logits`.
    pub fn with_validate_args(
        probs: Option<&Tensor>,
        logits: Option<&Tensor>,
        validate_args: Option<bool>,
    ) -> Result<Self> {
        let validate = resolve_validate(validate_args);
        let d = match (probs, logits) {
            (Some(p), None) => {
                let c = clamp_probs(p)?;
                let logits = c.log()?.sub(&c.neg()?.log1p()?)?;
                Bernoulli { probs: p.clone(), logits, by_logits: false, validate }
            }
            (None, Some(l)) => {
                Bernoulli { probs: l.sigmoid()?, logits: l.clone(), by_logits: true, validate }
            }
            _ => return Err(Error::msg("Either `probs` or `logits` must be specified, but not both.")),
        };
        if validate {
            let (name, v, c) = if d.by_logits {
                ("logits", &d.logits, Constraint::Real)
            } else {
                ("probs", &d.probs, UNIT_INTERVAL)
            };
            check_params("Bernoulli", &d.params(), &[(name, v, c)])?;
        }
        Ok(d)
    }
}

impl Distribution for Bernoulli {
    fn name(&self) -> &'static str {
        "Bernoulli"
    }
    fn batch_shape(&self) -> Vec<usize> {
        self.probs.dims().to_vec()
    }
    fn params(&self) -> Vec<(&'static str, Tensor)> {
        if self.by_logits {
            vec![("logits", self.logits.clone())]
        } else {
            vec![("probs", self.probs.clone())]
        }
    }
    fn support(&self) -> Constraint {
        Constraint::Boolean
    }
    fn validate_args(&self) -> bool {
        self.validate
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
    fn expand(&self, batch_shape: &[usize]) -> Result<Arc<dyn Distribution>> {
        Ok(Arc::new(Bernoulli {
            probs: self.probs.expand(batch_shape)?,
            logits: self.logits.expand(batch_shape)?,
            by_logits: self.by_logits,
            validate: self.validate,
        }))
    }
    fn sample_with(&self, sample_shape: &[usize], generator: Option<&Generator>) -> Result<Tensor> {
        self.probs.detach().expand(self.extended_shape(sample_shape))?.contiguous()?.bernoulli_with(generator)
    }
    fn log_prob(&self, value: &Tensor) -> Result<Tensor> {
        validate_sample(self, value)?;
        let b = Tensor::broadcast_tensors(&[&self.logits, value])?;
        bce_with_logits(&b[0], &b[1])?.neg()
    }
    fn entropy(&self) -> Result<Tensor> {
        bce_with_logits(&self.logits, &self.probs)
    }
    fn mean(&self) -> Result<Tensor> {
        Ok(self.probs.clone())
    }
    fn mode(&self) -> Result<Tensor> {
        let m = self.probs.ge(0.5)?.type_as(&self.probs)?;
        m.masked_fill(&self.probs.eq(0.5)?, f64::NAN)
    }
    fn variance(&self) -> Result<Tensor> {
        self.probs.mul(&self.probs.rsub(1.0)?)
    }
}
