#!/usr/bin/env bash
# Set up, build into build/, and run build/dmabench.
# With no arguments: --config configs/quick.json --out results/latest.json on the best backend
# present (cuda when a GPU is visible, else host). Otherwise the arguments go to dmabench as given.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
ensure_packages
build_dmabench
cd "$DMABENCH_ROOT"
if [ $# -eq 0 ]; then
  set -- --config configs/quick.json --out results/latest.json
fi
exec "$BUILD_DIR/dmabench" "$@"
