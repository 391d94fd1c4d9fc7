"""Tensor: a lazy tkc_tensor with numpy-style operators, conversions and indexing.

Python scalars are weak (tinygrad): they take the tensor's dtype where it fits (int tensor * 2 stays
int, float16 + 1.0 stays float16) and the default dtype otherwise (int * 2.5 is float32, bool + 1 is
int32). // and % follow Python (floor) semantics; idiv()/mod() are C's truncating ones.
"""
import ctypes

import numpy as np

from . import dlpack, dtypes, indexing
from ._lib import Opt, check, check_ptr, int64s, ints, lib
from .context import default_context, opt_code
from .errors import make_error
from .nn import NNOps


def _seq(args):
    """f(2, 3), f((2, 3)) and f([2, 3]) -> [2, 3]"""
    if len(args) == 1 and isinstance(args[0], (list, tuple)):
        args = args[0]
    return [int(a) for a in args]


def _axes(axis):
    """None -> [] (all axes), an int -> [axis], a sequence -> list"""
    return [] if axis is None else [int(axis)] if isinstance(axis, (int, np.integer)) else [int(a) for a in axis]


def _unary(name):
    fn = getattr(lib, "tkc_" + name)

    def method(self):
        return self._new(fn(self._p))
    method.__name__, method.__doc__ = name, "Elementwise tkc_%s." % name
    return method


def _binary(name, reverse=False):
    fn = getattr(lib, "tkc_" + name)

    def method(self, other):
        o = self._operand(other)
        a, b = (o, self) if reverse else (self, o)
        return self._new(fn(a._p, b._p))
    method.__name__, method.__doc__ = name, "tkc_%s (broadcasting; Python scalars are weak)." % name
    return method


def _compare(name):
    op = _binary(name)

    def method(self, other):
        try:
            return op(self, other)
        except TypeError:  # not something a tensor compares with
            return NotImplemented
    return method


def _reduce(name):
    fn = getattr(lib, "tkc_" + name)

    def method(self, axis=None, keepdim=False):
        return self._reduce_with(fn, axis, keepdim)
    method.__name__, method.__doc__ = name, "tkc_%s over axis (None = all; an int or a tuple)." % name
    return method


def _scan(name):
    fn = getattr(lib, "tkc_" + name)

    def method(self, axis=None):
        return self._along(fn, axis)
    method.__name__, method.__doc__ = name, "Inclusive tkc_%s along axis (None: of the flattened tensor, as numpy)." % name
    return method


