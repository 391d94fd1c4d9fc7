"""The NN ops of tkc/ops_nn.h as Tensor methods (a mixin of Tensor): norms, convolutions, pooling,
resampling, attention, losses. Layouts are torch's (NCHW, OIHW); stride / padding / dilation take an
int or one value per spatial axis."""
import numpy as np

import ctypes

from ._lib import check, ints, lib

_REDUCTIONS = {"none": 0, "mean": 1, "sum": 2}


def _pair(x, n=2):
    """None stays None (the C default); an int is repeated n times; a sequence becomes a C int[]."""
    if x is None:
        return None
    return ints([int(x)] * n if isinstance(x, (int, np.integer)) else [int(v) for v in x])


def _opt(x):
    return None if x is None else x._p


class NNOps:
    """Methods for Tensor (which provides _p, _new and _index_operand)."""

    __slots__ = ()

    def dropout(self, p=0.5, training=True):
        """Zeros each element with probability p and scales the rest by 1/(1-p) when training (a mask from
        the context's generator, new at each jit replay); the tensor itself otherwise."""
        return self._new(lib.tkc_dropout(self._p, float(p), 1 if training else 0))

    def quantize_int8_rows(self):
        """(q, scale) of a 2-D float weight matrix: int8 q = round(w / scale[:, None]) (half to even) with
        scale = max|row| / 127 (float32, one per row), both realized (tkc_quantize_int8_rows)."""
        q, sc = ctypes.c_void_p(), ctypes.c_void_p()
        check(lib.tkc_quantize_int8_rows(self._p, ctypes.byref(q), ctypes.byref(sc)))
        return self._new(q.value), self._new(sc.value)

    def dequantize_int8_rows(self, scale):
        """float32 q * scale[:, None] for int8 q (this tensor), lazy: it fuses into the matmul that reads it."""
        return self._new(lib.tkc_dequantize_int8_rows(self._p, scale._p))

    def layer_norm(self, weight=None, bias=None, eps=1e-5, naxes=None):
        """Over the last naxes dims (default: weight's ndim, else 1)."""
        naxes = naxes or (weight.ndim if weight is not None else 1)
        return self._new(lib.tkc_layer_norm(self._p, int(naxes), _opt(weight), _opt(bias), float(eps)))

    def rms_norm(self, weight=None, eps=1e-6, naxes=None):
        naxes = naxes or (weight.ndim if weight is not None else 1)
        return self._new(lib.tkc_rms_norm(self._p, int(naxes), _opt(weight), float(eps)))

    def batch_norm(self, running_mean, running_var, weight=None, bias=None, eps=1e-5):
        """Inference batch norm over axis 1."""
        return self._new(lib.tkc_batch_norm(self._p, running_mean._p, running_var._p, _opt(weight), _opt(bias), float(eps)))

    def conv2d(self, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
        """NCHW x OIHW; stride/dilation an int or (h, w); padding an int, (h, w) or (top, bottom, left, right).
        Uses tkc_conv2d for the square cases, tkc_conv2d_ex for the rest."""
        simple = all(isinstance(v, (int, np.integer)) for v in (stride, padding)) and dilation == 1 and groups == 1
        if simple:
            return self._new(lib.tkc_conv2d(self._p, weight._p, _opt(bias), int(stride), int(padding)))
        pad = [padding] * 4 if isinstance(padding, (int, np.integer)) else list(padding)
        if len(pad) == 2:
            pad = [pad[0], pad[0], pad[1], pad[1]]
        return self._new(lib.tkc_conv2d_ex(self._p, weight._p, _opt(bias), _pair(stride), _pair(pad, 4), _pair(dilation), int(groups)))

    def conv2d_weight_layout(self):
        """This OIHW weight copied into the layout conv2d's kernels read (same values, a lazy tensor):
        realize it once for a weight used in many conv2d calls, which then read it without a copy."""
        return self._new(lib.tkc_conv2d_weight_layout(self._p))

    def matmul_weight_layout(self):
        """This (K, N) matmul right operand copied into the layout matmul's kernels read (same values,
        a lazy tensor): realize it once for a weight used in many matmuls, which then read it as it is."""
        return self._new(lib.tkc_matmul_weight_layout(self._p))

    def conv1d(self, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
        """NCL x OIK; padding an int or (left, right)."""
        left, right = (padding, padding) if isinstance(padding, (int, np.integer)) else padding
        return self._new(lib.tkc_conv1d(self._p, weight._p, _opt(bias), int(stride), int(left), int(right), int(dilation), int(groups)))

    def conv_transpose2d(self, weight, bias=None, stride=1, padding=0, output_padding=0, dilation=1, groups=1):
        """NCHW x IOHW (torch's conv_transpose2d)."""
        return self._new(lib.tkc_conv_transpose2d(self._p, weight._p, _opt(bias), _pair(stride), _pair(padding), _pair(output_padding),
                                                  _pair(dilation), int(groups)))

    def max_pool2d(self, kernel, stride=None, padding=0, dilation=1, ceil_mode=False):
        return self._new(lib.tkc_max_pool2d(self._p, _pair(kernel), _pair(stride), _pair(padding), _pair(dilation), int(ceil_mode)))

    def avg_pool2d(self, kernel, stride=None, padding=0, ceil_mode=False, count_include_pad=True):
        return self._new(lib.tkc_avg_pool2d(self._p, _pair(kernel), _pair(stride), _pair(padding), int(ceil_mode), int(count_include_pad)))

    def interpolate(self, size, mode="nearest", align_corners=False):
        """Resize the last two dims to size (h, w); mode "nearest" or "bilinear"."""
        h, w = (size, size) if isinstance(size, (int, np.integer)) else size
        modes = {"nearest": 0, "bilinear": 1}
        return self._new(lib.tkc_interpolate(self._p, int(h), int(w), modes[mode], int(align_corners)))

    def scaled_dot_product_attention(self, key, value, mask=None, causal=False, scale=None):
        """softmax(self @ key^T * scale + mask) @ value (scale None = 1/sqrt(E))."""
        return self._new(lib.tkc_scaled_dot_product_attention(self._p, key._p, value._p, _opt(mask), int(causal),
                                                              0.0 if scale is None else float(scale)))

    def nll_loss(self, target, reduction="mean"):
        target = self._index_operand(target)
        return self._new(lib.tkc_nll_loss(self._p, target._p, _REDUCTIONS[reduction]))

    def cross_entropy(self, target, reduction="mean"):
        """logits (N, C), integer target (N); reduction "none", "mean" or "sum"."""
        target = self._index_operand(target)
        return self._new(lib.tkc_cross_entropy(self._p, target._p, _REDUCTIONS[reduction]))
