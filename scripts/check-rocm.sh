#!/usr/bin/env bash
# Builds the hip backend against a current ROCm (Debian experimental's, 7.2 when written) with
# warnings as errors, and runs every test that needs no GPU against that build.
#
# Debian 12's ROCm 5.2.3 (scripts/test.sh) cannot target gfx942 and lacks most of the APIs the hip
# backend gates on; this check compiles those paths against real current headers. It runs inside a
# Debian sid chroot with ROCm from experimental and libhsakmt-dev from trixie, created once with
# debootstrap and cached on the machine (a stamp file marks a finished creation; an interrupted one is
# redone). The build directory (build-rocm72/ in the tree, gitignored) is kept too, so a second run
# rebuilds only what changed. The Python suite (label `python`, independent of the build) is left to
# scripts/test.sh.
#
# Needs root (debootstrap, chroot, mount) and, on the first run, the Debian registry this machine's apt
# uses (read from /etc/apt/sources.list.d/debian.sources or /etc/apt/sources.list).
# Environment:
#   DMABENCH_ROCM_CHROOT   the chroot (default /var/cache/dmabench/rocm-sid)
#   DMABENCH_ROCM_BUILD    the build directory, inside the tree (default build-rocm72)
#   DMABENCH_ROCM_MIRROR   the Debian registry URL (default: from this machine's apt configuration)
# Extra arguments go to ctest.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CHROOT="${DMABENCH_ROCM_CHROOT:-/var/cache/dmabench/rocm-sid}"
BUILD_NAME="${DMABENCH_ROCM_BUILD:-build-rocm72}"
STAMP="$CHROOT/.dmabench-chroot-complete"
SRC_IN_CHROOT=/dmabench-src
# Packages, and the suite each comes from. A change here makes the next run install the difference.
ROCM_PACKAGES="hipcc libamdhip64-dev libhsa-runtime-dev librocm-smi-dev librccl-dev librocblas-dev"
TRIXIE_PACKAGES="libhsakmt-dev"
BUILD_PACKAGES="cmake g++ make libbenchmark-dev libfmt-dev nlohmann-json3-dev libgtest-dev pkg-config python3"
WANTED="experimental: $ROCM_PACKAGES; trixie: $TRIXIE_PACKAGES; sid: $BUILD_PACKAGES"

log() { printf '[check-rocm] %s\n' "$*" >&2; }
die() { log "FAILED: $*"; exit 1; }
T0=$(date +%s)
step_start=0
step() { step_start=$(date +%s); log "$*"; }
step_done() { log "  ... $(( $(date +%s) - step_start )) s"; }

[ "$(id -u)" -eq 0 ] || die "needs root (debootstrap, chroot and mount); run as root or with sudo"

