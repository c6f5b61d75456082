#!/usr/bin/env bash
# How results/h200x1/crossover/ was made (issue 43) on a one-GPU H200 machine. STEPS picks the steps:
#   info      the machine: nvidia-smi, CPUs, memory
#   build     dmabench and its GPU tests (Release, unless build/dmabench exists) and tools/crossover_probe.cu (nvcc)
#   budget    the GPU test of the SM budget (a budget of N: a grid of N blocks that ran on at most N SMs)
#   map       `dmabench --processes PROCS` (3) on configs/crossover.json: the map, each process its cases in a random
#             order, under MAP_TIMEOUT seconds (330); a process cut short keeps what it measured
#   d2d       the map's d2d cells alone (configs/crossover.json with patterns ["d2d"]), --processes PROCS, under
#             D2D_TIMEOUT seconds (200)
#   probe     tools/crossover_probe on PROBE_CELLS (a comma list of dir:mode:B:n; or PROBE_CELLS_FILE, one a line;
#             default a coarse grid) in
#             PROBE_PROCS (3) fresh processes, each its cells in a random order, over a host and a device pool of
#             PROBE_POOL (4GiB, the map's pool_bytes) each
#   pool      d2h ce-batch at 20, 24 and 28 KiB x 1024 blocks, dmabench (--processes PROCS) with its pool (exactly the blocks)
#             and with a 1 GiB pool, and the probe (PROCS processes) with a 1 GiB pool and a 28 MiB one: does the
#             24 KiB cell follow the pool?
#   check     scripts/gpu-check.sh: the README's whole test command (its log is copied here)
# Everything goes under $WORK, packed into $OUT/crossover.tar.gz. DMABENCH_GIT_REVISION names the revision.
# The steps write plain .json; the committed copies of crossover.json, crossover-d2d.json and crossover-report.json
# are compressed with `xz -9e` (crossover.json.xz, ...: every reader of the package reads them as they are).
source "$(dirname "${BASH_SOURCE[0]}")/../../scripts/experiment.sh"
experiment crossover "info build budget map probe" crossover_probe
PROCS="${PROCS:-3}"
P="$WORK/crossover_probe"
DEFAULT_CELLS=""
for d in h2d d2h d2d; do
  for m in ce ce-batch sm1 sm12 sm132; do
    for b in 4KiB 16KiB 32KiB 64KiB; do
      for n in 1 64 1024; do DEFAULT_CELLS+="$d:$m:$b:$n,"; done
    done
  done
done
CELLS="${PROBE_CELLS:-${DEFAULT_CELLS%,}}"
[ -n "${PROBE_CELLS_FILE:-}" ] && CELLS="$(grep -v '^#' "$PROBE_CELLS_FILE" | paste -sd, -)"
if want info; then
  { nvidia-smi; nvidia-smi -q -d CLOCK,PERFORMANCE | head -40; grep -E 'MemTotal|MemFree' /proc/meminfo; nproc; uname -a; } \
    >"$WORK/info.txt" 2>&1
  log "info"
fi
if want build; then
  nvcc -O2 -std=c++17 -arch=sm_90 -o "$P" tools/crossover_probe.cu >"$WORK/probe-build.log" 2>&1 &
  probe_build=$!
  if ! [ -x "$B" ]; then
    cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DDMABENCH_GIT_REVISION="$REV" >"$WORK/configure.log" 2>&1 &&
      cmake --build build -j "$(nproc)" --target dmabench dmabench_gpu_tests >"$WORK/build.log" 2>&1 ||
      { log "build failed"; tail -30 "$WORK/build.log"; }
  fi
  wait $probe_build || { log "probe build failed"; cat "$WORK/probe-build.log"; }
  log "build done"
fi
if want budget; then
  timeout 120 build/tests/dmabench_gpu_tests --gtest_filter='GpuHostMemory.AnSmBudget*' >"$WORK/budget-test.log" 2>&1
  log "budget test rc=$? $(grep -E '^\[  (PASSED|FAILED) ' "$WORK/budget-test.log" | tr '\n' ' ')"
fi
if want map; then
  t0=$(date +%s)
  timeout "${MAP_TIMEOUT:-330}" $B --config configs/crossover.json --processes "$PROCS" --out "$WORK/crossover.json" \
    >"$WORK/map.log" 2>&1
  log "map rc=$? $(( $(date +%s) - t0 )) s"
  tail -3 "$WORK/map.log"
fi
if want d2d; then
  python3 -c 'import json,sys; c=json.load(open("configs/crossover.json")); c["patterns"]=["d2d"]; c["name"]="crossover-d2d"
c["sweeps"]=[w for w in c["sweeps"] if w["name"]!="pinned-check"]; json.dump(c,open(sys.argv[1],"w"),indent=1)' "$WORK/crossover-d2d-config.json"
  t0=$(date +%s)
  timeout "${D2D_TIMEOUT:-200}" $B --config "$WORK/crossover-d2d-config.json" --processes "$PROCS" --out "$WORK/crossover-d2d.json" \
    >"$WORK/d2d.log" 2>&1
  log "d2d rc=$? $(( $(date +%s) - t0 )) s"
  tail -2 "$WORK/d2d.log"
fi
if want probe; then
  for i in $(seq 1 "${PROBE_PROCS:-3}"); do
    t0=$(date +%s)
    timeout 120 "$P" --cells "$CELLS" --order random --seed "$i" --pool-bytes "${PROBE_POOL:-4GiB}" >"$WORK/probe-$i.jsonl" 2>"$WORK/probe-$i.err"
    log "probe $i rc=$? $(( $(date +%s) - t0 )) s"
  done
fi
if want pool; then
  printf '%s\n' '{"name": "pool-size", "engines": ["ce-batch"], "patterns": ["d2h"], "host_memory": {"kind": "mapped"}, "devices": [0],' \
    '"timing": "oneshot", "warmup": 2, "iterations": 15, "sweeps": [' \
    '{"name": "exact", "layout": {"kind": "blocks", "block_bytes": ["20KiB", "24KiB", "28KiB"], "blocks": 1024, "order": "random"}},' \
    '{"name": "1GiB", "layout": {"kind": "blocks", "block_bytes": ["20KiB", "24KiB", "28KiB"], "blocks": 1024, "order": "random", "pool_bytes": "1GiB"}}]}' \
    >"$WORK/pool-config.json"
  timeout 90 $B --config "$WORK/pool-config.json" --processes "$PROCS" --out "$WORK/pool.json" >"$WORK/pool.log" 2>&1
  log "pool dmabench rc=$?"
  for i in $(seq 1 "$PROCS"); do
    for pool in 1GiB 28MiB; do
      timeout 60 "$P" --cells d2h:ce-batch:20KiB:1024,d2h:ce-batch:24KiB:1024,d2h:ce-batch:28KiB:1024 --order random --seed "$i" \
        --pool-bytes "$pool" >"$WORK/pool-probe-$pool-$i.jsonl" 2>>"$WORK/pool-probe.err"
    done
  done
  log "pool probe done"
fi
if want check; then
  gpu_check "${CHECK_TIMEOUT:-560}"
fi
log "done"
