#!/usr/bin/env python3
"""bench/peers.py: the peers of bench_tensor on the same workloads, one JSON object per line:
numpy (OpenBLAS) and onnxruntime, both with 2 threads. Run it in the same session as
build/bench_tensor and compare ratios (this machine is shared and noisy). Needs: pip install numpy onnxruntime onnx."""
import json, os, sys, time
os.environ.setdefault("OMP_NUM_THREADS", "2"); os.environ.setdefault("OPENBLAS_NUM_THREADS", "2")
import numpy as np

def best(fn, reps=5):
    fn(); t = []
    for _ in range(reps):
        s = time.perf_counter(); fn(); t.append((time.perf_counter() - s) * 1e3)
    return min(t)

rng = np.random.default_rng(0)
x = rng.random(1 << 24, dtype=np.float32); y = rng.random(1 << 24, dtype=np.float32)
m = rng.random((4096, 4096), dtype=np.float32)
mats = {n: (rng.random((n, n), dtype=np.float32), rng.random((n, n), dtype=np.float32)) for n in (512, 1024, 2048)}
img = rng.random((8, 16, 32, 32), dtype=np.float32); w = rng.random((32, 16, 3, 3), dtype=np.float32)
# the transformer block of bench_tensor: x[128,768], Wq Wk Wv Wo (768x768), W1 (768x3072), W2 (3072x768)
tx = rng.random((128, 768), dtype=np.float32)
tw = [((rng.random(s, dtype=np.float32) - 0.5) * 0.1).astype(np.float32) for s in [(768, 768)] * 4 + [(768, 3072), (3072, 768)]]
T_FLOPS = 2.0 * 128 * 768 * 768 * 4 + 2.0 * 2 * 12 * 128 * 128 * 64 + 2.0 * 2 * 128 * 768 * 3072

def softmax(a):
    e = np.exp(a - a.max(axis=-1, keepdims=True)); return e / e.sum(axis=-1, keepdims=True)

work = [("add_16M", lambda: x + y, 0), ("sum_16M", lambda: x.sum(), 0), ("softmax_4096", lambda: softmax(m), 0)]
work += [(f"matmul_{n}", (lambda a=a, b=b: a @ b), 2.0 * n ** 3) for n, (a, b) in mats.items()]

def transformer():
    hd = lambda t: t.reshape(128, 12, 64).transpose(1, 0, 2)
    q, k, v = hd(tx @ tw[0]), hd(tx @ tw[1]), hd(tx @ tw[2])
    o = (softmax(q @ k.transpose(0, 2, 1) * np.float32(0.125)) @ v).transpose(1, 0, 2).reshape(128, 768)
    h = o @ tw[3] @ tw[4]
    return (h * (1 / (1 + np.exp(np.float32(-1.702) * h)))) @ tw[5]
work += [("transformer_128x768", transformer, T_FLOPS)]
# the model ops of bench_tensor (tkc/ops_*.h)
emb = rng.random((512, 128), dtype=np.float32); tok = ((np.arange(2048, dtype=np.uint64) * 2654435761 >> 7) % 512).astype(np.int32)
pimg = rng.random((8, 64, 112, 112), dtype=np.float32); a1, b1 = mats[1024]
def layer_norm(a):
    mu = a.mean(axis=-1, keepdims=True); return (a - mu) / np.sqrt(a.var(axis=-1, keepdims=True) + np.float32(1e-5))
work += [("embedding_2048x128_of_512", lambda: np.take(emb, tok, axis=0), 0), ("cumsum_1024x1024", lambda: np.cumsum(a1, axis=1), 0),
         ("cat_4x1024x1024", lambda: np.concatenate([a1, b1, a1, b1], axis=0), 0),
         ("max_pool2d_8x64x112x112", lambda: pimg.reshape(8, 64, 56, 2, 56, 2).max(axis=(3, 5)), 0),
         ("layer_norm_4096x4096", lambda: layer_norm(m), 0)]
# the same index formulas as bench_tensor (32-bit unsigned arithmetic)
gidx = ((np.arange(1024 * 64, dtype=np.uint64) * 2654435761 % 2**32 >> 9) % 1024).astype(np.int64).reshape(1024, 64)
sidx = ((np.arange(2048 * 128, dtype=np.uint64) * 2246822519 % 2**32 >> 11) % 512).astype(np.int64).reshape(2048, 128)
ssrc = rng.random((2048, 128), dtype=np.float32)
def scatter_add():
    o = emb.copy(); np.add.at(o, (sidx, np.broadcast_to(np.arange(128), sidx.shape)), ssrc); return o
work += [("gather_1024x1024_k64", lambda: np.take_along_axis(a1, gidx, axis=1), 0), ("scatter_add_2048x128_into_512x128", scatter_add, 0)]
for name, fn, flops in work:
    ms = best(fn); r = {"impl": "numpy-" + np.__version__, "workload": name, "kernel_ms": round(ms, 3)}
    if flops: r["gflops"] = round(flops / ms / 1e6, 1)
    print(json.dumps(r), flush=True)

