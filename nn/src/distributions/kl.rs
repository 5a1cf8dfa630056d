//! `torch.distributions.kl_divergence` for the common pairs, with torch's formulas (kl.py).

use oxtorch_tensor::linalg::solve_triangular;
use oxtorch_tensor::{Error, Result, Tensor};

use super::multivariate_normal::batch_mahalanobis;
use super::{
    broadcast_shapes, sum_rightmost, Bernoulli, Beta, Binomial, Categorical, Dirichlet, Distribution,
    Exponential, Gamma, Independent, Laplace, MultivariateNormal, Normal, OneHotCategorical, Poisson,
    Uniform,
};

/// `torch.distributions.kl_divergence(p, q)`: `KL(p ‖ q)` of shape `batch_shape`, for both
/// distributions of one of the types Normal, Bernoulli, Categorical, OneHotCategorical, Uniform,
/// Exponential, Laplace, Gamma, Beta, Dirichlet, Poisson, MultivariateNormal, Independent; other
/// pairs are torch's `NotImplementedError`.
pub fn kl_divergence(p: &dyn Distribution, q: &dyn Distribution) -> Result<Tensor> {
    let (pa, qa) = (p.as_any(), q.as_any());
    macro_rules! pair {
        ($t:ty, $f:ident) => {
            if let (Some(p), Some(q)) = (pa.downcast_ref::<$t>(), qa.downcast_ref::<$t>()) {
                return $f(p, q);
            }
        };
    }
    pair!(Normal, kl_normal_normal);
    pair!(Bernoulli, kl_bernoulli_bernoulli);
    pair!(Binomial, kl_binomial_binomial);
    pair!(Categorical, kl_categorical_categorical);
    pair!(OneHotCategorical, kl_onehot_onehot);
    pair!(Uniform, kl_uniform_uniform);
    pair!(Exponential, kl_exponential_exponential);
    pair!(Laplace, kl_laplace_laplace);
    pair!(Gamma, kl_gamma_gamma);
    pair!(Beta, kl_beta_beta);
    pair!(Dirichlet, kl_dirichlet_dirichlet);
    pair!(Poisson, kl_poisson_poisson);
    pair!(MultivariateNormal, kl_mvn_mvn);
    pair!(Independent, kl_independent_independent);
    Err(not_implemented(p, q))
}

fn not_implemented(p: &dyn Distribution, q: &dyn Distribution) -> Error {
    Error::msg(format!(
        "NotImplementedError: No KL(p || q) is implemented for p type {} and q type {}",
        p.name(),
        q.name()
    ))
}

fn kl_normal_normal(p: &Normal, q: &Normal) -> Result<Tensor> {
    let var_ratio = p.scale.div(&q.scale)?.square()?;
    let t1 = p.loc.sub(&q.loc)?.div(&q.scale)?.square()?;
    var_ratio.add(&t1)?.sub(1.0)?.sub(&var_ratio.log()?)?.mul(0.5)
}

/// torch's `_kl_binomial_binomial`: `n (p (lp - lq) + log(1 - p) - log(1 - q))`, infinite where
/// `p` has more trials than `q` (fewer is torch's `NotImplementedError`).
fn kl_binomial_binomial(p: &Binomial, q: &Binomial) -> Result<Tensor> {
    if p.total_count.lt(&q.total_count)?.any()?.item::<bool>()? {
        return Err(Error::msg(
            "NotImplementedError: KL between Binomials where q.total_count > p.total_count is not implemented",
        ));
    }
    let kl = p.total_count.mul(
        &p.probs
            .mul(&p.logits.sub(&q.logits)?)?
            .add(&p.probs.neg()?.log1p()?)?
            .sub(&q.probs.neg()?.log1p()?)?,
    )?;
    let more = p.total_count.gt(&q.total_count)?;
    let more = more.broadcast_to(kl.dims())?;
    kl.masked_fill(&more, f64::INFINITY)
}

fn kl_bernoulli_bernoulli(p: &Bernoulli, q: &Bernoulli) -> Result<Tensor> {
    let sp = |x: &Tensor| x.softplus(1.0, 20.0);
    let t1 = p.probs.mul(&sp(&q.logits.neg()?)?.sub(&sp(&p.logits.neg()?)?)?)?;
    let t1 = t1.masked_fill(&q.probs.eq(0.0)?, f64::INFINITY)?.masked_fill(&p.probs.eq(0.0)?, 0.0)?;
    let t2 = p.probs.rsub(1.0)?.mul(&sp(&q.logits)?.sub(&sp(&p.logits)?)?)?;
    let t2 = t2.masked_fill(&q.probs.eq(1.0)?, f64::INFINITY)?.masked_fill(&p.probs.eq(1.0)?, 0.0)?;
    t1.add(&t2)
}

fn kl_categorical_categorical(p: &Categorical, q: &Categorical) -> Result<Tensor> {
    let t = p.probs.mul(&p.logits.sub(&q.logits)?)?;
    let t = t.masked_fill(&q.probs.eq(0.0)?.expand_as(&t)?, f64::INFINITY)?;
    let t = t.masked_fill(&p.probs.eq(0.0)?.expand_as(&t)?, 0.0)?;
    t.sum(-1isize, false)
}

fn kl_onehot_onehot(p: &OneHotCategorical, q: &OneHotCategorical) -> Result<Tensor> {
    kl_categorical_categorical(&p.categorical, &q.categorical)
}

