//! A randomized parity sweep of `oxtorch_nn::functional` and the convolution layers against torch
//! 2.15 (values from nn/tests/make_functional_fuzz_golden.py, fixed seed): convolutions (functional, and
//! the `Conv*d` layers for the non-zero padding modes), transposed convolutions, max/avg/adaptive/
//! lp pooling, interpolate, pad, the normalisations, softmax, embeddings, one_hot, pixel
//! (un)shuffle, unfold/fold, grid_sample/affine_grid, scaled_dot_product_attention, the distances
//! and the losses, in float32 and float64, some inputs non-contiguous.
//!
//! Each case compares the output shapes, dtypes and values, then the gradients of
//! `sum_k (out_k * cot_k).sum()` w.r.t. the differentiated inputs; where torch raised, the call
//! (or its backward pass) must fail. Every mismatch is collected and the test fails once, listing
//! them all. The root test `tests/xla_nnfuzz.rs` replays the same cases on `xla:0` ([`replay`]).

use std::panic::{catch_unwind, AssertUnwindSafe};

use oxtorch_nn::functional::{self as F, EmbeddingOptions, InterpolateOptions};
use oxtorch_nn::{ConvNd, ConvOptions, Forward};
use oxtorch_tensor::{DType, Device, Error, Padding, Result, Tensor};

use super::golden_case::{float64, int64, T};

/// One randomized case: see the generator's docstring.
struct Case {
    id: usize,
    op: &'static str,
    /// `k=v;k=v` (lists comma-separated, `none` for `None`)
    params: &'static str,
    /// float32 (else float64)
    f32: bool,
    /// the float inputs, `(name, values)` (stored transposed when named in `tr=`)
    floats: &'static [(&'static str, T)],
    /// the integer and boolean inputs as whole floats
    ints: &'static [(&'static str, T)],
    /// torch's outputs
    outs: &'static [T],
    /// the cotangents of the first `cots.len()` outputs
    cots: &'static [T],
    /// `(input name, gradient)`
    grads: &'static [(&'static str, T)],
    /// torch's error message, when it raised
    err: Option<&'static str>,
}

include!("functional_fuzz_golden.rs");

/// A case's parameters.
struct P(Vec<(&'static str, &'static str)>);

impl P {
    fn parse(s: &'static str) -> P {
        P(s.split(';').filter(|kv| !kv.is_empty()).map(|kv| kv.split_once('=').expect("k=v")).collect())
    }

    fn opt(&self, k: &str) -> Option<&'static str> {
        self.0.iter().find(|(n, _)| *n == k).map(|(_, v)| *v).filter(|v| *v != "none")
    }

    /// The raw value (`"none"` included: a reduction or a mask kind may be named so).
    fn s(&self, k: &str) -> &'static str {
        self.0.iter().find(|(n, _)| *n == k).map(|(_, v)| *v).unwrap_or_else(|| panic!("no parameter {k}"))
    }

    fn us(&self, k: &str) -> Vec<usize> {
        self.s(k).split(',').map(|v| v.parse().unwrap()).collect()
    }

    fn ous(&self, k: &str) -> Option<Vec<usize>> {
        self.opt(k).map(|_| self.us(k))
    }

    fn is(&self, k: &str) -> Vec<isize> {
        self.s(k).split(',').map(|v| v.parse().unwrap()).collect()
    }

    fn u(&self, k: &str) -> usize {
        self.s(k).parse().unwrap()
    }

    fn i(&self, k: &str) -> i64 {
        self.s(k).parse().unwrap()
    }

    fn oi(&self, k: &str) -> Option<i64> {
        self.opt(k).map(|v| v.parse().unwrap())
    }

    fn f(&self, k: &str) -> f64 {
        self.s(k).parse().unwrap()
    }

    fn of(&self, k: &str) -> Option<f64> {
        self.opt(k).map(|v| v.parse().unwrap())
    }

    fn fs(&self, k: &str) -> Option<Vec<f64>> {
        self.opt(k).map(|v| v.split(',').map(|x| x.parse().unwrap()).collect())
    }

    fn b(&self, k: &str) -> bool {
        self.s(k) == "true"
    }

    fn ob(&self, k: &str) -> Option<bool> {
        self.opt(k).map(|v| v == "true")
    }

    /// a list of one value repeated over `n` dims
    fn dims(&self, k: &str, n: usize) -> Vec<usize> {
        let v = self.us(k);
        if v.len() == 1 {
            vec![v[0]; n]
        } else {
            v
        }
    }
}

