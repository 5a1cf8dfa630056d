//! `Cauchy`, `HalfNormal`, `HalfCauchy`, `StudentT`, `Chi2`, `Geometric` and `NegativeBinomial`
//! with torch's formulas.

use std::any::Any;
use std::f64::consts::{LN_2, PI};
use std::sync::Arc;

use oxtorch_tensor::{Error, Generator, Result, Tensor};

use super::{
    broadcast_all, check_params, clamp_probs, finfo_tiny, like, resolve_validate, validate_sample,
    Constraint, Distribution, Gamma, Normal, NONNEGATIVE, POSITIVE, UNIT_INTERVAL,
};

/// The Cauchy distribution (torch's `Cauchy`); `rsample` is `loc + tan(π(u - ½)) * scale`.
#[derive(Clone)]
pub struct Cauchy {
    /// The median.
    pub loc: Tensor,
    /// The half width at half maximum.
    pub scale: Tensor,
    validate: bool,
}

impl Cauchy {
    /// `Cauchy(loc, scale)`, validated by default.
    pub fn new(loc: &Tensor, scale: &Tensor) -> Result<Self> {
        Self::with_validate_args(loc, scale, None)
    }

    /// `Cauchy(loc, scale, validate_args=validate_args)`.
    pub fn with_validate_args(loc: &Tensor, scale: &Tensor, validate_args: Option<bool>) -> Result<Self> {
        let b = broadcast_all(&[loc, scale])?;
        let d = Cauchy { loc: b[0].clone(), scale: b[1].clone(), validate: resolve_validate(validate_args) };
        if d.validate {
            check_params(
                "Cauchy",
                &d.params(),
                &[("loc", &d.loc, Constraint::Real), ("scale", &d.scale, POSITIVE)],
            )?;
        }
        Ok(d)
    }
}

impl Distribution for Cauchy {
    fn name(&self) -> &'static str {
        "Cauchy"
    }
    fn batch_shape(&self) -> Vec<usize> {
        self.loc.dims().to_vec()
    }
    fn params(&self) -> Vec<(&'static str, Tensor)> {
        vec![("loc", self.loc.clone()), ("scale", self.scale.clone())]
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
    fn expand(&self, batch_shape: &[usize]) -> Result<Arc<dyn Distribution>> {
        Ok(Arc::new(Cauchy {
            loc: self.loc.expand(batch_shape)?,
            scale: self.scale.expand(batch_shape)?,
            validate: self.validate,
        }))
    }
    fn sample_with(&self, sample_shape: &[usize], generator: Option<&Generator>) -> Result<Tensor> {
        Ok(self.rsample_with(sample_shape, generator)?.detach())
    }
    fn has_rsample(&self) -> bool {
        true
    }
    fn rsample_with(&self, sample_shape: &[usize], generator: Option<&Generator>) -> Result<Tensor> {
        let u = Tensor::rand_with(self.extended_shape(sample_shape), like(&self.loc), generator)?;
        let eps = u.sub(0.5)?.mul(PI)?.tan()?;
        self.loc.add(&eps.mul(&self.scale)?)
    }
    fn log_prob(&self, value: &Tensor) -> Result<Tensor> {
        validate_sample(self, value)?;
        let z = value.sub(&self.loc)?.div(&self.scale)?;
        self.scale.log()?.neg()?.sub(PI.ln())?.sub(&z.square()?.log1p()?)
    }
    fn entropy(&self) -> Result<Tensor> {
        self.scale.log()?.add((4.0 * PI).ln())
    }
    fn mean(&self) -> Result<Tensor> {
        self.loc.full_like(f64::NAN)
    }
    fn mode(&self) -> Result<Tensor> {
        Ok(self.loc.clone())
    }
    fn variance(&self) -> Result<Tensor> {
        self.loc.full_like(f64::INFINITY)
    }
    fn cdf(&self, value: &Tensor) -> Result<Tensor> {
        validate_sample(self, value)?;
        value.sub(&self.loc)?.div(&self.scale)?.atan()?.div(PI)?.add(0.5)
    }
    fn icdf(&self, value: &Tensor) -> Result<Tensor> {
        value.sub(0.5)?.mul(PI)?.tan()?.mul(&self.scale)?.add(&self.loc)
    }
}

/// A distribution folded at zero: `|X|` for a symmetric `X` around 0 (torch's `HalfNormal` and
/// `HalfCauchy` formulas over their base).
fn folded_log_prob(base_lp: Tensor, value: &Tensor) -> Result<Tensor> {
    let lp = base_lp.add(LN_2)?;
    Tensor::where_cond(&value.ge(0.0)?, &lp, f64::NEG_INFINITY)
}

