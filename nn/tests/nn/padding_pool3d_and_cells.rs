//! `nn::utils::rnn::pad_sequence`, the padding layers (`ZeroPad`, `ConstantPad`, `ReflectionPad`,
//! `ReplicationPad`, `CircularPad`, 1d/2d/3d), the 3-D pooling layers and functions,
//! `RNNCell`/`LSTMCell`/`GRUCell` and `Transformer` against PyTorch in float64: for every case of
//! `padding_pool3d_and_cells_golden.rs` (written by `nn/tests/make_padding_pool3d_and_cells_golden.py`) the module's state-dict
//! keys must be torch's, in torch's order, torch's values are loaded by key (strict), and the
//! outputs and the gradients of `sum_k (out_k * cot_k).sum()` for the inputs and every parameter
//! are compared. Plus `generate_square_subsequent_mask`, `parameters_to_vector` /
//! `vector_to_parameters`, initialisation, type names and torch's errors.

use oxtorch_nn::functional as F;
use oxtorch_nn::utils::rnn::pad_sequence;
use oxtorch_nn::utils::{parameters_to_vector, vector_to_parameters};
use oxtorch_nn::*;
use oxtorch_tensor::{DType, Result, Tensor};

use super::golden_case::{
    assert_close, err, f64s, float64, module, stateless, zeros, Inputs, ModuleGolden as Golden, Run, T,
};

include!("padding_pool3d_and_cells_golden.rs");

/// A single-input layer applied to the input `input`.
fn layer<M: Module + Forward>(g: &Golden, c: &Inputs, m: M) -> Result<Run> {
    module(g, m, |m| Ok(vec![m.forward(c.t("input"))?]))
}

/// The tiny transformer of the golden cases: d_model 8, 2 heads, feed-forward 16, no dropout.
fn tiny(num_encoder_layers: usize, o: TransformerOptions) -> Result<Transformer> {
    Transformer::new(TransformerOptions {
        d_model: 8,
        nhead: 2,
        num_encoder_layers,
        num_decoder_layers: 1,
        dim_feedforward: 16,
        dropout: 0.0,
        ..o
    })
}

