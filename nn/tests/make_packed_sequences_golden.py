"""Writes nn/tests/nn/packed_sequences_golden.rs: torch's values and gradients for nn.utils.rnn's packed
sequences (pack_padded_sequence, pad_packed_sequence, pack_sequence, unpack_sequence,
unpad_sequence, PackedSequence) and for LSTM/GRU/RNN run on a PackedSequence, in float64, plus
torch's error messages.

The nn crate's tests have no JSON reader, so the numbers are written as Rust constants (Python's
`repr` of a float is the shortest string that reads back to the same f64). Each case gives its
inputs, the module's state dict in torch's order (loaded by key into the oxtorch module, strict),
the outputs, a random cotangent per output, and the gradients of `sum_k (out_k * cot_k).sum()` for
the differentiated inputs and for every parameter. A PackedSequence output is written as its fields
`data, batch_sizes[, sorted_indices, unsorted_indices]` (the indices only when torch has them), so
the replay also checks which are `None`. Integer outputs (batch sizes, indices, lengths) are
written as floats, compared exactly and left out of the loss. nn/tests/nn/packed_sequences.rs builds
the same modules and makes the same calls by case name.

ERRORS holds the message torch raises for each named bad call; the replay makes the same call.

Run: /work/.refenv/bin/python nn/tests/make_packed_sequences_golden.py (from the repository root).
"""

import os
import sys

import torch
from torch import nn
from torch.nn.utils.rnn import (
    PackedSequence,
    invert_permutation,
    pack_padded_sequence,
    pack_sequence,
    pad_packed_sequence,
    unpack_sequence,
    unpad_sequence,
)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from golden_writer import generated_header, rust_str, tensor_lit, write_golden  # noqa: E402

torch.manual_seed(30)
DT = torch.float64


def randn(*shape):
    return torch.randn(*shape, dtype=DT)


# Each case: (name, inputs {name: tensor}, differentiated input names, module or None, call).
CASES = []


def case(name, inputs, grads, module, call):
    CASES.append((name, inputs, grads, module, call))


def fields(p):
    """A PackedSequence's fields, the indices only when present."""
    out = [p.data, p.batch_sizes]
    if p.sorted_indices is not None:
        out.append(p.sorted_indices)
    if p.unsorted_indices is not None:
        out.append(p.unsorted_indices)
    return out


# --- pack_padded_sequence then pad_packed_sequence -----------------------------------------------
def pp(lengths, batch_first, enforce_sorted, value, total_length, pad_batch_first=None):
    """Packs `input` and pads it back: the packed fields, the padded batch and the lengths."""
    pbf = batch_first if pad_batch_first is None else pad_batch_first

    def call(m, t):
        p = pack_padded_sequence(t["input"], lengths, batch_first, enforce_sorted)
        padded, lens = pad_packed_sequence(p, pbf, value, total_length)
        return fields(p) + [padded, lens]

    return call


case("pack_pad_sorted", {"input": randn(4, 3, 2)}, ["input"], None, pp([4, 3, 1], False, True, 0.0, None))
case("pack_pad_sorted_batch_first_total_length", {"input": randn(3, 4, 2)}, ["input"], None,
     pp([4, 2, 2], True, True, -1.0, 6))
# equal lengths keep their order in the sort
case("pack_pad_unsorted_ties", {"input": randn(4, 4, 2)}, ["input"], None, pp([2, 4, 1, 4], False, False, 0.5, None))
case("pack_pad_unsorted_batch_first_no_trailing", {"input": randn(3, 5)}, ["input"], None,
     pp([1, 5, 3], True, False, 2.0, 7))
# enforce_sorted=False on sorted lengths still records the (identity) indices
case("pack_pad_unsorted_already_sorted_4d", {"input": randn(3, 2, 2, 3)}, ["input"], None,
     pp([3, 2], False, False, 0.0, None))
# a float tensor of lengths is truncated to int64
case("pack_pad_tensor_lengths", {"input": randn(5, 3, 2)}, ["input"], None,
     pp(torch.tensor([3.0, 4.9, 2.0], dtype=DT), False, False, 0.0, 5))
# the input's steps beyond the longest length are dropped
case("pack_pad_input_longer_than_lengths", {"input": randn(5, 2, 2)}, ["input"], None,
     pp([3, 2], False, True, -2.0, None))
case("pack_batch_first_pad_time_first", {"input": randn(3, 4, 2)}, ["input"], None,
     pp([2, 4, 1], True, False, 0.0, None, pad_batch_first=False))
case("pack_time_first_pad_batch_first", {"input": randn(4, 3, 1)}, ["input"], None,
     pp([2, 4, 1], False, False, 1.0, 4, pad_batch_first=True))


# --- pack_sequence / unpack_sequence / unpad_sequence --------------------------------------------
def ps(enforce_sorted):
    def call(m, t):
        p = pack_sequence([t["s0"], t["s1"], t["s2"]], enforce_sorted)
        padded, lens = pad_packed_sequence(p, True)
        return fields(p) + list(unpack_sequence(p)) + [padded, lens]

    return call


