#!/usr/bin/env bash
# How results/h200x1/first-run/ was made (issue 27) on a one-GPU H200 machine: the tree after the one-pass-per-case
# change, typed engine options and the registry-driven tests, run on a GPU for the first time. Steps: the build; bare
# `dmabench` (what it found); the quick sweep (progress line off a terminal, CSV export); the all-pairs config
# checked against configs/expect/h200.json (the figures of the earlier tree still hold); every GPU test (the
# registry-driven suites, the toy pattern on every GPU engine). Everything goes under $WORK, packed into
# $OUT/first-run.tar.gz.
source "$(dirname "${BASH_SOURCE[0]}")/../../scripts/experiment.sh"
experiment first-run "all"
log "build"
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 >"$WORK/configure.log" 2>&1 &&
  cmake --build build-gpu -j "$(nproc)" >"$WORK/build.log" 2>&1 || { log "build failed"; tail -40 "$WORK/build.log"; exit 1; }
nvidia-smi >"$WORK/nvidia-smi.txt" 2>&1
B=build-gpu/dmabench
(cd "$WORK" && timeout 60 "$OLDPWD/$B" >bare.txt 2>bare.err); log "bare rc=$?"
timeout 60 $B --config configs/quick.json --out "$WORK/quick.json" >"$WORK/quick.log" 2>"$WORK/quick.err"; log "quick rc=$?"
python3 scripts/export_csv.py "$WORK/quick.json" --out "$WORK/quick.csv"; log "csv rc=$?"
timeout 60 $B --config configs/pairs.json --out "$WORK/pairs.json" --check configs/expect/h200.json >"$WORK/pairs-check.log" 2>&1
log "pairs-check rc=$?"
timeout "${GPU_TESTS_S:-330}" build-gpu/tests/dmabench_gpu_tests --gtest_filter="${GPU_TESTS:-*}" >"$WORK/gpu-tests.log" 2>&1
log "gpu tests rc=$?"
log "done"  # (packed on exit)
