//! Optimizer introspection (`param_groups`, `set_group_hyper`, `param_state`, `zero_grad_with`),
//! the `LRScheduler` trait, the per-group forms of LambdaLR, MultiplicativeLR, OneCycleLR,
//! CyclicLR and ReduceLROnPlateau, CosineAnnealingWarmRestarts stepped with fractional epochs, and
//! `swa_utils::update_bn`, against PyTorch: the values of `param_groups_and_schedulers_golden.rs` (written by
//! `nn/tests/make_param_groups_and_schedulers_golden.py`), replayed call for call, and torch's errors.

use oxtorch_nn::optim::lr_scheduler::{
    CosineAnnealingWarmRestarts, CycleMomentum, CyclicLR, LRScheduler, LambdaLR, LrLambda, MultiplicativeLR,
    OneCycleLR, OneCycleSteps, ReduceLROnPlateau, StepLR,
};
use oxtorch_nn::optim::swa_utils::update_bn;
use oxtorch_nn::optim::{Adam, AdamOptions, Optimizer, ParamGroup, SgdOptions, SGD};
use oxtorch_nn::{BatchNorm, Linear, ModuleExt, Sequential, StateDict};
use oxtorch_tensor::{Result, Tensor};

use super::golden_case::{assert_close_as_f64, float64, int64, T};

include!("param_groups_and_schedulers_golden.rs");

/// The error of a call that must fail.
fn err_text<R>(r: Result<R>) -> String {
    match r {
        Ok(_) => panic!("expected an error"),
        Err(e) => e.to_string(),
    }
}

/// SGD with two groups of one parameter each (learning rates `lrs`, both with `momentum`).
fn sgd2(lrs: (f64, f64), momentum: f64) -> SGD {
    let group = |n: usize, lr: f64| ParamGroup {
        params: vec![Tensor::zeros([n], ()).unwrap().requires_grad_(true).unwrap()],
        options: SgdOptions { lr, momentum, ..Default::default() },
    };
    SGD::with_groups(vec![group(2, lrs.0), group(3, lrs.1)]).unwrap()
}

fn lrs(opt: &dyn Optimizer) -> Vec<f64> {
    (0..opt.num_groups()).map(|g| opt.lr(g)).collect()
}

fn momenta(opt: &dyn Optimizer) -> Vec<f64> {
    (0..opt.num_groups()).map(|g| opt.momentum(g).unwrap()).collect()
}

/// Per-step rows of per-group values against torch's, within `1e-12` (relative).
fn check_rows(what: &str, got: &[Vec<f64>], want: &[&[f64]]) {
    assert_eq!(got.len(), want.len(), "{what}: steps");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert_eq!(g.len(), w.len(), "{what}[{i}]: groups");
        for (x, y) in g.iter().zip(w.iter()) {
            assert!((x - y).abs() <= 1e-12 * (1.0 + y.abs()), "{what}[{i}]: got {g:?}, PyTorch {w:?}");
        }
    }
}

#[test]
fn lambda_and_multiplicative_take_one_lambda_per_group() -> Result<()> {
    let mut opt = sgd2((0.1, 0.05), 0.0);
    let lambdas: Vec<LrLambda> =
        vec![Box::new(|e: i64| 0.95f64.powi(e as i32)), Box::new(|e: i64| 1.0 / (e + 1) as f64)];
    let mut s = LambdaLR::with_lambdas(&mut opt, lambdas)?;
    let mut got = vec![lrs(&opt)];
    for _ in 0..6 {
        s.step(&mut opt)?;
        got.push(lrs(&opt));
    }
    check_rows("LambdaLR", &got, LAMBDA_LRS);

    let mut opt = sgd2((0.1, 0.05), 0.0);
    let lambdas: Vec<LrLambda> =
        vec![Box::new(|_: i64| 0.9), Box::new(|e: i64| if e % 2 == 1 { 0.5 } else { 0.8 })];
    let mut s = MultiplicativeLR::with_lambdas(&mut opt, lambdas)?;
    let mut got = vec![lrs(&opt)];
    for _ in 0..6 {
        s.step(&mut opt)?;
        got.push(lrs(&opt));
    }
    check_rows("MultiplicativeLR", &got, MULTIPLICATIVE_LRS);

    let one: Vec<LrLambda> = vec![Box::new(|_: i64| 1.0)];
    assert_eq!(err_text(LambdaLR::with_lambdas(&mut opt, one)), "Expected 2 lr_lambdas, but got 1");
    let three: Vec<LrLambda> = (0..3).map(|_| Box::new(|_: i64| 1.0) as LrLambda).collect();
    assert_eq!(err_text(MultiplicativeLR::with_lambdas(&mut opt, three)), "Expected 2 lr_lambdas, but got 3");
    Ok(())
}

