"""Every tkc_ function of the public tensor API is declared (bound) or on the skip list, exported by
the library, and reachable from Python."""
import os
import re

import pytest

import tkc
from tkc import _lib, _tensor as tensor

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
HEADERS = ["include/tkc/base.h", "include/tkc.h", "include/tkc/onnx.h"] + ["include/tkc/" + f for f in sorted(os.listdir(os.path.join(REPO, "include", "tkc")))
                                                                          if f.startswith("ops_") and f.endswith(".h")]

# Declared in the headers above but deliberately not bound:
SKIP = {
    # a Python Tensor keeps its Context object
    "tkc_tensor_ctx": "Python tensors hold their Context",
    # a C allocator callback: through ctypes it would run Python on every block libtkc allocates
    "tkc_set_allocator": "C allocator callbacks",
    "tkc_get_allocator": "C allocator callbacks",
    # Python shares a handle through Python references (and Jit borrows its inputs' handles)
    "tkc_tensor_ref": "handles are shared by Python references",
    # for C caches made inside a caller's scopes (tkc_state_matmul's repacked weights); a Python
    # tensor leaves a scope with Tensor.keep(), which keeps the binding's own scope records right
    "tkc_unscope": "Python tensors leave scopes with Tensor.keep()",
    # dtype names come from tkc.dtypes (DType.name)
    "tkc_dtype_name": "DType.name",
    # fp8 values are converted by numpy (ml_dtypes, or tkc.dtypes' own conversions), a whole array at once
    "tkc_fp8_from_double": "tkc.dtypes.float_to_fp8",
    "tkc_fp8_to_float": "tkc.dtypes.fp8_to_float32",
    # (the UOp / render / runtime APIs of tkc/uop.h, render.h, runtime.h are not parsed at all,
    # being for people building their own front end; tkc_opt_name is taken as the OPT_NAMES table)
}


def declared():
    names = set()
    for h in HEADERS:
        text = re.sub(r"/\*.*?\*/", "", open(os.path.join(REPO, h)).read(), flags=re.S)
        for proto in re.findall(r"TKC_API[^;{]*;", text):
            m = re.search(r"\b(tkc_\w+)\s*\(", proto)
            if m:
                names.add(m.group(1))
    return names


def test_headers_parsed():
    names = declared()
    assert {"tkc_add", "tkc_matmul", "tkc_cat", "tkc_layer_norm", "tkc_last_error"} <= names
    assert len(names) > 150


def test_every_declared_function_is_bound_or_skipped():
    missing = sorted(declared() - set(_lib.DECLS) - set(SKIP))
    assert not missing, "declare these in tkc/_lib.py (or add them to SKIP with a reason): %s" % missing


def test_no_stale_declarations():
    stale = sorted(set(_lib.DECLS) - declared())
    assert not stale, "declared in tkc/_lib.py but not in the public headers: %s" % stale


def test_library_exports_every_declaration():
    assert _lib.lib.missing == [], "libtkc at %s lacks %s" % (_lib.lib.path, _lib.lib.missing)


def test_every_declaration_is_used_by_the_package():
    pkg = os.path.dirname(tkc.__file__)
    used = set()
    for f in os.listdir(pkg):
        if f.endswith(".py"):
            code = "".join(line for line in open(os.path.join(pkg, f)) if not line.startswith("_decl("))
            used |= set(re.findall(r"\b(tkc_\w+)", code))
    dynamic = tensor._UNARY + list(tensor._BINARY.values()) + tensor._REDUCE + tensor._SCAN
    used |= {"tkc_" + n for n in dynamic}
    unused = sorted(set(_lib.DECLS) - used)
    assert not unused, "bound but not reachable from Python: %s" % unused


def test_module_functions():
    x = tkc.tensor([1.0, 4.0, 9.0])
    assert tkc.sqrt(x).tolist() == [1.0, 2.0, 3.0]
    assert tkc.maximum(x, 5.0).tolist() == [5.0, 5.0, 9.0]
    assert tkc.sum([1, 2, 3]).item() == 6


