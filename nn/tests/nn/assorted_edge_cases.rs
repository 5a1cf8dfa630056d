//! nn behaviours a review against torch 2.15 found wrong, each pinned here: printing norms without
//! affine parameters, `update_bn` through a hooked batch norm, CyclicLR without an up phase, flags
//! whose state is made at the first step, Adam's groups without a `momentum` key, gradients a
//! backward hook replaces with the wrong size, and a dataset index out of range.

use oxtorch_nn::data::{Dataset, TensorDataset};
use oxtorch_nn::hooks::Hooked;
use oxtorch_nn::optim::lr_scheduler::CyclicLR;
use oxtorch_nn::optim::swa_utils::update_bn;
use oxtorch_nn::optim::{Adam, AdamOptions, Optimizer, SgdOptions, SGD};
use oxtorch_nn::{BatchNorm, GroupNorm, Linear, Module, ModuleExt};
use oxtorch_tensor::{DType, Result, Tensor};

fn err_text<R>(r: Result<R>) -> String {
    match r {
        Ok(_) => panic!("expected an error"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn norms_without_affine_parameters_print_their_channels() -> Result<()> {
    // torch 2.15's repr of the same modules.
    assert_eq!(
        GroupNorm::new(2, 4, 1e-5, false)?.repr(),
        "GroupNorm(2, 4, eps=1e-05, affine=False, bias=False)"
    );
    assert_eq!(
        BatchNorm::new_1d_with(4, 1e-5, Some(0.1), false, false)?.repr(),
        "BatchNorm1d(4, eps=1e-05, momentum=0.1, affine=False, bias=False, track_running_stats=False)"
    );
    Ok(())
}

#[test]
fn update_bn_reaches_a_hooked_batch_norm() -> Result<()> {
    let mut bn = Hooked::new(BatchNorm::new_1d_with(2, 1e-5, Some(0.1), true, true)?);
    bn.double()?;
    let batches = [
        Tensor::from_slice(&[1.0f64, 2.0, 3.0, 6.0], [2, 2])?,
        Tensor::from_slice(&[5.0f64, -2.0, 7.0, 0.0], [2, 2])?,
    ];
    update_bn(&batches, &mut bn)?;
    // The equal average of the two batches' means: ((2 + 6) / 2, (4 + -1) / 2).
    let mean = bn.named_buffers().into_iter().find(|(k, _)| k == "running_mean").unwrap().1;
    assert_eq!(mean.to_vec::<f64>()?, vec![4.0, 1.5]);
    let mut momentum = None;
    bn.inner_mut().batch_norm_momentum(&mut |m| momentum = Some(*m));
    assert_eq!(momentum, Some(Some(0.1)), "the momentum is restored");
    Ok(())
}

#[test]
fn cyclic_lr_without_an_up_phase_is_an_error() -> Result<()> {
    let p = Tensor::zeros([2], DType::F32)?.requires_grad_(true)?;
    let mut opt = SGD::new(vec![p], SgdOptions { lr: 0.1, momentum: 0.9, ..Default::default() })?;
    let e = err_text(CyclicLR::new(&mut opt, (0.01, 0.1), 0, Some(5), "triangular", 1.0));
    assert!(e.contains("step_size_up"), "{e}");
    Ok(())
}

#[test]
fn flags_whose_state_comes_at_the_first_step_cannot_change_after_it() -> Result<()> {
    let p = Tensor::ones([2], DType::F64)?.requires_grad_(true)?;
    let mut opt = Adam::new(vec![p.clone()], AdamOptions { lr: 0.1, ..Default::default() })?;
    // Before any step: allowed (torch's state is made lazily, so this takes effect).
    opt.set_group_hyper(0, "amsgrad", 1.0)?;
    opt.set_group_hyper(0, "amsgrad", 0.0)?;
    p.mul(2.0)?.sum_all()?.backward()?;
    opt.step()?;
    let e = err_text(opt.set_group_hyper(0, "amsgrad", 1.0));
    assert!(e.contains("'amsgrad' cannot change after the optimizer has taken a step"), "{e}");
    // Other hyper-parameters still change freely.
    opt.set_group_hyper(0, "weight_decay", 0.5)?;
    assert_eq!(opt.group_hyper(0, "weight_decay"), Some(0.5));
    // torch's Adam groups have `betas` and no `momentum`.
    assert_eq!(opt.group_hyper(0, "momentum"), None);
    assert!(opt.param_groups()[0].hyper.iter().all(|(k, _)| k != "momentum"));
    assert!(opt.group_params(7).is_empty());
    Ok(())
}

#[test]
fn a_backward_hook_may_not_change_a_gradient_s_size_or_type() -> Result<()> {
    let x = Tensor::ones([1, 2], DType::F64)?.requires_grad_(true)?;
    let make = || -> Result<Hooked<Linear>> {
        let mut lin = Linear::new(2, 3, true)?;
        lin.double()?;
        Ok(Hooked::new(lin))
    };
    let h = make()?;
    h.register_full_backward_hook(|_, _, _| Ok(Some(vec![Some(Tensor::ones([2], DType::F64)?)])));
    let e = err_text(oxtorch_nn::Forward::forward(&h, &x)?.sum_all()?.backward());
    assert!(e.contains("hook 'hook' has changed the size of value"), "{e}");
    let h = make()?;
    h.register_full_backward_hook(|_, _, _| Ok(Some(vec![Some(Tensor::ones([1, 2], DType::F32)?)])));
    let e = err_text(oxtorch_nn::Forward::forward(&h, &x)?.sum_all()?.backward());
    assert!(
        e.contains(
            "hook 'hook' has changed the type of value (was torch.DoubleTensor got torch.FloatTensor)"
        ),
        "{e}"
    );
    Ok(())
}

#[test]
fn a_dataset_index_out_of_range_is_an_error() -> Result<()> {
    let ds = TensorDataset::new(vec![Tensor::zeros([3, 2], DType::F32)?])?;
    assert!(ds.get(2).is_ok());
    for bad in [3, usize::MAX] {
        let e = err_text(ds.get(bad));
        assert!(e.contains("out of range"), "{e}");
    }
    Ok(())
}

#[test]
fn linear_cross_entropy_with_options_accumulates_half_inputs_in_float32() -> Result<()> {
    use oxtorch_nn::functional::{linear_cross_entropy, LinearCrossEntropyOptions};
    let x = Tensor::from_vec((0..128).map(|i| (i as f64 * 0.37).sin()).collect::<Vec<_>>(), [8, 16])?
        .to_dtype(DType::BF16)?;
    let w = Tensor::from_vec((0..640).map(|i| (i as f64 * 0.11).cos() * 3.0).collect::<Vec<_>>(), [40, 16])?
        .to_dtype(DType::BF16)?;
    let t = Tensor::from_vec((0..8).map(|i| (i * 7) % 40).collect::<Vec<i64>>(), [8])?;
    let opts = LinearCrossEntropyOptions::default();
    let with = linear_cross_entropy(&x, &w, &t, None, None, "none", None, 0.0, Some(&opts))?;
    let without = linear_cross_entropy(&x, &w, &t, None, None, "none", None, 0.0, None)?;
    // torch 2.15, the same inputs
    let torch_with = [3.75, 3.75, 3.015625, 2.0625, 2.234375, 3.359375, 4.0625, 4.90625];
    let torch_without = [3.75, 3.78125, 3.03125, 2.0625, 2.25, 3.375, 4.03125, 4.90625];
    assert_eq!(with.dtype(), DType::BF16);
    assert_eq!(with.to_dtype(DType::F64)?.to_vec::<f64>()?, torch_with);
    // (without options both compute in bfloat16: equal to a bfloat16 step or so)
    for (got, want) in without.to_dtype(DType::F64)?.to_vec::<f64>()?.iter().zip(torch_without) {
        assert!((got - want).abs() <= 0.02 * want, "{got} vs {want}");
    }
    Ok(())
}

#[test]
fn rnn_cells_check_in_torchs_order() -> Result<()> {
    use oxtorch_nn::functional::{lstm_cell, rnn_tanh_cell};
    let z = |d: &[usize]| Tensor::zeros(d, DType::F32);
    let (x, h, c) = (z(&[2, 3])?, z(&[2, 5])?, z(&[2, 5])?);
    // torch 2.15: the LSTM and plain RNN cells check their weights before the hidden states.
    let e = err_text(lstm_cell(&x, (&h.narrow(1, 0, 2)?, &c), &z(&[19, 3])?, &z(&[20, 5])?, None, None));
    assert_eq!(e, "weight_ih first dim must be 4 * hidden_size = 20, but got 19");
    let e = err_text(rnn_tanh_cell(&x, &h.narrow(1, 0, 2)?, &z(&[4, 3])?, &z(&[5, 5])?, None, None));
    assert_eq!(e, "weight_ih first dim must be 1 * hidden_size = 5, but got 4");
    Ok(())
}

/// A dataset whose samples take `delay` to make.
struct Slow(std::time::Duration);

impl Dataset for Slow {
    fn len(&self) -> usize {
        4
    }
    fn get(&self, index: usize) -> Result<Vec<Tensor>> {
        std::thread::sleep(self.0);
        Ok(vec![Tensor::full([1], index as f64, DType::F32)?])
    }
}

#[test]
fn an_unseeded_loader_takes_its_workers_seeds_from_the_default_generator() -> Result<()> {
    use oxtorch_nn::data::DataLoader;
    use oxtorch_tensor::random::with_thread_generator;
    use oxtorch_tensor::Generator;
    let loader = DataLoader::new(Slow(std::time::Duration::ZERO), 2)?;
    let under = |seed: u64| with_thread_generator(&Generator::new(seed), || loader.base_seed(0));
    // As torch without a loader generator: `manual_seed` decides the workers' base seed.
    assert_eq!(under(1)?, under(1)?);
    assert_ne!(under(1)?, under(2)?);
    let seeded = DataLoader::new(Slow(std::time::Duration::ZERO), 2)?.seed(7);
    let a = with_thread_generator(&Generator::new(1), || seeded.base_seed(0))?;
    let b = with_thread_generator(&Generator::new(2), || seeded.base_seed(0))?;
    assert_eq!(a, b, "a loader seed decides alone");
    Ok(())
}

#[test]
fn dropping_an_epoch_after_a_timeout_does_not_wait_for_a_stuck_worker() -> Result<()> {
    use oxtorch_nn::data::DataLoader;
    let loader = DataLoader::new(Slow(std::time::Duration::from_secs(3)), 2)?.num_workers(1).timeout(0.2);
    let start = std::time::Instant::now();
    {
        let mut batches = loader.epoch(0)?;
        let first = batches.next().expect("a batch or an error");
        assert!(err_text(first).contains("DataLoader timed out after 0.2 seconds"));
    }
    assert!(start.elapsed() < std::time::Duration::from_secs(2), "{:?}", start.elapsed());
    Ok(())
}

#[test]
fn distribution_review_fixes_match_torch() -> Result<()> {
    use oxtorch_nn::distributions::{
        kl_divergence, Binomial, Categorical, Distribution, Independent, Normal, Poisson,
    };
    let t = |v: &[f64]| Tensor::from_slice(v, [v.len()]);
    // torch 2.15 values of the same calls.
    let p = Binomial::from_probs(&t(&[5.0, 6.0])?, &t(&[0.3, 0.2])?)?;
    let q = Binomial::from_probs(&t(&[5.0, 5.0])?, &t(&[0.5, 0.4])?)?;
    let kl = kl_divergence(&p, &q)?.to_vec::<f64>()?;
    assert!((kl[0] - 0.41141439252525946).abs() < 1e-12 && kl[1] == f64::INFINITY, "{kl:?}");
    assert!(kl_divergence(&q, &p).is_err(), "q with fewer trials is torch's NotImplementedError");
    // Independent leaves the value's validation to its base (a 0-d value broadcasts).
    let n =
        std::sync::Arc::new(Normal::new(&Tensor::zeros([3], DType::F64)?, &Tensor::ones([3], DType::F64)?)?);
    let lp = Independent::new(n, 1)?.log_prob(&Tensor::scalar_tensor(0.0, DType::F64)?)?;
    assert!((lp.item::<f64>()? + 2.756815599614018).abs() < 1e-12);
    // An infinite count is outside an integer support.
    let e = err_text(
        Poisson::new(&Tensor::scalar_tensor(2.0, DType::F64)?)?
            .log_prob(&Tensor::scalar_tensor(f64::INFINITY, DType::F64)?),
    );
    assert!(e.contains("to be within the support"), "{e}");
    // float16 entropy with a -inf logit is finite (torch: 0.58251953125).
    let logits = t(&[0.0, f64::NEG_INFINITY, 1.0])?.to_dtype(DType::F16)?;
    let h = Categorical::from_logits(&logits)?.entropy()?.to_dtype(DType::F64)?.item::<f64>()?;
    assert!((h - 0.58251953125).abs() < 2e-3, "{h}");
    Ok(())
}

#[test]
fn student_t_is_reparameterized_and_negative_binomial_refuses_probs_one() -> Result<()> {
    use oxtorch_nn::distributions::{Distribution, NegativeBinomial, StudentT};
    let df = Tensor::from_slice(&[3.0f64, 5.0], [2])?.requires_grad_(true)?;
    let loc = Tensor::from_slice(&[0.0f64, 1.0], [2])?.requires_grad_(true)?;
    let scale = Tensor::from_slice(&[1.0f64, 2.0], [2])?.requires_grad_(true)?;
    let d = StudentT::new(&df, &loc, &scale)?;
    assert!(d.has_rsample());
    let x = d.rsample(&[4])?;
    assert_eq!(x.dims(), &[4, 2]);
    x.sum_all()?.backward()?;
    assert_eq!(loc.grad().unwrap().to_vec::<f64>()?, vec![4.0, 4.0]);
    assert!(df.grad().is_some() && scale.grad().is_some());
    assert!(!d.sample(&[2])?.requires_grad());
    // torch: probs must lie in the half-open interval [0, 1).
    let e = err_text(NegativeBinomial::from_probs(
        &Tensor::from_slice(&[5.0f64], [1])?,
        &Tensor::from_slice(&[1.0f64], [1])?,
    ));
    assert!(e.contains("HalfOpenInterval(lower_bound=0.0, upper_bound=1.0)"), "{e}");
    Ok(())
}
