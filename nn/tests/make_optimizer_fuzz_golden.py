"""Writes nn/tests/nn/optimizer_fuzz_golden.rs: a randomized golden of torch's optimizers and LR schedulers.

Run: /work/.refenv/bin/python nn/tests/make_optimizer_fuzz_golden.py

With a fixed seed, ~150 cases: each picks an optimizer (SGD, Adam, AdamW, RMSprop, Adagrad, Adadelta,
Adamax, NAdam, RAdam, Rprop, ASGD, LBFGS, Muon) with random valid options, 1-2 param groups (per-group
overrides) of random small float32/float64 parameters, optionally an LR scheduler (or a SequentialLR /
ChainedScheduler composition), and runs 6 steps of `opt.step(closure)` then `sched.step()` (the
plateau scheduler with the closure's loss as metric). The loss of a parameter `p` is
`(w * (p - t)**2).sum() + (sin(p * 3) * 0.1).sum()`, each term backwarded on its own (so float32 and
float64 parameters stay apart); on some steps a parameter sits out of the loss, so its grad is None.
The closure clears every grad first (set to None) and returns the summed loss as a float64 scalar.

Recorded: each group's hyper-parameters as torch holds them (by oxtorch's names: pairs as `name.0`,
flags as 0/1, Muon's `adjust_lr_fn` as a code), the initial parameters, the group learning rates after
the scheduler's construction, and after every step the parameters, the learning rates and the loss.
The generator also checks torch's own state_dict round trip (save after 3 steps, fresh optimizer, load,
continue) gives the uninterrupted parameters, which the replay test asks of oxtorch.

Not covered (oxtorch's options lack them): Adam's `decoupled_weight_decay` (oxtorch has AdamW),
`foreach`/`fused`/`capturable`/`differentiable`, tensor learning rates, CyclicLR's `scale_fn`/`scale_mode`.
"""

import math
import os
import random
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from golden_writer import floats, generated_header, lit, rust_str, tensor_lit, write_golden  # noqa: E402

import torch.optim.lr_scheduler as L  # noqa: E402

SEED = 33
N_CASES = 150
STEPS = 6
SAVE_AT = 3

rng = random.Random(SEED)
torch.manual_seed(SEED)

OPTS = ["sgd", "adam", "adamw", "rmsprop", "adagrad", "adadelta", "adamax", "nadam", "radam", "rprop", "asgd",
        "lbfgs", "muon"]
CLASSES = {
    "sgd": torch.optim.SGD, "adam": torch.optim.Adam, "adamw": torch.optim.AdamW, "rmsprop": torch.optim.RMSprop,
    "adagrad": torch.optim.Adagrad, "adadelta": torch.optim.Adadelta, "adamax": torch.optim.Adamax,
    "nadam": torch.optim.NAdam, "radam": torch.optim.RAdam, "rprop": torch.optim.Rprop, "asgd": torch.optim.ASGD,
    "lbfgs": torch.optim.LBFGS, "muon": torch.optim.Muon,
}
# the optimizers whose torch defaults have `momentum` or `betas` (what cycle_momentum needs)
MOMENTUM_OPTS = {"sgd", "adam", "adamw", "rmsprop", "adamax", "nadam", "radam", "muon"}
# oxtorch's hyper-parameter names per optimizer (nn/src/optim/hyper.rs, muon.rs, lbfgs.rs)
KEYS = {
    "sgd": ["lr", "momentum", "dampening", "weight_decay", "nesterov", "maximize"],
    "adam": ["lr", "eps", "weight_decay", "amsgrad", "maximize", "betas"],
    "adamw": ["lr", "eps", "weight_decay", "amsgrad", "maximize", "betas"],
    "rmsprop": ["lr", "alpha", "eps", "weight_decay", "momentum", "centered", "maximize"],
    "adagrad": ["lr", "lr_decay", "weight_decay", "initial_accumulator_value", "eps", "maximize"],
    "adadelta": ["lr", "rho", "eps", "weight_decay", "maximize"],
    "adamax": ["lr", "eps", "weight_decay", "maximize", "betas"],
    "nadam": ["lr", "eps", "weight_decay", "momentum_decay", "decoupled_weight_decay", "maximize", "betas"],
    "radam": ["lr", "eps", "weight_decay", "decoupled_weight_decay", "maximize", "betas"],
    "rprop": ["lr", "maximize", "etas", "step_sizes"],
    "asgd": ["lr", "lambd", "alpha", "t0", "weight_decay", "maximize"],
    "lbfgs": ["lr", "max_iter", "max_eval", "tolerance_grad", "tolerance_change", "history_size", "maximize"],
    "muon": ["lr", "weight_decay", "momentum", "nesterov", "ns_coefficients", "eps", "ns_steps", "adjust_lr_fn"],
}
ADJUST_CODES = {None: 0.0, "original": 1.0, "match_rms_adamw": 2.0, "spectral_unclamped": 3.0}


