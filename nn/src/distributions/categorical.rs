//! `torch.distributions.Categorical` and `OneHotCategorical`.

use std::any::Any;

use oxtorch_tensor::{DType, Error, Generator, Result, Tensor};

use super::{check_params, clamp_probs, resolve_validate, validate_sample, Constraint, Distribution};

/// The categorical distribution over `0..K` (torch's `Categorical`), by `probs` (normalized over
/// the last dim) or `logits` (normalized by `logsumexp`).
#[derive(Clone)]
pub struct Categorical {
    /// The normalized probabilities, `[*batch, K]`.
    pub probs: Tensor,
    /// The normalized log-probabilities, `[*batch, K]`.
    pub logits: Tensor,
    by_logits: bool,
    validate: bool,
}

impl Categorical {
    /// `Categorical(probs=probs)`, validated by default.
    pub fn from_probs(probs: &Tensor) -> Result<Self> {
        Self::with_validate_args(Some(probs), None, None)
    }

    /// `Categorical(logits=logits)`, validated by default.
    pub fn from_logits(logits: &Tensor) -> Result<Self> {
        Self::with_validate_args(None, Some(logits), None)
    }

    /// `Categorical(probs, logits, validate_args)`: exactly one of `probs` and `logits`.
    pub fn with_validate_args(
        probs: Option<&Tensor>,
        logits: Option<&Tensor>,
        validate_args: Option<bool>,
    ) -> Result<Self> {
        let validate = resolve_validate(validate_args);
        let d = match (probs, logits) {
            (Some(p), None) => {
                if p.rank() < 1 {
                    return Err(Error::msg("`probs` parameter must be at least one-dimensional."));
                }
                let probs = p.div(&p.sum(-1isize, true)?)?;
                let logits = clamp_probs(&probs)?.log()?;
                Categorical { probs, logits, by_logits: false, validate }
            }
            (None, Some(l)) => {
                if l.rank() < 1 {
                    return Err(Error::msg("`logits` parameter must be at least one-dimensional."));
                }
                let logits = l.sub(&l.logsumexp(-1isize, true)?)?;
                Categorical { probs: logits.softmax(-1, None)?, logits, by_logits: true, validate }
            }
            _ => return Err(Error::msg("Either `probs` or `logits` must be specified, but not both.")),
        };
        if validate {
            let (name, v, c) = if d.by_logits {
                ("logits", &d.logits, Constraint::Independent(Box::new(Constraint::Real), 1))
            } else {
                ("probs", &d.probs, Constraint::Simplex)
            };
            check_params(d.name(), &d.params(), &[(name, v, c)])?;
        }
        Ok(d)
    }

    /// The number of categories `K`.
    pub fn num_events(&self) -> usize {
        self.probs.dims().last().copied().unwrap_or(0)
    }
}

impl Distribution for Categorical {
    fn name(&self) -> &'static str {
        "Categorical"
    }
    fn batch_shape(&self) -> Vec<usize> {
        let d = self.probs.dims();
        d[..d.len() - 1].to_vec()
    }
    fn params(&self) -> Vec<(&'static str, Tensor)> {
        if self.by_logits {
            vec![("logits", self.logits.clone())]
        } else {
            vec![("probs", self.probs.clone())]
        }
    }
    fn support(&self) -> Constraint {
        Constraint::IntegerInterval(0, self.num_events() as i64 - 1)
    }
    fn validate_args(&self) -> bool {
        self.validate
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
    fn sample_with(&self, sample_shape: &[usize], generator: Option<&Generator>) -> Result<Tensor> {
        let n: usize = sample_shape.iter().product();
        let probs_2d = self.probs.detach().reshape([-1isize, self.num_events() as isize])?;
        let samples_2d = probs_2d.multinomial_with(n, true, generator)?.transpose(0, 1)?;
        samples_2d.reshape(self.extended_shape(sample_shape))
    }
    fn log_prob(&self, value: &Tensor) -> Result<Tensor> {
        validate_sample(self, value)?;
        let value = value.to_dtype(DType::I64)?.unsqueeze(-1)?;
        let b = Tensor::broadcast_tensors(&[&value, &self.logits])?;
        let idx = b[0].narrow(-1, 0, 1)?;
        b[1].gather(-1, &idx)?.squeeze_dim_copy(-1)
    }
    fn entropy(&self) -> Result<Tensor> {
        // (torch's `finfo(logits.dtype).min`: a -inf logit times a zero probability stays finite)
        let min_real = match self.logits.dtype() {
            DType::F64 => f64::MIN,
            DType::F16 => -65504.0,
            DType::BF16 => -3.3895313892515355e38,
            _ => f32::MIN as f64,
        };
        let logits = self.logits.clamp_min(min_real)?;
        logits.mul(&self.probs)?.sum(-1isize, false)?.neg()
    }
    fn mean(&self) -> Result<Tensor> {
        Tensor::full(self.batch_shape(), f64::NAN, (self.probs.dtype(), self.probs.device()))
    }
    fn mode(&self) -> Result<Tensor> {
        self.probs.argmax(Some(-1), false)
    }
    fn variance(&self) -> Result<Tensor> {
        Tensor::full(self.batch_shape(), f64::NAN, (self.probs.dtype(), self.probs.device()))
    }
}

