//! Training-step cases: `mlp_train_step_b256` and `gpt_small_train_step_b8_s128`, the same models,
//! optimizer and batch as `../shared/bench/torch_baseline.py`.

use oxtorch as torch;
use torch::nn::optim::{AdamOptions, AdamW, Optimizer};
use torch::nn::{Forward, Linear, ModuleExt, ReLU, Sequential};
use torch::{DType, Tensor};

#[path = "../../examples/common/gpt.rs"]
pub(crate) mod gpt;

use crate::{emit, timeit};

/// The MLP of `mlp_train_step_b256`: 784-1024-1024-10 with ReLUs (seeded by the caller).
pub(crate) fn mlp_model() -> Sequential {
    Sequential::new()
        .add(Linear::new(784, 1024, true).unwrap())
        .add(ReLU {})
        .add(Linear::new(1024, 1024, true).unwrap())
        .add(ReLU {})
        .add(Linear::new(1024, 10, true).unwrap())
}

/// MLP 784-1024-1024-10, batch 256, AdamW(lr=1e-3), cross-entropy.
pub fn mlp_train_step() {
    torch::manual_seed(0);
    let m = mlp_model();
    let mut opt = AdamW::new(m.parameters(), AdamOptions { lr: 1e-3, ..AdamW::default_options() }).unwrap();
    let x = Tensor::randn([256, 784], ()).unwrap();
    let y = Tensor::randint(0, 10, [256], DType::I64).unwrap();
    let t = timeit(
        || {
            opt.zero_grad().unwrap();
            let loss = m.forward(&x).unwrap().cross_entropy(&y, None, -100, "mean", 0.0).unwrap();
            loss.backward().unwrap();
            opt.step().unwrap();
        },
        7,
        2,
        5,
    );
    emit("mlp_train_step_b256", 1.0 / t, "steps/s");
}

/// GPT-2-style (256 wide, 4 layers, 4 heads, vocab 8192), batch 8 x 128, AdamW(lr=1e-4).
pub fn gpt_train_step() {
    torch::manual_seed(0);
    let cfg = gpt::GptConfig { vocab_size: 8192, n_positions: 256, n_embd: 256, n_layer: 4, n_head: 4 };
    let m = gpt::Gpt::new(cfg).unwrap();
    let mut opt = AdamW::new(m.parameters(), AdamOptions { lr: 1e-4, ..AdamW::default_options() }).unwrap();
    let ids = Tensor::randint(0, 8192, [8, 128], DType::I64).unwrap();
    let t = timeit(
        || {
            opt.zero_grad().unwrap();
            m.loss(&ids).unwrap().backward().unwrap();
            opt.step().unwrap();
        },
        5,
        2,
        1,
    );
    emit("gpt_small_train_step_b8_s128", 8.0 * 128.0 / t, "tokens/s");
}
