"""Optimizer trajectories and learning-rate schedules from PyTorch, for oxtorch's optim tests.

Run with the reference venv: `python tests/golden/make_golden_optim.py`. Writes
tests/golden/optim.safetensors: the start parameters `p0`, data `x`, `y`, and for each optimizer
configuration `<name>.p` the parameters after 5 steps of minimising `sum((p * x - y)^2) + sum(p^4)`;
and `lr.<name>` the learning rates of 30 scheduler steps.
"""
import math
import os

import torch
from safetensors.torch import save_file

torch.manual_seed(0)
p0 = torch.randn(3, 4)
x = torch.randn(3, 4)
y = torch.randn(3, 4)
out = {"p0": p0, "x": x, "y": y}

configs = {
    "sgd": (torch.optim.SGD, dict(lr=0.05)),
    "sgd_momentum": (torch.optim.SGD, dict(lr=0.05, momentum=0.9, dampening=0.1, weight_decay=0.01)),
    "sgd_nesterov": (torch.optim.SGD, dict(lr=0.05, momentum=0.9, nesterov=True)),
    "sgd_maximize": (torch.optim.SGD, dict(lr=0.01, momentum=0.5, maximize=True)),
    "adam": (torch.optim.Adam, dict(lr=0.01)),
    "adam_wd_amsgrad": (torch.optim.Adam, dict(lr=0.01, betas=(0.8, 0.99), weight_decay=0.1, amsgrad=True)),
    "adamw": (torch.optim.AdamW, dict(lr=0.01)),
    "adamw_amsgrad": (torch.optim.AdamW, dict(lr=0.02, weight_decay=0.05, amsgrad=True)),
    "rmsprop": (torch.optim.RMSprop, dict(lr=0.01)),
    "rmsprop_centered_momentum": (torch.optim.RMSprop, dict(lr=0.01, centered=True, momentum=0.9, weight_decay=0.01)),
    "adagrad": (torch.optim.Adagrad, dict(lr=0.1, lr_decay=0.01, weight_decay=0.01, initial_accumulator_value=0.1)),
}
for name, (cls, kw) in configs.items():
    p = p0.clone().requires_grad_(True)
    opt = cls([p], foreach=False, **kw)
    for _ in range(5):
        opt.zero_grad()
        loss = ((p * x - y) ** 2).sum() + (p**4).sum()
        loss.backward()
        opt.step()
    out[f"{name}.p"] = p.detach().clone()


def lrs(make):
    p = torch.zeros(1, requires_grad=True)
    opt = torch.optim.SGD([p], lr=0.1)
    sched = make(opt)
    seq = [opt.param_groups[0]["lr"]]
    for _ in range(30):
        opt.step()
        sched.step()
        seq.append(opt.param_groups[0]["lr"])
    return torch.tensor(seq, dtype=torch.float64)


S = torch.optim.lr_scheduler
out["lr.step"] = lrs(lambda o: S.StepLR(o, 7, 0.5))
out["lr.multistep"] = lrs(lambda o: S.MultiStepLR(o, [3, 10, 20], 0.3))
out["lr.exponential"] = lrs(lambda o: S.ExponentialLR(o, 0.9))
out["lr.cosine"] = lrs(lambda o: S.CosineAnnealingLR(o, 30, 0.001))
out["lr.lambda"] = lrs(lambda o: S.LambdaLR(o, lambda e: 1.0 / (1 + e)))
out["lr.linear"] = lrs(lambda o: S.LinearLR(o, 0.2, 1.0, 10))
out["lr.onecycle"] = lrs(lambda o: S.OneCycleLR(o, max_lr=1.0, total_steps=31, cycle_momentum=False))
out["lr.sequential"] = lrs(lambda o: S.SequentialLR(o, [S.LinearLR(o, 0.1, 1.0, 5), S.CosineAnnealingLR(o, 25)], [5]))

save_file(out, os.path.join(os.path.dirname(__file__), "optim.safetensors"))
print("wrote", len(out))
