//! The relaxed (Concrete / Gumbel-softmax) distributions: torch's `LogitRelaxedBernoulli`,
//! `RelaxedBernoulli`, `ExpRelaxedCategorical` and `RelaxedOneHotCategorical`.

use std::any::Any;
use std::sync::Arc;

use oxtorch_tensor::{Error, Generator, Result, Tensor};

use super::transforms::{ExpTransform, SigmoidTransform, Transform};
use super::{
    check_params, clamp_probs, like, not_implemented, resolve_validate, validate_sample, Categorical,
    Constraint, Distribution, TransformedDistribution, UNIT_INTERVAL,
};

/// `Categorical`'s `real_vector` constraint.
fn real_vector() -> Constraint {
    Constraint::Independent(Box::new(Constraint::Real), 1)
}

/// The logit of a [`RelaxedBernoulli`] draw (torch's `LogitRelaxedBernoulli`): by `probs` or
/// `logits`, with a relaxation `temperature`. Its samples are real numbers.
#[derive(Clone)]
pub struct LogitRelaxedBernoulli {
    /// The relaxation temperature.
    pub temperature: Tensor,
    /// The probability of a 1.
    pub probs: Tensor,
    /// The log-odds of a 1.
    pub logits: Tensor,
    by_logits: bool,
    validate: bool,
}

impl LogitRelaxedBernoulli {
    /// `LogitRelaxedBernoulli(temperature, probs=probs)`, validated by default.
    pub fn from_probs(temperature: &Tensor, probs: &Tensor) -> Result<Self> {
        Self::with_validate_args(temperature, Some(probs), None, None)
    }

    /// `LogitRelaxedBernoulli(temperature, logits=logits)`, validated by default.
    pub fn from_logits(temperature: &Tensor, logits: &Tensor) -> Result<Self> {
        Self::with_validate_args(temperature, None, Some(logits), None)
    }

    /// `LogitRelaxedBernoulli(temperature, probs, logits, validate_args)`: exactly one of `probs`
    /// and `logits`; the batch shape is that parameter's shape.
    pub fn with_validate_args(
        temperature: &Tensor,
        probs: Option<&Tensor>,
        logits: Option<&Tensor>,
        validate_args: Option<bool>,
    ) -> Result<Self> {
        let validate = resolve_validate(validate_args);
        let temperature = temperature.clone();
        let d = match (probs, logits) {
            (Some(p), None) => {
                // torch's `probs_to_logits(probs, is_binary=True)`
                let c = clamp_probs(p)?;
                let logits = c.log()?.sub(&c.neg()?.log1p()?)?;
                LogitRelaxedBernoulli { temperature, probs: p.clone(), logits, by_logits: false, validate }
            }
            (None, Some(l)) => LogitRelaxedBernoulli {
                temperature,
                probs: l.sigmoid()?,
                logits: l.clone(),
                by_logits: true,
                validate,
            },
            _ => return Err(Error::msg("Either `probs` or `logits` must be specified, but not both.")),
        };
        if validate {
            let (name, v, c) = if d.by_logits {
                ("logits", &d.logits, Constraint::Real)
            } else {
                ("probs", &d.probs, UNIT_INTERVAL)
            };
            check_params("LogitRelaxedBernoulli", &d.params(), &[(name, v, c)])?;
        }
        Ok(d)
    }
}

impl Distribution for LogitRelaxedBernoulli {
    fn name(&self) -> &'static str {
        "LogitRelaxedBernoulli"
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
        Constraint::Real
    }
    fn validate_args(&self) -> bool {
        self.validate
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
    /// torch's `Distribution.sample`: [`Distribution::rsample_with`] without gradient.
    fn sample_with(&self, sample_shape: &[usize], generator: Option<&Generator>) -> Result<Tensor> {
        Ok(self.rsample_with(sample_shape, generator)?.detach())
    }
    /// `(logit(u) + logit(probs)) / temperature` for `u ~ U(0, 1)`, both clamped to `(0, 1)`.
    /// (torch's class keeps `has_rsample = False` but defines `rsample`.)
    fn rsample_with(&self, sample_shape: &[usize], generator: Option<&Generator>) -> Result<Tensor> {
        let shape = self.extended_shape(sample_shape);
        let probs = clamp_probs(&self.probs.expand(shape.clone())?)?;
        let uniforms = clamp_probs(&Tensor::rand_with(shape, like(&probs), generator)?)?;
        uniforms
            .log()?
            .sub(&uniforms.neg()?.log1p()?)?
            .add(&probs.log()?)?
            .sub(&probs.neg()?.log1p()?)?
            .div(&self.temperature)
    }
    fn log_prob(&self, value: &Tensor) -> Result<Tensor> {
        validate_sample(self, value)?;
        let b = Tensor::broadcast_tensors(&[&self.logits, value])?;
        let diff = b[0].sub(&b[1].mul(&self.temperature)?)?;
        self.temperature.log()?.add(&diff)?.sub(&diff.exp()?.log1p()?.mul(2.0)?)
    }
    fn mean(&self) -> Result<Tensor> {
        Err(not_implemented(self.name(), "mean"))
    }
    fn mode(&self) -> Result<Tensor> {
        Err(not_implemented(self.name(), "mode"))
    }
    fn variance(&self) -> Result<Tensor> {
        Err(not_implemented(self.name(), "variance"))
    }
}

