"""Writes tensor/tests/cpu/special_fuzz_golden.rs: a seeded randomized differential test (seed 34) of
oxtorch's special functions (torch.special.* and the math ops built on them) against torch, over wide
input ranges: tiny (1e-300..1e-8), around 0 and negative, poles (negative integers exactly and 1e-6
away), large (1e3..1e300), ±inf, NaN, -0.0, in float32/float64 (a few float16/bfloat16 and integer
inputs that torch promotes). The replay test is tensor/tests/cpu/special_fuzz.rs.

Each case stores torch's values and, per element:
* `slack`: 4 · eps(dtype) · |x f'(x)| (+ |y ∂f/∂y| for binary functions), estimated by a central
  difference of torch's float64 function. This is the error any backward-stable algorithm may
  make (the function's condition number times one rounding of the input): it matters only near
  the zeros of a function (Bessel zeros, the roots of lgamma and digamma) and near poles.
* `truth`: the mpmath value (50 digits) at the same (rounded) input where mpmath has the function
  (NaN elsewhere). The replay also accepts a value that is within tolerance of the truth: there
  torch's own algorithm is the less accurate one.

Tolerances (|got - want| <= rtol·|want| + atol + slack): float64 rtol 1e-12 for the elementary
functions (exp2, expm1, log1p, expit, logit, xlogy, xlog1py, entr, sinc, softmax, log_softmax,
logsumexp), 1e-9 for the special functions; float32 rtol 2e-6; float16 2e-3; bfloat16 1.6e-2 (two
units in the last place: torch computes them in float32 and rounds). atol: 1e-300 (f64), 1e-37
(f32, bf16: results below the normal range carry no relative accuracy in torch's float kernels),
1e-7 (f16). NaN must match NaN, ±inf must match exactly.

Gradients (float64 only, of sum(f(x)) with respect to the first input) use rtol 1e-9 with a slack
of 1e3 times the condition slack of torch's gradient function (the backward formulas combine
several evaluations, e.g. erfcx' = 2x·erfcx(x) - 2/√π, which cancel), and 1e-14 absolute for the
softmax family (the gradient of sum(softmax) is rounding noise around 0).

Run with a torch install: python tensor/tests/make_special_fuzz_golden.py
"""
import json
import math
import os
import random
import signal
import subprocess

import torch

try:
    import mpmath as mp
    mp.mp.dps = 50
except ImportError:  # the truth column is then NaN everywhere
    mp = None

OUT = os.path.join(os.path.dirname(__file__), "cpu", "special_fuzz_golden.rs")
SEED = 34
N_CASES = 420
N_VALS = 8
rng = random.Random(SEED)
torch.manual_seed(SEED)
S = torch.special

DT = {"f32": torch.float32, "f64": torch.float64, "f16": torch.float16, "bf16": torch.bfloat16,
      "i64": torch.int64, "i32": torch.int32, "bool": torch.bool}
NAME = {v: k for k, v in DT.items()}
EPS = {"f64": 2.220446049250313e-16, "f32": 1.1920928955078125e-07, "f16": 9.765625e-04, "bf16": 7.8125e-03}
RTOL = {"f32": 2e-6, "f16": 2e-3, "bf16": 1.6e-2}
ATOL = {"f64": 1e-300, "f32": 1e-37, "f16": 1e-7, "bf16": 1e-37}

INF, NAN = float("inf"), float("nan")
SPECIALS = [INF, -INF, NAN, -0.0, 0.0]


def lit(v):
    v = float(v)
    if math.isnan(v):
        return "f64::NAN"
    if math.isinf(v):
        return "f64::INFINITY" if v > 0 else "f64::NEG_INFINITY"
    r = repr(v)
    return r if ("." in r or "e" in r) else r + ".0"


def arr(vals):
    return "&[" + ", ".join(lit(v) for v in vals) + "]"


def logu(lo, hi):
    return math.exp(rng.uniform(math.log(lo), math.log(hi)))


# ---- regimes: each returns one value ----
def r_tiny():
    return logu(1e-300, 1e-8) * rng.choice([1, 1, -1])


