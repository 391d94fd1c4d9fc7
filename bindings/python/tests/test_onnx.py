"""tkc.onnx: models written with onnx.helper, run through tkc_onnx_load / tkc_onnx_run from Python,
against numpy (and onnxruntime when installed); bad files and bad calls raise."""
import numpy as np
import pytest

import tkc

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402


def mlp_model():
    """y = relu(x @ w + b) reshaped to (batch, 2, 2) through a Shape -> Gather -> Concat chain"""
    rng = np.random.default_rng(1)
    w = rng.standard_normal((3, 4)).astype(np.float32)
    b = rng.standard_normal(4).astype(np.float32)
    nodes = [
        helper.make_node("MatMul", ["x", "w"], ["xw"]),
        helper.make_node("Add", ["xw", "b"], ["h"]),
        helper.make_node("Relu", ["h"], ["r"]),
        helper.make_node("Shape", ["x"], ["xs"]),
        helper.make_node("Gather", ["xs", "zero"], ["n"], axis=0),
        helper.make_node("Concat", ["n", "two_two"], ["shape"], axis=0),
        helper.make_node("Reshape", ["r", "shape"], ["y"]),
    ]
    inits = [numpy_helper.from_array(w, "w"), numpy_helper.from_array(b, "b"),
             numpy_helper.from_array(np.array([0], np.int64), "zero"), numpy_helper.from_array(np.array([2, 2], np.int64), "two_two")]
    graph = helper.make_graph(nodes, "mlp", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 3])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 2, 2])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    return model, w, b


def reference(x, w, b):
    return np.maximum(x @ w + b, 0).reshape(len(x), 2, 2)


@pytest.mark.parametrize("device", ["CPU", "INTERP"])
def test_load_and_call(tmp_path, device):
    if not tkc.device_available(device):
        pytest.skip("%s is not available here" % device)
    model, w, b = mlp_model()
    path = tmp_path / "mlp.onnx"
    onnx.save(model, str(path))
    with tkc.Context(device) as ctx:
        m = tkc.onnx.load(path, ctx=ctx)
        assert m.input_names == ["x"] and m.output_names == ["y"]
        assert m.input_shapes == [(None, 3)] and m.input_dtypes == [tkc.float32]
        for batch in (1, 5):  # the named dim takes each array's size
            x = np.random.default_rng(batch).standard_normal((batch, 3)).astype(np.float32)
            (y,) = m(x)
            np.testing.assert_allclose(y, reference(x, w, b), rtol=1e-5, atol=1e-6)
            (y2,) = m(x=x)  # by name
            np.testing.assert_array_equal(y2, y)
            (t,) = m.run(x)  # lazy tensors
            assert isinstance(t, tkc.Tensor) and t.shape == (batch, 2, 2)
        m.close()
        m.close()  # twice: a no-op


@pytest.mark.parametrize("device", ["CPU", "INTERP"])
def test_laid_out_weights(device):
    """MatMul's and Gemm's (transB) initializers are laid out at load (panels of 32 columns on
    AVX-512 hosts): the products, and another node reading the same initializer, are unchanged"""
    if not tkc.device_available(device):
        pytest.skip("%s is not available here" % device)
    rng = np.random.default_rng(3)
    w1, w2 = rng.standard_normal((16, 64)).astype(np.float32), rng.standard_normal((96, 64)).astype(np.float32)
    nodes = [helper.make_node("MatMul", ["x", "w1"], ["h"]), helper.make_node("Gemm", ["h", "w2"], ["y"], transB=1),
             helper.make_node("Identity", ["w1"], ["w1_out"])]
    graph = helper.make_graph(nodes, "laid", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [5, 16])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [5, 96]),
                               helper.make_tensor_value_info("w1_out", TensorProto.FLOAT, [16, 64])],
                              [numpy_helper.from_array(w1, "w1"), numpy_helper.from_array(w2, "w2")])
    data = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString()
    x = rng.standard_normal((5, 16)).astype(np.float32)
    with tkc.onnx.load_bytes(data, device=device) as m:
        y, w1_out = m(x)
        np.testing.assert_allclose(y, x @ w1 @ w2.T, rtol=1e-4, atol=1e-4)
        np.testing.assert_array_equal(w1_out, w1)