def c(*xs):
    return rng.choice(xs)


def lr_range(lo=0.005, hi=0.15):
    return round(rng.uniform(lo, hi), 4)


def betas():
    return (c(0.8, 0.9, 0.95), c(0.9, 0.99, 0.999))


def rand_options(name):
    """Random valid torch keyword arguments of optimizer `name` (no foreach/fused/...)."""
    b = rng.random() < 0.3  # maximize
    if name == "sgd":
        momentum = c(0.0, 0.5, 0.9)
        nesterov = momentum > 0 and rng.random() < 0.4
        dampening = 0.0 if nesterov else c(0.0, 0.0, 0.1, 0.5)
        return dict(lr=lr_range(), momentum=momentum, dampening=dampening, weight_decay=c(0.0, 0.01, 0.1),
                    nesterov=nesterov, maximize=b)
    if name in ("adam", "adamw"):
        return dict(lr=lr_range(), betas=betas(), eps=c(1e-8, 1e-6, 1e-3), weight_decay=c(0.0, 0.01, 0.1),
                    amsgrad=rng.random() < 0.4, maximize=b)
    if name == "rmsprop":
        return dict(lr=lr_range(0.001, 0.05), alpha=c(0.99, 0.9, 0.5), eps=c(1e-8, 1e-6, 1e-3),
                    weight_decay=c(0.0, 0.01, 0.1), momentum=c(0.0, 0.5, 0.9), centered=rng.random() < 0.5,
                    maximize=b)
    if name == "adagrad":
        return dict(lr=lr_range(0.01, 0.3), lr_decay=c(0.0, 0.01, 0.1), weight_decay=c(0.0, 0.01, 0.1),
                    initial_accumulator_value=c(0.0, 0.1, 1.0), eps=c(1e-10, 1e-6), maximize=b)
    if name == "adadelta":
        return dict(lr=c(1.0, 0.5, 2.0), rho=c(0.9, 0.5, 0.95), eps=c(1e-6, 1e-3), weight_decay=c(0.0, 0.01, 0.1),
                    maximize=b)
    if name == "adamax":
        return dict(lr=lr_range(), betas=betas(), eps=c(1e-8, 1e-3), weight_decay=c(0.0, 0.01, 0.1), maximize=b)
    if name == "nadam":
        return dict(lr=lr_range(), betas=betas(), eps=c(1e-8, 1e-3), weight_decay=c(0.0, 0.01, 0.1),
                    momentum_decay=c(4e-3, 0.01, 0.1), decoupled_weight_decay=rng.random() < 0.5, maximize=b)
    if name == "radam":
        return dict(lr=lr_range(), betas=(c(0.8, 0.9), c(0.9, 0.99, 0.999)), eps=c(1e-8, 1e-3),
                    weight_decay=c(0.0, 0.01, 0.1), decoupled_weight_decay=rng.random() < 0.5, maximize=b)
    if name == "rprop":
        return dict(lr=lr_range(0.005, 0.05), etas=(c(0.5, 0.3), c(1.2, 1.5)), step_sizes=(c(1e-6, 1e-3), c(50.0, 0.03)),
                    maximize=b)
    if name == "asgd":
        return dict(lr=lr_range(0.01, 0.2), lambd=c(1e-4, 0.01), alpha=c(0.75, 0.5), t0=c(1e6, 2.0, 0.0),
                    weight_decay=c(0.0, 0.01, 0.1), maximize=b)
    if name == "lbfgs":
        return dict(lr=c(1.0, 0.5, 0.1), max_iter=c(1, 2, 4, 8), history_size=c(2, 3, 10),
                    line_search_fn=c(None, "strong_wolfe"), maximize=b)
    if name == "muon":
        return dict(lr=lr_range(0.005, 0.05), weight_decay=c(0.0, 0.1), momentum=c(0.9, 0.95),
                    nesterov=rng.random() < 0.6, ns_steps=c(5, 3),
                    adjust_lr_fn=c(None, "original", "match_rms_adamw", "spectral_unclamped"))
    raise ValueError(name)


