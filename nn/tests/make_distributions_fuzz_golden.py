"""Writes nn/tests/nn/distributions_fuzz_golden.rs: a seeded (34) randomized differential test of
torch.distributions (float64, CPU), replayed by nn/tests/nn/distributions_fuzz.rs.

For ~400 random distributions (every family oxtorch_nn::distributions has, random valid parameters
with random batch shapes: broadcasting between parameters, size-1 dims, 0-d), built with
validate_args=False, it records: batch/event shapes, has_rsample, mean, mode, variance, stddev,
entropy, log_prob at in-support values, log_prob at out-of-support values (what torch gives
without validation), cdf and icdf (where torch implements them), the support check of both
values, the shape of sample(sample_shape), and the gradients of log_prob(value).sum() and
entropy().sum() with respect to the float parameters (torch.autograd.grad; unused: zeros). A
property torch raises NotImplementedError for is left out. Then KL divergences between random
pairs of the families oxtorch's kl_divergence registers (value and gradients for the parameters of
both), and invalid parameters that torch rejects with validate_args=True (the replay only checks
that oxtorch errs; torch's message is shown in the failure line).

Run with the reference torch: /work/.refenv/bin/python nn/tests/make_distributions_fuzz_golden.py
"""

import os
import random
import sys

import torch
import torch.distributions as D
from torch.distributions.transforms import AffineTransform, ExpTransform

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from golden_writer import generated_header, named, rust_str, tensor_lit, write_golden  # noqa: E402

torch.set_default_dtype(torch.float64)
SEED = 34
rng = random.Random(SEED)
gen = torch.Generator().manual_seed(SEED)
torch.manual_seed(SEED)

BASES = [(), (1,), (3,), (2, 3), (2, 1), (1, 4), (4,), (2, 1, 3), (3, 2)]


def sub(base):
    """A shape broadcastable to `base`: leading dims dropped, some dims set to 1."""
    s = list(base)
    if s and rng.random() < 0.3:
        s = s[rng.randint(1, len(s)):]
    s = [1 if rng.random() < 0.2 else d for d in s]
    return tuple(s)


def U(lo, hi, shape):
    return lo + (hi - lo) * torch.rand(shape, generator=gen)


def N(shape, scale=1.0):
    return scale * torch.randn(shape, generator=gen)


def lower_tril(shape, k):
    a = N(tuple(shape) + (k, k), 0.5).tril(-1)
    return a + torch.diag_embed(U(0.5, 2.0, tuple(shape) + (k,)))


# ---------------------------------------------------------------- families


