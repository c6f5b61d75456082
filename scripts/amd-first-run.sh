#!/usr/bin/env bash
# dmabench's first run on an AMD machine (MI300X), in one command: check what the driver and the libraries
# offer, build if needed, run a short validated sweep of every AMD engine and variant on 2 GPUs and on all
# GPUs (packet dumps, breakdown, a per-case timeout so a hang is a recorded case), run
# configs/mi300x-dma-latte.json at a few sizes, and write ONE archive with everything and a summary table set
# against the DMA-Latte artifact's published speedups. Nothing of it has run on AMD hardware yet.
#
# usage: scripts/amd-first-run.sh [--out FILE.tar.gz] [--backend auto|hip|host] [--build-dir DIR]
#          [--root DIR] [--sizes LIST] [--latte-sizes LIST] [--all-devices all|0,1,...] [--case-timeout S]
#          [--config FILE] [--steps sweep-2,sweep-all,dma-latte] [--max-hangs N]
#   --out           the archive (default ./amd-first-run-<host>-<UTC time>.tar.gz); never replaced if it exists
#   --backend       dmabench's backend (default auto: hip where dmabench sees AMD GPUs, else host, where the
#                   software SDMA engine stands in and no number is a hardware measurement)
#   --build-dir     where dmabench is (default build/); built there with scripts/common.sh when missing
#   --root          a directory that stands in for / when reading sys/class/kfd/kfd/topology,
#                   sys/bus/pci/devices, dev/kfd (a fake dev/kfd is a text file "1.17"), dev/dri and the
#                   libhsakmt headers (default /; or DMABENCH_SYSFS_ROOT); for tests of the checks
#   --sizes         bytes per rank of the sweep (default: the config's, 4KiB,1MiB)
#   --latte-sizes   bytes per rank for configs/mi300x-dma-latte.json (default 128,8KiB,128KiB,2MiB: the paper's
#                   sizes 1 KiB, 64 KiB, 1 MiB, 16 MiB on 8 GPUs, where size = bytes per rank x 8)
#   --all-devices   the "all GPUs" runs' devices (default all; on the host backend 0,1,...,7)
#   --case-timeout  seconds before a case counts as hung (default 60; dmabench's watchdog records it)
#   --max-hangs     a step stops after this many hung cases (default 5; its other cases are then `not run`)
#   --config        the sweep's config (default configs/amd-first-run.json)
#   --steps         which runs (default all three: sweep-2 = the sweep on GPUs 0,1; sweep-all = on all GPUs;
#                   dma-latte = configs/mi300x-dma-latte.json at --latte-sizes)
# Exit codes: 0 archive written, no check FAIL, every case ok or skipped; 1 archive written, but a check FAILed,
# a case failed / hung / did not run, or the build failed; 2 bad input (one line; nothing run, nothing
# written); 3 the archive could not be written (the work directory is kept and named).
set -uo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT_DIR="$(cd "$HERE/.." && pwd)"
HELPER=(python3 "$HERE/amd_first_run.py")

bad() { echo "amd-first-run.sh: $*" >&2; exit 2; }

OUT="" BACKEND=auto BUILD="$ROOT_DIR/build" FAKE_ROOT="${DMABENCH_SYSFS_ROOT:-/}" SIZES="" ALL=""
LATTE_SIZES="128,8KiB,128KiB,2MiB" CASE_TIMEOUT=60 CONFIG="$ROOT_DIR/configs/amd-first-run.json"
STEPS_WANTED="sweep-2,sweep-all,dma-latte" MAX_HANGS=5
while [ $# -gt 0 ]; do
  opt="$1"
  case "$opt" in
    --out|--backend|--build-dir|--root|--sizes|--latte-sizes|--all-devices|--case-timeout|--config|--steps|--max-hangs)
      [ $# -ge 2 ] || bad "$opt needs a value"
      val="$2"; shift 2 ;;
    -h|--help) sed -n '2,/^set -uo/p' "${BASH_SOURCE[0]}" | sed '$d' | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) bad "unknown argument '$opt'; accepted: --out, --backend, --build-dir, --root, --sizes, --latte-sizes, --all-devices, --case-timeout, --config, --steps, --max-hangs, --help" ;;
  esac
  case "$opt" in
    --out) OUT="$val" ;;
    --backend) BACKEND="$val" ;;
    --build-dir) BUILD="$val" ;;
    --root) FAKE_ROOT="$val" ;;
    --sizes) SIZES="$val" ;;
    --latte-sizes) LATTE_SIZES="$val" ;;
    --all-devices) ALL="$val" ;;
    --case-timeout) CASE_TIMEOUT="$val" ;;
    --config) CONFIG="$val" ;;
    --steps) STEPS_WANTED="$val" ;;
    --max-hangs) MAX_HANGS="$val" ;;
  esac
