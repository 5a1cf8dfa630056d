#![allow(clippy::approx_constant, clippy::excessive_precision, clippy::type_complexity)]
//! The second batch of `oxtorch_nn::distributions` against torch 2.15 (goldens from
//! nn/tests/make_distributions_heavy_tailed_transformed_golden.py): Cauchy, HalfNormal, HalfCauchy, Chi2, StudentT,
//! Geometric, NegativeBinomial, LogNormal and TransformedDistribution (the SAC tanh-Normal) —
//! log_prob, entropy, moments, cdf/icdf and gradients of `log_prob(value).sum()`; the transforms
//! (call, inv, log_abs_det_jacobian and their gradients); `standard_gamma_grad` against
//! `torch._standard_gamma_grad(alpha, x)`; `Gamma.rsample`'s reparameterized gradient; sampling
//! statistics; validation messages.

use std::sync::Arc;

use oxtorch_nn::distributions::{
    standard_gamma_grad, AbsTransform, AffineTransform, Cauchy, Chi2, ComposeTransform, Distribution,
    ExpTransform, Gamma, Geometric, HalfCauchy, HalfNormal, LogNormal, NegativeBinomial, Normal,
    PowerTransform, SigmoidTransform, SoftmaxTransform, StudentT, TanhTransform, Transform,
    TransformedDistribution,
};
use oxtorch_tensor::{DType, Generator, Result, Tensor};

use super::golden_case::{assert_close, assert_close_as_f64, float64, ramp, T};

/// One distribution of the golden file with its parameters (all differentiated), a
/// `log_prob`/`cdf` value, `icdf` probabilities `q` (empty when not tested), the shapes and
/// torch's outputs and gradients.
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

/// One transform: its parameters, an input `x` and an output `y`; torch's `call(x)`, `inv(y)` and
/// `log_abs_det_jacobian(x, call(x))` (absent where torch raises NotImplementedError), and the
/// gradients of `sum_k (out_k * ramp(out_k)).sum()` for `x`, `y` and the parameters.
struct TransformCase {
    kind: &'static str,
    params: &'static [(&'static str, T)],
    x: T,
    y: T,
    outs: &'static [(&'static str, T)],
    grads: &'static [(&'static str, T)],
}

include!("distributions_heavy_tailed_transformed_golden.rs");

