#!/usr/bin/env bash
# Runs the built tree's ctest N times in a row (default 3), one test per CPU, beside a CPU busy loop that
# competes with them for the whole run: every timing check must hold when the machine is not quiet.
# Stops at the first failing run. Prints one line per run (exit status, wall seconds) and a closing line.
#   scripts/test-under-load.sh [BUILD_DIR [RUNS]]     (defaults: build 3; extra ctest flags: DMABENCH_CTEST_ARGS)
# Build first (scripts/test.sh or cmake --build build).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${1:-$ROOT/build}"
RUNS="${2:-3}"
JOBS="${DMABENCH_TEST_JOBS:-${CTEST_PARALLEL_LEVEL:-$(nproc)}}"  # as scripts/test.sh
[ -f "$BUILD/CTestTestfile.cmake" ] || { echo "test-under-load: no ctest tree in $BUILD (build it first)" >&2; exit 2; }
case "$RUNS" in ''|*[!0-9]*|0) echo "test-under-load: RUNS must be a positive integer, got '$RUNS'" >&2; exit 2;; esac

busy_pid=""
stop_busy() { [ -n "$busy_pid" ] && kill "$busy_pid" 2>/dev/null; wait "$busy_pid" 2>/dev/null || true; busy_pid=""; }
trap stop_busy EXIT
trap 'exit 130' INT TERM

echo "test-under-load: $BUILD, $RUNS runs of ctest --parallel $JOBS beside one busy loop ($(nproc) CPUs, $(uname -r))"
for (( i = 1; i <= RUNS; i++ )); do
  bash -c 'while :; do :; done' &
  busy_pid=$!
  t0=$(date +%s)
  rc=0
  # shellcheck disable=SC2086
  (cd "$BUILD" && ctest --output-on-failure --parallel "$JOBS" ${DMABENCH_CTEST_ARGS:-}) >"$BUILD/test-under-load-$i.log" 2>&1 || rc=$?
  stop_busy
  summary=$(grep -E '^[0-9]+% tests passed' "$BUILD/test-under-load-$i.log" || echo "no ctest summary")
  echo "run $i: exit $rc, $(( $(date +%s) - t0 )) s, $summary (log: $BUILD/test-under-load-$i.log)"
  if [ "$rc" -ne 0 ]; then
    grep -E '\*\*\*Failed|\*\*\*Timeout|\(Failed\)|\(Timeout\)' "$BUILD/test-under-load-$i.log" || true
    echo "test-under-load: run $i of $RUNS failed"
    exit 1
  fi
done
echo "test-under-load: $RUNS of $RUNS runs green in a row"
