#!/usr/bin/env bash
# How results/h200x1/levels/ was made (issue 39) on a one-GPU H200 machine. STEPS picks the steps (default all):
#   info       the machine: nvidia-smi, transparent huge pages, memory, CPUs, NUMA
#   build      dmabench (Release) and tools/host_probe.cu (nvcc), side by side
#   pools      POOL_PROCS (3) fresh processes of host_probe, each allocating the 4 GiB host pools several ways in
#              turn (cudaHostAlloc plain and under MPOL_BIND, cudaHostRegister of THP and of 4 KiB pages) and
#              timing the paged shapes on each: does the level follow the allocation, within one process?
#   alternate  ALT_PROCS (6) rounds of: a fresh dmabench process on configs/paged-agreement.json (its cases in a
#              random order) and a fresh host_probe process on the same shapes; every process records its
#              calibration, CPU and how its pools lie in physical memory
# Everything goes under $WORK, packed into $OUT/levels.tar.gz. DMABENCH_GIT_REVISION names the revision.
set -uo pipefail
export NCCL_NVLS_ENABLE=0
OUT="${OUT:-$PWD}"
WORK="${WORK:-$PWD/out-levels}"
STEPS="${STEPS:-info build pools alternate}"
REV="${DMABENCH_GIT_REVISION:-unknown}"
mkdir -p "$OUT" "$WORK"
log() { echo "[$(date +%T)] $*" | tee -a "$WORK/steps.log"; }
want() { [[ " $STEPS " == *" $1 "* ]]; }
pack() { tar czf "$OUT/levels.tar.gz" -C "$WORK" .; }
trap pack EXIT
B="${DMABENCH_BIN:-build/dmabench}"
P="$WORK/host_probe"
SHAPES=(--tests paged-h2d,paged-d2h --page-sizes 4KiB,64KiB --pages 1024,64 --pool-bytes 4GiB --paged-reps 0 --paged-iters 30)
if want info; then
  { nvidia-smi; nvidia-smi -q -d CLOCK,PERFORMANCE | head -60; echo; for f in enabled defrag; do echo "thp $f: $(cat /sys/kernel/mm/transparent_hugepage/$f)"; done
    grep -E 'MemTotal|MemFree|HugePages|Hugepagesize|AnonHuge' /proc/meminfo; nproc; lscpu | head -25
    cat /sys/devices/system/node/online; cat /proc/buddyinfo; uname -a; } >"$WORK/info.txt" 2>&1
  log "info"
fi
if want build; then
  nvcc -O2 -std=c++17 -arch=sm_90 -o "$P" tools/host_probe.cu >"$WORK/probe-build.log" 2>&1 &
  probe_build=$!
  if ! [ -x "$B" ]; then
    cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DDMABENCH_GIT_REVISION="$REV" >"$WORK/configure.log" 2>&1 &&
      cmake --build build -j "$(nproc)" --target dmabench >"$WORK/build.log" 2>&1 || { log "build failed"; tail -30 "$WORK/build.log"; }
  fi
  wait $probe_build || { log "probe build failed"; cat "$WORK/probe-build.log"; }
  log "build done"
fi
if want pools; then
  for i in $(seq 1 "${POOL_PROCS:-3}"); do
    t0=$(date +%s)
    timeout 200 "$P" "${SHAPES[@]}" --allocs hostalloc,hostalloc-bind,hostalloc,register-thp,register-nothp \
      >"$WORK/pools-$i.jsonl" 2>"$WORK/pools-$i.err"
    log "pools $i rc=$? $(( $(date +%s) - t0 )) s"
  done
fi
if want alternate; then
  for i in $(seq 1 "${ALT_PROCS:-6}"); do
    t0=$(date +%s)
    timeout 120 $B --config configs/paged-agreement.json --order random --out "$WORK/dmabench-$i.json" >"$WORK/dmabench-$i.log" 2>&1
    log "dmabench $i rc=$? $(( $(date +%s) - t0 )) s"
    t0=$(date +%s)
    timeout 120 "$P" "${SHAPES[@]}" --allocs hostalloc-bind >"$WORK/probe-$i.jsonl" 2>"$WORK/probe-$i.err"
    log "probe $i rc=$? $(( $(date +%s) - t0 )) s"
  done
fi
log "done"
