//! Layers against PyTorch (`tests/golden/nn_layers.safetensors`, written by
//! `tests/golden/make_golden_nn_layers.py`): each torch module's state dict is loaded (strict) into
//! the oxtorch module, which must have the same keys in the same order; outputs, parameter
//! gradients and input gradients are compared. Plus initialisation, containers and errors.

use std::collections::HashMap;

use oxtorch_nn::*;
use oxtorch_tensor::{DType, Result, Tensor};

struct Golden {
    sd: StateDict,
    meta: HashMap<String, String>,
}

fn golden() -> Golden {
    let path = format!("{}/../tests/golden/nn_layers.safetensors", env!("CARGO_MANIFEST_DIR"));
    let bytes = std::fs::read(path).unwrap();
    let (_, header) = safetensors::SafeTensors::read_metadata(&bytes).unwrap();
    let meta = header.metadata().clone().unwrap_or_default();
    Golden { sd: StateDict::from_safetensors_bytes(&bytes).unwrap(), meta }
}

/// The entries under `prefix.`, with the prefix removed.
fn sub(sd: &StateDict, prefix: &str) -> StateDict {
    let mut out = StateDict::new();
    for (k, v) in sd.iter() {
        if let Some(rest) = k.strip_prefix(&format!("{prefix}.")) {
            out.insert(rest, v.clone());
        }
    }
    out
}

fn assert_close(what: &str, got: &Tensor, want: &Tensor, tol: f64) {
    assert_eq!(got.dims(), want.dims(), "{what}: shape");
    let (a, b) = (got.to_f64_vec().unwrap(), want.to_f64_vec().unwrap());
    for (i, (x, y)) in a.iter().zip(&b).enumerate() {
        assert!((x - y).abs() <= tol * (1.0 + y.abs()), "{what}[{i}]: got {x}, PyTorch {y}");
    }
}

type Outputs = Vec<Option<Tensor>>;

/// Loads case `name` into `module`, runs `run` on its inputs and compares everything.
fn check<M: Module>(g: &Golden, name: &str, mut module: M, run: impl Fn(&M, &StateDict) -> Result<Outputs>) {
    let keys: Vec<String> = module.state_dict().keys().map(str::to_string).collect();
    let want = g.meta.get(&format!("keys.{name}")).unwrap_or_else(|| panic!("no golden case {name}"));
    let want: Vec<String> = want.split(',').filter(|k| !k.is_empty()).map(str::to_string).collect();
    assert_eq!(keys, want, "{name}: state-dict keys");
    module.load_state_dict(&sub(&g.sd, &format!("{name}.state")), true).unwrap();
    let ingrad = sub(&g.sd, &format!("{name}.ingrad"));
    let mut inputs = StateDict::new();
    for (k, v) in sub(&g.sd, &format!("{name}.in")).iter() {
        let v = if ingrad.get(k).is_some() { v.detach().requires_grad_(true).unwrap() } else { v.clone() };
        inputs.insert(k, v);
    }
    let outs = run(&module, &inputs).unwrap_or_else(|e| panic!("{name}: {e}"));
    let gout = sub(&g.sd, &format!("{name}.gout"));
    let mut total: Option<Tensor> = None;
    for (i, out) in outs.iter().enumerate() {
        let want = g.sd.get(&format!("{name}.out.{i}"));
        match (out, want) {
            (Some(o), Some(w)) => assert_close(&format!("{name}.out.{i}"), o, w, 1e-5),
            (None, None) => continue,
            (o, w) => panic!("{name}.out.{i}: oxtorch {}, PyTorch {}", o.is_some(), w.is_some()),
        }
        if let (Some(o), Some(go)) = (out, gout.get(&i.to_string())) {
            let term = o.mul(go).unwrap().sum_all().unwrap();
            total = Some(match total {
                Some(t) => t.add(&term).unwrap(),
                None => term,
            });
        }
    }
    let extra = format!("{name}.out.{}", outs.len());
    assert!(g.sd.get(&extra).is_none(), "{name}: PyTorch returns more outputs");
    let Some(total) = total else { return };
    total.backward().unwrap();
    for (k, p) in module.named_parameters() {
        let got = p.grad().unwrap_or_else(|| p.zeros_like().unwrap());
        assert_close(&format!("{name}.grad.{k}"), &got, g.sd.get(&format!("{name}.grad.{k}")).unwrap(), 1e-5);
    }
    for (k, want) in ingrad.iter() {
        let x = inputs.get(k).unwrap();
        let got = x.grad().unwrap_or_else(|| x.zeros_like().unwrap());
        assert_close(&format!("{name}.ingrad.{k}"), &got, want, 1e-5);
    }
}

