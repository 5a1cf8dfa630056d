//! `torch.distributions.TransformedDistribution` and `LogNormal` (a Normal through `exp`).

use std::any::Any;
use std::sync::Arc;

use oxtorch_tensor::{Error, Generator, Result, Tensor};

use super::transforms::{constraint_event_dim, independent, ComposeTransform, ExpTransform, Transform};
use super::{sum_rightmost, torch_size, validate_sample, Constraint, Distribution, Independent, Normal};

/// A base distribution pushed through transforms (torch's `TransformedDistribution`).
#[derive(Clone)]
pub struct TransformedDistribution {
    /// The base distribution (wrapped in [`Independent`] when the transforms need event dims).
    pub base_dist: Arc<dyn Distribution>,
    /// The transforms, applied first to last.
    pub transforms: Vec<Arc<dyn Transform>>,
    batch: Vec<usize>,
    event: Vec<usize>,
    validate: bool,
}

impl TransformedDistribution {
    /// `TransformedDistribution(base_distribution, transforms)`, validated as the base is.
    pub fn new(base: Arc<dyn Distribution>, transforms: Vec<Arc<dyn Transform>>) -> Result<Self> {
        let validate = base.validate_args();
        Self::with_validate_args(base, transforms, Some(validate))
    }

    /// `TransformedDistribution(base_distribution, transforms, validate_args=validate_args)`.
    pub fn with_validate_args(
        base: Arc<dyn Distribution>,
        transforms: Vec<Arc<dyn Transform>>,
        validate_args: Option<bool>,
    ) -> Result<Self> {
        let mut base_shape = base.batch_shape();
        base_shape.extend(base.event_shape());
        let base_event_dim = base.event_shape().len();
        let compose = ComposeTransform::new(transforms.clone());
        let dom = compose.domain_event_dim();
        if base_shape.len() < dom {
            return Err(Error::msg(format!(
                "base_distribution needs to have shape with size at least {dom}, but got {}.",
                torch_size(&base_shape)
            )));
        }
        let forward_shape = compose.forward_shape(&base_shape)?;
        let expanded = compose.inverse_shape(&forward_shape)?;
        // (the transforms' parameters broadcast past the base: the base expanded to their shape)
        let base = if expanded != base_shape {
            let cut = expanded.len().saturating_sub(base_event_dim);
            base.expand(&expanded[..cut])?
        } else {
            base
        };
        let base_dist: Arc<dyn Distribution> =
            if dom > base_event_dim { Arc::new(Independent::new(base, dom - base_event_dim)?) } else { base };
        let event_dim = compose.codomain_event_dim() + base_event_dim.saturating_sub(dom);
        let cut = forward_shape.len() - event_dim.min(forward_shape.len());
        let validate = super::resolve_validate(validate_args);
        Ok(TransformedDistribution {
            base_dist,
            transforms,
            batch: forward_shape[..cut].to_vec(),
            event: forward_shape[cut..].to_vec(),
            validate,
        })
    }

    /// torch's `TransformedDistribution.expand(batch_shape)`: the base expanded to the shape the
    /// transforms map back from `batch_shape + event_shape`, the same transforms.
    fn expanded(&self, batch_shape: &[usize]) -> Result<TransformedDistribution> {
        let mut shape = batch_shape.to_vec();
        shape.extend(&self.event);
        for t in self.transforms.iter().rev() {
            shape = t.inverse_shape(&shape)?;
        }
        let cut = shape.len().saturating_sub(self.base_dist.event_shape().len());
        Ok(TransformedDistribution {
            base_dist: self.base_dist.expand(&shape[..cut])?,
            transforms: self.transforms.clone(),
            batch: batch_shape.to_vec(),
            event: self.event.clone(),
            validate: self.validate,
        })
    }

    /// torch's `_monotonize_cdf`: `sign * (value - 0.5) + 0.5` for the product of the signs.
    fn monotonize_cdf(&self, value: &Tensor) -> Result<Tensor> {
        let mut sign: Option<Tensor> = None;
        for t in &self.transforms {
            let s = t.sign()?;
            sign = Some(match sign {
                None => s,
                Some(a) => a.mul(&s)?,
            });
        }
        match sign {
            // (in the value's dtype: a float64 sign of a 0-d transform does not promote it)
            Some(s) if !(s.rank() == 0 && s.to_f64_vec()?[0] == 1.0) => {
                s.to_dtype(value.dtype())?.mul(&value.sub(0.5)?)?.add(0.5)
            }
            _ => Ok(value.clone()),
        }
    }
}

