"""tkc.py -- a small ctypes module over libtkc (the C library's tensor API, include/tkc.h).

    import tkc
    lib = tkc.load()                      # $TKC_LIB, else build/libtkc.so next to the sources, else the system's
    ctx = tkc.Context("CPU")              # or Context() for $TKC_DEVICE / the best device here
    a = ctx.tensor([[1.0, 2.0], [3.0, 4.0]])
    y = (a @ a).softmax(-1)               # lazy: nothing runs yet
    print(y.tolist(), y.kernel_count())   # tolist() schedules, compiles and runs

Only the standard library is used (ctypes, struct). Python numbers mixed with tensors become 0-d
tensors of the tensor's dtype (a Python-side convenience: the C API has no weak types). Failures raise
TkcError carrying the C status and tkc_last_error(). Tensors keep their Context alive; the C handles
are released when the Python objects go away (or at Context.close(), which frees every tensor).
"""
import ctypes
import os
import struct

__all__ = ["load", "Context", "Tensor", "TkcError", "DTYPES", "device_available"]

# tkc_dtype values (include/tkc/base.h), with a struct code for element access (bfloat16 handled apart)
DTYPES = {"bool": (0, "?"), "int8": (1, "b"), "uint8": (2, "B"), "int16": (3, "h"), "uint16": (4, "H"),
          "int32": (5, "i"), "uint32": (6, "I"), "int64": (7, "q"), "uint64": (8, "Q"), "float16": (9, "e"),
          "bfloat16": (10, "H"), "float32": (11, "f"), "float64": (12, "d")}
_DT_NAME = {v[0]: k for k, v in DTYPES.items()}
STATUS = ["ok", "EINVAL", "ESHAPE", "EDTYPE", "ENOMEM", "EDEVICE", "ECOMPILE", "EUNSUPPORTED", "ERUNTIME", "EINTERNAL"]


class TkcError(RuntimeError):
    """A failed tkc call: .status is the tkc_status name ("ESHAPE", ...), the message is tkc_last_error()."""

    def __init__(self, status, message):
        super().__init__("%s: %s" % (status, message))
        self.status = status


_lib = None
_T = ctypes.c_void_p  # tkc_tensor * / tkc_ctx * (opaque)


def _default_paths():
    here = os.path.dirname(os.path.abspath(__file__))
    root = os.path.dirname(os.path.dirname(here))
    return [os.path.join(root, "build", "libtkc.so"), os.path.join(root, "build", "libtkc.dylib")]


def load(path=None):
    """Loads libtkc once: path, else $TKC_LIB, else build/libtkc.so of this checkout, else 'libtkc.so'."""
    global _lib
    if _lib is not None:
        return _lib
    candidates = [path] if path else ([os.environ["TKC_LIB"]] if os.environ.get("TKC_LIB") else _default_paths() + ["libtkc.so"])
    errors = []
    for c in candidates:
        try:
            lib = ctypes.CDLL(c)
            break
        except OSError as e:
            errors.append("%s: %s" % (c, e))
    else:
        raise OSError("cannot load libtkc (set TKC_LIB to the built libtkc.so):\n  " + "\n  ".join(errors))
    _declare(lib)
    _lib = lib
    return lib


