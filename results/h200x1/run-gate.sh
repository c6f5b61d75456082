#!/usr/bin/env bash
# Issue 50 on one H200 (not yet run: no GPU was lent when it was written). STEPS picks the steps:
#   info      the machine: nvidia-smi, CPUs, memory
#   build     dmabench and the slowdown shim (tools/slowdown_shim.cpp: libdmabench_slowdown_shim.so), Release
#   gpucheck  scripts/gpu-check.sh: the README's test command, every ctest entry (its log is copied here)
#   kvpool    configs/kv-pool.json in PROCS (8) fresh processes (--processes): how far paged ce-batch at 4-64 KiB
#             moves between processes (issue 50's target: 90% of (case, process) records within 1.1x of the case's
#             fastest process; 46% before)
#   gate      dmabench-results gate-rates on configs/gate-gpu.json: AA (4) A/A comparisons and INJ (4) against the shim
#             spinning SPIN_NS (2000) ns before each runtime copy or launch call of NEW's processes
# Everything goes under $WORK, packed into $OUT/gate.tar.gz. DMABENCH_GIT_REVISION names the revision.
set -uo pipefail
export NCCL_NVLS_ENABLE=0 PYTHONPATH="$PWD/python${PYTHONPATH:+:$PYTHONPATH}"
OUT="${OUT:-$PWD}"
WORK="${WORK:-$PWD/out-gate}"
STEPS="${STEPS:-info build gpucheck kvpool gate}"
REV="${DMABENCH_GIT_REVISION:-unknown}"
PROCS="${PROCS:-8}" AA="${AA:-4}" INJ="${INJ:-4}" SPIN_NS="${SPIN_NS:-2000}"
mkdir -p "$OUT" "$WORK"
log() { echo "[$(date +%T)] $*" | tee -a "$WORK/steps.log"; }
want() { [[ " $STEPS " == *" $1 "* ]]; }
pack() { tar czf "$OUT/gate.tar.gz" -C "$WORK" .; }
trap pack EXIT
B="$PWD/build/dmabench"
SHIM="$PWD/build/libdmabench_slowdown_shim.so"
if want info; then
  { nvidia-smi; nproc; lscpu | head -25; grep -E 'MemTotal|MemFree' /proc/meminfo; uname -a; } >"$WORK/info.txt" 2>&1
  log "info"
fi
if want build; then
  cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DDMABENCH_GIT_REVISION="$REV" >"$WORK/configure.log" 2>&1 &&
    cmake --build build -j "$(nproc)" --target dmabench dmabench_slowdown_shim >"$WORK/build.log" 2>&1 ||
    { log "build failed"; tail -30 "$WORK/build.log"; exit 1; }
  log "build done"
fi
if want gpucheck; then
  DMABENCH_GIT_REVISION="$REV" timeout 560 bash scripts/gpu-check.sh --machine h200x1 >"$WORK/gpu-check.out" 2>&1
  log "gpu-check rc=$?"
  cp results/h200x1/gpu-check/"$REV".log "$WORK/" 2>/dev/null
  grep -E "Passed|Failed|tests passed|gpu-check" "$WORK/gpu-check.out" | tail -12
fi
if want kvpool; then
  "$B" --preset kv-pool --processes "$PROCS" --out "$WORK/kv-pool-levels.json" -q >"$WORK/kv-pool.log" 2>&1
  log "kv-pool rc=$?"
  rm -rf "$WORK/kv-pool-levels.json.processes"  # the levels file keeps every process's p50 (levels.p50_us)
fi
if want gate; then
  python3 -m dmabench.cli gate-rates --bin "$B" --out "$WORK/gate" --aa "$AA" --injected "$INJ" \
    --inject "LD_PRELOAD=$SHIM" --inject "DMABENCH_SHIM_SPIN_NS=$SPIN_NS" --busy-share 0 \
    -- --config configs/gate-gpu.json >"$WORK/gate.log" 2>&1
  log "gate-rates rc=$?"
  tail -20 "$WORK/gate.log"
fi