def r_small():
    return rng.uniform(-3, 3)


def r_mid():
    return rng.uniform(-60, 60)


def r_large():
    return logu(1e3, 1e300) * rng.choice([1, 1, -1])


def r_special():
    return rng.choice(SPECIALS)


def r_pole():
    n = -rng.randint(0, 30)
    return float(n) + rng.choice([0.0, 0.0, 1e-6, -1e-6, 1e-9, 0.5])


def r_prob():
    k = rng.random()
    if k < 0.25:
        return logu(1e-300, 1e-3)
    if k < 0.5:
        return 1 - logu(1e-15, 1e-3)
    if k < 0.6:
        return rng.choice([0.0, 1.0, -0.1, 1.1, 0.5])
    return rng.random()


def r_sym1():
    k = rng.random()
    if k < 0.3:
        return rng.choice([1, -1]) * (1 - logu(1e-15, 1e-3))
    if k < 0.4:
        return rng.choice([1.0, -1.0, 1.5, -2.0, 0.0, -0.0])
    return rng.uniform(-1, 1)


def r_pos():
    k = rng.random()
    if k < 0.3:
        return logu(1e-300, 1e-8)
    if k < 0.7:
        return rng.uniform(0, 30)
    return logu(30, 1e300)


GENERIC = [r_tiny, r_small, r_mid, r_large, r_special]
POLE = GENERIC + [r_pole, r_pole]


# ---- functions: name -> (kind, torch callable, class, grad, regimes, dtypes) ----
# kinds: "u" f(x); "p" f(x, param); "b" f(x, y) with y's regimes in `extra`; "poly" f(x, n tensor);
# "polyi" f(x, int n); "red" reductions over dim 0.
F = {}


def add(name, kind, fn, cls="special", grad=False, regimes=GENERIC, extra=None):
    F[name] = dict(kind=kind, fn=fn, cls=cls, grad=grad, regimes=regimes, extra=extra)


add("lgamma", "u", torch.lgamma, grad=True, regimes=POLE)
add("gammaln", "u", S.gammaln, grad=True, regimes=POLE)
add("digamma", "u", S.digamma, grad=True, regimes=POLE)
add("polygamma", "p", lambda x, n: S.polygamma(n, x), grad=True, regimes=POLE)
add("multigammaln", "p", lambda x, p: S.multigammaln(x, p), grad=True,
    regimes=[lambda: rng.uniform(2.5, 40), lambda: logu(3, 1e200), lambda: rng.choice([INF, NAN])])
add("erf", "u", S.erf, grad=True)
add("erfc", "u", S.erfc, grad=True)
add("erfinv", "u", S.erfinv, grad=True, regimes=[r_sym1, r_sym1, r_special])
add("erfcx", "u", S.erfcx, grad=True)
add("ndtr", "u", S.ndtr, grad=True)
add("ndtri", "u", S.ndtri, grad=True, regimes=[r_prob, r_prob, r_special])
add("log_ndtr", "u", S.log_ndtr, grad=True)
add("i0", "u", S.i0, grad=True)
add("i0e", "u", S.i0e, grad=True)
add("i1", "u", S.i1, grad=True)
add("i1e", "u", S.i1e, grad=True)
for b in ["bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "modified_bessel_i0", "modified_bessel_i1",
          "modified_bessel_k0", "modified_bessel_k1", "scaled_modified_bessel_k0", "scaled_modified_bessel_k1",
          "spherical_bessel_j0", "airy_ai"]:
    add(b, "u", getattr(S, b), grad=b in ("bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1",
                                                        "modified_bessel_i0", "modified_bessel_i1",
                                                        "modified_bessel_k0", "modified_bessel_k1"))
add("zeta", "b", S.zeta, regimes=[lambda: rng.uniform(1.0, 40), lambda: logu(1.0001, 1e4), r_special],
    extra=[lambda: rng.uniform(-8, 60), lambda: logu(1e-8, 1e6), r_pole, r_special])
