//! The `nn::functional` sweep, second half: normalisations, embeddings, activations and dropout,
//! attention, RNN cells and sequences, and distances.

use oxtorch_nn::functional::{EmbeddingOptions, MhaForwardOptions};

use super::*;

/// Layer, group, batch, instance, RMS and local-response norms and `normalize`.
pub(super) fn norms(s: &mut Sweep, rng: &mut Rng) {
    rng.mood();
    let x = if !rng.tame && rng.coin() { any(rng) } else { batch(rng, 2) };
    let dims = x.t.dims().to_vec();
    let d = x.t.dtype();
    let eps = rng.arg(&EPSS, 2);
    let tail: Vec<usize> = dims.iter().skip(dims.len().saturating_sub(1 + rng.below(2))).copied().collect();
    let ns = match rng.arg(&[3, 4, 5, 0, 1, 2], 3) {
        0 => vec![],
        1 => vec![usize::MAX],
        2 => vec![1 << 62, 1 << 62],
        _ => perturb(rng, &tail),
    };
    // (affine parameters of the normalized shape, unless that shape is one of the overflowing ones)
    let small = ns.iter().try_fold(1usize, |a, &b| a.checked_mul(b)).is_some_and(|n| n <= 256);
    let wshape = if small { ns.clone() } else { vec![3] };
    let (w, b) = (maybe(rng, &wshape, d), maybe(rng, &wshape, d));
    s.call(
        "layer_norm",
        || format!("{}, {ns:?}, {}, {}, eps {eps}", x.desc, od(&w), od(&b)),
        || F::layer_norm(&x.t, &ns, ot(&w), ot(&b), eps),
    );
    let reps = rng.pick(&[None, Some(eps)]);
    s.call(
        "rms_norm",
        || format!("{}, {ns:?}, {}, {reps:?}", x.desc, od(&w)),
        || F::rms_norm(&x.t, &ns, ot(&w), reps),
    );
    let c = dims.get(1).copied().unwrap_or(1);
    let groups = rng.arg(&[1usize, c, 2, 3, 0, usize::MAX], 2);
    let (gw, gb) = (maybe(rng, &[c], d), maybe(rng, &[c], d));
    s.call(
        "group_norm",
        || format!("{}, groups {groups}, {}, {}, eps {eps}", x.desc, od(&gw), od(&gb)),
        || F::group_norm(&x.t, groups, ot(&gw), ot(&gb), eps),
    );
    // Running statistics: updated in place in training (a broadcast one cannot be).
    let (rm, rv) = (maybe(rng, &[c], d), maybe(rng, &[c], d));
    let (training, use_stats) = (rng.coin(), rng.coin());
    let momentum = rng.arg(&[0.1, 0.0, 1.0, -1.0, f64::NAN, 2.0], 3);
    s.call(
        "batch_norm",
        || {
            format!(
                "{}, mean {}, var {}, {}, {}, training {training}, momentum {momentum}, eps {eps}",
                x.desc,
                od(&rm),
                od(&rv),
                od(&gw),
                od(&gb)
            )
        },
        || F::batch_norm(&x.t, ot(&rm), ot(&rv), ot(&gw), ot(&gb), training, momentum, eps),
    );
    s.call(
        "instance_norm",
        || {
            format!(
                "{}, mean {}, var {}, {}, {}, use_input_stats {use_stats}, momentum {momentum}, eps {eps}",
                x.desc,
                od(&rm),
                od(&rv),
                od(&gw),
                od(&gb)
            )
        },
        || F::instance_norm(&x.t, ot(&rm), ot(&rv), ot(&gw), ot(&gb), use_stats, momentum, eps),
    );
    let size = rng.arg(&[1usize, 2, 5, 0, usize::MAX], 3);
    let (alpha, beta, k) = (rng.arg(&F64S, 2), rng.arg(&F64S, 2), rng.arg(&F64S, 2));
    s.call(
        "local_response_norm",
        || format!("{}, size {size}, alpha {alpha}, beta {beta}, k {k}", x.desc),
        || F::local_response_norm(&x.t, size, alpha, beta, k),
    );
    let p = rng.arg(&PNORMS, 4);
    let dim = rng.arg(&DIMS, 3);
    s.call(
        "normalize",
        || format!("{}, p {p}, dim {dim}, eps {eps}", x.desc),
        || F::normalize(&x.t, p, dim, eps),
    );
}