fn one(t: Tensor) -> Result<Outputs> {
    Ok(vec![Some(t)])
}

fn input(i: &StateDict, k: &str) -> Tensor {
    i.get(k).unwrap_or_else(|| panic!("no input {k}")).clone()
}

fn forward<M: Module + Forward>(m: &M, i: &StateDict) -> Result<Outputs> {
    one(m.forward(&input(i, "x"))?)
}

#[test]
fn conv_transpose_and_bilinear_match_pytorch() -> Result<()> {
    let g = golden();
    let opts = |stride: &[usize], padding: &[usize], output_padding: &[usize], groups, dilation: &[usize]| {
        ConvTransposeOptions {
            stride: stride.to_vec(),
            padding: padding.to_vec(),
            output_padding: output_padding.to_vec(),
            groups,
            dilation: dilation.to_vec(),
            ..Default::default()
        }
    };
    check(&g, "convt1d", ConvTranspose1d::new(4, 6, &[3], opts(&[2], &[1], &[1], 2, &[2]))?, forward);
    check(
        &g,
        "convt2d",
        ConvTranspose2d::new(4, 6, &[3, 2], opts(&[2, 1], &[1, 0], &[1, 0], 2, &[1, 2]))?,
        forward,
    );
    let nobias = ConvTransposeOptions { stride: vec![2], bias: false, ..Default::default() };
    check(&g, "convt2d_nobias", ConvTranspose2d::new(4, 3, &[2], nobias)?, forward);
    let o = ConvTransposeOptions { stride: vec![2], padding: vec![1], ..Default::default() };
    check(&g, "convt2d_output_size", ConvTranspose2d::new(4, 6, &[3], o)?, |m, i| {
        one(m.forward_with_output_size(&input(i, "x"), &[12, 10])?)
    });
    let bil = |m: &Bilinear, i: &StateDict| one(m.forward(&input(i, "x1"), &input(i, "x2"))?);
    check(&g, "bilinear", Bilinear::new(3, 4, 5, true)?, bil);
    check(&g, "bilinear_nobias", Bilinear::new(3, 4, 2, false)?, bil);
    Ok(())
}

#[test]
fn pools_and_upsample_match_pytorch() -> Result<()> {
    let g = golden();
    check(
        &g,
        "maxpool1d",
        MaxPool1d { stride: Some(vec![2]), padding: vec![1], ..MaxPool1d::new(&[3]) },
        forward,
    );
    check(&g, "maxpool2d", MaxPool2d::new(&[2]), forward);
    let ceil = MaxPool2d { stride: Some(vec![2]), padding: vec![1], ceil_mode: true, ..MaxPool2d::new(&[3]) };
    check(&g, "maxpool2d_ceil", ceil, forward);
    let avg1 = AvgPool1d {
        stride: Some(vec![2]),
        padding: vec![1],
        count_include_pad: false,
        ..AvgPool1d::new(&[3])
    };
    check(&g, "avgpool1d", avg1, forward);
    check(&g, "avgpool2d", AvgPool2d { stride: Some(vec![1]), ..AvgPool2d::new(&[2]) }, forward);
    let avg2 = AvgPool2d {
        stride: Some(vec![2]),
        padding: vec![1],
        ceil_mode: true,
        divisor_override: Some(4),
        ..AvgPool2d::new(&[3])
    };
    check(&g, "avgpool2d_ceil", avg2, forward);
    check(&g, "adaptiveavg1d", AdaptiveAvgPool1d::new(&[5]), forward);
    check(&g, "adaptiveavg2d", AdaptiveAvgPool2d::new(&[4, 3]), forward);
    check(&g, "adaptivemax2d", AdaptiveMaxPool2d::new(&[3]), forward);
    check(&g, "upsample_nearest", Upsample::with_scale_factor(&[2.0], "nearest", None), forward);
    check(&g, "upsample_bilinear", Upsample::with_size(&[5, 7], "bilinear", Some(false)), forward);
    check(&g, "upsample_linear_ac", Upsample::with_scale_factor(&[1.5], "linear", Some(true)), forward);
    assert_eq!(MaxPool2d::new(&[2]).type_name(), "MaxPool2d");
    // `return_indices=True`: the flat index of each maximum in its plane.
    let x = Tensor::from_slice(
        &[1f32, 5., 2., 0., 3., 4., 9., 8., 7., 6., 1., 2., 0., 3., 4., 5.],
        [1, 1, 4, 4],
    )?;
    let (values, indices) = MaxPool2d::new(&[2]).forward_with_indices(&x)?;
    assert_eq!(values.to_vec::<f32>()?, vec![5., 9., 7., 5.]);
    assert_eq!(indices.to_vec::<i64>()?, vec![1, 6, 8, 15]);
    assert_eq!(AdaptiveAvgPool1d::new(&[2]).type_name(), "AdaptiveAvgPool1d");
    Ok(())
}

