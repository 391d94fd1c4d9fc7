"""Optimizers (tkc.h "optimizers", tinygrad's nn/optim.py) over tensors that require gradients.

    opt = tkc.optim.Adam([w, b], lr=3e-3)
    loss = model(x).cross_entropy(y)
    loss.backward(); opt.step(loss); opt.zero_grad()  # the loss realized with the step, before the update

(a lazy loss realized after step() on its own would read the updated parameters)

step() updates every parameter that has a gradient, and the optimizer's state, in place (assign), all
in one schedule; inside a tkc.Jit it is captured with the rest of the train step. The learning rate
lives on the device: setting opt.lr is seen by captured steps replayed afterwards. An optimizer holds
its own handles to the parameters and keeps its Context alive; close() (or closing the Context, or
dropping the last reference) frees it.
"""
from ._lib import TP, check, check_ptr, lib
from .errors import make_error


class Optimizer:
    """The common part: a tkc_optim made by _make(ctx, n, params_array)."""

    def __init__(self, params, lr, make):
        self.params = list(params)
        if not self.params:
            raise make_error("EINVAL", "%s: needs at least one parameter" % type(self).__name__)
        self._ctx, self._h, self._lr = self.params[0].ctx, None, float(lr)
        if any(p.ctx is not self._ctx for p in self.params):
            raise make_error("EINVAL", "%s: the parameters belong to different contexts" % type(self).__name__)
        arr = (TP._type_ * len(self.params))(*[p._p for p in self.params])
        self._h = check_ptr(make(self._ctx._live(), len(self.params), arr))
        self._ctx._own(self)  # freed before the ctx, should the ctx close first

    def _live(self):
        if not self._h:
            raise make_error("EINVAL", "%s: closed (or its context is)" % type(self).__name__)
        return self._h

    def step(self, *also):
        """Updates the parameters that have a gradient (and the state) in place, in one schedule; the
        tensors in also (the loss) are realized in it too, reading the parameters before the update."""
        if not also:
            check(lib.tkc_optim_step(self._live()))
            return
        arr = (TP._type_ * len(also))(*[t._p for t in also])
        check(lib.tkc_optim_step_realize(self._live(), len(also), arr))

    def zero_grad(self):
        """Fills the parameters' gradients with zeros (Tensor.zero_grad)."""
        check(lib.tkc_optim_zero_grad(self._live()))

    @property
    def lr(self):
        return self._lr

    @lr.setter
    def lr(self, value):
        check(lib.tkc_optim_set_lr(self._live(), float(value)))
        self._lr = float(value)

    def close(self):
        """Frees the C optimizer (idempotent); the parameters stay as they are."""
        if self._h and self._ctx._ptr:
            lib.tkc_optim_free(self._h)
        self._h = None

    def __del__(self):
        try:
            self.close()
        except Exception:  # a half-built object or interpreter shutdown
            pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


class SGD(Optimizer):
    """g += weight_decay p;  b = momentum b + g;  g = nesterov ? g + momentum b : b;  p -= lr g
    (momentum 0: no buffer)."""

    def __init__(self, params, lr=1e-3, momentum=0.0, weight_decay=0.0, nesterov=False):
        self.momentum, self.weight_decay, self.nesterov = float(momentum), float(weight_decay), bool(nesterov)
        super().__init__(params, lr, lambda c, n, arr: lib.tkc_sgd_new(c, n, arr, float(lr), self.momentum, self.weight_decay,
                                                                       int(self.nesterov)))


class Adam(Optimizer):
    """g += weight_decay p;  m = b1 m + (1-b1) g;  v = b2 v + (1-b2) g^2;
    p -= lr m / (1-b1^t) / (sqrt(v / (1-b2^t)) + eps)."""

    _decoupled = 0

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0):
        self.betas, self.eps, self.weight_decay = (float(betas[0]), float(betas[1])), float(eps), float(weight_decay)
        super().__init__(params, lr, lambda c, n, arr: lib.tkc_adam_new(c, n, arr, float(lr), self.betas[0], self.betas[1], self.eps,
                                                                        self.weight_decay, self._decoupled))


class AdamW(Adam):
    """Adam with decoupled weight decay: p -= lr (m / (1-b1^t) / (sqrt(v / (1-b2^t)) + eps) + weight_decay p)."""

    _decoupled = 1

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.01):
        super().__init__(params, lr, betas, eps, weight_decay)
