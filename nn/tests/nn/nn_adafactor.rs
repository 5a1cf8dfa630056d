//! `optim::Adafactor` against PyTorch in float64: the cases of `nn_adafactor_golden.rs` (written by
//! `nn/tests/make_nn_adafactor_golden.py`) replayed step by step, the state dict's keys and values,
//! a resume from it, the hyper-parameters, and torch's errors.

use oxtorch_nn::optim::{Adafactor, AdafactorOptions, Optimizer};
use oxtorch_tensor::{DType, Result, Tensor};

use super::golden_case::{assert_close_as_f64, float64, leaf, T};

/// An Adafactor run on a 3x4 and a 4-element parameter.
struct AdafactorGolden {
    name: &'static str,
    init: &'static [T],
    /// per step, the gradient of each parameter
    grads: &'static [&'static [T]],
    /// per step, every parameter after it
    after: &'static [&'static [T]],
    /// torch's `state_dict()["state"]` after the last step, as `state.{index}.{name}`
    state: &'static [(&'static str, T)],
}

include!("nn_adafactor_golden.rs");

const TOL: f64 = 1e-12;

/// The options the script gives the case.
fn options(name: &str) -> AdafactorOptions {
    let d = AdafactorOptions::default();
    match name {
        "defaults" => d,
        "lr_0_6" => AdafactorOptions { lr: 0.6, ..d },
        "weight_decay" => AdafactorOptions { lr: 0.3, weight_decay: 0.1, ..d },
        "maximize" => AdafactorOptions { lr: 0.4, maximize: true, ..d },
        "eps_d_beta2" => {
            AdafactorOptions { lr: 0.5, eps: (Some(1e-3), 0.05), d: 2.0, beta2_decay: -0.5, ..d }
        }
        "weight_decay_maximize" => {
            AdafactorOptions { lr: 0.2, weight_decay: 0.5, maximize: true, d: 1.5, ..d }
        }
        other => panic!("no options for Adafactor case {other}"),
    }
}

fn leaves(ts: &[T]) -> Vec<Tensor> {
    ts.iter().map(|t| leaf(t, true)).collect()
}

/// Sets the gradients of step `k` and steps.
fn step(opt: &mut Adafactor, ps: &[Tensor], grads: &[T]) -> Result<()> {
    for (p, g) in ps.iter().zip(grads) {
        p.set_grad(Some(float64(g)))?;
    }
    opt.step()
}

#[test]
fn adafactor_matches_torch_trajectories() -> Result<()> {
    assert!(ADAFACTOR_GOLDEN.len() >= 6);
    for g in ADAFACTOR_GOLDEN {
        let ps = leaves(g.init);
        let mut opt = Adafactor::new(ps.clone(), options(g.name))?;
        for (k, (grads, after)) in g.grads.iter().zip(g.after).enumerate() {
            step(&mut opt, &ps, grads)?;
            for (j, (p, want)) in ps.iter().zip(after.iter()).enumerate() {
                assert_close_as_f64(&format!("{} step {} param {j}", g.name, k + 1), p, want, TOL);
            }
        }
        // the state dict: torch's keys, exactly, and its values
        let s = opt.state_dict()?;
        let mut got: Vec<&str> = s.tensors.keys().collect();
        let mut want: Vec<&str> = g.state.iter().map(|(k, _)| *k).collect();
        got.sort_unstable();
        want.sort_unstable();
        assert_eq!(got, want, "{}: state keys", g.name);
        for (key, want) in g.state {
            assert_close_as_f64(&format!("{} {key}", g.name), s.tensors.get(key).unwrap(), want, TOL);
        }
    }
    Ok(())
}