fn mha(embed: usize, heads: usize, options: MultiheadAttentionOptions) -> MultiheadAttention {
    MultiheadAttention::new(embed, heads, options).unwrap()
}

#[test]
fn multihead_attention_matches_pytorch() -> Result<()> {
    let g = golden();
    let pair = |(o, w): (Tensor, Option<Tensor>)| -> Result<Outputs> { Ok(vec![Some(o), w]) };
    check(&g, "mha", mha(8, 2, Default::default()), |m, i| {
        let (q, k, v) = (input(i, "q"), input(i, "k"), input(i, "v"));
        pair(m.forward(&q, &k, &v, None, true, None, true)?)
    });
    check(
        &g,
        "mha_masks",
        mha(8, 4, MultiheadAttentionOptions { bias: false, ..Default::default() }),
        |m, i| {
            let (q, k, v) = (input(i, "q"), input(i, "k"), input(i, "v"));
            pair(m.forward(&q, &k, &v, Some(&input(i, "kpm")), true, Some(&input(i, "am")), false)?)
        },
    );
    let kv =
        MultiheadAttentionOptions { batch_first: true, kdim: Some(5), vdim: Some(6), ..Default::default() };
    check(&g, "mha_kvdim_bf", mha(8, 2, kv), |m, i| {
        let (q, k, v) = (input(i, "q"), input(i, "k"), input(i, "v"));
        pair(m.forward(&q, &k, &v, None, true, Some(&input(i, "am")), true)?)
    });
    let extra = MultiheadAttentionOptions { add_bias_kv: true, add_zero_attn: true, ..Default::default() };
    check(&g, "mha_bias_kv_zero_attn", mha(8, 2, extra), |m, i| {
        let (q, k, v) = (input(i, "q"), input(i, "k"), input(i, "v"));
        pair(m.forward(&q, &k, &v, Some(&input(i, "kpm")), true, Some(&input(i, "am")), true)?)
    });
    check(&g, "mha_noweights", mha(8, 2, Default::default()), |m, i| {
        let q = input(i, "q");
        pair(m.forward(&q, &q, &q, None, false, None, true)?)
    });
    Ok(())
}

fn causal(n: usize) -> Tensor {
    Tensor::full([n, n], f64::NEG_INFINITY, DType::F32).unwrap().triu(1).unwrap()
}

#[test]
fn transformer_layers_match_pytorch() -> Result<()> {
    let g = golden();
    let base = TransformerLayerOptions { dim_feedforward: 16, dropout: 0.0, ..Default::default() };
    let enc =
        TransformerEncoderLayer::new(8, 2, TransformerLayerOptions { batch_first: true, ..base.clone() })?;
    check(&g, "enc", enc, |m, i| one(m.forward(&input(i, "src"))?));
    let o = TransformerLayerOptions {
        dim_feedforward: 12,
        activation: "gelu",
        norm_first: true,
        batch_first: true,
        ..base.clone()
    };
    check(&g, "enc_normfirst_gelu", TransformerEncoderLayer::new(8, 4, o)?, |m, i| {
        one(m.forward_masked(&input(i, "src"), Some(&input(i, "mask")), Some(&input(i, "kpm")))?)
    });
    // The same layer with GELU given as a function (torch's callable `activation`).
    let o = TransformerLayerOptions {
        dim_feedforward: 12,
        norm_first: true,
        batch_first: true,
        activation_fn: Some(ActivationFn::new(|x| x.gelu("none"))),
        ..base.clone()
    };
    check(&g, "enc_normfirst_gelu", TransformerEncoderLayer::new(8, 4, o)?, |m, i| {
        one(m.forward_masked(&input(i, "src"), Some(&input(i, "mask")), Some(&input(i, "kpm")))?)
    });
    check(&g, "dec", TransformerDecoderLayer::new(8, 2, base.clone())?, |m, i| {
        let mask = causal(4);
        let masks = DecoderMasks { tgt_mask: Some(&mask), ..Default::default() };
        one(m.forward_masked(&input(i, "tgt"), &input(i, "memory"), masks)?)
    });
    let bf = TransformerLayerOptions { batch_first: true, ..base.clone() };
    let norm = LayerNorm::new(&[8], 1e-5, true, true)?;
    let stack = TransformerEncoder::new(2, || TransformerEncoderLayer::new(8, 2, bf.clone()), Some(norm))?;
    check(&g, "enc_stack", stack, |m, i| {
        one(m.forward_masked(&input(i, "src"), None, Some(&input(i, "kpm")))?)
    });
    let stack = TransformerDecoder::new(2, || TransformerDecoderLayer::new(8, 2, base.clone()), None)?;
    assert!(stack.layers[0].linear1.weight.equal(&stack.layers[1].linear1.weight)?, "clones start identical");
    check(&g, "dec_stack", stack, |m, i| {
        let mask = input(i, "mask");
        let masks = DecoderMasks { tgt_mask: Some(&mask), ..Default::default() };
        one(m.forward_masked(&input(i, "tgt"), &input(i, "memory"), masks)?)
    });
    let o = TransformerLayerOptions { activation: "gelu", norm_first: true, ..base };
    check(&g, "dec_normfirst_gelu", TransformerDecoderLayer::new(8, 2, o)?, |m, i| {
        let kpm = input(i, "kpm");
        let masks = DecoderMasks { memory_key_padding_mask: Some(&kpm), ..Default::default() };
        one(m.forward_masked(&input(i, "tgt"), &input(i, "memory"), masks)?)
    });
    Ok(())
}

