//! Training steps on `xla:0` (the plugin named by `OXTORCH_PJRT_PLUGIN`), in strict eager mode and
//! in fused mode (the whole step deferred and run as one program at the optimizer step): the same
//! models, optimizer and batches as `mlp_train_step_b256` and `gpt_small_train_step_b8_s128`. The
//! JAX twin of the MLP case (`jax_mlp_train_step_b256`, one `jax.jit` step) is `bench/jax_twin.py`.

use oxtorch as torch;
use torch::nn::optim::{AdamOptions, AdamW, Optimizer};
use torch::nn::{Forward, ModuleExt};
use torch::xla::Mode;
use torch::{DType, Device, Tensor};

use super::train::gpt;
use crate::{emit, timeit};

const XLA: Device = Device::Xla(0);

fn mlp(mode: Mode, case: &str) {
    if !super::xla::available(case) {
        return;
    }
    torch::xla::with_mode(mode, || {
        torch::manual_seed(0);
        let mut m = super::train::mlp_model();
        m.to(XLA).unwrap();
        let params = m.parameters();
        let mut opt =
            AdamW::new(params.clone(), AdamOptions { lr: 1e-3, ..AdamW::default_options() }).unwrap();
        let x = Tensor::randn([256, 784], ()).unwrap().to(XLA).unwrap();
        let y = Tensor::randint(0, 10, [256], DType::I64).unwrap().to(XLA).unwrap();
        let t = timeit(
            || {
                opt.zero_grad().unwrap();
                let loss = m.forward(&x).unwrap().cross_entropy(&y, None, -100, "mean", 0.0).unwrap();
                loss.backward().unwrap();
                opt.step().unwrap();
                params[0].block_until_ready().unwrap();
            },
            7,
            2,
            5,
        );
        emit(case, 1.0 / t, "steps/s");
    })
}

fn gpt_step(mode: Mode, case: &str) {
    if !super::xla::available(case) {
        return;
    }
    torch::xla::with_mode(mode, || {
        torch::manual_seed(0);
        let cfg = gpt::GptConfig { vocab_size: 8192, n_positions: 256, n_embd: 256, n_layer: 4, n_head: 4 };
        let mut m = gpt::Gpt::new(cfg).unwrap();
        m.to(XLA).unwrap();
        let params = m.parameters();
        let mut opt =
            AdamW::new(params.clone(), AdamOptions { lr: 1e-4, ..AdamW::default_options() }).unwrap();
        let ids = Tensor::randint(0, 8192, [8, 128], DType::I64).unwrap().to(XLA).unwrap();
        let t = timeit(
            || {
                opt.zero_grad().unwrap();
                m.loss(&ids).unwrap().backward().unwrap();
                opt.step().unwrap();
                params[0].block_until_ready().unwrap();
            },
            5,
            2,
            1,
        );
        emit(case, 8.0 * 128.0 / t, "tokens/s");
    })
}

/// `xla_mlp_train_step_b256_eager`.
pub fn mlp_eager() {
    mlp(Mode::Eager, "xla_mlp_train_step_b256_eager");
}

/// `xla_mlp_train_step_b256_fused`.
pub fn mlp_fused() {
    mlp(Mode::Fused, "xla_mlp_train_step_b256_fused");
}

/// `xla_gpt_small_train_step_b8_s128_eager`.
pub fn gpt_eager() {
    gpt_step(Mode::Eager, "xla_gpt_small_train_step_b8_s128_eager");
}

/// `xla_gpt_small_train_step_b8_s128_fused`.
pub fn gpt_fused() {
    gpt_step(Mode::Fused, "xla_gpt_small_train_step_b8_s128_fused");
}