def params_for(kind, base, k):
    """(params as [(name, tensor)], names differentiated) for `kind` at batch `base` and event
    size `k`."""
    s = lambda: sub(base)  # noqa: E731
    p = None
    if kind in ("Normal", "Cauchy", "Laplace", "Gumbel", "LogNormal"):
        p = [("loc", N(s(), 1.5)), ("scale", U(0.4, 3.0, s()))]
    elif kind.startswith("Bernoulli") or kind.startswith("Geometric"):
        p = [("probs", U(0.1, 0.9, s()))] if kind.endswith("Probs") else [("logits", N(s(), 1.5))]
    elif kind.startswith("ContinuousBernoulli"):
        if kind.endswith("Probs"):
            pr = U(0.05, 0.95, s())
            if rng.random() < 0.3:  # the Taylor branch near 1/2 (lims 0.499..0.501)
                pr = U(0.4995, 0.5005, pr.shape)
            p = [("probs", pr)]
        else:
            p = [("logits", N(s(), 1.5))]
    elif kind in ("Beta", "Kumaraswamy"):
        p = [("concentration1", U(0.6, 4.0, s())), ("concentration0", U(0.6, 4.0, s()))]
    elif kind.startswith("Binomial"):
        tc = torch.randint(1, 11, s(), generator=gen).double()
        q = ("probs", U(0.1, 0.9, s())) if kind.endswith("Probs") else ("logits", N(s(), 1.5))
        p = [("total_count", tc), q]
    elif kind.startswith("NegativeBinomial"):
        q = ("probs", U(0.1, 0.8, s())) if kind.endswith("Probs") else ("logits", N(s(), 1.0))
        p = [("total_count", U(0.5, 5.0, s())), q]
    elif kind.startswith("Categorical") or kind.startswith("OneHotCategorical"):
        p = [("probs", U(0.1, 2.0, base + (k,)))] if kind.endswith("Probs") else [("logits", N(base + (k,), 1.5))]
    elif kind.startswith("Multinomial"):
        tc = torch.tensor(float(rng.randint(1, 6)))
        q = ("probs", U(0.1, 2.0, base + (k,))) if kind.endswith("Probs") else ("logits", N(base + (k,), 1.5))
        p = [("total_count", tc), q]
    elif kind == "Chi2":
        p = [("df", U(0.6, 8.0, s()))]
    elif kind == "Dirichlet":
        p = [("concentration", U(0.6, 4.0, base + (k,)))]
    elif kind in ("Exponential", "Poisson"):
        p = [("rate", U(0.3, 5.0, s()))]
    elif kind == "FisherSnedecor":
        p = [("df1", U(0.8, 10.0, s())), ("df2", U(0.8, 10.0, s()))]
    elif kind in ("Gamma", "InverseGamma"):
        p = [("concentration", U(0.6, 5.0, s())), ("rate", U(0.4, 3.0, s()))]
    elif kind in ("HalfCauchy", "HalfNormal"):
        p = [("scale", U(0.4, 3.0, s()))]
    elif kind == "IndependentNormal":
        p = [("loc", N(base, 1.5)), ("scale", U(0.4, 3.0, sub(base))), ("ndims", torch.tensor(float(rng.randint(0, len(base)))))]
    elif kind == "LowRankMultivariateNormal":
        r = rng.randint(1, 3)
        p = [("loc", N(sub(base) + (k,))), ("cov_factor", N(sub(base) + (k, r), 0.7)), ("cov_diag", U(0.3, 2.0, sub(base) + (k,)))]
    elif kind == "MultivariateNormalScaleTril":
        p = [("loc", N(sub(base) + (k,))), ("scale_tril", lower_tril(sub(base), k))]
    elif kind in ("MultivariateNormalCovariance", "MultivariateNormalPrecision"):
        L = lower_tril(sub(base), k)
        m = L @ L.transpose(-1, -2)
        name = "covariance_matrix" if kind.endswith("Covariance") else "precision_matrix"
        p = [("loc", N(sub(base) + (k,))), (name, m)]
    elif kind == "MixtureSameFamilyNormal":
        bb = base if base else (1,)
        p = [("mix_logits", N(bb[:-1] + (k,))), ("loc", N(bb[:-1] + (k,), 1.5)), ("scale", U(0.4, 2.0, sub(bb[:-1] + (k,))))]
    elif kind == "Pareto":
        p = [("scale", U(0.5, 3.0, s())), ("alpha", U(0.6, 5.0, s()))]
    elif kind.startswith("RelaxedBernoulli") or kind.startswith("LogitRelaxedBernoulli"):
        q = ("probs", U(0.1, 0.9, s())) if kind.endswith("Probs") else ("logits", N(s(), 1.5))
        p = [("temperature", U(0.3, 2.0, ())), q]  # (torch does not broadcast temperature)
    elif kind.startswith("RelaxedOneHotCategorical") or kind.startswith("ExpRelaxedCategorical"):
        q = ("probs", U(0.1, 2.0, base + (k,))) if kind.endswith("Probs") else ("logits", N(base + (k,), 1.5))
        p = [("temperature", U(0.3, 2.0, ())), q]
    elif kind == "StudentT":
        p = [("df", U(0.8, 10.0, s())), ("loc", N(s(), 1.5)), ("scale", U(0.4, 3.0, s()))]
    elif kind == "TransformedAffineExp":
        p = [("loc", N(s())), ("scale", U(0.3, 1.5, s())), ("t_loc", N(s())), ("t_scale", U(0.3, 2.0, s()))]
    elif kind == "Uniform":
        lo = N(s(), 1.5)
        p = [("low", lo), ("high", lo + U(0.3, 3.0, s()))]
    elif kind == "VonMises":
        p = [("loc", N(s(), 1.5)), ("concentration", U(0.1, 6.0, s()))]
    elif kind == "Weibull":
        p = [("scale", U(0.5, 3.0, s())), ("concentration", U(0.6, 3.0, s()))]
    if p is None:
        raise ValueError(kind)
    nograd = {"ndims"} | ({"total_count"} if kind.startswith("Multinomial") else set())
    return p, [n for n, _ in p if n not in nograd]