#[test]
fn rnn_lstm_and_gru_match_pytorch() -> Result<()> {
    let g = golden();
    let lstm_out =
        |(o, (h, c)): (Tensor, (Tensor, Tensor))| -> Result<Outputs> { Ok(vec![Some(o), Some(h), Some(c)]) };
    check(&g, "lstm", LSTM::new(4, 5, Default::default())?, |m, i| {
        lstm_out(m.forward(&input(i, "x"), None)?)
    });
    let o = RnnOptions { num_layers: 2, bidirectional: true, batch_first: true, ..Default::default() };
    check(&g, "lstm_2l_bi_bf", LSTM::new(4, 5, o)?, |m, i| {
        lstm_out(m.forward(&input(i, "x"), Some((&input(i, "h0"), &input(i, "c0"))))?)
    });
    let o = RnnOptions { bias: false, ..Default::default() };
    check(&g, "lstm_nobias", LSTM::new(4, 5, o)?, |m, i| lstm_out(m.forward(&input(i, "x"), None)?));
    let gru_out = |(o, h): (Tensor, Tensor)| -> Result<Outputs> { Ok(vec![Some(o), Some(h)]) };
    let o = RnnOptions { num_layers: 2, ..Default::default() };
    check(&g, "gru", GRU::new(4, 5, o)?, |m, i| gru_out(m.forward(&input(i, "x"), None)?));
    let o = RnnOptions { bidirectional: true, batch_first: true, ..Default::default() };
    let ro = RnnOptions { num_layers: 2, bidirectional: true, ..Default::default() };
    check(&g, "rnn_tanh_2l_bi", RNN::new(4, 5, "tanh", ro)?, |m, i| {
        gru_out(m.forward(&input(i, "x"), None)?)
    });
    let ro = RnnOptions { batch_first: true, ..Default::default() };
    check(&g, "rnn_relu_bf", RNN::new(4, 5, "relu", ro)?, |m, i| {
        gru_out(m.forward(&input(i, "x"), Some(&input(i, "h0")))?)
    });
    assert!(RNN::new(4, 5, "sigmoid", Default::default()).is_err());
    check(&g, "gru_bi_bf", GRU::new(4, 5, o)?, |m, i| {
        gru_out(m.forward(&input(i, "x"), Some(&input(i, "h0")))?)
    });
    Ok(())
}

/// Largest absolute value of a tensor.
fn amax(t: &Tensor) -> f64 {
    t.abs().unwrap().max().unwrap().to_dtype(DType::F64).unwrap().item::<f64>().unwrap()
}

