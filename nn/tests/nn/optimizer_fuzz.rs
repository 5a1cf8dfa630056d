//! A randomized parity test of the optimizers and LR schedulers against PyTorch: the 150 cases of
//! `optimizer_fuzz_golden.rs` (written by `nn/tests/make_optimizer_fuzz_golden.py`, seed 33), each an
//! optimizer (SGD, Adam, AdamW, RMSprop, Adagrad, Adadelta, Adamax, NAdam, RAdam, Rprop, ASGD, LBFGS,
//! Muon) with random options over 1-2 param groups of float32/float64 parameters, optionally an LR
//! scheduler or a SequentialLR/ChainedScheduler composition, run for 6 steps of
//! `step_with_closure` then a scheduler step, replayed here and compared at every step: the
//! parameters (within `1e-6` relative for float32, `1e-12` for float64, Muon's bfloat16
//! Newton–Schulz included), the learning rates of the groups (`1e-12`) and the loss. A second run
//! saves the optimizer's state dict after 3 steps, builds a fresh optimizer, loads it and
//! continues: its parameters must match the uninterrupted run (or torch's own resumed run, where
//! torch's loading casts float state to the parameter's dtype), and bit for bit oxtorch's own
//! uninterrupted run where torch's resume is bit-exact.
//!
//! Every mismatch of every case is collected, and the test fails once at the end listing them.

use std::panic::{catch_unwind, AssertUnwindSafe};

use oxtorch_nn::optim::lr_scheduler::{
    ChainedScheduler, ConstantLR, CosineAnnealingLR, CosineAnnealingWarmRestarts, CycleMomentum, CyclicLR,
    ExponentialLR, LambdaLR, LinearLR, LrLambda, MultiStepLR, MultiplicativeLR, OneCycleLR, OneCycleSteps,
    PolynomialLR, ReduceLROnPlateau, Scheduler, SequentialLR, StepLR,
};
use oxtorch_nn::optim::{
    Adadelta, AdadeltaOptions, Adagrad, AdagradOptions, Adam, AdamOptions, AdamW, Adamax, AdamaxOptions,
    AsgdOptions, HyperParams, LbfgsOptions, Muon, MuonOptions, NAdam, NAdamOptions, Optimizer, ParamGroup,
    RAdam, RAdamOptions, RMSprop, RMSpropOptions, Rprop, RpropOptions, SgdOptions, ASGD, LBFGS, SGD,
};
use oxtorch_tensor::{DType, Error, Result, Tensor};

use super::golden_case::T;

/// The step after which the round-trip run swaps in a fresh optimizer loaded from the state dict.
const SAVE_AT: usize = 3;

/// One parameter: its dtype, initial values, and the target and weights of its loss term; `skip`
/// lists the steps at which it stays out of the loss (its grad is None then).
pub struct P {
    pub f64: bool,
    pub init: T,
    pub target: T,
    pub weight: T,
    pub skip: &'static [usize],
}

/// One param group: the hyper-parameters torch's group holds (oxtorch's names) and its parameters.
pub struct G {
    pub hyper: &'static [(&'static str, f64)],
    pub params: &'static [P],
}

/// A scheduler: its kind, numeric arguments and string arguments (see the generator).
pub struct SchedSpec {
    pub kind: &'static str,
    pub args: &'static [f64],
    pub strs: &'static [&'static str],
}

/// torch's values after one step: every parameter (group after group), the groups' learning rates
/// and the closure's loss.
pub struct Row {
    pub params: &'static [T],
    pub lrs: &'static [f64],
    pub loss: f64,
}

/// One case.
pub struct OptCase {
    pub id: usize,
    pub opt: &'static str,
    /// torch's constructor arguments per group, for the report
    pub desc: &'static str,
    /// LBFGS's `line_search_fn` (`""` for None)
    pub line_search: &'static str,
    pub groups: &'static [G],
    /// `""` (no scheduler), `"single"`, `"sequential"` or `"chained"`
    pub compose: &'static str,
    pub sched: &'static [SchedSpec],
    pub milestones: &'static [i64],
    /// the groups' learning rates after the scheduler's construction
    pub lrs0: &'static [f64],
    pub rows: &'static [Row],
    /// torch's parameters per step of the resumed run, where they differ from `rows` (else empty)
    pub rows_rt: &'static [&'static [T]],
}

