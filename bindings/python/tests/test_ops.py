"""Tensor ops against numpy formulas."""
import math

import numpy as np
import pytest

import tkc

RNG = np.random.default_rng(0)
X = RNG.standard_normal((4, 6)).astype(np.float32)
P = (RNG.random((4, 6)) + 0.1).astype(np.float32)  # positive


def close(t, want, rtol=1e-5, atol=1e-6):
    np.testing.assert_allclose(t.numpy() if isinstance(t, tkc.Tensor) else t, want, rtol=rtol, atol=atol)


def np_softmax(x, axis=-1):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


@pytest.mark.parametrize("name, ref, data", [
    ("exp", np.exp, X), ("log", np.log, P), ("sqrt", np.sqrt, P), ("sin", np.sin, X), ("cos", np.cos, X), ("tanh", np.tanh, X),
    ("abs", np.abs, X), ("neg", np.negative, X), ("recip", np.reciprocal, P), ("exp2", np.exp2, X), ("log2", np.log2, P),
    ("relu", lambda x: np.maximum(x, 0), X), ("sigmoid", lambda x: 1 / (1 + np.exp(-x)), X), ("floor", np.floor, X * 3),
    ("ceil", np.ceil, X * 3), ("trunc", np.trunc, X * 3), ("round", np.round, X * 3), ("rsqrt", lambda x: 1 / np.sqrt(x), P),
    ("square", np.square, X), ("sign", np.sign, X), ("log1p", np.log1p, P), ("expm1", np.expm1, X), ("tan", np.tan, X),
    ("atan", np.arctan, X), ("asin", np.arcsin, P / 2), ("acos", np.arccos, P / 2), ("sinh", np.sinh, X), ("cosh", np.cosh, X),
    ("erf", np.vectorize(math.erf), X), ("silu", lambda x: x / (1 + np.exp(-x)), X),
])
def test_unary(ctx, name, ref, data):
    close(getattr(ctx.tensor(data), name)(), ref(data.astype(np.float64)).astype(np.float32), rtol=2e-5, atol=2e-6)
    close(getattr(tkc, name)(ctx.tensor(data)), ref(data.astype(np.float64)).astype(np.float32), rtol=2e-5, atol=2e-6)


def test_binary_broadcasting(ctx):
    a, b = X, X[:1] * 2 + 0.5
    for op in ("__add__", "__sub__", "__mul__", "__truediv__"):
        close(getattr(ctx.tensor(a), op)(ctx.tensor(b)), getattr(a, op)(b))
    close(ctx.tensor(a).maximum(b), np.maximum(a, b))
    close(ctx.tensor(a).minimum(0.0), np.minimum(a, 0))
    close(ctx.tensor(P) ** ctx.tensor(a), P ** a, rtol=1e-4)
    close(ctx.tensor(a).atan2(ctx.tensor(b)), np.arctan2(a, b), rtol=1e-5)
    close(ctx.tensor(a).lerp(b, 0.25), a + 0.25 * (b - a))


def test_matmul(ctx):
    a, b = RNG.standard_normal((3, 4, 5)).astype(np.float32), RNG.standard_normal((5, 2)).astype(np.float32)
    close(ctx.tensor(a) @ ctx.tensor(b), a @ b, rtol=1e-5, atol=1e-5)
    close(ctx.tensor(a[0]) @ ctx.tensor(b[:, 0]), a[0] @ b[:, 0], atol=1e-5)
    close(b.T @ ctx.tensor(a[0]).T, b.T @ a[0].T, atol=1e-5)  # ndarray @ Tensor
    close(tkc.matmul(a[1], ctx.tensor(b)), a[1] @ b, atol=1e-5)


