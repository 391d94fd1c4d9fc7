#!/usr/bin/env python3
"""tests/test_io_py.py LIBTKC: model files written by the real writers, read by tkc (include/tkc/io.h)
through ctypes on the built libtkc.so, values compared with numpy:
  - safetensors.numpy.save_file: every dtype numpy has (bfloat16 through ml_dtypes when present),
    scalars, empty tensors and __metadata__; and tkc_safetensors_save's file read by load_file
  - gguf.GGUFWriter: F32 / F16 / BF16 / I8 / I16 / I32 / F64 tensors (numpy's shape comes back,
    GGUF's ne reversed), every metadata type (arrays of strings, as tokenizer.ggml.tokens, included),
    a custom alignment, and Q8_0 / Q4_0 tensors packed by gguf.quants (their type id and logical
    shape; their values against gguf.quants.dequantize when tkc's dequantizers are there)
Exit 77 (skipped) without numpy, safetensors or gguf."""
import ctypes
import os
import sys
import tempfile

try:
    import numpy as np
    import gguf
    from gguf import GGMLQuantizationType as Q
    from safetensors.numpy import load_file, save_file
except ImportError as e:
    print("skipped: numpy, safetensors and gguf are needed (%s)" % e)
    sys.exit(77)
try:
    import ml_dtypes
except ImportError:
    ml_dtypes = None

lib = ctypes.CDLL(sys.argv[1])
P, S, I, I64, D = ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int, ctypes.c_int64, ctypes.c_double
for name, res, args in [
    ("tkc_ctx_new", P, [S]), ("tkc_ctx_free", None, [P]), ("tkc_last_error", S, []), ("tkc_last_status", I, []),
    ("tkc_clear_error", None, []),
    ("tkc_safetensors_load", P, [P, S]), ("tkc_gguf_load", P, [P, S]),
    ("tkc_safetensors_save", I, [S, I, ctypes.POINTER(S), ctypes.POINTER(P)]),
    ("tkc_state_count", I, [P]), ("tkc_state_name", S, [P, I]), ("tkc_state_get", P, [P, S]),
    ("tkc_state_shape", I, [P, S, ctypes.POINTER(I), ctypes.POINTER(I), ctypes.POINTER(I64)]), ("tkc_state_free", None, [P]),
    ("tkc_gguf_meta_count", I, [P]), ("tkc_gguf_meta_key", S, [P, I]), ("tkc_gguf_meta_type", I, [P, S]),
    ("tkc_gguf_meta_int", I, [P, S, ctypes.POINTER(I64)]), ("tkc_gguf_meta_float", I, [P, S, ctypes.POINTER(D)]),
    ("tkc_gguf_meta_str", S, [P, S]),
    ("tkc_gguf_meta_array", I, [P, S, ctypes.POINTER(I), ctypes.POINTER(I64), ctypes.POINTER(P)]),
    ("tkc_gguf_meta_array_str", S, [P, S, I64]), ("tkc_gguf_tensor_type", I, [P, S]),
    ("tkc_tensor_new", P, [P, I, I, ctypes.POINTER(I64), P]), ("tkc_tensor_free", None, [P]),
    ("tkc_copy_out", I, [P, P, ctypes.c_size_t]), ("tkc_dtype_of", I, [P]), ("tkc_ndim", I, [P]), ("tkc_dim", I64, [P, I]),
]:
    f = getattr(lib, name)
    f.restype, f.argtypes = res, args

# tkc_dtype order (tkc/base.h) -> numpy
BF16 = ml_dtypes.bfloat16 if ml_dtypes else None
NP = [np.bool_, np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64, np.uint64, np.float16, BF16, np.float32, np.float64]
failures = 0


def check(cond, what):
    global failures
    if not cond:
        failures += 1
        print("FAIL:", what)


def err():
    return (lib.tkc_last_error() or b"").decode()


