//! Wall time and process CPU time of the softmax and conv2d bench cases and of the conv's parts
//! (image by image, its batched GEMM alone and for one image). On a machine shared with other jobs,
//! CPU time with one thread (`RAYON_NUM_THREADS=1`) is the steadier measure; `bench/cpu_time.py` is
//! its PyTorch twin: `cargo run --release -p oxtorch-bench --example cpu_time`.

use std::time::Instant;

use oxtorch as torch;
use torch::Tensor;

/// CPU seconds used by the whole process so far (all threads): on a loaded machine, a steadier
/// measure of the work than wall time.
fn cpu_seconds() -> f64 {
    extern "C" {
        fn clock_gettime(clock: i32, ts: *mut [i64; 2]) -> i32;
    }
    let mut ts = [0i64; 2];
    // SAFETY: CLOCK_PROCESS_CPUTIME_ID (2) with a valid timespec pointer.
    unsafe { clock_gettime(2, &mut ts) };
    ts[0] as f64 + ts[1] as f64 * 1e-9
}

/// Prints the median wall time and CPU time of 7 calls of `f` (after one warm-up call).
fn time(name: &str, flops: f64, mut f: impl FnMut()) {
    f();
    let (mut wall, mut cpu): (Vec<f64>, Vec<f64>) = (0..7)
        .map(|_| {
            let (t, c) = (Instant::now(), cpu_seconds());
            f();
            (t.elapsed().as_secs_f64(), cpu_seconds() - c)
        })
        .unzip();
    wall.sort_by(f64::total_cmp);
    cpu.sort_by(f64::total_cmp);
    let (t, c) = (wall[3], cpu[3]);
    println!("{name:>14}: wall {:8.3} ms {:7.1} GFLOP/s | cpu {:8.3} ms", t * 1e3, flops / t / 1e9, c * 1e3);
}

fn main() {
    torch::manual_seed(0);
    let x = Tensor::randn([8, 64, 56, 56], ()).unwrap();
    let w = Tensor::randn([64, 64, 3, 3], ()).unwrap();
    let cols = Tensor::randn([8, 576, 3136], ()).unwrap();
    let wm = w.reshape([1, 64, 576]).unwrap();
    let flops = 2.0 * 8.0 * 64.0 * 3136.0 * 576.0;
    let xs = Tensor::randn([4096, 1024], ()).unwrap();
    for _ in 0..2 {
        time("softmax", 0.0, || {
            torch::nn::functional::softmax(&xs, -1, None).unwrap();
        });
        time("log_softmax", 0.0, || {
            torch::nn::functional::log_softmax(&xs, -1, None).unwrap();
        });
        time("conv2d", flops, || {
            torch::nn::functional::conv2d(&x, &w, None, &[1, 1], [1, 1], &[1, 1], 1).unwrap();
        });
        time("conv2d 8x1", flops, || {
            let ys: Vec<Tensor> = (0..8)
                .map(|b| {
                    let xb = x.narrow(0, b, 1).unwrap();
                    torch::nn::functional::conv2d(&xb, &w, None, &[1, 1], [1, 1], &[1, 1], 1).unwrap()
                })
                .collect();
            Tensor::cat(&ys.iter().collect::<Vec<_>>(), 0).unwrap();
        });
        time("gemm", flops, || {
            wm.matmul(&cols).unwrap();
        });
        time("gemm 1 img", flops / 8.0, || {
            wm.matmul(&cols.narrow(0, 0, 1).unwrap()).unwrap();
        });
    }
}
