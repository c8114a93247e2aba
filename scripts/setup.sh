#!/usr/bin/env bash
# Installs the Debian 12 packages ranklab needs (only those missing), then configures and
# builds. Idempotent and quick when nothing changed. Sourced by main-job.sh and test.sh.
#
#   BUILD_DIR          build folder (default: build)
#   RANKLAB_CMAKE_ARGS extra arguments for the first configure
#   BUILD_TARGETS      what to build (default: all)
#   TEST_PACKAGES      set by test.sh: also install what only the tests use
#   CI=true            warnings are errors
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD_DIR="${BUILD_DIR:-$ROOT/build}"

PACKAGES=(
  cmake ninja-build g++ pkg-config
  libboost-fiber-dev libboost-context-dev libtbb-dev libeigen3-dev
  libspdlog-dev libfmt-dev libcli11-dev nlohmann-json3-dev libxxhash-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  openmpi-bin libopenmpi-dev  # the MPI backend (collectives/mpi) and its tests
)
# Only the tests use these (the main job does not wait for them).
TEST_ONLY_PACKAGES=(
  chromium  # renders the HTML trace report in a test (which skips without it); ~20 s to install
  python3-numpy  # NpyTest checks ranklab's .npy files against NumPy's (/usr/bin/python3)
  python3-torch  # `ranklab torchrun`'s tests run real PyTorch scripts (Debian's 1.13.1)
)

# missing_packages PKG...: those not installed.
missing_packages() {
  local pkg
  for pkg in "$@"; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || echo "$pkg"
  done
}

# install_packages PKG...: installs the missing ones (as root), or says how.
install_packages() {
  local missing
  missing=$(missing_packages "$@" | tr '\n' ' ')
  [ -z "${missing// /}" ] && return 0
  if [ "$(id -u)" -ne 0 ]; then
    echo "ranklab: missing Debian packages. Run, as root:" >&2
    echo "  apt-get update && apt-get install -y --no-install-recommends $missing" >&2
    exit 1
  fi
  echo "ranklab: installing $missing" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  # shellcheck disable=SC2086
  apt-get install -y -qq --no-install-recommends $missing >/dev/null
}

configure_and_build() {
  local werror=OFF
  [ "${CI:-}" = "true" ] && werror=ON
  if [ ! -f "$BUILD_DIR/build.ninja" ]; then
    # shellcheck disable=SC2086
    cmake -S "$ROOT" -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release \
      -DRANKLAB_WERROR="$werror" ${RANKLAB_CMAKE_ARGS:-} >/dev/null
  fi
  # shellcheck disable=SC2086
  cmake --build "$BUILD_DIR" -j"$(nproc)" --target ${BUILD_TARGETS:-all}
}

install_packages "${PACKAGES[@]}"
[ "${TEST_PACKAGES:-}" = "true" ] && install_packages "${TEST_ONLY_PACKAGES[@]}"
configure_and_build
