//! `torch.distributions.kl_divergence` for the common pairs, with torch's formulas (kl.py).

use std::any::Any;
use std::f64::consts::PI;

use oxtorch_tensor::linalg::solve_triangular;
use oxtorch_tensor::{Error, Result, Tensor};

use super::continuous_bernoulli::ContinuousBernoulli;
use super::gumbel::Gumbel;
use super::inverse_gamma::InverseGamma;
use super::lowrank_mvn::{
    batch_lowrank_logdet, batch_lowrank_mahalanobis, wt_dinv, LowRankMultivariateNormal,
};
use super::multivariate_normal::batch_mahalanobis;
use super::pareto::Pareto;
use super::{
    broadcast_shapes, sum_rightmost, Bernoulli, Beta, Binomial, Categorical, Cauchy, Chi2, Dirichlet,
    Distribution, Exponential, Gamma, Geometric, HalfNormal, Independent, Laplace, LogNormal,
    MultivariateNormal, Normal, OneHotCategorical, Poisson, Uniform,
};

/// `torch.distributions.kl_divergence(p, q)`: `KL(p ‖ q)` of shape `batch_shape`, for both
/// distributions of one of the types Normal, Bernoulli, Categorical, OneHotCategorical, Uniform,
/// Exponential, Laplace, Gamma, Beta, Dirichlet, Poisson, MultivariateNormal, Independent,
/// ContinuousBernoulli, Gumbel, Geometric, HalfNormal, Pareto, Cauchy, LowRankMultivariateNormal,
/// and torch's registered cross-type pairs among these (kl.py); a `Chi2` dispatches as the
/// `Gamma` it subclasses in torch, and `InverseGamma`/`LogNormal` pairs (equal transforms) are
/// the KL of their base distributions (torch's `_kl_transformed_transformed`); other pairs are
/// torch's `NotImplementedError`.
pub fn kl_divergence(p: &dyn Distribution, q: &dyn Distribution) -> Result<Tensor> {
    let (pa, qa) = (gamma_view(p), gamma_view(q));
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
    pair!(ContinuousBernoulli, kl_cb_cb);
    pair!(Gumbel, kl_gumbel_gumbel);
    pair!(Geometric, kl_geometric_geometric);
    pair!(HalfNormal, kl_halfnormal_halfnormal);
    pair!(Pareto, kl_pareto_pareto);
    pair!(Cauchy, kl_cauchy_cauchy);
    pair!(LowRankMultivariateNormal, kl_lowrank_lowrank);
    // (torch's `_kl_transformed_transformed`: equal transforms, the KL of the bases)
    if let (Some(p), Some(q)) = (pa.downcast_ref::<InverseGamma>(), qa.downcast_ref::<InverseGamma>()) {
        return kl_gamma_gamma(&p.base, &q.base);
    }
    if let (Some(p), Some(q)) = (pa.downcast_ref::<LogNormal>(), qa.downcast_ref::<LogNormal>()) {
        return kl_normal_params((&p.loc, &p.scale), (&q.loc, &q.scale));
    }
    macro_rules! cross {
        ($p:ty, $q:ty, $f:ident) => {
            if let (Some(p), Some(q)) = (pa.downcast_ref::<$p>(), qa.downcast_ref::<$q>()) {
                return $f(p, q);
            }
        };
    }
    // (torch's `_infinite_like(p.<param>)` for pairs whose supports make the KL infinite)
    macro_rules! infinite {
        ($p:ty, [$($q:ty),*], $param:ident) => {
            if let Some(p) = pa.downcast_ref::<$p>() {
                $(
                    if qa.downcast_ref::<$q>().is_some() {
                        return p.$param.full_like(f64::INFINITY);
                    }
                )*
            }
        };
    }
    cross!(MultivariateNormal, LowRankMultivariateNormal, kl_mvn_lowrank);
    cross!(LowRankMultivariateNormal, MultivariateNormal, kl_lowrank_mvn);
    cross!(Bernoulli, Poisson, kl_bernoulli_poisson);
    cross!(Beta, ContinuousBernoulli, kl_beta_cb);
    cross!(Beta, Exponential, kl_beta_exponential);
    cross!(Beta, Gamma, kl_beta_gamma);
    cross!(Beta, Normal, kl_beta_normal);
    cross!(Beta, Uniform, kl_beta_uniform);
    infinite!(Beta, [Pareto], concentration1);
    cross!(ContinuousBernoulli, Exponential, kl_cb_exponential);
    cross!(ContinuousBernoulli, Normal, kl_cb_normal);
    cross!(ContinuousBernoulli, Uniform, kl_cb_uniform);
    infinite!(ContinuousBernoulli, [Pareto], probs);
    cross!(Exponential, Gamma, kl_exponential_gamma);
    cross!(Exponential, Gumbel, kl_exponential_gumbel);
    cross!(Exponential, Normal, kl_exponential_normal);
    infinite!(Exponential, [Beta, ContinuousBernoulli, Pareto, Uniform], rate);
    cross!(Gamma, Exponential, kl_gamma_exponential);
    cross!(Gamma, Gumbel, kl_gamma_gumbel);
    cross!(Gamma, Normal, kl_gamma_normal);
    infinite!(Gamma, [Beta, ContinuousBernoulli, Pareto, Uniform], concentration);
    cross!(Gumbel, Normal, kl_gumbel_normal);
    infinite!(Gumbel, [Beta, ContinuousBernoulli, Exponential, Gamma, Pareto, Uniform], loc);
    cross!(Laplace, Normal, kl_laplace_normal);
    infinite!(Laplace, [Beta, ContinuousBernoulli, Exponential, Gamma, Pareto, Uniform], loc);
    cross!(Normal, Gumbel, kl_normal_gumbel);
    cross!(Normal, Laplace, kl_normal_laplace);
    infinite!(Normal, [Beta, ContinuousBernoulli, Exponential, Gamma, Pareto, Uniform], loc);
    cross!(Pareto, Exponential, kl_pareto_exponential);
    cross!(Pareto, Gamma, kl_pareto_gamma);
    cross!(Pareto, Normal, kl_pareto_normal);
    infinite!(Pareto, [Beta, ContinuousBernoulli, Uniform], scale);
    infinite!(Poisson, [Bernoulli, Binomial], rate);
    cross!(Uniform, Beta, kl_uniform_beta);
    cross!(Uniform, ContinuousBernoulli, kl_uniform_cb);
    cross!(Uniform, Exponential, kl_uniform_exponential);
    cross!(Uniform, Gamma, kl_uniform_gamma);
    cross!(Uniform, Gumbel, kl_uniform_gumbel);
    cross!(Uniform, Normal, kl_uniform_normal);
    cross!(Uniform, Pareto, kl_uniform_pareto);
    Err(not_implemented(p, q))
}

