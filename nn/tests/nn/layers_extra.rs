//! More layers against PyTorch, with the expected values printed by torch 2.x (CPU, float32) for
//! deterministic weights and inputs (written out below, so no golden file is needed): LSTM with
//! `proj_size`, adaptive pools with `None` in the output size (and `return_indices`), and
//! `Embedding`'s `max_norm` / `norm_type` and `from_pretrained`.

use oxtorch_nn::*;
use oxtorch_tensor::{DType, Result, Tensor};

/// `got` has shape `dims` and values `want` (torch's, flattened) within `tol` (relative above 1).
fn assert_close(what: &str, got: &Tensor, dims: &[usize], want: &[f64], tol: f64) {
    assert_eq!(got.dims(), dims, "{what}: shape");
    let a = got.to_f64_vec().unwrap();
    assert_eq!(a.len(), want.len(), "{what}: numel");
    for (i, (x, y)) in a.iter().zip(want).enumerate() {
        assert!((x - y).abs() <= tol * (1.0 + y.abs()), "{what}[{i}]: got {x}, PyTorch {y}");
    }
}

/// float32 values `f(i)` (computed in f64, as the torch script does) shaped `dims`.
fn values(dims: &[usize], f: impl Fn(f64) -> f64) -> Tensor {
    let n: usize = dims.iter().product();
    let v: Vec<f32> = (0..n).map(|i| f(i as f64) as f32).collect();
    Tensor::from_vec(v, dims.to_vec()).unwrap()
}

/// The `k`-th parameter's values in the torch script: `0.3 sin(0.37 i + 0.5 k + 0.1)`.
fn param_values(dims: &[usize], k: usize) -> Tensor {
    values(dims, |i| 0.3 * (0.37 * i + 0.5 * k as f64 + 0.1).sin())
}

/// Loads `param_values(shape, k)` into the `k`-th entry of `keys` (torch's state-dict order),
/// strictly: the module must have exactly these keys.
fn load_by_key_order<M: Module>(m: &mut M, keys: &[&str]) {
    let ours = m.state_dict();
    let mut sd = StateDict::new();
    for (k, name) in keys.iter().enumerate() {
        let dims = ours.get(name).unwrap_or_else(|| panic!("no parameter {name}")).dims().to_vec();
        sd.insert(name, param_values(&dims, k));
    }
    m.load_state_dict(&sd, true).unwrap();
}

fn grad_of(p: &Tensor) -> Tensor {
    p.grad().expect("a gradient")
}

/// torch's `nn.LSTM(3, 5, num_layers=2, bidirectional=True, proj_size=2)`.
#[test]
fn lstm_proj_size_matches_pytorch() -> Result<()> {
    let o = RnnOptions { num_layers: 2, bidirectional: true, proj_size: 2, ..Default::default() };
    let mut m = LSTM::new(3, 5, o)?;
    let keys: Vec<String> = m.state_dict().keys().map(str::to_string).collect();
    assert_eq!(keys, LSTM_KEYS.iter().map(|k| k.to_string()).collect::<Vec<_>>());
    let sd = m.state_dict();
    let dims = |k: &str| sd.get(k).unwrap().dims().to_vec();
    assert_eq!(dims("weight_ih_l0"), vec![20, 3]);
    assert_eq!(dims("weight_hh_l0"), vec![20, 2]);
    assert_eq!(dims("bias_hh_l0_reverse"), vec![20]);
    assert_eq!(dims("weight_hr_l0"), vec![2, 5]);
    assert_eq!(dims("weight_ih_l1"), vec![20, 4]);
    assert_eq!(dims("weight_hh_l1_reverse"), vec![20, 2]);
    assert_eq!(dims("weight_hr_l1_reverse"), vec![2, 5]);
    load_by_key_order(&mut m, LSTM_KEYS);

    let x = values(&[4, 2, 3], |i| (0.7 * i + 0.2).sin());
    let h0 = values(&[4, 2, 2], |i| 0.1 * (0.3 * i).cos());
    let c0 = values(&[4, 2, 5], |i| 0.2 * (0.45 * i).sin());
    let (out, (h, c)) = m.forward(&x, Some((&h0, &c0)))?;
    assert_close("out", &out, &[4, 2, 4], LSTM_OUT, 1e-5);
    assert_close("h_n", &h, &[4, 2, 2], LSTM_H, 1e-5);
    assert_close("c_n", &c, &[4, 2, 5], LSTM_C, 1e-5);

    // (out.sum() + h.sum() * 0.5 + c.sum() * 0.25).backward()
    out.sum_all()?.add(&h.sum_all()?.mul(0.5)?)?.add(&c.sum_all()?.mul(0.25)?)?.backward()?;
    let w = m.weights();
    assert_eq!(w.len(), 4);
    assert_close("weight_hr_l0.grad", &grad_of(w[0].weight_hr.as_ref().unwrap()), &[2, 5], G_HR_L0, 1e-5);
    assert_close(
        "weight_hr_l1_reverse.grad",
        &grad_of(w[3].weight_hr.as_ref().unwrap()),
        &[2, 5],
        G_HR_L1R,
        1e-5,
    );
    // weight_hh_l0.grad[:6]
    assert_close("weight_hh_l0.grad", &grad_of(&w[0].weight_hh).narrow(0, 0, 6)?, &[6, 2], G_HH_L0, 1e-5);
    // weight_ih_l1.grad[:3]
    assert_close("weight_ih_l1.grad", &grad_of(&w[2].weight_ih).narrow(0, 0, 3)?, &[3, 4], G_IH_L1, 1e-5);

    // Unbatched `[T, I]` equals `[T, 1, I]`, with `h0` `[layers * dirs, P]`.
    let xu = x.select(1, 0)?;
    let (ou, (hu, cu)) = m.forward(&xu, Some((&h0.select(1, 0)?, &c0.select(1, 0)?)))?;
    let (ob, (hb, cb)) = m.forward(&xu.unsqueeze(1)?, Some((&h0.narrow(1, 0, 1)?, &c0.narrow(1, 0, 1)?)))?;
    assert_eq!(ou.dims(), &[4, 4]);
    assert_eq!(hu.dims(), &[4, 2]);
    assert_eq!(cu.dims(), &[4, 5]);
    assert!(ou.equal(&ob.squeeze_dims(1)?)?);
    assert!(hu.equal(&hb.squeeze_dims(1)?)?);
    assert!(cu.equal(&cb.squeeze_dims(1)?)?);
    Ok(())
}

