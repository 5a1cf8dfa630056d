//! The modules sweep: constructors with zero and overflowing sizes and bad options, and forward
//! passes of small well-formed modules on inputs of a wrong rank, size or dtype.

use oxtorch_nn::{Forward, RMSNorm, GRU, RNN};

use super::functional_spatial::padding;
use super::*;

// ---------------------------------------------------------------------------------------------
// Modules
// ---------------------------------------------------------------------------------------------

/// Constructors with zero and overflowing sizes (only pairs whose element counts overflow: a
/// representable terabyte is for the ignored test), bad options.
pub(super) fn constructors(s: &mut Sweep, rng: &mut Rng) {
    rng.mood();
    let pairs = [
        (0usize, 0usize),
        (3, 0),
        (0, 3),
        (3, 2),
        (usize::MAX, 2),
        (2, usize::MAX),
        (1 << 62, 1 << 62),
        (usize::MAX, usize::MAX),
        (1 << 62, 8),
    ];
    let (a, b) = rng.arg(&pairs, 4);
    let bias = rng.coin();
    let dt = rng.arg(&[DType::F32, DType::F64, DType::F16, DType::I64, DType::Bool], 3);
    s.call("Linear::new", || format!("{a}, {b}, {bias}"), || Linear::new(a, b, bias));
    s.call("Linear::with_dtype", || format!("3, 2, {bias}, {dt:?}"), || Linear::with_dtype(3, 2, bias, dt));
    let (ea, eb) = rng.arg(
        &[
            (0usize, 0usize),
            (3, 2),
            (0, 4),
            (3, 0),
            (usize::MAX, 2),
            (2, usize::MAX),
            (1 << 62, 1 << 62),
            (usize::MAX, 0),
        ],
        4,
    );
    let pidx = rng.arg(&[None, Some(0i64), Some(-1), Some(3), Some(-4), Some(i64::MAX), Some(i64::MIN)], 3);
    s.call("Embedding::new", || format!("{ea}, {eb}, {pidx:?}"), || Embedding::new(ea, eb, pidx));

    let (ci, co) = rng.arg(&[(2usize, 4usize), (3, 3), (0, 0), (usize::MAX, 1), (1 << 62, 1 << 62)], 3);
    let kernels: [&[usize]; 7] =
        [&[3], &[2, 3], &[0], &[1, 1, 1], &[usize::MAX, 2], &[1 << 62, 1 << 62], &[]];
    let kernel = rng.arg(&kernels, 3);
    let opts = ConvOptions {
        stride: rng.arg(&[vec![1], vec![2, 1], vec![0], vec![usize::MAX], vec![1, 1, 1], vec![]], 2),
        padding: padding(rng, 2),
        dilation: rng.arg(&[vec![1], vec![2, 2], vec![0], vec![usize::MAX]], 2),
        groups: rng.arg(&[1, 1, 0, 3, usize::MAX], 2),
        bias: rng.coin(),
        padding_mode: rng.arg(&["zeros", "reflect", "replicate", "circular", "bogus"], 4),
        dtype: rng.arg(&[DType::F32, DType::F64, DType::I64], 2),
    };
    let desc = format!("{ci}, {co}, {kernel:?}, {opts:?}");
    s.call("Conv2d::new", || desc.clone(), || Conv2d::new(ci, co, kernel, opts.clone()));

    let (ri, rh) = rng.arg(
        &[(3usize, 4usize), (0, 4), (3, 0), (usize::MAX, 2), (2, usize::MAX / 4), (1 << 62, 1 << 62)],
        3,
    );
    // (at most 2 layers here: a huge count of small layers is a long loop of small allocations)
    let ropts = RnnOptions {
        num_layers: rng.pick(&[0, 1, 2]),
        bias: rng.coin(),
        batch_first: rng.coin(),
        dropout: rng.arg(&PROBS, 3),
        bidirectional: rng.coin(),
        proj_size: rng.arg(&[0, 0, 1, rh, usize::MAX], 2),
    };
    let desc = format!("{ri}, {rh}, {ropts:?}");
    s.call("LSTM::new", || desc.clone(), || LSTM::new(ri, rh, ropts.clone()));
    let gopts = RnnOptions { proj_size: 0, ..ropts.clone() };
    s.call("GRU::new", || desc.clone(), || GRU::new(ri, rh, gopts.clone()));
    let nl = rng.arg(&["tanh", "relu", "bogus"], 2);
    s.call("RNN::new", || format!("{desc}, {nl:?}"), || RNN::new(ri, rh, nl, gopts.clone()));

    let ed = rng.arg(&[4usize, 6, 0, usize::MAX, 1 << 62, usize::MAX / 3 + 1], 2);
    let heads = rng.arg(&[1usize, 2, 0, 3, usize::MAX], 2);
    let mopts = MultiheadAttentionOptions {
        dropout: rng.arg(&PROBS, 3),
        bias: rng.coin(),
        kdim: rng.arg(&[None, None, Some(3), Some(0), Some(usize::MAX)], 3),
        vdim: rng.arg(&[None, None, Some(5), Some(0), Some(usize::MAX)], 3),
        batch_first: rng.coin(),
        add_bias_kv: rng.coin(),
        add_zero_attn: rng.coin(),
    };
    let desc = format!("{ed}, {heads}, {mopts:?}");
    s.call("MultiheadAttention::new", || desc.clone(), || MultiheadAttention::new(ed, heads, mopts.clone()));

    let dm = rng.arg(&[4usize, 6, 0, usize::MAX], 2);
    let topts = TransformerLayerOptions {
        dim_feedforward: rng.arg(&[8, 0, usize::MAX, usize::MAX / 2], 2),
        dropout: rng.arg(&PROBS, 3),
        activation: rng.arg(&["relu", "gelu", "bogus", ""], 2),
        layer_norm_eps: rng.arg(&EPSS, 2),
        batch_first: rng.coin(),
        norm_first: rng.coin(),
        bias: rng.coin(),
        activation_fn: None,
    };
    let desc = format!("{dm}, {heads}, {topts:?}");
    s.call(
        "TransformerEncoderLayer::new",
        || desc.clone(),
        || TransformerEncoderLayer::new(dm, heads, topts.clone()),
    );

    let nf = rng.arg(&[3usize, 0, usize::MAX], 2);
    let eps = rng.arg(&EPSS, 2);
    let mom = rng.arg(&[None, Some(0.1), Some(f64::NAN), Some(-1.0), Some(2.0)], 2);
    let (affine, track) = (rng.coin(), rng.coin());
    s.call(
        "BatchNorm::new",
        || format!("{nf}, {eps}, {mom:?}, {affine}, {track}"),
        || BatchNorm::new(nf, eps, mom, affine, track),
    );
    let (g, ch) = (rng.arg(&[1usize, 2, 0, 3, usize::MAX], 2), rng.arg(&[4usize, 0, 3, usize::MAX], 2));
    s.call("GroupNorm::new", || format!("{g}, {ch}, {eps}, {affine}"), || GroupNorm::new(g, ch, eps, affine));
    let ns: [&[usize]; 6] = [&[4], &[2, 3], &[], &[0], &[usize::MAX], &[1 << 62, 1 << 62]];
    let ns = rng.arg(&ns, 2);
    s.call(
        "LayerNorm::new",
        || format!("{ns:?}, {eps}, {affine}, {track}"),
        || LayerNorm::new(ns, eps, affine, track),
    );
    let reps = rng.pick(&[None, Some(eps)]);
    s.call("RMSNorm::new", || format!("{ns:?}, {reps:?}, {affine}"), || RMSNorm::new(ns, reps, affine));
}

