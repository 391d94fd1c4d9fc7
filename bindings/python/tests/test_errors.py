"""Failed C calls raise TkcError with the status and tkc_last_error(); contexts fail and close cleanly."""
import os
import subprocess
import sys

import numpy as np
import pytest

import tkc

PKG_DIR = os.path.dirname(os.path.dirname(os.path.abspath(tkc.__file__)))


def test_shape_error(ctx):
    a = ctx.tensor(np.zeros((2, 3), np.float32))
    with pytest.raises(tkc.TkcError) as e:
        a @ a
    assert e.value.status == "ESHAPE" and "matmul" in e.value.message
    assert isinstance(e.value, tkc.TkcShapeError) and isinstance(e.value, ValueError) and isinstance(e.value, RuntimeError)
    with pytest.raises(ValueError):
        a + ctx.tensor(np.zeros(4, np.float32))
    with pytest.raises(tkc.TkcError) as e:
        a.reshape(5)
    assert e.value.status in ("ESHAPE", "EINVAL")


def test_dtype_and_invalid_errors(ctx):
    with pytest.raises(tkc.TkcError) as e:
        ctx.tensor([1.5]) << 1.0
    assert e.value.status == "EDTYPE" and isinstance(e.value, TypeError)
    with pytest.raises(tkc.TkcError) as e:
        ctx.tensor([1.0, 2.0]).softmax(5)
    assert e.value.status == "EINVAL"
    with pytest.raises(tkc.TkcError) as e:
        ctx.tensor([1.0]).kernels_source("NOPE")
    assert e.value.status == "EINVAL"
    with pytest.raises(tkc.TkcError) as e:
        ctx.tensor([1.0]).realize(opts=[("UPCAST", 7, 4)])
    assert e.value.status == "EINVAL"


def test_ctx_usable_after_errors(ctx):
    with pytest.raises(tkc.TkcError):
        ctx.tensor([1.0]) @ ctx.tensor([1.0, 2.0])
    assert (ctx.tensor([1.0]) + 1).item() == 2.0


def test_unknown_device():
    with pytest.raises(tkc.TkcError) as e:
        tkc.Context("NOPE")
    assert e.value.status == "EDEVICE" and "NOPE" in str(e.value)
    assert tkc.device_available("NOPE") is False


def test_unknown_device_is_quiet():
    code = "import tkc\ntry:\n    tkc.Context('NOPE')\nexcept tkc.TkcError as e:\n    print(e.status)\n"
    env = dict(os.environ, PYTHONPATH=PKG_DIR + os.pathsep + os.environ.get("PYTHONPATH", ""))
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert r.returncode == 0 and r.stdout.strip() == "EDEVICE"
    assert r.stderr == "", r.stderr


def test_unknown_device_no_del_noise(capfd):
    for _ in range(3):
        with pytest.raises(tkc.TkcError):
            tkc.Context("NOPE")
    import gc
    gc.collect()
    assert "Exception ignored" not in capfd.readouterr().err


def test_closed_context():
    with tkc.Context("CPU") as c:
        t = c.tensor([1.0, 2.0])
        assert c.device == "CPU"
    assert c.closed
    with pytest.raises(tkc.TkcError, match="closed"):
        t.numpy()
    with pytest.raises(tkc.TkcError, match="closed"):
        c.tensor([1.0])
    c.close()  # idempotent
    assert "freed" in repr(t)


def test_tensors_keep_context_alive():
    t = tkc.Context("CPU").tensor(np.arange(3, dtype=np.float32))
    import gc
    gc.collect()
    assert (t * 2).tolist() == [0, 2, 4]


def test_mixing_contexts(ctx):
    with tkc.Context("CPU") as other:
        with pytest.raises(tkc.TkcError, match="ctx"):
            ctx.tensor([1.0]) + other.tensor([1.0])


def test_bad_python_arguments(ctx):
    with pytest.raises(TypeError):
        ctx.tensor([1.0]) + "a"
    with pytest.raises(TypeError):
        ctx.tensor([1.0]).cast("nope")
    with pytest.raises(ValueError):
        ctx.tensor([1, 2]).item()
