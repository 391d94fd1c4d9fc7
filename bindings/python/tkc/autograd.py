"""Functional gradients and realizing several tensors at once (tkc.h "gradients" and "running").

    x = ctx.tensor([1.0, 2.0]).requires_grad_()
    dx, = tkc.gradient((x * x).sum(), [x])     # 2x, accumulating nothing into x.grad
    tkc.realize_all(w, b, loss)                 # one schedule: what they share is computed once
"""
from ._lib import TP, check, lib
from ._tensor import Tensor
from .errors import make_error


def _tensors(ts, who):
    ts = list(ts[0]) if len(ts) == 1 and isinstance(ts[0], (list, tuple)) else list(ts)
    for k, t in enumerate(ts):
        if not isinstance(t, Tensor):
            raise TypeError("%s: argument %d is a %s, not a tkc Tensor" % (who, k, type(t).__name__))
    return ts


def gradient(y, wrt):
    """[d y / d x for x in wrt] as new lazy tensors (zeros for an x y does not depend on); accumulates
    nothing into .grad. y is unrealized or built from requires-grad leaves."""
    wrt = _tensors(tuple(wrt), "gradient")
    if not wrt:
        return []
    if any(x.ctx is not y.ctx for x in wrt):
        raise make_error("EINVAL", "gradient: the tensors belong to different contexts")
    ins = (TP._type_ * len(wrt))(*[x._p for x in wrt])
    outs = (TP._type_ * len(wrt))()
    check(lib.tkc_gradient(y._p, len(wrt), ins, outs))
    return [Tensor._wrap(y.ctx, outs[k]) for k in range(len(wrt))]


def realize_all(*tensors):
    """Computes the tensors (given as arguments or one list) in one schedule; returns them as a tuple."""
    ts = _tensors(tensors, "realize_all")
    if ts:
        arr = (TP._type_ * len(ts))(*[t._p for t in ts])
        check(lib.tkc_realize_all(len(ts), arr))
    return tuple(ts)
