#!/usr/bin/env bash
# Obtains the OpenXLA CPU PJRT plugin (PyPI `xla-cpu-pjrt`) into a cache outside the repository and
# prints the path of its shared library. Idempotent: a second run only prints the path.
#
#   export OXTORCH_PJRT_PLUGIN="$(scripts/fetch_pjrt_cpu.sh)"
#
# The cache is $OXTORCH_PJRT_CACHE, else ${XDG_CACHE_HOME:-~/.cache}/oxtorch/pjrt. The .so is never
# committed. Progress goes to stderr so that stdout holds only the path.
set -euo pipefail

version="${XLA_CPU_PJRT_VERSION:-0.0.1}"
cache="${OXTORCH_PJRT_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/oxtorch/pjrt}"
dest="$cache/xla-cpu-pjrt-$version"
so="$dest/xla_plugins/xla_cpu_pjrt/xla_cpu_pjrt.so"

if [[ ! -f "$so" ]]; then
    mkdir -p "$cache"
    tmp="$(mktemp -d "$cache/.download.XXXXXX")"
    trap 'rm -rf "$tmp"' EXIT
    echo "fetch_pjrt_cpu: downloading xla-cpu-pjrt==$version into $dest" >&2
    python3 -m pip download --quiet --no-deps --disable-pip-version-check -d "$tmp/wheel" \
        "xla-cpu-pjrt==$version" >&2
    wheel="$(ls "$tmp"/wheel/*.whl)"
    python3 -c 'import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2])' "$wheel" "$tmp/unpacked"
    if [[ ! -f "$tmp/unpacked/xla_plugins/xla_cpu_pjrt/xla_cpu_pjrt.so" ]]; then
        echo "fetch_pjrt_cpu: the wheel has no xla_plugins/xla_cpu_pjrt/xla_cpu_pjrt.so" >&2
        exit 1
    fi
    rm -rf "$dest"
    # Renaming the complete directory into place keeps a concurrent or interrupted run from seeing half a plugin.
    mv "$tmp/unpacked" "$dest"
fi
echo "$so"