add("gammainc", "b", S.gammainc, regimes=[r_pos, r_pos, r_special],
    extra=[r_pos, r_pos, lambda: rng.uniform(0, 200), r_special])
add("gammaincc", "b", S.gammaincc, regimes=[r_pos, r_pos, r_special],
    extra=[r_pos, r_pos, lambda: rng.uniform(0, 200), r_special])
add("entr", "u", S.entr, cls="elem", grad=True)
add("sinc", "u", S.sinc, cls="elem", grad=True)
add("logit", "p", lambda x, eps: S.logit(x, eps), cls="elem", grad=True,
    regimes=[r_prob, r_prob, r_special, r_small])
add("expit", "u", S.expit, cls="elem", grad=True)
add("xlogy", "b", S.xlogy, cls="elem", grad=True, extra=GENERIC + [lambda: 0.0, r_pos])
add("xlog1py", "b", S.xlog1py, cls="elem", grad=True, extra=GENERIC + [lambda: -1.0, r_pos])
add("log1p", "u", S.log1p, cls="elem", grad=True)
add("expm1", "u", S.expm1, cls="elem", grad=True)
add("exp2", "u", S.exp2, cls="elem", grad=True)
add("logsumexp", "red", lambda x: S.logsumexp(x, 0), cls="elem", grad=True,
    regimes=[r_small, r_mid, r_large, r_special])
add("softmax", "red", lambda x, dt=None: S.softmax(x, 0, dtype=dt), cls="elem", grad=True,
    regimes=[r_small, r_mid, r_large, r_special])
add("log_softmax", "red", lambda x, dt=None: S.log_softmax(x, 0, dtype=dt), cls="elem", grad=True,
    regimes=[r_small, r_mid, r_large, r_special])
POLYS = ["chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v", "chebyshev_polynomial_w",
         "shifted_chebyshev_polynomial_t", "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v",
         "shifted_chebyshev_polynomial_w", "hermite_polynomial_h", "hermite_polynomial_he",
         "laguerre_polynomial_l", "legendre_polynomial_p"]
for p in POLYS:
    add(p, "poly", getattr(S, p),
        regimes=[lambda: rng.uniform(-1.2, 1.2), lambda: rng.uniform(-1, 1), r_small, r_special],
        extra=[lambda: float(rng.randint(0, 12)), lambda: float(rng.randint(0, 60))])

# ---- mpmath truth (at the rounded input) ----
MP = {}
if mp is not None:
    def _lg(x):
        return mp.log(abs(mp.gamma(x)))

    def _ndtr(x):
        return mp.ncdf(x)

    MP = {
        "lgamma": _lg, "gammaln": _lg, "digamma": mp.digamma,
        "polygamma": lambda x, n: mp.polygamma(n, x),
        "erf": mp.erf, "erfc": mp.erfc, "erfinv": mp.erfinv, "ndtr": _ndtr,
        "erfcx": lambda x: mp.exp(x * x) * mp.erfc(x),
        "log_ndtr": lambda x: mp.log(_ndtr(x)),
        "i0": lambda x: mp.besseli(0, x), "i1": lambda x: mp.besseli(1, x),
        "i0e": lambda x: mp.besseli(0, x) * mp.exp(-abs(x)), "i1e": lambda x: mp.besseli(1, x) * mp.exp(-abs(x)),
        "modified_bessel_i0": lambda x: mp.besseli(0, x), "modified_bessel_i1": lambda x: mp.besseli(1, x),
        "bessel_j0": lambda x: mp.besselj(0, x), "bessel_j1": lambda x: mp.besselj(1, x),
        "bessel_y0": lambda x: mp.bessely(0, x), "bessel_y1": lambda x: mp.bessely(1, x),
        "modified_bessel_k0": lambda x: mp.besselk(0, x), "modified_bessel_k1": lambda x: mp.besselk(1, x),
        "scaled_modified_bessel_k0": lambda x: mp.besselk(0, x) * mp.exp(x),
        "scaled_modified_bessel_k1": lambda x: mp.besselk(1, x) * mp.exp(x),
        "airy_ai": mp.airyai,
        "zeta": lambda x, q: mp.zeta(x, q),
        "gammainc": lambda a, x: mp.gammainc(a, 0, x, regularized=True),
        "gammaincc": lambda a, x: mp.gammainc(a, x, mp.inf, regularized=True),
        "log1p": mp.log1p, "expm1": mp.expm1, "exp2": lambda x: mp.power(2, x),
    }


