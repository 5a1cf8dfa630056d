"""Writes nn/tests/nn/lbfgs_swa_parametrizations_golden.rs: torch's results for optim.LBFGS (fixed step and strong
Wolfe), Optimizer.add_param_group (SGD, Adam, Adagrad), swa_utils.AveragedModel (SWA and EMA
averages, with and without buffers), swa_utils.SWALR, and nn.utils.parametrizations.weight_norm /
spectral_norm (forward values and gradients, state-dict keys, the old weight_g/weight_v keys), all
in float64.

The nn crate's tests have no JSON reader, so the numbers are written as Rust constants (Python's
`repr` of a float is the shortest string that reads back to the same f64). nn/tests/nn/lbfgs_swa_parametrizations.rs
builds the same objects by case name and replays the same calls.

- LBFGS: parameters and the returned loss after every step, and the state counters after the
  last (`n_iter`, `func_evals`, the history length). Each trajectory is recomputed from a start
  perturbed by 1e-13 (relative) and must move less than 1e-11: no stopping test sits on its
  threshold, so a replay that rounds differently takes the same branches.
- add_param_group: given gradients (set as `p.grad`) for some steps, a group added, more steps;
  every parameter after every step.
- AveragedModel: the model (Linear(3, 2) then BatchNorm1d(2)) is given new values (a state dict)
  before each of four `update_parameters`; the averaged model's state dict after each.
- SWALR: every group's learning rate after construction and after each step.
- Parametrizations: like make_padding_pool3d_and_cells_golden.py, the module's state dict in torch's order (the
  replay checks its keys and loads it by key, so spectral norm's `_u`/`_v` are torch's), the
  outputs, one random cotangent per output, the gradients of `sum_k (out_k * cot_k).sum()` for the
  input and every parameter, and the buffers after the forward passes.

Run: /work/.refenv/bin/python nn/tests/make_lbfgs_swa_parametrizations_golden.py (from the repository root).
"""

import os
import sys
import warnings

import torch
from torch import nn
from torch.nn.utils import parametrizations as P
from torch.optim import swa_utils

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from golden_writer import floats, generated_header, lit, named, tensor_lit, tlist, write_golden  # noqa: E402

warnings.filterwarnings("ignore")
torch.manual_seed(30)
DT = torch.float64


def randn(*shape):
    return torch.randn(*shape, dtype=DT)


lines = [
    generated_header("make_lbfgs_swa_parametrizations_golden.py"),
    "",
]

# --- LBFGS -----------------------------------------------------------------------------------------
LS_A = randn(6, 3)
LS_Y = randn(6, 2)


def rosenbrock(x):
    return (100 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2).sum()


def lstsq(w, b):
    return ((LS_A @ w.T + b - LS_Y) ** 2).mean()


# name: (problem, initial params, options, steps)
LBFGS_CASES = {
    "rosenbrock": ("rosenbrock", [torch.tensor([-1.5, 2.0, 0.5, -0.8], dtype=DT)],
                   dict(lr=1, max_iter=5, history_size=3), 4),
    "rosenbrock_strong_wolfe": ("rosenbrock", [torch.tensor([-1.5, 2.0, 0.5, -0.8], dtype=DT)],
                                dict(lr=1, max_iter=6, history_size=4, line_search_fn="strong_wolfe"), 4),
    "rosenbrock_maximize_lr": ("neg_rosenbrock", [torch.tensor([-1.2, 1.0, 0.3], dtype=DT)],
                               dict(lr=0.5, max_iter=4, maximize=True), 3),
    "lstsq_defaults": ("lstsq", [randn(2, 3), randn(2), randn(2)], dict(), 2),
    "lstsq_strong_wolfe": ("lstsq", [randn(2, 3), randn(2), randn(2)], dict(line_search_fn="strong_wolfe"), 2),
    "lstsq_strong_wolfe_max_eval": ("lstsq", [randn(2, 3), randn(2), randn(2)],
                                    dict(max_iter=10, max_eval=4, history_size=2, line_search_fn="strong_wolfe"), 3),
}


def loss_of(problem, ps):
    if problem == "rosenbrock":
        return rosenbrock(ps[0])
    if problem == "neg_rosenbrock":
        return -rosenbrock(ps[0])
    # (the third parameter takes no part: its gradient is None)
    return lstsq(ps[0], ps[1])