/// Embedding, embedding with options, embedding bags and one-hot encoding.
pub(super) fn embeddings(s: &mut Sweep, rng: &mut Rng) {
    rng.mood();
    let rows = rng.arg(&[5usize, 5, 1, 0], 3);
    let weight = shaped(rng, &[rows, 3]);
    let ishape = rng.pick(&SHAPES).to_vec();
    let idx = index(rng, &ishape, rows as i64);
    let pidx = rng
        .arg(&[None, Some(0i64), Some(-1), Some(5), Some(-6), Some(-100), Some(i64::MAX), Some(i64::MIN)], 3);
    s.call(
        "embedding",
        || format!("{}, {}, padding_idx {pidx:?}", idx.desc, weight.desc),
        || F::embedding(&idx.t, &weight.t, pidx),
    );
    let opts = EmbeddingOptions {
        padding_idx: pidx,
        max_norm: rng.arg(&[None, Some(1.0), Some(0.0), Some(-1.0), Some(f64::NAN), Some(f64::INFINITY)], 3),
        norm_type: rng.arg(&[2.0, 1.0, 0.0, -1.0, f64::NAN, f64::INFINITY], 2),
        scale_grad_by_freq: rng.coin(),
        sparse: rng.coin(),
    };
    s.call(
        "embedding_with",
        || format!("{}, {}, {opts:?}", idx.desc, weight.desc),
        || F::embedding_with(&idx.t, &weight.t, opts),
    );

    // Bags: 1-D input with offsets (unsorted, out of range, negative), or 2-D without.
    let two_d = rng.coin();
    let bag_in = if two_d { index(rng, &[2, 3], rows as i64) } else { index(rng, &[5], rows as i64) };
    let offsets = if two_d || rng.odd(4) {
        None
    } else {
        let vals = rng.arg(
            &[vec![0i64, 2], vec![3, 1], vec![0, 9], vec![-1, 0], vec![], vec![0], vec![0, i64::MAX]],
            1,
        );
        let od_ = rng.arg(&[DType::I64, DType::I64, DType::I32, DType::F32], 3);
        let t = Tensor::from_vec(vals.clone(), [vals.len()]).and_then(|t| t.to_dtype(od_)).expect("offsets");
        Some(Input { t, desc: format!("offsets {od_:?} {vals:?}") })
    };
    let mode = rng.arg(&["sum", "mean", "max", "bogus"], 3);
    let max_norm = rng.arg(&[None, Some(1.0), Some(f64::NAN), Some(-1.0)], 2);
    let norm_type = rng.arg(&[2.0, 0.0, f64::NAN], 1);
    let (sgf, sparse, ilo) = (rng.coin(), rng.coin(), rng.coin());
    // (per-sample weights: torch's "sum" mode only)
    let psw = if rng.coin() || (rng.tame && mode != "sum") {
        None
    } else {
        Some(shaped_as(rng, bag_in.t.dims(), weight.t.dtype()))
    };
    s.call(
        "embedding_bag",
        || {
            format!(
                "{}, {}, {}, max_norm {max_norm:?}, norm_type {norm_type}, scale_grad {sgf}, {mode:?}, sparse {sparse}, psw {}, include_last_offset {ilo}, padding_idx {pidx:?}",
                bag_in.desc,
                weight.desc,
                od(&offsets),
                od(&psw)
            )
        },
        || {
            F::embedding_bag(
                &bag_in.t,
                &weight.t,
                ot(&offsets),
                max_norm,
                norm_type,
                sgf,
                mode,
                sparse,
                ot(&psw),
                ilo,
                pidx,
            )
        },
    );

    let classes = rng.arg(&[-1i64, 8, 0, 1, 3, -2, i64::MIN, i64::MAX], 2);
    let oh = index(rng, &ishape, 4);
    s.call("one_hot", || format!("{}, {classes}", oh.desc), || F::one_hot(&oh.t, classes));
}

