"""Writes nn/tests/nn/param_groups_and_schedulers_golden.rs: torch's results for the optimizer introspection and the
per-group scheduler forms replayed by nn/tests/nn/param_groups_and_schedulers.rs, all in float64.

- LambdaLR and MultiplicativeLR with one lambda per param group (2 groups): every group's
  learning rate after construction and after each of 6 steps.
- OneCycleLR with a `max_lr` list and `epochs` + `steps_per_epoch` (SGD with momentum, 2 groups):
  every group's learning rate and momentum after construction and after each step, to the end.
- CosineAnnealingWarmRestarts (T_0=3, T_mult=2, eta_min=0.01) stepped with fractional epochs
  (`step(epoch + i / 4)`, 20 steps), then twice without an epoch (torch's interleaving): the
  learning rates and `last_epoch` after each.
- ReduceLROnPlateau with a `min_lr` list: the learning rates after each metric.
- CyclicLR with `base_lr` and `max_lr` lists (triangular2, momentum cycled): rates and momenta.
- update_bn on Sequential(Linear(3, 4), BatchNorm1d(4, momentum=0.3), Linear(4, 2),
  BatchNorm1d(2, momentum=None)) loaded with a state dict whose running statistics are not the
  reset ones, over three batches: the buffers after, the training flag restored.
- Adam's per-parameter state (`exp_avg`, `exp_avg_sq`, `step`) after 3 steps of given gradients.
- SGD (momentum) whose group 1 gets `weight_decay = 0.5` and `lr = 0.2` through `param_groups`
  after the first step: the parameters after the second.

Run: /work/.refenv/bin/python nn/tests/make_param_groups_and_schedulers_golden.py (from the repository root).
"""

import os
import sys

import torch
from torch.optim import SGD, Adam
from torch.optim.lr_scheduler import (
    CosineAnnealingWarmRestarts,
    CyclicLR,
    LambdaLR,
    MultiplicativeLR,
    OneCycleLR,
    ReduceLROnPlateau,
)
from torch.optim.swa_utils import update_bn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from golden_writer import floats, generated_header, lit, named, tensor_lit, write_golden  # noqa: E402

torch.set_default_dtype(torch.float64)


def sgd2(lrs=(0.1, 0.05), momentum=0.0):
    """SGD with two groups of one parameter each."""
    a = torch.zeros(2, requires_grad=True)
    b = torch.zeros(3, requires_grad=True)
    return SGD([{"params": [a], "lr": lrs[0]}, {"params": [b], "lr": lrs[1]}], lr=lrs[0], momentum=momentum)


def lrs(opt):
    return [g["lr"] for g in opt.param_groups]


def moms(opt):
    return [g["momentum"] for g in opt.param_groups]


def rows(name, values):
    """`const NAME: &[&[f64]]` of per-step rows."""
    return [f"const {name}: &[&[f64]] = &[" + ", ".join(floats(r) for r in values) + "];"]


lines = [generated_header("make_param_groups_and_schedulers_golden.py"), ""]

# --- LambdaLR / MultiplicativeLR per group ---------------------------------------------------------
opt = sgd2()
s = LambdaLR(opt, [lambda e: 0.95**e, lambda e: 1.0 / (e + 1)])
out = [lrs(opt)]
for _ in range(6):
    opt.step()
    s.step()
    out.append(lrs(opt))
lines += rows("LAMBDA_LRS", out)

opt = sgd2()
s = MultiplicativeLR(opt, [lambda e: 0.9, lambda e: 0.5 if e % 2 else 0.8])
out = [lrs(opt)]
for _ in range(6):
    opt.step()
    s.step()
    out.append(lrs(opt))
lines += rows("MULTIPLICATIVE_LRS", out)

# --- OneCycleLR with a max_lr list and epochs/steps_per_epoch --------------------------------------
opt = sgd2(momentum=0.9)
s = OneCycleLR(opt, max_lr=[0.5, 0.2], epochs=3, steps_per_epoch=4, pct_start=0.3)
out_lr, out_m = [lrs(opt)], [moms(opt)]
for _ in range(12):
    opt.step()
    s.step()
    out_lr.append(lrs(opt))
    out_m.append(moms(opt))
try:
    s.step()
    raise SystemExit("OneCycleLR stepped past its end")
except ValueError as e:
    onecycle_err = str(e)
lines += rows("ONECYCLE_LRS", out_lr)
lines += rows("ONECYCLE_MOMENTA", out_m)
lines.append(f"const ONECYCLE_ERR: &str = {onecycle_err!r};".replace("'", '"'))

# --- CosineAnnealingWarmRestarts with fractional epochs --------------------------------------------
opt = sgd2(lrs=(0.1, 0.4))
s = CosineAnnealingWarmRestarts(opt, T_0=3, T_mult=2, eta_min=0.01)
iters = 4
epochs = [e + i / iters for e in range(5) for i in range(iters)]
out, last = [], []
for ep in epochs:
    opt.step()
    s.step(ep)
    out.append(lrs(opt))
    last.append(s.last_epoch)
for _ in range(2):
    opt.step()
    s.step()
    out.append(lrs(opt))
    last.append(s.last_epoch)
lines.append("const WR_EPOCHS: &[f64] = " + floats(epochs) + ";")
lines += rows("WR_LRS", out)
lines.append("const WR_LAST_EPOCH: &[f64] = " + floats(last) + ";")