class _Slow(Exception):
    pass


def _alarm(signum, frame):
    raise _Slow()


signal.signal(signal.SIGALRM, _alarm)


def truth(name, xs, ys, param):
    f = MP.get(name)
    out = []
    for i, x in enumerate(xs):
        v = NAN
        if f is not None and math.isfinite(x) and (ys is None or math.isfinite(ys[i])):
            try:
                signal.alarm(2)  # mpmath can take minutes on huge arguments: no truth then
                with mp.workdps(50):
                    if ys is not None:
                        r = f(mp.mpf(x), mp.mpf(ys[i]))
                    elif param is not None:
                        r = f(mp.mpf(x), int(param))
                    else:
                        r = f(mp.mpf(x))
                    if isinstance(r, mp.mpc):
                        r = r.real if abs(r.imag) <= 1e-40 * max(abs(r.real), 1) else mp.nan
                    v = float(r)
            except Exception:  # poles, no convergence, too slow: no truth
                v = NAN
            finally:
                signal.alarm(0)
        out.append(v if math.isfinite(v) else NAN)
    return out


def slack_of(call, xs, ys, eps):
    """4·eps·(|x ∂f/∂x| + |y ∂f/∂y|) by central differences of torch's float64 function."""
    d = 1e-7
    x = torch.tensor(xs, dtype=torch.float64)
    y = None if ys is None else torch.tensor(ys, dtype=torch.float64)
    total = torch.zeros_like(x)
    with torch.no_grad():
        parts = [(x * (1 + d), x * (1 - d), y, y)]
        if y is not None:
            parts.append((x, x, y * (1 + d), y * (1 - d)))
        for xa, xb, ya, yb in parts:
            try:
                fa = call(xa, ya).double()
                fb = call(xb, yb).double()
            except Exception:
                continue
            diff = ((fa - fb).abs() / (2 * d)).nan_to_num(nan=0.0, posinf=0.0, neginf=0.0)
            total = total + diff
    return [4 * eps * float(v) for v in total.tolist()]


def pick_dtype(info):
    k = rng.random()
    if k < 0.45:
        return "f64"
    if k < 0.85:
        return "f32"
    if k < 0.93:
        return rng.choice(["i64", "i32"]) if info["kind"] in ("u", "p", "red") else "f32"
    return rng.choice(["f16", "bf16"])


def rounded(vals, dn):
    t = torch.tensor(vals, dtype=torch.float64)
    if dn in ("i64", "i32"):
        t = t.nan_to_num(0.0, 0.0, 0.0).clamp(-1000, 1000).round()
    return t.to(DT[dn])


