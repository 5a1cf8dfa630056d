//! `Gumbel`, `Weibull`, `Pareto`, `Kumaraswamy`, `FisherSnedecor` and `InverseGamma` with
//! torch's formulas (`ContinuousBernoulli` and `VonMises` have their own files).
//!
//! torch builds Gumbel, Weibull, Pareto, Kumaraswamy and InverseGamma as
//! `TransformedDistribution`s; here each is written out in closed form (the same values up to
//! rounding): `log_prob` is the base's `log_prob` at the inverted value minus the transforms'
//! `log_abs_det_jacobian`, `cdf`/`icdf` the base's through the (monotonized) transforms and
//! `rsample` the base's draw pushed through the transforms.

use std::any::Any;
use std::f64::consts::PI;
use std::sync::Arc;

use oxtorch_tensor::{Generator, Result, Tensor};

use super::{
    broadcast_all, check_params, finfo_eps, finfo_tiny, like, resolve_validate, validate_sample, Constraint,
    Distribution, Exponential, Gamma, Uniform, POSITIVE, UNIT_INTERVAL,
};

/// The Euler–Mascheroni constant (torch's `euler_constant`).
const EULER: f64 = 0.577_215_664_901_532_9;

/// The methods every family here shares.
macro_rules! common {
    ($name:literal, $batch:ident) => {
        fn name(&self) -> &'static str {
            $name
        }
        fn batch_shape(&self) -> Vec<usize> {
            self.$batch.dims().to_vec()
        }
        fn validate_args(&self) -> bool {
            self.validate
        }
        fn as_any(&self) -> &dyn Any {
            self
        }
    };
}
pub(super) use common;

/// torch's `TransformedDistribution._monotonize_cdf` for a tensor `sign` of the transforms
/// (`sign * (value - 0.5) + 0.5`, with the elementwise sign `+1` or `-1`).
fn monotonize_cdf(value: &Tensor, increasing: bool) -> Result<Tensor> {
    let centered = value.sub(0.5)?;
    if increasing {
        centered.add(0.5)
    } else {
        centered.neg()?.add(0.5)
    }
}

/// A standard exponential draw of `shape` like `t` (torch's `Exponential(1).rsample`).
fn std_exponential(shape: Vec<usize>, t: &Tensor, generator: Option<&Generator>) -> Result<Tensor> {
    let e = Tensor::zeros(shape, like(t))?;
    e.exponential_with_(1.0, generator)?;
    Ok(e)
}

// ---------------------------------------------------------------------------------------------
// Gumbel
// ---------------------------------------------------------------------------------------------

/// The Gumbel distribution (torch's `Gumbel`): `loc - scale · log(-log U)` for `U` uniform on
/// `[tiny, 1 - eps]`.
#[derive(Clone)]
pub struct Gumbel {
    /// The location.
    pub loc: Tensor,
    /// The scale.
    pub scale: Tensor,
    validate: bool,
}

impl Gumbel {
    /// `Gumbel(loc, scale)`, validated by default.
    pub fn new(loc: &Tensor, scale: &Tensor) -> Result<Self> {
        Self::with_validate_args(loc, scale, None)
    }

    /// `Gumbel(loc, scale, validate_args=validate_args)`.
    pub fn with_validate_args(loc: &Tensor, scale: &Tensor, validate_args: Option<bool>) -> Result<Self> {
        let b = broadcast_all(&[loc, scale])?;
        let d = Gumbel { loc: b[0].clone(), scale: b[1].clone(), validate: resolve_validate(validate_args) };
        if d.validate {
            check_params(
                "Gumbel",
                &d.params(),
                &[("loc", &d.loc, Constraint::Real), ("scale", &d.scale, POSITIVE)],
            )?;
        }
        Ok(d)
    }

    /// torch's base distribution `Uniform(full_like(loc, tiny), full_like(loc, 1 - eps))`.
    fn base_uniform(&self) -> Result<Uniform> {
        let dt = self.loc.dtype();
        let loc = self.loc.detach();
        let low = loc.full_like(finfo_tiny(dt))?;
        let high = loc.full_like(1.0 - finfo_eps(dt))?;
        Uniform::with_validate_args(&low, &high, Some(self.validate))
    }
}

