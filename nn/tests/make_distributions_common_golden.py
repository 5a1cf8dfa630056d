"""Writes nn/tests/nn/distributions_common_golden.rs: torch.distributions values (float64) replayed by
nn/tests/nn/distributions_common.rs — log_prob, entropy, moments, cdf/icdf, the gradients of
log_prob(value).sum() with respect to the parameters, kl_divergence, and validation messages.

Run with the reference torch: /work/.refenv/bin/python nn/tests/make_distributions_common_golden.py
"""

import os
import sys

import torch
import torch.distributions as D

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from golden_writer import generated_header, named, rust_str, tensor_lit, write_golden  # noqa: E402

torch.set_default_dtype(torch.float64)
t = torch.tensor


def build(kind, params):
    p = dict(params)
    if kind == "Normal":
        return D.Normal(p["loc"], p["scale"])
    if kind == "Uniform":
        return D.Uniform(p["low"], p["high"])
    if kind == "BernoulliProbs":
        return D.Bernoulli(probs=p["probs"])
    if kind == "BernoulliLogits":
        return D.Bernoulli(logits=p["logits"])
    if kind == "CategoricalProbs":
        return D.Categorical(probs=p["probs"])
    if kind == "CategoricalLogits":
        return D.Categorical(logits=p["logits"])
    if kind == "OneHotCategorical":
        return D.OneHotCategorical(probs=p["probs"])
    if kind == "Exponential":
        return D.Exponential(p["rate"])
    if kind == "Laplace":
        return D.Laplace(p["loc"], p["scale"])
    if kind == "Gamma":
        return D.Gamma(p["concentration"], p["rate"])
    if kind == "Beta":
        return D.Beta(p["concentration1"], p["concentration0"])
    if kind == "Dirichlet":
        return D.Dirichlet(p["concentration"])
    if kind == "Poisson":
        return D.Poisson(p["rate"])
    if kind == "BinomialProbs":
        return D.Binomial(p["total_count"], probs=p["probs"])
    if kind == "BinomialLogits":
        return D.Binomial(p["total_count"], logits=p["logits"])
    if kind == "MvnCov":
        return D.MultivariateNormal(p["loc"], covariance_matrix=p["covariance_matrix"])
    if kind == "MvnPrec":
        return D.MultivariateNormal(p["loc"], precision_matrix=p["precision_matrix"])
    if kind == "MvnTril":
        return D.MultivariateNormal(p["loc"], scale_tril=p["scale_tril"])
    if kind == "IndependentNormal":
        return D.Independent(D.Normal(p["loc"], p["scale"]), 1)
    raise ValueError(kind)


NOGRAD = {"total_count"}

SPD = t([[[2.0, 0.3, 0.1], [0.3, 1.5, -0.2], [0.1, -0.2, 1.0]], [[1.0, 0.0, 0.0], [0.0, 0.5, 0.1], [0.0, 0.1, 0.8]]])
TRIL = torch.linalg.cholesky(SPD)

