"""Writes nn/tests/nn/grad_scaler_and_step_hooks_golden.rs: torch 2.15's `torch.amp.GradScaler` (on the cpu), optimizer
step hooks, `ChainDataset` and `default_convert`, that nn/tests/nn/grad_scaler_and_step_hooks.rs checks oxtorch against.

- A training run of SGD (momentum) under a GradScaler (init_scale 1024, growth_interval 2) with an
  inf and a NaN injected in the inputs of two steps, one step through an explicit `unscale_`, the
  last update with an explicit `new_scale`: after each step the scale, the growth tracker, the
  parameters, and the number of step pre/post hook calls (the skipped steps call none); the
  gradients right after the explicit `unscale_`; the final `state_dict`.
- The growth that would overflow float32 (the scale then stays), `load_state_dict` before the
  first `scale` (the loaded scale is the init scale).
- Step hooks: a pre-hook halving the learning rate, removed after two steps, and a post-hook.
- The error messages of GradScaler's misuses.
- `ChainDataset` of two iterable datasets batched by 2.

Run with the reference python: /work/.refenv/bin/python nn/tests/make_grad_scaler_and_step_hooks_golden.py
"""

import os
import sys

import torch
from torch.utils.data import ChainDataset, DataLoader, IterableDataset
from torch.utils.data._utils.collate import default_convert

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from golden_writer import generated_header, lit, rust_str, tensor_lit, tlist, write_golden  # noqa: E402

torch.set_default_dtype(torch.float32)

INF = float("inf")
NAN = float("nan")

# (x for w [2, 2], y for b [3]) per step; step 2 has an inf, step 4 a NaN.
XS = [
    ([[0.5, -1.5], [2.0, 0.75]], [1.0, -0.5, 0.25]),
    ([[-0.25, 1.0], [0.5, -2.0]], [0.5, 1.5, -1.0]),
    ([[INF, 1.0], [0.5, -2.0]], [0.5, 1.5, -1.0]),
    ([[1.5, -0.5], [0.25, 1.0]], [-2.0, 0.5, 0.75]),
    ([[1.0, 0.5], [-1.0, 0.5]], [NAN, 0.5, 1.0]),
    ([[0.75, 0.25], [-0.5, 1.25]], [0.25, -1.0, 0.5]),
    ([[-1.0, 2.0], [0.5, 0.5]], [1.0, 1.0, -0.5]),
    ([[0.5, 0.5], [0.5, 0.5]], [0.5, 0.5, 0.5]),
]
UNSCALE_STEP = 3  # explicit unscale_ + clip_grad_norm_(1.0) before step
NEW_SCALE_STEP = 7  # update(new_scale=64.0)
W0 = [[0.5, -1.0], [2.0, 0.25]]
B0 = [0.1, -0.2, 0.3]


def scaler_run():
    w = torch.tensor(W0, requires_grad=True)
    b = torch.tensor(B0, requires_grad=True)
    opt = torch.optim.SGD([w, b], lr=0.1, momentum=0.9)
    calls = {"pre": 0, "post": 0}
    opt.register_step_pre_hook(lambda o, a, k: calls.__setitem__("pre", calls["pre"] + 1))
    opt.register_step_post_hook(lambda o, a, k: calls.__setitem__("post", calls["post"] + 1))
    scaler = torch.amp.GradScaler("cpu", init_scale=1024.0, growth_interval=2)
    rows = []
    unscaled = None
    for i, (x, y) in enumerate(XS):
        opt.zero_grad()
        loss = (w * torch.tensor(x)).sum() + (b * torch.tensor(y)).sum()
        scaler.scale(loss).backward()
        if i == UNSCALE_STEP:
            scaler.unscale_(opt)
            unscaled = [w.grad.clone(), b.grad.clone()]
            torch.nn.utils.clip_grad_norm_([w, b], 1.0)
        scaler.step(opt)
        scaler.update(64.0 if i == NEW_SCALE_STEP else None)
        rows.append(
            f"    ScalerStep {{ scale: {lit(scaler.get_scale())}, tracker: {scaler._get_growth_tracker()}, "
            f"pre_calls: {calls['pre']}, post_calls: {calls['post']}, "
            f"w: {tensor_lit(w)}, b: {tensor_lit(b)} }},"
        )
    return rows, unscaled, scaler.state_dict()


def overflow_scale():
    p = torch.tensor([1.0], requires_grad=True)
    opt = torch.optim.SGD([p], lr=0.0)
    scaler = torch.amp.GradScaler("cpu", init_scale=3e38, growth_interval=1)
    scaler.scale((p * 1e-38).sum()).backward()
    scaler.step(opt)
    scaler.update()
    return scaler.get_scale(), scaler._get_growth_tracker()


def hooks_run():
    p = torch.tensor([1.0, -2.0], requires_grad=True)
    opt = torch.optim.SGD([p], lr=0.4)
    seen = []

    def halve_lr(o, args, kwargs):
        o.param_groups[0]["lr"] *= 0.5

    def read_p0(o, args, kwargs):
        seen.append(o.param_groups[0]["params"][0][0].item())

    h = opt.register_step_pre_hook(halve_lr)
    opt.register_step_post_hook(read_p0)
    params, lrs = [], []
    for i in range(3):
        opt.zero_grad()
        (p * p).sum().backward()
        opt.step()
        params.append(p.detach().clone())
        lrs.append(opt.param_groups[0]["lr"])
        if i == 1:
            h.remove()
    return params, lrs, seen


def message(f):
    try:
        f()
    except Exception as e:  # noqa: BLE001
        return str(e)
    raise AssertionError("no error")