/// The relaxed Bernoulli distribution on `(0, 1)` (torch's `RelaxedBernoulli`): a
/// [`LogitRelaxedBernoulli`] through the sigmoid, with reparameterized samples.
#[derive(Clone)]
pub struct RelaxedBernoulli {
    /// The logit distribution (validated by the default setting, as torch builds it).
    pub base_dist: LogitRelaxedBernoulli,
    inner: TransformedDistribution,
    validate: bool,
}

impl RelaxedBernoulli {
    /// `RelaxedBernoulli(temperature, probs=probs)`, validated by default.
    pub fn from_probs(temperature: &Tensor, probs: &Tensor) -> Result<Self> {
        Self::with_validate_args(temperature, Some(probs), None, None)
    }

    /// `RelaxedBernoulli(temperature, logits=logits)`, validated by default.
    pub fn from_logits(temperature: &Tensor, logits: &Tensor) -> Result<Self> {
        Self::with_validate_args(temperature, None, Some(logits), None)
    }

    /// `RelaxedBernoulli(temperature, probs, logits, validate_args)`: exactly one of `probs` and
    /// `logits`.
    pub fn with_validate_args(
        temperature: &Tensor,
        probs: Option<&Tensor>,
        logits: Option<&Tensor>,
        validate_args: Option<bool>,
    ) -> Result<Self> {
        let base_dist = LogitRelaxedBernoulli::with_validate_args(temperature, probs, logits, None)?;
        let sigmoid: Arc<dyn Transform> = Arc::new(SigmoidTransform);
        let base: Arc<dyn Distribution> = Arc::new(base_dist.clone());
        let inner = TransformedDistribution::with_validate_args(base, vec![sigmoid], Some(false))?;
        let d = RelaxedBernoulli { base_dist, inner, validate: resolve_validate(validate_args) };
        if d.validate {
            check_params(
                "RelaxedBernoulli",
                &d.params(),
                &[
                    ("probs", &d.base_dist.probs, UNIT_INTERVAL),
                    ("logits", &d.base_dist.logits, Constraint::Real),
                ],
            )?;
        }
        Ok(d)
    }

    /// The relaxation temperature.
    pub fn temperature(&self) -> &Tensor {
        &self.base_dist.temperature
    }

    /// The probability of a 1.
    pub fn probs(&self) -> &Tensor {
        &self.base_dist.probs
    }

    /// The log-odds of a 1.
    pub fn logits(&self) -> &Tensor {
        &self.base_dist.logits
    }
}

impl Distribution for RelaxedBernoulli {
    fn name(&self) -> &'static str {
        "RelaxedBernoulli"
    }
    fn batch_shape(&self) -> Vec<usize> {
        self.inner.batch_shape()
    }
    /// Empty, as torch's `repr` (`RelaxedBernoulli()`): the parameters live on the base.
    fn params(&self) -> Vec<(&'static str, Tensor)> {
        Vec::new()
    }
    fn support(&self) -> Constraint {
        UNIT_INTERVAL
    }
    fn validate_args(&self) -> bool {
        self.validate
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
    fn sample_with(&self, sample_shape: &[usize], generator: Option<&Generator>) -> Result<Tensor> {
        self.inner.sample_with(sample_shape, generator)
    }
    fn has_rsample(&self) -> bool {
        true
    }
    fn rsample_with(&self, sample_shape: &[usize], generator: Option<&Generator>) -> Result<Tensor> {
        self.inner.rsample_with(sample_shape, generator)
    }
    fn log_prob(&self, value: &Tensor) -> Result<Tensor> {
        validate_sample(self, value)?;
        self.inner.log_prob(value)
    }
    fn mean(&self) -> Result<Tensor> {
        Err(not_implemented(self.name(), "mean"))
    }
    fn mode(&self) -> Result<Tensor> {
        Err(not_implemented(self.name(), "mode"))
    }
    fn variance(&self) -> Result<Tensor> {
        Err(not_implemented(self.name(), "variance"))
    }
}

