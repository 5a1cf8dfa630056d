"""Writes nn/tests/nn/distributions_heavy_tailed_transformed_golden.rs: torch.distributions values (float64) replayed by
nn/tests/nn/distributions_heavy_tailed_transformed.rs — Cauchy, HalfNormal, HalfCauchy, Chi2, StudentT, Geometric,
NegativeBinomial, LogNormal and TransformedDistribution (the SAC tanh-Normal) log_prob, entropy,
moments, cdf/icdf and the gradients of log_prob(value).sum(); the transforms (call, inv,
log_abs_det_jacobian and their gradients); torch._standard_gamma_grad; validation messages.

torch._standard_gamma_grad takes (alpha, x) — `self` is the concentration, `output` the draw
(derivatives.yaml: `_standard_gamma: self: grad * _standard_gamma_grad(self, result)`), the order
of oxtorch's `standard_gamma_grad(alpha, x)`.

Run with the reference torch: /work/.refenv/bin/python nn/tests/make_distributions_heavy_tailed_transformed_golden.py
"""

import os
import sys

import torch
import torch.distributions as D
import torch.distributions.transforms as Tr

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from golden_writer import generated_header, named, rust_str, tensor_lit, write_golden  # noqa: E402

torch.set_default_dtype(torch.float64)
t = torch.tensor


def build(kind, params):
    p = dict(params)
    if kind == "Cauchy":
        return D.Cauchy(p["loc"], p["scale"])
    if kind == "HalfNormal":
        return D.HalfNormal(p["scale"])
    if kind == "HalfCauchy":
        return D.HalfCauchy(p["scale"])
    if kind == "Chi2":
        return D.Chi2(p["df"])
    if kind == "StudentT":
        return D.StudentT(p["df"], p["loc"], p["scale"])
    if kind == "GeometricProbs":
        return D.Geometric(probs=p["probs"])
    if kind == "GeometricLogits":
        return D.Geometric(logits=p["logits"])
    if kind == "NegativeBinomialProbs":
        return D.NegativeBinomial(p["total_count"], probs=p["probs"])
    if kind == "NegativeBinomialLogits":
        return D.NegativeBinomial(p["total_count"], logits=p["logits"])
    if kind == "LogNormal":
        return D.LogNormal(p["loc"], p["scale"])
    if kind == "TanhNormal":
        # the SAC policy: tanh(t_loc + t_scale * Normal(loc, scale))
        return D.TransformedDistribution(
            D.Normal(p["loc"], p["scale"]), [Tr.AffineTransform(p["t_loc"], p["t_scale"]), Tr.TanhTransform()]
        )
    if kind == "AffineEvent1Normal":
        return D.TransformedDistribution(
            D.Normal(p["loc"], p["scale"]), [Tr.AffineTransform(p["t_loc"], p["t_scale"], event_dim=1)]
        )
    raise ValueError(kind)


NOQ = None

