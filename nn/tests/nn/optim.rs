//! Optimizers and schedulers against PyTorch (`tests/golden/make_golden_optim.py`), and exact
//! resumption from a saved optimizer state.

use oxtorch_nn::optim::lr_scheduler::{
    CosineAnnealingLR, CycleMomentum, ExponentialLR, LambdaLR, LinearLR, MultiStepLR, OneCycleLR,
    ReduceLROnPlateau, Scheduler, SequentialLR, StepLR,
};
use oxtorch_nn::optim::{
    clip_grad_norm_, clip_grad_value_, Adagrad, AdagradOptions, Adam, AdamOptions, AdamW, Optimizer,
    OptimizerState, ParamGroup, RMSprop, RMSpropOptions, SgdOptions, SGD,
};
use oxtorch_nn::StateDict;
use oxtorch_tensor::{DType, Result, Tensor};

fn golden() -> StateDict {
    StateDict::load(concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/golden/optim.safetensors")).unwrap()
}

/// `sum((p * x - y)^2) + sum(p^4)`, as in the script.
fn loss(p: &Tensor, g: &StateDict) -> Result<Tensor> {
    p.mul(g.get("x").unwrap())?.sub(g.get("y").unwrap())?.square()?.sum_all()?.add(p.pow(4.0)?.sum_all()?)
}

fn run(
    g: &StateDict,
    make: &dyn Fn(Vec<Tensor>) -> Result<Box<dyn Optimizer>>,
    steps: usize,
) -> Result<Tensor> {
    let p = g.get("p0").unwrap().copy()?.requires_grad_(true)?;
    let mut opt = make(vec![p.clone()])?;
    for _ in 0..steps {
        opt.zero_grad()?;
        loss(&p, g)?.backward()?;
        opt.step()?;
    }
    Ok(p)
}

fn assert_close(what: &str, got: &[f64], want: &[f64], tol: f64) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    for (i, (a, b)) in got.iter().zip(want).enumerate() {
        assert!((a - b).abs() <= tol * (1.0 + b.abs()), "{what}[{i}]: got {a}, PyTorch {b}");
    }
}

type Make = Box<dyn Fn(Vec<Tensor>) -> Result<Box<dyn Optimizer>>>;

fn configs() -> Vec<(&'static str, Make)> {
    fn b<O: Optimizer + 'static>(r: Result<O>) -> Result<Box<dyn Optimizer>> {
        r.map(|o| Box::new(o) as Box<dyn Optimizer>)
    }
    vec![
        ("sgd", Box::new(|p| b(SGD::new(p, SgdOptions { lr: 0.05, ..Default::default() })))),
        (
            "sgd_momentum",
            Box::new(|p| {
                b(SGD::new(
                    p,
                    SgdOptions {
                        lr: 0.05,
                        momentum: 0.9,
                        dampening: 0.1,
                        weight_decay: 0.01,
                        ..Default::default()
                    },
                ))
            }),
        ),
        (
            "sgd_nesterov",
            Box::new(|p| {
                b(SGD::new(p, SgdOptions { lr: 0.05, momentum: 0.9, nesterov: true, ..Default::default() }))
            }),
        ),
        (
            "sgd_maximize",
            Box::new(|p| {
                b(SGD::new(p, SgdOptions { lr: 0.01, momentum: 0.5, maximize: true, ..Default::default() }))
            }),
        ),
        ("adam", Box::new(|p| b(Adam::new(p, AdamOptions { lr: 0.01, ..Default::default() })))),
        (
            "adam_wd_amsgrad",
            Box::new(|p| {
                b(Adam::new(
                    p,
                    AdamOptions {
                        lr: 0.01,
                        betas: (0.8, 0.99),
                        weight_decay: 0.1,
                        amsgrad: true,
                        ..Default::default()
                    },
                ))
            }),
        ),
        ("adamw", Box::new(|p| b(AdamW::new(p, AdamOptions { lr: 0.01, ..AdamW::default_options() })))),
        (
            "adamw_amsgrad",
            Box::new(|p| {
                b(AdamW::new(
                    p,
                    AdamOptions { lr: 0.02, weight_decay: 0.05, amsgrad: true, ..Default::default() },
                ))
            }),
        ),
        ("rmsprop", Box::new(|p| b(RMSprop::new(p, RMSpropOptions { lr: 0.01, ..Default::default() })))),
        (
            "rmsprop_centered_momentum",
            Box::new(|p| {
                b(RMSprop::new(
                    p,
                    RMSpropOptions {
                        lr: 0.01,
                        centered: true,
                        momentum: 0.9,
                        weight_decay: 0.01,
                        ..Default::default()
                    },
                ))
            }),
        ),
        (
            "adagrad",
            Box::new(|p| {
                b(Adagrad::new(
                    p,
                    AdagradOptions {
                        lr: 0.1,
                        lr_decay: 0.01,
                        weight_decay: 0.01,
                        initial_accumulator_value: 0.1,
                        ..Default::default()
                    },
                ))
            }),
        ),
    ]
}

