"""tkc dtypes, their numpy counterparts and the weak typing of Python scalars.

Anywhere a dtype is taken, a DType (tkc.float32), a name ("float32", "bfloat16", or anything
np.dtype() understands: "f4", "int") or a numpy dtype / type (np.float32) is accepted.
bfloat16 has no numpy dtype: its values come out of .numpy() as float32 (exact), and numpy data
given with dtype=bfloat16 is rounded to nearest even from float32.

The fp8 dtypes float8_e4m3fn and float8_e5m2 (codes 14 and 15, after tkc_dtype's TKC_VOID) are one
byte each. With ml_dtypes installed (jax's dependency) their numpy dtypes are ml_dtypes' and .numpy()
gives arrays of them; without it .np is None, .numpy() gives float32 values (exact) and numpy data is
rounded to nearest even here, with ml_dtypes' rules (e4m3fn: past 464 -> NaN; e5m2: from 61440 -> inf).
"""
import numpy as np

try:
    import ml_dtypes as _ml_dtypes
except ImportError:  # optional: the fp8 conversions below stand in for it
    _ml_dtypes = None


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
(bool_, int8, uint8, int16, uint16, int32, uint32, int64, uint64, float16, bfloat16, float32, float64) = DTYPES
# appended to tkc_dtype after TKC_VOID (13): not in DTYPES, whose index is the code
float8_e4m3fn = DType("float8_e4m3fn", 14, 1, "f", _ml_dtypes.float8_e4m3fn if _ml_dtypes else None)
float8_e5m2 = DType("float8_e5m2", 15, 1, "f", _ml_dtypes.float8_e5m2 if _ml_dtypes else None)
FP8_DTYPES = (float8_e4m3fn, float8_e5m2)
BY_NAME = {dt.name: dt for dt in DTYPES + FP8_DTYPES}
BY_CODE = {dt.code: dt for dt in DTYPES + FP8_DTYPES}
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


def _fp8_format(dt):
    """(mantissa bits, exponent bias) of an fp8 dtype."""
    return (3, 7) if dt is float8_e4m3fn else (2, 15)


def fp8_to_float32(bits, dt):
    """The float32 values of fp8 bits (a uint8 array) of dt, exact (NaN keeps the sign)."""
    mb, bias = _fp8_format(dt)
    table = np.empty(256, np.float32)
    for b in range(256):
        ex, m = (b & 0x7F) >> mb, b & ((1 << mb) - 1)
        if (dt is float8_e4m3fn and b & 0x7F == 0x7F) or (dt is float8_e5m2 and ex == 31 and m):
            v = float("nan")
        elif dt is float8_e5m2 and ex == 31:
            v = float("inf")
        elif ex == 0:
            v = m * 2.0 ** (1 - bias - mb)
        else:
            v = (1 + m / 2.0 ** mb) * 2.0 ** (ex - bias)
        table[b] = -v if b & 0x80 else v
    return table[np.asarray(bits, dtype=np.uint8)]


def float_to_fp8(arr, dt):
    """arr (float32 or float64 values; others through float64) as fp8 bits of dt (uint8): one rounding
    to nearest even on the bits, as tkc's devices and ml_dtypes do."""
    mb, bias = _fp8_format(dt)
    x = np.asarray(arr)
    wide = x.dtype != np.float32
    x = np.asarray(x, dtype=np.float64 if wide else np.float32)
    fm, fb, width, U = (52, 1023, 64, np.uint64) if wide else (23, 127, 32, np.uint32)
    u = lambda v: U(v)  # noqa: E731 (constants of the bits' width: no float promotion)
    bits = x.view(U)
    sign = (bits >> u(width - 8)) & u(0x80)
    a = bits & u((1 << (width - 1)) - 1)
    s = fm - mb
    with np.errstate(over="ignore"):
        nn = a - u((fb - bias) << fm)  # wraps where a is below the normals (not used there)
        normal = (nn + u((1 << (s - 1)) - 1) + ((nn >> u(s)) & u(1))) >> u(s)
        k = fb + fm + 1 - bias - mb
        e = np.clip(a >> u(fm), k - (fm + 2), fb - bias).astype(U)
        cnt = u(k) - e
        mant = (a & u((1 << fm) - 1)) | u(1 << fm)
        sub = (mant + (u(1) << (cnt - u(1))) - u(1) + ((mant >> cnt) & u(1))) >> cnt
    body = np.where(a < u((fb + 1 - bias) << fm), sub, normal)
    ftype = np.float64 if wide else np.float32
    top = lambda v: np.array(v, ftype).view(U)  # noqa: E731
    if dt is float8_e4m3fn:
        body = np.where(a > top(464.0), u(0x7F), body)
    else:
        body = np.where(a >= top(61440.0), u(0x7C), body)
        body = np.where(a > top(np.inf), u(0x7E), body)
    return (sign | body).astype(np.uint8)


def to_storage(arr, dt):
    """arr converted to the numpy array holding dt's bytes (bfloat16: uint16 bits, round to nearest even;
    fp8: uint8 bits)."""
    if dt in FP8_DTYPES:
        a = np.asarray(arr)
        if _ml_dtypes is not None:
            return np.asarray(a, dtype=dt.np).view(np.uint8)
        return float_to_fp8(a if a.dtype in (np.float32, np.float64) else a.astype(np.float64), dt)
    if dt is not bfloat16:
        return np.asarray(arr, dtype=dt.np)
    bits = np.asarray(arr, dtype=np.float32).view(np.uint32)
    rounded = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype(np.uint16)
    return np.where(np.isnan(bits.view(np.float32)), np.uint16(0x7FC0), rounded)


def from_storage(arr, dt):
    """The numpy view of dt's bytes in arr as values (bfloat16 becomes float32; fp8 ml_dtypes' arrays,
    or float32 without ml_dtypes)."""
    if dt in FP8_DTYPES:
        return arr.view(dt.np) if dt.np is not None else fp8_to_float32(arr, dt)
    return (arr.astype(np.uint32) << 16).view(np.float32) if dt is bfloat16 else arr


def storage_np(dt):
    """The numpy dtype holding dt's bytes (uint16 for bfloat16, uint8 for fp8)."""
    if dt in FP8_DTYPES:
        return np.dtype(np.uint8)
    return np.dtype(np.uint16) if dt is bfloat16 else dt.np
