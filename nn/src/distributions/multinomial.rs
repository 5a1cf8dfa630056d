//! `torch.distributions.Multinomial`.

use std::any::Any;

use oxtorch_tensor::{DType, Error, Generator, Result, Tensor};

use super::{
    all_last, all_true, broadcast_all, check_params, like, not_implemented, py_format, resolve_validate,
    shape_tuple, torch_size, Binomial, Categorical, Constraint, Distribution, NONNEGATIVE,
};

/// The multinomial distribution of `total_count` draws over `K` categories (torch's
/// `Multinomial`), by `probs` (normalized over the last dim) or `logits`. Event shape `[K]`.
///
/// As torch's, `sample` and `entropy` use the one shared `total_count`, while `log_prob` takes the
/// number of draws from the value (it only bounds `value.sum(-1)` by `total_count` when validating).
#[derive(Clone)]
pub struct Multinomial {
    /// The number of draws.
    pub total_count: i64,
    /// The categorical distribution of one draw.
    pub categorical: Categorical,
    /// The per-category binomial distribution (`Binomial(total_count, probs)`), for `entropy`.
    pub binomial: Binomial,
    validate: bool,
}

impl Multinomial {
    /// `Multinomial(total_count, probs=probs)`, validated by default.
    pub fn from_probs(total_count: i64, probs: &Tensor) -> Result<Self> {
        Self::with_validate_args(total_count, Some(probs), None, None)
    }

    /// `Multinomial(total_count, logits=logits)`, validated by default.
    pub fn from_logits(total_count: i64, logits: &Tensor) -> Result<Self> {
        Self::with_validate_args(total_count, None, Some(logits), None)
    }

    /// `Multinomial(total_count, probs, logits, validate_args)`: exactly one of `probs` and
    /// `logits`. As torch's, the inner `Categorical` and `Binomial` validate their parameters by
    /// the default setting (a negative `total_count` is the Binomial's error).
    pub fn with_validate_args(
        total_count: i64,
        probs: Option<&Tensor>,
        logits: Option<&Tensor>,
        validate_args: Option<bool>,
    ) -> Result<Self> {
        let categorical = Categorical::with_validate_args(probs, logits, None)?;
        let n = Tensor::full(Vec::<usize>::new(), total_count as f64, like(&categorical.probs))?;
        let binomial = Binomial::with_validate_args(&n, Some(&categorical.probs), None, None)?;
        let d = Multinomial { total_count, categorical, binomial, validate: resolve_validate(validate_args) };
        if d.validate {
            // (torch checks both properties, `probs` and `logits`, of the Multinomial itself)
            check_params(
                "Multinomial",
                &d.params(),
                &[
                    ("probs", &d.categorical.probs, Constraint::Simplex),
                    ("logits", &d.categorical.logits, Constraint::Independent(Box::new(Constraint::Real), 1)),
                ],
            )?;
        }
        Ok(d)
    }

    /// `Multinomial(total_count=<a tensor>, ...)`: torch takes only a Python `int` and raises
    /// `NotImplementedError: inhomogeneous total_count is not supported` for anything else.
    pub fn with_total_count_tensor(
        total_count: &Tensor,
        probs: Option<&Tensor>,
        logits: Option<&Tensor>,
        validate_args: Option<bool>,
    ) -> Result<Self> {
        let _ = (total_count, probs, logits, validate_args);
        Err(Error::msg("NotImplementedError: inhomogeneous total_count is not supported"))
    }

    /// The normalized probabilities, `[*batch, K]`.
    pub fn probs(&self) -> &Tensor {
        &self.categorical.probs
    }

    /// The normalized log-probabilities, `[*batch, K]`.
    pub fn logits(&self) -> &Tensor {
        &self.categorical.logits
    }

    /// torch's `_validate_sample` with the `multinomial(total_count)` support: the shapes, then
    /// `(value >= 0).all(-1) & (value.sum(-1) <= total_count)`.
    fn validate_value(&self, value: &Tensor) -> Result<()> {
        if !self.validate {
            return Ok(());
        }
        let (batch, event) = (self.batch_shape(), self.event_shape());
        let vs = value.dims();
        if vs.len() < event.len() || vs[vs.len() - event.len()..] != event[..] {
            return Err(Error::msg(format!(
                "The right-most size of value must match event_shape: {} vs {}.",
                torch_size(vs),
                torch_size(&event)
            )));
        }
        let mut expected = batch;
        expected.extend(&event);
        for (i, j) in vs.iter().rev().zip(expected.iter().rev()) {
            if *i != 1 && *j != 1 && i != j {
                return Err(Error::msg(format!(
                    "Value is not broadcastable with batch_shape+event_shape: {} vs {}.",
                    torch_size(vs),
                    torch_size(&expected)
                )));
            }
        }
        let bounded = value.sum(-1isize, false)?.le(self.total_count as f64)?;
        let ok = all_last(&value.ge(0.0)?)?.logical_and(&bounded)?;
        if !all_true(&ok)? {
            return Err(Error::msg(format!(
                "Expected value argument (Tensor of shape {}) to be within the support (Multinomial()) of \
                 the distribution {}, but found invalid values:\n{}",
                shape_tuple(vs),
                self.repr(),
                py_format(value)
            )));
        }
        Ok(())
    }
}