impl Distribution for Gumbel {
    common!("Gumbel", loc);
    fn expand(&self, batch_shape: &[usize]) -> Result<Arc<dyn Distribution>> {
        Ok(Arc::new(Gumbel {
            loc: self.loc.expand(batch_shape)?,
            scale: self.scale.expand(batch_shape)?,
            validate: self.validate,
        }))
    }
    fn params(&self) -> Vec<(&'static str, Tensor)> {
        vec![("loc", self.loc.clone()), ("scale", self.scale.clone())]
    }
    fn support(&self) -> Constraint {
        Constraint::Real
    }
    fn sample_with(&self, sample_shape: &[usize], generator: Option<&Generator>) -> Result<Tensor> {
        Ok(self.rsample_with(sample_shape, generator)?.detach())
    }
    fn has_rsample(&self) -> bool {
        true
    }
    fn rsample_with(&self, sample_shape: &[usize], generator: Option<&Generator>) -> Result<Tensor> {
        let dt = self.loc.dtype();
        let (lo, hi) = (finfo_tiny(dt), 1.0 - finfo_eps(dt));
        let u = Tensor::rand_with(self.extended_shape(sample_shape), like(&self.loc), generator)?;
        let u = u.mul(hi - lo)?.add(lo)?;
        self.loc.sub(&self.scale.mul(&u.log()?.neg()?.log()?)?)
    }
    fn log_prob(&self, value: &Tensor) -> Result<Tensor> {
        validate_sample(self, value)?;
        let y = self.loc.sub(value)?.div(&self.scale)?;
        y.sub(&y.exp()?)?.sub(&self.scale.log()?)
    }
    fn entropy(&self) -> Result<Tensor> {
        self.scale.log()?.add(1.0 + EULER)
    }
    fn mean(&self) -> Result<Tensor> {
        self.loc.add(&self.scale.mul(EULER)?)
    }
    fn mode(&self) -> Result<Tensor> {
        Ok(self.loc.clone())
    }
    fn stddev(&self) -> Result<Tensor> {
        self.scale.mul(PI / 6f64.sqrt())
    }
    fn variance(&self) -> Result<Tensor> {
        self.stddev()?.square()
    }
    /// torch's `TransformedDistribution.cdf`: the value pulled back to the base
    /// `Uniform(tiny, 1 - eps)`, checked against its support (so values whose pull-back rounds
    /// outside `[tiny, 1 - eps]` are rejected, as torch's), then the base's cdf.
    fn cdf(&self, value: &Tensor) -> Result<Tensor> {
        let u = value.sub(&self.loc)?.div(&self.scale.neg()?)?.exp()?.neg()?.exp()?;
        let base = self.base_uniform()?;
        validate_sample(&base, &u)?;
        monotonize_cdf(&base.cdf(&u)?, true)
    }
    /// torch's `TransformedDistribution.icdf`: the base `Uniform(tiny, 1 - eps)`'s icdf pushed
    /// through the transforms (so `icdf(0)` and `icdf(1)` are finite).
    fn icdf(&self, value: &Tensor) -> Result<Tensor> {
        let base = self.base_uniform()?;
        let u = base.icdf(&monotonize_cdf(value, true)?)?;
        self.loc.sub(&self.scale.mul(&u.log()?.neg()?.log()?)?)
    }
}

// ---------------------------------------------------------------------------------------------
// Weibull
// ---------------------------------------------------------------------------------------------

/// The two-parameter Weibull distribution (torch's `Weibull`): `scale · E^(1/concentration)` for
/// `E` standard exponential.
#[derive(Clone)]
pub struct Weibull {
    /// The scale `λ`.
    pub scale: Tensor,
    /// The shape `k`.
    pub concentration: Tensor,
    validate: bool,
}

impl Weibull {
    /// `Weibull(scale, concentration)`, validated by default.
    pub fn new(scale: &Tensor, concentration: &Tensor) -> Result<Self> {
        Self::with_validate_args(scale, concentration, None)
    }

    /// `Weibull(scale, concentration, validate_args=validate_args)`.
    pub fn with_validate_args(
        scale: &Tensor,
        concentration: &Tensor,
        validate_args: Option<bool>,
    ) -> Result<Self> {
        let b = broadcast_all(&[scale, concentration])?;
        let d = Weibull {
            scale: b[0].clone(),
            concentration: b[1].clone(),
            validate: resolve_validate(validate_args),
        };
        if d.validate {
            check_params(
                "Weibull",
                &d.params(),
                &[("scale", &d.scale, POSITIVE), ("concentration", &d.concentration, POSITIVE)],
            )?;
        }
        Ok(d)
    }
}