def tensor_np(st, name):
    """tkc_state_get(name) copied out as a numpy array of its dtype and shape"""
    t = lib.tkc_state_get(st, name.encode())
    if not t:
        raise RuntimeError("%s: %s" % (name, err()))
    dt, nd = lib.tkc_dtype_of(t), lib.tkc_ndim(t)
    shape = tuple(lib.tkc_dim(t, i) for i in range(nd))
    npdt = NP[dt] if NP[dt] is not None else np.uint16  # bfloat16 bits without ml_dtypes
    out = np.empty(shape, dtype=npdt)
    rc = lib.tkc_copy_out(t, out.ctypes.data_as(P), out.nbytes)
    lib.tkc_tensor_free(t)
    if rc != 0:
        raise RuntimeError("%s: %s" % (name, err()))
    return out


def same(a, b):
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


def test_safetensors(ctx, tmp):
    rng = np.random.default_rng(0)
    arrays = {
        "f32": rng.standard_normal((3, 5)).astype(np.float32),
        "f64": rng.standard_normal((2, 2, 2)),
        "f16": rng.standard_normal((7,)).astype(np.float16),
        "i64": rng.integers(-2**62, 2**62, (4,), dtype=np.int64),
        "i32": rng.integers(-2**31, 2**31, (2, 3), dtype=np.int32),
        "i16": rng.integers(-2**15, 2**15, (5,), dtype=np.int16),
        "i8": rng.integers(-128, 128, (1, 9), dtype=np.int8),
        "u8": rng.integers(0, 256, (6,), dtype=np.uint8),
        "u16": rng.integers(0, 2**16, (3,), dtype=np.uint16),
        "u32": rng.integers(0, 2**32, (3,), dtype=np.uint32),
        "u64": rng.integers(0, 2**63, (3,), dtype=np.uint64),
        "bool": rng.integers(0, 2, (2, 4)).astype(np.bool_),
        "scalar": np.array(3.25, dtype=np.float32),
        "empty": np.zeros((0, 3), dtype=np.float32),
    }
    if BF16 is not None:
        arrays["bf16"] = rng.standard_normal((4, 2)).astype(BF16)
    path = os.path.join(tmp, "np.safetensors")
    save_file(arrays, path, metadata={"format": "np"})
    st = lib.tkc_safetensors_load(ctx, path.encode())
    if not st and lib.tkc_last_status() == 7 and "without jansson" in err():
        print("note: built without jansson: safetensors not tested")
        return
    check(st, "safetensors load: " + err())
    if not st:
        return
    check(lib.tkc_state_count(st) == len(arrays), "count %d" % lib.tkc_state_count(st))
    names = {lib.tkc_state_name(st, i).decode() for i in range(lib.tkc_state_count(st))}
    check(names == set(arrays), "names %s" % names)
    for name, a in arrays.items():
        got = tensor_np(st, name)
        check(same(got, a), "safetensors %s: %s %s vs %s %s" % (name, got.dtype, got.shape, a.dtype, a.shape))
    check(lib.tkc_gguf_meta_str(st, b"format") == b"np", "__metadata__")
    check(not lib.tkc_state_get(st, b"nope") and "'nope'" in err(), "unknown name: " + err())
    lib.tkc_clear_error()

    # tkc writes, the package reads
    out = os.path.join(tmp, "tkc.safetensors")
    keep = arrays
    ts = []
    for k, a in keep.items():
        shape = (I64 * max(a.ndim, 1))(*a.shape)
        dt = [i for i, t in enumerate(NP) if t is not None and np.dtype(t) == a.dtype][0]
        ts.append(lib.tkc_tensor_new(ctx, dt, a.ndim, shape, np.ascontiguousarray(a).ctypes.data_as(P)))
    names_c = (S * len(keep))(*[k.encode() for k in keep])
    ts_c = (P * len(keep))(*ts)
    check(lib.tkc_safetensors_save(out.encode(), len(keep), names_c, ts_c) == 0, "tkc_safetensors_save: " + err())
    back = load_file(out)
    for k, a in keep.items():
        check(k in back and same(back[k], a), "tkc_safetensors_save %s" % k)
    for t in ts:
        lib.tkc_tensor_free(t)
    lib.tkc_state_free(st)