#[test]
fn one_cycle_takes_max_lr_per_group_and_epochs() -> Result<()> {
    let mut opt = sgd2((0.1, 0.05), 0.9);
    let args = (0.3, "cos", 25.0, 1e4, false);
    let steps = OneCycleSteps::Epochs { epochs: 3, steps_per_epoch: 4 };
    let mut s = OneCycleLR::with_group_max_lrs(&mut opt, &[0.5, 0.2], steps, args, CycleMomentum::default())?;
    let (mut got_lr, mut got_m) = (vec![lrs(&opt)], vec![momenta(&opt)]);
    for _ in 0..12 {
        s.step(&mut opt)?;
        got_lr.push(lrs(&opt));
        got_m.push(momenta(&opt));
    }
    check_rows("OneCycleLR lr", &got_lr, ONECYCLE_LRS);
    check_rows("OneCycleLR momentum", &got_m, ONECYCLE_MOMENTA);
    assert_eq!(err_text(s.step(&mut opt)), ONECYCLE_ERR);

    let mut opt = sgd2((0.1, 0.05), 0.9);
    let m = CycleMomentum::default();
    let e = err_text(OneCycleLR::with_group_max_lrs(&mut opt, &[0.5, 0.2, 0.1], steps, args, m));
    assert_eq!(
        e,
        "max_lr must have the same length as optimizer.param_groups. max_lr has 3 values, param_groups has 2."
    );
    let zero = OneCycleSteps::Epochs { epochs: 0, steps_per_epoch: 4 };
    let e = err_text(OneCycleLR::with_group_max_lrs(&mut opt, &[0.5, 0.2], zero, args, m));
    assert_eq!(e, "Expected positive integer epochs, but got 0");
    let zero = OneCycleSteps::Epochs { epochs: 2, steps_per_epoch: 0 };
    let e = err_text(OneCycleLR::with_group_max_lrs(&mut opt, &[0.5, 0.2], zero, args, m));
    assert_eq!(e, "Expected positive integer steps_per_epoch, but got 0");
    Ok(())
}

#[test]
fn warm_restarts_step_with_fractional_epochs() -> Result<()> {
    let mut opt = sgd2((0.1, 0.4), 0.0);
    let mut s = CosineAnnealingWarmRestarts::new(&mut opt, 3, 2, 0.01)?;
    let (mut got, mut last) = (Vec::new(), Vec::new());
    for &epoch in WR_EPOCHS {
        s.step_epoch(&mut opt, epoch)?;
        got.push(lrs(&opt));
        last.push(s.last_epoch() as f64);
    }
    // then plain steps (torch's interleaving: T_cur + 1)
    for _ in 0..2 {
        s.step(&mut opt)?;
        got.push(lrs(&opt));
        last.push(s.last_epoch() as f64);
    }
    check_rows("CosineAnnealingWarmRestarts", &got, WR_LRS);
    assert_eq!(last, WR_LAST_EPOCH);
    assert_eq!(s.get_last_lr(), &lrs(&opt)[..]);
    assert_eq!(err_text(s.step_epoch(&mut opt, -1.0)), "Expected non-negative epoch, but got -1");

    // a state dict keeps T_cur and T_i: a copy resumed from it steps the same
    let mut other_opt = sgd2((0.1, 0.4), 0.0);
    let mut other = CosineAnnealingWarmRestarts::new(&mut other_opt, 3, 2, 0.01)?;
    other.load_state_dict(&s.state_dict())?;
    s.step_epoch(&mut opt, 9.5)?;
    other.step_epoch(&mut other_opt, 9.5)?;
    s.step(&mut opt)?;
    other.step(&mut other_opt)?;
    assert_eq!(lrs(&opt), lrs(&other_opt));

    // other schedules take whole epochs only
    let mut opt = sgd2((0.1, 0.4), 0.0);
    let mut step = StepLR::new(&mut opt, 2, 0.5);
    step.step_epoch(&mut opt, 4.0)?;
    assert_eq!(lrs(&opt), [0.025, 0.1]);
    assert!(err_text(step.step_epoch(&mut opt, 4.5)).contains("fractional epoch"));
    Ok(())
}

