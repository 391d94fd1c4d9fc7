"""Module-level functions: tkc.exp(x), tkc.matmul(a, b), ... for every Tensor op (x may be array-like)."""
from .context import default_context
from ._tensor import _BINARY, _UNARY, Tensor


def tensor(data, dtype=None, ctx=None):
    """A tensor holding a copy of data (see Context.tensor); ctx None = default_context()."""
    return (ctx or default_context()).tensor(data, dtype)


def from_numpy(arr, ctx=None, dtype=None):
    """Tensor.from_numpy: one copy of arr."""
    return Tensor.from_numpy(arr, ctx=ctx, dtype=dtype)


def _function(name):
    method = getattr(Tensor, name)

    def function(x, *args, **kwargs):
        if not isinstance(x, Tensor):  # made in the ctx of a tensor argument (as a weak scalar), else the default one
            other = next((a for a in args if isinstance(a, Tensor)), None)
            x = other._operand(x) if other is not None else tensor(x)
        return method(x, *args, **kwargs)
    function.__name__, function.__qualname__, function.__doc__ = name, name, method.__doc__
    return function


NAMES = _UNARY + list(_BINARY) + (
    "cast bitcast where lerp clamp clip gelu leaky_relu elu softplus sum max min mean prod logsumexp any all var std argmax "
    "argmin cumsum cummax cumprod reshape permute transpose expand pad shrink flip squeeze unsqueeze flatten repeat tril triu "
    "split chunk gather index_select scatter scatter_add one_hot sort topk softmax log_softmax dot layer_norm rms_norm "
    "batch_norm conv2d conv1d conv_transpose2d max_pool2d avg_pool2d interpolate scaled_dot_product_attention nll_loss "
    "cross_entropy realize kernel_count kernels_source").split()
globals().update({name: _function(name) for name in NAMES})
