"""Writes nn/tests/nn/module_repr_golden.rs: torch 2.15's `repr(module)` of the modules that
nn/tests/nn/module_repr.rs builds again, as `(name, expected)` pairs.

Run with the reference python: /work/.refenv/bin/python nn/tests/make_module_repr_golden.py
"""

import os
import sys

import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from golden_writer import write_golden  # noqa: E402


class Net(nn.Module):
    """The nested model of the Rust test (field order = registration order)."""

    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU())
        self.blocks = nn.ModuleList([nn.Linear(4, 4) for _ in range(3)] + [nn.Linear(4, 2, bias=False)])
        self.rnn = nn.LSTM(10, 20, num_layers=2, batch_first=True)
        self.attn = nn.MultiheadAttention(16, 4)
        self.encoder = nn.TransformerEncoderLayer(16, 4, dim_feedforward=32)


def cases():
    return [
        ("linear", nn.Linear(4, 3)),
        ("linear_nobias", nn.Linear(4, 3, bias=False)),
        ("sequential", nn.Sequential(nn.Linear(4, 3), nn.ReLU())),
        ("conv2d", nn.Conv2d(3, 8, 3)),
        ("conv2d_full", nn.Conv2d(4, 8, (3, 5), stride=2, padding=(1, 2), dilation=2, groups=2, bias=False,
                                  padding_mode="reflect")),
        ("conv1d_same", nn.Conv1d(2, 4, 3, padding="same")),
        ("conv_transpose2d", nn.ConvTranspose2d(4, 6, 3, stride=2, padding=1, output_padding=1)),
        ("batchnorm2d", nn.BatchNorm2d(8)),
        ("batchnorm1d_none", nn.BatchNorm1d(5, eps=1e-3, momentum=None, affine=False)),
        ("layernorm", nn.LayerNorm(4)),
        ("layernorm2", nn.LayerNorm([2, 3], eps=1e-6, elementwise_affine=False)),
        ("groupnorm", nn.GroupNorm(2, 4)),
        ("rmsnorm", nn.RMSNorm([4])),
        ("rmsnorm_eps", nn.RMSNorm([4], eps=1e-6)),
        ("embedding", nn.Embedding(10, 3)),
        ("embedding_pad", nn.Embedding(10, 3, padding_idx=0, max_norm=1.0)),
        ("dropout", nn.Dropout()),
        ("dropout2d", nn.Dropout2d(0.25)),
        ("relu", nn.ReLU()),
        ("leaky_relu", nn.LeakyReLU()),
        ("elu", nn.ELU()),
        ("gelu", nn.GELU()),
        ("gelu_tanh", nn.GELU(approximate="tanh")),
        ("softmax", nn.Softmax(dim=1)),
        ("hardtanh", nn.Hardtanh()),
        ("softplus", nn.Softplus()),
        ("hardshrink", nn.Hardshrink()),
        ("rrelu", nn.RReLU()),
        ("threshold", nn.Threshold(0.1, 20.0)),
        ("prelu", nn.PReLU()),
        ("flatten", nn.Flatten()),
        ("unflatten", nn.Unflatten(1, (2, 3))),
        ("identity", nn.Identity()),
        ("lstm", nn.LSTM(10, 20, num_layers=2, batch_first=True)),
        ("gru", nn.GRU(8, 16, bidirectional=True, dropout=0.5, num_layers=2)),
        ("rnn", nn.RNN(4, 5, bias=False)),
        ("mha", nn.MultiheadAttention(16, 4)),
        ("modulelist_empty", nn.ModuleList()),
        ("net", Net()),
    ]


def main():
    lines = [
        "// Written by nn/tests/make_module_repr_golden.py from torch " + torch.__version__ + "; do not edit.",
        "",
        "/// `(case, torch's repr)`.",
        "const REPRS: &[(&str, &str)] = &[",
    ]
    for name, m in cases():
        r = repr(m)
        assert "#" not in r
        lines.append(f'    ("{name}", r#"{r}"#),')
    lines.append("];")
    print(write_golden("module_repr_golden.rs", lines))


if __name__ == "__main__":
    main()