def _declare(lib):
    P, I, I64, D, U64, S = ctypes.c_void_p, ctypes.c_int, ctypes.c_int64, ctypes.c_double, ctypes.c_uint64, ctypes.c_char_p
    I64P, IP = ctypes.POINTER(ctypes.c_int64), ctypes.POINTER(ctypes.c_int)
    sig = {
        "tkc_ctx_new": (P, [S]), "tkc_ctx_free": (None, [P]), "tkc_ctx_device": (S, [P]),
        "tkc_device_available": (I, [S]), "tkc_last_error": (S, []), "tkc_last_status": (I, []),
        "tkc_clear_error": (None, []), "tkc_free": (None, [P]), "tkc_version": (S, []),
        "tkc_tensor_new": (P, [P, I, I, I64P, P]), "tkc_full": (P, [P, I, I, I64P, D]), "tkc_scalar": (P, [P, I, D]),
        "tkc_arange": (P, [P, I, D, D, D]), "tkc_rand": (P, [P, I, I, I64P, U64]), "tkc_tensor_free": (None, [P]),
        "tkc_ndim": (I, [P]), "tkc_dim": (I64, [P, I]), "tkc_numel": (I64, [P]), "tkc_dtype_of": (I, [P]),
        "tkc_where": (P, [P, P, P]), "tkc_cast": (P, [P, I]), "tkc_bitcast": (P, [P, I]),
        "tkc_reshape": (P, [P, I, I64P]), "tkc_permute": (P, [P, IP]), "tkc_transpose": (P, [P, I, I]),
        "tkc_expand": (P, [P, I, I64P]), "tkc_pad": (P, [P, I64P, D]), "tkc_shrink": (P, [P, I64P]),
        "tkc_flip": (P, [P, I, IP]), "tkc_softmax": (P, [P, I]), "tkc_log_softmax": (P, [P, I]),
        "tkc_conv2d": (P, [P, P, P, I, I]), "tkc_realize": (I, [P]), "tkc_copy_out": (I, [P, P, ctypes.c_size_t]),
        "tkc_kernel_count": (I, [P]), "tkc_kernels_source": (P, [P, S]),
    }
    for n in ["add", "sub", "mul", "div", "idiv", "mod", "maximum", "minimum", "pow", "lt", "le", "gt", "ge", "eq", "ne",
              "and", "or", "xor", "shl", "shr", "matmul"]:
        sig["tkc_" + n] = (P, [P, P])
    for n in ["neg", "abs", "recip", "sqrt", "exp", "exp2", "log", "log2", "sin", "cos", "tanh", "sigmoid", "relu", "contiguous"]:
        sig["tkc_" + n] = (P, [P])
    for n in ["sum", "max", "min", "mean"]:
        sig["tkc_" + n] = (P, [P, I, IP, I])
    for name, (res, args) in sig.items():
        f = getattr(lib, name)
        f.restype, f.argtypes = res, args


def _err():
    st = _lib.tkc_last_status()
    return TkcError(STATUS[st] if 0 <= st < len(STATUS) else str(st), (_lib.tkc_last_error() or b"").decode())


def _check_ptr(p):
    if not p:
        raise _err()
    return p


def _i64s(xs):
    return (ctypes.c_int64 * max(len(xs), 1))(*xs)


def _ints(xs):
    return (ctypes.c_int * max(len(xs), 1))(*xs)


def device_available(name):
    return bool(load().tkc_device_available(name.encode()))


def _flatten(data):
    """nested lists -> (shape, flat list)"""
    if isinstance(data, (list, tuple)):
        if not data:
            return [0], []
        parts = [_flatten(d) for d in data]
        shape = parts[0][0]
        if any(p[0] != shape for p in parts):
            raise ValueError("ragged nested list")
        return [len(data)] + shape, [x for p in parts for x in p[1]]
    return [], [data]


def _bf16_bits(x):
    (u,) = struct.unpack("<I", struct.pack("<f", x))
    return ((u + 0x7FFF + ((u >> 16) & 1)) >> 16) & 0xFFFF  # round to nearest even


class Context:
    """A tkc_ctx on one device ("CPU", "LLVM", "CUDA", "WEBGPU", "INTERP"); None = $TKC_DEVICE / best."""

    def __init__(self, device=None, lib=None):
        load(lib)
        self._ptr = _check_ptr(_lib.tkc_ctx_new(device.encode() if device else None))

    @property
    def device(self):
        return _lib.tkc_ctx_device(self._ptr).decode()

    def close(self):
        """Frees the ctx and every tensor of it; its Tensors must not be used afterwards."""
        if self._ptr:
            _lib.tkc_ctx_free(self._ptr)
            self._ptr = None

    def __del__(self):
        if _lib is not None:
            self.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def _wrap(self, p):
        return Tensor(self, _check_ptr(p))

    def tensor(self, data, dtype="float32"):
        """A tensor holding a copy of data (a number or nested lists)."""
        shape, flat = _flatten(data)
        code, fmt = DTYPES[dtype]
        if dtype == "bfloat16":
            flat = [_bf16_bits(float(x)) for x in flat]
        elif dtype in ("float16", "float32", "float64"):
            flat = [float(x) for x in flat]
        elif dtype == "bool":
            flat = [bool(x) for x in flat]
        else:
            flat = [int(x) for x in flat]
        buf = ctypes.create_string_buffer(struct.pack("<%d%s" % (len(flat), fmt), *flat), max(struct.calcsize(fmt) * len(flat), 1))
        return self._wrap(_lib.tkc_tensor_new(self._ptr, code, len(shape), _i64s(shape), buf))

    def zeros(self, shape, dtype="float32"):
        return self._wrap(_lib.tkc_tensor_new(self._ptr, DTYPES[dtype][0], len(shape), _i64s(shape), None))

    def full(self, shape, value, dtype="float32"):
        return self._wrap(_lib.tkc_full(self._ptr, DTYPES[dtype][0], len(shape), _i64s(shape), float(value)))

    def scalar(self, value, dtype="float32"):
        return self._wrap(_lib.tkc_scalar(self._ptr, DTYPES[dtype][0], float(value)))

    def arange(self, start, stop=None, step=1, dtype="int32"):
        if stop is None:
            start, stop = 0, start
        return self._wrap(_lib.tkc_arange(self._ptr, DTYPES[dtype][0], float(start), float(stop), float(step)))

    def rand(self, shape, seed=0, dtype="float32"):
        return self._wrap(_lib.tkc_rand(self._ptr, DTYPES[dtype][0], len(shape), _i64s(shape), seed))


