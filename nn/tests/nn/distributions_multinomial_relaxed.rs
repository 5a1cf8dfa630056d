#![allow(clippy::approx_constant, clippy::excessive_precision, clippy::type_complexity)]
//! `oxtorch_nn::distributions` against torch 2.15 (goldens from
//! nn/tests/make_distributions_multinomial_relaxed_golden.py): Multinomial and the relaxed distributions (log_prob,
//! entropy, moments, gradients of `log_prob(value).sum()`), `_dirichlet_grad` behind the
//! reparameterized Dirichlet/Beta samples, and validation messages; then sampling (shapes,
//! supports, statistics) and the reparameterized gradients of `rsample`.

use std::sync::Arc;

use oxtorch_nn::distributions::{
    dirichlet_grad, Beta, Dirichlet, Distribution, ExpRelaxedCategorical, LogitRelaxedBernoulli, Multinomial,
    RelaxedBernoulli, RelaxedOneHotCategorical,
};
use oxtorch_tensor::{DType, Generator, Result, Tensor};

use super::golden_case::{assert_close_as_f64, float64, T};

/// One distribution of the golden file with its parameters, a `log_prob` value, the shapes and
/// torch's outputs and gradients.
struct DistCase {
    kind: &'static str,
    params: &'static [(&'static str, T)],
    value: T,
    batch: &'static [usize],
    event: &'static [usize],
    outs: &'static [(&'static str, T)],
    grads: &'static [(&'static str, T)],
}

include!("distributions_multinomial_relaxed_golden.rs");

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
    let n = || g("total_count").to_f64_vec().unwrap()[0] as i64;
    Ok(match kind {
        "MultinomialProbs" => Arc::new(Multinomial::from_probs(n(), g("probs"))?),
        "MultinomialLogits" => Arc::new(Multinomial::from_logits(n(), g("logits"))?),
        "LogitRelaxedBernoulliProbs" => {
            Arc::new(LogitRelaxedBernoulli::from_probs(g("temperature"), g("probs"))?)
        }
        "LogitRelaxedBernoulliLogits" => {
            Arc::new(LogitRelaxedBernoulli::from_logits(g("temperature"), g("logits"))?)
        }
        "RelaxedBernoulliProbs" => Arc::new(RelaxedBernoulli::from_probs(g("temperature"), g("probs"))?),
        "RelaxedBernoulliLogits" => Arc::new(RelaxedBernoulli::from_logits(g("temperature"), g("logits"))?),
        "ExpRelaxedCategoricalProbs" => {
            Arc::new(ExpRelaxedCategorical::from_probs(g("temperature"), g("probs"))?)
        }
        "ExpRelaxedCategoricalLogits" => {
            Arc::new(ExpRelaxedCategorical::from_logits(g("temperature"), g("logits"))?)
        }
        "RelaxedOneHotCategoricalProbs" => {
            Arc::new(RelaxedOneHotCategorical::from_probs(g("temperature"), g("probs"))?)
        }
        "RelaxedOneHotCategoricalLogits" => {
            Arc::new(RelaxedOneHotCategorical::from_logits(g("temperature"), g("logits"))?)
        }
        _ => panic!("unknown kind {kind}"),
    })
}

fn t(v: &[f64]) -> Tensor {
    Tensor::from_vec(v.to_vec(), [v.len()]).unwrap()
}