cases = []
names = list(F)
# The last cases take the parameters torch refuses ("polygamma(n, x) does not support negative n.",
# "p has to be greater than or equal to 1").
FORCED = {N_CASES - 2: ("polygamma", -1.0), N_CASES - 1: ("multigammaln", 0.0)}
for cid in range(N_CASES):
    name = names[cid % len(names)] if cid < 2 * len(names) else rng.choice(names)
    if cid in FORCED:
        name = FORCED[cid][0]
    info = F[name]
    kind = info["kind"]
    dn = pick_dtype(info)
    regs = info["regimes"]
    main = rng.choice(regs)
    xs = [main() if rng.random() < 0.75 else rng.choice(regs)() for _ in range(N_VALS)]
    ys = None
    if kind == "b":
        ys = [rng.choice(info["extra"])() for _ in range(N_VALS)]
    elif kind == "poly":
        ys = [rng.choice(info["extra"])() for _ in range(N_VALS)]
        if rng.random() < 0.2:
            ys[rng.randrange(N_VALS)] = rng.choice([-1.0, 2.5, NAN, 130.0, INF])
    param = None
    if name == "polygamma":
        param = float(rng.randint(0, 4)) if rng.random() < 0.92 else -1.0  # -1: torch refuses
    elif name == "multigammaln":
        param = float(rng.randint(1, 5))
        xs = [x if not math.isfinite(x) or x > (param - 1) / 2 else x + param for x in xs]
        if rng.random() < 0.35:  # torch 2.15 no longer refuses elements <= (p - 1) / 2
            xs[0] = (param - 1) / 2 - 0.25
        if rng.random() < 0.1:  # torch: "p has to be greater than or equal to 1"
            param = 0.0
    elif name == "logit":
        param = rng.choice([NAN, NAN, 1e-6, 0.1, 0.5, -1.0])  # NaN: eps=None
    elif name in ("softmax", "log_softmax") and dn == "f32":
        param = 1.0 if rng.random() < 0.3 else NAN  # 1: dtype=torch.float64
    elif kind == "poly" and dn == "f32" and rng.random() < 0.3:
        kind = "polyi"
        param = float(rng.choice([0, 1, 2, 3, 5, 8, 17, -1]))
    if cid in FORCED:
        param = FORCED[cid][1]
    if kind == "poly" and dn in ("i64", "i32"):
        dn = "f32"
    x = rounded(xs, dn)
    y = None if ys is None else rounded(ys, dn)
    xs_r = x.double().tolist()
    ys_r = None if y is None else y.double().tolist()

    def call(a, b, dt=None, name=name, kind=kind, param=param):
        fn = F[name]["fn"]
        if kind in ("b", "poly"):
            return fn(a, b)
        if kind == "polyi":
            return fn(a, int(param))
        if name == "logit":
            return fn(a, None if math.isnan(param) else param)
        if kind == "p":
            return fn(a, int(param))
        if name in ("softmax", "log_softmax"):
            return fn(a, dt)
        return fn(a)

    sm_dt = torch.float64 if (param == 1.0 and name in ("softmax", "log_softmax")) else None
    try:
        out = call(x, y, sm_dt)
        want = out.double().reshape(-1).tolist()
        odt = NAME[out.dtype]
        err = None
    except Exception as e:  # torch refuses: oxtorch must too
        want, odt, err = None, "", str(e).split("\n")[0]
    ekey = odt if odt in EPS else "f64"
    if odt == "f64" or (odt == "" and dn == "f64"):
        rtol = 1e-12 if info["cls"] == "elem" else 1e-9
    else:
        rtol = RTOL.get(odt, 2e-6)
    atol = ATOL.get(odt, 1e-300)
    slack, tru = [], []
    if want is not None and kind != "red":
        slack = slack_of(lambda a, b: call(a, b), xs_r, ys_r, EPS[ekey])
        tru = truth(name, xs_r, ys_r, param if kind == "p" else None)
    elif want is not None:
        slack = [0.0] * len(want)
        tru = [NAN] * len(want)
    grad, gslack = [], []
    if want is not None and info["grad"] and dn == "f64":
        def gcall(xv, name=name, call=call, y=y):
            xt = xv.clone().requires_grad_(True)
            call(xt, y, sm_dt).sum().backward()
            return xt.grad

        try:
            grad = gcall(x).tolist()
            if kind != "red":
                gslack = [s * 1e3 for s in slack_of(lambda a, b: gcall(a), xs_r, None, EPS["f64"])]
            else:  # d/dx sum(softmax) is rounding noise around 0: an absolute allowance
                gslack = [1e-14] * len(grad)
        except Exception:
            grad, gslack = [], []
    cases.append(dict(id=cid, name=name, kind=kind, dn=dn, param=param, xs=xs_r, ys=ys_r, odt=odt, want=want,
                      err=err, rtol=rtol, atol=atol, slack=slack, truth=tru, grad=grad, gslack=gslack))

