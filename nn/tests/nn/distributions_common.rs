#![allow(clippy::approx_constant, clippy::excessive_precision, clippy::type_complexity)]
//! `oxtorch_nn::distributions` against torch 2.15 (goldens from
//! nn/tests/make_distributions_common_golden.py): log_prob, entropy, moments, cdf/icdf, gradients of
//! `log_prob(value).sum()`, kl_divergence and validation messages; then sampling (shapes,
//! statistics over many draws) and the reparameterized gradients of `rsample`.

use std::sync::Arc;

use oxtorch_nn::distributions::{
    kl_divergence, Bernoulli, Beta, Binomial, Categorical, Dirichlet, Distribution, Exponential, Gamma,
    Independent, Laplace, MultivariateNormal, Normal, OneHotCategorical, Poisson, Uniform,
};
use oxtorch_tensor::{Generator, Result, Tensor};

use super::golden_case::{assert_close_as_f64, float64, T};

/// One distribution of the golden file with its parameters, a `log_prob`/`cdf` value, `icdf`
/// probabilities `q` (empty when torch has no icdf), the shapes and torch's outputs and gradients.
struct DistCase {
    kind: &'static str,
    params: &'static [(&'static str, T)],
    value: T,
    q: T,
    batch: &'static [usize],
    event: &'static [usize],
    outs: &'static [(&'static str, T)],
    grads: &'static [(&'static str, T)],
}

/// A `kl_divergence(p, q)` case: both distributions of `kind`.
struct KlCase {
    kind: &'static str,
    p: &'static [(&'static str, T)],
    q: &'static [(&'static str, T)],
    out: T,
}

include!("distributions_common_golden.rs");

