"""tkc.io: safetensors and GGUF files read into tkc Tensors from Python, metadata as Python values,
safetensors written; bad files raise TkcError naming the file."""
import numpy as np
import pytest

import tkc
import tkc.io
from tkc.errors import TkcError

gguf = pytest.importorskip("gguf")


def finish(w):
    """writes the GGUF file a GGUFWriter collected"""
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def test_gguf_state(tmp_path):
    path = tmp_path / "m.gguf"
    w = gguf.GGUFWriter(str(path), "llama")
    w.add_uint32("llama.block_count", 2)
    w.add_float32("llama.rope.freq_base", 10000.0)
    w.add_bool("flag", True)
    w.add_token_list(["<s>", "a", "b"])
    w.add_array("ids", [3, 4])
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    w.add_tensor("w", a)
    finish(w)
    ctx = tkc.Context("INTERP")
    st = tkc.io.load_gguf(path, ctx)
    assert list(st) == ["w"] and len(st) == 1 and "w" in st
    np.testing.assert_array_equal(st["w"].numpy(), a)
    assert st.shape("w") == (tkc.dtypes.DTYPES[11], (3, 4))
    assert st.ggml_type("w") == 0
    md = st.metadata
    assert md["general.architecture"] == "llama" and md["llama.block_count"] == 2 and md["flag"] is True
    assert md["llama.rope.freq_base"] == 10000.0
    assert md["tokenizer.ggml.tokens"] == ["<s>", "a", "b"] and md["ids"] == [3, 4]
    with pytest.raises(KeyError, match="'nope'"):
        st["nope"]
    st.close()
    ctx.close()


def test_safetensors_roundtrip(tmp_path):
    ctx = tkc.Context("INTERP")
    x = tkc.Tensor(np.arange(6, dtype=np.int32).reshape(2, 3), ctx=ctx)
    path = tmp_path / "t.safetensors"
    try:
        tkc.io.save_safetensors(path, {"x": x, "y": x * 2})
    except TkcError as e:
        if "without jansson" in str(e):
            pytest.skip(str(e))
        raise
    st = tkc.io.load_safetensors(path, ctx)
    np.testing.assert_array_equal(st["y"].numpy(), np.arange(6, dtype=np.int32).reshape(2, 3) * 2)
    assert st.metadata == {} and st.ggml_type("x") == -1  # tkc writes no __metadata__
    ctx.close()  # closes the state first


def test_bad_file(tmp_path):
    bad = tmp_path / "bad.gguf"
    bad.write_bytes(b"GGUF\x03\x00\x00\x00" + b"\xff" * 16)
    with pytest.raises(TkcError, match="bad.gguf"):
        tkc.io.load_gguf(bad, tkc.Context("INTERP"))


def test_state_matmul(tmp_path):
    """x @ w.T through the state: float, and int8 (x quantized per 32 values) within its bound"""
    rng = np.random.default_rng(3)
    path = tmp_path / "q.gguf"
    w = gguf.GGUFWriter(str(path), "llama")
    src = rng.standard_normal((16, 96)).astype(np.float32)
    for name, qt in (("q4", gguf.GGMLQuantizationType.Q4_0), ("q8", gguf.GGMLQuantizationType.Q8_0)):
        w.add_tensor(name, gguf.quants.quantize(src, qt), raw_dtype=qt)
    finish(w)
    ctx = tkc.Context("CPU")
    st = tkc.io.load_gguf(path, ctx)
    x = rng.standard_normal((2, 96)).astype(np.float32)
    for name in ("q4", "q8"):
        wf = st[name].numpy()
        ref = x.astype(np.float64) @ wf.T.astype(np.float64)
        np.testing.assert_allclose(st.matmul(name, x).numpy(), ref, rtol=1e-5, atol=1e-4)
        got = st.matmul(name, ctx.tensor(x), int8=True).numpy()
        bound = (np.abs(x).reshape(2, 3, 32).max(-1) / 254) @ np.abs(wf).reshape(16, 3, 32).sum(-1).T
        assert got.shape == (2, 16) and np.all(np.abs(got - ref) <= bound * 1.001 + 1e-4)
    with pytest.raises(TkcError, match="last dim is 95"):
        st.matmul("q4", np.zeros((1, 95), np.float32))
    st.close()
    ctx.close()
