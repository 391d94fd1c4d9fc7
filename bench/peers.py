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

def softmax(a):
    e = np.exp(a - a.max(axis=-1, keepdims=True)); return e / e.sum(axis=-1, keepdims=True)

work = [("add_16M", lambda: x + y, 0), ("sum_16M", lambda: x.sum(), 0), ("softmax_4096", lambda: softmax(m), 0)]
work += [(f"matmul_{n}", (lambda a=a, b=b: a @ b), 2.0 * n ** 3) for n, (a, b) in mats.items()]
for name, fn, flops in work:
    ms = best(fn); r = {"impl": "numpy-" + np.__version__, "workload": name, "kernel_ms": round(ms, 3)}
    if flops: r["gflops"] = round(flops / ms / 1e6, 1)
    print(json.dumps(r), flush=True)

try:
    import onnx, onnxruntime as ort
    from onnx import helper, TensorProto
except ImportError as e:
    print(f"onnxruntime peers skipped: {e}", file=sys.stderr); sys.exit(0)

def session(node, inputs, outshape):
    g = helper.make_graph([node], "g", [helper.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in inputs],
                          [helper.make_tensor_value_info("out", TensorProto.FLOAT, outshape)])
    o = ort.SessionOptions(); o.intra_op_num_threads = 2; o.inter_op_num_threads = 1
    return ort.InferenceSession(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString(), o)

cases = [("add_16M", helper.make_node("Add", ["a", "b"], ["out"]), {"a": x, "b": y}, 0),
         ("softmax_4096", helper.make_node("Softmax", ["a"], ["out"], axis=-1), {"a": m}, 0),
         ("conv2d_8x16x32x32_32x16x3x3", helper.make_node("Conv", ["a", "b"], ["out"]), {"a": img, "b": w}, 2.0 * 8 * 32 * 30 * 30 * 16 * 9)]
cases += [(f"matmul_{n}", helper.make_node("MatMul", ["a", "b"], ["out"]), {"a": a, "b": b}, 2.0 * n ** 3) for n, (a, b) in mats.items()]
for name, node, feeds, flops in cases:
    s = session(node, [(k, list(v.shape)) for k, v in feeds.items()], None)
    ms = best(lambda: s.run(None, feeds)); r = {"impl": "onnxruntime-" + ort.__version__, "workload": name, "kernel_ms": round(ms, 3)}
    if flops: r["gflops"] = round(flops / ms / 1e6, 1)
    print(json.dumps(r), flush=True)