fn kl_uniform_uniform(p: &Uniform, q: &Uniform) -> Result<Tensor> {
    let result = q.high.sub(&q.low)?.div(&p.high.sub(&p.low)?)?.log()?;
    let outside = q.low.gt(&p.low)?.logical_or(&q.high.lt(&p.high)?)?;
    result.masked_fill(&outside, f64::INFINITY)
}

fn kl_exponential_exponential(p: &Exponential, q: &Exponential) -> Result<Tensor> {
    let rate_ratio = q.rate.div(&p.rate)?;
    rate_ratio.log()?.neg()?.add(&rate_ratio)?.sub(1.0)
}

fn kl_laplace_laplace(p: &Laplace, q: &Laplace) -> Result<Tensor> {
    let scale_ratio = p.scale.div(&q.scale)?;
    let loc_abs_diff = p.loc.sub(&q.loc)?.abs()?;
    let t1 = scale_ratio.log()?.neg()?;
    let t2 = loc_abs_diff.div(&q.scale)?;
    let t3 = scale_ratio.mul(&loc_abs_diff.neg()?.div(&p.scale)?.exp()?)?;
    t1.add(&t2)?.add(&t3)?.sub(1.0)
}

fn kl_gamma_gamma(p: &Gamma, q: &Gamma) -> Result<Tensor> {
    let t1 = q.concentration.mul(&p.rate.div(&q.rate)?.log()?)?;
    let t2 = q.concentration.lgamma()?.sub(&p.concentration.lgamma()?)?;
    let t3 = p.concentration.sub(&q.concentration)?.mul(&p.concentration.digamma()?)?;
    let t4 = q.rate.sub(&p.rate)?.mul(&p.concentration.div(&p.rate)?)?;
    t1.add(&t2)?.add(&t3)?.add(&t4)
}

fn kl_beta_beta(p: &Beta, q: &Beta) -> Result<Tensor> {
    let (p1, p0, q1, q0) = (&p.concentration1, &p.concentration0, &q.concentration1, &q.concentration0);
    let sum_p = p1.add(p0)?;
    let sum_q = q1.add(q0)?;
    let t1 = q1.lgamma()?.add(&q0.lgamma()?)?.add(&sum_p.lgamma()?)?;
    let t2 = p1.lgamma()?.add(&p0.lgamma()?)?.add(&sum_q.lgamma()?)?;
    let t3 = p1.sub(q1)?.mul(&p1.digamma()?)?;
    let t4 = p0.sub(q0)?.mul(&p0.digamma()?)?;
    let t5 = sum_q.sub(&sum_p)?.mul(&sum_p.digamma()?)?;
    t1.sub(&t2)?.add(&t3)?.add(&t4)?.add(&t5)
}

fn kl_dirichlet_dirichlet(p: &Dirichlet, q: &Dirichlet) -> Result<Tensor> {
    let (pc, qc) = (&p.concentration, &q.concentration);
    let sum_p = pc.sum(-1isize, false)?;
    let sum_q = qc.sum(-1isize, false)?;
    let t1 = sum_p.lgamma()?.sub(&sum_q.lgamma()?)?;
    let t2 = pc.lgamma()?.sub(&qc.lgamma()?)?.sum(-1isize, false)?;
    let t3 = pc.sub(qc)?;
    let t4 = pc.digamma()?.sub(&sum_p.digamma()?.unsqueeze(-1)?)?;
    t1.sub(&t2)?.add(&t3.mul(&t4)?.sum(-1isize, false)?)
}

fn kl_poisson_poisson(p: &Poisson, q: &Poisson) -> Result<Tensor> {
    p.rate.mul(&p.rate.log()?.sub(&q.rate.log()?)?)?.sub(&p.rate.sub(&q.rate)?)
}

fn kl_mvn_mvn(p: &MultivariateNormal, q: &MultivariateNormal) -> Result<Tensor> {
    if p.event_shape() != q.event_shape() {
        return Err(Error::msg(
            "KL-divergence between two Multivariate Normals with different event shapes cannot be computed",
        ));
    }
    let (pl, ql) = (&p.unbroadcasted_scale_tril, &q.unbroadcasted_scale_tril);
    let log_det = |l: &Tensor| l.diagonal(0, -2, -1)?.log()?.sum(-1isize, false);
    let half_term1 = log_det(ql)?.sub(&log_det(pl)?)?;
    let (pd, qd) = (pl.dims(), ql.dims());
    let mut combined = broadcast_shapes(&qd[..qd.len() - 2], &pd[..pd.len() - 2])?;
    let n = p.event_shape()[0];
    combined.extend([n, n]);
    let sol = solve_triangular(&ql.expand(combined.clone())?, &pl.expand(combined)?, false, true, false)?;
    let term2 = sol.square()?.sum([-2isize, -1], false)?;
    let term3 = batch_mahalanobis(ql, &q.loc.sub(&p.loc)?)?;
    half_term1.add(&term2.add(&term3)?.sub(n as f64)?.mul(0.5)?)
}

fn kl_independent_independent(p: &Independent, q: &Independent) -> Result<Tensor> {
    if p.reinterpreted_batch_ndims != q.reinterpreted_batch_ndims {
        return Err(Error::msg("NotImplementedError"));
    }
    let result = kl_divergence(p.base_dist.as_ref(), q.base_dist.as_ref())?;
    sum_rightmost(&result, p.reinterpreted_batch_ndims)
}
