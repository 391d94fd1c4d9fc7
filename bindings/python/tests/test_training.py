"""Training from Python: requires_grad / backward / grad / detach / zero_grad, tkc.gradient, assign,
realize_all, tkc.optim (SGD, Adam, AdamW against numpy implementations of include/tkc.h's formulas),
a train step captured by tkc.Jit, and the errors."""
import gc

import numpy as np
import pytest

import tkc

RNG = np.random.default_rng(7)


def numeric_grad(f, x, eps=1e-6):
    """Central differences of the float64 function f at x."""
    x = x.astype(np.float64)
    g = np.zeros_like(x)
    for k in range(x.size):
        d = np.zeros_like(x)
        d.flat[k] = eps
        g.flat[k] = (f(x + d) - f(x - d)) / (2 * eps)
    return g


def np_softmax(x, axis=-1):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


W34 = RNG.standard_normal((3, 4)).astype(np.float32).astype(np.float64)  # a fixed matrix the ops below multiply with

# name -> (the op on a tkc tensor x of shape (2, 3), the same op in numpy)
OPS = {
    "matmul": (lambda x, c: x @ c.tensor(W34.astype(np.float32)), lambda x: x @ W34),
    "relu_matmul": (lambda x, c: (x @ c.tensor(W34.astype(np.float32))).relu(), lambda x: np.maximum(x @ W34, 0)),
    "exp_log": (lambda x, c: ((x * x + 1).log() * x.exp()).sum(1, keepdim=True),
                lambda x: (np.log(x * x + 1) * np.exp(x)).sum(1, keepdims=True)),
    "tanh_sigmoid": (lambda x, c: (x.tanh() + x.sigmoid() * x).mean(1, keepdim=True),
                     lambda x: (np.tanh(x) + x / (1 + np.exp(-x))).mean(1, keepdims=True)),
    "div_sqrt": (lambda x, c: (x / (x * x + 2).sqrt()).sum(0, keepdim=True).reshape(3, 1).permute(1, 0),
                 lambda x: (x / np.sqrt(x * x + 2)).sum(0, keepdims=True).reshape(3, 1).T),
    "softmax": (lambda x, c: x.softmax(-1) @ c.tensor(W34.astype(np.float32)), lambda x: np_softmax(x) @ W34),
    "log_softmax": (lambda x, c: x.log_softmax(-1).sum(-1, keepdim=True), lambda x: np.log(np_softmax(x)).sum(-1, keepdims=True)),
    "max": (lambda x, c: x.max(1, keepdim=True) * 3, lambda x: x.max(1, keepdims=True) * 3),
}


@pytest.mark.parametrize("name", sorted(OPS))
def test_gradients_match_finite_differences(ctx, name):
    op, ref = OPS[name]
    xn = RNG.standard_normal((2, 3)).astype(np.float32)
    xn[0] = [0.5, -1.0, 2.0]  # a distinct maximum per row (max's gradient goes to it)
    x = ctx.tensor(xn)
    x.requires_grad = True
    assert x.requires_grad
    y = op(x, ctx)
    rn = np.random.default_rng(1).standard_normal(y.shape).astype(np.float32)  # weights: every output counts differently
    loss = (y * ctx.tensor(rn)).sum()
    rn = rn.astype(np.float64)
    loss.backward()
    want = numeric_grad(lambda v: (ref(v) * rn).sum(), xn)
    np.testing.assert_allclose(x.grad.numpy(), want, rtol=2e-3, atol=2e-4)
    np.testing.assert_allclose(loss.item(), (ref(xn.astype(np.float64)) * rn).sum(), rtol=1e-4, atol=1e-5)


def test_cross_entropy_gradient_closed_form(ctx):
    logits = RNG.standard_normal((4, 5)).astype(np.float32)
    target = np.array([0, 3, 4, 1], np.int32)
    x = ctx.tensor(logits).requires_grad_()
    x.cross_entropy(target).backward()
    want = np_softmax(logits.astype(np.float64))
    want[np.arange(4), target] -= 1
    np.testing.assert_allclose(x.grad.numpy(), want / 4, rtol=1e-4, atol=1e-6)