impl Distribution for Multinomial {
    fn name(&self) -> &'static str {
        "Multinomial"
    }
    fn batch_shape(&self) -> Vec<usize> {
        self.categorical.batch_shape()
    }
    fn event_shape(&self) -> Vec<usize> {
        vec![self.categorical.num_events()]
    }
    /// Empty: torch's `repr` lists only parameters stored on the instance, and a Multinomial
    /// keeps `probs`/`logits` on its Categorical (`Multinomial()`).
    fn params(&self) -> Vec<(&'static str, Tensor)> {
        Vec::new()
    }
    /// Nonnegative counts over the last dim; the `value.sum(-1) <= total_count` half of torch's
    /// `multinomial(total_count)` constraint is checked by `log_prob`'s validation.
    fn support(&self) -> Constraint {
        Constraint::Independent(Box::new(NONNEGATIVE), 1)
    }
    fn validate_args(&self) -> bool {
        self.validate
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
    fn sample_with(&self, sample_shape: &[usize], generator: Option<&Generator>) -> Result<Tensor> {
        let shape = self.extended_shape(sample_shape);
        let probs = &self.categorical.probs;
        let n = self.total_count.max(0) as usize;
        if n == 0 || shape.iter().product::<usize>() == 0 {
            return Tensor::zeros(shape, like(probs));
        }
        let mut s = vec![n];
        s.extend_from_slice(sample_shape);
        // [n, *sample, *batch] -> [*sample, *batch, n]
        let samples = self.categorical.sample_with(&s, generator)?;
        let r = samples.rank();
        let perm: Vec<usize> = (1..r).chain(std::iter::once(0)).collect();
        let samples = samples.permute(perm)?.contiguous()?.to_dtype(DType::I64)?;
        let counts = Tensor::zeros(shape, DType::I64)?;
        counts.scatter_add(-1, &samples, &samples.ones_like()?)?.type_as(probs)
    }
    fn log_prob(&self, value: &Tensor) -> Result<Tensor> {
        self.validate_value(value)?;
        let value = if value.dtype().is_float() { value.clone() } else { value.type_as(self.logits())? };
        let b = broadcast_all(&[self.logits(), &value])?;
        let (logits, value) = (&b[0], &b[1]);
        let log_factorial_n = value.sum(-1isize, false)?.add(1.0)?.lgamma()?;
        let log_factorial_xs = value.add(1.0)?.lgamma()?.sum(-1isize, false)?;
        let zero_inf = value.eq(0.0)?.logical_and(&logits.eq(f64::NEG_INFINITY)?)?;
        let logits = logits.masked_fill(&zero_inf, 0.0)?;
        let log_powers = logits.mul(value)?.sum(-1isize, false)?;
        log_factorial_n.sub(&log_factorial_xs)?.add(&log_powers)
    }
    fn entropy(&self) -> Result<Tensor> {
        let probs = &self.categorical.probs;
        let n = Tensor::full(Vec::<usize>::new(), self.total_count as f64, like(probs))?;
        let cat_entropy = self.categorical.entropy()?;
        let term1 = n.mul(&cat_entropy)?.sub(&n.add(1.0)?.lgamma()?)?;
        // the binomial's support without 0, shaped [n, 1, ..., 1] against its batch [*batch, K]
        let count = self.total_count.max(0) as usize;
        let mut sdims = vec![1; probs.rank() + 1];
        sdims[0] = count;
        let support = Tensor::arange_step(1.0, count as f64 + 1.0, 1.0, like(probs))?.reshape(sdims)?;
        let binomial_probs = self.binomial.log_prob(&support)?.exp()?;
        let weights = support.add(1.0)?.lgamma()?;
        let term2 = binomial_probs.mul(&weights)?.sum(vec![0isize, -1], false)?;
        term1.add(&term2)
    }
    fn mean(&self) -> Result<Tensor> {
        self.categorical.probs.mul(self.total_count as f64)
    }
    fn mode(&self) -> Result<Tensor> {
        Err(not_implemented(self.name(), "mode"))
    }
    fn variance(&self) -> Result<Tensor> {
        let p = &self.categorical.probs;
        p.mul(self.total_count as f64)?.mul(&p.rsub(1.0)?)
    }
}
