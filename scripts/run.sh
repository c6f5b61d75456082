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
  rc=0
  "$BUILD_DIR/dmabench" --config configs/quick.json --out results/latest.json || rc=$?
  echo "next: python3 scripts/summarize.py results/latest.json   (its tables); $BUILD_DIR/dmabench --presets   (what" \
    "else to measure); docs/user-guide.md   (sweeps, results, comparing runs)"
  exit "$rc"
fi
exec "$BUILD_DIR/dmabench" "$@"
