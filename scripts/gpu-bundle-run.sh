#!/usr/bin/env bash
# run.sh of a GPU bundle (made by scripts/gpu-bundle.sh, which copies this file into gpu-bundle/):
# runs, from this folder alone, the CUDA-labelled suites listed in tests.txt with the environment
# ctest would give them, then bench_cuda, then cuda_peers.py (PyTorch, when importable), and ends
# with "N passed, M failed" and the numbers. Needs bash, coreutils, a C compiler as `cc` (the CPU
# device the suites compare against compiles with it) and, for the CUDA device, an NVIDIA driver
# (libcuda.so.1); ptxas is taken from PATH or /usr/local/cuda/bin. Without a GPU the CUDA parts
# skip, with their reason; TKC_REQUIRE_CUDA=1 (scripts/gpu-check.sh sets it) makes that a failure.
#
#   bash gpu-bundle/run.sh                         everything
#   TESTS='test_cuda test_ptx' bash gpu-bundle/run.sh   only these suites (names as in tests.txt)
#   JOBS=8 PER_TEST_TIMEOUT=180 BENCH_TIMEOUT=60 NO_BENCH=1 LOG_DIR=dir bash gpu-bundle/run.sh
# python3 is the one on PATH (on the GPU machine, the one with PyTorch).
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cd "$here" || exit 1
export PATH="${PATH:-/usr/bin:/bin}:/usr/local/cuda/bin"
export NODEVICE_SELECT=1 CMOCKA_MESSAGE_OUTPUT=stdout
JOBS=${JOBS:-$(nproc 2>/dev/null || echo 2)}
[ "$JOBS" -gt 8 ] && JOBS=8 # the suites compile CPU kernels too; more gains little
PER_TEST_TIMEOUT=${PER_TEST_TIMEOUT:-180}
BENCH_TIMEOUT=${BENCH_TIMEOUT:-60} # each of bench_cuda and cuda_peers.py: at most 180 + 2 x 60 s, under 5 minutes
work=$(mktemp -d "${TMPDIR:-/tmp}/tkc-gpu-bundle.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
LOG_DIR=${LOG_DIR:-$work/logs}
mkdir -p "$LOG_DIR"
# a fresh kernel cache: nothing compiled on another machine (another CPU) is reused
export TKC_CACHE_DIR=${TKC_CACHE_DIR:-$work/kernel-cache}
# the suites that loop over devices (tests/tensor_ref.h, test_backend_ops) run CUDA and INTERP, their
# reference: the CPU device, every kernel compiled by cc, is the regular ctest's work and would take
# minutes here (TKC_TEST_DEVICES= runs every device)
export TKC_TEST_DEVICES=${TKC_TEST_DEVICES-INTERP,CUDA}
start=$(date +%s)

echo "== machine (bundle: $(cat VERSION 2>/dev/null || echo 'no VERSION'))"
if command -v nvidia-smi >/dev/null 2>&1; then
  nvidia-smi --query-gpu=name,driver_version,compute_cap,memory.total --format=csv,noheader 2>&1 | head -4
else
  echo "no nvidia-smi"
fi
command -v ptxas >/dev/null 2>&1 && echo "ptxas: $(ptxas --version | tail -1)" || echo "no ptxas: test_ptx skips its assembler checks"
command -v cc >/dev/null 2>&1 && echo "cc: $(cc --version | head -1)" || echo "no cc: the CPU device is unavailable"
echo "TKC_REQUIRE_CUDA=${TKC_REQUIRE_CUDA:-} (1: a missing CUDA device fails)  TKC_TEST_DEVICES=${TKC_TEST_DEVICES:-(all)}"

# one suite: its output in $LOG_DIR/<name>.log, its verdict in <name>.rc
run_one() {
  local name=$1 exe=$2
  shift 2
  local args=() envs=() a
  for a in "$@"; do
    if [[ $a == [A-Za-z_]*=* ]]; then envs+=("$a"); else args+=("$a"); fi
  done
  local t0 rc
  t0=$(date +%s)
  env "${envs[@]}" timeout -k 5 "$PER_TEST_TIMEOUT" "./$exe" "${args[@]}" >"$LOG_DIR/$name.log" 2>&1
  rc=$?
  echo "$rc $(($(date +%s) - t0))" >"$LOG_DIR/$name.rc"
}

echo "== suites ($JOBS at a time, ${PER_TEST_TIMEOUT}s each at most)"
names=()
while read -r name exe rest; do
  [ -n "$name" ] || continue
  if [ -n "${TESTS:-}" ] && ! [[ " $TESTS " == *" $name "* ]]; then continue; fi
  names+=("$name")
  # shellcheck disable=SC2086
  run_one "$name" "$exe" $rest &
  while [ "$(jobs -rp | wc -l)" -ge "$JOBS" ]; do wait -n 2>/dev/null || sleep 0.2; done
done <tests.txt
wait

passed=0 failed=0 failed_names=()
for name in "${names[@]}"; do
  read -r rc secs <"$LOG_DIR/$name.rc" 2>/dev/null || { rc=255 secs='?'; }
  # cmocka's own counts, and the suites' "skipped: <why>" lines (a missing device, ptxas, ...)
  counts=$(grep -E '^\[  (PASSED|FAILED|SKIPPED) +\] [0-9]+ test' "$LOG_DIR/$name.log" | sed -E 's/^\[ *([A-Z]+) *\] ([0-9]+).*/\2 \1/' | tr 'A-Z\n' 'a-z,' | sed 's/,$//; s/,/, /g')
  why=$(grep -m1 -oE 'TKC_REQUIRE_CUDA is set but .*|CUDA is required here but unavailable: .*|skipped[^:]*CUDA[^:]*: .*|skipped[^:]*: .*CUDA.*' "$LOG_DIR/$name.log" ||
    grep -m1 -oE 'skipped[^:]*: .*' "$LOG_DIR/$name.log")
  why=$(printf '%s' "$why" | cut -c1-150)
  if [ "$rc" = 0 ]; then
    passed=$((passed + 1))
    printf '  PASS  %-28s %4ss  %s%s\n' "$name" "$secs" "$counts" "${why:+  ($why)}"
  else
    failed=$((failed + 1))
    failed_names+=("$name")
    [ "$rc" = 124 ] && counts="timed out after ${PER_TEST_TIMEOUT}s; $counts"
    printf '  FAIL  %-28s %4ss  rc %s  %s%s\n' "$name" "$secs" "$rc" "$counts" "${why:+  ($why)}"
  fi
done
for name in "${failed_names[@]}"; do
  echo "---- $name (failed tests and the last lines of its output)"
  grep -E '^\[  (FAILED|ERROR) ' "$LOG_DIR/$name.log" | head -12
  tail -8 "$LOG_DIR/$name.log"
done

bench_rc=0
if [ -z "${NO_BENCH:-}" ]; then
  echo "== bench_cuda (tkc on the CUDA device)"
  timeout -k 5 "$BENCH_TIMEOUT" ./bench_cuda 2>"$LOG_DIR/bench_cuda.err" | tee "$LOG_DIR/bench.jsonl"
  bench_rc=$?
  [ $bench_rc = 0 ] || { cat "$LOG_DIR/bench_cuda.err"; echo "bench_cuda: exit $bench_rc"; }
  echo "== cuda_peers.py (PyTorch: cuBLAS matmul, add, sum)"
  if command -v python3 >/dev/null 2>&1; then
    timeout -k 5 "$BENCH_TIMEOUT" python3 cuda_peers.py | tee -a "$LOG_DIR/bench.jsonl" || echo "cuda_peers.py: exit $? (not counted)"
    python3 cuda_peers.py --table "$LOG_DIR/bench.jsonl" # the numbers side by side
  else
    echo '{"impl": "torch", "skipped": "no python3"}'
  fi
fi

what="${#names[@]} suites"
if [ -z "${NO_BENCH:-}" ]; then
  what="$what + bench_cuda"
  if [ $bench_rc = 0 ]; then passed=$((passed + 1)); else failed=$((failed + 1)); fi
fi
echo "== summary: $passed passed, $failed failed ($what) in $(($(date +%s) - start)) s"
[ "$failed" = 0 ]