/// The parameters as float64 leaves (requiring grad except `total_count`).
fn leaves(params: &[(&'static str, T)]) -> Vec<(&'static str, Tensor)> {
    params.iter().map(|(k, v)| (*k, float64(v).requires_grad_(*k != "total_count").unwrap())).collect()
}

fn get<'a>(p: &'a [(&'static str, Tensor)], k: &str) -> &'a Tensor {
    &p.iter().find(|(n, _)| *n == k).unwrap_or_else(|| panic!("no parameter {k}")).1
}

/// The distribution of a golden `kind` from its parameters.
fn build(kind: &str, p: &[(&'static str, Tensor)]) -> Result<Arc<dyn Distribution>> {
    let g = |k| get(p, k);
    Ok(match kind {
        "Normal" => Arc::new(Normal::new(g("loc"), g("scale"))?),
        "Uniform" => Arc::new(Uniform::new(g("low"), g("high"))?),
        "BernoulliProbs" => Arc::new(Bernoulli::from_probs(g("probs"))?),
        "BernoulliLogits" => Arc::new(Bernoulli::from_logits(g("logits"))?),
        "CategoricalProbs" => Arc::new(Categorical::from_probs(g("probs"))?),
        "CategoricalLogits" => Arc::new(Categorical::from_logits(g("logits"))?),
        "OneHotCategorical" => Arc::new(OneHotCategorical::from_probs(g("probs"))?),
        "Exponential" => Arc::new(Exponential::new(g("rate"))?),
        "Laplace" => Arc::new(Laplace::new(g("loc"), g("scale"))?),
        "Gamma" => Arc::new(Gamma::new(g("concentration"), g("rate"))?),
        "Beta" => Arc::new(Beta::new(g("concentration1"), g("concentration0"))?),
        "Dirichlet" => Arc::new(Dirichlet::new(g("concentration"))?),
        "Poisson" => Arc::new(Poisson::new(g("rate"))?),
        "BinomialProbs" => Arc::new(Binomial::from_probs(g("total_count"), g("probs"))?),
        "BinomialLogits" => Arc::new(Binomial::from_logits(g("total_count"), g("logits"))?),
        "MvnCov" => Arc::new(MultivariateNormal::from_covariance(g("loc"), g("covariance_matrix"))?),
        "MvnPrec" => Arc::new(MultivariateNormal::from_precision(g("loc"), g("precision_matrix"))?),
        "MvnTril" => Arc::new(MultivariateNormal::from_scale_tril(g("loc"), g("scale_tril"))?),
        "IndependentNormal" => Arc::new(Independent::new(Arc::new(Normal::new(g("loc"), g("scale"))?), 1)?),
        _ => panic!("unknown kind {kind}"),
    })
}

fn t(v: &[f64]) -> Tensor {
    Tensor::from_vec(v.to_vec(), [v.len()]).unwrap()
}

#[test]
fn values_and_log_prob_gradients_match_torch() -> Result<()> {
    for c in CASES {
        let p = leaves(c.params);
        let d = build(c.kind, &p)?;
        assert_eq!(d.batch_shape(), c.batch, "{}: batch_shape", c.kind);
        assert_eq!(d.event_shape(), c.event, "{}: event_shape", c.kind);
        let value = float64(&c.value);
        for (name, want) in c.outs {
            let got = match *name {
                "log_prob" => d.log_prob(&value)?,
                "entropy" => d.entropy()?,
                "mean" => d.mean()?,
                "variance" => d.variance()?,
                "stddev" => d.stddev()?,
                "mode" => d.mode()?,
                "cdf" => d.cdf(&value)?,
                "icdf" => d.icdf(&float64(&c.q))?,
                _ => unreachable!(),
            };
            assert_close_as_f64(&format!("{}.{name}", c.kind), &got, want, 1e-9);
        }
        d.log_prob(&value)?.sum_all()?.backward()?;
        for (k, want) in c.grads {
            let got = get(&p, k).grad().unwrap_or_else(|| panic!("{}: no gradient for {k}", c.kind));
            assert_close_as_f64(&format!("{}.grad.{k}", c.kind), &got, want, 1e-8);
        }
    }
    Ok(())
}

#[test]
fn kl_divergence_matches_torch() -> Result<()> {
    for c in KLS {
        let (p, q) = (build(c.kind, &leaves(c.p))?, build(c.kind, &leaves(c.q))?);
        let got = kl_divergence(p.as_ref(), q.as_ref())?;
        assert_close_as_f64(&format!("kl.{}", c.kind), &got, &c.out, 1e-9);
    }
    Ok(())
}

/// The first line of an error's message.
fn first_line(r: Result<impl Sized>) -> String {
    match r {
        Ok(_) => panic!("expected an error"),
        Err(e) => e.to_string().lines().next().unwrap_or("").to_string(),
    }
}

#[test]
fn validation_errors_read_as_torch() {
    let spd = Tensor::from_vec(vec![2.0, 0.3, 0.1, 0.3, 1.5, -0.2, 0.1, -0.2, 1.0], [3, 3]).unwrap();
    let tril = oxtorch_tensor::linalg::cholesky(&spd, false).unwrap();
    let s = |x: f64| Tensor::scalar_tensor(x, ()).unwrap().to_dtype(oxtorch_tensor::DType::F64).unwrap();
    for (name, want) in ERRS {
        let got = match *name {
            "normal_scale" => first_line(Normal::new(&t(&[0.0, 2.0]), &t(&[1.0, -1.0]))),
            "normal_value" => first_line(Normal::new(&s(0.0), &s(1.0)).unwrap().log_prob(&s(f64::NAN))),
            "bernoulli_probs" => first_line(Bernoulli::from_probs(&t(&[0.5, 1.5]))),
            "bernoulli_value" => {
                first_line(Bernoulli::from_probs(&t(&[0.5, 0.5])).unwrap().log_prob(&t(&[0.5, 1.0])))
            }
            "exponential_value" => {
                first_line(Exponential::new(&t(&[1.0, 2.0])).unwrap().log_prob(&t(&[-1.0, 1.0])))
            }
            "gamma_rate" => first_line(Gamma::new(&t(&[1.0, 2.0]), &t(&[0.0, 1.0]))),
            "categorical_value" => {
                let probs = Tensor::from_vec(vec![0.2, 0.8], [1, 2]).unwrap();
                first_line(Categorical::from_probs(&probs).unwrap().log_prob(&t(&[2.0])))
            }
            "uniform_low" => first_line(Uniform::new(&t(&[0.0, 2.0]), &t(&[1.0, 1.0]))),
            "poisson_value" => first_line(Poisson::new(&t(&[1.0, 2.0])).unwrap().log_prob(&t(&[0.5, 1.0]))),
            "dirichlet_value" => {
                first_line(Dirichlet::new(&t(&[1.0, 2.0])).unwrap().log_prob(&t(&[0.5, 0.6])))
            }
            "mvn_loc" => first_line(MultivariateNormal::from_covariance(&s(0.0), &spd)),
            "mvn_both" => first_line(MultivariateNormal::with_validate_args(
                &t(&[0.0, 0.0, 0.0]),
                Some(&spd),
                None,
                Some(&tril),
                None,
            )),
            "mvn_tril" => {
                let bad = Tensor::from_vec(vec![1.0, 0.5, 0.0, 1.0], [2, 2]).unwrap();
                first_line(MultivariateNormal::from_scale_tril(&t(&[0.0, 0.0]), &bad))
            }
            "categorical_both" => first_line(Categorical::with_validate_args(
                Some(&t(&[0.5, 0.5])),
                Some(&t(&[0.0, 0.0])),
                None,
            )),
            "independent_ndims" => {
                first_line(Independent::new(Arc::new(Normal::new(&t(&[0.0]), &t(&[1.0])).unwrap()), 2))
            }
            "event_shape" => {
                first_line(Dirichlet::new(&t(&[1.0, 2.0])).unwrap().log_prob(&t(&[0.5, 0.25, 0.25])))
            }
            "kl_missing" => {
                let p = Categorical::from_probs(&t(&[0.5, 0.5])).unwrap();
                let q = Normal::new(&s(0.0), &s(1.0)).unwrap();
                first_line(kl_divergence(&p, &q))
            }
            _ => panic!("unknown error case {name}"),
        };
        if *name == "uniform_low" {
            // torch prints the tensor bound; the rest of the line must be its own.
            let head = want.split("LessThan(").next().unwrap();
            assert!(got.starts_with(head), "{name}: got {got:?}, torch {want:?}");
            assert!(got.contains("LessThan(upper_bound="), "{name}: got {got:?}");
        } else {
            assert!(got.contains(want), "{name}: got {got:?}, torch {want:?}");
        }
    }
}

#[test]
fn validation_can_be_disabled() -> Result<()> {
    let d = Normal::with_validate_args(&t(&[0.0]), &t(&[-1.0]), Some(false))?;
    assert!(d.log_prob(&t(&[0.5]))?.to_f64_vec()?[0].is_nan());
    let e = Exponential::with_validate_args(&t(&[1.0]), Some(false))?;
    assert_eq!(e.log_prob(&t(&[-1.0]))?.to_f64_vec()?, vec![1.0]);
    Ok(())
}

/// Mean and variance of the first dim of `x` (`[n, ...]`), flattened.
fn moments(x: &Tensor) -> (Vec<f64>, Vec<f64>) {
    let x = x.to_dtype(oxtorch_tensor::DType::F64).unwrap();
    let m = x.mean(0isize, false).unwrap();
    let v = x.sub(&m).unwrap().square().unwrap().mean(0isize, false).unwrap();
    (m.to_f64_vec().unwrap(), v.to_f64_vec().unwrap())
}

fn near(what: &str, got: &[f64], want: &[f64], tol: f64) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert!((g - w).abs() <= tol * (1.0 + w.abs()), "{what}[{i}]: got {g}, want {w}");
    }
}

#[test]
fn samples_have_torch_shapes_and_moments() -> Result<()> {
    let gen = Generator::new(7);
    let n = 20000;
    let check = |what: &str, d: &dyn Distribution, tol: f64| -> Result<()> {
        let x = d.sample_with(&[n], Some(&gen))?;
        assert_eq!(x.dims(), d.extended_shape(&[n]).as_slice(), "{what}: sample shape");
        assert!(!x.requires_grad(), "{what}: sample needs no grad");
        let (m, v) = moments(&x);
        near(
            &format!("{what}.mean"),
            &m,
            &d.mean()?.to_dtype(oxtorch_tensor::DType::F64)?.to_f64_vec()?,
            tol,
        );
        near(&format!("{what}.var"), &v, &d.variance()?.to_f64_vec()?, 3.0 * tol);
        Ok(())
    };
    check("Normal", &Normal::new(&t(&[0.5, -2.0]), &t(&[1.0, 0.3]))?, 0.05)?;
    check("Uniform", &Uniform::new(&t(&[0.0, -1.0]), &t(&[1.0, 3.0]))?, 0.05)?;
    check("Bernoulli", &Bernoulli::from_probs(&t(&[0.2, 0.7]))?, 0.05)?;
    check("Exponential", &Exponential::new(&t(&[0.5, 2.0]))?, 0.05)?;
    check("Laplace", &Laplace::new(&t(&[0.5, 1.0]), &t(&[1.0, 0.2]))?, 0.05)?;
    check("Gamma", &Gamma::new(&t(&[0.4, 3.0]), &t(&[1.0, 2.0]))?, 0.05)?;
    check("Beta", &Beta::new(&t(&[0.5, 2.0]), &t(&[1.5, 3.0]))?, 0.05)?;
    check("Dirichlet", &Dirichlet::new(&t(&[0.5, 2.0, 3.0]))?, 0.05)?;
    check("Poisson", &Poisson::new(&t(&[0.5, 4.0]))?, 0.05)?;
    check("Binomial", &Binomial::from_probs(&t(&[5.0, 10.0]), &t(&[0.3, 0.8]))?, 0.05)?;
    check("OneHotCategorical", &OneHotCategorical::from_probs(&t(&[0.2, 0.3, 0.5]))?, 0.05)?;
    let spd = Tensor::from_vec(vec![2.0, 0.3, 0.3, 0.5], [2, 2])?;
    check("MVN", &MultivariateNormal::from_covariance(&t(&[1.0, -1.0]), &spd)?, 0.05)?;

    // Categorical: frequencies of each class; batch [2], sample [n, 2].
    let probs = Tensor::from_vec(vec![0.2, 0.3, 0.5, 0.6, 0.3, 0.1], [2, 3])?;
    let c = Categorical::from_probs(&probs)?;
    let x = c.sample_with(&[n, 3], Some(&gen))?;
    assert_eq!(x.dims(), &[n, 3, 2]);
    let x = x.to_f64_vec()?;
    for (b, want) in [[0.2, 0.3, 0.5], [0.6, 0.3, 0.1]].iter().enumerate() {
        let col: Vec<f64> = x.iter().skip(b).step_by(2).copied().collect();
        let count = |k: usize| col.iter().filter(|&&v| v == k as f64).count() as f64;
        let freq: Vec<f64> = (0..3).map(|k| count(k) / col.len() as f64).collect();
        near("Categorical.freq", &freq, want, 0.05);
    }
    // Independent and MVN shapes: sample_shape + batch_shape + event_shape.
    let loc = Tensor::zeros([4, 3], oxtorch_tensor::DType::F64)?;
    let ind = Independent::new(Arc::new(Normal::new(&loc, &loc.ones_like()?)?), 1)?;
    assert_eq!(ind.sample(&[5, 2])?.dims(), &[5, 2, 4, 3]);
    assert_eq!(ind.log_prob(&ind.sample(&[5])?)?.dims(), &[5, 4]);
    Ok(())
}

#[test]
fn rsample_is_reparameterized() -> Result<()> {
    let gen = Generator::new(11);
    let n = 50;
    // Normal: x = loc + eps * scale, so d sum(x)/d loc = n, d sum(x)/d scale = sum(eps).
    let loc = t(&[0.5, -1.0]).requires_grad_(true)?;
    let scale = t(&[2.0, 0.5]).requires_grad_(true)?;
    let d = Normal::new(&loc, &scale)?;
    assert!(d.has_rsample());
    let x = d.rsample_with(&[n], Some(&gen))?;
    assert!(x.requires_grad());
    x.square()?.sum_all()?.backward()?;
    let xv = x.detach().to_f64_vec()?;
    let (mut gl, mut gs) = ([0.0; 2], [0.0; 2]);
    for (i, v) in xv.iter().enumerate() {
        let b = i % 2;
        let eps = (v - [0.5, -1.0][b]) / [2.0, 0.5][b];
        gl[b] += 2.0 * v;
        gs[b] += 2.0 * v * eps;
    }
    near("Normal.dloc", &loc.grad().unwrap().to_f64_vec()?, &gl, 1e-10);
    near("Normal.dscale", &scale.grad().unwrap().to_f64_vec()?, &gs, 1e-10);

    // Uniform: x = low + u (high - low): d x/d low = 1 - u, d x/d high = u.
    let low = t(&[0.0]).requires_grad_(true)?;
    let high = t(&[2.0]).requires_grad_(true)?;
    let x = Uniform::new(&low, &high)?.rsample_with(&[n], Some(&gen))?;
    x.sum_all()?.backward()?;
    let su: f64 = x.detach().to_f64_vec()?.iter().map(|v| v / 2.0).sum();
    near("Uniform.dlow", &low.grad().unwrap().to_f64_vec()?, &[n as f64 - su], 1e-10);
    near("Uniform.dhigh", &high.grad().unwrap().to_f64_vec()?, &[su], 1e-10);

    // Exponential: x = e / rate, d x/d rate = -x / rate.
    let rate = t(&[2.0]).requires_grad_(true)?;
    let x = Exponential::new(&rate)?.rsample_with(&[n], Some(&gen))?;
    x.sum_all()?.backward()?;
    let want: f64 = x.detach().to_f64_vec()?.iter().map(|v| -v / 2.0).sum();
    near("Exponential.drate", &rate.grad().unwrap().to_f64_vec()?, &[want], 1e-10);

    // Laplace: x = loc - scale * s, d x/d loc = 1, d x/d scale = (x - loc) / scale.
    let loc = t(&[1.0]).requires_grad_(true)?;
    let scale = t(&[0.5]).requires_grad_(true)?;
    let x = Laplace::new(&loc, &scale)?.rsample_with(&[n], Some(&gen))?;
    x.sum_all()?.backward()?;
    let want: f64 = x.detach().to_f64_vec()?.iter().map(|v| (v - 1.0) / 0.5).sum();
    near("Laplace.dloc", &loc.grad().unwrap().to_f64_vec()?, &[n as f64], 1e-10);
    near("Laplace.dscale", &scale.grad().unwrap().to_f64_vec()?, &[want], 1e-10);

    // MVN: x = loc + L eps; d sum(x)/d loc = n per coordinate.
    let mloc = t(&[0.0, 1.0]).requires_grad_(true)?;
    let l = Tensor::from_vec(vec![1.0, 0.0, 0.5, 2.0], [2, 2])?;
    let x = MultivariateNormal::from_scale_tril(&mloc, &l)?.rsample_with(&[n], Some(&gen))?;
    assert_eq!(x.dims(), &[n, 2]);
    x.sum_all()?.backward()?;
    near("MVN.dloc", &mloc.grad().unwrap().to_f64_vec()?, &[n as f64, n as f64], 1e-10);

    // Gamma is reparameterized (torch's implicit gradient); Bernoulli has no rsample.
    let g = Gamma::new(&t(&[1.0]), &t(&[1.0]))?;
    assert!(g.has_rsample());
    assert_eq!(g.rsample(&[2])?.dims(), &[2, 1]);
    assert!(Bernoulli::from_probs(&t(&[0.5]))?.rsample(&[2]).is_err());
    Ok(())
}

#[test]
fn seeded_generators_repeat_draws() -> Result<()> {
    let d = Gamma::new(&t(&[0.5, 2.0]), &t(&[1.0, 3.0]))?;
    let a = d.sample_with(&[10], Some(&Generator::new(3)))?.to_f64_vec()?;
    let b = d.sample_with(&[10], Some(&Generator::new(3)))?.to_f64_vec()?;
    assert_eq!(a, b);
    assert!(a.iter().all(|&v| v > 0.0));
    Ok(())
}
