#!/usr/bin/env bash
# Issue 54 on one H200: submit cost per descriptor, the coalescing gain over fragmentation, the descriptor-count curve
# (run once, on an H100 lent instead: results/h100x1/submission/; no H200 figures yet). STEPS picks the steps:
#   info   the machine: nvidia-smi, CPUs, memory, the revision
#   build  dmabench (Release, Ninja, DMABENCH_CUDA=ON; incremental, so quick when build/ is current; not when
#          DMABENCH_BIN names a binary) and tools/batch_submit_probe.cu (nvcc, in parallel); `dmabench --features` kept
#   probe  tools/batch_submit_probe in PPROCS (5) fresh processes, --cpus quiet (each names its CPU and core-share
#          reading in its "choice" line and each line's core_mode), a 4 GiB pinned pool, h2d and d2h, 4 and 16 KiB,
#          n = 1 ... 16384, batch and loop: call_us (CPU time inside the call), gpu_us, and the fitted µs per
#          descriptor; then one process reproducing the coalescing gain at 8 KiB (runs of COAL_RUNS (1 16) blocks,
#          with and without --coalesce, n = 1024 and 4096)
#   frag   configs/fragmentation.json, `dmabench --processes PROCS` (3): 4/8/16 KiB x 1024 blocks in a 4 GiB pool,
#          run_blocks k = 1...64, ce / ce-batch / sm each with coalesce false and true (252 cases)
#   desc   configs/descriptors.json, `dmabench --processes DPROCS` (PROCS): ce and ce-batch, 4 and 16 KiB, h2d/d2h,
#          1...16384 blocks per call in a 4 GiB pool (64 cases)
#   mark   configs/h2d-batch-cause.json, `dmabench --processes PROCS`: ce-batch with event_before true and false, h2d and
#          d2h, 4 and 16 KiB x 1024 blocks in a 4 GiB pool, pinned / mapped / registered (24 cases): what the event
#          recorded just before a batch does to its CPU time (the h2d batch cost found on an H100, 2026-12-06); beside
#          it the probe (h2d and d2h, n = 1024, batch) with the event before (timing and not) and without
#   bign   (not in the default steps) why h2d ce-batch with event_before is the probe's up to 1024 descriptors a call and
#          several times it at 4096 and 16384 (desc at 023a59acb1ee): dmabench's h2d ce-batch 4 KiB x 4096 alone in a
#          process (twice), after the 1024 case in one process, and after the whole desc sweep's h2d cases; the probe
#          at n = 4096 alone, with and without --bind-node 0 (dmabench binds its pool; the probe step does not)
#   order  (not in the default steps) whether the batch's source access order changes the h2d cost or the event's
#          effect: the probe (h2d, 4 and 16 KiB, n = 1024 and 4096) with --src-order stream, any (what vLLM and llm-d
#          pass) and during, each with and without the event just before (--mark-before)
#   meter  (not in the default steps) what the CPU does inside the copy calls, for the h2d batch cost (issue 54):
#          tools/call_meter.cpp as LD_PRELOAD counts, while a thread is inside cudaMemcpyBatchAsync, its ioctls,
#          its memcpy bytes and its page faults; on dmabench (configs/h2d-batch-cause.json, pinned, one process per
#          direction) and on the probe built against the shared runtime (-cudart shared, --bind-node 0, h2d and d2h,
#          n = 1024); then unmetered: the probe as the other steps build it (static runtime), the shared-runtime
#          probe, the probe with --inspect (dmabench's placement check on its pool), and dmabench once more
#   streams (not in the default steps) whether the stream a batch goes to sets the h2d cost: the probe (h2d, pinned,
#          n = 1024) with --streams-before K for K = 0 ... 7 (the runtime spreads streams over copy engines in
#          creation order), dmabench's ce-batch h2d with streams 1, 2, 3 and 4 (lanes of one batch each), and
#          dmabench with its d2h cases before the h2d ones in one process
# Then results/h200x1/submission/summarize.py prints one screen from whatever the steps left.
# Time (estimates, not measurements; from the committed H200 runs: the crossover map's 7320 cells x 3 processes in
# 157 s, and kv-pool's 1024-block cases in a 4 GiB pool at 0.07-0.13 s of sampling plus 0.07-0.14 s of setup and
# validation each, its 4 GiB pools allocated once in ~2.6 s): build ~1 min; probe ~20-30 s a process (n = 16384 is
# ~85 % of it: 16384 copies at 1-3.3 µs each, 33 samples, 8 cells), ~2.5 min for 5 plus ~15 s of coalescing;
# frag ~0.2-0.3 s a case, ~1-1.5 min a process, 3-4.5 min for 3; desc ~25-35 s a process (the 16384-block cells are
# most of it), ~1.5 min for 3. All steps together ~8-9.5 min: close to the 10-minute limit of one command, so the
# script keeps its own deadline (BUDGET, 570 s from its start): a step gets at most what is left less PACK_S (20 s),
# a step that would get under its minimum is skipped with a log line, and the archive is packed after every step.
# If the one command is cut short, run the rest in a second call on the same warm machine, e.g.
#   STEPS="frag desc" bash results/h200x1/run-submission.sh    (build/ and WORK are kept between calls there)
# Everything goes under $WORK, packed into $OUT/submission.tar.gz. DMABENCH_GIT_REVISION names the revision.
source "$(dirname "${BASH_SOURCE[0]}")/../../scripts/experiment.sh"
BUDGET="${BUDGET:-570}"
experiment submission "info build probe mark frag desc" batch_submit_probe
PROCS="${PROCS:-3}" PPROCS="${PPROCS:-5}" DPROCS="${DPROCS:-${PROCS:-3}}"
COAL_RUNS="${COAL_RUNS:-1 16}"
POOL=4294967296
B="${DMABENCH_BIN:-$PWD/build/dmabench}"
P="$WORK/batch_submit_probe"
log "start rev=$REV steps='$STEPS' budget=${BUDGET}s"
if want info; then
  { echo "revision $REV"; nvidia-smi; nvidia-smi -q -d CLOCK,PERFORMANCE | head -40; nproc; lscpu | head -25
    grep -E 'MemTotal|MemFree' /proc/meminfo; uname -a; /usr/local/cuda/bin/nvcc --version 2>/dev/null | tail -2; } \
    >"$WORK/info.txt" 2>&1
  log "info"
