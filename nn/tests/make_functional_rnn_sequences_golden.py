"""Writes nn/tests/nn/functional_rnn_sequences_golden.rs: torch's whole-sequence functional RNNs (torch.lstm,
torch.gru, torch.rnn_tanh, torch.rnn_relu with flat weight lists): outputs and the gradients of
sum_k (out_k * cot_k).sum() for the input, the initial states and every parameter, in float64,
over layers, directions, biases and batch_first.

Run with a torch install: python nn/tests/make_functional_rnn_sequences_golden.py
"""

import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from golden_writer import generated_header, rust_str, tensor_lit, tlist, write_golden  # noqa: E402

torch.manual_seed(33)
DT = torch.float64
GATES = {"lstm": 4, "gru": 3, "rnn_tanh": 1, "rnn_relu": 1}
FN = {"lstm": torch.lstm, "gru": torch.gru, "rnn_tanh": torch.rnn_tanh, "rnn_relu": torch.rnn_relu}


def case(kind, T, N, I, H, layers, bidir, bias, batch_first):
    D = 2 if bidir else 1
    g = GATES[kind]
    params = []
    for l in range(layers):
        for _ in range(D):
            inp = I if l == 0 else H * D
            params += [torch.randn(g * H, inp, dtype=DT) * 0.5, torch.randn(g * H, H, dtype=DT) * 0.5]
            if bias:
                params += [torch.randn(g * H, dtype=DT) * 0.5, torch.randn(g * H, dtype=DT) * 0.5]
    params = [p.requires_grad_(True) for p in params]
    x = (torch.randn(N, T, I, dtype=DT) if batch_first else torch.randn(T, N, I, dtype=DT)).requires_grad_(True)
    hx = [(torch.randn(layers * D, N, H, dtype=DT) * 0.5).requires_grad_(True)
          for _ in range(2 if kind == "lstm" else 1)]
    hx_arg = hx if kind == "lstm" else hx[0]
    outs = FN[kind](x, hx_arg, params, bias, layers, 0.0, False, bidir, batch_first)
    cots = [torch.randn(o.shape, dtype=DT) for o in outs]
    sum((o * c).sum() for o, c in zip(outs, cots)).backward()
    name = f"{kind}_L{layers}_{'bi' if bidir else 'uni'}_{'bias' if bias else 'nobias'}_{'bf' if batch_first else 'tf'}"
    return (
        f"    RnnCase {{ name: {rust_str(name)}, kind: {rust_str(kind)}, has_biases: {str(bias).lower()}, "
        f"num_layers: {layers}, bidirectional: {str(bidir).lower()}, batch_first: {str(batch_first).lower()}, "
        f"input: {tensor_lit(x)}, hx: {tlist(hx)}, params: {tlist(params)}, outs: {tlist(outs)}, "
        f"cots: {tlist(cots)}, grad_input: {tensor_lit(x.grad)}, grad_hx: {tlist([h.grad for h in hx])}, "
        f"grad_params: {tlist([p.grad for p in params])} }},"
    )


lines = [generated_header("make_functional_rnn_sequences_golden.py"), "const RNN_CASES: &[RnnCase] = &["]
for kind in ["lstm", "gru", "rnn_tanh", "rnn_relu"]:
    lines.append(case(kind, 4, 2, 3, 5, 1, False, True, False))
    lines.append(case(kind, 3, 2, 3, 4, 2, True, True, True))
    lines.append(case(kind, 3, 1, 2, 3, 2, False, False, False))
lines.append("];")
print(write_golden("functional_rnn_sequences_golden.rs", lines))
