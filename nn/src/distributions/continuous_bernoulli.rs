//! `ContinuousBernoulli` with torch's formulas (Taylor expansions near `probs = 0.5`).

use std::any::Any;

use oxtorch_tensor::{Error, Generator, Result, Tensor};

use super::common_methods::common;
use super::{
    check_params, clamp_probs, like, resolve_validate, validate_sample, Constraint, Distribution,
    UNIT_INTERVAL,
};

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
