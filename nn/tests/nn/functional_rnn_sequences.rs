//! The whole-sequence functional RNNs (`torch.lstm`, `torch.gru`, `torch.rnn_tanh`,
//! `torch.rnn_relu` with flat weight lists) against torch (functional_rnn_sequences_golden.rs, from
//! nn/tests/make_functional_rnn_sequences_golden.py): outputs and the gradients of the input, the initial states
//! and every parameter over layers, directions, biases and `batch_first`; torch's messages for
//! bad input; and the in-place dropouts (`dropout_`, `alpha_dropout_`, `feature_alpha_dropout_`).

use oxtorch_nn::functional::{
    alpha_dropout_, dropout_, feature_alpha_dropout_, gru, lstm, rnn_relu, rnn_tanh,
};
use oxtorch_tensor::{DType, Result, Tensor};

use super::golden_case::{assert_close, err, f64s, float64, ramp, T};

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

include!("functional_rnn_sequences_golden.rs");

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
    // An empty sequence: torch.lstm(x[:0], ...) raises (batch_first too), ours no longer gives zeros.
    let empty = x.narrow(0, 0, 0)?;
    assert_eq!(
        err(lstm(&empty, &hx, &params, true, 1, 0.0, false, false, false)),
        "Expected sequence length to be larger than 0 in RNN"
    );
    let empty_bf = x.transpose(0, 1)?.narrow(1, 0, 0)?;
    assert_eq!(
        err(lstm(&empty_bf, &hx, &params, true, 1, 0.0, false, false, true)),
        "Expected sequence length to be larger than 0 in RNN"
    );
    assert_eq!(
        err(gru(&gx.narrow(0, 0, 0)?, &gh, &gp, true, 1, 1.5, true, false, false)),
        "Expected sequence length to be larger than 0 in RNN"
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
    // torch checks `p` only where dropout applies (`p != 0`, training, between layers):
    // `torch.gru(x, h, params, True, 2, 1.5, True, ...)` raises, in evaluation it runs.
    assert_eq!(err(run(1.5, true)), "dropout probability has to be between 0 and 1, but got 1.5");
    assert_eq!(err(run(-0.5, true)), "dropout probability has to be between 0 and 1, but got -0.5");
    let (o, _) = run(1.5, false)?;
    assert_close("eval p=1.5 out", &o, &c.outs[0], RTOL);
    // One layer: no dropout anywhere, so `torch.gru(x, h, w, True, 1, 1.5, True, False, False)` runs.
    let g = RNN_CASES.iter().find(|c| c.kind == "gru" && c.num_layers == 1).expect("a 1-layer gru case");
    let gp: Vec<Tensor> = g.params.iter().map(float64).collect();
    let (gx, gh) = (float64(&g.input), float64(&g.hx[0]));
    let (o, hn) = gru(&gx, &gh, &gp, g.has_biases, 1, 1.5, true, g.bidirectional, g.batch_first)?;
    assert_close("1-layer p=1.5 out", &o, &g.outs[0], RTOL);
    assert_close("1-layer p=1.5 h_n", &hn, &g.outs[1], RTOL);
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

// LSTMs with projections (`nn.LSTM(proj_size=2)`'s flat weights: `w_ih, w_hh[, b_ih, b_hh], w_hr`
// a direction), values from torch 2.15 (generated once with the calls named below).
type Lit = (&'static [usize], &'static [f64]);

use proj_golden::*;

/// torch's values for the projected LSTMs (long literal lines, so not formatted).
#[rustfmt::skip]
mod proj_golden {
    // PROJ_A: torch.lstm(x, (h0, c0), params, True, 1, 0.0, False, True, False) (torch 2.15, float64);
    // gradients of (output * ramp).sum() + (h_n * ramp).sum() + (c_n * ramp).sum().
    pub(super) const PROJ_A_X: (&[usize], &[f64]) = (&[3, 2, 2], &[-0.13, 0.53, 0.39, -0.37, -0.75, -0.34, 0.68, -0.81, 0.81, -0.46, 0.18, -0.82]);
    pub(super) const PROJ_A_H0: (&[usize], &[f64]) = (&[2, 2, 2], &[1.75, -0.01, 0.22, -0.66, 0.06, -0.25, 0.28, -1.2]);
    pub(super) const PROJ_A_C0: (&[usize], &[f64]) = (&[2, 2, 3], &[0.3, -0.17, -1.15, 0.67, 0.85, 0.13, -0.23, 0.24, 0.25, -0.64, -0.06, -1.19]);
    pub(super) const PROJ_A_PARAMS: &[(&[usize], &[f64])] = &[
        (&[12, 2], &[0.49, -0.45, -0.36, -0.24, 0.15, 0.23, 0.61, -0.46, -0.22, -0.43, 0.36, 0.3, -0.49, -0.46, -0.33, -1.29, 1.15, 0.15, -0.08, 0.1, 0.57, -1.13, 0.99, -0.5]),
        (&[12, 2], &[-0.84, 0.45, -0.25, 0.68, -0.54, 0.2, -0.01, -0.16, -0.41, -0.49, -0.34, 0.81, -1.26, -0.7, 0.98, -0.24, 0.0, 1.28, 0.54, 0.52, 0.68, -0.06, 0.05, -0.55]),
        (&[12], &[-0.68, 0.72, -0.72, -0.52, -0.42, 0.02, 0.15, 0.53, 0.34, -0.42, -0.33, -0.69]),
        (&[12], &[-0.65, -0.77, 0.35, 0.8, -0.72, 0.72, -0.12, -0.71, -0.44, -0.18, -0.27, -0.02]),
        (&[2, 3], &[-0.79, -0.28, 0.44, 0.1, 0.08, 0.14]),
        (&[12, 2], &[0.62, -0.32, 0.24, 0.12, -0.95, -0.6, -0.76, 0.71, 1.13, -0.81, -0.43, -0.21, -0.56, -0.21, 0.57, -0.67, 0.27, 0.8, -0.04, 0.49, 0.7, -0.08, 0.17, 0.06]),
        (&[12, 2], &[0.5, -0.33, -0.06, -0.46, 0.43, -0.28, -0.93, 0.62, -0.18, -0.47, 0.39, -1.07, -0.17, 0.01, 0.1, -0.46, -0.01, -0.65, -0.09, -0.32, 0.37, -0.39, -0.36, -0.09]),
        (&[12], &[-0.38, 0.08, 0.0, 0.19, -0.2, -0.14, 0.07, 0.51, 1.4, 0.48, 0.31, 0.42]),
        (&[12], &[0.08, 0.84, -0.31, -0.51, 0.19, -0.39, -0.14, 0.0, -0.41, 0.2, -0.34, 0.16]),
        (&[2, 3], &[-0.58, 0.39, -0.19, -1.01, -0.6, -0.67]),
    ];
    pub(super) const PROJ_A_OUT: (&[usize], &[f64]) = (&[3, 2, 4], &[-0.15024097490599675, -0.0071386628139205825, 0.024067164119349588, -0.3388360012154601, -0.1941576452924106, 0.023549569801740153, 0.24241516721007686, -0.35277693925226555, -0.1289931760821284, -0.005627557080540548, 0.021761985993227137, -0.36060052429755135, -0.12682426661138935, 0.04210086401345769, 0.2718464279260754, -0.23855963425689716, -0.10385695720272078, -0.010897653278851704, 0.24377310694461005, -0.24806458358313233, -0.15279326164233012, 0.03979603332459645, 0.24355475580691732, -0.02782650864260114]);
    pub(super) const PROJ_A_HN: (&[usize], &[f64]) = (&[2, 2, 2], &[-0.10385695720272078, -0.010897653278851704, -0.15279326164233012, 0.03979603332459645, 0.024067164119349588, -0.3388360012154601, 0.24241516721007686, -0.35277693925226555]);
    pub(super) const PROJ_A_CN: (&[usize], &[f64]) = (&[2, 2, 3], &[0.13110474279147438, 0.08051440049898007, -0.23452324369598082, 0.4638935856846677, 0.42149834800123975, 0.11198906325791866, -0.03654739719784256, 0.42788449430293657, 0.6415041089438515, -0.1904117109909532, 1.4400981055913502, 0.350825489485455]);
    pub(super) const PROJ_A_GX: (&[usize], &[f64]) = (&[3, 2, 2], &[3.576487669345744, -4.348419562551801, 8.215173865207154, -1.7767996977033653, 2.5080870818721843, 0.6784188687563085, 10.850254698581184, 1.2120646405399027, 9.998872884079628, 4.477069236157135, 14.274352347635192, 3.5225120784085693]);
    pub(super) const PROJ_A_GH0: (&[usize], &[f64]) = (&[2, 2, 2], &[0.31735626389355776, 0.3613015621194971, 0.8943801703459171, 3.888523381830915, 1.3250570620846034, 1.5813744274734343, 0.7446561263892708, -0.7768681304793013]);
    pub(super) const PROJ_A_GC0: (&[usize], &[f64]) = (&[2, 2, 3], &[-1.5041975399968923, -0.04431964525029395, 2.580396781471782, -1.499167921932656, -0.08526935664245987, 5.916898056098519, -4.216526537904688, -0.47306791080658167, -4.010304032095344, -2.966822166207305, 3.0126736600914246, -9.4407205096953]);
    pub(super) const PROJ_A_GHR: (&[usize], &[f64]) = (&[2, 3], &[-8.631043821573172, 39.258673783096995, 9.539849684662487, -8.73055134486023, 37.87773977426947, 9.624657845630153]);
    // PROJ_B: torch.lstm(x, (h0, c0), params, False, 2, 0.0, False, False, True) (torch 2.15, float64);
    // gradients of (output * ramp).sum() + (h_n * ramp).sum() + (c_n * ramp).sum().
    pub(super) const PROJ_B_X: (&[usize], &[f64]) = (&[1, 2, 2], &[0.33, 0.03, -0.42, 0.45]);
    pub(super) const PROJ_B_H0: (&[usize], &[f64]) = (&[2, 1, 2], &[-0.96, 0.93, -0.26, -0.04]);
    pub(super) const PROJ_B_C0: (&[usize], &[f64]) = (&[2, 1, 3], &[-0.63, 0.29, -0.24, 0.28, -0.73, 0.11]);
    pub(super) const PROJ_B_PARAMS: &[(&[usize], &[f64])] = &[
        (&[12, 2], &[1.23, 0.53, -1.14, 0.5, 0.21, 0.15, 1.24, -0.1, 0.34, 0.74, -0.48, 0.52, 1.18, -0.62, -0.76, 0.46, 0.7, 0.12, 0.51, -0.06, 0.76, 0.59, 1.1, -0.15]),
        (&[12, 2], &[-0.1, 0.62, -1.33, -0.62, 0.09, -0.23, 0.36, -0.14, -1.4, 0.19, -0.16, -0.19, -1.19, -0.33, 1.23, -0.15, -0.17, -0.24, 0.29, 0.36, -0.1, -1.03, -0.09, -0.12]),
        (&[2, 3], &[-0.43, -0.92, -0.48, -0.5, -0.65, -0.01]),
        (&[12, 2], &[-0.04, 0.17, 0.13, -0.9, -0.89, 0.59, 0.7, 0.45, -0.23, 0.14, -0.85, -0.49, 0.26, 1.2, -0.3, 0.2, -0.49, -0.18, 0.12, 0.91, 0.64, -0.09, 0.43, 0.03]),
        (&[12, 2], &[0.49, 0.01, -0.49, 1.14, 0.33, -1.13, 0.51, -0.23, -0.02, -0.24, -0.61, 0.63, -0.27, 0.18, -0.14, -0.1, -0.35, -0.1, -0.01, -0.47, 0.82, 1.32, -0.56, 0.08]),
        (&[2, 3], &[-0.17, -0.6, -0.85, 0.87, -0.05, -1.45]),
    ];
    pub(super) const PROJ_B_OUT: (&[usize], &[f64]) = (&[1, 2, 2], &[0.03066236588536332, -0.00345792841482509, 0.025572913551711336, -0.009575355917000667]);
    pub(super) const PROJ_B_HN: (&[usize], &[f64]) = (&[2, 1, 2], &[-0.026246547579032185, -0.020945925489746338, 0.025572913551711336, -0.009575355917000667]);
    pub(super) const PROJ_B_CN: (&[usize], &[f64]) = (&[2, 1, 3], &[-0.16615345473255866, 0.18264660759326143, -0.1370845224459242, 0.05559221728263434, -0.1760771793557512, 0.0530344979623209]);
    pub(super) const PROJ_B_GX: (&[usize], &[f64]) = (&[1, 2, 2], &[-0.21187404107673313, 0.295622217099318, 1.1673158703802633, -0.12298048099294921]);
    pub(super) const PROJ_B_GH0: (&[usize], &[f64]) = (&[2, 1, 2], &[-0.25301084758239034, -0.6980990630642204, 0.23365680753900975, 0.5074167010284419]);
    pub(super) const PROJ_B_GC0: (&[usize], &[f64]) = (&[2, 1, 3], &[-0.7043401438597077, -1.4174876710458757, 0.5733801673981536, 2.1488119209012586, 0.6655686799507494, -1.8604878006380123]);
    pub(super) const PROJ_B_GHR: (&[usize], &[f64]) = (&[2, 3], &[0.21374782662447028, -0.6193132278825084, 0.19075636180175182, 0.42792999975093554, -1.1035070816458343, 0.35415267013124485]);
}

/// A float64 tensor from a literal, optionally requiring grad.
fn lit(v: Lit, grad: bool) -> Tensor {
    f64s(v.1, v.0).requires_grad_(grad).unwrap()
}

/// `got` against torch's literal, shape and values (`|a - b| <= tol * (1 + |b|)`).
fn close_lit(what: &str, got: &Tensor, want: Lit, tol: f64) {
    assert_eq!(got.dims(), want.0, "{what}: shape");
    for (i, (a, b)) in got.to_f64_vec().unwrap().iter().zip(want.1).enumerate() {
        assert!((a - b).abs() <= tol * (1.0 + b.abs()), "{what}[{i}]: got {a}, PyTorch {b}");
    }
}

/// Runs `torch.lstm` with projections on a case's literals and checks torch's outputs and gradients.
fn check_proj(
    name: &str,
    x: Lit,
    h0: Lit,
    c0: Lit,
    params: &[Lit],
    flags: (bool, usize, bool, bool),
    want: [Lit; 7],
) -> Result<()> {
    let (bias, layers, bi, bf) = flags;
    let x = lit(x, true);
    let hx = [lit(h0, true), lit(c0, true)];
    let ps: Vec<Tensor> = params.iter().map(|&p| lit(p, true)).collect();
    let (o, h, c) = lstm(&x, &hx, &ps, bias, layers, 0.0, false, bi, bf)?;
    close_lit(&format!("{name}.output"), &o, want[0], 1e-10);
    close_lit(&format!("{name}.h_n"), &h, want[1], 1e-10);
    close_lit(&format!("{name}.c_n"), &c, want[2], 1e-10);
    let term = |t: &Tensor| t.mul(ramp(t))?.sum_all();
    term(&o)?.add(&term(&h)?)?.add(&term(&c)?)?.backward()?;
    close_lit(&format!("{name}.grad.x"), &x.grad().expect("x grad"), want[3], 1e-10);
    close_lit(&format!("{name}.grad.h0"), &hx[0].grad().expect("h0 grad"), want[4], 1e-10);
    close_lit(&format!("{name}.grad.c0"), &hx[1].grad().expect("c0 grad"), want[5], 1e-10);
    let w_hr = ps.last().expect("a w_hr");
    close_lit(&format!("{name}.grad.w_hr"), &w_hr.grad().expect("w_hr grad"), want[6], 1e-10);
    Ok(())
}

#[test]
fn lstm_with_projections_matches_torch() -> Result<()> {
    check_proj(
        "proj_a",
        PROJ_A_X,
        PROJ_A_H0,
        PROJ_A_C0,
        PROJ_A_PARAMS,
        (true, 1, true, false),
        [PROJ_A_OUT, PROJ_A_HN, PROJ_A_CN, PROJ_A_GX, PROJ_A_GH0, PROJ_A_GC0, PROJ_A_GHR],
    )?;
    check_proj(
        "proj_b",
        PROJ_B_X,
        PROJ_B_H0,
        PROJ_B_C0,
        PROJ_B_PARAMS,
        (false, 2, false, true),
        [PROJ_B_OUT, PROJ_B_HN, PROJ_B_CN, PROJ_B_GX, PROJ_B_GH0, PROJ_B_GC0, PROJ_B_GHR],
    )?;
    // Projected states with the unprojected parameter count (4 a direction with biases, not 5).
    let ps: Vec<Tensor> = PROJ_A_PARAMS.iter().map(|&p| lit(p, false)).collect();
    let hx = [lit(PROJ_A_H0, false), lit(PROJ_A_C0, false)];
    let x = lit(PROJ_A_X, false);
    let four: Vec<Tensor> =
        ps.iter().enumerate().filter(|(i, _)| i % 5 != 4).map(|(_, p)| p.clone()).collect();
    assert_eq!(
        err(lstm(&x, &hx, &four, true, 1, 0.0, false, true, false)),
        "got an incorrect number of RNN parameters"
    );
    Ok(())
}
