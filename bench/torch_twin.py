"""PyTorch twins of oxtorch-bench cases that ../shared/bench/torch_baseline.py does not have.
Same JSON lines, case names, units and work as `cargo run --release -p oxtorch-bench -- CASE`.
Run with the reference venv: `$REFENV/bin/python bench/torch_twin.py`."""
import json, os, statistics, time
import torch

torch.set_num_threads(int(os.environ.get("THREADS", "2")))
torch.manual_seed(0)

def emit(case, value, unit):
    print(json.dumps({"case": case, "value": round(value, 4), "unit": unit}), flush=True)

def timeit(fn, reps=5, warm=1):
    for _ in range(warm): fn()
    ts = []
    for _ in range(reps):
        t = time.perf_counter(); fn(); ts.append(time.perf_counter() - t)
    return statistics.median(ts)

def conv2d():
    x = torch.randn(8, 64, 56, 56); w = torch.randn(64, 64, 3, 3)
    with torch.inference_mode():
        t = timeit(lambda: torch.nn.functional.conv2d(x, w, None, 1, 1))
    emit("conv2d_3x3_c64_56x56_b8", 2 * 8 * 64 * 56 * 56 * 64 * 9 / t / 1e9, "GFLOP/s")

conv2d()

def gemm_f16():
    a = torch.randn(2048, 2048).half(); b = torch.randn(2048, 2048).half()
    with torch.inference_mode():
        t = timeit(lambda: a @ b, reps=7, warm=2)
    emit("gemm_float16_2048", 2 * 2048 ** 3 / t / 1e9, "GFLOP/s")

gemm_f16()
