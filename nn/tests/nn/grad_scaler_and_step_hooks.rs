//! `torch.amp.GradScaler`, optimizer step hooks ([`StepHooked`]), `ChainDataset` and
//! `default_convert` against torch 2.15 (values from nn/tests/make_grad_scaler_and_step_hooks_golden.py): a scaled
//! training run with an inf and a NaN injected (the scale's backoff and growth, the skipped steps,
//! the explicit `unscale_`, `update(new_scale)`), its state dict, torch's error messages, step
//! hooks changing the learning rate and removed, and a chain of iterable datasets batched across
//! their boundary.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use oxtorch_nn::amp::{GradScaler, GradScalerOptions};
use oxtorch_nn::data::{default_convert, ChainDataset, IterableDataset, IterableLoader};
use oxtorch_nn::optim::{clip_grad_norm_, Optimizer, SgdOptions, StepHooked, SGD};
use oxtorch_tensor::{DType, Error, Result, Tensor};

use super::golden_case::{assert_close_as_f64, float64, T};

/// torch's state after one step and update of the scaled run.
struct ScalerStep {
    scale: f64,
    tracker: i64,
    pre_calls: usize,
    post_calls: usize,
    w: T,
    b: T,
}

include!("grad_scaler_and_step_hooks_golden.rs");

/// A float32 tensor of a golden tensor's values (the scaled run is float32, as torch's).
fn f32_of(v: &T) -> Tensor {
    float64(v).to_dtype(DType::F32).unwrap()
}

/// torch's message for error case `case`.
fn torch_error(case: &str) -> &'static str {
    ERRORS.iter().find(|(k, _)| *k == case).map(|(_, v)| *v).unwrap_or_else(|| panic!("no case {case}"))
}

/// The message of a call that must fail.
fn msg<R>(r: Result<R>) -> String {
    match r {
        Ok(_) => panic!("expected an error"),
        Err(e) => e.to_string(),
    }
}

fn sgd(params: Vec<Tensor>, lr: f64, momentum: f64) -> Result<SGD> {
    SGD::new(params, SgdOptions { lr, momentum, ..Default::default() })
}

#[test]
fn grad_scaler_training_run_matches_torch() -> Result<()> {
    let w = f32_of(&SCALER_W0).requires_grad_(true)?;
    let b = f32_of(&SCALER_B0).requires_grad_(true)?;
    let mut opt = StepHooked::new(sgd(vec![w.clone(), b.clone()], 0.1, 0.9)?);
    let pre = Arc::new(AtomicUsize::new(0));
    let post = Arc::new(AtomicUsize::new(0));
    let (pre2, post2) = (Arc::clone(&pre), Arc::clone(&post));
    opt.register_step_pre_hook(move |_| {
        pre2.fetch_add(1, Ordering::SeqCst);
        Ok(())
    });
    opt.register_step_post_hook(move |_| {
        post2.fetch_add(1, Ordering::SeqCst);
        Ok(())
    });
    let options = GradScalerOptions::default().init_scale(1024.0).growth_interval(2);
    let mut scaler = GradScaler::with_options(options)?;
    assert!(scaler.is_enabled());
    assert_eq!(scaler.get_scale(), 1024.0);
    assert_eq!(SCALER_XS.len(), SCALER_STEPS.len());
    for (i, ((x, y), want)) in SCALER_XS.iter().zip(SCALER_STEPS).enumerate() {
        opt.zero_grad()?;
        let loss = w.mul(f32_of(x))?.sum_all()?.add(b.mul(f32_of(y))?.sum_all()?)?;
        let scaled = scaler.scale(&loss)?;
        assert_eq!(scaled.dtype(), DType::F32);
        scaled.backward()?;
        if i == UNSCALE_STEP {
            scaler.unscale_(&mut opt)?;
            assert_close_as_f64("unscaled w.grad", &w.grad().unwrap(), &UNSCALED_GRADS[0], 1e-7);
            assert_close_as_f64("unscaled b.grad", &b.grad().unwrap(), &UNSCALED_GRADS[1], 1e-7);
            clip_grad_norm_(&[w.clone(), b.clone()], 1.0, 2.0, false)?;
        }
        let stepped = scaler.step(&mut opt)?;
        let skipped = i > 0 && want.pre_calls == SCALER_STEPS[i - 1].pre_calls;
        assert_eq!(stepped.is_none(), skipped, "step {i}: skipped");
        scaler.update(if i == NEW_SCALE_STEP { Some(64.0) } else { None })?;
        assert_eq!(scaler.get_scale(), want.scale, "step {i}: scale");
        assert_eq!(scaler.get_growth_tracker(), want.tracker, "step {i}: growth tracker");
        assert_eq!(pre.load(Ordering::SeqCst), want.pre_calls, "step {i}: pre-hook calls");
        assert_eq!(post.load(Ordering::SeqCst), want.post_calls, "step {i}: post-hook calls");
        assert_close_as_f64(&format!("step {i}: w"), &w, &want.w, 1e-5);
        assert_close_as_f64(&format!("step {i}: b"), &b, &want.b, 1e-5);
    }
    let state = scaler.state_dict();
    let want: Vec<(String, f64)> = SCALER_STATE.iter().map(|(k, v)| (k.to_string(), *v)).collect();
    assert_eq!(state, want);
    Ok(())
}