def test_broadcast_bias_and_two_leaves(ctx):
    xn, wn, bn = RNG.standard_normal((5, 3)), RNG.standard_normal((3, 2)), RNG.standard_normal(2)
    x, w, b = (ctx.tensor(a.astype(np.float32)) for a in (xn, wn, bn))
    w.requires_grad, b.requires_grad = True, True
    ((x @ w + b) ** 2).sum().backward()
    d = 2 * (xn @ wn + bn)  # d loss / d (x @ w + b)
    np.testing.assert_allclose(w.grad.numpy(), xn.T @ d, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(b.grad.numpy(), d.sum(0), rtol=1e-4, atol=1e-4)
    assert x.grad is None and not x.requires_grad  # not a leaf that asked for one


def test_accumulation_zero_grad_and_grad_none(ctx):
    x = ctx.tensor([1.0, -2.0, 3.0]).requires_grad_()
    assert x.grad is None  # no backward yet: None, and no error left behind
    (x * x).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [2, -4, 6])
    (x * 3).sum().backward()  # accumulates
    np.testing.assert_allclose(x.grad.numpy(), [5, -1, 9])
    assert x.zero_grad() is x
    np.testing.assert_array_equal(x.grad.numpy(), [0, 0, 0])  # zeros, as torch's set_to_none=False
    (x * x).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [2, -4, 6])
    x.grad = None  # torch's spelling, the same here: zeros
    np.testing.assert_array_equal(x.grad.numpy(), [0, 0, 0])
    with pytest.raises(TypeError):
        x.grad = x
    x.requires_grad = False
    assert not x.requires_grad and x.grad is None


def test_backward_after_the_loss_was_realized_and_intermediates_dropped(ctx):
    xn = np.array([0.5, 1.5, -1.0], np.float32)
    x = ctx.tensor(xn).requires_grad_()
    loss = ((x * 2).exp() + x).sum()  # the intermediate handles are freed at once by Python
    gc.collect()
    assert loss.item() == pytest.approx(float((np.exp(2 * xn) + xn).sum()), rel=1e-5)
    loss.backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * np.exp(2 * xn) + 1, rtol=1e-5)


def test_detach_stops_the_gradient(ctx):
    x = ctx.tensor([1.0, 2.0, 4.0]).requires_grad_()
    d = x.detach()
    np.testing.assert_array_equal(d.numpy(), [1, 2, 4])
    (d * x).sum().backward()  # as if d were a constant: the gradient is x, not 2x
    np.testing.assert_allclose(x.grad.numpy(), [1, 2, 4])
    with pytest.raises(tkc.TkcError, match="nothing the loss depends on requires a gradient"):
        (d * d).sum().backward()


def test_functional_gradient(ctx):
    xn, yn = np.array([1.0, 2.0, 3.0], np.float32), np.array([0.5, -1.0, 2.0], np.float32)
    x, y, z = ctx.tensor(xn).requires_grad_(), ctx.tensor(yn).requires_grad_(), ctx.tensor([7.0]).requires_grad_()
    f = (x * x * y).sum()
    dx, dy, dz = tkc.gradient(f, [x, y, z])
    np.testing.assert_allclose(dx.numpy(), 2 * xn * yn)
    np.testing.assert_allclose(dy.numpy(), xn * xn)
    np.testing.assert_array_equal(dz.numpy(), [0.0])  # f does not depend on z
    assert x.grad is None and y.grad is None  # accumulates nothing
    assert tkc.gradient(f, []) == []
    # y need not be built from requires-grad leaves while it is unrealized
    a = ctx.tensor([3.0])
    da, = tkc.gradient((a * a * a).sum(), [a])
    np.testing.assert_allclose(da.numpy(), [27.0])


def test_assign_in_place(ctx):
    w = ctx.tensor([1.0, 2.0, 3.0])
    view = w.reshape(3, 1)
    assert w.assign(w * 2 + 1) is w  # reads the old values
    np.testing.assert_array_equal(w.numpy(), [3, 5, 7])
    np.testing.assert_array_equal(view.numpy().ravel(), [3, 5, 7])  # the same buffer
    w.assign(0.5)  # a scalar is broadcast
    np.testing.assert_array_equal(w.numpy(), [0.5, 0.5, 0.5])
    w.assign(np.array([1, 2, 3], np.int64))  # data is converted to the dtype
    assert w.dtype == tkc.float32
    np.testing.assert_array_equal(w.numpy(), [1, 2, 3])
    with pytest.raises(tkc.TkcShapeError):
        w.assign(ctx.tensor([1.0, 2.0]))
    with pytest.raises(tkc.TkcError):
        (w * 2).reshape(3).shrink(((0, 2),)).assign(ctx.tensor([1.0, 2.0]))  # a view of a lazy result