/// torch's `nn.LSTM(3, 4, batch_first=True, proj_size=3)` from zero states.
#[test]
fn lstm_proj_size_batch_first_from_zero_state() -> Result<()> {
    let mut m = LSTM::new(3, 4, RnnOptions { batch_first: true, proj_size: 3, ..Default::default() })?;
    load_by_key_order(&mut m, &["weight_ih_l0", "weight_hh_l0", "bias_ih_l0", "bias_hh_l0", "weight_hr_l0"]);
    let x = values(&[2, 4, 3], |i| (0.7 * i + 0.2).sin());
    let (out, (h, c)) = m.forward(&x, None)?;
    assert_close("out", &out, &[2, 4, 3], O2, 1e-5);
    assert_close("h_n", &h, &[1, 2, 3], H2, 1e-5);
    assert_close("c_n", &c, &[1, 2, 4], C2, 1e-5);
    // An empty batch: `[0, T, P]` outputs and empty states.
    let (y0, (h0, c0)) = m.forward(&Tensor::zeros([0, 2, 3], DType::F32)?, None)?;
    assert_eq!(y0.dims(), &[0, 2, 3]);
    assert_eq!(h0.dims(), &[1, 0, 3]);
    assert_eq!(c0.dims(), &[1, 0, 4]);
    Ok(())
}

#[test]
fn lstm_proj_size_init_and_errors() -> Result<()> {
    let o = RnnOptions { num_layers: 2, bidirectional: true, proj_size: 2, ..Default::default() };
    let m = LSTM::new(3, 5, o.clone())?;
    let bound = 1.0 / 5f64.sqrt();
    let params = m.named_parameters();
    assert_eq!(params.len(), 20);
    for (name, p) in &params {
        let amax = p.abs()?.max()?.to_dtype(DType::F64)?.item::<f64>()?;
        assert!(amax <= bound && amax > 0.0, "{name}: {amax}");
        assert!(p.requires_grad(), "{name}");
    }
    // Without projections nothing changes: no `weight_hr`, `weight_hh` `[4H, H]`.
    let plain = LSTM::new(3, 5, Default::default())?;
    assert!(plain.weights()[0].weight_hr.is_none());
    assert_eq!(plain.weights()[0].weight_hh.dims(), &[20, 5]);
    assert_eq!(plain.state_dict().len(), 4);

    let err = |e: Option<oxtorch_tensor::Error>| e.expect("an error").to_string();
    let bad = RnnOptions { proj_size: 2, ..Default::default() };
    let e = err(GRU::new(3, 5, bad.clone()).err());
    assert!(e.contains("proj_size argument is only supported for LSTM, not RNN or GRU"), "{e}");
    let e = err(RNN::new(3, 5, "tanh", bad).err());
    assert!(e.contains("proj_size argument is only supported for LSTM, not RNN or GRU"), "{e}");
    for p in [5, 7] {
        let e = err(LSTM::new(3, 5, RnnOptions { proj_size: p, ..Default::default() }).err());
        assert!(e.contains("proj_size has to be smaller than hidden_size"), "{e}");
    }
    // h0 is `[layers * dirs, N, P]`, c0 `[layers * dirs, N, H]`.
    let x = Tensor::zeros([4, 2, 3], DType::F32)?;
    let (h_ok, c_ok) = (Tensor::zeros([4, 2, 2], DType::F32)?, Tensor::zeros([4, 2, 5], DType::F32)?);
    assert!(m.forward(&x, Some((&h_ok, &c_ok))).is_ok());
    let e = err(m.forward(&x, Some((&c_ok, &c_ok))).err());
    assert!(e.contains("(4, 2, 2), got [4, 2, 5]"), "{e}");
    let e = err(m.forward(&x, Some((&h_ok, &h_ok))).err());
    assert!(e.contains("(4, 2, 5), got [4, 2, 2]"), "{e}");
    let (out, (h, c)) = m.forward(&x, None)?;
    assert_eq!(out.dims(), &[4, 2, 4]);
    assert_eq!(h.dims(), &[4, 2, 2]);
    assert_eq!(c.dims(), &[4, 2, 5]);
    Ok(())
}