#[test]
fn grad_scaler_growth_that_overflows_keeps_the_scale() -> Result<()> {
    let p = Tensor::from_vec(vec![1.0f32], vec![1])?.requires_grad_(true)?;
    let mut opt = sgd(vec![p.clone()], 0.0, 0.0)?;
    let options = GradScalerOptions::default().init_scale(3e38).growth_interval(1);
    let mut scaler = GradScaler::with_options(options)?;
    scaler.scale(&p.mul(1e-38)?.sum_all()?)?.backward()?;
    assert_eq!(scaler.step(&mut opt)?, Some(()));
    scaler.update(None)?;
    assert_eq!((scaler.get_scale(), scaler.get_growth_tracker()), OVERFLOW);
    Ok(())
}

#[test]
fn grad_scaler_state_dict_round_trip_and_disabled() -> Result<()> {
    let state: Vec<(String, f64)> = SCALER_STATE.iter().map(|(k, v)| (k.to_string(), *v)).collect();
    let mut scaler = GradScaler::new();
    assert_eq!(scaler.get_scale(), 65536.0);
    assert_eq!(scaler.get_growth_interval(), 2000);
    scaler.load_state_dict(&state)?;
    // Loaded before the first `scale`: the loaded scale is the initial one.
    assert_eq!(scaler.get_scale(), 64.0);
    assert_eq!(scaler.get_growth_interval(), 2);
    assert_eq!(scaler.state_dict(), state);
    let x = Tensor::from_vec(vec![1.5f32, -2.0], vec![2])?;
    assert_eq!(scaler.scale(&x)?.to_f64_vec()?, vec![96.0, -128.0]);
    assert_eq!(msg(scaler.load_state_dict(&[])), torch_error("load_empty"));
    let missing = [("scale".to_string(), 2.0)];
    assert!(msg(scaler.load_state_dict(&missing)).contains("growth_factor"));

    // Disabled: everything passes through, the state dict is empty.
    let mut off = GradScaler::with_options(GradScalerOptions::default().enabled(false).growth_factor(0.5))?;
    assert!(!off.is_enabled());
    assert_eq!(off.get_scale(), 1.0);
    assert!(off.state_dict().is_empty());
    off.load_state_dict(&[])?;
    assert!(off.scale(&x)?.is_same(&x));
    let p = Tensor::from_vec(vec![1.0f32], vec![1])?.requires_grad_(true)?;
    let mut opt = sgd(vec![p.clone()], 0.5, 0.0)?;
    p.mul(&p)?.sum_all()?.backward()?;
    off.unscale_(&mut opt)?;
    assert_eq!(off.step(&mut opt)?, Some(()));
    off.update(None)?;
    assert_eq!(p.to_f64_vec()?, vec![0.0]);
    Ok(())
}

/// A parameter `[1, 2]`, SGD over it, and a scaler that scaled `(p * p).sum()` and ran backward.
fn scaled_setup() -> Result<(Tensor, SGD, GradScaler)> {
    let p = Tensor::from_vec(vec![1.0f32, 2.0], vec![2])?.requires_grad_(true)?;
    let opt = sgd(vec![p.clone()], 0.1, 0.0)?;
    let mut scaler = GradScaler::new();
    scaler.scale(&p.mul(&p)?.sum_all()?)?.backward()?;
    Ok((p, opt, scaler))
}

