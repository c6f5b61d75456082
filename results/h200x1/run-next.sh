#!/usr/bin/env bash
# The GPU work issues 50, 53 and 54 still need, ready to go: one STEP a 10-minute device call, in this order (each
# line: what it measures, about how long it took on an H100, and the figures it gives; the device's README says
# how the calls are lent). Pass DMABENCH_GIT_REVISION=<the tree's revision> (the device's .git is stale).
#   breakdown   (~4 min) issue 54 item 1 on a GPU: configs/breakdown-blocks.json in 2 fresh processes (`ce`'s CUPTI
#               record per block; `ce-batch` and `sm` record the reason), run-submission.sh `bign order` again (the
#               h2d batch at n >= 4096), and GpuOverlap.EveryEngineBesideAGemm 3 times (its printed reference runs:
#               how far the GEMM's rate moves between runs; results/LAB-NOTES.md 2026-12-06 fifth)
#   submission  (~9 min) run-submission.sh's default steps (info build probe mark frag desc): issue 54's submit per
#               descriptor against the probe, the coalescing gain, the descriptor-count curve
#   crossover   (~8 min) run-crossover.sh `info build map` (configs/crossover.json now on a 4 GiB pool), then
#               `dmabench-results crossover export` of the map: issue 54's map and thresholds
#   gate        (~8 min) run-gate.sh `info build kvpool gate` (8 kv-pool processes beside the probe; 2 A/A and 2
#               injected comparisons at 6 processes a side, seed 4, the shim's spin growing with the bytes too:
#               SPIN_PER_MIB 4000, so that bandwidth-bound cases are slowed as well): issue 50's figures
#   check       (~7 min) the README's whole test command (scripts/gpu-check.sh) from the final code: last, after every
#               code change of the session; issues 50, 53 and 54 each need it
# Everything this script writes goes under $WORK, packed into $OUT/next.tar.gz; the drivers it calls work under
# build/out-next-<driver> and pack their own archives ($OUT/submission.tar.gz, crossover.tar.gz, gate.tar.gz) beside it.
source "$(dirname "${BASH_SOURCE[0]}")/../../scripts/experiment.sh"
experiment next "breakdown"
HERE="$(dirname "${BASH_SOURCE[0]}")"
if want breakdown; then
  cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DDMABENCH_GIT_REVISION="$REV" >"$WORK/configure.log" 2>&1 &&
    cmake --build build -j "$(nproc)" --target dmabench dmabench_gpu_tests >"$WORK/build.log" 2>&1 ||
    { log "build failed"; tail -30 "$WORK/build.log"; exit 1; }
  "$B" --config configs/breakdown-blocks.json --processes 2 --out "$WORK/breakdown-blocks.json" -q \
    >"$WORK/breakdown-blocks.log" 2>&1
  log "breakdown-blocks rc=$?"
  python3 - "$WORK/breakdown-blocks.json" <<'PY' | tee "$WORK/breakdown-blocks.txt"
import json, sys
for r in json.load(open(sys.argv[1]))["results"]:
    b = r.get("breakdown_us") or {}
    phases = b.get("error") or " ".join(f"{k} {b[k]:.1f}" for k in ("control", "schedule", "copy", "sync", "total") if k in b)
    print(f"{r['name']}  {r['status']}  copies/op {b.get('copies_per_operation')}  {phases}")
PY
  STEPS="bign order" WORK="$PWD/build/out-next-submission" bash "$HERE/run-submission.sh" >"$WORK/submission.log" 2>&1
  log "submission bign order rc=$?"
  build/tests/dmabench_gpu_tests --gtest_filter=GpuOverlap.EveryEngineBesideAGemm --gtest_repeat=3 \
    >"$WORK/gemm-overlap.log" 2>&1
  log "GEMM overlap x3 rc=$?"
  grep -E "reference runs|GEMM .* alone|FAILED|PASSED" "$WORK/gemm-overlap.log" | tail -40
fi
if want submission; then
  STEPS="info build probe mark frag desc" WORK="$PWD/build/out-next-submission" bash "$HERE/run-submission.sh"
  log "run-submission rc=$?"
fi
if want crossover; then
  STEPS="info build map" WORK="$PWD/build/out-next-crossover" bash "$HERE/run-crossover.sh"
  log "run-crossover rc=$?"
  map="$(ls build/out-next-crossover/crossover.json 2>/dev/null)"
  if [ -n "$map" ]; then
    python3 -m dmabench.cli crossover export "$map" --out "$WORK/thresholds.json" >"$WORK/export.log" 2>&1
    log "crossover export rc=$?"
  fi
fi
if want gate; then
  STEPS="info build kvpool gate" PROCS=8 AA=2 INJ=2 GPROCS=6 GRERUNS=0 GSEED=4 SPIN_PER_MIB=4000 \
    WORK="$PWD/build/out-next-gate" \
    bash "$HERE/run-gate.sh"
  log "run-gate rc=$?"
fi
if want check; then
  gpu_check 560
fi
