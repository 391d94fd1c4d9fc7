#!/usr/bin/env bash
# scripts/gpu-check.sh — the CUDA check, on a machine with an NVIDIA GPU and driver. Two commands:
#
#   scripts/gpu-bundle.sh      HERE, on a machine with the dev packages: builds gpu-bundle/ (~7 MiB,
#                              git-ignored): the CUDA-labelled suites, bench_cuda, libcmocka, run.sh
#   scripts/gpu-check.sh       THERE, on the GPU machine (no cmocka, no LLVM, no network needed): runs
#                              gpu-bundle/run.sh with TKC_REQUIRE_CUDA=1; with the device tool:
#                              run(command="scripts/gpu-check.sh", carry=["gpu-bundle"], timeout_s=420)
#
# The bundle runs the suites `ctest -L cuda` runs — the PTX renderer checks (test_ptx, with ptxas when
# present), the CUDA-vs-INTERP kernel suite (test_cuda), every op on CUDA against C and INTERP
# (test_backend_ops), the kernel suite (test_kernels), the kernel opts against INTERP (test_opts:
# shared-memory reductions, tensor cores), test_tensor_reduce, test_symbolic_vars and test_jit — in
# parallel, then bench_cuda (add/sum bandwidth, f16 matmul through mma.sync) and bench/cuda_peers.py
# (the same on PyTorch: cuBLAS), and prints "N passed, M failed" and the numbers; a few minutes at most.
# The suites that loop over devices run CUDA and INTERP only there (TKC_TEST_DEVICES=INTERP,CUDA).
# TKC_REQUIRE_CUDA=1 (the default here) makes a missing or broken CUDA device a failure, not a skip.
#
# Without a bundle (or with --source) it builds from source instead, as before: configure + build in
# build-gpu/ (needs cmocka and, for the LLVM device, LLVM's dev files) and `ctest -L cuda`.
#   scripts/gpu-check.sh --source          BUILD_DIR=... CMAKE_ARGS='-DTKC_WERROR=OFF' to change
#   BUNDLE_DIR=dir scripts/gpu-check.sh    another bundle folder; TESTS='test_cuda' runs some suites
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

BUNDLE_DIR=${BUNDLE_DIR:-gpu-bundle}
export TKC_REQUIRE_CUDA=${TKC_REQUIRE_CUDA:-1}
export PATH="$PATH:/usr/local/cuda/bin" # ptxas, when the toolkit is installed there

if [ "${1:-}" != "--source" ] && [ -f "$BUNDLE_DIR/run.sh" ]; then
  echo "== bundle $BUNDLE_DIR"
  if command -v git >/dev/null 2>&1 && head=$(git rev-parse --short HEAD 2>/dev/null); then
    grep -q "$head" "$BUNDLE_DIR/VERSION" 2>/dev/null ||
      echo "note: the bundle was not built from this checkout's HEAD ($head): rerun scripts/gpu-bundle.sh for its tests"
  fi
  exec bash "$BUNDLE_DIR/run.sh"
fi
[ "${1:-}" = "--source" ] || echo "== no $BUNDLE_DIR/run.sh (scripts/gpu-bundle.sh makes it): building from source"

BUILD_DIR=${BUILD_DIR:-build-gpu}
JOBS=${JOBS:-$(nproc 2>/dev/null || echo 2)}

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
ctest --test-dir "$BUILD_DIR" -L cuda --output-on-failure -V
