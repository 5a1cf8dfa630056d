//! Trains an MLP and a small CNN on the real 8x8 handwritten digits (scikit-learn's data, fetched
//! on first run) and reports test accuracy:
//! `cargo run --release --example train_digits [-- --device xla]`. On an XLA device each training
//! step runs as one compiled program (unless `OXTORCH_XLA_MODE` says otherwise).

use indicatif::{ProgressBar, ProgressStyle};
use oxtorch as torch;
use torch::nn::data::{DataLoader, TensorDataset};
use torch::nn::optim::{lr_scheduler::CosineAnnealingLR, AdamOptions, AdamW, Optimizer};
use torch::nn::{
    Conv2d, ConvOptions, Dropout, Flatten, Forward, Linear, Module, ModuleExt, ReLU, Sequential,
};
use torch::{Device, Padding, Result, Tensor};

#[path = "common/digits.rs"]
mod digits;

/// 2x2 max pooling as a layer.
#[derive(Module)]
struct Pool2;

impl Forward for Pool2 {
    fn forward(&self, x: &Tensor) -> Result<Tensor> {
        x.max_pool2d(&[2], None, &[0], &[1], false)
    }
}

fn pool() -> Pool2 {
    Pool2
}

fn mlp() -> Result<Sequential> {
    Ok(Sequential::new()
        .add(Linear::new(64, 128, true)?)
        .add(ReLU {})
        .add(Dropout::new(0.1)?)
        .add(Linear::new(128, 10, true)?))
}

fn cnn() -> Result<Sequential> {
    let same = || ConvOptions { padding: Padding::Explicit(vec![1]), ..Default::default() };
    Ok(Sequential::new()
        .add(Conv2d::new(1, 16, &[3], same())?)
        .add(ReLU {})
        .add(pool())
        .add(Conv2d::new(16, 32, &[3], same())?)
        .add(ReLU {})
        .add(pool())
        .add(Flatten::default())
        .add(Linear::new(32 * 2 * 2, 10, true)?))
}

/// Fraction of correct predictions.
fn accuracy(model: &Sequential, x: &Tensor, y: &Tensor) -> Result<f64> {
    let pred = torch::no_grad(|| model.forward(x))?.argmax(Some(-1), false)?;
    pred.eq(y)?.to_dtype(torch::float64)?.mean_all()?.item::<f64>()
}

fn train(
    name: &str,
    mut model: Sequential,
    images: bool,
    data: &(Tensor, Tensor, Tensor, Tensor),
    device: Device,
) -> Result<f64> {
    model.to(device)?;
    let (xtr, ytr, xte, yte) =
        (data.0.to(device)?, data.1.to(device)?, data.2.to(device)?, data.3.to(device)?);
    let shape = |x: &Tensor| if images { x.reshape([-1, 1, 8, 8]) } else { Ok(x.clone()) };
    let (xtr, xte) = (shape(&xtr)?, shape(&xte)?);
    let epochs = 30;
    let loader = DataLoader::new(TensorDataset::new(vec![xtr, ytr])?, 64)?.shuffle(0);
    let mut opt = AdamW::new(model.parameters(), AdamOptions { lr: 3e-3, ..AdamW::default_options() })?;
    let mut sched = CosineAnnealingLR::new(&mut opt, epochs, 1e-5);
    let bar = ProgressBar::new((epochs * loader.len()) as u64);
    bar.set_style(
        ProgressStyle::with_template("{prefix:>4} [{bar:30}] {pos}/{len} {msg}")
            .expect("template")
            .progress_chars("=> "),
    );
    bar.set_prefix(name.to_string());
    for epoch in 0..epochs {
        model.train(true);
        for batch in loader.epoch(epoch as u64)? {
            let batch = batch?;
            opt.zero_grad()?;
            let loss = model.forward(&batch[0])?.cross_entropy(&batch[1], None, -100, "mean", 0.0)?;
            loss.backward()?;
            opt.step()?;
            bar.set_message(format!("epoch {epoch:>2} loss {:.4}", loss.item::<f32>()?));
            bar.inc(1);
        }
        sched.step(&mut opt)?;
    }
    model.eval();
    let acc = accuracy(&model, &xte, &yte)?;
    bar.finish_with_message(format!("test accuracy {:.2} %", 100.0 * acc));
    Ok(acc)
}

fn main() -> Result<()> {
    // Before any thread starts: large per-step blocks then stay faulted in from step to step.
    torch::tune_process_allocator();
    let args: Vec<String> = std::env::args().collect();
    let device: Device = match args.iter().position(|a| a == "--device") {
        Some(i) => args.get(i + 1).map_or("cpu", String::as_str).parse()?,
        None => Device::Cpu,
    };
    if !device.is_cpu() && std::env::var_os("OXTORCH_XLA_MODE").is_none() {
        torch::xla::set_mode(torch::xla::Mode::Fused);
    }
    torch::manual_seed(0);
    let (x, y) = digits::load()?;
    let n = x.dims()[0];
    // A fixed shuffled split: 80 % train, 20 % test.
    let perm = Tensor::rand_with([n], (), Some(&torch::Generator::new(42)))?.argsort(0, false)?;
    let (x, y) = (x.index_select(0, &perm)?, y.index_select(0, &perm)?);
    let ntr = n * 4 / 5;
    let data = (
        x.narrow(0, 0, ntr)?,
        y.narrow(0, 0, ntr)?,
        x.narrow(0, ntr as isize, n - ntr)?,
        y.narrow(0, ntr as isize, n - ntr)?,
    );
    println!("digits: {ntr} training and {} test images", n - ntr);
    let mlp_acc = train("MLP", mlp()?, false, &data, device)?;
    let cnn_acc = train("CNN", cnn()?, true, &data, device)?;
    println!("test accuracy: MLP {:.2} %, CNN {:.2} %", 100.0 * mlp_acc, 100.0 * cnn_acc);
    if mlp_acc < 0.95 || cnn_acc < 0.95 {
        return Err(torch::Error::msg("accuracy below 95 %"));
    }
    Ok(())
}
