//! Autograd on the XLA runtime: a small MLP's forward, backward and three SGD (momentum) steps on
//! `xla:0` equal the same steps on cpu (loss, gradients and parameters), and a repeated step
//! compiles nothing. Runs against the PJRT CPU
//! plugin named by `OXTORCH_PJRT_PLUGIN` (`scripts/test.sh` sets it).

use oxtorch as torch;
use torch::nn::{Forward, Linear, ModuleExt, Sequential, Tanh};
use torch::optim::{Optimizer, SgdOptions, SGD};
use torch::{Device, Result, Tensor};

struct Run {
    losses: Vec<f32>,
    grads: Vec<Vec<f32>>,
    params: Vec<Vec<f32>>,
}

/// The tests share the global RNG and the process-wide metrics: they run one at a time.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn train(device: Device) -> Result<Run> {
    torch::manual_seed(7);
    let mut model =
        Sequential::new().add(Linear::new(6, 16, true)?).add(Tanh {}).add(Linear::new(16, 3, true)?);
    model.to(device)?;
    let x = torch::randn([10, 6], ())?.to(device)?;
    let y = Tensor::from_vec((0..10i64).map(|i| i % 3).collect::<Vec<_>>(), [10])?.to(device)?;
    let mut opt = SGD::new(model.parameters(), SgdOptions { lr: 0.1, momentum: 0.9, ..Default::default() })?;
    let mut losses = Vec::new();
    let mut grads = Vec::new();
    let mut compiles = Vec::new();
    for _ in 0..3 {
        compiles.push(torch::xla::metrics().new_programs());
        opt.zero_grad()?;
        let loss = model.forward(&x)?.cross_entropy(&y, None, -100, "mean", 0.0)?;
        loss.backward()?;
        losses.push(loss.item::<f32>()?);
        grads = model
            .parameters()
            .iter()
            .map(|p| {
                let g = p.grad().expect("every parameter has a gradient");
                assert_eq!(g.device(), device, "the gradient left the device");
                g.to_vec::<f32>()
            })
            .collect::<Result<_>>()?;
        opt.step()?;
    }
    if !device.is_cpu() {
        // The third step repeats the second op for op (the first creates the momentum buffers):
        // every program comes from the cache.
        let now = torch::xla::metrics().new_programs();
        assert_eq!(now, compiles[2], "a repeated training step compiled again ({compiles:?} -> {now})");
        assert!(compiles[1] > compiles[0], "the first step compiled nothing: {compiles:?}");
    }
    let params = model
        .parameters()
        .iter()
        .map(|p| {
            assert_eq!(p.device(), device);
            p.to_vec::<f32>()
        })
        .collect::<Result<_>>()?;
    Ok(Run { losses, grads, params })
}

fn close(what: &str, a: &[f32], b: &[f32]) {
    assert_eq!(a.len(), b.len(), "{what}");
    for (i, (x, y)) in a.iter().zip(b).enumerate() {
        assert!((x - y).abs() <= 1e-5 + 1e-4 * x.abs(), "{what}[{i}]: cpu {x} vs xla {y}");
    }
}

#[test]
fn mlp_sgd_steps_on_xla_equal_cpu() -> Result<()> {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    if std::env::var_os("OXTORCH_PJRT_PLUGIN").is_none() {
        eprintln!("!!! SKIPPED: OXTORCH_PJRT_PLUGIN is unset (scripts/test.sh sets it)");
        return Ok(());
    }
    let cpu = train(Device::Cpu)?;
    let xla = train(Device::Xla(0))?;
    close("loss", &cpu.losses, &xla.losses);
    assert!(cpu.losses[1] < cpu.losses[0], "training did not reduce the loss: {:?}", cpu.losses);
    for (i, (c, x)) in cpu.grads.iter().zip(&xla.grads).enumerate() {
        close(&format!("grad {i}"), c, x);
    }
    for (i, (c, x)) in cpu.params.iter().zip(&xla.params).enumerate() {
        close(&format!("param {i}"), c, x);
    }
    // Moving a tensor that requires grad is differentiable: the gradient comes back to cpu.
    let w = torch::randn([3], ())?.requires_grad_(true)?;
    let on = w.to(Device::Xla(0))?;
    on.mul(&on)?.sum_all()?.backward()?;
    let g = w.grad().expect("gradient through the device move");
    assert_eq!(g.device(), Device::Cpu);
    close("to-device grad", &g.to_vec::<f32>()?, &w.mul(2.0)?.to_vec::<f32>()?);
    Ok(())
}

/// Parameters, programs built per step, fused programs run per step.
type AdamRun = (Vec<Vec<f32>>, Vec<u64>, Vec<u64>);