/// The pools' input: `sin(0.9 i + 0.3) (1 + 0.01 i)` shaped `[2, 3, 5, 4]`.
fn pool_input() -> Tensor {
    values(&[2, 3, 5, 4], |i| (0.9 * i + 0.3).sin() * (1.0 + 0.01 * i))
}

#[test]
fn adaptive_pools_keep_none_dims_as_pytorch() -> Result<()> {
    let x = pool_input();
    // nn.AdaptiveAvgPool2d((None, 3))
    let avg = AdaptiveAvgPool2d::new_optional(&[None, Some(3)]);
    assert_close("avg (None, 3)", &avg.forward(&x)?, &[2, 3, 5, 3], AVG, 1e-5);
    // The same as an explicit (5, 3), as the input is 5 high.
    assert!(avg.forward(&x)?.equal(&AdaptiveAvgPool2d::new(&[5, 3]).forward(&x)?)?);
    // nn.AdaptiveAvgPool2d((2, None)) on an unbatched [3, 5, 4] input
    let avg2 = AdaptiveAvgPool2d::new_optional(&[Some(2), None]);
    assert_close("avg (2, None)", &avg2.forward(&x.select(0, 0)?)?, &[3, 2, 4], AVG2, 1e-5);
    // nn.AdaptiveMaxPool2d((3, None), return_indices=True) on x[:1]
    let max = AdaptiveMaxPool2d::new_optional(&[Some(3), None]);
    let (v, i) = max.forward_with_indices(&x.narrow(0, 0, 1)?)?;
    assert_close("max (3, None)", &v, &[1, 3, 3, 4], MAXV, 1e-5);
    assert_eq!(i.dtype(), DType::I64);
    assert_eq!(i.dims(), &[1, 3, 3, 4]);
    assert_eq!(i.to_vec::<i64>()?, MAXI);
    assert!(max.forward(&x.narrow(0, 0, 1)?)?.equal(&v)?);
    // A single `None` keeps every spatial dim: the identity.
    assert!(AdaptiveAvgPool2d::new_optional(&[None]).forward(&x)?.equal(&x)?);
    assert!(AdaptiveMaxPool2d::new_optional(&[None]).forward(&x)?.equal(&x)?);
    // torch's `_list_with_default` error for too few input dims.
    let e = avg.forward(&Tensor::zeros([4, 4], DType::F32)?).expect_err("an error").to_string();
    assert!(e.contains("Input dimension should be at least 3"), "{e}");
    // Sizes without `None` still go through unchanged (the op's own checks).
    assert_eq!(AdaptiveAvgPool2d::new(&[2]).forward(&x)?.dims(), &[2, 3, 2, 2]);
    assert!(AdaptiveAvgPool2d::new(&[2, 2]).forward(&Tensor::zeros([4, 4], DType::F32)?).is_err());
    Ok(())
}

#[test]
fn adaptive_max_pool1d_returns_indices_as_pytorch() -> Result<()> {
    // nn.AdaptiveMaxPool1d(3, return_indices=True) on x[0].reshape(3, 20)[:, :7]
    let x = pool_input().select(0, 0)?.reshape([3, 20])?.narrow(1, 0, 7)?;
    let (v, i) = AdaptiveMaxPool1d::new(&[3]).forward_with_indices(&x)?;
    assert_close("max1d", &v, &[3, 3], MAX1V, 1e-5);
    assert_eq!(i.to_vec::<i64>()?, MAX1I);
    assert!(AdaptiveMaxPool1d::new(&[3]).forward(&x)?.equal(&v)?);
    Ok(())
}