include!("optimizer_fuzz_golden.rs");

/// A parameter tensor of a golden tensor's values, in the case's dtype, requiring grad.
fn tensor(v: &T, double: bool) -> Result<Tensor> {
    let t = if double {
        Tensor::from_vec(v.data.to_vec(), v.dims)?
    } else {
        Tensor::from_vec(v.data.iter().map(|&x| x as f32).collect::<Vec<f32>>(), v.dims)?
    };
    Ok(t)
}

/// The loss term of a parameter: `(w * (p - t)^2).sum() + (sin(3 p) * 0.1).sum()`.
fn term(p: &Tensor, t: &Tensor, w: &Tensor) -> Result<Tensor> {
    let quad = w.mul(&p.sub(t)?.square()?)?.sum_all()?;
    let wave = p.mul(3.0)?.sin()?.mul(0.1)?.sum_all()?;
    quad.add(&wave)
}

/// The closed-form lambdas of LambdaLR / MultiplicativeLR (the generator's `lam`).
fn lam(form: i64, a: f64, e: i64) -> f64 {
    match form {
        0 => a.powf(e as f64),
        1 => 1.0 / (1.0 + a * e as f64),
        2 => {
            if e % 2 == 0 {
                a
            } else {
                1.0
            }
        }
        _ => (1.0 - a * e as f64).max(0.1),
    }
}

/// The groups of an options type, each from the defaults with torch's hyper-parameters set.
fn groups<O: HyperParams + Default>(case: &OptCase, params: &[Vec<Tensor>]) -> Vec<ParamGroup<O>> {
    case.groups
        .iter()
        .zip(params)
        .map(|(g, ps)| {
            let mut options = O::default();
            for &(name, value) in g.hyper {
                options.set_hyper_param(name, value);
            }
            ParamGroup { params: ps.clone(), options }
        })
        .collect()
}

/// The case's optimizer over `params` (one list per group).
fn build_opt(case: &OptCase, params: &[Vec<Tensor>]) -> Result<Box<dyn Optimizer>> {
    Ok(match case.opt {
        "sgd" => Box::new(SGD::with_groups(groups::<SgdOptions>(case, params))?),
        "adam" => Box::new(Adam::with_groups(groups::<AdamOptions>(case, params))?),
        "adamw" => Box::new(AdamW::with_groups(groups::<AdamOptions>(case, params))?),
        "rmsprop" => Box::new(RMSprop::with_groups(groups::<RMSpropOptions>(case, params))?),
        "adagrad" => Box::new(Adagrad::with_groups(groups::<AdagradOptions>(case, params))?),
        "adadelta" => Box::new(Adadelta::with_groups(groups::<AdadeltaOptions>(case, params))?),
        "adamax" => Box::new(Adamax::with_groups(groups::<AdamaxOptions>(case, params))?),
        "nadam" => Box::new(NAdam::with_groups(groups::<NAdamOptions>(case, params))?),
        "radam" => Box::new(RAdam::with_groups(groups::<RAdamOptions>(case, params))?),
        "rprop" => Box::new(Rprop::with_groups(groups::<RpropOptions>(case, params))?),
        "asgd" => Box::new(ASGD::with_groups(groups::<AsgdOptions>(case, params))?),
        "muon" => Box::new(Muon::with_groups(groups::<MuonOptions>(case, params))?),
        "lbfgs" => {
            let h = |name: &str| -> Result<f64> {
                case.groups[0]
                    .hyper
                    .iter()
                    .find(|(k, _)| *k == name)
                    .map(|&(_, v)| v)
                    .ok_or_else(|| Error::msg(format!("golden LBFGS case lacks '{name}'")))
            };
            let options = LbfgsOptions {
                lr: h("lr")?,
                max_iter: h("max_iter")? as usize,
                max_eval: Some(h("max_eval")? as usize),
                tolerance_grad: h("tolerance_grad")?,
                tolerance_change: h("tolerance_change")?,
                history_size: h("history_size")? as usize,
                line_search_fn: if case.line_search == "strong_wolfe" { Some("strong_wolfe") } else { None },
                maximize: h("maximize")? != 0.0,
            };
            Box::new(LBFGS::new(params.iter().flatten().cloned().collect(), options)?)
        }
        other => return Err(Error::msg(format!("unknown optimizer {other}"))),
    })
}

