"""Dev-time script: learning rates of torch's schedulers where they compose, restart, cycle or
refuse, for `nn/tests/nn/schedulers.rs`.

    /work/.refenv/bin/python tests/golden/make_golden_schedulers.py

Writes `schedulers.safetensors`: for each case `lr.<case>` (float64, the rate after construction
and after each step) and for the cyclic ones `momentum.<case>`.
"""

from pathlib import Path

import torch
from safetensors.torch import save_file
from torch.optim import SGD, lr_scheduler as S

STEPS = 12


def run(make, steps=STEPS, lr=1.0, momentum=0.0):
    p = torch.zeros(1, requires_grad=True)
    opt = SGD([p], lr=lr, momentum=momentum)
    scheds = make(opt)
    lrs, moms = [opt.param_groups[0]["lr"]], [opt.param_groups[0]["momentum"]]
    for _ in range(steps):
        opt.step()
        for s in scheds:
            s.step()
        lrs.append(opt.param_groups[0]["lr"])
        moms.append(opt.param_groups[0]["momentum"])
    return torch.tensor(lrs, dtype=torch.float64), torch.tensor(moms, dtype=torch.float64)


CASES = {
    # Chained past the cosine's period: the additive restart step and the floor eta_min.
    "linear_cosine": lambda o: [S.LinearLR(o, 0.5, 1.0, 2), S.CosineAnnealingLR(o, 2)],
    "exponential_cosine_floor": lambda o: [S.ExponentialLR(o, 0.5), S.CosineAnnealingLR(o, 2, eta_min=0.1)],
    # A scheduler made after another changed the rate starts from the initial one.
    "late_lambda": lambda o: late_lambda(o),
    "linear_zero_iters": lambda o: [S.LinearLR(o, 0.5, 1.0, 0)],
    "constant": lambda o: [S.ConstantLR(o, 0.5, 3)],
    "polynomial": lambda o: [S.PolynomialLR(o, total_iters=4, power=2.0)],
    "multiplicative": lambda o: [S.MultiplicativeLR(o, lambda e: 0.9 if e % 2 else 0.5)],
    "warm_restarts": lambda o: [S.CosineAnnealingWarmRestarts(o, T_0=3, T_mult=2, eta_min=0.1)],
    "warm_restarts_fixed": lambda o: [S.CosineAnnealingWarmRestarts(o, T_0=4)],
    "chained": lambda o: [S.ChainedScheduler([S.ConstantLR(o, 0.5, 4), S.ExponentialLR(o, 0.9)])],
    "cyclic_triangular2": lambda o: [S.CyclicLR(o, 0.1, 1.0, step_size_up=2, mode="triangular2")],
    "cyclic_exp_range": lambda o: [S.CyclicLR(o, 0.1, 1.0, step_size_up=2, step_size_down=3, mode="exp_range", gamma=0.9)],
}


def late_lambda(opt):
    """StepLR halves the rate once; a LambdaLR created then starts from the initial rate."""
    step = S.StepLR(opt, 1, 0.5)
    opt.step()
    step.step()
    return [S.LambdaLR(opt, lambda e: 0.9**e)]


def main():
    out = {}
    for name, make in CASES.items():
        momentum = 0.9 if name.startswith("cyclic") else 0.0
        lrs, moms = run(make, momentum=momentum)
        out[f"lr.{name}"] = lrs
        if name.startswith("cyclic"):
            out[f"momentum.{name}"] = moms
        print(name, [round(v, 6) for v in lrs.tolist()])
    save_file(out, str(Path(__file__).resolve().parent / "schedulers.safetensors"))


if __name__ == "__main__":
    main()
