"""tkc.io: model files (include/tkc/io.h): safetensors and GGUF read into named tensors, safetensors written.

    import tkc.io
    st = tkc.io.load_gguf("model.gguf", ctx)      # or load_safetensors; ctx None = the default context
    w = st["blk.0.attn_q.weight"]                 # a tkc Tensor (quantized GGUF weights: lazy float32
                                                  # that dequantizes inside the kernels that read it)
    list(st), len(st), st.shape(name), st.ggml_type(name)
    st.metadata["llama.block_count"]              # GGUF metadata: ints, floats, str, lists
    st.close()                                    # (also when its context closes)
    tkc.io.save_safetensors("out.safetensors", {"w": w})

Malformed files raise TkcError with the C message (naming the file and what is wrong)."""
import ctypes

import numpy as np

from . import dtypes
from ._lib import check, check_ptr, lib
from ._owned import Owned
from .context import default_context

_P, _S, _I, _I64, _D = ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int, ctypes.c_int64, ctypes.c_double
_DECLS = [
    ("tkc_safetensors_load", _P, [_P, _S]), ("tkc_gguf_load", _P, [_P, _S]),
    ("tkc_safetensors_save", _I, [_S, _I, ctypes.POINTER(_S), ctypes.POINTER(_P)]),
    ("tkc_state_count", _I, [_P]), ("tkc_state_name", _S, [_P, _I]), ("tkc_state_get", _P, [_P, _S]),
    ("tkc_state_shape", _I, [_P, _S, ctypes.POINTER(_I), ctypes.POINTER(_I), ctypes.POINTER(_I64)]),
    ("tkc_state_matmul", _P, [_P, _S, _P, _I]),
    ("tkc_state_free", None, [_P]), ("tkc_gguf_tensor_type", _I, [_P, _S]),
    ("tkc_gguf_meta_count", _I, [_P]), ("tkc_gguf_meta_key", _S, [_P, _I]), ("tkc_gguf_meta_type", _I, [_P, _S]),
    ("tkc_gguf_meta_int", _I, [_P, _S, ctypes.POINTER(_I64)]), ("tkc_gguf_meta_float", _I, [_P, _S, ctypes.POINTER(_D)]),
    ("tkc_gguf_meta_str", _S, [_P, _S]), ("tkc_gguf_meta_str_len", _I64, [_P, _S]),
    ("tkc_gguf_meta_array", _I, [_P, _S, ctypes.POINTER(_I), ctypes.POINTER(_I64), ctypes.POINTER(_P)]),
    ("tkc_gguf_meta_array_str", _S, [_P, _S, _I64]),
]
_C = {}
for _name, _res, _args in _DECLS:
    _f = getattr(lib._cdll, _name)  # AttributeError: a libtkc built before tkc/io.h
    _f.restype, _f.argtypes = _res, _args
    _C[_name] = _f

# GGUF value types (TKC_GGUF_*) -> ctypes element type of an array
_GGUF_CTYPES = {0: ctypes.c_uint8, 1: ctypes.c_int8, 2: ctypes.c_uint16, 3: ctypes.c_int16, 4: ctypes.c_uint32, 5: ctypes.c_int32,
                6: ctypes.c_float, 7: ctypes.c_uint8, 10: ctypes.c_uint64, 11: ctypes.c_int64, 12: ctypes.c_double}
_FLOAT, _BOOL, _STRING, _ARRAY = (6, 12), 7, 8, 9