def hyper_pairs(name, group):
    """The group's hyper-parameters as torch holds them, by oxtorch's names."""
    out = []
    for k in KEYS[name]:
        v = group[k]
        if k == "adjust_lr_fn":
            out.append((k, ADJUST_CODES[v]))
        elif isinstance(v, tuple):
            out.extend((f"{k}.{i}", float(x)) for i, x in enumerate(v))
        elif isinstance(v, bool):
            out.append((k, 1.0 if v else 0.0))
        else:
            out.append((k, float(v)))
    return out


def rand_shape(two_d):
    if two_d or rng.random() < 0.5:
        return (rng.randint(1, 4), rng.randint(1, 3))
    return (rng.randint(1, 6),)


def lam(form, a, e):
    """The closed-form lambdas of LambdaLR/MultiplicativeLR (the replay test has the same)."""
    if form == 0:
        return a ** e
    if form == 1:
        return 1.0 / (1.0 + a * e)
    if form == 2:
        return a if e % 2 == 0 else 1.0
    return max(0.1, 1.0 - a * e)


SIMPLE = ["step", "multistep", "exponential", "cosine", "lambda", "multiplicative", "linear", "constant", "polynomial"]


def rand_simple(kind, n_groups):
    """A (kind, args, strs) spec of a chainable/closed-form scheduler."""
    if kind == "step":
        return (kind, [rng.randint(1, 3), c(0.5, 0.1, 0.9)], [])
    if kind == "multistep":
        ms = sorted(rng.sample(range(1, 7), rng.randint(1, 3)))
        if rng.random() < 0.2:
            ms.append(ms[-1])  # a milestone listed twice
        return (kind, [c(0.5, 0.1)] + ms, [])
    if kind == "exponential":
        return (kind, [c(0.9, 0.5, 0.99)], [])
    if kind == "cosine":
        return (kind, [rng.randint(1, 5), c(0.0, 0.001)], [])
    if kind == "lambda":
        n = c(1, n_groups)
        args = [n]
        for _ in range(n):
            args += [rng.randint(0, 3), c(0.9, 0.5, 0.2)]
        return (kind, args, [])
    if kind == "multiplicative":
        n = c(1, n_groups)
        args = [n]
        for _ in range(n):
            args += [rng.randint(1, 3), c(0.9, 0.5, 0.2)]
        return (kind, args, [])
    if kind == "linear":
        return (kind, [c(1 / 3, 0.5, 1.0), c(1.0, 0.5, 0.0), rng.randint(0, 5)], [])
    if kind == "constant":
        return (kind, [c(1 / 3, 0.5, 0.25), rng.randint(0, 5)], [])
    if kind == "polynomial":
        return (kind, [rng.randint(0, 8), c(1.0, 2.0, 0.5)], [])
    raise ValueError(kind)


