//! The functional recurrent steps (`lstm_cell`, `gru_cell`, `rnn_tanh_cell`, `rnn_relu_cell`) and
//! `multi_head_attention_forward` against torch (functional_cells_and_attention_golden.rs, from
//! nn/tests/make_functional_cells_and_attention_golden.py): outputs and the gradients of every float input, with
//! and without biases, packed and separate projections, bool and float masks, `bias_k`/`bias_v`,
//! `add_zero_attn`, `static_k`/`static_v`, `is_causal`, unbatched inputs, averaged and per-head
//! weights; and torch's messages for bad input.

use oxtorch_nn::functional::{
    gru_cell, lstm_cell, multi_head_attention_forward, rnn_relu_cell, rnn_tanh_cell, MhaForwardOptions,
};
use oxtorch_tensor::{DType, Result, Tensor};

use super::golden_case::{assert_close, err, float64, T};

/// One golden case: named inputs (masks named `kpm_*` / `attn_*`, `bool` ones written as 0/1),
/// flags, torch's outputs, the cotangents and the gradients of `sum_k (out_k * cot_k).sum()`.
struct Case {
    name: &'static str,
    inputs: &'static [(&'static str, T)],
    flags: &'static [(&'static str, f64)],
    outs: &'static [T],
    cots: &'static [T],
    grads: &'static [(&'static str, T)],
}

include!("functional_cells_and_attention_golden.rs");

const RTOL: f64 = 1e-10;

