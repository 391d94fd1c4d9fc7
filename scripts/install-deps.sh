#!/usr/bin/env bash
# scripts/install-deps.sh — install the Debian/Ubuntu packages tkc needs to build and test.
#
# Idempotent and cheap: every package is checked with dpkg-query first, so on a machine that
# already has everything this makes no apt call at all. Missing packages are installed with one
# `apt-get update` and one `apt-get install`, through sudo when not run as root.
#
# Knobs:
#   TKC_NO_DEPS=1   do nothing (for machines where you manage packages yourself)
#
# Besides apt packages, the WEBGPU device needs wgpu-native: it comes from the PyPI package `wgpu`
# (its resources folder holds libwgpu_native and webgpu.h), installed with pip (--no-deps: only its
# files are used, never its Python code) unless python3 already finds a `wgpu` package.
#
# Exit status: 0 when everything is present afterwards, non-zero (with a message) otherwise.
set -euo pipefail

# Packages to have installed. To add one (e.g. llvm-16-dev, ptxas via nvidia-cuda-toolkit),
# append it here; on systems without dpkg the tool probes below are used instead.
PACKAGES=(
  cmake
  make
  gcc
  clang
  pkg-config
  libcmocka-dev
  libffi-dev
  zlib1g-dev             # examples/train_digits.c reads the gzip-compressed digits data
  python3
  llvm-16-dev
  python3-pip            # for the PyPI wgpu package below (and numpy/pytest when python3 lacks them)
  python3-venv           # the python_pip_install test makes a venv
  mesa-vulkan-drivers    # lavapipe: the Vulkan driver WEBGPU runs on without a GPU
  libprotobuf-c-dev      # the ONNX frontend's reader (cmake/onnx.cmake)...
  protobuf-c-compiler    # ...generated at build time by protoc-c...
  libonnx-dev            # ...from the onnx.proto this installs
  libjansson-dev         # the safetensors reader's JSON header (cmake/io.cmake)
)

# Non-Debian fallback: a command that proves a package is present. Packages not listed here
# (libraries) are left for CMake to report.
declare -A PROBE_CMD=(
  [cmake]=cmake [make]=make [gcc]=gcc [clang]=clang [pkg-config]=pkg-config [python3]=python3
)

say() { printf 'install-deps: %s\n' "$*"; }
die() { printf 'install-deps: error: %s\n' "$*" >&2; exit 1; }

if [[ "${TKC_NO_DEPS:-}" == 1 ]]; then
  exit 0
fi

is_installed() {
  local status
  status=$(dpkg-query -W -f='${Status}' "$1" 2>/dev/null) || return 1
  [[ "$status" == *"install ok installed"* ]]   # several lines for multi-arch packages
}