@pytest.mark.parametrize("axis", [None, 0, 1, -1, (0, 1)])
@pytest.mark.parametrize("keepdim", [False, True])
def test_reductions(ctx, axis, keepdim):
    t = ctx.tensor(X)
    for name in ("sum", "max", "min", "mean", "prod"):
        close(getattr(t, name)(axis=axis, keepdim=keepdim), getattr(np, name)(X, axis=axis, keepdims=keepdim), rtol=1e-5, atol=1e-5)
    close(t.var(axis, keepdim), X.var(axis=axis, ddof=1, keepdims=keepdim), rtol=1e-4)
    close(t.std(axis, keepdim, correction=0), X.std(axis=axis, keepdims=keepdim), rtol=1e-4)
    lse = np.log(np.exp(X.astype(np.float64)).sum(axis=axis, keepdims=keepdim))
    close(t.logsumexp(axis, keepdim), lse, rtol=1e-5)
    close((t > 0).any(axis, keepdim), (X > 0).any(axis=axis, keepdims=keepdim))
    close((t > -3).all(axis, keepdim), (X > -3).all(axis=axis, keepdims=keepdim))


def test_sum_dtypes(ctx):
    i8 = np.array([100, 100, 100], np.int8)
    assert ctx.tensor(i8).sum().item() == 300  # accumulates in int32 as tinygrad
    assert ctx.tensor(i8).sum(dtype=np.int8).item() == np.int8(300 - 256)
    assert ctx.tensor(np.ones(3, np.float16)).sum().dtype == tkc.float16


def test_argmax_sort_topk(ctx):
    t = ctx.tensor(X)
    assert t.argmax(axis=1).tolist() == X.argmax(axis=1).tolist()
    assert t.argmin(axis=0).tolist() == X.argmin(axis=0).tolist()
    assert t.argmax().item() == X.argmax()
    v, i = t.sort(axis=1)
    close(v, np.sort(X, axis=1))
    assert i.tolist() == np.argsort(X, axis=1, kind="stable").tolist()
    v, i = t.topk(2, axis=1)
    close(v, -np.sort(-X, axis=1)[:, :2])


def test_softmax(ctx):
    close(ctx.tensor(X).softmax(), np_softmax(X))
    close(ctx.tensor(X).softmax(0), np_softmax(X, 0))
    close(ctx.tensor(X).log_softmax(-1), np.log(np_softmax(X)), atol=1e-5)


@pytest.mark.parametrize("axis", [None, 0, 1, -1])
def test_scans(ctx, axis):
    close(ctx.tensor(X).cumsum(axis), np.cumsum(X, axis=axis), atol=1e-5)
    close(ctx.tensor(X).cummax(axis), np.maximum.accumulate(X.reshape(-1) if axis is None else X, axis=0 if axis is None else axis))
    close(ctx.tensor(P).cumprod(axis), np.cumprod(P, axis=axis), rtol=1e-5)
    i = np.arange(1, 700, dtype=np.int32)
    assert ctx.tensor(i).cumsum().tolist() == np.cumsum(i).tolist()  # a long axis (blocked scan)


def test_movement(ctx):
    t = ctx.tensor(X)
    close(t.reshape(2, -1), X.reshape(2, -1))
    close(t.reshape((3, 8)), X.reshape(3, 8))
    close(t.permute(1, 0), X.T)
    close(t.T, X.T)
    close(t.transpose(0, 1), X.T)
    close(t[:1].expand(3, 6), np.broadcast_to(X[:1], (3, 6)))
    close(t.pad([(1, 0), (0, 2)], value=-1.0), np.pad(X, ((1, 0), (0, 2)), constant_values=-1))
    close(t.shrink([(1, 3), (2, 5)]), X[1:3, 2:5])
    close(t.flip(0), X[::-1])
    close(t.flip(), X[::-1, ::-1])
    close(t.reshape(1, 4, 1, 6).squeeze(), X)
    close(t.unsqueeze(1), X[:, None])
    close(t.reshape(2, 2, 6).flatten(1), X.reshape(2, 12))
    close(t.repeat(2, 1), np.tile(X, (2, 1)))
    close(t.tril(), np.tril(X))
    close(t.triu(1), np.triu(X, 1))
    close(t.contiguous(), X)