/// The half-normal distribution `|N(0, scale²)|` (torch's `HalfNormal`).
#[derive(Clone)]
pub struct HalfNormal {
    /// The scale of the base normal.
    pub scale: Tensor,
    base: Normal,
}

impl HalfNormal {
    /// `HalfNormal(scale)`, validated by default.
    pub fn new(scale: &Tensor) -> Result<Self> {
        Self::with_validate_args(scale, None)
    }

    /// `HalfNormal(scale, validate_args=validate_args)`.
    pub fn with_validate_args(scale: &Tensor, validate_args: Option<bool>) -> Result<Self> {
        let base = Normal::with_validate_args(&scale.detach().zeros_like()?, scale, validate_args)?;
        Ok(HalfNormal { scale: base.scale.clone(), base })
    }
}

impl Distribution for HalfNormal {
    fn name(&self) -> &'static str {
        "HalfNormal"
    }
    fn batch_shape(&self) -> Vec<usize> {
        self.scale.dims().to_vec()
    }
    fn params(&self) -> Vec<(&'static str, Tensor)> {
        vec![("scale", self.scale.clone())]
    }
    fn support(&self) -> Constraint {
        NONNEGATIVE
    }
    fn validate_args(&self) -> bool {
        self.base.validate_args()
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
    fn sample_with(&self, sample_shape: &[usize], generator: Option<&Generator>) -> Result<Tensor> {
        self.base.sample_with(sample_shape, generator)?.abs()
    }
    fn has_rsample(&self) -> bool {
        true
    }
    fn rsample_with(&self, sample_shape: &[usize], generator: Option<&Generator>) -> Result<Tensor> {
        self.base.rsample_with(sample_shape, generator)?.abs()
    }
    fn log_prob(&self, value: &Tensor) -> Result<Tensor> {
        validate_sample(self, value)?;
        folded_log_prob(self.base.log_prob(value)?, value)
    }
    fn entropy(&self) -> Result<Tensor> {
        self.base.entropy()?.sub(LN_2)
    }
    fn mean(&self) -> Result<Tensor> {
        self.scale.mul((2.0 / PI).sqrt())
    }
    fn mode(&self) -> Result<Tensor> {
        self.scale.zeros_like()
    }
    fn variance(&self) -> Result<Tensor> {
        self.scale.square()?.mul(1.0 - 2.0 / PI)
    }
    fn cdf(&self, value: &Tensor) -> Result<Tensor> {
        validate_sample(self, value)?;
        self.base.cdf(value)?.mul(2.0)?.sub(1.0)
    }
    fn icdf(&self, prob: &Tensor) -> Result<Tensor> {
        self.base.icdf(&prob.add(1.0)?.div(2.0)?)
    }
}

/// The half-Cauchy distribution `|Cauchy(0, scale)|` (torch's `HalfCauchy`).
#[derive(Clone)]
pub struct HalfCauchy {
    /// The scale of the base Cauchy.
    pub scale: Tensor,
    base: Cauchy,
}

impl HalfCauchy {
    /// `HalfCauchy(scale)`, validated by default.
    pub fn new(scale: &Tensor) -> Result<Self> {
        Self::with_validate_args(scale, None)
    }

    /// `HalfCauchy(scale, validate_args=validate_args)`.
    pub fn with_validate_args(scale: &Tensor, validate_args: Option<bool>) -> Result<Self> {
        let base = Cauchy::with_validate_args(&scale.detach().zeros_like()?, scale, validate_args)?;
        Ok(HalfCauchy { scale: base.scale.clone(), base })
    }
}

impl Distribution for HalfCauchy {
    fn name(&self) -> &'static str {
        "HalfCauchy"
    }
    fn batch_shape(&self) -> Vec<usize> {
        self.scale.dims().to_vec()
    }
    fn params(&self) -> Vec<(&'static str, Tensor)> {
        vec![("scale", self.scale.clone())]
    }
    fn support(&self) -> Constraint {
        NONNEGATIVE
    }
    fn validate_args(&self) -> bool {
        self.base.validate_args()
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
    fn sample_with(&self, sample_shape: &[usize], generator: Option<&Generator>) -> Result<Tensor> {
        self.base.sample_with(sample_shape, generator)?.abs()
    }
    fn has_rsample(&self) -> bool {
        true
    }
    fn rsample_with(&self, sample_shape: &[usize], generator: Option<&Generator>) -> Result<Tensor> {
        self.base.rsample_with(sample_shape, generator)?.abs()
    }
    fn log_prob(&self, value: &Tensor) -> Result<Tensor> {
        validate_sample(self, value)?;
        folded_log_prob(self.base.log_prob(value)?, value)
    }
    fn entropy(&self) -> Result<Tensor> {
        self.base.entropy()?.sub(LN_2)
    }
    fn mean(&self) -> Result<Tensor> {
        self.scale.full_like(f64::INFINITY)
    }
    fn mode(&self) -> Result<Tensor> {
        self.scale.zeros_like()
    }
    fn variance(&self) -> Result<Tensor> {
        self.scale.full_like(f64::INFINITY)
    }
    fn cdf(&self, value: &Tensor) -> Result<Tensor> {
        validate_sample(self, value)?;
        self.base.cdf(value)?.mul(2.0)?.sub(1.0)
    }
    fn icdf(&self, prob: &Tensor) -> Result<Tensor> {
        self.base.icdf(&prob.add(1.0)?.div(2.0)?)
    }
}

