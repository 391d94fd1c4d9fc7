"""Weak Python scalars, Python's // and %, comparisons, hashing and truth values."""
import numpy as np
import pytest

import tkc


@pytest.mark.parametrize("dtype, expr, want", [
    ("int32", lambda t: t * 2.5, "float32"),
    ("int32", lambda t: t * 2, "int32"),
    ("int8", lambda t: t + 1, "int8"),
    ("uint8", lambda t: 3 - t, "uint8"),
    ("int64", lambda t: t * 2, "int64"),
    ("float16", lambda t: t + 1.0, "float16"),
    ("float16", lambda t: t * 3, "float16"),
    ("float64", lambda t: t / 2, "float64"),
    ("bool", lambda t: t + 1, "int32"),
    ("bool", lambda t: t * 1.5, "float32"),
    ("bool", lambda t: t & True, "bool"),
    ("int32", lambda t: t / 2, "float32"),
    ("int16", lambda t: t < 2.5, "bool"),
    ("bfloat16", lambda t: t + 1.0, "bfloat16"),
])
def test_weak_scalars(ctx, dtype, expr, want):
    t = ctx.tensor(np.array([1, 0, 1]), dtype=dtype)
    assert expr(t).dtype == want


def test_weak_scalar_values(ctx):
    t = ctx.tensor(np.array([1, 2, 3], np.int32))
    assert (t * 2.5).tolist() == [2.5, 5.0, 7.5]
    assert (t / 2).tolist() == [0.5, 1.0, 1.5]
    assert (10 - t).tolist() == [9, 8, 7]
    assert (2 ** t).tolist() == [2, 4, 8]
    assert ctx.tensor(np.array([250], np.uint8)).__add__(10).tolist() == [4]  # wraps like the dtype
    big = ctx.tensor(np.array([0], np.int64)) + (2 ** 62 + 1)
    assert big.item() == 2 ** 62 + 1  # exact, not through a double


INTS = np.array([-7, -4, -3, -1, 0, 1, 3, 4, 7], np.int32)
DIVS = np.array([3, -3, 2, -2, 5, 7, -1, 4, -4], np.int32)


@pytest.mark.parametrize("dtype", ["int32", "int64", "int8", "int16"])
def test_floor_division_and_modulo_ints(ctx, dtype):
    a, b = ctx.tensor(INTS, dtype), ctx.tensor(DIVS, dtype)
    assert (a // b).tolist() == [int(x) // int(y) for x, y in zip(INTS, DIVS)]
    assert (a % b).tolist() == [int(x) % int(y) for x, y in zip(INTS, DIVS)]
    assert (a // 3).tolist() == [int(x) // 3 for x in INTS]
    assert (a % -3).tolist() == [int(x) % -3 for x in INTS]
    assert (20 // b).tolist() == [20 // int(y) for y in DIVS]
    assert (-20 % b).tolist() == [-20 % int(y) for y in DIVS]
    q, r = divmod(a, b)
    assert q.dtype == dtype and r.dtype == dtype
    assert (ctx.tensor([-4]) // 3).item() == -2 and (ctx.tensor([-4]) % 3).item() == 2


def test_floor_division_unsigned(ctx):
    a = ctx.tensor(np.array([7, 250, 0], np.uint8))
    assert (a // 3).tolist() == [2, 83, 0] and (a % 3).tolist() == [1, 1, 0]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_floor_division_and_modulo_floats(ctx, dtype):
    a = np.array([-7.5, -4.0, -3.25, -1.0, 0.0, 1.5, 3.0, 4.75, 7.0], dtype)
    b = np.array([2.0, -2.5, 0.5, -4.0, 3.0, 0.25, -1.5, 2.0, -0.5], dtype)
    np.testing.assert_array_equal((ctx.tensor(a) // ctx.tensor(b)).numpy(), a // b)
    np.testing.assert_array_equal((ctx.tensor(a) % ctx.tensor(b)).numpy(), a % b)
    np.testing.assert_array_equal((ctx.tensor(a) % 2.0).numpy(), a % dtype(2.0))
    ints = ctx.tensor(np.array([-4, 5], np.int32))
    assert (ints // 2.5).dtype == tkc.float32 and (ints // 2.5).tolist() == [-2.0, 2.0]


def test_comparisons_are_elementwise(ctx):
    a, b = ctx.tensor([1, 2, 3]), ctx.tensor([3, 2, 1])
    for op in ("__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__"):
        got = getattr(a, op)(b)
        assert got.dtype == tkc.bool_
        assert got.tolist() == getattr(np.array([1, 2, 3]), op)(np.array([3, 2, 1])).tolist()
    assert (a == 2).tolist() == [False, True, False]
    assert (2 < a).tolist() == [False, False, True]
    assert (a == "x") is False and (a != None) is True  # noqa: E711 (not comparable: identity, as Python does)


def test_hash_is_identity(ctx):
    a, b = ctx.tensor([1, 2]), ctx.tensor([1, 2])
    d = {a: "a", b: "b"}
    assert d[a] == "a" and d[b] == "b" and len({a, b, a}) == 2
    assert hash(a) != hash(b)


def test_truth_values(ctx):
    assert bool(ctx.tensor([1])) is True and bool(ctx.tensor([[0.0]])) is False
    if ctx.tensor(5) > 3:
        pass
    with pytest.raises(ValueError, match="ambiguous"):
        bool(ctx.tensor([1, 2]))
    with pytest.raises(ValueError, match="ambiguous"):
        bool(ctx.tensor(np.zeros(0)))


def test_bitwise_and_invert(ctx):
    a = ctx.tensor(np.array([0b1100, -1], np.int32))
    assert (a & 0b1010).tolist() == [0b1000, 0b1010]
    assert (~a).tolist() == [~0b1100, 0]
    assert (~ctx.tensor([True, False])).tolist() == [False, True]
    assert (a << 1).tolist() == [24, -2] and (ctx.tensor([16]) >> 2).tolist() == [4]
