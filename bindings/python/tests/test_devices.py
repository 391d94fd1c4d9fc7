"""A few things on every device that can run here (CPU, LLVM, INTERP, WEBGPU via lavapipe, CUDA)."""
import numpy as np

import tkc

RNG = np.random.default_rng(3)
A = RNG.standard_normal((8, 16)).astype(np.float32)
B = RNG.standard_normal((16, 4)).astype(np.float32)


def np_softmax(x):
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def test_device_name(dev_ctx):
    assert dev_ctx.device in tkc.DEVICES and dev_ctx.device in tkc.devices()


def test_matmul_softmax(dev_ctx):
    y = (dev_ctx.tensor(A) @ dev_ctx.tensor(B)).softmax(-1)
    np.testing.assert_allclose(y.numpy(), np_softmax(A @ B), rtol=1e-4, atol=1e-6)


def test_round_trip_and_dlpack(dev_ctx):
    t = dev_ctx.tensor(A)
    np.testing.assert_array_equal(t.numpy(), A)
    np.testing.assert_array_equal(np.from_dlpack(t), A)
    np.testing.assert_array_equal(tkc.from_dlpack(A.T, ctx=dev_ctx).numpy(), A.T)


def test_indexing_and_reductions(dev_ctx):
    t = dev_ctx.tensor(A)
    np.testing.assert_array_equal(t[::-2, 1:9:3].numpy(), A[::-2, 1:9:3])
    np.testing.assert_allclose(t.sum(axis=1).numpy(), A.sum(axis=1), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(t.max(axis=0, keepdim=True).numpy(), A.max(axis=0, keepdims=True))


def test_int_floor_division(dev_ctx):
    a = np.array([-7, -4, 4, 7], np.int32)
    assert (dev_ctx.tensor(a) // 3).tolist() == (a // 3).tolist()
    assert (dev_ctx.tensor(a) % 3).tolist() == (a % 3).tolist()
