#!/usr/bin/env bash
# scripts/gpu-bundle.sh — build, HERE (a machine with the dev packages), the folder that
# scripts/gpu-check.sh runs on a bare GPU machine (CUDA's toolkit, CMake, ninja, Python and a C
# compiler, but no cmocka, no LLVM dev files and no network):
#
#   gpu-bundle/            (git-ignored; name it in the device tool's `carry`)
#     run.sh               the runner: the CUDA-labelled suites, then bench_cuda, then cuda_peers.py
#     tests.txt            one suite a line: ctest name, executable, the environment ctest gives it
#     test_*, bench_cuda   stripped executables, RPATH $ORIGIN
#     libcmocka.so.0       the one shared library they need beyond libc/libm/libpthread/libdl
#     cuda_peers.py        the PyTorch peers of bench_cuda (torch matmul/add/sum)
#
# What the bare machine lacks is turned off or carried: LLVM off (libLLVM alone is over the 64 MiB
# the working tree may carry), WEBGPU and ONNX off, libffi linked statically (libffi_pic.a), cmocka
# (Debian ships no libcmocka.a) copied beside the executables. The suites are those `ctest -L cuda`
# runs (their list and environment come from ctest itself, so a newly labelled suite comes along).
#
#   scripts/gpu-bundle.sh                       build in build-gpu-bundle/, fill gpu-bundle/
#   BUILD_DIR=... BUNDLE_DIR=... JOBS=... scripts/gpu-bundle.sh
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

BUILD_DIR=${BUILD_DIR:-build-gpu-bundle}
BUNDLE_DIR=${BUNDLE_DIR:-gpu-bundle}
JOBS=${JOBS:-$(nproc 2>/dev/null || echo 2)}
LIMIT_MB=64

launcher=()
command -v ccache >/dev/null 2>&1 && launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache)
generator=()
[ -f "$BUILD_DIR/CMakeCache.txt" ] || { command -v ninja >/dev/null 2>&1 && generator=(-G Ninja); }

# libffi: the static PIC archive when there is one (Debian's libffi-dev ships libffi_pic.a)
ffi=()
for a in /usr/lib/"$(gcc -print-multiarch 2>/dev/null || echo x86_64-linux-gnu)"/libffi_pic.a /usr/lib64/libffi_pic.a /usr/lib/libffi_pic.a; do
  if [ -f "$a" ]; then ffi=(-DFFI_LIB="$a"); break; fi