/// The one-hot categorical distribution (torch's `OneHotCategorical`): a [`Categorical`] whose
/// samples are one-hot vectors of length `K` (event shape `[K]`).
#[derive(Clone)]
pub struct OneHotCategorical {
    /// The underlying categorical distribution.
    pub categorical: Categorical,
}

impl OneHotCategorical {
    /// `OneHotCategorical(probs=probs)`, validated by default.
    pub fn from_probs(probs: &Tensor) -> Result<Self> {
        Self::with_validate_args(Some(probs), None, None)
    }

    /// `OneHotCategorical(logits=logits)`, validated by default.
    pub fn from_logits(logits: &Tensor) -> Result<Self> {
        Self::with_validate_args(None, Some(logits), None)
    }

    /// `OneHotCategorical(probs, logits, validate_args)`: exactly one of `probs` and `logits`.
    pub fn with_validate_args(
        probs: Option<&Tensor>,
        logits: Option<&Tensor>,
        validate_args: Option<bool>,
    ) -> Result<Self> {
        Ok(OneHotCategorical { categorical: Categorical::with_validate_args(probs, logits, validate_args)? })
    }
}

impl Distribution for OneHotCategorical {
    fn name(&self) -> &'static str {
        "OneHotCategorical"
    }
    fn batch_shape(&self) -> Vec<usize> {
        self.categorical.batch_shape()
    }
    fn event_shape(&self) -> Vec<usize> {
        vec![self.categorical.num_events()]
    }
    fn params(&self) -> Vec<(&'static str, Tensor)> {
        self.categorical.params()
    }
    fn support(&self) -> Constraint {
        Constraint::OneHot
    }
    fn validate_args(&self) -> bool {
        self.categorical.validate
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
    fn sample_with(&self, sample_shape: &[usize], generator: Option<&Generator>) -> Result<Tensor> {
        let idx = self.categorical.sample_with(sample_shape, generator)?;
        idx.one_hot(self.categorical.num_events() as i64)?.type_as(&self.categorical.probs)
    }
    fn log_prob(&self, value: &Tensor) -> Result<Tensor> {
        validate_sample(self, value)?;
        let (_, indices) = value.max_dim(-1, false)?;
        self.categorical.log_prob(&indices)
    }
    fn entropy(&self) -> Result<Tensor> {
        self.categorical.entropy()
    }
    fn mean(&self) -> Result<Tensor> {
        Ok(self.categorical.probs.clone())
    }
    fn mode(&self) -> Result<Tensor> {
        let m = self.categorical.probs.argmax(Some(-1), false)?;
        m.one_hot(self.categorical.num_events() as i64)?.type_as(&self.categorical.probs)
    }
    fn variance(&self) -> Result<Tensor> {
        self.categorical.probs.mul(&self.categorical.probs.rsub(1.0)?)
    }
}
