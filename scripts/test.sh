#!/usr/bin/env bash
# Set up, build into build/, and run every test; exits non-zero on any failure.
# Tests labelled "gpu" skip cleanly where no GPU is visible; run only them with
#   scripts/test.sh -L gpu          (extra arguments go to ctest)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
ensure_packages
build_dmabench
cd "$BUILD_DIR"
ctest --output-on-failure "$@"
