"""tkc dtypes, their numpy counterparts and the weak typing of Python scalars.

Anywhere a dtype is taken, a DType (tkc.float32), a name ("float32", "bfloat16", or anything
np.dtype() understands: "f4", "int") or a numpy dtype / type (np.float32) is accepted.
bfloat16 has no numpy dtype: its values come out of .numpy() as float32 (exact), and numpy data
given with dtype=bfloat16 is rounded to nearest even from float32.
"""
import numpy as np


class DType:
    """A tkc scalar type: .name, .code (tkc_dtype), .itemsize, .kind ('b', 'i', 'u', 'f'), .np (numpy dtype or None)."""

    __slots__ = ("name", "code", "itemsize", "kind", "np")

    def __init__(self, name, code, itemsize, kind, npdt):
        self.name, self.code, self.itemsize, self.kind = name, code, itemsize, kind
        self.np = np.dtype(npdt) if npdt else None

    @property
    def is_float(self):
        return self.kind == "f"

    @property
    def is_int(self):
        return self.kind in "iu"

    def __repr__(self):
        return "tkc." + self.name

    def __eq__(self, other):
        try:
            return to_dtype(other) is self
        except TypeError:
            return NotImplemented

    def __hash__(self):
        return hash(self.name)


_ALL = [("bool", 1, "b", np.bool_), ("int8", 1, "i", np.int8), ("uint8", 1, "u", np.uint8), ("int16", 2, "i", np.int16),
        ("uint16", 2, "u", np.uint16), ("int32", 4, "i", np.int32), ("uint32", 4, "u", np.uint32), ("int64", 8, "i", np.int64),
        ("uint64", 8, "u", np.uint64), ("float16", 2, "f", np.float16), ("bfloat16", 2, "f", None), ("float32", 4, "f", np.float32),
        ("float64", 8, "f", np.float64)]
DTYPES = tuple(DType(name, code, size, kind, npdt) for code, (name, size, kind, npdt) in enumerate(_ALL))
BY_NAME = {dt.name: dt for dt in DTYPES}
BY_CODE = dict(enumerate(DTYPES))
(bool_, int8, uint8, int16, uint16, int32, uint32, int64, uint64, float16, bfloat16, float32, float64) = DTYPES
default_float, default_int = float32, int32


def to_dtype(x):
    """The DType for x (a DType, a name, a numpy dtype or type); TypeError when there is none."""
    if isinstance(x, DType):
        return x
    if isinstance(x, str) and x in BY_NAME:
        return BY_NAME[x]
    try:
        name = np.dtype(x).name
    except TypeError:
        raise TypeError("not a dtype: %r" % (x,)) from None
    if name not in BY_NAME:
        raise TypeError("tkc has no dtype for numpy's %s" % name)
    return BY_NAME[name]


def weak_dtype(value, other):
    """The dtype a Python scalar takes next to a tensor of dtype other (tinygrad's weak types): a
    bool takes other's, an int other's unless other is bool (then int32), a float other's when it
    is a float (else float32)."""
    if isinstance(value, bool):
        return other
    if isinstance(value, int):
        return other if other is not bool_ else default_int
    if isinstance(value, float):
        return other if other.is_float else default_float
    raise TypeError("not a Python scalar: %r" % (value,))


def scalar_dtype(value):
    """The dtype of a Python scalar on its own: bool, int32 or float32."""
    if isinstance(value, bool):
        return bool_
    return default_int if isinstance(value, int) else default_float


def wrap_int(value, dt):
    """value wrapped into dt's range (as C's conversion to that integer type)."""
    bits = dt.itemsize * 8
    v = int(value) & ((1 << bits) - 1)
    return v - (1 << bits) if dt.kind == "i" and v >= 1 << (bits - 1) else v


def to_storage(arr, dt):
    """arr converted to the numpy array holding dt's bytes (bfloat16: uint16 bits, round to nearest even)."""
    if dt is not bfloat16:
        return np.asarray(arr, dtype=dt.np)
    bits = np.asarray(arr, dtype=np.float32).view(np.uint32)
    rounded = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype(np.uint16)
    return np.where(np.isnan(bits.view(np.float32)), np.uint16(0x7FC0), rounded)


def from_storage(arr, dt):
    """The numpy view of dt's bytes in arr as values (bfloat16 becomes float32)."""
    return (arr.astype(np.uint32) << 16).view(np.float32) if dt is bfloat16 else arr


def storage_np(dt):
    """The numpy dtype holding dt's bytes (uint16 for bfloat16)."""
    return np.dtype(np.uint16) if dt is bfloat16 else dt.np