class Tensor(NNOps):
    """A lazy tensor of a Context. Operators build the graph; numpy(), item(), realize() run it."""

    __slots__ = ("_ctx", "_h", "_shape", "_dt", "__weakref__")
    __array_ufunc__ = None  # numpy defers to our reflected operators (ndarray + Tensor -> Tensor)
    __hash__ = object.__hash__  # identity: == is elementwise

    def __init__(self, data, dtype=None, ctx=None):
        """A tensor holding a copy of data (see Context.tensor); ctx None = default_context()."""
        t = (ctx or default_context()).tensor(data, dtype)
        self._ctx, self._h, self._shape, self._dt = t._ctx, t._h, None, None
        t._h = None
        self._ctx._register(self)

    @staticmethod
    def _wrap(ctx, ptr):
        t = object.__new__(Tensor)
        t._ctx, t._h, t._shape, t._dt = ctx, check_ptr(ptr), None, None
        ctx._register(t)
        return t

    def _new(self, ptr):
        return Tensor._wrap(self._ctx, ptr)

    @property
    def _p(self):
        """The live C handle (TkcError for a freed tensor or a closed context)."""
        if not self._ctx._ptr:
            raise make_error("EINVAL", "the tensor's context is closed")
        if self._h is None:
            raise make_error("EINVAL", "use of a freed tensor (its scope ended)")
        return self._h

    def __del__(self):
        try:
            if self._h and self._ctx._ptr:
                lib.tkc_tensor_free(self._h)
            self._h = None
        except Exception:  # a half-built object or interpreter shutdown
            pass

    def _operand(self, x):
        """x as a tensor of this ctx: Python scalars are weak, numpy data keeps its dtype."""
        if isinstance(x, Tensor):
            return x
        if isinstance(x, (bool, int, float)):
            return self._ctx.scalar(x, dtypes.weak_dtype(x, self.dtype))
        if isinstance(x, (np.ndarray, np.generic, list, tuple)) or hasattr(x, "__dlpack__"):
            return self._ctx.tensor(x)
        raise TypeError("unsupported operand for a tkc Tensor: %r" % type(x).__name__)

    def _index_operand(self, x):
        """x as an integer index tensor (lists / arrays become int32 where they fit)."""
        if isinstance(x, Tensor):
            return x
        return self._ctx.tensor(indexing.index_array(x))

    # ---------------------------------------------------------------- properties
    @property
    def ctx(self):
        return self._ctx

    @property
    def device(self):
        return self._ctx.device

    @property
    def shape(self):
        if self._shape is None:
            p = self._p
            self._shape = tuple(lib.tkc_dim(p, i) for i in range(lib.tkc_ndim(p)))
        return self._shape

    @property
    def dtype(self):
        """A tkc DType (compares equal to numpy dtypes and names: t.dtype == np.float32)."""
        if self._dt is None:
            self._dt = dtypes.BY_CODE[lib.tkc_dtype_of(self._p)]
        return self._dt

    @property
    def ndim(self):
        return len(self.shape)

    @property
    def size(self):
        """The number of elements (numpy's .size)."""
        return int(np.prod(self.shape, dtype=np.int64))

    def numel(self):
        return lib.tkc_numel(self._p)

    def __len__(self):
        if not self.shape:
            raise TypeError("len() of a 0-d tensor")
        return self.shape[0]

    def __iter__(self):
        for i in range(len(self)):
            yield self[i]

    def __repr__(self):
        if self._h is None or not self._ctx._ptr:
            return "<tkc.Tensor (freed)>"
        return "<tkc.Tensor shape=%s dtype=%s device=%s>" % (self.shape, self.dtype.name, self.device)

    # ---------------------------------------------------------------- numpy, python values, dlpack
    @classmethod
    def from_numpy(cls, arr, ctx=None, dtype=None):
        """A tensor holding one copy of arr (any layout; dtype converts first, bfloat16 rounds to nearest even)."""
        arr = np.asarray(arr)
        dt = dtypes.to_dtype(arr.dtype if dtype is None else dtype)
        return cls._from_storage(ctx or default_context(), dtypes.to_storage(arr, dt), dt)

    @staticmethod
    def _from_storage(ctx, data, dt):
        """A tensor of dt holding one copy of data (an array of dt's storage dtype, any layout)."""
        if not data.dtype.isnative:
            data = data.astype(data.dtype.newbyteorder("="))
        if not data.flags.c_contiguous:
            data = np.ascontiguousarray(data)
        ptr = lib.tkc_tensor_new(ctx._live(), dt.code, data.ndim, int64s(data.shape), data.ctypes.data if data.size else None)
        return Tensor._wrap(ctx, ptr)

    def numpy(self):
        """Realizes the tensor and returns a new ndarray (bfloat16 comes out as float32, exactly)."""
        shape = tuple(self._ctx.dim_value(d) if lib.tkc_dim_is_var(int(d)) else d for d in self.shape)  # variables: bound values
        out = np.empty(shape, dtypes.storage_np(self.dtype))
        if out.size:
            check(lib.tkc_copy_out(self._p, out.ctypes.data, out.nbytes))
        return dtypes.from_storage(out, self.dtype)

    def __array__(self, dtype=None, copy=None):
        if copy is False:
            raise ValueError("a tkc tensor lives in its context's memory: np.asarray(t, copy=False) cannot avoid a copy")
        arr = self.numpy()
        return arr if dtype is None else arr.astype(dtype, copy=False)

    def tolist(self):
        return self.numpy().tolist()

    def item(self):
        """The value of a one-element tensor as a Python number (ValueError otherwise, as numpy)."""
        if self.size != 1:
            raise ValueError("can only convert a tensor of size 1 to a Python scalar (this one has %d)" % self.size)
        buf = np.empty((), dtypes.storage_np(self.dtype))
        check(lib.tkc_item_bytes(self._p, buf.ctypes.data, buf.nbytes))
        return dtypes.from_storage(buf, self.dtype).item()

    def __float__(self):
        out = ctypes.c_double()
        check(lib.tkc_item(self._p, ctypes.byref(out)))
        return out.value

    def __int__(self):
        return int(self.item())

    def __bool__(self):
        if self.size != 1:
            raise ValueError("the truth value of a tensor with %s element is ambiguous: use .any() or .all()"
                             % ("more than one" if self.size else "no"))
        return bool(self.item())

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        """A DLPack capsule of a host copy of the tensor (it always copies: copy=False is a BufferError)."""
        return dlpack.to_dlpack(self, dl_device=dl_device, copy=copy)

    def __dlpack_device__(self):
        return dlpack.HOST_DEVICE

    def copy_in(self, data):
        """Writes new data (same numel; converted to the dtype) into a realized tensor that owns its buffer."""
        arr = np.ascontiguousarray(dtypes.to_storage(data, self.dtype))
        if arr.size != self.size:
            raise make_error("ESHAPE", "copy_in: %d elements for a tensor of %d" % (arr.size, self.size))
        check(lib.tkc_copy_in(self._p, arr.ctypes.data, arr.nbytes))
        return self

    # ---------------------------------------------------------------- operators
    __add__, __radd__ = _binary("add"), _binary("add", True)
    __sub__, __rsub__ = _binary("sub"), _binary("sub", True)
    __mul__, __rmul__ = _binary("mul"), _binary("mul", True)
    __truediv__, __rtruediv__ = _binary("div"), _binary("div", True)
    __pow__, __rpow__ = _binary("pow"), _binary("pow", True)
    __matmul__, __rmatmul__ = _binary("matmul"), _binary("matmul", True)
    __and__, __rand__ = _binary("and"), _binary("and", True)
    __or__, __ror__ = _binary("or"), _binary("or", True)
    __xor__, __rxor__ = _binary("xor"), _binary("xor", True)
    __lshift__, __rlshift__ = _binary("shl"), _binary("shl", True)
    __rshift__, __rrshift__ = _binary("shr"), _binary("shr", True)
    __lt__, __le__, __gt__, __ge__ = _compare("lt"), _compare("le"), _compare("gt"), _compare("ge")
    __eq__, __ne__ = _compare("eq"), _compare("ne")
    __neg__, __abs__ = _unary("neg"), _unary("abs")

    def __invert__(self):
        """Logical not for bool, bitwise not for ints."""
        return -self if self.dtype is dtypes.bool_ else self ^ -1

    def __floordiv__(self, other):
        return self.__divmod__(other)[0]

    def __rfloordiv__(self, other):
        return self._operand(other).__divmod__(self)[0]

    def __mod__(self, other):
        return self.__divmod__(other)[1]

    def __rmod__(self, other):
        return self._operand(other).__divmod__(self)[1]

    def __divmod__(self, other):
        """(a // b, a % b) with Python's floor semantics (ints: exact; floats: floor(a / b), a - floor(a / b) * b)."""
        b = self._operand(other)
        if not (self.dtype.is_int and b.dtype.is_int):
            q = (self / b).floor()
            return q, self - q * b
        q, r = self.idiv(b), self.mod(b)
        if self.dtype.kind == "u" and b.dtype.kind == "u":
            return q, r
        fix = (r != 0) & ((r < 0) != (b < 0))
        return fix.where(q - 1, q), fix.where(r + b, r)

    def __getitem__(self, key):
        return indexing.getitem(self, key)

    def __setitem__(self, key, value):
        raise TypeError("tkc tensors are immutable: build a new one (where, scatter, cat) or use copy_in()")

    # ---------------------------------------------------------------- elementwise with arguments
    def cast(self, dtype):
        return self._new(lib.tkc_cast(self._p, dtypes.to_dtype(dtype).code))

    astype = cast

    def bitcast(self, dtype):
        return self._new(lib.tkc_bitcast(self._p, dtypes.to_dtype(dtype).code))

    def where(self, a, b):
        """self (as bool) ? a : b; Python scalars take the other branch's dtype."""
        if isinstance(a, Tensor):
            b = a._operand(b)
        elif isinstance(b, Tensor):
            a = b._operand(a)
        else:
            a, b = self._ctx.tensor(a), self._ctx.tensor(b)
        return self._new(lib.tkc_where(self._p, a._p, b._p))

    def lerp(self, end, weight):
        """self + weight * (end - self) (torch.lerp)."""
        end = self._operand(end)
        weight = self._operand(weight)
        return self._new(lib.tkc_lerp(self._p, end._p, weight._p))

    def clamp(self, lo=None, hi=None):
        return self._new(lib.tkc_clamp(self._p, -np.inf if lo is None else float(lo), np.inf if hi is None else float(hi)))

    clip = clamp

    def gelu(self, approximate="none"):
        """approximate "none" (erf) or "tanh"."""
        return self._new(lib.tkc_gelu(self._p, int(approximate == "tanh")))

    def leaky_relu(self, slope=0.01):
        return self._new(lib.tkc_leaky_relu(self._p, float(slope)))

    def elu(self, alpha=1.0):
        return self._new(lib.tkc_elu(self._p, float(alpha)))

    def softplus(self, beta=1.0):
        return self._new(lib.tkc_softplus(self._p, float(beta)))

    # ---------------------------------------------------------------- reductions
    def _reduce_with(self, fn, axis, keepdim, *extra):
        """fn(t, naxes, axes, keepdim, *extra) with axis None (all), an int or a sequence."""
        axes = _axes(axis)
        return self._new(fn(self._p, len(axes), ints(axes), int(keepdim), *extra))

    def _along(self, fn, axis, *extra):
        """fn(t, axis, *extra); axis None works on the flattened tensor (numpy's convention)."""
        x, axis = (self.reshape(-1), 0) if axis is None else (self, axis)
        return x._new(fn(x._p, int(axis), *extra))

    def sum(self, axis=None, keepdim=False, dtype=None):
        """tkc_sum, or tkc_sum_acc accumulating (and returning) dtype when given."""
        if dtype is None:
            return self._reduce_with(lib.tkc_sum, axis, keepdim)
        return self._reduce_with(lib.tkc_sum_acc, axis, keepdim, dtypes.to_dtype(dtype).code)

    def var(self, axis=None, keepdim=False, correction=1):
        """Variance with Bessel's correction by default (torch, tinygrad)."""
        return self._reduce_with(lib.tkc_var, axis, keepdim, float(correction))

    def std(self, axis=None, keepdim=False, correction=1):
        return self._reduce_with(lib.tkc_std, axis, keepdim, float(correction))

    def argmax(self, axis=None, keepdim=False):
        """int32 index of the first largest element along axis (None: of the flattened tensor)."""
        return self._along(lib.tkc_argmax, axis, int(keepdim))

    def argmin(self, axis=None, keepdim=False):
        return self._along(lib.tkc_argmin, axis, int(keepdim))

    # ---------------------------------------------------------------- movement (views)
    def reshape(self, *shape):
        shape = _seq(shape)
        return self._new(lib.tkc_reshape(self._p, len(shape), int64s(shape)))

    def permute(self, *order):
        order = _seq(order)
        if len(order) != self.ndim:
            raise make_error("ESHAPE", "permute: %d axes for a %d-d tensor" % (len(order), self.ndim))
        return self._new(lib.tkc_permute(self._p, ints(order)))

    def transpose(self, ax0=-2, ax1=-1):
        return self._new(lib.tkc_transpose(self._p, int(ax0), int(ax1)))

    @property
    def T(self):
        """The axes reversed (numpy's .T)."""
        return self.permute(list(range(self.ndim))[::-1])

    def expand(self, *shape):
        shape = _seq(shape)
        return self._new(lib.tkc_expand(self._p, len(shape), int64s(shape)))

    def pad(self, pads, value=0.0):
        """pads: one (before, after) pair per axis."""
        flat = [int(v) for pair in pads for v in pair]
        return self._new(lib.tkc_pad(self._p, int64s(flat), float(value)))

    def shrink(self, ranges):
        """ranges: one (start, end) pair per axis."""
        flat = [int(v) for pair in ranges for v in pair]
        return self._new(lib.tkc_shrink(self._p, int64s(flat)))

    def flip(self, *axes):
        """axes to reverse (none given: all)."""
        axes = _seq(axes) or list(range(self.ndim))
        return self._new(lib.tkc_flip(self._p, len(axes), ints(axes)))

    def squeeze(self, axis=None):
        axes = _axes(axis)
        return self._new(lib.tkc_squeeze(self._p, len(axes), ints(axes)))

    def unsqueeze(self, axis):
        return self._new(lib.tkc_unsqueeze(self._p, int(axis)))

    def flatten(self, start=0, end=-1):
        return self._new(lib.tkc_flatten(self._p, int(start), int(end)))

    def repeat(self, *repeats):
        """torch.repeat / numpy.tile."""
        repeats = _seq(repeats)
        return self._new(lib.tkc_repeat(self._p, len(repeats), int64s(repeats)))

    def tril(self, k=0):
        return self._new(lib.tkc_tril(self._p, int(k)))

    def triu(self, k=0):
        return self._new(lib.tkc_triu(self._p, int(k)))

    def split(self, sizes, axis=0):
        """Views along axis: sizes a list of piece sizes, or an int (pieces of that size, the last smaller)."""
        n = self.shape[axis]
        if isinstance(sizes, (int, np.integer)):
            sizes = [min(int(sizes), n - i) for i in range(0, n, int(sizes))] or [0]
        out = (ctypes.c_void_p * max(len(sizes), 1))()
        check(lib.tkc_split(self._p, int(axis), len(sizes), int64s(sizes), out))
        return [self._new(h) for h in out[:len(sizes)]]

    def chunk(self, chunks, axis=0):
        """torch.chunk: up to chunks views of ceil(dim / chunks) along axis."""
        out = (ctypes.c_void_p * max(int(chunks), 1))()
        n = lib.tkc_chunk(self._p, int(axis), int(chunks), out)
        if n < 0:
            check(-1)
        return [self._new(h) for h in out[:n]]

    def cat(self, *others, axis=0):
        return cat([self, *others], axis)

    def stack(self, *others, axis=0):
        return stack([self, *others], axis)

    # ---------------------------------------------------------------- indexing ops
    def gather(self, axis, index):
        index = self._index_operand(index)  # a local: a temporary would be freed before the call
        return self._new(lib.tkc_gather(self._p, int(axis), index._p))

    def index_select(self, axis, index):
        """numpy.take along axis (index of any shape)."""
        index = self._index_operand(index)
        return self._new(lib.tkc_index_select(self._p, int(axis), index._p))

    def scatter(self, axis, index, src):
        index, src = self._index_operand(index), self._operand(src)
        return self._new(lib.tkc_scatter(self._p, int(axis), index._p, src._p))

    def scatter_add(self, axis, index, src):
        index, src = self._index_operand(index), self._operand(src)
        return self._new(lib.tkc_scatter_add(self._p, int(axis), index._p, src._p))

    def one_hot(self, num_classes):
        return self._new(lib.tkc_one_hot(self._p, int(num_classes)))

    def sort(self, axis=-1, descending=False):
        """(values, int32 indices), stable."""
        v, i = ctypes.c_void_p(), ctypes.c_void_p()
        check(lib.tkc_sort(self._p, int(axis), int(descending), ctypes.byref(v), ctypes.byref(i)))
        return self._new(v.value), self._new(i.value)

    def topk(self, k, axis=-1, largest=True):
        """(values, int32 indices) of the k largest (or smallest), sorted."""
        v, i = ctypes.c_void_p(), ctypes.c_void_p()
        check(lib.tkc_topk(self._p, int(k), int(axis), int(largest), ctypes.byref(v), ctypes.byref(i)))
        return self._new(v.value), self._new(i.value)

    # ---------------------------------------------------------------- composites (the NN ops are in nn.py)
    def softmax(self, axis=-1):
        return self._new(lib.tkc_softmax(self._p, int(axis)))

    def log_softmax(self, axis=-1):
        return self._new(lib.tkc_log_softmax(self._p, int(axis)))

    def dot(self, other):
        return self @ other

    # ---------------------------------------------------------------- running
    def realize(self, opts=None):
        """Computes the tensor; opts: (op, axis, amount) kernel opts, op a name ("UPCAST") or number."""
        if opts is None:
            check(lib.tkc_realize(self._p))
        else:
            arr = (Opt * max(len(opts), 1))(*[Opt(opt_code(op), int(ax), int(am)) for op, ax, am in opts])
            check(lib.tkc_realize_opts(self._p, arr, len(opts)))
        return self

    def kernel_count(self):
        n = lib.tkc_kernel_count(self._p)
        if n < 0:
            check(-1)
        return n

    def kernels_source(self, renderer="C"):
        """The source of the kernels still to run, for renderer "C", "LLVM", "PTX" or "WGSL"."""
        ptr = check_ptr(lib.tkc_kernels_source(self._p, renderer.encode()))
        try:
            return ctypes.string_at(ptr).decode()
        finally:
            lib.tkc_free(ptr)

    def schedule_dot(self, path):
        """Writes the schedule realizing the tensor would run as a Graphviz dot file (runs nothing)."""
        check(lib.tkc_schedule_dot(self._p, str(path).encode()))

    def kernel_uops_dot(self, kernel_index, path):
        """Writes kernel kernel_index of the schedule, lowered to UOps, as a Graphviz dot file."""
        check(lib.tkc_kernel_uops_dot(self._p, int(kernel_index), str(path).encode()))

    def keep(self):
        """Keeps the tensor alive past the innermost Context.scope()."""
        self._ctx._keep(self)
        return self

    # ---------------------------------------------------------------- gradients (tkc.h "gradients")
    @property
    def requires_grad(self):
        """Whether backward() accumulates a gradient into this tensor (a leaf). Set it before building
        graphs from the tensor: graphs built earlier do not know. Only float tensors have gradients."""
        on = lib.tkc_requires_grad_of(self._p)
        if on < 0:
            check(-1)
        return bool(on)

    @requires_grad.setter
    def requires_grad(self, on):
        check(lib.tkc_requires_grad(self._p, 1 if on else 0))

    def requires_grad_(self, on=True):
        """Sets requires_grad; returns the tensor (torch's in-place spelling)."""
        self.requires_grad = on
        return self

    @property
    def grad(self):
        """The accumulated gradient (a new lazy tensor), or None when there is none: the tensor does not
        require one, no backward() yet, or the loss does not depend on it. After zero_grad(): zeros."""
        has = lib.tkc_has_grad(self._p)
        if has < 0:
            check(-1)
        if not has:
            return None  # tkc_grad would fail with EINVAL: torch's None instead
        return self._new(lib.tkc_grad(self._p))

    @grad.setter
    def grad(self, value):
        if value is not None:
            raise TypeError("Tensor.grad can only be set to None (which zeroes it, as zero_grad())")
        self.zero_grad()

    def zero_grad(self):
        """Fills the accumulated gradient with zeros (on the device: a captured step replays it, and
        backward() adds into the same buffer); returns the tensor."""
        check(lib.tkc_zero_grad(self._p))
        return self

    def backward(self):
        """Adds d self / d leaf into the gradient of every requires-grad leaf self depends on. self must
        have one element; TkcError when it depends on no such leaf."""
        check(lib.tkc_backward(self._p))

    def detach(self):
        """The same values, through which no gradient flows."""
        return self._new(lib.tkc_detach(self._p))

    def assign(self, value):
        """In-place update: the tensor's buffer receives value (a tensor of its shape and dtype, or data
        and scalars, converted) at its next realize; value may read the tensor itself (w.assign(w - lr * g)
        reads the old values). The tensor must own its whole buffer (made from data, or realized), or be
        a view of one through reshapes, shrinks (also at a dim variable's offset), permutes and flips:
        then only its elements are written (cache.shrink(((pos, pos + 1), (0, d))).assign(row)) and every
        handle of the owning tensor sees them. Returns the tensor; requires_grad and the gradient are kept."""
        if not isinstance(value, Tensor):
            value = self._operand(value)
            if value.dtype != self.dtype:
                value = value.cast(self.dtype)
            if value.shape != self.shape:
                value = value.expand(self.shape)
        check(lib.tkc_assign(self._p, value._p))
        return self


