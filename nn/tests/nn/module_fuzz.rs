//! A randomized parity sweep of the nn modules against torch 2.15 (values from
//! nn/tests/make_module_fuzz_golden.py, fixed seed): LSTM/GRU/RNN and their cells, MultiheadAttention,
//! the Transformer encoder/decoder layers and a small Transformer, convolutions (with padding
//! modes) and transposed convolutions, BatchNorm and InstanceNorm (training then eval), GroupNorm,
//! LayerNorm, RMSNorm, Embedding, EmbeddingBag, Bilinear, PReLU, Upsample and
//! AdaptiveLogSoftmaxWithLoss, each with random options, in float64.
//!
//! Each case builds the module with torch's options, checks its state-dict keys and shapes against
//! torch's, loads torch's values (strict), runs the forward pass(es) and compares the outputs, the
//! gradients of `sum_k (out_k * cot_k).sum()` w.r.t. the float inputs and every parameter (by
//! state-dict key), and the state dict afterwards (running statistics, `num_batches_tracked`,
//! renormalised embedding rows). Where torch raised, construction or forward must fail. Every
//! mismatch is collected and the test fails once, listing them all.

use std::panic::{catch_unwind, AssertUnwindSafe};

use oxtorch_nn::{
    AdaptiveLogSoftmaxWithLoss, BatchNorm, Bilinear, ConvNd, ConvOptions, ConvTransposeNd,
    ConvTransposeOptions, DecoderMasks, Embedding, EmbeddingBag, EmbeddingBagOptions, Forward, GRUCell,
    GroupNorm, InstanceNorm, LSTMCell, LayerNorm, Module, ModuleExt, MultiheadAttention,
    MultiheadAttentionOptions, PReLU, RMSNorm, RNNCell, RnnOptions, Transformer, TransformerDecoderLayer,
    TransformerEncoderLayer, TransformerLayerOptions, TransformerMasks, TransformerOptions, Upsample, GRU,
    LSTM, RNN,
};
use oxtorch_tensor::{DType, Padding, Result, Tensor};

use super::golden_case::{float64, int64, Inputs, T};

/// One randomized case: see the generator's docstring.
struct Case {
    id: usize,
    module: &'static str,
    /// `k=v;k=v` (lists comma-separated, `none` for `None`)
    params: &'static str,
    /// the differentiated float inputs
    floats: &'static [(&'static str, T)],
    /// the integer inputs and the boolean masks (names ending in `mask`) as whole floats
    ints: &'static [(&'static str, T)],
    /// the float masks (not differentiated)
    masks: &'static [(&'static str, T)],
    /// torch's state dict before the forward pass, in its order (empty when construction raised)
    state: &'static [(&'static str, T)],
    /// torch's outputs
    outs: &'static [T],
    /// one cotangent per output
    cots: &'static [T],
    /// `(input name, gradient)`
    input_grads: &'static [(&'static str, T)],
    /// `(state-dict key, gradient)` for every parameter
    param_grads: &'static [(&'static str, T)],
    /// torch's state dict after the forward pass(es)
    after: &'static [(&'static str, T)],
    /// torch's error message, when it raised
    err: Option<&'static str>,
}

include!("module_fuzz_golden.rs");

/// Relative (and absolute) tolerance: float64 results that may differ in summation order.
const TOL: f64 = 1e-8;

/// A case's parameters.
struct P(Vec<(&'static str, &'static str)>);

impl P {
    fn parse(s: &'static str) -> P {
        P(s.split(';').filter(|kv| !kv.is_empty()).map(|kv| kv.split_once('=').expect("k=v")).collect())
    }

