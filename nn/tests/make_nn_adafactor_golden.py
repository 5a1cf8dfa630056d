"""Writes nn/tests/nn/nn_adafactor_golden.rs: torch's results for optim.Adafactor in float64.

Each case trains a 2-D parameter (3x4: factored second moments `row_var`/`col_var`) and a 1-D one
(4: `variance`) for five steps; the gradients are given (set as `p.grad`), so the replay in
nn/tests/nn/nn_adafactor.rs needs no model. Recorded: both parameters after every step, and the
optimizer's per-parameter state after the last step as torch's `state_dict()["state"]` names it
(`state.{index}.{name}`), plus every group's hyper-parameters.

The nn crate's tests have no JSON reader, so the numbers are written as Rust constants (Python's
`repr` of a float reads back to the same f64).

Run: /work/.refenv/bin/python nn/tests/make_nn_adafactor_golden.py (from the repository root).
"""

import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from golden_writer import generated_header, lit, tensor_lit, tlist, write_golden  # noqa: E402

torch.manual_seed(2024)
DT = torch.float64
STEPS = 5


# name: options (the Rust test builds the same by name)
CASES = {
    "defaults": dict(),
    # lr large enough that rho_t = min(lr, 1/sqrt(t)) changes with t
    "lr_0_6": dict(lr=0.6),
    "weight_decay": dict(lr=0.3, weight_decay=0.1),
    "maximize": dict(lr=0.4, maximize=True),
    "eps_d_beta2": dict(lr=0.5, eps=(1e-3, 0.05), d=2.0, beta2_decay=-0.5),
    "weight_decay_maximize": dict(lr=0.2, weight_decay=0.5, maximize=True, d=1.5),
}

lines = [
    generated_header("make_nn_adafactor_golden.py"),
    "",
    "/// Adafactor runs: initial parameters, the gradient of each at every step, the parameters",
    "/// after every step, the state after the last.",
    "const ADAFACTOR_GOLDEN: &[AdafactorGolden] = &[",
]
for name, kw in CASES.items():
    init = [torch.randn(3, 4, dtype=DT), torch.randn(4, dtype=DT)]
    # gradients of varied scale (one step with tiny gradients exercises the eps1 clamp)
    scales = [1.0, 0.3, 2.0, 1e-9, 0.7]
    grads = [[torch.randn_like(p) * s for p in init] for s in scales]
    ps = [p.clone().requires_grad_(True) for p in init]
    opt = torch.optim.Adafactor(ps, **kw)
    after = []
    for gs in grads:
        for p, g in zip(ps, gs):
            p.grad = g.clone()
        opt.step()
        after.append([p.detach().clone() for p in ps])
    sd = opt.state_dict()
    state = []
    for idx, st in sd["state"].items():
        for k, v in st.items():
            state.append((f"state.{idx}.{k}", v))
    lines.append("    AdafactorGolden {")
    lines.append(f'        name: "{name}",')
    lines.append(f"        init: {tlist(init)},")
    lines.append("        grads: &[" + ", ".join(tlist(gs) for gs in grads) + "],")
    lines.append("        after: &[" + ", ".join(tlist(a) for a in after) + "],")
    lines.append("        state: &[" + ", ".join(f'("{k}", {tensor_lit(v)})' for k, v in state) + "],")
    lines.append("    },")
lines.append("];")
lines.append("")

# torch's param_groups entry of the defaults, as the Rust state dict names them
g = torch.optim.Adafactor([torch.zeros(2, requires_grad=True)]).state_dict()["param_groups"][0]
hyper = [("lr", g["lr"]), ("beta2_decay", g["beta2_decay"]), ("eps.0", float("nan") if g["eps"][0] is None else g["eps"][0]),
         ("eps.1", g["eps"][1]), ("d", g["d"]), ("weight_decay", g["weight_decay"]), ("maximize", float(g["maximize"]))]
lines.append("/// torch's `param_groups[0]` of `Adafactor(params)` (eps1 `None` written as NaN).")
lines.append("const ADAFACTOR_DEFAULT_HYPER: &[(&str, f64)] = &[" + ", ".join(f'("{k}", {lit(v)})' for k, v in hyper) + "];")
lines.append("")

# torch's errors for invalid options
ERRORS = [
    ("lr", dict(lr=-1.0)),
    ("beta2_decay", dict(beta2_decay=0.5)),
    ("eps1", dict(eps=(-1.0, 1e-3))),
    ("eps2", dict(eps=(None, -1.0))),
    ("d", dict(d=0.5)),
    ("weight_decay", dict(weight_decay=-0.1)),
]
lines.append("/// torch's error messages for invalid options, by case.")
lines.append("const ADAFACTOR_ERRORS: &[(&str, &str)] = &[")
for name, kw in ERRORS:
    try:
        torch.optim.Adafactor([torch.zeros(2, requires_grad=True)], **kw)
        raise SystemExit(f"{name}: no error")
    except ValueError as e:
        lines.append(f'    ("{name}", {str(e)!r}),'.replace("'", '"'))
lines.append("];")

out = write_golden("nn_adafactor_golden.rs", lines)
print("wrote", out)