def build(kind, p, validate):
    p = dict(p)
    v = validate
    pl = lambda: {"probs": p["probs"]} if "probs" in p else {"logits": p["logits"]}  # noqa: E731
    if kind == "Normal":
        return D.Normal(p["loc"], p["scale"], validate_args=v)
    if kind == "Cauchy":
        return D.Cauchy(p["loc"], p["scale"], validate_args=v)
    if kind == "Laplace":
        return D.Laplace(p["loc"], p["scale"], validate_args=v)
    if kind == "Gumbel":
        return D.Gumbel(p["loc"], p["scale"], validate_args=v)
    if kind == "LogNormal":
        return D.LogNormal(p["loc"], p["scale"], validate_args=v)
    if kind.startswith("Bernoulli"):
        return D.Bernoulli(**pl(), validate_args=v)
    if kind.startswith("Geometric"):
        return D.Geometric(**pl(), validate_args=v)
    if kind.startswith("ContinuousBernoulli"):
        return D.ContinuousBernoulli(**pl(), validate_args=v)
    if kind == "Beta":
        return D.Beta(p["concentration1"], p["concentration0"], validate_args=v)
    if kind == "Kumaraswamy":
        return D.Kumaraswamy(p["concentration1"], p["concentration0"], validate_args=v)
    if kind.startswith("Binomial"):
        return D.Binomial(p["total_count"], **pl(), validate_args=v)
    if kind.startswith("NegativeBinomial"):
        return D.NegativeBinomial(p["total_count"], **pl(), validate_args=v)
    if kind.startswith("Categorical"):
        return D.Categorical(**pl(), validate_args=v)
    if kind.startswith("OneHotCategorical"):
        return D.OneHotCategorical(**pl(), validate_args=v)
    if kind.startswith("Multinomial"):
        return D.Multinomial(int(p["total_count"]), **pl(), validate_args=v)
    if kind == "Chi2":
        return D.Chi2(p["df"], validate_args=v)
    if kind == "Dirichlet":
        return D.Dirichlet(p["concentration"], validate_args=v)
    if kind == "Exponential":
        return D.Exponential(p["rate"], validate_args=v)
    if kind == "Poisson":
        return D.Poisson(p["rate"], validate_args=v)
    if kind == "FisherSnedecor":
        return D.FisherSnedecor(p["df1"], p["df2"], validate_args=v)
    if kind == "Gamma":
        return D.Gamma(p["concentration"], p["rate"], validate_args=v)
    if kind == "InverseGamma":
        return D.InverseGamma(p["concentration"], p["rate"], validate_args=v)
    if kind == "HalfCauchy":
        return D.HalfCauchy(p["scale"], validate_args=v)
    if kind == "HalfNormal":
        return D.HalfNormal(p["scale"], validate_args=v)
    if kind == "IndependentNormal":
        return D.Independent(D.Normal(p["loc"], p["scale"], validate_args=v), int(p["ndims"]), validate_args=v)
    if kind == "LowRankMultivariateNormal":
        return D.LowRankMultivariateNormal(p["loc"], p["cov_factor"], p["cov_diag"], validate_args=v)
    if kind == "MultivariateNormalScaleTril":
        return D.MultivariateNormal(p["loc"], scale_tril=p["scale_tril"], validate_args=v)
    if kind == "MultivariateNormalCovariance":
        return D.MultivariateNormal(p["loc"], covariance_matrix=p["covariance_matrix"], validate_args=v)
    if kind == "MultivariateNormalPrecision":
        return D.MultivariateNormal(p["loc"], precision_matrix=p["precision_matrix"], validate_args=v)
    if kind == "MixtureSameFamilyNormal":
        mix = D.Categorical(logits=p["mix_logits"], validate_args=v)
        return D.MixtureSameFamily(mix, D.Normal(p["loc"], p["scale"], validate_args=v), validate_args=v)
    if kind == "Pareto":
        return D.Pareto(p["scale"], p["alpha"], validate_args=v)
    if kind.startswith("RelaxedBernoulli"):
        return D.RelaxedBernoulli(p["temperature"], **pl(), validate_args=v)
    if kind.startswith("LogitRelaxedBernoulli"):
        return D.relaxed_bernoulli.LogitRelaxedBernoulli(p["temperature"], **pl(), validate_args=v)
    if kind.startswith("RelaxedOneHotCategorical"):
        return D.RelaxedOneHotCategorical(p["temperature"], **pl(), validate_args=v)
    if kind.startswith("ExpRelaxedCategorical"):
        return D.relaxed_categorical.ExpRelaxedCategorical(p["temperature"], **pl(), validate_args=v)
    if kind == "StudentT":
        return D.StudentT(p["df"], p["loc"], p["scale"], validate_args=v)
    if kind == "TransformedAffineExp":
        base = D.Normal(p["loc"], p["scale"], validate_args=v)
        return D.TransformedDistribution(base, [AffineTransform(p["t_loc"], p["t_scale"]), ExpTransform()], validate_args=v)
    if kind == "Uniform":
        return D.Uniform(p["low"], p["high"], validate_args=v)
    if kind == "VonMises":
        return D.VonMises(p["loc"], p["concentration"], validate_args=v)
    if kind == "Weibull":
        return D.Weibull(p["scale"], p["concentration"], validate_args=v)
    raise ValueError(kind)


