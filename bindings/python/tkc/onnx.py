"""tkc.onnx: run an ONNX model (include/tkc/onnx.h) on numpy arrays.

    model = tkc.onnx.load("model.onnx", device="CPU")
    y, = model(x)                      # inputs in the graph's order (initializers excluded)
                                       # (captured with tkc.Jit per input shape: see __call__)
    out = model(input_ids=ids)         # or by name; numpy arrays in, numpy arrays out
    model.input_names, model.input_shapes, model.output_names
    ys = model.run(x)                  # tkc Tensors (lazy) instead of arrays

A dim the file names ("batch") takes the size of the array given for it. Errors (a malformed file,
an op tkc cannot express, an input of the wrong dtype or rank) raise TkcError with the C message."""
import ctypes

import numpy as np

from . import dtypes
from ._lib import check, check_ptr, lib
from ._owned import Owned
from .context import Context, default_context


class Model(Owned):
    """A loaded ONNX model; callable. close() frees it (the tensors it returned stay)."""

    def __init__(self, ptr, ctx, jit=None):
        self._m, self._ctx = check_ptr(ptr), ctx
        self._jits = {}  # (shape, dtype) of every input -> its captured tkc.Jit
        self._capture = jit  # None: not known yet whether the graph depends on input values
        ctx._own(self)  # freed before its ctx (which frees the initializers), also at exit
        self.input_names = [lib.tkc_onnx_input_name(self._m, i).decode() for i in range(lib.tkc_onnx_num_inputs(self._m))]
        self.output_names = [lib.tkc_onnx_output_name(self._m, i).decode() for i in range(lib.tkc_onnx_num_outputs(self._m))]
        self.input_dtypes, self.input_shapes = [], []
        for i in range(len(self.input_names)):
            dt, nd, shape = ctypes.c_int(), ctypes.c_int(), (ctypes.c_int64 * 16)()
            check(lib.tkc_onnx_input_shape(self._m, i, ctypes.byref(dt), ctypes.byref(nd), shape, 16))
            self.input_dtypes.append(dtypes.BY_CODE.get(dt.value))
            # a dim the file names ("batch") or leaves open: None (any size); no shape at all: None
            self.input_shapes.append(None if nd.value < 0 else tuple(
                None if lib.tkc_dim_is_var(d) or d < 0 else d for d in shape[:nd.value]))

    @property
    def context(self):
        return self._ctx

    def _inputs(self, args, kwargs):
        if args and kwargs:
            raise TypeError("give the inputs in order or by name, not both")
        if kwargs:
            missing = [n for n in self.input_names if n not in kwargs]
            extra = [n for n in kwargs if n not in self.input_names]
            if missing or extra:
                raise TypeError("inputs: missing %s, unknown %s (the model takes %s)" % (missing, extra, self.input_names))
            args = [kwargs[n] for n in self.input_names]
        if len(args) != len(self.input_names):
            raise TypeError("the model takes %d inputs (%s), got %d" % (len(self.input_names), ", ".join(self.input_names), len(args)))
        from ._tensor import Tensor
        out = []
        for a, dt in zip(args, self.input_dtypes):
            if isinstance(a, Tensor):
                out.append(a)
            else:  # arrays in the declared dtype (a Python list of floats for an int64 input would not be)
                out.append(Tensor.from_numpy(np.asarray(a), ctx=self._ctx, dtype=dt if dt is not None else None))
        return out

    def run(self, *args, **kwargs):
        """The outputs as lazy tkc Tensors (a list, in the graph's order)."""
        from ._tensor import Tensor
        ins = self._inputs(args, kwargs)
        n = len(self.output_names)
        arr_in = (ctypes.c_void_p * max(len(ins), 1))(*[t._p for t in ins])
        arr_out = (ctypes.c_void_p * max(n, 1))()
        check(lib.tkc_onnx_run(self._live(), len(ins), arr_in, n, arr_out))
        return [Tensor._wrap(self._ctx, arr_out[i]) for i in range(n)]

    def __call__(self, *args, **kwargs):
        """The outputs as numpy arrays (a list, in the graph's order). The first call of each input
        shape runs the graph; from then on the call is captured (tkc.Jit) and replayed: no graph, no
        schedule, only the kernels. A model whose graph depends on its input values (NonZero, a shape
        computed from an input: tkc_onnx_reads_values) is never captured; load(..., jit=False) turns
        capturing off."""
        ins = self._inputs(args, kwargs)
        if self._capture is not False:
            key = tuple((tuple(t.shape), t.dtype.name) for t in ins)
            jit = self._jits.get(key)
            if jit is not None:
                outs = jit(*ins)
                outs = (outs,) if len(self.output_names) == 1 else outs
                return [t.numpy() for t in outs]
        outs = self.run(*ins)
        from .autograd import realize_all
        realize_all(outs)  # one schedule for every output
        res = [t.numpy() for t in outs]
        if self._capture is None:
            self._capture = lib.tkc_onnx_reads_values(self._m) == 0
        if self._capture and len(self._jits) < 16:
            from .jit import Jit
            self._jits[key] = Jit(self._ctx, lambda *xs: tuple(self.run(*xs)), nout=len(self.output_names))
        return res

    def _live(self):
        if not self._m:
            raise ValueError("the model is closed")
        return self._m

    def close(self):
        for j in self._jits.values():
            j.close()
        self._jits = {}
        if self._m and not self._ctx.closed:
            lib.tkc_onnx_free(self._m)
            self._m = None

    def __repr__(self):
        return "<tkc.onnx.Model inputs=%s outputs=%s device=%s>" % (self.input_names, self.output_names, self._ctx.device)


def _ctx_for(device, ctx):
    if ctx is not None:
        return ctx
    return Context(device) if device is not None else default_context()


def load(path, device=None, ctx=None, jit=True):
    """Loads a .onnx file (external data from files next to it) on ctx, or a new Context on device,
    or the default context. jit=False: every call builds and schedules the graph (no capture)."""
    c = _ctx_for(device, ctx)
    return Model(lib.tkc_onnx_load(c._live(), str(path).encode()), c, None if jit else False)


def load_bytes(data, device=None, ctx=None, jit=True):
    """Loads a model from its serialized bytes (model.SerializeToString())."""
    c = _ctx_for(device, ctx)
    buf = bytes(data)
    return Model(lib.tkc_onnx_load_bytes(c._live(), buf, len(buf)), c, None if jit else False)
