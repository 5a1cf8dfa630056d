//! The side-by-side bench runner: `cargo run --release -p oxtorch-bench -- [CASE...]`.
//!
//! Prints one JSON line per case, `{"case": ..., "value": ..., "unit": ...}`, with the same case names,
//! units and work as `../shared/bench/torch_baseline.py`, so that both can run in one session and be
//! compared as ratios (see BENCHMARKS.md). With no argument every case runs.

mod hf;
mod memory;
mod train;
mod xla;
mod xla_train;

use std::time::Instant;

use oxtorch as torch;
use torch::{DType, Tensor};

/// Median seconds per call of `f` over `reps` timed runs of `inner` calls, after `warm` calls.
fn timeit(mut f: impl FnMut(), reps: usize, warm: usize, inner: usize) -> f64 {
    // `OXTORCH_BENCH_REPS=K` times more timed repetitions, for a steadier median on a noisy machine.
    let reps =
        reps * std::env::var("OXTORCH_BENCH_REPS").ok().and_then(|v| v.parse().ok()).unwrap_or(1).max(1);
    for _ in 0..warm {
        f();
    }
    let mut ts: Vec<f64> = (0..reps)
        .map(|_| {
            let t = Instant::now();
            for _ in 0..inner {
                f();
            }
            t.elapsed().as_secs_f64() / inner as f64
        })
        .collect();
    ts.sort_by(f64::total_cmp);
    ts[ts.len() / 2]
}

fn emit(case: &str, value: f64, unit: &str) {
    println!("{{\"case\": \"{case}\", \"value\": {:.4}, \"unit\": \"{unit}\"}}", value);
}

/// [`emit`] with more JSON fields (`extra`: `"name": value, ...`) after the unit.
fn emit_with(case: &str, value: f64, unit: &str, extra: &str) {
    println!("{{\"case\": \"{case}\", \"value\": {:.4}, \"unit\": \"{unit}\", {extra}}}", value);
}

fn gemm(n: usize, dtype: DType) {
    let a = Tensor::randn([n, n], dtype).unwrap();
    let b = Tensor::randn([n, n], dtype).unwrap();
    let t = timeit(
        || {
            a.matmul(&b).unwrap();
        },
        7,
        2,
        1,
    );
    emit(&format!("gemm_{}_{n}", dtype.name()), 2.0 * (n as f64).powi(3) / t / 1e9, "GFLOP/s");
}

/// `[m, k] · [k, n]` in `dtype`, named `gemm_{dtype}_{m}x{k}x{n}` (twin: `bench/torch_twin.py
/// gemm_bf16_shapes`): the products of a transformer layer, where packing weighs more than at 2048³.
fn gemm_shape(m: usize, k: usize, n: usize, dtype: DType) {
    let a = Tensor::randn([m, k], dtype).unwrap();
    let b = Tensor::randn([k, n], dtype).unwrap();
    let t = timeit(
        || {
            a.matmul(&b).unwrap();
        },
        7,
        2,
        1,
    );
    let flops = 2.0 * (m * k * n) as f64;
    emit(&format!("gemm_{}_{m}x{k}x{n}", dtype.name()), flops / t / 1e9, "GFLOP/s");
}

fn add_f32_16m() {
    let n = 16 * 1024 * 1024;
    let a = Tensor::randn([n], ()).unwrap();
    let b = Tensor::randn([n], ()).unwrap();
    let t = timeit(
        || {
            a.add(&b).unwrap();
        },
        9,
        2,
        1,
    );
    emit("add_f32_16M", 3.0 * 4.0 * n as f64 / t / 1e9, "GB/s");
}

fn gelu_f32_16m() {
    let n = 16 * 1024 * 1024;
    let a = Tensor::randn([n], ()).unwrap();
    let t = timeit(
        || {
            torch::nn::functional::gelu(&a, "none").unwrap();
        },
        9,
        2,
        1,
    );
    emit("gelu_f32_16M", n as f64 / t / 1e9, "Gelem/s");
}

/// `add_{f16,bf16}_16M` and `gelu_{f16,bf16}_16M`: the f32 cases' work in a half type (twin:
/// bench/torch_twin.py). Units as the f32 cases: bytes moved (2 per element) and elements.
fn half_elementwise(dtype: DType, name: &str) {
    let n = 16 * 1024 * 1024;
    let a = Tensor::randn([n], ()).unwrap().to_dtype(dtype).unwrap();
    let b = Tensor::randn([n], ()).unwrap().to_dtype(dtype).unwrap();
    let t = timeit(
        || {
            a.add(&b).unwrap();
        },
        9,
        2,
        1,
    );
    emit(&format!("add_{name}_16M"), 3.0 * 2.0 * n as f64 / t / 1e9, "GB/s");
    let t = timeit(
        || {
            torch::nn::functional::gelu(&a, "none").unwrap();
        },
        9,
        2,
        1,
    );
    emit(&format!("gelu_{name}_16M"), n as f64 / t / 1e9, "Gelem/s");
}

