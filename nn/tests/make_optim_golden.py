"""Trajectories of torch.optim's NAdam, RAdam, Adamax, Adadelta, Rprop and ASGD, for
`tests/nn/optim_more.rs`.

Run with the reference venv: `python nn/tests/make_optim_golden.py`. For each case a float64
parameter `p = [1.0, -2.0]` gets the gradients G (set as `p.grad`, then `step()`), cycled twice
(8 steps: RAdam's rectification only starts once rho_t > 5, around step 6); the parameter after
every step is recorded, and for ASGD also its running average `ax`. torch's default dtype stays
float32, so the scalar state (NAdam's `mu_product`, ASGD's `eta` and `mu`) is float32 as in
ordinary use. Writes `nn/tests/nn/optim_golden.json` and prints it, then prints the same values
as the Rust constant that `optim_more.rs` embeds (the nn crate's tests have no JSON reader).
"""
import json
import os

import torch

G = [[0.5, -1.0], [0.1, 0.3], [-0.2, 0.4], [0.3, -0.1]]
STEPS = 2 * len(G)

O = torch.optim
CASES = {
    "nadam_default": (O.NAdam, {}),
    "nadam_l2": (O.NAdam, dict(lr=0.01, weight_decay=0.1, momentum_decay=0.01)),
    "nadam_decoupled": (
        O.NAdam,
        dict(lr=0.01, betas=(0.8, 0.99), weight_decay=0.1, decoupled_weight_decay=True, maximize=True),
    ),
    "radam_default": (O.RAdam, {}),
    "radam_l2": (O.RAdam, dict(lr=0.01, weight_decay=0.1)),
    "radam_decoupled": (
        O.RAdam,
        dict(lr=0.01, betas=(0.8, 0.99), weight_decay=0.1, decoupled_weight_decay=True, maximize=True),
    ),
    "adamax_default": (O.Adamax, {}),
    "adamax_options": (O.Adamax, dict(lr=0.01, betas=(0.8, 0.99), eps=1e-4, weight_decay=0.1, maximize=True)),
    "adadelta_default": (O.Adadelta, {}),
    "adadelta_options": (O.Adadelta, dict(lr=0.5, rho=0.8, eps=1e-4, weight_decay=0.1, maximize=True)),
    "rprop_default": (O.Rprop, {}),
    "rprop_options": (O.Rprop, dict(lr=0.05, etas=(0.3, 1.5), step_sizes=(0.01, 0.08), maximize=True)),
    "asgd_default": (O.ASGD, {}),
    "asgd_options": (O.ASGD, dict(lr=0.05, lambd=0.01, alpha=0.5, t0=1, weight_decay=0.1, maximize=True)),
}


def run(cls, kw):
    p = torch.tensor([1.0, -2.0], dtype=torch.float64, requires_grad=True)
    opt = cls([p], foreach=False, **kw)
    ps, axs = [], []
    for i in range(STEPS):
        p.grad = torch.tensor(G[i % len(G)], dtype=torch.float64)
        opt.step()
        ps.append(p.detach().tolist())
        if "ax" in opt.state[p]:
            axs.append(opt.state[p]["ax"].tolist())
    return ps, axs


def main():
    out = {}
    for name, (cls, kw) in CASES.items():
        ps, axs = run(cls, kw)
        out[name] = ps
        if axs:
            out[name + "_ax"] = axs
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "nn", "optim_golden.json")
    text = json.dumps(out, indent=1)
    with open(path, "w") as f:
        f.write(text + "\n")
    print(text)
    print()
    print("/// `nn/tests/make_optim_golden.py`'s output: the parameter (or ASGD's `ax`) after each step.")
    print("const GOLDEN: &[(&str, [[f64; 2]; 8])] = &[")
    for name, rows in out.items():
        print(f'    (\n        "{name}",\n        [')
        for r in rows:
            print(f"            [{r[0]!r}, {r[1]!r}],")
        print("        ],\n    ),")
    print("];")


if __name__ == "__main__":
    main()
