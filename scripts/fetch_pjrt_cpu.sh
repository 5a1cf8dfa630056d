#!/usr/bin/env bash
# Obtains the OpenXLA CPU PJRT plugin (PyPI `xla-cpu-pjrt`) into a cache outside the repository and
# prints the path of its shared library (see fetch_wheel_lib.sh).
#
#   export OXTORCH_PJRT_PLUGIN="$(scripts/fetch_pjrt_cpu.sh)"
set -euo pipefail
exec "$(dirname "$0")/fetch_wheel_lib.sh" xla-cpu-pjrt "${XLA_CPU_PJRT_VERSION:-0.0.1}" \
    xla_plugins/xla_cpu_pjrt/xla_cpu_pjrt.so