#[test]
fn plateau_takes_min_lr_per_group() -> Result<()> {
    let mut opt = sgd2((0.1, 0.1), 0.0);
    let mut s = ReduceLROnPlateau::with_min_lrs(&opt, "min", 0.5, 0, 1e-4, "rel", 0, &[0.03, 0.001], 1e-8)?;
    assert_eq!(s.get_last_lr(), [0.1, 0.1]);
    let mut got = Vec::new();
    for &m in PLATEAU_METRICS {
        s.try_step(&mut opt, m)?;
        got.push(lrs(&opt));
        assert_eq!(s.get_last_lr(), &lrs(&opt)[..]);
    }
    check_rows("ReduceLROnPlateau", &got, PLATEAU_LRS);
    assert_eq!(s.last_epoch(), PLATEAU_METRICS.len() as i64);

    let three = [0.1, 0.2, 0.3];
    let e = err_text(ReduceLROnPlateau::with_min_lrs(&opt, "min", 0.5, 0, 1e-4, "rel", 0, &three, 1e-8));
    assert_eq!(e, PLATEAU_ERR);

    // per-group floors and a group added since: torch's error at the next reduction
    let mut opt = sgd2((0.1, 0.1), 0.0);
    let mut s = ReduceLROnPlateau::with_min_lrs(&opt, "min", 0.5, 0, 1e-4, "rel", 0, &[0.0, 0.0], 1e-8)?;
    s.try_step(&mut opt, 1.0)?;
    let q = Tensor::zeros([1], ())?.requires_grad_(true)?;
    opt.add_param_group(vec![q], &[])?;
    let e = err_text(s.try_step(&mut opt, 2.0));
    assert!(e.contains("The number of param groups in the `optimizer` (3) differs"), "{e}");
    Ok(())
}

#[test]
fn cyclic_takes_lrs_per_group() -> Result<()> {
    let mut opt = sgd2((0.1, 0.05), 0.9);
    let m = CycleMomentum { enabled: true, base: 0.8, max: 0.9 };
    let lists = (&[0.01, 0.02][..], &[0.1, 0.3][..]);
    let mut s = CyclicLR::with_group_lrs(&mut opt, lists, (2, Some(3)), ("triangular2", 1.0), m)?;
    let (mut got_lr, mut got_m) = (vec![lrs(&opt)], vec![momenta(&opt)]);
    for _ in 0..12 {
        s.step(&mut opt)?;
        got_lr.push(lrs(&opt));
        got_m.push(momenta(&opt));
    }
    check_rows("CyclicLR lr", &got_lr, CYCLIC_LRS);
    check_rows("CyclicLR momentum", &got_m, CYCLIC_MOMENTA);

    let mut opt = sgd2((0.1, 0.05), 0.9);
    let bad = (&[0.01][..], &[0.1, 0.1][..]);
    assert_eq!(
        err_text(CyclicLR::with_group_lrs(&mut opt, bad, (2, None), ("triangular", 1.0), m)),
        CYCLIC_ERR
    );
    let bad = (&[0.01, 0.01][..], &[0.1][..]);
    let e = err_text(CyclicLR::with_group_lrs(&mut opt, bad, (2, None), ("triangular", 1.0), m));
    assert!(e.starts_with("max_lr must have the same length as optimizer.param_groups"), "{e}");
    Ok(())
}