def test_gguf(ctx, tmp):
    rng = np.random.default_rng(1)
    path = os.path.join(tmp, "model.gguf")
    w = gguf.GGUFWriter(path, "llama")
    w.add_uint8("m.u8", 200)
    w.add_int8("m.i8", -100)
    w.add_uint16("m.u16", 60000)
    w.add_int16("m.i16", -30000)
    w.add_uint32("m.u32", 4000000000)
    w.add_int32("m.i32", -2000000000)
    w.add_uint64("m.u64", 2**63 + 5)
    w.add_int64("m.i64", -2**60)
    w.add_float32("m.f32", 1.5)
    w.add_float64("m.f64", 1e-300)
    w.add_bool("m.bool", True)
    w.add_string("m.str", "h\u00e9llo w\u00f6rld")
    tokens = ["<unk>", "<s>", "</s>", "\u2581the", "\u00e9", ""] + ["tok%d" % i for i in range(300)]
    w.add_token_list(tokens)
    w.add_array("m.arr_i32", [1, -2, 3])
    w.add_array("m.arr_f32", [0.5, 0.25])
    w.add_custom_alignment(64)
    tensors = {
        "f32": rng.standard_normal((3, 5)).astype(np.float32),
        "f32_4d": rng.standard_normal((2, 1, 3, 4)).astype(np.float32),
        "f16": rng.standard_normal((4, 8)).astype(np.float16),
        "i8": rng.integers(-128, 128, (5,), dtype=np.int8),
        "i16": rng.integers(-2**15, 2**15, (2, 3), dtype=np.int16),
        "i32": rng.integers(-2**31, 2**31, (7,), dtype=np.int32),
        "f64": rng.standard_normal((3,)),
    }
    for k, a in tensors.items():
        w.add_tensor(k, a)
    bf_src = rng.standard_normal((3, 4)).astype(np.float32)
    w.add_tensor("bf16", gguf.quants.quantize(bf_src, Q.BF16), raw_dtype=Q.BF16)
    quant_src = {"q8_0": (Q.Q8_0, rng.standard_normal((3, 64)).astype(np.float32)),
                 "q4_0": (Q.Q4_0, rng.standard_normal((2, 32)).astype(np.float32))}
    for k, (qt, a) in quant_src.items():
        w.add_tensor(k, gguf.quants.quantize(a, qt), raw_dtype=qt)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()

    st = lib.tkc_gguf_load(ctx, path.encode())
    check(st, "gguf load: " + err())
    if not st:
        return
    check(lib.tkc_state_count(st) == len(tensors) + 1 + len(quant_src), "gguf count %d" % lib.tkc_state_count(st))
    for k, a in tensors.items():
        got = tensor_np(st, k)
        check(same(got, a), "gguf %s: %s %s vs %s %s" % (k, got.dtype, got.shape, a.dtype, a.shape))
    bf = tensor_np(st, "bf16")
    bf_ref = gguf.quants.quantize(bf_src, Q.BF16).view(np.uint16).reshape(3, 4)
    check(bf.shape == (3, 4) and np.array_equal(bf.view(np.uint16), bf_ref), "gguf bf16")
    check(lib.tkc_gguf_tensor_type(st, b"bf16") == int(Q.BF16), "bf16 type")
    for k, (qt, a) in quant_src.items():
        check(lib.tkc_gguf_tensor_type(st, k.encode()) == int(qt), "%s type" % k)
        dt, nd, shape = I(), I(), (I64 * 8)()
        check(lib.tkc_state_shape(st, k.encode(), ctypes.byref(dt), ctypes.byref(nd), shape) == 0 and dt.value == 11
              and tuple(shape[:nd.value]) == a.shape, "%s logical shape" % k)
        t = lib.tkc_state_get(st, k.encode())
        if not t:  # the dequantizers (src/io/quant.c) are not there yet
            check(lib.tkc_last_status() == 7, "%s: %s" % (k, err()))
            print("note: %s not dequantized: %s" % (k, err()))
            lib.tkc_clear_error()
            continue
        lib.tkc_tensor_free(t)
        ref = gguf.quants.dequantize(gguf.quants.quantize(a, qt), qt).reshape(a.shape)
        check(np.array_equal(tensor_np(st, k), ref), "%s values vs gguf.quants.dequantize" % k)

    def meta_int(key):
        v = I64()
        return v.value if lib.tkc_gguf_meta_int(st, key.encode(), ctypes.byref(v)) == 0 else None

    def meta_float(key):
        v = D()
        return v.value if lib.tkc_gguf_meta_float(st, key.encode(), ctypes.byref(v)) == 0 else None

    for key, want in [("m.u8", 200), ("m.i8", -100), ("m.u16", 60000), ("m.i16", -30000), ("m.u32", 4000000000),
                      ("m.i32", -2000000000), ("m.i64", -2**60), ("m.bool", 1), ("general.alignment", 64)]:
        check(meta_int(key) == want, "meta %s = %s" % (key, meta_int(key)))
    check(meta_int("m.u64") is None and "does not fit" in err(), "meta u64 above int64")
    check(meta_float("m.u64") == float(2**63 + 5), "meta u64 as float")
    check(meta_float("m.f32") == 1.5 and meta_float("m.f64") == 1e-300, "meta floats")
    check(lib.tkc_gguf_meta_str(st, b"m.str").decode() == "h\u00e9llo w\u00f6rld", "meta str")
    check(lib.tkc_gguf_meta_str(st, b"general.architecture") == b"llama", "architecture")
    et, n, data = I(), I64(), P()
    check(lib.tkc_gguf_meta_array(st, b"tokenizer.ggml.tokens", ctypes.byref(et), ctypes.byref(n), ctypes.byref(data)) == 0
          and et.value == 8 and n.value == len(tokens), "tokens array")
    got = [lib.tkc_gguf_meta_array_str(st, b"tokenizer.ggml.tokens", i).decode() for i in range(len(tokens))]
    check(got == tokens, "tokens")
    check(lib.tkc_gguf_meta_array(st, b"m.arr_i32", ctypes.byref(et), ctypes.byref(n), ctypes.byref(data)) == 0, "arr_i32")
    arr = np.ctypeslib.as_array(ctypes.cast(data, ctypes.POINTER(ctypes.c_int32)), (n.value,))
    check(et.value == 5 and list(arr) == [1, -2, 3], "arr_i32 values %s" % list(arr))
    check(lib.tkc_gguf_meta_array(st, b"m.arr_f32", ctypes.byref(et), ctypes.byref(n), ctypes.byref(data)) == 0, "arr_f32")
    arr = np.ctypeslib.as_array(ctypes.cast(data, ctypes.POINTER(ctypes.c_float)), (n.value,))
    check(et.value == 6 and list(arr) == [0.5, 0.25], "arr_f32 values")
    keys = {lib.tkc_gguf_meta_key(st, i).decode() for i in range(lib.tkc_gguf_meta_count(st))}
    check({"m.u8", "m.str", "tokenizer.ggml.tokens", "general.architecture"} <= keys, "meta keys")
    lib.tkc_state_free(st)

    # the same file cut short in its header or in the last tensor's data (36 bytes of Q4_0 followed by
    # the writer's padding to 64) is an error, never a crash
    raw = open(path, "rb").read()
    cut = os.path.join(tmp, "cut.gguf")
    for n in list(range(1, 200, 7)) + [len(raw) - 40]:
        lib.tkc_clear_error()
        open(cut, "wb").write(raw[:n])
        st = lib.tkc_gguf_load(ctx, cut.encode())
        check(not st and "cut.gguf" in err(), "a GGUF file cut to %d bytes: %s" % (n, err()))
        if st:
            lib.tkc_state_free(st)


def main():
    ctx = lib.tkc_ctx_new(b"CPU") or lib.tkc_ctx_new(b"INTERP")
    with tempfile.TemporaryDirectory() as tmp:
        test_safetensors(ctx, tmp)
        test_gguf(ctx, tmp)
    lib.tkc_ctx_free(ctx)
    print("test_io_py: %s" % ("%d failures" % failures if failures else "ok"))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