/// Parameters after `steps` Adam steps of a small MLP on `xla:0`, and the new programs each step
/// built (compiled or loaded) and the fused programs each step ran.
fn train_adam(steps: usize) -> Result<AdamRun> {
    use torch::optim::{Adam, AdamOptions};
    let device = Device::Xla(0);
    torch::manual_seed(11);
    let mut model =
        Sequential::new().add(Linear::new(8, 32, true)?).add(Tanh {}).add(Linear::new(32, 4, true)?);
    model.to(device)?;
    let x = torch::randn([16, 8], ())?.to(device)?;
    let y = Tensor::from_vec((0..16i64).map(|i| i % 4).collect::<Vec<_>>(), [16])?.to(device)?;
    let mut opt = Adam::new(model.parameters(), AdamOptions { lr: 0.01, ..Default::default() })?;
    let (mut built, mut fused) = (Vec::new(), Vec::new());
    let donated_before = torch::xla::metrics().donated_buffers;
    for _ in 0..steps {
        let before = torch::xla::metrics();
        opt.zero_grad()?;
        let loss = model.forward(&x)?.cross_entropy(&y, None, -100, "mean", 0.0)?;
        loss.backward()?;
        opt.step()?;
        let after = torch::xla::metrics();
        built.push(after.new_programs() - before.new_programs());
        fused.push(after.fused_runs - before.fused_runs);
    }
    if torch::xla::mode() == torch::xla::Mode::Fused {
        // From the second step on, each parameter and both Adam moments are updated in place:
        // their old buffers are donated to the step's program, not kept beside the new ones.
        let donated = torch::xla::metrics().donated_buffers - donated_before;
        let per_step = 3 * model.parameters().len() as u64;
        assert!(donated >= per_step * (steps as u64 - 1), "donated {donated} buffers in {steps} steps");
    }
    let params = model.parameters().iter().map(|p| p.to_vec::<f32>()).collect::<Result<_>>()?;
    Ok((params, built, fused))
}

#[test]
fn fused_training_equals_eager_and_runs_one_program_per_step() -> Result<()> {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    if std::env::var_os("OXTORCH_PJRT_PLUGIN").is_none() {
        eprintln!("!!! SKIPPED: OXTORCH_PJRT_PLUGIN is unset (scripts/test.sh sets it)");
        return Ok(());
    }
    let (eager, _, eager_fused) = torch::xla::with_mode(torch::xla::Mode::Eager, || train_adam(20))?;
    assert!(eager_fused.iter().all(|&n| n == 0), "eager mode ran fused programs: {eager_fused:?}");
    let (fused, built, runs) = torch::xla::with_mode(torch::xla::Mode::Fused, || train_adam(20))?;
    for (i, (e, f)) in eager.iter().zip(&fused).enumerate() {
        close(&format!("param {i} after 20 steps"), e, f);
    }
    // The optimizer step ends the step: forward, backward and update are one program. (The
    // other is cross_entropy's check that the targets are in range, which reads a flag.)
    assert!(runs.iter().all(|&n| n == 2), "fused programs per step: {runs:?}");
    // The first step builds its program, the second another (Adam's state exists from then on);
    // every later step is the same graph and builds nothing.
    assert!(built[2..].iter().all(|&n| n == 0), "a repeated fused step built programs again: {built:?}");
    // `compile` runs a closure's ops as one program.
    let a = torch::randn([4, 4], ())?.to(Device::Xla(0))?;
    let before = torch::xla::metrics().fused_runs;
    let out = torch::xla::compile(|| a.matmul(&a)?.relu()?.sum_all())??;
    assert_eq!(torch::xla::metrics().fused_runs, before + 1);
    let cpu = a.to("cpu")?;
    close("compile", &[out.item::<f32>()?], &[cpu.matmul(&cpu)?.relu()?.sum_all()?.item::<f32>()?]);
    Ok(())
}

#[path = "../examples/common/gpt.rs"]
#[allow(dead_code)]
mod gpt;
#[path = "../examples/common/reverse_task.rs"]
#[allow(dead_code)]
mod reverse_task;

