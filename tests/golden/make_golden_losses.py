"""PyTorch reference values for oxtorch's losses: outputs and input gradients.

Run with the reference venv: `python tests/golden/make_golden_losses.py`. Writes
tests/golden/losses.safetensors with, for each case `c`, its tensors `c.<name>`, the loss `c.out`,
the upstream gradient `c.gout` (the test back-propagates `(out * gout).sum()`) and the gradient of
each differentiable tensor `c.grad.<name>`. `nn/tests/nn/losses.rs` holds the same case list (the
arguments of each call) and checks every case in the file.
"""
import os

import torch
import torch.nn.functional as F
from safetensors.torch import save_file

torch.manual_seed(0)
out = {}
names = []


def case(name, fn, tensors, grads):
    """Runs fn(**tensors), stores inputs, output, upstream grad and the gradients of `grads`."""
    ts = {k: v.clone().requires_grad_(k in grads) for k, v in tensors.items()}
    y = fn(**ts)
    gout = torch.rand_like(y) + 0.5
    if grads:
        (y * gout).sum().backward()
    for k, v in tensors.items():
        out[f"{name}.{k}"] = v.detach().clone().contiguous()
    out[f"{name}.out"] = y.detach()
    out[f"{name}.gout"] = gout
    for k in grads:
        g = ts[k].grad
        out[f"{name}.grad.{k}"] = g.clone() if g is not None else torch.zeros_like(ts[k])
    names.append(name)


def logits(*shape, dtype=torch.float32):
    return torch.randn(*shape, dtype=dtype) * 2


def idx(c, *shape):
    return torch.randint(0, c, shape)