#[test]
fn schedulers_share_the_lr_scheduler_trait() -> Result<()> {
    let mut opt = sgd2((0.1, 0.05), 0.9);
    let step = StepLR::new(&mut opt, 1, 0.5);
    let plateau = ReduceLROnPlateau::new(&opt, "min", 0.5, 0, 1e-4, "rel", 0, 0.0, 1e-8)?;
    let mut scheds: Vec<Box<dyn LRScheduler>> = vec![Box::new(step), Box::new(plateau)];
    // StepLR halves; the plateau scheduler sees a worse metric and halves again
    for (i, metric) in [1.0, 2.0].into_iter().enumerate() {
        for s in scheds.iter_mut() {
            s.step_with_metric(&mut opt, metric)?;
        }
        let want = if i == 0 { [0.05, 0.025] } else { [0.0125, 0.00625] };
        assert_eq!(lrs(&opt), want);
        assert_eq!(scheds[1].get_last_lr(), want);
    }
    let e = err_text(scheds[1].step(&mut opt));
    assert_eq!(e, "ReduceLROnPlateau.step() missing 1 required positional argument: 'metrics'");
    let state = scheds[1].state_dict();
    assert!(state.iter().any(|(k, v)| k == "_last_lr.1" && *v == 0.00625));
    let state = scheds[0].state_dict();
    scheds[0].load_state_dict(&state)?;
    Ok(())
}

#[test]
fn update_bn_averages_the_batch_statistics() -> Result<()> {
    let mut net = Sequential::new()
        .add(Linear::new(3, 4, true)?)
        .add(BatchNorm::new_1d_with(4, 1e-5, Some(0.3), true, true)?)
        .add(Linear::new(4, 2, true)?)
        .add(BatchNorm::new_1d_with(2, 1e-5, None, true, true)?);
    net.double()?;
    let mut sd = StateDict::new();
    for (k, v) in BN_STATE {
        sd.insert(k, if k.ends_with("num_batches_tracked") { int64(v) } else { float64(v) });
    }
    net.load_state_dict(&sd, true)?;
    net.eval();
    let batches: Vec<Tensor> = BN_BATCHES.iter().map(float64).collect();
    update_bn(&batches, &mut net)?;
    assert!(!net.is_training(), "the evaluation mode is restored");
    let buffers = net.named_buffers();
    for (k, want) in BN_AFTER {
        let got = buffers.iter().find(|(n, _)| n == k).map(|(_, t)| t).unwrap_or_else(|| panic!("no {k}"));
        assert_close_as_f64(k, got, want, 1e-9);
    }
    // the parameters are untouched
    for (k, v) in net.named_parameters() {
        let (_, want) = BN_STATE.iter().find(|(n, _)| *n == k).unwrap();
        assert_close_as_f64(&k, &v, want, 0.0);
    }
    // a model without batch norms: nothing to do
    let mut lin = Linear::new(3, 2, true)?;
    lin.double()?;
    update_bn(&batches, &mut lin)?;
    Ok(())
}