#[test]
fn initialisation_follows_torch() -> Result<()> {
    // eye_, dirac_ (groups) and sparse_ as torch's.
    let e = Tensor::empty([2, 3], ())?;
    init::eye_(&e)?;
    assert_eq!(e.to_vec::<f32>()?, vec![1.0, 0.0, 0.0, 0.0, 1.0, 0.0]);
    let w = Tensor::empty([4, 2, 3], ())?;
    init::dirac_(&w, 2)?;
    let mut want = vec![0.0f32; 24];
    for i in [1, 10, 13, 22] {
        want[i] = 1.0;
    }
    assert_eq!(w.to_vec::<f32>()?, want);
    let e = init::dirac_(&Tensor::empty([3, 2, 3], ())?, 2).unwrap_err().to_string();
    assert!(e.contains("dim 0 must be divisible by groups"), "{e}");
    let e = init::eye_(&Tensor::empty([2, 2, 2], ())?).unwrap_err().to_string();
    assert!(e.contains("Only tensors with 2 dimensions are supported"), "{e}");
    let s = Tensor::empty([5, 3], ())?;
    init::sparse_(&s, 0.4, 0.01)?;
    let zeros_per_column = s.eq(0.0)?.to_dtype(DType::I64)?.sum(0, false)?.to_vec::<i64>()?;
    assert_eq!(zeros_per_column, vec![2, 2, 2]);
    // Integer tensors are refused (torch: normal_kernel_cpu not implemented for 'Long').
    let ints = Tensor::zeros([3, 3], DType::I64)?;
    for e in [init::trunc_normal_(&ints, 0.0, 1.0, -2.0, 2.0), init::orthogonal_(&ints, 1.0)] {
        let e = e.unwrap_err().to_string();
        assert!(e.contains("normal_kernel_cpu") && e.contains("Long"), "{e}");
    }
    oxtorch_tensor::manual_seed(0);
    let ct = ConvTranspose2d::new(8, 4, &[3], Default::default())?;
    assert_eq!(ct.weight.dims(), &[8, 4, 3, 3]);
    // fan_in = weight.size(1) * 9 = 36: kaiming_uniform(a=√5) bound 1/6, bias bound 1/6.
    assert!(amax(&ct.weight) <= 1.0 / 6.0 && amax(&ct.weight) > 0.15);
    assert!(amax(ct.bias.as_ref().unwrap()) <= 1.0 / 6.0);
    let b = Bilinear::new(4, 3, 2, true)?;
    assert!(amax(&b.weight) <= 0.5 && amax(b.bias.as_ref().unwrap()) <= 0.5);
    let m = mha(16, 4, Default::default());
    let w = m.in_proj_weight.as_ref().unwrap();
    // xavier_uniform on [48, 16]: bound sqrt(6 / 64).
    let bound = (6.0f64 / 64.0).sqrt();
    assert!(amax(w) <= bound && amax(w) > 0.9 * bound);
    assert_eq!(amax(m.in_proj_bias.as_ref().unwrap()), 0.0);
    assert_eq!(amax(m.out_proj.bias.as_ref().unwrap()), 0.0);
    assert!(m.in_proj_weight.as_ref().unwrap().requires_grad());
    let lstm = LSTM::new(3, 16, RnnOptions { num_layers: 2, bidirectional: true, ..Default::default() })?;
    assert_eq!(lstm.weights().len(), 4);
    assert_eq!(lstm.weights()[2].weight_ih.dims(), &[64, 32]);
    for (_, p) in lstm.named_parameters() {
        assert!(amax(&p) <= 0.25 && p.requires_grad());
    }
    let gru = GRU::new(3, 4, Default::default())?;
    assert_eq!(gru.weights()[0].weight_hh.dims(), &[12, 4]);
    let enc = TransformerEncoderLayer::new(16, 4, Default::default())?;
    assert_eq!(enc.linear1.weight.dims(), &[2048, 16]);
    assert_eq!(enc.dropout.p, 0.1);
    Ok(())
}

#[test]
fn train_eval_reaches_attention_and_rnn_dropout() -> Result<()> {
    let mut enc = TransformerEncoderLayer::new(
        8,
        2,
        TransformerLayerOptions { dim_feedforward: 8, ..Default::default() },
    )?;
    assert!(enc.is_training() && enc.self_attn.training);
    enc.eval();
    assert!(!enc.is_training() && !enc.self_attn.training && !enc.dropout1.training);
    let x = Tensor::randn([3, 2, 8], ())?;
    assert!(enc.forward(&x)?.equal(&enc.forward(&x)?)?, "eval mode must be deterministic");
    let mut lstm = LSTM::new(2, 3, RnnOptions { num_layers: 2, dropout: 0.5, ..Default::default() })?;
    lstm.eval();
    assert!(!lstm.is_training());
    let x = Tensor::randn([4, 1, 2], ())?;
    assert!(lstm.forward(&x, None)?.0.equal(&lstm.forward(&x, None)?.0)?);
    Ok(())
}

