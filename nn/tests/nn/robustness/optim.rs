//! The optimizers and LR schedulers sweep: bad hyper-parameters, parameters and gradients of odd
//! shapes and dtypes, corrupt optimizer and scheduler states.

use oxtorch_nn::optim::lr_scheduler::{
    ConstantLR, CosineAnnealingLR, CosineAnnealingWarmRestarts, CyclicLR, ExponentialLR, LinearLR,
    MultiStepLR, MultiplicativeLR, OneCycleLR, PolynomialLR, ReduceLROnPlateau, StepLR,
};
use oxtorch_nn::optim::{
    Adadelta, AdadeltaOptions, Adagrad, AdagradOptions, Adam, AdamOptions, AdamW, Adamax, AdamaxOptions,
    AsgdOptions, NAdam, NAdamOptions, Optimizer, OptimizerState, RAdam, RAdamOptions, RMSprop,
    RMSpropOptions, Rprop, RpropOptions, SgdOptions, ASGD, SGD,
};

use super::*;

// ---------------------------------------------------------------------------------------------
// Optimizers, schedulers, state dicts
// ---------------------------------------------------------------------------------------------

/// A parameter set, as values: `(shape, dtype, grad)` with a gradient of the parameter's shape
/// and dtype, of another, or none.
#[derive(Clone, Debug)]
struct ParamSpec {
    shape: Vec<usize>,
    dtype: DType,
    grad: Option<(Vec<usize>, DType)>,
}

fn param_specs(rng: &mut Rng) -> Vec<ParamSpec> {
    let count = rng.pick(&[0usize, 1, 2, 2]);
    (0..count)
        .map(|_| {
            let shape = rng.pick(&[vec![2, 3], vec![3], vec![], vec![0]]);
            let dtype = rng.pick(&[DType::F32, DType::F32, DType::F64, DType::F16, DType::BF16]);
            let grad = match rng.arg(&[2, 2, 0, 1], 3) {
                0 => None,
                1 => Some((perturb(rng, &shape), rng.pick(&DType::ALL))),
                _ => Some((shape.clone(), dtype)),
            };
            ParamSpec { shape, dtype, grad }
        })
        .collect()
}

/// The parameters of `specs` with their gradients (a gradient that cannot be set is left out).
fn params(specs: &[ParamSpec]) -> Result<Vec<Tensor>> {
    specs
        .iter()
        .map(|p| {
            let t = Tensor::ones(p.shape.clone(), p.dtype)?.mul(0.5)?.requires_grad_(true)?;
            if let Some((shape, dtype)) = &p.grad {
                let g = Tensor::ones(shape.clone(), *dtype)?;
                let _ = t.set_grad(Some(g));
            }
            Ok(t)
        })
        .collect()
}

/// Hyper-parameters for any optimizer: valid, zero, negative, out of range, NaN.
#[derive(Clone, Copy, Debug)]
struct Hyper {
    lr: f64,
    betas: (f64, f64),
    eps: f64,
    weight_decay: f64,
    momentum: f64,
    dampening: f64,
    nesterov: bool,
    other: f64,
    flag: bool,
}

fn hyper(rng: &mut Rng) -> Hyper {
    let odd = [f64::NAN, -1.0, 0.0, 1.0, 2.0, f64::INFINITY, -0.0];
    let mut pick = |normal: f64| if rng.odd(3) { rng.pick(&odd) } else { normal };
    let h = Hyper {
        lr: pick(1e-2),
        betas: (pick(0.9), pick(0.999)),
        eps: pick(1e-8),
        weight_decay: pick(0.0),
        momentum: pick(0.9),
        dampening: pick(0.0),
        nesterov: false,
        other: pick(0.5),
        flag: false,
    };
    Hyper { nesterov: rng.coin(), flag: rng.coin(), ..h }
}

