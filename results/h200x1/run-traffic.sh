#!/usr/bin/env bash
# How results/h200x1/{pairs,pairs-check,pairs-one-loaded,dma-beside-dma}.* were made (issue 28), on a
# one-GPU H200 machine, in one call: build, the reference loop, then dmabench. Writes everything under
# $OUT (default ./out-traffic) and packs it into traffic.tar.gz.
set -uo pipefail
export NCCL_NVLS_ENABLE=0
OUT="${OUT:-$PWD/out-traffic}"
mkdir -p "$OUT"
log() { echo "[$(date +%T)] $*" | tee -a "$OUT/steps.log"; }
log "build"
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DDMABENCH_TESTS=ON >"$OUT/configure.log" 2>&1 &&
  cmake --build build-gpu -j "$(nproc)" >"$OUT/build.log" 2>&1 || { log "build failed"; tail -40 "$OUT/build.log"; exit 1; }
nvcc -O2 -std=c++17 -arch=sm_90 -o build-gpu/beside_probe tools/beside_probe.cu >>"$OUT/build.log" 2>&1 || log "probe build failed"
nvidia-smi >"$OUT/nvidia-smi.txt" 2>&1
B=build-gpu/dmabench
log "reference loop"
build-gpu/beside_probe --iters 20000 >"$OUT/beside-probe.jsonl" 2>"$OUT/beside-probe.err"; log "probe rc=$?"
log "pairs (reference)"
$B --config configs/pairs.json --out "$OUT/pairs.json" >"$OUT/pairs.log" 2>&1; log "pairs rc=$?"
log "pairs --check bundled expectations"
$B --config configs/pairs.json --out "$OUT/pairs-check.json" --check configs/expect/h200.json >"$OUT/pairs-check.log" 2>&1; log "pairs-check rc=$?"
log "one pair loaded --check against the reference"
$B --config configs/pairs-one-loaded.json --out "$OUT/pairs-one-loaded.json" --check "$OUT/pairs.json" >"$OUT/pairs-one-loaded.log" 2>&1; log "pairs-one-loaded rc=$?"
log "dma beside dma"
$B --config configs/dma-beside-dma.json --out "$OUT/dma-beside-dma.json" >"$OUT/dma-beside-dma.log" 2>&1; log "dma-beside-dma rc=$?"
log "gpu test of the transfer workload"
build-gpu/tests/dmabench_gpu_tests --gtest_filter='GpuOverlap.TransferBesideTransfer*:GpuHostMemory.AMisplaced*' >"$OUT/gpu-tests.log" 2>&1; log "gpu tests rc=$?"
python3 scripts/matrix.py "$OUT/pairs.json" >"$OUT/pairs-matrix.md" 2>&1
python3 scripts/overlap_report.py "$OUT/dma-beside-dma.json" >"$OUT/dma-beside-dma.md" 2>&1
(cd "$OUT" && tar czf traffic.tar.gz --exclude traffic.tar.gz . )
log "done"
cat "$OUT/steps.log"