/// Small well-formed modules, built once per round.
pub(super) struct Modules {
    pub(super) linear: Linear,
    conv: Conv2d,
    lstm: LSTM,
    gru: GRU,
    mha: MultiheadAttention,
    pub(super) encoder: TransformerEncoderLayer,
    pub(super) embedding: Embedding,
    pub(super) batch_norm: BatchNorm,
    layer_norm: LayerNorm,
    group_norm: GroupNorm,
}

impl Modules {
    pub(super) fn new() -> Result<Modules> {
        let conv_opts = ConvOptions { padding: Padding::Explicit(vec![1]), ..Default::default() };
        let enc_opts = TransformerLayerOptions { dim_feedforward: 8, dropout: 0.0, ..Default::default() };
        Ok(Modules {
            linear: Linear::new(3, 2, true)?,
            conv: Conv2d::new(2, 4, &[3], conv_opts)?,
            lstm: LSTM::new(3, 4, RnnOptions { num_layers: 2, ..Default::default() })?,
            gru: GRU::new(3, 4, RnnOptions { bidirectional: true, ..Default::default() })?,
            mha: MultiheadAttention::new(4, 2, MultiheadAttentionOptions::default())?,
            encoder: TransformerEncoderLayer::new(4, 2, enc_opts)?,
            embedding: Embedding::new(5, 3, Some(0))?,
            batch_norm: BatchNorm::new_2d(2)?,
            layer_norm: LayerNorm::new(&[3], 1e-5, true, true)?,
            group_norm: GroupNorm::new(2, 4, 1e-5, true)?,
        })
    }
}