_UNARY = ("neg abs recip sqrt exp exp2 log log2 sin cos tanh sigmoid relu contiguous floor ceil round trunc rsqrt square sign erf "
          "silu selu hardsigmoid hardswish mish tan asin acos atan sinh cosh isnan isinf isfinite log1p expm1").split()
# method name -> C op (and, or ... are Python keywords)
_BINARY = {n: n for n in "add sub mul div idiv mod maximum minimum pow lt le gt ge eq ne matmul atan2 dot4".split()}
_BINARY.update(bitwise_and="and", bitwise_or="or", bitwise_xor="xor", lshift="shl", rshift="shr")
for _name in _UNARY:
    setattr(Tensor, _name, _unary(_name))
for _name, _c in _BINARY.items():
    setattr(Tensor, _name, _binary(_c))
    getattr(Tensor, _name).__name__ = _name
_REDUCE = "max min mean prod logsumexp any all".split()
_SCAN = "cumsum cummax cumprod".split()
for _name in _REDUCE:
    setattr(Tensor, _name, _reduce(_name))
for _name in _SCAN:
    setattr(Tensor, _name, _scan(_name))
Tensor.reciprocal = Tensor.recip


def _tensor_list(tensors):
    tensors = list(tensors)
    first = next((t for t in tensors if isinstance(t, Tensor)), None)
    if first is None:
        raise TypeError("cat/stack need at least one Tensor")
    ts = [first._operand(t) for t in tensors]
    return ts, (ctypes.c_void_p * len(ts))(*[t._p for t in ts])


def cat(tensors, axis=0):
    """The tensors joined along axis (one dtype and ctx)."""
    ts, arr = _tensor_list(tensors)
    return ts[0]._new(lib.tkc_cat(len(ts), arr, int(axis)))


def stack(tensors, axis=0):
    """The tensors stacked along a new axis."""
    ts, arr = _tensor_list(tensors)
    return ts[0]._new(lib.tkc_stack(len(ts), arr, int(axis)))
