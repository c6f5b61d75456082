#!/usr/bin/env bash
# The GPU work issues 50, 53 and 54 asked of an H200, ready to go: one STEP a 10-minute device call, in this order
# (each line: what it measures, how long it took on an H100 on 2026-12-06, third day, and the figures it gives; the
# device's README says how the calls are lent). Every step ran then on an H100 (results/h100x1/, tree 11325cd); on an
# H200 none has run. Pass DMABENCH_GIT_REVISION=<the tree's revision> (the device's .git is stale).
#   submission  (318 s with a fresh build) run-submission.sh `info build probe frag desc` (the probe in 5 fresh
#               processes, frag in 3, desc in 5: issue 54's submit per descriptor against the probe, the coalescing
#               gain, the descriptor-count curve to 16384), then configs/breakdown-blocks.json in 2 fresh processes
#               (`ce`'s CUPTI record per block; `ce-batch` and `sm` record the reason): issue 54 item 1
#   crossover   (379 s) run-crossover.sh `info build map probe` (configs/crossover.json on a 4 GiB pool, PROCS 2:
#               on the H100 one process took ~210 s, so 3 did not fit a call; the probe, tools/crossover_probe.cu,
#               over a 4 GiB pool with a timing event before each batch, at h2d ce-batch 20-36 KiB by every n of the
#               map, 3 processes), then `dmabench-results crossover export` of the map: issue 54's map, its check
#               against the loop and the thresholds
#   check       (397 s) the README's whole test command (scripts/gpu-check.sh) from the final code; issues 50, 53 and
#               54 each need it: run no GPU code change after it
#   gate        (302 s for AA=2 INJ=3) run-gate.sh `build gate`: A/A and injected comparisons at 6 processes a side,
#               the shim's spin growing with the bytes too (SPIN_PER_MIB 4000), so that bandwidth-bound cases are
#               slowed as well: on the H100, 4000 made the pipelined 256 MiB copies 1.053x slower, as a sample of 4
#               copies with the first call's spin unhidden predicts (results/h100x1/gate/README.md)
#   breakdown   (not in the default order) GpuOverlap.EveryEngineBesideAGemm 3 times (its printed reference runs: how
#               far the GEMM's rate moves between runs; results/LAB-NOTES.md 2026-12-06 fifth)
# Everything this script writes goes under $WORK, packed into $OUT/next.tar.gz; the drivers it calls work under
# build/out-next-<driver> and pack their own archives ($OUT/submission.tar.gz, crossover.tar.gz, gate.tar.gz) beside it.
source "$(dirname "${BASH_SOURCE[0]}")/../../scripts/experiment.sh"
experiment next "submission"
HERE="$(dirname "${BASH_SOURCE[0]}")"
if want submission; then
  STEPS="info build probe frag desc" BUDGET="${SUB_BUDGET:-480}" PROCS=3 DPROCS=5 WORK="$PWD/build/out-next-submission" \
    bash "$HERE/run-submission.sh" >"$WORK/submission.log" 2>&1
  log "run-submission rc=$?"
  grep -E "^\[" "$WORK/submission.log" | tail -20
  timeout "${BREAKDOWN_S:-80}" "$B" --config configs/breakdown-blocks.json --processes 2 --out "$WORK/breakdown-blocks.json" \
    -q >"$WORK/breakdown-blocks.log" 2>&1
  log "breakdown-blocks rc=$?"
  python3 - "$WORK/breakdown-blocks.json" <<'PY' | tee "$WORK/breakdown-blocks.txt"
import json, sys
for r in json.load(open(sys.argv[1]))["results"]:
    b = r.get("breakdown_us") or {}
    phases = b.get("error") or " ".join(f"{k} {b[k]:.1f}" for k in ("control", "schedule", "copy", "sync", "total") if k in b)
    print(f"{r['name']}  {r['status']}  copies/op {b.get('copies_per_operation')}  {phases}")
PY
fi
if want crossover; then
  cells=""
  for b in 20KiB 24KiB 28KiB 32KiB 36KiB; do
    for n in 1 4 16 64 256 1024 4096; do
      [ "$b" = 36KiB ] && [ "$n" = 4096 ] && continue  # the map's fine-large sweep stops at 1024
      cells+="h2d:ce-batch:$b:$n,"
    done
  done
  STEPS="info build map probe" PROBE_CELLS="${cells%,}" PROBE_POOL=4GiB PROCS="${MAP_PROCS:-2}" \
    MAP_TIMEOUT="${MAP_TIMEOUT:-480}" \
    WORK="$PWD/build/out-next-crossover" bash "$HERE/run-crossover.sh"
  log "run-crossover rc=$?"
  map="$(ls build/out-next-crossover/crossover.json 2>/dev/null)"
  if [ -n "$map" ]; then
    python3 -m dmabench.cli crossover export "$map" --out "$WORK/thresholds.json" >"$WORK/export.log" 2>&1
    log "crossover export rc=$?"
  fi
fi
if want check; then
  gpu_check 580
fi
if want gate; then
  STEPS="build gate" AA="${AA:-2}" INJ="${INJ:-3}" GPROCS=6 GRERUNS=0 GSEED="${GSEED:-7}" SPIN_PER_MIB=4000 \
    WORK="$PWD/build/out-next-gate" \
    bash "$HERE/run-gate.sh"
  log "run-gate rc=$?"
fi
if want breakdown; then
  cmake --build build -j "$(nproc)" --target dmabench_gpu_tests >"$WORK/build.log" 2>&1 || log "test build failed"
  build/tests/dmabench_gpu_tests --gtest_filter=GpuOverlap.EveryEngineBesideAGemm --gtest_repeat=3 \
    >"$WORK/gemm-overlap.log" 2>&1
  log "GEMM overlap x3 rc=$?"
  grep -E "reference runs|GEMM .* alone|FAILED|PASSED" "$WORK/gemm-overlap.log" | tail -40
fi