#[test]
fn adam_state_is_readable_by_parameter() -> Result<()> {
    let p = float64(&ADAM_INIT).requires_grad_(true)?;
    let options = AdamOptions { lr: 0.01, betas: (0.9, 0.99), weight_decay: 0.1, ..Default::default() };
    let mut opt = Adam::new(vec![p.clone()], options)?;
    assert!(opt.param_state(&p)?.is_empty(), "no state before the first step");
    for g in ADAM_GRADS {
        p.set_grad(Some(float64(g)))?;
        opt.step()?;
    }
    let names: Vec<String> = opt.param_state(&p)?.into_iter().map(|(k, _)| k).collect();
    assert_eq!(names, ["exp_avg", "exp_avg_sq", "step"]);
    for (name, want) in ADAM_STATE {
        let t = opt.param_state_tensor(&p, name)?.unwrap_or_else(|| panic!("no {name}"));
        assert_close_as_f64(name, &t, want, 1e-12);
    }
    assert_close_as_f64("param", &p, &ADAM_PARAM, 1e-12);
    assert!(opt.param_state_tensor(&p, "max_exp_avg_sq")?.is_none());
    let stranger = Tensor::zeros([1], ())?;
    assert!(err_text(opt.param_state(&stranger)).contains("not a parameter of this optimizer"));

    // the groups as torch lists them, betas by index
    let groups = opt.param_groups();
    assert_eq!(groups.len(), 1);
    assert!(groups[0].params[0].is_same(&p));
    assert_eq!(groups[0].get("betas.1"), Some(0.99));
    assert_eq!(groups[0].get("weight_decay"), Some(0.1));
    assert_eq!(opt.group_hyper(0, "amsgrad"), Some(0.0));
    opt.set_group_hyper(0, "betas.1", 0.995)?;
    assert_eq!(opt.group_hyper(0, "betas.1"), Some(0.995));
    Ok(())
}

#[test]
fn param_group_hyper_parameters_can_change() -> Result<()> {
    let a = float64(&HYPER_INIT[0]).requires_grad_(true)?;
    let b = float64(&HYPER_INIT[1]).requires_grad_(true)?;
    let o = SgdOptions { lr: 0.1, momentum: 0.9, ..Default::default() };
    let mut opt = SGD::with_groups(vec![
        ParamGroup { params: vec![a.clone()], options: o },
        ParamGroup { params: vec![b.clone()], options: o },
    ])?;
    for (i, grads) in HYPER_GRADS.iter().enumerate() {
        a.set_grad(Some(float64(&grads[0])))?;
        b.set_grad(Some(float64(&grads[1])))?;
        opt.step()?;
        if i == 0 {
            opt.set_group_hyper(1, "weight_decay", 0.5)?;
            opt.set_group_hyper(1, "lr", 0.2)?;
        }
    }
    assert_close_as_f64("a", &a, &HYPER_AFTER[0], 1e-12);
    assert_close_as_f64("b", &b, &HYPER_AFTER[1], 1e-12);

    let groups = opt.param_groups();
    assert_eq!(groups.len(), 2);
    assert!(groups[1].params[0].is_same(&b));
    assert_eq!(groups[1].get("weight_decay"), Some(0.5));
    assert_eq!(groups[1].get("lr"), Some(0.2));
    assert_eq!(groups[0].get("lr"), Some(0.1));
    assert_eq!(groups[0].get("momentum"), Some(0.9));
    assert_eq!(opt.group_hyper(0, "nesterov"), Some(0.0));
    assert_eq!(opt.group_hyper(5, "lr"), None);
    assert_eq!(opt.params().len(), 2);
    let buf = opt.param_state_tensor(&b, "momentum_buffer")?.expect("a momentum buffer");
    assert_eq!(buf.dims(), [3]);

    let e = err_text(opt.set_group_hyper(0, "betas.0", 0.5));
    assert!(e.contains("param group 0 has no hyper-parameter 'betas.0'"), "{e}");
    assert!(err_text(opt.set_group_hyper(2, "lr", 0.1)).contains("out of range"));
    Ok(())
}

#[test]
fn zero_grad_without_set_to_none_zeroes_in_place() -> Result<()> {
    let p = Tensor::ones([3], ())?.requires_grad_(true)?;
    let q = Tensor::ones([2], ())?.requires_grad_(true)?;
    let mut opt = SGD::new(vec![p.clone(), q.clone()], SgdOptions::default())?;
    p.mul(2.0)?.sum_all()?.backward()?;
    let g = p.grad().expect("a gradient");
    opt.zero_grad_with(false)?;
    let kept = p.grad().expect("the gradient stays");
    assert!(kept.is_same(&g), "the same tensor, zeroed in place");
    assert_eq!(g.to_f64_vec()?, [0.0, 0.0, 0.0]);
    assert!(q.grad().is_none(), "a parameter without a gradient stays without");
    opt.zero_grad_with(true)?;
    assert!(p.grad().is_none());
    Ok(())
}