for dt, sfx in [(torch.float32, "f32"), (torch.float64, "f64")]:
    x, t = logits(6, 5, dtype=dt), idx(5, 6)
    w = torch.rand(5, dtype=dt) + 0.2
    for red in ["mean", "sum", "none"]:
        case(f"ce_idx_{red}_{sfx}", lambda input, target: F.cross_entropy(input, target, reduction=red),
             {"input": x, "target": t}, ["input"])
    case(f"ce_idx_weight_{sfx}", lambda input, target, weight: F.cross_entropy(input, target, weight=weight),
         {"input": x, "target": t, "weight": w}, ["input"])
    t_ign = t.clone()
    t_ign[1] = -100
    t_ign[4] = -100
    case(f"ce_ignore_{sfx}", lambda input, target: F.cross_entropy(input, target),
         {"input": x, "target": t_ign}, ["input"])
    t_ign2 = t.clone()
    t_ign2[0] = 2
    t_ign2[3] = 2
    for red in ["mean", "sum", "none"]:
        case(f"ce_ignore2_weight_smooth_{red}_{sfx}",
             lambda input, target, weight: F.cross_entropy(input, target, weight=weight, ignore_index=2,
                                                           reduction=red, label_smoothing=0.1),
             {"input": x, "target": t_ign2, "weight": w}, ["input"])
    case(f"ce_smooth_{sfx}", lambda input, target: F.cross_entropy(input, target, label_smoothing=0.25),
         {"input": x, "target": t}, ["input"])
    p = torch.softmax(logits(6, 5, dtype=dt), 1)
    for red in ["mean", "sum", "none"]:
        case(f"ce_prob_{red}_{sfx}", lambda input, target: F.cross_entropy(input, target, reduction=red),
             {"input": x, "target": p}, ["input", "target"])
    case(f"ce_prob_weight_smooth_{sfx}",
         lambda input, target, weight: F.cross_entropy(input, target, weight=weight, label_smoothing=0.2),
         {"input": x, "target": p, "weight": w}, ["input"])
    xk, tk = logits(2, 4, 3, 2, dtype=dt), idx(4, 2, 3, 2)
    tk[0, 1, 1] = -100
    case(f"ce_kd_{sfx}", lambda input, target: F.cross_entropy(input, target), {"input": xk, "target": tk},
         ["input"])
    case(f"ce_1d_{sfx}", lambda input, target: F.cross_entropy(input, target),
         {"input": logits(5, dtype=dt), "target": torch.tensor(3)}, ["input"])
    case(f"ce_all_ignored_sum_{sfx}", lambda input, target: F.cross_entropy(input, target, reduction="sum"),
         {"input": x[:2], "target": torch.tensor([-100, -100])}, ["input"])

    lp = torch.log_softmax(logits(6, 5, dtype=dt), 1)
    case(f"nll_mean_{sfx}", lambda input, target: F.nll_loss(input, target), {"input": lp, "target": t}, ["input"])
    case(f"nll_weight_ignore_none_{sfx}",
         lambda input, target, weight: F.nll_loss(input, target, weight=weight, reduction="none"),
         {"input": lp, "target": t_ign, "weight": w}, ["input"])
    case(f"nll_weight_mean_{sfx}", lambda input, target, weight: F.nll_loss(input, target, weight=weight),
         {"input": lp, "target": t_ign, "weight": w}, ["input"])
    case(f"nll_kd_sum_{sfx}", lambda input, target: F.nll_loss(input, target, reduction="sum"),
         {"input": torch.log_softmax(xk, 1), "target": tk}, ["input"])

    a, b = torch.randn(3, 4, dtype=dt), torch.randn(3, 4, dtype=dt)
    for red in ["mean", "sum", "none"]:
        case(f"mse_{red}_{sfx}", lambda input, target: F.mse_loss(input, target, reduction=red),
             {"input": a, "target": b}, ["input", "target"])
        case(f"l1_{red}_{sfx}", lambda input, target: F.l1_loss(input, target, reduction=red),
             {"input": a, "target": b}, ["input", "target"])
    for beta in [1.0, 0.5, 0.0]:
        case(f"smooth_l1_beta{beta}_{sfx}", lambda input, target: F.smooth_l1_loss(input, target, beta=beta),
             {"input": a, "target": b}, ["input", "target"])
    for delta in [1.0, 0.3, 2.0]:
        case(f"huber_delta{delta}_{sfx}",
             lambda input, target: F.huber_loss(input, target, delta=delta, reduction="sum"),
             {"input": a, "target": b}, ["input", "target"])

    pr = torch.rand(3, 4, dtype=dt) * 0.98 + 0.01
    tg = torch.rand(3, 4, dtype=dt)
    wb = torch.rand(4, dtype=dt) + 0.5
    for red in ["mean", "sum", "none"]:
        case(f"bce_{red}_{sfx}", lambda input, target: F.binary_cross_entropy(input, target, reduction=red),
             {"input": pr, "target": tg}, ["input", "target"])
    case(f"bce_weight_{sfx}",
         lambda input, target, weight: F.binary_cross_entropy(input, target, weight=weight),
         {"input": pr, "target": tg, "weight": wb.expand(3, 4).contiguous()}, ["input"])
    case(f"bce_saturated_{sfx}", lambda input, target: F.binary_cross_entropy(input, target, reduction="none"),
         {"input": torch.tensor([0.0, 1.0, 0.0, 1.0], dtype=dt), "target": torch.tensor([0.0, 1.0, 1.0, 0.0], dtype=dt)},
         [])
    z = torch.randn(3, 4, dtype=dt) * 3
    z[0, 0], z[0, 1], z[1, 0] = 100.0, -100.0, 40.0
    for red in ["mean", "sum", "none"]:
        case(f"bcel_{red}_{sfx}",
             lambda input, target: F.binary_cross_entropy_with_logits(input, target, reduction=red),
             {"input": z, "target": tg}, ["input", "target"])
    case(f"bcel_pos_weight_{sfx}",
         lambda input, target, pos_weight: F.binary_cross_entropy_with_logits(input, target, pos_weight=pos_weight),
         {"input": z, "target": tg, "pos_weight": wb}, ["input", "target"])
    case(f"bcel_weight_pos_weight_{sfx}",
         lambda input, target, weight, pos_weight: F.binary_cross_entropy_with_logits(
             input, target, weight=weight, pos_weight=pos_weight, reduction="sum"),
         {"input": z, "target": tg, "weight": wb.flip(0), "pos_weight": wb}, ["input"])

    lq = torch.log_softmax(logits(3, 5, dtype=dt), 1)
    pt = torch.softmax(logits(3, 5, dtype=dt), 1)
    pt[0, 0] = 0.0
    for red in ["batchmean", "mean", "sum", "none"]:
        # torch's target gradient is NaN where the target is 0 (xlogy's); oxtorch's is finite there,
        # so target gradients are compared on a strictly positive target only.
        case(f"kl_{red}_{sfx}", lambda input, target: F.kl_div(input, target, reduction=red),
             {"input": lq, "target": pt}, ["input"])
    case(f"kl_tgrad_{sfx}", lambda input, target: F.kl_div(input, target, reduction="sum"),
         {"input": lq, "target": torch.softmax(logits(3, 5, dtype=dt), 1)}, ["input", "target"])
    case(f"kl_log_target_{sfx}", lambda input, target: F.kl_div(input, target, reduction="batchmean", log_target=True),
         {"input": lq, "target": torch.log_softmax(logits(3, 5, dtype=dt), 1)}, ["input", "target"])

    x1, x2 = torch.randn(5, 4, dtype=dt), torch.randn(5, 4, dtype=dt)
    y = torch.tensor([1, -1, 1, -1, -1], dtype=dt)
    for margin, red in [(0.0, "mean"), (0.2, "sum"), (-0.3, "none")]:
        case(f"cosine_m{margin}_{red}_{sfx}",
             lambda input1, input2, target: F.cosine_embedding_loss(input1, input2, target, margin=margin,
                                                                    reduction=red),
             {"input1": x1, "input2": x2, "target": y}, ["input1", "input2"])
    s1, s2 = torch.randn(6, dtype=dt), torch.randn(6, dtype=dt)
    ys = torch.tensor([1, -1, 1, 1, -1, -1], dtype=dt)
    for margin, red in [(0.0, "mean"), (0.5, "sum"), (0.3, "none")]:
        case(f"ranking_m{margin}_{red}_{sfx}",
             lambda input1, input2, target: F.margin_ranking_loss(input1, input2, target, margin=margin,
                                                                  reduction=red),
             {"input1": s1, "input2": s2, "target": ys}, ["input1", "input2"])

    # CTC: T=8, N=3, C=5; padded targets [N, S] and concatenated 1-D targets.
    T, N, C = 8, 3, 5
    lpc = torch.log_softmax(logits(T, N, C, dtype=dt), 2)
    tgt = torch.tensor([[1, 2, 2, 3], [4, 4, 0, 0], [1, 3, 2, 0]])
    il = torch.tensor([8, 7, 5])
    tl = torch.tensor([4, 2, 3])
    for red in ["mean", "sum", "none"]:
        case(f"ctc_{red}_{sfx}",
             lambda log_probs, targets, input_lengths, target_lengths: F.ctc_loss(
                 log_probs, targets, input_lengths, target_lengths, reduction=red),
             {"log_probs": lpc, "targets": tgt, "input_lengths": il, "target_lengths": tl}, ["log_probs"])
    tgt_b = torch.tensor([[0, 2, 2, 3], [4, 4, 1, 1], [0, 3, 2, 1]])
    case(f"ctc_blank1_{sfx}",
         lambda log_probs, targets, input_lengths, target_lengths: F.ctc_loss(
             log_probs, targets, input_lengths, target_lengths, blank=1),
         {"log_probs": lpc, "targets": tgt_b, "input_lengths": il, "target_lengths": tl}, ["log_probs"])
    case(f"ctc_concat_{sfx}",
         lambda log_probs, targets, input_lengths, target_lengths: F.ctc_loss(
             log_probs, targets, input_lengths, target_lengths, reduction="sum"),
         {"log_probs": lpc, "targets": torch.tensor([1, 2, 2, 3, 4, 4, 1, 3, 2]), "input_lengths": il,
          "target_lengths": tl}, ["log_probs"])
    # The second sample cannot be aligned (4 labels with a repeat need 5 frames, it has 3).
    tgt_inf = torch.tensor([[1, 2, 2, 3], [2, 2, 3, 4], [1, 3, 2, 0]])
    il_inf = torch.tensor([8, 3, 5])
    tl_inf = torch.tensor([4, 4, 3])
    for zi in [False, True]:
        case(f"ctc_infeasible_zi{int(zi)}_{sfx}",
             lambda log_probs, targets, input_lengths, target_lengths: F.ctc_loss(
                 log_probs, targets, input_lengths, target_lengths, reduction="none", zero_infinity=zi),
             {"log_probs": lpc, "targets": tgt_inf, "input_lengths": il_inf, "target_lengths": tl_inf},
             ["log_probs"] if zi else [])
    case(f"ctc_unbatched_{sfx}",
         lambda log_probs, targets, input_lengths, target_lengths: F.ctc_loss(
             log_probs, targets, input_lengths, target_lengths),
         {"log_probs": lpc[:, 0], "targets": tgt[0], "input_lengths": torch.tensor(8),
          "target_lengths": torch.tensor(4)}, ["log_probs"])
    case(f"ctc_empty_target_{sfx}",
         lambda log_probs, targets, input_lengths, target_lengths: F.ctc_loss(
             log_probs, targets, input_lengths, target_lengths, reduction="none"),
         {"log_probs": lpc, "targets": tgt, "input_lengths": il, "target_lengths": torch.tensor([0, 2, 3])},
         ["log_probs"])

here = os.path.dirname(__file__)
save_file(out, os.path.join(here, "losses.safetensors"), metadata={"cases": ",".join(names)})
print(len(names), "cases")
