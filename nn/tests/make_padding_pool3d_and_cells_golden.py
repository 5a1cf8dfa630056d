"""Writes nn/tests/nn/padding_pool3d_and_cells_golden.rs: torch's values and gradients for nn.utils.rnn.pad_sequence,
the padding layers (ZeroPad, ConstantPad, ReflectionPad, ReplicationPad, CircularPad, 1d/2d/3d), the
3-D pooling layers, RNNCell/LSTMCell/GRUCell and nn.Transformer, in float64.

The nn crate's tests have no JSON reader, so the numbers are written as Rust constants (Python's
`repr` of a float is the shortest string that reads back to the same f64). Each case gives its
inputs, the module's state dict in torch's order (loaded by key into the oxtorch module, strict, so
the keys double as a state-dict compatibility check), the outputs, a random cotangent per output,
and the gradients of `sum_k (out_k * cot_k).sum()` for the differentiated inputs and for every
parameter. Integer outputs (pooling indices) are written as floats and left out of the loss.
nn/tests/nn/padding_pool3d_and_cells.rs builds the same modules and makes the same calls by case name.

Inputs named `*_mask` are boolean masks written as 0/1 (the replay converts them to bool).
Random inputs keep away from the points where a gradient is torch's arbitrary choice (max-pool
ties, relu at 0).

Run: /work/.refenv/bin/python nn/tests/make_padding_pool3d_and_cells_golden.py (from the repository root).
"""

import os
import sys

import torch
from torch import nn
from torch.nn.utils.rnn import pad_sequence

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from golden_writer import generated_header, tensor_lit, write_golden  # noqa: E402

torch.manual_seed(30)
DT = torch.float64


def randn(*shape):
    return torch.randn(*shape, dtype=DT)


# Each case: (name, inputs {name: tensor}, differentiated input names, module or None, call).
CASES = []


def case(name, inputs, grads, module, call):
    CASES.append((name, inputs, grads, module, call))


# --- pad_sequence(sequences, batch_first, padding_value, padding_side) ---------------------------
seqs = {"s0": randn(3, 2), "s1": randn(1, 2), "s2": randn(2, 2)}
S = ["s0", "s1", "s2"]


def ps(batch_first, value, side):
    return lambda m, t: (pad_sequence([t[k] for k in S], batch_first, value, side),)


case("pad_sequence_right", seqs, S, None, ps(False, 0.0, "right"))
case("pad_sequence_right_batch_first", seqs, S, None, ps(True, -1.5, "right"))
case("pad_sequence_left", seqs, S, None, ps(False, 2.0, "left"))
case("pad_sequence_left_batch_first", seqs, S, None, ps(True, 0.0, "left"))
seqs1 = {"s0": randn(4), "s1": randn(2), "s2": randn(3)}
case("pad_sequence_1d_left_batch_first", seqs1, S, None, ps(True, 0.25, "left"))
# a longest sequence that is not the first: the output takes the first one's trailing dims
seqs3 = {"s0": randn(1, 2, 2), "s1": randn(3, 2, 2), "s2": randn(2, 2, 2)}
case("pad_sequence_3d_right", seqs3, S, None, ps(False, -3.0, "right"))


# --- padding layers ------------------------------------------------------------------------------
def mod(m):
    return lambda mm, t: (mm(t["input"]),)


PADS = [
    ("zeropad1d", nn.ZeroPad1d((1, 2)), (2, 3, 4)),
    ("zeropad2d", nn.ZeroPad2d(1), (1, 2, 3, 3)),
    ("zeropad3d", nn.ZeroPad3d((1, 0, 0, 1, 2, 1)), (1, 1, 2, 2, 2)),
    ("constantpad1d_negative", nn.ConstantPad1d((-1, 2), 2.5), (2, 4)),
    ("constantpad2d_unbatched", nn.ConstantPad2d((2, 1, 0, 1), -1.0), (2, 3, 3)),
    ("constantpad3d", nn.ConstantPad3d(1, 0.5), (1, 1, 2, 2, 2)),
    ("reflectionpad1d", nn.ReflectionPad1d((2, 1)), (2, 2, 4)),
    ("reflectionpad2d_unbatched", nn.ReflectionPad2d((1, 2, 2, 1)), (2, 3, 4)),
    ("reflectionpad3d", nn.ReflectionPad3d(1), (1, 1, 2, 3, 3)),
    ("replicationpad1d_unbatched", nn.ReplicationPad1d((3, 1)), (2, 3)),
    ("replicationpad2d", nn.ReplicationPad2d(2), (1, 2, 2, 3)),
    ("replicationpad3d_unbatched", nn.ReplicationPad3d((1, 2, 0, 1, 1, 0)), (1, 2, 2, 2)),
    ("circularpad1d", nn.CircularPad1d((2, 1)), (1, 2, 4)),
    ("circularpad2d_negative", nn.CircularPad2d((1, -1, 2, 0)), (1, 1, 3, 4)),
    ("circularpad3d", nn.CircularPad3d(1), (1, 1, 2, 2, 3)),
]
for name, m, shape in PADS:
    case(name, {"input": randn(*shape)}, ["input"], m, mod(m))