def test_assign_into_a_view(ctx):
    base = np.arange(12, dtype=np.float32).reshape(4, 3)
    cache = ctx.tensor(base)
    alias = cache.reshape(12)
    row = cache.shrink(((2, 3), (0, 3)))
    assert row.assign(ctx.tensor([[-1.0, -2.0, -3.0]])) is row  # only that row is written
    want = base.copy()
    want[2] = [-1, -2, -3]
    np.testing.assert_array_equal(cache.numpy(), want)
    np.testing.assert_array_equal(alias.numpy(), want.ravel())  # every handle of the tensor sees it
    np.testing.assert_array_equal(row.numpy(), [[-1, -2, -3]])
    col = cache.permute(1, 0).shrink(((1, 2), (0, 4)))  # column 1, through a permute
    col.assign(col * 10)  # reading the view itself
    want[:, 1] *= 10
    np.testing.assert_array_equal(cache.numpy(), want)
    with pytest.raises(tkc.TkcError):
        cache.reshape(4, 1, 3).expand(4, 2, 3).assign(ctx.tensor(np.zeros((4, 2, 3), np.float32)))  # several elements are one


def test_assign_keeps_requires_grad_and_sgd_by_hand(ctx):
    wn = np.array([1.0, -2.0], np.float32)
    w = ctx.tensor(wn).requires_grad_()
    for _ in range(3):
        (w * w).sum().backward()
        w.assign(w.detach() - 0.25 * w.grad).realize()
        w.zero_grad()
        wn = wn - 0.25 * 2 * wn
    assert w.requires_grad
    np.testing.assert_allclose(w.numpy(), wn, rtol=1e-6)


def test_realize_all(ctx):
    a = ctx.tensor([1.0, 2.0])
    s, p = a + 1, a * 3
    assert tkc.realize_all(s, p) == (s, p)
    assert tkc.realize_all([s]) == (s,)
    assert tkc.realize_all() == ()
    assert s.kernel_count() == 0 and p.kernel_count() == 0
    np.testing.assert_array_equal(p.numpy(), [3, 6])
    w = ctx.tensor([1.0, 1.0])
    w.assign(w + s)
    tkc.realize_all(w)
    np.testing.assert_array_equal(w.numpy(), [3, 4])
    with pytest.raises(TypeError):
        tkc.realize_all(a, [1.0])


# ---------------------------------------------------------------- optimizers against numpy

def np_sgd(p, grads, lr, momentum=0.0, wd=0.0, nesterov=False):
    b = np.zeros_like(p)
    for g in grads:
        g = g + wd * p
        if momentum:
            b = momentum * b + g
            g = g + momentum * b if nesterov else b
        p = p - lr * g
    return p


def np_adam(p, grads, lrs, b1, b2, eps, wd, decoupled):
    m, v = np.zeros_like(p), np.zeros_like(p)
    for t, (g, lr) in enumerate(zip(grads, lrs), 1):
        if not decoupled:
            g = g + wd * p
        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * g * g
        p = p - lr * (m / (1 - b1 ** t) / (np.sqrt(v / (1 - b2 ** t)) + eps) + (wd * p if decoupled else 0))
    return p


P0 = np.array([[0.5, -1.5, 2.0], [1.0, 0.25, -0.75]])
TARGET = np.array([[1.0, 0.0, -1.0], [0.5, 0.5, 0.5]])


def run_steps(ctx, make_opt, steps=4, lrs=None):
    """Minimizes sum((p - TARGET)^3 / 3 + p^2) with the optimizer; returns (p after, the gradients seen)."""
    p = ctx.tensor(P0.astype(np.float32)).requires_grad_()
    opt = make_opt([p])
    grads = []
    for k in range(steps):
        if lrs is not None:
            opt.lr = lrs[k]
        cur = p.numpy().astype(np.float64)
        grads.append((cur - TARGET) ** 2 + 2 * cur)
        t = ctx.tensor(TARGET.astype(np.float32))
        ((p - t) ** 3 / 3 + p * p).sum().backward()
        opt.step()
        opt.zero_grad()
        assert not p.grad.numpy().any()  # zeros
    return p.numpy(), grads, opt


@pytest.mark.parametrize("momentum,wd,nesterov", [(0.0, 0.0, False), (0.9, 0.0, False), (0.9, 0.1, True), (0.0, 0.05, False)])
def test_sgd_matches_numpy(ctx, momentum, wd, nesterov):
    got, grads, opt = run_steps(ctx, lambda ps: tkc.optim.SGD(ps, lr=0.05, momentum=momentum, weight_decay=wd, nesterov=nesterov))
    # the gradients were computed from tkc's parameters: replay the update rule on them in numpy
    np.testing.assert_allclose(got, np_sgd(P0, grads, 0.05, momentum, wd, nesterov), rtol=1e-5, atol=1e-5)
    assert opt.lr == 0.05
    opt.close()


