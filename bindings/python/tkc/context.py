"""Contexts (a tkc_ctx: one device, the owner of its tensors) and device queries."""
import collections
import ctypes
import contextlib
import weakref

import numpy as np

from . import dtypes
from .errors import make_error
from ._lib import OPT_NAMES, PROGRESS_FN, Stats, check, check_ptr, int64s, lib

DEVICES = ("CPU", "LLVM", "CUDA", "WEBGPU", "INTERP")
KernelStats = collections.namedtuple("KernelStats", "kernels kernel_s kernels_built build_s")
ProgressInfo = collections.namedtuple("ProgressInfo", "stage kernel done total seconds")


def device_available(name):
    """Whether device name exists and can run here."""
    return bool(lib.tkc_device_available(name.encode()))


def dim_is_var(dim):
    """Whether dim is a variable token (from Context.dim_var) rather than a plain dim."""
    return bool(lib.tkc_dim_is_var(int(dim)))


def cache_flush():
    """Frees the built kernels and compiled code no context is using (kept process-wide so that a
    graph seen again is not rebuilt)."""
    lib.tkc_cache_flush()


def memory_stats():
    """The host memory libtkc holds right now, over all contexts and caches: (blocks, bytes)."""
    blocks, nbytes = ctypes.c_size_t(), ctypes.c_size_t()
    lib.tkc_memory_stats(ctypes.byref(blocks), ctypes.byref(nbytes))
    return blocks.value, nbytes.value


def devices():
    """The devices that can run here, of CPU, LLVM, CUDA, WEBGPU, INTERP."""
    return [d for d in DEVICES if device_available(d)]