/// The chi-squared distribution `Gamma(df / 2, 1 / 2)` (torch's `Chi2`).
#[derive(Clone)]
pub struct Chi2 {
    /// The degrees of freedom.
    pub df: Tensor,
    gamma: Gamma,
}

impl Chi2 {
    /// `Chi2(df)`, validated by default.
    pub fn new(df: &Tensor) -> Result<Self> {
        Self::with_validate_args(df, None)
    }

    /// `Chi2(df, validate_args=validate_args)`.
    pub fn with_validate_args(df: &Tensor, validate_args: Option<bool>) -> Result<Self> {
        let validate = resolve_validate(validate_args);
        let conc = df.mul(0.5)?;
        let half = conc.detach().full_like(0.5)?;
        let gamma = Gamma::with_validate_args(&conc, &half, Some(false))?;
        if validate {
            check_params(
                "Chi2",
                &[("df", df.clone())],
                &[("concentration", &gamma.concentration, POSITIVE)],
            )?;
        }
        let gamma = Gamma::with_validate_args(&gamma.concentration, &gamma.rate, Some(validate))?;
        Ok(Chi2 { df: df.clone(), gamma })
    }

    /// The underlying `Gamma(df / 2, 1 / 2)`.
    pub fn as_gamma(&self) -> &Gamma {
        &self.gamma
    }
}

impl Distribution for Chi2 {
    fn name(&self) -> &'static str {
        "Chi2"
    }
    fn batch_shape(&self) -> Vec<usize> {
        self.gamma.batch_shape()
    }
    fn params(&self) -> Vec<(&'static str, Tensor)> {
        vec![("df", self.df.clone())]
    }
    fn support(&self) -> Constraint {
        NONNEGATIVE
    }
    fn validate_args(&self) -> bool {
        self.gamma.validate_args()
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
    fn sample_with(&self, sample_shape: &[usize], generator: Option<&Generator>) -> Result<Tensor> {
        self.gamma.sample_with(sample_shape, generator)
    }
    fn has_rsample(&self) -> bool {
        self.gamma.has_rsample()
    }
    fn rsample_with(&self, sample_shape: &[usize], generator: Option<&Generator>) -> Result<Tensor> {
        self.gamma.rsample_with(sample_shape, generator)
    }
    fn log_prob(&self, value: &Tensor) -> Result<Tensor> {
        validate_sample(self, value)?;
        self.gamma.log_prob(value)
    }
    fn entropy(&self) -> Result<Tensor> {
        self.gamma.entropy()
    }
    fn mean(&self) -> Result<Tensor> {
        self.gamma.mean()
    }
    fn mode(&self) -> Result<Tensor> {
        self.gamma.mode()
    }
    fn variance(&self) -> Result<Tensor> {
        self.gamma.variance()
    }
    fn cdf(&self, value: &Tensor) -> Result<Tensor> {
        self.gamma.cdf(value)
    }
}

/// Student's t distribution (torch's `StudentT`).
#[derive(Clone)]
pub struct StudentT {
    /// The degrees of freedom.
    pub df: Tensor,
    /// The location.
    pub loc: Tensor,
    /// The scale.
    pub scale: Tensor,
    validate: bool,
}

impl StudentT {
    /// `StudentT(df, loc, scale)`, validated by default.
    pub fn new(df: &Tensor, loc: &Tensor, scale: &Tensor) -> Result<Self> {
        Self::with_validate_args(df, loc, scale, None)
    }