/// Activations, softmaxes, dropout and the in-place variants.
pub(super) fn activations(s: &mut Sweep, rng: &mut Rng) {
    rng.mood();
    let x = if rng.tame { batch(rng, 1) } else { any(rng) };
    let (t, d) = (&x.t, x.desc.as_str());
    let dim = rng.arg(&DIMS, 3);
    let dt =
        rng.arg(&[None, None, Some(DType::F32), Some(DType::I64), Some(DType::Bool), Some(DType::F16)], 3);
    s.call("softmax", || format!("{d}, {dim}, {dt:?}"), || F::softmax(t, dim, dt));
    s.call("log_softmax", || format!("{d}, {dim}, {dt:?}"), || F::log_softmax(t, dim, dt));
    s.call("softmin", || format!("{d}, {dim}, {dt:?}"), || F::softmin(t, dim, dt));
    let tau = rng.arg(&[1.0, 0.5, 0.0, -1.0, f64::NAN, f64::INFINITY, 1e-300], 2);
    let hard = rng.coin();
    s.call(
        "gumbel_softmax",
        || format!("{d}, tau {tau}, hard {hard}, {dim}"),
        || F::gumbel_softmax(t, tau, hard, dim),
    );
    s.call("glu", || format!("{d}, {dim}"), || F::glu(t, dim));
    let (a, b) = (rng.arg(&F64S, 2), rng.arg(&F64S, 2));
    let training = rng.coin();
    let c = t.dims().get(1).copied().unwrap_or(1);
    let pshape = [rng.arg(&[1, c, 3, 2], 2)];
    let pw = shaped(rng, &pshape);
    s.call("prelu", || format!("{d}, {}", pw.desc), || F::prelu(t, &pw.t));
    s.call("rrelu", || format!("{d}, {a}, {b}, {training}"), || F::rrelu(t, a, b, training));
    s.call("hardshrink", || format!("{d}, {a}"), || F::hardshrink(t, a));
    s.call("softshrink", || format!("{d}, {a}"), || F::softshrink(t, a));
    s.call("threshold", || format!("{d}, {a}, {b}"), || F::threshold(t, a, b));
    s.call("hardtanh", || format!("{d}, {a}, {b}"), || F::hardtanh(t, a, b));
    s.call("softplus", || format!("{d}, {a}, {b}"), || F::softplus(t, a, b));
    s.call("elu", || format!("{d}, {a}"), || F::elu(t, a));
    s.call("celu", || format!("{d}, {a}"), || F::celu(t, a));
    s.call("leaky_relu", || format!("{d}, {a}"), || F::leaky_relu(t, a));
    let approx = rng.pick(&["none", "tanh", "bogus", ""]);
    s.call("gelu", || format!("{d}, {approx:?}"), || F::gelu(t, approx));
    s.call("logsigmoid", || d.to_string(), || F::logsigmoid(t));
    s.call("softsign", || d.to_string(), || F::softsign(t));
    s.call("tanhshrink", || d.to_string(), || F::tanhshrink(t));
    s.call("mish", || d.to_string(), || F::mish(t));
    s.call("hardswish", || d.to_string(), || F::hardswish(t));

    // Dropout family: p out of [0, 1] or NaN, every rank.
    let p = rng.arg(&PROBS, 3);
    s.call("dropout", || format!("{d}, {p}, {training}"), || F::dropout(t, p, training));
    s.call("dropout1d", || format!("{d}, {p}, {training}"), || F::dropout1d(t, p, training));
    s.call("dropout2d", || format!("{d}, {p}, {training}"), || F::dropout2d(t, p, training));
    s.call("dropout3d", || format!("{d}, {p}, {training}"), || F::dropout3d(t, p, training));
    s.call("alpha_dropout", || format!("{d}, {p}, {training}"), || F::alpha_dropout(t, p, training));
    s.call(
        "feature_alpha_dropout",
        || format!("{d}, {p}, {training}"),
        || F::feature_alpha_dropout(t, p, training),
    );

    // In place, on a fresh input each (an expanded one overlaps itself).
    let y = if rng.tame { batch(rng, 1) } else { any(rng) };
    let (u, e) = (&y.t, y.desc.as_str());
    match rng.below(11) {
        0 => s.call("relu_", || e.to_string(), || F::relu_(u)),
        1 => s.call("elu_", || format!("{e}, {a}"), || F::elu_(u, a)),
        2 => s.call("leaky_relu_", || format!("{e}, {a}"), || F::leaky_relu_(u, a)),
        3 => s.call("hardtanh_", || format!("{e}, {a}, {b}"), || F::hardtanh_(u, a, b)),
        4 => s.call("selu_", || e.to_string(), || F::selu_(u)),
        5 => s.call("celu_", || format!("{e}, {a}"), || F::celu_(u, a)),
        6 => s.call("threshold_", || format!("{e}, {a}, {b}"), || F::threshold_(u, a, b)),
        7 => s.call("rrelu_", || format!("{e}, {a}, {b}, {training}"), || F::rrelu_(u, a, b, training)),
        8 => s.call("dropout_", || format!("{e}, {p}, {training}"), || F::dropout_(u, p, training)),
        9 => {
            s.call("alpha_dropout_", || format!("{e}, {p}, {training}"), || F::alpha_dropout_(u, p, training))
        }
        _ => s.call(
            "feature_alpha_dropout_",
            || format!("{e}, {p}, {training}"),
            || F::feature_alpha_dropout_(u, p, training),
        ),
    }
}

