"""PyTorch twin of `cargo run --release -p oxtorch-bench --example cpu_time`: wall and process CPU time
(median of 7 after one warm-up) of softmax, log_softmax and conv2d. Run with THREADS=1 on a shared
machine and compare CPU times."""
import os, statistics, time
import torch

torch.set_num_threads(int(os.environ.get("THREADS", "2")))
torch.manual_seed(0)

def timeit(name, fn, flops=0.0):
    fn()
    wall, cpu = [], []
    for _ in range(7):
        t, c = time.perf_counter(), time.process_time()
        fn()
        wall.append(time.perf_counter() - t); cpu.append(time.process_time() - c)
    t, c = statistics.median(wall), statistics.median(cpu)
    rate = f"{flops / t / 1e9:7.1f} GFLOP/s" if flops else " " * 15
    print(f"{name:>14}: wall {t * 1e3:8.3f} ms {rate} | cpu {c * 1e3:8.3f} ms", flush=True)

xs = torch.randn(4096, 1024)
x = torch.randn(8, 64, 56, 56); w = torch.randn(64, 64, 3, 3)
with torch.inference_mode():
    for _ in range(2):
        timeit("softmax", lambda: torch.softmax(xs, -1))
        timeit("log_softmax", lambda: torch.log_softmax(xs, -1))
        timeit("conv2d", lambda: torch.nn.functional.conv2d(x, w, None, 1, 1), 2 * 8 * 64 * 56 * 56 * 64 * 9)