CASES = [
    ("Normal", [("loc", t([0.5, -1.0, 2.0])), ("scale", t([[1.5], [0.3]]))], t([0.1, 0.2, -0.7]), t([0.1, 0.5, 0.9])),
    ("Uniform", [("low", t([-1.0, 0.0])), ("high", t([2.0, 0.5]))], t([[0.3, 0.2], [1.5, 0.4]]), t([0.25, 0.75])),
    ("BernoulliProbs", [("probs", t([0.2, 0.7, 0.5]))], t([[1.0, 0.0, 1.0], [0.0, 0.0, 1.0]]), None),
    ("BernoulliLogits", [("logits", t([-1.2, 0.3, 2.5]))], t([1.0, 0.0, 1.0]), None),
    ("CategoricalProbs", [("probs", t([[1.0, 2.0, 3.0], [0.5, 0.25, 0.25]]))], t([[2.0, 0.0], [1.0, 1.0]]), None),
    ("CategoricalLogits", [("logits", t([[0.1, -1.0, 2.0], [0.0, 0.0, 0.5]]))], t([2.0, 1.0]), None),
    ("OneHotCategorical", [("probs", t([[0.2, 0.3, 0.5], [0.6, 0.1, 0.3]]))], t([[0.0, 1.0, 0.0], [1.0, 0.0, 0.0]]), None),
    ("Exponential", [("rate", t([0.5, 2.0, 3.0]))], t([[0.1, 1.0, 2.5]]), t([0.1, 0.5, 0.9])),
    ("Laplace", [("loc", t([0.0, 1.0])), ("scale", t([[0.5, 2.0], [1.0, 1.0]]))], t([0.3, -0.4]), t([0.2, 0.7])),
    ("Gamma", [("concentration", t([0.5, 2.0, 4.5])), ("rate", t([1.5, 0.5, 2.0]))], t([0.3, 2.0, 1.7]), None),
    ("Beta", [("concentration1", t([0.5, 2.0, 3.0])), ("concentration0", t([1.5, 2.0, 0.7]))], t([0.3, 0.5, 0.9]), None),
    ("Dirichlet", [("concentration", t([[0.5, 2.0, 3.0], [1.5, 1.5, 4.0]]))], t([[0.2, 0.3, 0.5], [0.1, 0.6, 0.3]]), None),
    ("Poisson", [("rate", t([0.5, 3.0, 7.5]))], t([0.0, 2.0, 9.0]), None),
    ("BinomialProbs", [("total_count", t([5.0, 10.0, 3.0])), ("probs", t([0.3, 0.5, 0.9]))], t([2.0, 7.0, 3.0]), None),
    ("BinomialLogits", [("total_count", t([5.0, 10.0])), ("logits", t([-0.5, 1.5]))], t([0.0, 9.0]), None),
    ("MvnCov", [("loc", t([0.5, -1.0, 0.2])), ("covariance_matrix", SPD)], t([[0.1, 0.2, 0.3], [-1.0, 0.5, 0.0]]), None),
    ("MvnPrec", [("loc", t([[0.5, -1.0, 0.2]])), ("precision_matrix", SPD[0])], t([0.1, 0.2, 0.3]), None),
    ("MvnTril", [("loc", t([0.5, -1.0, 0.2])), ("scale_tril", TRIL)], t([[0.1, 0.2, 0.3], [-1.0, 0.5, 0.0]]), None),
    ("IndependentNormal", [("loc", t([[0.5, -1.0], [0.0, 1.0]])), ("scale", t([1.5, 0.3]))], t([0.1, 0.2]), None),
]


def quantities(d, value, q):
    outs = []
    for name in ["log_prob", "entropy", "mean", "variance", "stddev", "mode", "cdf", "icdf"]:
        try:
            if name == "log_prob":
                v = d.log_prob(value)
            elif name == "cdf":
                if q is None:
                    continue
                v = d.cdf(value)
            elif name == "icdf":
                if q is None:
                    continue
                v = d.icdf(q)
            else:
                v = getattr(d, name)
                v = v() if callable(v) else v
        except NotImplementedError:
            continue
        outs.append((name, v.detach()))
    return outs


def case_lines():
    lines = ["const CASES: &[DistCase] = &["]
    for kind, params, value, q in CASES:
        leaves = [(k, v.clone().requires_grad_(k not in NOGRAD)) for k, v in params]
        d = build(kind, leaves)
        outs = quantities(d, value, q)
        lp = d.log_prob(value).sum()
        gs = torch.autograd.grad(lp, [v for k, v in leaves if k not in NOGRAD])
        grads = list(zip([k for k, _ in leaves if k not in NOGRAD], gs))
        qlit = tensor_lit(q) if q is not None else "T { dims: &[0], data: &[] }"
        lines.append(
            f'    DistCase {{ kind: "{kind}", params: {named(params)}, value: {tensor_lit(value)}, q: {qlit}, '
            f"batch: &{list(d.batch_shape)}, event: &{list(d.event_shape)}, outs: {named(outs)}, "
            f"grads: {named(grads)} }},"
        )
    lines.append("];")
    return lines