KINDS = [
    "Normal", "Cauchy", "Laplace", "Gumbel", "LogNormal", "BernoulliProbs", "BernoulliLogits", "GeometricProbs",
    "GeometricLogits", "ContinuousBernoulliProbs", "ContinuousBernoulliLogits", "Beta", "Kumaraswamy",
    "BinomialProbs", "BinomialLogits", "NegativeBinomialProbs", "NegativeBinomialLogits", "CategoricalProbs",
    "CategoricalLogits", "OneHotCategoricalProbs", "OneHotCategoricalLogits", "MultinomialProbs",
    "MultinomialLogits", "Chi2", "Dirichlet", "Exponential", "Poisson", "FisherSnedecor", "Gamma", "InverseGamma",
    "HalfCauchy", "HalfNormal", "IndependentNormal", "LowRankMultivariateNormal", "MultivariateNormalScaleTril",
    "MultivariateNormalCovariance", "MultivariateNormalPrecision", "MixtureSameFamilyNormal", "Pareto",
    "RelaxedBernoulliProbs", "RelaxedBernoulliLogits", "LogitRelaxedBernoulliProbs", "LogitRelaxedBernoulliLogits",
    "RelaxedOneHotCategoricalProbs", "RelaxedOneHotCategoricalLogits", "ExpRelaxedCategoricalProbs",
    "ExpRelaxedCategoricalLogits", "StudentT", "TransformedAffineExp", "Uniform", "VonMises", "Weibull",
]

# out-of-support replacement values (a function of the params) for families with a bounded support
POS = ("Exponential", "Gamma", "Chi2", "HalfNormal", "HalfCauchy", "Weibull", "LogNormal", "InverseGamma",
       "FisherSnedecor", "TransformedAffineExp")
UNIT = ("Beta", "Kumaraswamy", "ContinuousBernoulli", "RelaxedBernoulli")
COUNT = ("Poisson", "Geometric", "NegativeBinomial", "Binomial", "Bernoulli")


