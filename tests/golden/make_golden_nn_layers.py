"""PyTorch reference values for oxtorch's layers: each torch module's state_dict, inputs, outputs,
and the gradients of its parameters and inputs.

Run with the reference venv: `python tests/golden/make_golden_nn_layers.py`. Writes
tests/golden/nn_layers.safetensors with, for each case `c`: `c.state.<key>` (the module's
state_dict), `c.in.<name>` (inputs), `c.out.<i>` (outputs), `c.gout.<i>` (the test back-propagates
`sum(out_i * gout_i)` over the float outputs), `c.grad.<key>` (parameter gradients) and
`c.ingrad.<name>` (input gradients). The header metadata `keys.<c>` lists the state-dict keys in
torch's order. `nn/tests/nn/layers.rs` builds the same modules and checks every case.
"""
import os

import torch
import torch.nn as nn
from safetensors.torch import save_file

torch.manual_seed(0)
out = {}
meta = {}


def case(name, module, inputs, call=None, grad_inputs=None):
    """Runs module(*inputs) (or call(module, inputs)) and stores everything the Rust test needs."""
    for k, v in module.state_dict().items():
        out[f"{name}.state.{k}"] = v.detach().clone().contiguous()
    meta[f"keys.{name}"] = ",".join(module.state_dict().keys())
    grad_inputs = grad_inputs if grad_inputs is not None else [k for k, v in inputs.items() if v.is_floating_point()]
    ins = {k: v.clone().requires_grad_(k in grad_inputs) for k, v in inputs.items()}
    y = call(module, ins) if call else module(*ins.values())
    ys = list(y) if isinstance(y, (tuple, list)) else [y]
    flat = []
    for y in ys:
        flat.extend(y if isinstance(y, (tuple, list)) else [y])
    total = 0
    for i, y in enumerate(flat):
        if y is None:
            continue
        out[f"{name}.out.{i}"] = y.detach().clone().contiguous()
        if y.is_floating_point() and y.requires_grad:
            g = torch.rand(y.shape, dtype=y.dtype) + 0.5
            out[f"{name}.gout.{i}"] = g
            total = total + (y * g).sum()
    for k, v in inputs.items():
        out[f"{name}.in.{k}"] = v.clone().contiguous()
    if not isinstance(total, int):
        total.backward()
    for k, p in module.named_parameters():
        out[f"{name}.grad.{k}"] = p.grad.clone() if p.grad is not None else torch.zeros_like(p)
    for k in grad_inputs:
        g = ins[k].grad
        out[f"{name}.ingrad.{k}"] = g.clone() if g is not None else torch.zeros_like(ins[k])


x1 = torch.randn(2, 4, 7)
x2 = torch.randn(2, 4, 6, 5)
case("convt1d", nn.ConvTranspose1d(4, 6, 3, stride=2, padding=1, output_padding=1, groups=2, dilation=2), {"x": x1})
case("convt2d", nn.ConvTranspose2d(4, 6, (3, 2), stride=(2, 1), padding=(1, 0), output_padding=(1, 0), groups=2,
                                   dilation=(1, 2)), {"x": x2})
case("convt2d_nobias", nn.ConvTranspose2d(4, 3, 2, stride=2, bias=False), {"x": x2})
case("convt2d_output_size", nn.ConvTranspose2d(4, 6, 3, stride=2, padding=1), {"x": x2},
     call=lambda m, i: m(i["x"], output_size=[12, 10]))
case("bilinear", nn.Bilinear(3, 4, 5), {"x1": torch.randn(6, 3), "x2": torch.randn(6, 4)})
case("bilinear_nobias", nn.Bilinear(3, 4, 2, bias=False), {"x1": torch.randn(2, 3, 3), "x2": torch.randn(2, 3, 4)})

case("maxpool1d", nn.MaxPool1d(3, stride=2, padding=1), {"x": x1})
case("maxpool2d", nn.MaxPool2d(2), {"x": x2})
case("maxpool2d_ceil", nn.MaxPool2d(3, stride=2, padding=1, dilation=1, ceil_mode=True), {"x": x2})
case("avgpool1d", nn.AvgPool1d(3, stride=2, padding=1, count_include_pad=False), {"x": x1})
case("avgpool2d", nn.AvgPool2d(2, stride=1), {"x": x2})
case("avgpool2d_ceil", nn.AvgPool2d(3, stride=2, padding=1, ceil_mode=True, divisor_override=4), {"x": x2})
case("adaptiveavg1d", nn.AdaptiveAvgPool1d(5), {"x": x1})
case("adaptiveavg2d", nn.AdaptiveAvgPool2d((4, 3)), {"x": x2})
case("adaptivemax2d", nn.AdaptiveMaxPool2d(3), {"x": x2})
case("upsample_nearest", nn.Upsample(scale_factor=2, mode="nearest"), {"x": x2})
case("upsample_bilinear", nn.Upsample(size=(5, 7), mode="bilinear", align_corners=False), {"x": x2})
case("upsample_linear_ac", nn.Upsample(scale_factor=1.5, mode="linear", align_corners=True), {"x": x1})

