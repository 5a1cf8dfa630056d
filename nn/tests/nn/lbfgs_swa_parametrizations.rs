//! `optim::LBFGS`, `Optimizer::add_param_group`, `optim::swa_utils` (`AveragedModel`, `SWALR`)
//! and `utils::parametrizations` (`weight_norm`, `spectral_norm`) against PyTorch in float64: the
//! cases of `lbfgs_swa_parametrizations_golden.rs` (written by `nn/tests/make_lbfgs_swa_parametrizations_golden.py`) are replayed
//! call for call. Plus state-dict round trips, torch's errors, and the parametrized modules' trees.

use oxtorch_nn::optim::lr_scheduler::CosineAnnealingLR;
use oxtorch_nn::optim::swa_utils::{
    get_ema_avg_fn, get_ema_multi_avg_fn, get_swa_avg_fn, get_swa_multi_avg_fn, AveragedModel, Averaging,
    SWALR,
};
use oxtorch_nn::optim::{
    Adagrad, AdagradOptions, Adam, AdamOptions, LbfgsOptions, Optimizer, ParamGroup, SgdOptions, LBFGS, SGD,
};
use oxtorch_nn::utils::parametrizations::{spectral_norm, weight_norm, weight_norm_compat};
use oxtorch_nn::*;
use oxtorch_tensor::{DType, Result, Tensor};

use super::golden_case::{assert_close_as_f64, float64, leaf, T};

/// An LBFGS run: the returned losses and the parameters after each step, the final counters.
struct LbfgsGolden {
    name: &'static str,
    init: &'static [T],
    losses: &'static [f64],
    after: &'static [&'static [T]],
    n_iter: usize,
    func_evals: usize,
    /// curvature pairs kept at the end
    history: usize,
}

/// An optimizer whose first parameter trains alone for `before` steps, the others added then.
struct GroupGolden {
    name: &'static str,
    init: &'static [T],
    before: usize,
    /// per step, the gradient of each parameter then trained
    grads: &'static [&'static [T]],
    /// per step, every parameter
    after: &'static [&'static [T]],
}

/// An AveragedModel run: the model's state before each update, the averaged state dict after.
struct AvgGolden {
    name: &'static str,
    models: &'static [&'static [(&'static str, T)]],
    averaged: &'static [&'static [(&'static str, T)]],
}

/// A parametrized module: its state dict, one output per forward pass, their cotangents, the
/// gradients, the buffers after the passes.
struct ModGolden {
    name: &'static str,
    input: T,
    state: &'static [(&'static str, T)],
    outs: &'static [T],
    cots: &'static [T],
    input_grad: T,
    param_grads: &'static [(&'static str, T)],
    buffers_after: &'static [(&'static str, T)],
}

include!("lbfgs_swa_parametrizations_golden.rs");

fn close(what: &str, got: f64, want: f64, tol: f64) {
    assert!((got - want).abs() <= tol * (1.0 + want.abs()), "{what}: got {got}, PyTorch {want}");
}

/// The error message of a call that must fail.
fn err<R>(r: Result<R>) -> String {
    match r {
        Ok(_) => panic!("expected an error"),
        Err(e) => e.to_string(),
    }
}

// --- LBFGS ---------------------------------------------------------------------------------------

fn lbfgs_options(name: &str) -> LbfgsOptions {
    let d = LbfgsOptions::default();
    match name {
        "rosenbrock" => LbfgsOptions { max_iter: 5, history_size: 3, ..d },
        "rosenbrock_strong_wolfe" => {
            LbfgsOptions { max_iter: 6, history_size: 4, line_search_fn: Some("strong_wolfe"), ..d }
        }
        "rosenbrock_maximize_lr" => LbfgsOptions { lr: 0.5, max_iter: 4, maximize: true, ..d },
        "lstsq_defaults" => d,
        "lstsq_strong_wolfe" => LbfgsOptions { line_search_fn: Some("strong_wolfe"), ..d },
        "lstsq_strong_wolfe_max_eval" => LbfgsOptions {
            max_iter: 10,
            max_eval: Some(4),
            history_size: 2,
            line_search_fn: Some("strong_wolfe"),
            ..d
        },
        other => panic!("no options for LBFGS case {other}"),
    }
}

/// `sum(100 (x[1:] - x[:-1]²)² + (1 - x[:-1])²)`, as the script.
fn rosenbrock(x: &Tensor) -> Result<Tensor> {
    let n = x.numel() - 1;
    let (head, tail) = (x.narrow(0, 0, n)?, x.narrow(0, 1, n)?);
    let a = tail.sub(&head.square()?)?.square()?.mul(100.0)?;
    a.add(&head.neg()?.add(1.0)?.square()?)?.sum_all()
}

/// The case's loss of the parameters `ps`.
fn lbfgs_loss(name: &str, ps: &[Tensor]) -> Result<Tensor> {
    if name.starts_with("rosenbrock_maximize") {
        rosenbrock(&ps[0])?.neg()
    } else if name.starts_with("rosenbrock") {
        rosenbrock(&ps[0])
    } else {
        // ((A @ W.T + b - Y) ** 2).mean(); the third parameter takes no part
        float64(&LS_A).matmul(&ps[0].t()?)?.add(&ps[1])?.sub(float64(&LS_Y))?.square()?.mean_all()
    }
}