fi
if want build; then
  "$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)" -O2 -std=c++17 -arch=sm_90 -o "$P" tools/batch_submit_probe.cu \
    >"$WORK/probe-build.log" 2>&1 &
  probe_build=$!
  # always configured with the CUDA backend ON and built incrementally: a build/ left by a host-only configure
  # (DMABENCH_CUDA=OFF) would otherwise skip every GPU case
  if [ -z "${DMABENCH_BIN:-}" ]; then
    cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DDMABENCH_CUDA=ON -DDMABENCH_HIP=OFF \
      -DDMABENCH_GIT_REVISION="$REV" >"$WORK/configure.log" 2>&1 &&
      cmake --build build -j "$(nproc)" --target dmabench >"$WORK/build.log" 2>&1 ||
      { log "build failed"; tail -30 "$WORK/configure.log" "$WORK/build.log"; }
  fi
  wait $probe_build || { log "probe build failed"; cat "$WORK/probe-build.log"; }
  { "$B" --version; "$B" --features; } >"$WORK/dmabench-features.txt" 2>&1
  log "build done ($(( $(date +%s) - T0 )) s in)"
  pack
fi
if want probe; then
  mkdir -p "$WORK/probe"
  for k in $(seq 1 "$PPROCS"); do
    t=$(slot 90 30)
    [ "$t" -eq 0 ] && { log "probe $k skipped: too little time left"; continue; }
    t1=$(date +%s)
    timeout "$t" "$P" --cpus quiet --pool-bytes "$POOL" --seed "$k" >"$WORK/probe/probe-$k.jsonl" 2>"$WORK/probe/probe-$k.err"
    rc=$?
    log "probe $k rc=$rc $(( $(date +%s) - t1 )) s $(grep -m1 '"test":"choice"' "$WORK/probe/probe-$k.jsonl" | cut -c1-80)"
  done
  for k in $COAL_RUNS; do
    for c in "" --coalesce; do
      t=$(slot 40 10)
      [ "$t" -eq 0 ] && { log "coalescing probe run=$k $c skipped: too little time left"; continue; }
      timeout "$t" "$P" --cpus quiet --pool-bytes "$POOL" --block 8KiB --n 1024,4096 --run "$k" $c --seed 1 \
        >"$WORK/probe/coal-run$k${c:+-coalesce}.jsonl" 2>"$WORK/probe/coal-run$k${c:+-coalesce}.err"
      log "coalescing probe run=$k ${c:-(not coalesced)} rc=$?"
    done
  done
  pack