class Tensor:
    """A lazy tkc_tensor. Operators build the graph; tolist()/realize() run it."""

    def __init__(self, ctx, ptr):
        self.ctx, self._ptr = ctx, ptr

    def __del__(self):
        if _lib is not None and self._ptr and self.ctx._ptr:
            _lib.tkc_tensor_free(self._ptr)
        self._ptr = None

    # ---------------------------------------------------------------- properties
    @property
    def shape(self):
        return tuple(_lib.tkc_dim(self._ptr, i) for i in range(_lib.tkc_ndim(self._ptr)))

    @property
    def ndim(self):
        return _lib.tkc_ndim(self._ptr)

    @property
    def dtype(self):
        return _DT_NAME.get(_lib.tkc_dtype_of(self._ptr), "void")

    def numel(self):
        return _lib.tkc_numel(self._ptr)

    def __repr__(self):
        return "<tkc.Tensor %s %s on %s>" % (self.dtype, self.shape, self.ctx.device)

    # ---------------------------------------------------------------- helpers
    def _t(self, x):
        return x if isinstance(x, Tensor) else self.ctx.scalar(x, self.dtype if self.dtype != "bool" else "float32")

    def _bin(self, name, other, reverse=False):
        o = self._t(other)
        a, b = (o, self) if reverse else (self, o)
        return self.ctx._wrap(getattr(_lib, "tkc_" + name)(a._ptr, b._ptr))

    def _un(self, name):
        return self.ctx._wrap(getattr(_lib, "tkc_" + name)(self._ptr))

    # ---------------------------------------------------------------- elementwise
    def __add__(self, o): return self._bin("add", o)
    def __radd__(self, o): return self._bin("add", o, True)
    def __sub__(self, o): return self._bin("sub", o)
    def __rsub__(self, o): return self._bin("sub", o, True)
    def __mul__(self, o): return self._bin("mul", o)
    def __rmul__(self, o): return self._bin("mul", o, True)
    def __truediv__(self, o): return self._bin("div", o)
    def __rtruediv__(self, o): return self._bin("div", o, True)
    def __floordiv__(self, o): return self._bin("idiv", o)  # truncating, as C
    def __mod__(self, o): return self._bin("mod", o)
    def __pow__(self, o): return self._bin("pow", o)
    def __matmul__(self, o): return self._bin("matmul", o)
    def __and__(self, o): return self._bin("and", o)
    def __or__(self, o): return self._bin("or", o)
    def __xor__(self, o): return self._bin("xor", o)
    def __lshift__(self, o): return self._bin("shl", o)
    def __rshift__(self, o): return self._bin("shr", o)
    def __lt__(self, o): return self._bin("lt", o)
    def __le__(self, o): return self._bin("le", o)
    def __gt__(self, o): return self._bin("gt", o)
    def __ge__(self, o): return self._bin("ge", o)
    def eq(self, o): return self._bin("eq", o)
    def ne(self, o): return self._bin("ne", o)
    def maximum(self, o): return self._bin("maximum", o)
    def minimum(self, o): return self._bin("minimum", o)
    def __neg__(self): return self._un("neg")
    def __abs__(self): return self._un("abs")

    def where(self, a, b):
        """self (cast to bool) ? a : b"""
        a, b = self._t(a), self._t(b)
        return self.ctx._wrap(_lib.tkc_where(self._ptr, a._ptr, b._ptr))

    def cast(self, dtype): return self.ctx._wrap(_lib.tkc_cast(self._ptr, DTYPES[dtype][0]))
    def bitcast(self, dtype): return self.ctx._wrap(_lib.tkc_bitcast(self._ptr, DTYPES[dtype][0]))

    # ---------------------------------------------------------------- reductions
    def _red(self, name, axis, keepdim):
        axes = [] if axis is None else ([axis] if isinstance(axis, int) else list(axis))
        return self.ctx._wrap(getattr(_lib, "tkc_" + name)(self._ptr, len(axes), _ints(axes) if axes else None, int(keepdim)))

    def sum(self, axis=None, keepdim=False): return self._red("sum", axis, keepdim)
    def max(self, axis=None, keepdim=False): return self._red("max", axis, keepdim)
    def min(self, axis=None, keepdim=False): return self._red("min", axis, keepdim)
    def mean(self, axis=None, keepdim=False): return self._red("mean", axis, keepdim)

    # ---------------------------------------------------------------- movement
    def reshape(self, *shape):
        shape = list(shape[0]) if len(shape) == 1 and isinstance(shape[0], (list, tuple)) else list(shape)
        return self.ctx._wrap(_lib.tkc_reshape(self._ptr, len(shape), _i64s(shape)))

    def permute(self, *order):
        order = list(order[0]) if len(order) == 1 and isinstance(order[0], (list, tuple)) else list(order)
        return self.ctx._wrap(_lib.tkc_permute(self._ptr, _ints(order)))

    def transpose(self, ax0=-2, ax1=-1): return self.ctx._wrap(_lib.tkc_transpose(self._ptr, ax0, ax1))

    @property
    def T(self): return self.transpose()

    def expand(self, *shape):
        shape = list(shape[0]) if len(shape) == 1 and isinstance(shape[0], (list, tuple)) else list(shape)
        return self.ctx._wrap(_lib.tkc_expand(self._ptr, len(shape), _i64s(shape)))

    def pad(self, pads, value=0.0):
        """pads: one (before, after) pair per axis"""
        flat = [p for pair in pads for p in pair]
        return self.ctx._wrap(_lib.tkc_pad(self._ptr, _i64s(flat), float(value)))

    def shrink(self, ranges):
        """ranges: one (start, end) pair per axis"""
        flat = [r for pair in ranges for r in pair]
        return self.ctx._wrap(_lib.tkc_shrink(self._ptr, _i64s(flat)))

    def flip(self, *axes):
        axes = list(axes[0]) if len(axes) == 1 and isinstance(axes[0], (list, tuple)) else list(axes)
        return self.ctx._wrap(_lib.tkc_flip(self._ptr, len(axes), _ints(axes)))

    def contiguous(self): return self._un("contiguous")

    # ---------------------------------------------------------------- math and composites
    def __getattr__(self, name):
        if name in ("recip", "sqrt", "exp", "exp2", "log", "log2", "sin", "cos", "tanh", "sigmoid", "relu"):
            return lambda: self._un(name)
        raise AttributeError(name)

    def softmax(self, axis=-1): return self.ctx._wrap(_lib.tkc_softmax(self._ptr, axis))
    def log_softmax(self, axis=-1): return self.ctx._wrap(_lib.tkc_log_softmax(self._ptr, axis))

    def conv2d(self, weight, bias=None, stride=1, padding=0):
        return self.ctx._wrap(_lib.tkc_conv2d(self._ptr, weight._ptr, bias._ptr if bias is not None else None, stride, padding))

    # ---------------------------------------------------------------- running
    def realize(self):
        if _lib.tkc_realize(self._ptr):
            raise _err()
        return self

    def kernel_count(self):
        n = _lib.tkc_kernel_count(self._ptr)
        if n < 0:
            raise _err()
        return n

    def kernels_source(self, renderer="C"):
        p = _check_ptr(_lib.tkc_kernels_source(self._ptr, renderer.encode()))
        try:
            return ctypes.string_at(p).decode()
        finally:
            _lib.tkc_free(p)

    def tobytes(self):
        code, fmt = DTYPES[self.dtype]
        n = self.numel() * struct.calcsize(fmt)
        buf = ctypes.create_string_buffer(max(n, 1))
        if _lib.tkc_copy_out(self._ptr, buf, n):
            raise _err()
        return buf.raw[:n]

    def tolist(self):
        """Realizes the tensor and returns nested Python lists (a number for a 0-d tensor)."""
        code, fmt = DTYPES[self.dtype]
        flat = list(struct.unpack("<%d%s" % (self.numel(), fmt), self.tobytes()))
        if self.dtype == "bfloat16":
            flat = [struct.unpack("<f", struct.pack("<I", b << 16))[0] for b in flat]
        shape = self.shape
        if not shape:
            return flat[0]

        def nest(off, dims):
            if len(dims) == 1:
                return flat[off:off + dims[0]]
            step = 1
            for d in dims[1:]:
                step *= d
            return [nest(off + i * step, dims[1:]) for i in range(dims[0])]
        return nest(0, list(shape))

    def item(self):
        return self.tolist() if self.ndim == 0 else self.reshape([]).tolist()
