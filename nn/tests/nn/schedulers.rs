//! Schedulers where torch's recursive forms matter (composed past a cosine period, a rate
//! changed before a scheduler is made), the cyclic and restarting ones, and torch's refusals;
//! values from `tests/golden/make_golden_schedulers.py`.

use oxtorch_nn::optim::lr_scheduler::{
    ChainedScheduler, ConstantLR, CosineAnnealingLR, CosineAnnealingWarmRestarts, CycleMomentum, CyclicLR,
    ExponentialLR, LambdaLR, LinearLR, MultiplicativeLR, OneCycleLR, PolynomialLR, Scheduler, StepLR,
};
use oxtorch_nn::optim::{Adagrad, AdagradOptions, Optimizer, SgdOptions, SGD};
use oxtorch_nn::StateDict;
use oxtorch_tensor::{Result, Tensor};

fn golden(key: &str) -> Vec<f64> {
    let g = StateDict::load(concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/golden/schedulers.safetensors"))
        .unwrap();
    g.get(key).unwrap_or_else(|| panic!("golden {key}")).to_vec::<f64>().unwrap()
}

/// An SGD with one parameter, lr 1 and `momentum`.
fn sgd(momentum: f64) -> SGD {
    let p = Tensor::zeros([1], ()).unwrap().requires_grad_(true).unwrap();
    SGD::new(vec![p], SgdOptions { lr: 1.0, momentum, ..Default::default() }).unwrap()
}

/// Something stepped once per epoch.
type Stepper = Box<dyn FnMut(&mut SGD) -> Result<()>>;

/// Makes the schedulers of a case on the optimizer.
type Make = Box<dyn FnOnce(&mut SGD) -> Vec<Stepper>>;

/// Each scheduler stepped in turn, 12 times: the rates (and momenta) after construction and
/// after every epoch.
fn run(momentum: f64, make: impl FnOnce(&mut SGD) -> Vec<Stepper>) -> (Vec<f64>, Vec<f64>) {
    let mut opt = sgd(momentum);
    let mut steps = make(&mut opt);
    let (mut lrs, mut moms) = (vec![opt.lr(0)], vec![opt.momentum(0).unwrap()]);
    for _ in 0..12 {
        for s in &mut steps {
            s(&mut opt).unwrap();
        }
        lrs.push(opt.lr(0));
        moms.push(opt.momentum(0).unwrap());
    }
    (lrs, moms)
}

fn each(s: Scheduler) -> Stepper {
    let mut s = s;
    Box::new(move |o| s.step(o))
}

fn assert_close(what: &str, got: &[f64], want: &[f64]) {
    assert_eq!(got.len(), want.len(), "{what}");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert!((g - w).abs() <= 1e-12 * w.abs().max(1.0), "{what}[{i}]: {g} vs torch {w}\n{got:?}");
    }
}

#[test]
fn composed_and_late_schedulers_follow_torch() {
    let cases: Vec<(&str, Make)> = vec![
        (
            "linear_cosine",
            Box::new(|o| {
                vec![each(LinearLR::new(o, 0.5, 1.0, 2).unwrap()), each(CosineAnnealingLR::new(o, 2, 0.0))]
            }),
        ),
        (
            "exponential_cosine_floor",
            Box::new(|o| vec![each(ExponentialLR::new(o, 0.5)), each(CosineAnnealingLR::new(o, 2, 0.1))]),
        ),
        (
            "late_lambda",
            Box::new(|o| {
                let mut step = StepLR::new(o, 1, 0.5);
                step.step(o).unwrap();
                vec![each(LambdaLR::new(o, |e| 0.9f64.powi(e as i32)))]
            }),
        ),
        ("linear_zero_iters", Box::new(|o| vec![each(LinearLR::new(o, 0.5, 1.0, 0).unwrap())])),
        ("constant", Box::new(|o| vec![each(ConstantLR::new(o, 0.5, 3).unwrap())])),
        ("polynomial", Box::new(|o| vec![each(PolynomialLR::new(o, 4, 2.0))])),
        (
            "multiplicative",
            Box::new(|o| vec![each(MultiplicativeLR::new(o, |e| if e % 2 == 1 { 0.9 } else { 0.5 }))]),
        ),
        ("warm_restarts", Box::new(|o| vec![each(CosineAnnealingWarmRestarts::new(o, 3, 2, 0.1).unwrap())])),
        (
            "warm_restarts_fixed",
            Box::new(|o| vec![each(CosineAnnealingWarmRestarts::new(o, 4, 1, 0.0).unwrap())]),
        ),
        (
            "chained",
            Box::new(|o| {
                let parts = vec![ConstantLR::new(o, 0.5, 4).unwrap(), ExponentialLR::new(o, 0.9)];
                let mut chained = ChainedScheduler::new(parts).unwrap();
                vec![Box::new(move |o: &mut SGD| chained.step(o)) as Stepper]
            }),
        ),
    ];
    for (name, make) in cases {
        assert_close(name, &run(0.0, make).0, &golden(&format!("lr.{name}")));
    }
}