S = ["s0", "s1", "s2"]
case("pack_sequence_unsorted", {"s0": randn(2, 3), "s1": randn(4, 3), "s2": randn(1, 3)}, S, None, ps(False))
case("pack_sequence_sorted", {"s0": randn(3, 2), "s1": randn(3, 2), "s2": randn(1, 2)}, S, None, ps(True))
case("pack_sequence_1d", {"s0": randn(2), "s1": randn(5), "s2": randn(3)}, S, None, ps(False))


def up(lengths, batch_first):
    # torch transposes its argument in place when not batch_first: hand it a copy.
    return lambda m, t: list(unpad_sequence(t["padded"].clone(), lengths, batch_first))


# a length above T keeps all T steps, one below 0 none
case("unpad_sequence", {"padded": randn(4, 3, 2)}, ["padded"], None, up(torch.tensor([4, -1, 6]), False))
case("unpad_sequence_batch_first", {"padded": randn(3, 4)}, ["padded"], None, up(torch.tensor([2, 4, 1]), True))


# A PackedSequence built from its fields: the unsorted indices are the sorted ones inverted.
def manual(m, t):
    p = PackedSequence(t["data"], torch.tensor([3, 2, 1]), torch.tensor([2, 0, 1]))
    padded, lens = pad_packed_sequence(p, False, -1.0)
    return [p.unsorted_indices, padded, lens]


case("pad_manual_packed_sequence", {"data": randn(6, 2)}, ["data"], None, manual)


# --- recurrent layers on packed input ------------------------------------------------------------
def rnn_call(lengths, batch_first, enforce_sorted, hx_names, pad=None):
    """Packs `x`, runs the module from the named initial states (none: zeros), returns the packed
    output's fields, the final states and, with `pad = (batch_first, total_length)`, the output
    padded back."""

    def call(m, t):
        p = pack_padded_sequence(t["x"], lengths, batch_first, enforce_sorted)
        if not hx_names:
            hx = None
        elif len(hx_names) == 1:
            hx = t[hx_names[0]]
        else:
            hx = tuple(t[k] for k in hx_names)
        out, state = m(p, hx)
        states = list(state) if isinstance(state, tuple) else [state]
        outs = fields(out) + states
        if pad is not None:
            outs += list(pad_packed_sequence(out, pad[0], 0.0, pad[1]))
        return outs

    return call


lstm = nn.LSTM(3, 5, num_layers=2, bidirectional=True, proj_size=2, dtype=DT)
case("lstm_packed_2layer_bidir_proj",
     {"x": randn(4, 3, 3), "h0": randn(4, 3, 2), "c0": randn(4, 3, 5)}, ["x", "h0", "c0"], lstm,
     rnn_call([2, 4, 3], False, False, ["h0", "c0"], pad=(False, None)))
lstm_s = nn.LSTM(3, 4, dtype=DT)


def lstm_seqs(m, t):
    p = pack_sequence([t["s0"], t["s1"], t["s2"]])
    out, (h, c) = m(p)
    return fields(out) + [h, c]


case("lstm_packed_sequence_sorted_no_hx", {"s0": randn(4, 3), "s1": randn(3, 3), "s2": randn(1, 3)}, S, lstm_s,
     lstm_seqs)
lstm_bf = nn.LSTM(2, 3, bidirectional=True, batch_first=True, dtype=DT)
case("lstm_packed_batch_first_bidir_no_hx", {"x": randn(4, 3, 2)}, ["x"], lstm_bf,
     rnn_call([1, 3, 3, 2], True, False, [], pad=(True, 5)))
lstm3 = nn.LSTM(3, 4, num_layers=3, proj_size=2, dtype=DT)
case("lstm_packed_3layer_proj_sorted",
     {"x": randn(3, 3, 3), "h0": randn(3, 3, 2), "c0": randn(3, 3, 4)}, ["x", "h0", "c0"], lstm3,
     rnn_call([3, 2, 2], False, True, ["h0", "c0"]))
gru = nn.GRU(3, 4, num_layers=2, bidirectional=True, dtype=DT)
case("gru_packed_2layer_bidir", {"x": randn(3, 3, 3), "h0": randn(4, 3, 4)}, ["x", "h0"], gru,
     rnn_call([1, 3, 2], False, False, ["h0"], pad=(False, 4)))
gru_nb = nn.GRU(2, 3, bias=False, dtype=DT)
case("gru_packed_no_bias_sorted_no_hx", {"x": randn(3, 3, 2)}, ["x"], gru_nb,
     rnn_call([3, 3, 1], False, True, []))
rnn_tanh = nn.RNN(3, 4, bidirectional=True, dtype=DT)
case("rnn_tanh_packed_bidir", {"x": randn(3, 4, 3), "h0": randn(2, 4, 4)}, ["x", "h0"], rnn_tanh,
     rnn_call([2, 3, 1, 3], False, False, ["h0"]))
rnn_relu = nn.RNN(2, 3, num_layers=2, nonlinearity="relu", batch_first=True, dtype=DT)
case("rnn_relu_packed_2layer_sorted_no_hx", {"x": randn(2, 4, 2)}, ["x"], rnn_relu,
     rnn_call([4, 2], True, True, [], pad=(True, None)))