impl Distribution for Weibull {
    common!("Weibull", scale);
    fn expand(&self, batch_shape: &[usize]) -> Result<Arc<dyn Distribution>> {
        Ok(Arc::new(Weibull {
            scale: self.scale.expand(batch_shape)?,
            concentration: self.concentration.expand(batch_shape)?,
            validate: self.validate,
        }))
    }
    fn params(&self) -> Vec<(&'static str, Tensor)> {
        vec![("scale", self.scale.clone()), ("concentration", self.concentration.clone())]
    }
    fn support(&self) -> Constraint {
        POSITIVE
    }
    fn sample_with(&self, sample_shape: &[usize], generator: Option<&Generator>) -> Result<Tensor> {
        Ok(self.rsample_with(sample_shape, generator)?.detach())
    }
    fn has_rsample(&self) -> bool {
        true
    }
    fn rsample_with(&self, sample_shape: &[usize], generator: Option<&Generator>) -> Result<Tensor> {
        let e = std_exponential(self.extended_shape(sample_shape), &self.scale, generator)?;
        e.pow(&self.concentration.reciprocal()?)?.mul(&self.scale)
    }
    fn log_prob(&self, value: &Tensor) -> Result<Tensor> {
        validate_sample(self, value)?;
        let k = &self.concentration;
        let z = value.div(&self.scale)?;
        k.log()?.sub(&self.scale.log()?)?.add(&k.sub(1.0)?.mul(&z.log()?)?)?.sub(&z.pow(k)?)
    }
    fn entropy(&self) -> Result<Tensor> {
        let kr = self.concentration.reciprocal()?;
        kr.rsub(1.0)?.mul(EULER)?.add(&self.scale.mul(&kr)?.log()?)?.add(1.0)
    }
    fn mean(&self) -> Result<Tensor> {
        self.scale.mul(&self.concentration.reciprocal()?.add(1.0)?.lgamma()?.exp()?)
    }
    fn mode(&self) -> Result<Tensor> {
        let k = &self.concentration;
        self.scale.mul(&k.sub(1.0)?.div(k)?.pow(&k.reciprocal()?)?)
    }
    fn variance(&self) -> Result<Tensor> {
        let kr = self.concentration.reciprocal()?;
        let a = kr.mul(2.0)?.add(1.0)?.lgamma()?.exp()?;
        let b = kr.add(1.0)?.lgamma()?.mul(2.0)?.exp()?;
        self.scale.square()?.mul(&a.sub(&b)?)
    }
    /// torch's `TransformedDistribution.cdf`: the value pulled back to the base `Exponential(1)`
    /// (`(value / scale)^concentration`), checked against the base's support (so `0` is in, and
    /// a negative value whose power is a nonnegative number too, as torch's), then its cdf.
    fn cdf(&self, value: &Tensor) -> Result<Tensor> {
        let exponent = self.concentration.reciprocal()?;
        let x = value.div(&self.scale)?.pow(&exponent.reciprocal()?)?;
        let base = Exponential::with_validate_args(&self.scale.detach().ones_like()?, Some(self.validate))?;
        validate_sample(&base, &x)?;
        monotonize_cdf(&base.cdf(&x)?, true)
    }
    fn icdf(&self, value: &Tensor) -> Result<Tensor> {
        value.neg()?.log1p()?.neg()?.pow(&self.concentration.reciprocal()?)?.mul(&self.scale)
    }
}

// ---------------------------------------------------------------------------------------------
// Pareto
// ---------------------------------------------------------------------------------------------

/// The Pareto type 1 distribution (torch's `Pareto`): `scale · exp(E / alpha)` for `E` standard
/// exponential.
#[derive(Clone)]
pub struct Pareto {
    /// The scale (the support's lower bound).
    pub scale: Tensor,
    /// The shape `α`.
    pub alpha: Tensor,
    validate: bool,
}

impl Pareto {
    /// `Pareto(scale, alpha)`, validated by default.
    pub fn new(scale: &Tensor, alpha: &Tensor) -> Result<Self> {
        Self::with_validate_args(scale, alpha, None)
    }