/// Scaled dot-product attention and the functional multi-head attention.
pub(super) fn attention(s: &mut Sweep, rng: &mut Rng) {
    rng.mood();
    let (b, h, l, e) =
        (rng.arg(&[1usize, 2, 0], 2), rng.pick(&[1usize, 2, 4]), rng.arg(&[1usize, 3, 0], 2), 4);
    let hk = rng.arg(&[h, h, 1, 3], 2);
    let sl = rng.arg(&[2usize, 3, 0], 2);
    let q = shaped(rng, &[b, h, l, e]);
    let k = shaped_as(rng, &[b, hk, sl, e], q.t.dtype());
    let vshape = [b, hk, sl, rng.pick(&[e, 2])];
    let v = shaped_as(rng, &vshape, q.t.dtype());
    let m = if rng.coin() { None } else { Some(mask(rng, &[l, sl])) };
    let dp = rng.arg(&[0.0, 0.0, 0.5, 1.0, -1.0, f64::NAN], 4);
    let causal = rng.coin();
    let scale =
        rng.arg(&[None, None, Some(0.5), Some(f64::NAN), Some(0.0), Some(-1.0), Some(f64::INFINITY)], 3);
    let gqa = rng.coin();
    s.call(
        "scaled_dot_product_attention",
        || {
            format!(
                "{}, {}, {}, {}, {dp}, causal {causal}, scale {scale:?}, gqa {gqa}",
                q.desc,
                k.desc,
                v.desc,
                od(&m)
            )
        },
        || F::scaled_dot_product_attention(&q.t, &k.t, &v.t, ot(&m), dp, causal, scale, gqa),
    );

    // multi_head_attention_forward: [L, N, E] query, packed or separate projections.
    let ed = rng.arg(&[4usize, 4, 6, 0], 3);
    let heads = rng.arg(&[1usize, 2, 2, 3, 0, usize::MAX], 3);
    let check = rng.arg(&[ed, ed, ed + 1], 2);
    let n = rng.pick(&[1usize, 2]);
    let separate = rng.one_in(3);
    let qm = shaped(rng, &[l.max(1), n, ed]);
    let km = shaped_as(rng, &[sl.max(1), n, ed], qm.t.dtype());
    let vm = shaped_as(rng, &[sl.max(1), n, ed], qm.t.dtype());
    // (tame: the packed projection unless separate ones are used, both key/value biases or none)
    let ipw = if rng.tame && !separate {
        Some(shaped_as(rng, &[3 * ed, ed], qm.t.dtype()))
    } else {
        maybe(rng, &[3 * ed, ed], qm.t.dtype())
    };
    let ipb = maybe(rng, &[3 * ed], qm.t.dtype());
    let (bk, bv) = if rng.coin() {
        (None, None)
    } else if rng.tame {
        (Some(shaped_as(rng, &[1, 1, ed], qm.t.dtype())), Some(shaped_as(rng, &[1, 1, ed], qm.t.dtype())))
    } else {
        (Some(shaped_as(rng, &[1, 1, ed], qm.t.dtype())), maybe(rng, &[1, 1, ed], qm.t.dtype()))
    };
    let opw = shaped_as(rng, &[ed, ed], qm.t.dtype());
    let opb = maybe(rng, &[ed], qm.t.dtype());
    let zero_attn = rng.coin();
    let kpm = if rng.coin() { None } else { Some(mask(rng, &[n, sl.max(1)])) };
    let am = if rng.coin() { None } else { Some(mask(rng, &[l.max(1), sl.max(1)])) };
    let (qw, kw, vw) = if separate && rng.tame {
        let d = qm.t.dtype();
        (
            Some(shaped_as(rng, &[ed, ed], d)),
            Some(shaped_as(rng, &[ed, ed], d)),
            Some(shaped_as(rng, &[ed, ed], d)),
        )
    } else if separate {
        (
            maybe(rng, &[ed, ed], qm.t.dtype()),
            maybe(rng, &[ed, ed], qm.t.dtype()),
            maybe(rng, &[ed, ed], qm.t.dtype()),
        )
    } else {
        (None, None, None)
    };
    let hd = if heads == 0 || heads == usize::MAX { 1 } else { (ed / heads).max(1) };
    let sk = if rng.odd(4) {
        Some(shaped_as(rng, &[n * heads.min(4), sl.max(1), hd], qm.t.dtype()))
    } else {
        None
    };
    let (training, need, avg, causal2) = (rng.coin(), rng.coin(), rng.coin(), rng.one_in(4));
    let args = || {
        format!(
            "q {}, k {}, v {}, embed_dim_to_check {check}, heads {heads}, in_proj {} + {}, bias_k {}, bias_v {}, \
             zero_attn {zero_attn}, dropout {dp}, out_proj {} + {}, training {training}, key_padding_mask {}, \
             need_weights {need}, attn_mask {}, separate {separate} ({}, {}, {}), static_k {}, average {avg}, \
             is_causal {causal2}",
            qm.desc,
            km.desc,
            vm.desc,
            od(&ipw),
            od(&ipb),
            od(&bk),
            od(&bv),
            opw.desc,
            od(&opb),
            od(&kpm),
            od(&am),
            od(&qw),
            od(&kw),
            od(&vw),
            od(&sk)
        )
    };
    s.call("multi_head_attention_forward", args, || {
        let opts = MhaForwardOptions {
            training,
            key_padding_mask: ot(&kpm),
            need_weights: need,
            attn_mask: ot(&am),
            use_separate_proj_weight: separate,
            q_proj_weight: ot(&qw),
            k_proj_weight: ot(&kw),
            v_proj_weight: ot(&vw),
            static_k: ot(&sk),
            static_v: ot(&sk),
            average_attn_weights: avg,
            is_causal: causal2,
        };
        F::multi_head_attention_forward(
            &qm.t,
            &km.t,
            &vm.t,
            check,
            heads,
            ot(&ipw),
            ot(&ipb),
            ot(&bk),
            ot(&bv),
            zero_attn,
            dp,
            &opw.t,
            ot(&opb),
            &opts,
        )
    });
}