# ---- write ----
L = ["#![allow(clippy::approx_constant, clippy::excessive_precision, clippy::type_complexity)]",
     "//! Generated by tensor/tests/make_special_fuzz_golden.py (seed 34) from torch " + torch.__version__ + ";",
     "//! do not edit.",
     "",
     "/// One randomized special-function case.",
     "pub struct Case {",
     "    /// The case number (seed 34 order).",
     "    pub id: usize,",
     "    /// The torch.special name (`lgamma`, `polygamma`, ...).",
     "    pub func: &'static str,",
     "    /// `u` unary, `p` unary with `param`, `b` binary, `poly` (x, n tensor), `polyi` (x, int n),",
     "    /// `red` (over dim 0).",
     "    pub kind: &'static str,",
     "    /// The inputs' dtype.",
     "    pub dtype: &'static str,",
     "    /// polygamma's n, multigammaln's p, logit's eps (NaN: None), softmax's dtype (1: float64), polyi's n.",
     "    pub param: f64,",
     "    /// The first input (1-D).",
     "    pub x: &'static [f64],",
     "    /// The second input (empty for unary functions).",
     "    pub y: &'static [f64],",
     "    /// torch's result dtype (empty when torch raised).",
     "    pub out_dtype: &'static str,",
     "    /// torch's values, flattened; None when torch raised.",
     "    pub want: Option<&'static [f64]>,",
     "    /// torch's error message (its first line) when torch raised, else empty.",
     "    pub error: &'static str,",
     "    /// Relative tolerance.",
     "    pub rtol: f64,",
     "    /// Absolute tolerance.",
     "    pub atol: f64,",
     "    /// Per-element allowance from the function's condition number.",
     "    pub slack: &'static [f64],",
     "    /// Per-element mpmath value (NaN where unknown).",
     "    pub truth: &'static [f64],",
     "    /// torch's gradient of sum(f) with respect to x (float64 only; empty where not checked).",
     "    pub grad: &'static [f64],",
     "    /// Per-element allowance for the gradient.",
     "    pub grad_slack: &'static [f64],",
     "}",
     "",
     "/// The cases.",
     "pub const CASES: &[Case] = &["]
for c in cases:
    L.append("    Case {")
    L.append(f"        id: {c['id']},")
    L.append(f"        func: \"{c['name']}\",")
    L.append(f"        kind: \"{c['kind']}\",")
    L.append(f"        dtype: \"{c['dn']}\",")
    L.append(f"        param: {lit(NAN if c['param'] is None else c['param'])},")
    L.append(f"        x: {arr(c['xs'])},")
    L.append(f"        y: {arr(c['ys'] or [])},")
    L.append(f"        out_dtype: \"{c['odt']}\",")
    L.append(f"        want: {'None' if c['want'] is None else 'Some(' + arr(c['want']) + ')'},")
    L.append(f"        error: {json.dumps(c['err'] or '')},")
    L.append(f"        rtol: {lit(c['rtol'])},")
    L.append(f"        atol: {lit(c['atol'])},")
    L.append(f"        slack: {arr(c['slack'])},")
    L.append(f"        truth: {arr(c['truth'])},")
    L.append(f"        grad: {arr(c['grad'])},")
    L.append(f"        grad_slack: {arr(c['gslack'])},")
    L.append("    },")
L.append("];")
open(OUT, "w").write("\n".join(L) + "\n")
try:  # the repository's rustfmt settings (max_width 110), where rustfmt is installed
    cfg = os.path.join(os.path.dirname(__file__), "..", "..", "rustfmt.toml")
    subprocess.run(["rustfmt", "--edition", "2021", "--config-path", cfg, OUT], check=True)
except (OSError, subprocess.CalledProcessError) as e:
    print("rustfmt not run:", e)
n_err = sum(c["want"] is None for c in cases)
n_grad = sum(bool(c["grad"]) for c in cases)
covered = sorted({c["name"] for c in cases})
print(OUT, os.path.getsize(OUT), "cases", len(cases), "torch raised", n_err, "with grads", n_grad,
      "functions", len(covered))
for c in cases:
    if c["err"]:
        print("  raised", c["id"], c["name"], c["dn"], c["err"][:90])
