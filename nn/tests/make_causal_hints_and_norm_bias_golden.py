"""Writes nn/tests/nn/causal_hints_and_norm_bias_golden.rs: torch's values and gradients for the `is_causal` hints of
nn.MultiheadAttention, nn.TransformerEncoderLayer / TransformerEncoder / TransformerDecoderLayer /
TransformerDecoder / Transformer, and for GroupNorm, InstanceNorm1d/2d/3d and LayerNorm built with
`bias=False`, in float64, plus torch's error for a causal hint without its mask.

Each case gives its inputs, the module's state dict in torch's order (loaded by key into the oxtorch
module, strict, so the keys double as a state-dict check: no `bias` key with `bias=False`), the
outputs, a random cotangent per output, and the gradients of `sum_k (out_k * cot_k).sum()` for the
differentiated inputs and for every parameter. nn/tests/nn/causal_hints_and_norm_bias.rs builds the same modules and makes
the same calls by case name.

Inputs named `*_bmask` are boolean masks written as 0/1; `*_fmask` are float masks (added to the
scores, `-inf` where not allowed). A causal hint with a mask that is not causal shows torch's rule:
without a key padding mask and without weights the mask is dropped for the causal attention.
Dropout is 0 and the modules stay in training mode (torch's reference path).

Run: /work/.refenv/bin/python nn/tests/make_causal_hints_and_norm_bias_golden.py (from the repository root).
"""

import os
import sys

import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from golden_writer import generated_header, rust_str, tensor_lit, write_golden  # noqa: E402

torch.manual_seed(34)
DT = torch.float64
D, H, FF = 8, 2, 16


def randn(*shape):
    return torch.randn(*shape, dtype=DT)


def causal(n):
    return nn.Transformer.generate_square_subsequent_mask(n, dtype=DT)


def causal_bool(n):
    return torch.ones(n, n).triu(1).to(DT)  # written as 0/1, replayed as bool


# Each case: (name, inputs {name: tensor}, differentiated input names, module or None, call).
CASES = []


def case(name, inputs, grads, module, call):
    CASES.append((name, inputs, grads, module, call))


def mask(t, k):
    """The mask input `k` as torch takes it (bool for `*_bmask`)."""
    if k not in t:
        return None
    return t[k].bool() if k.endswith("_bmask") else t[k]


# --- MultiheadAttention(8, 2) with is_causal ------------------------------------------------------
def mha(batch_first):
    return nn.MultiheadAttention(D, H, dropout=0.0, batch_first=batch_first, dtype=DT)


def mha_call(need_weights, average=True):
    def call(m, t):
        x = t["x"]
        out, w = m(x, x, x, key_padding_mask=mask(t, "kpm_bmask"), need_weights=need_weights,
                   attn_mask=mask(t, "attn_fmask") if "attn_fmask" in t else mask(t, "attn_bmask"),
                   average_attn_weights=average, is_causal=True)
        return (out, w) if need_weights else (out,)
    return call


case("mha_causal_seq_first_weights", {"x": randn(4, 2, D), "attn_fmask": causal(4)}, ["x"], mha(False),
     mha_call(True))
case("mha_causal_seq_first_no_weights", {"x": randn(4, 2, D), "attn_fmask": causal(4)}, ["x"], mha(False),
     mha_call(False))
case("mha_causal_batch_first_bool_no_weights", {"x": randn(2, 4, D), "attn_bmask": causal_bool(4)}, ["x"],
     mha(True), mha_call(False))
case("mha_causal_batch_first_weights_per_head", {"x": randn(2, 4, D), "attn_bmask": causal_bool(4)}, ["x"],
     mha(True), mha_call(True, average=False))
# a hint with a mask that is not causal: without weights and padding torch attends causally
case("mha_causal_hint_drops_other_mask", {"x": randn(4, 2, D), "attn_fmask": randn(4, 4)}, ["x"], mha(False),
     mha_call(False))
# ... with weights the mask is used as it is
case("mha_causal_hint_weights_use_mask", {"x": randn(4, 2, D), "attn_fmask": randn(4, 4)}, ["x"], mha(False),
     mha_call(True))
# ... and with a key padding mask too
case("mha_causal_hint_padding_uses_mask",
     {"x": randn(2, 4, D), "attn_fmask": randn(4, 4), "kpm_bmask": torch.tensor([[0, 0, 0, 0], [0, 0, 0, 1]], dtype=DT)},
     ["x"], mha(True), mha_call(False))
case("mha_causal_unbatched", {"x": randn(3, D), "attn_fmask": causal(3)}, ["x"], mha(False), mha_call(False))


# --- encoder / decoder layers and stacks ----------------------------------------------------------
def enc_layer(norm_first, batch_first):
    return nn.TransformerEncoderLayer(D, H, FF, dropout=0.0, norm_first=norm_first, batch_first=batch_first,
                                      dtype=DT)