def test_matches_onnxruntime():
    ort = pytest.importorskip("onnxruntime")
    model, _, _ = mlp_model()
    data = model.SerializeToString()
    x = np.random.default_rng(7).standard_normal((4, 3)).astype(np.float32)
    want = ort.InferenceSession(data, providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    with tkc.onnx.load_bytes(data, device="INTERP") as m:
        np.testing.assert_allclose(m(x)[0], want, rtol=1e-5, atol=1e-6)


def test_errors(tmp_path):
    with pytest.raises(tkc.TkcError):
        tkc.onnx.load(tmp_path / "missing.onnx", device="INTERP")
    with pytest.raises(tkc.TkcError):
        tkc.onnx.load_bytes(b"\x08\x07 not a model \xff\xff", device="INTERP")
    bad = helper.make_model(helper.make_graph([helper.make_node("NoSuchOp", ["x"], ["y"])], "g",
                                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
                                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])]),
                            opset_imports=[helper.make_opsetid("", 17)])
    with pytest.raises(tkc.TkcError, match="NoSuchOp"):
        tkc.onnx.load_bytes(bad.SerializeToString(), device="INTERP")
    model, _, _ = mlp_model()
    with tkc.onnx.load_bytes(model.SerializeToString(), device="INTERP") as m:
        with pytest.raises(TypeError):
            m()  # no input
        with pytest.raises(TypeError):
            m(np.zeros((1, 3), np.float32), x=np.zeros((1, 3), np.float32))  # both ways
        with pytest.raises(tkc.TkcError):
            m(np.zeros((2, 4), np.float32))  # the fixed dim is 3
    with pytest.raises(ValueError):
        m(np.zeros((1, 3), np.float32))  # closed


def test_model_left_open_at_exit(tmp_path):
    """a model never closed, on the default ctx (closed at exit): the interpreter exits cleanly (a
    model is freed before the ctx that holds its initializers; it was freed after: a double free)"""
    import os
    import subprocess
    import sys
    script = tmp_path / "left_open.py"
    script.write_text(
        "import numpy as np, tkc, tkc.onnx\n"
        "from onnx import helper, TensorProto, numpy_helper\n"
        "def build():\n"
        "    w = numpy_helper.from_array(np.ones((3, 4), np.float32), 'w')\n"
        "    g = helper.make_graph([helper.make_node('MatMul', ['x', 'w'], ['y'])], 'g',\n"
        "                          [helper.make_tensor_value_info('x', TensorProto.FLOAT, [2, 3])],\n"
        "                          [helper.make_tensor_value_info('y', TensorProto.FLOAT, [2, 4])], [w])\n"
        "    return helper.make_model(g, opset_imports=[helper.make_opsetid('', 17)])\n"
        "m = tkc.onnx.load_bytes(build().SerializeToString())\n"
        "x = np.ones((2, 3), np.float32)\n"
        "for i in range(3): y = m(x)\n"
        "print(y[0].tolist())\n")
    path = os.pathsep.join([os.path.dirname(os.path.dirname(tkc.__file__)), os.environ.get("PYTHONPATH", "")])
    r = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120, env=dict(os.environ, PYTHONPATH=path))
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == str([[3.0] * 4] * 2)


def test_calls_are_captured_unless_the_graph_reads_values():
    """a model whose graph depends on its input shapes only is captured per shape and replayed
    (new values each call: right results); one whose graph reads input values (NonZero) is not"""
    model, w, b = mlp_model()
    with tkc.onnx.load_bytes(model.SerializeToString(), device="CPU") as m:
        for i in range(4):
            x = np.random.default_rng(i).standard_normal((3, 3)).astype(np.float32)
            np.testing.assert_allclose(m(x)[0], reference(x, w, b), rtol=1e-5, atol=1e-6)
        assert m._capture is True and len(m._jits) == 1
        x = np.ones((5, 3), np.float32)  # another batch size: its own capture
        np.testing.assert_allclose(m(x)[0], reference(x, w, b), rtol=1e-5, atol=1e-6)
        assert len(m._jits) == 2
    nodes = [helper.make_node("NonZero", ["x"], ["y"])]
    graph = helper.make_graph(nodes, "nz", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])],
                              [helper.make_tensor_value_info("y", TensorProto.INT64, [1, None])])
    data = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]).SerializeToString()
    with tkc.onnx.load_bytes(data, device="CPU") as m:
        for x in ([0, 1, 0, 2], [3, 0, 0, 0], [1, 1, 1, 1], [0, 0, 5, 0]):
            x = np.array(x, np.float32)
            np.testing.assert_array_equal(m(x)[0], np.array(np.nonzero(x)))
        assert m._capture is False and not m._jits
    with tkc.onnx.load_bytes(model.SerializeToString(), device="CPU", jit=False) as m:
        for i in range(3):
            x = np.full((2, 3), i, np.float32)
            np.testing.assert_allclose(m(x)[0], reference(x, w, b), rtol=1e-5, atol=1e-6)
        assert not m._jits