#[test]
fn adafactor_resumes_from_its_state_dict() -> Result<()> {
    // three steps, save, load into a fresh optimizer (other options: the saved ones win), two more
    for g in ADAFACTOR_GOLDEN {
        let ps = leaves(g.init);
        let mut opt = Adafactor::new(ps.clone(), options(g.name))?;
        for grads in &g.grads[..3] {
            step(&mut opt, &ps, grads)?;
        }
        let state = opt.state_dict()?;
        drop(opt);
        let other = AdafactorOptions { lr: 0.123, d: 3.0, weight_decay: 0.9, ..AdafactorOptions::default() };
        let mut resumed = Adafactor::new(ps.clone(), other)?;
        resumed.load_state_dict(&state)?;
        for (k, grads) in g.grads.iter().enumerate().skip(3) {
            step(&mut resumed, &ps, grads)?;
            for (j, (p, want)) in ps.iter().zip(g.after[k].iter()).enumerate() {
                assert_close_as_f64(&format!("{} resumed step {} param {j}", g.name, k + 1), p, want, TOL);
            }
        }
        assert_eq!(resumed.state_dict()?.tensors.get("state.0.step").unwrap().item::<f64>()?, 5.0);
    }
    Ok(())
}

#[test]
fn adafactor_hyper_params_are_torchs() -> Result<()> {
    let opt = Adafactor::new(
        vec![Tensor::zeros(2, DType::F64)?.requires_grad_(true)?],
        AdafactorOptions::default(),
    )?;
    let got = opt.hyper_params(0);
    assert_eq!(got.len(), ADAFACTOR_DEFAULT_HYPER.len());
    for (name, want) in ADAFACTOR_DEFAULT_HYPER {
        let v = got.iter().find(|(k, _)| k == name).unwrap_or_else(|| panic!("no hyper-parameter {name}")).1;
        assert!(v == *want || (v.is_nan() && want.is_nan()), "{name}: {v} vs {want}");
    }
    // the group's hyper-parameters round-trip, eps1 None included
    let s = opt.state_dict()?;
    assert!(s.hyper(0, "eps.0").unwrap().is_nan());
    let mut other = Adafactor::new(
        vec![Tensor::zeros(2, DType::F64)?.requires_grad_(true)?],
        AdafactorOptions { eps: (Some(0.5), 0.25), lr: 0.3, ..AdafactorOptions::default() },
    )?;
    other.load_state_dict(&s)?;
    assert_eq!(other.lr(0), 0.01);
    let eps: Vec<f64> =
        other.hyper_params(0).into_iter().filter(|(k, _)| k.starts_with("eps.")).map(|(_, v)| v).collect();
    assert!(eps[0].is_nan() && eps[1] == 1e-3, "{eps:?}");
    Ok(())
}

#[test]
fn adafactor_errors_are_torchs() {
    let d = AdafactorOptions::default();
    for (case, want) in ADAFACTOR_ERRORS {
        let o = match *case {
            "lr" => AdafactorOptions { lr: -1.0, ..d },
            "beta2_decay" => AdafactorOptions { beta2_decay: 0.5, ..d },
            "eps1" => AdafactorOptions { eps: (Some(-1.0), 1e-3), ..d },
            "eps2" => AdafactorOptions { eps: (None, -1.0), ..d },
            "d" => AdafactorOptions { d: 0.5, ..d },
            "weight_decay" => AdafactorOptions { weight_decay: -0.1, ..d },
            other => panic!("no case {other}"),
        };
        let p = Tensor::zeros(2, DType::F64).unwrap().requires_grad_(true).unwrap();
        match Adafactor::new(vec![p], o) {
            Ok(_) => panic!("{case}: expected an error"),
            Err(e) => assert_eq!(e.to_string(), *want, "{case}"),
        }
    }
}

#[test]
fn adafactor_skips_parameters_without_gradients_and_adds_groups() -> Result<()> {
    let g = &ADAFACTOR_GOLDEN[0];
    let ps = leaves(g.init);
    let mut opt = Adafactor::new(vec![ps[0].clone()], options(g.name))?;
    opt.add_param_group(vec![ps[1].clone()], &[])?;
    // only the matrix has a gradient: the vector stays, and has no state
    ps[0].set_grad(Some(float64(&g.grads[0][0])))?;
    opt.step()?;
    assert_close_as_f64("matrix after one step", &ps[0], &g.after[0][0], TOL);
    assert_close_as_f64("untouched vector", &ps[1], &g.init[1], 0.0);
    let s = opt.state_dict()?;
    assert!(s.tensors.get("state.0.row_var").is_some() && s.tensors.get("state.1.step").is_none());
    assert!(opt.add_param_group(vec![ps[1].clone()], &[]).is_err());
    Ok(())
}
