"""Loading libtkc and the ctypes declarations of its C API (include/tkc.h, include/tkc/ops_*.h).

Lookup order: $TKC_LIB (only that one when set), the library bundled in the package (tkc/_lib/),
<repo>/build/libtkc.so when running from the source tree, then the system's libtkc.so.0 / libtkc.so.
"""
import ctypes
import ctypes.util
import glob
import os

from .errors import make_error

# ---------------------------------------------------------------- C types

T = ctypes.c_void_p  # tkc_tensor * (opaque)
C = ctypes.c_void_p  # tkc_ctx * (opaque)
i, i64, u64, d, z = ctypes.c_int, ctypes.c_int64, ctypes.c_uint64, ctypes.c_double, ctypes.c_size_t
s, p = ctypes.c_char_p, ctypes.c_void_p
IP, I64P, TP, DP = ctypes.POINTER(ctypes.c_int), ctypes.POINTER(ctypes.c_int64), ctypes.POINTER(ctypes.c_void_p), ctypes.POINTER(ctypes.c_double)


class Stats(ctypes.Structure):
    """struct tkc_stats"""
    _fields_ = [("kernels", ctypes.c_int64), ("kernel_s", ctypes.c_double), ("kernels_built", ctypes.c_int64), ("build_s", ctypes.c_double)]


class Progress(ctypes.Structure):
    """struct tkc_progress"""
    _fields_ = [("stage", ctypes.c_char_p), ("kernel", ctypes.c_char_p), ("done", ctypes.c_int), ("total", ctypes.c_int),
                ("seconds", ctypes.c_double)]


class Opt(ctypes.Structure):
    """struct tkc_opt (tkc/opts.h)"""
    _fields_ = [("op", ctypes.c_int), ("axis", ctypes.c_int), ("amount", ctypes.c_int)]


PROGRESS_FN = ctypes.CFUNCTYPE(None, ctypes.POINTER(Progress), ctypes.c_void_p)
OPT_NAMES = ("UPCAST", "UNROLL", "LOCAL", "GROUP", "GROUPTOP", "PADTO", "SWAP", "NOLOCALS", "TC")

# ---------------------------------------------------------------- declarations: name -> (restype, argtypes)

DECLS = {}


def _decl(restype, argtypes, names):
    for name in names.split():
        DECLS["tkc_" + name] = (restype, argtypes)


# base.h
_decl(s, [], "last_error version")
_decl(i, [], "last_status")
_decl(None, [], "clear_error")
_decl(s, [i], "status_str")
_decl(None, [p], "free")
_decl(None, [], "cache_flush")
_decl(None, [ctypes.POINTER(z), ctypes.POINTER(z)], "memory_stats")
# tkc.h: contexts, creation, properties
_decl(C, [s], "ctx_new")
_decl(None, [C], "ctx_free")
_decl(s, [C], "ctx_device")
_decl(i, [s], "device_available")
_decl(T, [C, i, i, I64P, p], "tensor_new")
_decl(T, [C, i, i, I64P, d], "full")
_decl(T, [C, i, d], "scalar")
_decl(T, [C, i, d, d, d], "arange")
_decl(T, [C, i, i, I64P, u64], "rand")
_decl(i, [C, u64], "manual_seed")
_decl(T, [C, i, i, I64P], "randn glorot_uniform")
_decl(T, [C, i, i, I64P, d, d], "rand_uniform")
_decl(T, [C, i, i, I64P, d], "kaiming_uniform")
_decl(T, [T, d, i], "dropout")
_decl(i, [T, TP, TP], "quantize_int8_rows")
_decl(T, [T, T], "dequantize_int8_rows")
_decl(None, [T], "tensor_free")
_decl(i, [T], "ndim dtype_of kernel_count")
_decl(i64, [T, i], "dim")
_decl(i64, [T], "numel")
# elementwise, reductions, movement, composites
_decl(T, [T, T], "add sub mul div idiv mod maximum minimum pow lt le gt ge eq ne and or xor shl shr matmul atan2 dot4")
_decl(T, [T, T, T], "where lerp")
_decl(T, [T], "neg abs recip sqrt exp exp2 log log2 sin cos tanh sigmoid relu contiguous floor ceil round trunc rsqrt "
              "square sign erf silu selu hardsigmoid hardswish mish tan asin acos atan sinh cosh isnan isinf isfinite "
              "log1p expm1")
