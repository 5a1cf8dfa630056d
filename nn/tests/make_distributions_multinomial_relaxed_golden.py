"""Writes nn/tests/nn/distributions_multinomial_relaxed_golden.rs: torch.distributions values (float64) replayed by
nn/tests/nn/distributions_multinomial_relaxed.rs — Multinomial and the relaxed distributions (LogitRelaxedBernoulli,
RelaxedBernoulli, ExpRelaxedCategorical, RelaxedOneHotCategorical): log_prob, entropy, moments and
the gradients of log_prob(value).sum() with respect to the parameters; torch._dirichlet_grad on a
grid covering each branch of its approximation (behind Dirichlet/Beta rsample); validation messages.

Run with the reference torch: /work/.refenv/bin/python nn/tests/make_distributions_multinomial_relaxed_golden.py
"""

import os
import sys

import torch
import torch.distributions as D

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from golden_writer import floats, generated_header, named, rust_str, tensor_lit, write_golden  # noqa: E402

torch.set_default_dtype(torch.float64)
t = torch.tensor
INF = float("inf")


def build(kind, params):
    p = dict(params)
    if kind == "MultinomialProbs":
        return D.Multinomial(int(p["total_count"]), probs=p["probs"])
    if kind == "MultinomialLogits":
        return D.Multinomial(int(p["total_count"]), logits=p["logits"])
    if kind == "LogitRelaxedBernoulliProbs":
        return D.relaxed_bernoulli.LogitRelaxedBernoulli(p["temperature"], probs=p["probs"])
    if kind == "LogitRelaxedBernoulliLogits":
        return D.relaxed_bernoulli.LogitRelaxedBernoulli(p["temperature"], logits=p["logits"])
    if kind == "RelaxedBernoulliProbs":
        return D.RelaxedBernoulli(p["temperature"], probs=p["probs"])
    if kind == "RelaxedBernoulliLogits":
        return D.RelaxedBernoulli(p["temperature"], logits=p["logits"])
    if kind == "ExpRelaxedCategoricalProbs":
        return D.relaxed_categorical.ExpRelaxedCategorical(p["temperature"], probs=p["probs"])
    if kind == "ExpRelaxedCategoricalLogits":
        return D.relaxed_categorical.ExpRelaxedCategorical(p["temperature"], logits=p["logits"])
    if kind == "RelaxedOneHotCategoricalProbs":
        return D.RelaxedOneHotCategorical(p["temperature"], probs=p["probs"])
    if kind == "RelaxedOneHotCategoricalLogits":
        return D.RelaxedOneHotCategorical(p["temperature"], logits=p["logits"])
    raise ValueError(kind)


NOGRAD = {"total_count"}

CASES = [
    (
        "MultinomialProbs",
        [("total_count", t(4.0)), ("probs", t([[0.2, 0.3, 0.5], [1.0, 1.0, 8.0]]))],
        t([[1.0, 1.0, 2.0], [0.0, 0.0, 4.0]]),
    ),
    ("MultinomialProbs", [("total_count", t(0.0)), ("probs", t([0.25, 0.75]))], t([0.0, 0.0])),
    ("MultinomialLogits", [("total_count", t(3.0)), ("logits", t([0.5, -1.0, 2.0, 0.0]))], t([[1.0, 0.0, 2.0, 0.0], [0.0, 1.0, 1.0, 1.0]])),
    ("MultinomialLogits", [("total_count", t(5.0)), ("logits", t([0.0, -INF, 1.0]))], t([2.0, 0.0, 2.0])),
    ("LogitRelaxedBernoulliProbs", [("temperature", t(0.7)), ("probs", t([0.2, 0.5, 0.9]))], t([[-1.5, 0.3, 2.0], [0.0, 4.0, -0.2]])),
    ("LogitRelaxedBernoulliLogits", [("temperature", t([0.5, 2.0])), ("logits", t([-1.0, 0.4]))], t([0.8, -2.5])),
    ("RelaxedBernoulliProbs", [("temperature", t(0.7)), ("probs", t([0.2, 0.5, 0.9]))], t([[0.1, 0.6, 0.95], [0.5, 0.02, 0.7]])),
    ("RelaxedBernoulliLogits", [("temperature", t([0.5, 2.0])), ("logits", t([-1.0, 0.4]))], t([0.3, 0.8])),
    (
        "ExpRelaxedCategoricalProbs",
        [("temperature", t(0.6)), ("probs", t([[0.2, 0.3, 0.5], [0.1, 0.6, 0.3]]))],
        t([[-1.2, -0.9, -1.3], [-0.1, -3.0, -2.6]]),
    ),
    ("ExpRelaxedCategoricalLogits", [("temperature", t([1.5])), ("logits", t([0.3, -0.7, 1.1, 0.0]))], t([-2.0, -1.0, -0.5, -3.0])),
    (
        "RelaxedOneHotCategoricalProbs",
        [("temperature", t(0.6)), ("probs", t([[0.2, 0.3, 0.5], [0.1, 0.6, 0.3]]))],
        t([[0.3, 0.4, 0.3], [0.05, 0.9, 0.05]]),
    ),
    ("RelaxedOneHotCategoricalLogits", [("temperature", t(2.5)), ("logits", t([0.3, -0.7, 1.1]))], t([[0.1, 0.2, 0.7], [0.6, 0.3, 0.1]])),
]


