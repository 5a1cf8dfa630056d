"""Writes nn/tests/nn/module_repr_extra_layers_golden.rs and nn/tests/nn/sequential_edits_golden.rs: torch 2.15's `repr(module)` of the pools, paddings,
upsampling, instance/local-response norms, shuffles, bags, cells, fold/unfold, lazy modules and
children-only containers that nn/tests/nn/module_repr_extra_layers.rs builds again, as `(name, expected)` pairs;
and the state-dict keys and errors of torch's `Sequential` edits for nn/tests/nn/sequential_edits.rs.

Run with the reference python: /work/.refenv/bin/python nn/tests/make_module_repr_extra_layers_golden.py
"""

import os
import sys
import warnings

import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from golden_writer import write_golden  # noqa: E402


def cases():
    return [
        ("maxpool2d", nn.MaxPool2d(2)),
        ("maxpool2d_full", nn.MaxPool2d((2, 3), stride=1, padding=1, dilation=2, ceil_mode=True)),
        ("maxpool1d", nn.MaxPool1d(3)),
        ("avgpool1d", nn.AvgPool1d(3)),
        ("avgpool2d", nn.AvgPool2d(2)),
        ("avgpool2d_full", nn.AvgPool2d((2, 3), stride=(1, 2), padding=1, ceil_mode=True, count_include_pad=False)),
        ("avgpool3d", nn.AvgPool3d(2)),
        ("adaptive_avg2d", nn.AdaptiveAvgPool2d(7)),
        ("adaptive_avg2d_none", nn.AdaptiveAvgPool2d((None, 7))),
        ("adaptive_max1d", nn.AdaptiveMaxPool1d(4)),
        ("adaptive_max2d", nn.AdaptiveMaxPool2d((3, 4))),
        ("lppool1d", nn.LPPool1d(2.0, 3)),
        ("lppool2d", nn.LPPool2d(1.5, (2, 3), stride=1, ceil_mode=True)),
        ("fractional2d", nn.FractionalMaxPool2d(3, output_size=5)),
        ("maxunpool1d", nn.MaxUnpool1d(2)),
        ("maxunpool2d", nn.MaxUnpool2d((2, 3), stride=1, padding=1)),
        ("maxunpool3d", nn.MaxUnpool3d(2)),
        ("zeropad1d", nn.ZeroPad1d(2)),
        ("zeropad2d", nn.ZeroPad2d((1, 2, 3, 4))),
        ("zeropad3d", nn.ZeroPad3d(1)),
        ("constpad1d", nn.ConstantPad1d(2, 3.5)),
        ("constpad2d", nn.ConstantPad2d((1, 2, 3, 4), 0.0)),
        ("reflpad2d", nn.ReflectionPad2d((1, 1, 2, 0))),
        ("replpad1d", nn.ReplicationPad1d((1, 2))),
        ("replpad3d", nn.ReplicationPad3d(1)),
        ("circpad2d", nn.CircularPad2d(1)),
        ("upsample_scale", nn.Upsample(scale_factor=2)),
        ("upsample_size", nn.Upsample(size=(4, 5), mode="bilinear")),
        ("upsample_scales", nn.Upsample(scale_factor=(2.0, 1.5), mode="bicubic", align_corners=True)),
        ("upsample_size1", nn.Upsample(size=4)),
        ("upsampling_nearest", nn.UpsamplingNearest2d(scale_factor=2)),
        ("upsampling_bilinear", nn.UpsamplingBilinear2d(size=(3, 4))),
        ("instancenorm1d", nn.InstanceNorm1d(4)),
        ("instancenorm2d", nn.InstanceNorm2d(4, affine=True, track_running_stats=True)),
        ("instancenorm3d", nn.InstanceNorm3d(3, eps=1e-3, momentum=None)),
        ("lrn", nn.LocalResponseNorm(2)),
        ("lrn_full", nn.LocalResponseNorm(3, alpha=1e-3, beta=0.5, k=2.0)),
        ("bilinear", nn.Bilinear(2, 3, 4)),
        ("bilinear_nobias", nn.Bilinear(2, 3, 4, bias=False)),
        ("pixel_shuffle", nn.PixelShuffle(2)),
        ("pixel_unshuffle", nn.PixelUnshuffle(3)),
        ("channel_shuffle", nn.ChannelShuffle(2)),
        ("embedding_bag", nn.EmbeddingBag(10, 3)),
        ("embedding_bag_full", nn.EmbeddingBag(10, 3, mode="sum", padding_idx=0, max_norm=1.0, norm_type=1.0,
                                               scale_grad_by_freq=True)),
        ("rnn_cell", nn.RNNCell(3, 4)),
        ("rnn_cell_relu", nn.RNNCell(3, 4, bias=False, nonlinearity="relu")),
        ("lstm_cell", nn.LSTMCell(3, 4)),
        ("gru_cell", nn.GRUCell(3, 4, bias=False)),
        ("fold", nn.Fold((4, 5), 2)),
        ("fold_full", nn.Fold(4, (2, 2), dilation=2, padding=1, stride=(1, 2))),
        ("unfold", nn.Unfold(2)),
        ("unfold_full", nn.Unfold((2, 3), dilation=1, padding=(1, 0), stride=2)),
        ("cosine_similarity", nn.CosineSimilarity()),
        ("pairwise_distance", nn.PairwiseDistance()),
        ("softmax2d", nn.Softmax2d()),
        ("threshold", nn.Threshold(0.5, 1.0)),
        ("softshrink", nn.Softshrink()),
        ("tanhshrink", nn.Tanhshrink()),
        ("celu", nn.CELU()),
        ("glu", nn.GLU()),
        ("softmin", nn.Softmin(dim=0)),
        ("log_softmax", nn.LogSoftmax(dim=1)),
        ("lazy_linear", nn.LazyLinear(3)),
        ("lazy_conv2d", nn.LazyConv2d(4, 3)),
        ("lazy_conv_transpose1d", nn.LazyConvTranspose1d(4, 3, stride=2, bias=False)),
        ("lazy_batchnorm1d", nn.LazyBatchNorm1d()),
        ("lazy_instancenorm2d", nn.LazyInstanceNorm2d()),
        ("adaptive_log_softmax", nn.AdaptiveLogSoftmaxWithLoss(16, 10, [4, 8], div_value=2.0)),
        ("transformer_decoder_layer", nn.TransformerDecoderLayer(8, 2, 16)),
    ]


