//! The whole-sequence functional RNNs (`torch.lstm`, `torch.gru`, `torch.rnn_tanh`,
//! `torch.rnn_relu` with flat weight lists) against torch (rnn33_golden.rs, from
//! nn/tests/make_rnn33_golden.py): outputs and the gradients of the input, the initial states
//! and every parameter over layers, directions, biases and `batch_first`; torch's messages for
//! bad input; and the in-place dropouts (`dropout_`, `alpha_dropout_`, `feature_alpha_dropout_`).

use oxtorch_nn::functional::{
    alpha_dropout_, dropout_, feature_alpha_dropout_, gru, lstm, rnn_relu, rnn_tanh,
};
use oxtorch_tensor::{DType, Result, Tensor};

use super::golden_case::{assert_close, err, float64, T};

/// One golden case: the flags, the inputs, torch's outputs (`output, h_n[, c_n]`), the
/// cotangents and the gradients of `sum_k (out_k * cot_k).sum()`.
struct RnnCase {
    name: &'static str,
    kind: &'static str,
    has_biases: bool,
    num_layers: usize,
    bidirectional: bool,
    batch_first: bool,
    input: T,
    hx: &'static [T],
    params: &'static [T],
    outs: &'static [T],
    cots: &'static [T],
    grad_input: T,
    grad_hx: &'static [T],
    grad_params: &'static [T],
}

include!("rnn33_golden.rs");

const RTOL: f64 = 1e-10;

fn leaf(v: &T) -> Tensor {
    float64(v).requires_grad_(true).unwrap()
}

/// Runs a case's op on `x`, `hx` and `params`.
fn run(c: &RnnCase, x: &Tensor, hx: &[Tensor], params: &[Tensor]) -> Result<Vec<Tensor>> {
    let (b, l, bi, bf) = (c.has_biases, c.num_layers, c.bidirectional, c.batch_first);
    Ok(match c.kind {
        "lstm" => {
            let (o, h, cn) = lstm(x, hx, params, b, l, 0.0, false, bi, bf)?;
            vec![o, h, cn]
        }
        "gru" => {
            let (o, h) = gru(x, &hx[0], params, b, l, 0.0, false, bi, bf)?;
            vec![o, h]
        }
        "rnn_tanh" => {
            let (o, h) = rnn_tanh(x, &hx[0], params, b, l, 0.0, false, bi, bf)?;
            vec![o, h]
        }
        "rnn_relu" => {
            let (o, h) = rnn_relu(x, &hx[0], params, b, l, 0.0, false, bi, bf)?;
            vec![o, h]
        }
        other => panic!("unknown kind {other}"),
    })
}

#[test]
fn sequence_rnns_match_torch_values_and_gradients() -> Result<()> {
    assert_eq!(RNN_CASES.len(), 12);
    for c in RNN_CASES {
        let x = leaf(&c.input);
        let hx: Vec<Tensor> = c.hx.iter().map(leaf).collect();
        let params: Vec<Tensor> = c.params.iter().map(leaf).collect();
        let outs = run(c, &x, &hx, &params)?;
        assert_eq!(outs.len(), c.outs.len(), "{}: number of outputs", c.name);
        let mut loss: Option<Tensor> = None;
        for (k, (out, (want, cot))) in outs.iter().zip(c.outs.iter().zip(c.cots)).enumerate() {
            assert_close(&format!("{}.out{k}", c.name), out, want, RTOL);
            let term = out.mul(float64(cot))?.sum_all()?;
            loss = Some(match loss {
                Some(l) => l.add(&term)?,
                None => term,
            });
        }
        loss.expect("an output").backward()?;
        assert_close(&format!("{}.grad.input", c.name), &x.grad().expect("input grad"), &c.grad_input, RTOL);
        for (k, (h, want)) in hx.iter().zip(c.grad_hx).enumerate() {
            assert_close(&format!("{}.grad.hx{k}", c.name), &h.grad().expect("hx grad"), want, RTOL);
        }
        for (k, (p, want)) in params.iter().zip(c.grad_params).enumerate() {
            assert_close(&format!("{}.grad.param{k}", c.name), &p.grad().expect("param grad"), want, RTOL);
        }
    }
    Ok(())
}