CASES = [
    ("Cauchy", [("loc", t([0.5, -1.0, 2.0])), ("scale", t([[1.5], [0.3]]))], t([0.1, 0.2, -0.7]), t([0.1, 0.5, 0.9])),
    ("HalfNormal", [("scale", t([0.5, 1.0, 2.5]))], t([[0.0, 0.7, 3.0], [1.2, 0.1, 0.4]]), t([0.1, 0.5, 0.95])),
    ("HalfCauchy", [("scale", t([[0.5], [2.0]]))], t([0.3, 1.0, 7.5]), t([0.2, 0.6, 0.99])),
    ("Chi2", [("df", t([0.5, 2.0, 5.0, 11.0]))], t([0.2, 1.5, 4.0, 12.5]), NOQ),
    (
        "StudentT",
        [("df", t([0.8, 1.5, 5.0])), ("loc", t([[0.0], [1.0]])), ("scale", t([2.0]))],
        t([0.3, -2.0, 4.0]),
        NOQ,
    ),
    ("GeometricProbs", [("probs", t([0.2, 0.5, 0.9]))], t([[0.0, 3.0, 1.0], [7.0, 0.0, 2.0]]), NOQ),
    ("GeometricLogits", [("logits", t([-1.5, 0.0, 2.0]))], t([4.0, 0.0, 1.0]), NOQ),
    (
        "NegativeBinomialProbs",
        [("total_count", t([1.0, 3.5, 10.0])), ("probs", t([[0.3], [0.7]]))],
        t([0.0, 2.0, 15.0]),
        NOQ,
    ),
    ("NegativeBinomialLogits", [("total_count", t([2.0, 0.5])), ("logits", t([-0.7, 1.2]))], t([3.0, 0.0]), NOQ),
    ("LogNormal", [("loc", t([0.5, -1.0, 0.0])), ("scale", t([[0.4], [1.2]]))], t([1.3, 0.2, 2.5]), t([0.1, 0.5, 0.9])),
    (
        "TanhNormal",
        [
            ("loc", t([0.3, -0.5, 1.0])),
            ("scale", t([[0.8], [1.5]])),
            ("t_loc", t([0.1, 0.0, -0.2])),
            ("t_scale", t([[1.0], [-0.5]])),
        ],
        t([0.2, -0.9, 0.95]),
        t([0.1, 0.5, 0.8]),
    ),
    (
        "AffineEvent1Normal",
        [("loc", t([0.3, -0.5, 1.0])), ("scale", t([0.8, 1.5, 0.5])), ("t_loc", t([0.1, 0.0, -0.2])), ("t_scale", t([2.0, -0.5, 1.5]))],
        t([[0.2, -0.9, 0.95], [1.0, 2.0, -3.0]]),
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
    return outs


def case_lines():
    lines = ["const CASES: &[DistCase] = &["]
    for kind, params, value, q in CASES:
        leaves = [(k, v.clone().requires_grad_(True)) for k, v in params]
        d = build(kind, leaves)
        outs = quantities(d, value, q)
        lp = d.log_prob(value).sum()
        gs = torch.autograd.grad(lp, [v for _, v in leaves])
        grads = list(zip([k for k, _ in leaves], gs))
        qlit = tensor_lit(q) if q is not None else "T { dims: &[0], data: &[] }"
        lines.append(
            f'    DistCase {{ kind: "{kind}", params: {named(params)}, value: {tensor_lit(value)}, q: {qlit}, '
            f"batch: &{list(d.batch_shape)}, event: &{list(d.event_shape)}, outs: {named(outs)}, "
            f"grads: {named(grads)} }},"
        )
    lines.append("];")
    return lines


def make_transform(kind, p):
    if kind == "Exp":
        return Tr.ExpTransform()
    if kind == "Affine":
        return Tr.AffineTransform(p["loc"], p["scale"])
    if kind == "AffineEvent1":
        return Tr.AffineTransform(p["loc"], p["scale"], event_dim=1)
    if kind == "Sigmoid":
        return Tr.SigmoidTransform()
    if kind == "Tanh":
        return Tr.TanhTransform()
    if kind == "Softmax":
        return Tr.SoftmaxTransform()
    if kind == "Power":
        return Tr.PowerTransform(p["exponent"])
    if kind == "Abs":
        return Tr.AbsTransform()
    if kind == "ComposeAffineExp":
        return Tr.ComposeTransform([Tr.AffineTransform(p["loc"], p["scale"]), Tr.ExpTransform()])
    if kind == "ComposeExpAffine1":
        return Tr.ComposeTransform([Tr.ExpTransform(), Tr.AffineTransform(p["loc"], p["scale"], event_dim=1)])
    raise ValueError(kind)


X = t([[-1.5, 0.2, 0.9], [2.0, -0.3, 0.05]])
XPOS = t([[0.3, 1.2, 2.5], [4.0, 0.05, 1.0]])
YUNIT = t([[0.1, 0.5, 0.97], [0.02, 0.6, 0.35]])
YSYM = t([[-0.9, 0.0, 0.5], [0.99, -0.3, 0.05]])
YSIMPLEX = t([[0.2, 0.3, 0.5], [0.6, 0.1, 0.3]])

TRANSFORMS = [
    ("Exp", [], X, XPOS),
    ("Affine", [("loc", t([0.5, -1.0, 2.0])), ("scale", t([[1.5], [-0.3]]))], X, X.flip(0)),
    ("AffineEvent1", [("loc", t([0.5, -1.0, 2.0])), ("scale", t([1.5, -0.3, 2.0]))], X, X.flip(0)),
    ("Sigmoid", [], t([[-30.0, 0.2, 0.9], [5.0, -0.3, 0.05]]), YUNIT),
    ("Tanh", [], X, YSYM),
    ("Softmax", [], X, YSIMPLEX),
    ("Power", [("exponent", t([2.0, -0.5, 1.5]))], XPOS, XPOS.flip(1)),
    ("Abs", [], X, XPOS),
    ("ComposeAffineExp", [("loc", t([0.5, -1.0, 2.0])), ("scale", t([[1.5], [-0.3]]))], X, XPOS),
    ("ComposeExpAffine1", [("loc", t([0.5, -1.0, 2.0])), ("scale", t([1.5, 0.3, 2.0]))], X, XPOS.add(2.0)),
]


def ramp(v):
    return torch.arange(1, v.numel() + 1, dtype=torch.float64).reshape(v.shape)


def transform_lines():
    """outs: call(x), inv(y), log_abs_det_jacobian(x, call(x)) when torch has it; grads of
    sum_k (out_k * ramp(out_k)).sum() with respect to x, y and the parameters."""
    lines = ["const TRANSFORMS: &[TransformCase] = &["]
    for kind, params, x, y in TRANSFORMS:
        leaves = [(k, v.clone().requires_grad_(True)) for k, v in params]
        tr = make_transform(kind, dict(leaves))
        xl, yl = x.clone().requires_grad_(True), y.clone().requires_grad_(True)
        fx = tr(xl)
        outs = [("call", fx), ("inv", tr.inv(yl))]
        try:
            outs.append(("ladj", tr.log_abs_det_jacobian(xl, fx)))
        except NotImplementedError:
            pass
        loss = sum((v * ramp(v)).sum() for _, v in outs)
        wrt = [("x", xl), ("y", yl)] + leaves
        gs = torch.autograd.grad(loss, [v for _, v in wrt], allow_unused=True)
        grads = [(k, g if g is not None else torch.zeros_like(v)) for (k, v), g in zip(wrt, gs)]
        outs = [(k, v.detach()) for k, v in outs]
        lines.append(
            f'    TransformCase {{ kind: "{kind}", params: {named(params)}, x: {tensor_lit(x)}, y: {tensor_lit(y)}, '
            f"outs: {named(outs)}, grads: {named(grads)} }},"
        )
    lines.append("];")
    return lines


def gamma_grad_lines():
    pairs = [
        (0.1, 1e-6), (0.1, 0.01), (0.1, 0.5), (0.1, 2.0), (0.5, 0.3), (0.5, 0.79), (0.5, 0.81), (0.5, 5.0),
        (1.0, 1.0), (2.0, 0.5), (2.0, 7.0), (3.7, 12.0), (5.0, 0.05), (7.9, 3.0), (8.5, 8.0), (8.5, 30.0),
        (20.0, 10.0), (20.0, 20.0), (20.0, 35.0), (50.0, 30.0), (50.0, 46.0), (50.0, 50.0), (50.0, 54.0),
        (50.0, 80.0),
    ]
    alpha = t([a for a, _ in pairs])
    x = t([v for _, v in pairs])
    out = torch._standard_gamma_grad(alpha, x)
    return [f"const GAMMA_GRAD: (T, T, T) = ({tensor_lit(alpha)}, {tensor_lit(x)}, {tensor_lit(out)});"]


def err_lines():
    errs = []

    def grab(name, f):
        try:
            f()
        except Exception as e:  # noqa: BLE001
            errs.append((name, str(e).split("\n")[0]))
            return
        raise AssertionError(name)

    grab("cauchy_scale", lambda: D.Cauchy(t([0.0, 1.0]), t([1.0, -1.0])))
    grab("studentt_df", lambda: D.StudentT(t([0.0, 1.0])))
    grab("chi2_df", lambda: D.Chi2(t([0.0])))
    grab("geometric_probs_zero", lambda: D.Geometric(probs=t([0.0])))
    grab("geometric_probs", lambda: D.Geometric(probs=t([1.5])))
    grab("geometric_value", lambda: D.Geometric(probs=t([0.5])).log_prob(t([-1.0])))
    grab("geometric_both", lambda: D.Geometric(probs=t([0.5]), logits=t([0.0])))
    grab("negbin_total_count", lambda: D.NegativeBinomial(t([-1.0]), probs=t([0.5])))
    grab("halfnormal_value", lambda: D.HalfNormal(t([1.0])).log_prob(t([-1.0])))
    grab("lognormal_value", lambda: D.LogNormal(t([0.0]), t([1.0])).log_prob(t([-1.0])))
    grab(
        "tanh_normal_value",
        lambda: D.TransformedDistribution(D.Normal(t([0.0]), t([1.0])), [Tr.TanhTransform()]).log_prob(t([1.5])),
    )
    return ["const ERRS: &[(&str, &str)] = &["] + [f"    ({rust_str(k)}, {rust_str(v)})," for k, v in errs] + ["];"]


def main():
    lines = [generated_header("make_distributions_heavy_tailed_transformed_golden.py")]
    lines += case_lines() + transform_lines() + gamma_grad_lines() + err_lines()
    print(write_golden("distributions_heavy_tailed_transformed_golden.rs", lines))


if __name__ == "__main__":
    main()