/// The scaler keys its records by the optimizer (torch's `id(optimizer)`), not its parameters.
/// torch 2.15: `p = tensor([1., 2.])`, `scaler.scale((p * p).sum()).backward()`,
/// `scaler.unscale_(opt)`, `opt.add_param_group({"params": [q]})` (`q = tensor([1.])`, grad
/// `[1.]`), `scaler.step(opt)` gives `p = [0.8, 1.6]`, `q = [0.9]` (p's gradient unscaled once).
#[test]
fn grad_scaler_keys_records_by_optimizer() -> Result<()> {
    let (p, mut opt, mut s) = scaled_setup()?;
    s.unscale_(&mut opt)?;
    let q = Tensor::from_vec(vec![1.0f32], vec![1])?.requires_grad_(true)?;
    q.set_grad(Some(Tensor::from_vec(vec![1.0f32], vec![1])?))?;
    opt.add_param_group(vec![q.clone()], &[])?;
    assert_eq!(s.step(&mut opt)?, Some(()));
    let got = p.to_f64_vec()?;
    assert!((got[0] - 0.8).abs() < 1e-6 && (got[1] - 1.6).abs() < 1e-6, "{got:?}");
    assert!((q.to_f64_vec()?[0] - 0.9).abs() < 1e-6);
    // Two optimizers over the same parameters have their own records (torch unscales twice).
    let (p, mut opt, mut s) = scaled_setup()?;
    let mut other = sgd(vec![p.clone()], 0.1, 0.0)?;
    s.unscale_(&mut opt)?;
    s.unscale_(&mut other)?;
    assert_eq!(p.grad().unwrap().to_f64_vec()?, vec![2.0 / 65536.0, 4.0 / 65536.0]);
    assert_eq!(msg(s.unscale_(&mut other)), torch_error("twice"));
    Ok(())
}

#[test]
fn grad_scaler_errors_are_torchs() -> Result<()> {
    let (_, mut opt, mut s) = scaled_setup()?;
    s.unscale_(&mut opt)?;
    assert_eq!(msg(s.unscale_(&mut opt)), torch_error("twice"));
    // step after unscale_ is fine, and does not unscale again
    let (p, mut opt, mut s) = scaled_setup()?;
    s.unscale_(&mut opt)?;
    assert_eq!(p.grad().unwrap().to_f64_vec()?, vec![2.0, 4.0]);
    assert_eq!(s.step(&mut opt)?, Some(()));
    let got = p.to_f64_vec()?;
    assert!((got[0] - 0.8).abs() < 1e-6 && (got[1] - 1.6).abs() < 1e-6, "{got:?}");

    let (_, mut opt, mut s) = scaled_setup()?;
    s.step(&mut opt)?;
    assert_eq!(msg(s.unscale_(&mut opt)), torch_error("after_step"));
    assert_eq!(msg(s.step(&mut opt)), torch_error("step_twice"));
    // update clears the records: the next iteration may unscale and step again
    s.update(None)?;
    s.unscale_(&mut opt)?;

    let (p, mut opt, mut s) = scaled_setup()?;
    p.set_grad(None)?;
    assert_eq!(msg(s.step(&mut opt)), torch_error("no_grads"));
    let (_, _, mut s) = scaled_setup()?;
    assert_eq!(msg(s.update(None)), torch_error("update_before_step"));

    let q = Tensor::from_vec(vec![1.0f32], vec![1])?.requires_grad_(true)?;
    let mut opt = sgd(vec![q.clone()], 0.1, 0.0)?;
    assert_eq!(msg(GradScaler::new().unscale_(&mut opt)), torch_error("unscale_before_scale"));
    assert_eq!(msg(GradScaler::new().step(&mut opt)), torch_error("step_before_scale"));
    assert_eq!(msg(GradScaler::new().update(None)), torch_error("update_before_scale"));

    let h = Tensor::from_vec(vec![1.0f32], vec![1])?.to_dtype(DType::F16)?.requires_grad_(true)?;
    h.set_grad(Some(Tensor::from_vec(vec![1.0f32], vec![1])?.to_dtype(DType::F16)?))?;
    let mut opt = sgd(vec![h.clone()], 0.1, 0.0)?;
    let mut s = GradScaler::new();
    s.scale(&Tensor::from_vec(vec![1.0f32], vec![1])?)?;
    assert_eq!(msg(s.unscale_(&mut opt)), torch_error("fp16"));

    let growth = GradScalerOptions::default().growth_factor(1.0);
    assert_eq!(msg(GradScaler::with_options(growth)), torch_error("growth"));
    let backoff = GradScalerOptions::default().backoff_factor(1.0);
    assert_eq!(msg(GradScaler::with_options(backoff)), torch_error("backoff"));
    Ok(())
}