/// The embedding tables: `1.5 sin(0.8 i + 0.4)` shaped `[6, 3]` (row 2-norms 2.04, 1.65, 1.58,
/// 1.97, 2.09, 1.75).
fn table() -> Tensor {
    values(&[6, 3], |i| 1.5 * (0.8 * i + 0.4).sin())
}

fn load_table(e: &mut Embedding) {
    let mut sd = StateDict::new();
    sd.insert("weight", table());
    e.load_state_dict(&sd, true).unwrap();
}

#[test]
fn embedding_max_norm_renormalises_looked_up_rows_as_pytorch() -> Result<()> {
    // nn.Embedding(6, 3, max_norm=1.2)
    let mut e = Embedding::new(6, 3, None)?.with_max_norm(1.2, 2.0);
    assert_eq!((e.max_norm, e.norm_type), (Some(1.2), 2.0));
    load_table(&mut e);
    let idx = Tensor::from_vec(vec![0i64, 2, 2, 5, 0, 1], [2, 3])?;
    let out = e.forward(&idx)?;
    assert_close("out", &out, &[2, 3, 3], E_OUT, 1e-5);
    // Rows 0, 1, 2 and 5 were rescaled in place to norm 1.2; rows 3 and 4 were not looked up.
    assert_close("weight after", &e.weight, &[6, 3], E_W, 1e-5);
    assert!(e.weight.requires_grad() && e.weight.is_leaf(), "the rescale is not recorded");
    // out.mul(torch.arange(18.).reshape(2, 3, 3)).sum().backward()
    let ramp = Tensor::from_vec((0..18).map(|i| i as f32).collect::<Vec<_>>(), [2, 3, 3])?;
    out.mul(&ramp)?.sum_all()?.backward()?;
    assert_close("weight.grad", &grad_of(&e.weight), &[6, 3], E_G, 1e-5);
    // A second lookup leaves the rows (now at the norm) unchanged, up to the 1e-7 in the scale.
    let before = e.weight.detach().copy()?;
    let _ = e.forward(&idx)?;
    assert_close("weight again", &e.weight, &[6, 3], &before.to_f64_vec()?, 1e-6);

    // nn.Embedding(6, 3, max_norm=1.0, norm_type=1.0) with int32 indices [3, 4, 3]
    let mut e1 = Embedding { max_norm: Some(1.0), norm_type: 1.0, ..Embedding::new(6, 3, None)? };
    load_table(&mut e1);
    let out1 = e1.forward(&Tensor::from_vec(vec![3i32, 4, 3], [3])?)?;
    assert_close("out (p=1)", &out1, &[3, 3], E1_OUT, 1e-5);
    assert_close("weight after (p=1)", &e1.weight, &[6, 3], E1_W, 1e-5);

    // Without max_norm nothing is rescaled.
    let mut plain = Embedding::new(6, 3, None)?;
    assert_eq!((plain.max_norm, plain.norm_type), (None, 2.0));
    load_table(&mut plain);
    let _ = plain.forward(&idx)?;
    assert!(plain.weight.equal(&table())?);

    // Errors: float indices (torch's embedding_renorm_ message) and an index out of range.
    let e_msg = e.forward(&Tensor::from_vec(vec![1f32], [1])?).expect_err("an error").to_string();
    assert!(e_msg.contains("while checking arguments for embedding_renorm_"), "{e_msg}");
    assert!(e.forward(&Tensor::from_vec(vec![6i64], [1])?).is_err());
    assert!(e.forward(&Tensor::from_vec(vec![-1i64], [1])?).is_err());
    // Empty indices: nothing to do.
    assert_eq!(e.forward(&Tensor::zeros([0], DType::I64)?)?.dims(), &[0, 3]);
    Ok(())
}

#[test]
fn embedding_from_pretrained_as_pytorch() -> Result<()> {
    let p = table();
    // nn.Embedding.from_pretrained(p, padding_idx=-2): frozen (torch's default), padding 4.
    let f = Embedding::from_pretrained(&p, true, Some(-2))?;
    assert_eq!(f.padding_idx, Some(4));
    assert!(!f.weight.requires_grad());
    assert_eq!(f.max_norm, None);
    assert!(f.weight.equal(&p)?, "the padding row is not zeroed");
    assert_eq!(f.named_parameters().len(), 1);

    // nn.Embedding.from_pretrained(p, freeze=False, padding_idx=1)
    let f2 = Embedding::from_pretrained(&p, false, Some(1))?;
    assert!(f2.weight.requires_grad() && f2.weight.is_leaf());
    assert!(!p.requires_grad(), "the given tensor is left as it was");
    let o = f2.forward(&Tensor::from_vec(vec![1i64, 3, 1], [3])?)?;
    assert_close("out", &o, &[3, 3], P_OUT, 1e-5);
    o.sum_all()?.backward()?;
    // The padding row gets no gradient.
    assert_close("grad", &grad_of(&f2.weight), &[6, 3], P_G, 1e-5);
    // The weight shares the given tensor's storage, as torch's Parameter(embeddings) does.
    p.mul_(2.0)?;
    assert!(f2.weight.equal(&p)?);

    for bad in [6i64, -7] {
        let e = Embedding::from_pretrained(&p, true, Some(bad)).err().unwrap().to_string();
        assert!(e.contains("Padding_idx must be within num_embeddings"), "{e}");
    }
    let e = Embedding::from_pretrained(&Tensor::zeros([4], DType::F32)?, true, None)
        .err()
        .expect("an error")
        .to_string();
    assert!(e.contains("Embeddings parameter is expected to be 2-dimensional"), "{e}");
    // `new` still zeroes its padding row.
    let n = Embedding::new(5, 2, Some(-1))?;
    assert_eq!(n.padding_idx, Some(4));
    assert_eq!(n.weight.select(0, 4)?.to_vec::<f32>()?, vec![0.0, 0.0]);
    Ok(())
}