/// The module and call of each case (the same arguments as the script's).
fn run(g: &Golden, c: &Inputs) -> Result<Run> {
    let t = |k: &str| c.t(k);
    let seqs = || vec![t("s0").clone(), t("s1").clone(), t("s2").clone()];
    let ps = |batch_first: bool, value: f64, side: &str| {
        stateless(Ok(vec![pad_sequence(&seqs(), batch_first, value, side)?]))
    };
    let pair = |r: Result<(Tensor, Tensor)>| stateless(r.map(|(a, b)| vec![a, b]));
    match g.name {
        "pad_sequence_right" => ps(false, 0.0, "right"),
        "pad_sequence_right_batch_first" => ps(true, -1.5, "right"),
        "pad_sequence_left" => ps(false, 2.0, "left"),
        "pad_sequence_left_batch_first" => ps(true, 0.0, "left"),
        "pad_sequence_1d_left_batch_first" => ps(true, 0.25, "left"),
        "pad_sequence_3d_right" => ps(false, -3.0, "right"),
        "zeropad1d" => layer(g, c, ZeroPad1d::new(&[1, 2])),
        "zeropad2d" => layer(g, c, ZeroPad2d::new(&[1])),
        "zeropad3d" => layer(g, c, ZeroPad3d::new(&[1, 0, 0, 1, 2, 1])),
        "constantpad1d_negative" => layer(g, c, ConstantPad1d::new(&[-1, 2], 2.5)),
        "constantpad2d_unbatched" => layer(g, c, ConstantPad2d::new(&[2, 1, 0, 1], -1.0)),
        "constantpad3d" => layer(g, c, ConstantPad3d::new(&[1], 0.5)),
        "reflectionpad1d" => layer(g, c, ReflectionPad1d::new(&[2, 1])),
        "reflectionpad2d_unbatched" => layer(g, c, ReflectionPad2d::new(&[1, 2, 2, 1])),
        "reflectionpad3d" => layer(g, c, ReflectionPad3d::new(&[1])),
        "replicationpad1d_unbatched" => layer(g, c, ReplicationPad1d::new(&[3, 1])),
        "replicationpad2d" => layer(g, c, ReplicationPad2d::new(&[2])),
        "replicationpad3d_unbatched" => layer(g, c, ReplicationPad3d::new(&[1, 2, 0, 1, 1, 0])),
        "circularpad1d" => layer(g, c, CircularPad1d::new(&[2, 1])),
        "circularpad2d_negative" => layer(g, c, CircularPad2d::new(&[1, -1, 2, 0])),
        "circularpad3d" => layer(g, c, CircularPad3d::new(&[1])),
        "maxpool3d" => {
            layer(g, c, MaxPool3d { stride: Some(vec![1]), padding: vec![1], ..MaxPool3d::new(&[2]) })
        }
        "maxpool3d_dilation_ceil" => layer(
            g,
            c,
            MaxPool3d {
                stride: Some(vec![2]),
                dilation: vec![1, 1, 2],
                ceil_mode: true,
                ..MaxPool3d::new(&[2, 2, 2])
            },
        ),
        "avgpool3d_exclude_pad" => layer(
            g,
            c,
            AvgPool3d {
                stride: Some(vec![2]),
                padding: vec![1],
                count_include_pad: false,
                ..AvgPool3d::new(&[2])
            },
        ),
        "avgpool3d_ceil_divisor_unbatched" => layer(
            g,
            c,
            AvgPool3d {
                stride: Some(vec![1, 2, 1]),
                ceil_mode: true,
                divisor_override: Some(3),
                ..AvgPool3d::new(&[1, 2, 2])
            },
        ),
        "adaptiveavgpool3d" => layer(g, c, AdaptiveAvgPool3d::new(&[2, 1, 3])),
        "adaptivemaxpool3d_unbatched" => layer(g, c, AdaptiveMaxPool3d::new(&[2])),
        "f_max_pool3d_with_indices" => {
            pair(F::max_pool3d_with_indices(t("input"), &[2], None, &[0], &[1], false))
        }
        "f_adaptive_max_pool3d_with_indices" => {
            pair(F::adaptive_max_pool3d_with_indices(t("input"), &[2, 3, 2]))
        }
        "rnncell_tanh" => {
            module(g, RNNCell::new(3, 4, true, "tanh")?, |m| Ok(vec![m.forward(t("input"), Some(t("hx")))?]))
        }
        "rnncell_relu_no_hx" => {
            module(g, RNNCell::new(3, 4, true, "relu")?, |m| Ok(vec![m.forward(t("input"), None)?]))
        }
        "rnncell_unbatched_no_bias" => {
            module(g, RNNCell::new(3, 4, false, "tanh")?, |m| Ok(vec![m.forward(t("input"), Some(t("hx")))?]))
        }
        "lstmcell" | "lstmcell_no_bias" => module(g, LSTMCell::new(3, 4, g.name == "lstmcell")?, |m| {
            let (h, c) = m.forward(t("input"), Some((t("h"), t("c"))))?;
            Ok(vec![h, c])
        }),
        "lstmcell_unbatched_no_hx" => module(g, LSTMCell::new(3, 4, true)?, |m| {
            let (h, c) = m.forward(t("input"), None)?;
            Ok(vec![h, c])
        }),
        "lstmcell_two_steps" => module(g, LSTMCell::new(3, 4, true)?, |m| {
            let (h, c) = m.forward(t("x0"), None)?;
            let (h, c) = m.forward(t("x1"), Some((&h, &c)))?;
            Ok(vec![h, c])
        }),
        "grucell" | "grucell_unbatched" => {
            module(g, GRUCell::new(3, 4, true)?, |m| Ok(vec![m.forward(t("input"), Some(t("hx")))?]))
        }
        "grucell_no_bias_no_hx" => {
            module(g, GRUCell::new(3, 4, false)?, |m| Ok(vec![m.forward(t("input"), None)?]))
        }
        "transformer" => {
            module(g, tiny(1, TransformerOptions::default())?, |m| Ok(vec![m.forward(t("src"), t("tgt"))?]))
        }
        "transformer_pre_norm_batch_first_gelu_masked" => {
            let o = TransformerOptions {
                activation: "gelu",
                layer_norm_eps: 1e-6,
                batch_first: true,
                norm_first: true,
                ..Default::default()
            };
            module(g, tiny(2, o)?, |m| {
                let tgt_mask = Transformer::generate_square_subsequent_mask(4, DType::F64)?;
                let kpm = t("src_key_padding_mask");
                let masks = TransformerMasks {
                    tgt_mask: Some(&tgt_mask),
                    src_key_padding_mask: Some(kpm),
                    memory_key_padding_mask: Some(kpm),
                    ..Default::default()
                };
                Ok(vec![m.forward_masked(t("src"), t("tgt"), masks)?])
            })
        }
        "transformer_no_bias_unbatched" => {
            module(g, tiny(1, TransformerOptions { bias: false, ..Default::default() })?, |m| {
                Ok(vec![m.forward(t("src"), t("tgt"))?])
            })
        }
        other => panic!("no call for golden case {other}"),
    }
}