#[test]
fn module_dict_and_list_use_torch_names() -> Result<()> {
    let mut d: ModuleDict = ModuleDict::new();
    d.insert("encoder", Box::new(Linear::new(2, 3, true)?))?;
    d.insert("act", Box::new(ReLU {}))?;
    d.insert("decoder", Box::new(Linear::new(3, 2, false)?))?;
    let keys: Vec<String> = d.state_dict().keys().map(str::to_string).collect();
    assert_eq!(keys, ["encoder.weight", "encoder.bias", "decoder.weight"]);
    assert_eq!(d.keys().collect::<Vec<_>>(), ["encoder", "act", "decoder"]);
    assert_eq!(d.type_name(), "ModuleDict");
    // Replacing keeps the position; removing drops the parameters.
    d.insert("encoder", Box::new(Linear::new(2, 3, false)?))?;
    assert_eq!(d.keys().next(), Some("encoder"));
    assert_eq!(d.state_dict().len(), 2);
    let y =
        d.get("decoder").unwrap().forward(&d.get("encoder").unwrap().forward(&Tensor::ones([1, 2], ())?)?)?;
    assert_eq!(y.dims(), &[1, 2]);
    assert!(d.remove("act").is_some() && !d.contains_key("act") && d.len() == 2);
    assert!(d.insert("a.b", Box::new(ReLU {})).is_err());
    let typed: ModuleDict<Linear> = {
        let mut t = ModuleDict::new();
        t.insert("q", Linear::new(2, 2, true)?)?;
        t
    };
    assert_eq!(typed.named_parameters().len(), 2);
    let list = ModuleList::new(vec![Linear::new(2, 2, true)?, Linear::new(2, 1, true)?]);
    let keys: Vec<String> = list.state_dict().keys().map(str::to_string).collect();
    assert_eq!(keys, ["0.weight", "0.bias", "1.weight", "1.bias"]);
    assert_eq!(list.len(), 2);
    Ok(())
}

#[test]
fn bad_shapes_are_torch_errors() -> Result<()> {
    let m = mha(8, 2, Default::default());
    let q = Tensor::randn([4, 3, 8], ())?;
    let e =
        m.forward(&q, &q, &q, None, true, Some(&Tensor::zeros([3, 3], ())?), true).unwrap_err().to_string();
    assert!(e.contains("The shape of the 2D attn_mask is torch.Size([3, 3]), but should be (4, 4)."), "{e}");
    let e = m
        .forward(&q, &q, &q, Some(&Tensor::zeros([3, 5], DType::Bool)?), true, None, true)
        .unwrap_err()
        .to_string();
    assert!(e.contains("expecting key_padding_mask shape of (3, 4)"), "{e}");
    assert!(MultiheadAttention::new(8, 3, Default::default()).is_err());
    let e = MultiheadAttention::new(8, 0, Default::default()).err().unwrap().to_string();
    assert!(
        e.contains("embed_dim and num_heads must be greater than 0, got embed_dim=8 and num_heads=0"),
        "{e}"
    );
    // torch's BatchNorm*d `_check_input_dim`, before anything is counted.
    let bn1 = BatchNorm1d::new_1d(3)?;
    let e = bn1.forward(&Tensor::randn([2, 3, 4, 5], ())?).unwrap_err().to_string();
    assert!(e.contains("expected 2D or 3D input (got 4D input)"), "{e}");
    assert_eq!(bn1.num_batches_tracked.as_ref().unwrap().item::<i64>()?, 0);
    let bn2 = BatchNorm2d::new_2d_with(3, 1e-3, None, false, true)?;
    assert_eq!(bn2.type_name(), "BatchNorm2d");
    let e = bn2.forward(&Tensor::randn([2, 3, 4], ())?).unwrap_err().to_string();
    assert!(e.contains("expected 4D input (got 3D input)"), "{e}");
    let e = BatchNorm3d::new_3d(3)?.forward(&Tensor::randn([2, 3, 4, 4], ())?).unwrap_err().to_string();
    assert!(e.contains("expected 5D input (got 4D input)"), "{e}");
    let e = GroupNorm::new(2, 3, 1e-5, true).err().unwrap().to_string();
    assert!(e.contains("num_channels (3) must be divisible by num_groups (2)"), "{e}");
    let up = Upsample { size: None, scale_factor: None, mode: "nearest".into(), align_corners: None };
    let e = up.forward(&Tensor::randn([1, 1, 2, 2], ())?).unwrap_err().to_string();
    assert!(e.contains("either size or scale_factor should be defined"), "{e}");
    let lstm = LSTM::new(4, 5, Default::default())?;
    let e = lstm.forward(&Tensor::randn([2, 1, 3], ())?, None).unwrap_err().to_string();
    assert!(e.contains("input.size(-1) must be equal to input_size. Expected 4, got 3"), "{e}");
    let h = Tensor::zeros([2, 1, 5], ())?;
    let e = lstm.forward(&Tensor::randn([2, 1, 4], ())?, Some((&h, &h))).unwrap_err().to_string();
    assert!(e.contains("Expected hidden size (1, 1, 5), got [2, 1, 5]"), "{e}");
    assert!(
        ConvTranspose2d::new(3, 4, &[3], ConvTransposeOptions { groups: 2, ..Default::default() }).is_err()
    );
    let b = Bilinear::new(3, 4, 5, true)?;
    assert!(b.forward(&Tensor::randn([2, 3], ())?, &Tensor::randn([2, 5], ())?).is_err());
    assert!(TransformerEncoderLayer::new(
        8,
        2,
        TransformerLayerOptions { activation: "tanh", ..Default::default() }
    )
    .is_err());
    let up = Upsample { size: None, scale_factor: None, mode: "nearest".into(), align_corners: None };
    assert!(up.forward(&Tensor::randn([1, 1, 2, 2], ())?).is_err());
    Ok(())
}

