#!/usr/bin/env bash
# Builds what `scripts/device/cuda_check.sh` runs on a GPU machine that has no Rust toolchain:
# the XLA test binaries and the bench runner, release-built and stripped, into `.dev/` (ignored by
# git; carry it to the device machine beside the repo).
set -euo pipefail
cd "$(dirname "$0")/../.."
rm -rf .dev && mkdir -p .dev
tests=(-p oxtorch-tensor --test xla_parity --test xla_metrics -p oxtorch-backend-tpu --test lowering
       -p oxtorch --test xla_train)
cargo test --release --no-run "${tests[@]}" --message-format=json 2>/dev/null \
  | python3 -c '
import json, sys, shutil, os
for line in sys.stdin:
    try:
        m = json.loads(line)
    except ValueError:
        continue
    exe = m.get("executable")
    if m.get("reason") == "compiler-artifact" and exe and m.get("profile", {}).get("test"):
        dst = os.path.join(".dev", "test-" + m["target"]["name"])
        shutil.copy(exe, dst)
        print(dst)
'
cargo build --release -p oxtorch-bench
cp target/release/oxtorch-bench .dev/
strip .dev/* 2>/dev/null || true
du -sh .dev/*
