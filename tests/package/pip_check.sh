#!/usr/bin/env bash
# tests/package/pip_check.sh SOURCE_DIR WORK_DIR
# `pip install SOURCE_DIR/bindings/python` into a fresh venv (which builds libtkc with CMake and
# bundles it), then, from a folder outside the repository and with no TKC_* variables, imports the
# installed package and checks a matmul + softmax against numpy. The venv sees the system's numpy
# (--system-site-packages); when setuptools and wheel are there too, pip runs without build
# isolation and downloads nothing (else it fetches its build requirements from PyPI).
set -euo pipefail
src=$1 work=$2
rm -rf "$work" && mkdir -p "$work/elsewhere"
say() { printf 'pip: %s\n' "$*"; }
python3 -m venv --system-site-packages "$work/venv"
unset TKC_LIB PYTHONPATH
isolation=()
"$work/venv/bin/python" -c 'import setuptools, wheel' 2>/dev/null && isolation=(--no-build-isolation)
CMAKE_BUILD_PARALLEL_LEVEL=${CMAKE_BUILD_PARALLEL_LEVEL:-$(nproc)} \
  "$work/venv/bin/python" -m pip install --quiet --disable-pip-version-check "${isolation[@]}" --no-deps "$src/bindings/python"
cd "$work/elsewhere"
env -u TKC_CACHE_DIR TKC_CACHE_DIR="$work/kcache" "$work/venv/bin/python" - <<'PY'
import os, numpy as np, tkc
assert "site-packages" in tkc.__file__, tkc.__file__     # the installed package, not the source tree
a = np.arange(6, dtype=np.float32).reshape(2, 3) / 7
b = np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4)
with tkc.Context("CPU") as ctx:
    got = (ctx.tensor(a) @ ctx.tensor(b)).softmax(-1).numpy()
e = np.exp(a @ b - (a @ b).max(-1, keepdims=True)); want = e / e.sum(-1, keepdims=True)
assert np.allclose(got, want, atol=1e-6), (got, want)
print("pip: installed tkc", tkc.__version__, "from", os.path.dirname(tkc.__file__), "ok")
PY
# the build folders setup.py leaves next to the sources
rm -rf "$src/bindings/python/build" "$src/bindings/python/tkc.egg-info"
say ok