/// One LBFGS step of the case on `ps`: the closure clears the gradients through the parameters.
fn lbfgs_step(name: &str, opt: &mut LBFGS, ps: &[Tensor]) -> Result<f64> {
    let loss = opt.step(|| {
        for p in ps {
            p.set_grad(None)?;
        }
        let loss = lbfgs_loss(name, ps)?;
        loss.backward()?;
        Ok(loss)
    })?;
    loss.item::<f64>()
}

/// The number of curvature pairs in an LBFGS state dict.
fn lbfgs_history(opt: &LBFGS) -> Result<usize> {
    let s = opt.state_dict()?;
    Ok((0..).take_while(|i| s.tensor(0, &format!("old_dirs.{i}")).is_some()).count())
}

#[test]
fn lbfgs_trajectories_match_pytorch() -> Result<()> {
    assert_eq!(LBFGS_GOLDEN.len(), 6, "the golden file's LBFGS case count changed");
    for g in LBFGS_GOLDEN {
        let ps: Vec<Tensor> = g.init.iter().map(|v| leaf(v, true)).collect();
        let mut opt = LBFGS::new(ps.clone(), lbfgs_options(g.name))?;
        for (step, (want_loss, want)) in g.losses.iter().zip(g.after).enumerate() {
            let loss = lbfgs_step(g.name, &mut opt, &ps)?;
            close(&format!("{} step {step} loss", g.name), loss, *want_loss, 1e-10);
            for (k, (p, w)) in ps.iter().zip(want.iter()).enumerate() {
                assert_close_as_f64(&format!("{} step {step} param {k}", g.name), p, w, 1e-10);
            }
        }
        assert_eq!((opt.n_iter(), opt.func_evals()), (g.n_iter, g.func_evals), "{}: counters", g.name);
        assert_eq!(lbfgs_history(&opt)?, g.history, "{}: history length", g.name);
    }
    Ok(())
}

/// Two steps, the state saved and loaded into a new optimizer over copies of the parameters: both
/// take the remaining steps as torch's single run did.
#[test]
fn lbfgs_resumes_from_its_state_dict() -> Result<()> {
    for name in ["rosenbrock", "rosenbrock_strong_wolfe", "lstsq_strong_wolfe_max_eval"] {
        let g = LBFGS_GOLDEN.iter().find(|g| g.name == name).unwrap();
        let ps: Vec<Tensor> = g.init.iter().map(|v| leaf(v, true)).collect();
        let mut opt = LBFGS::new(ps.clone(), lbfgs_options(name))?;
        lbfgs_step(name, &mut opt, &ps)?;
        lbfgs_step(name, &mut opt, &ps)?;
        let state = opt.state_dict()?;
        assert!(state.tensor(0, "d").is_some() && state.tensor(0, "prev_flat_grad").is_some(), "{name}");
        assert_eq!(state.tensor(0, "n_iter").unwrap().dtype(), DType::I64);
        let copies: Vec<Tensor> =
            ps.iter().map(|p| p.detach().copy().unwrap().requires_grad_(true).unwrap()).collect();
        // (the hyper-parameters come back with the state; the line search is the constructor's)
        let options = LbfgsOptions { history_size: 77, max_iter: 1, ..lbfgs_options(name) };
        let mut resumed = LBFGS::new(copies.clone(), options)?;
        resumed.load_state_dict(&state)?;
        let restored = resumed.options();
        assert_eq!(
            (restored.history_size, restored.max_iter),
            (lbfgs_options(name).history_size, lbfgs_options(name).max_iter)
        );
        for step in 2..g.losses.len() {
            let a = lbfgs_step(name, &mut opt, &ps)?;
            let b = lbfgs_step(name, &mut resumed, &copies)?;
            assert_eq!(a, b, "{name} step {step}: loss");
            for (k, (p, q)) in ps.iter().zip(&copies).enumerate() {
                assert_eq!(p.to_f64_vec()?, q.to_f64_vec()?, "{name} step {step}: param {k}");
                assert_close_as_f64(
                    &format!("{name} resumed step {step} param {k}"),
                    q,
                    &g.after[step][k],
                    1e-10,
                );
            }
        }
        assert_eq!((resumed.n_iter(), resumed.func_evals()), (g.n_iter, g.func_evals), "{name}: counters");
    }
    Ok(())
}

