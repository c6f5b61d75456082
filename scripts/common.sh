# Shared by scripts/run.sh and scripts/test.sh: install what is missing (Debian/Ubuntu, apt) and
# build dmabench into build/. Idempotent: a second run installs nothing and rebuilds only changes.
# Environment: DMABENCH_NO_APT=1 never calls apt; CMAKE_ARGS adds configure arguments
# (e.g. -DCMAKE_CUDA_ARCHITECTURES=80); BUILD_DIR overrides build/.
# HIP: hip_available says whether ROCm's hipcc and HIP CMake package are here (scripts/test.sh then
# also builds the HIP backend into build-hip/).

DMABENCH_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD_DIR="${BUILD_DIR:-$DMABENCH_ROOT/build}"

log() { printf '[dmabench] %s\n' "$*" >&2; }

# apt's postinst scripts start the daemons they install and enable them at boot (munge, slurmctld, slurmd for
# the srun test: on a GPU node that runs a site Slurm a benchmark's test script must not add its own).
# install_quietly CMD... runs an install with a policy-rc.d that refuses every start (invoke-rc.d and
# deb-systemd-invoke ask it; one already there is the machine's own and is left as it is), then disables the units
# the install enabled and stops the services it left running: only those, from systemctl's lists before and
# after, so what the user had enabled or running stays so. The tests that need a cluster start and stop their own
# daemons (tests/cli_srun_test.py). POLICY_RC_D names the policy file (a test points it elsewhere).
POLICY_RC_D="${POLICY_RC_D:-/usr/sbin/policy-rc.d}"
as_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }
# the lists are empty where there is no systemctl or it cannot answer (a container): never an error under set -e
enabled_units() { { systemctl list-unit-files --state=enabled --no-legend 2>/dev/null || true; } | awk '{print $1}' | sort -u; }
running_services() {
  { systemctl list-units --type=service --state=running --no-legend --plain 2>/dev/null || true; } | awk '{print $1}' |
    sort -u
}
install_quietly() {
  local enabled_before running_before own_policy=0 rc=0 unit
  enabled_before="$(enabled_units)"
  running_before="$(running_services)"
  if [ ! -e "$POLICY_RC_D" ]; then
    printf '#!/bin/sh\n# dmabench install_quietly (scripts/common.sh): no service starts during this install\nexit 101\n' |
      as_root tee "$POLICY_RC_D" >/dev/null && as_root chmod 755 "$POLICY_RC_D" && own_policy=1
  fi
  "$@" || rc=$?
  [ $own_policy = 1 ] && as_root rm -f "$POLICY_RC_D"
  for unit in $(comm -13 <(printf '%s\n' "$enabled_before") <(enabled_units)); do
    log "disabling $unit (the install enabled it at boot; it was not before)"
    as_root systemctl disable "$unit" >/dev/null 2>&1 || log "could not disable $unit"
  done
  for unit in $(comm -13 <(printf '%s\n' "$running_before") <(running_services)); do
    log "stopping $unit (the install started it; it was not running before)"
    as_root systemctl stop "$unit" >/dev/null 2>&1 || log "could not stop $unit"
  done
  return $rc
}

# Each requirement: a probe (a command or a file) and the Debian package that provides it.
requirement_missing() {
  case "$1" in
    cmd:*) ! command -v "${1#cmd:}" >/dev/null 2>&1 ;;
    file:*) ! compgen -G "${1#file:}" >/dev/null ;;
  esac
}

