#!/usr/bin/env bash
# Obtains libtpu (PyPI `libtpu`, the TPU PJRT plugin) into a cache outside the repository and prints
# the path of libtpu.so (see fetch_wheel_lib.sh). The tests load it on a machine without a TPU and
# expect the clean "no TPU found" error.
#
#   export OXTORCH_LIBTPU="$(scripts/fetch_libtpu.sh)"
set -euo pipefail
exec "$(dirname "$0")/fetch_wheel_lib.sh" libtpu "${LIBTPU_VERSION:-0.0.52}" libtpu/libtpu.so