/// The lambdas of a LambdaLR/MultiplicativeLR spec (`[n, form, a, form, a, ...]`).
fn lambdas(args: &[f64]) -> Vec<LrLambda> {
    let n = args[0] as usize;
    (0..n)
        .map(|i| {
            let (form, a) = (args[1 + 2 * i] as i64, args[2 + 2 * i]);
            Box::new(move |e: i64| lam(form, a, e)) as LrLambda
        })
        .collect()
}

/// A chainable / closed-form scheduler of a spec.
fn simple(opt: &mut dyn Optimizer, s: &SchedSpec) -> Result<Scheduler> {
    let a = s.args;
    Ok(match s.kind {
        "step" => StepLR::new(opt, a[0] as usize, a[1]),
        "multistep" => MultiStepLR::new(opt, a[1..].iter().map(|&m| m as i64).collect(), a[0]),
        "exponential" => ExponentialLR::new(opt, a[0]),
        "cosine" => CosineAnnealingLR::new(opt, a[0] as usize, a[1]),
        "lambda" | "multiplicative" => {
            let mut fns = lambdas(a);
            let lambda = s.kind == "lambda";
            if fns.len() == 1 {
                let f = fns.remove(0);
                if lambda {
                    LambdaLR::new(opt, f)
                } else {
                    MultiplicativeLR::new(opt, f)
                }
            } else if lambda {
                LambdaLR::with_lambdas(opt, fns)?
            } else {
                MultiplicativeLR::with_lambdas(opt, fns)?
            }
        }
        "linear" => LinearLR::new(opt, a[0], a[1], a[2] as usize)?,
        "constant" => ConstantLR::new(opt, a[0], a[1] as usize)?,
        "polynomial" => PolynomialLR::new(opt, a[0] as usize, a[1]),
        other => return Err(Error::msg(format!("unknown scheduler {other}"))),
    })
}

/// The scheduler of a case, whatever its type.
enum Sched {
    None,
    One(Scheduler),
    Plateau(ReduceLROnPlateau),
    Sequential(SequentialLR),
    Chained(ChainedScheduler),
}

