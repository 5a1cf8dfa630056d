//! `torch.distributions.Binomial`.

use std::any::Any;
use std::sync::Arc;

use oxtorch_tensor::{Error, Generator, Result, Tensor};

use super::{
    broadcast_all, check_params, clamp_probs, like, resolve_validate, validate_sample, Constraint,
    Distribution, UNIT_INTERVAL,
};

/// The binomial distribution of `total_count` trials with success `probs` (or `logits`),
/// torch's `Binomial`. `entropy` needs a homogeneous `total_count`, as torch's.
#[derive(Clone)]
pub struct Binomial {
    /// The number of trials (float, broadcast with the probabilities).
    pub total_count: Tensor,
    /// The success probability.
    pub probs: Tensor,
    /// The success log-odds.
    pub logits: Tensor,
    by_logits: bool,
    validate: bool,
}

/// torch's `_clamp_by_zero`: `(x.clamp(min=0) + x - x.clamp(max=0)) / 2`.
fn clamp_by_zero(x: &Tensor) -> Result<Tensor> {
    x.clamp_min(0.0)?.add(x)?.sub(&x.clamp_max(0.0)?)?.div(2.0)
}

impl Binomial {
    /// `Binomial(total_count, probs=probs)`, validated by default.
    pub fn from_probs(total_count: &Tensor, probs: &Tensor) -> Result<Self> {
        Self::with_validate_args(total_count, Some(probs), None, None)
    }

    /// `Binomial(total_count, logits=logits)`, validated by default.
    pub fn from_logits(total_count: &Tensor, logits: &Tensor) -> Result<Self> {
        Self::with_validate_args(total_count, None, Some(logits), None)
    }

    /// `Binomial(total_count, probs, logits, validate_args)`: exactly one of `probs`, `logits`.
    pub fn with_validate_args(
        total_count: &Tensor,
        probs: Option<&Tensor>,
        logits: Option<&Tensor>,
        validate_args: Option<bool>,
    ) -> Result<Self> {
        let validate = resolve_validate(validate_args);
        let d = match (probs, logits) {
            (Some(p), None) => {
                let b = broadcast_all(&[total_count, p])?;
                let tc = b[0].type_as(p)?;
                let c = clamp_probs(&b[1])?;
                let logits = c.log()?.sub(&c.neg()?.log1p()?)?;
                Binomial { total_count: tc, probs: b[1].clone(), logits, by_logits: false, validate }
            }
            (None, Some(l)) => {
                let b = broadcast_all(&[total_count, l])?;
                let tc = b[0].type_as(l)?;
                Binomial {
                    total_count: tc,
                    probs: b[1].sigmoid()?,
                    logits: b[1].clone(),
                    by_logits: true,
                    validate,
                }
            }
            _ => return Err(Error::msg("Either `probs` or `logits` must be specified, but not both.")),
        };
        if validate {
            let (name, v, c) = if d.by_logits {
                ("logits", &d.logits, Constraint::Real)
            } else {
                ("probs", &d.probs, UNIT_INTERVAL)
            };
            check_params(
                "Binomial",
                &d.params(),
                &[("total_count", &d.total_count, Constraint::IntegerGreaterThan(0)), (name, v, c)],
            )?;
        }
        Ok(d)
    }
}

impl Distribution for Binomial {
    fn name(&self) -> &'static str {
        "Binomial"
    }
    fn batch_shape(&self) -> Vec<usize> {
        self.probs.dims().to_vec()
    }
    fn params(&self) -> Vec<(&'static str, Tensor)> {
        let p = if self.by_logits { ("logits", self.logits.clone()) } else { ("probs", self.probs.clone()) };
        vec![("total_count", self.total_count.clone()), p]
    }
    fn support(&self) -> Constraint {
        Constraint::TensorIntegerInterval(0.0, self.total_count.clone())
    }
    fn validate_args(&self) -> bool {
        self.validate
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
    fn expand(&self, batch_shape: &[usize]) -> Result<Arc<dyn Distribution>> {
        Ok(Arc::new(Binomial {
            total_count: self.total_count.expand(batch_shape)?,
            probs: self.probs.expand(batch_shape)?,
            logits: self.logits.expand(batch_shape)?,
            by_logits: self.by_logits,
            validate: self.validate,
        }))
    }
    fn sample_with(&self, sample_shape: &[usize], generator: Option<&Generator>) -> Result<Tensor> {
        let shape = self.extended_shape(sample_shape);
        let n = self.total_count.detach().expand(shape.clone())?.contiguous()?;
        n.binomial_with(&self.probs.detach().expand(shape)?.contiguous()?, generator)
    }
    fn log_prob(&self, value: &Tensor) -> Result<Tensor> {
        validate_sample(self, value)?;
        let n = &self.total_count;
        let log_factorial_n = n.add(1.0)?.lgamma()?;
        let log_factorial_k = value.add(1.0)?.lgamma()?;
        let log_factorial_nmk = n.sub(value)?.add(1.0)?.lgamma()?;
        let normalize_term = n
            .mul(&clamp_by_zero(&self.logits)?)?
            .add(&n.mul(&self.logits.abs()?.neg()?.exp()?.log1p()?)?)?
            .sub(&log_factorial_n)?;
        value.mul(&self.logits)?.sub(&log_factorial_k)?.sub(&log_factorial_nmk)?.sub(&normalize_term)
    }
    fn entropy(&self) -> Result<Tensor> {
        // torch's: `-(p * log p)` summed over `enumerate_support(expand=False)`, the values
        // `0..=total_count` shaped `[total_count + 1, 1, ..., 1]` against the batch.
        let tc = self.total_count.to_f64_vec()?;
        let max = tc.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let min = tc.iter().copied().fold(f64::INFINITY, f64::min);
        let total_count = max.trunc();
        if tc.is_empty() || min != total_count {
            return Err(Error::msg(
                "NotImplementedError: Inhomogeneous total count not supported by `entropy`.",
            ));
        }
        let mut dims = vec![1usize; self.probs.rank() + 1];
        dims[0] = total_count as usize + 1;
        let values = Tensor::arange_step(0.0, total_count + 1.0, 1.0, like(&self.probs))?.reshape(dims)?;
        let log_prob = self.log_prob(&values)?;
        log_prob.exp()?.mul(&log_prob)?.sum(0isize, false)?.neg()
    }
    fn mean(&self) -> Result<Tensor> {
        self.total_count.mul(&self.probs)
    }
    fn mode(&self) -> Result<Tensor> {
        self.total_count.add(1.0)?.mul(&self.probs)?.floor()?.minimum(&self.total_count)
    }
    fn variance(&self) -> Result<Tensor> {
        self.total_count.mul(&self.probs)?.mul(&self.probs.rsub(1.0)?)
    }
}
