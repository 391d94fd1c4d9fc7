"""numpy in and out: every dtype, any layout, scalars, item/len/shape, __array__."""
import numpy as np
import pytest

import tkc

NP_DTYPES = [np.bool_, np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64, np.uint64, np.float16, np.float32,
             np.float64]


def sample(dtype, shape=(3, 4), seed=0):
    rng = np.random.default_rng(seed)
    if dtype == np.bool_:
        return rng.random(shape) > 0.5
    if np.issubdtype(dtype, np.integer):
        info = np.iinfo(dtype)
        return rng.integers(info.min, info.max, size=shape, dtype=dtype, endpoint=True)
    return (rng.standard_normal(shape) * 100).astype(dtype)


@pytest.mark.parametrize("dtype", NP_DTYPES, ids=lambda d: np.dtype(d).name)
def test_round_trip_every_dtype(ctx, dtype):
    a = sample(dtype)
    t = ctx.tensor(a)
    assert t.dtype == dtype and t.dtype == np.dtype(dtype).name and t.dtype.np == np.dtype(dtype)
    assert t.shape == a.shape and t.ndim == 2 and len(t) == 3 and t.size == 12 and t.numel() == 12
    out = t.numpy()
    assert out.dtype == a.dtype
    np.testing.assert_array_equal(out, a)
    np.testing.assert_array_equal(np.asarray(t), a)
    assert t.tolist() == a.tolist()


@pytest.mark.parametrize("dtype", NP_DTYPES, ids=lambda d: np.dtype(d).name)
def test_from_numpy_keeps_extremes_exactly(ctx, dtype):
    if dtype == np.bool_:
        a = np.array([True, False])
    elif np.issubdtype(dtype, np.integer):
        a = np.array([np.iinfo(dtype).min, np.iinfo(dtype).max, 0], dtype=dtype)
    else:
        a = np.array([np.finfo(dtype).min, np.finfo(dtype).max, np.finfo(dtype).tiny, -0.0, np.inf, -np.inf], dtype=dtype)
    b = tkc.Tensor.from_numpy(a, ctx=ctx).numpy()
    assert b.tobytes() == a.tobytes()


def test_nan_survives(ctx):
    assert np.isnan(ctx.tensor(np.array([np.nan], np.float32)).numpy()[0])


@pytest.mark.parametrize("make", [
    lambda a: a.T,
    lambda a: a[::2, 1::3],
    lambda a: a[::-1, ::-2],
    lambda a: np.asfortranarray(a),
    lambda a: a.astype(a.dtype.newbyteorder(">")),
    lambda a: np.broadcast_to(a[:1], a.shape),
], ids=["transposed", "strided", "negative_strides", "fortran", "big_endian", "broadcast"])
def test_non_contiguous_inputs(ctx, make):
    a = make(np.arange(48, dtype=np.float32).reshape(6, 8) * 1.5)
    np.testing.assert_array_equal(ctx.tensor(a).numpy(), a)


def test_zero_d_and_empty(ctx):
    s = ctx.tensor(np.float32(2.5))
    assert s.shape == () and s.ndim == 0 and s.item() == 2.5 and s.numpy().shape == ()
    with pytest.raises(TypeError):
        len(s)
    e = ctx.tensor(np.zeros((0, 3), np.int32))
    assert e.shape == (0, 3) and e.numpy().shape == (0, 3) and e.tolist() == [] and len(e) == 0


def test_python_data_default_dtypes(ctx):
    assert ctx.tensor([1.5, 2]).dtype == tkc.float32
    assert ctx.tensor([[1, 2], [3, 4]]).dtype == tkc.int32
    assert ctx.tensor([True, False]).dtype == tkc.bool_
    assert ctx.tensor(3).shape == ()
    assert ctx.tensor([1, 2], dtype="float16").dtype == np.float16
    assert ctx.tensor(np.arange(3)).dtype == np.int64  # numpy data keeps its dtype


def test_dtype_arguments_everywhere(ctx):
    t = ctx.tensor([1.7, -2.2])
    for dt in (np.int32, "int32", np.dtype("int32"), tkc.int32, "i4"):
        assert t.cast(dt).dtype == tkc.int32
        assert t.cast(dt).tolist() == [1, -2]
    assert ctx.zeros(2, 3, dtype=np.uint8).numpy().dtype == np.uint8
    assert ctx.full((2,), 7, dtype="int16").tolist() == [7, 7]
    with pytest.raises(TypeError):
        t.cast(np.complex64)
    with pytest.raises(TypeError):
        ctx.tensor(np.array(["a"]))


def test_bfloat16_is_float32_in_numpy(ctx):
    a = np.array([1.0, -2.5, 3.140625, 1e30, np.inf], np.float32)
    t = ctx.tensor(a, dtype=tkc.bfloat16)
    assert t.dtype == tkc.bfloat16 and t.dtype.np is None and t.dtype != np.float32
    out = t.numpy()
    assert out.dtype == np.float32
    np.testing.assert_allclose(out, a, rtol=2 ** -8)
    assert out[2] == 3.140625  # exact in bfloat16
    assert t.bitcast(np.uint16).numpy()[0] == 0x3F80
    assert (t * 2).numpy()[1] == -5.0
    assert ctx.tensor([1.00390625], dtype="bfloat16").item() == 1.0  # round to nearest even


def test_item(ctx):
    assert ctx.tensor([[7]]).item() == 7 and isinstance(ctx.tensor([[7]]).item(), int)
    assert isinstance(ctx.tensor([True]).item(), bool)
    big = np.array([2 ** 62 + 1], np.int64)
    assert ctx.tensor(big).item() == 2 ** 62 + 1
    with pytest.raises(ValueError, match="size 1"):
        ctx.tensor([1, 2]).item()
    assert float(ctx.tensor([2.5])) == 2.5 and int(ctx.tensor([3.9])) == 3


def test_array_protocol(ctx):
    t = ctx.tensor(np.arange(4, dtype=np.int32))
    assert np.asarray(t, dtype=np.float64).dtype == np.float64
    assert np.array(t).tolist() == [0, 1, 2, 3]
    with pytest.raises(ValueError):
        np.asarray(t, copy=False)
    np.testing.assert_array_equal(np.arange(4) + t, [0, 2, 4, 6])  # numpy defers to Tensor.__radd__
    assert isinstance(np.arange(4) + t, tkc.Tensor)


def test_iteration_and_len(ctx):
    a = np.arange(6).reshape(3, 2)
    t = ctx.tensor(a)
    assert [r.tolist() for r in t] == a.tolist()
    assert len(t) == 3


def test_copy_in(ctx):
    t = ctx.tensor(np.zeros(4, np.float32))
    y = t * 2
    t.copy_in(np.arange(4)[::-1])
    assert y.tolist() == [6, 4, 2, 0]
    with pytest.raises(tkc.TkcShapeError):
        t.copy_in(np.zeros(3))


def test_big_round_trip(ctx):
    a = np.random.default_rng(1).standard_normal(1 << 20).astype(np.float32)
    np.testing.assert_array_equal(tkc.Tensor.from_numpy(a, ctx=ctx).numpy(), a)


def test_default_context_and_constructor():
    t = tkc.Tensor(np.ones(3, np.float32))
    assert t.ctx is tkc.default_context() and t.tolist() == [1, 1, 1]
    assert tkc.from_numpy(np.arange(2)).tolist() == [0, 1]