def oos_value(kind, d, value):
    """`value` with about half its elements moved out of the support (None: no bounded support)."""
    fam = next((f for f in POS + UNIT + COUNT + ("Uniform", "Pareto") if kind.startswith(f)), None)
    if fam is None or value.numel() == 0:
        return None
    if fam in POS:
        bad = torch.full_like(value, -0.5)
    elif fam in UNIT:
        bad = torch.full_like(value, 1.5)
    elif fam == "Uniform":
        bad = (d.high + 1.0).detach().expand_as(value)
    elif fam == "Pareto":
        bad = (d.scale * 0.5).detach().expand_as(value)
    elif fam == "Binomial":
        bad = (d.total_count + 1.0).detach().expand_as(value)
    elif fam == "Bernoulli":
        bad = torch.full_like(value, rng.choice([0.5, 2.0, -1.0]))
    else:
        bad = torch.full_like(value, rng.choice([-1.0, 1.5]))
    mask = torch.rand(value.shape, generator=gen) < 0.5
    mask.view(-1)[0] = True
    return torch.where(mask, bad, value)


def first_line(e):
    return str(e).split("\n")[0] if str(e) else type(e).__name__


def get_prop(d, name, arg=None):
    """A property's value, or None where torch raises NotImplementedError (or cannot compute)."""
    try:
        if arg is not None:
            return getattr(d, name)(arg)
        v = getattr(d, name)
        return v() if callable(v) else v
    except NotImplementedError:
        return None
    except (ValueError, RuntimeError) as e:
        print(f"  skip {name}: {type(e).__name__}: {first_line(e)}", file=sys.stderr)
        return None


def grads_of(out, leaves, names):
    if out is None or not out.requires_grad:
        return None
    gs = torch.autograd.grad(out.sum(), [leaves[n] for n in names], allow_unused=True, retain_graph=True)
    return [(n, torch.zeros_like(leaves[n]) if g is None else g) for n, g in zip(names, gs)]


def dist_case(cid, kind):
    base = rng.choice(BASES)
    k = rng.randint(2, 4)
    params, diff = params_for(kind, base, k)
    leaves = {n: t.clone().requires_grad_(n in diff) for n, t in params}
    d = build(kind, list(leaves.items()), False)
    vshape = rng.choice([(), (), (2,)])
    with torch.no_grad():
        value = d.sample(vshape).detach()
    if kind.startswith(("Beta", "Kumaraswamy", "ContinuousBernoulli", "RelaxedBernoulli")):
        value = value.clamp(1e-3, 1 - 1e-3)
    if kind.startswith(("RelaxedOneHotCategorical",)):
        value = value.clamp_min(1e-12)
        value = value / value.sum(-1, keepdim=True)
    if kind == "Dirichlet":
        value = value.clamp_min(1e-6)
        value = value / value.sum(-1, keepdim=True)
    values = [("lp", value)]
    outs = []
    for name in ["mean", "mode", "variance", "stddev", "entropy"]:
        v = get_prop(d, name)
        if v is not None:
            outs.append((name, v.detach()))
    lp = d.log_prob(value)
    outs.append(("log_prob", lp.detach()))
    outs.append(("support_lp", d.support.check(value).double()))
    oos = oos_value(kind, d, value)
    if oos is not None:
        try:
            lpo = d.log_prob(oos)
            values.append(("oos", oos))
            outs.append(("log_prob_oos", lpo.detach()))
            outs.append(("support_oos", d.support.check(oos).double()))
        except Exception as e:  # noqa: BLE001
            print(f"  {cid} {kind}: oos log_prob raised {first_line(e)}", file=sys.stderr)
    if not d.event_shape:
        c = get_prop(d, "cdf", value)
        if c is not None:
            values.append(("cdf", value))
            outs.append(("cdf", c.detach()))
        q = U(0.05, 0.95, vshape + tuple(d.batch_shape))
        ic = get_prop(d, "icdf", q)
        if ic is not None:
            values.append(("icdf", q))
            outs.append(("icdf", ic.detach()))
    grads = []
    for prop, out in [("log_prob", lp), ("entropy", get_prop(d, "entropy"))]:
        gs = grads_of(out, leaves, diff)
        if gs is not None:
            grads += [(prop, n, g) for n, g in gs]
    sshape = rng.choice([(), (1,), (2,), (3,), (1, 2, 3)])
    with torch.no_grad():
        smp = d.sample(sshape)
    in_support = bool(d.support.check(smp).all())
    return (
        f'    DistCase {{ id: {cid}, kind: "{kind}", params: {named(params)}, diff: &{rust_strs(diff)}, '
        f"batch: &{list(d.batch_shape)}, event: &{list(d.event_shape)}, has_rsample: {str(d.has_rsample).lower()}, "
        f"values: {named(values)}, outs: {named(outs)}, "
        f"grads: &[{', '.join(f'({rust_str(p)}, {rust_str(n)}, {tensor_lit(g)})' for p, n, g in grads)}], "
        f"sample_shape: &{list(sshape)}, sample_dims: &{list(smp.shape)}, sample_in_support: {str(in_support).lower()} }},"
    )