/// `list(torch.nn.LSTM(3, 5, num_layers=2, bidirectional=True, proj_size=2).state_dict())`
#[rustfmt::skip]
const LSTM_KEYS: &[&str] = &[
    "weight_ih_l0",
    "weight_hh_l0",
    "bias_ih_l0",
    "bias_hh_l0",
    "weight_hr_l0",
    "weight_ih_l0_reverse",
    "weight_hh_l0_reverse",
    "bias_ih_l0_reverse",
    "bias_hh_l0_reverse",
    "weight_hr_l0_reverse",
    "weight_ih_l1",
    "weight_hh_l1",
    "bias_ih_l1",
    "bias_hh_l1",
    "weight_hr_l1",
    "weight_ih_l1_reverse",
    "weight_hh_l1_reverse",
    "bias_ih_l1_reverse",
    "bias_hh_l1_reverse",
    "weight_hr_l1_reverse",
];

// PyTorch's values, printed by the script's `print(...)` of each tensor flattened.
#[rustfmt::skip]
const LSTM_OUT: &[f64] = &[
    -0.2125278264284134, 0.09491462260484695, -0.15860840678215027, -0.025009339675307274,
    -0.20951205492019653, 0.05719611793756485, -0.15309388935565948, -0.022049924358725548,
    -0.29099148511886597, 0.1152690127491951, -0.1555752009153366, -0.022066865116357803,
    -0.2950436770915985, 0.09622751176357269, -0.14278075098991394, -0.020838212221860886,
    -0.3351353406906128, 0.12271773815155029, -0.14805066585540771, -0.028254855424165726,
    -0.33809947967529297, 0.11231297999620438, -0.11866339296102524, -0.014772694557905197,
    -0.36065343022346497, 0.1261967122554779, -0.12989585101604462, -0.03773404285311699,
    -0.36301830410957336, 0.11964255571365356, -0.06101372092962265, -0.009972525760531425,
];
#[rustfmt::skip]
const LSTM_H: &[f64] = &[
    -0.12085875868797302, 0.10336853563785553, -0.15304213762283325, 0.18300318717956543,
    -0.13730356097221375, 0.07592872530221939, -0.15359707176685333, 0.09874564409255981,
    -0.36065343022346497, 0.1261967122554779, -0.36301830410957336, 0.11964255571365356,
    -0.15860840678215027, -0.025009339675307274, -0.15309388935565948, -0.022049924358725548,
];
#[rustfmt::skip]
const LSTM_C: &[f64] = &[
    -0.7777743339538574, -0.48311591148376465, 0.025856271386146545, 0.10363475978374481,
    0.001720767468214035, -0.5275924205780029, -0.49124452471733093, -0.3280316889286041,
    -0.09370548278093338, 0.18652242422103882, 0.3633711338043213, 0.2759845554828644,
    0.21810157597064972, 0.10744508355855942, 0.16736376285552979, 0.4190725088119507,
    0.3830837607383728, 0.3005678653717041, 0.17839652299880981, 0.13030672073364258,
    -0.4040435254573822, -0.6259574890136719, -0.6961884498596191, -0.6594061255455017,
    -0.5382663011550903, -0.4445829391479492, -0.6636377573013306, -0.7073642015457153,
    -0.6373709440231323, -0.5084877014160156, -0.0037853033281862736, 0.20598149299621582,
    0.30949294567108154, 0.34598177671432495, 0.35843831300735474, -0.01507645845413208,
    0.19061961770057678, 0.3010377287864685, 0.33916619420051575, 0.3460579514503479,
];
#[rustfmt::skip]
const G_HR_L0: &[f64] = &[
    -0.4528234004974365, -0.408052921295166, -0.14811915159225464, -0.003151584416627884,
    0.10628542304039001, -0.42666637897491455, -0.3852449655532837, -0.1350805014371872,
    0.002943873405456543, 0.09722377359867096,
];
#[rustfmt::skip]
const G_HR_L1R: &[f64] = &[
    -0.03368619829416275, 0.9584594964981079, 1.354101300239563, 1.3620526790618896,
    1.2350419759750366, -0.033828288316726685, 0.973778247833252, 1.3757027387619019,
    1.3832453489303589, 1.2534656524658203,
];
#[rustfmt::skip]
const G_HH_L0: &[f64] = &[
    0.012480647303164005, -0.018300648778676987, 0.008211489766836166, -0.010370458476245403,
    0.0019136524060741067, -0.0018189533147960901, -0.0009691603481769562,
    0.0012337025254964828, -0.0006012354861013591, 0.0010588030563667417, 0.011717885732650757,
    -0.012791473418474197,
];
#[rustfmt::skip]
const G_IH_L1: &[f64] = &[
    0.03344868868589401, -0.03448023647069931, 0.03505893424153328, -0.02487153559923172,
    0.04212565720081329, -0.04428737983107567, 0.04300384223461151, -0.030961066484451294,
    0.037677306681871414, -0.04028841853141785, 0.03704708814620972, -0.026855261996388435,
];
#[rustfmt::skip]
const O2: &[f64] = &[
    -0.12877711653709412, 0.17174699902534485, 0.159922257065773, -0.13055706024169922,
    0.2282048463821411, 0.17194044589996338, -0.07833544164896011, 0.15316598117351532,
    0.1061110571026802, -0.18154539167881012, 0.23417207598686218, 0.2240109145641327,
    -0.07402175664901733, 0.16101981699466705, 0.1032216027379036, -0.05344204977154732,
    0.12549178302288055, 0.07619913667440414, -0.1672177016735077, 0.2219255566596985,
    0.20746241509914398, -0.1450178474187851, 0.24869656562805176, 0.1901172697544098,
];
#[rustfmt::skip]
const H2: &[f64] = &[
    -0.18154539167881012, 0.23417207598686218, 0.2240109145641327, -0.1450178474187851,
    0.24869656562805176, 0.1901172697544098,
];
#[rustfmt::skip]
const C2: &[f64] = &[
    -0.6676321029663086, -0.8405258059501648, -0.6147353649139404, -0.2885010242462158,
    -0.5770937204360962, -0.734323263168335, -0.6487159132957458, -0.3958878517150879,
];
#[rustfmt::skip]
const AVG: &[f64] = &[
    0.6184398531913757, 0.9109165072441101, 0.5129135847091675, -0.8806247711181641,
    -0.8148497343063354, -0.12518872320652008, 0.9722763895988464, 0.5342063307762146,
    -0.3199805021286011, -0.8601131439208984, -0.1165032833814621, 0.7292854189872742,
    0.5535690784454346, -0.35691747069358826, -1.0105856657028198, -0.10567963123321533,
    0.78667151927948, 1.0935091972351074, -0.39575034379959106, -1.0761901140213013,
    -0.946520209312439, 0.8453112244606018, 1.1532769203186035, 0.5864070057868958,
    -1.1421407461166382, -0.9875794649124146, -0.07761579751968384, 1.212409496307373,
    0.5998362302780151, -0.47900980710983276, -1.0271542072296143, -0.060377657413482666,
    0.9661813974380493, 0.611243486404419, -0.5233867764472961, -1.2748700380325317,
    -0.04100537300109863, 1.0283249616622925, 1.3285605907440186, -0.5695602893829346,
    -1.3415424823760986, -1.1016895771026611, 1.091548204421997, 1.3854765892028809,
    0.6279118061065674, -1.4083492755889893, -1.1365718841552734, 0.004124164581298828,
    1.4415510892868042, 0.6331356763839722, -0.6671858429908752, -1.1698129177093506,
    0.029869824647903442, 1.2210522890090942, 0.6362630724906921, -0.7185797691345215,
    -1.542150855064392, 0.05772629380226135, 1.2872406244277954, 1.5509743690490723,
    -0.771653950214386, -1.6090383529663086, -1.2312242984771729, 1.3543238639831543,
    1.6042230129241943, 0.6361663341522217, -1.6758449077606201, -1.259323000907898,
    0.11973518133163452, 1.6564302444458008, 0.6329140067100525, -0.8827157616615295,
    -1.285637378692627, 0.15386635065078735, 1.4909825325012207, 0.6275089383125305,
    -0.9406370520591736, -1.8089995384216309, 0.1900659203529358, 1.5604608058929443,
    1.7575256824493408, -1.0001063346862793, -1.875239372253418, -1.3327797651290894,
    1.6306390762329102, 1.8063174486160278, 0.6101968288421631, -1.9411821365356445,
    -1.3535434007644653, 0.2686147391796112,
];
#[rustfmt::skip]
const AVG2: &[f64] = &[
    0.19776113331317902, 0.27563315629959106, 0.1445489078760147, -0.09938600659370422,
    0.29340246319770813, 0.15041905641555786, -0.10989532619714737, -0.2909584939479828,
    -0.01810261607170105, 0.24735677242279053, 0.32848215103149414, 0.16044852137565613,
    0.2646247446537018, 0.34576180577278137, 0.16459399461746216, -0.14473974704742432,
    -0.3007943332195282, -0.003816445590928197, 0.3001900911331177, 0.3797245919704437,
    0.002193232299759984, 0.3184618055820465, 0.39637747406959534, 0.17347776889801025,
];
#[rustfmt::skip]
const MAXV: &[f64] = &[
    0.29552021622657776, 0.9413594603538513, 0.8804735541343689, 0.3333492577075958,
    1.0130399465560913, 0.9315128326416016, 0.3733208477497101, 1.0852500200271606,
    0.9810663461685181, 0.1260717660188675, 0.3733208477497101, 1.0852500200271606,
    0.1128677949309349, 0.4154110550880432, 1.157931923866272, 1.0290864706039429,
    0.4595946967601776, 1.2310277223587036, 1.075526237487793, 0.5058453679084778,
    1.3044791221618652, 1.1203397512435913, 0.07933271676301956, 0.5058453679084778,
    1.1634817123413086, 0.05900522321462631, 0.5541354417800903, 1.3782273530960083,
    1.1634817123413086, 0.6044362187385559, 1.4522136449813843, 1.2049076557159424,
    0.6567175984382629, 1.5263787508010864, 1.2445743083953857, 0.011249332688748837,
];
#[rustfmt::skip]
const MAXI: &[i64] = &[
    0, 1, 2, 7, 8, 9, 14, 15, 16, 17, 14, 15, 4, 1, 2, 3, 8, 9, 10, 15, 16, 17, 18, 15, 4, 5,
    2, 3, 4, 9, 10, 11, 16, 17, 18, 19,
];
#[rustfmt::skip]
const MAX1V: &[f64] = &[
    0.9413594603538513, 0.8804735541343689, -0.583726704120636, 1.157931923866272,
    1.157931923866272, 0.1128677949309349, 0.5541354417800903, 1.3782273530960083,
    1.1634817123413086,
];
#[rustfmt::skip]
const MAX1I: &[i64] = &[
    1, 2, 6, 2, 2, 4, 2, 3, 4,
];
#[rustfmt::skip]
const E_OUT: &[f64] = &[
    0.34383076429367065, 0.8229292035102844, 0.8028498291969299, -1.009564757347107,
    -0.3193010985851288, 0.5646463632583618, -1.009564757347107, -0.3193010985851288,
    0.5646463632583618, -0.17045049369335175, 0.60940021276474, 1.0195969343185425,
    0.34383076429367065, 0.8229292035102844, 0.8028498291969299, 0.36490100622177124,
    -0.48203542828559875, -1.0365755558013916,
];
#[rustfmt::skip]
const E_W: &[f64] = &[
    0.34383076429367065, 0.8229292035102844, 0.8028498291969299, 0.36490100622177124,
    -0.48203542828559875, -1.0365755558013916, -1.009564757347107, -0.3193010985851288,
    0.5646463632583618, 1.4518795013427734, 1.2818983793258667, 0.3343348801136017,
    -0.8160316944122314, -1.4714043140411377, -1.2342429161071777, -0.17045049369335175,
    0.60940021276474, 1.0195969343185425,
];
#[rustfmt::skip]
const E_G: &[f64] = &[
    12.0, 14.0, 16.0, 15.0, 16.0, 17.0, 9.0, 11.0, 13.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 9.0,
    10.0, 11.0,
];
#[rustfmt::skip]
const E1_OUT: &[f64] = &[
    0.473215788602829, 0.4178133010864258, 0.10897085070610046, -0.23171664774417877,
    -0.4178132712841034, -0.35047000646591187, 0.473215788602829, 0.4178133010864258,
    0.10897085070610046,
];
#[rustfmt::skip]
const E1_W: &[f64] = &[
    0.5841274857521057, 1.3980586528778076, 1.3639461994171143, 0.5024822354316711,
    -0.663780689239502, -1.4274030923843384, -1.3251819610595703, -0.41912326216697693,
    0.7411700487136841, 0.473215788602829, 0.4178133010864258, 0.10897085070610046,
    -0.23171664774417877, -0.4178132712841034, -0.35047000646591187, -0.24840626120567322,
    0.8881102800369263, 1.4859110116958618,
];
#[rustfmt::skip]
const P_OUT: &[f64] = &[
    0.5024822354316711, -0.663780689239502, -1.4274030923843384, 1.4518795013427734,
    1.2818983793258667, 0.3343348801136017, 0.5024822354316711, -0.663780689239502,
    -1.4274030923843384,
];
#[rustfmt::skip]
const P_G: &[f64] = &[
    0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 1.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0,
];

