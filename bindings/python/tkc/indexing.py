"""Tensor.__getitem__: numpy's basic indexing as views, plus one integer array / tensor index.

Ints (negative count from the end; out of range is IndexError), slices with any step (a negative
step flips the axis; a step > 1 pads the axis to a multiple of the step, reshapes it to (n, step)
and keeps column 0, as tinygrad), None (a new axis) and Ellipsis become one flip, one shrink, one
pad/reshape/shrink for the steps and a final reshape. One integer list / ndarray / Tensor index
selects along its axis with tkc_index_select (numpy's placement of the result's dims); boolean
masks and several array indices are not supported (IndexError). There is no __setitem__.
"""
import operator

import numpy as np


def index_array(x):
    """x as an integer ndarray index (int32 when the values fit)."""
    arr = np.asarray(x)
    if arr.size == 0 and arr.dtype.kind == "f":  # [] comes out as float64
        arr = arr.astype(np.int32)
    if arr.dtype.kind not in "iu":
        raise IndexError("only integer arrays are valid tensor indices (boolean masks are not supported), not %s" % arr.dtype)
    if arr.size == 0 or (arr.min() >= -2 ** 31 and arr.max() < 2 ** 31):
        arr = arr.astype(np.int32)
    return arr


def _is_int(k):
    return isinstance(k, (int, np.integer)) and not isinstance(k, (bool, np.bool_))


def _expand_ellipsis(key, ndim):
    ells = [i for i, k in enumerate(key) if k is Ellipsis]
    if len(ells) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    used = sum(1 for k in key if k is not None and k is not Ellipsis)
    if used > ndim:
        raise IndexError("too many indices for tensor: tensor is %d-dimensional, but %d were indexed" % (ndim, used))
    fill = (slice(None),) * (ndim - used)
    return key[:ells[0]] + fill + key[ells[0] + 1:] if ells else key + fill


def getitem(t, key):
    from ._tensor import Tensor
    shape = t.shape
    key = _expand_ellipsis(key if isinstance(key, tuple) else (key,), len(shape))
    flips, ranges, steps, out_shape = [], [], [], []
    adv, adv_pos, int_pos = None, [], []  # the array index (output axis, index), key positions of it and of ints
    dim = 0
    for pos, k in enumerate(key):
        if k is None:
            out_shape.append(1)
            continue
        n = shape[dim]
        if isinstance(k, slice):
            start, stop, step = k.indices(n)
            length = len(range(start, stop, step))
            if step < 0:
                flips.append(dim)
                start, step = n - 1 - start, -step
            if length <= 1:
                start, step = (start, 1) if length else (0, 1)
            ranges.append((start, start + (length - 1) * step + 1 if length else 0))
            steps.append((length, step))
            out_shape.append(length)
        elif _is_int(k):
            i = operator.index(k)
            if not -n <= i < n:
                raise IndexError("index %d is out of bounds for axis %d with size %d" % (i, dim, n))
            i %= n
            ranges.append((i, i + 1))
            steps.append((1, 1))
            int_pos.append(pos)
        elif isinstance(k, (Tensor, list, tuple, np.ndarray)):
            if adv is not None:
                raise IndexError("only one integer array / tensor index is supported")
            if not isinstance(k, Tensor):
                k = index_array(k)
                bad = k[(k < -n) | (k >= n)]
                if bad.size:
                    raise IndexError("index %d is out of bounds for axis %d with size %d" % (bad.flat[0], dim, n))
            adv = (len(out_shape), k)
            adv_pos.append(pos)
            ranges.append((0, n))
            steps.append((n, 1))
            out_shape.append(n)
        else:
            raise IndexError("only integers, slices (`:`), ellipsis (`...`), None and integer arrays / tensors are valid indices, "
                             "not %r" % type(k).__name__)
        dim += 1

    x = t
    if flips:
        x = x.flip(flips)
    if any(r != (0, n) for r, n in zip(ranges, shape)):
        x = x.shrink(ranges)
    if any(step > 1 for _, step in steps):
        x = x.pad([(0, length * step - (e - s)) for (s, e), (length, step) in zip(ranges, steps)])
        split = [d for length, step in steps for d in ((length, step) if step > 1 else (length,))]
        keep = [r for _, step in steps for r in (((0, None), (0, 1)) if step > 1 else ((0, None),))]
        x = x.reshape(split)
        x = x.shrink([(a, split[i] if b is None else b) for i, (a, b) in enumerate(keep)])
    if x.shape != tuple(out_shape):
        x = x.reshape(out_shape)
    if adv is not None:
        axis, index = adv
        x = x.index_select(axis, index)
        positions = sorted(adv_pos + int_pos)
        if positions != list(range(positions[0], positions[-1] + 1)):  # numpy: split advanced indices go first
            nd = index.ndim
            x = x.permute(list(range(axis, axis + nd)) + [i for i in range(x.ndim) if not axis <= i < axis + nd])
    return x
