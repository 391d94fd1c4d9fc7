"""DLPack both ways, for host memory."""
import gc

import numpy as np
import pytest

import tkc
from tkc import dlpack

DTYPES = [np.bool_, np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64, np.uint64, np.float16, np.float32,
          np.float64]


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_numpy_from_tkc(ctx, dtype):
    a = (np.arange(12).reshape(3, 4) % 3).astype(dtype)
    t = ctx.tensor(a)
    assert t.__dlpack_device__() == (1, 0)
    b = np.from_dlpack(t)
    assert b.dtype == a.dtype and b.shape == a.shape
    np.testing.assert_array_equal(b, a)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_tkc_from_numpy_dlpack(ctx, dtype):
    a = (np.arange(24).reshape(2, 3, 4) % 5).astype(dtype)
    t = tkc.from_dlpack(a, ctx=ctx)
    assert t.dtype == dtype
    np.testing.assert_array_equal(t.numpy(), a)


@pytest.mark.parametrize("make", [lambda a: a.T, lambda a: a[:, ::3], lambda a: a[1:, 2:5], lambda a: a[::-1]],
                         ids=["transposed", "strided", "offset", "negative"])
def test_strided_producers(ctx, make):
    view = make(np.arange(60, dtype=np.float32).reshape(6, 10))
    np.testing.assert_array_equal(tkc.from_dlpack(view, ctx=ctx).numpy(), view)


def test_zero_d_and_empty(ctx):
    assert tkc.from_dlpack(np.array(3.5, np.float32), ctx=ctx).item() == 3.5
    assert tkc.from_dlpack(np.zeros((0, 2), np.int32), ctx=ctx).shape == (0, 2)
    assert np.from_dlpack(ctx.tensor(np.float32(1.25))).shape == ()


def test_tkc_to_tkc_bfloat16(ctx):
    t = ctx.tensor([1.5, -3.0], dtype="bfloat16")
    u = tkc.from_dlpack(t, ctx=ctx)
    assert u.dtype == tkc.bfloat16 and u.tolist() == [1.5, -3.0]
    assert ctx.tensor(t).dtype == tkc.bfloat16  # Context.tensor takes __dlpack__ objects


def test_exports_are_released(ctx):
    gc.collect()
    before = len(dlpack._exported)
    t = ctx.tensor(np.arange(5, dtype=np.float32))
    arrays = [np.from_dlpack(t) for _ in range(3)]
    assert len(dlpack._exported) == before + 3
    del arrays
    t.__dlpack__()  # a capsule nobody consumes
    gc.collect()
    assert len(dlpack._exported) == before


def test_device_and_copy_checks(ctx):
    class OnGpu:
        def __dlpack_device__(self):
            return (2, 0)

        def __dlpack__(self, **kw):
            raise AssertionError("not to be called")
    with pytest.raises(BufferError):
        tkc.from_dlpack(OnGpu(), ctx=ctx)
    t = ctx.tensor([1.0])
    with pytest.raises(BufferError):
        t.__dlpack__(copy=False)
    with pytest.raises(BufferError):
        t.__dlpack__(dl_device=(2, 0))