/// Channel dropout zeroes whole feature maps (torch's Dropout1d/2d/3d), scales the kept ones by
/// 1/(1-p), and is the identity in evaluation.
#[test]
fn channel_dropout_zeroes_whole_channels() -> Result<()> {
    let x = Tensor::ones([4, 6, 3, 5], DType::F32)?;
    let mut d = Dropout2d::new(0.5)?;
    assert_eq!(d.type_name(), "Dropout2d");
    let y = d.forward(&x)?;
    let per_channel = y.reshape([24, 15])?.to_vec::<f32>()?;
    let mut dropped = 0;
    for c in per_channel.chunks(15) {
        assert!(c.iter().all(|&v| v == c[0]) && (c[0] == 0.0 || c[0] == 2.0), "{c:?}");
        dropped += usize::from(c[0] == 0.0);
    }
    assert!(dropped > 0 && dropped < 24, "{dropped} of 24 channels dropped");
    d.set_training(false);
    assert_eq!(d.forward(&x)?.to_vec::<f32>()?, x.to_vec::<f32>()?);
    // Unbatched [C, L] for Dropout1d; a 4-D input is torch's error there.
    let y = Dropout1d::new(0.5)?.forward(&Tensor::ones([8, 10], DType::F32)?)?;
    assert_eq!(y.dims(), &[8, 10]);
    let e = Dropout1d::new(0.5)?.forward(&x).unwrap_err().to_string();
    assert!(e.contains("dropout1d: Expected 2D or 3D input, but received a 4D input"), "{e}");
    assert_eq!(
        Dropout3d::new(1.0)?.forward(&Tensor::ones([2, 3, 2, 2], DType::F32)?)?.sum_all()?.item::<f32>()?,
        0.0
    );
    assert!(Dropout2d::new(1.5).is_err());
    Ok(())
}

