#![allow(clippy::approx_constant, clippy::excessive_precision, clippy::type_complexity)]
//! A seeded (34) randomized differential test of `oxtorch_nn::distributions` against
//! `torch.distributions` 2.15 (goldens from nn/tests/make_distributions_fuzz_golden.py, float64): ~400
//! random distributions of every family (random valid parameters, random batch shapes with
//! broadcasting between parameters, size-1 dims and 0-d parameters) compared on batch/event
//! shapes, `has_rsample`, mean, mode, variance, stddev, entropy, `log_prob` inside and outside the
//! support (validation off), cdf, icdf, support checks, sample shapes, and the gradients of
//! `log_prob(value).sum()` and `entropy().sum()` with respect to the float parameters; KL
//! divergences between random registered pairs with the gradients for both sides' parameters;
//! and invalid parameters, which torch rejects with `validate_args=True` and oxtorch must too.
//!
//! Every mismatch (and every panic) is collected; each test asserts once at the end, listing the
//! case id, family, parameters, property and first differing element.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;

use oxtorch_nn::distributions::{
    kl_divergence, AffineTransform, Bernoulli, Beta, Binomial, Categorical, Cauchy, Chi2,
    ContinuousBernoulli, Dirichlet, Distribution, ExpRelaxedCategorical, ExpTransform, Exponential,
    FisherSnedecor, Gamma, Geometric, Gumbel, HalfCauchy, HalfNormal, Independent, InverseGamma, Kumaraswamy,
    Laplace, LogNormal, LogitRelaxedBernoulli, LowRankMultivariateNormal, MixtureSameFamily, Multinomial,
    MultivariateNormal, NegativeBinomial, Normal, OneHotCategorical, Pareto, Poisson, RelaxedBernoulli,
    RelaxedOneHotCategorical, StudentT, Transform, TransformedDistribution, Uniform, VonMises, Weibull,
};
use oxtorch_tensor::{DType, Result, Tensor};

use super::golden_case::{float64, T};

/// One random distribution: its parameters (those in `diff` differentiated), torch's shapes, the
/// values it was evaluated at (`lp`: in the support, `oos`: partly outside it, `cdf`, `icdf`),
/// torch's outputs, the gradients `(property, parameter, gradient)`, and a sample shape.
struct DistCase {
    id: usize,
    kind: &'static str,
    params: &'static [(&'static str, T)],
    diff: &'static [&'static str],
    batch: &'static [usize],
    event: &'static [usize],
    has_rsample: bool,
    values: &'static [(&'static str, T)],
    outs: &'static [(&'static str, T)],
    grads: &'static [(&'static str, &'static str, T)],
    sample_shape: &'static [usize],
    sample_dims: &'static [usize],
    sample_in_support: bool,
}

/// `kl_divergence(p, q)` of two random distributions, with the gradients (`"p.<name>"`,
/// `"q.<name>"`) of `kl.sum()`.
struct KlCase {
    id: usize,
    p_kind: &'static str,
    p_params: &'static [(&'static str, T)],
    p_diff: &'static [&'static str],
    q_kind: &'static str,
    q_params: &'static [(&'static str, T)],
    q_diff: &'static [&'static str],
    kl: T,
    grads: &'static [(&'static str, T)],
}

/// Invalid parameters torch rejects with `validate_args=True` (its message's first line).
struct ErrCase {
    id: usize,
    kind: &'static str,
    params: &'static [(&'static str, T)],
    msg: &'static str,
}

include!("distributions_fuzz_golden.rs");

/// The default tolerance: `|got - torch| <= ATOL + RTOL * |torch|`.
const TOL: (f64, f64) = (1e-7, 1e-9);
/// For families whose formulas go through lgamma/digamma/polygamma, the incomplete gamma or beta
/// functions, Bessel functions (VonMises) or erfinv (icdf), and for every cdf/icdf: these special
/// functions are separate implementations in oxtorch and torch (Cephes and friends), accurate to
/// ~1e-12..1e-14 relative, and an entropy or gradient that is a difference of such terms (e.g.
/// `lgamma(a) + lgamma(b) - lgamma(a + b) - ...`) can lose a few more digits by cancellation.
const SPECIAL_TOL: (f64, f64) = (1e-6, 1e-8);

