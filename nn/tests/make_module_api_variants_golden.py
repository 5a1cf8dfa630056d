"""Writes nn/tests/nn/module_api_variants_golden.rs: PyTorch 2.15's values for the module-API tests
(`nn/tests/nn/module_api_variants.rs`).

- Key lists of `named_parameters` / `named_buffers` (prefix, recurse, remove_duplicate) and of
  `state_dict(prefix=...)` for `Tied`: an own parameter `scale`, an own buffer `buf`, a
  non-persistent buffer `np`, an `Embedding(10, 4)` `embed`, a `Linear(4, 10)` `head` whose weight
  is `embed.weight` (tied), a `BatchNorm1d(3)` `bn` whose `running_var` is its `running_mean`.
- `load_state_dict(..., assign=True)` into a float32 `Linear(2, 3)` from a float32 weight and a
  float64 bias: values, dtypes, requires_grad (also for a frozen weight), the size-mismatch error.
- `SGD(lr=0.1, momentum=0.9)` driven by `step(closure)` on a float64 `Linear(3, 2)` with fixed
  weights, the closure `zero_grad; loss = mse(model(X), Y); loss.backward(); return loss`: the
  losses the two steps return and the final weight and bias.

Run: /work/.refenv/bin/python nn/tests/make_module_api_variants_golden.py
"""
import os
import sys

import torch
import torch.nn as nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from golden_writer import generated_header, lit, rust_str, tensor_lit, write_golden  # noqa: E402

D = torch.float64


def strs(xs):
    """Strings as a `&[&str]` literal."""
    return "&[" + ", ".join(rust_str(x) for x in xs) + "]"


class Tied(nn.Module):
    def __init__(self):
        super().__init__()
        self.scale = nn.Parameter(torch.ones(2))
        self.embed = nn.Embedding(10, 4)
        self.head = nn.Linear(4, 10)
        self.head.weight = self.embed.weight
        self.register_buffer("buf", torch.ones(2))
        self.register_buffer("np", torch.zeros(1), persistent=False)
        self.bn = nn.BatchNorm1d(3)
        self.bn.running_var = self.bn.running_mean


lines = [generated_header("make_module_api_variants_golden.py"), ""]
m = Tied()
names = lambda pairs: [n for n, _ in pairs]  # noqa: E731
key_cases = [
    ("PARAMS", names(m.named_parameters())),
    ("PARAMS_ALL", names(m.named_parameters(prefix="model", remove_duplicate=False))),
    ("PARAMS_OWN", names(m.named_parameters(prefix="model", recurse=False))),
    ("BUFFERS", names(m.named_buffers())),
    ("BUFFERS_ALL", names(m.named_buffers(prefix="p", remove_duplicate=False))),
    ("BUFFERS_OWN", names(m.named_buffers(recurse=False))),
    ("STATE_DICT_PREFIXED", list(m.state_dict(prefix="pre.").keys())),
]
for name, keys in key_cases:
    lines.append(f"const {name}: &[&str] = {strs(keys)};")
lines.append(f"const NUM_PARAMS_OWN: usize = {len(list(m.parameters(recurse=False)))};")
lines.append(f"const NUM_PARAMS: usize = {len(list(m.parameters()))};")

# load_state_dict(assign=True)
W = torch.arange(6.0).reshape(3, 2)
B64 = torch.tensor([0.5, -1.0, 2.0], dtype=D)
lin = nn.Linear(2, 3)
lin.load_state_dict({"weight": W, "bias": B64}, assign=True)
assert lin.weight.data_ptr() == W.data_ptr()
lines.append(f"const ASSIGN_W: T = {tensor_lit(W)};")
lines.append(f"const ASSIGN_B: T = {tensor_lit(B64)};")
lines.append(f"const ASSIGN_W_DTYPE: &str = {rust_str(str(lin.weight.dtype))};")
lines.append(f"const ASSIGN_B_DTYPE: &str = {rust_str(str(lin.bias.dtype))};")
lines.append(f"const ASSIGN_REQUIRES_GRAD: bool = {str(lin.weight.requires_grad).lower()};")
lin = nn.Linear(2, 3)
lin.weight.requires_grad_(False)
lin.load_state_dict({"weight": W.clone().requires_grad_(True), "bias": torch.zeros(3)}, assign=True)
lines.append(f"const FROZEN_W_REQUIRES_GRAD: bool = {str(lin.weight.requires_grad).lower()};")
lines.append(f"const FROZEN_B_REQUIRES_GRAD: bool = {str(lin.bias.requires_grad).lower()};")
lin = nn.Linear(2, 3)
try:
    lin.load_state_dict({"weight": torch.ones(2, 2), "bias": torch.zeros(3)}, assign=True)
    raise SystemExit("expected a size mismatch")
except RuntimeError as e:
    lines.append(f"const ASSIGN_MISMATCH: &str = {rust_str(str(e))};")
bn = nn.BatchNorm1d(2)
rm = torch.tensor([1.0, 2.0])
bn.load_state_dict(
    {
        "weight": torch.ones(2),
        "bias": torch.zeros(2),
        "running_mean": rm,
        "running_var": torch.ones(2),
        "num_batches_tracked": torch.tensor(3),
    },
    assign=True,
)
lines.append(f"const BUFFER_IS_ENTRY: bool = {str(bn.running_mean is rm).lower()};")

# SGD step(closure)
SW = torch.tensor([[0.1, -0.2, 0.3], [0.4, 0.5, -0.6]], dtype=D)
SB = torch.tensor([0.05, -0.07], dtype=D)
X = torch.tensor([[1.0, -2.0, 0.5], [0.25, 3.0, -1.5], [0.7, 0.1, -0.3]], dtype=D)
Y = torch.tensor([[0.5, -0.5], [1.0, 2.0], [0.0, 0.3]], dtype=D)
model = nn.Linear(3, 2).to(D)
with torch.no_grad():
    model.weight.copy_(SW)
    model.bias.copy_(SB)
opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)


def closure():
    opt.zero_grad()
    loss = nn.functional.mse_loss(model(X), Y)
    loss.backward()
    return loss


losses = [opt.step(closure).item() for _ in range(2)]
lines.append(f"const SGD_W: T = {tensor_lit(SW)};")
lines.append(f"const SGD_B: T = {tensor_lit(SB)};")
lines.append(f"const SGD_X: T = {tensor_lit(X)};")
lines.append(f"const SGD_Y: T = {tensor_lit(Y)};")
lines.append(f"const SGD_LOSSES: [f64; 2] = [{lit(losses[0])}, {lit(losses[1])}];")
lines.append(f"const SGD_W_AFTER: T = {tensor_lit(model.weight)};")
lines.append(f"const SGD_B_AFTER: T = {tensor_lit(model.bias)};")

print(write_golden("module_api_variants_golden.rs", lines))