/// RNN cells and the sequence functions with mismatched sizes.
pub(super) fn recurrent(s: &mut Sweep, rng: &mut Rng) {
    rng.mood();
    let (bsz, i, h) = (rng.arg(&[1usize, 2, 0], 2), 3usize, rng.arg(&[4usize, 4, 1, 0], 3));
    let d = dtype(rng);
    // Cells: each with its own gate count (wild: sometimes another one's).
    for (name, own) in [("lstm_cell", 4usize), ("gru_cell", 3), ("rnn_tanh_cell", 1), ("rnn_relu_cell", 1)] {
        let gates = rng.arg(&[own, own, own, 4, 3, 1], 3);
        let x = shaped_as(rng, &[bsz, i], d);
        let hx = shaped_as(rng, &[bsz, h], d);
        let cx = shaped_as(rng, &[bsz, h], d);
        let w_ih = shaped_as(rng, &[gates * h, i], d);
        let w_hh = shaped_as(rng, &[gates * h, h], d);
        let (b_ih, b_hh) = (maybe(rng, &[gates * h], d), maybe(rng, &[gates * h], d));
        let args = || {
            format!(
                "{}, h {}, c {}, w_ih {}, w_hh {}, b_ih {}, b_hh {}",
                x.desc,
                hx.desc,
                cx.desc,
                w_ih.desc,
                w_hh.desc,
                od(&b_ih),
                od(&b_hh)
            )
        };
        let (b1, b2) = (ot(&b_ih), ot(&b_hh));
        s.call(name, args, || match own {
            4 => F::lstm_cell(&x.t, (&hx.t, &cx.t), &w_ih.t, &w_hh.t, b1, b2).map(|_| ()),
            3 => F::gru_cell(&x.t, &hx.t, &w_ih.t, &w_hh.t, b1, b2).map(|_| ()),
            _ if name == "rnn_tanh_cell" => {
                F::rnn_tanh_cell(&x.t, &hx.t, &w_ih.t, &w_hh.t, b1, b2).map(|_| ())
            }
            _ => F::rnn_relu_cell(&x.t, &hx.t, &w_ih.t, &w_hh.t, b1, b2).map(|_| ()),
        });
    }

    // Sequences: flat parameter lists of a wrong length or shapes, bad layer counts.
    let t_len = rng.arg(&[2usize, 1, 0], 2);
    let layers = rng.arg(&[1usize, 1, 2, 0, usize::MAX], 3);
    let (bidir, bias, batch_first, train) = (rng.one_in(3), rng.coin(), rng.one_in(4), rng.coin());
    let seq =
        if batch_first { shaped_as(rng, &[bsz, t_len, i], d) } else { shaped_as(rng, &[t_len, bsz, i], d) };
    let dirs = if bidir { 2 } else { 1 };
    let drop = rng.arg(&PROBS, 3);
    let h0 = shaped_as(rng, &[layers.min(2) * dirs, bsz, h], d);
    let c0 = shaped_as(rng, &[layers.min(2) * dirs, bsz, h], d);
    for (name, own) in [("lstm", 4usize), ("gru", 3), ("rnn_tanh", 1), ("rnn_relu", 1)] {
        let gates = rng.arg(&[own, own, own, 4, 3, 1], 3);
        let mut params = Vec::new();
        for layer in 0..layers.min(2) * dirs {
            let input = if layer < dirs { i } else { h * dirs };
            params.push(shaped_as(rng, &[gates * h, input], d));
            params.push(shaped_as(rng, &[gates * h, h], d));
            if bias {
                params.push(shaped_as(rng, &[gates * h], d));
                params.push(shaped_as(rng, &[gates * h], d));
            }
        }
        match rng.arg(&[2, 0, 1, 3], 1) {
            0 if !params.is_empty() => {
                params.pop();
            }
            1 => params.push(any(rng)),
            _ => {}
        }
        let ps: Vec<Tensor> = params.iter().map(|p| p.t.clone()).collect();
        let pdesc: Vec<&str> = params.iter().map(|p| p.desc.as_str()).collect();
        let args = || {
            format!(
                "{}, h0 {}, c0 {}, params {pdesc:?}, bias {bias}, layers {layers}, dropout {drop}, train {train}, \
                 bidirectional {bidir}, batch_first {batch_first}",
                seq.desc,
                h0.desc,
                c0.desc
            )
        };
        let hxs = [h0.t.clone(), c0.t.clone()];
        let (x, h0) = (&seq.t, &h0.t);
        s.call(name, args, || match name {
            "lstm" => F::lstm(x, &hxs, &ps, bias, layers, drop, train, bidir, batch_first).map(|_| ()),
            "gru" => F::gru(x, h0, &ps, bias, layers, drop, train, bidir, batch_first).map(|_| ()),
            "rnn_tanh" => F::rnn_tanh(x, h0, &ps, bias, layers, drop, train, bidir, batch_first).map(|_| ()),
            _ => F::rnn_relu(x, h0, &ps, bias, layers, drop, train, bidir, batch_first).map(|_| ()),
        });
    }
}

/// Cosine similarity, pairwise distance, cdist.
pub(super) fn distances(s: &mut Sweep, rng: &mut Rng) {
    rng.mood();
    let x1 = if rng.tame { shaped(rng, &[2, 3]) } else { any(rng) };
    let x2 = if rng.tame || rng.coin() { shaped(rng, x1.t.dims()) } else { any(rng) };
    let dim = rng.arg(&DIMS, 3);
    let eps = rng.arg(&EPSS, 2);
    let p = rng.arg(&PNORMS, 4);
    let keep = rng.coin();
    s.call(
        "cosine_similarity",
        || format!("{}, {}, {dim}, {eps}", x1.desc, x2.desc),
        || F::cosine_similarity(&x1.t, &x2.t, dim, eps),
    );
    s.call(
        "pairwise_distance",
        || format!("{}, {}, p {p}, {eps}, keepdim {keep}", x1.desc, x2.desc),
        || F::pairwise_distance(&x1.t, &x2.t, p, eps, keep),
    );
    s.call("cdist", || format!("{}, {}, p {p}", x1.desc, x2.desc), || x1.t.cdist(&x2.t, p));
}