fn assert_same(what: &str, a: &Tensor, b: &Tensor) {
    assert_close(what, a, b, 1e-6);
}

#[test]
fn attention_over_a_fully_padded_sequence_is_zero_without_weights() -> Result<()> {
    // torch: with need_weights=False, MultiheadAttention runs scaled_dot_product_attention, whose
    // rows with every key masked are zeros, so the output there is out_proj's bias and every
    // gradient stays finite; with need_weights=True the plain softmax gives NaN, as ours.
    oxtorch_tensor::manual_seed(3);
    let m = mha(8, 2, Default::default());
    oxtorch_tensor::no_grad(|| m.out_proj.bias.as_ref().unwrap().fill_(0.25).map(|_| ()))?;
    let q = Tensor::randn([3, 2, 8], ())?;
    q.requires_grad_(true)?;
    let kpm = Tensor::from_vec(vec![true, true, true, false, true, false], [2, 3])?;
    let (o, _) = m.forward(&q, &q, &q, Some(&kpm), false, None, true)?;
    let padded = o.select(1, 0)?;
    assert_same("fully padded row", &padded, &Tensor::full([3, 8], 0.25, ())?);
    // The other sequence agrees with the weights-returning path.
    let (ow, w) = m.forward(&q, &q, &q, Some(&kpm), true, None, true)?;
    assert_same("unpadded row", &o.select(1, 1)?, &ow.select(1, 1)?);
    assert!(w.unwrap().select(0, 0)?.isnan()?.all()?.item::<bool>()?);
    o.sum_all()?.backward()?;
    let g = m.in_proj_weight.as_ref().unwrap().grad().unwrap();
    assert!(!g.isnan()?.any()?.item::<bool>()?, "gradients must stay finite");
    // A transformer layer with one fully padded sequence, in training mode, stays finite.
    let layer = TransformerEncoderLayer::new(
        8,
        2,
        TransformerLayerOptions { dropout: 0.0, batch_first: true, ..Default::default() },
    )?;
    let x = Tensor::randn([2, 3, 8], ())?;
    let kpm = Tensor::from_vec(vec![true, true, true, false, false, true], [2, 3])?;
    let y = layer.forward_masked(&x, None, Some(&kpm))?;
    assert!(!y.isnan()?.any()?.item::<bool>()?);
    Ok(())
}