def rust_strs(xs):
    return "[" + ", ".join(rust_str(x) for x in xs) + "]"


# ---------------------------------------------------------------- KL

# pairs oxtorch's kl_divergence registers (nn/src/distributions/kl.rs), as the kinds above
KL_PAIRS = [
    ("Normal", "Normal"), ("BernoulliProbs", "BernoulliLogits"), ("BinomialProbs", "BinomialLogits"),
    ("CategoricalProbs", "CategoricalLogits"), ("OneHotCategoricalLogits", "OneHotCategoricalProbs"),
    ("Uniform", "Uniform"), ("Exponential", "Exponential"), ("Laplace", "Laplace"), ("Gamma", "Gamma"),
    ("Beta", "Beta"), ("Dirichlet", "Dirichlet"), ("Poisson", "Poisson"),
    ("MultivariateNormalScaleTril", "MultivariateNormalCovariance"),
    ("MultivariateNormalPrecision", "MultivariateNormalScaleTril"), ("IndependentNormal", "IndependentNormal"),
    ("ContinuousBernoulliProbs", "ContinuousBernoulliLogits"), ("Gumbel", "Gumbel"),
    ("GeometricProbs", "GeometricLogits"), ("HalfNormal", "HalfNormal"), ("Pareto", "Pareto"),
    ("Cauchy", "Cauchy"), ("LowRankMultivariateNormal", "LowRankMultivariateNormal"),
    ("InverseGamma", "InverseGamma"), ("LogNormal", "LogNormal"), ("Chi2", "Chi2"), ("Chi2", "Gamma"),
    ("MultivariateNormalScaleTril", "LowRankMultivariateNormal"),
    ("LowRankMultivariateNormal", "MultivariateNormalCovariance"), ("BernoulliProbs", "Poisson"),
    ("Beta", "ContinuousBernoulliProbs"), ("Beta", "Exponential"), ("Beta", "Gamma"), ("Beta", "Normal"),
    ("Beta", "Uniform"), ("Beta", "Pareto"), ("ContinuousBernoulliLogits", "Exponential"),
    ("ContinuousBernoulliProbs", "Normal"), ("ContinuousBernoulliProbs", "Uniform"), ("ContinuousBernoulliProbs", "Pareto"),
    ("Exponential", "Gamma"), ("Exponential", "Gumbel"), ("Exponential", "Normal"), ("Exponential", "Uniform"),
    ("Gamma", "Exponential"), ("Gamma", "Gumbel"), ("Gamma", "Normal"), ("Gamma", "Beta"), ("Gumbel", "Normal"),
    ("Gumbel", "Exponential"), ("Laplace", "Normal"), ("Laplace", "Uniform"), ("Normal", "Gumbel"),
    ("Normal", "Laplace"), ("Normal", "Pareto"), ("Pareto", "Exponential"), ("Pareto", "Gamma"),
    ("Pareto", "Normal"), ("Pareto", "Uniform"), ("Poisson", "BinomialProbs"), ("Uniform", "Beta"),
    ("Uniform", "ContinuousBernoulliProbs"), ("Uniform", "Exponential"), ("Uniform", "Gamma"),
    ("Uniform", "Gumbel"), ("Uniform", "Normal"), ("Uniform", "Pareto"), ("Chi2", "Normal"),
]