def run_lbfgs(problem, init, kw, steps):
    ps = [p.clone().requires_grad_(True) for p in init]
    opt = torch.optim.LBFGS(ps, **kw)

    def closure():
        opt.zero_grad()
        loss = loss_of(problem, ps)
        loss.backward()
        return loss

    losses, after = [], []
    for _ in range(steps):
        losses.append(float(opt.step(closure)))
        after.append([p.detach().clone() for p in ps])
    st = opt.state[ps[0]]
    return losses, after, st["n_iter"], st["func_evals"], len(st.get("old_dirs", []))


lines.append("/// LBFGS trajectories: the loss each `step` returned, the parameters after each, the counters.")
lines.append("const LBFGS_GOLDEN: &[LbfgsGolden] = &[")
for name, (problem, init, kw, steps) in LBFGS_CASES.items():
    losses, after, n_iter, func_evals, history = run_lbfgs(problem, init, kw, steps)
    # the same run from a start 1e-13 away must end at the same place (to 1e-11)
    bumped = [p * (1 + 1e-13) for p in init]
    _, after2, n2, f2, _ = run_lbfgs(problem, bumped, kw, steps)
    for a, b in zip(after[-1], after2[-1]):
        assert torch.allclose(a, b, rtol=1e-11, atol=1e-11), f"{name}: trajectory sits on a threshold"
    assert (n_iter, func_evals) == (n2, f2), name
    lines.append("    LbfgsGolden {")
    lines.append(f'        name: "{name}",')
    lines.append(f"        init: {tlist(init)},")
    lines.append(f"        losses: {floats(losses)},")
    lines.append("        after: &[" + ", ".join(tlist(a) for a in after) + "],")
    lines.append(f"        n_iter: {n_iter},")
    lines.append(f"        func_evals: {func_evals},")
    lines.append(f"        history: {history},")
    lines.append("    },")
    print(f"lbfgs {name:32s} n_iter={n_iter} func_evals={func_evals} loss={losses[-1]:.6g}")
lines.append("];")
lines.append("")
lines.append(f"/// The least-squares data: `loss = ((A @ W.T + b - Y) ** 2).mean()`.")
lines.append(f"const LS_A: T = {tensor_lit(LS_A)};")
lines.append(f"const LS_Y: T = {tensor_lit(LS_Y)};")
lines.append("")

# --- add_param_group -------------------------------------------------------------------------------
O = torch.optim
# name: (make(first params), added group (without params), steps before, steps after, params)
GROUP_CASES = {
    "sgd": (lambda ps: O.SGD(ps, lr=0.1, momentum=0.9, weight_decay=0.01, foreach=False),
            {"lr": 0.05, "nesterov": True}, 2, 3, [(3,), (2, 2)]),
    "adam": (lambda ps: O.Adam(ps, lr=0.01, betas=(0.8, 0.99), foreach=False),
             {"lr": 0.02, "betas": (0.5, 0.9), "amsgrad": True, "weight_decay": 0.1}, 2, 3, [(3,), (2,), (2, 2)]),
    "adam_defaults": (lambda ps: O.Adam(ps, lr=0.03, weight_decay=0.05, foreach=False), {}, 1, 3, [(2,), (3,)]),
    # the added parameter's sum starts from the *defaults'* initial_accumulator_value (0.5), not 2.0
    "adagrad": (lambda ps: O.Adagrad(ps, lr=0.1, initial_accumulator_value=0.5, foreach=False),
                {"initial_accumulator_value": 2.0, "lr": 0.2}, 2, 2, [(3,), (2,)]),
}

lines.append("/// add_param_group: the first parameter alone for `before` steps, then the rest as a group.")
lines.append("const GROUP_GOLDEN: &[GroupGolden] = &[")
for name, (make, extra, before, after_n, shapes) in GROUP_CASES.items():
    init = [randn(*s) for s in shapes]
    ps = [p.clone().requires_grad_(True) for p in init]
    opt = make([ps[0]])
    grads, after = [], []
    for step in range(before + after_n):
        if step == before:
            opt.add_param_group({"params": ps[1:], **extra})
        live = ps[:1] if step < before else ps
        g = [randn(*p.shape) for p in live]
        for p, gi in zip(live, g):
            p.grad = gi.clone()
        opt.step()
        grads.append(g)
        after.append([p.detach().clone() for p in ps])
    lines.append("    GroupGolden {")
    lines.append(f'        name: "{name}",')
    lines.append(f"        init: {tlist(init)},")
    lines.append(f"        before: {before},")
    lines.append("        grads: &[" + ", ".join(tlist(g) for g in grads) + "],")
    lines.append("        after: &[" + ", ".join(tlist(a) for a in after) + "],")
    lines.append("    },")
    print(f"group {name:32s} {len(opt.param_groups)} groups")