def rand_sched(opt_name, n_groups):
    """(compose, [specs], milestones): compose '' (none), 'single', 'sequential' or 'chained'."""
    r = rng.random()
    if r < 0.15:
        return ("", [], [])
    kind = c(*(SIMPLE + ["onecycle", "cyclic", "warmrestarts", "plateau", "sequential", "chained"]))
    if kind in SIMPLE:
        return ("single", [rand_simple(kind, n_groups)], [])
    if kind == "onecycle":
        cm = opt_name in MOMENTUM_OPTS and rng.random() < 0.7
        if rng.random() < 0.3:
            total, epochs, spe = 0, rng.randint(2, 4), rng.randint(3, 4)
        else:
            total, epochs, spe = rng.randint(6, 12), 0, 0
        max_lrs = [lr_range(0.01, 0.2) for _ in range(n_groups)]
        args = [total, epochs, spe, c(0.3, 0.25, 0.5), c(25.0, 10.0), c(1e4, 100.0), float(rng.random() < 0.4),
                float(cm), c(0.85, 0.8), c(0.95, 0.9)] + max_lrs
        return ("single", [("onecycle", args, [c("cos", "linear")])], [])
    if kind == "cyclic":
        cm = opt_name in MOMENTUM_OPTS and rng.random() < 0.7
        down = c(-1, 1, 2, 3)
        base = [lr_range(0.001, 0.01) for _ in range(n_groups)]
        mx = [lr_range(0.02, 0.1) for _ in range(n_groups)]
        args = [rng.randint(1, 3), down, c(0.9, 0.5, 1.0), float(cm), c(0.8, 0.85), c(0.9, 0.95)] + base + mx
        return ("single", [("cyclic", args, [c("triangular", "triangular2", "exp_range")])], [])
    if kind == "warmrestarts":
        return ("single", [("warmrestarts", [rng.randint(1, 3), rng.randint(1, 3), c(0.0, 0.001)], [])], [])
    if kind == "plateau":
        args = [c(0.1, 0.5), rng.randint(0, 2), c(1e-4, 0.1, 0.0), rng.randint(0, 2), c(0.0, 0.001), c(1e-8, 1e-3)]
        return ("single", [("plateau", args, [c("min", "max"), c("rel", "abs")])], [])
    n = rng.randint(2, 3)
    specs = [rand_simple(c(*SIMPLE), n_groups) for _ in range(n)]
    if kind == "sequential":
        ms = sorted(rng.sample(range(1, 6), n - 1))
        return ("sequential", specs, ms)
    # ChainedScheduler: LambdaLR is not chainable in torch either (it overrides): allowed all the same
    return ("chained", specs, [])


def make_simple(opt, spec):
    kind, a, _ = spec
    if kind == "step":
        return L.StepLR(opt, int(a[0]), a[1])
    if kind == "multistep":
        return L.MultiStepLR(opt, [int(m) for m in a[1:]], a[0])
    if kind == "exponential":
        return L.ExponentialLR(opt, a[0])
    if kind == "cosine":
        return L.CosineAnnealingLR(opt, int(a[0]), a[1])
    if kind in ("lambda", "multiplicative"):
        n = int(a[0])
        fns = [(lambda e, f=int(a[1 + 2 * i]), x=a[2 + 2 * i]: lam(f, x, e)) for i in range(n)]
        cls = L.LambdaLR if kind == "lambda" else L.MultiplicativeLR
        return cls(opt, fns[0] if n == 1 else fns)
    if kind == "linear":
        return L.LinearLR(opt, a[0], a[1], int(a[2]))
    if kind == "constant":
        return L.ConstantLR(opt, a[0], int(a[1]))
    if kind == "polynomial":
        return L.PolynomialLR(opt, int(a[0]), a[1])
    raise ValueError(kind)


def make_sched(opt, compose, specs, milestones):
    if compose == "":
        return None
    if compose == "sequential":
        return L.SequentialLR(opt, [make_simple(opt, s) for s in specs], milestones)
    if compose == "chained":
        return L.ChainedScheduler([make_simple(opt, s) for s in specs])
    kind, a, strs = specs[0]
    n = len(opt.param_groups)
    if kind == "onecycle":
        total, epochs, spe = int(a[0]), int(a[1]), int(a[2])
        kw = dict(total_steps=total) if total > 0 else dict(epochs=epochs, steps_per_epoch=spe)
        return L.OneCycleLR(opt, max_lr=list(a[10:10 + n]), pct_start=a[3], anneal_strategy=strs[0],
                            div_factor=a[4], final_div_factor=a[5], three_phase=bool(a[6]),
                            cycle_momentum=bool(a[7]), base_momentum=a[8], max_momentum=a[9], **kw)
    if kind == "cyclic":
        down = None if a[1] < 0 else int(a[1])
        return L.CyclicLR(opt, base_lr=list(a[6:6 + n]), max_lr=list(a[6 + n:6 + 2 * n]), step_size_up=int(a[0]),
                          step_size_down=down, mode=strs[0], gamma=a[2], cycle_momentum=bool(a[3]),
                          base_momentum=a[4], max_momentum=a[5])
    if kind == "warmrestarts":
        return L.CosineAnnealingWarmRestarts(opt, int(a[0]), int(a[1]), a[2])
    if kind == "plateau":
        return L.ReduceLROnPlateau(opt, mode=strs[0], factor=a[0], patience=int(a[1]), threshold=a[2],
                                   threshold_mode=strs[1], cooldown=int(a[3]), min_lr=a[4], eps=a[5])
    return make_simple(opt, specs[0])