@pytest.mark.parametrize("cls,wd", [(tkc.optim.Adam, 0.0), (tkc.optim.Adam, 0.1), (tkc.optim.AdamW, 0.01), (tkc.optim.AdamW, 0.2)])
def test_adam_and_adamw_match_numpy(ctx, cls, wd):
    lrs = [0.1, 0.1, 0.02, 0.05]  # opt.lr changes between steps
    got, grads, _ = run_steps(ctx, lambda ps: cls(ps, lr=0.1, betas=(0.8, 0.99), eps=1e-6, weight_decay=wd), lrs=lrs)
    want = np_adam(P0, grads, lrs, 0.8, 0.99, 1e-6, wd, cls is tkc.optim.AdamW)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_optimizer_defaults():
    with tkc.Context("CPU") as c:
        p = c.tensor([1.0]).requires_grad_()
        assert tkc.optim.AdamW([p]).weight_decay == 0.01
        a = tkc.optim.Adam([p])
        assert (a.lr, a.betas, a.eps, a.weight_decay) == (1e-3, (0.9, 0.999), 1e-8, 0.0)
        s = tkc.optim.SGD([p], lr=0.1)
        assert (s.momentum, s.weight_decay, s.nesterov) == (0.0, 0.0, False)


def test_step_skips_parameters_without_a_gradient(ctx):
    a, b = ctx.tensor([1.0, 2.0]).requires_grad_(), ctx.tensor([5.0]).requires_grad_()
    opt = tkc.optim.SGD([a, b], lr=0.5)
    (a * a).sum().backward()
    opt.step()
    np.testing.assert_allclose(a.numpy(), [0.0, 0.0])
    np.testing.assert_array_equal(b.numpy(), [5.0])


def test_optimizer_lifetime():
    c = tkc.Context("CPU")
    p = c.tensor([1.0, 2.0]).requires_grad_()
    opt = tkc.optim.SGD([p], lr=1.0)
    del p  # the optimizer holds its own handle
    gc.collect()
    (opt.params[0] * 1).sum().backward()
    opt.step()
    np.testing.assert_array_equal(opt.params[0].numpy(), [0.0, 1.0])
    c.close()  # frees the optimizer first
    with pytest.raises(tkc.TkcError, match="closed"):
        opt.step()
    opt.close()  # and again: nothing to do
    with tkc.Context("CPU") as c2:
        q = c2.tensor([1.0]).requires_grad_()
        with tkc.optim.Adam([q]) as o:
            assert o._h
        assert not o._h


def test_optimizer_errors(ctx):
    frozen = ctx.tensor([1.0, 2.0])
    with pytest.raises(tkc.TkcError, match="does not require a gradient"):
        tkc.optim.SGD([frozen], lr=0.1)
    with pytest.raises(tkc.TkcError):
        tkc.optim.SGD([], lr=0.1)
    p = ctx.tensor([1.0]).requires_grad_()
    with pytest.raises(tkc.TkcError, match="betas"):
        tkc.optim.Adam([p], betas=(1.5, 0.9))
    with pytest.raises(tkc.TkcError, match="Nesterov"):
        tkc.optim.SGD([p], lr=0.1, nesterov=True)
    opt = tkc.optim.SGD([p], lr=0.1)
    with pytest.raises(tkc.TkcError, match="learning rate"):
        opt.lr = -1.0
    assert opt.lr == 0.1
    with tkc.Context("CPU") as other:
        q = other.tensor([1.0]).requires_grad_()
        with pytest.raises(tkc.TkcError, match="different contexts"):
            tkc.optim.SGD([p, q], lr=0.1)


# ---------------------------------------------------------------- a captured train step