KL = [
    ("Normal", [("loc", t([0.5, -1.0])), ("scale", t([1.5, 0.3]))], [("loc", t([0.0])), ("scale", t([1.0, 2.0]))]),
    ("BernoulliProbs", [("probs", t([0.2, 0.7, 0.0]))], [("probs", t([0.5, 0.1, 0.3]))]),
    ("CategoricalProbs", [("probs", t([[0.2, 0.3, 0.5], [0.5, 0.5, 0.0]]))], [("probs", t([0.1, 0.6, 0.3]))]),
    ("Uniform", [("low", t([0.0, -1.0])), ("high", t([1.0, 2.0]))], [("low", t([-1.0, 0.0])), ("high", t([2.0, 3.0]))]),
    ("Exponential", [("rate", t([0.5, 2.0]))], [("rate", t([1.5, 0.3]))]),
    ("Laplace", [("loc", t([0.5, -1.0])), ("scale", t([1.5, 0.3]))], [("loc", t([0.0, 1.0])), ("scale", t([1.0, 2.0]))]),
    ("Gamma", [("concentration", t([0.5, 2.0])), ("rate", t([1.5, 0.3]))], [("concentration", t([1.0, 3.0])), ("rate", t([1.0, 2.0]))]),
    ("Beta", [("concentration1", t([0.5, 2.0])), ("concentration0", t([1.5, 0.3]))], [("concentration1", t([1.0, 3.0])), ("concentration0", t([1.0, 2.0]))]),
    ("Dirichlet", [("concentration", t([[0.5, 2.0, 1.0], [1.5, 0.3, 2.0]]))], [("concentration", t([1.0, 3.0, 2.0]))]),
    ("Poisson", [("rate", t([0.5, 2.0]))], [("rate", t([1.5, 0.3]))]),
    ("MvnCov", [("loc", t([0.5, -1.0, 0.2])), ("covariance_matrix", SPD)], [("loc", t([0.0, 0.0, 1.0])), ("covariance_matrix", SPD[1])]),
    ("IndependentNormal", [("loc", t([[0.5, -1.0], [0.0, 1.0]])), ("scale", t([1.5, 0.3]))], [("loc", t([0.0, 0.0])), ("scale", t([1.0, 2.0]))]),
]


def kl_lines():
    lines = ["const KLS: &[KlCase] = &["]
    for kind, pp, qp in KL:
        v = D.kl_divergence(build(kind, pp), build(kind, qp))
        lines.append(f'    KlCase {{ kind: "{kind}", p: {named(pp)}, q: {named(qp)}, out: {tensor_lit(v)} }},')
    lines.append("];")
    return lines


def err_lines():
    errs = []

    def grab(name, f):
        try:
            f()
        except Exception as e:  # noqa: BLE001
            errs.append((name, str(e).split("\n")[0]))
            return
        raise AssertionError(name)

    grab("normal_scale", lambda: D.Normal(t([0.0, 2.0]), t([1.0, -1.0])))
    grab("normal_value", lambda: D.Normal(t(0.0), t(1.0)).log_prob(t(float("nan"))))
    grab("bernoulli_probs", lambda: D.Bernoulli(probs=t([0.5, 1.5])))
    grab("bernoulli_value", lambda: D.Bernoulli(probs=t([0.5, 0.5])).log_prob(t([0.5, 1.0])))
    grab("exponential_value", lambda: D.Exponential(t([1.0, 2.0])).log_prob(t([-1.0, 1.0])))
    grab("gamma_rate", lambda: D.Gamma(t([1.0, 2.0]), t([0.0, 1.0])))
    grab("categorical_value", lambda: D.Categorical(probs=t([[0.2, 0.8]])).log_prob(t([2.0])))
    grab("uniform_low", lambda: D.Uniform(t([0.0, 2.0]), t([1.0, 1.0])))
    grab("poisson_value", lambda: D.Poisson(t([1.0, 2.0])).log_prob(t([0.5, 1.0])))
    grab("dirichlet_value", lambda: D.Dirichlet(t([1.0, 2.0])).log_prob(t([0.5, 0.6])))
    grab("mvn_loc", lambda: D.MultivariateNormal(t(0.0), covariance_matrix=SPD[0]))
    grab("mvn_both", lambda: D.MultivariateNormal(t([0.0, 0.0, 0.0]), covariance_matrix=SPD[0], scale_tril=TRIL[0]))
    grab("mvn_tril", lambda: D.MultivariateNormal(t([0.0, 0.0]), scale_tril=t([[1.0, 0.5], [0.0, 1.0]])))
    grab("categorical_both", lambda: D.Categorical(probs=t([0.5, 0.5]), logits=t([0.0, 0.0])))
    grab("independent_ndims", lambda: D.Independent(D.Normal(t([0.0]), t([1.0])), 2))
    grab("event_shape", lambda: D.Dirichlet(t([1.0, 2.0])).log_prob(t([0.5, 0.25, 0.25])))
    grab("kl_missing", lambda: D.kl_divergence(D.Categorical(probs=t([0.5, 0.5])), D.Normal(t(0.0), t(1.0))))
    return ["const ERRS: &[(&str, &str)] = &["] + [f"    ({rust_str(k)}, {rust_str(v)})," for k, v in errs] + ["];"]


def main():
    lines = [generated_header("make_distributions_common_golden.py")]
    lines += case_lines() + kl_lines() + err_lines()
    print(write_golden("distributions_common_golden.rs", lines))


if __name__ == "__main__":
    main()