/// The parameters as float64 leaves requiring grad.
fn leaves(params: &[(&'static str, T)]) -> Vec<(&'static str, Tensor)> {
    params.iter().map(|(k, v)| (*k, float64(v).requires_grad_(true).unwrap())).collect()
}

fn get<'a>(p: &'a [(&'static str, Tensor)], k: &str) -> &'a Tensor {
    &p.iter().find(|(n, _)| *n == k).unwrap_or_else(|| panic!("no parameter {k}")).1
}

fn arc<X: Transform + 'static>(x: X) -> Arc<dyn Transform> {
    Arc::new(x)
}

/// The distribution of a golden `kind` from its parameters.
fn build(kind: &str, p: &[(&'static str, Tensor)]) -> Result<Arc<dyn Distribution>> {
    let g = |k| get(p, k);
    Ok(match kind {
        "Cauchy" => Arc::new(Cauchy::new(g("loc"), g("scale"))?),
        "HalfNormal" => Arc::new(HalfNormal::new(g("scale"))?),
        "HalfCauchy" => Arc::new(HalfCauchy::new(g("scale"))?),
        "Chi2" => Arc::new(Chi2::new(g("df"))?),
        "StudentT" => Arc::new(StudentT::new(g("df"), g("loc"), g("scale"))?),
        "GeometricProbs" => Arc::new(Geometric::from_probs(g("probs"))?),
        "GeometricLogits" => Arc::new(Geometric::from_logits(g("logits"))?),
        "NegativeBinomialProbs" => Arc::new(NegativeBinomial::from_probs(g("total_count"), g("probs"))?),
        "NegativeBinomialLogits" => Arc::new(NegativeBinomial::from_logits(g("total_count"), g("logits"))?),
        "LogNormal" => Arc::new(LogNormal::new(g("loc"), g("scale"))?),
        "TanhNormal" => {
            let base: Arc<dyn Distribution> = Arc::new(Normal::new(g("loc"), g("scale"))?);
            let ts = vec![arc(AffineTransform::new(g("t_loc"), g("t_scale"), 0)), arc(TanhTransform)];
            Arc::new(TransformedDistribution::new(base, ts)?)
        }
        "AffineEvent1Normal" => {
            let base: Arc<dyn Distribution> = Arc::new(Normal::new(g("loc"), g("scale"))?);
            let ts = vec![arc(AffineTransform::new(g("t_loc"), g("t_scale"), 1))];
            Arc::new(TransformedDistribution::new(base, ts)?)
        }
        _ => panic!("unknown kind {kind}"),
    })
}

/// The transform of a golden `kind` from its parameters.
fn transform(kind: &str, p: &[(&'static str, Tensor)]) -> Arc<dyn Transform> {
    let g = |k| get(p, k);
    match kind {
        "Exp" => arc(ExpTransform),
        "Affine" => arc(AffineTransform::new(g("loc"), g("scale"), 0)),
        "AffineEvent1" => arc(AffineTransform::new(g("loc"), g("scale"), 1)),
        "Sigmoid" => arc(SigmoidTransform),
        "Tanh" => arc(TanhTransform),
        "Softmax" => arc(SoftmaxTransform),
        "Power" => arc(PowerTransform::new(g("exponent"))),
        "Abs" => arc(AbsTransform),
        "ComposeAffineExp" => {
            let affine = arc(AffineTransform::new(g("loc"), g("scale"), 0));
            arc(ComposeTransform::new(vec![affine, arc(ExpTransform)]))
        }
        "ComposeExpAffine1" => {
            let affine = arc(AffineTransform::new(g("loc"), g("scale"), 1));
            arc(ComposeTransform::new(vec![arc(ExpTransform), affine]))
        }
        _ => panic!("unknown transform {kind}"),
    }
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
        // Where torch has no entropy (NegativeBinomial, TransformedDistribution), neither do we.
        if !c.outs.iter().any(|(n, _)| *n == "entropy") {
            assert!(d.entropy().is_err(), "{}: entropy should be NotImplemented", c.kind);
        }
        d.log_prob(&value)?.sum_all()?.backward()?;
        for (k, want) in c.grads {
            let got = get(&p, k).grad().unwrap_or_else(|| panic!("{}: no gradient for {k}", c.kind));
            assert_close_as_f64(&format!("{}.grad.{k}", c.kind), &got, want, 1e-9);
        }
    }
    Ok(())
}

#[test]
fn transforms_match_torch() -> Result<()> {
    for c in TRANSFORMS {
        let p = leaves(c.params);
        let tr = transform(c.kind, &p);
        let x = float64(&c.x).requires_grad_(true)?;
        let y = float64(&c.y).requires_grad_(true)?;
        let fx = tr.call(&x)?;
        let mut outs = vec![("call", fx.clone()), ("inv", tr.inv(&y)?)];
        let torch_has_ladj = c.outs.iter().any(|(n, _)| *n == "ladj");
        match tr.log_abs_det_jacobian(&x, &fx) {
            Ok(l) => {
                assert!(torch_has_ladj, "{}: torch has no log_abs_det_jacobian", c.kind);
                outs.push(("ladj", l));
            }
            Err(e) => assert!(!torch_has_ladj, "{}: log_abs_det_jacobian: {e}", c.kind),
        }
        assert_eq!(outs.len(), c.outs.len(), "{}: outputs", c.kind);
        let mut loss: Option<Tensor> = None;
        for ((name, got), (want_name, want)) in outs.iter().zip(c.outs) {
            assert_eq!(name, want_name, "{}: output order", c.kind);
            assert_close(&format!("{}.{name}", c.kind), got, want, 1e-9);
            let term = got.mul(ramp(got))?.sum_all()?;
            loss = Some(match loss {
                None => term,
                Some(l) => l.add(&term)?,
            });
        }
        loss.expect("an output").backward()?;
        for (k, want) in c.grads {
            let leaf = match *k {
                "x" => &x,
                "y" => &y,
                _ => get(&p, k),
            };
            // torch's allow_unused gives zeros where an input is not used.
            let got = leaf.grad().unwrap_or_else(|| leaf.detach().zeros_like().unwrap());
            assert_close(&format!("{}.grad.{k}", c.kind), &got, want, 1e-9);
        }
    }
    Ok(())
}

#[test]
fn transform_properties_match_torch() -> Result<()> {
    let z = t(&[0.0, 0.0, 0.0]);
    let o = t(&[1.0, 1.0, 1.0]);
    let c = ComposeTransform::new(vec![arc(ExpTransform), arc(AffineTransform::new(&z, &o, 1))]);
    assert_eq!((c.domain_event_dim(), c.codomain_event_dim()), (1, 1));
    assert!(c.bijective());
    assert_eq!(c.forward_shape(&[2, 3])?, vec![2, 3]);
    assert!(!SoftmaxTransform.bijective());
    assert!(!AbsTransform.bijective());
    assert_eq!((SoftmaxTransform.domain_event_dim(), SoftmaxTransform.codomain_event_dim()), (1, 1));
    assert_eq!(TanhTransform.sign()?.to_f64_vec()?, vec![1.0]);
    let affine = AffineTransform::new(&z, &t(&[2.0, -0.5, 1.0]), 0);
    assert_eq!(affine.sign()?.to_f64_vec()?, vec![1.0, -1.0, 1.0]);
    Ok(())
}

#[test]
fn standard_gamma_grad_matches_torch() -> Result<()> {
    let (alpha, x, want) = &GAMMA_GRAD;
    let got = standard_gamma_grad(&float64(alpha), &float64(x))?;
    assert_close("standard_gamma_grad", &got, want, 1e-9);
    // Broadcasting: alpha [2, 1] against x [3].
    let a = Tensor::from_vec(vec![0.5, 20.0], [2, 1])?;
    let xs = t(&[0.3, 5.0, 20.0]);
    let g = standard_gamma_grad(&a, &xs)?;
    assert_eq!(g.dims(), &[2, 3]);
    let each: Vec<f64> = [(0.5, 0.3), (0.5, 5.0), (0.5, 20.0), (20.0, 0.3), (20.0, 5.0), (20.0, 20.0)]
        .iter()
        .map(|&(a, x)| standard_gamma_grad(&t(&[a]), &t(&[x])).unwrap().to_f64_vec().unwrap()[0])
        .collect();
    assert_eq!(g.to_f64_vec()?, each);
    Ok(())
}

fn near(what: &str, got: &[f64], want: &[f64], tol: f64) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert!((g - w).abs() <= tol * (1.0 + w.abs()), "{what}[{i}]: got {g}, want {w}");
    }
}

#[test]
fn gamma_rsample_is_reparameterized_by_standard_gamma_grad() -> Result<()> {
    let gen = Generator::new(5);
    let n = 400;
    let conc = t(&[0.3, 2.0, 60.0]).requires_grad_(true)?;
    let rate = t(&[1.5, 0.5, 2.0]).requires_grad_(true)?;
    let d = Gamma::new(&conc, &rate)?;
    assert!(d.has_rsample());
    let x = d.rsample_with(&[n], Some(&gen))?;
    assert_eq!(x.dims(), &[n, 3]);
    assert!(x.requires_grad());
    assert!(x.to_f64_vec()?.iter().all(|&v| v > 0.0));
    x.sum_all()?.backward()?;
    // x = s / rate with s ~ Gamma(conc, 1): dx/dconc = standard_gamma_grad(conc, s) / rate,
    // dx/drate = -x / rate.
    let (xd, rd) = (x.detach(), rate.detach());
    let s = xd.mul(&rd)?;
    let dconc = standard_gamma_grad(&conc.detach().expand(vec![n, 3])?, &s)?.div(&rd)?.sum(0isize, false)?;
    let drate = xd.neg()?.div(&rd)?.sum(0isize, false)?;
    near("Gamma.dconc", &conc.grad().expect("conc grad").to_f64_vec()?, &dconc.to_f64_vec()?, 1e-10);
    near("Gamma.drate", &rate.grad().expect("rate grad").to_f64_vec()?, &drate.to_f64_vec()?, 1e-10);

    // Shapes: sample_shape + batch_shape, with broadcast parameters.
    let c2 = Tensor::from_vec(vec![0.5, 4.0], [2, 1])?;
    let g2 = Gamma::new(&c2, &t(&[1.0, 2.0, 3.0]))?;
    assert_eq!(g2.rsample(&[4, 5])?.dims(), &[4, 5, 2, 3]);
    assert_eq!(g2.rsample(&[])?.dims(), &[2, 3]);
    // Chi2 is a Gamma: reparameterized too, and df gets a gradient.
    let df = t(&[3.0, 8.0]).requires_grad_(true)?;
    let chi2 = Chi2::new(&df)?;
    assert!(chi2.has_rsample());
    let z = chi2.rsample_with(&[7], Some(&gen))?;
    assert_eq!(z.dims(), &[7, 2]);
    z.sum_all()?.backward()?;
    assert!(df.grad().is_some(), "Chi2: no gradient for df");
    Ok(())
}

/// Mean and variance of the first dim of `x` (`[n, ...]`), flattened.
fn moments(x: &Tensor) -> (Vec<f64>, Vec<f64>) {
    let x = x.to_dtype(DType::F64).unwrap();
    let m = x.mean(0isize, false).unwrap();
    let v = x.sub(&m).unwrap().square().unwrap().mean(0isize, false).unwrap();
    (m.to_f64_vec().unwrap(), v.to_f64_vec().unwrap())
}

#[test]
fn samples_have_torch_shapes_and_moments() -> Result<()> {
    let gen = Generator::new(17);
    let n = 20000;
    let check = |what: &str, d: &dyn Distribution, tol: f64| -> Result<()> {
        let x = d.sample_with(&[n], Some(&gen))?;
        assert_eq!(x.dims(), d.extended_shape(&[n]).as_slice(), "{what}: sample shape");
        assert!(!x.requires_grad(), "{what}: sample needs no grad");
        let (m, v) = moments(&x);
        near(&format!("{what}.mean"), &m, &d.mean()?.to_f64_vec()?, tol);
        near(&format!("{what}.var"), &v, &d.variance()?.to_f64_vec()?, 3.0 * tol);
        Ok(())
    };
    check("HalfNormal", &HalfNormal::new(&t(&[1.0, 2.0]))?, 0.05)?;
    check("Chi2", &Chi2::new(&t(&[3.0, 8.0]))?, 0.05)?;
    check("StudentT", &StudentT::new(&t(&[10.0, 30.0]), &t(&[1.0, -1.0]), &t(&[2.0, 0.5]))?, 0.05)?;
    check("Geometric", &Geometric::from_probs(&t(&[0.3, 0.7]))?, 0.05)?;
    check("NegativeBinomial", &NegativeBinomial::from_probs(&t(&[3.0, 10.0]), &t(&[0.3, 0.6]))?, 0.05)?;
    check("LogNormal", &LogNormal::new(&t(&[0.0, 0.5]), &t(&[0.3, 0.5]))?, 0.05)?;

    // Integer-valued draws are whole and non-negative.
    for x in [
        Geometric::from_probs(&t(&[0.3, 0.7]))?.sample_with(&[100], Some(&gen))?,
        NegativeBinomial::from_logits(&t(&[2.0]), &t(&[0.5]))?.sample_with(&[100], Some(&gen))?,
    ] {
        assert!(x.to_f64_vec()?.iter().all(|&v| v >= 0.0 && v.fract() == 0.0));
    }

    // Cauchy has no moments: its sample median is the loc, its quartiles loc ± scale.
    let (loc, scale) = ([0.5, -2.0], [1.0, 0.3]);
    let c = Cauchy::new(&t(&loc), &t(&scale))?;
    let x = c.sample_with(&[n], Some(&gen))?;
    assert_eq!(x.dims(), &[n, 2]);
    near("Cauchy.median", &x.median(0, false)?.0.to_f64_vec()?, &loc, 0.05);
    let xs = x.to_f64_vec()?;
    for b in 0..2 {
        let inside = xs.iter().skip(b).step_by(2).filter(|&&v| (v - loc[b]).abs() <= scale[b]).count();
        near("Cauchy.iqr", &[inside as f64 / n as f64], &[0.5], 0.03);
    }
    // HalfCauchy draws are non-negative with median = scale.
    let hc = HalfCauchy::new(&t(&[2.0]))?.sample_with(&[n], Some(&gen))?;
    assert!(hc.to_f64_vec()?.iter().all(|&v| v >= 0.0));
    near("HalfCauchy.median", &hc.median(0, false)?.0.to_f64_vec()?, &[2.0], 0.05);

    // The tanh-Normal: draws within (-1, 1), rsample differentiable, shape sample + batch.
    let loc = t(&[0.3, -0.5]).requires_grad_(true)?;
    let base: Arc<dyn Distribution> = Arc::new(Normal::new(&loc, &t(&[0.8, 1.5]))?);
    let affine = AffineTransform::new(&t(&[0.1, 0.0]), &t(&[1.0, -0.5]), 0);
    let d = TransformedDistribution::new(base, vec![arc(affine), arc(TanhTransform)])?;
    let a = d.rsample_with(&[5, 3], Some(&gen))?;
    assert_eq!(a.dims(), &[5, 3, 2]);
    assert!(a.to_f64_vec()?.iter().all(|&v| v > -1.0 && v < 1.0));
    d.log_prob(&a.detach())?.sum_all()?.backward()?;
    assert!(loc.grad().is_some());
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
    // (float32 parameters, as the torch goldens: messages print the values with their dtype)
    let t =
        |v: &[f64]| Tensor::from_slice(v, [v.len()]).unwrap().to_dtype(oxtorch_tensor::DType::F32).unwrap();
    let s = |x: f64| Tensor::from_vec(vec![x as f32], Vec::<usize>::new()).unwrap();
    let normal: Arc<dyn Distribution> = Arc::new(Normal::new(&t(&[0.0]), &t(&[1.0])).unwrap());
    let mut bad = Vec::new();
    for (name, want) in ERRS {
        let got = match *name {
            "cauchy_scale" => first_line(Cauchy::new(&t(&[0.0, 1.0]), &t(&[1.0, -1.0]))),
            "studentt_df" => first_line(StudentT::new(&t(&[0.0, 1.0]), &s(0.0), &s(1.0))),
            "chi2_df" => first_line(Chi2::new(&t(&[0.0]))),
            "geometric_probs_zero" => first_line(Geometric::from_probs(&t(&[0.0]))),
            "geometric_probs" => first_line(Geometric::from_probs(&t(&[1.5]))),
            "geometric_value" => first_line(Geometric::from_probs(&t(&[0.5])).unwrap().log_prob(&t(&[-1.0]))),
            "geometric_both" => {
                first_line(Geometric::with_validate_args(Some(&t(&[0.5])), Some(&t(&[0.0])), None))
            }
            "negbin_total_count" => first_line(NegativeBinomial::from_probs(&t(&[-1.0]), &t(&[0.5]))),
            "halfnormal_value" => first_line(HalfNormal::new(&t(&[1.0])).unwrap().log_prob(&t(&[-1.0]))),
            "lognormal_value" => {
                first_line(LogNormal::new(&t(&[0.0]), &t(&[1.0])).unwrap().log_prob(&t(&[-1.0])))
            }
            "tanh_normal_value" => {
                let d = TransformedDistribution::new(normal.clone(), vec![arc(TanhTransform)]).unwrap();
                first_line(d.log_prob(&t(&[1.5])))
            }
            _ => panic!("unknown error case {name}"),
        };
        // Known wording differences (documented): torch checks StudentT's and Chi2's df inside
        // its Chi2 (printed `Chi2()`), words Geometric's zero probability as "to be positive",
        // prints NegativeBinomial's integer bound as `0`, and prints HalfNormal/LogNormal without
        // their parameters. The same error is raised; only the sentence differs.
        const KNOWN: [&str; 6] = [
            "studentt_df",
            "chi2_df",
            "geometric_probs_zero",
            "negbin_total_count",
            "halfnormal_value",
            "lognormal_value",
        ];
        if KNOWN.contains(name) {
            let same_kind = got.split(" (Tensor of shape").next() == want.split(" (Tensor of shape").next()
                || (got.starts_with("Expected parameter") && want.starts_with("Expected parameter"));
            if !(same_kind && got.ends_with("found invalid values:")) {
                bad.push(format!("{name}:\n  got   {got:?}\n  torch {want:?}"));
            }
        } else if got != *want {
            bad.push(format!("{name}:\n  got   {got:?}\n  torch {want:?}"));
        }
    }
    assert!(bad.is_empty(), "messages differ from torch:\n{}", bad.join("\n"));
}