/// A case's input tensors: the float leaves, the views the op sees, the integer inputs.
struct Env {
    leaves: Vec<(&'static str, Tensor)>,
    views: Vec<(&'static str, Tensor)>,
    dtype: DType,
}

impl Env {
    fn o(&self, k: &str) -> Option<&Tensor> {
        self.views.iter().find(|(n, _)| *n == k).map(|(_, t)| t)
    }

    fn t(&self, k: &str) -> &Tensor {
        self.o(k).unwrap_or_else(|| panic!("no input {k}"))
    }
}

/// The case's inputs on `device`.
fn build(c: &Case, p: &P, device: Device) -> Env {
    let dtype = if c.f32 { DType::F32 } else { DType::F64 };
    let tr: Vec<&str> = p.opt("tr").map(|v| v.split(',').collect()).unwrap_or_default();
    let mut leaves = Vec::new();
    let mut views = Vec::new();
    for (k, v) in c.floats {
        let leaf = float64(v)
            .to((device, dtype))
            .unwrap()
            .requires_grad_(c.grads.iter().any(|(n, _)| n == k))
            .unwrap();
        let view = if tr.contains(k) { leaf.transpose(-1, -2).unwrap() } else { leaf.clone() };
        leaves.push((*k, leaf));
        views.push((*k, view));
    }
    for (k, v) in c.ints {
        views.push((*k, int64(v).to(device).unwrap()));
    }
    Env { leaves, views, dtype }
}

/// torch's `Conv{N}d` layer with the case's tensors as its weight and bias.
fn conv_module<const N: usize>(p: &P, e: &Env) -> Result<Vec<Tensor>> {
    let padding = match p.s("padding") {
        s @ ("same" | "valid") => s.parse::<Padding>()?,
        _ => Padding::Explicit(p.dims("padding", N)),
    };
    let options = ConvOptions {
        stride: p.dims("stride", N),
        padding,
        dilation: p.dims("dilation", N),
        groups: p.u("groups"),
        bias: p.b("bias"),
        padding_mode: p.s("padding_mode"),
        dtype: e.dtype,
    };
    let mut m = ConvNd::<N>::new(p.u("cin"), p.u("cout"), &p.us("kernel"), options)?;
    m.weight = e.t("w").clone();
    m.bias = e.o("b").cloned();
    Ok(vec![m.forward(e.t("x"))?])
}

/// A single output.
fn one(t: Tensor) -> Result<Vec<Tensor>> {
    Ok(vec![t])
}

/// Runs the case's op with oxtorch.
fn run(c: &Case, p: &P, e: &Env) -> Result<Vec<Tensor>> {
    let x = move || e.t("x");
    let red = move || p.s("reduction");
    match c.op {
        "conv" => {
            let nd = p.u("nd");
            let padding = match p.s("padding") {
                s @ ("same" | "valid") => s.parse::<Padding>()?,
                _ => Padding::Explicit(p.dims("padding", nd)),
            };
            let (s, d, g) = (p.dims("stride", nd), p.dims("dilation", nd), p.u("groups"));
            let (w, b) = (e.t("w"), e.o("b"));
            one(match nd {
                1 => F::conv1d(x(), w, b, &s, padding, &d, g)?,
                2 => F::conv2d(x(), w, b, &s, padding, &d, g)?,
                _ => F::conv3d(x(), w, b, &s, padding, &d, g)?,
            })
        }
        "conv_module" => match p.u("nd") {
            1 => conv_module::<1>(p, e),
            2 => conv_module::<2>(p, e),
            _ => conv_module::<3>(p, e),
        },
        "conv_transpose" => {
            let nd = p.u("nd");
            let (s, pad, op) = (p.dims("stride", nd), p.dims("padding", nd), p.dims("output_padding", nd));
            let (d, g) = (p.dims("dilation", nd), p.u("groups"));
            let (w, b) = (e.t("w"), e.o("b"));
            one(match nd {
                1 => F::conv_transpose1d(x(), w, b, &s, &pad, &op, g, &d)?,
                2 => F::conv_transpose2d(x(), w, b, &s, &pad, &op, g, &d)?,
                _ => F::conv_transpose3d(x(), w, b, &s, &pad, &op, g, &d)?,
            })
        }
        "max_pool" => {
            let (k, s, pad, d) = (p.us("kernel"), p.ous("stride"), p.us("padding"), p.us("dilation"));
            let (s, ceil) = (s.as_deref(), p.b("ceil_mode"));
            if p.b("return_indices") {
                let (y, i) = match p.u("nd") {
                    1 => F::max_pool1d_with_indices(x(), &k, s, &pad, &d, ceil)?,
                    2 => F::max_pool2d_with_indices(x(), &k, s, &pad, &d, ceil)?,
                    _ => F::max_pool3d_with_indices(x(), &k, s, &pad, &d, ceil)?,
                };
                Ok(vec![y, i])
            } else {
                one(match p.u("nd") {
                    1 => F::max_pool1d(x(), &k, s, &pad, &d, ceil)?,
                    2 => F::max_pool2d(x(), &k, s, &pad, &d, ceil)?,
                    _ => F::max_pool3d(x(), &k, s, &pad, &d, ceil)?,
                })
            }
        }
        "avg_pool" => {
            let (k, s, pad) = (p.us("kernel"), p.ous("stride"), p.us("padding"));
            let (s, ceil, cip) = (s.as_deref(), p.b("ceil_mode"), p.b("count_include_pad"));
            let dov = p.oi("divisor_override");
            one(match p.u("nd") {
                1 => F::avg_pool1d(x(), &k, s, &pad, ceil, cip)?,
                2 => F::avg_pool2d(x(), &k, s, &pad, ceil, cip, dov)?,
                _ => F::avg_pool3d(x(), &k, s, &pad, ceil, cip, dov)?,
            })
        }
        "adaptive_avg_pool" => {
            let out = p.us("output_size");
            one(match p.u("nd") {
                1 => F::adaptive_avg_pool1d(x(), out[0])?,
                2 => F::adaptive_avg_pool2d(x(), &out)?,
                _ => F::adaptive_avg_pool3d(x(), &out)?,
            })
        }
        "adaptive_max_pool" => {
            let out = p.us("output_size");
            let (y, i) = match p.u("nd") {
                1 => F::adaptive_max_pool1d_with_indices(x(), out[0])?,
                2 => F::adaptive_max_pool2d_with_indices(x(), &out)?,
                _ => F::adaptive_max_pool3d_with_indices(x(), &out)?,
            };
            Ok(if p.b("return_indices") { vec![y, i] } else { vec![y] })
        }
        "lp_pool" => {
            let (pn, k, s, ceil) = (p.f("norm_type"), p.us("kernel"), p.ous("stride"), p.b("ceil_mode"));
            one(match p.u("nd") {
                1 => F::lp_pool1d(x(), pn, &k, s.as_deref(), ceil)?,
                2 => F::lp_pool2d(x(), pn, &k, s.as_deref(), ceil)?,
                _ => F::lp_pool3d(x(), pn, &k, s.as_deref(), ceil)?,
            })
        }
        "interpolate" => {
            let options = InterpolateOptions {
                align_corners: p.ob("align_corners"),
                recompute_scale_factor: p.ob("recompute_scale_factor"),
                antialias: p.b("antialias"),
            };
            let (size, sf) = (p.ous("size"), p.fs("scale_factor"));
            one(F::interpolate_with(x(), size.as_deref(), sf.as_deref(), p.s("mode"), options)?)
        }
        "pad" => one(F::pad(x(), &p.is("pad"), p.s("mode"), p.of("value"))?),
        "layer_norm" => one(F::layer_norm(x(), &p.us("normalized_shape"), e.o("w"), e.o("b"), p.f("eps"))?),
        "rms_norm" => one(F::rms_norm(x(), &p.us("normalized_shape"), e.o("w"), p.of("eps"))?),
        "group_norm" => one(F::group_norm(x(), p.u("num_groups"), e.o("w"), e.o("b"), p.f("eps"))?),
        "batch_norm" => {
            let (rm, rv) = (e.o("rm"), e.o("rv"));
            let (training, mom, eps) = (p.b("training"), p.f("momentum"), p.f("eps"));
            let y = F::batch_norm(x(), rm, rv, e.o("w"), e.o("b"), training, mom, eps)?;
            let mut outs = vec![y];
            outs.extend(rm.cloned());
            outs.extend(rv.cloned());
            Ok(outs)
        }
        "instance_norm" => {
            let (rm, rv) = (e.o("rm"), e.o("rv"));
            let (uis, mom, eps) = (p.b("use_input_stats"), p.f("momentum"), p.f("eps"));
            let y = F::instance_norm(x(), rm, rv, e.o("w"), e.o("b"), uis, mom, eps)?;
            let mut outs = vec![y];
            outs.extend(rm.cloned());
            outs.extend(rv.cloned());
            Ok(outs)
        }
        "local_response_norm" => {
            one(F::local_response_norm(x(), p.u("size"), p.f("alpha"), p.f("beta"), p.f("k"))?)
        }
        "softmax" => one(F::softmax(x(), p.i("dim") as isize, None)?),
        "log_softmax" => one(F::log_softmax(x(), p.i("dim") as isize, None)?),
        "embedding" => {
            let w = e.t("w");
            let renorm = p.of("max_norm").is_some();
            let options = EmbeddingOptions {
                padding_idx: p.oi("padding_idx"),
                max_norm: p.of("max_norm"),
                norm_type: p.f("norm_type"),
                ..Default::default()
            };
            let y = F::embedding_with(e.t("idx"), w, options)?;
            Ok(if renorm { vec![y, w.detach()] } else { vec![y] })
        }
        "embedding_bag" => one(F::embedding_bag(
            e.t("input"),
            e.t("w"),
            e.o("offsets"),
            None,
            2.0,
            false,
            p.s("mode"),
            false,
            e.o("psw"),
            p.b("include_last_offset"),
            p.oi("padding_idx"),
        )?),
        "one_hot" => one(F::one_hot(e.t("idx"), p.i("num_classes"))?),
        "pixel_shuffle" => one(F::pixel_shuffle(x(), p.i("factor"))?),
        "pixel_unshuffle" => one(F::pixel_unshuffle(x(), p.i("factor"))?),
        "unfold" => {
            one(F::unfold(x(), &p.us("kernel"), &p.us("dilation"), &p.us("padding"), &p.us("stride"))?)
        }
        "fold" => one(F::fold(
            x(),
            &p.us("output_size"),
            &p.us("kernel"),
            &p.us("dilation"),
            &p.us("padding"),
            &p.us("stride"),
        )?),
        "grid_sample" => {
            one(F::grid_sample(x(), e.t("grid"), p.s("mode"), p.s("padding_mode"), p.b("align_corners"))?)
        }
        "affine_grid" => one(F::affine_grid(e.t("theta"), &p.us("size"), p.b("align_corners"))?),
        "sdpa" => {
            let mask = match p.s("mask") {
                "bool" => Some(e.t("mask").to_dtype(DType::Bool)?),
                "float" => Some(e.t("mask").clone()),
                _ => None,
            };
            let (causal, scale, gqa) = (p.b("is_causal"), p.of("scale"), p.b("enable_gqa"));
            let (q, k, v) = (e.t("q"), e.t("k"), e.t("v"));
            one(F::scaled_dot_product_attention(q, k, v, mask.as_ref(), 0.0, causal, scale, gqa)?)
        }
        "cosine_similarity" => {
            one(F::cosine_similarity(e.t("x1"), e.t("x2"), p.i("dim") as isize, p.f("eps"))?)
        }
        "pairwise_distance" => {
            one(F::pairwise_distance(e.t("x1"), e.t("x2"), p.f("p"), p.f("eps"), p.b("keepdim"))?)
        }
        "cdist" => one(e.t("x1").cdist(e.t("x2"), p.f("p"))?),
        "cross_entropy" => one(F::cross_entropy(
            x(),
            e.t("target"),
            e.o("weight"),
            p.i("ignore_index"),
            red(),
            p.f("label_smoothing"),
        )?),
        "nll_loss" => one(F::nll_loss(x(), e.t("target"), e.o("weight"), p.i("ignore_index"), red())?),
        "bce" => one(F::binary_cross_entropy(x(), e.t("target"), e.o("weight"), red())?),
        "bce_with_logits" => one(F::binary_cross_entropy_with_logits(
            x(),
            e.t("target"),
            e.o("weight"),
            red(),
            e.o("pos_weight"),
        )?),
        "kl_div" => one(F::kl_div(x(), e.t("target"), red(), p.b("log_target"))?),
        "huber" => one(F::huber_loss(x(), e.t("target"), red(), p.f("beta"))?),
        "smooth_l1" => one(F::smooth_l1_loss(x(), e.t("target"), red(), p.f("beta"))?),
        "mse" => one(F::mse_loss(x(), e.t("target"), red())?),
        "l1" => one(F::l1_loss(x(), e.t("target"), red())?),
        "poisson_nll" => {
            one(F::poisson_nll_loss(x(), e.t("target"), p.b("log_input"), p.b("full"), 1e-8, red())?)
        }
        "gaussian_nll" => {
            one(F::gaussian_nll_loss(x(), e.t("target"), e.t("var"), p.b("full"), p.f("eps"), red())?)
        }
        "soft_margin" => one(F::soft_margin_loss(x(), e.t("target"), red())?),
        "margin_ranking" => {
            one(F::margin_ranking_loss(e.t("x1"), e.t("x2"), e.t("y"), p.f("margin"), red())?)
        }
        "triplet" => one(F::triplet_margin_loss(
            e.t("a"),
            e.t("p"),
            e.t("n"),
            p.f("margin"),
            p.f("p"),
            p.f("eps"),
            p.b("swap"),
            red(),
        )?),
        "cosine_embedding" => {
            one(F::cosine_embedding_loss(e.t("x1"), e.t("x2"), e.t("y"), p.f("margin"), red())?)
        }
        "hinge_embedding" => one(F::hinge_embedding_loss(x(), e.t("y"), p.f("margin"), red())?),
        "multilabel_margin" => one(F::multilabel_margin_loss(x(), e.t("target"), red())?),
        "multi_margin" => {
            one(F::multi_margin_loss(x(), e.t("target"), p.i("p"), p.f("margin"), e.o("weight"), red())?)
        }
        "multilabel_soft_margin" => {
            one(F::multilabel_soft_margin_loss(x(), e.t("target"), e.o("weight"), red())?)
        }
        "ctc_loss" => one(F::ctc_loss(
            e.t("lp"),
            e.t("targets"),
            e.t("il"),
            e.t("tl"),
            p.u("blank"),
            red(),
            p.b("zero_infinity"),
        )?),
        other => Err(Error::msg(format!("functional_fuzz: unknown op {other}"))),
    }
}

/// Compares `got` with torch's `want` (`|x - y| <= tol * (1 + |y|)`, non-finite exactly); `None`
/// when they agree, else a summary.
fn compare(got: &[f64], want: &T, tol: f64) -> Option<String> {
    if got.len() != want.data.len() {
        return Some(format!("numel {} vs torch {}", got.len(), want.data.len()));
    }
    let mut bad = 0;
    let mut first = None;
    let mut worst = 0f64;
    for (i, (x, y)) in got.iter().zip(want.data).enumerate() {
        let ok = if y.is_finite() {
            (x - y).abs() <= tol * (1.0 + y.abs())
        } else {
            x == y || (x.is_nan() && y.is_nan())
        };
        if !ok {
            bad += 1;
            if first.is_none() {
                first = Some((i, *x, *y));
            }
            if x.is_finite() && y.is_finite() {
                worst = worst.max((x - y).abs());
            }
        }
    }
    first.map(|(i, x, y)| {
        format!(
            "{bad}/{} values differ, first [{i}]: got {x}, torch {y}; max abs diff {worst:.3e}",
            got.len()
        )
    })
}

/// Runs case `c` on `device`: its mismatches (empty when it agrees with torch).
fn check(c: &Case, device: Device) -> Vec<String> {
    let p = P::parse(c.params);
    let e = build(c, &p, device);
    let mut bad = Vec::new();
    let tol = if c.f32 { 2e-4 } else { 1e-7 };
    let result = run(c, &p, &e);
    if let Some(want) = c.err {
        if let Ok(outs) = result {
            let dims: Vec<_> = outs.iter().map(|o| o.dims().to_vec()).collect();
            bad.push(format!("torch raised \"{want}\", oxtorch returned outputs of shapes {dims:?}"));
        }
        return bad;
    }
    let outs = match result {
        Ok(outs) => outs,
        Err(err) => {
            bad.push(format!("oxtorch failed: {err}"));
            return bad;
        }
    };
    if outs.len() != c.outs.len() {
        bad.push(format!("{} outputs, torch {}", outs.len(), c.outs.len()));
        return bad;
    }
    let mut shapes_ok = true;
    for (k, (out, want)) in outs.iter().zip(c.outs).enumerate() {
        if out.dims() != want.dims {
            bad.push(format!("out{k}: shape {:?}, torch {:?}", out.dims(), want.dims));
            shapes_ok = false;
            continue;
        }
        let want_float = k < c.cots.len() || !matches!(c.op, "max_pool" | "adaptive_max_pool" | "one_hot");
        let want_dtype = if want_float { e.dtype } else { DType::I64 };
        if out.dtype() != want_dtype {
            bad.push(format!("out{k}: dtype {:?}, torch {want_dtype:?}", out.dtype()));
        }
        match out.to_f64_vec() {
            Ok(v) => {
                if let Some(m) = compare(&v, want, if want_float { tol } else { 0.0 }) {
                    bad.push(format!("out{k}: {m}"));
                }
            }
            Err(err) => bad.push(format!("out{k}: to_f64_vec: {err}")),
        }
    }
    // (the gradients are checked even when the values differ, as long as the shapes agree)
    if !shapes_ok || c.grads.is_empty() || c.cots.is_empty() {
        return bad;
    }
    if let Err(err) = backward(&outs, c) {
        bad.push(format!("backward failed: {err}"));
        return bad;
    }
    for (k, want) in c.grads {
        let leaf = &e.leaves.iter().find(|(n, _)| n == k).expect("a leaf").1;
        let got = match leaf.grad() {
            Some(g) => {
                if g.dims() != want.dims {
                    bad.push(format!("grad {k}: shape {:?}, torch {:?}", g.dims(), want.dims));
                    continue;
                }
                g.to_f64_vec().unwrap_or_default()
            }
            None => vec![0.0; want.data.len()],
        };
        if let Some(m) = compare(&got, want, tol) {
            bad.push(format!("grad {k}: {m}{}", if leaf.grad().is_none() { " (no gradient)" } else { "" }));
        }
    }
    bad
}

/// Backpropagates `sum_k (out_k * cot_k).sum()` over the outputs that have a cotangent.
fn backward(outs: &[Tensor], c: &Case) -> Result<()> {
    let mut loss: Option<Tensor> = None;
    for (out, cot) in outs.iter().zip(c.cots) {
        let term = out.mul(&float64(cot).to((out.device(), out.dtype()))?)?.sum_all()?;
        loss = Some(match loss {
            Some(l) => l.add(&term)?,
            None => term,
        });
    }
    match loss {
        Some(l) => l.backward(),
        None => Ok(()),
    }
}

/// Replays every case on `device`: one line per mismatch with torch.
pub fn replay(device: Device) -> Vec<String> {
    let mut mismatches = Vec::new();
    for c in CASES {
        let found = catch_unwind(AssertUnwindSafe(|| check(c, device))).unwrap_or_else(|panic| {
            let msg = panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_default();
            vec![format!("panicked: {msg}")]
        });
        for m in found {
            let dtype = if c.f32 { "f32" } else { "f64" };
            mismatches.push(format!("case {} {} [{}] ({dtype}): {m}", c.id, c.op, c.params));
        }
    }
    mismatches
}

#[test]
fn nn_functional_random_cases_match_torch() {
    let mismatches = replay(Device::Cpu);
    assert!(
        mismatches.is_empty(),
        "{} mismatches with torch in {} cases:\n{}",
        mismatches.len(),
        CASES.len(),
        mismatches.join("\n")
    );
}