def term(p, t, w):
    return (w * (p - t) ** 2).sum() + (torch.sin(p * 3.0) * 0.1).sum()


def make_closure(opt, params, step):
    def closure():
        opt.zero_grad(set_to_none=True)
        total = 0.0
        for (p, t, w, skip) in params:
            if step in skip:
                continue
            loss = term(p, t, w)
            loss.backward()
            total += float(loss)
        return torch.tensor(total, dtype=torch.float64)

    return closure


def build_opt(name, groups_opts, tensors):
    cls = CLASSES[name]
    if name == "lbfgs":
        return cls([p for g in tensors for p in g], **groups_opts[0])
    kw = dict(foreach=False) if name != "muon" else {}
    return cls([dict(params=ps, **o) for ps, o in zip(tensors, groups_opts)], **kw)


def run(name, groups_opts, plist, n_groups, sched_spec, roundtrip):
    """Runs the case from the initial values; returns (hyper per group, lrs0, [(params, lrs, loss)])."""
    params = []
    tensors = [[] for _ in range(n_groups)]
    for (g, dtype, init, t, w, skip) in plist:
        p = init.clone().to(dtype).requires_grad_(True)
        params.append((p, t.to(dtype), w.to(dtype), skip))
        tensors[g].append(p)
    opt = build_opt(name, groups_opts, tensors)
    hyper = [hyper_pairs(name, grp) for grp in opt.param_groups]
    sched = make_sched(opt, *sched_spec)
    lrs0 = [grp["lr"] for grp in opt.param_groups]
    rows = []
    for step in range(STEPS):
        if roundtrip and step == SAVE_AT:
            sd = opt.state_dict()
            opt2 = build_opt(name, groups_opts, tensors)
            opt2.load_state_dict(sd)
            # the scheduler keeps driving the optimizer it was built on: point it at the new one
            if sched is not None:
                retarget(sched, opt2)
            opt = opt2
        loss = float(opt.step(make_closure(opt, params, step)))
        if isinstance(sched, L.ReduceLROnPlateau):
            sched.step(loss)
        elif sched is not None:
            sched.step()
        rows.append(([p.detach().clone() for (p, _, _, _) in params], [grp["lr"] for grp in opt.param_groups], loss))
    return hyper, lrs0, rows


def retarget(sched, opt):
    sched.optimizer = opt
    for s in getattr(sched, "_schedulers", []):
        s.optimizer = opt


def gen_case(cid):
    name = OPTS[cid % len(OPTS)] if cid < 2 * len(OPTS) else c(*OPTS)
    n_groups = 1 if name == "lbfgs" else c(1, 2)
    base = rand_options(name)
    groups_opts = [base]
    if n_groups == 2:
        other = rand_options(name)
        keys = [k for k in other if k != "nesterov" and k != "dampening"]
        over = dict(base)
        for k in rng.sample(keys, rng.randint(1, min(3, len(keys)))):
            over[k] = other[k]
        if name == "sgd" and over["nesterov"] and over["momentum"] <= 0:
            over["momentum"] = 0.9
        groups_opts.append(over)
    case_dtype = c(torch.float32, torch.float64)
    plist = []
    for g in range(n_groups):
        for _ in range(c(1, 1, 2)):
            dtype = case_dtype if name == "lbfgs" else c(torch.float32, torch.float64)
            shape = rand_shape(name == "muon")
            init = torch.randn(shape, dtype=torch.float64)
            t = torch.randn(shape, dtype=torch.float64)
            w = torch.rand(shape, dtype=torch.float64) * 1.5 + 0.5
            # float32 parameters start from float32 values (written exactly)
            init, t, w = (x.to(dtype).double() for x in (init, t, w))
            skip = sorted(rng.sample(range(STEPS), rng.randint(1, 2))) if rng.random() < 0.3 else []
            plist.append((g, dtype, init, t, w, skip))
    sched_spec = rand_sched(name, n_groups)
    hyper, lrs0, rows = run(name, groups_opts, plist, n_groups, sched_spec, False)
    _, _, rows2 = run(name, groups_opts, plist, n_groups, sched_spec, True)
    # torch's own resume is not always bit-exact: loading casts float state (NAdam's mu_product, ASGD's
    # eta/mu, ...) to the parameter's dtype. The resumed rows are kept where they differ.
    same = all(torch.equal(a, b) for (pa, _, _), (pb, _, _) in zip(rows, rows2) for a, b in zip(pa, pb))
    rows_rt = [] if same else [r[0] for r in rows2]
    desc = f"{name} {groups_opts}"
    return dict(cid=cid, name=name, desc=desc, hyper=hyper, plist=plist, sched=sched_spec, lrs0=lrs0, rows=rows, rows_rt=rows_rt,
                line_search=groups_opts[0].get("line_search_fn") or "")