_decl(T, [T, i], "cast bitcast softmax log_softmax cumsum cummax cumprod unsqueeze gelu")
_decl(T, [T, d], "leaky_relu elu softplus")
_decl(T, [T, d, d], "clamp")
_decl(T, [T, i, IP, i], "sum max min mean prod logsumexp any all")
_decl(T, [T, i, IP, i, d], "var std")
_decl(T, [T, i, IP, i, i], "sum_acc")
_decl(T, [T, i, I64P], "reshape expand")
_decl(T, [T, IP], "permute")
_decl(T, [T, i, i], "transpose flatten argmax argmin")
_decl(T, [T, I64P, d], "pad")
_decl(T, [T, I64P], "shrink")
_decl(T, [T, i, IP], "flip squeeze")
_decl(T, [T, i, I64P], "repeat")
_decl(T, [T, i64], "tril triu one_hot")
_decl(T, [T, T, T, i, i], "conv2d")
_decl(T, [T], "conv2d_weight_layout")
_decl(T, [T], "matmul_weight_layout")
# running
_decl(i, [T], "realize")
_decl(i, [T, ctypes.POINTER(Opt), i], "realize_opts")
_decl(i, [T, p, z], "copy_in copy_out item_bytes")
_decl(i, [C], "scope_begin scope_end")
_decl(T, [T], "keep")
_decl(i, [C, ctypes.POINTER(Stats)], "ctx_stats")
_decl(i, [C, PROGRESS_FN, p], "ctx_set_progress")
_decl(i, [C, i], "ctx_set_beam")
_decl(i64, [C, s, i64, i64], "dim_var")
_decl(i, [C, i64, i64], "dim_bind")
_decl(i64, [C, i64], "dim_value")
_decl(i, [i64], "dim_is_var")
# tkc/onnx.h (present in every build: without the frontend they fail with TKC_EUNSUPPORTED)
_decl(p, [C, s], "onnx_load")
_decl(p, [C, p, z], "onnx_load_bytes")
_decl(i, [p], "onnx_num_inputs onnx_num_outputs onnx_reads_values")
_decl(s, [p, i], "onnx_input_name onnx_output_name")
_decl(i, [p, i, IP, IP, I64P, i], "onnx_input_shape")
_decl(i, [p, i, TP, i, TP], "onnx_run")
_decl(None, [p], "onnx_free")
_decl(T, [C, i64], "dim_scalar")
_decl(p, [C, p, p], "jit_new")
_decl(i, [p, TP, i, TP, i], "jit_run")
_decl(None, [p], "jit_free")
_decl(i, [p], "jit_kernels jit_buffers")
_decl(p, [T, s], "kernels_source")
_decl(i, [T, s], "schedule_dot")
_decl(i, [T, i, s], "kernel_uops_dot")
# ops_shape.h
_decl(T, [i, TP, i], "cat stack")
_decl(i, [T, i, i, I64P, TP], "split")
_decl(i, [T, i, i, TP], "chunk")
_decl(i, [T, DP], "item")
_decl(T, [T, i, T], "gather index_select")
_decl(T, [T, i, T, T], "scatter scatter_add")
_decl(i, [T, i, i, TP, TP], "sort")
_decl(i, [T, i64, i, i, TP, TP], "topk")
# ops_nn.h
_decl(T, [T, i, T, T, d], "layer_norm")
_decl(T, [T, i, T, d], "rms_norm")
_decl(T, [T, T, T, T, T, d], "batch_norm")
_decl(T, [T, T, T, IP, IP, IP, i], "conv2d_ex")
_decl(T, [T, T, T, i, i, i, i, i], "conv1d")
_decl(T, [T, T, T, IP, IP, IP, IP, i], "conv_transpose2d")
_decl(T, [T, IP, IP, IP, IP, i], "max_pool2d")
_decl(T, [T, IP, IP, IP, i, i], "avg_pool2d")
_decl(T, [T, i64, i64, i, i], "interpolate")
_decl(T, [T, T, T, T, i, d], "scaled_dot_product_attention")
_decl(T, [T, T, i], "nll_loss cross_entropy")
# gradients, optimizers, in-place updates
_decl(i, [T, i], "requires_grad")
_decl(i, [T], "requires_grad_of has_grad backward zero_grad")
_decl(T, [T], "grad detach")
_decl(i, [T, i, TP, TP], "gradient")
_decl(i, [i, TP], "realize_all")
_decl(i, [T, T], "assign")
_decl(p, [C, i, TP, d, d, d, i], "sgd_new")
_decl(p, [C, i, TP, d, d, d, d, d, i], "adam_new")
_decl(i, [p], "optim_step optim_zero_grad")
_decl(i, [p, i, TP], "optim_step_realize")
_decl(i, [p, d], "optim_set_lr")
_decl(None, [p], "optim_free")