def dec_layer(norm_first, batch_first):
    return nn.TransformerDecoderLayer(D, H, FF, dropout=0.0, norm_first=norm_first, batch_first=batch_first,
                                      dtype=DT)


for nf in (False, True):
    bf = nf
    shape = (2, 4, D) if bf else (4, 2, D)
    tag = f"{'pre' if nf else 'post'}_norm{'_batch_first' if bf else ''}"
    case(f"encoder_layer_causal_{tag}", {"src": randn(*shape), "src_fmask": causal(4)}, ["src"],
         enc_layer(nf, bf), lambda m, t: (m(t["src"], src_mask=t["src_fmask"], is_causal=True),))
    case(f"encoder_layer_causal_hint_other_mask_{tag}", {"src": randn(*shape), "src_fmask": randn(4, 4)}, ["src"],
         enc_layer(nf, bf), lambda m, t: (m(t["src"], src_mask=t["src_fmask"], is_causal=True),))
    mshape = (2, 5, D) if bf else (5, 2, D)
    case(f"decoder_layer_tgt_causal_{tag}",
         {"tgt": randn(*shape), "memory": randn(*mshape), "tgt_bmask": causal_bool(4)}, ["tgt", "memory"],
         dec_layer(nf, bf),
         lambda m, t: (m(t["tgt"], t["memory"], tgt_mask=t["tgt_bmask"].bool(), tgt_is_causal=True),))
    # memory_is_causal with a [4, 5] mask that is not causal: torch's top-left causal attention
    case(f"decoder_layer_memory_causal_{tag}",
         {"tgt": randn(*shape), "memory": randn(*mshape), "tgt_fmask": causal(4), "memory_fmask": randn(4, 5)},
         ["tgt", "memory"], dec_layer(nf, bf),
         lambda m, t: (m(t["tgt"], t["memory"], tgt_mask=t["tgt_fmask"], memory_mask=t["memory_fmask"],
                         tgt_is_causal=True, memory_is_causal=True),))


def encoder(norm_first):
    return nn.TransformerEncoder(enc_layer(norm_first, False), 2, norm=nn.LayerNorm(D, dtype=DT),
                                 enable_nested_tensor=False)


def decoder(norm_first):
    return nn.TransformerDecoder(dec_layer(norm_first, False), 2, norm=nn.LayerNorm(D, dtype=DT))


# is_causal None: detected from the (bool) causal mask
case("encoder_detects_causal_mask", {"src": randn(4, 2, D), "src_bmask": causal_bool(4)}, ["src"], encoder(False),
     lambda m, t: (m(t["src"], mask=t["src_bmask"].bool()),))
# is_causal None with a mask that is not causal: the mask is used
case("encoder_other_mask_not_causal", {"src": randn(4, 2, D), "src_fmask": randn(4, 4)}, ["src"], encoder(True),
     lambda m, t: (m(t["src"], mask=t["src_fmask"]),))
# is_causal True with a mask that is not causal: causal attention
case("encoder_causal_hint_other_mask", {"src": randn(4, 2, D), "src_fmask": randn(4, 4)}, ["src"], encoder(True),
     lambda m, t: (m(t["src"], mask=t["src_fmask"], is_causal=True),))
case("decoder_detects_causal_mask", {"tgt": randn(4, 2, D), "memory": randn(3, 2, D), "tgt_fmask": causal(4)},
     ["tgt", "memory"], decoder(False), lambda m, t: (m(t["tgt"], t["memory"], tgt_mask=t["tgt_fmask"]),))
case("decoder_causal_hints_other_masks",
     {"tgt": randn(4, 2, D), "memory": randn(4, 2, D), "tgt_fmask": randn(4, 4), "memory_fmask": randn(4, 4)},
     ["tgt", "memory"], decoder(True),
     lambda m, t: (m(t["tgt"], t["memory"], tgt_mask=t["tgt_fmask"], memory_mask=t["memory_fmask"],
                     tgt_is_causal=True, memory_is_causal=True),))


def transformer(norm_first, batch_first):
    return nn.Transformer(d_model=D, nhead=H, num_encoder_layers=1, num_decoder_layers=1, dim_feedforward=FF,
                          dropout=0.0, norm_first=norm_first, batch_first=batch_first, dtype=DT)


case("transformer_causal_flags_post_norm",
     {"src": randn(4, 2, D), "tgt": randn(4, 2, D), "src_fmask": randn(4, 4), "tgt_fmask": causal(4)},
     ["src", "tgt"], transformer(False, False),
     lambda m, t: (m(t["src"], t["tgt"], src_mask=t["src_fmask"], tgt_mask=t["tgt_fmask"], src_is_causal=True),))
