#!/usr/bin/env bash
# The README's test command on a GPU machine, with its log kept: runs scripts/test.sh (setup, build, every
# ctest entry: the CPU tests and the GPU tests, gpu_engines, cli_gpu_sweep, cli_mpi_gpu) and writes the whole
# output to results/<machine>/gpu-check/<revision>.log, with what ran where at its top and a verdict at its end.
# A change to GPU code is done only with this log, from the final code, committed (docs/testing.md).
#
# usage: scripts/gpu-check.sh [--machine NAME] [CTEST ARGS...]
#   --machine NAME  the results folder (default: from nvidia-smi, e.g. h200x1 for one NVIDIA H200)
#   CTEST ARGS      passed on to scripts/test.sh (e.g. -L gpu for the GPU tests alone; the log then says so)
# Environment: DMABENCH_GIT_REVISION names the revision where the tree has no .git (a copy of it); the other
# variables of scripts/test.sh apply; CTEST_PARALLEL_LEVEL (default: every core) runs the CPU tests side by side.
# NCCL_NVLS_ENABLE=0 is set (NVLink multicast stays off).
# Exit: scripts/test.sh's status; 1 also when a GPU test was skipped on this GPU machine (gpu_engines and
# cli_gpu_sweep must run here; cli_mpi_gpu may skip without mpirun, with the reason in the log); 2: bad input
# or no GPU visible (then there is nothing to check: run scripts/test.sh).
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
machine=""
if [ "${1:-}" = "--machine" ]; then
  [ $# -ge 2 ] && [[ "$2" =~ ^[A-Za-z0-9._-]+$ ]] || { echo "gpu-check.sh: --machine needs a name of letters, digits, '.', '_' or '-'" >&2; exit 2; }
  machine="$2"
  shift 2
fi

gpus=""
command -v nvidia-smi >/dev/null 2>&1 && gpus="$(nvidia-smi -L 2>/dev/null | grep '^GPU ' || true)"
if [ -z "$gpus" ] && command -v rocm-smi >/dev/null 2>&1; then
  gpus="$(rocm-smi --showproductname 2>/dev/null | grep -i 'card series' || true)"
fi
if [ -z "$gpus" ]; then
  echo "gpu-check.sh: no GPU visible (nvidia-smi -L / rocm-smi list none): the GPU tests would only skip; run scripts/test.sh" >&2
  exit 2
fi
count=$(printf '%s\n' "$gpus" | wc -l)
if [ -z "$machine" ]; then
  # "GPU 0: NVIDIA H200 (UUID: ...)" -> h200x1
  model=$(printf '%s\n' "$gpus" | head -n 1 | sed -E 's/^GPU [0-9]+: //; s/ \(UUID.*//; s/^NVIDIA //' | tr 'A-Z ' 'a-z-')
  [[ "$model" =~ ^[a-z0-9._-]+$ ]] || { echo "gpu-check.sh: cannot name this machine from '$model': give --machine NAME" >&2; exit 2; }
  machine="${model}x${count}"
fi

rev="${DMABENCH_GIT_REVISION:-}"
[ -z "$rev" ] && rev=$(git -C "$ROOT" describe --always --dirty --abbrev=12 2>/dev/null || true)
[ -z "$rev" ] && rev="unknown"
dir="$ROOT/results/$machine/gpu-check"
mkdir -p "$dir" || { echo "gpu-check.sh: cannot create $dir" >&2; exit 2; }
log="$dir/$rev.log"
export NCCL_NVLS_ENABLE=0
# the CPU tests run side by side on the GPU machine's cores (CI runs them one at a time); the GPU tests are
# RUN_SERIAL (tests/CMakeLists.txt): nothing runs beside them
export CTEST_PARALLEL_LEVEL="${CTEST_PARALLEL_LEVEL:-$(nproc)}"

{
  echo "# dmabench gpu-check: scripts/test.sh $*"
  echo "# revision $rev; $(date -u +%Y-%m-%dT%H:%M:%SZ); host $(hostname); $(uname -srm)"
  printf '%s\n' "$gpus" | sed 's/^/# /'
  command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi --query-gpu=driver_version --format=csv,noheader 2>/dev/null | head -n 1 | sed 's/^/# driver /'
} >"$log"
start=$(date +%s)
CMAKE_ARGS="-DDMABENCH_GIT_REVISION=$rev ${CMAKE_ARGS:-}" bash "$ROOT/scripts/test.sh" "$@" 2>&1 | tee -a "$log"
rc=${PIPESTATUS[0]}

# GPU tests that skipped on this GPU machine: the check did not check them
skipped=$(grep -E 'Test +#[0-9]+: (gpu_engines|cli_gpu_sweep|cli_mpi_gpu) .*Skipped' "$log" | sed -E 's/.*: ([a-z_]+) .*/\1/' | sort -u | tr '\n' ' ')
verdict="PASS"
[ "$rc" -ne 0 ] && verdict="FAIL (scripts/test.sh exit $rc)"
for t in $skipped; do
  case "$t" in
    cli_mpi_gpu) echo "# note: cli_mpi_gpu skipped (its reason is above; mpirun missing?)" | tee -a "$log" ;;
    *) verdict="FAIL ($t skipped on a GPU machine)"; [ "$rc" -eq 0 ] && rc=1 ;;
  esac
done
echo "# gpu-check $verdict in $(( $(date +%s) - start )) s; log: results/$machine/gpu-check/$rev.log" | tee -a "$log"
exit "$rc"
