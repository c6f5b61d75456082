#!/usr/bin/env bash
# How results/h200x1/pools/ was made (issue 33) on a one-GPU H200 machine. STEPS picks the steps (default all):
#   gpucheck  scripts/gpu-check.sh: the README's test command, every ctest entry (log under results/h200x1/gpu-check/)
#   runsh     scripts/run.sh: the README's run command (the quick sweep)
#   gputests  the GPU ctest entries alone (gpu_engines, cli_gpu_sweep, cli_mpi_gpu), when gpucheck is not run
#   kvpool    configs/kv-pool.json: the 96-case paged sweep in a 4 GiB pool, timed whole
#   setup     configs/pool-setup.json: setup per case against pool size 256 MiB .. 16 GiB, and scripts/setup_report.py
#   repeat    REPEAT (default 2) runs of configs/noise-repeat.json (ce-batch paged cases and h2d-bidir, adaptive
#             sampling), each checked (--check) against REFERENCE (an earlier machine start's run) or this start's
#             first run, and set against both with scripts/compare.py
# Everything goes under $WORK, packed into $OUT/pools.tar.gz; the binary is copied to $OUT/dmabench. DMABENCH_GIT_REVISION
# names the revision (the copy of the tree on the machine has no .git); DMABENCH_BIN runs a binary carried from an
# earlier start instead of building.
source "$(dirname "${BASH_SOURCE[0]}")/../../scripts/experiment.sh"
experiment pools "gpucheck runsh kvpool setup repeat"
nvidia-smi >"$WORK/nvidia-smi.txt" 2>&1
if want gpucheck; then
  gpu_check 540
fi
B="${DMABENCH_BIN:-build/dmabench}"  # DMABENCH_BIN: a binary built on an earlier start of this machine kind, carried
if ! [ -x "$B" ]; then
  log "build"
  cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DDMABENCH_GIT_REVISION="$REV" >"$WORK/configure.log" 2>&1 &&
    cmake --build build -j "$(nproc)" >"$WORK/build.log" 2>&1 || { log "build failed"; tail -40 "$WORK/build.log"; exit 1; }
fi
cp "$B" "$OUT/dmabench" 2>/dev/null  # for later machine starts (DMABENCH_BIN)
if want runsh; then
  timeout 120 bash scripts/run.sh >"$WORK/run-sh.log" 2>&1; log "run.sh rc=$?"
  cp results/latest.json "$WORK/run-sh.json" 2>/dev/null
fi
if want gputests; then
  (cd build && timeout 400 ctest --output-on-failure -L gpu) >"$WORK/gpu-ctest.log" 2>&1; log "gpu ctest rc=$?"
fi
if want kvpool; then
  t0=$(date +%s)
  timeout 300 $B --config configs/kv-pool.json --out "$WORK/kv-pool.json" >"$WORK/kv-pool.log" 2>&1; rc=$?
  log "kv-pool rc=$rc wall $(( $(date +%s) - t0 )) s"
fi
if want setup; then
  timeout 400 $B --config configs/pool-setup.json --out "$WORK/pool-setup.json" >"$WORK/pool-setup.log" 2>&1
  log "pool-setup rc=$?"
  python3 scripts/setup_report.py "$WORK/pool-setup.json" "$WORK/kv-pool.json" >"$WORK/setup-report.md" 2>&1
  log "setup_report rc=$?"
fi
if want repeat; then
  # each run is checked (--check) against REFERENCE (a results file of an earlier machine start, carried in the
  # tree) when given, else against run 1 of this start; compare.py sets every run against both. PIN: a command the
  # runs start under (e.g. "taskset -c 4": one CPU core for the whole run), TAG: a word in their file names
  t="${TAG:-}"
  for i in $(seq 1 "${REPEAT:-2}"); do
    ref="${REFERENCE:-}"
    [ -z "$ref" ] && [ "$i" -gt 1 ] && ref="$WORK/repeat$t-1.json"
    check=()
    [ -n "$ref" ] && check=(--check "$ref")
    timeout 150 ${PIN:-} $B --config configs/noise-repeat.json --out "$WORK/repeat$t-$i.json" "${check[@]}" >"$WORK/repeat$t-$i.log" 2>&1
    log "repeat$t $i rc=$? (${PIN:-not pinned}; checked against ${ref:-nothing})"
    [ "$i" -gt 1 ] && { python3 scripts/compare.py "$WORK/repeat$t-1.json" "$WORK/repeat$t-$i.json" --all >"$WORK/compare$t-1-$i.md" 2>&1; log "compare$t 1 $i rc=$?"; }
    [ -n "${REFERENCE:-}" ] && { python3 scripts/compare.py "$REFERENCE" "$WORK/repeat$t-$i.json" --all >"$WORK/compare$t-ref-$i.md" 2>&1; log "compare$t reference $i rc=$?"; }
  done
fi
log "done"