/// The log of a [`RelaxedOneHotCategorical`] draw (torch's `ExpRelaxedCategorical`): by `probs`
/// or `logits` over `K` categories, with a relaxation `temperature`; event shape `[K]`.
#[derive(Clone)]
pub struct ExpRelaxedCategorical {
    /// The relaxation temperature.
    pub temperature: Tensor,
    /// The categorical distribution of the parameters (validated by the default setting).
    pub categorical: Categorical,
    validate: bool,
}

impl ExpRelaxedCategorical {
    /// `ExpRelaxedCategorical(temperature, probs=probs)`, validated by default.
    pub fn from_probs(temperature: &Tensor, probs: &Tensor) -> Result<Self> {
        Self::with_validate_args(temperature, Some(probs), None, None)
    }

    /// `ExpRelaxedCategorical(temperature, logits=logits)`, validated by default.
    pub fn from_logits(temperature: &Tensor, logits: &Tensor) -> Result<Self> {
        Self::with_validate_args(temperature, None, Some(logits), None)
    }

    /// `ExpRelaxedCategorical(temperature, probs, logits, validate_args)`: exactly one of `probs`
    /// and `logits`.
    pub fn with_validate_args(
        temperature: &Tensor,
        probs: Option<&Tensor>,
        logits: Option<&Tensor>,
        validate_args: Option<bool>,
    ) -> Result<Self> {
        let categorical = Categorical::with_validate_args(probs, logits, None)?;
        let d = ExpRelaxedCategorical {
            temperature: temperature.clone(),
            categorical,
            validate: resolve_validate(validate_args),
        };
        if d.validate {
            check_relaxed_categorical("ExpRelaxedCategorical", &d.categorical)?;
        }
        Ok(d)
    }

    /// The normalized probabilities, `[*batch, K]`.
    pub fn probs(&self) -> &Tensor {
        &self.categorical.probs
    }

    /// The normalized log-probabilities, `[*batch, K]`.
    pub fn logits(&self) -> &Tensor {
        &self.categorical.logits
    }
}

/// torch's check of the `probs` (simplex) and `logits` (real vector) properties of a relaxed
/// categorical distribution, whose `repr` lists no parameters.
fn check_relaxed_categorical(name: &str, c: &Categorical) -> Result<()> {
    check_params(name, &[], &[("probs", &c.probs, Constraint::Simplex), ("logits", &c.logits, real_vector())])
}

impl Distribution for ExpRelaxedCategorical {
    fn name(&self) -> &'static str {
        "ExpRelaxedCategorical"
    }
    fn batch_shape(&self) -> Vec<usize> {
        self.categorical.batch_shape()
    }
    fn event_shape(&self) -> Vec<usize> {
        vec![self.categorical.num_events()]
    }
    /// Empty, as torch's `repr` (`ExpRelaxedCategorical()`).
    fn params(&self) -> Vec<(&'static str, Tensor)> {
        Vec::new()
    }
    fn support(&self) -> Constraint {
        real_vector()
    }
    fn validate_args(&self) -> bool {
        self.validate
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
    fn sample_with(&self, sample_shape: &[usize], generator: Option<&Generator>) -> Result<Tensor> {
        Ok(self.rsample_with(sample_shape, generator)?.detach())
    }
    fn has_rsample(&self) -> bool {
        true
    }
    /// `scores - scores.logsumexp(-1)` for `scores = (logits + gumbels) / temperature`.
    fn rsample_with(&self, sample_shape: &[usize], generator: Option<&Generator>) -> Result<Tensor> {
        let shape = self.extended_shape(sample_shape);
        let logits = self.logits();
        let uniforms = clamp_probs(&Tensor::rand_with(shape, like(logits), generator)?)?;
        let gumbels = uniforms.log()?.neg()?.log()?.neg()?;
        let scores = logits.add(&gumbels)?.div(&self.temperature)?;
        scores.sub(&scores.logsumexp(-1isize, true)?)
    }
    fn log_prob(&self, value: &Tensor) -> Result<Tensor> {
        let k = self.categorical.num_events();
        validate_sample(self, value)?;
        let b = Tensor::broadcast_tensors(&[self.logits(), value])?;
        let t = &self.temperature;
        let log_scale = t.full_like(k as f64)?.lgamma()?.sub(&t.log()?.mul(-((k as f64) - 1.0))?)?;
        let score = b[0].sub(&b[1].mul(&self.temperature)?)?;
        let score = score.sub(&score.logsumexp(-1isize, true)?)?.sum(-1isize, false)?;
        score.add(&log_scale)
    }
    fn mean(&self) -> Result<Tensor> {
        Err(not_implemented(self.name(), "mean"))
    }
    fn mode(&self) -> Result<Tensor> {
        Err(not_implemented(self.name(), "mode"))
    }
    fn variance(&self) -> Result<Tensor> {
        Err(not_implemented(self.name(), "variance"))
    }
}