impl Sched {
    fn build(case: &OptCase, opt: &mut dyn Optimizer) -> Result<Sched> {
        let n = opt.num_groups();
        match case.compose {
            "" => return Ok(Sched::None),
            "sequential" => {
                let subs = case.sched.iter().map(|s| simple(opt, s)).collect::<Result<Vec<_>>>()?;
                return Ok(Sched::Sequential(SequentialLR::new(opt, subs, case.milestones.to_vec())?));
            }
            "chained" => {
                let subs = case.sched.iter().map(|s| simple(opt, s)).collect::<Result<Vec<_>>>()?;
                return Ok(Sched::Chained(ChainedScheduler::new(subs)?));
            }
            _ => {}
        }
        let s = &case.sched[0];
        let a = s.args;
        Ok(match s.kind {
            "onecycle" => {
                let steps = if a[0] > 0.0 {
                    OneCycleSteps::Total(a[0] as usize)
                } else {
                    OneCycleSteps::Epochs { epochs: a[1] as usize, steps_per_epoch: a[2] as usize }
                };
                let momentum = CycleMomentum { enabled: a[7] != 0.0, base: a[8], max: a[9] };
                let args = (a[3], s.strs[0], a[4], a[5], a[6] != 0.0);
                Sched::One(OneCycleLR::with_group_max_lrs(opt, &a[10..10 + n], steps, args, momentum)?)
            }
            "cyclic" => {
                let down = if a[1] < 0.0 { None } else { Some(a[1] as usize) };
                let momentum = CycleMomentum { enabled: a[3] != 0.0, base: a[4], max: a[5] };
                let lrs = (&a[6..6 + n], &a[6 + n..6 + 2 * n]);
                Sched::One(CyclicLR::with_group_lrs(
                    opt,
                    lrs,
                    (a[0] as usize, down),
                    (s.strs[0], a[2]),
                    momentum,
                )?)
            }
            "warmrestarts" => {
                Sched::One(CosineAnnealingWarmRestarts::new(opt, a[0] as usize, a[1] as usize, a[2])?)
            }
            "plateau" => Sched::Plateau(ReduceLROnPlateau::new(
                opt,
                s.strs[0],
                a[0],
                a[1] as usize,
                a[2],
                s.strs[1],
                a[3] as usize,
                a[4],
                a[5],
            )?),
            _ => Sched::One(simple(opt, s)?),
        })
    }

    fn step(&mut self, opt: &mut dyn Optimizer, metric: f64) -> Result<()> {
        match self {
            Sched::None => Ok(()),
            Sched::One(s) => s.step(opt),
            Sched::Plateau(s) => s.try_step(opt, metric),
            Sched::Sequential(s) => s.step(opt),
            Sched::Chained(s) => s.step(opt),
        }
    }
}

/// What a run produced: the learning rates after the scheduler's construction, and per step the
/// parameters (as f64), the learning rates and the loss.
struct Run {
    lrs0: Vec<f64>,
    rows: Vec<(Vec<Vec<f64>>, Vec<f64>, f64)>,
}

fn lrs(opt: &dyn Optimizer) -> Vec<f64> {
    (0..opt.num_groups()).map(|g| opt.lr(g)).collect()
}

/// Runs a case from its initial values; with `roundtrip`, the optimizer is replaced after
/// [`SAVE_AT`] steps by a fresh one loaded from its state dict. Options that did not take are
/// reported in `notes`.
fn run(case: &OptCase, roundtrip: bool, notes: &mut Vec<String>) -> Result<Run> {
    let mut params: Vec<Vec<Tensor>> = Vec::new();
    let (mut all, mut targets, mut weights, mut skips) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for g in case.groups {
        let mut ps = Vec::new();
        for p in g.params {
            let t = tensor(&p.init, p.f64)?.requires_grad_(true)?;
            all.push(t.clone());
            targets.push(tensor(&p.target, p.f64)?);
            weights.push(tensor(&p.weight, p.f64)?);
            skips.push(p.skip);
            ps.push(t);
        }
        params.push(ps);
    }
    let mut opt = build_opt(case, &params)?;
    if !roundtrip {
        for (g, group) in case.groups.iter().enumerate() {
            for &(name, value) in group.hyper {
                let got = opt.group_hyper(g, name);
                if got != Some(value) {
                    notes.push(format!(
                        "group {g}: hyper-parameter '{name}' is {got:?} after construction, torch {value}"
                    ));
                }
            }
        }
    }
    let mut sched = Sched::build(case, opt.as_mut())?;
    let lrs0 = lrs(opt.as_ref());
    let mut rows = Vec::new();
    for step in 0..case.rows.len() {
        if roundtrip && step == SAVE_AT {
            let state = opt.state_dict()?;
            let mut fresh = build_opt(case, &params)?;
            fresh.load_state_dict(&state)?;
            opt = fresh;
        }
        let mut closure = || -> Result<Tensor> {
            for p in &all {
                p.set_grad(None)?;
            }
            let mut total = 0.0;
            for (k, p) in all.iter().enumerate() {
                if skips[k].contains(&step) {
                    continue;
                }
                let loss = term(p, &targets[k], &weights[k])?;
                loss.backward()?;
                total += loss.detach().to_dtype(DType::F64)?.item::<f64>()?;
            }
            Tensor::scalar_tensor(total, DType::F64)
        };
        let loss = opt.step_with_closure(&mut closure)?;
        let loss = match loss {
            Some(l) => l.to_dtype(DType::F64)?.item::<f64>()?,
            None => f64::NAN,
        };
        sched.step(opt.as_mut(), loss)?;
        let values = all
            .iter()
            .map(|p| p.detach().to_dtype(DType::F64)?.to_vec::<f64>())
            .collect::<Result<Vec<_>>>()?;
        rows.push((values, lrs(opt.as_ref()), loss));
    }
    Ok(Run { lrs0, rows })
}

