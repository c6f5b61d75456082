#!/usr/bin/env bash
# How results/h200x1/moe/ was made (issue 34) on a one-GPU H200 machine. STEPS picks the steps (default all):
#   gpucheck  scripts/gpu-check.sh: the README's test command, every ctest entry (log under results/h200x1/gpu-check/)
#   moe       configs/moe-1gpu.json: configs/moe.json's routings with 8 ranks on GPU 0, and scripts/moe_report.py;
#             MOE_RUNS (default 1) runs of it, each later one set against the first with scripts/compare.py
#   probe     tools/moe_probe.cu, an independent loop of cudaMemcpyAsync per pair or per token on 8 streams, on the
#             pair_tokens of chosen ce cases of the moe step, to set beside their p50
# Everything goes under $WORK, packed into $OUT/moe.tar.gz. DMABENCH_GIT_REVISION names the revision (the copy of the
# tree on the machine has no .git); DMABENCH_BIN runs a binary carried from an earlier start instead of building.
source "$(dirname "${BASH_SOURCE[0]}")/../../scripts/experiment.sh"
experiment moe "moe probe"
nvidia-smi >"$WORK/nvidia-smi.txt" 2>&1
if want gpucheck; then
  gpu_check 560
fi
if want moe && ! [ -x "$B" ]; then
  log "build"
  cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DDMABENCH_GIT_REVISION="$REV" >"$WORK/configure.log" 2>&1 &&
    cmake --build build -j "$(nproc)" --target dmabench >"$WORK/build.log" 2>&1 || { log "build failed"; tail -40 "$WORK/build.log"; exit 1; }
fi
[ -x "$B" ] && cp "$B" "$OUT/dmabench"  # for later machine starts (DMABENCH_BIN)
if want moe; then
  for run in $(seq 1 "${MOE_RUNS:-1}"); do  # MOE_RUNS: the same sweep again, for the run-to-run level
    name=moe-1gpu; [ "$run" -gt 1 ] && name="moe-1gpu-run$run"
    t0=$(date +%s)
    timeout "${MOE_TIMEOUT:-420}" $B --config configs/moe-1gpu.json --out "$WORK/$name.json" >"$WORK/$name.log" 2>&1; rc=$?
    log "$name rc=$rc wall $(( $(date +%s) - t0 )) s"
    tail -3 "$WORK/$name.log"
    python3 scripts/moe_report.py "$WORK/$name.json" >"$WORK/$name-report.md" 2>&1; log "moe_report $name rc=$?"
    [ "$run" -gt 1 ] && { python3 scripts/compare.py "$WORK/moe-1gpu.json" "$WORK/$name.json" >"$WORK/compare-run1-run$run.md" 2>&1; log "compare run1 run$run rc=$?"; }
  done
fi
if want probe; then
  nvcc -O2 -arch=sm_90 -o "$WORK/moe_probe" tools/moe_probe.cu >"$WORK/probe-build.log" 2>&1 || { log "probe build failed"; cat "$WORK/probe-build.log"; exit 1; }
  # the ce cases the probe repeats: DeepSeek-V3 and Mixtral dispatch, packed and scattered, uniform and zipf
  python3 - "$WORK" <<'PY' >"$WORK/probe-cases.txt"
import json, sys
work = sys.argv[1]
doc = json.load(open(f"{work}/moe-1gpu.json"))
n = 0
for r in doc["results"]:
    a = r.get("alltoallv")
    if r["status"] != "ok" or r["engine"] != "ce" or a["direction"] != "dispatch" or a["splits"] == "file":
        continue
    if a["tokens_per_rank"] not in (16, 256, 4096) or (a["tokens"] == "scattered" and a["tokens_per_rank"] > 256):
        continue
    path = f"{work}/counts-{n}.txt"
    with open(path, "w") as f:
        f.write(f"{a['ranks']}\n" + "\n".join(" ".join(map(str, row)) for row in a["pair_tokens"]) + "\n")
    print(path, a["token_bytes"], a["tokens"], r["latency_us"]["p50"], r["name"])
    n += 1
PY
  while read -r counts tb mode p50 name; do
    echo "== $name (dmabench p50 $p50 us)" >>"$WORK/probe.log"
    timeout 60 "$WORK/moe_probe" "$counts" "$tb" "$mode" 50 >>"$WORK/probe.log" 2>&1 || echo "probe rc=$?" >>"$WORK/probe.log"
  done <"$WORK/probe-cases.txt"
  log "probe: $(grep -c '^ranks' "$WORK/probe.log") loops"
fi
