//! `torch.distributions.Kumaraswamy`, which torch builds as a `TransformedDistribution` over
//! `Uniform(0, 1)`; here it is written out in closed form (see `closed_form.rs`), with
//! `log_prob` through the transforms step by step as torch's.

use std::any::Any;
use std::sync::Arc;

use oxtorch_tensor::{Generator, Result, Tensor};

use super::closed_form::EULER;
use super::common_methods::common;
use super::{
    broadcast_all, check_params, like, resolve_validate, validate_sample, Constraint, Distribution, POSITIVE,
    UNIT_INTERVAL,
};

/// The Kumaraswamy distribution on `[0, 1]` (torch's `Kumaraswamy`): `(1 - U^(1/b))^(1/a)` for
/// `U` uniform, `a = concentration1`, `b = concentration0`.
#[derive(Clone)]
pub struct Kumaraswamy {
    /// The first concentration `a`.
    pub concentration1: Tensor,
    /// The second concentration `b`.
    pub concentration0: Tensor,
    validate: bool,
}

/// torch's Kumaraswamy `_moments(a, b, n)`: `b · B(1 + n / a, b)`.
fn kumaraswamy_moment(a: &Tensor, b: &Tensor, n: f64) -> Result<Tensor> {
    let arg1 = a.reciprocal()?.mul(n)?.add(1.0)?;
    let log_value = arg1.lgamma()?.add(&b.lgamma()?)?.sub(&arg1.add(b)?.lgamma()?)?;
    b.mul(&log_value.exp()?)
}

impl Kumaraswamy {
    /// `Kumaraswamy(concentration1, concentration0)`, validated by default.
    pub fn new(concentration1: &Tensor, concentration0: &Tensor) -> Result<Self> {
        Self::with_validate_args(concentration1, concentration0, None)
    }

    /// `Kumaraswamy(concentration1, concentration0, validate_args=validate_args)`.
    pub fn with_validate_args(
        concentration1: &Tensor,
        concentration0: &Tensor,
        validate_args: Option<bool>,
    ) -> Result<Self> {
        let b = broadcast_all(&[concentration1, concentration0])?;
        let d = Kumaraswamy {
            concentration1: b[0].clone(),
            concentration0: b[1].clone(),
            validate: resolve_validate(validate_args),
        };
        if d.validate {
            check_params(
                "Kumaraswamy",
                &d.params(),
                &[
                    ("concentration1", &d.concentration1, POSITIVE),
                    ("concentration0", &d.concentration0, POSITIVE),
                ],
            )?;
        }
        Ok(d)
    }
}

impl Distribution for Kumaraswamy {
    common!("Kumaraswamy", concentration0);
    fn expand(&self, batch_shape: &[usize]) -> Result<Arc<dyn Distribution>> {
        Ok(Arc::new(Kumaraswamy {
            concentration1: self.concentration1.expand(batch_shape)?,
            concentration0: self.concentration0.expand(batch_shape)?,
            validate: self.validate,
        }))
    }
    fn params(&self) -> Vec<(&'static str, Tensor)> {
        vec![("concentration1", self.concentration1.clone()), ("concentration0", self.concentration0.clone())]
    }
    fn support(&self) -> Constraint {
        UNIT_INTERVAL
    }
    fn sample_with(&self, sample_shape: &[usize], generator: Option<&Generator>) -> Result<Tensor> {
        Ok(self.rsample_with(sample_shape, generator)?.detach())
    }
    fn has_rsample(&self) -> bool {
        true
    }
    fn rsample_with(&self, sample_shape: &[usize], generator: Option<&Generator>) -> Result<Tensor> {
        let u = Tensor::rand_with(self.extended_shape(sample_shape), like(&self.concentration0), generator)?;
        u.pow(&self.concentration0.reciprocal()?)?.rsub(1.0)?.pow(&self.concentration1.reciprocal()?)
    }
    /// torch's `TransformedDistribution.log_prob` through `[PowerTransform(1 / b),
    /// AffineTransform(1, -1), PowerTransform(1 / a)]` over `Uniform(0, 1)`, step by step (so
    /// `0` and `1` give NaN, and values whose pull-back rounds to the base's bounds `-inf`, as
    /// torch's).
    fn log_prob(&self, value: &Tensor) -> Result<Tensor> {
        validate_sample(self, value)?;
        let e1 = self.concentration1.reciprocal()?;
        let e0 = self.concentration0.reciprocal()?;
        // PowerTransform(1 / a).inv: x = y^a, log|det J| = log|e1 · y / x|
        let x1 = value.pow(&e1.reciprocal()?)?;
        let ladj1 = e1.mul(value)?.div(&x1)?.abs()?.log()?;
        // AffineTransform(1, -1).inv: x = (y - 1) / -1 (log|det J| = 0)
        let x2 = x1.sub(1.0)?.div(-1.0)?;
        // PowerTransform(1 / b).inv: x = y^b
        let x3 = x2.pow(&e0.reciprocal()?)?;
        let ladj0 = e0.mul(&x2)?.div(&x3)?.abs()?.log()?;
        // Uniform(0, 1).log_prob: log(0 <= x < 1) - log(1 - 0)
        let inside = x3.ge(0.0)?.logical_and(&x3.lt(1.0)?)?.to_dtype(x3.dtype())?.log()?;
        ladj1.neg()?.sub(&ladj0)?.add(&inside)
    }
    fn entropy(&self) -> Result<Tensor> {
        let (a, b) = (&self.concentration1, &self.concentration0);
        let t1 = a.reciprocal()?.rsub(1.0)?;
        let t0 = b.reciprocal()?.rsub(1.0)?;
        let h0 = b.add(1.0)?.digamma()?.add(EULER)?;
        t0.add(&t1.mul(&h0)?)?.sub(&a.log()?)?.sub(&b.log()?)
    }
    fn mean(&self) -> Result<Tensor> {
        kumaraswamy_moment(&self.concentration1, &self.concentration0, 1.0)
    }
    fn mode(&self) -> Result<Tensor> {
        let (a, b) = (&self.concentration1, &self.concentration0);
        let log_mode = b.reciprocal()?.mul(&b.neg()?.log1p()?)?.sub(&b.neg()?.mul(a)?.log1p()?)?;
        let bad = b.lt(1.0)?.logical_or(&a.lt(1.0)?)?;
        log_mode.masked_fill(&bad, f64::NAN)?.exp()
    }
    fn variance(&self) -> Result<Tensor> {
        kumaraswamy_moment(&self.concentration1, &self.concentration0, 2.0)?.sub(&self.mean()?.square()?)
    }
    fn cdf(&self, value: &Tensor) -> Result<Tensor> {
        validate_sample(self, value)?;
        value.pow(&self.concentration1)?.rsub(1.0)?.pow(&self.concentration0)?.rsub(1.0)
    }
    fn icdf(&self, value: &Tensor) -> Result<Tensor> {
        value
            .rsub(1.0)?
            .pow(&self.concentration0.reciprocal()?)?
            .rsub(1.0)?
            .pow(&self.concentration1.reciprocal()?)
    }
}