/// The largest scaled difference of `got` from `want` (`|a - b| / max(|b|, 1)`) and where, or
/// `None` when the lengths differ.
fn worst(got: &[f64], want: &[f64]) -> Option<(f64, usize)> {
    if got.len() != want.len() {
        return None;
    }
    let mut out = (0.0, 0);
    for (i, (a, b)) in got.iter().zip(want).enumerate() {
        let d = if a == b { 0.0 } else { (a - b).abs() / b.abs().max(1.0) };
        let d = if d.is_nan() { f64::INFINITY } else { d };
        if d > out.0 {
            out = (d, i);
        }
    }
    Some(out)
}

/// Compares a run's parameters with `want` (per step, per parameter), pushing each mismatch.
fn check_params(case: &OptCase, what: &str, run: &Run, want: &[&[T]], out: &mut Vec<String>) {
    let dtypes: Vec<bool> = case.groups.iter().flat_map(|g| g.params.iter().map(|p| p.f64)).collect();
    for (step, (w, (got, _, _))) in want.iter().zip(&run.rows).enumerate() {
        for (k, (t, g)) in w.iter().zip(got).enumerate() {
            let double = dtypes[k];
            let tol = if double { 1e-12 } else { 1e-6 };
            match worst(g, t.data) {
                None => out.push(format!(
                    "{what} step {step}: param {k}: {} values, torch {}",
                    g.len(),
                    t.data.len()
                )),
                Some((d, i)) => {
                    if d > tol {
                        out.push(format!(
                            "{what} step {step}: param {k} ({}) {:?}: [{i}] = {} vs torch {} ({d:.3e})",
                            if double { "f64" } else { "f32" },
                            t.dims,
                            g[i],
                            t.data[i]
                        ));
                    }
                }
            }
        }
    }
}

/// Learning rates within `1e-12` relative.
fn lrs_close(got: &[f64], want: &[f64]) -> bool {
    got.len() == want.len()
        && got.iter().zip(want).all(|(a, b)| a == b || (a - b).abs() <= 1e-12 * a.abs().max(b.abs()))
}

/// The scheduler of a case, for the report.
fn sched_name(case: &OptCase) -> String {
    if case.compose.is_empty() {
        return "none".to_string();
    }
    let kinds: Vec<String> =
        case.sched.iter().map(|s| format!("{}{:?}{:?}", s.kind, s.args, s.strs)).collect();
    format!("{}[{}] milestones {:?}", case.compose, kinds.join(", "), case.milestones)
}