/// The optimizer `kind` over `ps` with `h` (fields an optimizer lacks are ignored).
fn optimizer(kind: usize, ps: Vec<Tensor>, h: Hyper) -> Result<Box<dyn Optimizer>> {
    Ok(match kind {
        0 => Box::new(SGD::new(
            ps,
            SgdOptions {
                lr: h.lr,
                momentum: h.momentum,
                dampening: h.dampening,
                weight_decay: h.weight_decay,
                nesterov: h.nesterov,
                maximize: h.flag,
            },
        )?),
        1 => Box::new(Adam::new(
            ps,
            AdamOptions {
                lr: h.lr,
                betas: h.betas,
                eps: h.eps,
                weight_decay: h.weight_decay,
                amsgrad: h.flag,
                maximize: h.nesterov,
            },
        )?),
        2 => Box::new(AdamW::new(
            ps,
            AdamOptions {
                lr: h.lr,
                betas: h.betas,
                eps: h.eps,
                weight_decay: h.weight_decay,
                amsgrad: h.flag,
                maximize: false,
            },
        )?),
        3 => Box::new(RMSprop::new(
            ps,
            RMSpropOptions {
                lr: h.lr,
                alpha: h.other,
                eps: h.eps,
                weight_decay: h.weight_decay,
                momentum: h.momentum,
                centered: h.flag,
                maximize: h.nesterov,
            },
        )?),
        4 => Box::new(Adagrad::new(
            ps,
            AdagradOptions {
                lr: h.lr,
                lr_decay: h.other,
                weight_decay: h.weight_decay,
                initial_accumulator_value: h.dampening,
                eps: h.eps,
                maximize: h.flag,
            },
        )?),
        5 => Box::new(Adadelta::new(
            ps,
            AdadeltaOptions {
                lr: h.lr,
                rho: h.other,
                eps: h.eps,
                weight_decay: h.weight_decay,
                maximize: h.flag,
            },
        )?),
        6 => Box::new(NAdam::new(
            ps,
            NAdamOptions {
                lr: h.lr,
                betas: h.betas,
                eps: h.eps,
                weight_decay: h.weight_decay,
                momentum_decay: h.other,
                decoupled_weight_decay: h.flag,
                maximize: h.nesterov,
            },
        )?),
        7 => Box::new(RAdam::new(
            ps,
            RAdamOptions {
                lr: h.lr,
                betas: h.betas,
                eps: h.eps,
                weight_decay: h.weight_decay,
                decoupled_weight_decay: h.flag,
                maximize: h.nesterov,
            },
        )?),
        8 => Box::new(Adamax::new(
            ps,
            AdamaxOptions {
                lr: h.lr,
                betas: h.betas,
                eps: h.eps,
                weight_decay: h.weight_decay,
                maximize: h.flag,
            },
        )?),
        9 => Box::new(Rprop::new(
            ps,
            RpropOptions { lr: h.lr, etas: h.betas, step_sizes: (h.eps, h.other), maximize: h.flag },
        )?),
        _ => Box::new(ASGD::new(
            ps,
            AsgdOptions {
                lr: h.lr,
                lambd: h.eps,
                alpha: h.other,
                t0: h.momentum,
                weight_decay: h.weight_decay,
                maximize: h.flag,
            },
        )?),
    })
}

const OPTIMIZERS: [&str; 11] =
    ["SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Adadelta", "NAdam", "RAdam", "Adamax", "Rprop", "ASGD"];

/// The per-parameter state names the optimizers use.
const STATE_NAMES: [&str; 12] = [
    "momentum_buffer",
    "exp_avg",
    "exp_avg_sq",
    "max_exp_avg_sq",
    "step",
    "square_avg",
    "grad_avg",
    "sum",
    "acc_delta",
    "exp_inf",
    "prev",
    "mu_product",
];