def kl_params(kind, base, k, role):
    params, diff = params_for(kind, base, k)
    p = dict(params)
    # supports that keep the KL finite (and some that do not) for the pairs above
    if kind == "Uniform" and role == "p" and rng.random() < 0.7:
        lo = U(0.05, 0.4, sub(base))
        p["low"], p["high"] = lo, lo + U(0.1, 0.5, sub(base))
    if kind == "Uniform" and role == "q" and rng.random() < 0.5:
        p["low"], p["high"] = -U(3.0, 4.0, sub(base)), U(4.0, 6.0, sub(base))
    if kind == "Pareto" and role == "q" and rng.random() < 0.6:
        p["scale"] = U(0.01, 0.2, sub(base))
    if kind == "Pareto" and role == "p" and rng.random() < 0.3:
        p["alpha"] = U(0.6, 0.9, sub(base))
    return [(n, p[n]) for n, _ in params], diff


def kl_case(cid):
    pk, qk = rng.choice(KL_PAIRS)
    base = rng.choice(BASES)
    if "IndependentNormal" in (pk, qk) or "MixtureSameFamily" in pk:
        base = rng.choice([(3,), (2, 3), (2, 1, 3)])
    k = rng.randint(2, 4)
    pp, pdiff = kl_params(pk, base, k, "p")
    qp, qdiff = kl_params(qk, base, k, "q")
    if pk.startswith("Binomial") and qk.startswith("Binomial"):
        qp = [("total_count", dict(pp)["total_count"])] + [x for x in qp if x[0] != "total_count"]
    if pk == "IndependentNormal":
        qp = [x for x in qp if x[0] != "ndims"] + [("ndims", dict(pp)["ndims"])]
    pl = {n: t.clone().requires_grad_(n in pdiff) for n, t in pp}
    ql = {n: t.clone().requires_grad_(n in qdiff) for n, t in qp}
    p = build(pk, list(pl.items()), False)
    q = build(qk, list(ql.items()), False)
    try:
        kl = D.kl_divergence(p, q)
    except Exception as e:  # noqa: BLE001  (torch's KL rules do not all broadcast p against q)
        print(f"  kl {cid} {pk}/{qk}: {first_line(e)}", file=sys.stderr)
        return None
    grads = []
    if kl.requires_grad:
        names = [("p", n) for n in pdiff] + [("q", n) for n in qdiff]
        ts = [pl[n] for n in pdiff] + [ql[n] for n in qdiff]
        gs = torch.autograd.grad(kl.sum(), ts, allow_unused=True)
        grads = [(f"{r}.{n}", torch.zeros_like(t) if g is None else g) for (r, n), t, g in zip(names, ts, gs)]
    return (
        f'    KlCase {{ id: {cid}, p_kind: "{pk}", p_params: {named(pp)}, p_diff: &{rust_strs(pdiff)}, '
        f'q_kind: "{qk}", q_params: {named(qp)}, q_diff: &{rust_strs(qdiff)}, kl: {tensor_lit(kl.detach())}, '
        f"grads: {named(grads)} }},"
    )


# ---------------------------------------------------------------- validation errors