def test_cat_stack_split(ctx):
    a, b = X[:2], X[2:]
    close(tkc.cat([ctx.tensor(a), ctx.tensor(b)]), X)
    close(ctx.tensor(a).cat(b, axis=0), X)
    close(tkc.cat([ctx.tensor(X), X], axis=1), np.concatenate([X, X], axis=1))
    close(tkc.stack([ctx.tensor(a), ctx.tensor(b)], axis=1), np.stack([a, b], axis=1))
    parts = ctx.tensor(X).split([1, 2, 3], axis=1)
    for p, w in zip(parts, np.split(X, [1, 3], axis=1)):
        close(p, w)
    assert [p.shape for p in ctx.tensor(X).split(4, axis=1)] == [(4, 4), (4, 2)]
    assert [p.shape[0] for p in ctx.tensor(np.zeros(5)).chunk(4)] == [2, 2, 1]


def test_gather_index_select_scatter(ctx):
    idx = np.array([[0, 5, 2], [1, 1, 0], [3, 4, 5], [-1, 0, 2]])
    close(ctx.tensor(X).gather(1, idx), np.take_along_axis(X, idx % 6, axis=1))
    close(ctx.tensor(X).index_select(1, [5, 0, -2]), X[:, [5, 0, -2]])
    close(tkc.index_select(ctx.tensor(X), 0, ctx.tensor(np.array([[3, 0], [1, 1]], np.int32))), X[[[3, 0], [1, 1]]])
    z = ctx.zeros(2, 4)
    src = np.arange(1, 9, dtype=np.float32).reshape(2, 4)
    ind = np.array([[0, 1, 2, 3], [3, 2, 1, 0]])
    want = np.zeros((2, 4), np.float32)
    np.put_along_axis(want, ind, src, axis=1)
    close(z.scatter(1, ind, src), want)
    close(z.scatter_add(0, np.zeros((2, 4), np.int32), src), np.stack([src.sum(0), np.zeros(4)]))
    assert ctx.tensor(np.array([0, 2], np.int32)).one_hot(3).tolist() == [[1, 0, 0], [0, 0, 1]]


def test_where_clamp_cast(ctx):
    c = ctx.tensor(X > 0)
    close(c.where(ctx.tensor(X), 0.0), np.where(X > 0, X, 0))
    close(tkc.where(c, 1.0, ctx.tensor(X)), np.where(X > 0, 1.0, X))
    assert c.where(1, 2).dtype == tkc.int32
    close(ctx.tensor(X).clamp(-0.5, 0.5), np.clip(X, -0.5, 0.5))
    close(ctx.tensor(X).clip(hi=0), np.minimum(X, 0))
    assert ctx.tensor(np.array([1.5, -2.7])).cast(np.int32).tolist() == [1, -2]
    assert ctx.tensor(np.array([1.0], np.float32)).bitcast(np.int32).item() == 0x3F800000
    assert ctx.tensor(np.array([np.nan, np.inf, 1.0], np.float32)).isnan().tolist() == [True, False, False]
    assert ctx.tensor(np.array([np.nan, np.inf, 1.0], np.float32)).isinf().tolist() == [False, True, False]
    assert ctx.tensor(np.array([np.nan, np.inf, 1.0], np.float32)).isfinite().tolist() == [False, False, True]


def test_activations(ctx):
    t = ctx.tensor(X)
    close(t.leaky_relu(0.1), np.where(X < 0, 0.1 * X, X))
    close(t.elu(), np.where(X > 0, X, np.expm1(X)), atol=1e-6)
    close(t.softplus(), np.log1p(np.exp(X)), rtol=1e-5)
    close(t.gelu(), 0.5 * X * (1 + np.vectorize(math.erf)(X / math.sqrt(2))), rtol=1e-5, atol=1e-6)
    close(t.gelu("tanh"), 0.5 * X * (1 + np.tanh(math.sqrt(2 / math.pi) * (X + 0.044715 * X ** 3))), rtol=1e-5, atol=1e-6)
    close(t.hardsigmoid(), np.clip(X + 3, 0, 6) / 6)
    close(t.hardswish(), X * np.clip(X + 3, 0, 6) / 6, atol=1e-6)
    close(t.mish(), X * np.tanh(np.log1p(np.exp(X))), rtol=1e-5, atol=1e-6)
    close(t.selu(), 1.0507009873554805 * np.where(X > 0, X, 1.6732632423543772 * np.expm1(X)), rtol=1e-5, atol=1e-6)


