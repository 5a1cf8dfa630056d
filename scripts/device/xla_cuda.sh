#!/usr/bin/env bash
# oxtorch's XLA backend on an NVIDIA GPU through JAX's CUDA PJRT plugin: a device-machine script.
#
# Run it on a machine whose python3 has `jax` and `jax-cuda1x-pjrt` (the workplace's H200 image),
# from the repository root, with the x86-64 binaries built here and packed by `pack.sh` in
# `.devbin/` (the machine has no Rust toolchain). It writes logs under $OUT and prints a summary:
#   1. the GPU and the plugin; 2. the XLA bench cases (oxtorch-bench) and their JAX twins on the
#   same plugin; 3. the XLA test binaries (xla_parity, xla_fused, xla_train, xla_generate).
# Each step has its own time limit, and the whole script stops starting steps after $BUDGET s.
set -u
OUT=${OUT:-/tmp/oxtorch-device}
BUDGET=${BUDGET:-420}
mkdir -p "$OUT"
START=$(date +%s)
SUMMARY="$OUT/summary.txt"
note() { echo "$*" | tee -a "$SUMMARY"; }
left() { echo $((BUDGET - ($(date +%s) - START))); }

# The test binaries read fixtures from the absolute paths they were built at.
[ -e /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }

nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.sm,clocks.max.sm --format=csv 2>&1 | tee "$OUT/gpu.txt"
PLUGIN=${PLUGIN:-$(python3 -c 'import glob, os, jax_plugins
for d in jax_plugins.__path__:
    for p in sorted(glob.glob(os.path.join(d, "xla_cuda*", "xla_cuda_plugin.so"))):
        print(p); break' 2>/dev/null | head -1)}
[ -n "$PLUGIN" ] || PLUGIN=$(find /opt /usr /root -name xla_cuda_plugin.so 2>/dev/null | head -1)
note "plugin: $PLUGIN"
python3 -c 'import jax, jaxlib; print("jax", jax.__version__, "jaxlib", jaxlib.__version__, jax.devices())' 2>&1 | tail -1 | tee -a "$SUMMARY"
SITE=$(dirname "$(dirname "$(dirname "$PLUGIN")")")
LIBS=$(find "$SITE/nvidia" -maxdepth 3 -type d -name lib 2>/dev/null | tr '\n' ':')
export LD_LIBRARY_PATH="${LIBS}${LD_LIBRARY_PATH:-}"
export OXTORCH_PJRT_PLUGIN="$PLUGIN" OXTORCH_XLA_CACHE=0

mkdir -p /tmp/bin
for f in .devbin/*.xz; do xz -dc "$f" > "/tmp/bin/$(basename "$f" .xz)"; done
chmod +x /tmp/bin/*

step() { # step NAME SECONDS COMMAND...: runs while budget is left; log in $OUT/NAME.log
    local name=$1 limit=$2; shift 2
    local l; l=$(left)
    if [ "$l" -lt 20 ]; then note "$name: skipped (budget)"; return; fi
    [ "$limit" -gt "$l" ] && limit=$l
    local t0; t0=$(date +%s)
    timeout "$limit" "$@" > "$OUT/$name.log" 2>&1
    local rc=$?
    note "$name: rc=$rc in $(( $(date +%s) - t0 ))s"
    grep -h '"case"' "$OUT/$name.log" | tee -a "$SUMMARY"
    grep -hE "^test result|FAILED|panicked|failures:" "$OUT/$name.log" | head -20 | tee -a "$SUMMARY"
    [ $rc -ne 0 ] && tail -5 "$OUT/$name.log" | tee -a "$SUMMARY"
}

B=/tmp/bin/oxtorch-bench
step smoke 60 $B xla_tiny_op
if ! grep -q '"case"' "$OUT/smoke.log"; then
    # Fail fast, keeping the device time for a second try: what the plugin needs, then stop.
    note "smoke failed: plugin diagnostics"
    ldd "$PLUGIN" 2>&1 | grep -i "not found" | tee -a "$SUMMARY"
    tail -30 "$OUT/smoke.log" | tee -a "$SUMMARY"
    exit 1
fi
step gemm 90 $B xla_gemm_float32_1024 xla_gemm_bfloat16_8192
step jax 120 python3 bench/tools/jax_twin.py gemm gemm8192 mlp sweep
# oxtorch's float32 dots ask for HIGHEST precision (torch's default: no TF32); JAX's default allows TF32.
step jax_highest 60 env JAX_DEFAULT_MATMUL_PRECISION=highest python3 bench/tools/jax_twin.py gemm mlp
step mlp 90 $B xla_mlp_train_step_b256_eager xla_mlp_train_step_b256_fused xla_mlp_infer_batch_sweep_1_128
step gpt 120 $B xla_gpt_small_train_step_b8_s128_eager xla_gpt_small_train_step_b8_s128_fused
step decode 90 $B xla_llama110m_f32_decode_b1
# The persistent compilation cache on this plugin: the second process should compile nothing.
for run in 1 2; do
    step "cache_$run" 60 env OXTORCH_XLA_CACHE=1 OXTORCH_XLA_CACHE_DIR=/tmp/xla-cache OXTORCH_METRICS=1 \
        $B xla_mlp_train_step_b256_fused
    grep -sh oxtorch_metrics "$OUT/cache_$run.log" | cut -c1-400 | tee -a "$SUMMARY"
done
for t in xla_parity xla_fused xla_train xla_generate; do
    [ -x "/tmp/bin/$t" ] && step "test_$t" 120 "/tmp/bin/$t" --test-threads=8
done
note "total: $(( $(date +%s) - START ))s"
