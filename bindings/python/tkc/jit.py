"""Capture and replay (tkc_jit, as tinygrad's TinyJit): the first call runs fn as usual and records
every kernel it launches; later calls replay those kernels on the new inputs and the variables'
current values (Context.bind), without building graphs or compiling.

    step = tkc.Jit(ctx, lambda x: (x @ w).relu(), nout=1)
    y = step(x)            # captures
    y = step(x2)           # replays

fn gets the inputs as tensors it may use only during the call, and returns nout tensors (one, or a
tuple); those are handed over to the jit (fn must not use them afterwards). Each call returns new
tensors viewing the jit's output buffers: the next call overwrites their values. Inputs must keep
the dtype, shape and layout they had at the capture (TkcError otherwise)."""
import ctypes

from ._lib import C, T, check, lib
from ._tensor import Tensor
from .errors import make_error

_JIT_FN = ctypes.CFUNCTYPE(ctypes.c_int, C, ctypes.POINTER(T), ctypes.c_int, ctypes.POINTER(T), ctypes.c_int, ctypes.c_void_p)
_ERUNTIME = 8


def _borrowed(ctx, ptr):
    t = object.__new__(Tensor)
    t._ctx, t._h, t._shape, t._dt = ctx, ptr, None, None
    return t


class Jit:
    def __init__(self, ctx, fn, nout=1):
        self._ctx, self._fn, self._nout, self._error = ctx, fn, int(nout), None

        def trampoline(cptr, ins, nin, outs, nout, user):
            args = [_borrowed(ctx, ins[i]) for i in range(nin)]
            try:
                res = fn(*args)
                res = (res,) if isinstance(res, Tensor) else tuple(res)
                if len(res) != nout:
                    raise make_error("EINVAL", "Jit: the function returned %d tensors, nout is %d" % (len(res), nout))
                for i, r in enumerate(res):
                    outs[i] = r._p
                for r in res:
                    r._h = None  # the C side owns these handles now
                return 0
            except Exception as e:  # noqa: BLE001 (reported from __call__)
                self._error = e
                return _ERUNTIME
            finally:
                for a in args:
                    a._h = None  # borrowed: never freed from Python

        self._cb = _JIT_FN(trampoline)  # the C side holds the pointer: keep it alive
        self._h = lib.tkc_jit_new(ctx._live(), self._cb, None)
        if not self._h:
            check(lib.tkc_last_status())
        ctx._own(self)  # freed before the ctx, should the ctx close first

    def __call__(self, *inputs):
        if not self._h:
            raise make_error("EINVAL", "Jit: closed")
        ins = (T * max(1, len(inputs)))(*[t._p for t in inputs])
        outs = (T * max(1, self._nout))()
        st = lib.tkc_jit_run(self._h, ins, len(inputs), outs, self._nout)
        if self._error is not None:
            e, self._error = self._error, None
            raise e
        check(st)
        res = tuple(Tensor._wrap(self._ctx, outs[i]) for i in range(self._nout))
        return res[0] if self._nout == 1 else res

    @property
    def kernels(self):
        """Kernel launches per call (0 before the capture)."""
        return lib.tkc_jit_kernels(self._h) if self._h else 0

    @property
    def buffers(self):
        """Planned intermediate buffers (0 before the capture)."""
        return lib.tkc_jit_buffers(self._h) if self._h else 0

    def close(self):
        if self._h and self._ctx._ptr:
            lib.tkc_jit_free(self._h)
        self._h = None

    def __del__(self):
        try:
            self.close()
        except Exception:  # interpreter shutdown
            pass