impl Distribution for TransformedDistribution {
    fn name(&self) -> &'static str {
        "TransformedDistribution"
    }
    fn batch_shape(&self) -> Vec<usize> {
        self.batch.clone()
    }
    fn event_shape(&self) -> Vec<usize> {
        self.event.clone()
    }
    fn params(&self) -> Vec<(&'static str, Tensor)> {
        Vec::new()
    }
    fn support(&self) -> Constraint {
        match self.transforms.last() {
            None => self.base_dist.support(),
            Some(t) => {
                let c = t.codomain();
                let e = constraint_event_dim(&c);
                let n = self.event.len().saturating_sub(e);
                independent(c, n)
            }
        }
    }
    fn validate_args(&self) -> bool {
        self.validate
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
    fn expand(&self, batch_shape: &[usize]) -> Result<Arc<dyn Distribution>> {
        Ok(Arc::new(self.expanded(batch_shape)?))
    }
    fn sample_with(&self, sample_shape: &[usize], generator: Option<&Generator>) -> Result<Tensor> {
        let mut x = self.base_dist.sample_with(sample_shape, generator)?;
        for t in &self.transforms {
            x = t.call(&x)?;
        }
        Ok(x.detach())
    }
    fn has_rsample(&self) -> bool {
        self.base_dist.has_rsample()
    }
    fn rsample_with(&self, sample_shape: &[usize], generator: Option<&Generator>) -> Result<Tensor> {
        let mut x = self.base_dist.rsample_with(sample_shape, generator)?;
        for t in &self.transforms {
            x = t.call(&x)?;
        }
        Ok(x)
    }
    fn log_prob(&self, value: &Tensor) -> Result<Tensor> {
        validate_sample(self, value)?;
        let mut event_dim = self.event.len() as isize;
        let mut lp: Option<Tensor> = None;
        let mut y = value.clone();
        for t in self.transforms.iter().rev() {
            let x = t.inv(&y)?;
            event_dim += t.domain_event_dim() as isize - t.codomain_event_dim() as isize;
            let n = (event_dim - t.domain_event_dim() as isize).max(0) as usize;
            let term = sum_rightmost(&t.log_abs_det_jacobian(&x, &y)?, n)?;
            lp = Some(match lp {
                None => term.neg()?,
                Some(a) => a.sub(&term)?,
            });
            y = x;
        }
        let n = (event_dim - self.base_dist.event_shape().len() as isize).max(0) as usize;
        let base = sum_rightmost(&self.base_dist.log_prob(&y)?, n)?;
        match lp {
            None => Ok(base),
            Some(a) => a.add(&base),
        }
    }
    fn mean(&self) -> Result<Tensor> {
        Err(super::not_implemented(self.name(), "mean"))
    }
    fn mode(&self) -> Result<Tensor> {
        Err(super::not_implemented(self.name(), "mode"))
    }
    fn variance(&self) -> Result<Tensor> {
        Err(super::not_implemented(self.name(), "variance"))
    }
    fn cdf(&self, value: &Tensor) -> Result<Tensor> {
        let mut v = value.clone();
        for t in self.transforms.iter().rev() {
            v = t.inv(&v)?;
        }
        validate_sample(self.base_dist.as_ref(), &v)?;
        self.monotonize_cdf(&self.base_dist.cdf(&v)?)
    }
    fn icdf(&self, value: &Tensor) -> Result<Tensor> {
        let mut v = self.base_dist.icdf(&self.monotonize_cdf(value)?)?;
        for t in &self.transforms {
            v = t.call(&v)?;
        }
        Ok(v)
    }
}

/// The log-normal distribution: `exp` of `Normal(loc, scale)` (torch's `LogNormal`).
#[derive(Clone)]
pub struct LogNormal {
    /// The mean of the log.
    pub loc: Tensor,
    /// The standard deviation of the log.
    pub scale: Tensor,
    inner: TransformedDistribution,
}

impl LogNormal {
    /// `LogNormal(loc, scale)`, validated by default.
    pub fn new(loc: &Tensor, scale: &Tensor) -> Result<Self> {
        Self::with_validate_args(loc, scale, None)
    }

    /// `LogNormal(loc, scale, validate_args=validate_args)`.
    pub fn with_validate_args(loc: &Tensor, scale: &Tensor, validate_args: Option<bool>) -> Result<Self> {
        let base = Normal::with_validate_args(loc, scale, validate_args)?;
        let (loc, scale) = (base.loc.clone(), base.scale.clone());
        let v = base.validate_args();
        let exp: Arc<dyn Transform> = Arc::new(ExpTransform);
        let inner = TransformedDistribution::with_validate_args(Arc::new(base), vec![exp], Some(v))?;
        Ok(LogNormal { loc, scale, inner })
    }
}

impl Distribution for LogNormal {
    fn name(&self) -> &'static str {
        "LogNormal"
    }
    fn batch_shape(&self) -> Vec<usize> {
        self.inner.batch_shape()
    }
    fn params(&self) -> Vec<(&'static str, Tensor)> {
        vec![("loc", self.loc.clone()), ("scale", self.scale.clone())]
    }
    fn support(&self) -> Constraint {
        super::POSITIVE
    }
    fn validate_args(&self) -> bool {
        self.inner.validate_args()
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
    fn expand(&self, batch_shape: &[usize]) -> Result<Arc<dyn Distribution>> {
        Ok(Arc::new(LogNormal {
            loc: self.loc.expand(batch_shape)?,
            scale: self.scale.expand(batch_shape)?,
            inner: self.inner.expanded(batch_shape)?,
        }))
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
    fn entropy(&self) -> Result<Tensor> {
        self.inner.base_dist.entropy()?.add(&self.loc)
    }
    fn mean(&self) -> Result<Tensor> {
        self.loc.add(&self.scale.square()?.div(2.0)?)?.exp()
    }
    fn mode(&self) -> Result<Tensor> {
        self.loc.sub(&self.scale.square()?)?.exp()
    }
    fn variance(&self) -> Result<Tensor> {
        let s2 = self.scale.square()?;
        s2.expm1()?.mul(&self.loc.mul(2.0)?.add(&s2)?.exp()?)
    }
    fn cdf(&self, value: &Tensor) -> Result<Tensor> {
        self.inner.cdf(value)
    }
    fn icdf(&self, value: &Tensor) -> Result<Tensor> {
        self.inner.icdf(value)
    }
}