lines.append("];")
lines.append("")


# --- AveragedModel -----------------------------------------------------------------------------------
def avg_model():
    return nn.Sequential(nn.Linear(3, 2), nn.BatchNorm1d(2)).to(DT)


def model_state(k):
    sd = avg_model().state_dict()
    out = {}
    for key, v in sd.items():
        if key.endswith("num_batches_tracked"):
            out[key] = torch.tensor([3, 7, 12, 20][k])
        elif key.endswith("running_var"):
            out[key] = torch.rand(v.shape, dtype=DT) + 0.5
        else:
            out[key] = randn(*v.shape)
    return out


AVG_CASES = {
    "swa": dict(),
    "swa_use_buffers": dict(use_buffers=True),
    "swa_multi": dict(multi_avg_fn=swa_utils.get_swa_multi_avg_fn()),
    "ema_multi_use_buffers": dict(multi_avg_fn=swa_utils.get_ema_multi_avg_fn(0.9), use_buffers=True),
    "ema_multi_low_decay": dict(multi_avg_fn=swa_utils.get_ema_multi_avg_fn(0.3)),
    "ema_avg_fn": dict(avg_fn=swa_utils.get_ema_avg_fn(0.7)),
}

lines.append("/// AveragedModel: the model's state before each update and the averaged state dict after it.")
lines.append("const AVG_GOLDEN: &[AvgGolden] = &[")
for name, kw in AVG_CASES.items():
    model = avg_model()
    model.load_state_dict(model_state(0))
    averaged = swa_utils.AveragedModel(model, **kw)
    states, avgs = [], []
    for k in range(4):
        st = model_state(k)
        model.load_state_dict(st)
        averaged.update_parameters(model)
        states.append(list(st.items()))
        avgs.append([(k, v.detach().clone()) for k, v in averaged.state_dict().items()])
    lines.append("    AvgGolden {")
    lines.append(f'        name: "{name}",')
    lines.append("        models: &[" + ", ".join(named(s) for s in states) + "],")
    lines.append("        averaged: &[" + ", ".join(named(a) for a in avgs) + "],")
    lines.append("    },")
    print(f"avg   {name:32s} n_averaged={int(averaged.n_averaged)}")
lines.append("];")
lines.append("")


# --- SWALR -----------------------------------------------------------------------------------------
def two_groups():
    a = torch.zeros(2, dtype=DT, requires_grad=True)
    b = torch.zeros(2, dtype=DT, requires_grad=True)
    return O.SGD([{"params": [a], "lr": 0.1}, {"params": [b], "lr": 0.05}], lr=0.1)


def swalr_run(make_sched, steps, before=None):
    opt = two_groups()
    lrs = []
    if before is not None:
        sched = before(opt)
        lrs.append([g["lr"] for g in opt.param_groups])
        for _ in range(3):
            opt.step()
            sched.step()
            lrs.append([g["lr"] for g in opt.param_groups])
    s = make_sched(opt)
    lrs.append([g["lr"] for g in opt.param_groups])
    assert s.get_last_lr() == lrs[-1]
    for _ in range(steps):
        opt.step()
        s.step()
        lrs.append([g["lr"] for g in opt.param_groups])
    return lrs


SWALR_CASES = {
    "cos": swalr_run(lambda o: swa_utils.SWALR(o, swa_lr=0.01, anneal_epochs=3), 6),
    "linear_per_group": swalr_run(
        lambda o: swa_utils.SWALR(o, swa_lr=[0.02, 0.005], anneal_epochs=4, anneal_strategy="linear"), 6),
    "zero_epochs": swalr_run(lambda o: swa_utils.SWALR(o, swa_lr=0.01, anneal_epochs=0), 3),
    "default_epochs": swalr_run(lambda o: swa_utils.SWALR(o, swa_lr=0.002), 12),
    # after three epochs of cosine annealing: SWALR anneals from the current rates
    "after_cosine": swalr_run(lambda o: swa_utils.SWALR(o, swa_lr=0.03, anneal_epochs=2), 4,
                              before=lambda o: O.lr_scheduler.CosineAnnealingLR(o, T_max=10)),
}
lines.append("/// SWALR: both groups' rates after construction and after each step (for `after_cosine`, the")
lines.append("/// cosine schedule's four first).")
lines.append("const SWALR_GOLDEN: &[(&str, &[[f64; 2]])] = &[")
for name, lrs in SWALR_CASES.items():
    rows = ", ".join(f"[{lit(a)}, {lit(b)}]" for a, b in lrs)
    lines.append(f'    ("{name}", &[{rows}]),')