/// Composed ops (the cells, the transformer) may round differently from torch's kernels; copies
/// and pools are near exact.
fn tol(name: &str) -> f64 {
    if name.starts_with("transformer") {
        1e-9
    } else {
        1e-10
    }
}

#[test]
fn every_case_matches_pytorch_values_and_gradients() -> Result<()> {
    assert_eq!(GOLDEN.len(), 42, "the golden file's case count changed");
    for g in GOLDEN {
        let inputs = Inputs(
            g.inputs
                .iter()
                .map(|(k, v)| {
                    let t = float64(v);
                    let t = if k.ends_with("_mask") {
                        t.to_dtype(DType::Bool).unwrap()
                    } else {
                        t.requires_grad_(g.input_grads.iter().any(|(n, _)| n == k)).unwrap()
                    };
                    (*k, t)
                })
                .collect(),
        );
        let rtol = tol(g.name);
        let outs_and_params = run(g, &inputs).unwrap_or_else(|e| panic!("{}: {e}", g.name));
        g.check(&inputs, outs_and_params, rtol)?;
    }
    Ok(())
}

#[test]
fn square_subsequent_masks_are_torch_s() -> Result<()> {
    for (sz, want) in SQUARE_SUBSEQUENT_MASKS {
        let m = Transformer::generate_square_subsequent_mask(*sz, ())?;
        assert_eq!(m.dtype(), DType::F32, "sz {sz}");
        assert_close(&format!("mask {sz}"), &m.to_dtype(DType::F64)?, want, 0.0);
    }
    let m = Transformer::generate_square_subsequent_mask(3, DType::F64)?;
    assert_eq!(m.dtype(), DType::F64);
    let inf = f64::NEG_INFINITY;
    assert_eq!(m.to_vec::<f64>()?, vec![0.0, inf, inf, 0.0, 0.0, inf, 0.0, 0.0, 0.0]);
    assert_eq!(Transformer::generate_square_subsequent_mask(0, ())?.dims(), &[0, 0]);
    assert_eq!(
        err(Transformer::generate_square_subsequent_mask(3, DType::I64)),
        "value cannot be converted to type int64_t without overflow"
    );
    Ok(())
}

