#!/usr/bin/env bash
# Obtains one shared library from a PyPI wheel into a cache outside the repository and prints its
# path. Idempotent: a second run only prints the path. Used for the PJRT plugins, which are never
# committed:
#
#   scripts/fetch_wheel_lib.sh PACKAGE VERSION PATH/IN/WHEEL.so
#
# The cache is $OXTORCH_PJRT_CACHE, else ${XDG_CACHE_HOME:-~/.cache}/oxtorch/pjrt. Progress goes to
# stderr so that stdout holds only the path.
set -euo pipefail

package="$1" version="$2" inner="$3"
cache="${OXTORCH_PJRT_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/oxtorch/pjrt}"
dest="$cache/$package-$version"
so="$dest/$inner"

if [[ ! -f "$so" ]]; then
    mkdir -p "$cache"
    tmp="$(mktemp -d "$cache/.download.XXXXXX")"
    trap 'rm -rf "$tmp"' EXIT
    echo "fetch_wheel_lib: downloading $package==$version into $dest" >&2
    python3 -m pip download --quiet --no-deps --disable-pip-version-check --only-binary=:all: \
        -d "$tmp/wheel" "$package==$version" >&2
    wheel="$(ls "$tmp"/wheel/*.whl)"
    # Only the library's own directory is unpacked (a plugin may bring headers beside it).
    python3 - "$wheel" "$tmp/unpacked" "$(dirname "$inner")" <<'PY'
import sys, zipfile
wheel, out, folder = sys.argv[1:4]
with zipfile.ZipFile(wheel) as z:
    z.extractall(out, [n for n in z.namelist() if n.startswith(folder + "/")])
PY
    if [[ ! -f "$tmp/unpacked/$inner" ]]; then
        echo "fetch_wheel_lib: the $package wheel has no $inner" >&2
        exit 1
    fi
    rm -rf "$dest"
    # Renaming the complete directory into place keeps a concurrent or interrupted run from seeing half a library.
    mv "$tmp/unpacked" "$dest"
fi
echo "$so"
