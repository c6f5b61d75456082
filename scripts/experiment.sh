# The preamble every experiment driver (results/<machine>/run-*.sh) shares. Source it, then call
#   experiment NAME "DEFAULT STEPS" [TAR EXCLUDE...]
# It sets, each from the environment where given:
#   OUT    where the archive goes ($OUT on the device machine; else the working directory)
#   WORK   where everything is written ($WORK, else build/out-NAME: under the ignored build/, kept between calls on
#          a warm machine)
#   STEPS  the steps to run ($STEPS, else DEFAULT STEPS)
#   REV    the revision measured (DMABENCH_GIT_REVISION, else git describe --always --dirty --abbrev=12, else unknown)
#   B      the program (DMABENCH_BIN, else build/dmabench)
#   T0     the start, in seconds since the epoch
# exports NCCL_NVLS_ENABLE=0 (NVLink multicast stays off) and PYTHONPATH with the tree's python/, sets
# `set -uo pipefail`, and defines
#   log MESSAGE    a timestamped line on stdout and in $WORK/steps.log
#   want STEP      whether STEPS names STEP
#   pack           $WORK into $OUT/NAME.tar.gz, the excludes left out (also run when the script exits)
#   slot MAX MIN   seconds a step may take: at most MAX, never past BUDGET (when set) from T0 less PACK_S (20);
#                  0 when that is under MIN
#   gpu_check [S]  scripts/gpu-check.sh (the README's test command, every ctest entry) within S seconds (560), its
#                  output in $WORK/gpu-check.out; the log it leaves for this revision under each machine's folder
#                  (results/<machine>/gpu-check/$REV.log, the folder named from nvidia-smi) copied as
#                  $WORK/gpu-check-<machine>.log, so two machines' logs of one revision stay apart; returns its status
# (issue 53: the ~15 lines each driver repeated)
experiment() {
  local name="$1" default_steps="$2"
  shift 2
  set -uo pipefail
  EXPERIMENT_NAME="$name"
  EXPERIMENT_EXCLUDES=("$@")
  export NCCL_NVLS_ENABLE=0
  export PYTHONPATH="$PWD/python${PYTHONPATH:+:$PYTHONPATH}"
  T0=$(date +%s)
  OUT="${OUT:-$PWD}"
  WORK="${WORK:-$PWD/build/out-$name}"
  STEPS="${STEPS:-$default_steps}"
  REV="${DMABENCH_GIT_REVISION:-$(git describe --always --dirty --abbrev=12 2>/dev/null || echo unknown)}"
  B="${DMABENCH_BIN:-build/dmabench}"
  PACK_S="${PACK_S:-20}"
  mkdir -p "$OUT" "$WORK"
  trap pack EXIT
}

log() { echo "[$(date +%T)] $*" | tee -a "$WORK/steps.log"; }

want() { [[ " $STEPS " == *" $1 "* ]]; }

pack() {
  local excludes=() e
  for e in "${EXPERIMENT_EXCLUDES[@]}"; do excludes+=(--exclude "$e"); done
  tar czf "$OUT/$EXPERIMENT_NAME.tar.gz" -C "$WORK" "${excludes[@]}" .
}

slot() {
  local t=$1
  if [ -n "${BUDGET:-}" ]; then
    local left=$(( BUDGET - ($(date +%s) - T0) - PACK_S ))
    [ "$left" -lt "$t" ] && t=$left
  fi
  [ "$t" -lt "$2" ] && t=0
  echo "$t"
}

gpu_check() {
  local rc=0 f machine
  DMABENCH_GIT_REVISION="$REV" timeout "${1:-560}" bash scripts/gpu-check.sh >"$WORK/gpu-check.out" 2>&1 || rc=$?
  log "gpu-check rc=$rc"
  for f in results/*/gpu-check/"$REV".log; do
    [ -f "$f" ] || continue
    machine="${f#results/}"
    machine="${machine%%/*}"
    cp "$f" "$WORK/gpu-check-$machine.log"
  done
  grep -E "agreement |Passed|Failed|tests passed|gpu-check" "$WORK/gpu-check.out" | tail -12
  return "$rc"
}
