//! `Gumbel`, `Weibull`, `Pareto`, `Kumaraswamy`, `ContinuousBernoulli`, `FisherSnedecor`,
//! `InverseGamma` and `VonMises` with torch's formulas.
//!
//! torch builds Gumbel, Weibull, Pareto, Kumaraswamy and InverseGamma as
//! `TransformedDistribution`s; here each is written out in closed form (the same values up to
//! rounding): `log_prob` is the base's `log_prob` at the inverted value minus the transforms'
//! `log_abs_det_jacobian`, `cdf`/`icdf` the base's through the (monotonized) transforms and
//! `rsample` the base's draw pushed through the transforms.

use std::any::Any;
use std::f64::consts::PI;

use oxtorch_tensor::{DType, Error, Generator, Result, Tensor};

use super::{
    broadcast_all, check_params, clamp_probs, finfo_eps, finfo_tiny, like, resolve_validate, validate_sample,
    Constraint, Distribution, Exponential, Gamma, Uniform, POSITIVE, UNIT_INTERVAL,
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
// ContinuousBernoulli
// ---------------------------------------------------------------------------------------------

/// The continuous Bernoulli distribution on `[0, 1]` (torch's `ContinuousBernoulli`), by `probs`
/// (clamped to `[eps, 1 - eps]`) or `logits`; near `probs = 0.5` (within torch's `lims`
/// `(0.499, 0.501)`) the normalizer and moments use torch's Taylor expansions.
#[derive(Clone)]
pub struct ContinuousBernoulli {
    /// The (clamped) `probs` parameter.
    pub probs: Tensor,
    /// The `logits` parameter.
    pub logits: Tensor,
    lims: (f64, f64),
    by_logits: bool,
    validate: bool,
}

impl ContinuousBernoulli {
    /// `ContinuousBernoulli(probs=probs)`.
    pub fn from_probs(probs: &Tensor) -> Result<Self> {
        Self::with_validate_args(Some(probs), None, (0.499, 0.501), None)
    }

    /// `ContinuousBernoulli(logits=logits)`.
    pub fn from_logits(logits: &Tensor) -> Result<Self> {
        Self::with_validate_args(None, Some(logits), (0.499, 0.501), None)
    }

    /// `ContinuousBernoulli(probs, logits, lims, validate_args)`: exactly one of `probs` and
    /// `logits`. As torch's, an explicit `validate_args` (either value) checks `probs` against
    /// the unit interval before clamping.
    pub fn with_validate_args(
        probs: Option<&Tensor>,
        logits: Option<&Tensor>,
        lims: (f64, f64),
        validate_args: Option<bool>,
    ) -> Result<Self> {
        let validate = resolve_validate(validate_args);
        let (probs, logits, by_logits) = match (probs, logits) {
            (Some(p), None) => {
                if validate_args.is_some() && !super::all_true(&UNIT_INTERVAL.check(p)?)? {
                    return Err(Error::msg("The parameter probs has invalid values"));
                }
                let p = clamp_probs(p)?;
                let c = clamp_probs(&p)?;
                let l = c.log()?.sub(&c.neg()?.log1p()?)?;
                (p, l, false)
            }
            (None, Some(l)) => (clamp_probs(&l.sigmoid()?)?, l.clone(), true),
            _ => return Err(Error::msg("Either `probs` or `logits` must be specified, but not both.")),
        };
        let d = ContinuousBernoulli { probs, logits, lims, by_logits, validate };
        if d.validate {
            let (name, v, c) = if d.by_logits {
                ("logits", &d.logits, Constraint::Real)
            } else {
                ("probs", &d.probs, UNIT_INTERVAL)
            };
            check_params("ContinuousBernoulli", &d.params(), &[(name, v, c)])?;
        }
        Ok(d)
    }

    fn outside_unstable_region(&self) -> Result<Tensor> {
        self.probs.le(self.lims.0)?.logical_or(&self.probs.gt(self.lims.1)?)
    }

    fn cut_probs(&self) -> Result<Tensor> {
        Tensor::where_cond(&self.outside_unstable_region()?, &self.probs, self.probs.full_like(self.lims.0)?)
    }

    /// torch's `_cont_bern_log_norm`: the log normalizing constant.
    pub(crate) fn cont_bern_log_norm(&self) -> Result<Tensor> {
        let cut = self.cut_probs()?;
        let below = Tensor::where_cond(&cut.le(0.5)?, &cut, cut.zeros_like()?)?;
        let above = Tensor::where_cond(&cut.ge(0.5)?, &cut, cut.ones_like()?)?;
        let log_norm = cut.neg()?.log1p()?.sub(&cut.log()?)?.abs()?.log()?.sub(&Tensor::where_cond(
            &cut.le(0.5)?,
            below.mul(-2.0)?.log1p()?,
            above.mul(2.0)?.sub(1.0)?.log()?,
        )?)?;
        let x = self.probs.sub(0.5)?.square()?;
        let taylor = x.mul(104.0 / 45.0)?.add(4.0 / 3.0)?.mul(&x)?.add(std::f64::consts::LN_2)?;
        Tensor::where_cond(&self.outside_unstable_region()?, log_norm, taylor)
    }
}

impl Distribution for ContinuousBernoulli {
    common!("ContinuousBernoulli", probs);
    fn params(&self) -> Vec<(&'static str, Tensor)> {
        if self.by_logits {
            vec![("logits", self.logits.clone())]
        } else {
            vec![("probs", self.probs.clone())]
        }
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
        let u = Tensor::rand_with(self.extended_shape(sample_shape), like(&self.probs), generator)?;
        self.icdf(&u)
    }
    fn log_prob(&self, value: &Tensor) -> Result<Tensor> {
        validate_sample(self, value)?;
        // -binary_cross_entropy_with_logits(logits, value) = -((1 - v) x + softplus(-x))
        let x = &self.logits;
        let bce = value.rsub(1.0)?.mul(x)?.add(&x.neg()?.softplus(1.0, 20.0)?)?;
        bce.neg()?.add(&self.cont_bern_log_norm()?)
    }
    fn entropy(&self) -> Result<Tensor> {
        let lp0 = self.probs.neg()?.log1p()?;
        let lp1 = self.probs.log()?;
        self.mean()?.mul(&lp0.sub(&lp1)?)?.sub(&self.cont_bern_log_norm()?)?.sub(&lp0)
    }
    fn mean(&self) -> Result<Tensor> {
        let cut = self.cut_probs()?;
        let mus =
            cut.div(&cut.mul(2.0)?.sub(1.0)?)?.add(&cut.neg()?.log1p()?.sub(&cut.log()?)?.reciprocal()?)?;
        let x = self.probs.sub(0.5)?;
        let taylor = x.square()?.mul(16.0 / 45.0)?.add(1.0 / 3.0)?.mul(&x)?.add(0.5)?;
        Tensor::where_cond(&self.outside_unstable_region()?, mus, taylor)
    }
    fn mode(&self) -> Result<Tensor> {
        Err(super::not_implemented("ContinuousBernoulli", "mode"))
    }
    fn variance(&self) -> Result<Tensor> {
        let cut = self.cut_probs()?;
        let vars = cut
            .mul(&cut.sub(1.0)?)?
            .div(&cut.mul(2.0)?.rsub(1.0)?.square()?)?
            .add(&cut.neg()?.log1p()?.sub(&cut.log()?)?.square()?.reciprocal()?)?;
        let x = self.probs.sub(0.5)?.square()?;
        let taylor = x.mul(128.0 / 945.0)?.rsub(1.0 / 15.0)?.mul(&x)?.rsub(1.0 / 12.0)?;
        Tensor::where_cond(&self.outside_unstable_region()?, vars, taylor)
    }
    fn cdf(&self, value: &Tensor) -> Result<Tensor> {
        validate_sample(self, value)?;
        let cut = self.cut_probs()?;
        let cdfs = cut
            .pow(value)?
            .mul(&cut.rsub(1.0)?.pow(&value.rsub(1.0)?)?)?
            .add(&cut)?
            .sub(1.0)?
            .div(&cut.mul(2.0)?.sub(1.0)?)?;
        let unbounded = Tensor::where_cond(&self.outside_unstable_region()?, &cdfs, value)?;
        let upper = Tensor::where_cond(&value.ge(1.0)?, unbounded.ones_like()?, &unbounded)?;
        Tensor::where_cond(&value.le(0.0)?, upper.zeros_like()?, &upper)
    }
    fn icdf(&self, value: &Tensor) -> Result<Tensor> {
        let cut = self.cut_probs()?;
        let num =
            cut.neg()?.add(&value.mul(&cut.mul(2.0)?.sub(1.0)?)?)?.log1p()?.sub(&cut.neg()?.log1p()?)?;
        let den = cut.log()?.sub(&cut.neg()?.log1p()?)?;
        Tensor::where_cond(&self.outside_unstable_region()?, num.div(&den)?, value)
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

// ---------------------------------------------------------------------------------------------
// VonMises
// ---------------------------------------------------------------------------------------------

const I0_COEF_SMALL: [f64; 7] = [1.0, 3.5156229, 3.0899424, 1.2067492, 0.2659732, 0.360768e-1, 0.45813e-2];
const I0_COEF_LARGE: [f64; 9] = [
    0.39894228,
    0.1328592e-1,
    0.225319e-2,
    -0.157565e-2,
    0.916281e-2,
    -0.2057706e-1,
    0.2635537e-1,
    -0.1647633e-1,
    0.392377e-2,
];
const I1_COEF_SMALL: [f64; 7] =
    [0.5, 0.87890594, 0.51498869, 0.15084934, 0.2658733e-1, 0.301532e-2, 0.32411e-3];
const I1_COEF_LARGE: [f64; 9] = [
    0.39894228,
    -0.3988024e-1,
    -0.362018e-2,
    0.163801e-2,
    -0.1031555e-1,
    0.2282967e-1,
    -0.2895312e-1,
    0.1787654e-1,
    -0.420059e-2,
];

/// torch's `_eval_poly`: Horner's rule on the coefficients (lowest order first).
fn eval_poly(y: &Tensor, coef: &[f64]) -> Result<Tensor> {
    let (last, rest) = coef.split_last().ok_or_else(|| Error::msg("empty polynomial"))?;
    let mut result = y.full_like(*last)?;
    for c in rest.iter().rev() {
        result = y.mul(&result)?.add(*c)?;
    }
    Ok(result)
}

/// torch's `_log_modified_bessel_fn`: `log(I_order(x))` for `x > 0`, `order` 0 or 1, by the
/// polynomial approximations of Abramowitz & Stegun (as torch, differentiable).
pub(crate) fn log_modified_bessel_fn(x: &Tensor, order: usize) -> Result<Tensor> {
    if order > 1 {
        return Err(Error::msg(format!("order must be 0 or 1, got {order}")));
    }
    let (cs, cl): (&[f64], &[f64]) =
        if order == 0 { (&I0_COEF_SMALL, &I0_COEF_LARGE) } else { (&I1_COEF_SMALL, &I1_COEF_LARGE) };
    let y = x.div(3.75)?.square()?;
    let mut small = eval_poly(&y, cs)?;
    if order == 1 {
        small = x.abs()?.mul(&small)?;
    }
    let small = small.log()?;
    let y = x.reciprocal()?.mul(3.75)?;
    let large = x.sub(&x.log()?.mul(0.5)?)?.add(&eval_poly(&y, cl)?.log()?)?;
    Tensor::where_cond(&x.lt(3.75)?, &small, &large)
}

/// The circular von Mises distribution (torch's `VonMises`); `loc` and values are angles in
/// radians, samples lie in `[-π, π)` (Best & Fisher's rejection sampler, in float64 as torch's).
#[derive(Clone)]
pub struct VonMises {
    /// The mean direction.
    pub loc: Tensor,
    /// The concentration `κ`.
    pub concentration: Tensor,
    validate: bool,
}

impl VonMises {
    /// `VonMises(loc, concentration)`, validated by default.
    pub fn new(loc: &Tensor, concentration: &Tensor) -> Result<Self> {
        Self::with_validate_args(loc, concentration, None)
    }

    /// `VonMises(loc, concentration, validate_args=validate_args)`.
    pub fn with_validate_args(
        loc: &Tensor,
        concentration: &Tensor,
        validate_args: Option<bool>,
    ) -> Result<Self> {
        let b = broadcast_all(&[loc, concentration])?;
        let d = VonMises {
            loc: b[0].clone(),
            concentration: b[1].clone(),
            validate: resolve_validate(validate_args),
        };
        if d.validate {
            check_params(
                "VonMises",
                &d.params(),
                &[("loc", &d.loc, Constraint::Real), ("concentration", &d.concentration, POSITIVE)],
            )?;
        }
        Ok(d)
    }
}

impl Distribution for VonMises {
    common!("VonMises", loc);
    fn params(&self) -> Vec<(&'static str, Tensor)> {
        vec![("loc", self.loc.clone()), ("concentration", self.concentration.clone())]
    }
    fn support(&self) -> Constraint {
        Constraint::Real
    }
    fn sample_with(&self, sample_shape: &[usize], generator: Option<&Generator>) -> Result<Tensor> {
        let shape = self.extended_shape(sample_shape);
        let n: usize = shape.iter().product();
        let loc =
            self.loc.detach().to_dtype(DType::F64)?.expand(shape.clone())?.contiguous()?.to_f64_vec()?;
        let kappa = self
            .concentration
            .detach()
            .to_dtype(DType::F64)?
            .expand(shape.clone())?
            .contiguous()?
            .to_f64_vec()?;
        let r: Vec<f64> = kappa
            .iter()
            .map(|&k| {
                if k < 1e-5 {
                    1.0 / k + k
                } else {
                    let tau = 1.0 + (1.0 + 4.0 * k * k).sqrt();
                    let rho = (tau - (2.0 * tau).sqrt()) / (2.0 * k);
                    (1.0 + rho * rho) / (2.0 * rho)
                }
            })
            .collect();
        let mut x = vec![0.0f64; n];
        let mut done = vec![false; n];
        while done.iter().any(|d| !d) {
            let u = Tensor::rand_with([3, n], DType::F64, generator)?.to_f64_vec()?;
            for i in 0..n {
                let (u1, u2, u3) = (u[i], u[n + i], u[2 * n + i]);
                let z = (PI * u1).cos();
                let f = (1.0 + r[i] * z) / (r[i] + z);
                let c = kappa[i] * (r[i] - f);
                let accept = (c * (2.0 - c) - u2) > 0.0 || ((c / u2).ln() + 1.0 - c) >= 0.0;
                if accept {
                    let s = u3 - 0.5;
                    let sign = if s > 0.0 {
                        1.0
                    } else if s < 0.0 {
                        -1.0
                    } else {
                        0.0
                    };
                    x[i] = sign * f.acos();
                    done[i] = true;
                }
            }
        }
        let out: Vec<f64> =
            x.iter().zip(&loc).map(|(xi, li)| (xi + PI + li).rem_euclid(2.0 * PI) - PI).collect();
        Tensor::from_vec(out, shape)?.to_dtype(self.loc.dtype())
    }
    fn log_prob(&self, value: &Tensor) -> Result<Tensor> {
        validate_sample(self, value)?;
        let lp = self.concentration.mul(&value.sub(&self.loc)?.cos()?)?;
        lp.sub((2.0 * PI).ln())?.sub(&log_modified_bessel_fn(&self.concentration, 0)?)
    }
    fn mean(&self) -> Result<Tensor> {
        Ok(self.loc.clone())
    }
    fn mode(&self) -> Result<Tensor> {
        Ok(self.loc.clone())
    }
    /// The circular variance `1 - I₁(κ) / I₀(κ)`.
    fn variance(&self) -> Result<Tensor> {
        let k = &self.concentration;
        log_modified_bessel_fn(k, 1)?.sub(&log_modified_bessel_fn(k, 0)?)?.exp()?.rsub(1.0)
    }
}