# --- 3-D pooling -----------------------------------------------------------------------------------
POOLS = [
    ("maxpool3d", nn.MaxPool3d(2, stride=1, padding=1), (1, 2, 3, 3, 4)),
    ("maxpool3d_dilation_ceil", nn.MaxPool3d((2, 2, 2), stride=2, dilation=(1, 1, 2), ceil_mode=True), (2, 1, 3, 4, 5)),
    ("avgpool3d_exclude_pad", nn.AvgPool3d(2, stride=2, padding=1, count_include_pad=False), (1, 2, 3, 4, 4)),
    ("avgpool3d_ceil_divisor_unbatched",
     nn.AvgPool3d((1, 2, 2), stride=(1, 2, 1), ceil_mode=True, divisor_override=3), (2, 3, 3, 4)),
    ("adaptiveavgpool3d", nn.AdaptiveAvgPool3d((2, 1, 3)), (1, 2, 3, 4, 5)),
    ("adaptivemaxpool3d_unbatched", nn.AdaptiveMaxPool3d(2), (2, 3, 5, 4)),
]
for name, m, shape in POOLS:
    case(name, {"input": randn(*shape)}, ["input"], m, mod(m))
# The functional forms with the indices of the maxima.
case("f_max_pool3d_with_indices", {"input": randn(1, 2, 4, 3, 4)}, ["input"], None,
     lambda m, t: torch.nn.functional.max_pool3d(t["input"], 2, None, 0, 1, False, True))
case("f_adaptive_max_pool3d_with_indices", {"input": randn(2, 3, 4, 5)}, ["input"], None,
     lambda m, t: torch.nn.functional.adaptive_max_pool3d(t["input"], (2, 3, 2), True))


# --- RNN cells -------------------------------------------------------------------------------------
def cell(m):
    return m.to(DT)


rnn_tanh = cell(nn.RNNCell(3, 4))
case("rnncell_tanh", {"input": randn(2, 3), "hx": randn(2, 4)}, ["input", "hx"], rnn_tanh,
     lambda m, t: (m(t["input"], t["hx"]),))
rnn_relu = cell(nn.RNNCell(3, 4, nonlinearity="relu"))
case("rnncell_relu_no_hx", {"input": randn(2, 3)}, ["input"], rnn_relu, lambda m, t: (m(t["input"]),))
rnn_nobias = cell(nn.RNNCell(3, 4, bias=False))
case("rnncell_unbatched_no_bias", {"input": randn(3), "hx": randn(4)}, ["input", "hx"], rnn_nobias,
     lambda m, t: (m(t["input"], t["hx"]),))

lstm = cell(nn.LSTMCell(3, 4))
case("lstmcell", {"input": randn(2, 3), "h": randn(2, 4), "c": randn(2, 4)}, ["input", "h", "c"], lstm,
     lambda m, t: m(t["input"], (t["h"], t["c"])))
lstm_u = cell(nn.LSTMCell(3, 4))
case("lstmcell_unbatched_no_hx", {"input": randn(3)}, ["input"], lstm_u, lambda m, t: m(t["input"]))
lstm_nb = cell(nn.LSTMCell(3, 4, bias=False))
case("lstmcell_no_bias", {"input": randn(2, 3), "h": randn(2, 4), "c": randn(2, 4)}, ["input", "h", "c"],
     lstm_nb, lambda m, t: m(t["input"], (t["h"], t["c"])))
lstm2 = cell(nn.LSTMCell(3, 4))


def two_steps(m, t):
    h, c = m(t["x0"])
    return m(t["x1"], (h, c))


case("lstmcell_two_steps", {"x0": randn(2, 3), "x1": randn(2, 3)}, ["x0", "x1"], lstm2, two_steps)

gru = cell(nn.GRUCell(3, 4))
case("grucell", {"input": randn(2, 3), "hx": randn(2, 4)}, ["input", "hx"], gru,
     lambda m, t: (m(t["input"], t["hx"]),))
gru_u = cell(nn.GRUCell(3, 4))
case("grucell_unbatched", {"input": randn(3), "hx": randn(4)}, ["input", "hx"], gru_u,
     lambda m, t: (m(t["input"], t["hx"]),))
gru_nb = cell(nn.GRUCell(3, 4, bias=False))
case("grucell_no_bias_no_hx", {"input": randn(2, 3)}, ["input"], gru_nb, lambda m, t: (m(t["input"]),))

# --- Transformer (dropout 0, training mode: torch's reference path) ------------------------------
tr = nn.Transformer(d_model=8, nhead=2, num_encoder_layers=1, num_decoder_layers=1, dim_feedforward=16,
                    dropout=0.0, dtype=DT)
