//! `torch.distributions.Independent`.

use std::any::Any;
use std::sync::Arc;

use oxtorch_tensor::{Error, Generator, Result, Tensor};

use super::{resolve_validate, sum_rightmost, Constraint, Distribution};

/// Reinterprets the rightmost `reinterpreted_batch_ndims` batch dims of a base distribution as
/// event dims (torch's `Independent`): `log_prob` and `entropy` sum over them.
#[derive(Clone)]
pub struct Independent {
    /// The base distribution.
    pub base_dist: Arc<dyn Distribution>,
    /// How many batch dims become event dims.
    pub reinterpreted_batch_ndims: usize,
    validate: bool,
}

impl Independent {
    /// `Independent(base_distribution, reinterpreted_batch_ndims)`.
    pub fn new(base_distribution: Arc<dyn Distribution>, reinterpreted_batch_ndims: usize) -> Result<Self> {
        Self::with_validate_args(base_distribution, reinterpreted_batch_ndims, None)
    }

    /// `Independent(base_distribution, reinterpreted_batch_ndims, validate_args)`.
    pub fn with_validate_args(
        base_distribution: Arc<dyn Distribution>,
        reinterpreted_batch_ndims: usize,
        validate_args: Option<bool>,
    ) -> Result<Self> {
        let nb = base_distribution.batch_shape().len();
        if reinterpreted_batch_ndims > nb {
            return Err(Error::msg(format!(
                "Expected reinterpreted_batch_ndims <= len(base_distribution.batch_shape), actual \
                 {reinterpreted_batch_ndims} vs {nb}"
            )));
        }
        Ok(Independent {
            base_dist: base_distribution,
            reinterpreted_batch_ndims,
            validate: resolve_validate(validate_args),
        })
    }
}

impl Distribution for Independent {
    fn name(&self) -> &'static str {
        "Independent"
    }
    fn batch_shape(&self) -> Vec<usize> {
        let b = self.base_dist.batch_shape();
        b[..b.len() - self.reinterpreted_batch_ndims].to_vec()
    }
    fn event_shape(&self) -> Vec<usize> {
        let b = self.base_dist.batch_shape();
        let mut e = b[b.len() - self.reinterpreted_batch_ndims..].to_vec();
        e.extend(self.base_dist.event_shape());
        e
    }
    fn params(&self) -> Vec<(&'static str, Tensor)> {
        Vec::new()
    }
    fn repr(&self) -> String {
        format!("Independent({}, {})", self.base_dist.repr(), self.reinterpreted_batch_ndims)
    }
    fn support(&self) -> Constraint {
        if self.reinterpreted_batch_ndims == 0 {
            self.base_dist.support()
        } else {
            Constraint::Independent(Box::new(self.base_dist.support()), self.reinterpreted_batch_ndims)
        }
    }
    fn validate_args(&self) -> bool {
        self.validate
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
    fn expand(&self, batch_shape: &[usize]) -> Result<Arc<dyn Distribution>> {
        // (the base's batch shape: `batch_shape` + the reinterpreted dims)
        let mut base_batch = batch_shape.to_vec();
        base_batch.extend(&self.event_shape()[..self.reinterpreted_batch_ndims]);
        Ok(Arc::new(Independent {
            base_dist: self.base_dist.expand(&base_batch)?,
            reinterpreted_batch_ndims: self.reinterpreted_batch_ndims,
            validate: self.validate,
        }))
    }
    fn sample_with(&self, sample_shape: &[usize], generator: Option<&Generator>) -> Result<Tensor> {
        self.base_dist.sample_with(sample_shape, generator)
    }
    fn has_rsample(&self) -> bool {
        self.base_dist.has_rsample()
    }
    fn rsample_with(&self, sample_shape: &[usize], generator: Option<&Generator>) -> Result<Tensor> {
        self.base_dist.rsample_with(sample_shape, generator)
    }
    fn log_prob(&self, value: &Tensor) -> Result<Tensor> {
        // (as torch: the base distribution validates the value, by its own setting)
        sum_rightmost(&self.base_dist.log_prob(value)?, self.reinterpreted_batch_ndims)
    }
    fn entropy(&self) -> Result<Tensor> {
        sum_rightmost(&self.base_dist.entropy()?, self.reinterpreted_batch_ndims)
    }
    fn mean(&self) -> Result<Tensor> {
        self.base_dist.mean()
    }
    fn mode(&self) -> Result<Tensor> {
        self.base_dist.mode()
    }
    fn variance(&self) -> Result<Tensor> {
        self.base_dist.variance()
    }
}