fn not_implemented(p: &dyn Distribution, q: &dyn Distribution) -> Error {
    Error::msg(format!(
        "NotImplementedError: No KL(p || q) is implemented for p type {} and q type {}",
        p.name(),
        q.name()
    ))
}

/// `d` for the dispatch: a `Chi2` as its `Gamma` (torch's Chi2 is a Gamma subclass, so the
/// Gamma rules apply to it), any other distribution as itself.
fn gamma_view(d: &dyn Distribution) -> &dyn Any {
    match d.as_any().downcast_ref::<Chi2>() {
        Some(c) => c.as_gamma().as_any(),
        None => d.as_any(),
    }
}

fn kl_normal_normal(p: &Normal, q: &Normal) -> Result<Tensor> {
    kl_normal_params((&p.loc, &p.scale), (&q.loc, &q.scale))
}

/// `KL(Normal(p.0, p.1) ‖ Normal(q.0, q.1))` (torch's `_kl_normal_normal`).
fn kl_normal_params(p: (&Tensor, &Tensor), q: (&Tensor, &Tensor)) -> Result<Tensor> {
    let var_ratio = p.1.div(q.1)?.square()?;
    let t1 = p.0.sub(q.0)?.div(q.1)?.square()?;
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

// ---------------------------------------------------------------------------------------------
// ContinuousBernoulli, Gumbel, Geometric, HalfNormal, Pareto, Cauchy and LowRankMultivariateNormal,
// and torch's cross-type pairs.
// ---------------------------------------------------------------------------------------------

const EULER: f64 = 0.577_215_664_901_532_9;
const LN_2PI: f64 = 1.837_877_066_409_345_3;

/// torch's `_x_log_x`: `t · log t`.
fn x_log_x(t: &Tensor) -> Result<Tensor> {
    // torch's `_x_log_x` is `xlogy(x, x)`: 0 at x = 0.
    t.xlogy(t)
}

/// torch's `_batch_trace_XXT`: `trace(X Xᵀ)`, the sum of squares over the last two dims.
fn batch_trace_xxt(x: &Tensor) -> Result<Tensor> {
    x.square()?.sum([-2isize, -1], false)
}

fn kl_cb_cb(p: &ContinuousBernoulli, q: &ContinuousBernoulli) -> Result<Tensor> {
    let t1 = p.mean()?.mul(&p.logits.sub(&q.logits)?)?;
    let t2 = p.cont_bern_log_norm()?.add(&p.probs.neg()?.log1p()?)?;
    let t3 = q.cont_bern_log_norm()?.neg()?.sub(&q.probs.neg()?.log1p()?)?;
    t1.add(&t2)?.add(&t3)
}

fn kl_gumbel_gumbel(p: &Gumbel, q: &Gumbel) -> Result<Tensor> {
    let ct1 = p.scale.div(&q.scale)?;
    let ct2 = q.loc.div(&q.scale)?;
    let ct3 = p.loc.div(&q.scale)?;
    let t1 = ct1.log()?.neg()?.sub(&ct2)?.add(&ct3)?;
    let t2 = ct1.mul(EULER)?;
    let t3 = ct2.add(&ct1.add(1.0)?.lgamma()?)?.sub(&ct3)?.exp()?;
    t1.add(&t2)?.add(&t3)?.sub(1.0 + EULER)
}

fn kl_geometric_geometric(p: &Geometric, q: &Geometric) -> Result<Tensor> {
    p.entropy()?.neg()?.sub(&q.probs.neg()?.log1p()?.div(&p.probs)?)?.sub(&q.logits)
}

fn kl_halfnormal_halfnormal(p: &HalfNormal, q: &HalfNormal) -> Result<Tensor> {
    let base = |s: &Tensor| Normal::with_validate_args(&s.detach().zeros_like()?, s, Some(false));
    kl_normal_normal(&base(&p.scale)?, &base(&q.scale)?)
}

fn kl_pareto_pareto(p: &Pareto, q: &Pareto) -> Result<Tensor> {
    let scale_ratio = p.scale.div(&q.scale)?;
    let alpha_ratio = q.alpha.div(&p.alpha)?;
    let t1 = q.alpha.mul(&scale_ratio.log()?)?;
    let t2 = alpha_ratio.log()?.neg()?;
    let result = t1.add(&t2)?.add(&alpha_ratio)?.sub(1.0)?;
    result.masked_fill(&p.scale.lt(&q.scale)?, f64::INFINITY)
}

fn kl_cauchy_cauchy(p: &Cauchy, q: &Cauchy) -> Result<Tensor> {
    let t1 = p.scale.add(&q.scale)?.square()?.add(&p.loc.sub(&q.loc)?.square()?)?.log()?;
    let t2 = p.scale.mul(&q.scale)?.mul(4.0)?.log()?;
    t1.sub(&t2)
}

fn lowrank_event_check(p: &dyn Distribution, q: &dyn Distribution, what: &str) -> Result<()> {
    if p.event_shape() != q.event_shape() {
        return Err(Error::msg(format!(
            "KL-divergence between two {what} with different event shapes cannot be computed"
        )));
    }
    Ok(())
}

fn kl_lowrank_lowrank(p: &LowRankMultivariateNormal, q: &LowRankMultivariateNormal) -> Result<Tensor> {
    lowrank_event_check(p, q, "Low Rank Multivariate Normals")?;
    let (pw, pd, pc) = p.unbroadcasted();
    let (qw, qd, qc) = q.unbroadcasted();
    let term1 = batch_lowrank_logdet(qd, qc)?.sub(&batch_lowrank_logdet(pd, pc)?)?;
    let term3 = batch_lowrank_mahalanobis(qw, qd, &q.loc.sub(&p.loc)?, qc)?;
    let a = solve_triangular(qc, &wt_dinv(qw, qd)?, false, true, false)?;
    let term21 = pd.div(qd)?.sum(-1isize, false)?;
    let term22 = batch_trace_xxt(&pw.mul(&qd.rsqrt()?.unsqueeze(-1)?)?)?;
    let term23 = batch_trace_xxt(&a.mul(&pd.sqrt()?.unsqueeze(-2)?)?)?;
    let term24 = batch_trace_xxt(&a.matmul(pw)?)?;
    let term2 = term21.add(&term22)?.sub(&term23)?.sub(&term24)?;
    let n = p.event_shape()[0] as f64;
    term1.add(&term2)?.add(&term3)?.sub(n)?.mul(0.5)
}

fn kl_mvn_lowrank(p: &MultivariateNormal, q: &LowRankMultivariateNormal) -> Result<Tensor> {
    lowrank_event_check(p, q, "(Low Rank) Multivariate Normals")?;
    let (qw, qd, qc) = q.unbroadcasted();
    let pl = &p.unbroadcasted_scale_tril;
    let p_logdet = pl.diagonal(0, -2, -1)?.log()?.sum(-1isize, false)?.mul(2.0)?;
    let term1 = batch_lowrank_logdet(qd, qc)?.sub(&p_logdet)?;
    let term3 = batch_lowrank_mahalanobis(qw, qd, &q.loc.sub(&p.loc)?, qc)?;
    let a = solve_triangular(qc, &wt_dinv(qw, qd)?, false, true, false)?;
    let term21 = batch_trace_xxt(&pl.mul(&qd.rsqrt()?.unsqueeze(-1)?)?)?;
    let term22 = batch_trace_xxt(&a.matmul(pl)?)?;
    let n = p.event_shape()[0] as f64;
    term1.add(&term21.sub(&term22)?)?.add(&term3)?.sub(n)?.mul(0.5)
}

fn kl_lowrank_mvn(p: &LowRankMultivariateNormal, q: &MultivariateNormal) -> Result<Tensor> {
    lowrank_event_check(p, q, "(Low Rank) Multivariate Normals")?;
    let (pw, pd, pc) = p.unbroadcasted();
    let ql = &q.unbroadcasted_scale_tril;
    let q_logdet = ql.diagonal(0, -2, -1)?.log()?.sum(-1isize, false)?.mul(2.0)?;
    let term1 = q_logdet.sub(&batch_lowrank_logdet(pd, pc)?)?;
    let term3 = batch_mahalanobis(ql, &q.loc.sub(&p.loc)?)?;
    let (qd_, pd_) = (ql.dims(), pw.dims());
    let combined = broadcast_shapes(&qd_[..qd_.len() - 2], &pd_[..pd_.len() - 2])?;
    let n = p.event_shape()[0];
    let m = pd_[pd_.len() - 1];
    let with = |a: usize, b: usize| {
        let mut s = combined.clone();
        s.extend([a, b]);
        s
    };
    let q_tril = ql.expand(with(n, n))?;
    let p_factor = pw.expand(with(n, m))?;
    let p_diag = pd.sqrt()?.diag_embed(0, -2, -1)?.expand(with(n, n))?;
    let term21 = batch_trace_xxt(&solve_triangular(&q_tril, &p_factor, false, true, false)?)?;
    let term22 = batch_trace_xxt(&solve_triangular(&q_tril, &p_diag, false, true, false)?)?;
    term1.add(&term21.add(&term22)?)?.add(&term3)?.sub(n as f64)?.mul(0.5)
}

fn kl_bernoulli_poisson(p: &Bernoulli, q: &Poisson) -> Result<Tensor> {
    p.entropy()?.neg()?.sub(&p.probs.mul(&q.rate.log()?)?.sub(&q.rate)?)
}

fn kl_beta_cb(p: &Beta, q: &ContinuousBernoulli) -> Result<Tensor> {
    p.entropy()?
        .neg()?
        .sub(&p.mean()?.mul(&q.logits)?)?
        .sub(&q.probs.neg()?.log1p()?)?
        .sub(&q.cont_bern_log_norm()?)
}

fn kl_beta_exponential(p: &Beta, q: &Exponential) -> Result<Tensor> {
    let (a, b) = (&p.concentration1, &p.concentration0);
    p.entropy()?.neg()?.sub(&q.rate.log()?)?.add(&q.rate.mul(&a.div(&a.add(b)?)?)?)
}

fn kl_beta_gamma(p: &Beta, q: &Gamma) -> Result<Tensor> {
    let (a, b) = (&p.concentration1, &p.concentration0);
    let t1 = p.entropy()?.neg()?;
    let t2 = q.concentration.lgamma()?.sub(&q.concentration.mul(&q.rate.log()?)?)?;
    let t3 = q.concentration.sub(1.0)?.mul(&a.digamma()?.sub(&a.add(b)?.digamma()?)?)?;
    let t4 = q.rate.mul(a)?.div(&a.add(b)?)?;
    t1.add(&t2)?.sub(&t3)?.add(&t4)
}

fn kl_beta_normal(p: &Beta, q: &Normal) -> Result<Tensor> {
    let (a, b) = (&p.concentration1, &p.concentration0);
    let e_beta = a.div(&a.add(b)?)?;
    let var_normal = q.scale.square()?;
    let t1 = p.entropy()?.neg()?;
    let t2 = var_normal.mul(2.0 * PI)?.log()?.mul(0.5)?;
    let t3 = e_beta.mul(&e_beta.rsub(1.0)?)?.div(&a.add(b)?.add(1.0)?)?.add(&e_beta.square()?)?.mul(0.5)?;
    let t4 = q.loc.mul(&e_beta)?;
    let t5 = q.loc.square()?.mul(0.5)?;
    t1.add(&t2)?.add(&t3.sub(&t4)?.add(&t5)?.div(&var_normal)?)
}

fn kl_beta_uniform(p: &Beta, q: &Uniform) -> Result<Tensor> {
    let result = p.entropy()?.neg()?.add(&q.high.sub(&q.low)?.log()?)?;
    result.masked_fill(&q.low.gt(0.0)?.logical_or(&q.high.lt(1.0)?)?, f64::INFINITY)
}

fn kl_cb_exponential(p: &ContinuousBernoulli, q: &Exponential) -> Result<Tensor> {
    p.entropy()?.neg()?.sub(&q.rate.log()?)?.add(&q.rate.mul(&p.mean()?)?)
}

fn kl_cb_normal(p: &ContinuousBernoulli, q: &Normal) -> Result<Tensor> {
    let t1 = p.entropy()?.neg()?;
    let t2 = q.loc.div(&q.scale)?.square()?.add(LN_2PI)?.mul(0.5)?.add(&q.scale.log()?)?;
    let mean = p.mean()?;
    let t3 = p
        .variance()?
        .add(&mean.square()?)?
        .sub(&q.loc.mul(&mean)?.mul(2.0)?)?
        .div(&q.scale.square()?.mul(2.0)?)?;
    t1.add(&t2)?.add(&t3)
}

fn kl_cb_uniform(p: &ContinuousBernoulli, q: &Uniform) -> Result<Tensor> {
    let result = p.entropy()?.neg()?.add(&q.high.sub(&q.low)?.log()?)?;
    let outside = q.low.ge(0.0)?.logical_or(&q.high.le(1.0)?)?;
    Tensor::where_cond(&outside, f64::INFINITY, &result)
}

fn kl_exponential_gamma(p: &Exponential, q: &Gamma) -> Result<Tensor> {
    let ratio = q.rate.div(&p.rate)?;
    let t1 = q.concentration.neg()?.mul(&ratio.log()?)?;
    t1.add(&ratio)?.add(&q.concentration.lgamma()?)?.add(&q.concentration.mul(EULER)?)?.sub(1.0 + EULER)
}

fn kl_exponential_gumbel(p: &Exponential, q: &Gumbel) -> Result<Tensor> {
    let srp = p.rate.mul(&q.scale)?;
    let lsr = q.loc.div(&q.scale)?;
    let t1 = srp.log()?.sub(1.0)?;
    let t2 = lsr.exp()?.mul(&srp)?.div(&srp.add(1.0)?)?;
    let t3 = srp.reciprocal()?;
    t1.sub(&lsr)?.add(&t2)?.add(&t3)
}

fn kl_exponential_normal(p: &Exponential, q: &Normal) -> Result<Tensor> {
    let var_normal = q.scale.square()?;
    let rate_sqr = p.rate.square()?;
    let t1 = rate_sqr.mul(&var_normal)?.mul(2.0 * PI)?.log()?.mul(0.5)?;
    let t2 = rate_sqr.reciprocal()?;
    let t3 = q.loc.div(&p.rate)?;
    let t4 = q.loc.square()?.mul(0.5)?;
    t1.sub(1.0)?.add(&t2.sub(&t3)?.add(&t4)?.div(&var_normal)?)
}

fn kl_gamma_exponential(p: &Gamma, q: &Exponential) -> Result<Tensor> {
    p.entropy()?.neg()?.sub(&q.rate.log()?)?.add(&q.rate.mul(&p.concentration)?.div(&p.rate)?)
}

fn kl_gamma_gumbel(p: &Gamma, q: &Gumbel) -> Result<Tensor> {
    let a = &p.concentration;
    let bsp = p.rate.mul(&q.scale)?;
    let lsr = q.loc.div(&q.scale)?;
    let t1 = a.sub(1.0)?.mul(&a.digamma()?)?.sub(&a.lgamma()?)?.sub(a)?;
    let t2 = bsp.log()?.add(&a.div(&bsp)?)?;
    let t3 = lsr.exp()?.mul(&bsp.reciprocal()?.add(1.0)?.pow(&a.neg()?)?)?.sub(&lsr)?;
    t1.add(&t2)?.add(&t3)
}

fn kl_gamma_normal(p: &Gamma, q: &Normal) -> Result<Tensor> {
    let a = &p.concentration;
    let var_normal = q.scale.square()?;
    let beta_sqr = p.rate.square()?;
    let t1 = beta_sqr.mul(&var_normal)?.mul(2.0 * PI)?.log()?.mul(0.5)?.sub(a)?.sub(&a.lgamma()?)?;
    let t2 = a.square()?.add(a)?.mul(0.5)?.div(&beta_sqr)?;
    let t3 = q.loc.mul(a)?.div(&p.rate)?;
    let t4 = q.loc.square()?.mul(0.5)?;
    t1.add(&a.sub(1.0)?.mul(&a.digamma()?)?)?.add(&t2.sub(&t3)?.add(&t4)?.div(&var_normal)?)
}

fn kl_gumbel_normal(p: &Gumbel, q: &Normal) -> Result<Tensor> {
    let ratio = p.scale.div(&q.scale)?;
    let t1 = ratio.div((2.0 * PI).sqrt())?.log()?;
    let t2 = ratio.mul(PI * 0.5)?.square()?.div(3.0)?;
    let t3 = p.loc.add(&p.scale.mul(EULER)?)?.sub(&q.loc)?.div(&q.scale)?.square()?.mul(0.5)?;
    t1.neg()?.add(&t2)?.add(&t3)?.sub(EULER + 1.0)
}

fn kl_laplace_normal(p: &Laplace, q: &Normal) -> Result<Tensor> {
    let var_normal = q.scale.square()?;
    let ssvr = p.scale.square()?.div(&var_normal)?;
    let t1 = ssvr.mul(2.0)?.div(PI)?.log()?.mul(0.5)?;
    let t2 = p.loc.square()?.mul(0.5)?;
    let t3 = p.loc.mul(&q.loc)?;
    let t4 = q.loc.square()?.mul(0.5)?;
    t1.neg()?.add(&ssvr)?.add(&t2.sub(&t3)?.add(&t4)?.div(&var_normal)?)?.sub(1.0)
}

fn kl_normal_gumbel(p: &Normal, q: &Gumbel) -> Result<Tensor> {
    let msr = p.loc.div(&q.scale)?;
    let vssr = p.scale.div(&q.scale)?.square()?;
    let lsr = q.loc.div(&q.scale)?;
    let t1 = vssr.log()?.mul(0.5)?;
    let t2 = msr.sub(&lsr)?;
    let t3 = msr.neg()?.add(&vssr.mul(0.5)?)?.add(&lsr)?.exp()?;
    t1.neg()?.add(&t2)?.add(&t3)?.sub(0.5 * (1.0 + LN_2PI))
}

fn kl_normal_laplace(p: &Normal, q: &Laplace) -> Result<Tensor> {
    let loc_diff = p.loc.sub(&q.loc)?;
    let scale_ratio = p.scale.div(&q.scale)?;
    let ldsr = loc_diff.div(&p.scale)?;
    let t1 = scale_ratio.log()?;
    let t2 = p.scale.mul((2.0 / PI).sqrt())?.mul(&ldsr.square()?.mul(-0.5)?.exp()?)?;
    let t3 = loc_diff.mul(&ldsr.mul(0.5f64.sqrt())?.erf()?)?;
    t1.neg()?.add(&t2.add(&t3)?.div(&q.scale)?)?.sub(0.5 * (1.0 + (0.5 * PI).ln()))
}

fn kl_pareto_exponential(p: &Pareto, q: &Exponential) -> Result<Tensor> {
    let srp = p.scale.mul(&q.rate)?;
    let t1 = p.alpha.div(&srp)?.log()?;
    let t2 = p.alpha.reciprocal()?;
    let t3 = p.alpha.mul(&srp)?.div(&p.alpha.sub(1.0)?)?;
    let result = t1.sub(&t2)?.add(&t3)?.sub(1.0)?;
    result.masked_fill(&p.alpha.le(1.0)?, f64::INFINITY)
}

fn kl_pareto_gamma(p: &Pareto, q: &Gamma) -> Result<Tensor> {
    let common = p.scale.log()?.add(&p.alpha.reciprocal()?)?;
    let t1 = p.alpha.log()?.sub(&common)?;
    let t2 = q.concentration.lgamma()?.sub(&q.concentration.mul(&q.rate.log()?)?)?;
    let t3 = q.concentration.rsub(1.0)?.mul(&common)?;
    let t4 = q.rate.mul(&p.alpha)?.mul(&p.scale)?.div(&p.alpha.sub(1.0)?)?;
    let result = t1.add(&t2)?.add(&t3)?.add(&t4)?.sub(1.0)?;
    result.masked_fill(&p.alpha.le(1.0)?, f64::INFINITY)
}

fn kl_pareto_normal(p: &Pareto, q: &Normal) -> Result<Tensor> {
    let var_normal = q.scale.square()?.mul(2.0)?;
    let common = p.scale.div(&p.alpha.sub(1.0)?)?;
    let t1 = q.scale.mul((2.0 * PI).sqrt())?.mul(&p.alpha)?.div(&p.scale)?.log()?;
    let t2 = p.alpha.reciprocal()?;
    let t3 = p.alpha.mul(&common.square()?)?.div(&p.alpha.sub(2.0)?)?;
    let t4 = p.alpha.mul(&common)?.sub(&q.loc)?.square()?;
    let result = t1.sub(&t2)?.add(&t3.add(&t4)?.div(&var_normal)?)?.sub(1.0)?;
    result.masked_fill(&p.alpha.le(2.0)?, f64::INFINITY)
}

fn kl_uniform_beta(p: &Uniform, q: &Beta) -> Result<Tensor> {
    let (a, b) = (&q.concentration1, &q.concentration0);
    let common = p.high.sub(&p.low)?;
    let t1 = common.log()?;
    let t2 = a.sub(1.0)?.mul(&x_log_x(&p.high)?.sub(&x_log_x(&p.low)?)?.sub(&common)?)?.div(&common)?;
    let t3 = b
        .sub(1.0)?
        .mul(&x_log_x(&p.high.rsub(1.0)?)?.sub(&x_log_x(&p.low.rsub(1.0)?)?)?.add(&common)?)?
        .div(&common)?;
    let t4 = a.lgamma()?.add(&b.lgamma()?)?.sub(&a.add(b)?.lgamma()?)?;
    let result = t3.add(&t4)?.sub(&t1)?.sub(&t2)?;
    result.masked_fill(&p.high.gt(1.0)?.logical_or(&p.low.lt(0.0)?)?, f64::INFINITY)
}

fn kl_uniform_cb(p: &Uniform, q: &ContinuousBernoulli) -> Result<Tensor> {
    let result = p
        .entropy()?
        .neg()?
        .sub(&p.mean()?.mul(&q.logits)?)?
        .sub(&q.probs.neg()?.log1p()?)?
        .sub(&q.cont_bern_log_norm()?)?;
    let outside = p.high.ge(1.0)?.logical_or(&p.low.le(0.0)?)?;
    Tensor::where_cond(&outside, f64::INFINITY, &result)
}

fn kl_uniform_exponential(p: &Uniform, q: &Exponential) -> Result<Tensor> {
    let result =
        q.rate.mul(&p.high.add(&p.low)?)?.div(2.0)?.sub(&p.high.sub(&p.low)?.mul(&q.rate)?.log()?)?;
    result.masked_fill(&p.low.lt(0.0)?, f64::INFINITY)
}

fn kl_uniform_gamma(p: &Uniform, q: &Gamma) -> Result<Tensor> {
    let common = p.high.sub(&p.low)?;
    let t1 = common.log()?;
    let t2 = q.concentration.lgamma()?.sub(&q.concentration.mul(&q.rate.log()?)?)?;
    let t3 = q
        .concentration
        .rsub(1.0)?
        .mul(&x_log_x(&p.high)?.sub(&x_log_x(&p.low)?)?.sub(&common)?)?
        .div(&common)?;
    let t4 = q.rate.mul(&p.high.add(&p.low)?)?.div(2.0)?;
    let result = t1.neg()?.add(&t2)?.add(&t3)?.add(&t4)?;
    result.masked_fill(&p.low.lt(0.0)?, f64::INFINITY)
}

fn kl_uniform_gumbel(p: &Uniform, q: &Gumbel) -> Result<Tensor> {
    let common = q.scale.div(&p.high.sub(&p.low)?)?;
    let hld = p.high.sub(&q.loc)?.div(&q.scale)?;
    let lld = p.low.sub(&q.loc)?.div(&q.scale)?;
    let t1 = common.log()?.add(&hld.add(&lld)?.mul(0.5)?)?;
    let t2 = common.mul(&hld.neg()?.exp()?.sub(&lld.neg()?.exp()?)?)?;
    t1.sub(&t2)
}

fn kl_uniform_normal(p: &Uniform, q: &Normal) -> Result<Tensor> {
    let common = p.high.sub(&p.low)?;
    let t1 = q.scale.mul((PI * 2.0).sqrt())?.div(&common)?.log()?;
    let t2 = common.square()?.div(12.0)?;
    let t3 = p.high.add(&p.low)?.sub(&q.loc.mul(2.0)?)?.div(2.0)?.square()?;
    t1.add(&t2.add(&t3)?.mul(0.5)?.div(&q.scale.square()?)?)
}

fn kl_uniform_pareto(p: &Uniform, q: &Pareto) -> Result<Tensor> {
    let support = p.high.sub(&p.low)?;
    let t1 = q.alpha.mul(&q.scale.pow(&q.alpha)?)?.mul(&support)?.log()?;
    let t2 = x_log_x(&p.high)?.sub(&x_log_x(&p.low)?)?.sub(&support)?.div(&support)?;
    let result = t2.mul(&q.alpha.add(1.0)?)?.sub(&t1)?;
    result.masked_fill(&p.low.lt(&q.scale)?, f64::INFINITY)
}