#[test]
fn transformer_builds_torch_s_tree_and_refuses_mismatched_inputs() -> Result<()> {
    let mut o = TransformerOptions::default();
    assert_eq!(
        (o.d_model, o.nhead, o.num_encoder_layers, o.num_decoder_layers, o.dim_feedforward),
        (512, 8, 6, 6, 2048)
    );
    assert_eq!((o.dropout, o.activation, o.layer_norm_eps), (0.1, "relu", 1e-5));
    assert!(!o.batch_first && !o.norm_first && o.bias);
    o = TransformerOptions {
        d_model: 8,
        nhead: 2,
        num_encoder_layers: 2,
        num_decoder_layers: 1,
        dim_feedforward: 16,
        ..o
    };
    let model = Transformer::new(o)?;
    assert_eq!(model.type_name(), "Transformer");
    let sd = model.state_dict();
    assert_eq!(sd.len(), 46, "torch's nn.Transformer(8, 2, 2, 1, 16) has 46 entries");
    let keys: Vec<&str> = sd.keys().collect();
    assert_eq!(
        &keys[..3],
        [
            "encoder.layers.0.self_attn.in_proj_weight",
            "encoder.layers.0.self_attn.in_proj_bias",
            "encoder.layers.0.self_attn.out_proj.weight"
        ]
    );
    for k in [
        "encoder.norm.weight",
        "encoder.norm.bias",
        "decoder.norm.weight",
        "decoder.layers.0.multihead_attn.in_proj_weight",
        "encoder.layers.1.norm2.bias",
    ] {
        assert!(sd.get(k).is_some(), "no {k}");
    }
    // torch's _reset_parameters: Xavier-uniform for every matrix, drawn per layer (the layers no
    // longer share their first one's weights); vectors keep their layer's initialisation.
    let get = |k: &str| sd.get(k).unwrap().to_f64_vec().unwrap();
    assert_ne!(get("encoder.layers.0.linear1.weight"), get("encoder.layers.1.linear1.weight"));
    let bound = |fan_in: f64, fan_out: f64| (6.0 / (fan_in + fan_out)).sqrt();
    for (k, a) in [
        ("encoder.layers.0.self_attn.in_proj_weight", bound(8.0, 24.0)),
        ("decoder.layers.0.linear1.weight", bound(8.0, 16.0)),
        ("decoder.layers.0.multihead_attn.out_proj.weight", bound(8.0, 8.0)),
    ] {
        let w = get(k);
        assert!(w.iter().all(|v| v.abs() <= a), "{k}: Xavier bound {a}");
        assert!(w.iter().any(|v| v.abs() > a / 2.0), "{k}: drawn");
    }
    assert!(get("encoder.layers.0.self_attn.in_proj_bias").iter().all(|&v| v == 0.0));
    assert!(get("decoder.norm.weight").iter().all(|&v| v == 1.0));
    assert!(get("decoder.norm.bias").iter().all(|&v| v == 0.0));
    assert!(get("encoder.layers.0.linear1.bias").iter().any(|&v| v != 0.0));
    assert!(model.parameters().iter().all(|p| p.requires_grad() && p.dtype() == DType::F32));

    let out = model.forward(&zeros(&[5, 2, 8]), &zeros(&[3, 2, 8]))?;
    assert_eq!(out.dims(), &[3, 2, 8]);
    assert_eq!(model.forward(&zeros(&[5, 8]), &zeros(&[3, 8]))?.dims(), &[3, 8]);
    assert_eq!(
        err(model.forward(&zeros(&[5, 2, 8]), &zeros(&[3, 3, 8]))),
        "the batch number of src and tgt must be equal"
    );
    assert_eq!(
        err(model.forward(&zeros(&[5, 2, 8]), &zeros(&[3, 2, 6]))),
        "the feature number of src and tgt must be equal to d_model"
    );
    assert_eq!(
        err(model.forward(&zeros(&[5, 2, 6]), &zeros(&[3, 2, 8]))),
        "the feature number of src and tgt must be equal to d_model"
    );
    let bf = Transformer::new(TransformerOptions { batch_first: true, ..o_small() })?;
    assert_eq!(bf.forward(&zeros(&[2, 5, 8]), &zeros(&[2, 3, 8]))?.dims(), &[2, 3, 8]);
    assert_eq!(
        err(bf.forward(&zeros(&[2, 5, 8]), &zeros(&[3, 5, 8]))),
        "the batch number of src and tgt must be equal"
    );
    assert!(Transformer::new(TransformerOptions { activation: "tanh", ..o_small() }).is_err());
    Ok(())
}

fn o_small() -> TransformerOptions {
    TransformerOptions {
        d_model: 8,
        nhead: 2,
        num_encoder_layers: 1,
        num_decoder_layers: 1,
        dim_feedforward: 16,
        ..Default::default()
    }
}

#[test]
fn cells_have_torch_s_parameters_and_initialisation() -> Result<()> {
    let keys = |m: &dyn Module| -> Vec<(String, Vec<usize>)> {
        m.state_dict().iter().map(|(k, t)| (k.to_string(), t.dims().to_vec())).collect()
    };
    let named = |v: Vec<(&str, Vec<usize>)>| -> Vec<(String, Vec<usize>)> {
        v.into_iter().map(|(k, d)| (k.to_string(), d)).collect()
    };
    let rnn = RNNCell::new(3, 4, true, "tanh")?;
    assert_eq!(
        keys(&rnn),
        named(vec![
            ("weight_ih", vec![4, 3]),
            ("weight_hh", vec![4, 4]),
            ("bias_ih", vec![4]),
            ("bias_hh", vec![4])
        ])
    );
    let lstm = LSTMCell::new(3, 4, true)?;
    assert_eq!(
        keys(&lstm),
        named(vec![
            ("weight_ih", vec![16, 3]),
            ("weight_hh", vec![16, 4]),
            ("bias_ih", vec![16]),
            ("bias_hh", vec![16])
        ])
    );
    let gru = GRUCell::new(5, 2, false)?;
    assert_eq!(keys(&gru), named(vec![("weight_ih", vec![6, 5]), ("weight_hh", vec![6, 2])]));
    assert_eq!((rnn.type_name(), lstm.type_name(), gru.type_name()), ("RNNCell", "LSTMCell", "GRUCell"));
    // U(-1/sqrt(hidden), 1/sqrt(hidden)) for every parameter, float32, trainable.
    let big = LSTMCell::new(6, 16, true)?;
    for (k, p) in big.named_parameters() {
        assert_eq!(p.dtype(), DType::F32, "{k}");
        assert!(p.requires_grad(), "{k}");
        let v = p.to_f64_vec()?;
        assert!(v.iter().all(|x| x.abs() <= 0.25), "{k}: bound 1/sqrt(16)");
        assert!(v.iter().any(|x| x.abs() > 0.125), "{k}: drawn");
    }
    // A zero hidden size is torch's: empty weights, an empty state.
    let empty = RNNCell::new(3, 0, true, "tanh")?;
    assert_eq!(empty.forward(&zeros(&[2, 3]), None)?.dims(), &[2, 0]);
    Ok(())
}

