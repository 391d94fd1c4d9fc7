#!/usr/bin/env bash
# scripts/gpu-check.sh — on a machine with an NVIDIA GPU and driver: build tkc and run exactly the
# CUDA-labelled tests (`ctest -L cuda`): the PTX renderer checks (test_ptx, with ptxas when present),
# the CUDA-vs-INTERP kernel suite (test_cuda), the kernel suite on every device (test_kernels), every
# op on every device against C and INTERP (test_backend_ops), the kernel opts against INTERP (test_opts:
# shared-memory reductions, tensor cores) and test_tensor_reduce.
# TKC_REQUIRE_CUDA=1 makes a missing/broken CUDA device a failure instead of a skip.
#
#   scripts/gpu-check.sh                 build in build-gpu/ (BUILD_DIR=... to change), then test
#   CMAKE_ARGS='-DTKC_WERROR=OFF' scripts/gpu-check.sh
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

BUILD_DIR=${BUILD_DIR:-build-gpu}
JOBS=${JOBS:-$(nproc 2>/dev/null || echo 2)}
export PATH="$PATH:/usr/local/cuda/bin"   # ptxas, when the toolkit is installed there

echo "== GPU"
if command -v nvidia-smi >/dev/null 2>&1; then
  nvidia-smi --query-gpu=name,driver_version,compute_cap,memory.total --format=csv,noheader || true
else
  echo "(no nvidia-smi)"
fi
command -v ptxas >/dev/null 2>&1 && ptxas --version | tail -1 || echo "(no ptxas: test_ptx skips its assembler checks)"

echo "== configure + build ($BUILD_DIR)"
# shellcheck disable=SC2086
cmake -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=RelWithDebInfo ${CMAKE_ARGS:-}
cmake --build "$BUILD_DIR" -j"$JOBS"

echo "== ctest -L cuda"
TKC_REQUIRE_CUDA=${TKC_REQUIRE_CUDA:-1} ctest --test-dir "$BUILD_DIR" -L cuda --output-on-failure -V