class State(Owned):
    """The named tensors of a model file (a read-only mapping name -> Tensor; each lookup is a new
    handle) and, for GGUF, its metadata (a dict)."""

    def __init__(self, ptr, ctx):
        self._s, self._ctx = check_ptr(ptr), ctx
        ctx._own(self)  # freed before its ctx, which frees the tensors it holds
        self.names = [_C["tkc_state_name"](self._s, i).decode() for i in range(_C["tkc_state_count"](self._s))]
        self.metadata = {}
        for i in range(_C["tkc_gguf_meta_count"](self._s)):
            key = _C["tkc_gguf_meta_key"](self._s, i)
            self.metadata[key.decode(errors="replace")] = self._meta(key)

    def _meta(self, key):
        t = _C["tkc_gguf_meta_type"](self._s, key)
        if t == _STRING:
            n = _C["tkc_gguf_meta_str_len"](self._s, key)
            return ctypes.string_at(_C["tkc_gguf_meta_str"](self._s, key), n).decode(errors="replace")
        if t == _ARRAY:
            et, n, data = _I(), _I64(), _P()
            check(_C["tkc_gguf_meta_array"](self._s, key, ctypes.byref(et), ctypes.byref(n), ctypes.byref(data)))
            if et.value == _STRING:
                return [_C["tkc_gguf_meta_array_str"](self._s, key, i).decode(errors="replace") for i in range(n.value)]
            vals = list(ctypes.cast(data, ctypes.POINTER(_GGUF_CTYPES[et.value]))[:n.value]) if n.value else []
            return [bool(v) for v in vals] if et.value == _BOOL else vals
        if t in _FLOAT:
            v = _D()
            check(_C["tkc_gguf_meta_float"](self._s, key, ctypes.byref(v)))
            return v.value
        v = _I64()
        if _C["tkc_gguf_meta_int"](self._s, key, ctypes.byref(v)) != 0:  # a uint64 above INT64_MAX
            f = _D()
            check(_C["tkc_gguf_meta_float"](self._s, key, ctypes.byref(f)))
            return int(f.value)
        return bool(v.value) if t == _BOOL else v.value

    def _live(self):
        if not self._s:
            raise ValueError("the state is closed")
        return self._s

    def __getitem__(self, name):
        from ._tensor import Tensor
        p = _C["tkc_state_get"](self._live(), name.encode())
        if not p:
            from ._lib import last_error
            raise KeyError(str(last_error()))
        return Tensor._wrap(self._ctx, p)

    def __contains__(self, name):
        return name in self.names

    def __iter__(self):
        return iter(self.names)

    def __len__(self):
        return len(self.names)

    def keys(self):
        return list(self.names)

    def items(self):
        return [(n, self[n]) for n in self.names]

    def matmul(self, name, x, int8=False):
        """x @ self[name].T for a 2-D (out, in) weight (tkc_state_matmul). int8=True: for quantized weights (Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q4_K, Q5_K, Q6_K)
        weights, x is quantized to int8 per 32 values and the products are int8 dot products, as
        llama.cpp computes them (within about 1% of the float product; other types ignore it)."""
        from ._tensor import Tensor
        if not isinstance(x, Tensor):
            x = self._ctx.tensor(np.asarray(x, dtype=np.float32))
        p = check_ptr(_C["tkc_state_matmul"](self._live(), name.encode(), x._p, 1 if int8 else 0))
        return Tensor._wrap(self._ctx, p)

    def shape(self, name):
        """(dtype, shape) of the tensor self[name] gives, without building it."""
        dt, nd, shape = _I(), _I(), (_I64 * 8)()
        check(_C["tkc_state_shape"](self._live(), name.encode(), ctypes.byref(dt), ctypes.byref(nd), shape))
        return dtypes.BY_CODE[dt.value], tuple(shape[:nd.value])

    def ggml_type(self, name):
        """The GGML type id of a GGUF tensor (0 F32, 1 F16, 8 Q8_0 ...); -1 for safetensors."""
        if name not in self.names:
            raise KeyError(name)
        return _C["tkc_gguf_tensor_type"](self._live(), name.encode())

    def close(self):
        if self._s and not self._ctx.closed:
            _C["tkc_state_free"](self._s)
        self._s = None

    def __repr__(self):
        return "<tkc.io.State %d tensors, %d metadata>" % (len(self.names), len(self.metadata))


def load_safetensors(path, ctx=None):
    """The tensors of a safetensors file on ctx (None: the default context)."""
    c = ctx or default_context()
    return State(_C["tkc_safetensors_load"](c._live(), str(path).encode()), c)


def load_gguf(path, ctx=None):
    """The tensors and metadata of a GGUF file (version 2 or 3) on ctx (None: the default context)."""
    c = ctx or default_context()
    return State(_C["tkc_gguf_load"](c._live(), str(path).encode()), c)


def save_safetensors(path, tensors):
    """Writes {name: Tensor} to a safetensors file (the tensors are realized first)."""
    names = list(tensors)
    arr_n = (_S * max(len(names), 1))(*[n.encode() for n in names])
    arr_t = (_P * max(len(names), 1))(*[tensors[n]._p for n in names])
    check(_C["tkc_safetensors_save"](str(path).encode(), len(names), arr_n, arr_t))


# ---------------------------------------------------------------- tokenizer (tkc_tokenizer_*)

from ._lib import last_error as _last_error  # noqa: E402