def test_memory_stats_and_cache_flush():
    before = tkc.memory_stats()
    with tkc.Context("INTERP") as c:
        x = c.tensor([1.0, 2.0, 3.0]) * 2
        assert x.tolist() == [2.0, 4.0, 6.0]
        during = tkc.memory_stats()
        assert during[0] > before[0] and during[1] > before[1]
    tkc.cache_flush()
    after = tkc.memory_stats()
    assert after[0] <= during[0]


def test_variables():
    with tkc.Context("INTERP") as c:
        pos = c.dim_var("pos", 0, 10)
        assert tkc.dim_is_var(pos) and not tkc.dim_is_var(3)
        x = c.tensor([1.0, 2.0, 3.0])
        for v in (2, 7):
            c.bind(pos, v)
            assert c.dim_value(pos) == v
            assert (x * c.dim_scalar(pos).cast(tkc.float32)).tolist() == [v * 1.0, v * 2.0, v * 3.0]
        with pytest.raises(tkc.TkcError):
            c.bind(pos, 11)
        with pytest.raises(tkc.TkcError):
            c.dim_var("pos", 0, 1)


def test_jit_replays_with_variables():
    import numpy as np
    wn = np.arange(12, dtype=np.float32).reshape(3, 4) / 10
    with tkc.Context("INTERP") as c:
        w = c.tensor(wn)
        n = c.dim_var("n", 1, 8)
        step = tkc.Jit(c, lambda x: ((x @ w).relu(), (x @ w).sum()), nout=2)
        for rows in (2, 5, 1, 8):
            c.bind(n, rows)
            data = np.linspace(-1, 1, rows * 3, dtype=np.float32).reshape(rows, 3)
            full = np.zeros((8, 3), dtype=np.float32)
            full[:rows] = data
            y, s = step(c.tensor(full).shrink(((0, n), (0, 3))))  # (n, 3): rows of a buffer of 8
            np.testing.assert_allclose(y.numpy(), np.maximum(data @ wn, 0), rtol=1e-5, atol=1e-6)
            np.testing.assert_allclose(s.numpy(), (data @ wn).sum(), rtol=1e-5, atol=1e-5)
        assert step.kernels >= 2
        with pytest.raises(tkc.TkcError):
            step(c.tensor(np.zeros((2, 3), dtype=np.float32)))  # another shape than the captured one
        bad = tkc.Jit(c, lambda x: x * 2, nout=2)
        with pytest.raises(tkc.TkcError):
            bad(c.tensor([1.0]))
        step.close()


def test_variable_pads_shrinks_and_cat():
    import numpy as np
    xn = np.arange(24, dtype=np.float32).reshape(8, 3) / 4 - 2
    with tkc.Context("INTERP") as c:
        x = c.tensor(xn)
        n = c.dim_var("n", 1, 7)
        for k in (3, 1, 7):
            c.bind(n, k)
            row = x.shrink(((n, n + 1), (0, 3)))                   # x[n]
            grown = tkc.cat([x.shrink(((0, n), (0, 3))), row], axis=0)  # x[:n] and x[n]: (n + 1, 3)
            padded = x.shrink(((0, n), (0, 3))).pad(((0, 2), (0, 0)), 5.0)  # after a variable length
            shifted = row.pad(((n, 0), (0, 0)))                   # by a variable amount: (n + 1, 3)
            np.testing.assert_array_equal(row.numpy(), xn[k:k + 1])
            np.testing.assert_array_equal(grown.numpy(), xn[:k + 1])
            np.testing.assert_array_equal(padded.numpy(), np.concatenate([xn[:k], np.full((2, 3), 5, np.float32)]))
            np.testing.assert_array_equal(shifted.numpy(), np.concatenate([np.zeros((k, 3), np.float32), xn[k:k + 1]]))
        c.bind(n, 2)
        with pytest.raises(tkc.TkcError, match="computed for n = 7"):
            padded.numpy()  # its data holds the lengths of n = 7
        with pytest.raises(tkc.TkcError):
            x.shrink(((n, 8), (0, 3)))  # 8 - n is not one variable + c
