#!/usr/bin/env python3
"""bench/train_peers.py: the peers of build/bench_train on the same train steps (forward, cross-entropy,
backward, Adam), one JSON object per line: JAX (jax.jit, CPU) and tinygrad 0.10.2 (TinyJit, CPU device
"CLANG"). Run it in the same session as build/bench_train and compare ratios (this machine is shared and
noisy). Needs: pip install jax tinygrad==0.10.2 (a peer that is missing is reported and skipped)."""
import json, os, sys, time
os.environ.setdefault("OMP_NUM_THREADS", "2")
import numpy as np

STEPS = int(sys.argv[1]) if len(sys.argv) > 1 else 10
rng = np.random.default_rng(0)

def batches(cnn):
    b = 64 if cnn else 256
    shape = (b, 1, 28, 28) if cnn else (b, 784)
    return [(rng.random(shape, dtype=np.float32), rng.integers(0, 10, b).astype(np.int32)) for _ in range(STEPS + 1)]

def init(cnn):
    shapes = [(32, 1, 3, 3), (32,), (64, 32, 3, 3), (64,), (9216, 10), (10,)] if cnn else [(784, 512), (512,), (512, 512), (512,), (512, 10), (10,)]
    fans = [9, 9, 288, 288, 9216, 9216] if cnn else [784, 784, 512, 512, 512, 512]
    return [((rng.random(s, dtype=np.float32) * 2 - 1) / np.sqrt(f)).astype(np.float32) for s, f in zip(shapes, fans)]

def report(impl, workload, times, first):
    print(json.dumps({"impl": impl, "workload": workload, "step_ms": round(min(times), 3), "first_step_ms": round(first, 1), "steps": len(times)}), flush=True)

def bench_jax():
    import jax, jax.numpy as jnp
    jax.config.update("jax_platform_name", "cpu")
    def forward(p, x, cnn):
        if not cnn:
            h = jax.nn.relu(x @ p[0] + p[1]); h = jax.nn.relu(h @ p[2] + p[3]); return h @ p[4] + p[5]
        conv = lambda a, w, b: jax.lax.conv_general_dilated(a, w, (1, 1), "VALID", dimension_numbers=("NCHW", "OIHW", "NCHW")) + b[None, :, None, None]
        h = jax.nn.relu(conv(x, p[0], p[1])); h = jax.nn.relu(conv(h, p[2], p[3]))
        h = jax.lax.reduce_window(h, -jnp.inf, jax.lax.max, (1, 1, 2, 2), (1, 1, 2, 2), "VALID")
        return h.reshape(h.shape[0], -1) @ p[4] + p[5]
    for cnn in (False, True):
        def loss_fn(p, x, y):
            logp = jax.nn.log_softmax(forward(p, x, cnn), axis=1)
            return -jnp.mean(jnp.take_along_axis(logp, y[:, None], axis=1))
        @jax.jit
        def step(p, m, v, t, x, y):
            l, g = jax.value_and_grad(loss_fn)(p, x, y)
            t = t + 1
            m = [0.9 * mi + 0.1 * gi for mi, gi in zip(m, g)]
            v = [0.999 * vi + 0.001 * gi * gi for vi, gi in zip(v, g)]
            p = [pi - 1e-3 * (mi / (1 - 0.9 ** t)) / (jnp.sqrt(vi / (1 - 0.999 ** t)) + 1e-8) for pi, mi, vi in zip(p, m, v)]
            return p, m, v, t, l
        p = [jnp.asarray(a) for a in init(cnn)]; m = [jnp.zeros_like(a) for a in p]; v = [jnp.zeros_like(a) for a in p]; t = 0.0
        times = []
        for i, (x, y) in enumerate(batches(cnn)):
            s = time.perf_counter(); p, m, v, t, l = step(p, m, v, t, jnp.asarray(x), jnp.asarray(y)); l.block_until_ready()
            ms = (time.perf_counter() - s) * 1e3
            if i == 0: first = ms
            else: times.append(ms)
        report("jax-" + jax.__version__, "cnn_b64" if cnn else "mlp_784_512_512_10_b256", times, first)

def bench_tinygrad():
    os.environ.setdefault("CLANG", "1")
    import tinygrad
    from tinygrad import Tensor, TinyJit, nn
    from tinygrad.nn.optim import Adam
    for cnn in (False, True):
        ws = [Tensor(a, requires_grad=True) for a in init(cnn)]
        def forward(x):
            if not cnn:
                h = (x @ ws[0] + ws[1]).relu(); h = (h @ ws[2] + ws[3]).relu(); return h @ ws[4] + ws[5]
            h = x.conv2d(ws[0], ws[1]).relu().conv2d(ws[2], ws[3]).relu().max_pool2d(2)
            return h.reshape(h.shape[0], -1) @ ws[4] + ws[5]
        opt = Adam(ws, lr=1e-3)
        @TinyJit
        def step(x, y):
            with Tensor.train():
                opt.zero_grad(); loss = forward(x).sparse_categorical_crossentropy(y); loss.backward(); opt.step()
            return loss.realize()
        times = []
        for i, (x, y) in enumerate(batches(cnn)):
            xt, yt = Tensor(x).realize(), Tensor(y).realize()
            s = time.perf_counter(); l = step(xt, yt).numpy()
            ms = (time.perf_counter() - s) * 1e3
            if i == 0: first = ms
            elif i >= 2: times.append(ms)  # TinyJit captures on its second call
        report("tinygrad-" + getattr(tinygrad, "__version__", "0.10.2"), "cnn_b64" if cnn else "mlp_784_512_512_10_b256", times, first)

for name, fn in (("jax", bench_jax), ("tinygrad", bench_tinygrad)):
    try:
        fn()
    except ImportError as e:
        print(json.dumps({"impl": name, "skipped": f"not installed ({e}); pip install jax tinygrad==0.10.2"}), flush=True)