#[test]
fn cells_refuse_bad_shapes_in_torch_s_words() -> Result<()> {
    let rnn = RNNCell::new(3, 4, true, "tanh")?;
    let lstm = LSTMCell::new(3, 4, true)?;
    let gru = GRUCell::new(3, 4, true)?;
    let z = zeros;
    assert_eq!(err(rnn.forward(&z(&[2, 5]), None)), "input has inconsistent input_size: got 5 expected 3");
    assert_eq!(
        err(rnn.forward(&z(&[2, 5]), Some(&z(&[4])))),
        "input has inconsistent input_size: got 5 expected 3"
    );
    assert_eq!(
        err(rnn.forward(&z(&[2, 3]), Some(&z(&[3, 4])))),
        "Input batch size 2 doesn't match hidden0 batch size 3"
    );
    assert_eq!(
        err(rnn.forward(&z(&[2, 3]), Some(&z(&[2, 5])))),
        "hidden0 has inconsistent hidden_size: got 5, expected 4"
    );
    assert_eq!(
        err(rnn.forward(&z(&[3]), Some(&z(&[2, 4])))),
        "Expected 2D hidden0 (batch x hidden_size), but got 3D tensor"
    );
    assert_eq!(
        err(rnn.forward(&z(&[2, 3]), Some(&z(&[4])))),
        "Expected 2D hidden0 (batch x hidden_size), but got 1D tensor"
    );
    assert_eq!(
        err(rnn.forward(&z(&[2, 3, 3]), None)),
        "RNNCell: Expected input to be 1D or 2D, got 3D instead"
    );
    assert_eq!(
        err(rnn.forward(&z(&[2, 3]), Some(&z(&[1, 2, 4])))),
        "RNNCell: Expected hidden to be 1D or 2D, got 3D instead"
    );
    assert_eq!(rnn.forward(&z(&[3]), Some(&z(&[4])))?.dims(), &[4]);
    assert_eq!(rnn.forward(&z(&[0, 3]), None)?.dims(), &[0, 4]);
    // As torch, an unknown nonlinearity is accepted by the constructor and refused by forward,
    // before the shape checks.
    let odd = RNNCell::new(3, 4, true, "foo")?;
    assert_eq!(err(odd.forward(&z(&[2, 5]), None)), "Unknown nonlinearity: foo");

    let (h, c) = (z(&[2, 4]), z(&[2, 4]));
    assert_eq!(err(lstm.forward(&z(&[2, 5]), None)), "input has inconsistent input_size: got 5 expected 3");
    assert_eq!(
        err(lstm.forward(&z(&[2, 3]), Some((&h, &z(&[2, 5]))))),
        "hidden1 has inconsistent hidden_size: got 5, expected 4"
    );
    assert_eq!(
        err(lstm.forward(&z(&[2, 3]), Some((&z(&[2, 5]), &z(&[3, 4]))))),
        "hidden0 has inconsistent hidden_size: got 5, expected 4"
    );
    assert_eq!(
        err(lstm.forward(&z(&[2, 3]), Some((&h, &z(&[3, 4]))))),
        "Input batch size 2 doesn't match hidden1 batch size 3"
    );
    assert_eq!(
        err(lstm.forward(&z(&[2, 3]), Some((&h, &z(&[1, 2, 4]))))),
        "LSTMCell: Expected hx[1] to be 1D or 2D, got 3D instead"
    );
    assert_eq!(
        err(lstm.forward(&z(&[3]), Some((&z(&[4]), &c)))),
        "Expected 2D hidden1 (batch x hidden_size), but got 3D tensor"
    );
    assert_eq!(
        err(lstm.forward(&z(&[1, 1, 3]), None)),
        "LSTMCell: Expected input to be 1D or 2D, got 3D instead"
    );
    let (h1, c1) = lstm.forward(&z(&[3]), None)?;
    assert_eq!((h1.dims(), c1.dims()), (&[4][..], &[4][..]));

    assert_eq!(err(gru.forward(&z(&[2, 5]), None)), "input has inconsistent input_size: got 5 expected 3");
    assert_eq!(
        err(gru.forward(&z(&[2, 3]), Some(&z(&[2, 5])))),
        "hidden0 has inconsistent hidden_size: got 5, expected 4"
    );
    assert_eq!(
        err(gru.forward(&z(&[3]), Some(&z(&[2, 4])))),
        "Expected 2D hidden0 (batch x hidden_size), but got 3D tensor"
    );
    assert_eq!(err(gru.forward(&z(&[]), None)), "GRUCell: Expected input to be 1D or 2D, got 0D instead");
    Ok(())
}