# --- torch's errors ------------------------------------------------------------------------------
z34 = torch.zeros(3, 4)
p32 = pack_padded_sequence(torch.zeros(3, 2, 3), [3, 2])
p32u = pack_padded_sequence(torch.zeros(3, 2, 3), [2, 3], enforce_sorted=False)
ERROR_CALLS = [
    ("pack_lengths_not_sorted", lambda: pack_padded_sequence(z34, [3, 4, 2, 1])),
    # the last length is checked before the order
    ("pack_length_zero", lambda: pack_padded_sequence(z34, [1, 3, 2, 0])),
    ("pack_length_negative_unsorted", lambda: pack_padded_sequence(z34, [-1, 3, 1, 3], enforce_sorted=False)),
    ("pack_empty", lambda: pack_padded_sequence(torch.zeros(0, 4), [3, 2, 1, 1])),
    ("pack_lengths_count", lambda: pack_padded_sequence(z34, [3, 2, 1])),
    ("pack_lengths_count_batch_first", lambda: pack_padded_sequence(z34, [2, 2, 1, 1], batch_first=True)),
    ("pack_lengths_count_unsorted", lambda: pack_padded_sequence(z34, [3, 2, 1, 1, 1], enforce_sorted=False)),
    ("pack_lengths_2d", lambda: pack_padded_sequence(z34, torch.tensor([[3, 2], [1, 1]]))),
    ("pack_1d_batch_first", lambda: pack_padded_sequence(torch.zeros(3), [3], batch_first=True)),
    ("pad_total_length_short",
     lambda: pad_packed_sequence(pack_padded_sequence(z34, [3, 3, 2, 1]), total_length=2)),
    ("pad_batch_sizes_float", lambda: pad_packed_sequence(PackedSequence(torch.arange(6.0), torch.tensor([3.0, 2, 1])))),
    ("pad_int_nan", lambda: pad_packed_sequence(pack_padded_sequence(z34.long(), [3, 3, 2, 1]),
                                                padding_value=float("nan"))),
    ("pad_unsorted_indices_out_of_range",
     lambda: pad_packed_sequence(PackedSequence(torch.arange(6.0), torch.tensor([3, 2, 1]), torch.tensor([2, 0, 1]),
                                                torch.tensor([2, 2, 5])))),
    ("pack_sequence_scalar", lambda: pack_sequence([torch.tensor(1.0), torch.ones(2)])),
    ("pack_sequence_empty_list", lambda: pack_sequence([])),
    ("pack_sequence_not_sorted", lambda: pack_sequence([torch.ones(2), torch.ones(3)])),
    ("pack_sequence_empty_sequence", lambda: pack_sequence([torch.ones(2), torch.ones(0)])),
    ("unpad_lengths_short", lambda: unpad_sequence(torch.zeros(3, 2), torch.tensor([1]), batch_first=True)),
    ("unpad_lengths_long", lambda: unpad_sequence(torch.zeros(3, 2), torch.tensor([1, 2, 1, 1]), batch_first=True)),
    ("invert_permutation_out_of_range", lambda: invert_permutation(torch.tensor([2, 0, 3]))),
    ("gru_packed_3d_data", lambda: nn.GRU(3, 4)(pack_padded_sequence(torch.zeros(3, 2, 1, 3), [3, 2]))),
    ("gru_packed_input_size", lambda: nn.GRU(3, 4)(pack_padded_sequence(torch.zeros(3, 2, 5), [3, 2]))),
    ("gru_packed_hidden_size", lambda: nn.GRU(3, 4)(p32, torch.zeros(1, 3, 4))),
    ("rnn_packed_hidden_size", lambda: nn.RNN(3, 4, num_layers=2)(p32, torch.zeros(1, 2, 4))),
    # the initial state is put in sorted order before it is checked
    ("gru_packed_hidden_permuted", lambda: nn.GRU(3, 4)(p32u, torch.zeros(1, 1, 4))),
]
ERRORS = []
for name, f in ERROR_CALLS:
    try:
        f()
    except Exception as e:  # noqa: BLE001 - any of torch's error types
        ERRORS.append((name, str(e)))
    else:
        raise AssertionError(f"{name}: torch raised nothing")


lines = [
    generated_header("make_packed_sequences_golden.py"),
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
    print(f"{name:48s} {len(params):3d} params  {len(outs)} outs  out0 {tuple(outs[0].shape)}")
lines.append("];")

lines.append("")
lines.append("/// `(call name, torch's message)` for each bad call of the replay.")
lines.append("const ERRORS: &[(&str, &str)] = &[")
for name, msg in ERRORS:
    lines.append(f"    ({rust_str(name)}, {rust_str(msg)}),")
    print(f"{name:40s} {msg[:70]}")
lines.append("];")

names = [c[0] for c in CASES]
assert len(names) == len(set(names)), "duplicate case names"
path = write_golden("packed_sequences_golden.rs", lines)
print(f"wrote {len(CASES)} cases and {len(ERRORS)} errors to {path}")