def container_cases():
    """`(case, state-dict keys)` after torch's Sequential edits (nn/tests/nn/sequential_edits.rs)."""
    from collections import OrderedDict

    def base():
        return nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 1))

    out = []

    class Snap:
        """The keys of a module at the time of the call (later edits of it do not show)."""

        def __init__(self, m):
            self.keys = list(m.state_dict().keys())
            self.children = list(dict(m.named_children()).keys())

    s = base()
    s.insert(1, nn.Linear(3, 3))
    out.append(("insert_1", Snap(s)))
    s = base()
    s.insert(-1, nn.Linear(3, 3))
    out.append(("insert_neg1", Snap(s)))
    s = base()
    s.insert(3, nn.Linear(1, 2))
    out.append(("insert_end", Snap(s)))
    s = base()
    s.pop(0)
    out.append(("pop_0", Snap(s)))
    s = base()
    s.pop(-1)
    out.append(("pop_neg1", Snap(s)))
    s = base()
    s.extend([nn.Linear(1, 2), nn.Linear(2, 2)])
    out.append(("extend", Snap(s)))
    s = nn.Sequential(OrderedDict([("conv1", nn.Linear(2, 3)), ("act", nn.ReLU()), ("fc", nn.Linear(3, 1))]))
    out.append(("named", Snap(s)))
    s = nn.Sequential(OrderedDict([("conv1", nn.Linear(2, 3)), ("act", nn.ReLU()), ("fc", nn.Linear(3, 1))]))
    s.append(nn.Linear(1, 1))
    out.append(("named_append", Snap(s)))
    s.pop(1)
    out.append(("named_append_pop", Snap(s)))
    return [(name, snap.keys, snap.children) for name, snap in out]


def errors():
    """`(case, torch's message)` of the refused Sequential edits."""
    from collections import OrderedDict

    out = []

    def catch(name, f):
        try:
            f()
        except (IndexError, KeyError) as e:
            out.append((name, str(e.args[0])))

    s = nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 1))
    catch("pop_5", lambda: s.pop(5))
    catch("pop_neg4", lambda: s.pop(-4))
    catch("pop_empty", lambda: nn.Sequential().pop(0))
    catch("insert_5", lambda: s.insert(5, nn.ReLU()))
    catch("insert_neg4", lambda: s.insert(-4, nn.ReLU()))
    catch("getitem_3", lambda: s[3])
    named = nn.Sequential(OrderedDict([("a", nn.ReLU()), ("b", nn.ReLU())]))
    catch("named_insert_0", lambda: named.insert(0, nn.ReLU()))
    catch("add_module_dot", lambda: named.add_module("x.y", nn.ReLU()))
    catch("add_module_empty", lambda: named.add_module("", nn.ReLU()))
    ml = nn.ModuleList([nn.ReLU(), nn.Tanh()])
    catch("modulelist_pop_2", lambda: ml.pop(2))
    return out


def main():
    warnings.simplefilter("ignore")
    lines = [
        "// Written by nn/tests/make_module_repr_extra_layers_golden.py from torch " + torch.__version__ + "; do not edit.",
        "",
        "/// `(case, torch's repr)`.",
        "const REPRS_B: &[(&str, &str)] = &[",
    ]
    for name, m in cases():
        r = repr(m)
        assert "#" not in r
        lines.append(f'    ("{name}", r#"{r}"#),')
    lines.append("];")
    print(write_golden("module_repr_extra_layers_golden.rs", lines))
    lines = [
        "// Written by nn/tests/make_module_repr_extra_layers_golden.py from torch " + torch.__version__ + "; do not edit.",
    ]
    lines += ["", "/// `(case, state-dict keys, child names)` after the Sequential edits.",
              "const CONTAINER_KEYS: &[(&str, &[&str], &[&str])] = &["]
    for name, keys, children in container_cases():
        k = ", ".join(f'"{x}"' for x in keys)
        c = ", ".join(f'"{x}"' for x in children)
        lines.append(f'    ("{name}", &[{k}], &[{c}]),')
    lines.append("];")
    lines += ["", "/// `(case, torch's error message)`.", "const CONTAINER_ERRORS: &[(&str, &str)] = &["]
    for name, msg in errors():
        assert "#" not in msg
        lines.append(f'    ("{name}", r#"{msg}"#),')
    lines.append("];")
    print(write_golden("sequential_edits_golden.rs", lines))


if __name__ == "__main__":
    main()