done
case "$BACKEND" in auto|hip|host) ;; *) bad "--backend: '$BACKEND' is not accepted; accepted: auto, hip, host" ;; esac
[ -d "$FAKE_ROOT" ] || bad "--root: '$FAKE_ROOT' is not a directory"
[[ "$CASE_TIMEOUT" =~ ^[0-9]+([.][0-9]+)?$ ]] && [ "$CASE_TIMEOUT" != 0 ] || bad "--case-timeout: '$CASE_TIMEOUT' is not accepted; accepted: seconds > 0"
[ -z "$ALL" ] || [ "$ALL" = all ] || [[ "$ALL" =~ ^[0-9]+(,[0-9]+)+$ ]] || bad "--all-devices: '$ALL' is not accepted; accepted: all, or 2 or more ids such as 0,1,2,3"
[[ "$MAX_HANGS" =~ ^[1-9][0-9]*$ ]] || bad "--max-hangs: '$MAX_HANGS' is not accepted; accepted: an integer >= 1"
[ -f "$CONFIG" ] || bad "--config: '$CONFIG' is not a file"
CONFIG="$(cd "$(dirname "$CONFIG")" && pwd)/$(basename "$CONFIG")"
for s in ${STEPS_WANTED//,/ }; do
  case "$s" in sweep-2|sweep-all|dma-latte) ;; *) bad "--steps: '$s' is not accepted; accepted: a comma list of sweep-2, sweep-all, dma-latte" ;; esac
done
want_step() { [[ ",$STEPS_WANTED," == *",$1,"* ]]; }
[ -z "$OUT" ] && OUT="$PWD/amd-first-run-$(hostname -s 2>/dev/null || echo host)-$(date -u +%Y%m%dT%H%M%SZ).tar.gz"
[[ "$OUT" == *.tar.gz ]] || bad "--out: '$OUT' must end in .tar.gz"
[ -e "$OUT" ] && bad "--out: '$OUT' exists; the kit never replaces an archive (choose another --out)"
[ -d "$(dirname "$OUT")" ] || bad "--out: the directory of '$OUT' does not exist"
OUT="$(cd "$(dirname "$OUT")" && pwd)/$(basename "$OUT")"
FAKE_ROOT="$(cd "$FAKE_ROOT" && pwd)"
R="${FAKE_ROOT%/}"  # the prefix of every path the checks read: empty for /
command -v python3 >/dev/null || bad "python3 is needed (apt install python3)"
# the sizes are checked here, before anything runs (the helper writes the configs with them later)
for s in ${SIZES:+"$SIZES"} "$LATTE_SIZES"; do
  "${HELPER[@]}" sizes "$CONFIG" "$s" /dev/null 2>/dev/null || bad "sizes: '$s' is not accepted; accepted: a comma list of sizes such as 4KiB,1MiB"
done

NAME="$(basename "$OUT" .tar.gz)"
TMP="$(mktemp -d)" || exit 3
WORK="$TMP/$NAME"
mkdir -p "$WORK/system" "$WORK/runs" "$WORK/packets" "$WORK/results" "$WORK/configs"
cleanup() { [ -n "${KEEP_WORK:-}" ] || rm -rf "$TMP"; }
trap cleanup EXIT
LOG="$WORK/log.txt"
log() { printf '%s %s\n' "$(date -u +%H:%M:%S)" "$*" | tee -a "$LOG" >&2; }
meta() { printf '%s\t%s\n' "$1" "$2" >> "$WORK/meta.tsv"; }
FAILED=0

