"""DLPack for host memory, with ctypes: the DLManagedTensor structs and the "dltensor" PyCapsule.

Export (Tensor.__dlpack__) realizes the tensor into a host buffer and hands that out (a copy:
tkc buffers live on the ctx's device); import (from_dlpack) copies a producer's host (kDLCPU)
tensor, any strides, into a new tkc tensor, then releases it. bfloat16 travels as kDLBfloat.
"""
import ctypes

import numpy as np

from . import dtypes

HOST_DEVICE = (1, 0)  # (kDLCPU, device 0)
_DL_INT, _DL_UINT, _DL_FLOAT, _DL_BFLOAT, _DL_BOOL = 0, 1, 2, 4, 6
_KIND_CODE = {"i": _DL_INT, "u": _DL_UINT, "f": _DL_FLOAT, "b": _DL_BOOL}


class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", DLDevice), ("ndim", ctypes.c_int32), ("dtype", DLDataType),
                ("shape", ctypes.POINTER(ctypes.c_int64)), ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


class DLManagedTensor(ctypes.Structure):
    pass


_DELETER = ctypes.CFUNCTYPE(None, ctypes.POINTER(DLManagedTensor))
DLManagedTensor._fields_ = [("dl_tensor", DLTensor), ("manager_ctx", ctypes.c_void_p), ("deleter", _DELETER)]

# pythonapi[name] makes a new function object each time: the argtypes set here leave ctypes.pythonapi.<name> alone
_CAPSULE_DESTRUCTOR = ctypes.CFUNCTYPE(None, ctypes.c_void_p)


def _capi(name, restype, argtypes):
    f = ctypes.pythonapi[name]
    f.restype, f.argtypes = restype, argtypes
    return f


_capsule_new = _capi("PyCapsule_New", ctypes.py_object, [ctypes.c_void_p, ctypes.c_char_p, _CAPSULE_DESTRUCTOR])
_capsule_pointer = _capi("PyCapsule_GetPointer", ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p])
_capsule_set_name = _capi("PyCapsule_SetName", ctypes.c_int, [ctypes.py_object, ctypes.c_char_p])
# for the destructor, which gets the dying capsule as a bare pointer (no py_object: no new references)
_raw_is_valid = _capi("PyCapsule_IsValid", ctypes.c_int, [ctypes.c_void_p, ctypes.c_char_p])
_raw_pointer = _capi("PyCapsule_GetPointer", ctypes.c_void_p, [ctypes.c_void_p, ctypes.c_char_p])

_exported = {}  # manager_ctx -> what keeps an exported tensor's memory alive


@_DELETER
def _delete(managed):
    _exported.pop(managed.contents.manager_ctx, None)


@_CAPSULE_DESTRUCTOR
def _capsule_destructor(capsule):
    # a capsule still named "dltensor" was never consumed: its consumer did not call the deleter
    if _raw_is_valid(capsule, b"dltensor"):
        _exported.pop(DLManagedTensor.from_address(_raw_pointer(capsule, b"dltensor")).manager_ctx, None)


class _Export:
    """The memory behind one exported tensor: the data, its shape array and the managed struct."""

    def __init__(self, data, dt):
        self.data = data
        self.shape = (ctypes.c_int64 * max(data.ndim, 1))(*data.shape)
        self.managed = m = DLManagedTensor()
        code = _DL_BFLOAT if dt is dtypes.bfloat16 else _KIND_CODE[dt.kind]
        m.dl_tensor = DLTensor(data.ctypes.data, DLDevice(*HOST_DEVICE), data.ndim, DLDataType(code, dt.itemsize * 8, 1),
                               self.shape, None, 0)
        m.manager_ctx = id(self)
        m.deleter = _delete


def to_dlpack(t, dl_device=None, copy=None):
    """A "dltensor" capsule holding a host copy of t."""
    if copy is False:
        raise BufferError("a tkc tensor is exported as a host copy: copy=False cannot be honoured")
    if dl_device is not None and tuple(dl_device) != HOST_DEVICE:
        raise BufferError("tkc exports host (kDLCPU) memory only, not device %r" % (dl_device,))
    data = t.numpy() if t.dtype is not dtypes.bfloat16 else t.bitcast(dtypes.uint16).numpy()
    export = _Export(data, t.dtype)
    _exported[id(export)] = export
    return _capsule_new(ctypes.addressof(export.managed), b"dltensor", _capsule_destructor)


def _dtype_of(dl):
    if dl.lanes != 1:
        raise BufferError("DLPack: vector dtypes (lanes %d) are not supported" % dl.lanes)
    if dl.code == _DL_BFLOAT and dl.bits == 16:
        return dtypes.bfloat16
    kinds = {_DL_INT: "int", _DL_UINT: "uint", _DL_FLOAT: "float"}
    name = "bool" if dl.code == _DL_BOOL and dl.bits == 8 else "%s%d" % (kinds.get(dl.code, "?"), dl.bits)
    if name not in dtypes.BY_NAME:
        raise BufferError("DLPack: no tkc dtype for type code %d with %d bits" % (dl.code, dl.bits))
    return dtypes.BY_NAME[name]


def _host_view(dl, dt):
    """A numpy view of a DLTensor's memory, as dt's storage dtype."""
    npdt = dtypes.storage_np(dt)
    shape = tuple(dl.shape[i] for i in range(dl.ndim))
    if dl.strides:
        strides = tuple(dl.strides[i] * npdt.itemsize for i in range(dl.ndim))
    else:
        strides = tuple(int(np.prod(shape[i + 1:], dtype=np.int64)) * npdt.itemsize for i in range(dl.ndim))
    if 0 in shape:
        return np.empty(shape, npdt)
    lo = sum(min(0, s * (n - 1)) for s, n in zip(strides, shape))
    hi = sum(max(0, s * (n - 1)) for s, n in zip(strides, shape)) + npdt.itemsize
    buf = (ctypes.c_char * (hi - lo)).from_address(dl.data + dl.byte_offset + lo)
    return np.ndarray(shape, npdt, buffer=buf, offset=-lo, strides=strides)


def from_dlpack(obj, ctx=None):
    """A tkc tensor holding a copy of obj, any object with __dlpack__ on host memory (numpy arrays ...)."""
    from ._tensor import Tensor
    from .context import default_context
    if hasattr(obj, "__dlpack_device__"):
        dev = tuple(obj.__dlpack_device__())
        if dev[0] not in (1, 3):  # kDLCPU, kDLCUDAHost
            raise BufferError("from_dlpack: tkc takes host memory only, not DLPack device %r" % (dev,))
    capsule = obj.__dlpack__()
    ptr = _capsule_pointer(capsule, b"dltensor")
    managed = DLManagedTensor.from_address(ptr)
    try:
        dl = managed.dl_tensor
        dt = _dtype_of(dl.dtype)
        return Tensor._from_storage(ctx or default_context(), _host_view(dl, dt), dt)
    finally:
        _capsule_set_name(capsule, b"used_dltensor")
        if managed.deleter:
            managed.deleter(ctypes.cast(ptr, ctypes.POINTER(DLManagedTensor)))