/// A state dict that does not fit: wrong group counts and sizes, absurd hyper-parameters, state
/// tensors of another shape or dtype, a group index that overflows.
fn bad_state(rng: &mut Rng) -> (String, OptimizerState) {
    let mut st = OptimizerState::default();
    let mut desc = Vec::new();
    for _ in 0..rng.pick(&[0usize, 1, 2, 3]) {
        let (g, name, v) = (
            rng.pick(&[0usize, 0, 1, 7, usize::MAX]),
            rng.pick(&[
                "lr",
                "num_params",
                "momentum",
                "betas.0",
                "initial_lr",
                "weight_decay",
                "amsgrad",
                "bogus",
            ]),
            rng.pick(&[f64::NAN, -1.0, 1e300, 0.0, 2.0, 99.0, f64::INFINITY]),
        );
        st.set_hyper(g, name, v);
        desc.push(format!("param_groups.{g}.{name}={v}"));
    }
    for _ in 0..rng.pick(&[0usize, 1, 2, 3]) {
        let (i, name) = (rng.pick(&[0usize, 0, 1, 5, usize::MAX]), rng.pick(&STATE_NAMES));
        let shape = rng.pick(&[vec![2, 3], vec![3], vec![], vec![7], vec![0]]);
        let d = rng.pick(&DType::ALL);
        if let Ok(t) = Tensor::ones(shape.clone(), d) {
            let _ = st.set_tensor(i, name, &t);
            desc.push(format!("state.{i}.{name}={d:?}{shape:?}"));
        }
    }
    (desc.join(", "), st)
}

/// Optimizers: construction, steps with odd gradients, bad state dicts, added groups and
/// hyper-parameters set by name.
pub(super) fn optimizers(s: &mut Sweep, rng: &mut Rng) {
    rng.mood();
    let kind = rng.below(OPTIMIZERS.len());
    let name = OPTIMIZERS[kind];
    let h = hyper(rng);
    let specs = param_specs(rng);
    let args = || format!("{name}, {h:?}, params {specs:?}");
    s.call("optimizer::new", args, || optimizer(kind, params(&specs)?, h));
    s.call("optimizer::step", args, || {
        let mut o = optimizer(kind, params(&specs)?, h)?;
        o.step()?;
        o.step()?;
        o.zero_grad()
    });
    let (sdesc, st) = bad_state(rng);
    s.call(
        "optimizer::load_state_dict",
        || format!("{}, state {sdesc}", args()),
        || {
            let mut o = optimizer(kind, params(&specs)?, h)?;
            o.load_state_dict(&st)?;
            o.step()
        },
    );
    // A state saved by another optimizer, or by this one over other parameters.
    let (kind2, specs2) = (rng.below(OPTIMIZERS.len()), param_specs(rng));
    s.call(
        "optimizer::load_state_dict(foreign)",
        || format!("{}, from {} over {specs2:?}", args(), OPTIMIZERS[kind2]),
        || {
            let mut from = optimizer(kind2, params(&specs2)?, Hyper { lr: 0.1, ..h })?;
            from.step()?;
            let saved = from.state_dict()?;
            let mut o = optimizer(kind, params(&specs)?, h)?;
            o.load_state_dict(&saved)?;
            o.step()
        },
    );
    let group: Vec<(&str, f64)> = (0..rng.below(3))
        .map(|_| {
            (
                rng.pick(&["lr", "momentum", "betas.0", "betas.1", "eps", "weight_decay", "bogus", ""]),
                rng.pick(&[f64::NAN, -1.0, 0.5, 2.0, f64::INFINITY]),
            )
        })
        .collect();
    let gspecs = param_specs(rng);
    s.call(
        "optimizer::add_param_group",
        || format!("{}, group {gspecs:?} {group:?}", args()),
        || {
            let mut o = optimizer(kind, params(&specs)?, h)?;
            let extra = params(&gspecs)?;
            // (the same parameters again, as torch refuses)
            let again = params(&specs)?;
            o.add_param_group(extra, &group)?;
            o.add_param_group(again, &[])?;
            o.step()
        },
    );
    let gi = rng.pick(&[0usize, 1, usize::MAX]);
    let hname = rng.pick(&["lr", "momentum", "betas.0", "amsgrad", "centered", "initial_lr", "bogus", ""]);
    let hv = rng.pick(&[f64::NAN, -1.0, 1.0, 2.0, f64::INFINITY]);
    s.call(
        "optimizer::set_group_hyper",
        || format!("{}, group {gi}, {hname:?} = {hv}", args()),
        || {
            let mut o = optimizer(kind, params(&specs)?, h)?;
            o.step()?;
            o.set_group_hyper(gi, hname, hv)?;
            o.step()
        },
    );
}