    /// `Pareto(scale, alpha, validate_args=validate_args)`.
    pub fn with_validate_args(scale: &Tensor, alpha: &Tensor, validate_args: Option<bool>) -> Result<Self> {
        let b = broadcast_all(&[scale, alpha])?;
        let d =
            Pareto { scale: b[0].clone(), alpha: b[1].clone(), validate: resolve_validate(validate_args) };
        if d.validate {
            // (torch builds the base `Exponential(alpha)` first, which checks `rate`)
            check_params("Exponential", &[("rate", d.alpha.clone())], &[("rate", &d.alpha, POSITIVE)])?;
            check_params(
                "Pareto",
                &d.params(),
                &[("alpha", &d.alpha, POSITIVE), ("scale", &d.scale, POSITIVE)],
            )?;
        }
        Ok(d)
    }
}

impl Distribution for Pareto {
    common!("Pareto", scale);
    fn expand(&self, batch_shape: &[usize]) -> Result<Arc<dyn Distribution>> {
        Ok(Arc::new(Pareto {
            scale: self.scale.expand(batch_shape)?,
            alpha: self.alpha.expand(batch_shape)?,
            validate: self.validate,
        }))
    }
    fn params(&self) -> Vec<(&'static str, Tensor)> {
        vec![("alpha", self.alpha.clone()), ("scale", self.scale.clone())]
    }
    /// torch's `constraints.greater_than_eq(scale)`.
    fn support(&self) -> Constraint {
        Constraint::GreaterThanEqTensor(self.scale.detach())
    }
    fn sample_with(&self, sample_shape: &[usize], generator: Option<&Generator>) -> Result<Tensor> {
        Ok(self.rsample_with(sample_shape, generator)?.detach())
    }
    fn has_rsample(&self) -> bool {
        true
    }
    fn rsample_with(&self, sample_shape: &[usize], generator: Option<&Generator>) -> Result<Tensor> {
        let e = std_exponential(self.extended_shape(sample_shape), &self.scale, generator)?;
        e.div(&self.alpha)?.exp()?.mul(&self.scale)
    }
    fn log_prob(&self, value: &Tensor) -> Result<Tensor> {
        validate_sample(self, value)?;
        let x = value.div(&self.scale)?.log()?;
        self.alpha.log()?.sub(&self.alpha.mul(&x)?)?.sub(&x)?.sub(&self.scale.log()?)
    }
    fn entropy(&self) -> Result<Tensor> {
        self.scale.div(&self.alpha)?.log()?.add(&self.alpha.reciprocal()?.add(1.0)?)
    }
    fn mean(&self) -> Result<Tensor> {
        let a = self.alpha.clamp_min(1.0)?;
        a.mul(&self.scale)?.div(&a.sub(1.0)?)
    }
    fn mode(&self) -> Result<Tensor> {
        Ok(self.scale.clone())
    }
    fn variance(&self) -> Result<Tensor> {
        let a = self.alpha.clamp_min(2.0)?;
        self.scale.square()?.mul(&a)?.div(&a.sub(1.0)?.square()?.mul(&a.sub(2.0)?)?)
    }
    fn cdf(&self, value: &Tensor) -> Result<Tensor> {
        validate_sample(self, value)?;
        value.div(&self.scale)?.log()?.mul(&self.alpha)?.neg()?.exp()?.rsub(1.0)
    }
    fn icdf(&self, value: &Tensor) -> Result<Tensor> {
        value.neg()?.log1p()?.neg()?.div(&self.alpha)?.exp()?.mul(&self.scale)
    }
}

// ---------------------------------------------------------------------------------------------
// Kumaraswamy
// ---------------------------------------------------------------------------------------------

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

// ---------------------------------------------------------------------------------------------
// FisherSnedecor
// ---------------------------------------------------------------------------------------------

/// The Fisher–Snedecor (F) distribution (torch's `FisherSnedecor`); `rsample` is the ratio of
/// two reparameterized `Gamma(df / 2, df)` draws.
#[derive(Clone)]
pub struct FisherSnedecor {
    /// The numerator degrees of freedom.
    pub df1: Tensor,
    /// The denominator degrees of freedom.
    pub df2: Tensor,
    gamma1: Gamma,
    gamma2: Gamma,
    validate: bool,
}

impl FisherSnedecor {
    /// `FisherSnedecor(df1, df2)`, validated by default.
    pub fn new(df1: &Tensor, df2: &Tensor) -> Result<Self> {
        Self::with_validate_args(df1, df2, None)
    }