/// conv2d 3×3, 64 → 64 channels, 56×56, batch 8, padding 1 (twin: bench/torch_twin.py).
fn conv2d() {
    let x = Tensor::randn([8, 64, 56, 56], ()).unwrap();
    let w = Tensor::randn([64, 64, 3, 3], ()).unwrap();
    let t = timeit(
        || {
            torch::nn::functional::conv2d(&x, &w, None, &[1, 1], [1, 1], &[1, 1], 1).unwrap();
        },
        5,
        1,
        1,
    );
    let flops = 2.0 * 8.0 * 64.0 * 56.0 * 56.0 * 64.0 * 9.0;
    emit("conv2d_3x3_c64_56x56_b8", flops / t / 1e9, "GFLOP/s");
}

fn softmax() {
    let x = Tensor::randn([4096, 1024], ()).unwrap();
    let t = timeit(
        || {
            torch::nn::functional::softmax(&x, -1, None).unwrap();
        },
        9,
        2,
        1,
    );
    emit("softmax_4096x1024", x.numel() as f64 / t / 1e9, "Gelem/s");
}

fn tiny_add_overhead() {
    let s = Tensor::randn([2, 3], ()).unwrap();
    let s2 = Tensor::randn([2, 3], ()).unwrap();
    let t = timeit(
        || {
            s.add(&s2).unwrap();
        },
        5,
        1,
        20_000,
    );
    emit("tiny_add_overhead", t * 1e6, "us/op");
}

type Case = (&'static str, fn());

const CASES: &[Case] = &[
    ("gemm_float32_1024", || gemm(1024, DType::F32)),
    ("gemm_float32_2048", || gemm(2048, DType::F32)),
    ("gemm_bfloat16_2048", || gemm(2048, DType::BF16)),
    ("gemm_float16_2048", || gemm(2048, DType::F16)),
    ("gemm_bfloat16_4096x768x768", || gemm_shape(4096, 768, 768, DType::BF16)),
    ("gemm_bfloat16_256x768x3072", || gemm_shape(256, 768, 3072, DType::BF16)),
    ("gemm_bfloat16_128x2048x2048", || gemm_shape(128, 2048, 2048, DType::BF16)),
    ("add_f32_16M", add_f32_16m),
    ("gelu_f32_16M", gelu_f32_16m),
    ("elementwise_f16_16M", || half_elementwise(DType::F16, "f16")),
    ("elementwise_bf16_16M", || half_elementwise(DType::BF16, "bf16")),
    ("softmax_4096x1024", softmax),
    ("tiny_add_overhead", tiny_add_overhead),
    ("conv2d_3x3_c64_56x56_b8", conv2d),
    ("mlp_train_step_b256", train::mlp_train_step),
    ("gpt_small_train_step_b8_s128", train::gpt_train_step),
    ("minilm_load", hf::minilm_load),
    ("minilm_b32_s128", hf::minilm_b32_s128),
    ("minilm_encode_b32", hf::minilm_encode_b32),
    ("llama110m_embed_b32", hf::llama110m_embed_b32),
    ("llama110m_f32_decode_b1", hf::llama110m_f32_decode_b1),
    ("llama110m_bf16_decode_b1", hf::llama110m_bf16_decode_b1),
    ("llama110m_f16_decode_b1", hf::llama110m_f16_decode_b1),
    ("llama110m_f32_generate_peak_memory", memory::llama110m_f32_peak_memory),
    ("llama110m_bf16_cast_generate_peak_memory", memory::llama110m_bf16_cast_peak_memory),
    ("xla_tiny_op", xla::tiny_op),
    ("xla_gemm_float32_1024", xla::gemm_f32_1024),
    ("xla_mlp_infer_batch_sweep_1_128", xla::batch_sweep),
    ("xla_mlp_train_step_b256_eager", xla_train::mlp_eager),
    ("xla_mlp_train_step_b256_fused", xla_train::mlp_fused),
    ("xla_gpt_small_train_step_b8_s128_eager", xla_train::gpt_eager),
    ("xla_gpt_small_train_step_b8_s128_fused", xla_train::gpt_fused),
    ("xla_llama110m_f32_decode_b1", hf::xla_llama110m_f32_decode_b1),
];

/// Cases sized for an accelerator, run only when named (on this machine's CPUs they take minutes).
const NAMED_ONLY: &[Case] = &[("xla_gemm_bfloat16_8192", xla::gemm_bf16_8192)];

/// Large blocks on 64-byte boundaries, as PyTorch's allocator places its tensors.
#[global_allocator]
static ALLOCATOR: torch::AlignedAllocator = torch::AlignedAllocator;

fn main() {
    // First, before any thread starts; both eager and fused cases run under it (see BENCHMARKS.md).
    torch::tune_process_allocator();
    torch::manual_seed(0);
    let wanted: Vec<String> = std::env::args().skip(1).collect();
    if let [flag, dir, dtype] = wanted.as_slice() {
        if flag == memory::CHILD_FLAG {
            return memory::child(std::path::Path::new(dir), dtype);
        }
    }
    for name in &wanted {
        if !CASES.iter().chain(NAMED_ONLY).any(|(c, _)| c == name) {
            let known: Vec<&str> = CASES.iter().chain(NAMED_ONLY).map(|(c, _)| *c).collect();
            eprintln!("unknown case '{name}'; known cases: {}", known.join(", "));
            std::process::exit(2);
        }
    }
    for (name, run) in CASES {
        if wanted.is_empty() || wanted.iter().any(|w| w == name) {
            run();
        }
    }
    for (name, run) in NAMED_ONLY {
        if wanted.iter().any(|w| w == name) {
            run();
        }
    }
}