# ---------------------------------------------------------------- loading


SONAMES = ("libtkc.so.0.1", "libtkc.so.0", "libtkc.so")  # 0.x releases are ABI-stable per minor: soname libtkc.so.0.MINOR


def _candidates():
    env = os.environ.get("TKC_LIB")
    if env:
        return [env]
    here = os.path.dirname(os.path.abspath(__file__))
    found = sorted(glob.glob(os.path.join(here, "_lib", "libtkc*.so*")) + glob.glob(os.path.join(here, "_lib", "libtkc*.dylib")))
    repo = os.path.dirname(os.path.dirname(os.path.dirname(here)))
    if os.path.exists(os.path.join(repo, "include", "tkc.h")):
        found += [os.path.join(repo, "build", "libtkc.so"), os.path.join(repo, "build", "libtkc.dylib")]
    system = ctypes.util.find_library("tkc")
    return found + ([system] if system else []) + list(SONAMES)


def _load():
    errors = []
    for path in _candidates():
        if os.sep in path and not os.path.exists(path):
            errors.append("%s: no such file" % path)
            continue
        try:
            return ctypes.CDLL(path), path
        except OSError as e:
            errors.append(str(e))
    raise ImportError("tkc: cannot load libtkc (set TKC_LIB to a built libtkc.so):\n  " + "\n  ".join(errors))


class _Lib:
    """The bound C functions as attributes (lib.tkc_add ...); .path, .missing (declared but not exported)."""

    def __init__(self):
        self._cdll, self.path = _load()
        self.missing = []
        for name, (restype, argtypes) in DECLS.items():
            try:
                f = getattr(self._cdll, name)
            except AttributeError:
                self.missing.append(name)
                f = self._missing_stub(name)
            else:
                f.restype, f.argtypes = restype, argtypes
            setattr(self, name, f)

    def _missing_stub(self, name):
        def stub(*args):
            raise make_error("EUNSUPPORTED", "%s is not exported by %s" % (name, self.path))
        return stub


lib = _Lib()


def last_error():
    """The TkcError for the last failure on this thread (and clears it)."""
    status, msg = lib.tkc_last_status(), (lib.tkc_last_error() or b"").decode(errors="replace")
    lib.tkc_clear_error()
    if status == 0:
        status, msg = 9, msg or "a tkc call failed without a reason"  # TKC_EINTERNAL
    return make_error(status, msg or lib.tkc_status_str(status).decode())


def check(status):
    """Raises the last error when a tkc_status is not TKC_OK."""
    if status != 0:
        raise last_error()


def check_ptr(ptr):
    """Raises the last error for a NULL pointer result; returns ptr."""
    if not ptr:
        raise last_error()
    return ptr


def ints(xs):
    """An int[] for xs (one element at least, so the pointer is never NULL)."""
    return (ctypes.c_int * max(len(xs), 1))(*xs)


def int64s(xs):
    """An int64_t[] for xs (one element at least)."""
    return (ctypes.c_int64 * max(len(xs), 1))(*xs)