#[test]
fn five_steps_match_pytorch() -> Result<()> {
    let g = golden();
    let cases = configs();
    assert_eq!(cases.len(), 11);
    for (name, make) in &cases {
        let p = run(&g, make.as_ref(), 5)?;
        assert_close(name, &p.to_f64_vec()?, &g.get(&format!("{name}.p")).unwrap().to_f64_vec()?, 2e-5);
    }
    Ok(())
}

#[test]
fn resuming_from_a_saved_state_is_bit_exact() -> Result<()> {
    let g = golden();
    let dir = std::env::temp_dir().join(format!("oxtorch-optim-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for (name, make) in &configs() {
        let straight = run(&g, make.as_ref(), 6)?;
        // 3 steps, save, rebuild everything from the files, 3 more steps.
        let p = g.get("p0").unwrap().copy()?.requires_grad_(true)?;
        let mut opt = make(vec![p.clone()])?;
        for _ in 0..3 {
            opt.zero_grad()?;
            loss(&p, &g)?.backward()?;
            opt.step()?;
        }
        let path = dir.join(format!("{name}.safetensors"));
        opt.state_dict()?.save(&path)?;
        let p2 = p.detach().copy()?.requires_grad_(true)?;
        let mut opt2 = make(vec![p2.clone()])?;
        opt2.load_state_dict(&OptimizerState::load(&path)?)?;
        for _ in 0..3 {
            opt2.zero_grad()?;
            loss(&p2, &g)?.backward()?;
            opt2.step()?;
        }
        assert!(p2.equal(&straight)?, "{name}: resumed run differs from the straight run");
    }
    std::fs::remove_dir_all(&dir).unwrap();
    Ok(())
}

/// Loading a state saved for another layout is torch's error (before anything is changed); a
/// model checkpoint is not an optimizer state; moments follow their parameter's dtype.
#[test]
fn loading_checks_the_layout_and_casts_moments() -> Result<()> {
    let dir = std::env::temp_dir().join(format!("oxtorch-optim-layout-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let param = |n: usize| Tensor::ones([n], ()).and_then(|t| t.requires_grad_(true));
    let (a, b) = (param(2)?, param(3)?);
    let mut opt = Adam::new(vec![a.clone(), b.clone()], AdamOptions::default())?;
    for p in [&a, &b] {
        p.set_grad(Some(p.ones_like()?))?;
    }
    opt.step()?;
    let path = dir.join("adam.safetensors");
    opt.state_dict()?.save(&path)?;
    let state = OptimizerState::load(&path)?;
    let mut longer = Adam::new(vec![a.clone(), b.clone(), param(1)?], AdamOptions::default())?;
    let e = longer.load_state_dict(&state).unwrap_err().to_string();
    assert!(e.contains("doesn't match the size of optimizer's group"), "{e}");
    let group = |p: &Tensor| ParamGroup { params: vec![p.clone()], options: AdamOptions::default() };
    let mut two_groups = Adam::with_groups(vec![group(&a), group(&b)])?;
    let e = two_groups.load_state_dict(&state).unwrap_err().to_string();
    assert!(e.contains("loaded state dict has a different number of parameter groups"), "{e}");
    // A half-precision copy of the model resumes with half-precision moments, as torch casts them.
    let (ah, bh) =
        (a.to_dtype(DType::F16)?.requires_grad_(true)?, b.to_dtype(DType::F16)?.requires_grad_(true)?);
    let mut half = Adam::new(vec![ah.clone(), bh.clone()], AdamOptions::default())?;
    half.load_state_dict(&state)?;
    let st = half.state_dict()?;
    assert_eq!(st.tensor(0, "exp_avg").unwrap().dtype(), DType::F16);
    // A model checkpoint read as an optimizer state.
    let model = dir.join("model.safetensors");
    let mut sd = StateDict::new();
    sd.insert("w", Tensor::ones([2], ())?);
    sd.save(&model)?;
    let e = OptimizerState::load(&model).err().unwrap().to_string();
    assert!(e.contains("is not an optimizer state"), "{e}");
    std::fs::remove_dir_all(&dir).unwrap();
    Ok(())
}

fn lrs(make: impl FnOnce(&mut SGD) -> Box<dyn FnMut(&mut SGD)>) -> Result<Vec<f64>> {
    let p = Tensor::zeros([1], ())?.requires_grad_(true)?;
    let mut opt = SGD::new(vec![p], SgdOptions { lr: 0.1, ..Default::default() })?;
    let mut step = make(&mut opt);
    let mut seq = vec![opt.lr(0)];
    for _ in 0..30 {
        step(&mut opt);
        seq.push(opt.lr(0));
    }
    Ok(seq)
}

fn sched(s: Scheduler) -> Box<dyn FnMut(&mut SGD)> {
    let mut s = s;
    Box::new(move |o| s.step(o).unwrap())
}

#[test]
fn schedules_match_pytorch() -> Result<()> {
    let g = golden();
    let check = |name: &str, got: Vec<f64>| {
        assert_close(name, &got, &g.get(&format!("lr.{name}")).unwrap().to_f64_vec().unwrap(), 1e-12)
    };
    check("step", lrs(|o| sched(StepLR::new(o, 7, 0.5)))?);
    check("multistep", lrs(|o| sched(MultiStepLR::new(o, vec![3, 10, 20], 0.3)))?);
    check("exponential", lrs(|o| sched(ExponentialLR::new(o, 0.9)))?);
    check("cosine", lrs(|o| sched(CosineAnnealingLR::new(o, 30, 0.001)))?);
    check("lambda", lrs(|o| sched(LambdaLR::new(o, |e| 1.0 / (1.0 + e as f64))))?);
    check("linear", lrs(|o| sched(LinearLR::new(o, 0.2, 1.0, 10).unwrap()))?);
    check("onecycle", lrs(|o| sched(OneCycleLR::new(o, 1.0, 31, 0.3, "cos", 25.0, 1e4, false).unwrap()))?);
    // The golden was made with `cycle_momentum=False`: the same learning rates either way.
    let off = (0.3, "cos", 25.0, 1e4, false);
    check(
        "onecycle",
        lrs(|o| sched(OneCycleLR::with_momentum(o, 1.0, 31, off, CycleMomentum::off()).unwrap()))?,
    );
    check(
        "sequential",
        lrs(|o| {
            let a = LinearLR::new(o, 0.1, 1.0, 5).unwrap();
            let b = CosineAnnealingLR::new(o, 25, 0.0);
            let mut s = SequentialLR::new(o, vec![a, b], vec![5]).unwrap();
            Box::new(move |o| s.step(o).unwrap())
        })?,
    );
    Ok(())
}

#[test]
fn plateau_and_clipping() -> Result<()> {
    let p = Tensor::zeros([1], ())?.requires_grad_(true)?;
    let mut opt = SGD::new(vec![p.clone()], SgdOptions { lr: 1.0, ..Default::default() })?;
    let mut plateau = ReduceLROnPlateau::new(&opt, "min", 0.5, 2, 1e-4, "rel", 0, 0.0, 1e-8)?;
    for metric in [1.0, 0.9, 0.9, 0.9, 0.9] {
        plateau.step(&mut opt, metric);
    }
    assert_eq!(opt.lr(0), 0.5);
    let a = Tensor::from_slice(&[3.0f32, 4.0], [2])?.requires_grad_(true)?;
    a.mul(&a)?.sum_all()?.mul(0.5)?.backward()?; // grad = [3, 4], norm 5
    let total = clip_grad_norm_(std::slice::from_ref(&a), 1.0, 2.0, false)?;
    assert!((total.item::<f64>()? - 5.0).abs() < 1e-6);
    let g = a.grad().unwrap().to_f64_vec()?;
    assert!((g[0] - 0.6).abs() < 1e-5 && (g[1] - 0.8).abs() < 1e-5, "{g:?}");
    // In the gradients' dtype, as torch: f64 gradients give an f64 norm and an f64 factor.
    let d = Tensor::from_slice(&[3.0f64, 4.0], [2])?.requires_grad_(true)?;
    d.mul(&d)?.sum_all()?.mul(0.5)?.backward()?;
    let total = clip_grad_norm_(std::slice::from_ref(&d), 1.0, 2.0, false)?;
    assert_eq!(total.dtype(), DType::F64);
    assert_eq!(total.item::<f64>()?, 5.0);
    assert_eq!(d.grad().unwrap().to_f64_vec()?, vec![3.0 / (5.0 + 1e-6), 4.0 / (5.0 + 1e-6)]);
    clip_grad_value_(std::slice::from_ref(&a), 0.7)?;
    let g = a.grad().unwrap().to_f64_vec()?;
    assert!((g[0] - 0.6).abs() < 1e-5 && (g[1] - 0.7).abs() < 1e-6, "{g:?}");
    Ok(())
}

/// OneCycleLR cycles the momentum inversely to the learning rate by default, as torch does. The
/// values come from torch 2.15: `SGD([p], lr=0.1)`, `OneCycleLR(opt, 1.0, total_steps=11,
/// three_phase=...)`, `param_groups[0]["momentum"]` after construction and after each of 10 steps.
#[test]
fn one_cycle_cycles_momentum_as_torch() -> Result<()> {
    let two = [
        0.95,
        0.9101728006526316,
        0.8541394349247273,
        0.8520253513192751,
        0.8615524737330319,
        0.8773914046358657,
        0.8969419169589078,
        0.9169944650791307,
        0.9342570857483922,
        0.9458958292626879,
        0.95,
    ];
    let three = [
        0.95,
        0.9101728006526316,
        0.8541394349247273,
        0.8711659838942566,
        0.9341276571609327,
        0.95,
        0.95,
        0.95,
        0.95,
        0.95,
        0.95,
    ];
    for (three_phase, want) in [(false, two), (true, three)] {
        let p = Tensor::zeros([1], ())?.requires_grad_(true)?;
        let mut opt = SGD::new(vec![p], SgdOptions { lr: 0.1, ..Default::default() })?;
        let mut s = OneCycleLR::new(&mut opt, 1.0, 11, 0.3, "cos", 25.0, 1e4, three_phase)?;
        let mut got = vec![opt.momentum(0).unwrap()];
        for _ in 0..10 {
            s.step(&mut opt)?;
            got.push(opt.momentum(0).unwrap());
        }
        assert_close(&format!("momentum, three_phase {three_phase}"), &got, &want, 1e-12);
    }
    // `cycle_momentum=False` leaves the momentum alone.
    let p = Tensor::zeros([1], ())?.requires_grad_(true)?;
    let mut opt = SGD::new(vec![p], SgdOptions { lr: 0.1, momentum: 0.5, ..Default::default() })?;
    let off = (0.3, "cos", 25.0, 1e4, false);
    let mut s = OneCycleLR::with_momentum(&mut opt, 1.0, 11, off, CycleMomentum::off())?;
    s.step(&mut opt)?;
    assert_eq!(opt.momentum(0), Some(0.5));
    // Adam's beta1 is the momentum; Adagrad has none, which torch refuses.
    let p = Tensor::zeros([1], ())?.requires_grad_(true)?;
    let mut adam = Adam::new(vec![p.clone()], AdamOptions::default())?;
    let cycle = CycleMomentum { base: 0.8, max: 0.9, ..Default::default() };
    OneCycleLR::with_momentum(&mut adam, 1.0, 11, (0.3, "cos", 25.0, 1e4, false), cycle)?;
    assert_eq!(adam.momentum(0), Some(0.9));
    let mut adagrad = Adagrad::new(vec![p], AdagradOptions::default())?;
    let err = OneCycleLR::new(&mut adagrad, 1.0, 11, 0.3, "cos", 25.0, 1e4, false).err().unwrap().to_string();
    assert!(err.contains("must support momentum or beta1"), "{err}");
    Ok(())
}

/// Schedulers resume exactly: their state rides in the optimizer's file (`set_extra`), and a
/// plateau scheduler's counters come back, so the resumed run's learning rates and momenta equal
/// the uninterrupted run's.
#[test]
fn schedulers_resume_from_a_saved_state() -> Result<()> {
    let metrics = [1.0, 0.9, 0.95, 0.97, 0.99, 0.98, 1.0, 0.99, 1.1, 0.97];
    let fresh = || -> Result<SGD> {
        let p = Tensor::zeros([1], ())?.requires_grad_(true)?;
        SGD::new(vec![p], SgdOptions { lr: 0.1, momentum: 0.9, ..Default::default() })
    };
    let schedulers = |opt: &mut SGD| -> Result<(Scheduler, ReduceLROnPlateau)> {
        let cycle = OneCycleLR::new(opt, 1.0, 20, 0.3, "cos", 25.0, 1e4, false)?;
        Ok((cycle, ReduceLROnPlateau::new(opt, "min", 0.5, 1, 1e-4, "rel", 1, 0.0, 1e-8)?))
    };
    let run = |opt: &mut SGD, s: &mut (Scheduler, ReduceLROnPlateau), range: std::ops::Range<usize>| {
        let mut seen = Vec::new();
        for &m in &metrics[range] {
            s.0.step(opt).unwrap();
            s.1.step(opt, m);
            seen.push((opt.lr(0), opt.momentum(0).unwrap()));
        }
        seen
    };
    let mut opt = fresh()?;
    let mut s = schedulers(&mut opt)?;
    let whole = run(&mut opt, &mut s, 0..10);

    let mut opt = fresh()?;
    let mut s = schedulers(&mut opt)?;
    let mut resumed = run(&mut opt, &mut s, 0..5);
    let mut state = opt.state_dict()?;
    state.set_extra("scheduler", &s.0.state_dict());
    state.set_extra("plateau", &s.1.state_dict());
    let path = std::env::temp_dir().join(format!("oxtorch-sched-{}.safetensors", std::process::id()));
    state.save(&path)?;

    let mut opt = fresh()?;
    let mut s = schedulers(&mut opt)?;
    let state = OptimizerState::load(&path)?;
    std::fs::remove_file(&path).ok();
    opt.load_state_dict(&state)?;
    s.0.load_state_dict(&state.extra("scheduler"))?;
    s.1.load_state_dict(&state.extra("plateau"))?;
    assert_eq!(s.0.last_epoch(), 5);
    // The optimizer's own rate and cycled momentum come back with it, for the next `opt.step()`.
    assert_eq!((opt.lr(0), opt.momentum(0).unwrap()), *resumed.last().unwrap());
    resumed.extend(run(&mut opt, &mut s, 5..10));
    assert_eq!(resumed, whole);
    // The plateau scheduler did lower the rate in this run (the test covers its counters).
    assert!(whole.windows(2).any(|w| w[1].0 < 0.5 * w[0].0), "{whole:?}");
    let err = s.1.load_state_dict(&[]).unwrap_err().to_string();
    assert!(err.contains("missing key 'best'"), "{err}");
    Ok(())
}

/// Chainable schedulers stepped one after the other compose as torch's do (values from torch
/// 2.15: `SGD(lr=1)`, then `s1.step(); s2.step()` six times).
#[test]
fn chained_schedulers_compose_as_torch() -> Result<()> {
    let chain = |make: &dyn Fn(&mut SGD) -> (Scheduler, Scheduler)| -> Result<Vec<f64>> {
        let p = Tensor::zeros([1], ())?.requires_grad_(true)?;
        let mut opt = SGD::new(vec![p], SgdOptions { lr: 1.0, ..Default::default() })?;
        let (mut s1, mut s2) = make(&mut opt);
        let mut seen = vec![opt.lr(0)];
        for _ in 0..6 {
            s1.step(&mut opt)?;
            s2.step(&mut opt)?;
            seen.push(opt.lr(0));
        }
        Ok(seen)
    };
    let exp_multistep = chain(&|o| (ExponentialLR::new(o, 0.9), MultiStepLR::new(o, vec![2, 4], 0.1)))?;
    let want = [
        1.0,
        0.9,
        0.08100000000000002,
        0.07290000000000002,
        0.006561000000000002,
        0.005904900000000002,
        0.005314410000000002,
    ];
    assert_close("exponential then multistep", &exp_multistep, &want, 1e-12);
    let step_linear = chain(&|o| (StepLR::new(o, 2, 0.5), LinearLR::new(o, 0.25, 1.0, 4).unwrap()))?;
    assert_close(
        "step then linear",
        &step_linear,
        &[0.25, 0.4375, 0.3125, 0.40625, 0.25, 0.25, 0.125],
        1e-12,
    );
    Ok(())
}

/// A warm-up then cosine `SequentialLR` resumes exactly from its state.
#[test]
fn sequential_schedulers_resume() -> Result<()> {
    let fresh = || -> Result<(SGD, SequentialLR)> {
        let p = Tensor::zeros([1], ())?.requires_grad_(true)?;
        let mut opt = SGD::new(vec![p], SgdOptions { lr: 0.1, ..Default::default() })?;
        let warmup = LinearLR::new(&mut opt, 0.1, 1.0, 3)?;
        let cosine = CosineAnnealingLR::new(&mut opt, 10, 0.0);
        let s = SequentialLR::new(&mut opt, vec![warmup, cosine], vec![3])?;
        Ok((opt, s))
    };
    let (mut opt, mut s) = fresh()?;
    let whole: Vec<f64> = (0..10).map(|_| s.step(&mut opt).map(|_| opt.lr(0))).collect::<Result<_>>()?;
    let (mut opt, mut s) = fresh()?;
    let mut resumed: Vec<f64> = (0..5).map(|_| s.step(&mut opt).map(|_| opt.lr(0))).collect::<Result<_>>()?;
    let (saved_opt, saved) = (opt.state_dict()?, s.state_dict());
    let (mut opt, mut s) = fresh()?;
    opt.load_state_dict(&saved_opt)?;
    s.load_state_dict(&saved)?;
    resumed.extend((0..5).map(|_| s.step(&mut opt).map(|_| opt.lr(0))).collect::<Result<Vec<_>>>()?);
    assert_eq!(resumed, whole);
    Ok(())
}

/// A state dict keeps every hyper-parameter and loading it restores them (torch's
/// `param_groups`): an optimizer built with other options resumes as the saved one would.
#[test]
fn loading_a_state_restores_every_hyper_parameter() -> Result<()> {
    let grads = [[0.5, -1.0], [0.1, 0.3], [-0.2, 0.4], [0.3, -0.1]];
    let saved_options = AdamOptions {
        lr: 0.01,
        betas: (0.8, 0.95),
        eps: 1e-6,
        weight_decay: 0.1,
        amsgrad: true,
        maximize: true,
    };
    let run = |opt: &mut dyn Optimizer, p: &Tensor, from: usize, to: usize| -> Result<()> {
        for g in &grads[from..to] {
            p.set_grad(Some(Tensor::from_vec(g.to_vec(), [2])?))?;
            opt.step()?;
        }
        Ok(())
    };
    let param = || Tensor::from_vec(vec![1.0f64, -2.0], [2]).and_then(|t| t.requires_grad_(true));
    let whole = param()?;
    let mut opt = AdamW::new(vec![whole.clone()], saved_options)?;
    run(&mut opt, &whole, 0, 4)?;
    let first = param()?;
    let mut opt = AdamW::new(vec![first.clone()], saved_options)?;
    run(&mut opt, &first, 0, 2)?;
    let state = opt.state_dict()?;
    let resumed = Tensor::from_vec(first.to_vec::<f64>()?, [2])?.requires_grad_(true)?;
    let mut other = AdamW::new(vec![resumed.clone()], AdamOptions::default())?;
    other.load_state_dict(&state)?;
    let hyper = other.hyper_params(0);
    let get = |k: &str| hyper.iter().find(|(n, _)| n == k).map(|&(_, v)| v);
    assert_eq!(
        (get("betas.0"), get("eps"), get("amsgrad"), get("maximize")),
        (Some(0.8), Some(1e-6), Some(1.0), Some(1.0))
    );
    run(&mut other, &resumed, 2, 4)?;
    assert_eq!(resumed.to_vec::<f64>()?, whole.to_vec::<f64>()?);
    Ok(())
}
