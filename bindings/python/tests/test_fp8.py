"""The fp8 dtypes and per-row int8 weights through the Python package, against ml_dtypes (the reference
jax and PyTorch agree with) on every device: all 256 codes decoded, a float32 / float64 sweep encoded,
and the package's own numpy conversions (used without ml_dtypes) bit for bit."""
import numpy as np
import pytest

import tkc
from tkc import dtypes

from conftest import device_params

ml_dtypes = pytest.importorskip("ml_dtypes")
FP8 = [(tkc.float8_e4m3fn, ml_dtypes.float8_e4m3fn), (tkc.float8_e5m2, ml_dtypes.float8_e5m2)]


def sweep(ftype):
    rng = np.random.default_rng(0)
    codes = np.arange(256, dtype=np.uint8)
    vals = [np.concatenate([codes.view(m).astype(np.float64) for _, m in FP8])]
    vals.append((vals[0][:-1] + vals[0][1:]) / 2)  # midpoints (ties where neighbours)
    vals.append(rng.standard_normal(2000) * 2.0 ** rng.integers(-20, 18, 2000))
    vals.append(np.array([0.0, -0.0, np.inf, -np.inf, np.nan, -np.nan, 448, 464, 465, 480, 57344, 61439, 61440, 1e30, 2.0 ** -10,
                          3 * 2.0 ** -10, 2.0 ** -17, 3 * 2.0 ** -17, 1 + 2.0 ** -4 + 2.0 ** -40]))
    with np.errstate(over="ignore"):
        return np.concatenate(vals).astype(ftype)


def same_bits(got, want, mdt):
    g, w = got.view(np.uint8), want.view(np.uint8)
    nan = np.isnan(want.astype(np.float32))
    return np.array_equal(g[~nan], w[~nan]) and np.all(np.isnan(got.view(mdt).astype(np.float32)[nan]))


@pytest.mark.parametrize("ftype", [np.float32, np.float64])
@pytest.mark.parametrize("dt,mdt", FP8, ids=["e4m3fn", "e5m2"])
def test_numpy_conversions(dt, mdt, ftype):
    x = sweep(ftype)
    assert np.array_equal(dtypes.float_to_fp8(x, dt), x.astype(mdt).view(np.uint8))
    codes = np.arange(256, dtype=np.uint8)
    ref = codes.view(mdt).astype(np.float32)
    got = dtypes.fp8_to_float32(codes, dt)
    assert np.array_equal(got.view(np.uint32)[~np.isnan(ref)], ref.view(np.uint32)[~np.isnan(ref)])
    assert np.array_equal(np.isnan(got), np.isnan(ref))


@pytest.mark.parametrize("device", device_params())
@pytest.mark.parametrize("dt,mdt", FP8, ids=["e4m3fn", "e5m2"])
def test_device_casts(device, dt, mdt):
    with tkc.Context(device) as ctx:
        codes = np.arange(256, dtype=np.uint8).view(mdt)
        t = tkc.from_numpy(codes, ctx=ctx)
        assert t.dtype == dt and t.dtype.np == np.dtype(mdt)
        back = t.numpy()
        assert back.dtype == np.dtype(mdt) and np.array_equal(back.view(np.uint8), codes.view(np.uint8))
        f = t.cast(tkc.float32).numpy()
        ref = codes.astype(np.float32)
        assert np.array_equal(np.isnan(f), np.isnan(ref)) and np.array_equal(f[~np.isnan(ref)], ref[~np.isnan(ref)])
        x = sweep(np.float32)
        y = tkc.from_numpy(x, ctx=ctx).cast(dt).numpy()
        assert same_bits(y, x.astype(mdt), mdt)
        if device != "WEBGPU":  # no float64 in WGSL
            x64 = sweep(np.float64)
            y64 = tkc.from_numpy(x64, ctx=ctx).cast(dt).numpy()
            assert same_bits(y64, x64.astype(mdt), mdt)


@pytest.mark.parametrize("device", device_params())
def test_int8_rows(device):
    with tkc.Context(device) as ctx:
        rng = np.random.default_rng(1)
        w = rng.standard_normal((16, 64)).astype(np.float32)
        x = rng.standard_normal((3, 64)).astype(np.float32)
        q, scale = tkc.from_numpy(w, ctx=ctx).quantize_int8_rows()
        sref = np.abs(w).max(axis=1) / np.float32(127)
        qref = np.clip(np.round(w / sref[:, None]), -127, 127).astype(np.int8)
        assert q.dtype == tkc.int8 and np.array_equal(q.numpy(), qref)
        assert scale.dtype == tkc.float32 and np.array_equal(scale.numpy(), sref)
        y = tkc.from_numpy(x, ctx=ctx).matmul(q.dequantize_int8_rows(scale).transpose(0, 1))
        assert y.kernel_count() == 1
        np.testing.assert_allclose(y.numpy(), x @ (qref.astype(np.float32) * sref[:, None]).T, rtol=1e-5, atol=1e-5)
        with pytest.raises(tkc.TkcError):
            q.dequantize_int8_rows(tkc.from_numpy(sref[:3], ctx=ctx))