    fn s(&self, k: &str) -> &'static str {
        self.0.iter().find(|(n, _)| *n == k).map(|(_, v)| *v).unwrap_or_else(|| panic!("no parameter {k}"))
    }

    fn opt(&self, k: &str) -> Option<&'static str> {
        Some(self.s(k)).filter(|v| *v != "none")
    }

    fn u(&self, k: &str) -> usize {
        self.s(k).parse().unwrap()
    }

    fn us(&self, k: &str) -> Vec<usize> {
        self.s(k).split(',').map(|v| v.parse().unwrap()).collect()
    }

    fn ou(&self, k: &str) -> Option<usize> {
        self.opt(k).map(|v| v.parse().unwrap())
    }

    fn ous(&self, k: &str) -> Option<Vec<usize>> {
        self.opt(k).map(|_| self.us(k))
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

    fn fs(&self, k: &str) -> Vec<f64> {
        self.s(k).split(',').map(|v| v.parse().unwrap()).collect()
    }

    fn b(&self, k: &str) -> bool {
        match self.s(k) {
            "true" => true,
            "false" => false,
            v => panic!("{k}={v} is not a bool"),
        }
    }

    fn ob(&self, k: &str) -> Option<bool> {
        self.opt(k).map(|_| self.b(k))
    }
}

/// What a replay produced: the outputs, the parameters by name, the state dict afterwards.
struct Got {
    outs: Vec<Tensor>,
    params: Vec<(String, Tensor)>,
    after: Vec<(String, Tensor)>,
}

/// Checks the module's state-dict keys and shapes against torch's, moves it to float64 and loads
/// torch's values (strict). When torch raised at construction (no state dict), only the move.
fn prep<M: Module>(c: &Case, mut m: M, bad: &mut Vec<String>) -> Result<M> {
    if c.state.is_empty() && c.err.is_some() {
        m.double()?;
        return Ok(m);
    }
    let sd = m.state_dict();
    let got: Vec<(String, Vec<usize>)> = sd.iter().map(|(k, t)| (k.to_string(), t.dims().to_vec())).collect();
    let want: Vec<(String, Vec<usize>)> =
        c.state.iter().map(|(k, t)| (k.to_string(), t.dims.to_vec())).collect();
    if got != want {
        bad.push(format!("state-dict keys/shapes: oxtorch {got:?}, torch {want:?}"));
    }
    m.double()?;
    let mut torch_sd = oxtorch_nn::StateDict::new();
    for (k, v) in c.state {
        torch_sd.insert(k, float64(v));
    }
    m.load_state_dict(&torch_sd, true)?;
    Ok(m)
}

/// The parameters and the state dict of `m` after its forward pass(es).
fn finish<M: Module>(m: &M, outs: Vec<Tensor>) -> Got {
    let after = m.state_dict().iter().map(|(k, t)| (k.to_string(), t.clone())).collect();
    Got { outs, params: m.named_parameters(), after }
}

/// A single-input module in eval mode.
fn eval1<M: Module + Forward>(c: &Case, m: M, x: &Tensor, bad: &mut Vec<String>) -> Result<Got> {
    let mut m = prep(c, m, bad)?;
    m.eval();
    let y = m.forward(x)?;
    Ok(finish(&m, vec![y]))
}

/// A normalisation with running statistics: a training-mode pass, then an eval-mode pass.
fn train_eval<M: Module + Forward>(c: &Case, m: M, x: &Tensor, bad: &mut Vec<String>) -> Result<Got> {
    let mut m = prep(c, m, bad)?;
    m.train(true);
    let y1 = m.forward(x)?;
    m.eval();
    let y2 = m.forward(x)?;
    Ok(finish(&m, vec![y1, y2]))
}

fn layer_options(p: &P) -> TransformerLayerOptions {
    TransformerLayerOptions {
        dim_feedforward: p.u("ff"),
        dropout: 0.0,
        activation: p.s("act"),
        layer_norm_eps: p.f("eps"),
        batch_first: p.b("bf"),
        norm_first: p.b("nf"),
        bias: p.b("bias"),
        activation_fn: None,
    }
}