done
[ ${#ffi[@]} -gt 0 ] || echo "gpu-bundle: no libffi_pic.a: libffi.so is copied into the bundle instead" >&2

mkdir -p "$BUILD_DIR"
echo "== configure $BUILD_DIR (LLVM, WEBGPU, ONNX off; RPATH \$ORIGIN)"
# shellcheck disable=SC2016 # $ORIGIN is for the dynamic loader, not the shell
cmake -S . -B "$BUILD_DIR" "${generator[@]}" "${launcher[@]}" "${ffi[@]}" \
  -DCMAKE_BUILD_TYPE=Release -DTKC_WITH_LLVM=OFF -DTKC_WITH_WEBGPU=OFF -DTKC_WITH_ONNX=OFF \
  -DTKC_BUILD_TESTS=ON -DTKC_BUILD_BENCH=ON -DTKC_BUILD_EXAMPLES=OFF -DTKC_INSTALL=OFF \
  -DCMAKE_BUILD_RPATH='$ORIGIN' >"$BUILD_DIR/configure.log" 2>&1 ||
  { cat "$BUILD_DIR/configure.log"; exit 1; }

# the suites `ctest -L cuda` runs: their targets are named as they are (tests/test_*.c); ctest gives
# their commands once the executables exist
names=$(ctest --test-dir "$BUILD_DIR" -L cuda -N | sed -nE 's/^ *Test +#[0-9]+: ([A-Za-z0-9_]+)$/\1/p')
[ -n "$names" ] || { echo "gpu-bundle: ctest -L cuda lists no suites" >&2; exit 1; }
echo "== build: $(tr '\n' ' ' <<<"$names")bench_cuda"
# shellcheck disable=SC2086
cmake --build "$BUILD_DIR" -j"$JOBS" --target $names bench_cuda

# one line per suite: name, executable, arguments, the environment ctest gives it (VAR=VALUE...)
list=$(ctest --test-dir "$BUILD_DIR" -L cuda --show-only=json-v1 | python3 -c '
import json, os, sys
for t in json.load(sys.stdin)["tests"]:
    if "command" not in t:
        sys.exit("gpu-bundle: %s: ctest gives no command (not built?)" % t["name"])
    env = []
    for p in t.get("properties", []):
        if p["name"] == "ENVIRONMENT":
            env = [e for e in p["value"] if not e.startswith("TKC_CACHE_DIR=")]  # run.sh sets its own
    if any(" " in a for a in t["command"] + env):
        sys.exit("gpu-bundle: %s: a space in its command or environment" % t["name"])
    print(" ".join([t["name"], os.path.basename(t["command"][0])] + t["command"][1:] + env))
')
exes=$(printf '%s\n' "$list" | awk '{print $2}' | sort -u)

echo "== fill $BUNDLE_DIR"
rm -rf "$BUNDLE_DIR"
mkdir -p "$BUNDLE_DIR"
for e in $exes bench_cuda; do
  cp "$BUILD_DIR/$e" "$BUNDLE_DIR/"
  strip --strip-unneeded "$BUNDLE_DIR/$e" 2>/dev/null || true
done
printf '%s\n' "$list" >"$BUNDLE_DIR/tests.txt"
cp scripts/gpu-bundle-run.sh "$BUNDLE_DIR/run.sh"
cp bench/cuda_peers.py "$BUNDLE_DIR/"
chmod +x "$BUNDLE_DIR/run.sh"

# every shared library the executables load that a bare machine may lack goes beside them (their RPATH
# is $ORIGIN); the base system's (glibc, libgcc_s, libstdc++, libz) are left to the machine
base='^(linux-vdso|ld-linux|libc|libm|libdl|libpthread|librt|libgcc_s|libstdc\+\+|libz)\.so'
for e in $exes bench_cuda; do
  ldd "$BUNDLE_DIR/$e" | awk '$2 == "=>" && $3 ~ /^\// {print $1, $3}'
done | sort -u | while read -r name path; do
  if ! [[ $name =~ $base ]]; then
    cp -L "$path" "$BUNDLE_DIR/$name"
    echo "  carried $name (from $path)"
  fi
done
if command -v readelf >/dev/null 2>&1; then
  # shellcheck disable=SC2016
  readelf -d "$BUNDLE_DIR/bench_cuda" | grep 'R.*PATH.*\$ORIGIN' >/dev/null ||
    { echo "gpu-bundle: bench_cuda has no \$ORIGIN RPATH" >&2; exit 1; }
fi

# what it was built from, for scripts/gpu-check.sh to compare with the checkout it runs in
glibc=$( (for f in "$BUNDLE_DIR"/*; do objdump -T "$f" 2>/dev/null || true; done) | grep -o "GLIBC_[0-9.]*" | sort -Vu | tail -1 || true)
echo "commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(git diff --quiet HEAD 2>/dev/null || echo ' (with uncommitted changes)'), built $(date -u '+%Y-%m-%d %H:%M UTC') on $(uname -m), needs ${glibc:-GLIBC ?} or newer" >"$BUNDLE_DIR/VERSION"
echo "  $(cat "$BUNDLE_DIR/VERSION")"

size_kb=$(du -sk "$BUNDLE_DIR" | cut -f1)
echo "== $BUNDLE_DIR: $(find "$BUNDLE_DIR" -type f | wc -l) files, $((size_kb / 1024)).$(((size_kb % 1024) * 10 / 1024)) MiB (the working tree may carry ${LIMIT_MB} MiB)"
if [ "$size_kb" -gt $((LIMIT_MB * 1024 / 2)) ]; then
  echo "gpu-bundle: over half of the ${LIMIT_MB} MiB the device tool carries" >&2
  exit 1
fi
echo "run it there:  scripts/gpu-check.sh   (device tool: carry [\"$BUNDLE_DIR\"])"