/// The relaxed one-hot categorical distribution on the simplex (torch's
/// `RelaxedOneHotCategorical`, the Gumbel-softmax): an [`ExpRelaxedCategorical`] through `exp`,
/// with reparameterized samples.
#[derive(Clone)]
pub struct RelaxedOneHotCategorical {
    /// The log-space distribution.
    pub base_dist: ExpRelaxedCategorical,
    inner: TransformedDistribution,
    validate: bool,
}

impl RelaxedOneHotCategorical {
    /// `RelaxedOneHotCategorical(temperature, probs=probs)`, validated by default.
    pub fn from_probs(temperature: &Tensor, probs: &Tensor) -> Result<Self> {
        Self::with_validate_args(temperature, Some(probs), None, None)
    }

    /// `RelaxedOneHotCategorical(temperature, logits=logits)`, validated by default.
    pub fn from_logits(temperature: &Tensor, logits: &Tensor) -> Result<Self> {
        Self::with_validate_args(temperature, None, Some(logits), None)
    }

    /// `RelaxedOneHotCategorical(temperature, probs, logits, validate_args)`: exactly one of
    /// `probs` and `logits`.
    pub fn with_validate_args(
        temperature: &Tensor,
        probs: Option<&Tensor>,
        logits: Option<&Tensor>,
        validate_args: Option<bool>,
    ) -> Result<Self> {
        let base_dist = ExpRelaxedCategorical::with_validate_args(temperature, probs, logits, validate_args)?;
        let exp: Arc<dyn Transform> = Arc::new(ExpTransform);
        let base: Arc<dyn Distribution> = Arc::new(base_dist.clone());
        let inner = TransformedDistribution::with_validate_args(base, vec![exp], Some(false))?;
        let d = RelaxedOneHotCategorical { base_dist, inner, validate: resolve_validate(validate_args) };
        if d.validate {
            check_relaxed_categorical("RelaxedOneHotCategorical", &d.base_dist.categorical)?;
        }
        Ok(d)
    }

    /// The relaxation temperature.
    pub fn temperature(&self) -> &Tensor {
        &self.base_dist.temperature
    }

    /// The normalized probabilities, `[*batch, K]`.
    pub fn probs(&self) -> &Tensor {
        self.base_dist.probs()
    }

    /// The normalized log-probabilities, `[*batch, K]`.
    pub fn logits(&self) -> &Tensor {
        self.base_dist.logits()
    }
}

impl Distribution for RelaxedOneHotCategorical {
    fn name(&self) -> &'static str {
        "RelaxedOneHotCategorical"
    }
    fn batch_shape(&self) -> Vec<usize> {
        self.inner.batch_shape()
    }
    fn event_shape(&self) -> Vec<usize> {
        self.inner.event_shape()
    }
    /// Empty, as torch's `repr` (`RelaxedOneHotCategorical()`).
    fn params(&self) -> Vec<(&'static str, Tensor)> {
        Vec::new()
    }
    fn support(&self) -> Constraint {
        Constraint::Simplex
    }
    fn validate_args(&self) -> bool {
        self.validate
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
    fn sample_with(&self, sample_shape: &[usize], generator: Option<&Generator>) -> Result<Tensor> {
        self.inner.sample_with(sample_shape, generator)
    }
    fn has_rsample(&self) -> bool {
        true
    }
    fn rsample_with(&self, sample_shape: &[usize], generator: Option<&Generator>) -> Result<Tensor> {
        self.inner.rsample_with(sample_shape, generator)
    }
    fn log_prob(&self, value: &Tensor) -> Result<Tensor> {
        validate_sample(self, value)?;
        self.inner.log_prob(value)
    }
    fn mean(&self) -> Result<Tensor> {
        Err(not_implemented(self.name(), "mean"))
    }
    fn mode(&self) -> Result<Tensor> {
        Err(not_implemented(self.name(), "mode"))
    }
    fn variance(&self) -> Result<Tensor> {
        Err(not_implemented(self.name(), "variance"))
    }
}
