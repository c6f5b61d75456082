#!/usr/bin/env bash
# How results/h200x1/traffic/ was made (issue 28) on a one-GPU H200 machine: build, the reference loop
# (tools/beside_probe.cu), then dmabench. STEPS picks the steps (default all: probe pairs check loaded
# beside tests); everything goes under $WORK (default build/out-traffic), packed into $OUT/traffic.tar.gz.
source "$(dirname "${BASH_SOURCE[0]}")/../../scripts/experiment.sh"
experiment traffic "probe pairs check loaded beside tests"
log "build"
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DDMABENCH_TESTS=ON >"$WORK/configure.log" 2>&1 &&
  cmake --build build-gpu -j "$(nproc)" >"$WORK/build.log" 2>&1 || { log "build failed"; tail -40 "$WORK/build.log"; exit 1; }
nvidia-smi >"$WORK/nvidia-smi.txt" 2>&1
B=build-gpu/dmabench
if want probe; then
  nvcc -O2 -std=c++17 -arch=sm_90 -o build-gpu/beside_probe tools/beside_probe.cu >>"$WORK/build.log" 2>&1 || log "probe build failed"
  # 500 samples: a 64 KiB copy behind a same-direction 256 MiB stream waits ~19 ms per sample
  timeout 150 build-gpu/beside_probe --iters 500 >"$WORK/beside-probe.jsonl" 2>"$WORK/beside-probe.err"; log "probe rc=$?"
fi
if want pairs; then
  timeout 200 $B --config configs/pairs.json --out "$WORK/pairs.json" >"$WORK/pairs.log" 2>&1; log "pairs rc=$?"
  python3 scripts/matrix.py "$WORK/pairs.json" >"$WORK/pairs-matrix.md" 2>&1
  # the machine's link counts as the context records them (NVML's NVLink ends; null on the diagonal)
  python3 -c 'import json,sys; m=json.load(open(sys.argv[1]))["context"]["machine"]; print(json.dumps({"peer_links": m["peer_links"], "peer_links_unknown": m.get("peer_links_unknown")}))' "$WORK/pairs.json" >"$WORK/peer-links.json" 2>&1
fi
if want check; then
  timeout 200 $B --config configs/pairs.json --out "$WORK/pairs-check.json" --check configs/expect/h200.json >"$WORK/pairs-check.log" 2>&1
  log "pairs-check rc=$?"
fi
if want loaded; then
  timeout 200 $B --config configs/pairs-one-loaded.json --out "$WORK/pairs-one-loaded.json" --check "$WORK/pairs.json" >"$WORK/pairs-one-loaded.log" 2>&1
  log "pairs-one-loaded rc=$?"
fi
if want beside; then
  timeout 400 $B --config configs/dma-beside-dma.json --out "$WORK/dma-beside-dma.json" >"$WORK/dma-beside-dma.log" 2>&1
  log "dma-beside-dma rc=$?"
fi
if want tests; then
  # every GPU test (41 s on the issue 27 tree); GPU_TESTS narrows it
  timeout 300 build-gpu/tests/dmabench_gpu_tests --gtest_filter="${GPU_TESTS:-*}" >"$WORK/gpu-tests.log" 2>&1
  log "gpu tests rc=$?"
fi
log "done"  # (packed on exit)