    /// `StudentT(df, loc, scale, validate_args=validate_args)`.
    pub fn with_validate_args(
        df: &Tensor,
        loc: &Tensor,
        scale: &Tensor,
        validate_args: Option<bool>,
    ) -> Result<Self> {
        let b = broadcast_all(&[df, loc, scale])?;
        let d = StudentT {
            df: b[0].clone(),
            loc: b[1].clone(),
            scale: b[2].clone(),
            validate: resolve_validate(validate_args),
        };
        if d.validate {
            check_params(
                "StudentT",
                &d.params(),
                &[("df", &d.df, POSITIVE), ("loc", &d.loc, Constraint::Real), ("scale", &d.scale, POSITIVE)],
            )?;
        }
        Ok(d)
    }
}

impl Distribution for StudentT {
    fn name(&self) -> &'static str {
        "StudentT"
    }
    fn batch_shape(&self) -> Vec<usize> {
        self.df.dims().to_vec()
    }
    fn params(&self) -> Vec<(&'static str, Tensor)> {
        vec![("df", self.df.clone()), ("loc", self.loc.clone()), ("scale", self.scale.clone())]
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
    fn expand(&self, batch_shape: &[usize]) -> Result<Arc<dyn Distribution>> {
        Ok(Arc::new(StudentT {
            df: self.df.expand(batch_shape)?,
            loc: self.loc.expand(batch_shape)?,
            scale: self.scale.expand(batch_shape)?,
            validate: self.validate,
        }))
    }
    fn sample_with(&self, sample_shape: &[usize], generator: Option<&Generator>) -> Result<Tensor> {
        Ok(self.rsample_with(sample_shape, generator)?.detach())
    }
    fn has_rsample(&self) -> bool {
        true
    }
    /// torch's: `loc + scale · X · rsqrt(Z / df)` with `X` standard normal and `Z` a
    /// reparameterized `Chi2(df)` draw, differentiable in `df`, `loc` and `scale`.
    fn rsample_with(&self, sample_shape: &[usize], generator: Option<&Generator>) -> Result<Tensor> {
        let shape = self.extended_shape(sample_shape);
        let x = Tensor::randn_with(shape.clone(), like(&self.loc), generator)?;
        let chi2 = Chi2::with_validate_args(&self.df, Some(false))?;
        let z = chi2.rsample_with(sample_shape, generator)?;
        let y = x.mul(&z.div(&self.df)?.rsqrt()?)?;
        self.loc.add(&self.scale.mul(&y)?)
    }
    fn log_prob(&self, value: &Tensor) -> Result<Tensor> {
        validate_sample(self, value)?;
        let df = &self.df;
        let y = value.sub(&self.loc)?.div(&self.scale)?;
        let z = self
            .scale
            .log()?
            .add(&df.log()?.mul(0.5)?)?
            .add(0.5 * PI.ln())?
            .add(&df.mul(0.5)?.lgamma()?)?
            .sub(&df.add(1.0)?.mul(0.5)?.lgamma()?)?;
        df.add(1.0)?.mul(-0.5)?.mul(&y.square()?.div(df)?.log1p()?)?.sub(&z)
    }
    fn entropy(&self) -> Result<Tensor> {
        let df = &self.df;
        let half = df.mul(0.5)?;
        let half1 = df.add(1.0)?.mul(0.5)?;
        // lgamma(0.5) = ln(sqrt(pi))
        let lbeta = half.lgamma()?.add(0.5 * PI.ln())?.sub(&half1.lgamma()?)?;
        self.scale
            .log()?
            .add(&df.add(1.0)?.mul(0.5)?.mul(&half1.digamma()?.sub(&half.digamma()?)?)?)?
            .add(&df.log()?.mul(0.5)?)?
            .add(&lbeta)
    }
    fn mean(&self) -> Result<Tensor> {
        Tensor::where_cond(&self.df.le(1.0)?, f64::NAN, &self.loc)
    }
    fn mode(&self) -> Result<Tensor> {
        Ok(self.loc.clone())
    }
    fn variance(&self) -> Result<Tensor> {
        let df = &self.df;
        let big = self.scale.square()?.mul(df)?.div(&df.sub(2.0)?)?;
        let mid = Tensor::where_cond(&df.gt(1.0)?, &df.full_like(f64::INFINITY)?, &df.full_like(f64::NAN)?)?;
        Tensor::where_cond(&df.gt(2.0)?, &big, &mid)
    }
}

