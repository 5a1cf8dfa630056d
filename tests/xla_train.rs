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
