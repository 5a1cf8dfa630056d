//! XLA runtime cases, run on `xla:0` of the plugin named by `OXTORCH_PJRT_PLUGIN` (skipped, with a
//! note on stderr, when it is unset). Twins: `jax_tiny_add_eager_overhead` and
//! `jax_gemm_float32_1024` of `../shared/bench/torch_baseline.py`.

use std::time::Instant;

use oxtorch as torch;
use torch::{DType, Device, Tensor};

const XLA: Device = Device::Xla(0);

/// Whether `OXTORCH_PJRT_PLUGIN` is set (a note on stderr for `case` when not).
pub(crate) fn available(case: &str) -> bool {
    let ok = std::env::var_os("OXTORCH_PJRT_PLUGIN").is_some();
    if !ok {
        eprintln!("{case}: skipped, OXTORCH_PJRT_PLUGIN is unset (export OXTORCH_PJRT_PLUGIN=$(scripts/fetch_pjrt_cpu.sh))");
    }
    ok
}

/// Cached eager dispatch of a 2×3 float32 add on the device, the result left there: the median
/// per-op time of batches of 20,000 ops, each batch ending by waiting for its last result.
pub fn tiny_op() {
    if !available("xla_tiny_op") {
        return;
    }
    let a = Tensor::randn([2, 3], ()).unwrap().to(XLA).unwrap();
    let b = Tensor::randn([2, 3], ()).unwrap().to(XLA).unwrap();
    let inner = 20_000;
    let mut ts: Vec<f64> = (0..7)
        .map(|_| {
            let t = Instant::now();
            let mut last = None;
            for _ in 0..inner {
                last = Some(a.add(&b).unwrap());
            }
            last.unwrap().block_until_ready().unwrap();
            t.elapsed().as_secs_f64() / inner as f64
        })
        .collect();
    ts.sort_by(f64::total_cmp);
    super::emit("xla_tiny_op", ts[ts.len() / 2] * 1e6, "us/op");
}

/// 1024×1024 float32 matmul on the device, waited for (as JAX's `block_until_ready`): the median
/// of 9 averages of 5 calls, timed as its twin in `bench/tools/jax_twin.py` (`gemm`).
pub fn gemm_f32_1024() {
    gemm("xla_gemm_float32_1024", 1024, DType::F32);
}

/// 8192×8192 bfloat16 matmul on the device, timed as `gemm_f32_1024` (twin: `jax_twin.py
/// gemm8192`). Sized for a GPU (1.1 TFLOP a call): the runner runs it only when named.
pub fn gemm_bf16_8192() {
    gemm("xla_gemm_bfloat16_8192", 8192, DType::BF16);
}

/// An `n`×`n` matmul of `dtype` on the device: GFLOP/s of the median of 9 averages of 5 calls.
fn gemm(case: &str, n: usize, dtype: DType) {
    if !available(case) {
        return;
    }
    let a = Tensor::randn([n, n], dtype).unwrap().to(XLA).unwrap();
    let b = Tensor::randn([n, n], dtype).unwrap().to(XLA).unwrap();
    let t = super::timeit(
        || {
            a.matmul(&b).unwrap().block_until_ready().unwrap();
        },
        9,
        2,
        5,
    );
    super::emit(case, 2.0 * (n as f64).powi(3) / t / 1e9, "GFLOP/s");
}

/// Inference of a 256→512→10 MLP head (fused) on every batch size from 1 to 128, each batch
/// uploaded from the host: with `mark_dynamic(0, 128)` (one program per power-of-two bucket) and
/// without (one per size). Emits the programs each sweep built and its wall time, compiles
/// included (run with `OXTORCH_XLA_CACHE=0` so that none is loaded from the persistent cache).
pub fn batch_sweep() {
    if !available("xla_mlp_infer_batch_sweep_1_128") {
        return;
    }
    torch::manual_seed(0);
    let w1 = Tensor::randn([512, 256], ()).unwrap().to(XLA).unwrap();
    let w2 = Tensor::randn([10, 512], ()).unwrap().to(XLA).unwrap();
    let batches: Vec<Tensor> = (1..=128).map(|n| Tensor::randn([n, 256], ()).unwrap()).collect();
    let head = |x: &Tensor| x.matmul(&w1.t()?)?.relu()?.matmul(&w2.t()?)?.softmax(-1, None);
    for dynamic in [true, false] {
        let before = torch::xla::metrics().new_programs();
        let start = Instant::now();
        for batch in &batches {
            let x = batch.to(XLA).unwrap();
            let x = if dynamic { x.mark_dynamic(0, 128).unwrap() } else { x };
            let probs = torch::xla::with_mode(torch::xla::Mode::Fused, || head(&x)).unwrap();
            probs.to("cpu").unwrap();
        }
        let seconds = start.elapsed().as_secs_f64();
        let programs = torch::xla::metrics().new_programs() - before;
        let case = if dynamic {
            "xla_mlp_infer_batch_sweep_1_128_dynamic"
        } else {
            "xla_mlp_infer_batch_sweep_1_128_static"
        };
        super::emit_with(case, seconds, "s", &format!("\"programs\": {programs}"));
    }
}
