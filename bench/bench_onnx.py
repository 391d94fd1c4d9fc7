#!/usr/bin/env python3
"""bench/bench_onnx.py: ONNX models built here with onnx.helper, run by tkc (tkc.onnx, plain calls
and captured with tkc.Jit) and by onnxruntime (2 threads) in the same run, one JSON object per line:
  mlp_784_512_512_10_b64   Gemm + Relu x3
  resnet18_b1, resnet18_b8 a ResNet-18-shaped CNN at 224x224 (conv+BN+ReLU, max-pool, 8 basic blocks,
                           global average pool, fc; random weights)
  bert_layer_s128          one BERT-base encoder layer (12 heads of 64, erf GELU, LayerNormalization)
latency_ms: best of N runs (outputs copied to numpy), first_ms: load + first inference (tkc, kernel
cache as it is) vs session creation + first run (onnxruntime), max_diff: the largest difference of
the outputs. Run: python3 bench/bench_onnx.py [device] [runs] [workload,...] (PYTHONPATH=bindings/python, or tkc
installed). Needs: pip install onnx onnxruntime."""
import gc, json, os, sys, time
os.environ.setdefault("OMP_NUM_THREADS", "2")
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

import tkc

DEVICE = sys.argv[1] if len(sys.argv) > 1 else "CPU"
RUNS = int(sys.argv[2]) if len(sys.argv) > 2 else 10
ONLY = sys.argv[3].split(",") if len(sys.argv) > 3 else None  # workload names
rng = np.random.default_rng(0)


class G:
    """a graph under construction: nodes, initializers, fresh names"""
    def __init__(self):
        self.nodes, self.inits, self.n = [], [], 0

    def name(self, base):
        self.n += 1
        return "%s_%d" % (base, self.n)

    def init(self, arr, base="w"):
        nm = self.name(base)
        self.inits.append(numpy_helper.from_array(np.asarray(arr), nm))
        return nm

    def op(self, op, inputs, **attrs):
        out = self.name(op.lower())
        self.nodes.append(helper.make_node(op, inputs, [out], **attrs))
        return out

    def model(self, name, inputs, outputs):
        graph = helper.make_graph(self.nodes, name, inputs, outputs, self.inits)
        return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def weight(*shape, fan_in):
    return (rng.standard_normal(shape) / np.sqrt(fan_in)).astype(np.float32)


def mlp():
    g, h = G(), "x"
    for i, (a, b) in enumerate([(784, 512), (512, 512), (512, 10)]):
        h = g.op("Gemm", [h, g.init(weight(a, b, fan_in=a)), g.init(np.zeros(b, np.float32))])
        if i < 2:
            h = g.op("Relu", [h])
    g.nodes[-1].output[0] = "y"
    return g.model("mlp", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [64, 784])],
                   [helper.make_tensor_value_info("y", TensorProto.FLOAT, [64, 10])]), {"x": rng.random((64, 784), dtype=np.float32)}