#[test]
fn step_hooks_change_the_step_and_are_removable() -> Result<()> {
    let p = Tensor::from_vec(vec![1.0f32, -2.0], vec![2])?.requires_grad_(true)?;
    let mut opt = StepHooked::new(sgd(vec![p.clone()], 0.4, 0.0)?);
    assert!(!opt.has_hooks());
    let handle = opt.register_step_pre_hook(|o: &mut SGD| {
        let lr = o.lr(0);
        o.set_lr(0, lr * 0.5);
        Ok(())
    });
    let seen = Arc::new(Mutex::new(Vec::new()));
    let seen2 = Arc::clone(&seen);
    opt.register_step_post_hook(move |o| {
        let v = o.group_params(0)[0].to_f64_vec()?[0];
        seen2.lock().unwrap().push(v);
        Ok(())
    });
    assert!(opt.has_hooks());
    for (i, want) in HOOK_PARAMS.iter().enumerate() {
        opt.zero_grad()?;
        p.mul(&p)?.sum_all()?.backward()?;
        opt.step()?;
        assert_close_as_f64(&format!("step {i}: p"), &p, want, 1e-6);
        assert_eq!(opt.lr(0), HOOK_LRS[i], "step {i}: lr");
        if i == 1 {
            handle.remove();
            handle.remove();
        }
    }
    let seen = seen.lock().unwrap().clone();
    assert_eq!(seen.len(), HOOK_SEEN.len());
    for (got, want) in seen.iter().zip(HOOK_SEEN) {
        assert!((got - want).abs() <= 1e-6 * (1.0 + want.abs()), "post-hook saw {got}, PyTorch {want}");
    }
    // the wrapper passes the optimizer's own methods through
    assert_eq!(opt.params().len(), 1);
    assert_eq!(opt.state_dict()?.hyper, opt.inner().state_dict()?.hyper);
    Ok(())
}

#[test]
fn a_failing_pre_hook_stops_the_step() -> Result<()> {
    let p = Tensor::from_vec(vec![1.0f32], vec![1])?.requires_grad_(true)?;
    let mut opt = StepHooked::new(sgd(vec![p.clone()], 0.5, 0.0)?);
    let post_calls = Arc::new(AtomicUsize::new(0));
    let post2 = Arc::clone(&post_calls);
    let failing = opt.register_step_pre_hook(|_| Err(Error::msg("hook says no")));
    opt.register_step_post_hook(move |_| {
        post2.fetch_add(1, Ordering::SeqCst);
        Ok(())
    });
    p.mul(&p)?.sum_all()?.backward()?;
    assert_eq!(msg(opt.step()), "hook says no");
    assert_eq!(p.to_f64_vec()?, vec![1.0]);
    assert_eq!(post_calls.load(Ordering::SeqCst), 0);
    failing.remove();
    opt.step()?;
    assert_eq!(p.to_f64_vec()?, vec![0.0]);
    assert_eq!(post_calls.load(Ordering::SeqCst), 1);
    // handles of a dropped optimizer do nothing
    let inner = opt.into_inner();
    failing.remove();
    assert_eq!(inner.params().len(), 1);
    Ok(())
}

/// The samples `[lo]`, ..., `[hi - 1]` (float32), as the golden script's `Range`.
struct Range(usize, usize);

impl IterableDataset for Range {
    fn iter(&self) -> Box<dyn Iterator<Item = Result<Vec<Tensor>>> + Send> {
        let samples = (self.0..self.1).map(|i| Tensor::from_vec(vec![i as f32], vec![1]).map(|t| vec![t]));
        Box::new(samples)
    }
}

#[test]
fn chain_dataset_batches_across_its_datasets() -> Result<()> {
    let parts: Vec<Arc<dyn IterableDataset>> = vec![Arc::new(Range(0, 3)), Arc::new(Range(10, 12))];
    let loader = IterableLoader::new(ChainDataset::new(parts), 2)?;
    assert_eq!(loader.dataset().datasets().len(), 2);
    for pass in 0..2 {
        let batches = loader.iter()?.collect::<Result<Vec<_>>>()?;
        assert_eq!(batches.len(), CHAIN_BATCHES.len(), "pass {pass}");
        for (k, (got, want)) in batches.iter().zip(CHAIN_BATCHES).enumerate() {
            assert_eq!(got.len(), 1);
            assert_close_as_f64(&format!("pass {pass} batch {k}"), &got[0], want, 0.0);
        }
    }
    assert_eq!(ChainDataset::new(Vec::new()).iter().count(), 0);
    Ok(())
}

#[test]
fn default_convert_keeps_the_sample() -> Result<()> {
    let t = Tensor::from_vec(vec![1.0f32, 2.0], vec![2])?;
    let out = default_convert(vec![t.clone()])?;
    assert_eq!(out.len(), 1);
    assert!(out[0].is_same(&t));
    Ok(())
}