# ---- checks: each prints OK / WARN / FAIL with the value and what it means --------------------------------
check() {  # name verdict value meaning
  printf '%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$4" >> "$WORK/checks.tsv"
  printf '[%-4s] %s: %s\n       %s\n' "$2" "$1" "$3" "$4" | tee -a "$WORK/checks.txt" "$LOG" >&2
  [ "$2" = FAIL ] && FAILED=1
  return 0
}
KFD="$R/sys/class/kfd/kfd/topology/nodes"
PCI="$R/sys/bus/pci/devices"
prop() { awk -v k="$2" '$1 == k { print $2; found = 1; exit } END { if (!found) print "" }' "$1" 2>/dev/null; }
node_ids() { for d in "$KFD"/*/; do b="$(basename "$d")"; [[ "$b" =~ ^[0-9]+$ ]] && echo "$b"; done | sort -n; }
GPUS=() CPUS=()
for n in $(node_ids); do
  if [ "$(prop "$KFD/$n/properties" simd_count)" -gt 0 ] 2>/dev/null; then GPUS+=("$n"); else CPUS+=("$n"); fi
done
bus_of() {  # KFD node -> PCI bus id; location_id = (bus << 8) | (device << 3) | function (amd/topology.hpp)
  local loc dom
  loc="$(prop "$KFD/$1/properties" location_id)"; dom="$(prop "$KFD/$1/properties" domain)"
  printf '%04x:%02x:%02x.%x' "${dom:-0}" $(( ${loc:-0} >> 8 )) $(( (${loc:-0} >> 3) & 31 )) $(( ${loc:-0} & 7 ))
}
is_cpu() { local c; for c in "${CPUS[@]}"; do [ "$c" = "$1" ] && return 0; done; return 1; }
is_gpu() { local g; for g in "${GPUS[@]}"; do [ "$g" = "$1" ] && return 0; done; return 1; }
links_of() { ls -d "$KFD/$1"/io_links/*/ "$KFD/$1"/p2p_links/*/ 2>/dev/null; }

check_topology() {
  if [ ${#GPUS[@]} -eq 0 ]; then
    check kfd-topology FAIL "no GPU node under $KFD" "the amdgpu driver's KFD is not loaded, or no AMD GPU is visible here: no check below can say anything"
    return
  fi
  check kfd-topology OK "${#GPUS[@]} GPU node(s) (${GPUS[*]}), ${#CPUS[@]} CPU node(s)" "KFD node ids as sysfs numbers them (libhsakmt and HIP number only the GPUs they can open)"
  local g v gfx=() other=0
  for g in "${GPUS[@]}"; do
    v="$(prop "$KFD/$g/properties" gfx_target_version)"
    [ -n "$v" ] || { other=1; gfx+=("?"); continue; }
    gfx+=("$(printf 'gfx%d%d%x' $((v / 10000)) $((v / 100 % 100)) $((v % 100)))")
    [ "$v" = 90402 ] || other=1
  done
  local uniq; uniq="$(printf '%s\n' "${gfx[@]}" | sort | uniq -c | awk '{ printf "%s%s x %s", sep, $1, $2; sep = ", " }')"
  if [ $other = 0 ]; then check gfx-target OK "$uniq" "gfx942 (MI300X / MI300A / MI308X), the ISA of the DMA-Latte figures"
  else check gfx-target WARN "$uniq" "not all gfx942: the DMA-Latte figures are for MI300X (gfx942); SDMA packets and limits here follow SDMA 4.4.2"; fi
}

check_render_nodes() {  # libhsakmt skips a GPU whose render node it cannot open (issue 25, defect 3)
  local g minor hidden=()
  for g in "${GPUS[@]}"; do
    minor="$(prop "$KFD/$g/properties" drm_render_minor)"
    local dev="$R/dev/dri/renderD${minor:-?}"
    { [ -n "$minor" ] && [ -e "$dev" ] && [ -r "$dev" ] && [ -w "$dev" ]; } || hidden+=("node $g ($(bus_of "$g")): /dev/dri/renderD${minor:-?} cannot be opened")
  done
  [ ${#GPUS[@]} -eq 0 ] && return
  if [ ${#hidden[@]} -eq 0 ]; then
    check render-nodes OK "all ${#GPUS[@]} GPUs' render nodes can be opened" "libhsakmt and HIP see every GPU KFD lists, so their numbering follows KFD's node order"
  else
    check render-nodes WARN "$(IFS=';'; echo "${hidden[*]}")" "hidden GPU(s): libhsakmt and HIP skip them (containers that expose some GPUs; no render/video group), so KFD node ids are not libhsakmt's or HIP's ids and a GPU's recommended engines must be taken by bus id (issue 25, defect 3)"
  fi
}

check_kfd_version() {
  local v rc
  if [ ! -e "$R/dev/kfd" ]; then
    check kfd-version FAIL "no /dev/kfd" "the KFD device is missing (driver not loaded, or not passed into this container): the sdma engine cannot create queues"
    return
  fi
  v="$("${HELPER[@]}" kfd-version "$R/dev/kfd" 2>&1)"; rc=$?
  if [ $rc -ne 0 ]; then
    check kfd-version FAIL "cannot read: $v" "/dev/kfd cannot be opened (add the user to the render and video groups): no KFD queue can be made"
  elif [ "${v%%.*}" -gt 1 ] || { [ "${v%%.*}" = 1 ] && [ "${v#*.}" -ge 17 ]; }; then
    check kfd-version OK "$v" "KFD ioctl >= 1.17: SDMA queues on a chosen engine (SDMA_BY_ENG_ID) and per-link recommended engines exist in the kernel"
  else
    check kfd-version WARN "$v" "KFD ioctl < 1.17: no queue on a chosen engine; dmabench's sdma engine then assumes the engine from KFD's allocation order (as the DMA-Latte artifact does)"
  fi
}

check_partitions() {  # amdgpu's sysfs on the PCI device: current_compute_partition (amdgpu_gfx.c), current_memory_partition (amdgpu_gmc.c)
  local kind file want g bdf v vals=() missing=0 odd=0 seen=" "
  for kind in compute memory; do
    file="current_${kind}_partition"; [ $kind = compute ] && want=SPX || want=NPS1
    vals=() missing=0 odd=0 seen=" "
    for g in "${GPUS[@]}"; do
      bdf="$(bus_of "$g")"
      [[ "$seen" == *" $bdf "* ]] && continue  # CPX / DPX: several KFD nodes share one PCI device
      seen+="$bdf "
      if [ -r "$PCI/$bdf/$file" ]; then v="$(tr -d '[:space:]' < "$PCI/$bdf/$file")"; else v="?"; missing=1; fi
      vals+=("$bdf=$v"); [ "$v" = "$want" ] || [ "$v" = "?" ] || odd=1
    done
    [ ${#GPUS[@]} -eq 0 ] && return
    if [ $odd = 1 ]; then
      check "${kind}-partition" WARN "${vals[*]}" "not $want on every GPU: the DMA-Latte figures are for SPX / NPS1 (one GPU per device, 16 SDMA engines each); in CPX each XCD is a GPU of its own with fewer engines, and the recommended-engine table is SPX-only"
    elif [ $missing = 1 ]; then
      check "${kind}-partition" WARN "${vals[*]}" "$file not reported (an older amdgpu, or not an MI300-class GPU): the mode cannot be confirmed"
    else
      check "${kind}-partition" OK "all $want" "the mode of the DMA-Latte figures"
    fi
  done
}

check_sdma_engines() {  # KFD node properties num_sdma_engines (PCIe), num_sdma_xgmi_engines, num_sdma_queues_per_engine
  local g e x q vals=() bad=0 odd=0
  for g in "${GPUS[@]}"; do
    e="$(prop "$KFD/$g/properties" num_sdma_engines)"; x="$(prop "$KFD/$g/properties" num_sdma_xgmi_engines)"
    q="$(prop "$KFD/$g/properties" num_sdma_queues_per_engine)"
    vals+=("${e:-?}+${x:-?}/${q:-?}")
    if [ -z "$e" ] || [ -z "$x" ] || [ $(( ${e:-0} + ${x:-0} )) -eq 0 ]; then bad=1; elif [ $((e + x)) -ne 16 ]; then odd=1; fi
  done
  [ ${#GPUS[@]} -eq 0 ] && return
  local v; v="$(printf '%s\n' "${vals[@]}" | sort | uniq -c | awk '{ printf "%s%s GPU(s) %s", sep, $1, $2; sep = ", " }') (PCIe+xGMI engines/queues per engine)"
  if [ $bad = 1 ]; then check sdma-engines FAIL "$v" "a GPU reports no SDMA engine count: the sdma engine cannot check its engines against the hardware (fused-off engines hang, ROCm/mori #693)"
  elif [ $odd = 1 ]; then check sdma-engines WARN "$v" "not MI300X's 16 (2 PCIe + 14 xGMI) in SPX: the DMA-Latte artifact refuses to run below 16; dmabench uses only the engines counted here (MI308X and CPX have fewer)"
  else check sdma-engines OK "$v" "16 engines per GPU as on MI300X in SPX: 2 host-facing (PCIe), 14 xGMI"; fi
}

check_atomics() {  # the GPU's io_link to a CPU node: flags bit 3 = CRAT_IOLINK_FLAGS_NO_ATOMICS_64_BIT
  # Linux drivers/gpu/drm/amd/amdkfd/kfd_crat.h (bit 0 ENABLED, 1 NON_COHERENT, 2 NO_ATOMICS_32_BIT,
  # 3 NO_ATOMICS_64_BIT, 4 NO_PEER_TO_PEER_DMA) and kfd_topology.c (kfd_set_iolink_no_atomics: set when the
  # GPU could not enable PCIe atomics to the root port); libhsakmt src/topology.c reads the sysfs "flags" into
  # HsaIoLinkProperties.Flags (hsakmttypes.h HSA_LINKPROPERTY: Override, NonCoherent, NoAtomics32bit,
  # NoAtomics64bit, NoPeerToPeerDMA); ROCR-Runtime src/core/runtime/amd_topology.cpp turns NoAtomics64bit into
  # atomic_support_64bit and amd_blit_sdma.cpp (BlitSdma::Initialize) uses ATOMIC completion only when the link
  # from the GPU to the first CPU node has it, FENCE otherwise.
  local g l to flags none=() ok=0 nolink=()
  for g in "${GPUS[@]}"; do
    local found=""
    for l in $(links_of "$g"); do
      to="$(prop "$l/properties" node_to)"; is_cpu "$to" || continue
      flags="$(prop "$l/properties" flags)"; found="${flags:-?}"
      break
    done
    if [ -z "$found" ] || [ "$found" = "?" ]; then nolink+=("node $g"); continue; fi
    if (( (found & 8) != 0 )); then none+=("node $g ($(bus_of "$g")) flags $(printf '0x%x' "$found")"); else ok=$((ok + 1)); fi
  done
  [ ${#GPUS[@]} -eq 0 ] && return
  if [ ${#none[@]} -gt 0 ]; then
    check pcie-atomics WARN "no 64-bit atomics to host memory: $(IFS=';'; echo "${none[*]}")" "the link to the CPU reports NoAtomics64bit: an SDMA ATOMIC completion word in host memory never changes there (ROCr falls back to FENCE); dmabench's sync=atomic must be skipped on these GPUs and sync=fence is the default (see dmabench --features)"
  elif [ ${#nolink[@]} -gt 0 ]; then
    check pcie-atomics WARN "no GPU -> CPU io_link for: ${nolink[*]}" "the atomics flags cannot be read: whether sync=atomic can complete is unknown"
  else
    check pcie-atomics OK "all $ok GPUs: 64-bit atomics to host memory (io_link flags bit 3 clear)" "SDMA ATOMIC completion (sync=atomic, the artifact's SYNC_TYPE=2) can reach host memory"
  fi
}

check_recommended() {  # io_links' recommended_sdma_engine_id_mask (KFD ioctl 1.17 era, kfd_topology.c)
  local g l to mask type e total rows=() out="$WORK/system/recommended-engines.txt" absent=0 multi=0 bad=() pcie=0 n=0
  printf 'recommended SDMA engine per link (KFD node ids; src row -> dst column; "-" no mask, "m" several bits)\n%-6s' src > "$out"
  for g in "${GPUS[@]}"; do printf ' %4s' "$g" >> "$out"; done; echo >> "$out"
  for g in "${GPUS[@]}"; do
    local pe xe did; pe="$(prop "$KFD/$g/properties" num_sdma_engines)"; xe="$(prop "$KFD/$g/properties" num_sdma_xgmi_engines)"
    did="$(prop "$KFD/$g/properties" device_id)"  # decimal in sysfs; 29858 = 0x74a2, MI308X
    total=$(( ${pe:-0} + ${xe:-0} ))
    declare -A cell=()
    for l in $(links_of "$g"); do
      to="$(prop "$l/properties" node_to)"; is_gpu "$to" || continue
      [ "$to" = "$g" ] && continue
      mask="$(prop "$l/properties" recommended_sdma_engine_id_mask)"; n=$((n + 1))
      if [ -z "$mask" ] || [ "$mask" = 0 ]; then cell[$to]="-"; absent=1; continue; fi
      if (( (mask & (mask - 1)) != 0 )); then cell[$to]="m"; multi=1; continue; fi
      e=0; while (( (mask >> e) != 1 )); do e=$((e + 1)); done
      cell[$to]=$e
      if [ "$e" -ge "$total" ]; then bad+=("node $g -> $to: engine $e of $total")
      elif [ "${did:-0}" = 29858 ] && (( e % 2 == 1 )); then bad+=("node $g -> $to: engine $e, fused off on MI308X (0x74a2: only even ids are backed)")
      elif [ "$e" -lt "${pe:-0}" ]; then pcie=1; fi
    done
    printf '%-6s' "$g" >> "$out"
    for to in "${GPUS[@]}"; do [ "$to" = "$g" ] && printf ' %4s' "." >> "$out" || printf ' %4s' "${cell[$to]:--}" >> "$out"; done
    echo >> "$out"
    unset cell
  done
  [ ${#GPUS[@]} -eq 0 ] && return
  cat "$out" >> "$LOG"
  if [ ${#bad[@]} -gt 0 ]; then
    check recommended-engines FAIL "$(IFS=';'; echo "${bad[*]}")" "the driver recommends an engine the GPU does not have (fused off, as on MI308X: ROCm/mori #693): a queue on it hangs; dmabench must skip such cases (issue 25, defect 4); the table is system/recommended-engines.txt"
  elif [ $n -eq 0 ]; then
    check recommended-engines WARN "no GPU-to-GPU link" "one GPU, or the links are not reported: no engine table"
  elif [ $absent = 1 ]; then
    check recommended-engines WARN "links without recommended_sdma_engine_id_mask (table: system/recommended-engines.txt)" "an older kernel (before KFD 1.17's per-link masks): engines=recommended has no driver recommendation"
  elif [ $multi = 1 ] || [ $pcie = 1 ]; then
    check recommended-engines WARN "masks with several engines or a PCIe engine (system/recommended-engines.txt)" "no single xGMI engine per link (not SPX with 8 xGMI GPUs): ROCr then gangs copies; dmabench takes the lowest engine"
  else
    check recommended-engines OK "$n links, one xGMI engine each (system/recommended-engines.txt)" "the per-link engine table DMA-Latte's SDMA_MAP is made from (scripts/sdma_map.py writes it as a map file)"
  fi
}

check_libhsakmt() {  # BY_ENG_ID: hsaKmtCreateQueueExt + HSA_QUEUE_SDMA_BY_ENG_ID (ROCm >= 6.3's libhsakmt; SDMA-FACTS.md §2.3)
  local h dir found=() has=() rocm="${ROCM_PATH:-/opt/rocm}" lib sym=""
  for h in "$R$rocm/include/hsakmt/hsakmt.h" "$R/opt/rocm/include/hsakmt/hsakmt.h" \
           "$R/usr/include/hsakmt/hsakmt.h" "$R/usr/include/hsakmt.h"; do
    [ -f "$h" ] || continue
    [[ " ${found[*]} " == *" $h "* ]] && continue
    found+=("$h"); dir="$(dirname "$h")"
    if grep -q hsaKmtCreateQueueExt "$h" && grep -qs HSA_QUEUE_SDMA_BY_ENG_ID "$dir"/hsakmt*.h; then has+=("$h"); fi
    echo "header $h: hsaKmtCreateQueueExt $(grep -c hsaKmtCreateQueueExt "$h") line(s), HSA_QUEUE_SDMA_BY_ENG_ID $(cat "$dir"/hsakmt*.h | grep -c HSA_QUEUE_SDMA_BY_ENG_ID) line(s)" >> "$WORK/system/hsakmt.txt"
  done
  for lib in "$R$rocm"/lib/libhsakmt.{a,so} "$R"/usr/lib/*/libhsakmt.{a,so}; do
    [ -f "$lib" ] && command -v nm >/dev/null || continue
    if nm -D "$lib" 2>/dev/null | grep -q ' T hsaKmtCreateQueueExt' || nm "$lib" 2>/dev/null | grep -q ' T hsaKmtCreateQueueExt'; then sym+=" $lib: has hsaKmtCreateQueueExt"; else sym+=" $lib: no hsaKmtCreateQueueExt"; fi
  done
  [ -n "$sym" ] && echo "libraries:$sym" >> "$WORK/system/hsakmt.txt"
  local built; built="$(grep -E '^\s*\[(yes|no )\] .*HSA_QUEUE_SDMA_BY_ENG_ID\)' "$WORK/features.txt" 2>/dev/null | head -1 | sed -E 's/^\s*\[(yes|no ?)\].*/\1/')"
  local v="installed headers: ${found[*]:-none}; with BY_ENG_ID: ${has[*]:-none}; dmabench built with it: ${built:-unknown (no --features)}"
  if [ "$built" = yes ]; then
    check libhsakmt-by-eng-id OK "$v" "queues are created on the engine the plan names (hsaKmtCreateQueueExt, HSA_QUEUE_SDMA_BY_ENG_ID), where KFD >= 1.17"
  elif [ ${#has[@]} -gt 0 ]; then
    check libhsakmt-by-eng-id WARN "$v" "the installed libhsakmt has BY_ENG_ID but this dmabench was built without it: rebuild (cmake finds hsakmt under ROCM_PATH / CMAKE_PREFIX_PATH); until then engines come from KFD's allocation order"
  else
    check libhsakmt-by-eng-id WARN "$v" "no libhsakmt with BY_ENG_ID (ROCm >= 6.3): each queue's engine is assumed from KFD's allocation order, as the DMA-Latte artifact assumes it; another process holding xGMI SDMA queues shifts it silently"
  fi
}

check_backend() {
  local line
  line="$(grep -E '^backend hip:' "$WORK/features.txt" 2>/dev/null | head -1)"
  if [ "$USE_BACKEND" = host ]; then
    check dmabench-backend WARN "host (${line:-backend hip: not in this build})" "the software SDMA engine stood in for the GPUs: the run tests the kit's plumbing; no number is a hardware measurement"
    return
  fi
  local count; count="$(sed -nE 's/^backend hip: available, ([0-9]+) device.*/\1/p' <<<"$line")"
  if [ -z "$count" ]; then check dmabench-backend FAIL "${line:-no hip backend in this build}" "dmabench cannot drive the GPUs: build with ROCm (hipcc, libhsakmt) and run where the GPUs are visible"
  elif [ "$count" != "${#GPUS[@]}" ]; then check dmabench-backend WARN "hip: $count device(s), KFD: ${#GPUS[@]} GPU node(s)" "HIP sees other GPUs than KFD lists (HIP_VISIBLE_DEVICES / ROCR_VISIBLE_DEVICES, hidden render nodes): HIP ordinals are not KFD node order"
  else check dmabench-backend OK "hip: $count device(s), as many as KFD's GPU nodes" "dmabench drives every GPU"; fi
}

# ---- build, features ---------------------------------------------------------------------------------------
log "dmabench AMD first run -> $OUT (root $FAKE_ROOT)"
meta "archive" "$(basename "$OUT")"; meta "started (UTC)" "$(date -u +%Y-%m-%dT%H:%M:%SZ)"; meta "host" "$(hostname 2>/dev/null)"
meta "root read by the checks" "$FAKE_ROOT"
check_topology; check_render_nodes; check_kfd_version; check_partitions; check_sdma_engines; check_atomics; check_recommended

DMABENCH="$BUILD/dmabench"
if [ ! -x "$DMABENCH" ]; then
  log "building dmabench into $BUILD (scripts/common.sh)"
  ( export BUILD_DIR="$BUILD"; source "$HERE/common.sh" && ensure_packages && build_dmabench ) >> "$WORK/build.txt" 2>&1 || log "build failed (build.txt)"
fi
USE_BACKEND="$BACKEND"
if [ -x "$DMABENCH" ]; then
  "$DMABENCH" --features > "$WORK/features.txt" 2>&1 || log "dmabench --features exited $?"
  "$DMABENCH" --version >> "$WORK/system/uname.txt" 2>&1
  if [ "$USE_BACKEND" = auto ]; then
    grep -qE '^backend hip: available' "$WORK/features.txt" && USE_BACKEND=hip || USE_BACKEND=host
  fi
  # the sdma platform's facts per GPU (PCIe 64-bit atomics, so what sync=auto completes with; usable engines)
  { awk '/^sdma platform on/ { p = 1 } p && /^$/ { p = 0 } p' "$WORK/features.txt"
    grep -iE 'atomics|usable|fused' "$WORK/features.txt" | grep -vE '^\s*option |^sdma platform|^  '; } > "$WORK/features-amd.txt" 2>/dev/null
  meta "dmabench" "$(head -1 "$WORK/features.txt")"
else
  [ "$USE_BACKEND" = auto ] && USE_BACKEND=host
  FAILED=1
  check dmabench-build FAIL "no $DMABENCH" "the build failed (build.txt): nothing was measured"
fi
meta "backend" "$USE_BACKEND"
check_libhsakmt
[ -x "$DMABENCH" ] && check_backend

# ---- system text: KFD topology, partitions, rocm-smi --------------------------------------------------------
{
  for f in "$R/sys/class/kfd/kfd/topology/system_properties" "$R/sys/class/kfd/kfd/topology/generation_id" \
           $(find "$KFD" -name properties 2>/dev/null | sort -V); do
    [ -f "$f" ] && { echo "== ${f#"$R"}"; cat "$f"; }
  done
} > "$WORK/system/kfd-topology.txt" 2>&1
for g in "${GPUS[@]}"; do
  bdf="$(bus_of "$g")"
  for f in current_compute_partition available_compute_partition current_memory_partition available_memory_partition; do
    [ -r "$PCI/$bdf/$f" ] && echo "node $g $bdf $f: $(cat "$PCI/$bdf/$f")"
  done
done > "$WORK/system/partitions.txt" 2>&1
{ uname -a; cat /sys/module/amdgpu/version 2>/dev/null; env | grep -E '^(HSA_|HIP_|ROCR_|GPU_|ROCM|AMD_|DMABENCH_)' | sort; } >> "$WORK/system/uname.txt" 2>&1
if [ "$FAKE_ROOT" != / ]; then
  echo "not run: --root is $FAKE_ROOT, not this machine's /" > "$WORK/system/rocm-smi.txt"
else
  for cmd in "rocm-smi" "rocm-smi --showtopo" "rocm-smi --showhw" "rocm-smi --showdriverversion --showfwinfo" \
             "amd-smi static" "amd-smi topology" "rocminfo"; do
    command -v "${cmd%% *}" >/dev/null || { echo "== $cmd: not installed"; continue; }
    echo "== $cmd"; timeout 60 $cmd 2>&1
  done > "$WORK/system/rocm-smi.txt"
fi

# ---- the runs --------------------------------------------------------------------------------------------
if [ -z "$ALL" ]; then [ "$USE_BACKEND" = host ] && ALL=0,1,2,3,4,5,6,7 || ALL=all; fi
cp "$CONFIG" "$ROOT_DIR/configs/mi300x-dma-latte.json" "$WORK/configs/"
SWEEP_CONFIG="$WORK/configs/$(basename "$CONFIG")"
[ -n "$SIZES" ] && "${HELPER[@]}" sizes "$CONFIG" "$SIZES" "$SWEEP_CONFIG"
LATTE_CONFIG="$WORK/configs/mi300x-dma-latte-sizes.json"
"${HELPER[@]}" sizes "$ROOT_DIR/configs/mi300x-dma-latte.json" "$LATTE_SIZES" "$LATTE_CONFIG"
meta "sweep sizes (bytes per rank)" "${SIZES:-as in the config}"; meta "dma-latte sizes (bytes per rank)" "$LATTE_SIZES"
meta "all GPUs" "$ALL"; meta "case timeout (s)" "$CASE_TIMEOUT"; meta "sweep config" "${CONFIG#"$ROOT_DIR/"}"
meta "steps" "$STEPS_WANTED"; meta "max hangs per step" "$MAX_HANGS"

# One dmabench process per step; a hang is recorded by the watchdog (exit 4) and ends that process, and the
# cases not yet recorded then run in a new one (so one hang costs one case, never the sweep).
run_step() {  # step config devices
  local step="$1" config="$2" devices="$3" dir="$WORK/runs/$1" try rc filter res before after limit
  mkdir -p "$dir" "$WORK/packets/$step"
  : > "$dir/done.txt"; : > "$dir/runs.tsv"
  (cd "$ROOT_DIR" && "$DMABENCH" --config "$config" --backend "$USE_BACKEND" --devices "$devices" --list) > "$dir/list.txt" 2> "$dir/list.err"
  rc=$?
  if [ $rc -ne 0 ]; then
    log "$step: --list exited $rc: $(head -c 300 "$dir/list.err")"; FAILED=1
    printf 'list\t%s\t\t%s\n' "$rc" "dmabench --list failed" >> "$dir/runs.tsv"; return
  fi
  grep -v '^#' "$dir/list.txt" | sed '/^\s*$/d' > "$dir/cases.txt"
  log "$step: $(wc -l < "$dir/cases.txt") cases on devices $devices"
  # the process's own limit, for a hang outside any case (start, teardown): every case at its timeout, + 5 min
  limit="$(awk -v t="$CASE_TIMEOUT" -v n="$(wc -l < "$dir/cases.txt")" 'BEGIN { print int(t * n + 300) }')"
  for ((try = 1; try <= 100; try++)); do
    filter="$("${HELPER[@]}" remaining "$dir/cases.txt" "$dir/done.txt")" || { FAILED=1; break; }
    [ -z "$filter" ] && break
    res="runs/$step/t$try.json"
    before=$(wc -l < "$dir/done.txt")
    (cd "$ROOT_DIR" && timeout -k 30 "$limit" "$DMABENCH" --config "$config" --backend "$USE_BACKEND" --devices "$devices" \
      --out "$WORK/$res" --packets "$WORK/packets/$step" --case-timeout "$CASE_TIMEOUT" --benchmark_filter="$filter" \
      --allow-empty) > "$WORK/${res%.json}.log" 2>&1  # a step whose cases all skip here is in the summary, not a broken run
    rc=$?
    printf '%s\t%s\t%s\t%s\n' "$try" "$rc" "$res" "$(wc -l < "$dir/cases.txt") listed, $before recorded before" >> "$dir/runs.tsv"
    if [ -e "$WORK/$res" ] || [ -e "$WORK/$res.journal" ]; then
      "${HELPER[@]}" recorded "$WORK/$res" > "$WORK/${res%.json}.tsv" 2>> "$LOG" && cut -f1 "$WORK/${res%.json}.tsv" >> "$dir/done.txt"
      awk -F'\t' '$2 == "hung"' "$WORK/${res%.json}.tsv" | while IFS=$'\t' read -r name _ reason; do log "$step: HUNG $name: ${reason:0:160}"; done
    fi
    after=$(wc -l < "$dir/done.txt")
    [ $rc -le 1 ] || [ $rc = 4 ] || log "$step: dmabench exited $rc: $(tail -c 300 "$WORK/${res%.json}.log" | tr '\n' ' ')"
    [ $rc = 0 ] || FAILED=1
    if [ $rc = 4 ] && [ "$(cat "$WORK"/runs/"$step"/t*.tsv 2>/dev/null | awk -F'\t' '$2 == "hung"' | wc -l)" -ge "$MAX_HANGS" ]; then
      log "$step: $MAX_HANGS cases hung (--max-hangs): the step stops; its other cases are not run"
      break
    fi
    [ $rc = 4 ] && [ "$after" -gt "$before" ] && continue  # the hung case is recorded: run the rest
    break
  done
  local files=(); for f in "$WORK"/runs/"$step"/t*.json; do [ -e "$f" ] && files+=("$f"); done
  [ ${#files[@]} -gt 0 ] && "${HELPER[@]}" merge "$WORK/results/$step.json" "${files[@]}" 2>> "$LOG"
  log "$step: done"
}

if [ -x "$DMABENCH" ]; then
  want_step sweep-2 && run_step sweep-2 "$SWEEP_CONFIG" 0,1
  want_step sweep-all && run_step sweep-all "$SWEEP_CONFIG" "$ALL"
  want_step dma-latte && run_step dma-latte "$LATTE_CONFIG" "$ALL"
  if [ -f "$WORK/results/dma-latte.json" ]; then
    base="$("${HELPER[@]}" latte-baseline "$WORK/results/dma-latte.json" 2>> "$LOG")"
    { python3 "$HERE/dma_latte_report.py" "$WORK/results/dma-latte.json" ${base:+--baseline "$base"}
      [ -f "$WORK/results/sweep-2.json" ] && { echo; echo "**Breakdown (first-run sweep, 2 GPUs)**"; python3 "$HERE/dma_latte_report.py" "$WORK/results/sweep-2.json" --breakdown "$WORK/results/sweep-2.json" | sed -n '/Latency breakdown/,$p'; }
    } > "$WORK/dma-latte-report.md" 2>> "$LOG" || log "dma_latte_report.py failed (log above)"
  fi
fi
[ "$FAKE_ROOT" = / ] && { dmesg 2>&1 | grep -iE 'amdgpu|kfd|sdma' | tail -300 > "$WORK/system/dmesg-amdgpu.txt" || true; }

meta "finished (UTC)" "$(date -u +%Y-%m-%dT%H:%M:%SZ)"
problems="$("${HELPER[@]}" summary "$WORK" 2>> "$LOG")" || { log "the summary could not be written (log above)"; FAILED=1; }
[ "${problems:-0}" = 0 ] || FAILED=1
log "writing $OUT"
# under a new name no one can plant a link at (not "$OUT.tmp": tar followed a link there), then renamed
PART="$(mktemp "$OUT.XXXXXX")" || PART=""
if [ -z "$PART" ] || ! tar -czf "$PART" -C "$TMP" "$NAME" || ! chmod "$(printf %o $((0666 & ~0$(umask))))" "$PART" ||
   ! mv -T "$PART" "$OUT"; then
  [ -n "$PART" ] && rm -f "$PART"; KEEP_WORK=1
  echo "amd-first-run.sh: could not write $OUT; everything is in $WORK" >&2
  exit 3
fi
echo "amd-first-run.sh: wrote $OUT (cases failed, hung or not run: ${problems:-?}; a check FAILed or a run broke: $([ $FAILED = 1 ] && echo yes || echo no)); read it with: tar -xzOf $OUT $NAME/summary.md" >&2
exit $FAILED