/// `probs` and `logits` of a binary distribution from exactly one of them (torch's
/// `probs_to_logits(is_binary=True)` / `logits_to_probs(is_binary=True)`).
fn binary_params(probs: Option<&Tensor>, logits: Option<&Tensor>) -> Result<(Tensor, Tensor, bool)> {
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

/// The negative binomial distribution: successes before `total_count` failures, each trial
/// succeeding with `probs` (torch's `NegativeBinomial`).
#[derive(Clone)]
pub struct NegativeBinomial {
    /// The number of failures to stop at.
    pub total_count: Tensor,
    /// The success probability.
    pub probs: Tensor,
    /// The log-odds of success.
    pub logits: Tensor,
    by_logits: bool,
    validate: bool,
}

impl NegativeBinomial {
    /// `NegativeBinomial(total_count, probs=probs)`.
    pub fn from_probs(total_count: &Tensor, probs: &Tensor) -> Result<Self> {
        Self::with_validate_args(total_count, Some(probs), None, None)
    }

    /// `NegativeBinomial(total_count, logits=logits)`.
    pub fn from_logits(total_count: &Tensor, logits: &Tensor) -> Result<Self> {
        Self::with_validate_args(total_count, None, Some(logits), None)
    }

    /// `NegativeBinomial(total_count, probs, logits, validate_args)`.
    pub fn with_validate_args(
        total_count: &Tensor,
        probs: Option<&Tensor>,
        logits: Option<&Tensor>,
        validate_args: Option<bool>,
    ) -> Result<Self> {
        let param = probs
            .or(logits)
            .ok_or_else(|| Error::msg("Either `probs` or `logits` must be specified, but not both."))?;
        let b = broadcast_all(&[total_count, param])?;
        let tc = b[0].type_as(param)?;
        let (probs, logits, by_logits) = match (probs, logits) {
            (Some(_), None) => binary_params(Some(&b[1]), None)?,
            (None, Some(_)) => binary_params(None, Some(&b[1]))?,
            _ => return Err(Error::msg("Either `probs` or `logits` must be specified, but not both.")),
        };
        let validate = resolve_validate(validate_args);
        let d = NegativeBinomial { total_count: tc, probs, logits, by_logits, validate };
        if d.validate {
            let (name, v, c) = if d.by_logits {
                ("logits", &d.logits, Constraint::Real)
            } else {
                ("probs", &d.probs, Constraint::HalfOpenInterval(0.0, 1.0))
            };
            check_params(
                "NegativeBinomial",
                &d.params(),
                &[("total_count", &d.total_count, NONNEGATIVE), (name, v, c)],
            )?;
        }
        Ok(d)
    }
}

impl Distribution for NegativeBinomial {
    fn name(&self) -> &'static str {
        "NegativeBinomial"
    }
    fn batch_shape(&self) -> Vec<usize> {
        self.probs.dims().to_vec()
    }
    fn params(&self) -> Vec<(&'static str, Tensor)> {
        let p = if self.by_logits { ("logits", self.logits.clone()) } else { ("probs", self.probs.clone()) };
        vec![("total_count", self.total_count.clone()), p]
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
        Ok(Arc::new(NegativeBinomial {
            total_count: self.total_count.expand(batch_shape)?,
            probs: self.probs.expand(batch_shape)?,
            logits: self.logits.expand(batch_shape)?,
            by_logits: self.by_logits,
            validate: self.validate,
        }))
    }
    /// torch's Gamma–Poisson mixture: `poisson(Gamma(total_count, exp(-logits)).sample())`.
    fn sample_with(&self, sample_shape: &[usize], generator: Option<&Generator>) -> Result<Tensor> {
        let rate = self.logits.detach().neg()?.exp()?;
        let gamma = Gamma::with_validate_args(&self.total_count.detach(), &rate, Some(false))?;
        gamma.sample_with(sample_shape, generator)?.poisson_with(generator)
    }
    fn log_prob(&self, value: &Tensor) -> Result<Tensor> {
        validate_sample(self, value)?;
        let (tc, l) = (&self.total_count, &self.logits);
        // logsigmoid(x) = -softplus(-x)
        let ls_neg = l.softplus(1.0, 20.0)?.neg()?;
        let ls_pos = l.neg()?.softplus(1.0, 20.0)?.neg()?;
        let unnorm = tc.mul(&ls_neg)?.add(&value.mul(&ls_pos)?)?;
        let norm = tc.add(value)?.lgamma()?.neg()?.add(&value.add(1.0)?.lgamma()?)?.add(&tc.lgamma()?)?;
        let norm = Tensor::where_cond(&tc.add(value)?.eq(0.0)?, 0.0, &norm)?;
        unnorm.sub(&norm)
    }
    fn mean(&self) -> Result<Tensor> {
        self.total_count.mul(&self.logits.exp()?)
    }
    fn mode(&self) -> Result<Tensor> {
        self.total_count.sub(1.0)?.mul(&self.logits.exp()?)?.floor()?.clamp_min(0.0)
    }
    fn variance(&self) -> Result<Tensor> {
        self.mean()?.div(&self.logits.neg()?.sigmoid()?)
    }
}