/// Forward passes on inputs of a wrong rank, size or dtype.
pub(super) fn forwards(s: &mut Sweep, rng: &mut Rng, m: &Modules) {
    rng.mood();
    let x = if !rng.tame && rng.coin() { any(rng) } else { shaped(rng, &[2, 3]) };
    s.call("Linear::forward", || x.desc.clone(), || m.linear.forward(&x.t));
    s.call("LayerNorm::forward", || x.desc.clone(), || m.layer_norm.forward(&x.t));
    let img = if !rng.tame && rng.coin() { batch(rng, 2) } else { shaped(rng, &[1, 2, 4, 4]) };
    s.call("Conv2d::forward", || img.desc.clone(), || m.conv.forward(&img.t));
    s.call("BatchNorm2d::forward", || img.desc.clone(), || m.batch_norm.forward(&img.t));
    let img4 = if !rng.tame && rng.coin() { batch(rng, 2) } else { shaped(rng, &[2, 4, 3, 3]) };
    s.call("GroupNorm::forward", || img4.desc.clone(), || m.group_norm.forward(&img4.t));
    let ishape = rng.pick(&SHAPES);
    let idx = index(rng, ishape, 5);
    s.call("Embedding::forward", || idx.desc.clone(), || m.embedding.forward(&idx.t));

    let sshape = [rng.arg(&[2, 1, 0], 2), rng.pick(&[1, 2]), 3];
    let seq = shaped(rng, &sshape);
    let (bsz, d) = (seq.t.dims().get(1).copied().unwrap_or(1), seq.t.dtype());
    let h0 = shaped_as(rng, &[2, bsz, 4], d);
    let c0 = shaped_as(rng, &[2, bsz, 4], d);
    let with_state = rng.coin();
    s.call(
        "LSTM::forward",
        || format!("{}, state {with_state}: {}, {}", seq.desc, h0.desc, c0.desc),
        || m.lstm.forward(&seq.t, if with_state { Some((&h0.t, &c0.t)) } else { None }),
    );
    s.call(
        "GRU::forward",
        || format!("{}, state {with_state}: {}", seq.desc, h0.desc),
        || m.gru.forward(&seq.t, if with_state { Some(&h0.t) } else { None }),
    );

    let qshape = [rng.arg(&[3, 1, 0], 1), rng.pick(&[1, 2]), 4];
    let q = shaped(rng, &qshape);
    let kshape = [rng.arg(&[2, 3], 1), q.t.dims().get(1).copied().unwrap_or(1), 4];
    let k = shaped_as(rng, &kshape, q.t.dtype());
    let kpm = if rng.coin() { None } else { Some(mask(rng, &[k.t.dims().get(1).copied().unwrap_or(1), 2])) };
    let am = if rng.coin() { None } else { Some(mask(rng, &[3, 2])) };
    let (need, avg) = (rng.coin(), rng.coin());
    s.call(
        "MultiheadAttention::forward",
        || {
            format!(
                "q {}, k=v {}, key_padding_mask {}, need_weights {need}, attn_mask {}, average {avg}",
                q.desc,
                k.desc,
                od(&kpm),
                od(&am)
            )
        },
        || m.mha.forward(&q.t, &k.t, &k.t, ot(&kpm), need, ot(&am), avg),
    );
    // (self-attention: an [L, L] mask and an [N, L] key padding mask)
    let (l, n) = (q.t.dims().first().copied().unwrap_or(1), q.t.dims().get(1).copied().unwrap_or(1));
    let sm = if rng.coin() { None } else { Some(mask(rng, &[l, l])) };
    let skpm = if rng.coin() { None } else { Some(mask(rng, &[n, l])) };
    s.call(
        "TransformerEncoderLayer::forward_masked",
        || format!("{}, mask {}, key_padding_mask {}", q.desc, od(&sm), od(&skpm)),
        || m.encoder.forward_masked(&q.t, ot(&sm), ot(&skpm)),
    );
    let src = if rng.coin() { &q } else { &x };
    s.call("TransformerEncoderLayer::forward", || src.desc.clone(), || m.encoder.forward(&src.t));
}
