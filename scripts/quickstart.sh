#!/usr/bin/env bash
# The main job from the README. Until hf-import lands it is the quickstart example:
# tensors are built, combined and printed as torch prints them.
set -euo pipefail
cd "$(dirname "$0")/.."
exec cargo run --release --example quickstart
