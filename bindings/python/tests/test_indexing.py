"""Indexing and slicing against numpy's results."""
import numpy as np
import pytest

import tkc

A = np.arange(2 * 3 * 5 * 4, dtype=np.float32).reshape(2, 3, 5, 4)

CASES = [
    0, -1, 1, (1, 2), (-1, -3, 4, -4), (0, 0, 0, 0),
    slice(None), slice(1, None), slice(None, -1), slice(5, 1), slice(-100, 100),
    (slice(None), slice(None, None, 2)), (slice(None), slice(None, None, -1)),
    (Ellipsis, slice(None, None, -2)), (Ellipsis, slice(3, 0, -2)), (Ellipsis, slice(None, None, 3)),
    (Ellipsis, slice(1, None, 3)), (slice(None), slice(None), slice(4, None, -3)), (Ellipsis, slice(-1, -5, -1)),
    (Ellipsis, 1), (0, Ellipsis), (0, Ellipsis, -1), (Ellipsis,),
    None, (None, 0), (slice(None), None, 1), (Ellipsis, None), (None, Ellipsis, None, 2), (0, None, None, slice(None, None, 2)),
    (1, slice(None, None, -1), None, slice(1, 4, 2)), (slice(0, 0),), (Ellipsis, slice(2, 2, -1)),
    ([1, -2],), (slice(None), [2, -1, 0]), (Ellipsis, [[0, 1], [3, 2]]), (1, [0, 2]), (slice(None), 1, [4, 0]),
    (0, slice(None), [1, 3]), (0, slice(None), 1, [1, 3]), (np.array([1, 0, 1]),), (slice(None), np.int64(2)),
    (slice(None, None, -1), [1, 0], slice(None, None, 2)), (Ellipsis, np.array(2)), ((0, 1),),
]


@pytest.mark.parametrize("key", CASES, ids=[repr(k) for k in CASES])
def test_getitem_matches_numpy(ctx, key):
    want = A[key]
    got = ctx.tensor(A)[key]
    assert got.shape == want.shape
    np.testing.assert_array_equal(got.numpy(), want)


def test_index_by_tensor(ctx):
    t = ctx.tensor(A)
    idx = ctx.tensor(np.array([2, 0], np.int32))
    np.testing.assert_array_equal(t[:, idx].numpy(), A[:, [2, 0]])
    np.testing.assert_array_equal(t[ctx.tensor(np.int32(1))].numpy(), A[1])


def test_views_compose(ctx):
    t = ctx.tensor(A)
    np.testing.assert_array_equal(t[::-1][:, 1:][..., ::2][0, :, 3].numpy(), A[::-1][:, 1:][..., ::2][0, :, 3])
    np.testing.assert_array_equal((t[:, ::2] * 2).numpy(), A[:, ::2] * 2)


def test_zero_d():
    t = tkc.tensor(np.float32(3.0))
    assert t[()].item() == 3.0 and t[None].shape == (1,) and t[...].shape == ()


@pytest.mark.parametrize("key, error", [
    (2, IndexError), (-3, IndexError), ((0, 3), IndexError), ((0, 0, 0, 0, 0), IndexError), ((Ellipsis, Ellipsis), IndexError),
    ("a", IndexError), (1.5, IndexError), ([0, 5], IndexError), (([0], [1]), IndexError), (np.array([True, False]), IndexError),
])
def test_bad_indices(ctx, key, error):
    with pytest.raises(error):
        ctx.tensor(np.zeros((2, 3)))[key]


def test_no_setitem(ctx):
    t = ctx.tensor([1, 2])
    with pytest.raises(TypeError, match="immutable"):
        t[0] = 5