# --- ReduceLROnPlateau with a min_lr list ----------------------------------------------------------
opt = sgd2(lrs=(0.1, 0.1))
s = ReduceLROnPlateau(opt, mode="min", factor=0.5, patience=0, min_lr=[0.03, 0.001])
metrics = [1.0, 1.1, 1.2, 1.3, 0.5, 0.6, 0.7, 0.8]
out = []
for m in metrics:
    opt.step()
    s.step(m)
    assert s.get_last_lr() == lrs(opt)
    out.append(lrs(opt))
lines.append("const PLATEAU_METRICS: &[f64] = " + floats(metrics) + ";")
lines += rows("PLATEAU_LRS", out)
try:
    ReduceLROnPlateau(sgd2(), min_lr=[0.1, 0.2, 0.3])
except ValueError as e:
    plateau_err = str(e)
lines.append(f'const PLATEAU_ERR: &str = "{plateau_err}";')

# --- CyclicLR with base_lr / max_lr lists -----------------------------------------------------------
opt = sgd2(momentum=0.9)
s = CyclicLR(opt, base_lr=[0.01, 0.02], max_lr=[0.1, 0.3], step_size_up=2, step_size_down=3, mode="triangular2")
out_lr, out_m = [lrs(opt)], [moms(opt)]
for _ in range(12):
    opt.step()
    s.step()
    out_lr.append(lrs(opt))
    out_m.append(moms(opt))
lines += rows("CYCLIC_LRS", out_lr)
lines += rows("CYCLIC_MOMENTA", out_m)
try:
    CyclicLR(sgd2(momentum=0.9), base_lr=[0.01], max_lr=0.1)
except ValueError as e:
    cyclic_err = str(e)
lines.append(f'const CYCLIC_ERR: &str = "{cyclic_err}";')

# --- update_bn ----------------------------------------------------------------------------------------
torch.manual_seed(0)
net = torch.nn.Sequential(
    torch.nn.Linear(3, 4),
    torch.nn.BatchNorm1d(4, momentum=0.3),
    torch.nn.Linear(4, 2),
    torch.nn.BatchNorm1d(2, momentum=None),
)
with torch.no_grad():
    for name, buf in net.named_buffers():
        if "running" in name:
            buf.copy_(torch.rand_like(buf) + 0.5)
        else:
            buf.fill_(7)
    for p in net.parameters():
        p.copy_(torch.randn_like(p))
net.eval()
before = [(k, v.clone()) for k, v in net.state_dict().items()]
batches = [torch.randn(5, 3) * 2 + 1 for _ in range(3)]
update_bn(batches, net)
assert not net.training and not net[1].training and net[1].momentum == 0.3 and net[3].momentum is None
after = [(k, v.clone()) for k, v in net.state_dict().items() if k.split(".")[1] in ("running_mean", "running_var", "num_batches_tracked")]
lines.append("const BN_STATE: &[(&str, T)] = " + named(before) + ";")
lines.append("const BN_BATCHES: &[T] = &[" + ", ".join(tensor_lit(b) for b in batches) + "];")
lines.append("const BN_AFTER: &[(&str, T)] = " + named(after) + ";")

# --- Adam's state after 3 steps -----------------------------------------------------------------------
torch.manual_seed(1)
p0 = torch.randn(2, 3)
grads = [torch.randn(2, 3) for _ in range(3)]
p = p0.clone().requires_grad_(True)
opt = Adam([p], lr=0.01, betas=(0.9, 0.99), weight_decay=0.1)
for g in grads:
    p.grad = g.clone()
    opt.step()
st = opt.state[p]
lines.append("const ADAM_INIT: T = " + tensor_lit(p0) + ";")
lines.append("const ADAM_GRADS: &[T] = &[" + ", ".join(tensor_lit(g) for g in grads) + "];")
lines.append(
    "const ADAM_STATE: &[(&str, T)] = "
    + named([("exp_avg", st["exp_avg"]), ("exp_avg_sq", st["exp_avg_sq"]), ("step", st["step"])])
    + ";"
)
lines.append("const ADAM_PARAM: T = " + tensor_lit(p.detach()) + ";")

# --- param_groups hyper-parameter change -------------------------------------------------------------
torch.manual_seed(2)
a0, b0 = torch.randn(2), torch.randn(3)
ga, gb = [torch.randn(2) for _ in range(2)], [torch.randn(3) for _ in range(2)]
a, b = a0.clone().requires_grad_(True), b0.clone().requires_grad_(True)
opt = SGD([{"params": [a]}, {"params": [b]}], lr=0.1, momentum=0.9)
for i in range(2):
    a.grad, b.grad = ga[i].clone(), gb[i].clone()
    opt.step()
    if i == 0:
        opt.param_groups[1]["weight_decay"] = 0.5
        opt.param_groups[1]["lr"] = 0.2
lines.append("const HYPER_INIT: &[T] = &[" + tensor_lit(a0) + ", " + tensor_lit(b0) + "];")
lines.append("const HYPER_GRADS: &[&[T]] = &[" + ", ".join("&[" + tensor_lit(x) + ", " + tensor_lit(y) + "]" for x, y in zip(ga, gb)) + "];")
lines.append("const HYPER_AFTER: &[T] = &[" + tensor_lit(a.detach()) + ", " + tensor_lit(b.detach()) + "];")

print(write_golden("param_groups_and_schedulers_golden.rs", lines))
_ = lit