/// Stepping a cell through a sequence is the one-layer recurrent layer with the same weights.
#[test]
fn cells_step_as_the_recurrent_layers() -> Result<()> {
    let x =
        Tensor::from_vec((0..18).map(|i| ((i * 7 % 11) as f32 - 5.0) / 4.0).collect::<Vec<_>>(), [3, 2, 3])?;
    let rename = |m: &dyn Module| {
        let mut sd = StateDict::new();
        for (k, t) in m.state_dict().iter() {
            sd.insert(&format!("{k}_l0"), t.clone());
        }
        sd
    };
    let lstm_cell = LSTMCell::new(3, 4, true)?;
    let mut lstm = LSTM::new(3, 4, RnnOptions::default())?;
    lstm.load_state_dict(&rename(&lstm_cell), true)?;
    let (out, (h_n, c_n)) = lstm.forward(&x, None)?;
    let (mut h, mut c) = lstm_cell.forward(&x.select(0, 0)?, None)?;
    for step in 1..3 {
        let (nh, nc) = lstm_cell.forward(&x.select(0, step)?, Some((&h, &c)))?;
        (h, c) = (nh, nc);
    }
    let close = |a: &Tensor, b: &Tensor| {
        a.sub(b).unwrap().abs().unwrap().max().unwrap().item::<f32>().unwrap() < 1e-6
    };
    assert!(close(&out.select(0, 2)?, &h) && close(&h_n.select(0, 0)?, &h) && close(&c_n.select(0, 0)?, &c));

    let gru_cell = GRUCell::new(3, 4, true)?;
    let mut gru = GRU::new(3, 4, RnnOptions::default())?;
    gru.load_state_dict(&rename(&gru_cell), true)?;
    let (out, _) = gru.forward(&x, None)?;
    let mut h = gru_cell.forward(&x.select(0, 0)?, None)?;
    for step in 1..3 {
        h = gru_cell.forward(&x.select(0, step)?, Some(&h))?;
    }
    assert!(close(&out.select(0, 2)?, &h));

    let rnn_cell = RNNCell::new(3, 4, true, "relu")?;
    let mut rnn = RNN::new(3, 4, "relu", RnnOptions::default())?;
    rnn.load_state_dict(&rename(&rnn_cell), true)?;
    let (out, _) = rnn.forward(&x, None)?;
    let mut h = rnn_cell.forward(&x.select(0, 0)?, None)?;
    for step in 1..3 {
        h = rnn_cell.forward(&x.select(0, step)?, Some(&h))?;
    }
    assert!(close(&out.select(0, 2)?, &h));
    Ok(())
}