fn s(x: f64) -> Tensor {
    Tensor::scalar_tensor(x, ()).unwrap().to_dtype(DType::F64).unwrap()
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
                _ => unreachable!(),
            };
            assert_close_as_f64(&format!("{}.{name}", c.kind), &got, want, 1e-9);
        }
        // what torch does not implement, neither do we
        let names: Vec<&str> = c.outs.iter().map(|(n, _)| *n).collect();
        if !names.contains(&"mean") {
            assert!(d.mean().is_err(), "{}: mean should be NotImplemented", c.kind);
        }
        if !names.contains(&"entropy") {
            assert!(d.entropy().is_err(), "{}: entropy should be NotImplemented", c.kind);
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
fn dirichlet_grad_matches_torch() -> Result<()> {
    let got = dirichlet_grad(&t(DGRAD_X), &t(DGRAD_ALPHA), &t(DGRAD_TOTAL))?;
    assert_eq!(got.dims(), &[DGRAD_X.len()]);
    assert_eq!(got.dtype(), DType::F64);
    let got = got.to_f64_vec()?;
    for (i, (g, w)) in got.iter().zip(DGRAD_OUT).enumerate() {
        assert!(
            (g - w).abs() <= 1e-9 * (1.0 + w.abs()),
            "_dirichlet_grad(x={}, alpha={}, total={}): got {g}, torch {w} [{i}]",
            DGRAD_X[i],
            DGRAD_ALPHA[i],
            DGRAD_TOTAL[i]
        );
    }
    // float32 in, float32 out; broadcasting of a shared total
    let x32 = t(&[0.2, 0.7]).to_dtype(DType::F32)?;
    let a32 = t(&[1.5, 3.0]).to_dtype(DType::F32)?;
    let g32 = dirichlet_grad(&x32, &a32, &s(4.5).to_dtype(DType::F32)?)?;
    assert_eq!(g32.dtype(), DType::F32);
    assert_eq!(g32.dims(), &[2]);
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
    let p3 = || t(&[0.2, 0.3, 0.5]);
    let half = s(0.5);
    for (name, want) in ERRS {
        let got = match *name {
            "multinomial_value" => {
                first_line(Multinomial::from_probs(3, &p3()).unwrap().log_prob(&t(&[1.0, -1.0, 3.0])))
            }
            "multinomial_too_many" => {
                first_line(Multinomial::from_probs(3, &p3()).unwrap().log_prob(&t(&[1.0, 1.0, 2.0])))
            }
            "multinomial_event" => {
                first_line(Multinomial::from_probs(3, &p3()).unwrap().log_prob(&t(&[1.0, 2.0])))
            }
            "multinomial_probs" => first_line(Multinomial::from_probs(3, &t(&[-0.2, 0.6, 0.6]))),
            "multinomial_total_count" => first_line(Multinomial::from_probs(-1, &p3())),
            "multinomial_tensor_count" => {
                first_line(Multinomial::with_total_count_tensor(&s(3.0), Some(&p3()), None, None))
            }
            "multinomial_both" => first_line(Multinomial::with_validate_args(
                3,
                Some(&t(&[0.5, 0.5])),
                Some(&t(&[0.0, 0.0])),
                None,
            )),
            "lrb_probs" => first_line(LogitRelaxedBernoulli::from_probs(&half, &t(&[0.5, 1.5]))),
            "lrb_neither" => first_line(LogitRelaxedBernoulli::with_validate_args(&half, None, None, None)),
            "rb_probs" => first_line(RelaxedBernoulli::from_probs(&half, &t(&[0.5, 1.5]))),
            "rb_value" => first_line(
                RelaxedBernoulli::from_probs(&half, &t(&[0.5, 0.5])).unwrap().log_prob(&t(&[0.5, 1.5])),
            ),
            "erc_event" => first_line(
                ExpRelaxedCategorical::from_probs(&half, &t(&[0.5, 0.5])).unwrap().log_prob(&t(&[0.5])),
            ),
            "rohc_value" => {
                let d = RelaxedOneHotCategorical::from_probs(&half, &t(&[0.5, 0.5])).unwrap();
                first_line(d.log_prob(&t(&[0.5, 0.6])))
            }
            "rohc_probs" => {
                let bad = Tensor::from_vec(vec![0.5, -0.5], [1, 2]).unwrap();
                first_line(RelaxedOneHotCategorical::from_probs(&half, &bad))
            }
            _ => panic!("unknown error case {name}"),
        };
        assert!(got.contains(want), "{name}: got {got:?}, torch {want:?}");
    }
}

#[test]
fn validation_can_be_disabled() -> Result<()> {
    // a count above total_count is only rejected when validating
    let m = Multinomial::with_validate_args(2, Some(&t(&[0.5, 0.5])), None, Some(false))?;
    let lp = m.log_prob(&t(&[2.0, 2.0]))?.to_f64_vec()?[0];
    let want = (24.0f64).ln() - 2.0 * 2.0f64.ln() + 4.0 * 0.5f64.ln();
    assert!((lp - want).abs() < 1e-12, "got {lp}, want {want}");
    let rb = RelaxedBernoulli::with_validate_args(&s(0.5), Some(&t(&[0.5])), None, Some(false))?;
    assert!(rb.log_prob(&t(&[1.5]))?.to_f64_vec()?[0].is_finite());
    Ok(())
}

fn near(what: &str, got: &[f64], want: &[f64], tol: f64) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert!((g - w).abs() <= tol * (1.0 + w.abs()), "{what}[{i}]: got {g}, want {w}");
    }
}

/// Mean of the first dim of `x` (`[n, ...]`), flattened.
fn mean0(x: &Tensor) -> Vec<f64> {
    x.to_dtype(DType::F64).unwrap().mean(0isize, false).unwrap().to_f64_vec().unwrap()
}