try:
    import onnx, onnx.numpy_helper, onnxruntime as ort
    from onnx import helper, TensorProto
except ImportError as e:
    print(f"onnxruntime peers skipped: {e}", file=sys.stderr); sys.exit(0)

def session(nodes, inputs, outshape, inits=()):
    g = helper.make_graph(nodes if isinstance(nodes, list) else [nodes], "g", [helper.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in inputs],
                          [helper.make_tensor_value_info("out", TensorProto.FLOAT, outshape)], list(inits))
    o = ort.SessionOptions(); o.intra_op_num_threads = 2; o.inter_op_num_threads = 1
    return ort.InferenceSession(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString(), o)

cases = [("add_16M", helper.make_node("Add", ["a", "b"], ["out"]), {"a": x, "b": y}, 0),
         ("softmax_4096", helper.make_node("Softmax", ["a"], ["out"], axis=-1), {"a": m}, 0),
         ("conv2d_8x16x32x32_32x16x3x3", helper.make_node("Conv", ["a", "b"], ["out"]), {"a": img, "b": w}, 2.0 * 8 * 32 * 30 * 30 * 16 * 9)]
cases += [(f"matmul_{n}", helper.make_node("MatMul", ["a", "b"], ["out"]), {"a": a, "b": b}, 2.0 * n ** 3) for n, (a, b) in mats.items()]
N = helper.make_node
const = lambda name, v, dt=np.float32: onnx.numpy_helper.from_array(np.array(v, dtype=dt), name)
block = [N("MatMul", ["x", "wq"], ["q0"]), N("Reshape", ["q0", "hs"], ["q1"]), N("Transpose", ["q1"], ["q"], perm=[1, 0, 2]),
         N("MatMul", ["x", "wk"], ["k0"]), N("Reshape", ["k0", "hs"], ["k1"]), N("Transpose", ["k1"], ["kt"], perm=[1, 2, 0]),
         N("MatMul", ["x", "wv"], ["v0"]), N("Reshape", ["v0", "hs"], ["v1"]), N("Transpose", ["v1"], ["v"], perm=[1, 0, 2]),
         N("MatMul", ["q", "kt"], ["s0"]), N("Mul", ["s0", "eighth"], ["s1"]), N("Softmax", ["s1"], ["a"], axis=-1),
         N("MatMul", ["a", "v"], ["o0"]), N("Transpose", ["o0"], ["o1"], perm=[1, 0, 2]), N("Reshape", ["o1", "ds"], ["o"]),
         N("MatMul", ["o", "wo"], ["h0"]), N("MatMul", ["h0", "w1"], ["h1"]), N("Mul", ["h1", "c1702"], ["h2"]),
         N("Sigmoid", ["h2"], ["h3"]), N("Mul", ["h1", "h3"], ["h4"]), N("MatMul", ["h4", "w2"], ["out"])]
block_inits = [const("hs", [128, 12, 64], np.int64), const("ds", [128, 768], np.int64), const("eighth", 0.125), const("c1702", 1.702)]
tfeeds = dict(zip(["x", "wq", "wk", "wv", "wo", "w1", "w2"], [tx] + tw))
for name, node, feeds, flops in cases + [("transformer_128x768", block, tfeeds, T_FLOPS)]:
    s = session(node, [(k, list(v.shape)) for k, v in feeds.items()], None, block_inits if isinstance(node, list) else ())
    ms = best(lambda: s.run(None, feeds)); r = {"impl": "onnxruntime-" + ort.__version__, "workload": name, "kernel_ms": round(ms, 3)}
    if flops: r["gflops"] = round(flops / ms / 1e6, 1)
    print(json.dumps(r), flush=True)

# first runs: session creation + the first run (what tkc's first_realize_ms is compared with)
qs_nodes = [N("MatMul", ["a", "b"], ["l"]), N("Softmax", ["l"], ["out"], axis=-1)]
qs_feeds = {"a": np.arange(1, 7, dtype=np.float32).reshape(2, 3), "b": (np.arange(1, 13, dtype=np.float32) / 10).reshape(3, 4)}
for name, node, feeds, inits in [("quickstart", qs_nodes, qs_feeds, ()), ("transformer_128x768", block, tfeeds, block_inits)]:
    t = []
    for _ in range(3):
        s0 = time.perf_counter()
        s = session(node, [(k, list(v.shape)) for k, v in feeds.items()], None, inits)
        s.run(None, feeds)
        t.append((time.perf_counter() - s0) * 1e3)
    print(json.dumps({"impl": "onnxruntime-" + ort.__version__, "workload": name, "first_run_ms": round(min(t), 1)}), flush=True)
