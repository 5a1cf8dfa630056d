"""Dev-time script: torch's F.unfold / F.fold values and gradients for
`tensor/tests/cpu/fold.rs`.

    /work/.refenv/bin/python tests/golden/make_golden_fold.py

Writes `fold.safetensors`: for each case the input `<case>.x`, the weights `<case>.w` of the
scalar `(out * w).sum()`, the output `<case>.out` and the input gradient `<case>.grad` (float64).
"""

from pathlib import Path

import torch
import torch.nn.functional as F
from safetensors.torch import save_file

torch.manual_seed(0)
# (name, op, input shape, kwargs)
CASES = [
    ("unfold_plain", "unfold", (2, 3, 4, 5), dict(kernel_size=(2, 2))),
    ("unfold_mixed", "unfold", (2, 3, 5, 6), dict(kernel_size=(2, 3), dilation=(2, 1), padding=(1, 2), stride=(2, 1))),
    ("unfold_unbatched", "unfold", (2, 4, 4), dict(kernel_size=3, padding=1, stride=2)),
    ("fold_plain", "fold", (2, 12, 12), dict(output_size=(4, 5), kernel_size=(2, 2))),
    ("fold_mixed", "fold", (1, 12, 6), dict(output_size=(5, 6), kernel_size=(2, 3), dilation=(2, 1), padding=(1, 0), stride=(2, 2))),
    ("fold_unbatched", "fold", (8, 4), dict(output_size=(3, 3), kernel_size=2)),
]


def main():
    out = {}
    for name, op, shape, kw in CASES:
        x = torch.randn(shape, dtype=torch.float64, requires_grad=True)
        y = getattr(F, op)(x, **kw)
        w = torch.randn(y.shape, dtype=torch.float64)
        (y * w).sum().backward()
        out.update({f"{name}.x": x.detach(), f"{name}.w": w, f"{name}.out": y.detach(), f"{name}.grad": x.grad})
        print(name, tuple(y.shape))
    save_file(out, str(Path(__file__).resolve().parent / "fold.safetensors"))


if __name__ == "__main__":
    main()