#[test]
fn samples_have_torch_shapes_supports_and_moments() -> Result<()> {
    let gen = Generator::new(5);
    let n = 20000;
    // Multinomial: counts summing to total_count, mean n p.
    let probs = Tensor::from_vec(vec![0.2, 0.3, 0.5, 0.6, 0.3, 0.1], [2, 3])?;
    let m = Multinomial::from_probs(6, &probs)?;
    let x = m.sample_with(&[n], Some(&gen))?;
    assert_eq!(x.dims(), &[n, 2, 3]);
    assert_eq!(x.dtype(), DType::F64);
    let sums = x.sum(-1isize, false)?.to_f64_vec()?;
    assert!(sums.iter().all(|&v| v == 6.0), "Multinomial: counts must sum to total_count");
    assert!(x.to_f64_vec()?.iter().all(|&v| v >= 0.0 && v.fract() == 0.0));
    near("Multinomial.mean", &mean0(&x), &m.mean()?.to_f64_vec()?, 0.03);
    let v = x.sub(&x.mean(0isize, true)?)?.square()?.mean(0isize, false)?.to_f64_vec()?;
    near("Multinomial.var", &v, &m.variance()?.to_f64_vec()?, 0.1);
    assert_eq!(m.sample(&[])?.dims(), &[2, 3]);
    let zero = Multinomial::from_probs(0, &t(&[0.5, 0.5]))?.sample(&[4])?;
    assert_eq!(zero.dims(), &[4, 2]);
    assert!(zero.to_f64_vec()?.iter().all(|&v| v == 0.0));
    assert!(m.mode().is_err());

    // RelaxedBernoulli: values in (0, 1); as the temperature falls they approach Bernoulli(p).
    let rb = RelaxedBernoulli::from_probs(&s(0.05), &t(&[0.2, 0.7]))?;
    let x = rb.sample_with(&[n], Some(&gen))?;
    assert_eq!(x.dims(), &[n, 2]);
    assert!(!x.requires_grad());
    assert!(x.to_f64_vec()?.iter().all(|&v| v > 0.0 && v < 1.0));
    near("RelaxedBernoulli.mean", &mean0(&x), &[0.2, 0.7], 0.03);
    // LogitRelaxedBernoulli at temperature 1: logistic(logit p) draws, P(x > 0) = p.
    let lrb = LogitRelaxedBernoulli::from_probs(&s(1.0), &t(&[0.3]))?;
    assert!(!lrb.has_rsample());
    let x = lrb.sample_with(&[n], Some(&gen))?;
    let pos = x.to_f64_vec()?.iter().filter(|&&v| v > 0.0).count() as f64 / n as f64;
    near("LogitRelaxedBernoulli.P(x>0)", &[pos], &[0.3], 0.03);

    // RelaxedOneHotCategorical: points of the simplex; at a low temperature their mean is probs.
    let rc = RelaxedOneHotCategorical::from_probs(&s(0.05), &probs)?;
    let x = rc.sample_with(&[n], Some(&gen))?;
    assert_eq!(x.dims(), &[n, 2, 3]);
    let sums = x.sum(-1isize, false)?.to_f64_vec()?;
    assert!(sums.iter().all(|&v| (v - 1.0).abs() < 1e-9));
    assert!(x.to_f64_vec()?.iter().all(|&v| v >= 0.0));
    near("RelaxedOneHotCategorical.mean", &mean0(&x), &probs.to_f64_vec()?, 0.03);
    // ExpRelaxedCategorical: log-simplex points (logsumexp 0).
    let erc = ExpRelaxedCategorical::from_logits(&s(0.7), &t(&[0.1, 0.2, -1.0, 0.5]))?;
    let x = erc.rsample_with(&[7, 2], Some(&gen))?;
    assert_eq!(x.dims(), &[7, 2, 4]);
    let lse = x.logsumexp(-1isize, false)?.to_f64_vec()?;
    assert!(lse.iter().all(|&v| v.abs() < 1e-9));
    Ok(())
}