/// Runs one case both ways and returns its mismatches.
fn check_case(case: &OptCase) -> Vec<String> {
    let mut out = Vec::new();
    let mut notes = Vec::new();
    match run(case, false, &mut notes) {
        Err(e) => out.push(format!("error: {e}")),
        Ok(r) => {
            out.append(&mut notes);
            if !lrs_close(&r.lrs0, case.lrs0) {
                out.push(format!(
                    "lrs after the scheduler's construction: {:?} vs torch {:?}",
                    r.lrs0, case.lrs0
                ));
            }
            let want: Vec<&[T]> = case.rows.iter().map(|row| row.params).collect();
            check_params(case, "uninterrupted run:", &r, &want, &mut out);
            let any_f32 = case.groups.iter().any(|g| g.params.iter().any(|p| !p.f64));
            let loss_tol = if any_f32 { 1e-5 } else { 1e-12 };
            for (step, (row, (_, got_lrs, loss))) in case.rows.iter().zip(&r.rows).enumerate() {
                if !lrs_close(got_lrs, row.lrs) {
                    out.push(format!("step {step}: lrs {got_lrs:?} vs torch {:?}", row.lrs));
                }
                if (loss - row.loss).abs() > loss_tol * row.loss.abs().max(1.0)
                    || loss.is_nan() != row.loss.is_nan()
                {
                    out.push(format!("step {step}: loss {loss} vs torch {}", row.loss));
                }
            }
            // the round trip: save after SAVE_AT steps, load into a fresh optimizer, continue (compared
            // with torch only when the uninterrupted run agreed, not to list its mismatches twice)
            let agreed = out.is_empty();
            match run(case, true, &mut Vec::new()) {
                Err(e) => out.push(format!("state_dict round trip: error: {e}")),
                Ok(rt) => {
                    let mut uninterrupted = Vec::new();
                    if agreed {
                        check_params(
                            case,
                            "state_dict round trip (vs the uninterrupted run)",
                            &rt,
                            &want,
                            &mut uninterrupted,
                        );
                    }
                    if !uninterrupted.is_empty() && !case.rows_rt.is_empty() {
                        // torch's own resume differs here (float state cast to the parameter's dtype)
                        let mut resumed = Vec::new();
                        check_params(
                            case,
                            "state_dict round trip (vs torch's resumed run)",
                            &rt,
                            case.rows_rt,
                            &mut resumed,
                        );
                        if resumed.is_empty() {
                            uninterrupted.clear();
                        }
                    }
                    out.append(&mut uninterrupted);
                    // and against oxtorch's own uninterrupted run, bit for bit
                    if let Some(step) = (SAVE_AT..rt.rows.len()).find(|&s| rt.rows[s].0 != r.rows[s].0) {
                        if case.rows_rt.is_empty() {
                            out.push(format!(
                                "state_dict round trip: step {step}: not bit-equal to the uninterrupted run"
                            ));
                        }
                    }
                }
            }
        }
    }
    out.into_iter()
        .map(|m| format!("case {} [{}] sched {}: {m}", case.id, case.desc, sched_name(case)))
        .collect()
}

#[test]
fn optimizers_and_schedulers_match_torch_on_random_cases() {
    let mut failures = Vec::new();
    for case in CASES {
        match catch_unwind(AssertUnwindSafe(|| check_case(case))) {
            Ok(mut m) => failures.append(&mut m),
            Err(_) => failures.push(format!(
                "case {} [{}] sched {}: panicked",
                case.id,
                case.desc,
                sched_name(case)
            )),
        }
    }
    assert!(failures.is_empty(), "{} mismatches with torch:\n{}", failures.len(), failures.join("\n"));
}

#[test]
fn the_golden_covers_every_optimizer_and_scheduler() {
    for name in [
        "sgd", "adam", "adamw", "rmsprop", "adagrad", "adadelta", "adamax", "nadam", "radam", "rprop",
        "asgd", "lbfgs", "muon",
    ] {
        assert!(CASES.iter().any(|c| c.opt == name), "no {name} case");
    }
    for kind in [
        "step",
        "multistep",
        "exponential",
        "cosine",
        "lambda",
        "multiplicative",
        "linear",
        "constant",
        "polynomial",
        "onecycle",
        "cyclic",
        "warmrestarts",
        "plateau",
    ] {
        assert!(CASES.iter().any(|c| c.sched.iter().any(|s| s.kind == kind)), "no {kind} case");
    }
    for compose in ["", "sequential", "chained"] {
        assert!(CASES.iter().any(|c| c.compose == compose), "no '{compose}' composition");
    }
    assert_eq!(CASES.len(), 150);
}