case("transformer_causal_flags_pre_norm_batch_first",
     {"src": randn(2, 4, D), "tgt": randn(2, 4, D), "tgt_bmask": causal_bool(4), "memory_fmask": randn(4, 4)},
     ["src", "tgt"], transformer(True, True),
     lambda m, t: (m(t["src"], t["tgt"], tgt_mask=t["tgt_bmask"].bool(), memory_mask=t["memory_fmask"],
                     tgt_is_causal=None, memory_is_causal=True),))


# --- norms with bias=False --------------------------------------------------------------------------
def layer(m):
    return lambda mm, t: (mm(t["input"]),)


NORMS = [
    ("groupnorm_no_bias", nn.GroupNorm(2, 4, bias=False, dtype=DT), (2, 4, 3)),
    ("groupnorm_no_bias_eps", nn.GroupNorm(1, 3, eps=1e-3, bias=False, dtype=DT), (2, 3, 2, 2)),
    ("instancenorm1d_no_bias", nn.InstanceNorm1d(3, affine=True, bias=False, dtype=DT), (2, 3, 5)),
    ("instancenorm2d_no_bias_tracked",
     nn.InstanceNorm2d(2, affine=True, track_running_stats=True, bias=False, dtype=DT), (2, 2, 3, 3)),
    ("instancenorm3d_no_bias_unbatched", nn.InstanceNorm3d(2, affine=True, bias=False, dtype=DT), (2, 2, 2, 3)),
    ("layernorm_no_bias", nn.LayerNorm([3, 4], bias=False, dtype=DT), (2, 3, 4)),
]
for name, m, shape in NORMS:
    case(name, {"input": randn(*shape)}, ["input"], m, layer(m))


# --- torch's errors -------------------------------------------------------------------------------
def message(f):
    try:
        f()
    except Exception as e:  # noqa: BLE001
        return str(e)
    raise AssertionError("no error")


x = randn(4, 2, D)
ERRORS = [
    ("mha_is_causal_without_mask", message(lambda: mha(False)(x, x, x, is_causal=True))),
    ("mha_is_causal_with_weights_without_mask",
     message(lambda: mha(False)(x, x, x, need_weights=True, is_causal=True))),
    ("encoder_layer_is_causal_without_mask", message(lambda: enc_layer(False, False)(x, is_causal=True))),
    ("encoder_is_causal_without_mask", message(lambda: encoder(False)(x, is_causal=True))),
    ("decoder_layer_memory_is_causal_without_mask",
     message(lambda: dec_layer(False, False)(x, x, memory_is_causal=True))),
    ("decoder_tgt_is_causal_without_mask", message(lambda: decoder(False)(x, x, tgt_is_causal=True))),
    ("transformer_src_is_causal_without_mask",
     message(lambda: transformer(False, False)(x, x, src_is_causal=True))),
]

lines = [
    generated_header("make_causal_hints_and_norm_bias_golden.py"),
    "",
    "/// One golden case: inputs, the module's state dict (torch's keys and order), outputs, their",
    "/// cotangents, and the gradients of `sum_k (out_k * cot_k).sum()`.",
    "#[allow(clippy::approx_constant)]",
    "const GOLDEN: &[Golden] = &[",
]
for name, inputs, grads, module, call in CASES:
    assert all(v.dtype == DT for v in inputs.values()), name
    leaves = {k: v.detach().clone().requires_grad_(k in grads) for k, v in inputs.items()}
    module.zero_grad(set_to_none=True)
    params = [(k, v.detach().clone()) for k, v in module.state_dict().items()]
    assert all(v.dtype == DT or k.endswith("num_batches_tracked") for k, v in params), name
    outs = list(call(module, leaves))
    cots = [randn(*o.shape) for o in outs]
    loss = sum((o * c).sum() for o, c in zip(outs, cots))
    loss.backward()
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
    for k, p in module.named_parameters():
        assert p.grad is not None, f"{name}: no gradient for {k}"
        lines.append(f'            ("{k}", {tensor_lit(p.grad)}),')
    lines.append("        ],")
    lines.append("    },")
    shown = outs[0].detach().flatten().tolist()
    print(f"{name:48s} {len(params):3d} keys  out[:3]={[round(v, 6) for v in shown[:3]]}")
lines.append("];")
lines.append("")
lines.append("/// `(case, torch's error message)`.")
lines.append("const ERRORS: &[(&str, &str)] = &[")
for k, msg in ERRORS:
    lines.append(f"    ({rust_str(k)}, {rust_str(msg)}),")
lines.append("];")

names = [c[0] for c in CASES]
assert len(names) == len(set(names)), "duplicate case names"
path = write_golden("causal_hints_and_norm_bias_golden.rs", lines)
print(f"wrote {len(CASES)} cases and {len(ERRORS)} errors to {path}")