def spec_lit(spec):
    kind, args, strs = spec
    return (f"SchedSpec {{ kind: {rust_str(kind)}, args: {floats(args)}, strs: &["
            + ", ".join(rust_str(s) for s in strs) + "] }")


def case_lit(case):
    compose, specs, ms = case["sched"]
    groups = []
    for g, hyper in enumerate(case["hyper"]):
        ps = [q for q in case["plist"] if q[0] == g]
        plits = []
        for (_, dtype, init, t, w, skip) in ps:
            f64 = "true" if dtype == torch.float64 else "false"
            plits.append(f"P {{ f64: {f64}, init: {tensor_lit(init)}, target: {tensor_lit(t)}, "
                         f"weight: {tensor_lit(w)}, skip: &[{', '.join(str(s) for s in skip)}] }}")
        hl = ", ".join(f"({rust_str(k)}, {lit(v)})" for k, v in hyper)
        groups.append(f"G {{ hyper: &[{hl}], params: &[{', '.join(plits)}] }}")
    steps = []
    for (ps, lrs, loss) in case["rows"]:
        steps.append(f"Row {{ params: &[{', '.join(tensor_lit(p) for p in ps)}], lrs: {floats(lrs)}, "
                     f"loss: {lit(loss)} }}")
    rt = ["&[" + ", ".join(tensor_lit(p) for p in ps) + "]" for ps in case["rows_rt"]]
    return (f"OptCase {{ id: {case['cid']}, opt: {rust_str(case['name'])}, desc: {rust_str(case['desc'])}, "
            f"line_search: {rust_str(case['line_search'])}, groups: &[{', '.join(groups)}], "
            f"compose: {rust_str(compose)}, sched: &[{', '.join(spec_lit(s) for s in specs)}], "
            f"milestones: &[{', '.join(str(m) for m in ms)}], lrs0: {floats(case['lrs0'])}, "
            f"rows: &[{', '.join(steps)}], rows_rt: &[{', '.join(rt)}] }},")


def main():
    cases = [gen_case(i) for i in range(N_CASES)]
    lines = [generated_header("make_optimizer_fuzz_golden.py", "float32/float64, CPU, seed 33"),
             "/// The randomized optimizer/scheduler cases (see nn/tests/make_optimizer_fuzz_golden.py).",
             "pub static CASES: &[OptCase] = &["]
    lines += [case_lit(cs) for cs in cases]
    lines.append("];")
    path = write_golden("optimizer_fuzz_golden.rs", lines)
    counts = {}
    for cs in cases:
        counts[cs["name"]] = counts.get(cs["name"], 0) + 1
    scheds = {}
    for cs in cases:
        compose, specs, _ = cs["sched"]
        key = compose if compose in ("", "sequential", "chained") else specs[0][0]
        scheds[key or "none"] = scheds.get(key or "none", 0) + 1
    print(path, os.path.getsize(path), "bytes")
    print("optimizers:", counts)
    print("schedulers:", scheds)
    print("cases whose torch resume is not bit-exact:", [(cs["cid"], cs["name"]) for cs in cases if cs["rows_rt"]])


if __name__ == "__main__":
    main()