#[test]
fn lbfgs_errors_are_torch_s() -> Result<()> {
    let x = Tensor::from_vec(vec![1.0f64, 2.0], [2])?.requires_grad_(true)?;
    assert_eq!(
        err(LBFGS::new(vec![x.clone()], LbfgsOptions { lr: -1.0, ..Default::default() })),
        "Invalid learning rate: -1"
    );
    assert_eq!(err(LBFGS::new(vec![], LbfgsOptions::default())), "optimizer got an empty parameter list");
    let mut opt =
        LBFGS::new(vec![x.clone()], LbfgsOptions { line_search_fn: Some("armijo"), ..Default::default() })?;
    assert_eq!(
        err(Optimizer::step(&mut opt)),
        "LBFGS.step() missing 1 required positional argument: 'closure'"
    );
    let run = opt.step(|| {
        x.set_grad(None)?;
        let loss = x.square()?.sum_all()?;
        loss.backward()?;
        Ok(loss)
    });
    assert_eq!(err(run), "only 'strong_wolfe' is supported");
    let y = Tensor::zeros([2], DType::F64)?.requires_grad_(true)?;
    assert_eq!(
        err(opt.add_param_group(vec![y], &[])),
        "LBFGS doesn't support per-parameter options (parameter groups)"
    );
    assert_eq!(opt.num_groups(), 1);
    Ok(())
}

// --- add_param_group -----------------------------------------------------------------------------