/// CyclicLR's waves of learning rate and (inverse) momentum.
#[test]
fn cyclic_rates_and_momenta_follow_torch() {
    let triangular2 =
        |o: &mut SGD| vec![each(CyclicLR::new(o, (0.1, 1.0), 2, None, "triangular2", 1.0).unwrap())];
    let exp_range =
        |o: &mut SGD| vec![each(CyclicLR::new(o, (0.1, 1.0), 2, Some(3), "exp_range", 0.9).unwrap())];
    for (name, (lrs, moms)) in
        [("cyclic_triangular2", run(0.9, triangular2)), ("cyclic_exp_range", run(0.9, exp_range))]
    {
        assert_close(name, &lrs, &golden(&format!("lr.{name}")));
        assert_close(name, &moms, &golden(&format!("momentum.{name}")));
    }
}

/// torch's refusals: factors out of range, stepping OneCycleLR past its total, cycling the
/// momentum of an optimizer without one, a bad cycle mode.
#[test]
fn bad_schedules_are_torch_errors() -> Result<()> {
    let err = |r: Result<Scheduler>| r.err().expect("an error").to_string();
    let mut opt = sgd(0.9);
    assert!(err(LinearLR::new(&mut opt, 0.0, 1.0, 5)).contains("Starting multiplicative factor expected"));
    assert!(err(LinearLR::new(&mut opt, 0.5, 1.5, 5)).contains("Ending multiplicative factor expected"));
    assert!(err(ConstantLR::new(&mut opt, 1.5, 5)).contains("Constant multiplicative factor expected"));
    assert!(err(CosineAnnealingWarmRestarts::new(&mut opt, 0, 1, 0.0)).contains("positive integer T_0"));
    assert!(err(CyclicLR::new(&mut opt, (0.1, 1.0), 2, None, "sine", 1.0)).contains("mode is invalid"));
    let mut one = OneCycleLR::new(&mut opt, 1.0, 10, 0.3, "cos", 25.0, 1e4, false)?;
    for _ in 0..10 {
        one.step(&mut opt)?;
    }
    let e = one.step(&mut opt).unwrap_err().to_string();
    assert!(e.contains("Tried to step 11 times. The specified number of total steps is 10"), "{e}");
    let p = Tensor::zeros([1], ())?.requires_grad_(true)?;
    let mut adagrad = Adagrad::new(vec![p], AdagradOptions::default())?;
    let e = err(CyclicLR::with_momentum(
        &mut adagrad,
        (0.1, 1.0),
        (2, None),
        ("triangular", 1.0),
        CycleMomentum::default(),
    ));
    assert!(e.contains("optimizer must support momentum or beta1"), "{e}");
    Ok(())
}

/// A group added after the scheduler (`add_param_group`, the fine-tuning pattern) is scheduled as
/// torch does: StepLR(1, 0.5) over SGD(lr=1) plus a group at 0.8 gives [0.25, 0.2] after two
/// steps; ReduceLROnPlateau(patience=0) after three rising metrics gives [0.01, 0.008].
#[test]
fn schedulers_take_groups_added_later() -> Result<()> {
    let mut opt = sgd(0.0);
    let mut s = StepLR::new(&mut opt, 1, 0.5);
    opt.add_param_group(vec![Tensor::zeros([2], ())?.requires_grad_(true)?], &[("lr", 0.8)])?;
    for _ in 0..2 {
        s.step(&mut opt)?;
    }
    assert_close("StepLR", &[opt.lr(0), opt.lr(1)], &[0.25, 0.2]);
    let mut opt = sgd(0.0);
    let mut p = oxtorch_nn::optim::lr_scheduler::ReduceLROnPlateau::new(
        &opt, "min", 0.1, 0, 1e-4, "rel", 0, 0.0, 1e-8,
    )?;
    opt.add_param_group(vec![Tensor::zeros([2], ())?.requires_grad_(true)?], &[("lr", 0.8)])?;
    for m in [1.0, 2.0, 3.0] {
        p.step(&mut opt, m);
    }
    assert_close("ReduceLROnPlateau", &[opt.lr(0), opt.lr(1)], &[0.01, 0.008]);
    Ok(())
}