#[test]
fn train_lm_example_20_steps_fused_on_xla_equal_cpu() -> Result<()> {
    if std::env::var_os("OXTORCH_PJRT_PLUGIN").is_none() {
        eprintln!("!!! SKIPPED: OXTORCH_PJRT_PLUGIN is unset (scripts/test.sh sets it)");
        return Ok(());
    }
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let base = std::env::temp_dir().join(format!("oxtorch-xla-train-lm-{}", std::process::id()));
    let mut cpu = reverse_task::Trainer::new_on(&base.join("cpu"), 3e-3, Device::Cpu)?;
    let mut xla = reverse_task::Trainer::new_on(&base.join("xla"), 3e-3, Device::Xla(0))?;
    let before = torch::xla::metrics();
    let mut losses = (Vec::new(), Vec::new());
    for _ in 0..20 {
        losses.0.push(cpu.train_step(16)?);
        losses.1.push(torch::xla::with_mode(torch::xla::Mode::Fused, || xla.train_step(16))?);
    }
    let after = torch::xla::metrics();
    close("losses", &losses.0, &losses.1);
    for ((n, c), (_, x)) in cpu.model.named_parameters().iter().zip(xla.model.named_parameters().iter()) {
        assert_eq!(x.device(), Device::Xla(0), "{n} left the device");
        let (c, x) = (c.to_vec::<f32>()?, x.to_vec::<f32>()?);
        // Adam moves a parameter whose gradient is rounding noise by up to lr (3e-3) per step
        // whatever the noise: allow a third of one step on top of a relative 1e-3.
        for (i, (a, b)) in c.iter().zip(&x).enumerate() {
            assert!((a - b).abs() <= 1e-3 + 1e-3 * a.abs(), "{n}[{i}] after 20 steps: cpu {a} vs xla {b}");
        }
    }
    // Per step: the step itself (the loss comes out of its program) and the index range checks
    // (token ids, positions, targets, and the backward's flattened ids; each reads two numbers).
    let runs = after.fused_runs - before.fused_runs;
    assert!(runs <= 5 * 20, "{runs} fused runs in 20 steps");
    assert_eq!(after.total_host_fallbacks(), before.total_host_fallbacks(), "host fallbacks in the step");
    // Checkpoints are written from the device like from cpu, and greedy decoding runs there.
    xla.checkpoint()?;
    let resumed = reverse_task::Trainer::new_on(&base.join("xla"), 3e-3, Device::Xla(0))?;
    assert_eq!(resumed.step, 20);
    let (a, b) =
        (reverse_task::exact_match(&cpu.model, 32, 5)?, reverse_task::exact_match(&xla.model, 32, 5)?);
    assert!((a - b).abs() <= 1.0 / 32.0 + 1e-9, "exact match cpu {a} vs xla {b}");
    std::fs::remove_dir_all(&base).ok();
    Ok(())
}

/// Parameters after three epochs of a small MLP fed by a shuffling, prefetching `DataLoader` on
/// `device` (fused on xla), and the programs each epoch built.
fn train_from_loader(device: Device) -> Result<(Vec<Vec<f32>>, Vec<u64>)> {
    use torch::nn::data::{DataLoader, TensorDataset};
    use torch::optim::{AdamOptions, AdamW};
    torch::manual_seed(5);
    let mut model =
        Sequential::new().add(Linear::new(6, 16, true)?).add(Tanh {}).add(Linear::new(16, 3, true)?);
    model.to(device)?;
    let x = torch::randn([30, 6], ())?.to(device)?;
    let y = Tensor::from_vec((0..30i64).map(|i| i % 3).collect::<Vec<_>>(), [30])?.to(device)?;
    // 30 samples in batches of 8: three full batches and one of 6, in a new order every epoch.
    let loader = DataLoader::new(TensorDataset::new(vec![x, y])?, 8)?.shuffle(1);
    let mut opt = AdamW::new(model.parameters(), AdamOptions { lr: 0.01, ..AdamW::default_options() })?;
    let mut built = Vec::new();
    for epoch in 0..3 {
        let before = torch::xla::metrics();
        for batch in loader.epoch(epoch)? {
            let batch = batch?;
            opt.zero_grad()?;
            model.forward(&batch[0])?.cross_entropy(&batch[1], None, -100, "mean", 0.0)?.backward()?;
            opt.step()?;
        }
        built.push(torch::xla::metrics().new_programs() - before.new_programs());
    }
    let params = model.parameters().iter().map(|p| p.to_vec::<f32>()).collect::<Result<_>>()?;
    Ok((params, built))
}

#[test]
fn a_prefetching_data_loader_feeds_fused_steps_that_compile_once() -> Result<()> {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    if std::env::var_os("OXTORCH_PJRT_PLUGIN").is_none() {
        eprintln!("!!! SKIPPED: OXTORCH_PJRT_PLUGIN is unset (scripts/test.sh sets it)");
        return Ok(());
    }
    let (cpu, _) = train_from_loader(Device::Cpu)?;
    let (xla, built) = torch::xla::with_mode(torch::xla::Mode::Fused, || train_from_loader(Device::Xla(0)))?;
    for (i, (c, x)) in cpu.iter().zip(&xla).enumerate() {
        close(&format!("param {i} after 3 epochs"), c, x);
    }
    // The loader's thread gathers the next batch while a step records: the step's program must
    // not depend on when that happens. After the first epoch nothing is new.
    assert!(built[1..].iter().all(|&n| n == 0), "later epochs built programs: {built:?}");
    Ok(())
}