#[test]
fn unbatched_and_batch_first_inputs_agree_with_the_batched_layout() -> Result<()> {
    oxtorch_tensor::manual_seed(1);
    // MultiheadAttention: [L, E] unbatched equals [L, 1, E]; batch_first equals transposed.
    let mut m = mha(8, 2, Default::default());
    let q = Tensor::randn([4, 8], ())?;
    let kv = Tensor::randn([5, 8], ())?;
    let (o, w) = m.forward(&q, &kv, &kv, None, true, None, true)?;
    let (ob, wb) =
        m.forward(&q.unsqueeze(1)?, &kv.unsqueeze(1)?, &kv.unsqueeze(1)?, None, true, None, true)?;
    assert_same("mha unbatched", &o, &ob.squeeze_dims(1)?);
    assert_same("mha unbatched weights", &w.unwrap(), &wb.unwrap().squeeze_dims(0)?);
    let q3 = Tensor::randn([4, 3, 8], ())?;
    let (o_sf, _) = m.forward(&q3, &q3, &q3, None, false, None, true)?;
    m.options.batch_first = true;
    let qb = q3.transpose(0, 1)?;
    let (o_bf, _) = m.forward(&qb, &qb, &qb, None, false, None, true)?;
    assert_same("mha batch_first", &o_bf.transpose(0, 1)?, &o_sf);
    // LSTM / GRU: unbatched [T, I] equals [T, 1, I]; batch_first equals transposed.
    let lstm = LSTM::new(3, 4, RnnOptions { num_layers: 2, bidirectional: true, ..Default::default() })?;
    let x = Tensor::randn([6, 3], ())?;
    let (y, (h, c)) = lstm.forward(&x, None)?;
    let (yb, (hb, cb)) = lstm.forward(&x.unsqueeze(1)?, None)?;
    assert_same("lstm unbatched", &y, &yb.squeeze_dims(1)?);
    assert_same("lstm unbatched h", &h, &hb.squeeze_dims(1)?);
    assert_same("lstm unbatched c", &c, &cb.squeeze_dims(1)?);
    assert_eq!(y.dims(), &[6, 8]);
    let gru = GRU::new(3, 4, RnnOptions { batch_first: true, ..Default::default() })?;
    let xb = Tensor::randn([2, 6, 3], ())?;
    let (y_bf, h_bf) = gru.forward(&xb, None)?;
    let gru_sf = GRU::new(3, 4, Default::default())?;
    let mut gru_sf = gru_sf;
    gru_sf.load_state_dict(&gru.state_dict(), true)?;
    let (y_sf, h_sf) = gru_sf.forward(&xb.transpose(0, 1)?, None)?;
    assert_same("gru batch_first", &y_bf, &y_sf.transpose(0, 1)?);
    assert_same("gru batch_first h", &h_bf, &h_sf);
    // An empty sequence is torch's error; an empty batch is not.
    let h0 = Tensor::randn([1, 2, 4], ())?;
    let e = gru_sf.forward(&Tensor::zeros([1, 1, 2, 3], ())?, None).unwrap_err().to_string();
    assert!(e.contains("GRU: Expected input to be 2D or 3D, got 4D instead"), "{e}");
    let e = gru_sf.forward(&Tensor::zeros([0, 2, 3], ())?, Some(&h0)).unwrap_err().to_string();
    assert!(e.contains("Expected sequence length to be larger than 0 in RNN"), "{e}");
    let (y0, h_out) = gru.forward(&Tensor::zeros([0, 2, 3], ())?, None)?;
    assert_eq!((y0.dims(), h_out.dims()), (&[0, 2, 4][..], &[1, 0, 4][..]));
    Ok(())
}

#[test]
fn a_small_lstm_learns_with_ctc() -> Result<()> {
    // Twenty steps of plain gradient descent must lower the loss. The weights are drawn again from
    // this test's own generator (torch's LSTM/Linear ranges), so tests running in parallel on the
    // global generator cannot change the start.
    let gen = oxtorch_tensor::Generator::new(3);
    let lstm = LSTM::new(3, 6, Default::default())?;
    let head = Linear::new(6, 4, true)?;
    oxtorch_tensor::no_grad(|| -> Result<()> {
        for p in lstm.parameters() {
            p.uniform_with_(-1.0 / 6f64.sqrt(), 1.0 / 6f64.sqrt(), Some(&gen))?;
        }
        for p in head.parameters() {
            p.uniform_with_(-1.0 / 6f64.sqrt(), 1.0 / 6f64.sqrt(), Some(&gen))?;
        }
        Ok(())
    })?;
    let x = Tensor::randn_with([8, 2, 3], (), Some(&gen))?;
    let targets = Tensor::from_vec(vec![1i64, 2, 3, 3, 2, 0], [2, 3])?;
    let (il, tl) = (Tensor::from_vec(vec![8i64, 7], [2])?, Tensor::from_vec(vec![3i64, 2], [2])?);
    let ctc = CTCLoss::default();
    let loss_of = || -> Result<Tensor> {
        let (y, _) = lstm.forward(&x, None)?;
        ctc.forward(&head.forward(&y)?.log_softmax(2, None)?, &targets, &il, &tl)
    };
    let params: Vec<Tensor> = lstm.parameters().into_iter().chain(head.parameters()).collect();
    let first = loss_of()?.item::<f32>()?;
    for _ in 0..20 {
        let loss = loss_of()?;
        loss.backward()?;
        oxtorch_tensor::no_grad(|| -> Result<()> {
            for p in &params {
                p.sub_(&p.grad().unwrap().mul(0.1)?)?;
                p.set_grad(None)?;
            }
            Ok(())
        })?;
    }
    let last = loss_of()?.item::<f32>()?;
    assert!(last < 0.8 * first, "CTC loss {first} -> {last}");
    Ok(())
}
