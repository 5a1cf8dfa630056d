#!/usr/bin/env bash
# Packs the release binaries that `xla_cuda.sh` runs on the device machine into `.devbin/`
# (stripped, xz-compressed; ignored by git, carried with the device call).
# Build first: cargo build --release -p oxtorch-bench and
# cargo test --release --no-run -p oxtorch-tensor --test xla_parity --test xla_fused (and
# -p oxtorch --test xla_train, -p oxtorch-hf-import --test xla_generate).
set -euo pipefail
cd "$(dirname "$0")/../.."
grep -qx '/.devbin/' .git/info/exclude 2>/dev/null || echo '/.devbin/' >> .git/info/exclude
rm -rf .devbin && mkdir .devbin
pack() { # pack NAME PATH
    strip -o ".devbin/$1" "$2" && xz -T2 -6 ".devbin/$1"
}
pack oxtorch-bench target/release/oxtorch-bench
for t in "$@"; do
    bin=$(ls -t target/release/deps/"$t"-* 2>/dev/null | grep -v '\.d$' | head -1)
    [ -n "$bin" ] && pack "$t" "$bin" || echo "no release test binary for $t" >&2
done
du -ch .devbin/* | tail -1
