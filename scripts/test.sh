#!/usr/bin/env bash
# The test command from the README: formatting, lints, the whole test suite, and a bench smoke run.
# Needs only Rust: the PyTorch reference values are committed (tests/golden/*.safetensors).
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TERM_COLOR=never
# A one-shot run on a clean clone: incremental caches would only cost disk.
export CARGO_INCREMENTAL=0
# The XLA backend's tests run against the OpenXLA CPU PJRT plugin, fetched once into ~/.cache.
OXTORCH_PJRT_PLUGIN="$(scripts/fetch_pjrt_cpu.sh)"
export OXTORCH_PJRT_PLUGIN
# libtpu, loaded on this TPU-less machine: the test expects a clean "no TPU found", not a hang.
OXTORCH_LIBTPU="$(scripts/fetch_libtpu.sh)"
export OXTORCH_LIBTPU
cargo fmt --all -- --check
cargo clippy --workspace --all-targets --all-features -- -D warnings
cargo test --workspace --all-features
# The criterion benches build and run once each (no timing is asserted anywhere).
cargo bench --bench cpu_ops -- --test