/// One SGD (with momentum) over two small parameters with gradients: the optimizer a schedule
/// drives.
pub(super) fn sgd(lr: f64) -> Result<SGD> {
    let p = Tensor::ones([3], DType::F32)?.requires_grad_(true)?;
    p.set_grad(Some(Tensor::ones([3], DType::F32)?))?;
    SGD::new(vec![p], SgdOptions { lr, momentum: 0.9, ..Default::default() })
}

/// LR schedulers: bad constructor arguments, steps past the end, epochs non-finite or huge,
/// state dicts with absurd counters. On threads of their own (a schedule could loop over epochs).
pub(super) fn schedulers(s: &mut Sweep, rng: &mut Rng) {
    rng.mood();
    let lr = rng.arg(&[0.1, 0.0, -1.0, f64::NAN, f64::INFINITY], 2);
    let gamma = rng.arg(&[0.1, 0.5, 0.0, -1.0, f64::NAN, f64::INFINITY, 2.0], 2);
    let size = rng.arg(&[3usize, 1, 0, usize::MAX], 2);
    let epoch =
        rng.arg(&[1.0, 0.0, 1.5, 1e18, 1e300, f64::NAN, -1.0, f64::INFINITY, 9.223_372_036_854_776e18], 2);
    let steps = rng.pick(&[1usize, 3]);
    let which = rng.below(10);
    let args = format!(
        "lr {lr}, gamma {gamma}, size {size}, schedule {which}, then {steps} steps, step_epoch({epoch})"
    );
    s.timed("scheduler", args, move || {
        let mut o = sgd(lr)?;
        let mut sched = match which {
            0 => StepLR::new(&mut o, size, gamma),
            1 => MultiStepLR::new(&mut o, vec![i64::MIN, -1, 0, 2, i64::MAX], gamma),
            2 => ExponentialLR::new(&mut o, gamma),
            3 => CosineAnnealingLR::new(&mut o, size, gamma),
            4 => PolynomialLR::new(&mut o, size, gamma),
            5 => LinearLR::new(&mut o, gamma, 0.5, size)?,
            6 => ConstantLR::new(&mut o, gamma, size)?,
            7 => MultiplicativeLR::new(&mut o, move |_| gamma),
            8 => CosineAnnealingWarmRestarts::new(&mut o, size, size, gamma)?,
            _ => OneCycleLR::new(&mut o, lr, size, gamma, "cos", 25.0, 1e4, false)?,
        };
        for _ in 0..steps {
            o.step()?;
            sched.step(&mut o)?;
        }
        sched.step_epoch(&mut o, epoch)?;
        sched.step(&mut o)
    });

    let (up, down) = (
        rng.arg(&[2usize, 1, 0, usize::MAX], 2),
        rng.arg(&[None, Some(3usize), Some(0), Some(usize::MAX)], 2),
    );
    let mode = rng.arg(&["triangular", "triangular2", "exp_range", "bogus"], 3);
    let (base, max) = (rng.arg(&[0.01, 0.0, -1.0, f64::NAN], 2), rng.arg(&[0.1, 0.0, f64::INFINITY], 1));
    let args = format!("CyclicLR ({base}, {max}), up {up}, down {down:?}, {mode:?}, gamma {gamma}, 3 steps");
    s.timed("CyclicLR", args, move || {
        let mut o = sgd(0.1)?;
        let mut sched = CyclicLR::new(&mut o, (base, max), up, down, mode, gamma)?;
        for _ in 0..3 {
            sched.step(&mut o)?;
        }
        Ok(())
    });
    let (pct, anneal, div, fdiv, three) = (
        rng.arg(&[0.3, 0.5, 0.0, 1.0, -1.0, f64::NAN, 2.0], 2),
        rng.arg(&["cos", "linear", "bogus"], 2),
        rng.arg(&[25.0, 0.0, -1.0, f64::NAN], 1),
        rng.arg(&[1e4, 0.0, f64::INFINITY], 1),
        rng.coin(),
    );
    let args = format!(
        "OneCycleLR max_lr {lr}, total {size}, pct {pct}, {anneal:?}, div {div}, final {fdiv}, three {three}"
    );
    s.timed("OneCycleLR", args, move || {
        let mut o = sgd(0.1)?;
        let mut sched = OneCycleLR::new(&mut o, lr, size, pct, anneal, div, fdiv, three)?;
        for _ in 0..3 {
            sched.step(&mut o)?;
        }
        Ok(())
    });
    let pmode = rng.arg(&["min", "max", "bogus"], 2);
    let tmode = rng.arg(&["rel", "abs", "bogus"], 2);
    let (factor, patience, cooldown) = (
        rng.arg(&[0.1, 0.5, 1.0, 2.0, f64::NAN, -1.0, 0.0], 2),
        rng.arg(&[2usize, 0, usize::MAX], 2),
        rng.arg(&[0usize, 1, usize::MAX], 2),
    );
    let metric = rng.arg(&[1.0, -1e300, f64::NAN, f64::INFINITY], 2);
    let args = format!(
        "ReduceLROnPlateau {pmode:?}, factor {factor}, patience {patience}, threshold {gamma}, {tmode:?}, cooldown {cooldown}, min_lr {lr}, eps {epoch}, metric {metric} x3"
    );
    s.timed("ReduceLROnPlateau", args, move || {
        let mut o = sgd(0.1)?;
        let mut sched =
            ReduceLROnPlateau::new(&o, pmode, factor, patience, gamma, tmode, cooldown, lr, epoch)?;
        for _ in 0..3 {
            sched.try_step(&mut o, metric)?;
        }
        Ok(())
    });

    // State dicts with counters past i64/usize, non-finite rates, missing keys.
    let counter =
        rng.arg(&[3.0, 1e300, -1e300, f64::NAN, 9.223_372_036_854_776e18, -9.3e18, f64::INFINITY], 1);
    let rate = rng.arg(&[0.1, 0.0, f64::NAN, -1.0], 2);
    let period = rng.arg(&[5.0, 0.0, f64::NAN, -1.0, f64::INFINITY], 1);
    let missing = rng.odd(5);
    let which = rng.below(4);
    let args = format!(
        "schedule {which}: load_state_dict(last_epoch {counter}, base_lrs.0 {rate}, _last_lr.0 {rate}, T_cur {period}, T_i {period}, missing keys {missing}) then 2 steps"
    );
    s.timed("Scheduler::load_state_dict", args, move || {
        let mut o = sgd(0.1)?;
        let mut sched = match which {
            0 => StepLR::new(&mut o, 2, 0.5),
            1 => MultiplicativeLR::new(&mut o, |_| 0.9),
            2 => CosineAnnealingWarmRestarts::new(&mut o, 2, 2, 0.0)?,
            _ => OneCycleLR::new(&mut o, 0.1, 10, 0.3, "cos", 25.0, 1e4, false)?,
        };
        let mut state = vec![
            ("last_epoch".to_string(), counter),
            ("T_cur".to_string(), period),
            ("T_i".to_string(), period),
        ];
        if !missing {
            state.push(("base_lrs.0".to_string(), rate));
            state.push(("_last_lr.0".to_string(), rate));
        }
        sched.load_state_dict(&state)?;
        sched.step(&mut o)?;
        sched.step(&mut o)
    });
    let args = format!("ReduceLROnPlateau load_state_dict(num_bad_epochs {counter}, cooldown_counter {counter}, last_epoch {counter}, best {rate}) then try_step(1.0) x2");
    s.timed("ReduceLROnPlateau::load_state_dict", args, move || {
        let mut o = sgd(0.1)?;
        let mut sched = ReduceLROnPlateau::new(&o, "min", 0.5, 1, 1e-4, "rel", 0, 0.0, 1e-8)?;
        let state: [(String, f64); 4] = [
            ("best".into(), rate),
            ("num_bad_epochs".into(), counter),
            ("cooldown_counter".into(), counter),
            ("last_epoch".into(), counter),
        ];
        sched.load_state_dict(&state)?;
        sched.try_step(&mut o, 1.0)?;
        sched.try_step(&mut o, 1.0)
    });
}