fi
if want mark; then
  t=$(slot 120 30)
  if [ "$t" -eq 0 ]; then log "mark skipped: too little time left"; else
    t1=$(date +%s)
    timeout "$t" "$B" --config configs/h2d-batch-cause.json --processes "$PROCS" --out "$WORK/mark.json" >"$WORK/mark.log" 2>&1
    log "mark rc=$? $(( $(date +%s) - t1 )) s (limit $t s)"
    mkdir -p "$WORK/mark-probe"
    for v in "yes yes" "yes no" "no yes"; do
      set -- $v
      t=$(slot 30 10)
      [ "$t" -eq 0 ] && { log "mark probe $v skipped: too little time left"; continue; }
      timeout "$t" "$P" --cpus quiet --pool-bytes "$POOL" --block 4KiB,16KiB --n 1024 --mech batch --bind-node 0 \
        --mark-before "$1" --mark-timing "$2" >"$WORK/mark-probe/before-$1-timing-$2.jsonl" 2>&1
      log "mark probe before=$1 timing=$2 rc=$? $(grep -h '"mech"' "$WORK/mark-probe/before-$1-timing-$2.jsonl" |
        grep -o '"dir":"[a-z0-9]*"\|"block":[0-9]*\|"call_us":[0-9.]*' | tr '\n' ' ')"
    done
    pack
  fi
fi
if want bign; then
  mkdir -p "$WORK/bign"
  G="$WORK/bign"
  [ -x "$P" ] || "$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)" -O2 -std=c++17 -arch=sm_90 -o "$P" tools/batch_submit_probe.cu
  for f in "alone1:h2d/ce-batch/.*/blocks=4096x4KiB," "alone2:h2d/ce-batch/.*/blocks=4096x4KiB," \
           "after1024:h2d/ce-batch/.*/blocks=(1024|4096)x4KiB," "allh2d:h2d/ce-batch/"; do
    timeout 90 "$B" --config configs/descriptors.json --order config --benchmark_filter="${f#*:}" -q \
      --out "$G/dmabench-${f%%:*}.json" >"$G/dmabench-${f%%:*}.log" 2>&1
    log "bign dmabench ${f%%:*} rc=$?"
  done
  for b in -1 0; do
    a=(--cpus quiet --pool-bytes "$POOL" --block 4KiB --n 4096 --mech batch --dirs h2d)
    [ "$b" -ge 0 ] && a+=(--bind-node "$b")
    timeout 60 "$P" "${a[@]}" >"$G/probe-bind$b.jsonl" 2>&1
    log "bign probe bind=$b rc=$? $(grep -h '"mech"' "$G/probe-bind$b.jsonl" | grep -o '"call_us":[0-9.]*' | tr '\n' ' ')"
  done
  python3 - "$G" <<'EOF' | tee -a "$WORK/steps.log"
import glob, json, os, sys
for f in sorted(glob.glob(os.path.join(sys.argv[1], "dmabench-*.json"))):
    try:
        res = json.load(open(f))["results"]
    except (OSError, ValueError, KeyError) as e:
        print(f"{os.path.basename(f)}: unreadable ({e})"); continue
    for r in res:
        if r.get("status") == "ok":
            print(f"{os.path.basename(f)} n={r['layout']['blocks']} submit {r['breakdown']['submit_us']:.1f} us "
                  f"p50 {r['latency_us']['p50']:.1f} us")
EOF
  pack
fi
if want order; then
  mkdir -p "$WORK/order"
  [ -x "$P" ] || "$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)" -O2 -std=c++17 -arch=sm_90 -o "$P" tools/batch_submit_probe.cu
  for o in stream any during; do
    for m in yes no; do
      timeout 60 "$P" --cpus quiet --pool-bytes "$POOL" --block 4KiB,16KiB --n 1024,4096 --mech batch --bind-node 0 \
        --dirs h2d --src-order "$o" --mark-before "$m" >"$WORK/order/probe-$o-mark-$m.jsonl" 2>&1
      log "order probe src-order=$o mark-before=$m rc=$? $(grep -h '"mech"' "$WORK/order/probe-$o-mark-$m.jsonl" |
        grep -o '"block":[0-9]*\|"n":[0-9]*\|"call_us":[0-9.]*' | paste -sd' ')"
    done
  done
  pack