/// The case's optimizer over its first parameter, and the options of the group added later.
/// An optimizer and the options of the group it gets added.
type WithGroupOptions = (Box<dyn Optimizer>, Vec<(&'static str, f64)>);

fn group_optimizer(name: &str, first: Tensor) -> Result<WithGroupOptions> {
    let p = vec![first];
    let opt: Box<dyn Optimizer> = match name {
        "sgd" => Box::new(SGD::new(
            p,
            SgdOptions { lr: 0.1, momentum: 0.9, weight_decay: 0.01, ..Default::default() },
        )?),
        "adam" => Box::new(Adam::new(p, AdamOptions { lr: 0.01, betas: (0.8, 0.99), ..Default::default() })?),
        "adam_defaults" => {
            Box::new(Adam::new(p, AdamOptions { lr: 0.03, weight_decay: 0.05, ..Default::default() })?)
        }
        "adagrad" => Box::new(Adagrad::new(
            p,
            AdagradOptions { lr: 0.1, initial_accumulator_value: 0.5, ..Default::default() },
        )?),
        other => panic!("no optimizer for group case {other}"),
    };
    let extra = match name {
        "sgd" => vec![("lr", 0.05), ("nesterov", 1.0)],
        "adam" => {
            vec![("lr", 0.02), ("betas.0", 0.5), ("betas.1", 0.9), ("amsgrad", 1.0), ("weight_decay", 0.1)]
        }
        "adagrad" => vec![("initial_accumulator_value", 2.0), ("lr", 0.2)],
        _ => vec![],
    };
    Ok((opt, extra))
}

/// Replays a group case on `ps` with `opt`, from step `from` on.
fn replay_groups(
    g: &GroupGolden,
    opt: &mut dyn Optimizer,
    ps: &[Tensor],
    extra: &[(&str, f64)],
    from: usize,
) -> Result<()> {
    for step in from..g.grads.len() {
        if step == g.before {
            opt.add_param_group(ps[1..].to_vec(), extra)?;
        }
        for (p, grad) in ps.iter().zip(g.grads[step].iter()) {
            p.set_grad(Some(float64(grad)))?;
        }
        opt.step()?;
        for (k, (p, want)) in ps.iter().zip(g.after[step].iter()).enumerate() {
            assert_close_as_f64(&format!("{} step {step} param {k}", g.name), p, want, 1e-12);
        }
    }
    Ok(())
}

#[test]
fn added_param_groups_train_as_pytorch_s() -> Result<()> {
    assert_eq!(GROUP_GOLDEN.len(), 4, "the golden file's group case count changed");
    for g in GROUP_GOLDEN {
        let ps: Vec<Tensor> = g.init.iter().map(|v| leaf(v, true)).collect();
        let (mut opt, extra) = group_optimizer(g.name, ps[0].clone())?;
        replay_groups(g, opt.as_mut(), &ps, &extra, 0)?;
        assert_eq!(opt.num_groups(), 2, "{}", g.name);
        assert_eq!(opt.group_len(1), Some(ps.len() - 1), "{}", g.name);
    }
    Ok(())
}

/// The state of an optimizer with an added group (numbered after the first group's, with the
/// group's hyper-parameters) resumes exactly in an optimizer given the same group.
#[test]
fn added_groups_round_trip_through_the_state_dict() -> Result<()> {
    for name in ["adam", "sgd", "adagrad"] {
        let g = GROUP_GOLDEN.iter().find(|g| g.name == name).unwrap();
        let ps: Vec<Tensor> = g.init.iter().map(|v| leaf(v, true)).collect();
        let (mut opt, extra) = group_optimizer(name, ps[0].clone())?;
        // up to the step after the group was added
        let stop = g.before + 1;
        let partial = GroupGolden { grads: &g.grads[..stop], after: &g.after[..stop], ..*g };
        replay_groups(&partial, opt.as_mut(), &ps, &extra, 0)?;
        let state = opt.state_dict()?;
        assert_eq!(state.num_groups(), 2, "{name}");
        assert_eq!(state.hyper(1, "lr"), extra.iter().find(|(k, _)| *k == "lr").map(|(_, v)| *v), "{name}");
        assert_eq!(state.hyper(1, "num_params"), Some((ps.len() - 1) as f64), "{name}");
        let copies: Vec<Tensor> =
            ps.iter().map(|p| p.detach().copy().unwrap().requires_grad_(true).unwrap()).collect();
        let (mut resumed, _) = group_optimizer(name, copies[0].clone())?;
        // a state with two groups does not load into one group
        assert_eq!(
            err(resumed.load_state_dict(&state)),
            "loaded state dict has a different number of parameter groups"
        );
        resumed.add_param_group(copies[1..].to_vec(), &[])?;
        resumed.load_state_dict(&state)?;
        if name == "adam" {
            assert_eq!(
                resumed.hyper_params(1).iter().find(|(k, _)| k == "betas.0").map(|(_, v)| *v),
                Some(0.5)
            );
        }
        let rest = GroupGolden { before: usize::MAX, ..*g };
        replay_groups(&rest, opt.as_mut(), &ps, &[], stop)?;
        replay_groups(&rest, resumed.as_mut(), &copies, &[], stop)?;
        for (p, q) in ps.iter().zip(&copies) {
            assert_eq!(p.to_f64_vec()?, q.to_f64_vec()?, "{name}: resumed run");
        }
    }
    Ok(())
}

#[test]
fn add_param_group_errors_are_torch_s() -> Result<()> {
    let p = Tensor::zeros([2], DType::F64)?.requires_grad_(true)?;
    let q = Tensor::zeros([3], DType::F64)?.requires_grad_(true)?;
    let mut sgd = SGD::new(vec![p.clone()], SgdOptions { lr: 0.5, momentum: 0.3, ..Default::default() })?;
    assert_eq!(
        err(sgd.add_param_group(vec![q.clone(), p.clone()], &[])),
        "some parameters appear in more than one parameter group"
    );
    assert_eq!(err(sgd.add_param_group(vec![p.mul(2.0)?], &[])), "can't optimize a non-leaf Tensor");
    assert!(err(sgd.add_param_group(vec![q.clone()], &[("momentun", 0.1)]))
        .starts_with("add_param_group: unknown optimization parameter 'momentun'"));
    assert_eq!(sgd.num_groups(), 1, "a refused group is not added");
    // the defaults are `new`'s options
    sgd.add_param_group(vec![q.clone()], &[("weight_decay", 0.25)])?;
    assert_eq!((sgd.lr(1), sgd.momentum(1), sgd.num_groups()), (0.5, Some(0.3), 2));
    assert!(sgd.hyper_params(1).contains(&("weight_decay".to_string(), 0.25)));
    // `with_groups` takes the type's defaults (torch called without keyword arguments)
    let mut grouped = SGD::with_groups(vec![ParamGroup {
        params: vec![p.clone()],
        options: SgdOptions { lr: 0.5, ..Default::default() },
    }])?;
    grouped.add_param_group(vec![q], &[])?;
    assert_eq!(grouped.lr(1), SgdOptions::default().lr);
    Ok(())
}

// --- AveragedModel -------------------------------------------------------------------------------

/// `Sequential(Linear(3, 2), BatchNorm1d(2))` in float64.
fn avg_net() -> Result<Sequential> {
    let mut net = Sequential::new().add(Linear::new(3, 2, true)?).add(BatchNorm::new_1d(2)?);
    net.double()?;
    Ok(net)
}

fn state_dict(entries: &[(&str, T)]) -> StateDict {
    let mut sd = StateDict::new();
    for (k, v) in entries {
        sd.insert(k, float64(v));
    }
    sd
}

fn averaging(name: &str) -> Result<(Averaging, bool)> {
    Ok(match name {
        "swa" => (Averaging::Swa, false),
        "swa_use_buffers" => (get_swa_avg_fn(), true),
        "swa_multi" => (get_swa_multi_avg_fn(), false),
        "ema_multi_use_buffers" => (get_ema_multi_avg_fn(0.9)?, true),
        "ema_multi_low_decay" => (get_ema_multi_avg_fn(0.3)?, false),
        "ema_avg_fn" => (get_ema_avg_fn(0.7)?, false),
        other => panic!("no averaging for case {other}"),
    })
}

#[test]
fn averaged_models_match_pytorch() -> Result<()> {
    assert_eq!(AVG_GOLDEN.len(), 6, "the golden file's averaging case count changed");
    for g in AVG_GOLDEN {
        let (avg_fn, use_buffers) = averaging(g.name)?;
        let mut model = avg_net()?;
        model.load_state_dict(&state_dict(g.models[0]), true)?;
        let mut averaged = AveragedModel::new(&model, avg_net()?, avg_fn, use_buffers)?;
        assert_eq!(averaged.n_averaged()?, 0);
        for (k, (state, want)) in g.models.iter().zip(g.averaged).enumerate() {
            model.load_state_dict(&state_dict(state), true)?;
            averaged.update_parameters(&model)?;
            let got = averaged.state_dict();
            let keys: Vec<&str> = got.keys().collect();
            let want_keys: Vec<&str> = want.iter().map(|(k, _)| *k).collect();
            assert_eq!(keys, want_keys, "{}: keys", g.name);
            for (key, v) in want.iter() {
                assert_close_as_f64(&format!("{} update {k} {key}", g.name), got.get(key).unwrap(), v, 1e-12);
            }
        }
        assert_eq!(averaged.n_averaged()?, 4);
    }
    Ok(())
}

#[test]
fn averaged_model_tree_forward_and_errors() -> Result<()> {
    let model = avg_net()?;
    let averaged = AveragedModel::new(&model, avg_net()?, Averaging::Swa, false)?;
    let sd = averaged.state_dict();
    let keys: Vec<&str> = sd.keys().collect();
    assert_eq!(keys, AVG_KEYS);
    assert_eq!(averaged.type_name(), "AveragedModel");
    assert_eq!(averaged.state_dict().get("n_averaged").unwrap().dtype(), DType::I64);
    // the copy starts as the model (torch's deepcopy), and forwards as it
    let x = Tensor::randn([4, 3], DType::F64)?;
    assert_eq!(averaged.forward(&x)?.to_f64_vec()?, model.forward(&x)?.to_f64_vec()?);
    assert_eq!(averaged.parameters().len(), 4);
    for bad in [1.5, -0.1] {
        let want = format!("Invalid decay value {bad} provided. Please provide a value in [0,1] range.");
        assert_eq!(err(get_ema_multi_avg_fn(bad)), want);
        assert_eq!(err(get_ema_avg_fn(bad)), want);
    }
    assert_eq!(
        err(get_ema_multi_avg_fn(2.0)),
        "Invalid decay value 2.0 provided. Please provide a value in [0,1] range."
    );
    // a custom avg_fn: the running maximum
    let mut maxed = AveragedModel::new(
        &model,
        avg_net()?,
        Averaging::Custom(std::sync::Arc::new(|avg: &Tensor, cur: &Tensor, _n: i64| avg.maximum(cur))),
        false,
    )?;
    let mut other = avg_net()?;
    other.load_state_dict(&model.state_dict(), true)?;
    maxed.update_parameters(&model)?;
    fn weight0(m: &dyn Module) -> Vec<f64> {
        m.state_dict().get("0.weight").unwrap().to_f64_vec().unwrap()
    }
    oxtorch_autograd::no_grad(|| other.parameters()[0].add_(1.0).map(|_| ()))?;
    maxed.update_parameters(&other)?;
    assert_eq!(weight0(maxed.module()), weight0(&other));
    Ok(())
}

// --- SWALR ---------------------------------------------------------------------------------------

fn two_groups() -> Result<SGD> {
    let group = |lr: f64| -> Result<ParamGroup<SgdOptions>> {
        Ok(ParamGroup {
            params: vec![Tensor::zeros([2], DType::F64)?.requires_grad_(true)?],
            options: SgdOptions { lr, ..Default::default() },
        })
    };
    SGD::with_groups(vec![group(0.1)?, group(0.05)?])
}

#[test]
fn swalr_rates_match_pytorch() -> Result<()> {
    assert_eq!(SWALR_GOLDEN.len(), 5, "the golden file's SWALR case count changed");
    for (name, want) in SWALR_GOLDEN {
        let mut opt = two_groups()?;
        let lrs = |o: &SGD| [o.lr(0), o.lr(1)];
        let mut got = Vec::new();
        if *name == "after_cosine" {
            let mut cosine = CosineAnnealingLR::new(&mut opt, 10, 0.0);
            got.push(lrs(&opt));
            for _ in 0..3 {
                cosine.step(&mut opt)?;
                got.push(lrs(&opt));
            }
        }
        let mut s = match *name {
            "cos" => SWALR::new(&mut opt, 0.01, 3, "cos")?,
            "linear_per_group" => SWALR::with_group_lrs(&mut opt, &[0.02, 0.005], 4, "linear")?,
            "zero_epochs" => SWALR::new(&mut opt, 0.01, 0, "cos")?,
            "default_epochs" => SWALR::new(&mut opt, 0.002, 10, "cos")?,
            "after_cosine" => SWALR::new(&mut opt, 0.03, 2, "cos")?,
            other => panic!("no SWALR case {other}"),
        };
        got.push(lrs(&opt));
        assert_eq!(s.get_last_lr(), &lrs(&opt)[..], "{name}");
        while got.len() < want.len() {
            s.step(&mut opt);
            got.push(lrs(&opt));
        }
        for (e, (g, w)) in got.iter().zip(want.iter()).enumerate() {
            for (k, (x, y)) in g.iter().zip(w).enumerate() {
                close(&format!("{name} epoch {e} group {k}"), *x, *y, 1e-12);
            }
        }
    }
    Ok(())
}

#[test]
fn swalr_state_and_errors() -> Result<()> {
    let mut opt = two_groups()?;
    assert_eq!(
        err(SWALR::new(&mut opt, 0.01, 3, "exp")),
        "anneal_strategy must be one of 'cos' or 'linear', instead got exp"
    );
    assert_eq!(
        err(SWALR::with_group_lrs(&mut opt, &[0.1], 3, "cos")),
        "swa_lr must have the same length as optimizer.param_groups. swa_lr has 1 values, param_groups has 2."
    );
    let mut a = SWALR::new(&mut opt, 0.01, 5, "linear")?;
    a.step(&mut opt);
    a.step(&mut opt);
    let saved = a.state_dict();
    let lrs = [opt.lr(0), opt.lr(1)];
    let mut opt2 = two_groups()?;
    let mut b = SWALR::new(&mut opt2, 0.5, 1, "linear")?;
    b.load_state_dict(&saved)?;
    opt2.set_lr(0, lrs[0]);
    opt2.set_lr(1, lrs[1]);
    assert_eq!(b.last_epoch(), 2);
    for _ in 0..4 {
        a.step(&mut opt);
        b.step(&mut opt2);
        assert_eq!([opt.lr(0), opt.lr(1)], [opt2.lr(0), opt2.lr(1)]);
    }
    Ok(())
}

// --- parametrizations ----------------------------------------------------------------------------

/// Checks the keys, moves `m` to float64 (its evaluation mode if asked), loads torch's state dict
/// by key (the old weight-norm keys through `weight_norm_compat`), runs the passes and compares.
fn run_mod<M: Module + Forward>(g: &ModGolden, mut m: M, passes: usize, eval: bool) -> Result<()> {
    let legacy = g.name.contains("legacy");
    let own: Vec<String> = m.state_dict().keys().map(String::from).collect();
    let torch_keys: Vec<&str> = g.state.iter().map(|(k, _)| *k).collect();
    if !legacy {
        assert_eq!(own, torch_keys, "{}: state-dict keys", g.name);
    }
    m.double()?;
    if eval {
        m.eval();
        assert!(!m.is_training());
    }
    let mut sd = state_dict(g.state);
    if legacy {
        sd = weight_norm_compat(&m, &sd);
        let keys: Vec<&str> = sd.keys().collect();
        assert_eq!(own, keys, "{}: converted keys", g.name);
    }
    m.load_state_dict(&sd, true)?;
    let x = leaf(&g.input, true);
    let outs = (0..passes).map(|_| m.forward(&x)).collect::<Result<Vec<Tensor>>>()?;
    assert_eq!(outs.len(), g.outs.len(), "{}: passes", g.name);
    let mut loss: Option<Tensor> = None;
    for (k, ((out, want), cot)) in outs.iter().zip(g.outs).zip(g.cots).enumerate() {
        assert_close_as_f64(&format!("{}.out{k}", g.name), out, want, 1e-10);
        let term = out.mul(float64(cot))?.sum_all()?;
        loss = Some(match loss {
            Some(l) => l.add(&term)?,
            None => term,
        });
    }
    loss.unwrap().backward()?;
    assert_close_as_f64(&format!("{}.grad.input", g.name), &x.grad().unwrap(), &g.input_grad, 1e-10);
    let params = m.named_parameters();
    assert_eq!(params.len(), g.param_grads.len(), "{}: parameters", g.name);
    for (k, want) in g.param_grads {
        // The old API's parameters are the new parametrization's originals.
        let name = match (legacy, *k) {
            (true, "weight_g") => "parametrizations.weight.original0",
            (true, "weight_v") => "parametrizations.weight.original1",
            _ => k,
        };
        let p = params.iter().find(|(n, _)| n == name).map(|(_, p)| p);
        let p = p.unwrap_or_else(|| panic!("{}: no parameter {k}", g.name));
        let got = p.grad().unwrap_or_else(|| panic!("{}: no gradient for {k}", g.name));
        assert_close_as_f64(&format!("{}.param_grad.{k}", g.name), &got, want, 1e-10);
    }
    let buffers = m.named_buffers();
    assert_eq!(buffers.len(), g.buffers_after.len(), "{}: buffers", g.name);
    for ((name, b), (k, want)) in buffers.iter().zip(g.buffers_after) {
        assert_eq!(name, k, "{}: buffer names", g.name);
        assert_close_as_f64(&format!("{}.buffer.{k}", g.name), b, want, 1e-10);
    }
    Ok(())
}

fn linear() -> Result<Linear> {
    Linear::new(3, 4, true)
}

fn conv1d() -> Result<Conv1d> {
    Conv1d::new(2, 3, &[3], ConvOptions::default())
}

#[test]
fn parametrized_modules_match_pytorch() -> Result<()> {
    assert_eq!(MOD_GOLDEN.len(), 11, "the golden file's parametrization case count changed");
    for g in MOD_GOLDEN {
        let sn = |m, name| spectral_norm(m, name, 1, 1e-12, None);
        match g.name {
            "wn_linear_dim0" => run_mod(g, weight_norm(linear()?, "weight", Some(0))?, 1, false),
            "wn_linear_dim_none" => run_mod(g, weight_norm(linear()?, "weight", None)?, 1, false),
            "wn_linear_dim_minus1" => run_mod(g, weight_norm(linear()?, "weight", Some(-1))?, 1, false),
            "wn_conv1d_dim2" | "wn_legacy_conv1d_dim2" => {
                run_mod(g, weight_norm(conv1d()?, "weight", Some(2))?, 1, false)
            }
            "wn_conv1d_dim_minus2" => run_mod(g, weight_norm(conv1d()?, "weight", Some(-2))?, 1, false),
            "sn_linear_train_twice" => run_mod(g, sn(linear()?, "weight")?, 2, false),
            "sn_linear_eval" => run_mod(g, sn(linear()?, "weight")?, 1, true),
            "sn_conv2d_train_2_iterations" => {
                let conv = Conv2d::new(2, 3, &[2], ConvOptions::default())?;
                run_mod(g, spectral_norm(conv, "weight", 2, 1e-6, None)?, 1, false)
            }
            "sn_convtranspose1d_train" => {
                let conv = ConvTranspose1d::new(2, 3, &[2], ConvTransposeOptions::default())?;
                let m = spectral_norm(conv, "weight", 1, 1e-12, None)?;
                assert_eq!(m.parametrization().dim(), 1, "a transposed convolution's outputs are dim 1");
                run_mod(g, m, 1, false)
            }
            "sn_linear_bias" => run_mod(g, spectral_norm(linear()?, "bias", 1, 1e-12, None)?, 1, false),
            other => panic!("no module for case {other}"),
        }
        .unwrap_or_else(|e| panic!("{}: {e}", g.name));
    }
    Ok(())
}

#[test]
fn parametrized_module_tree_is_torch_s() -> Result<()> {
    let mut m = spectral_norm(linear()?, "weight", 1, 1e-12, None)?;
    assert_eq!(m.type_name(), SN_TYPE_NAME);
    let modules: Vec<String> = m.named_modules().into_iter().map(|(n, _)| n).collect();
    assert_eq!(modules, SN_MODULES);
    let buffers: Vec<String> = m.named_buffers().into_iter().map(|(n, _)| n).collect();
    assert_eq!(buffers, SN_BUFFERS);
    // torch's start: normalised vectors after power iterations
    let u = m.parametrization().u().unwrap().to_f64_vec()?;
    assert!((u.iter().map(|v| v * v).sum::<f64>() - 1.0).abs() < 1e-6);
    // evaluation mode: no power iteration, so `_u` stays
    let start = Tensor::from_vec(vec![1.0f32, 0.0, 0.0, 0.0], [4])?;
    oxtorch_autograd::no_grad(|| m.parametrization().u().unwrap().copy_(&start).map(|_| ()))?;
    m.eval();
    assert!(!m.is_training());
    m.forward(&Tensor::randn([2, 3], ())?)?;
    assert_eq!(m.parametrization().u().unwrap().to_f64_vec()?, [1.0, 0.0, 0.0, 0.0]);
    m.train(true);
    assert!(m.is_training());
    m.forward(&Tensor::randn([2, 3], ())?)?;
    assert_ne!(m.parametrization().u().unwrap().to_f64_vec()?, [1.0, 0.0, 0.0, 0.0]);
    // σ of a large weight, normalised, is about 1
    let big = Tensor::randn([4, 3], DType::F64)?.mul(10.0)?.requires_grad_(true)?;
    let sn = spectral_norm(Linear::from_weights(big, None), "weight", 1, 1e-12, None)?;
    let w = sn.weight()?;
    let gram = w.matmul(&w.t()?)?;
    let top = (0..200).try_fold(Tensor::ones([4], DType::F64)?, |v, _| {
        let next = gram.mv(&v)?;
        let norm = next.norm(2.0, Vec::<isize>::new(), false)?;
        next.div(&norm)
    })?;
    let sigma = gram.mv(&top)?.dot(&top)?.item::<f64>()?.sqrt();
    assert!((sigma - 1.0).abs() < 0.05, "sigma {sigma}");
    let wn = weight_norm(conv1d()?, "weight", Some(0))?;
    assert_eq!(wn.type_name(), "ParametrizedConv1d");
    let keys: Vec<String> = wn.named_parameters().into_iter().map(|(n, _)| n).collect();
    assert_eq!(keys, ["bias", "parametrizations.weight.original0", "parametrizations.weight.original1"]);
    assert_eq!(wn.parametrization().original0.dims(), &[3, 1, 1]);
    Ok(())
}

#[test]
fn parametrization_errors_are_torch_s() -> Result<()> {
    assert_eq!(
        err(weight_norm(linear()?, "weight", Some(2))),
        "Dimension out of range (expected to be in range of [-2, 1], but got 2)"
    );
    assert_eq!(
        err(weight_norm(linear()?, "weight", Some(-3))),
        "Dimension out of range (expected to be in range of [-2, 1], but got -3)"
    );
    assert_eq!(
        err(weight_norm(linear()?, "foo", Some(0))),
        "Module 'Linear' does not have a parameter, a buffer, or a parametrized element with name 'foo'"
    );
    assert_eq!(
        err(spectral_norm(linear()?, "foo", 1, 1e-12, None)),
        "Module 'Linear' has no parameter or buffer with name 'foo'"
    );
    assert_eq!(
        err(spectral_norm(linear()?, "weight", 0, 1e-12, None)),
        "Expected n_power_iterations to be positive, but got n_power_iterations=0"
    );
    assert_eq!(
        err(spectral_norm(linear()?, "weight", 1, 1e-12, Some(2))),
        "Dimension out of range (expected to be in range of [-2, 1] but got 2)"
    );
    Ok(())
}

#[test]
fn parametrizations_can_be_removed() -> Result<()> {
    // weight norm: the parametrized value stays, as a new parameter
    let wn = weight_norm(linear()?, "weight", Some(0))?;
    let value = wn.weight()?.to_f64_vec()?;
    let bias = wn.named_parameters()[0].1.clone();
    let lin = wn.remove_parametrizations(true)?;
    assert_eq!(lin.weight.to_f64_vec()?, value);
    assert!(lin.weight.requires_grad() && lin.weight.is_leaf());
    assert!(lin.bias.as_ref().unwrap().is_same(&bias), "the other members are the module's own");
    let keys: Vec<String> = lin.state_dict().keys().map(String::from).collect();
    assert_eq!(keys, ["weight", "bias"]);
    assert_eq!(
        err(weight_norm(linear()?, "weight", Some(0))?.remove_parametrizations(false)),
        "Cannot leave unparametrized (`leave_parametrized=False`) a tensor that is parametrized in terms of a sequence of tensors."
    );
    // spectral norm: the original parameter comes back (with the normalised value, or its own)
    let mut sn = spectral_norm(linear()?, "weight", 1, 1e-12, None)?;
    sn.eval();
    let original = sn.parametrization().original.clone();
    let raw = original.to_f64_vec()?;
    let value = sn.weight()?.to_f64_vec()?;
    let lin = sn.remove_parametrizations(true)?;
    assert!(lin.weight.is_same(&original));
    assert_eq!(lin.weight.to_f64_vec()?, value);
    assert_ne!(lin.weight.to_f64_vec()?, raw);
    let sn = spectral_norm(linear()?, "weight", 1, 1e-12, None)?;
    let original = sn.parametrization().original.clone();
    let raw = original.to_f64_vec()?;
    let lin = sn.remove_parametrizations(false)?;
    assert!(lin.weight.is_same(&original));
    assert_eq!(lin.weight.to_f64_vec()?, raw);
    Ok(())
}

/// The wrapper runs any method of the module with the weight in place, and a module moved after
/// wrapping computes with its moved members.
#[test]
fn parametrized_call_uses_the_current_members() -> Result<()> {
    let mut wn = weight_norm(linear()?, "weight", None)?;
    wn.double()?;
    let x = Tensor::randn([2, 3], DType::F64)?;
    let w = wn.weight()?;
    assert_eq!(w.dtype(), DType::F64);
    let direct = x.linear(&w, Some(&wn.named_parameters()[0].1))?;
    let via_call = wn.call(|lin: &Linear| {
        assert_eq!(lin.bias.as_ref().unwrap().dtype(), DType::F64);
        lin.forward(&x)
    })?;
    assert_eq!(direct.to_f64_vec()?, via_call.to_f64_vec()?);
    // the whole-tensor norm of the weight is g
    let g = wn.parametrization().original0.item::<f64>()?;
    let norm = w.norm(2.0, Vec::<isize>::new(), false)?.item::<f64>()?;
    assert!((norm - g).abs() < 1e-12 * g.abs().max(1.0));
    Ok(())
}

/// Review fixes: a group's own `initial_accumulator_value` is never read by torch's Adagrad (the
/// constructor's fills every sum: `Adagrad([{'params': [p], 'initial_accumulator_value': 0.5}],
/// lr=0.1)` steps p = 1 to 0.9 with grad 1); weight_norm of a frozen weight keeps g frozen.
#[test]
fn adagrad_group_accumulators_and_frozen_weight_norm() -> Result<()> {
    let p = Tensor::ones([1], DType::F64)?.requires_grad_(true)?;
    let group = oxtorch_nn::optim::ParamGroup {
        params: vec![p.clone()],
        options: oxtorch_nn::optim::AdagradOptions {
            lr: 0.1,
            initial_accumulator_value: 0.5,
            ..Default::default()
        },
    };
    let mut opt = oxtorch_nn::optim::Adagrad::with_groups(vec![group])?;
    p.sum_all()?.backward()?;
    opt.step()?;
    assert!((p.to_f64_vec()?[0] - 0.9).abs() < 1e-9, "{:?}", p.to_f64_vec()?);
    let frozen = Linear::new(3, 2, true)?;
    frozen.weight.requires_grad_(false)?;
    let wn = weight_norm(frozen, "weight", Some(0))?;
    let trainable: Vec<String> =
        wn.named_parameters().into_iter().filter(|(_, t)| t.requires_grad()).map(|(n, _)| n).collect();
    assert_eq!(trainable, vec!["bias".to_string()]);
    Ok(())
}
