#!/usr/bin/env bash
# Set up, build into build/, and run every test; exits non-zero on any failure.
# Tests labelled "gpu" skip cleanly where no GPU is visible; run only them with
#   scripts/test.sh -L gpu          (extra arguments go to ctest)
# Where ROCm's hipcc and HIP are installed (Debian: hipcc libamdhip64-dev libhsa-runtime-dev), the
# HIP (AMD) backend is built too, into build-hip/ (-DDMABENCH_WERROR=ON), and the same tests run
# against it: on a machine without an AMD GPU the GPU tests skip. build/ then keeps its meaning
# (CUDA + host where nvcc is, else host only). Without hipcc the HIP build is skipped, never failed.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
ensure_packages
with_hip=0
if [ "${DMABENCH_SKIP_HIP:-0}" != 1 ] && hip_available; then with_hip=1; fi
if [ $with_hip = 1 ]; then
  CMAKE_ARGS="-DDMABENCH_HIP=OFF ${CMAKE_ARGS:-}" build_dmabench
else
  build_dmabench
fi
(cd "$BUILD_DIR" && ctest --output-on-failure "$@")
if [ $with_hip = 1 ]; then
  log "HIP backend: building into build-hip/"
  BUILD_DIR="$DMABENCH_ROOT/build-hip" CMAKE_ARGS="-DDMABENCH_CUDA=OFF -DDMABENCH_HIP=ON -DDMABENCH_WERROR=ON ${CMAKE_ARGS:-}" build_dmabench
  (cd "$DMABENCH_ROOT/build-hip" && ctest --output-on-failure "$@")
else
  log "HIP backend not built: no hipcc / HIP CMake package here (DMABENCH_SKIP_HIP=${DMABENCH_SKIP_HIP:-0})"
fi
