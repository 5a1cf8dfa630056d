#![allow(clippy::type_complexity)]
//! `optim::Muon`, `utils::orthogonal::orthogonal` and `functional::linear_cross_entropy` /
//! `loss::LinearCrossEntropyLoss` against PyTorch: the values of `muon_and_linear_cross_entropy_golden.rs`
//! (written by `nn/tests/make_muon_and_linear_cross_entropy_golden.py`), and torch's errors.

use oxtorch_nn::functional::{linear_cross_entropy, LinearCrossEntropyOptions};
use oxtorch_nn::loss::LinearCrossEntropyLoss;
use oxtorch_nn::optim::{Muon, MuonAdjustLr, MuonOptions, Optimizer};
use oxtorch_nn::utils::orthogonal::orthogonal;
use oxtorch_nn::{Forward, Linear, Module, ModuleExt, StateDict};
use oxtorch_tensor::{DType, Result, Tensor};

use super::golden_case::{assert_close, assert_close_as_f64, float64, int64, leaf, ramp, T};

include!("muon_and_linear_cross_entropy_golden.rs");

/// The error of a call that must fail.
fn err_text<R>(r: Result<R>) -> String {
    match r {
        Ok(_) => panic!("expected an error"),
        Err(e) => e.to_string(),
    }
}

