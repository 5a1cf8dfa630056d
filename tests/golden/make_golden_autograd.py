"""Reference gradients of composite functions, computed by PyTorch in float64.

Run with the reference venv (torch CPU): `python tests/golden/make_golden_autograd.py`.
Writes tests/golden/autograd.safetensors: for each case `<case>.in.<name>` inputs and
`<case>.grad.<name>` expected gradients (and `<case>.out` the forward value); the Rust test
`autograd/tests/golden_autograd.rs` recomputes them with oxtorch.
"""
import os

import torch
import torch.nn.functional as F
from safetensors.torch import save_file

torch.manual_seed(0)
D = torch.float64
out = {}


def case(name, inputs, fn, consts=None):
    """Runs fn(**inputs, **consts) -> scalar loss; stores inputs, consts, loss and gradients."""
    consts = consts or {}
    leaves = {k: v.clone().to(D).requires_grad_(True) for k, v in inputs.items()}
    loss = fn(**leaves, **consts)
    loss.backward()
    for k, v in leaves.items():
        out[f"{name}.in.{k}"] = v.detach().contiguous()
        out[f"{name}.grad.{k}"] = v.grad.detach().contiguous()
    for k, v in consts.items():
        out[f"{name}.const.{k}"] = v.contiguous()
    out[f"{name}.out"] = loss.detach().reshape(1)


def r(*shape):
    return torch.randn(*shape, dtype=D)


# 1. Two-layer MLP with softmax cross-entropy.
case(
    "mlp",
    {"x": r(8, 10), "w1": r(16, 10) * 0.3, "b1": r(16) * 0.1, "w2": r(5, 16) * 0.3, "b2": r(5) * 0.1},
    lambda x, w1, b1, w2, b2, target: F.cross_entropy(F.linear(F.gelu(F.linear(x, w1, b1)), w2, b2), target),
    {"target": torch.randint(0, 5, (8,))},
)

# 2. Attention with a boolean mask, and causal attention with GQA.
mask = torch.rand(5, 5) > 0.3
mask[:, 0] = True
case(
    "attn_mask",
    {"q": r(2, 2, 5, 4), "k": r(2, 2, 5, 4), "v": r(2, 2, 5, 4), "rw": r(2, 2, 5, 4)},
    lambda q, k, v, rw, mask: (F.scaled_dot_product_attention(q, k, v, attn_mask=mask) * rw).sum(),
    {"mask": mask},
)
case(
    "attn_causal_gqa",
    {"q": r(1, 4, 6, 8), "k": r(1, 2, 6, 8), "v": r(1, 2, 6, 8), "rw": r(1, 4, 6, 8)},
    lambda q, k, v, rw: (F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True) * rw).sum(),
)

# 3. layer_norm / group_norm / rms_norm / batch_norm (training).
case(
    "layer_norm",
    {"x": r(4, 6), "w": r(6), "b": r(6), "rw": r(4, 6)},
    lambda x, w, b, rw: (F.layer_norm(x, (6,), w, b) * rw).sum(),
)
case(
    "group_norm",
    {"x": r(2, 6, 3), "w": r(6), "b": r(6), "rw": r(2, 6, 3)},
    lambda x, w, b, rw: (F.group_norm(x, 3, w, b) * rw).sum(),
)
case(
    "rms_norm",
    {"x": r(3, 8), "w": r(8), "rw": r(3, 8)},
    lambda x, w, rw: (F.rms_norm(x, (8,), w, eps=1e-6) * rw).sum(),
)
case(
    "batch_norm",
    {"x": r(4, 3, 5), "w": r(3), "b": r(3), "rw": r(4, 3, 5)},
    lambda x, w, b, rw: (F.batch_norm(x, None, None, w, b, training=True) * rw).sum(),
)

# 4. conv + pool chain.
case(
    "conv_pool",
    {"x": r(2, 3, 8, 8), "w": r(4, 3, 3, 3) * 0.3, "b": r(4) * 0.1, "rw": r(2, 4, 2, 2)},
    lambda x, w, b, rw: (F.avg_pool2d(F.max_pool2d(F.relu(F.conv2d(x, w, b, padding=1)), 2), 2) * rw).sum(),
)
case(
    "conv_transpose_interp",
    {"x": r(1, 2, 4, 4), "w": r(2, 3, 3, 3) * 0.3, "rw": r(1, 3, 18, 18)},
    lambda x, w, rw: (F.interpolate(F.conv_transpose2d(x, w, stride=2), scale_factor=2, mode="bilinear") * rw).sum(),
)

# 5. Hessian-vector product of a small net (double backward).
w = r(6, 4).requires_grad_(True)
x = r(5, 6)
v = r(6, 4)
loss = torch.tanh(x @ w).pow(2).sum() + (w.sin() * w).sum()
(g,) = torch.autograd.grad(loss, w, create_graph=True)
(hvp,) = torch.autograd.grad((g * v).sum(), w)
out["hvp.in.w"] = w.detach()
out["hvp.const.x"] = x
out["hvp.const.v"] = v
out["hvp.grad.w"] = hvp
out["hvp.out"] = loss.detach().reshape(1)

path = os.path.join(os.path.dirname(__file__), "autograd.safetensors")
save_file({k: v.contiguous() for k, v in sorted(out.items())}, path)
print(f"wrote {len(out)} tensors to {path}")
