#!/usr/bin/env bash
# Issue 39, the slow mode's cause: dmabench's per-sample core_share against tools/vcpu_probe.cu's paired samples, in
# fresh processes one after another. Run from the repository root on the GPU machine (the `device` tool), with $OUT
# set: builds dmabench and the probe, then ROUNDS rounds of one dmabench process of configs/kv-pool.json (random order,
# every sample kept) and one vcpu_probe process (300 paired samples of a 1024 x 4 KiB d2h batch, unpinned);
# everything under $OUT/cs, packed into $OUT/cs.tgz.
set -u
export NCCL_NVLS_ENABLE=0
ROUNDS=${ROUNDS:-8}
O="$OUT/cs"
mkdir -p "$O"
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nproc; date -u +%FT%TZ; } > "$O/machine.txt" 2>&1
# shellcheck source=/dev/null
source scripts/common.sh
if ! DMABENCH_NO_APT=1 build_dmabench > "$O/build.log" 2>&1; then tail -40 "$O/build.log"; exit 1; fi
NVCC=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
"$NVCC" -O2 -std=c++17 -arch=sm_90 -o /tmp/vcpu_probe tools/vcpu_probe.cu >> "$O/build.log" 2>&1 || { tail "$O/build.log"; exit 1; }
for k in $(seq 1 "$ROUNDS"); do
  build/dmabench --config configs/kv-pool.json --samples --order random --out "$O/kv-$k.json" -q > "$O/kv-$k.log" 2>&1
  echo "round $k dmabench rc=$?" >> "$O/machine.txt"
  /tmp/vcpu_probe --cpus any --passes 0 --paired 300 --seed "$k" > "$O/probe-$k.jsonl" 2>> "$O/probe.err"
  echo "round $k probe rc=$?" >> "$O/machine.txt"
done
tar czf "$OUT/cs.tgz" -C "$OUT" cs
cat "$O/machine.txt"
