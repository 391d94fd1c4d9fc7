"""tkc: lazy tensors that fuse into compiled kernels (ctypes bindings of libtkc, numpy in and out).

    import numpy as np, tkc
    with tkc.Context("CPU") as ctx:
        a = ctx.tensor(np.random.rand(64, 32).astype(np.float32))
        y = (a @ a.T).softmax(-1)        # lazy: nothing runs yet
        print(y.numpy())                  # schedules, compiles, runs, copies out

Choices: bfloat16 comes out of .numpy() as float32 (exact); Python scalars are weak (tinygrad);
// and % are Python's floor division and modulo; failed C calls raise TkcError (ESHAPE also a
ValueError: TkcShapeError, EDTYPE also a TypeError: TkcDTypeError); tensors are immutable (no
__setitem__: assign() updates a tensor in place); DLPack exports host copies.

Training: t.requires_grad = True, loss.backward(), t.grad (None when there is none), t.detach(),
tkc.gradient(y, [x]), tkc.optim.SGD / Adam / AdamW (step, zero_grad, lr), tkc.Jit over a train step.

ONNX: m = tkc.onnx.load("model.onnx"); outputs = m(x) (numpy in and out; m.run(x) gives Tensors).

Language models: m = tkc.llm.Llama.load("model.gguf"); m.generate("text", 32) (python3 -m tkc.llm: the CLI).
"""
from . import dtypes, io, onnx, optim
from ._lib import lib as _clib
from .context import (DEVICES, Context, KernelStats, ProgressInfo, cache_flush, default_context, device_available, devices,
                      dim_is_var, memory_stats)
from .dlpack import from_dlpack
from .dtypes import (DType, bfloat16, bool_, float16, float32, float64, int8, int16, int32, int64, uint8, uint16, uint32,
                     uint64)
from .dtypes import float8_e4m3fn, float8_e5m2
from .errors import TkcDTypeError, TkcError, TkcShapeError
from .functions import *  # noqa: F401,F403 (tkc.exp, tkc.matmul, ...)
from .functions import from_numpy, tensor
from ._tensor import Tensor, cat, stack
from .io import load_gguf, load_safetensors, save_safetensors
from .jit import Jit
from .autograd import gradient, realize_all

__version__ = _clib.tkc_version().decode()
library_path = _clib.path

# the op functions (tkc.exp, tkc.max ...) are left out of __all__: some share builtins' names
__all__ = ["Context", "Tensor", "DType", "TkcError", "TkcShapeError", "TkcDTypeError", "KernelStats", "ProgressInfo", "DEVICES",
           "Jit", "gradient", "realize_all", "optim", "default_context", "device_available", "devices", "from_dlpack",
           "from_numpy", "tensor", "cat", "stack", "dtypes", "bool_", "int8", "uint8", "int16", "uint16", "int32", "uint32",
           "int64", "uint64", "float16", "bfloat16", "float32", "float64", "float8_e4m3fn", "float8_e5m2"]


def __getattr__(name):
    """tkc.llm is imported on first use (import tkc stays as light as it was)."""
    if name == "llm":
        import importlib
        return importlib.import_module(".llm", __name__)
    raise AttributeError("module 'tkc' has no attribute %r" % name)