    /// `FisherSnedecor(df1, df2, validate_args=validate_args)`. As torch's, the inner
    /// `Gamma(df / 2, df)`s are built (and validated) with the default `validate_args`.
    pub fn with_validate_args(df1: &Tensor, df2: &Tensor, validate_args: Option<bool>) -> Result<Self> {
        let b = broadcast_all(&[df1, df2])?;
        let (df1, df2) = (b[0].clone(), b[1].clone());
        let gamma1 = Gamma::new(&df1.mul(0.5)?, &df1)?;
        let gamma2 = Gamma::new(&df2.mul(0.5)?, &df2)?;
        let d = FisherSnedecor { df1, df2, gamma1, gamma2, validate: resolve_validate(validate_args) };
        if d.validate {
            check_params(
                "FisherSnedecor",
                &d.params(),
                &[("df1", &d.df1, POSITIVE), ("df2", &d.df2, POSITIVE)],
            )?;
        }
        Ok(d)
    }
}

impl Distribution for FisherSnedecor {
    common!("FisherSnedecor", df1);
    fn params(&self) -> Vec<(&'static str, Tensor)> {
        vec![("df1", self.df1.clone()), ("df2", self.df2.clone())]
    }
    fn support(&self) -> Constraint {
        POSITIVE
    }
    fn sample_with(&self, sample_shape: &[usize], generator: Option<&Generator>) -> Result<Tensor> {
        let shape = self.extended_shape(sample_shape);
        let tiny = finfo_tiny(self.df1.dtype());
        let x1 = self.gamma1.sample_with(sample_shape, generator)?.reshape(shape.clone())?;
        let x2 = self.gamma2.sample_with(sample_shape, generator)?.reshape(shape)?.clamp_min(tiny)?;
        x1.div(&x2)?.clamp_min(tiny)
    }
    fn has_rsample(&self) -> bool {
        true
    }
    fn rsample_with(&self, sample_shape: &[usize], generator: Option<&Generator>) -> Result<Tensor> {
        let shape = self.extended_shape(sample_shape);
        let tiny = finfo_tiny(self.df1.dtype());
        let x1 = self.gamma1.rsample_with(sample_shape, generator)?.reshape(shape.clone())?;
        let x2 = self.gamma2.rsample_with(sample_shape, generator)?.reshape(shape)?.clamp_min(tiny)?;
        x1.div(&x2)?.clamp_min(tiny)
    }
    fn log_prob(&self, value: &Tensor) -> Result<Tensor> {
        validate_sample(self, value)?;
        let ct1 = self.df1.mul(0.5)?;
        let ct2 = self.df2.mul(0.5)?;
        let ct3 = self.df1.div(&self.df2)?;
        let t1 = ct1.add(&ct2)?.lgamma()?.sub(&ct1.lgamma()?)?.sub(&ct2.lgamma()?)?;
        let t2 = ct1.mul(&ct3.log()?)?.add(&ct1.sub(1.0)?.mul(&value.log()?)?)?;
        let t3 = ct1.add(&ct2)?.mul(&ct3.mul(value)?.log1p()?)?;
        t1.add(&t2)?.sub(&t3)
    }
    fn mean(&self) -> Result<Tensor> {
        let df2 = self.df2.masked_fill(&self.df2.le(2.0)?, f64::NAN)?;
        df2.div(&df2.sub(2.0)?)
    }
    fn mode(&self) -> Result<Tensor> {
        let (df1, df2) = (&self.df1, &self.df2);
        let mode = df1.sub(2.0)?.div(df1)?.mul(df2)?.div(&df2.add(2.0)?)?;
        mode.masked_fill(&df1.le(2.0)?, f64::NAN)
    }
    fn variance(&self) -> Result<Tensor> {
        let df1 = &self.df1;
        let df2 = self.df2.masked_fill(&self.df2.le(4.0)?, f64::NAN)?;
        let num = df2.square()?.mul(2.0)?.mul(&df1.add(&df2)?.sub(2.0)?)?;
        num.div(&df1.mul(&df2.sub(2.0)?.square()?)?.mul(&df2.sub(4.0)?)?)
    }
}

// ---------------------------------------------------------------------------------------------
// InverseGamma
// ---------------------------------------------------------------------------------------------