case("transformer", {"src": randn(5, 2, 8), "tgt": randn(4, 2, 8)}, ["src", "tgt"], tr,
     lambda m, t: (m(t["src"], t["tgt"]),))

tr2 = nn.Transformer(d_model=8, nhead=2, num_encoder_layers=2, num_decoder_layers=1, dim_feedforward=16,
                     dropout=0.0, activation="gelu", layer_norm_eps=1e-6, batch_first=True, norm_first=True,
                     dtype=DT)
# batch item 1 pads its last source position
pad_mask = torch.tensor([[0, 0, 0, 0, 0], [0, 0, 0, 0, 1]], dtype=DT)


def masked(m, t):
    tgt_mask = nn.Transformer.generate_square_subsequent_mask(4, dtype=DT)
    kpm = t["src_key_padding_mask"].bool()
    return (m(t["src"], t["tgt"], tgt_mask=tgt_mask, src_key_padding_mask=kpm, memory_key_padding_mask=kpm),)


case("transformer_pre_norm_batch_first_gelu_masked",
     {"src": randn(2, 5, 8), "tgt": randn(2, 4, 8), "src_key_padding_mask": pad_mask}, ["src", "tgt"], tr2, masked)

tr3 = nn.Transformer(d_model=8, nhead=2, num_encoder_layers=1, num_decoder_layers=1, dim_feedforward=16,
                     dropout=0.0, bias=False, dtype=DT)
case("transformer_no_bias_unbatched", {"src": randn(3, 8), "tgt": randn(2, 8)}, ["src", "tgt"], tr3,
     lambda m, t: (m(t["src"], t["tgt"]),))


lines = [
    generated_header("make_padding_pool3d_and_cells_golden.py"),
    "",
    "/// One golden case: inputs, the module's state dict (torch's keys and order), outputs, their",
    "/// cotangents, and the gradients of `sum_k (out_k * cot_k).sum()`.",
    "#[allow(clippy::approx_constant)]",
    "const GOLDEN: &[Golden] = &[",
]
for name, inputs, grads, module, call in CASES:
    assert all(v.dtype == DT for v in inputs.values()), name
    leaves = {k: v.detach().clone().requires_grad_(k in grads) for k, v in inputs.items()}
    params = []
    if module is not None:
        module.zero_grad(set_to_none=True)
        params = list(module.state_dict().items())
        assert all(v.dtype == DT for _, v in params), name
    outs = call(module, leaves)
    if isinstance(outs, torch.Tensor):
        outs = (outs,)
    outs = list(outs)
    cots = [randn(*o.shape) if o.is_floating_point() else torch.zeros(o.shape, dtype=DT) for o in outs]
    loss = sum((o * c).sum() for o, c in zip(outs, cots) if o.is_floating_point())
    loss.backward()
    named = dict(module.named_parameters()) if module is not None else {}
    lines.append("    Golden {")
    lines.append(f'        name: "{name}",')
    lines.append("        inputs: &[")
    for k, v in inputs.items():
        lines.append(f'            ("{k}", {tensor_lit(v)}),')
    lines.append("        ],")
    lines.append("        params: &[")
    for k, v in params:
        lines.append(f'            ("{k}", {tensor_lit(v)}),')
    lines.append("        ],")
    lines.append("        outs: &[")
    for o in outs:
        lines.append(f"            {tensor_lit(o)},")
    lines.append("        ],")
    lines.append("        cots: &[")
    for c in cots:
        lines.append(f"            {tensor_lit(c)},")
    lines.append("        ],")
    lines.append("        input_grads: &[")
    for k in grads:
        lines.append(f'            ("{k}", {tensor_lit(leaves[k].grad)}),')
    lines.append("        ],")
    lines.append("        param_grads: &[")
    for k, _ in params:
        g = named[k].grad
        assert g is not None, f"{name}: no gradient for {k}"
        lines.append(f'            ("{k}", {tensor_lit(g)}),')
    lines.append("        ],")
    lines.append("    },")
    shown = outs[0].detach().double().flatten().tolist()
    print(f"{name:48s} {len(params):3d} params  out[:3]={[round(v, 6) for v in shown[:3]]}")
lines.append("];")

# torch's causal masks, float32 (the default dtype), compared exactly.
lines.append("")
lines.append("/// `nn.Transformer.generate_square_subsequent_mask(sz)` for each `sz` (float32).")
lines.append("const SQUARE_SUBSEQUENT_MASKS: &[(usize, T)] = &[")
for sz in (1, 2, 4):
    m = nn.Transformer.generate_square_subsequent_mask(sz)
    assert m.dtype == torch.float32
    lines.append(f"    ({sz}, {tensor_lit(m)}),")
lines.append("];")

names = [c[0] for c in CASES]
assert len(names) == len(set(names)), "duplicate case names"
path = write_golden("padding_pool3d_and_cells_golden.rs", lines)
print(f"wrote {len(CASES)} cases to {path}")