def test_layer_norm_and_friends(ctx):
    x = RNG.standard_normal((3, 4, 8)).astype(np.float32)
    w, b = RNG.standard_normal(8).astype(np.float32), RNG.standard_normal(8).astype(np.float32)
    mu, var = x.mean(-1, keepdims=True), x.var(-1, keepdims=True)
    close(ctx.tensor(x).layer_norm(ctx.tensor(w), ctx.tensor(b)), (x - mu) / np.sqrt(var + 1e-5) * w + b, rtol=1e-4, atol=1e-5)
    close(ctx.tensor(x).layer_norm(eps=1e-3, naxes=2),
          (x - x.mean((1, 2), keepdims=True)) / np.sqrt(x.var((1, 2), keepdims=True) + 1e-3), rtol=1e-4, atol=1e-5)
    close(ctx.tensor(x).rms_norm(ctx.tensor(w)), x / np.sqrt((x * x).mean(-1, keepdims=True) + 1e-6) * w, rtol=1e-4, atol=1e-5)
    img = RNG.standard_normal((2, 3, 4, 4)).astype(np.float32)
    m, v = np.array([0.1, -0.2, 0.3], np.float32), np.array([1.0, 2.0, 0.5], np.float32)
    want = (img - m[:, None, None]) / np.sqrt(v[:, None, None] + 1e-5)
    close(ctx.tensor(img).batch_norm(ctx.tensor(m), ctx.tensor(v)), want, rtol=1e-4, atol=1e-5)


def np_conv2d(x, w, stride=1, pad=(0, 0, 0, 0), dilation=1, groups=1):
    x = np.pad(x, ((0, 0), (0, 0), pad[:2], pad[2:]))
    n, c, h, wd = x.shape
    o, cg, kh, kw = w.shape
    oh, ow = (h - dilation * (kh - 1) - 1) // stride + 1, (wd - dilation * (kw - 1) - 1) // stride + 1
    out = np.zeros((n, o, oh, ow), np.float64)
    for oc in range(o):
        g = oc // (o // groups)
        for i in range(kh):
            for j in range(kw):
                patch = x[:, g * cg:(g + 1) * cg, i * dilation:i * dilation + stride * oh:stride, j * dilation:j * dilation + stride * ow:stride]
                out[:, oc] += np.einsum("nchw,c->nhw", patch[:, :, :oh, :ow], w[oc, :, i, j])
    return out


def test_convolutions(ctx):
    x = RNG.standard_normal((2, 4, 7, 6)).astype(np.float32)
    w = RNG.standard_normal((6, 4, 3, 3)).astype(np.float32)
    b = RNG.standard_normal(6).astype(np.float32)
    close(ctx.tensor(x).conv2d(ctx.tensor(w), ctx.tensor(b), stride=2, padding=1),
          np_conv2d(x, w, 2, (1, 1, 1, 1)) + b[None, :, None, None], rtol=1e-4, atol=1e-4)
    wg = RNG.standard_normal((6, 2, 2, 3)).astype(np.float32)
    close(tkc.conv2d(ctx.tensor(x), ctx.tensor(wg), padding=(1, 0, 2, 1), dilation=2, groups=2),
          np_conv2d(x, wg, 1, (1, 0, 2, 1), 2, 2), rtol=1e-4, atol=1e-4)
    x1, w1 = x[:, :, 0], w[:, :, 0]
    close(ctx.tensor(x1).conv1d(ctx.tensor(w1), padding=(1, 2)), np_conv2d(x1[:, :, None], w1[:, :, None], 1, (0, 0, 1, 2))[:, :, 0],
          rtol=1e-4, atol=1e-4)
    # conv_transpose2d is conv2d's gradient wrt its input: <conv2d(x, w), y> == <x, conv_transpose2d(y, w)>
    y = RNG.standard_normal((2, 6, 5, 4)).astype(np.float32)
    lhs = (np_conv2d(x, w) * y).sum()
    rhs = (x * ctx.tensor(y).conv_transpose2d(ctx.tensor(w)).numpy()).sum()
    np.testing.assert_allclose(rhs, lhs, rtol=1e-4)


