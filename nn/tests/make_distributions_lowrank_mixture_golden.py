"""Writes nn/tests/nn/distributions_lowrank_mixture_golden.rs: torch.distributions values (float64) replayed by
nn/tests/nn/distributions_lowrank_mixture.rs — Gumbel, Weibull, Pareto, Kumaraswamy, ContinuousBernoulli,
FisherSnedecor, InverseGamma, VonMises, LowRankMultivariateNormal and MixtureSameFamily:
log_prob, entropy, moments, cdf/icdf, the gradients of `log_prob(value).sum() + entropy().sum()`
(entropy where torch has it); LowRankMultivariateNormal's covariance/precision/scale_tril;
kl_divergence for the same-type and cross-type pairs torch registers among the implemented
families, with their gradients; validation messages.

Run with the reference torch: /work/.refenv/bin/python nn/tests/make_distributions_lowrank_mixture_golden.py
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
    if kind == "Gumbel":
        return D.Gumbel(p["loc"], p["scale"])
    if kind == "Weibull":
        return D.Weibull(p["scale"], p["concentration"])
    if kind == "Pareto":
        return D.Pareto(p["scale"], p["alpha"])
    if kind == "Kumaraswamy":
        return D.Kumaraswamy(p["concentration1"], p["concentration0"])
    if kind == "ContinuousBernoulliProbs":
        return D.ContinuousBernoulli(probs=p["probs"])
    if kind == "ContinuousBernoulliLogits":
        return D.ContinuousBernoulli(logits=p["logits"])
    if kind == "FisherSnedecor":
        return D.FisherSnedecor(p["df1"], p["df2"])
    if kind == "InverseGamma":
        return D.InverseGamma(p["concentration"], p["rate"])
    if kind == "VonMises":
        return D.VonMises(p["loc"], p["concentration"])
    if kind == "LowRankMultivariateNormal":
        return D.LowRankMultivariateNormal(p["loc"], p["cov_factor"], p["cov_diag"])
    if kind == "MixtureNormal":
        return D.MixtureSameFamily(D.Categorical(logits=p["logits"]), D.Normal(p["loc"], p["scale"]))
    if kind == "MixtureMVN":
        comp = D.LowRankMultivariateNormal(p["loc"], p["cov_factor"], p["cov_diag"])
        return D.MixtureSameFamily(D.Categorical(probs=p["probs"]), comp)
    # the plain families the KL pairs need
    if kind == "Normal":
        return D.Normal(p["loc"], p["scale"])
    if kind == "Laplace":
        return D.Laplace(p["loc"], p["scale"])
    if kind == "Exponential":
        return D.Exponential(p["rate"])
    if kind == "Gamma":
        return D.Gamma(p["concentration"], p["rate"])
    if kind == "Uniform":
        return D.Uniform(p["low"], p["high"])
    if kind == "Beta":
        return D.Beta(p["concentration1"], p["concentration0"])
    if kind == "Bernoulli":
        return D.Bernoulli(probs=p["probs"])
    if kind == "Poisson":
        return D.Poisson(p["rate"])
    if kind == "Geometric":
        return D.Geometric(probs=p["probs"])
    if kind == "HalfNormal":
        return D.HalfNormal(p["scale"])
    if kind == "Cauchy":
        return D.Cauchy(p["loc"], p["scale"])
    if kind == "MultivariateNormal":
        return D.MultivariateNormal(p["loc"], scale_tril=p["scale_tril"])
    raise ValueError(kind)


NOQ = None
LR_LOC = t([[0.3, -0.5, 1.0], [0.0, 0.2, -0.1]])
LR_W = t([[[1.0, 0.2], [-0.5, 0.7], [0.3, -0.4]], [[0.1, 0.0], [0.6, -0.2], [-0.3, 0.9]]])
LR_D = t([0.5, 1.2, 0.8])

CASES = [
    ("Gumbel", [("loc", t([0.5, -1.0, 2.0])), ("scale", t([[1.5], [0.3]]))], t([0.1, 0.2, 2.7]), t([0.1, 0.5, 0.9])),
    ("Weibull", [("scale", t([0.5, 1.0, 2.5])), ("concentration", t([[0.7], [2.5]]))], t([0.3, 1.4, 2.0]), t([0.1, 0.5, 0.95])),
    ("Pareto", [("scale", t([0.5, 1.0, 2.0])), ("alpha", t([[0.8], [3.5]]))], t([0.7, 1.4, 5.0]), t([0.2, 0.6, 0.99])),
    ("Kumaraswamy", [("concentration1", t([0.5, 1.5, 3.0])), ("concentration0", t([[0.8], [2.5]]))], t([0.2, 0.5, 0.9]), t([0.1, 0.5, 0.9])),
    ("Kumaraswamy", [("concentration1", t([1.5, 3.0])), ("concentration0", t([0.5, 1.0]))], t([0.3, 0.6]), NOQ),
    (
        "ContinuousBernoulliProbs",
        [("probs", t([0.1, 0.4995, 0.5005, 0.7, 0.95]))],
        t([[0.0, 0.3, 0.5, 0.9, 1.0], [0.25, 0.7, 0.1, 0.5, 0.99]]),
        t([0.1, 0.3, 0.5, 0.7, 0.9]),
    ),
    ("ContinuousBernoulliLogits", [("logits", t([-2.0, 0.7, 3.0]))], t([0.2, 0.5, 0.8]), t([0.2, 0.5, 0.8])),
    ("FisherSnedecor", [("df1", t([1.5, 3.0, 8.0])), ("df2", t([[1.5], [6.0]]))], t([0.4, 1.0, 2.5]), NOQ),
    ("InverseGamma", [("concentration", t([0.7, 1.5, 3.5])), ("rate", t([[0.5], [2.0]]))], t([0.3, 1.2, 4.0]), NOQ),
    ("VonMises", [("loc", t([0.5, -1.0, 3.0])), ("concentration", t([[0.2], [2.0], [7.0]]))], t([0.1, -2.5, 3.1]), NOQ),
    ("LowRankMultivariateNormal", [("loc", LR_LOC), ("cov_factor", LR_W), ("cov_diag", LR_D)], t([[0.2, -0.1, 0.4]]), NOQ),
    (
        "MixtureNormal",
        [("logits", t([[0.2, -0.5, 1.0], [0.0, 0.3, -1.0]])), ("loc", t([-1.0, 0.5, 2.0])), ("scale", t([[0.5, 1.0, 0.3]]))],
        t([[0.1, 1.5], [-0.7, 2.2]]),
        t([0.1, 1.5]),
    ),
    (
        "MixtureMVN",
        [("probs", t([0.3, 0.7])), ("loc", LR_LOC), ("cov_factor", LR_W), ("cov_diag", LR_D)],
        t([[0.2, -0.1, 0.4], [1.0, 0.5, -0.5]]),
        NOQ,
    ),
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
    if isinstance(d, D.LowRankMultivariateNormal):
        for name in ["covariance_matrix", "precision_matrix", "scale_tril"]:
            outs.append((name, getattr(d, name).detach()))
    return outs


def loss_of(d, value):
    loss = d.log_prob(value).sum()
    try:
        loss = loss + d.entropy().sum()
    except NotImplementedError:
        pass
    return loss


def case_lines():
    lines = ["const CASES: &[DistCase] = &["]
    for kind, params, value, q in CASES:
        leaves = [(k, v.clone().requires_grad_(True)) for k, v in params]
        d = build(kind, leaves)
        outs = quantities(d, value, q)
        gs = torch.autograd.grad(loss_of(d, value), [v for _, v in leaves])
        grads = list(zip([k for k, _ in leaves], gs))
        qlit = tensor_lit(q) if q is not None else "T { dims: &[0], data: &[] }"
        lines.append(
            f'    DistCase {{ kind: "{kind}", params: {named(params)}, value: {tensor_lit(value)}, q: {qlit}, '
            f"batch: &{list(d.batch_shape)}, event: &{list(d.event_shape)}, outs: {named(outs)}, "
            f"grads: {named(grads)} }},"
        )
    lines.append("];")
    return lines


GUMBEL = ("Gumbel", [("loc", t([0.5, -1.0])), ("scale", t([1.5, 0.3]))])
GUMBEL2 = ("Gumbel", [("loc", t([0.0, 0.4])), ("scale", t([0.7, 1.1]))])
PARETO = ("Pareto", [("scale", t([0.5, 1.0, 2.0])), ("alpha", t([0.8, 1.5, 3.5]))])
PARETO2 = ("Pareto", [("scale", t([0.4, 1.5, 1.0])), ("alpha", t([2.0, 1.2, 2.5]))])
CB = ("ContinuousBernoulliProbs", [("probs", t([0.1, 0.4995, 0.8]))])
CB2 = ("ContinuousBernoulliLogits", [("logits", t([0.5, -1.0, 2.0]))])
NORMAL = ("Normal", [("loc", t([0.3, -0.5])), ("scale", t([0.8, 1.5]))])
NORMAL3 = ("Normal", [("loc", t([0.3, -0.5, 1.0])), ("scale", t([0.8, 1.5, 2.0]))])
LAPLACE = ("Laplace", [("loc", t([0.1, 0.7])), ("scale", t([1.2, 0.4]))])
EXPO = ("Exponential", [("rate", t([0.5, 2.0]))])
EXPO3 = ("Exponential", [("rate", t([0.5, 2.0, 1.0]))])
GAMMA = ("Gamma", [("concentration", t([0.7, 2.5])), ("rate", t([1.5, 0.4]))])
GAMMA3 = ("Gamma", [("concentration", t([0.7, 2.5, 1.0])), ("rate", t([1.5, 0.4, 2.0]))])
UNIF = ("Uniform", [("low", t([0.2, 1.0])), ("high", t([0.9, 3.0]))])
UNIF_NEG = ("Uniform", [("low", t([-0.5, 0.1])), ("high", t([0.5, 0.6]))])
UNIF3 = ("Uniform", [("low", t([0.2, 1.0, 0.1])), ("high", t([0.9, 3.0, 0.6]))])
UNIT = ("Uniform", [("low", t([0.0, 0.1, 0.0])), ("high", t([1.0, 1.0, 0.9]))])
BETA = ("Beta", [("concentration1", t([0.7, 2.5, 1.2])), ("concentration0", t([1.5, 0.4, 3.0]))])
LOWRANK = ("LowRankMultivariateNormal", [("loc", LR_LOC), ("cov_factor", LR_W), ("cov_diag", LR_D)])
LOWRANK2 = (
    "LowRankMultivariateNormal",
    [("loc", t([0.1, 0.0, 0.5])), ("cov_factor", t([[0.4], [0.2], [-0.6]])), ("cov_diag", t([0.9, 0.6, 1.5]))],
)
MVN = (
    "MultivariateNormal",
    [("loc", t([0.1, 0.0, 0.5])), ("scale_tril", t([[1.0, 0.0, 0.0], [0.3, 0.8, 0.0], [-0.2, 0.4, 1.3]]))],
)

KLS = [
    (GUMBEL, GUMBEL2),
    (PARETO, PARETO2),
    (CB, CB2),
    (("Geometric", [("probs", t([0.2, 0.7]))]), ("Geometric", [("probs", t([0.5, 0.4]))])),
    (("HalfNormal", [("scale", t([0.5, 2.0]))]), ("HalfNormal", [("scale", t([1.5, 0.7]))])),
    (("Cauchy", [("loc", t([0.5, -1.0])), ("scale", t([1.5, 0.3]))]), ("Cauchy", [("loc", t([0.0, 0.2])), ("scale", t([0.5, 1.0]))])),
    (LOWRANK, LOWRANK2),
    (MVN, LOWRANK),
    (LOWRANK, MVN),
    (("Bernoulli", [("probs", t([0.2, 0.7]))]), ("Poisson", [("rate", t([0.5, 1.5]))])),
    (BETA, CB),
    (BETA, EXPO3),
    (BETA, GAMMA3),
    (BETA, NORMAL3),
    (BETA, UNIT),
    (BETA, PARETO),
    (CB, EXPO3),
    (CB, NORMAL3),
    (CB, UNIT),
    (CB, PARETO),
    (EXPO, GAMMA),
    (EXPO, GUMBEL),
    (EXPO, NORMAL),
    (EXPO, UNIF),
    (GAMMA, EXPO),
    (GAMMA, GUMBEL),
    (GAMMA, NORMAL),
    (GAMMA3, BETA),
    (GUMBEL, NORMAL),
    (GUMBEL, EXPO),
    (LAPLACE, NORMAL),
    (LAPLACE, GAMMA),
    (NORMAL, GUMBEL),
    (NORMAL, LAPLACE),
    (NORMAL3, PARETO),
    (PARETO, EXPO3),
    (PARETO, GAMMA3),
    (PARETO, NORMAL3),
    (PARETO, UNIF3),
    (("Poisson", [("rate", t([0.5, 1.5]))]), ("Bernoulli", [("probs", t([0.2, 0.7]))])),
    (UNIF3, BETA),
    (UNIF3, CB),
    (UNIF, EXPO),
    (UNIF_NEG, EXPO),
    (UNIF, GAMMA),
    (UNIF_NEG, GAMMA),
    (UNIF, GUMBEL),
    (UNIF, NORMAL),
    (UNIF3, PARETO),
]


def kl_lines():
    lines = ["const KLS: &[KlCase] = &["]
    for (pk, pp), (qk, qp) in KLS:
        pl = [(k, v.clone().requires_grad_(True)) for k, v in pp]
        ql = [(k, v.clone().requires_grad_(True)) for k, v in qp]
        kl = D.kl_divergence(build(pk, pl), build(qk, ql))
        leaves = [v for _, v in pl + ql]
        finite = torch.isfinite(kl)
        loss = torch.where(finite, kl, torch.zeros_like(kl)).sum()
        gs = torch.autograd.grad(loss, leaves, allow_unused=True) if loss.requires_grad else [None] * len(leaves)
        gs = [g if g is not None else torch.zeros_like(v) for g, v in zip(gs, leaves)]
        pg = list(zip([k for k, _ in pl], gs[: len(pl)]))
        qg = list(zip([k for k, _ in ql], gs[len(pl):]))
        lines.append(
            f'    KlCase {{ p: "{pk}", p_params: {named(pp)}, q: "{qk}", q_params: {named(qp)}, '
            f"kl: {tensor_lit(kl.detach())}, p_grads: {named(pg)}, q_grads: {named(qg)} }},"
        )
    lines.append("];")
    return lines


def err_lines():
    errs = []
    f = lambda v: torch.tensor(v, dtype=torch.float32)  # noqa: E731

    def grab(name, fn):
        try:
            fn()
        except Exception as e:  # noqa: BLE001
            errs.append((name, str(e).split("\n")[0]))
            return
        raise AssertionError(name)

    grab("gumbel_scale", lambda: D.Gumbel(f([0.0, 1.0]), f([1.0, -1.0])))
    grab("weibull_concentration", lambda: D.Weibull(f([1.0, 1.0]), f([1.0, 0.0])))
    grab("kumaraswamy_value", lambda: D.Kumaraswamy(f([1.0, 2.0]), f([1.0, 2.0])).log_prob(f([0.5, 1.5])))
    grab("cb_probs_explicit", lambda: D.ContinuousBernoulli(probs=f([1.5]), validate_args=True))
    grab("cb_both", lambda: D.ContinuousBernoulli(probs=f([0.5]), logits=f([0.0])))
    grab("vonmises_concentration", lambda: D.VonMises(f([0.0, 1.0]), f([1.0, -1.0])))
    grab("inverse_gamma_rate", lambda: D.InverseGamma(f([1.0, 2.0]), f([1.0, -2.0])))
    grab("inverse_gamma_value", lambda: D.InverseGamma(f([1.0, 2.0]), f([1.0, 2.0])).log_prob(f([1.0, -2.0])))
    grab("fisher_value", lambda: D.FisherSnedecor(f([1.0, 2.0]), f([1.0, 2.0])).log_prob(f([1.0, -2.0])))
    grab("lowrank_loc", lambda: D.LowRankMultivariateNormal(f(1.0), f([[1.0]]), f([1.0])))
    grab("lowrank_factor_rank", lambda: D.LowRankMultivariateNormal(f([1.0, 2.0]), f([1.0, 2.0]), f([1.0, 1.0])))
    grab("lowrank_factor_shape", lambda: D.LowRankMultivariateNormal(f([1.0, 2.0]), f([[1.0, 2.0, 3.0]]), f([1.0, 1.0])))
    grab("lowrank_diag_shape", lambda: D.LowRankMultivariateNormal(f([1.0, 2.0]), f([[1.0], [2.0]]), f([1.0, 1.0, 1.0])))
    grab("lowrank_diag", lambda: D.LowRankMultivariateNormal(f([1.0, 2.0]), f([[1.0], [2.0]]), f([1.0, -1.0])))
    grab(
        "mixture_k",
        lambda: D.MixtureSameFamily(D.Categorical(probs=f([0.5, 0.5])), D.Normal(f([0.0, 1.0, 2.0]), f([1.0, 1.0, 1.0]))),
    )
    grab(
        "mixture_batch",
        lambda: D.MixtureSameFamily(
            D.Categorical(probs=f([[0.5, 0.5]] * 3)), D.Normal(torch.zeros(2, 2, dtype=torch.float32), torch.ones(2, 2, dtype=torch.float32))
        ),
    )
    grab("kl_unregistered", lambda: D.kl_divergence(D.VonMises(f([0.0]), f([1.0])), D.VonMises(f([0.0]), f([1.0]))))
    return ["const ERRS: &[(&str, &str)] = &["] + [f"    ({rust_str(k)}, {rust_str(v)})," for k, v in errs] + ["];"]


def main():
    lines = [generated_header("make_distributions_lowrank_mixture_golden.py")]
    lines += case_lines() + kl_lines() + err_lines()
    print(write_golden("distributions_lowrank_mixture_golden.rs", lines))


if __name__ == "__main__":
    main()