def conv_bn(g, x, cin, cout, k, stride, relu=True):
    y = g.op("Conv", [x, g.init(weight(cout, cin, k, k, fan_in=cin * k * k))], kernel_shape=[k, k], strides=[stride, stride],
             pads=[k // 2] * 4)
    bn = [g.init(rng.uniform(0.5, 1.5, cout).astype(np.float32)), g.init(rng.uniform(-0.1, 0.1, cout).astype(np.float32)),
          g.init(rng.uniform(-0.1, 0.1, cout).astype(np.float32)), g.init(rng.uniform(0.5, 1.5, cout).astype(np.float32))]
    y = g.op("BatchNormalization", [y] + bn)
    return g.op("Relu", [y]) if relu else y


def resnet18(batch):
    g = G()
    h = conv_bn(g, "x", 3, 64, 7, 2)
    h = g.op("MaxPool", [h], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
    cin = 64
    for cout, stride in [(64, 1), (64, 1), (128, 2), (128, 1), (256, 2), (256, 1), (512, 2), (512, 1)]:
        y = conv_bn(g, h, cin, cout, 3, stride)
        y = conv_bn(g, y, cout, cout, 3, 1, relu=False)
        skip = conv_bn(g, h, cin, cout, 1, stride, relu=False) if stride != 1 or cin != cout else h
        h = g.op("Relu", [g.op("Add", [y, skip])])
        cin = cout
    h = g.op("Flatten", [g.op("GlobalAveragePool", [h])])
    y = g.op("Gemm", [h, g.init(weight(512, 1000, fan_in=512)), g.init(np.zeros(1000, np.float32))])
    g.nodes[-1].output[0] = "y"
    return g.model("resnet18", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [batch, 3, 224, 224])],
                   [helper.make_tensor_value_info("y", TensorProto.FLOAT, [batch, 1000])]), {"x": rng.random((batch, 3, 224, 224), dtype=np.float32)}


def bert_layer(seq=128, d=768, heads=12, ff=3072):
    g = G()
    hd = d // heads

    def linear(x, a, b):
        return g.op("Add", [g.op("MatMul", [x, g.init(weight(a, b, fan_in=a))]), g.init(np.zeros(b, np.float32))])

    def split_heads(x):  # (1, S, D) -> (1, H, S, hd)
        return g.op("Transpose", [g.op("Reshape", [x, g.init(np.array([1, seq, heads, hd], np.int64), "shape")])], perm=[0, 2, 1, 3])

    def layer_norm(x):
        return g.op("LayerNormalization", [x, g.init(np.ones(d, np.float32)), g.init(np.zeros(d, np.float32))], axis=-1, epsilon=1e-12)

    q, k, v = (split_heads(linear("x", d, d)) for _ in range(3))
    s = g.op("Div", [g.op("MatMul", [q, g.op("Transpose", [k], perm=[0, 1, 3, 2])]), g.init(np.array(np.sqrt(hd), np.float32))])
    s = g.op("Add", [s, "mask"])
    a = g.op("MatMul", [g.op("Softmax", [s], axis=-1), v])
    a = g.op("Reshape", [g.op("Transpose", [a], perm=[0, 2, 1, 3]), g.init(np.array([1, seq, d], np.int64), "shape")])
    h1 = layer_norm(g.op("Add", ["x", linear(a, d, d)]))
    f = linear(h1, d, ff)
    erf = g.op("Erf", [g.op("Div", [f, g.init(np.array(np.sqrt(2), np.float32))])])
    f = g.op("Mul", [g.op("Mul", [f, g.op("Add", [erf, g.init(np.array(1, np.float32))])]), g.init(np.array(0.5, np.float32))])
    y = layer_norm(g.op("Add", [h1, linear(f, ff, d)]))
    g.nodes[-1].output[0] = "y"
    inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, seq, d]), helper.make_tensor_value_info("mask", TensorProto.FLOAT, [1, 1, 1, seq])]
    feeds = {"x": rng.standard_normal((1, seq, d)).astype(np.float32), "mask": np.zeros((1, 1, 1, seq), np.float32)}
    return g.model("bert_layer", inputs, [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, seq, d])]), feeds


def best(fn, runs):
    t = []
    for _ in range(runs):
        s = time.perf_counter()
        fn()
        t.append((time.perf_counter() - s) * 1e3)
    return min(t)


def bench(name, model, feeds):
    data = model.SerializeToString()
    out = {"workload": name}
    try:
        import onnxruntime as ort
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = opts.inter_op_num_threads = 2
        s = time.perf_counter()
        sess = ort.InferenceSession(data, opts, providers=["CPUExecutionProvider"])
        want = sess.run(None, feeds)[0]
        print(json.dumps({"impl": "onnxruntime-" + ort.__version__, "workload": name, "latency_ms": round(best(lambda: sess.run(None, feeds), RUNS), 3),
                          "first_ms": round((time.perf_counter() - s) * 1e3, 1)}), flush=True)
        # onnxruntime's workers spin for a while after each run: on a 2-core host they would take a
        # core from tkc's measurement (which then ran up to 1.9x slower), so they go first
        del sess
        gc.collect()
        time.sleep(0.5)
    except ImportError:
        want = None
    ctx = tkc.Context(DEVICE)
    s = time.perf_counter()
    m = tkc.onnx.load_bytes(data, ctx=ctx)
    got = m(**feeds)[0]
    first = (time.perf_counter() - s) * 1e3
    diff = float(np.max(np.abs(got - want))) if want is not None else None
    row = {"impl": "tkc", "device": ctx.device, "workload": name, "latency_ms": round(best(lambda: m(**feeds), RUNS), 3), "first_ms": round(first, 1),
           "max_diff": diff}
    names = m.input_names
    jit = tkc.Jit(ctx, lambda *xs: tuple(m.run(*xs)), nout=len(m.output_names))
    ins = [ctx.tensor(feeds[n]) for n in names]
    jit(*ins)[0].numpy()  # capture
    row["jit_latency_ms"] = round(best(lambda: jit(*ins)[0].numpy(), RUNS), 3)
    print(json.dumps(row), flush=True)
    jit.close() if hasattr(jit, "close") else None
    m.close()
    ctx.close()


for name, (model, feeds) in [("mlp_784_512_512_10_b64", mlp()), ("bert_layer_s128", bert_layer()), ("resnet18_b1", resnet18(1)),
                             ("resnet18_b8", resnet18(8))]:
    if ONLY is None or name in ONLY:
        bench(name, model, feeds)