fn conv<const N: usize>(c: &Case, p: &P, x: &Tensor, bad: &mut Vec<String>) -> Result<Got> {
    let padding = match p.s("pad") {
        "same" => Padding::Same,
        "valid" => Padding::Valid,
        _ => Padding::Explicit(p.us("padv")),
    };
    let o = ConvOptions {
        stride: p.us("stride"),
        padding,
        dilation: p.us("dil"),
        groups: p.u("g"),
        bias: p.b("bias"),
        padding_mode: p.s("pm"),
        dtype: DType::F64,
    };
    eval1(c, ConvNd::<N>::new(p.u("cin"), p.u("cout"), &p.us("k"), o)?, x, bad)
}

fn conv_t<const N: usize>(c: &Case, p: &P, x: &Tensor, bad: &mut Vec<String>) -> Result<Got> {
    let o = ConvTransposeOptions {
        stride: p.us("stride"),
        padding: p.us("padv"),
        output_padding: p.us("op"),
        groups: p.u("g"),
        bias: p.b("bias"),
        dilation: p.us("dil"),
        dtype: DType::F64,
    };
    eval1(c, ConvTransposeNd::<N>::new(p.u("cin"), p.u("cout"), &p.us("k"), o)?, x, bad)
}

/// Builds the case's module, loads torch's state and runs it.
fn replay(c: &Case, inp: &Inputs, bad: &mut Vec<String>) -> Result<Got> {
    let p = P::parse(c.params);
    match c.module {
        "LSTM" | "GRU" | "RNN" => {
            let o = RnnOptions {
                num_layers: p.u("L"),
                bias: p.b("bias"),
                batch_first: p.b("bf"),
                dropout: 0.0,
                bidirectional: p.b("bi"),
                proj_size: p.u("proj"),
            };
            let (i, h, x) = (p.u("I"), p.u("H"), inp.t("x"));
            match c.module {
                "LSTM" => {
                    let mut m = prep(c, LSTM::new(i, h, o)?, bad)?;
                    m.eval();
                    let hx = inp.get("h0").map(|h0| (h0, inp.t("c0")));
                    let (out, (hn, cn)) = m.forward(x, hx)?;
                    Ok(finish(&m, vec![out, hn, cn]))
                }
                "GRU" => {
                    let mut m = prep(c, GRU::new(i, h, o)?, bad)?;
                    m.eval();
                    let (out, hn) = m.forward(x, inp.get("h0"))?;
                    Ok(finish(&m, vec![out, hn]))
                }
                _ => {
                    let mut m = prep(c, RNN::new(i, h, p.s("nl"), o)?, bad)?;
                    m.eval();
                    let (out, hn) = m.forward(x, inp.get("h0"))?;
                    Ok(finish(&m, vec![out, hn]))
                }
            }
        }
        "LSTMCell" => {
            let mut m = prep(c, LSTMCell::new(p.u("I"), p.u("H"), p.b("bias"))?, bad)?;
            m.eval();
            let hx = inp.get("h0").map(|h0| (h0, inp.t("c0")));
            let (h, cn) = m.forward(inp.t("x"), hx)?;
            Ok(finish(&m, vec![h, cn]))
        }
        "GRUCell" => {
            let mut m = prep(c, GRUCell::new(p.u("I"), p.u("H"), p.b("bias"))?, bad)?;
            m.eval();
            let h = m.forward(inp.t("x"), inp.get("h0"))?;
            Ok(finish(&m, vec![h]))
        }
        "RNNCell" => {
            let mut m = prep(c, RNNCell::new(p.u("I"), p.u("H"), p.b("bias"), p.s("nl"))?, bad)?;
            m.eval();
            let h = m.forward(inp.t("x"), inp.get("h0"))?;
            Ok(finish(&m, vec![h]))
        }
        "MultiheadAttention" => {
            let o = MultiheadAttentionOptions {
                dropout: 0.0,
                bias: p.b("bias"),
                kdim: p.ou("kdim"),
                vdim: p.ou("vdim"),
                batch_first: p.b("bf"),
                add_bias_kv: p.b("bkv"),
                add_zero_attn: p.b("zattn"),
            };
            let mut m = prep(c, MultiheadAttention::new(p.u("E"), p.u("nh"), o)?, bad)?;
            m.eval();
            let (out, w) = m.forward(
                inp.t("query"),
                inp.t("key"),
                inp.t("value"),
                inp.get("key_padding_mask"),
                p.b("nw"),
                inp.get("attn_mask"),
                p.b("avg"),
            )?;
            let mut outs = vec![out];
            outs.extend(w);
            Ok(finish(&m, outs))
        }
        "TransformerEncoderLayer" => {
            let mut m = prep(c, TransformerEncoderLayer::new(p.u("d"), p.u("nh"), layer_options(&p))?, bad)?;
            m.eval();
            let y = m.forward_masked(inp.t("src"), inp.get("src_mask"), inp.get("src_key_padding_mask"))?;
            Ok(finish(&m, vec![y]))
        }
        "TransformerDecoderLayer" => {
            let mut m = prep(c, TransformerDecoderLayer::new(p.u("d"), p.u("nh"), layer_options(&p))?, bad)?;
            m.eval();
            let masks = DecoderMasks {
                tgt_mask: inp.get("tgt_mask"),
                memory_mask: inp.get("memory_mask"),
                tgt_key_padding_mask: inp.get("tgt_key_padding_mask"),
                memory_key_padding_mask: inp.get("memory_key_padding_mask"),
            };
            let y = m.forward_masked(inp.t("tgt"), inp.t("memory"), masks)?;
            Ok(finish(&m, vec![y]))
        }
        "Transformer" => {
            let o = TransformerOptions {
                d_model: p.u("d"),
                nhead: p.u("nh"),
                num_encoder_layers: p.u("ne"),
                num_decoder_layers: p.u("nd"),
                dim_feedforward: p.u("ff"),
                dropout: 0.0,
                activation: p.s("act"),
                activation_fn: None,
                layer_norm_eps: p.f("eps"),
                batch_first: p.b("bf"),
                norm_first: p.b("nf"),
                bias: p.b("bias"),
            };
            let mut m = prep(c, Transformer::new(o)?, bad)?;
            m.eval();
            let masks = TransformerMasks {
                tgt_mask: inp.get("tgt_mask"),
                src_key_padding_mask: inp.get("src_key_padding_mask"),
                memory_key_padding_mask: inp.get("memory_key_padding_mask"),
                ..Default::default()
            };
            let y = m.forward_masked(inp.t("src"), inp.t("tgt"), masks)?;
            Ok(finish(&m, vec![y]))
        }
        "Conv1d" => conv::<1>(c, &p, inp.t("x"), bad),
        "Conv2d" => conv::<2>(c, &p, inp.t("x"), bad),
        "Conv3d" => conv::<3>(c, &p, inp.t("x"), bad),
        "ConvTranspose1d" => conv_t::<1>(c, &p, inp.t("x"), bad),
        "ConvTranspose2d" => conv_t::<2>(c, &p, inp.t("x"), bad),
        "BatchNorm1d" | "BatchNorm2d" => {
            let (n, eps, mom, affine, track) =
                (p.u("C"), p.f("eps"), p.of("mom"), p.b("affine"), p.b("track"));
            let m = if c.module == "BatchNorm1d" {
                BatchNorm::new_1d_with(n, eps, mom, affine, track)?
            } else {
                BatchNorm::new_2d_with(n, eps, mom, affine, track)?
            };
            train_eval(c, m, inp.t("x"), bad)
        }
        "InstanceNorm1d" | "InstanceNorm2d" => {
            let mut m =
                InstanceNorm::new(p.u("nd"), p.u("C"), p.f("eps"), p.of("mom"), p.b("affine"), p.b("track"))?;
            // torch 2.15's keyword-only `bias=False` (weight only); oxtorch's constructor has no
            // such option, so the bias is dropped by hand.
            if !p.b("bias") {
                m.bias = None;
            }
            train_eval(c, m, inp.t("x"), bad)
        }
        "GroupNorm" => {
            let mut m = GroupNorm::new(p.u("G"), p.u("C"), p.f("eps"), p.b("affine"))?;
            // torch 2.15's keyword-only `bias=False`, dropped by hand as for InstanceNorm.
            if !p.b("bias") {
                m.bias = None;
            }
            eval1(c, m, inp.t("x"), bad)
        }
        "LayerNorm" => {
            eval1(c, LayerNorm::new(&p.us("ns"), p.f("eps"), p.b("ea"), p.b("bias"))?, inp.t("x"), bad)
        }
        "RMSNorm" => eval1(c, RMSNorm::new(&p.us("ns"), p.of("eps"), p.b("ea"))?, inp.t("x"), bad),
        "Embedding" => {
            let mut e = Embedding::new(p.u("num"), p.u("dim"), p.oi("pidx"))?;
            if let Some(mn) = p.of("mn") {
                e = e.with_max_norm(mn, p.f("nt"));
            }
            eval1(c, e.with_scale_grad_by_freq(p.b("sgf")), inp.t("input"), bad)
        }
        "EmbeddingBag" => {
            let o = EmbeddingBagOptions {
                max_norm: p.of("mn"),
                mode: p.s("mode"),
                include_last_offset: p.b("ilo"),
                padding_idx: p.oi("pidx"),
                ..Default::default()
            };
            let mut m = prep(c, EmbeddingBag::new(p.u("num"), p.u("dim"), o)?, bad)?;
            m.eval();
            let y =
                m.forward_with_offsets(inp.t("input"), inp.get("offsets"), inp.get("per_sample_weights"))?;
            Ok(finish(&m, vec![y]))
        }
        "Bilinear" => {
            let mut m = prep(c, Bilinear::new(p.u("i1"), p.u("i2"), p.u("o"), p.b("bias"))?, bad)?;
            m.eval();
            let y = m.forward(inp.t("x1"), inp.t("x2"))?;
            Ok(finish(&m, vec![y]))
        }
        "PReLU" => eval1(c, PReLU::new(p.u("npar"), p.f("init"))?, inp.t("x"), bad),
        "Upsample" => {
            let (mode, ac) = (p.s("mode"), p.ob("ac"));
            let m = match p.ous("size") {
                Some(size) => Upsample::with_size(&size, mode, ac),
                None => Upsample::with_scale_factor(&p.fs("sf"), mode, ac),
            };
            eval1(c, m, inp.t("x"), bad)
        }
        "AdaptiveLogSoftmaxWithLoss" => {
            let m =
                AdaptiveLogSoftmaxWithLoss::new(p.u("inf"), p.u("ncls"), &p.us("cut"), p.f("dv"), p.b("hb"))?;
            let mut m = prep(c, m, bad)?;
            m.eval();
            let x = inp.t("x");
            let (out, loss) = m.forward(x, inp.t("target"))?;
            let lp = m.log_prob(x)?;
            Ok(finish(&m, vec![out, loss, lp]))
        }
        other => panic!("unknown module {other}"),
    }
}