def test_jit_train_step_matches_eager_numpy():
    xs = RNG.standard_normal((6, 8, 3)).astype(np.float32)  # 6 batches of 8 rows
    ys = (xs @ np.array([1.0, -2.0, 0.5], np.float32) + 0.3).astype(np.float32)[..., None]
    with tkc.Context("CPU") as c:
        w = c.tensor(np.zeros((3, 1), np.float32)).requires_grad_()
        b = c.tensor(np.zeros((1,), np.float32)).requires_grad_()
        opt = tkc.optim.SGD([w, b], lr=0.1, momentum=0.5)

        def train_step(x, y):
            loss = ((x @ w + b - y) ** 2).mean().realize()  # the loss before the step (realized later, it would read
            loss.backward()                                  # the updated w and b)
            opt.step()
            opt.zero_grad()
            return loss

        step = tkc.Jit(c, train_step)
        wn, bn, mw, mb = np.zeros((3, 1)), np.zeros(1), np.zeros((3, 1)), np.zeros(1)
        for k in range(6):
            if k == 4:
                opt.lr = 0.02  # a replay uses the current learning rate
            lr = 0.1 if k < 4 else 0.02
            x64, y64 = xs[k].astype(np.float64), ys[k].astype(np.float64)
            err = x64 @ wn + bn - y64
            want_loss = (err ** 2).mean()
            gw, gb = x64.T @ (2 * err) / err.size, (2 * err).sum(0) / err.size
            mw, mb = 0.5 * mw + gw, 0.5 * mb + gb
            wn, bn = wn - lr * mw, bn - lr * mb
            loss = step(c.tensor(xs[k]), c.tensor(ys[k]))
            assert loss.item() == pytest.approx(want_loss, rel=1e-4)
            np.testing.assert_allclose(w.numpy(), wn, rtol=1e-4, atol=1e-5)
            np.testing.assert_allclose(b.numpy(), bn, rtol=1e-4, atol=1e-5)
            assert not w.grad.numpy().any()  # zeroed by the replayed zero_grad
        assert step.kernels > 0
        step.close()


# ---------------------------------------------------------------- errors carry the C message

def test_errors(ctx):
    x = ctx.tensor([1.0, 2.0]).requires_grad_()
    with pytest.raises(tkc.TkcShapeError, match="the loss must have one element") as e:
        (x * 2).backward()
    assert e.value.status == "ESHAPE" and "shape (2,)" in e.value.message
    with pytest.raises(tkc.TkcError, match="nothing the loss depends on"):
        ctx.tensor([1.0]).sum().backward()
    with pytest.raises(tkc.TkcDTypeError, match="only float tensors have gradients"):
        ctx.tensor([1, 2]).requires_grad = True
    with pytest.raises(tkc.TkcError, match="freed"):
        with ctx.scope():
            t = ctx.tensor([1.0]).requires_grad_()
        t.grad
    # a failed call leaves no error behind for the next one, and grad stays None without raising
    y = ctx.tensor([3.0]).requires_grad_()
    assert y.grad is None
    assert (y * 2).sum().item() == 6.0


def test_step_realizes_the_loss_before_the_update():
    with tkc.Context("CPU") as c:
        w = c.tensor(np.ones(4, np.float32)).requires_grad_()
        opt = tkc.optim.SGD([w], lr=0.1)
        loss = (w * 2).sum()  # lazy
        loss.backward()
        opt.step(loss)  # realized in the step's schedule: from w before the update
        assert loss.item() == pytest.approx(8.0)
        np.testing.assert_allclose(w.numpy(), np.full(4, 0.8, np.float32))


def test_generator_initializers_and_dropout():
    with tkc.Context("CPU") as c:
        c.manual_seed(3)
        a = c.randn(200, 500).numpy()
        assert abs(a.mean()) < 5 * 1 / np.sqrt(a.size) and abs(a.var() - 1) < 0.02
        c.manual_seed(3)
        np.testing.assert_array_equal(c.randn(200, 500).numpy(), a)  # reproducible
        u = c.uniform(1000, low=-2, high=3).numpy()
        assert u.min() >= -2 and u.max() < 3 and abs(u.mean() - 0.5) < 0.2
        k = c.kaiming_uniform(64, 32, a=0.0).numpy()
        bound = np.sqrt(3) * np.sqrt(2.0) / np.sqrt(32)
        assert np.abs(k).max() <= bound and np.abs(k).max() > 0.9 * bound
        g = c.glorot_uniform(64, 32).numpy()
        assert np.abs(g).max() <= np.sqrt(6 / (64 + 32))
        x = c.tensor(np.ones((100, 100), np.float32))
        d = x.dropout(0.25).numpy()
        assert abs((d == 0).mean() - 0.25) < 0.03
        np.testing.assert_allclose(d[d != 0], np.float32(1 / 0.75))
        np.testing.assert_array_equal(x.dropout(0.25, training=False).numpy(), x.numpy())

        step = tkc.Jit(c, lambda t: t.dropout(0.5) * 1)
        masks = [step(c.tensor(np.ones(64, np.float32))).numpy() != 0 for _ in range(4)]
        assert all((masks[i] != masks[i + 1]).any() for i in range(3))  # a new mask at each replay
        step.close()
