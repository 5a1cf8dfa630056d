#!/usr/bin/env bash
# The XLA backend on an NVIDIA GPU, through JAX's CUDA PJRT plugin: the op parity suite and the xla
# bench cases, with JAX jit on the same XLA as the twin. Runs on a machine that has a GPU, python3
# with `jax` + `jax-cuda13-pjrt` (or -cuda12-) installed, and the binaries prepared beside this repo
# by `scripts/device/prepare.sh` in `.dev/` (built on an x86-64 Linux host; no Rust needed here).
# Writes everything to $OUT (default /tmp/oxtorch-cuda) and prints a summary.
set -uo pipefail
cd "$(dirname "$0")/../.."
# prepare.sh's binaries travel compressed (a device call carries at most 64 MiB).
[ -d .dev ] || { [ -f .devz/dev.tar.xz ] && tar -xJf .devz/dev.tar.xz; }
OUT=${OUT:-/tmp/oxtorch-cuda}
mkdir -p "$OUT"
log="$OUT/cuda_check.log"
exec > >(tee "$log") 2>&1

nvidia-smi -L || true
# The plugin and the NVIDIA libraries it loads at run time, from the Python packages.
eval "$(python3 - <<'PY'
import glob, importlib, os
plugin = ""
for name in ("jax_plugins.xla_cuda13", "jax_plugins.xla_cuda12"):
    try:
        m = importlib.import_module(name)
    except Exception:
        continue
    so = glob.glob(os.path.join(os.path.dirname(m.__file__), "*.so"))
    if so:
        plugin = so[0]
        break
libs = set()
try:
    import nvidia
    for root in nvidia.__path__:
        for so in glob.glob(os.path.join(root, "**", "lib*.so*"), recursive=True):
            libs.add(os.path.dirname(so))
except Exception:
    pass
print(f"export OXTORCH_PJRT_PLUGIN='{plugin}'")
print("export LD_LIBRARY_PATH='" + ":".join(sorted(libs)) + ":" + os.environ.get("LD_LIBRARY_PATH", "") + "'")
PY
)"
echo "plugin: $OXTORCH_PJRT_PLUGIN"
[ -n "$OXTORCH_PJRT_PLUGIN" ] || { echo "no CUDA PJRT plugin found"; exit 1; }
export OXTORCH_XLA_CACHE=0 OXTORCH_METRICS=1

# Each step has its own time limit so that one slow step cannot eat the whole device lease.
run() { local limit=$1; shift; echo "-- $*"; timeout "$limit" "$@" 2>&1 | grep -E "^test |test result|panicked|left|right|FAILED|error" | tail -60; }
echo "== parity suite on xla (CUDA plugin)"
run 150 .dev/test-xla_parity --test-threads 1
run 60 .dev/test-xla_train --test-threads 1
echo "== lowerings vs the CPU backend (a subset: every program compiles separately)"
run 150 .dev/test-lowering --test-threads 1 basic:: index::

echo "== bench cases"
timeout 90 .dev/oxtorch-bench xla_tiny_op xla_gemm_float32_1024 2>&1 | tail -20

echo "== JAX twin (same XLA)"
timeout 90 python3 - <<'PY'
import time, json
import jax, jax.numpy as jnp
print("jax", jax.__version__, jax.devices())
def bench(f, *args, reps=50):
    f(*args).block_until_ready()
    best = 1e9
    for _ in range(5):
        t = time.perf_counter()
        for _ in range(reps):
            out = f(*args)
        out.block_until_ready()
        best = min(best, (time.perf_counter() - t) / reps)
    return best
a = jnp.ones((1024, 1024), jnp.float32); b = jnp.ones((1024, 1024), jnp.float32)
mm = jax.jit(lambda x, y: x @ y)
t = bench(mm, a, b)
print(json.dumps({"case": "jax_gemm_float32_1024", "value": 2 * 1024**3 / t / 1e9, "unit": "GFLOP/s"}))
x = jnp.ones((2, 3), jnp.float32)
add = lambda x: x + x
t = bench(add, x, reps=2000)
print(json.dumps({"case": "jax_tiny_add_eager", "value": t * 1e6, "unit": "us"}))
PY
echo "== done"