def test_pools_and_interpolate(ctx):
    x = RNG.standard_normal((1, 2, 4, 6)).astype(np.float32)
    close(ctx.tensor(x).max_pool2d(2), x.reshape(1, 2, 2, 2, 3, 2).max(axis=(3, 5)))
    close(ctx.tensor(x).avg_pool2d((2, 3)), x.reshape(1, 2, 2, 2, 2, 3).mean(axis=(3, 5)), rtol=1e-5)
    close(ctx.tensor(x).interpolate((8, 12)), x.repeat(2, axis=2).repeat(2, axis=3))
    assert ctx.tensor(x).interpolate(3, mode="bilinear").shape == (1, 2, 3, 3)


def test_attention(ctx):
    q, k, v = (RNG.standard_normal((2, 5, 8)).astype(np.float32) for _ in range(3))
    s = q @ k.transpose(0, 2, 1) / np.sqrt(8)
    close(ctx.tensor(q).scaled_dot_product_attention(ctx.tensor(k), ctx.tensor(v)), np_softmax(s) @ v, rtol=1e-4, atol=1e-5)
    causal = np.where(np.tril(np.ones((5, 5), bool)), s, -np.inf)
    close(tkc.scaled_dot_product_attention(ctx.tensor(q), ctx.tensor(k), ctx.tensor(v), causal=True), np_softmax(causal) @ v,
          rtol=1e-4, atol=1e-5)


def test_losses(ctx):
    logits = RNG.standard_normal((5, 4)).astype(np.float32)
    target = np.array([0, 3, 1, 1, 2])
    logp = np.log(np_softmax(logits))
    per = -logp[np.arange(5), target]
    close(ctx.tensor(logits).cross_entropy(target), per.mean(), rtol=1e-5)
    close(ctx.tensor(logits).cross_entropy(target, reduction="none"), per, rtol=1e-5)
    close(ctx.tensor(logp).nll_loss(ctx.tensor(target.astype(np.int32)), reduction="sum"), per.sum(), rtol=1e-5)


def test_creation(ctx):
    assert ctx.arange(5).tolist() == [0, 1, 2, 3, 4] and ctx.arange(5).dtype == tkc.int32
    close(ctx.arange(0, 1, 0.25), np.arange(0, 1, 0.25))
    assert ctx.full((2, 2), 3.5).tolist() == [[3.5, 3.5], [3.5, 3.5]]
    assert ctx.ones(3, dtype=np.int8).tolist() == [1, 1, 1]
    r = ctx.rand(100, seed=7).numpy()
    assert r.min() >= 0 and r.max() < 1 and np.array_equal(r, ctx.rand(100, seed=7).numpy())
    assert ctx.scalar(2.5).shape == ()


def test_running_and_introspection(ctx, tmp_path):
    a = ctx.tensor(X)
    y = (a * 2).sum(1)
    assert y.kernel_count() >= 1
    assert "void" in y.kernels_source("C") or len(y.kernels_source("C")) > 0
    y.schedule_dot(tmp_path / "s.dot")
    y.kernel_uops_dot(0, tmp_path / "k.dot")
    assert (tmp_path / "s.dot").read_text().startswith("digraph") and (tmp_path / "k.dot").stat().st_size > 0
    before = ctx.stats()
    y.realize()
    assert y.kernel_count() == 0 and ctx.stats().kernels > before.kernels
    seen = []
    ctx.set_progress(seen.append)
    (a + 12345.0).realize()
    ctx.set_progress(None)
    assert all(isinstance(p, tkc.ProgressInfo) for p in seen)
    z = a - 1
    z.realize(opts=[("UPCAST", 0, 2)])
    close(z, X - 1)
    ctx.set_beam(0)


def test_scopes(ctx):
    a = ctx.tensor(X)
    with ctx.scope():
        tmp = a * 2
        kept = (tmp + 1).keep()
    close(kept, X * 2 + 1)
    with pytest.raises(tkc.TkcError, match="freed"):
        tmp.numpy()
    with pytest.raises(tkc.TkcError):
        a.keep()
