#!/usr/bin/env bash
# Issue 50 on one GPU (run on the H200 at 836a3afb064f: ../h200x1/gate, levels/quiet-core; on an H100 the device lent
# instead at cc3647f549d5: ../h100x1/gate). STEPS picks the steps:
#   info      the machine: nvidia-smi, CPUs, memory
#   build     dmabench and the slowdown shim (tools/slowdown_shim.cpp: libdmabench_slowdown_shim.so), Release
#   gpucheck  scripts/gpu-check.sh: the README's test command, every ctest entry (its log is copied here; the machine's
#             folder named from nvidia-smi)
#   kvpool    configs/kv-pool.json in PROCS (8) fresh processes, each followed by the independent probe
#             (tools/vcpu_probe.cu --cpus quiet: the same CPU choice, its own code, a 4 GiB pool as kv-pool's); merged
#             by scripts/merge_runs.py: how far paged ce-batch at 4-64 KiB moves between processes (issue 50's target:
#             90% of (case, process) records within 1.1x of the case's fastest process; 46% before) and the medians
#             against the probe's (target: within 5%); the first OFF (0) rounds also run a process with --cpu-choice off
#   hint      configs/kv-pool-hint.json (ce-batch h2d/d2h, 1024 x 4 and 16 KiB in a 4 GiB pinned pool, overlap_hint true
#             and false) with --processes HPROCS (3), then the probe (4 and 16 KiB pages) in HPROCS fresh processes:
#             whether the batch's cudaMemcpyFlagPreferOverlapWithCompute is why kv-pool's h2d ce-batch was 2x the probe
#   cause     configs/h2d-batch-cause.json (ce-batch h2d/d2h, event_before true and false, pinned, mapped, registered), --processes 2,
#             beside tools/batch_submit_probe with and without --bind-node 0 in 2 processes each: what made dmabench's
#             h2d batch cost several times the probe's CPU per descriptor: no event just before it (LAB-NOTES 2026-12-06)
#   gate      dmabench-results gate-rates on configs/gate-gpu.json: AA (4) A/A comparisons and INJ (4) against the shim
#             spinning SPIN_NS (2000) ns before each runtime copy or launch call of NEW's processes, and SPIN_PER_MIB (0:
#             not set) ns more per MiB the call copies (4000: about 5% on the 256 MiB pipelined copies); GPROCS (6)
#             processes a side, GRERUNS (1) re-run looks, GBUDGET (90) s of re-runs a comparison, GSEED (1) the seed
#             (a second call with another seed adds comparisons: `gate-rates --table A/rates.json B/rates.json` merges)
# Everything goes under $WORK, packed into $OUT/gate.tar.gz (scripts/experiment.sh: OUT, WORK, REV, log, want, pack).
source "$(dirname "${BASH_SOURCE[0]}")/../../scripts/experiment.sh"
experiment gate "info build gpucheck kvpool gate"
PROCS="${PROCS:-8}" AA="${AA:-4}" INJ="${INJ:-4}" SPIN_NS="${SPIN_NS:-2000}" SPIN_PER_MIB="${SPIN_PER_MIB:-0}" OFF="${OFF:-0}"
HPROCS="${HPROCS:-3}" GPROCS="${GPROCS:-6}" GRERUNS="${GRERUNS:-1}" GBUDGET="${GBUDGET:-90}" GSEED="${GSEED:-1}"
B="$PWD/build/dmabench"
SHIM="$PWD/build/libdmabench_slowdown_shim.so"
PROBE="$PWD/build/vcpu_probe"
if want info; then
  { nvidia-smi; nproc; lscpu | head -25; grep -E 'MemTotal|MemFree' /proc/meminfo; uname -a; } >"$WORK/info.txt" 2>&1
  log "info"
fi
if want build; then
  cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DDMABENCH_GIT_REVISION="$REV" >"$WORK/configure.log" 2>&1 &&
    cmake --build build -j "$(nproc)" --target dmabench dmabench_slowdown_shim >"$WORK/build.log" 2>&1 ||
    { log "build failed"; tail -30 "$WORK/build.log"; exit 1; }
  "$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)" -O2 -std=c++17 -arch=sm_90 -o "$PROBE" tools/vcpu_probe.cu \
    >>"$WORK/build.log" 2>&1 || { log "probe build failed"; tail -30 "$WORK/build.log"; exit 1; }
  log "build done"
fi
if want gpucheck; then
  # the folder named from nvidia-smi (h200x1; h100-80gb-hbm3x1 where the device lent an H100 for the call)
  gpu_check 560