/// torch's message `key` of a golden error table.
fn torch_error(table: &[(&str, &'static str)], key: &str) -> &'static str {
    table.iter().find(|(k, _)| *k == key).map(|(_, v)| *v).unwrap()
}

fn muon_options(nesterov: bool, adjust: &str) -> Result<MuonOptions> {
    Ok(MuonOptions {
        lr: MUON_LR,
        weight_decay: MUON_WD,
        momentum: MUON_MOMENTUM,
        nesterov,
        adjust_lr_fn: if adjust.is_empty() { None } else { Some(MuonAdjustLr::from_name(adjust)?) },
        ..MuonOptions::default()
    })
}

fn muon_params(dt: DType) -> Vec<Tensor> {
    MUON_INIT.iter().map(|t| float64(t).to_dtype(dt).unwrap().requires_grad_(true).unwrap()).collect()
}

#[test]
fn muon_matches_torch_for_each_adjustment_and_dtype() -> Result<()> {
    for (is64, nesterov, adjust, params, bufs) in MUON_CASES {
        let dt = if *is64 { DType::F64 } else { DType::F32 };
        let what = format!("muon({dt:?}, nesterov={nesterov}, adjust={adjust:?})");
        let ps = muon_params(dt);
        let mut opt = Muon::new(ps.clone(), muon_options(*nesterov, adjust)?)?;
        for step in MUON_GRADS {
            for (p, g) in ps.iter().zip(step.iter()) {
                p.set_grad(Some(float64(g).to_dtype(dt)?))?;
            }
            opt.step()?;
        }
        // the momentum buffers do not go through bfloat16
        let buf_tol = if *is64 { 1e-12 } else { 1e-6 };
        for (k, ((p, want), want_buf)) in ps.iter().zip(params.iter()).zip(bufs.iter()).enumerate() {
            assert_eq!(p.dtype(), dt, "{what}: dtype");
            assert_close_as_f64(&format!("{what}.param{k}"), p, want, MUON_PARAM_TOL);
            let buf = opt.param_state_tensor(p, "momentum_buffer")?.expect("a momentum buffer");
            assert_eq!(buf.dtype(), dt, "{what}: buffer dtype");
            assert_close_as_f64(&format!("{what}.momentum_buffer{k}"), &buf, want_buf, buf_tol);
        }
    }
    Ok(())
}

#[test]
fn muon_state_dict_round_trips() -> Result<()> {
    let ps = muon_params(DType::F64);
    let mut opt = Muon::new(ps.clone(), muon_options(true, "match_rms_adamw")?)?;
    for (p, g) in ps.iter().zip(MUON_GRADS[0].iter()) {
        p.set_grad(Some(float64(g)))?;
    }
    opt.step()?;
    let state = opt.state_dict()?;
    let mut keys: Vec<&str> = state.tensors.keys().collect();
    keys.sort_unstable();
    assert_eq!(keys, ["state.0.momentum_buffer", "state.1.momentum_buffer"]);
    assert_eq!(state.hyper(0, "nesterov"), Some(1.0));
    assert_eq!(state.hyper(0, "ns_steps"), Some(5.0));
    assert_eq!(state.hyper(0, "ns_coefficients.1"), Some(-4.775));
    assert_eq!(state.hyper(0, "adjust_lr_fn"), Some(2.0));
    // a fresh optimizer (other options) loaded with the state continues as the first
    let qs: Vec<Tensor> =
        ps.iter().map(|p| p.detach().copy().unwrap().requires_grad_(true).unwrap()).collect();
    let mut opt2 = Muon::new(qs.clone(), MuonOptions::default())?;
    opt2.load_state_dict(&state)?;
    assert_eq!(opt2.group_hyper(0, "lr"), Some(MUON_LR));
    assert_eq!(opt2.group_hyper(0, "adjust_lr_fn"), Some(2.0));
    for (o, ps) in [(&mut opt as &mut dyn Optimizer, &ps), (&mut opt2, &qs)] {
        for (p, g) in ps.iter().zip(MUON_GRADS[1].iter()) {
            p.set_grad(Some(float64(g)))?;
        }
        o.step()?;
    }
    for (p, q) in ps.iter().zip(&qs) {
        assert_eq!(p.to_f64_vec()?, q.to_f64_vec()?);
    }
    Ok(())
}

#[test]
fn muon_errors_are_torchs() -> Result<()> {
    let p = || Tensor::zeros([3, 4], ()).unwrap().requires_grad_(true).unwrap();
    let with = |o: MuonOptions| err_text(Muon::new(vec![p()], o));
    assert_eq!(with(MuonOptions { lr: -1.0, ..Default::default() }), torch_error(MUON_ERRORS, "lr"));
    assert_eq!(
        with(MuonOptions { momentum: -0.5, ..Default::default() }),
        torch_error(MUON_ERRORS, "momentum")
    );
    assert_eq!(
        with(MuonOptions { weight_decay: -2.0, ..Default::default() }),
        torch_error(MUON_ERRORS, "weight_decay")
    );
    assert_eq!(err_text(MuonAdjustLr::from_name("foo")), torch_error(MUON_ERRORS, "adjust"));
    let v = Tensor::zeros([3], ())?.requires_grad_(true)?;
    assert_eq!(err_text(Muon::new(vec![v], MuonOptions::default())), torch_error(MUON_ERRORS, "1d"));
    let q = p();
    let mut opt = Muon::new(vec![q.clone()], MuonOptions { ns_steps: 100, ..Default::default() })?;
    q.set_grad(Some(Tensor::ones([3, 4], ())?))?;
    assert_eq!(err_text(opt.step()), torch_error(MUON_ERRORS, "ns_steps"));
    Ok(())
}

#[test]
fn orthogonal_matches_torch() -> Result<()> {
    for ((out_f, in_f), map, triv, w0, b0, sd, weight, x, out, g_orig, g_bias) in ORTH_CASES {
        let what = format!("orthogonal([{out_f}, {in_f}], {map:?}, trivialization={triv})");
        let lin = Linear::from_weights(leaf(w0, true), Some(leaf(b0, true)));
        let map = if map.is_empty() { None } else { Some(*map) };
        let mut m = orthogonal(lin, "weight", map, *triv)?;
        let keys: Vec<String> = m.state_dict().keys().map(String::from).collect();
        let want_keys: Vec<&str> = sd.iter().map(|(k, _)| *k).collect();
        assert_eq!(keys, want_keys, "{what}: state-dict keys");
        assert_eq!(m.type_name(), "ParametrizedLinear");
        // after registration: the parametrized weight and the original are torch's
        assert_close(&format!("{what}.weight"), &m.weight()?, weight, 1e-9);
        let original = m.parametrization().original.clone();
        assert!(original.requires_grad(), "{what}: original is trainable");
        assert_close(&format!("{what}.original"), &original.detach(), &sd[1].1, 1e-9);
        if out_f == in_f && *triv {
            // (a square base is deterministic: the weight's QR factor)
            let base = m.parametrization().base().expect("a base").clone();
            assert_close(&format!("{what}.base"), &base, &sd[2].1, 1e-9);
        }
        // torch's state dict (its random completion of a non-square base) replays exactly
        let mut torch_sd = StateDict::new();
        for (k, v) in sd.iter() {
            torch_sd.insert(k, float64(v));
        }
        m.load_state_dict(&torch_sd, true)?;
        assert_close(&format!("{what}.weight(loaded)"), &m.weight()?, weight, 1e-9);
        let y = m.forward(&float64(x))?;
        assert_close(&format!("{what}.out"), &y, out, 1e-9);
        y.mul(ramp(&y))?.sum_all()?.backward()?;
        let g = m.parametrization().original.grad().expect("a gradient for original");
        assert_close(&format!("{what}.grad.original"), &g, g_orig, 1e-8);
        let bias = m.named_parameters().into_iter().find(|(k, _)| k == "bias").map(|(_, t)| t).unwrap();
        assert_close(&format!("{what}.grad.bias"), &bias.grad().unwrap(), g_bias, 1e-9);
    }
    Ok(())
}

#[test]
fn orthogonal_errors_are_torchs() -> Result<()> {
    let e = err_text(orthogonal(Linear::new(3, 4, true)?, "weight", Some("foo"), true));
    assert_eq!(e, torch_error(ORTH_ERRORS, "map"));
    let e = err_text(orthogonal(Linear::new(3, 4, true)?, "bias", None, true));
    assert_eq!(e, torch_error(ORTH_ERRORS, "1d"));
    let e = err_text(orthogonal(Linear::new(3, 4, true)?, "nope", None, true));
    assert!(e.contains("has no parameter or buffer with name 'nope'"), "{e}");
    Ok(())
}

#[test]
fn orthogonal_keeps_the_weight_orthogonal() -> Result<()> {
    // f32 wide weight, default map (householder), with the trivialization
    let m = orthogonal(Linear::new(5, 3, false)?, "weight", None, true)?;
    let w = m.weight()?;
    assert_eq!(w.dims(), [3, 5]);
    let gram = w.matmul(&w.t()?)?.to_f64_vec()?;
    for (i, g) in gram.iter().enumerate() {
        let id = if i % 4 == 0 { 1.0 } else { 0.0 };
        assert!((g - id).abs() < 1e-5, "W Wᵀ[{i}] = {g}");
    }
    Ok(())
}

#[test]
fn linear_cross_entropy_matches_torch() -> Result<()> {
    for (name, x, w, t, b, cw, reduction, ignore_index, ls, out, gx, gw, gb) in LCE_CASES {
        let x = leaf(x, true);
        let w = leaf(w, true);
        let target = if *name == "probabilities" { float64(t) } else { int64(t) };
        let b = (!b.data.is_empty()).then(|| leaf(b, true));
        let cw = (!cw.data.is_empty()).then(|| float64(cw));
        let ignore = (*ignore_index != i64::MIN).then_some(*ignore_index);
        let options = LinearCrossEntropyOptions { batch_chunk_size: Some(2), ..Default::default() };
        for opts in [None, Some(&options)] {
            for leafs in [&x, &w].into_iter().chain(b.as_ref()) {
                leafs.set_grad(None)?;
            }
            let y =
                linear_cross_entropy(&x, &w, &target, b.as_ref(), cw.as_ref(), reduction, ignore, *ls, opts)?;
            assert_close(&format!("{name}.out"), &y, out, 1e-10);
            y.mul(ramp(&y))?.sum_all()?.backward()?;
            assert_close(&format!("{name}.grad.input"), &x.grad().unwrap(), gx, 1e-10);
            assert_close(&format!("{name}.grad.weight"), &w.grad().unwrap(), gw, 1e-10);
            if let Some(b) = &b {
                assert_close(&format!("{name}.grad.bias"), &b.grad().unwrap(), gb, 1e-10);
            }
        }
    }
    Ok(())
}

#[test]
fn linear_cross_entropy_errors_are_torchs() -> Result<()> {
    let f = |dims: &[usize]| Tensor::zeros(dims.to_vec(), DType::F64).unwrap();
    let (x, w) = (f(&[2, 3]), f(&[4, 3]));
    let t = Tensor::from_vec(vec![1i64, 2], [2])?;
    let call = |x: &Tensor, w: &Tensor, t: &Tensor, b: Option<&Tensor>, ii: Option<i64>| {
        err_text(linear_cross_entropy(x, w, t, b, None, "mean", ii, 0.0, None))
    };
    assert_eq!(call(&f(&[2, 2, 3]), &w, &t, None, None), torch_error(LCE_ERRORS, "rank3"));
    assert_eq!(call(&x, &f(&[4]), &t, None, None), torch_error(LCE_ERRORS, "weight1d"));
    assert_eq!(call(&x, &f(&[4, 5]), &t, None, None), torch_error(LCE_ERRORS, "in_features"));
    assert_eq!(call(&x, &w, &t, Some(&f(&[3])), None), torch_error(LCE_ERRORS, "bias"));
    assert_eq!(call(&f(&[3]), &f(&[4, 2, 3]), &t, None, None), torch_error(LCE_ERRORS, "unbatched_k"));
    assert_eq!(call(&x, &w, &f(&[2, 4]), None, Some(1)), torch_error(LCE_ERRORS, "prob_ignore"));
    let bad = |o: LinearCrossEntropyOptions| err_text(o.validate());
    let acc = LinearCrossEntropyOptions { acc_policy: "x".to_string(), ..Default::default() };
    assert_eq!(bad(acc), torch_error(LCE_ERRORS, "acc_policy"));
    let method = LinearCrossEntropyOptions { chunking_method: Some("foo".to_string()), ..Default::default() };
    assert_eq!(bad(method), torch_error(LCE_ERRORS, "chunking_method"));
    let chunk = LinearCrossEntropyOptions { batch_chunk_size: Some(0), ..Default::default() };
    assert_eq!(bad(chunk), torch_error(LCE_ERRORS, "batch_chunk_size"));
    let ok = LinearCrossEntropyOptions {
        chunking_method: Some("aspect_ratio:4".to_string()),
        ..Default::default()
    };
    ok.validate()?;
    let module = |weight: Option<Tensor>, ls: f64| {
        err_text(LinearCrossEntropyLoss::new(3, 4, &[], false, DType::F64, "mean", weight, None, ls, None))
    };
    assert_eq!(module(Some(f(&[3])), 0.0), torch_error(LCE_ERRORS, "module_weight"));
    assert_eq!(module(None, 1.5), torch_error(LCE_ERRORS, "module_smoothing"));
    Ok(())
}

#[test]
fn linear_cross_entropy_module_matches_torch() -> Result<()> {
    let options = LinearCrossEntropyOptions { batch_chunk_size: Some(2), ..Default::default() };
    let mut m =
        LinearCrossEntropyLoss::new(3, 4, &[2], true, DType::F64, "mean", None, None, 0.0, Some(options))?;
    assert_eq!(m.repr(), LCE_MODULE_REPR);
    let keys: Vec<String> = m.state_dict().keys().map(String::from).collect();
    assert_eq!(keys, LCE_MODULE_KEYS);
    let mut sd = StateDict::new();
    for (k, v) in LCE_MODULE_SD {
        sd.insert(k, float64(v));
    }
    m.load_state_dict(&sd, true)?;
    let (x, t, want) = &LCE_MODULE_IO;
    let y = m.forward(&float64(x), &int64(t))?;
    assert_close("LinearCrossEntropyLoss.out", &y, want, 1e-10);
    Ok(())
}
