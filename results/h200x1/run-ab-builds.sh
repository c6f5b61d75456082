#!/usr/bin/env bash
# A paired A/B run of two builds on one GPU (docs/ci.md's recipe: build main and the change, run the pair in one job):
# BASE_SRC (a source tree of the base revision; made from BASE_TAR where it is absent: `git archive BASE -- CMakeLists.txt
# LICENSE README.md cmake amd bench core engines gpu patterns power team tools tests python configs scripts notebooks
# docs | xz > ab-base-REV.tar.xz` (all but results/: the device
# takes 64 MiB with the tree, whose results/ are ~62; the archive is ignored by git: name it in the call's carry)
# and this tree, each built (Release, DMABENCH_CUDA=ON, in parallel), then `dmabench-results ab` on
# CONFIG (configs/sm-kernel.json: issue 53 item 9's sm kernel before and after) with ABPROCS (6) fresh processes a
# side, ABRERUNS (1) re-run looks, ABBUDGET (240) s. STEPS picks the steps: info build ab. Everything goes under
# $WORK, packed into $OUT/ab-builds.tar.gz; the per-process files are kept (ab's DIR/base/, DIR/new/).
source "$(dirname "${BASH_SOURCE[0]}")/../../scripts/experiment.sh"
experiment ab-builds "info build ab"
BASE_SRC="${BASE_SRC:-$PWD/build-base-src}" BASE_TAR="${BASE_TAR:-$(ls ab-base-*.tar.xz 2>/dev/null | head -1)}" CONFIG="${CONFIG:-configs/sm-kernel.json}"
ABPROCS="${ABPROCS:-6}" ABRERUNS="${ABRERUNS:-1}" ABBUDGET="${ABBUDGET:-240}"
BASE_BIN="$BASE_SRC/build/dmabench" NEW_BIN="$PWD/build/dmabench"
if [ ! -d "$BASE_SRC" ] && [ -n "$BASE_TAR" ]; then
  mkdir -p "$BASE_SRC" && tar -xJf "$BASE_TAR" -C "$BASE_SRC" || { log "cannot unpack $BASE_TAR"; exit 2; }
  r="${BASE_TAR##*ab-base-}"
  echo "${r%.tar.xz}" >"$BASE_SRC/REVISION"
fi
log "start rev=$REV base=$(cat "$BASE_SRC/REVISION" 2>/dev/null || echo '?') steps='$STEPS' config=$CONFIG"
if want info; then
  { echo "revision $REV, base $(cat "$BASE_SRC/REVISION" 2>/dev/null)"; nvidia-smi; nproc; lscpu | head -25; } \
    >"$WORK/info.txt" 2>&1
  log "info"
fi
build_one() {  # SRC BUILD_DIR REVISION LOG
  cmake -S "$1" -B "$2" -G Ninja -DCMAKE_BUILD_TYPE=Release -DDMABENCH_CUDA=ON -DDMABENCH_HIP=OFF \
    -DDMABENCH_GIT_REVISION="$3" >"$4" 2>&1 && cmake --build "$2" -j "$(( $(nproc) / 2 ))" --target dmabench >>"$4" 2>&1
}
if want build; then
  [ -d "$BASE_SRC" ] || { log "no base source tree at $BASE_SRC"; exit 2; }
  build_one "$BASE_SRC" "$BASE_SRC/build" "$(cat "$BASE_SRC/REVISION" 2>/dev/null || echo base)" "$WORK/build-base.log" &
  base_build=$!
  build_one . build "$REV" "$WORK/build-new.log" || { log "new build failed"; tail -30 "$WORK/build-new.log"; exit 1; }
  wait $base_build || { log "base build failed"; tail -30 "$WORK/build-base.log"; exit 1; }
  log "builds done ($(( $(date +%s) - T0 )) s in)"
fi
if want ab; then
  python3 -m dmabench.cli ab "$BASE_BIN" "$NEW_BIN" --out "$WORK/ab" --processes "$ABPROCS" --reruns "$ABRERUNS" \
    --budget "$ABBUDGET" --seed 1 -- --config "$CONFIG" >"$WORK/ab.log" 2>&1
  log "ab rc=$? ($(( $(date +%s) - T0 )) s in)"
  tail -45 "$WORK/ab.log"
fi