#[test]
fn sequence_rnns_give_torch_messages_for_bad_input() -> Result<()> {
    let c0 = &RNN_CASES[0];
    assert_eq!(c0.kind, "lstm");
    let x = float64(&c0.input);
    let hx: Vec<Tensor> = c0.hx.iter().map(float64).collect();
    let params: Vec<Tensor> = c0.params.iter().map(float64).collect();
    assert_eq!(
        err(lstm(&x, &hx[..1], &params, true, 1, 0.0, false, false, false)),
        "lstm expects two hidden states"
    );
    assert_eq!(
        err(lstm(&x, &hx, &params[..3], true, 1, 0.0, false, false, false)),
        "got an incorrect number of RNN parameters"
    );
    assert_eq!(
        err(lstm(&x, &hx, &params, true, 2, 0.0, false, false, false)),
        "got an incorrect number of RNN parameters"
    );
    // A GRU given the states of two layers for one (torch's message).
    let g =
        RNN_CASES.iter().find(|c| c.kind == "gru" && c.num_layers == 1 && c.has_biases).expect("a gru case");
    let (gx, gh) = (float64(&g.input), float64(&g.hx[0]));
    let gp: Vec<Tensor> = g.params.iter().map(float64).collect();
    let two = Tensor::cat(&[&gh, &gh], 0)?;
    assert_eq!(
        err(gru(&gx, &two, &gp, true, 1, 0.0, false, false, false)),
        "Expected more hidden states in stacked_rnn"
    );
    assert_eq!(
        err(gru(&gx, &gh, &gp[..2], true, 1, 0.0, false, false, false)),
        "got an incorrect number of RNN parameters"
    );
    let unbatched = x.select(0, 0)?;
    assert!(err(lstm(&unbatched, &hx, &params, true, 1, 0.0, false, false, false)).contains("3 dimensions"));
    Ok(())
}

#[test]
fn sequence_rnn_dropout_applies_between_layers_only_in_training() -> Result<()> {
    let c = RNN_CASES.iter().find(|c| c.kind == "gru" && c.num_layers == 2).expect("a 2-layer gru case");
    let x = float64(&c.input);
    let h = float64(&c.hx[0]);
    let params: Vec<Tensor> = c.params.iter().map(float64).collect();
    let run =
        |p: f64, train: bool| gru(&x, &h, &params, c.has_biases, 2, p, train, c.bidirectional, c.batch_first);
    // Not training: dropout does nothing, torch's values.
    let (o, hn) = run(0.9, false)?;
    assert_close("eval.out", &o, &c.outs[0], RTOL);
    assert_close("eval.h_n", &hn, &c.outs[1], RTOL);
    // Training with p = 1: the second layer sees zeros, so its outputs differ from torch's.
    let (o, _) = run(1.0, true)?;
    let got = o.to_f64_vec()?;
    assert!(got.iter().zip(c.outs[0].data).any(|(a, b)| (a - b).abs() > 1e-6));
    assert!(err(run(1.5, true)).contains("dropout should be a number in range [0, 1]"));
    Ok(())
}

#[test]
fn inplace_dropouts_write_into_their_input() -> Result<()> {
    let x = Tensor::ones([64, 8], DType::F64)?;
    let r = dropout_(&x, 0.5, true)?.to_f64_vec()?;
    assert!(r.iter().all(|&v| v == 0.0 || v == 2.0), "dropout_ keeps and scales by 1/(1-p)");
    let zeros = r.iter().filter(|&&v| v == 0.0).count();
    assert!((150..=362).contains(&zeros), "dropout_ zeroed {zeros} of 512");
    // The input itself was written.
    assert_eq!(x.to_f64_vec()?, r);

    let y = Tensor::ones([4, 3], DType::F64)?;
    dropout_(&y, 0.5, false)?;
    assert!(y.to_f64_vec()?.iter().all(|&v| v == 1.0), "not training: unchanged");
    dropout_(&y, 1.0, true)?;
    assert!(y.to_f64_vec()?.iter().all(|&v| v == 0.0), "p = 1: zeros");

    // alpha_dropout_ at p = 1 gives input * 0 as torch; in training every value is one of the two
    // affine images of kept / dropped elements.
    let z = Tensor::ones([64, 8], DType::F64)?;
    alpha_dropout_(&z, 0.5, true)?;
    let alpha = 1.7580993408473766f64;
    let a = 1.0 / ((alpha * alpha * 0.5 + 1.0) * 0.5f64).sqrt();
    let (kept, dropped) = (a + alpha * a * 0.5, alpha * a * (0.5 - 1.0));
    assert!(z.to_f64_vec()?.iter().all(|&v| (v - kept).abs() < 1e-12 || (v - dropped).abs() < 1e-12));

    // feature_alpha_dropout_ keeps or drops whole channels.
    let f = Tensor::ones([4, 16, 5], DType::F64)?;
    feature_alpha_dropout_(&f, 0.5, true)?;
    let v = f.to_f64_vec()?;
    for ch in v.chunks(5) {
        assert!(ch.iter().all(|&e| e == ch[0]), "one channel, one value");
    }

    // torch's checks: p out of range, a leaf that requires grad.
    let w = Tensor::ones([3], DType::F64)?;
    assert!(err(alpha_dropout_(&w, 1.5, true)).contains("dropout probability has to be between 0 and 1"));
    let leaf = Tensor::ones([3], DType::F64)?.requires_grad_(true)?;
    assert!(err(dropout_(&leaf, 0.5, true)).contains("leaf Variable that requires grad"));
    Ok(())
}
