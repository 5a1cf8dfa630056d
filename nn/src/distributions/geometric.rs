//! `torch.distributions.Geometric`, and the `probs`/`logits` conversion it shares with
//! `NegativeBinomial`.

use std::any::Any;
use std::sync::Arc;

use oxtorch_tensor::{Error, Generator, Result, Tensor};

use super::{
    broadcast_all, check_params, clamp_probs, finfo_tiny, like, resolve_validate, validate_sample,
    Constraint, Distribution, UNIT_INTERVAL,
};

/// `probs` and `logits` of a binary distribution from exactly one of them (torch's
/// `probs_to_logits(is_binary=True)` / `logits_to_probs(is_binary=True)`).
pub(super) fn binary_params(
    probs: Option<&Tensor>,
    logits: Option<&Tensor>,
) -> Result<(Tensor, Tensor, bool)> {
    match (probs, logits) {
        (Some(p), None) => {
            let c = clamp_probs(p)?;
            Ok((p.clone(), c.log()?.sub(&c.neg()?.log1p()?)?, false))
        }
        (None, Some(l)) => Ok((l.sigmoid()?, l.clone(), true)),
        _ => Err(Error::msg("Either `probs` or `logits` must be specified, but not both.")),
    }
}

/// The geometric distribution: failures before the first success (torch's `Geometric`).
#[derive(Clone)]
pub struct Geometric {
    /// The success probability.
    pub probs: Tensor,
    /// The log-odds of success.
    pub logits: Tensor,
    by_logits: bool,
    validate: bool,
}

impl Geometric {
    /// `Geometric(probs=probs)`.
    pub fn from_probs(probs: &Tensor) -> Result<Self> {
        Self::with_validate_args(Some(probs), None, None)
    }

    /// `Geometric(logits=logits)`.
    pub fn from_logits(logits: &Tensor) -> Result<Self> {
        Self::with_validate_args(None, Some(logits), None)
    }

    /// `Geometric(probs, logits, validate_args)`: exactly one of `probs`, `logits`.
    pub fn with_validate_args(
        probs: Option<&Tensor>,
        logits: Option<&Tensor>,
        validate_args: Option<bool>,
    ) -> Result<Self> {
        let (probs, logits, by_logits) = binary_params(probs, logits)?;
        let d = Geometric { probs, logits, by_logits, validate: resolve_validate(validate_args) };
        if d.validate {
            let (name, v, c) = if d.by_logits {
                ("logits", &d.logits, Constraint::Real)
            } else {
                ("probs", &d.probs, UNIT_INTERVAL)
            };
            check_params("Geometric", &d.params(), &[(name, v, c)])?;
            if !d.by_logits {
                check_params("Geometric", &d.params(), &[("probs", &d.probs, Constraint::GreaterThan(0.0))])?;
            }
        }
        Ok(d)
    }
}

impl Distribution for Geometric {
    fn name(&self) -> &'static str {
        "Geometric"
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
        Constraint::IntegerGreaterThan(0)
    }
    fn validate_args(&self) -> bool {
        self.validate
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
    fn expand(&self, batch_shape: &[usize]) -> Result<Arc<dyn Distribution>> {
        Ok(Arc::new(Geometric {
            probs: self.probs.expand(batch_shape)?,
            logits: self.logits.expand(batch_shape)?,
            by_logits: self.by_logits,
            validate: self.validate,
        }))
    }
    fn sample_with(&self, sample_shape: &[usize], generator: Option<&Generator>) -> Result<Tensor> {
        let p = self.probs.detach();
        let u = Tensor::rand_with(self.extended_shape(sample_shape), like(&p), generator)?;
        let u = u.clamp_min(finfo_tiny(p.dtype()))?;
        u.log()?.div(&p.neg()?.log1p()?)?.floor()
    }
    fn log_prob(&self, value: &Tensor) -> Result<Tensor> {
        validate_sample(self, value)?;
        let b = broadcast_all(&[value, &self.probs])?;
        let mask = b[1].eq(1.0)?.logical_and(&b[0].eq(0.0)?)?;
        let probs = Tensor::where_cond(&mask, 0.0, &b[1])?;
        b[0].mul(&probs.neg()?.log1p()?)?.add(&self.probs.log()?)
    }
    fn entropy(&self) -> Result<Tensor> {
        // binary_cross_entropy_with_logits(logits, probs) / probs
        let (x, z) = (&self.logits, &self.probs);
        let bce = x.clamp_min(0.0)?.sub(&x.mul(z)?)?.add(&x.abs()?.neg()?.exp()?.log1p()?)?;
        bce.div(z)
    }
    fn mean(&self) -> Result<Tensor> {
        self.probs.reciprocal()?.sub(1.0)
    }
    fn mode(&self) -> Result<Tensor> {
        self.probs.zeros_like()
    }
    fn variance(&self) -> Result<Tensor> {
        self.probs.reciprocal()?.sub(1.0)?.div(&self.probs)
    }
}