lines.append("];")
lines.append("")

# --- parametrizations ---------------------------------------------------------------------------------
MODS = []


def mod_case(name, module, input_shape, passes=1, eval_mode=False, state=None):
    module = module.to(DT)
    if eval_mode:
        module.eval()
    MODS.append((name, module, randn(*input_shape), passes, state))


mod_case("wn_linear_dim0", P.weight_norm(nn.Linear(3, 4)), (2, 3))
mod_case("wn_linear_dim_none", P.weight_norm(nn.Linear(3, 4), dim=None), (2, 3))
mod_case("wn_linear_dim_minus1", P.weight_norm(nn.Linear(3, 4), dim=-1), (2, 3))
mod_case("wn_conv1d_dim2", P.weight_norm(nn.Conv1d(2, 3, 3), dim=2), (1, 2, 6))
mod_case("wn_conv1d_dim_minus2", P.weight_norm(nn.Conv1d(2, 3, 3), dim=-2), (2, 2, 5))
# the old API's keys (weight_g, weight_v), loaded into the new parametrization
legacy = nn.utils.weight_norm(nn.Conv1d(2, 3, 3).to(DT), dim=2)
with torch.no_grad():
    legacy.weight_g.mul_(1.5)
mod_case("wn_legacy_conv1d_dim2", legacy, (1, 2, 6))
mod_case("sn_linear_train_twice", P.spectral_norm(nn.Linear(3, 4)), (2, 3), passes=2)
mod_case("sn_linear_eval", P.spectral_norm(nn.Linear(3, 4)), (2, 3), eval_mode=True)
mod_case("sn_conv2d_train_2_iterations", P.spectral_norm(nn.Conv2d(2, 3, 2), n_power_iterations=2, eps=1e-6),
         (1, 2, 4, 4))
mod_case("sn_convtranspose1d_train", P.spectral_norm(nn.ConvTranspose1d(2, 3, 2)), (1, 2, 4))
mod_case("sn_linear_bias", P.spectral_norm(nn.Linear(3, 4), name="bias"), (2, 3))

lines.append("/// Parametrized modules: state dict in torch's order, outputs (one per forward pass), cotangents,")
lines.append("/// gradients, the buffers after the passes.")
lines.append("const MOD_GOLDEN: &[ModGolden] = &[")
for name, module, x, passes, _ in MODS:
    sd = [(k, v.detach().clone()) for k, v in module.state_dict().items()]
    xi = x.clone().requires_grad_(True)
    outs = [module(xi) for _ in range(passes)]
    cots = [randn(*o.shape) for o in outs]
    sum((o * c).sum() for o, c in zip(outs, cots)).backward()
    grads = [(k, p.grad) for k, p in module.named_parameters()]
    assert all(g is not None for _, g in grads), name
    bufs = [(k, b.detach().clone()) for k, b in module.named_buffers()]
    lines.append("    ModGolden {")
    lines.append(f'        name: "{name}",')
    lines.append(f"        input: {tensor_lit(x)},")
    lines.append(f"        state: {named(sd)},")
    lines.append(f"        outs: {tlist(outs)},")
    lines.append(f"        cots: {tlist(cots)},")
    lines.append(f"        input_grad: {tensor_lit(xi.grad)},")
    lines.append(f"        param_grads: {named(grads)},")
    lines.append(f"        buffers_after: {named(bufs)},")
    lines.append("    },")
    print(f"param {name:32s} keys={[k for k, _ in sd]}")
lines.append("];")
lines.append("")

# a parametrized module's tree, as torch names it
m = P.spectral_norm(nn.Linear(3, 4))
lines.append("/// `spectral_norm(nn.Linear(3, 4))`: class name, named_modules, named_buffers.")
lines.append(f'const SN_TYPE_NAME: &str = "{type(m).__name__}";')
lines.append("const SN_MODULES: &[&str] = &[" + ", ".join(f'"{n}"' for n, _ in m.named_modules()) + "];")
lines.append("const SN_BUFFERS: &[&str] = &[" + ", ".join(f'"{n}"' for n, _ in m.named_buffers()) + "];")
a = swa_utils.AveragedModel(avg_model())
lines.append("/// `AveragedModel(Sequential(Linear(3, 2), BatchNorm1d(2)))`'s state-dict keys.")
lines.append("const AVG_KEYS: &[&str] = &[" + ", ".join(f'"{k}"' for k in a.state_dict()) + "];")

path = write_golden("lbfgs_swa_parametrizations_golden.rs", lines)
print(f"wrote {path}")