def quantities(d, value):
    outs = []
    for name in ["log_prob", "entropy", "mean", "variance", "stddev"]:
        try:
            if name == "log_prob":
                v = d.log_prob(value)
            else:
                v = getattr(d, name)
                v = v() if callable(v) else v
        except NotImplementedError:
            continue
        outs.append((name, v.detach()))
    return outs


def case_lines():
    lines = ["const CASES: &[DistCase] = &["]
    for kind, params, value in CASES:
        leaves = [(k, v.clone().requires_grad_(k not in NOGRAD)) for k, v in params]
        d = build(kind, leaves)
        outs = quantities(d, value)
        lp = d.log_prob(value).sum()
        names = [k for k, _ in leaves if k not in NOGRAD]
        gs = torch.autograd.grad(lp, [v for k, v in leaves if k not in NOGRAD])
        lines.append(
            f'    DistCase {{ kind: "{kind}", params: {named(params)}, value: {tensor_lit(value)}, '
            f"batch: &{list(d.batch_shape)}, event: &{list(d.event_shape)}, outs: {named(outs)}, "
            f"grads: {named(list(zip(names, gs)))} }},"
        )
    lines.append("];")
    return lines


def dirichlet_grad_lines():
    """torch._dirichlet_grad(x, alpha, total) on a grid reaching every branch (x near 0, x near 1,
    both concentrations large, near the mean, and the rational correction)."""
    xs, alphas, totals = [], [], []
    for x in [0.02, 0.1, 0.3, 0.45, 0.5, 0.6, 0.8, 0.97]:
        for a in [0.3, 1.5, 4.0, 7.0, 20.0]:
            for b in [0.5, 2.0, 9.0, 30.0]:
                xs.append(x)
                alphas.append(a)
                totals.append(a + b)
    # near the mean of Beta(10, 15) and Beta(40, 60)
    for x, a, tot in [(0.4, 10.0, 25.0), (0.401, 10.0, 25.0), (0.4, 40.0, 100.0), (0.3, 3.0, 20.0), (0.7, 8.0, 10.0)]:
        xs.append(x)
        alphas.append(a)
        totals.append(tot)
    x, a, tot = t(xs), t(alphas), t(totals)
    out = torch._dirichlet_grad(x, a, tot)
    return [
        f"const DGRAD_X: &[f64] = {floats(xs)};",
        f"const DGRAD_ALPHA: &[f64] = {floats(alphas)};",
        f"const DGRAD_TOTAL: &[f64] = {floats(totals)};",
        f"const DGRAD_OUT: &[f64] = {floats(out.tolist())};",
    ]


def err_lines():
    errs = []

    def grab(name, f):
        try:
            f()
        except Exception as e:  # noqa: BLE001
            errs.append((name, str(e).split("\n")[0]))
            return
        raise AssertionError(name)

    grab("multinomial_value", lambda: D.Multinomial(3, probs=t([0.2, 0.3, 0.5])).log_prob(t([1.0, -1.0, 3.0])))
    grab("multinomial_too_many", lambda: D.Multinomial(3, probs=t([0.2, 0.3, 0.5])).log_prob(t([1.0, 1.0, 2.0])))
    grab("multinomial_event", lambda: D.Multinomial(3, probs=t([0.2, 0.3, 0.5])).log_prob(t([1.0, 2.0])))
    grab("multinomial_probs", lambda: D.Multinomial(3, probs=t([-0.2, 0.6, 0.6])))
    grab("multinomial_total_count", lambda: D.Multinomial(-1, probs=t([0.2, 0.3, 0.5])))
    grab("multinomial_tensor_count", lambda: D.Multinomial(t(3), probs=t([0.2, 0.3, 0.5])))
    grab("multinomial_both", lambda: D.Multinomial(3, probs=t([0.5, 0.5]), logits=t([0.0, 0.0])))
    grab("lrb_probs", lambda: D.relaxed_bernoulli.LogitRelaxedBernoulli(t(0.5), probs=t([0.5, 1.5])))
    grab("lrb_neither", lambda: D.relaxed_bernoulli.LogitRelaxedBernoulli(t(0.5)))
    grab("rb_probs", lambda: D.RelaxedBernoulli(t(0.5), probs=t([0.5, 1.5])))
    grab("rb_value", lambda: D.RelaxedBernoulli(t(0.5), probs=t([0.5, 0.5])).log_prob(t([0.5, 1.5])))
    grab("erc_event", lambda: D.relaxed_categorical.ExpRelaxedCategorical(t(0.5), probs=t([0.5, 0.5])).log_prob(t([0.5])))
    grab("rohc_value", lambda: D.RelaxedOneHotCategorical(t(0.5), probs=t([0.5, 0.5])).log_prob(t([0.5, 0.6])))
    grab("rohc_probs", lambda: D.RelaxedOneHotCategorical(t(0.5), probs=t([[0.5, -0.5]])))
    return ["const ERRS: &[(&str, &str)] = &["] + [f"    ({rust_str(k)}, {rust_str(v)})," for k, v in errs] + ["];"]


def main():
    lines = [generated_header("make_distributions_multinomial_relaxed_golden.py")]
    lines += case_lines() + dirichlet_grad_lines() + err_lines()
    print(write_golden("distributions_multinomial_relaxed_golden.rs", lines))


if __name__ == "__main__":
    main()