# Attention: dropout 0 keeps it deterministic.
E, L, S, N = 8, 4, 5, 3
q, k, v = torch.randn(L, N, E), torch.randn(S, N, E), torch.randn(S, N, E)
case("mha", nn.MultiheadAttention(E, 2), {"q": q, "k": k, "v": v})
kpm = torch.zeros(N, S, dtype=torch.bool)
kpm[0, 3:] = True
kpm[2, 0] = True
am = torch.randn(L, S)
case("mha_masks", nn.MultiheadAttention(E, 4, bias=False), {"q": q, "k": k, "v": v, "kpm": kpm, "am": am},
     call=lambda m, i: m(i["q"], i["k"], i["v"], key_padding_mask=i["kpm"], attn_mask=i["am"],
                         average_attn_weights=False))
bm = torch.triu(torch.ones(L, S, dtype=torch.bool), diagonal=1)
case("mha_kvdim_bf", nn.MultiheadAttention(E, 2, batch_first=True, kdim=5, vdim=6),
     {"q": torch.randn(N, L, E), "k": torch.randn(N, S, 5), "v": torch.randn(N, S, 6), "am": bm},
     call=lambda m, i: m(i["q"], i["k"], i["v"], attn_mask=i["am"]))
case("mha_bias_kv_zero_attn", nn.MultiheadAttention(E, 2, add_bias_kv=True, add_zero_attn=True),
     {"q": q, "k": k, "v": v, "kpm": kpm, "am": am},
     call=lambda m, i: m(i["q"], i["k"], i["v"], key_padding_mask=i["kpm"], attn_mask=i["am"]))
case("mha_noweights", nn.MultiheadAttention(E, 2), {"q": q},
     call=lambda m, i: m(i["q"], i["q"], i["q"], need_weights=False))

src = torch.randn(N, L, E)
case("enc", nn.TransformerEncoderLayer(E, 2, 16, dropout=0.0, batch_first=True), {"src": src})
src_kpm = torch.zeros(N, L, dtype=torch.bool)
src_kpm[1, 2:] = True
causal = nn.Transformer.generate_square_subsequent_mask(L)
case("enc_normfirst_gelu", nn.TransformerEncoderLayer(E, 4, 12, dropout=0.0, activation="gelu", norm_first=True,
                                                       batch_first=True),
     {"src": src, "mask": causal, "kpm": src_kpm},
     call=lambda m, i: m(i["src"], src_mask=i["mask"], src_key_padding_mask=i["kpm"]))
tgt, mem = torch.randn(L, N, E), torch.randn(S, N, E)
case("dec", nn.TransformerDecoderLayer(E, 2, 16, dropout=0.0), {"tgt": tgt, "memory": mem},
     call=lambda m, i: m(i["tgt"], i["memory"], tgt_mask=causal))
mem_kpm = torch.zeros(N, S, dtype=torch.bool)
mem_kpm[0, 4] = True
case("dec_normfirst_gelu", nn.TransformerDecoderLayer(E, 2, 16, dropout=0.0, activation="gelu", norm_first=True),
     {"tgt": tgt, "memory": mem, "kpm": mem_kpm},
     call=lambda m, i: m(i["tgt"], i["memory"], memory_key_padding_mask=i["kpm"]))

enc_stack = nn.TransformerEncoder(nn.TransformerEncoderLayer(E, 2, 16, dropout=0.0, batch_first=True), 2,
                                  norm=nn.LayerNorm(E), enable_nested_tensor=False)
with torch.no_grad():  # make the clones differ, so that the layer order is checked
    for p in enc_stack.layers[1].parameters():
        p.add_(torch.randn_like(p) * 0.1)
case("enc_stack", enc_stack, {"src": src, "kpm": src_kpm},
     call=lambda m, i: m(i["src"], src_key_padding_mask=i["kpm"]))
dec_stack = nn.TransformerDecoder(nn.TransformerDecoderLayer(E, 2, 16, dropout=0.0), 2)
with torch.no_grad():
    for p in dec_stack.layers[0].parameters():
        p.add_(torch.randn_like(p) * 0.1)
case("dec_stack", dec_stack, {"tgt": tgt, "memory": mem, "mask": causal},
     call=lambda m, i: m(i["tgt"], i["memory"], tgt_mask=i["mask"]),
     grad_inputs=["tgt", "memory"])  # torch detects the causal mask and drops it from the graph

T, H, I = 5, 5, 4
case("lstm", nn.LSTM(I, H), {"x": torch.randn(T, N, I)})
case("lstm_2l_bi_bf", nn.LSTM(I, H, num_layers=2, bidirectional=True, batch_first=True),
     {"x": torch.randn(N, T, I), "h0": torch.randn(4, N, H), "c0": torch.randn(4, N, H)},
     call=lambda m, i: m(i["x"], (i["h0"], i["c0"])))
case("lstm_nobias", nn.LSTM(I, H, bias=False), {"x": torch.randn(T, I)})
case("gru", nn.GRU(I, H, num_layers=2), {"x": torch.randn(T, N, I)})
case("gru_bi_bf", nn.GRU(I, H, bidirectional=True, batch_first=True),
     {"x": torch.randn(N, T, I), "h0": torch.randn(2, N, H)}, call=lambda m, i: m(i["x"], i["h0"]))

case("rnn_tanh_2l_bi", nn.RNN(I, H, num_layers=2, bidirectional=True), {"x": torch.randn(T, N, I)})
case("rnn_relu_bf", nn.RNN(I, H, nonlinearity="relu", batch_first=True),
     {"x": torch.randn(N, T, I), "h0": torch.randn(1, N, H)}, call=lambda m, i: m(i["x"], i["h0"]))

here = os.path.dirname(__file__)
save_file(out, os.path.join(here, "nn_layers.safetensors"), metadata=meta)
print(len(meta), "cases")