# Installs what is missing. `ensure_packages` (run.sh): what the build needs, and the rocm-smi
# headers for that power source. `ensure_packages test` (test.sh) also wants the script tests'
# Python packages, chromium (the HTML report's headless-browser test), ROCm's compile packages for
# the HIP build check and dpkg-dev (dpkg-shlibdeps for the .deb that install_revision makes).
# Wanted packages are installed where apt can, one call for all and then one by one if that fails;
# they never stop a build.
ensure_packages() {
  local missing=() probe pkg
  while read -r probe pkg; do
    [ -z "$probe" ] && continue
    requirement_missing "$probe" && missing+=("$pkg")
  done <<'REQS'
cmd:g++                                              g++
cmd:cmake                                            cmake
cmd:make                                             make
cmd:python3                                          python3
cmd:git                                              git
file:/usr/include/benchmark/benchmark.h              libbenchmark-dev
file:/usr/include/fmt/format.h                       libfmt-dev
file:/usr/include/nlohmann/json.hpp                  nlohmann-json3-dev
file:/usr/include/gtest/gtest.h                      libgtest-dev
REQS
  local wanted_list='file:/usr/include/rocm_smi/rocm_smi.h                         librocm-smi-dev
cmd:ccache                                                    ccache'
  if [ "${1:-}" = test ]; then
    wanted_list+='
cmd:mpirun                                                    openmpi-bin
cmd:munged                                                    munge
cmd:slurmctld                                                 slurmctld
cmd:slurmd                                                    slurmd
cmd:srun                                                      slurm-client
file:/usr/lib/x86_64-linux-gnu/openmpi/include/mpi.h          libopenmpi-dev
cmd:hipcc                                                     hipcc
file:/usr/include/hip/hip_runtime.h                           libamdhip64-dev
file:/usr/include/hsa/hsa_ext_amd.h                           libhsa-runtime-dev
file:/usr/include/hsakmt*                                     libhsakmt-dev
file:/usr/lib/python3/dist-packages/pandas/__init__.py        python3-pandas
file:/usr/lib/python3/dist-packages/matplotlib/__init__.py    python3-matplotlib
file:/usr/lib/python3/dist-packages/lxml/__init__.py          python3-lxml
file:/usr/lib/python3/dist-packages/junitparser/__init__.py   python3-junitparser
file:/usr/lib/python3/dist-packages/pytest/__init__.py        python3-pytest
file:/usr/lib/python3/dist-packages/ipykernel/__init__.py     python3-ipykernel
file:/usr/lib/python3/dist-packages/setuptools/__init__.py   python3-setuptools
file:/usr/lib/python3/dist-packages/wheel/__init__.py        python3-wheel
file:/usr/lib/python3/dist-packages/pip/__init__.py          python3-pip
file:/usr/lib/python3.*/ensurepip/__init__.py                python3-venv
file:/usr/lib/python3/dist-packages/PIL/__init__.py           python3-pil
cmd:chromium                                                  chromium
cmd:jupyter-nbconvert                                         jupyter-nbconvert
cmd:dpkg-shlibdeps                                            dpkg-dev
file:/usr/lib/python3/dist-packages/jsonschema/__init__.py    python3-jsonschema'
  fi
  local wanted=()
  while read -r probe pkg; do
    [ -z "$probe" ] && continue
    requirement_missing "$probe" && wanted+=("$pkg")
  done <<<"$wanted_list"
  local can_apt=1
  { [ "${DMABENCH_NO_APT:-0}" = 1 ] || ! command -v apt-get >/dev/null 2>&1; } && can_apt=0
  if [ ${#missing[@]} -gt 0 ] && [ $can_apt = 0 ]; then
    log "missing packages: ${missing[*]} (install them, or unset DMABENCH_NO_APT on a Debian/Ubuntu machine)"
    return 1
  fi
  if [ ${#wanted[@]} -gt 0 ] && [ $can_apt = 0 ]; then
    log "not installing (no apt): ${wanted[*]}; tests that need them are skipped or fail"
  fi
  [ $can_apt = 1 ] && [ $(( ${#missing[@]} + ${#wanted[@]} )) -gt 0 ] || return 0
  local sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  export DEBIAN_FRONTEND=noninteractive
  # on a machine without a network (a GPU machine in a closed room) this fails; it is given up after 5 minutes at most
  timeout 300 $sudo apt-get update -qq -o Acquire::Retries=0 -o Acquire::http::Timeout=10 -o Acquire::https::Timeout=10 ||
    log "apt-get update failed; trying the install anyway"
  if [ ${#missing[@]} -gt 0 ]; then
    log "installing missing packages: ${missing[*]}"
    install_quietly $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
  fi
  if [ ${#wanted[@]} -gt 0 ]; then
    log "installing wanted packages: ${wanted[*]}"
    if ! install_quietly $sudo apt-get install -y -qq --no-install-recommends "${wanted[@]}"; then
      for p in "${wanted[@]}"; do
        install_quietly $sudo apt-get install -y -qq --no-install-recommends "$p" || log "could not install $p; going on without it"
      done
    fi
  fi
}

hip_available() {
  command -v hipcc >/dev/null 2>&1 && {
    compgen -G "/usr/lib/*/cmake/hip/hip-config.cmake" >/dev/null || compgen -G "/opt/rocm/lib/cmake/hip/hip-config.cmake" >/dev/null
  }
}

build_dmabench() {
  local generator=()
  command -v ninja >/dev/null 2>&1 && [ ! -f "$BUILD_DIR/Makefile" ] && generator=(-G Ninja)
  # configure every time (cheap when cached) so that CMAKE_ARGS always take effect
  log "configuring $BUILD_DIR"
  # shellcheck disable=SC2086
  cmake -S "$DMABENCH_ROOT" -B "$BUILD_DIR" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release ${CMAKE_ARGS:-} >&2
  log "building"
  cmake --build "$BUILD_DIR" --parallel "$(nproc)" >&2
}