#[test]
fn padding_layers_take_torch_s_arguments_and_check_ranks() -> Result<()> {
    assert_eq!(ZeroPad2d::new(&[1]).padding, vec![1, 1, 1, 1]);
    assert_eq!(ReflectionPad1d::new(&[2]).padding, vec![2, 2]);
    assert_eq!(CircularPad3d::new(&[1]).padding, vec![1; 6]);
    let c = ConstantPad3d::new(&[1, 2, 3, 4, 5, 6], 3.5);
    assert_eq!((c.padding.clone(), c.value), (vec![1, 2, 3, 4, 5, 6], 3.5));
    let names = [
        ZeroPad1d::new(&[1]).type_name(),
        ZeroPad3d::new(&[1]).type_name(),
        ConstantPad2d::new(&[1], 0.0).type_name(),
        ReflectionPad3d::new(&[1]).type_name(),
        ReplicationPad1d::new(&[1]).type_name(),
        CircularPad2d::new(&[1]).type_name(),
    ];
    assert_eq!(
        names,
        ["ZeroPad1d", "ZeroPad3d", "ConstantPad2d", "ReflectionPad3d", "ReplicationPad1d", "CircularPad2d"]
    );
    assert!(ZeroPad2d::new(&[1]).state_dict().is_empty());
    // As torch, a list of another length is passed to F.pad as it is.
    assert_eq!(ZeroPad2d::new(&[1, 2]).forward(&zeros(&[3, 3]))?.dims(), &[3, 6]);
    assert_eq!(
        err(ZeroPad2d::new(&[1, 2, 3]).forward(&zeros(&[3, 3]))),
        "Padding length must be divisible by 2"
    );
    // Constant padding takes any rank with enough dims; the others N + 1 or N + 2 dims.
    assert_eq!(ConstantPad1d::new(&[1], 2.0).forward(&zeros(&[2, 2, 2, 2, 3]))?.dims(), &[2, 2, 2, 2, 5]);
    assert_eq!(
        err(ConstantPad2d::new(&[1], 2.0).forward(&zeros(&[3]))),
        "Padding length should be less than or equal to two times the input dimension but got padding length 4 and input of dimension 1"
    );
    assert_eq!(err(CircularPad1d::new(&[1]).forward(&zeros(&[3]))), "expected 2D or 3D input (got 1D input)");
    assert_eq!(
        err(CircularPad2d::new(&[1]).forward(&zeros(&[1, 1, 1, 3, 3]))),
        "expected 3D or 4D input (got 5D input)"
    );
    assert_eq!(
        err(CircularPad3d::new(&[1]).forward(&zeros(&[3, 3, 3]))),
        "expected 4D or 5D input (got 3D input)"
    );
    // torch's message goes on with the supported combinations.
    let e = err(ReflectionPad2d::new(&[1]).forward(&zeros(&[2, 2, 3, 3, 3])));
    assert!(e.starts_with("Padding size 4 is not supported for 5D input tensor."), "{e}");
    let e = err(ReplicationPad3d::new(&[1]).forward(&zeros(&[3, 3, 3])));
    assert!(e.starts_with("Padding size 6 is not supported for 3D input tensor."), "{e}");
    assert_eq!(
        err(ReflectionPad1d::new(&[3]).forward(&zeros(&[3, 3]))),
        "Argument #4: Padding size should be less than the corresponding input dimension, but got: padding (3, 3) at dimension 1 of input [3, 3]"
    );
    // ReflectionPad2d: 3-D (unbatched) and 4-D inputs.
    assert_eq!(ReflectionPad2d::new(&[1]).forward(&zeros(&[2, 3, 3]))?.dims(), &[2, 5, 5]);
    assert_eq!(ReflectionPad2d::new(&[1]).forward(&zeros(&[1, 2, 3, 3]))?.dims(), &[1, 2, 5, 5]);
    Ok(())
}

#[test]
fn pools_3d_have_torch_s_names() -> Result<()> {
    assert_eq!(MaxPool3d::new(&[2]).type_name(), "MaxPool3d");
    assert_eq!(AvgPool3d::new(&[2]).type_name(), "AvgPool3d");
    assert_eq!(AdaptiveAvgPool3d::new(&[2]).type_name(), "AdaptiveAvgPool3d");
    assert_eq!(AdaptiveMaxPool3d::new(&[2]).type_name(), "AdaptiveMaxPool3d");
    assert_eq!(MaxPool2d::new(&[2]).type_name(), "MaxPool2d");
    let x = zeros(&[1, 2, 4, 4, 4]);
    assert_eq!(F::max_pool3d(&x, &[2], None, &[0], &[1], false)?.dims(), &[1, 2, 2, 2, 2]);
    assert_eq!(F::avg_pool3d(&x, &[2], Some(&[1][..]), &[1], false, true, None)?.dims(), &[1, 2, 5, 5, 5]);
    assert_eq!(F::adaptive_avg_pool3d(&x, &[1, 2, 3])?.dims(), &[1, 2, 1, 2, 3]);
    assert_eq!(F::adaptive_max_pool3d(&x, &[3])?.dims(), &[1, 2, 3, 3, 3]);
    Ok(())
}