/// The inverse gamma distribution: `1 / X` for `X ~ Gamma(concentration, rate)` (torch's
/// `InverseGamma`).
#[derive(Clone)]
pub struct InverseGamma {
    /// The base `Gamma(concentration, rate)`.
    pub base: Gamma,
    validate: bool,
}

impl InverseGamma {
    /// `InverseGamma(concentration, rate)`, validated by default.
    pub fn new(concentration: &Tensor, rate: &Tensor) -> Result<Self> {
        Self::with_validate_args(concentration, rate, None)
    }

    /// `InverseGamma(concentration, rate, validate_args=validate_args)` (the base Gamma checks
    /// the parameters, with Gamma's message, as torch's).
    pub fn with_validate_args(
        concentration: &Tensor,
        rate: &Tensor,
        validate_args: Option<bool>,
    ) -> Result<Self> {
        let base = Gamma::with_validate_args(concentration, rate, validate_args)?;
        Ok(InverseGamma { base, validate: resolve_validate(validate_args) })
    }

    /// The shape `α`.
    pub fn concentration(&self) -> &Tensor {
        &self.base.concentration
    }

    /// The rate `β`.
    pub fn rate(&self) -> &Tensor {
        &self.base.rate
    }

    /// `Gamma.log_prob` at `x` without the support check.
    fn gamma_log_prob(&self, x: &Tensor) -> Result<Tensor> {
        let (a, b) = (&self.base.concentration, &self.base.rate);
        a.xlogy(b)?.add(&a.sub(1.0)?.xlogy(x)?)?.sub(&b.mul(x)?)?.sub(&a.lgamma()?)
    }
}

impl Distribution for InverseGamma {
    fn name(&self) -> &'static str {
        "InverseGamma"
    }
    fn batch_shape(&self) -> Vec<usize> {
        self.base.batch_shape()
    }
    fn validate_args(&self) -> bool {
        self.validate
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
    /// None, as torch's repr shows (`InverseGamma()`: its parameters live on the base Gamma).
    fn params(&self) -> Vec<(&'static str, Tensor)> {
        Vec::new()
    }
    fn support(&self) -> Constraint {
        POSITIVE
    }
    fn sample_with(&self, sample_shape: &[usize], generator: Option<&Generator>) -> Result<Tensor> {
        self.base.sample_with(sample_shape, generator)?.reciprocal()
    }
    fn has_rsample(&self) -> bool {
        true
    }
    fn rsample_with(&self, sample_shape: &[usize], generator: Option<&Generator>) -> Result<Tensor> {
        self.base.rsample_with(sample_shape, generator)?.reciprocal()
    }
    fn log_prob(&self, value: &Tensor) -> Result<Tensor> {
        validate_sample(self, value)?;
        // PowerTransform(-1): x = 1 / y, log|det J| = log|-1 · y / x|
        let x = value.reciprocal()?;
        let ladj = value.neg()?.div(&x)?.abs()?.log()?;
        self.gamma_log_prob(&x)?.sub(&ladj)
    }
    fn entropy(&self) -> Result<Tensor> {
        let a = &self.base.concentration;
        a.add(&self.base.rate.log()?)?.add(&a.lgamma()?)?.sub(&a.add(1.0)?.mul(&a.digamma()?)?)
    }
    fn mean(&self) -> Result<Tensor> {
        let a = &self.base.concentration;
        let result = self.base.rate.div(&a.sub(1.0)?)?;
        Tensor::where_cond(&a.gt(1.0)?, &result, f64::INFINITY)
    }
    fn mode(&self) -> Result<Tensor> {
        self.base.rate.div(&self.base.concentration.add(1.0)?)
    }
    fn variance(&self) -> Result<Tensor> {
        let a = &self.base.concentration;
        let result = self.base.rate.square()?.div(&a.sub(1.0)?.square()?.mul(&a.sub(2.0)?)?)?;
        Tensor::where_cond(&a.gt(2.0)?, &result, f64::INFINITY)
    }
    /// torch's `TransformedDistribution.cdf`: the base Gamma's cdf at `1 / value` (checked
    /// against the Gamma's support, so `0` maps to `inf` and is in) monotonized for the decreasing
    /// `PowerTransform(-1)`.
    fn cdf(&self, value: &Tensor) -> Result<Tensor> {
        let x = value.reciprocal()?;
        monotonize_cdf(&self.base.cdf(&x)?, false)
    }
}