fi
if want kvpool; then
  mkdir -p "$WORK/kv"
  for k in $(seq 1 "$PROCS"); do
    "$B" --preset kv-pool --samples --order random --order-seed "$k" --out "$WORK/kv/quiet-$k.json" -q \
      >"$WORK/kv/quiet-$k.log" 2>&1
    r1=$?
    "$PROBE" --cpus quiet --passes 1 --samples 30 --pool-bytes 4294967296 --seed "$k" >"$WORK/kv/probe-$k.jsonl" \
      2>"$WORK/kv/probe-$k.err"
    r2=$?
    r3=-
    if [ "$k" -le "$OFF" ]; then
      "$B" --preset kv-pool --samples --order random --order-seed "$k" --cpu-choice off --out "$WORK/kv/off-$k.json" \
        -q >"$WORK/kv/off-$k.log" 2>&1
      r3=$?
    fi
    log "kv-pool round $k: quiet rc=$r1 probe rc=$r2 off rc=$r3"
  done
  python3 scripts/merge_runs.py "$WORK"/kv/quiet-*.json --out "$WORK/kv-pool-quiet.json" >"$WORK/merge.log" 2>&1
  [ "$OFF" -gt 0 ] && python3 scripts/merge_runs.py "$WORK"/kv/off-*.json --out "$WORK/kv-pool-off.json" >>"$WORK/merge.log" 2>&1
  tar czf "$WORK/kv.tgz" -C "$WORK" kv  # results/h200x1/levels/quiet-core/kv.tgz's form
  for t in spread slow probe; do
    python3 -c "import sys; from dmabench import quiet_core; print(quiet_core.generated_block(sys.argv[1:], '/'))" \
      "$t" "$WORK/kv.tgz"
  done >"$WORK/kv-analysis.md" 2>&1
  log "kv-pool analysed rc=$?"
  cat "$WORK/kv-analysis.md"
fi
if want hint; then
  mkdir -p "$WORK/hint"
  "$B" --config configs/kv-pool-hint.json --samples --processes "$HPROCS" --out "$WORK/hint/hint.json" -q \
    >"$WORK/hint/hint.log" 2>&1
  log "kv-pool-hint rc=$?"
  for k in $(seq 1 "$HPROCS"); do
    for pb in 4096 16384; do
      "$PROBE" --cpus quiet --passes 1 --samples 30 --pool-bytes 4294967296 --page-bytes "$pb" --seed "$k" \
        >"$WORK/hint/probe-$pb-$k.jsonl" 2>"$WORK/hint/probe-$pb-$k.err"
      log "probe $pb B round $k rc=$?"
    done
  done
  python3 - "$WORK/hint" <<'PY' | tee "$WORK/hint/summary.txt"
import glob, json, statistics, sys
d = sys.argv[1]
doc = json.load(open(f"{d}/hint.json"))
for r in doc["results"]:
    if r.get("status") == "ok":
        print(f"{r['name']}  overlap_hint={r['options'].get('overlap_hint')}  p50 {r['latency_us']['p50']:.1f} us "
              f"{r.get('p50_interval_us')}")
for pb in (4096, 16384):
    rows = [json.loads(l) for f in sorted(glob.glob(f"{d}/probe-{pb}-*.jsonl")) for l in open(f)]
    for k in ("batch_h2d_us", "batch_d2h_us"):
        v = [r[k] for r in rows if k in r]
        print(f"probe {pb} B {k}: median {statistics.median(v):.1f} us over {len(v)} lines" if v else f"probe {pb} B {k}: none")
PY
  pack
fi
if want cause; then
  mkdir -p "$WORK/cause"
  nvcc="$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)"
  "$nvcc" -O2 -std=c++17 -arch=sm_90 -o "$WORK/bsp" tools/batch_submit_probe.cu >"$WORK/cause/probe-build.log" 2>&1
  for k in 1 2; do
    for b in -1 0; do
      a=()
      [ "$b" -ge 0 ] && a=(--bind-node "$b")
      "$WORK/bsp" --cpus quiet --block 4KiB,16KiB --n 64,256,1024,4096 --mech batch --seed "$k" "${a[@]}" \
        >"$WORK/cause/probe-bind$b-$k.jsonl" 2>"$WORK/cause/probe-bind$b-$k.err"
      log "probe bind=$b round $k rc=$?"
    done
  done
  "$B" --config configs/h2d-batch-cause.json --processes 2 --out "$WORK/cause/cause.json" -q >"$WORK/cause/cause.log" 2>&1
  log "h2d-batch-cause rc=$?"
  tar czf "$WORK/cause.tgz" -C "$WORK" cause
  pack
fi
if want gate; then
  per_mib=()
  [ "$SPIN_PER_MIB" -gt 0 ] && per_mib=(--inject "DMABENCH_SHIM_SPIN_NS_PER_MIB=$SPIN_PER_MIB")
  python3 -m dmabench.cli gate-rates --bin "$B" --out "$WORK/gate" --aa "$AA" --injected "$INJ" \
    --inject "LD_PRELOAD=$SHIM" --inject "DMABENCH_SHIM_SPIN_NS=$SPIN_NS" "${per_mib[@]}" --busy-share 0 \
    --processes "$GPROCS" --reruns "$GRERUNS" --budget "$GBUDGET" --seed "$GSEED" \
    -- --config configs/gate-gpu.json >"$WORK/gate.log" 2>&1
  log "gate-rates rc=$?"
  tail -20 "$WORK/gate.log"
fi