#[test]
fn pad_sequence_follows_torch_s_rules() -> Result<()> {
    let a = f64s(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3]);
    assert_eq!(err(pad_sequence(&[], false, 0.0, "right")), "received an empty list of sequences");
    assert_eq!(
        err(pad_sequence(&[a.clone(), a.clone()], false, 0.0, "up")),
        "Expected padding_side to be one of left or right, but got up."
    );
    let scalar = Tensor::scalar_tensor(1.0, DType::F64)?;
    assert_eq!(
        err(pad_sequence(&[scalar.clone(), scalar.clone()], false, 0.0, "right")),
        "ArrayRef: invalid slice, N = 1; size = 0"
    );
    assert_eq!(
        err(pad_sequence(&[a.clone(), scalar], false, 0.0, "right")),
        "Dimension specified as 0 but tensor has no dimensions"
    );
    assert_eq!(
        err(pad_sequence(&[a.clone(), zeros(&[3, 4])], false, 0.0, "left")),
        "The size of tensor a (3) must match the size of tensor b (4) at non-singleton dimension 1"
    );
    assert_eq!(
        err(pad_sequence(&[a.clone(), zeros(&[1, 2, 3])], false, 0.0, "right")),
        "output with shape [1, 3] doesn't match the broadcast shape [1, 2, 3]"
    );
    // The output takes the first sequence's dtype and trailing dims; the others are cast and
    // broadcast.
    let a32 = a.to_dtype(DType::F32)?;
    let b = f64s(&[7.0], &[1, 1]);
    let out = pad_sequence(&[a32, b], true, -1.0, "right")?;
    assert_eq!(out.dtype(), DType::F32);
    assert_eq!(out.dims(), &[2, 2, 3]);
    assert_eq!(out.to_vec::<f32>()?, vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 7.0, 7.0, -1.0, -1.0, -1.0]);
    // An integer output truncates the padding value, as torch's full.
    let ints = [Tensor::from_vec(vec![1i64, 2], [2])?, Tensor::from_vec(vec![3i64], [1])?];
    let out = pad_sequence(&ints, false, 1.5, "right")?;
    assert_eq!((out.dtype(), out.to_vec::<i64>()?), (DType::I64, vec![1, 3, 2, 1]));
    assert_eq!(
        err(pad_sequence(&ints, false, f64::NAN, "right")),
        "value cannot be converted to type int64_t without overflow"
    );
    // Empty sequences pad to the longest.
    let out = pad_sequence(&[zeros(&[0]), f64s(&[1.0, 2.0], &[2])], true, 9.0, "left")?;
    assert_eq!(out.to_f64_vec()?, vec![9.0, 9.0, 1.0, 2.0]);
    Ok(())
}

#[test]
fn parameters_to_vector_and_back() -> Result<()> {
    let lin = Linear::new(3, 2, true)?;
    let params = lin.parameters();
    let vec = parameters_to_vector(&params)?;
    assert_eq!(vec.dims(), &[8]);
    let mut want = lin.weight.to_f64_vec()?;
    want.extend(lin.bias.as_ref().unwrap().to_f64_vec()?);
    assert_eq!(vec.to_f64_vec()?, want);
    // Differentiable: the gradient reaches the parameters.
    let w = Tensor::from_vec((1..=8).map(|i| i as f32).collect::<Vec<_>>(), [8])?;
    vec.mul(&w)?.sum_all()?.backward()?;
    assert_eq!(lin.weight.grad().unwrap().to_vec::<f32>()?, vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
    assert_eq!(lin.bias.as_ref().unwrap().grad().unwrap().to_vec::<f32>()?, vec![7.0, 8.0]);
    assert_eq!(err(parameters_to_vector(&[])), "torch.cat(): expected a non-empty list of Tensors");

    // Back: consecutive slices, extra elements ignored; the parameters keep their identity.
    let v = Tensor::from_vec((0..10).map(|i| i as f32).collect::<Vec<_>>(), [10])?;
    vector_to_parameters(&v, &params)?;
    assert_eq!(lin.weight.to_vec::<f32>()?, vec![0.0, 1.0, 2.0, 3.0, 4.0, 5.0]);
    assert_eq!(lin.bias.as_ref().unwrap().to_vec::<f32>()?, vec![6.0, 7.0]);
    assert!(params[0].is_same(&lin.weight) && lin.weight.requires_grad());
    assert_eq!(
        err(vector_to_parameters(&Tensor::from_vec(vec![0.0f32, 1.0], [2])?, &params)),
        "shape '[2, 3]' is invalid for input of size 2"
    );
    Ok(())
}