BAD = {
    # kind: [(param, bad value)]
    "Normal": [("scale", -1.0), ("scale", 0.0), ("loc", float("nan"))],
    "Cauchy": [("scale", -0.5)],
    "Laplace": [("scale", 0.0)],
    "Gumbel": [("scale", -2.0)],
    "LogNormal": [("scale", -1.0)],
    "BernoulliProbs": [("probs", 1.5), ("probs", -0.1)],
    "GeometricProbs": [("probs", 0.0), ("probs", 1.2)],
    "ContinuousBernoulliProbs": [("probs", 1.5)],
    "Beta": [("concentration1", -1.0), ("concentration0", 0.0)],
    "Kumaraswamy": [("concentration1", -1.0)],
    "BinomialProbs": [("total_count", -1.0), ("probs", 1.5)],
    "NegativeBinomialProbs": [("total_count", -1.0), ("probs", 1.0)],
    "CategoricalProbs": [("probs", -0.5)],
    "OneHotCategoricalProbs": [("probs", -0.5)],
    "MultinomialProbs": [("probs", -0.5)],
    "Chi2": [("df", -1.0)],
    "Dirichlet": [("concentration", -0.5)],
    "Exponential": [("rate", -1.0), ("rate", 0.0)],
    "Poisson": [("rate", -1.0)],
    "FisherSnedecor": [("df1", -1.0), ("df2", 0.0)],
    "Gamma": [("concentration", -1.0), ("rate", -1.0)],
    "InverseGamma": [("concentration", 0.0), ("rate", -1.0)],
    "HalfCauchy": [("scale", -1.0)],
    "HalfNormal": [("scale", 0.0)],
    "IndependentNormal": [("scale", -1.0)],
    "LowRankMultivariateNormal": [("cov_diag", -1.0)],
    "MultivariateNormalScaleTril": [("scale_tril", -1.0)],
    "MultivariateNormalCovariance": [("covariance_matrix", -1.0)],
    "MultivariateNormalPrecision": [("precision_matrix", -1.0)],
    "Pareto": [("scale", -1.0), ("alpha", 0.0)],
    "RelaxedBernoulliProbs": [("temperature", -1.0), ("probs", 1.5)],
    "RelaxedOneHotCategoricalProbs": [("probs", -1.0)],
    "StudentT": [("df", -1.0), ("scale", 0.0)],
    "Uniform": [("high", -100.0)],
    "VonMises": [("concentration", -1.0)],
    "Weibull": [("scale", -1.0), ("concentration", 0.0)],
}


def err_case(cid, kind, pname, bad):
    base = rng.choice(BASES)
    k = rng.randint(2, 4)
    params, _ = params_for(kind, base, k)
    out = []
    for n, t in params:
        if n == pname:
            t = t.clone()
            if n in ("scale_tril", "covariance_matrix", "precision_matrix"):
                t[..., 0, 0] = bad  # (a negative diagonal: not lower-Cholesky / positive definite)
            else:
                t.view(-1)[rng.randrange(t.numel())] = bad
        out.append((n, t))
    try:
        build(kind, out, True)
    except Exception as e:  # noqa: BLE001
        return f'    ErrCase {{ id: {cid}, kind: "{kind}", params: {named(out)}, msg: {rust_str(first_line(e))} }},'
    print(f"  err {cid} {kind}.{pname}={bad}: torch accepted it", file=sys.stderr)
    return None


def main():
    lines = [generated_header("make_distributions_fuzz_golden.py", f"seed {SEED}, float64, CPU")]
    lines.append("const DIST_CASES: &[DistCase] = &[")
    n_dist = 400
    for cid in range(n_dist):
        kind = KINDS[cid % len(KINDS)] if cid < 2 * len(KINDS) else rng.choice(KINDS)
        lines.append(dist_case(cid, kind))
    lines.append("];")
    lines.append("const KL_CASES: &[KlCase] = &[")
    cid = n_dist
    for _ in range(2 * len(KL_PAIRS) + 60):
        line = kl_case(cid)
        cid += 1
        if line is not None:
            lines.append(line)
    lines.append("];")
    lines.append("const ERR_CASES: &[ErrCase] = &[")
    for kind, bads in BAD.items():
        for pname, bad in bads:
            line = err_case(cid, kind, pname, bad)
            cid += 1
            if line is not None:
                lines.append(line)
    lines.append("];")
    print(write_golden("distributions_fuzz_golden.rs", lines))


if __name__ == "__main__":
    main()