# --- systems without dpkg/apt: check what we can, never try to install -----------------------
if ! command -v dpkg-query >/dev/null 2>&1 || ! command -v apt-get >/dev/null 2>&1; then
  missing=()
  for pkg in "${PACKAGES[@]}"; do
    cmd=${PROBE_CMD[$pkg]:-}
    if [[ -n "$cmd" ]] && ! command -v "$cmd" >/dev/null 2>&1; then
      missing+=("$pkg")
    fi
  done
  if ((${#missing[@]})); then
    die "not a Debian/Ubuntu system (no apt-get); please install: ${missing[*]} (and the cmocka and libffi development files)"
  fi
  exit 0
fi

# PyPI wgpu (pinned: its webgpu.h generation is the one src/runtime/webgpu.c is written against).
# Present when python3 finds the package without importing it; another installed version is left
# alone (cmake/webgpu.cmake checks its headers).
WGPU_PIP=wgpu==0.32.0
install_wgpu() {
  local have
  have=$(python3 -c "import importlib.util as u, importlib.metadata as m; print(m.version('wgpu') if u.find_spec('wgpu') else '')" 2>/dev/null) || have=""
  [[ -z "$have" ]] || return 0
  say "installing $WGPU_PIP (pip, --no-deps; provides wgpu-native for the WEBGPU device)"
  # plain first; Debian 12+ marks the system python externally managed, which needs the flag
  python3 -m pip install --quiet --disable-pip-version-check --no-deps "$WGPU_PIP" >/dev/null 2>&1 ||
    python3 -m pip install --quiet --disable-pip-version-check --no-deps --break-system-packages "$WGPU_PIP" >/dev/null ||
    die "pip install $WGPU_PIP failed (no network?); set TKC_NO_DEPS=1 to build without the WEBGPU device"
}

# numpy (needed by the Python package, bindings/python), pytest (its tests, ctest python_package) and
# scikit-learn (the digits data examples/train_digits.c learns), with pip unless python3 imports them.
install_py_test_deps() {
  python3 -c 'import pytest, numpy, sklearn' >/dev/null 2>&1 && return 0
  say "installing numpy, pytest and scikit-learn (pip; for bindings/python, its tests and the training example)"
  python3 -m pip install --quiet --disable-pip-version-check numpy pytest scikit-learn >/dev/null 2>&1 ||
    python3 -m pip install --quiet --disable-pip-version-check --break-system-packages numpy pytest scikit-learn >/dev/null ||
    die "pip install numpy pytest scikit-learn failed (no network?); set TKC_NO_DEPS=1 to skip it"
}

# onnx (pinned: its wheel carries onnx/backend/test/data/node, the node tests test_onnx_node runs).
# Optional: without it (no network, no wheel for this python) only those tests are skipped.
ONNX_PIP=onnx==1.22.0
install_onnx() {
  local have
  have=$(python3 -c "import importlib.util as u, importlib.metadata as m; print(m.version('onnx') if u.find_spec('onnx') else '')" 2>/dev/null) || have=""
  [[ -z "$have" ]] || return 0
  say "installing $ONNX_PIP (pip; its node tests are what test_onnx_node runs)"
  python3 -m pip install --quiet --disable-pip-version-check "$ONNX_PIP" >/dev/null 2>&1 ||
    python3 -m pip install --quiet --disable-pip-version-check --break-system-packages "$ONNX_PIP" >/dev/null 2>&1 ||
    say "pip install $ONNX_PIP failed: test_onnx_node will skip the ONNX node tests"
}

# safetensors and gguf (the writers of Hugging Face's and llama.cpp's model files): test_io_py reads the
# files they write. Optional: without them that test is skipped.
IO_PIP=(safetensors gguf)
install_io_py() {
  python3 -c 'import safetensors, gguf' >/dev/null 2>&1 && return 0
  say "installing ${IO_PIP[*]} (pip; test_io_py reads the model files they write)"
  python3 -m pip install --quiet --disable-pip-version-check "${IO_PIP[@]}" >/dev/null 2>&1 ||
    python3 -m pip install --quiet --disable-pip-version-check --break-system-packages "${IO_PIP[@]}" >/dev/null 2>&1 ||
    say "pip install ${IO_PIP[*]} failed: test_io_py will be skipped"
}

# --- Debian/Ubuntu ------------------------------------------------------------------------
missing=()
for pkg in "${PACKAGES[@]}"; do
  is_installed "$pkg" || missing+=("$pkg")
done
((${#missing[@]})) || { install_wgpu; install_py_test_deps; install_onnx; install_io_py; exit 0; }

SUDO=()
if [[ "$(id -u)" -ne 0 ]]; then
  if command -v sudo >/dev/null 2>&1; then
    SUDO=(sudo)
  else
    die "missing packages: ${missing[*]}; not root and no sudo. Run as root: apt-get install ${missing[*]}"
  fi
fi

for pkg in "${missing[@]}"; do
  say "installing $pkg"
done

${SUDO[@]+"${SUDO[@]}"} env DEBIAN_FRONTEND=noninteractive apt-get update -qq \
  || die "apt-get update failed (no network or no permission?)"
${SUDO[@]+"${SUDO[@]}"} env DEBIAN_FRONTEND=noninteractive \
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null \
  || die "apt-get install failed for: ${missing[*]}"

still=()
for pkg in "${missing[@]}"; do
  is_installed "$pkg" || still+=("$pkg")
done
if ((${#still[@]})); then
  die "still missing after apt-get install: ${still[*]}"
fi

install_wgpu
install_py_test_deps
install_onnx
install_io_py