/// Compares a float64 result with torch's, recording the first difference.
fn cmp(bad: &mut Vec<String>, what: &str, got: &Tensor, want: &T) {
    if got.dims() != want.dims {
        bad.push(format!("{what}: shape {:?}, torch {:?}", got.dims(), want.dims));
        return;
    }
    let vals = match got.to_dtype(DType::F64).and_then(|t| t.to_f64_vec()) {
        Ok(v) => v,
        Err(e) => {
            bad.push(format!("{what}: cannot read values: {e}"));
            return;
        }
    };
    for (i, (x, y)) in vals.iter().zip(want.data).enumerate() {
        let ok = if y.is_finite() {
            (x - y).abs() <= TOL * (1.0 + y.abs())
        } else {
            x == y || (x.is_nan() && y.is_nan())
        };
        if !ok {
            bad.push(format!("{what}[{i}]: got {x}, torch {y}"));
            return;
        }
    }
}

/// The case's inputs: float leaves requiring grad, int64 indices, boolean and float masks.
fn inputs(c: &Case) -> Inputs {
    let mut v: Vec<(&'static str, Tensor)> = Vec::new();
    for (k, t) in c.floats {
        v.push((*k, float64(t).requires_grad_(true).unwrap()));
    }
    for (k, t) in c.ints {
        let t = if k.ends_with("mask") { float64(t).to_dtype(DType::Bool).unwrap() } else { int64(t) };
        v.push((*k, t));
    }
    for (k, t) in c.masks {
        v.push((*k, float64(t)));
    }
    Inputs(v)
}

/// Compares a successful replay with torch's outputs, gradients and final state.
fn compare(c: &Case, inp: &Inputs, got: Got, bad: &mut Vec<String>) -> Result<()> {
    if got.outs.len() != c.outs.len() {
        bad.push(format!("{} outputs, torch {}", got.outs.len(), c.outs.len()));
        return Ok(());
    }
    let mut loss: Option<Tensor> = None;
    for (k, ((out, want), cot)) in got.outs.iter().zip(c.outs).zip(c.cots).enumerate() {
        if out.dtype() != DType::F64 {
            bad.push(format!("out{k}: dtype {:?}, torch float64", out.dtype()));
        }
        cmp(bad, &format!("out{k}"), out, want);
        if out.dims() != want.dims {
            continue;
        }
        let term = out.mul(float64(cot))?.sum_all()?;
        loss = Some(match loss {
            Some(l) => l.add(&term)?,
            None => term,
        });
    }
    if let Some(l) = loss {
        l.backward()?;
    }
    for (k, want) in c.input_grads {
        let x = inp.t(k);
        let g = x.grad().map_or_else(|| x.zeros_like(), Ok)?;
        cmp(bad, &format!("grad.{k}"), &g, want);
    }
    if got.params.len() != c.param_grads.len() {
        let names: Vec<&String> = got.params.iter().map(|(k, _)| k).collect();
        bad.push(format!("parameters {names:?}, torch has {}", c.param_grads.len()));
    }
    for (k, want) in c.param_grads {
        match got.params.iter().find(|(n, _)| n == k) {
            Some((_, p)) => {
                let g = p.grad().map_or_else(|| p.zeros_like(), Ok)?;
                cmp(bad, &format!("param_grad.{k}"), &g, want);
            }
            None => bad.push(format!("no parameter {k}")),
        }
    }
    for (k, want) in c.after {
        match got.after.iter().find(|(n, _)| n == k) {
            Some((_, t)) => cmp(bad, &format!("after.{k}"), t, want),
            None => bad.push(format!("no state entry {k} after forward")),
        }
    }
    Ok(())
}

fn panic_text(e: &(dyn std::any::Any + Send)) -> String {
    e.downcast_ref::<String>()
        .cloned()
        .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_default()
}

#[test]
fn nn_modules_match_torch_on_random_configurations() {
    assert_eq!(CASES.len(), 170);
    let mut failures = Vec::new();
    for c in CASES {
        let mut bad = Vec::new();
        let run = catch_unwind(AssertUnwindSafe(|| -> Result<()> {
            let inp = inputs(c);
            match (replay(c, &inp, &mut bad), c.err) {
                (Err(_), Some(_)) => {}
                (Err(e), None) => bad.push(format!("oxtorch failed: {e}")),
                (Ok(_), Some(msg)) => bad.push(format!("torch raised `{msg}`, oxtorch returned Ok")),
                (Ok(got), None) => compare(c, &inp, got, &mut bad)?,
            }
            Ok(())
        }));
        match run {
            Ok(Ok(())) => {}
            Ok(Err(e)) => bad.push(format!("error while comparing: {e}")),
            Err(e) => bad.push(format!("panicked: {}", panic_text(&*e))),
        }
        for b in bad {
            failures.push(format!("case {} {} [{}]: {b}", c.id, c.module, c.params));
        }
    }
    assert!(failures.is_empty(), "{} mismatches against torch:\n{}", failures.len(), failures.join("\n"));
}