/// `nn.Unfold` then `nn.Fold` with blocks that tile the image without overlap give the image
/// back; with overlap, each pixel is counted once per block holding it (torch's col2im).
#[test]
fn unfold_then_fold_tiles_and_counts_overlaps() -> oxtorch_tensor::Result<()> {
    use oxtorch_nn::{Fold, Forward, Unfold};
    let x = oxtorch_tensor::Tensor::arange(2 * 3 * 4 * 6, ())?
        .to_dtype(oxtorch_tensor::DType::F32)?
        .reshape([2, 3, 4, 6])?;
    let tiles = Unfold { stride: vec![2, 3], ..Unfold::new(&[2, 3]) };
    let cols = tiles.forward(&x)?;
    assert_eq!(cols.dims(), &[2, 18, 4]);
    let back = Fold { stride: vec![2, 3], ..Fold::new(&[4, 6], &[2, 3]) }.forward(&cols)?;
    assert_eq!(back.to_vec::<f32>()?, x.to_vec::<f32>()?);
    let ones = oxtorch_tensor::Tensor::ones([1, 1, 3, 3], ())?;
    let counts = Fold::new(&[3, 3], &[2, 2]).forward(&Unfold::new(&[2, 2]).forward(&ones)?)?;
    assert_eq!(counts.to_vec::<f32>()?, vec![1.0, 2.0, 1.0, 2.0, 4.0, 2.0, 1.0, 2.0, 1.0]);
    Ok(())
}

/// torch's `nn.ParameterDict` / `nn.ParameterList`: the keys (or positions) are the state-dict
/// names, and the classes are named as torch's.
#[test]
fn parameter_dict_and_list_use_torch_names() -> Result<()> {
    let mut d = ParameterDict::new();
    d.insert("scale", Tensor::ones([2], DType::F32)?.requires_grad_(true)?)?;
    d.insert("shift", Tensor::zeros([2], DType::F32)?.requires_grad_(true)?)?;
    let keys: Vec<String> = d.state_dict().keys().map(String::from).collect();
    assert_eq!(keys, vec!["scale", "shift"]);
    assert_eq!(d.type_name(), "ParameterDict");
    let l = ParameterList { modules: vec![Tensor::ones([3], DType::F32)?, Tensor::ones([1], DType::F32)?] };
    let keys: Vec<String> = l.state_dict().keys().map(String::from).collect();
    assert_eq!(keys, vec!["0", "1"]);
    assert_eq!(l.type_name(), "ParameterList");
    Ok(())
}