# ---- mounts: whatever this script mounts is unmounted on exit, however it exits ------------------
MOUNTED=()
cleanup() {
  local i
  for (( i=${#MOUNTED[@]}-1; i>=0; i-- )); do
    umount "${MOUNTED[$i]}" 2>/dev/null || umount -l "${MOUNTED[$i]}" || log "could not unmount ${MOUNTED[$i]}"
  done
  MOUNTED=()
}
trap cleanup EXIT
trap 'exit 130' INT TERM
mount_once() {  # mount_once TARGET ARGS...: mounts unless something is mounted there already
  local target="$1"; shift
  mountpoint -q "$target" && return 0
  mkdir -p "$target"
  mount "$@" "$target"
  MOUNTED+=("$target")
}
# The tree's bind mount. A run killed outright (SIGKILL, a VM stopped) leaves its mount behind, bound
# to whatever tree that run checked; reusing it would build that other tree (and then miss this tree's
# build directory). So a mount there that is not this tree is taken down first. Two runs at once are
# kept apart by a lock on the chroot (the second waits).
mount_tree() {
  local target="$CHROOT$SRC_IN_CHROOT"
  if mountpoint -q "$target" && [ "$(stat -c %d:%i "$target")" != "$(stat -c %d:%i "$ROOT")" ]; then
    log "a stale mount of another tree at $target (left by a run that was killed): unmounting it"
    umount "$target" 2>/dev/null || umount -l "$target" || die "could not unmount the stale $target"
  fi
  mount_once "$target" --bind "$ROOT"
  [ "$(stat -c %d:%i "$target")" = "$(stat -c %d:%i "$ROOT")" ] || die "$target is not $ROOT after mounting it"
}
in_chroot() {
  chroot "$CHROOT" /usr/bin/env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    HOME=/root LANG=C.UTF-8 DEBIAN_FRONTEND=noninteractive "$@"
}

# ---- the Debian registry, from this machine's apt configuration -----------------------------------
debian_mirror() {
  [ -n "${DMABENCH_ROCM_MIRROR:-}" ] && { echo "$DMABENCH_ROCM_MIRROR"; return; }
  local f url=""
  f=/etc/apt/sources.list.d/debian.sources
  if [ -r "$f" ]; then  # deb822: the first URIs of a stanza that is not the security archive
    url=$(awk '/^URIs:/ { for (i = 2; i <= NF; i++) if ($i !~ /security/) { print $i; exit } }' "$f")
  fi
  if [ -z "$url" ] && [ -r /etc/apt/sources.list ]; then
    url=$(awk '$1 == "deb" { for (i = 2; i <= NF; i++) if ($i ~ /^[a-z]+:\/\//) { if ($i !~ /security/) { print $i; exit } else break } }' /etc/apt/sources.list)
  fi
  [ -n "$url" ] || die "no Debian registry URL in /etc/apt/sources.list.d/debian.sources or /etc/apt/sources.list; set DMABENCH_ROCM_MIRROR"
  echo "${url%/}"
}
registry_reachable() {  # fails with the reason when sid's Release file cannot be fetched
  local url="$1/dists/sid/Release" err
  if command -v python3 >/dev/null 2>&1; then
    err=$(python3 -c 'import sys, urllib.request; urllib.request.urlopen(sys.argv[1], timeout=30).read(1)' "$url" 2>&1) ||
      die "cannot reach the Debian registry ($url): $(tail -n1 <<<"$err")"
  elif command -v curl >/dev/null 2>&1; then
    curl -fsS --max-time 30 -o /dev/null "$url" || die "cannot reach the Debian registry ($url)"
  fi
}

# ---- the chroot, once ----------------------------------------------------------------------------
create_chroot() {
  local mirror
  mirror=$(debian_mirror)
  step "checking the Debian registry $mirror"
  registry_reachable "$mirror"
  step_done
  if ! command -v debootstrap >/dev/null 2>&1; then
    step "installing debootstrap on this machine"
    apt-get install -y -qq --no-install-recommends debootstrap >&2 || die "could not install debootstrap"
    step_done
  fi
  if [ -e "$CHROOT" ]; then
    log "removing an unfinished chroot in $CHROOT (no stamp)"
    for m in "$CHROOT$SRC_IN_CHROOT" "$CHROOT/proc"; do
      mountpoint -q "$m" && die "$m is mounted (another check running?); unmount it first"
    done
    rm -rf --one-file-system "$CHROOT"
  fi
  step "debootstrap: Debian sid (minbase) into $CHROOT (about 1 min)"
  mkdir -p "$(dirname "$CHROOT")"
  debootstrap --variant=minbase --include=ca-certificates sid "$CHROOT" "$mirror" >"$CHROOT.debootstrap.log" 2>&1 ||
    { tail -n 20 "$CHROOT.debootstrap.log" >&2; die "debootstrap from $mirror failed (log: $CHROOT.debootstrap.log)"; }
  rm -f "$CHROOT.debootstrap.log"
  step_done
  # experimental (ROCm 7) and trixie (the thunk headers experimental lacks); the registry serves
  # experimental with an expired Release file
  cat >"$CHROOT/etc/apt/sources.list" <<EOF
deb $mirror sid main
deb $mirror experimental main
deb $mirror trixie main
EOF
  echo 'Acquire::Check-Valid-Until "false";' >"$CHROOT/etc/apt/apt.conf.d/99dmabench-no-valid-until"
}

install_packages() {
  local apt_log="$CHROOT.apt.log"  # outside the chroot, kept when something fails
  mount_once "$CHROOT/proc" -t proc proc
  apt_in_chroot() {
    in_chroot apt-get "$@" >>"$apt_log" 2>&1 || { tail -n 20 "$apt_log" >&2; return 1; }
  }
  : >"$apt_log"
  step "apt-get update in the chroot"
  apt_in_chroot update || die "apt-get update in the chroot failed (registry unreachable?; log: $apt_log)"
  step_done
  step "installing ROCm from experimental, $TRIXIE_PACKAGES from trixie and the build tools (about 3 min, ~1 GB)"
  # shellcheck disable=SC2086
  apt_in_chroot install -y --no-install-recommends $BUILD_PACKAGES || die "installing the build tools failed (log: $apt_log)"
  # shellcheck disable=SC2086
  apt_in_chroot install -y --no-install-recommends -t experimental $ROCM_PACKAGES ||
    die "installing ROCm from experimental failed (log: $apt_log)"
  # shellcheck disable=SC2086
  apt_in_chroot install -y --no-install-recommends -t trixie $TRIXIE_PACKAGES ||
    die "installing $TRIXIE_PACKAGES from trixie failed (log: $apt_log)"
  apt_in_chroot clean || true
  step_done
  rm -f "$apt_log"
  echo "$WANTED" >"$STAMP"
}

log "chroot: $CHROOT (DMABENCH_ROCM_CHROOT); build: $ROOT/$BUILD_NAME"
mkdir -p "$(dirname "$CHROOT")"
exec 9>"$CHROOT.lock"  # one run at a time per chroot: a second one waits here
flock -n 9 || { log "another check-rocm run holds $CHROOT.lock: waiting for it"; flock 9; }
if [ ! -f "$STAMP" ]; then
  create_chroot
  install_packages
elif [ "$(cat "$STAMP")" != "$WANTED" ]; then
  log "package list changed since the chroot was made: installing"
  registry_reachable "$(debian_mirror)"
  install_packages
else
  log "reusing the chroot (made $(date -r "$STAMP" '+%F %T'))"
fi
ROCM_VERSION=$(in_chroot dpkg-query -W -f '${Version}' hipcc 2>/dev/null || echo unknown)
log "ROCm in the chroot: hipcc $ROCM_VERSION"

# ---- build and test the current tree -------------------------------------------------------------
mount_once "$CHROOT/proc" -t proc proc
mount_tree
BUILD="$SRC_IN_CHROOT/$BUILD_NAME"

step "GPU targets this hipcc accepts (gfx942, and gfx90a / gfx950 where it compiles them)"
ARCH_CACHE="$ROOT/$BUILD_NAME/check-rocm-archs"  # "hipcc version: targets", reused while hipcc is the same
if [ -f "$ARCH_CACHE" ] && [ "$(cut -d' ' -f1 "$ARCH_CACHE")" = "$ROCM_VERSION" ]; then
  ARCHS=$(cut -d' ' -f2 "$ARCH_CACHE")
  log "  (cached for hipcc $ROCM_VERSION)"
else
  ARCHS="gfx942"
  in_chroot bash -c "mkdir -p $BUILD && printf '#include <hip/hip_runtime.h>\n__global__ void k() {}\n' >$BUILD/arch_probe.hip"
  for arch in gfx90a gfx950; do
    if in_chroot hipcc -x hip --offload-arch=$arch -c "$BUILD/arch_probe.hip" -o "$BUILD/arch_probe.o" >/dev/null 2>&1; then
      ARCHS="$ARCHS;$arch"
    else
      log "  hipcc does not accept $arch: left out"
    fi
  done
  echo "$ROCM_VERSION $ARCHS" >"$ARCH_CACHE"
fi
log "  $ARCHS"
step_done

step "configuring $BUILD_NAME (hip backend, -DDMABENCH_WERROR=ON)"
# the version stamp from this machine's git (a worktree's .git points outside the bind mount)
REV=$(git -C "$ROOT" describe --always --dirty --abbrev=12 2>/dev/null || echo unknown)
in_chroot cmake -S "$SRC_IN_CHROOT" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DDMABENCH_WERROR=ON \
  "-DDMABENCH_GIT_REVISION=$REV" \
  -DDMABENCH_HIP=ON -DDMABENCH_CUDA=OFF "-DDMABENCH_HIP_ARCHITECTURES=$ARCHS" >&2 || die "configure failed"
step_done

step "building (make -j$(nproc))"
in_chroot cmake --build "$BUILD" --parallel "$(nproc)" >&2 || die "build failed"
step_done

step "dmabench --features"
in_chroot "$BUILD/dmabench" --features >&2 || die "dmabench --features failed"
step_done

step "ctest (every test but the Python suite; GPU tests skip without a GPU)"
in_chroot bash -c "cd $BUILD && ctest --output-on-failure --parallel ${DMABENCH_TEST_JOBS:-$(nproc)} -LE '^python\$' $*" >&2 ||
  die "tests failed"
step_done

log "ok: hip backend on ROCm $ROCM_VERSION for $ARCHS, in $(( $(date +%s) - T0 )) s"