def errors():
    out = {}

    def setup():
        p = torch.tensor([1.0, 2.0], requires_grad=True)
        opt = torch.optim.SGD([p], lr=0.1)
        scaler = torch.amp.GradScaler("cpu")
        scaler.scale((p * p).sum()).backward()
        return p, opt, scaler

    def twice():
        _, opt, s = setup()
        s.unscale_(opt)
        s.unscale_(opt)

    def after_step():
        _, opt, s = setup()
        s.step(opt)
        s.unscale_(opt)

    def step_twice():
        _, opt, s = setup()
        s.step(opt)
        s.step(opt)

    def no_grads():
        p, opt, s = setup()
        p.grad = None
        s.step(opt)

    def update_before_step():
        _, _, s = setup()
        s.update()

    def unscale_before_scale():
        p = torch.tensor([1.0], requires_grad=True)
        torch.amp.GradScaler("cpu").unscale_(torch.optim.SGD([p]))

    def step_before_scale():
        p = torch.tensor([1.0], requires_grad=True)
        torch.amp.GradScaler("cpu").step(torch.optim.SGD([p]))

    def update_before_scale():
        torch.amp.GradScaler("cpu").update()

    def fp16():
        p = torch.tensor([1.0], dtype=torch.float16, requires_grad=True)
        p.grad = torch.tensor([1.0], dtype=torch.float16)
        s = torch.amp.GradScaler("cpu")
        s.scale(torch.tensor(1.0))
        s.unscale_(torch.optim.SGD([p]))

    out["twice"] = message(twice)
    out["after_step"] = message(after_step)
    out["step_twice"] = message(step_twice)
    out["no_grads"] = message(no_grads)
    out["update_before_step"] = message(update_before_step)
    out["unscale_before_scale"] = message(unscale_before_scale)
    out["step_before_scale"] = message(step_before_scale)
    out["update_before_scale"] = message(update_before_scale)
    out["fp16"] = message(fp16)
    out["growth"] = message(lambda: torch.amp.GradScaler("cpu", growth_factor=1.0))
    out["backoff"] = message(lambda: torch.amp.GradScaler("cpu", backoff_factor=1.0))
    out["load_empty"] = message(lambda: torch.amp.GradScaler("cpu").load_state_dict({}))
    return out


class Range(IterableDataset):
    def __init__(self, lo, hi):
        self.lo, self.hi = lo, hi

    def __iter__(self):
        return iter([torch.tensor([float(i)]) for i in range(self.lo, self.hi)])


def main():
    lines = [generated_header("make_grad_scaler_and_step_hooks_golden.py", "float32, CPU"), ""]
    rows, unscaled, sd = scaler_run()
    lines.append("/// `(x, y)` of each step of the GradScaler run (see grad_scaler_and_step_hooks.rs).")
    lines.append("const SCALER_XS: &[(T, T)] = &[")
    for x, y in XS:
        lines.append(f"    ({tensor_lit(x)}, {tensor_lit(y)}),")
    lines.append("];")
    lines.append(f"const SCALER_W0: T = {tensor_lit(W0)};")
    lines.append(f"const SCALER_B0: T = {tensor_lit(B0)};")
    lines.append(f"const UNSCALE_STEP: usize = {UNSCALE_STEP};")
    lines.append(f"const NEW_SCALE_STEP: usize = {NEW_SCALE_STEP};")
    lines.append("/// After each step and update: torch's scale, growth tracker, hook calls and parameters.")
    lines.append("const SCALER_STEPS: &[ScalerStep] = &[")
    lines.extend(rows)
    lines.append("];")
    lines.append("/// The gradients of w and b right after the explicit `unscale_`.")
    lines.append(f"const UNSCALED_GRADS: &[T] = {tlist(unscaled)};")
    lines.append("/// The final `state_dict`, in torch's key order.")
    lines.append("const SCALER_STATE: &[(&str, f64)] = &[")
    for k, v in sd.items():
        lines.append(f"    ({rust_str(k)}, {lit(v)}),")
    lines.append("];")
    scale, tracker = overflow_scale()
    lines.append("/// `(scale, tracker)` after a clean step whose growth would overflow float32 (init 3e38).")
    lines.append(f"const OVERFLOW: (f64, i64) = ({lit(scale)}, {tracker});")

    params, lrs, seen = hooks_run()
    lines.append("/// The hook run: the parameter and lr after each step, the post-hook's p[0] readings.")
    lines.append(f"const HOOK_PARAMS: &[T] = {tlist(params)};")
    lines.append("const HOOK_LRS: &[f64] = &[" + ", ".join(lit(v) for v in lrs) + "];")
    lines.append("const HOOK_SEEN: &[f64] = &[" + ", ".join(lit(v) for v in seen) + "];")

    lines.append("/// torch's error messages by case (see grad_scaler_and_step_hooks.rs).")
    lines.append("const ERRORS: &[(&str, &str)] = &[")
    for k, v in errors().items():
        lines.append(f"    ({rust_str(k)}, {rust_str(v)}),")
    lines.append("];")

    loader = DataLoader(ChainDataset([Range(0, 3), Range(10, 12)]), batch_size=2)
    lines.append("/// `DataLoader(ChainDataset([range 0..3, range 10..12]), batch_size=2)`'s batches.")
    lines.append(f"const CHAIN_BATCHES: &[T] = {tlist(list(loader))};")
    t = torch.tensor([1.0, 2.0])
    assert default_convert(t) is t
    assert default_convert([t])[0] is t
    write_golden("grad_scaler_and_step_hooks_golden.rs", lines)


if __name__ == "__main__":
    main()