#[test]
fn relaxed_rsample_is_reparameterized() -> Result<()> {
    let gen = Generator::new(13);
    // RelaxedBernoulli: x = sigmoid((L + logits) / T), so d x / d logits = x (1 - x) / T.
    let logits = t(&[-0.5, 1.0]).requires_grad_(true)?;
    let temp = s(0.8);
    let d = RelaxedBernoulli::from_logits(&temp, &logits)?;
    assert!(d.has_rsample());
    let x = d.rsample_with(&[50], Some(&gen))?;
    assert!(x.requires_grad());
    x.sum_all()?.backward()?;
    let mut want = [0.0; 2];
    for (i, v) in x.detach().to_f64_vec()?.iter().enumerate() {
        want[i % 2] += v * (1.0 - v) / 0.8;
    }
    near("RelaxedBernoulli.dlogits", &logits.grad().unwrap().to_f64_vec()?, &want, 1e-6);

    // ExpRelaxedCategorical: the samples are shift-invariant in the logits, so the gradient of
    // any function of a sample sums to zero over the categories.
    let logits = t(&[0.3, -0.2, 1.0]).requires_grad_(true)?;
    let d = ExpRelaxedCategorical::from_logits(&s(0.5), &logits)?;
    let x = d.rsample_with(&[20], Some(&gen))?;
    x.exp()?.select(-1, 0)?.sum_all()?.backward()?;
    let g = logits.grad().unwrap().to_f64_vec()?;
    assert!(g.iter().sum::<f64>().abs() < 1e-9, "got {g:?}");
    assert!(g[0] > 0.0, "the first category's weight grows with its logit: {g:?}");
    Ok(())
}

#[test]
fn dirichlet_and_beta_rsample_gradients_are_reparameterized() -> Result<()> {
    let gen = Generator::new(21);
    let n = 20000;
    // d/d alpha E[x_0] of Dirichlet(alpha) = d/d alpha (alpha_0 / a0): the mean of the
    // reparameterized gradients over many draws estimates it.
    let alpha = t(&[1.5, 2.0, 3.5]).requires_grad_(true)?;
    let d = Dirichlet::new(&alpha)?;
    assert!(d.has_rsample());
    let x = d.rsample_with(&[n], Some(&gen))?;
    assert_eq!(x.dims(), &[n, 3]);
    assert!(x.requires_grad());
    let sums = x.detach().sum(-1isize, false)?.to_f64_vec()?;
    assert!(sums.iter().all(|&v| (v - 1.0).abs() < 1e-9));
    x.select(-1, 0)?.sum_all()?.div(n as f64)?.backward()?;
    let a0 = 7.0;
    let want = [(a0 - 1.5) / (a0 * a0), -1.5 / (a0 * a0), -1.5 / (a0 * a0)];
    near("Dirichlet.dE[x0]/dalpha", &alpha.grad().unwrap().to_f64_vec()?, &want, 0.01);

    // Beta: d/d a E[x] = b / (a + b)^2, d/d b E[x] = -a / (a + b)^2; and E[x^2] = a (a + 1) /
    // ((a + b)(a + b + 1)) differentiated through the square.
    let a = t(&[0.7, 4.0]).requires_grad_(true)?;
    let b = t(&[2.0, 1.5]).requires_grad_(true)?;
    let beta = Beta::new(&a, &b)?;
    assert!(beta.has_rsample());
    let x = beta.rsample_with(&[n], Some(&gen))?;
    assert_eq!(x.dims(), &[n, 2]);
    x.square()?.sum_all()?.div(n as f64)?.backward()?;
    let (av, bv) = ([0.7, 4.0], [2.0, 1.5]);
    let mut wa = [0.0; 2];
    let mut wb = [0.0; 2];
    for i in 0..2 {
        // E[x^2] = a (a + 1) / (s (s + 1)), s = a + b
        let (p, q) = (av[i], bv[i]);
        let sum = p + q;
        let den = sum * (sum + 1.0);
        let dden = 2.0 * sum + 1.0;
        wa[i] = ((2.0 * p + 1.0) * den - p * (p + 1.0) * dden) / (den * den);
        wb[i] = -p * (p + 1.0) * dden / (den * den);
    }
    near("Beta.dE[x^2]/da", &a.grad().unwrap().to_f64_vec()?, &wa, 0.01);
    near("Beta.dE[x^2]/db", &b.grad().unwrap().to_f64_vec()?, &wb, 0.01);

    // batched concentrations and a sample shape: gradients reach the unexpanded parameter
    let c = Tensor::from_vec(vec![1.0, 2.0, 3.0, 4.0], [2, 2])?.requires_grad_(true)?;
    let x = Dirichlet::new(&c)?.rsample_with(&[3], Some(&gen))?;
    assert_eq!(x.dims(), &[3, 2, 2]);
    x.select(-1, 0)?.sum_all()?.backward()?;
    let g = c.grad().unwrap();
    assert_eq!(g.dims(), &[2, 2]);
    assert!(g.to_f64_vec()?.iter().all(|v| v.is_finite()));
    Ok(())
}