const SPECIAL: &[&str] = &[
    "Beta",
    "Dirichlet",
    "Gamma",
    "Chi2",
    "InverseGamma",
    "StudentT",
    "FisherSnedecor",
    "Kumaraswamy",
    "VonMises",
    "Binomial",
    "NegativeBinomial",
    "Poisson",
    "Multinomial",
    "Weibull",
];

fn is_special(kind: &str) -> bool {
    SPECIAL.iter().any(|s| kind.starts_with(s))
}

fn tol_for(kind: &str, prop: &str) -> (f64, f64) {
    if is_special(kind) || prop == "cdf" || prop == "icdf" {
        SPECIAL_TOL
    } else {
        TOL
    }
}

/// The parameters as float64 tensors, leaves requiring grad when named in `diff`.
fn leaves(params: &[(&'static str, T)], diff: &[&str]) -> Vec<(&'static str, Tensor)> {
    params.iter().map(|(k, v)| (*k, float64(v).requires_grad_(diff.contains(k)).unwrap())).collect()
}

fn find<'a>(p: &'a [(&'static str, Tensor)], k: &str) -> Option<&'a Tensor> {
    p.iter().find(|(n, _)| *n == k).map(|(_, t)| t)
}

fn get<'a>(p: &'a [(&'static str, Tensor)], k: &str) -> &'a Tensor {
    find(p, k).unwrap_or_else(|| panic!("no parameter {k}"))
}

/// The first value of a (scalar) parameter, as an integer.
fn int_param(p: &[(&'static str, Tensor)], k: &str) -> i64 {
    get(p, k).to_f64_vec().unwrap()[0] as i64
}

/// The distribution of a golden `kind`, built as the generator builds it in torch.
fn build(kind: &str, p: &[(&'static str, Tensor)], validate: bool) -> Result<Arc<dyn Distribution>> {
    let v = Some(validate);
    let g = |k: &str| get(p, k);
    let (pr, lg) = (find(p, "probs"), find(p, "logits"));
    let d: Arc<dyn Distribution> = match kind {
        "Normal" => Arc::new(Normal::with_validate_args(g("loc"), g("scale"), v)?),
        "Cauchy" => Arc::new(Cauchy::with_validate_args(g("loc"), g("scale"), v)?),
        "Laplace" => Arc::new(Laplace::with_validate_args(g("loc"), g("scale"), v)?),
        "Gumbel" => Arc::new(Gumbel::with_validate_args(g("loc"), g("scale"), v)?),
        "LogNormal" => Arc::new(LogNormal::with_validate_args(g("loc"), g("scale"), v)?),
        "Beta" => Arc::new(Beta::with_validate_args(g("concentration1"), g("concentration0"), v)?),
        "Kumaraswamy" => {
            Arc::new(Kumaraswamy::with_validate_args(g("concentration1"), g("concentration0"), v)?)
        }
        "Chi2" => Arc::new(Chi2::with_validate_args(g("df"), v)?),
        "Dirichlet" => Arc::new(Dirichlet::with_validate_args(g("concentration"), v)?),
        "Exponential" => Arc::new(Exponential::with_validate_args(g("rate"), v)?),
        "Poisson" => Arc::new(Poisson::with_validate_args(g("rate"), v)?),
        "FisherSnedecor" => Arc::new(FisherSnedecor::with_validate_args(g("df1"), g("df2"), v)?),
        "Gamma" => Arc::new(Gamma::with_validate_args(g("concentration"), g("rate"), v)?),
        "InverseGamma" => Arc::new(InverseGamma::with_validate_args(g("concentration"), g("rate"), v)?),
        "HalfCauchy" => Arc::new(HalfCauchy::with_validate_args(g("scale"), v)?),
        "HalfNormal" => Arc::new(HalfNormal::with_validate_args(g("scale"), v)?),
        "IndependentNormal" => {
            let base = Arc::new(Normal::with_validate_args(g("loc"), g("scale"), v)?);
            Arc::new(Independent::with_validate_args(base, int_param(p, "ndims") as usize, v)?)
        }
        "LowRankMultivariateNormal" => Arc::new(LowRankMultivariateNormal::with_validate_args(
            g("loc"),
            g("cov_factor"),
            g("cov_diag"),
            v,
        )?),
        "MultivariateNormalScaleTril" => {
            Arc::new(MultivariateNormal::with_validate_args(g("loc"), None, None, Some(g("scale_tril")), v)?)
        }
        "MultivariateNormalCovariance" => Arc::new(MultivariateNormal::with_validate_args(
            g("loc"),
            Some(g("covariance_matrix")),
            None,
            None,
            v,
        )?),
        "MultivariateNormalPrecision" => Arc::new(MultivariateNormal::with_validate_args(
            g("loc"),
            None,
            Some(g("precision_matrix")),
            None,
            v,
        )?),
        "MixtureSameFamilyNormal" => {
            let mix = Categorical::with_validate_args(None, Some(g("mix_logits")), v)?;
            let comp = Arc::new(Normal::with_validate_args(g("loc"), g("scale"), v)?);
            Arc::new(MixtureSameFamily::with_validate_args(mix, comp, v)?)
        }
        "Pareto" => Arc::new(Pareto::with_validate_args(g("scale"), g("alpha"), v)?),
        "StudentT" => Arc::new(StudentT::with_validate_args(g("df"), g("loc"), g("scale"), v)?),
        "TransformedAffineExp" => {
            let base = Arc::new(Normal::with_validate_args(g("loc"), g("scale"), v)?);
            let ts: Vec<Arc<dyn Transform>> =
                vec![Arc::new(AffineTransform::new(g("t_loc"), g("t_scale"), 0)), Arc::new(ExpTransform)];
            Arc::new(TransformedDistribution::with_validate_args(base, ts, v)?)
        }
        "Uniform" => Arc::new(Uniform::with_validate_args(g("low"), g("high"), v)?),
        "VonMises" => Arc::new(VonMises::with_validate_args(g("loc"), g("concentration"), v)?),
        "Weibull" => Arc::new(Weibull::with_validate_args(g("scale"), g("concentration"), v)?),
        k if k.starts_with("Bernoulli") => Arc::new(Bernoulli::with_validate_args(pr, lg, v)?),
        k if k.starts_with("Geometric") => Arc::new(Geometric::with_validate_args(pr, lg, v)?),
        k if k.starts_with("ContinuousBernoulli") => {
            Arc::new(ContinuousBernoulli::with_validate_args(pr, lg, (0.499, 0.501), v)?)
        }
        k if k.starts_with("Binomial") => {
            Arc::new(Binomial::with_validate_args(g("total_count"), pr, lg, v)?)
        }
        k if k.starts_with("NegativeBinomial") => {
            Arc::new(NegativeBinomial::with_validate_args(g("total_count"), pr, lg, v)?)
        }
        k if k.starts_with("Categorical") => Arc::new(Categorical::with_validate_args(pr, lg, v)?),
        k if k.starts_with("OneHotCategorical") => {
            Arc::new(OneHotCategorical::with_validate_args(pr, lg, v)?)
        }
        k if k.starts_with("Multinomial") => {
            Arc::new(Multinomial::with_validate_args(int_param(p, "total_count"), pr, lg, v)?)
        }
        k if k.starts_with("RelaxedBernoulli") => {
            Arc::new(RelaxedBernoulli::with_validate_args(g("temperature"), pr, lg, v)?)
        }
        k if k.starts_with("LogitRelaxedBernoulli") => {
            Arc::new(LogitRelaxedBernoulli::with_validate_args(g("temperature"), pr, lg, v)?)
        }
        k if k.starts_with("RelaxedOneHotCategorical") => {
            Arc::new(RelaxedOneHotCategorical::with_validate_args(g("temperature"), pr, lg, v)?)
        }
        k if k.starts_with("ExpRelaxedCategorical") => {
            Arc::new(ExpRelaxedCategorical::with_validate_args(g("temperature"), pr, lg, v)?)
        }
        _ => panic!("unknown kind {kind}"),
    };
    Ok(d)
}

/// The parameters for a failure line: `name dims=[..] [first values]`.
fn fmt_params(params: &[(&'static str, T)]) -> String {
    params
        .iter()
        .map(|(k, v)| {
            let shown: Vec<f64> = v.data.iter().take(8).copied().collect();
            let more = if v.data.len() > 8 { ", .." } else { "" };
            format!("{k}: dims {:?} {:?}{more}", v.dims, shown)
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// `got` against torch's `want` (any dtype, compared as float64): the dims, then every element
/// within `tol` (non-finite values exactly, NaN matching NaN). `Err` names the first difference.
fn compare(got: &Tensor, want: &T, tol: (f64, f64)) -> std::result::Result<(), String> {
    if got.dims() != want.dims {
        return Err(format!("shape {:?}, torch {:?}", got.dims(), want.dims));
    }
    let g =
        got.detach().to_dtype(DType::F64).and_then(|t| t.to_f64_vec()).map_err(|e| format!("read: {e}"))?;
    if g.len() != want.data.len() {
        return Err(format!("numel {}, torch {}", g.len(), want.data.len()));
    }
    for (i, (x, y)) in g.iter().zip(want.data).enumerate() {
        let ok = if y.is_finite() {
            x.is_finite() && (x - y).abs() <= tol.1 + tol.0 * y.abs()
        } else {
            x == y || (x.is_nan() && y.is_nan())
        };
        if !ok {
            return Err(format!("first differing element [{i}]: got {x}, torch {y}"));
        }
    }
    Ok(())
}

/// Records a failure of `prop` (an `Err` from oxtorch, or a mismatch).
fn check(fails: &mut Vec<String>, ctx: &str, prop: &str, got: Result<Tensor>, want: &T, tol: (f64, f64)) {
    match got {
        Err(e) => fails.push(format!("{ctx}: {prop}: oxtorch error: {e}")),
        Ok(g) => {
            if let Err(m) = compare(&g, want, tol) {
                fails.push(format!("{ctx}: {prop}: {m}"));
            }
        }
    }
}

/// Checks the gradients named in `grads` (`(parameter, torch's gradient)`) of `out().sum()` with
/// respect to the leaves `p`: a missing gradient must be torch's zeros.
fn check_grads(
    fails: &mut Vec<String>,
    ctx: &str,
    what: &str,
    p: &[(&'static str, Tensor)],
    out: Result<Tensor>,
    grads: &[(&str, &T)],
    tol: (f64, f64),
) {
    let out = match out.and_then(|o| o.sum_all()) {
        Ok(o) => o,
        Err(e) => return fails.push(format!("{ctx}: grad of {what}: oxtorch error: {e}")),
    };
    if out.requires_grad() {
        if let Err(e) = out.backward() {
            return fails.push(format!("{ctx}: grad of {what}: backward error: {e}"));
        }
    }
    for (name, want) in grads {
        let prop = format!("d {what} / d {name}");
        match find(p, name).and_then(|t| t.grad()) {
            Some(g) => check(fails, ctx, &prop, Ok(g), want, tol),
            None => {
                if want.data.iter().any(|&x| x != 0.0) {
                    fails.push(format!(
                        "{ctx}: {prop}: no gradient, torch {:?}",
                        &want.data[..want.data.len().min(8)]
                    ));
                }
            }
        }
    }
}

/// Runs `f`, turning a panic into a failure line.
fn guarded(fails: &mut Vec<String>, ctx: &str, f: impl FnOnce(&mut Vec<String>)) {
    let mut local = Vec::new();
    let r = catch_unwind(AssertUnwindSafe(|| f(&mut local)));
    fails.extend(local);
    if let Err(p) = r {
        let msg = p
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_default();
        fails.push(format!("{ctx}: panicked: {msg}"));
    }
}

fn finish(what: &str, n: usize, fails: Vec<String>) {
    assert!(fails.is_empty(), "{what}: {} mismatches over {n} cases:\n{}", fails.len(), fails.join("\n"));
}

fn value<'a>(c: &'a DistCase, k: &str) -> &'a T {
    &c.values.iter().find(|(n, _)| *n == k).unwrap_or_else(|| panic!("case {}: no value {k}", c.id)).1
}

fn run_dist_case(fails: &mut Vec<String>, c: &DistCase, ctx: &str) {
    let p = leaves(c.params, c.diff);
    let d = match build(c.kind, &p, false) {
        Ok(d) => d,
        Err(e) => return fails.push(format!("{ctx}: construction error: {e}")),
    };
    if d.batch_shape() != c.batch {
        fails.push(format!("{ctx}: batch_shape {:?}, torch {:?}", d.batch_shape(), c.batch));
    }
    if d.event_shape() != c.event {
        fails.push(format!("{ctx}: event_shape {:?}, torch {:?}", d.event_shape(), c.event));
    }
    if d.has_rsample() != c.has_rsample {
        fails.push(format!("{ctx}: has_rsample {}, torch {}", d.has_rsample(), c.has_rsample));
    }
    let support_check = |v: &Tensor| d.support().check(v);
    for (prop, want) in c.outs {
        let tol = tol_for(c.kind, prop);
        let got = match *prop {
            "mean" => d.mean(),
            "mode" => d.mode(),
            "variance" => d.variance(),
            "stddev" => d.stddev(),
            "entropy" => d.entropy(),
            "log_prob" => d.log_prob(&float64(value(c, "lp"))),
            "log_prob_oos" => d.log_prob(&float64(value(c, "oos"))),
            "support_lp" => support_check(&float64(value(c, "lp"))),
            "support_oos" => support_check(&float64(value(c, "oos"))),
            "cdf" => d.cdf(&float64(value(c, "cdf"))),
            "icdf" => d.icdf(&float64(value(c, "icdf"))),
            _ => panic!("unknown property {prop}"),
        };
        check(fails, ctx, prop, got, want, tol);
    }
    // sample shape, and the sample within the support (where torch's own sample is)
    match d.sample(c.sample_shape) {
        Err(e) => fails.push(format!("{ctx}: sample({:?}): oxtorch error: {e}", c.sample_shape)),
        Ok(s) => {
            if s.dims() != c.sample_dims {
                fails.push(format!(
                    "{ctx}: sample({:?}) shape {:?}, torch {:?}",
                    c.sample_shape,
                    s.dims(),
                    c.sample_dims
                ));
            } else if c.sample_in_support {
                let inside = support_check(&s)
                    .and_then(|b| b.to_dtype(DType::F64))
                    .and_then(|b| b.to_f64_vec())
                    .map(|b| b.iter().all(|&x| x == 1.0));
                match inside {
                    Ok(true) => {}
                    Ok(false) => {
                        fails.push(format!("{ctx}: sample({:?}) outside the support", c.sample_shape))
                    }
                    Err(e) => fails.push(format!("{ctx}: support check of a sample: oxtorch error: {e}")),
                }
            }
        }
    }
    // gradients, one fresh graph per differentiated property
    for what in ["log_prob", "entropy"] {
        let grads: Vec<(&str, &T)> =
            c.grads.iter().filter(|(w, _, _)| *w == what).map(|(_, n, g)| (*n, g)).collect();
        if grads.is_empty() {
            continue;
        }
        let p = leaves(c.params, c.diff);
        let d = match build(c.kind, &p, false) {
            Ok(d) => d,
            Err(e) => return fails.push(format!("{ctx}: construction error: {e}")),
        };
        let out = if what == "log_prob" { d.log_prob(&float64(value(c, "lp"))) } else { d.entropy() };
        check_grads(fails, ctx, what, &p, out, &grads, tol_for(c.kind, what));
    }
}

#[test]
fn random_distributions_match_torch() {
    let mut fails = Vec::new();
    for c in DIST_CASES {
        let ctx = format!("case {} {} [{}]", c.id, c.kind, fmt_params(c.params));
        guarded(&mut fails, &ctx, |f| run_dist_case(f, c, &ctx));
    }
    finish("distributions", DIST_CASES.len(), fails);
}

fn run_kl_case(fails: &mut Vec<String>, c: &KlCase, ctx: &str) {
    let pp = leaves(c.p_params, c.p_diff);
    let qp = leaves(c.q_params, c.q_diff);
    let (p, q) = match (build(c.p_kind, &pp, false), build(c.q_kind, &qp, false)) {
        (Ok(p), Ok(q)) => (p, q),
        (Err(e), _) | (_, Err(e)) => return fails.push(format!("{ctx}: construction error: {e}")),
    };
    let tol = if is_special(c.p_kind) || is_special(c.q_kind) { SPECIAL_TOL } else { TOL };
    let kl = match kl_divergence(p.as_ref(), q.as_ref()) {
        Ok(kl) => kl,
        Err(e) => return fails.push(format!("{ctx}: kl_divergence: oxtorch error: {e}")),
    };
    check(fails, ctx, "kl", Ok(kl.clone()), &c.kl, tol);
    if c.grads.is_empty() {
        return;
    }
    let kl = match kl.sum_all() {
        Ok(k) => k,
        Err(e) => return fails.push(format!("{ctx}: kl.sum(): oxtorch error: {e}")),
    };
    if kl.requires_grad() {
        if let Err(e) = kl.backward() {
            return fails.push(format!("{ctx}: grad of kl: backward error: {e}"));
        }
    }
    for (name, want) in c.grads {
        let (side, pname) = name.split_once('.').expect("p.<name> or q.<name>");
        let leaf = if side == "p" { find(&pp, pname) } else { find(&qp, pname) };
        let prop = format!("d kl / d {name}");
        match leaf.and_then(|t| t.grad()) {
            Some(g) => check(fails, ctx, &prop, Ok(g), want, tol),
            None => {
                if want.data.iter().any(|&x| x != 0.0) {
                    fails.push(format!(
                        "{ctx}: {prop}: no gradient, torch {:?}",
                        &want.data[..want.data.len().min(8)]
                    ));
                }
            }
        }
    }
}

#[test]
fn random_kl_divergences_match_torch() {
    let mut fails = Vec::new();
    for c in KL_CASES {
        let ctx = format!(
            "case {} KL({} [{}] || {} [{}])",
            c.id,
            c.p_kind,
            fmt_params(c.p_params),
            c.q_kind,
            fmt_params(c.q_params)
        );
        guarded(&mut fails, &ctx, |f| run_kl_case(f, c, &ctx));
    }
    finish("kl_divergence", KL_CASES.len(), fails);
}

#[test]
fn invalid_parameters_are_rejected_as_torch() {
    let mut fails = Vec::new();
    for c in ERR_CASES {
        let ctx = format!("case {} {} [{}]", c.id, c.kind, fmt_params(c.params));
        guarded(&mut fails, &ctx, |f| {
            let p = leaves(c.params, &[]);
            if build(c.kind, &p, true).is_ok() {
                f.push(format!("{ctx}: built with validate_args=true, torch raises: {}", c.msg));
            }
        });
    }
    finish("validation", ERR_CASES.len(), fails);
}
