#!/usr/bin/env bash
# Set up, build into build/, and run every test; exits non-zero on any failure.
# Tests labelled "gpu" skip cleanly where no GPU is visible; run only them with
#   scripts/test.sh -L gpu          (extra arguments go to ctest)
# Where ROCm's hipcc and HIP are installed (Debian: hipcc libamdhip64-dev libhsa-runtime-dev), the
# HIP (AMD) backend is checked too: where build/ took CUDA it is built into build-hip/
# (-DDMABENCH_WERROR=ON) and the same tests run against it (the GPU tests skip without an AMD GPU);
# where there is no nvcc, build/ itself is the HIP build. Without hipcc nothing HIP is built.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
ensure_packages test
build_dmabench  # AUTO: CUDA where nvcc is, else HIP where hipcc is, plus host
# Tests run side by side, one per CPU (DMABENCH_TEST_JOBS to change it); those that time the machine as a whole
# (signals, mpirun, srun, the GPU) are RUN_SERIAL in tests/CMakeLists.txt and run alone.
JOBS="${DMABENCH_TEST_JOBS:-${CTEST_PARALLEL_LEVEL:-$(nproc)}}"
(cd "$BUILD_DIR" && ctest --output-on-failure --parallel "$JOBS" "$@")
# build/ took CUDA: check the HIP backend too where ROCm is installed. The Python suite (label python:
# scripts_1 ... scripts_N, independent of the build), `install_revision` (its own host-only build of a clone:
# ~7 minutes on CI, the same whichever backend build/ has) and the tests labelled host-timing (the host engines'
# sweeps and verdicts, whose code is the same in every build) ran once already.
if [ "${DMABENCH_SKIP_HIP:-0}" != 1 ] && hip_available && grep -q '^DMABENCH_HAVE_CUDA_BACKEND:INTERNAL=ON' "$BUILD_DIR/CMakeCache.txt"; then
  log "HIP backend: building into build-hip/"
  BUILD_DIR="$DMABENCH_ROOT/build-hip" CMAKE_ARGS="-DDMABENCH_CUDA=OFF -DDMABENCH_HIP=ON -DDMABENCH_WERROR=ON ${CMAKE_ARGS:-}" build_dmabench
  (cd "$DMABENCH_ROOT/build-hip" && ctest --output-on-failure --parallel "$JOBS" -E '^install_revision$' -LE '^(python|host-timing)$' "$@")
elif ! hip_available; then
  log "HIP backend not built: no hipcc / HIP CMake package here"
fi