class Context:
    """A tkc_ctx on one device ("CPU", "LLVM", "CUDA", "WEBGPU", "INTERP"; None = $TKC_DEVICE or the
    best one here). Tensors keep their Context alive; close() (or leaving a `with` block) frees the
    ctx and every tensor of it at once, after which those tensors raise TkcError when used."""

    def __init__(self, device=None):
        self._ptr = None  # first, so that __del__ of a failed __init__ has nothing to do
        self._owners = weakref.WeakSet()  # optimizers and jits holding C objects to free before the ctx
        self._scopes = []  # one _Scope per open scope: the Python tensors it frees
        self._progress = None
        self._ptr = check_ptr(lib.tkc_ctx_new(device.encode() if device else None))

    @property
    def device(self):
        return lib.tkc_ctx_device(self._live()).decode()

    @property
    def closed(self):
        return not self._ptr

    def _live(self):
        if not self._ptr:
            raise make_error("EINVAL", "the context is closed")
        return self._ptr

    def close(self):
        """Frees the ctx and all its tensors (idempotent)."""
        if self._ptr:
            for o in list(getattr(self, "_owners", ())):
                o.close()
            lib.tkc_ctx_free(self._ptr)
            self._ptr = None

    def __del__(self):
        try:
            self.close()
        except Exception:  # interpreter shutdown: the library may be gone already
            pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __repr__(self):
        return "<tkc.Context %s>" % (self.device if self._ptr else "closed")

    # ---------------------------------------------------------------- creation
    def tensor(self, data, dtype=None):
        """A tensor holding a copy of data: an ndarray (its dtype unless dtype is given), any object
        with __dlpack__, a number or nested lists (bool / int32 / float32 unless dtype is given)."""
        from ._tensor import Tensor
        if isinstance(data, Tensor):
            return data.cast(dtype) if dtype is not None else data
        if not isinstance(data, np.ndarray) and hasattr(data, "__dlpack__"):
            from .dlpack import from_dlpack
            t = from_dlpack(data, ctx=self)
            return t if dtype is None else t.cast(dtype)
        if dtype is None and not isinstance(data, (np.ndarray, np.generic)):
            arr = np.asarray(data)
            kind = {"b": dtypes.bool_, "i": dtypes.default_int, "u": dtypes.default_int, "f": dtypes.default_float}
            if arr.dtype.kind not in kind:
                raise TypeError("cannot make a tensor of %r" % (arr.dtype,))
            dtype = kind[arr.dtype.kind]
        return Tensor.from_numpy(data, ctx=self, dtype=dtype)

    def _shape_call(self, fn, shape, dtype, *args):
        from ._tensor import Tensor
        shape = _shape_arg(shape)
        return Tensor._wrap(self, fn(self._live(), dtypes.to_dtype(dtype).code, len(shape), int64s(shape), *args))

    def zeros(self, *shape, dtype=dtypes.float32):
        """A realized tensor of zeros."""
        return self._shape_call(lib.tkc_tensor_new, shape, dtype, None)

    def full(self, shape, value, dtype=None):
        """A lazy constant tensor (dtype from value as a Python scalar when None)."""
        dt = dtypes.scalar_dtype(value) if dtype is None else dtype
        return self._shape_call(lib.tkc_full, shape, dt, float(value))

    def ones(self, *shape, dtype=dtypes.float32):
        return self.full(_shape_arg(shape), 1, dtype)

    def rand(self, *shape, seed=0, dtype=dtypes.float32):
        """Uniform [0, 1) from a counter-based generator (the same seed gives the same values)."""
        return self._shape_call(lib.tkc_rand, shape, dtype, seed)

    def manual_seed(self, seed):
        """Seeds the context's generator (randn, uniform, kaiming_uniform, glorot_uniform, dropout)."""
        check(lib.tkc_manual_seed(self._live(), int(seed)))

    def randn(self, *shape, dtype=dtypes.float32):
        """Standard normal values from the context's generator (on the device: new values at each jit replay)."""
        return self._shape_call(lib.tkc_randn, shape, dtype)

    def uniform(self, *shape, low=0.0, high=1.0, dtype=dtypes.float32):
        """Uniform values in [low, high) from the context's generator."""
        return self._shape_call(lib.tkc_rand_uniform, shape, dtype, float(low), float(high))

    def kaiming_uniform(self, *shape, a=0.01, dtype=dtypes.float32):
        """As tinygrad's Tensor.kaiming_uniform (fan_in = prod(shape[1:]))."""
        return self._shape_call(lib.tkc_kaiming_uniform, shape, dtype, float(a))

    def glorot_uniform(self, *shape, dtype=dtypes.float32):
        """As tinygrad's Tensor.glorot_uniform."""
        return self._shape_call(lib.tkc_glorot_uniform, shape, dtype)

    def scalar(self, value, dtype=None):
        """A 0-d tensor (exact for every integer of an integer dtype)."""
        from ._tensor import Tensor
        dt = dtypes.scalar_dtype(value) if dtype is None else dtypes.to_dtype(dtype)
        if dt.is_int:
            value = dtypes.wrap_int(value, dt)
            if abs(value) > 2 ** 53:  # a double cannot hold it: go through memory
                return Tensor.from_numpy(np.array(value, dtype=dt.np), ctx=self)
        return Tensor._wrap(self, lib.tkc_scalar(self._live(), dt.code, float(value)))

    def arange(self, start, stop=None, step=1, dtype=None):
        """[start, stop) by step, as numpy.arange (int32 for int arguments, else float32)."""
        from ._tensor import Tensor
        if stop is None:
            start, stop = 0, start
        if dtype is None:
            dtype = dtypes.default_int if all(isinstance(v, int) for v in (start, stop, step)) else dtypes.default_float
        return Tensor._wrap(self, lib.tkc_arange(self._live(), dtypes.to_dtype(dtype).code, float(start), float(stop), float(step)))

    # ---------------------------------------------------------------- variables
    def dim_var(self, name, min, max):
        """A variable of this context in [min, max]: its token (an int) stands for it. Kernels read it
        as a parameter, so one compiled kernel serves every value bound with bind()."""
        tok = lib.tkc_dim_var(self._live(), name.encode(), int(min), int(max))
        if tok == 0:
            check(lib.tkc_last_status())
        return tok

    def bind(self, var, value):
        """Sets variable var (a dim_var token) to value for the next realizes."""
        check(lib.tkc_dim_bind(self._live(), int(var), int(value)))

    def dim_value(self, dim):
        """The value bound to a variable token (a plain dim is returned as it is)."""
        v = lib.tkc_dim_value(self._live(), int(dim))
        if v < 0:
            check(lib.tkc_last_status())
        return v

    def dim_scalar(self, var):
        """The variable as a 0-d int32 tensor: its bound value at each realize."""
        from ._tensor import Tensor
        return Tensor._wrap(self, lib.tkc_dim_scalar(self._live(), int(var)))

    # ---------------------------------------------------------------- scopes, stats, tuning
    @contextlib.contextmanager
    def scope(self):
        """Frees the tensors made inside the block when it ends, but those passed to Tensor.keep()."""
        check(lib.tkc_scope_begin(self._live()))
        self._scopes.append(_Scope())
        try:
            yield self
        finally:
            for t in self._scopes.pop().tensors():
                t._h = None  # the C handle is freed by tkc_scope_end
            if self._ptr:
                check(lib.tkc_scope_end(self._ptr))

    def _own(self, obj):
        """obj.close() frees a C object of this ctx (an optimizer, a jit): close() calls it first."""
        self._owners.add(obj)

    def _register(self, t):
        if self._scopes:
            self._scopes[-1].add(t)

    def _keep(self, t):
        if not self._scopes or not self._scopes[-1].has(t):
            raise make_error("EINVAL", "keep: the tensor belongs to no open scope")
        check_ptr(lib.tkc_keep(t._p))
        self._scopes[-1].discard(t)
        if len(self._scopes) > 1:
            self._scopes[-2].add(t)

    def stats(self):
        """KernelStats(kernels, kernel_s, kernels_built, build_s) of this ctx's realizes so far."""
        out = Stats()
        check(lib.tkc_ctx_stats(self._live(), out))
        return KernelStats(out.kernels, out.kernel_s, out.kernels_built, out.build_s)

    def set_progress(self, fn):
        """Calls fn(ProgressInfo) for each kernel a realize builds; None turns it off."""
        def trampoline(info, user):
            c = info.contents
            fn(ProgressInfo(c.stage.decode(), c.kernel.decode(), c.done, c.total, c.seconds))
        cb = PROGRESS_FN(trampoline) if fn else PROGRESS_FN()
        check(lib.tkc_ctx_set_progress(self._live(), cb, None))
        self._progress = cb  # the C side holds the pointer: keep the callback alive

    def set_beam(self, width):
        """Beam search width for the kernels this ctx builds (0 off, -1 = $TKC_BEAM)."""
        check(lib.tkc_ctx_set_beam(self._live(), int(width)))


class _Scope(dict):
    """id -> weakref of the Python tensors made in one scope (not a WeakSet, which compares with ==:
    elementwise for tensors)."""

    def add(self, t):
        def gone(ref, key=id(t)):
            if self.get(key) is ref:
                del self[key]
        self[id(t)] = weakref.ref(t, gone)

    def has(self, t):
        ref = self.get(id(t))
        return ref is not None and ref() is t

    def discard(self, t):
        if self.has(t):
            del self[id(t)]

    def tensors(self):
        return [t for t in (ref() for ref in list(self.values())) if t is not None]


def _shape_arg(shape):
    """(2, 3), [(2, 3)] or [[2, 3]] -> [2, 3]"""
    if len(shape) == 1 and isinstance(shape[0], (list, tuple)):
        shape = shape[0]
    return [int(n) for n in shape]


def opt_code(op):
    """A kernel opt's code from its name ("UPCAST") or number."""
    return OPT_NAMES.index(op.upper()) if isinstance(op, str) else int(op)


_default = None


def default_context():
    """The Context used where none is given (created on first use: $TKC_DEVICE or the best device)."""
    global _default
    if _default is None or _default.closed:
        _default = Context()
    return _default