fi
if want meter; then
  mkdir -p "$WORK/meter"
  M="$WORK/meter"
  nvcc="$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)"
  g++ -O2 -shared -fPIC -fno-builtin -fno-tree-loop-distribute-patterns -o "$M/call_meter.so" tools/call_meter.cpp -ldl \
    >"$M/build.log" 2>&1 || log "call_meter build failed"
  "$nvcc" -O2 -std=c++17 -arch=sm_90 -cudart shared -o "$M/bsp-shared" tools/batch_submit_probe.cu >>"$M/build.log" 2>&1 ||
    log "shared-runtime probe build failed"
  [ -x "$P" ] || "$nvcc" -O2 -std=c++17 -arch=sm_90 -o "$P" tools/batch_submit_probe.cu >>"$M/build.log" 2>&1
  probe_args=(--cpus quiet --pool-bytes "$POOL" --block 4KiB,16KiB --n 1024 --mech batch --bind-node 0)
  for d in h2d d2h; do
    LD_PRELOAD="$M/call_meter.so" timeout 60 "$B" --config configs/h2d-batch-cause.json \
      --benchmark_filter="$d/ce-batch/.*host=pinned" -q --out "$M/dmabench-$d.json" >"$M/dmabench-$d.log" 2>"$M/dmabench-$d.err"
    log "metered dmabench $d rc=$? $(grep -h call_meter "$M/dmabench-$d.err" | cut -c1-200)"
    LD_PRELOAD="$M/call_meter.so" timeout 60 "$M/bsp-shared" "${probe_args[@]}" --dirs "$d" \
      >"$M/probe-$d.jsonl" 2>"$M/probe-$d.err"
    log "metered probe $d rc=$? $(grep -h call_meter "$M/probe-$d.err" | cut -c1-200)"
  done
  for v in static shared inspect; do
    p="$P" extra=()
    [ "$v" = shared ] && p="$M/bsp-shared"
    [ "$v" = inspect ] && extra=(--inspect)
    timeout 60 "$p" "${probe_args[@]}" --dirs h2d "${extra[@]}" >"$M/probe-$v.jsonl" 2>"$M/probe-$v.err"
    log "probe $v rc=$?"
  done
  timeout 60 "$B" --config configs/h2d-batch-cause.json --benchmark_filter="h2d/ce-batch/.*host=pinned" -q \
    --out "$M/dmabench-h2d-plain.json" >"$M/dmabench-h2d-plain.log" 2>&1
  log "dmabench h2d unmetered rc=$?"
  pack
fi
if want streams; then
  mkdir -p "$WORK/streams"
  S="$WORK/streams"
  [ -x "$P" ] || "$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)" -O2 -std=c++17 -arch=sm_90 -o "$P" tools/batch_submit_probe.cu
  for k in 0 1 2 3 4 5 6 7; do
    timeout 60 "$P" --cpus quiet --pool-bytes "$POOL" --block 4KiB,16KiB --n 1024 --mech batch --bind-node 0 --dirs h2d \
      --streams-before "$k" >"$S/probe-before$k.jsonl" 2>"$S/probe-before$k.err"
    log "probe streams-before $k rc=$? $(grep -h '"mech"' "$S/probe-before$k.jsonl" | grep -o '"block":[0-9]*\|"call_us":[0-9.]*' | tr '\n' ' ')"
  done
  python3 - "$S/streams.json" <<'EOF'
import json, sys
c = json.load(open("configs/h2d-batch-cause.json"))
c["name"] = "h2d-batch-streams"
c["patterns"] = ["h2d"]
c["host_memory"] = {"kind": ["pinned"]}
c["engines"] = [{"name": "ce-batch", "options": {"streams": [1, 2, 3, 4]}}]
json.dump(c, open(sys.argv[1], "w"), indent=1)
EOF
  timeout 120 "$B" --config "$S/streams.json" -q --out "$S/dmabench-streams.json" >"$S/dmabench-streams.log" 2>&1
  log "dmabench ce-batch streams 1-4 rc=$?"
  python3 - "$S/order.json" <<'EOF'
import json, sys
c = json.load(open("configs/h2d-batch-cause.json"))
c["name"] = "h2d-batch-order"
c["patterns"] = ["d2h", "h2d"]
c["host_memory"] = {"kind": ["pinned"]}
json.dump(c, open(sys.argv[1], "w"), indent=1)
EOF
  timeout 60 "$B" --config "$S/order.json" -q --out "$S/dmabench-order.json" >"$S/dmabench-order.log" 2>&1
  log "dmabench d2h before h2d rc=$?"
  pack
fi
for step in frag desc; do
  want "$step" || continue
  cfg=configs/fragmentation.json
  [ "$step" = desc ] && cfg=configs/descriptors.json
  t=$(slot 330 30)
  [ "$t" -eq 0 ] && { log "$step skipped: too little time left"; continue; }
  t1=$(date +%s)
  n="$PROCS"
  [ "$step" = desc ] && n="$DPROCS"
  timeout "$t" "$B" --config "$cfg" --processes "$n" --out "$WORK/$step.json" >"$WORK/$step.log" 2>&1
  log "$step rc=$? $(( $(date +%s) - t1 )) s (limit $t s)"
  tail -3 "$WORK/$step.log"
  pack
done
python3 results/h200x1/submission/summarize.py "$WORK" >"$WORK/summary.txt" 2>&1
cat "$WORK/summary.txt"
log "done $(( $(date +%s) - T0 )) s"