_I32 = ctypes.c_int32
for _name, _res, _args in [
    ("tkc_tokenizer_from_gguf", _P, [_P]), ("tkc_tokenizer_free", None, [_P]),
    ("tkc_tokenizer_encode", _I, [_P, ctypes.c_char_p, ctypes.c_size_t, _I, ctypes.POINTER(_I32), _I]),
    ("tkc_tokenizer_decode", _I, [_P, ctypes.POINTER(_I32), _I, ctypes.c_char_p, ctypes.c_size_t]),
    ("tkc_tokenizer_piece", ctypes.c_void_p, [_P, _I32, ctypes.POINTER(ctypes.c_size_t)]),
    ("tkc_tokenizer_token_text", _S, [_P, _I32]), ("tkc_tokenizer_vocab_size", _I, [_P]),
    ("tkc_tokenizer_model", _S, [_P]), ("tkc_tokenizer_bos", _I32, [_P]), ("tkc_tokenizer_eos", _I32, [_P]),
    ("tkc_tokenizer_add_bos", _I, [_P]), ("tkc_tokenizer_find", _I32, [_P, _S]),
]:
    _f = getattr(lib._cdll, _name)
    _f.restype, _f.argtypes = _res, _args
    _C[_name] = _f


class Tokenizer(Owned):
    """The text tokenizer of a GGUF file's vocabulary (SentencePiece "llama" or byte-level BPE "gpt2";
    see tkc/io.h). It copies what it needs: the state may be closed afterwards.

        tok = tkc.io.Tokenizer(tkc.io.load_gguf("model.gguf"))
        ids = tok.encode("Hello world")          # add_bos: None = as the file says, True, False
        tok.decode(ids) == "Hello world"
        tok.piece(ids[1]), tok.find("\u2581the"), tok.vocab_size, tok.bos, tok.eos, tok.add_bos, tok.model"""

    def __init__(self, state):
        self._t = check_ptr(_C["tkc_tokenizer_from_gguf"](state._live()))
        self.vocab_size = _C["tkc_tokenizer_vocab_size"](self._t)
        self.model = _C["tkc_tokenizer_model"](self._t).decode()
        self.bos, self.eos = _C["tkc_tokenizer_bos"](self._t), _C["tkc_tokenizer_eos"](self._t)
        self.add_bos = bool(_C["tkc_tokenizer_add_bos"](self._t))  # the file's add_bos_token

    def _live(self):
        if not self._t:
            raise ValueError("the tokenizer is closed")
        return self._t

    def encode(self, text, add_bos=None):
        """Token ids of text (str, encoded as UTF-8, or bytes)."""
        data = text.encode() if isinstance(text, str) else bytes(text)
        flag = -1 if add_bos is None else int(bool(add_bos))
        n = _C["tkc_tokenizer_encode"](self._live(), data, len(data), flag, None, 0)
        if n < 0:
            raise _last_error()
        ids = (_I32 * max(n, 1))()
        check(0 if _C["tkc_tokenizer_encode"](self._t, data, len(data), flag, ids, n) == n else -1)
        return list(ids[:n])

    def decode_bytes(self, ids):
        arr = (_I32 * max(len(ids), 1))(*ids)
        n = _C["tkc_tokenizer_decode"](self._live(), arr, len(ids), None, 0)
        if n < 0:
            raise _last_error()
        buf = ctypes.create_string_buffer(n + 1)
        _C["tkc_tokenizer_decode"](self._t, arr, len(ids), buf, n + 1)
        return buf.raw[:n]

    def decode(self, ids, errors="replace"):
        """The text of ids (str; bytes that are no valid UTF-8 as `errors` says)."""
        return self.decode_bytes(ids).decode("utf-8", errors=errors)

    def piece(self, id):
        """Token id's bytes in decoded text."""
        n = ctypes.c_size_t()
        p = check_ptr(_C["tkc_tokenizer_piece"](self._live(), id, ctypes.byref(n)))
        return ctypes.string_at(p, n.value)

    def token_text(self, id):
        """Token id's text as stored in the vocabulary."""
        return check_ptr(_C["tkc_tokenizer_token_text"](self._live(), id)).decode(errors="replace")

    def find(self, text):
        """The id of an exact vocabulary text, None when there is none."""
        i = _C["tkc_tokenizer_find"](self._live(), text.encode() if isinstance(text, str) else bytes(text))
        return None if i < 0 else i

    def __len__(self):
        return self.vocab_size

    def close(self):
        if self._t:
            _C["tkc_tokenizer_free"](self._t)
        self._t = None