/// A case's inputs as tensors: masks as bool or float64 constants, the others float64 leaves.
struct Built(Vec<(&'static str, Tensor)>);

impl Built {
    fn new(case: &Case) -> Built {
        Built(
            case.inputs
                .iter()
                .map(|(k, v)| {
                    let t = if k.ends_with("_bool") {
                        float64(v).ne(0.0).unwrap()
                    } else if k.starts_with("kpm_") || k.starts_with("attn_") {
                        float64(v)
                    } else {
                        float64(v).requires_grad_(true).unwrap()
                    };
                    (*k, t)
                })
                .collect(),
        )
    }

    fn get(&self, k: &str) -> Option<&Tensor> {
        self.0.iter().find(|(n, _)| *n == k).map(|(_, t)| t)
    }

    fn t(&self, k: &str) -> &Tensor {
        self.get(k).unwrap_or_else(|| panic!("no input {k}"))
    }

    fn either(&self, a: &str, b: &str) -> Option<&Tensor> {
        self.get(a).or_else(|| self.get(b))
    }
}

fn flag(case: &Case, k: &str) -> f64 {
    case.flags.iter().find(|(n, _)| *n == k).map(|(_, v)| *v).unwrap_or_else(|| panic!("no flag {k}"))
}

/// Compares the outputs with torch's, backpropagates `sum_k (out_k * cot_k).sum()` and compares
/// every input's gradient.
fn check(case: &Case, built: &Built, outs: Vec<Tensor>) -> Result<()> {
    assert_eq!(outs.len(), case.outs.len(), "{}: number of outputs", case.name);
    let mut loss: Option<Tensor> = None;
    for (k, (out, (want, cot))) in outs.iter().zip(case.outs.iter().zip(case.cots)).enumerate() {
        assert_close(&format!("{}.out{k}", case.name), out, want, RTOL);
        let term = out.mul(float64(cot))?.sum_all()?;
        loss = Some(match loss {
            Some(l) => l.add(&term)?,
            None => term,
        });
    }
    loss.expect("an output").backward()?;
    for (k, want) in case.grads {
        match built.t(k).grad() {
            Some(got) => assert_close(&format!("{}.grad.{k}", case.name), &got, want, RTOL),
            // torch's None (written as zeros): an input the outputs do not depend on.
            None => assert!(want.data.iter().all(|&g| g == 0.0), "{}: no gradient for {k}", case.name),
        }
    }
    Ok(())
}

fn cases(prefix: &str) -> impl Iterator<Item = &'static Case> + '_ {
    CASES.iter().filter(move |c| c.name.starts_with(prefix))
}

#[test]
fn rnn_cells_match_torch_values_and_gradients() -> Result<()> {
    let mut seen = 0;
    for case in cases("lstm").chain(cases("gru")).chain(cases("rnn_")) {
        let b = Built::new(case);
        let (x, h, w_ih, w_hh) = (b.t("input"), b.t("hx"), b.t("w_ih"), b.t("w_hh"));
        let (b_ih, b_hh) = (b.get("b_ih"), b.get("b_hh"));
        let outs = if case.name.starts_with("lstm") {
            let (hy, cy) = lstm_cell(x, (h, b.t("cx")), w_ih, w_hh, b_ih, b_hh)?;
            vec![hy, cy]
        } else if case.name.starts_with("gru") {
            vec![gru_cell(x, h, w_ih, w_hh, b_ih, b_hh)?]
        } else if case.name.starts_with("rnn_tanh") {
            vec![rnn_tanh_cell(x, h, w_ih, w_hh, b_ih, b_hh)?]
        } else {
            vec![rnn_relu_cell(x, h, w_ih, w_hh, b_ih, b_hh)?]
        };
        check(case, &b, outs)?;
        seen += 1;
    }
    assert_eq!(seen, 8);
    Ok(())
}

#[test]
fn multi_head_attention_forward_matches_torch() -> Result<()> {
    let mut seen = 0;
    for case in cases("mha_") {
        let b = Built::new(case);
        let on = |k: &str| flag(case, k) != 0.0;
        let query = b.t("query");
        let (key, value) = if on("self_attn") { (query, query) } else { (b.t("key"), b.t("value")) };
        let options = MhaForwardOptions {
            training: on("training"),
            key_padding_mask: b.either("kpm_bool", "kpm_float"),
            need_weights: on("need_weights"),
            attn_mask: b.either("attn_bool", "attn_float"),
            use_separate_proj_weight: on("use_separate_proj_weight"),
            q_proj_weight: b.get("q_proj_weight"),
            k_proj_weight: b.get("k_proj_weight"),
            v_proj_weight: b.get("v_proj_weight"),
            static_k: b.get("static_k"),
            static_v: b.get("static_v"),
            average_attn_weights: on("average_attn_weights"),
            is_causal: on("is_causal"),
        };
        let e = b.t("out_proj_weight").dims()[0];
        let (out, weights) = multi_head_attention_forward(
            query,
            key,
            value,
            e,
            flag(case, "num_heads") as usize,
            b.get("in_proj_weight"),
            b.get("in_proj_bias"),
            b.get("bias_k"),
            b.get("bias_v"),
            on("add_zero_attn"),
            flag(case, "dropout_p"),
            b.t("out_proj_weight"),
            b.get("out_proj_bias"),
            &options,
        )?;
        assert_eq!(weights.is_some(), options.need_weights, "{}: weights returned", case.name);
        let outs = std::iter::once(out).chain(weights).collect();
        check(case, &b, outs)?;
        seen += 1;
    }
    assert_eq!(seen, 22);
    Ok(())
}

fn t(dims: &[usize]) -> Tensor {
    let n: usize = dims.iter().product();
    Tensor::from_vec((0..n).map(|i| (i as f64 * 0.37).sin()).collect::<Vec<_>>(), dims.to_vec()).unwrap()
}

#[test]
fn rnn_cells_refuse_bad_shapes_with_torchs_messages() {
    let (x, h, c) = (t(&[2, 3]), t(&[2, 4]), t(&[2, 4]));
    let (w, wh) = (t(&[16, 3]), t(&[16, 4]));
    assert_eq!(
        err(lstm_cell(&t(&[3]), (&h, &c), &w, &wh, None, None)),
        "Expected 2D input (batch x feature), but got 1D input"
    );
    assert_eq!(
        err(lstm_cell(&t(&[2, 5]), (&h, &c), &w, &wh, None, None)),
        "input has inconsistent input_size: got 5 expected 3"
    );
    assert_eq!(
        err(lstm_cell(&x, (&t(&[1, 4]), &c), &w, &wh, None, None)),
        "Input batch size 2 doesn't match hidden0 batch size 1"
    );
    assert_eq!(
        err(lstm_cell(&x, (&t(&[2, 5]), &c), &w, &wh, None, None)),
        "hidden0 has inconsistent hidden_size: got 5, expected 4"
    );
    assert_eq!(
        err(lstm_cell(&x, (&h, &t(&[2, 3])), &w, &wh, None, None)),
        "hidden1 has inconsistent hidden_size: got 3, expected 4"
    );
    assert_eq!(
        err(lstm_cell(&x, (&h, &t(&[1, 4])), &w, &wh, None, None)),
        "Input batch size 2 doesn't match hidden1 batch size 1"
    );
    assert_eq!(
        err(lstm_cell(&x, (&h, &c), &t(&[12, 3]), &wh, None, None)),
        "weight_ih first dim must be 4 * hidden_size = 16, but got 12"
    );
    assert_eq!(
        err(gru_cell(&x, &h, &t(&[12, 3]), &t(&[12, 5]), None, None)),
        "hidden0 has inconsistent hidden_size: got 4, expected 5"
    );
    assert_eq!(
        err(gru_cell(&x, &h, &t(&[12, 3]), &t(&[13, 4]), None, None)),
        "weight_hh first dim must be 3 * hidden_size = 12, but got 13"
    );
    assert_eq!(
        err(rnn_tanh_cell(&x, &h, &t(&[5, 3]), &t(&[4, 4]), None, None)),
        "weight_ih first dim must be 1 * hidden_size = 4, but got 5"
    );
    assert_eq!(
        err(rnn_relu_cell(&t(&[1, 2, 3]), &h, &t(&[4, 3]), &t(&[4, 4]), None, None)),
        "Expected 2D input (batch x feature), but got 3D input"
    );
    assert_eq!(
        err(rnn_relu_cell(&x, &t(&[4]), &t(&[4, 3]), &t(&[4, 4]), None, None)),
        "Expected 2D hidden0 (batch x hidden_size), but got 1D tensor"
    );
}

#[test]
fn multi_head_attention_forward_refuses_bad_input_with_torchs_messages() {
    let (q, k, v) = (t(&[3, 2, 4]), t(&[5, 2, 4]), t(&[5, 2, 4]));
    let (w, ow) = (t(&[12, 4]), t(&[4, 4]));
    let run = |q: &Tensor, k: &Tensor, v: &Tensor, e: usize, h: usize, o: MhaForwardOptions<'_>| {
        multi_head_attention_forward(q, k, v, e, h, Some(&w), None, None, None, false, 0.0, &ow, None, &o)
    };
    fn d<'a>() -> MhaForwardOptions<'a> {
        MhaForwardOptions::default()
    }
    assert_eq!(
        err(run(&t(&[4]), &k, &v, 4, 2, d())),
        "query should be unbatched 2D or batched 3D tensor but received 1-D query tensor"
    );
    assert_eq!(
        err(run(&q, &t(&[5, 4]), &v, 4, 2, d())),
        "For batched (3-D) `query`, expected `key` and `value` to be 3-D but found 2-D and 3-D tensors respectively"
    );
    assert_eq!(err(run(&q, &k, &v, 6, 2, d())), "was expecting embedding dimension of 6, but got 4");
    assert_eq!(err(run(&q, &k, &v, 4, 3, d())), "embed_dim 4 not divisible by num_heads 3");
    assert_eq!(
        err(run(&q, &k, &t(&[6, 2, 4]), 4, 2, d())),
        "key shape torch.Size([5, 2, 4]) does not match value shape torch.Size([6, 2, 4])"
    );
    let bad2d = t(&[3, 4]);
    assert_eq!(
        err(run(&q, &k, &v, 4, 2, MhaForwardOptions { attn_mask: Some(&bad2d), ..d() })),
        "The shape of the 2D attn_mask is torch.Size([3, 4]), but should be (3, 5)."
    );
    let bad3d = t(&[2, 3, 5]);
    assert_eq!(
        err(run(&q, &k, &v, 4, 2, MhaForwardOptions { attn_mask: Some(&bad3d), ..d() })),
        "The shape of the 3D attn_mask is torch.Size([2, 3, 5]), but should be (4, 3, 5)."
    );
    let kpm = Tensor::zeros([2, 5], DType::I64).unwrap();
    assert_eq!(
        err(run(&q, &k, &v, 4, 2, MhaForwardOptions { key_padding_mask: Some(&kpm), ..d() })),
        "only bool and floating types of key_padding_mask are supported"
    );
    let kpm = Tensor::zeros([2, 4], DType::Bool).unwrap();
    assert_eq!(
        err(run(&q, &k, &v, 4, 2, MhaForwardOptions { key_padding_mask: Some(&kpm), ..d() })),
        "Expected key_padded_mask.shape[1] to be 5, but got 4"
    );
    assert!(err(run(&q, &k, &v, 4, 2, MhaForwardOptions { is_causal: true, ..d() }))
        .starts_with("Need attn_mask if specifying the is_causal hint."));
    assert_eq!(
        err(run(&q, &k, &v, 4, 2, MhaForwardOptions { use_separate_proj_weight: true, ..d() })),
        "use_separate_proj_weight is True but q_proj_weight is None"
    );
    let bad_q = t(&[4, 3]);
    let opts = MhaForwardOptions {
        use_separate_proj_weight: true,
        q_proj_weight: Some(&bad_q),
        k_proj_weight: Some(&ow),
        v_proj_weight: Some(&ow),
        ..d()
    };
    assert_eq!(
        err(run(&q, &k, &v, 4, 2, opts)),
        "expecting query weights shape of (4, 4), but got torch.Size([4, 3])"
    );
    let bk = t(&[1, 1, 4]);
    let only_k = multi_head_attention_forward(
        &q,
        &k,
        &v,
        4,
        2,
        Some(&w),
        None,
        Some(&bk),
        None,
        false,
        0.0,
        &ow,
        None,
        &d(),
    );
    assert_eq!(err(only_k), "bias_k is set but bias_v is None");
    let sk = t(&[3, 5, 2]);
    assert_eq!(
        err(run(&q, &k, &v, 4, 2, MhaForwardOptions { static_k: Some(&sk), ..d() })),
        "expecting static_k.size(0) of 4, but got 3"
    );
    let (uq, uk) = (t(&[3, 4]), t(&[5, 4]));
    let m = t(&[2, 3, 4]);
    assert_eq!(
        err(run(&uq, &uk, &uk, 4, 2, MhaForwardOptions { attn_mask: Some(&m), ..d() })),
        "Expected `attn_mask` shape to be (2, 3, 5) but got torch.Size([2, 3, 4])"
    );
}
