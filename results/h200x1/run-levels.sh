#!/usr/bin/env bash
# How results/h200x1/levels/ was made (issue 39) on a one-GPU H200 machine. STEPS picks the steps:
#   info       the machine: nvidia-smi, transparent huge pages, memory, CPUs, NUMA
#   build      dmabench (Release, unless build/dmabench exists) and tools/host_probe.cu (nvcc), side by side
#   gpucheck   scripts/gpu-check.sh: the README's test command, every ctest entry (its log is copied here)
#   pools      POOL_PROCS (3) fresh processes of host_probe, each allocating the 4 GiB host pools several ways in
#              turn (cudaHostAlloc plain and under MPOL_BIND, cudaHostRegister of THP and of 4 KiB pages) and
#              timing the paged shapes on each: does the level follow the allocation, within one process?
#   alternate  ROUNDS (6) rounds of: a fresh dmabench process on configs/paged-agreement.json (its cases in a random
#              order) and a fresh host_probe process on the same shapes (the first machine start)
#   cpus       host_probe's batched 1024 x 4 KiB pages (d2h, h2d, pinned, 4 GiB pool) and its calibration pinned to
#              each CPU of CPUS in turn (taskset -c): does the level follow the CPU?
#   loading    the calibration of dmabench and of host_probe, LOAD_PROCS (3) fresh processes each under
#              CUDA_MODULE_LOADING=EAGER (dmabench's default) and LAZY, alternating
#   kvpool     ROUNDS (8) rounds of: dmabench on configs/kv-pool.json and configs/kv-pool-odd.json (each a fresh
#              process, its cases in a random order), then host_probe on the same shapes (two fresh processes)
#   selfcmp    two runs (A, B) each of `dmabench --processes PROCS` (5) on configs/noise-repeat.json and
#              configs/moe-decode.json
# Everything goes under $WORK, packed into $OUT/levels.tar.gz. DMABENCH_GIT_REVISION names the revision.
source "$(dirname "${BASH_SOURCE[0]}")/../../scripts/experiment.sh"
experiment levels "info build pools alternate" host_probe
PROCS="${PROCS:-5}"
P="$WORK/host_probe"
SHAPES=(--tests paged-h2d,paged-d2h --page-sizes 4KiB,64KiB --pages 1024,64 --pool-bytes 4GiB --paged-reps 0 --paged-iters 30)
KV=(--tests paged-h2d,paged-d2h --page-sizes 4KiB,16KiB,64KiB,512KiB --pages 64,1024 --pool-bytes 4GiB --paged-reps 0
    --paged-iters 30 --allocs hostalloc-bind)
ODD=(--tests paged-h2d,paged-d2h --page-sizes 8KiB,128KiB --pages 16,256 --pool-bytes 1GiB --paged-reps 0 --paged-iters 30
     --allocs hostalloc-bind)
if want info; then
  { nvidia-smi; nvidia-smi -q -d CLOCK,PERFORMANCE | head -60; echo; for f in enabled defrag; do echo "thp $f: $(cat /sys/kernel/mm/transparent_hugepage/$f)"; done
    grep -E 'MemTotal|MemFree|HugePages|Hugepagesize|AnonHuge' /proc/meminfo; nproc; lscpu | head -25
    cat /sys/devices/system/node/online; cat /proc/buddyinfo; uname -a; } >"$WORK/info.txt" 2>&1
  log "info"
fi
if want gpucheck; then
  gpu_check 560
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
  for i in $(seq 1 "${ROUNDS:-6}"); do
    timeout 120 $B --config configs/paged-agreement.json --order random --out "$WORK/dmabench-$i.json" >"$WORK/dmabench-$i.log" 2>&1
    log "dmabench $i rc=$?"
    timeout 120 "$P" "${SHAPES[@]}" --allocs hostalloc-bind >"$WORK/probe-$i.jsonl" 2>"$WORK/probe-$i.err"
    log "probe $i rc=$?"
  done
fi
if want cpus; then
  for c in ${CPUS:-0 2 4 6 8 10 12 14}; do
    timeout 60 taskset -c "$c" "$P" --tests paged-h2d,paged-d2h --page-sizes 4KiB --pages 1024 --pool-bytes 4GiB --paged-reps 0 \
      --kinds pinned --mechanisms loop,batch --allocs hostalloc-bind >"$WORK/cpu-$c.jsonl" 2>"$WORK/cpu-$c.err"
    log "cpu $c rc=$?"
  done
fi
if want loading; then
  printf '{"name": "calibrate", "engines": ["ce"], "patterns": ["h2d"], "sizes": "4KiB", "devices": [0], "iterations": 10}\n' >"$WORK/calibrate.json"
  for i in $(seq 1 "${LOAD_PROCS:-3}"); do
    for mode in EAGER LAZY; do
      CUDA_MODULE_LOADING=$mode timeout 60 $B --config "$WORK/calibrate.json" --out "$WORK/loading-$mode-$i.json" >/dev/null 2>&1
      CUDA_MODULE_LOADING=$mode timeout 60 "$P" --tests h2d --sizes 4KiB --iters 2 --reps 1 --oneshot-iters 5 \
        >"$WORK/loading-probe-$mode-$i.jsonl" 2>/dev/null
      log "loading $mode $i"
    done
  done
fi
if want kvpool; then
  for i in $(seq 1 "${ROUNDS:-8}"); do
    t0=$(date +%s)
    timeout 150 $B --config configs/kv-pool.json --order random --out "$WORK/kvpool-$i.json" >"$WORK/kvpool-$i.log" 2>&1
    a=$?
    timeout 60 $B --config configs/kv-pool-odd.json --order random --out "$WORK/odd-$i.json" >"$WORK/odd-$i.log" 2>&1
    b=$?
    timeout 90 "$P" "${KV[@]}" >"$WORK/probe-kv-$i.jsonl" 2>"$WORK/probe-kv-$i.err"
    c=$?
    timeout 60 "$P" "${ODD[@]}" >"$WORK/probe-odd-$i.jsonl" 2>"$WORK/probe-odd-$i.err"
    log "round $i: kv-pool rc=$a odd rc=$b probe rc=$c,$? $(( $(date +%s) - t0 )) s"
  done
fi
if want selfcmp; then
  for run in ${RUNS:-A B}; do
    for cfg in noise-repeat moe-decode; do
      t0=$(date +%s)
      timeout 280 $B --config configs/$cfg.json --processes "$PROCS" --out "$WORK/$cfg-$run.json" >"$WORK/$cfg-$run.log" 2>&1
      log "$cfg $run rc=$? $(( $(date +%s) - t0 )) s"
      tar czf "$WORK/$cfg-$run-processes.tar.gz" -C "$WORK" "$cfg-$run.json.processes" && rm -rf "$WORK/$cfg-$run.json.processes"
    done
  done
fi
log "done"
