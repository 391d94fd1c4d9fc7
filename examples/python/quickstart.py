"""quickstart.py -- matmul + softmax of small tensors through tkc (ctypes, see tkc.py), checked against
a pure-Python reference on every device that can run here. Exits 1 on a mismatch or an error.

    TKC_LIB=build/libtkc.so python3 examples/python/quickstart.py      (TKC_DEBUG=4 shows the kernels)
"""
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tkc  # noqa: E402


def ref_matmul(a, b):
    return [[sum(a[i][k] * b[k][j] for k in range(len(b))) for j in range(len(b[0]))] for i in range(len(a))]


def ref_softmax(rows):
    out = []
    for r in rows:
        m = max(r)
        e = [math.exp(x - m) for x in r]
        s = sum(e)
        out.append([x / s for x in e])
    return out


def close(got, want, tol=1e-5):
    return all(abs(g - w) <= tol * (1 + abs(w)) for gr, wr in zip(got, want) for g, w in zip(gr, wr))


def main():
    tkc.load(sys.argv[1] if len(sys.argv) > 1 else None)
    a = [[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]]                                      # 2x3
    b = [[1.0, 2.0, -1.0, 0.5], [0.0, -0.5, 1.0, 2.0], [3.0, 1.0, 0.25, -2.0]]       # 3x4
    want = ref_softmax(ref_matmul(a, b))
    devices = [d for d in ("CPU", "LLVM", "CUDA", "WEBGPU", "INTERP") if tkc.device_available(d)]
    if not devices:
        print("no device can run here", file=sys.stderr)
        return 1
    failed = 0
    for dev in devices:
        with tkc.Context(dev) as ctx:
            ta, tb = ctx.tensor(a), ctx.tensor(b)
            y = (ta @ tb).softmax(-1)
            kernels = y.kernel_count()
            got = y.tolist()
            ok = close(got, want) and y.shape == (2, 4) and y.dtype == "float32"
            print("%-7s softmax(a @ b) in %d kernel(s): %s" % (dev, kernels, "ok" if ok else "MISMATCH"))
            for row in got:
                print("        " + "  ".join("%.6f" % x for x in row))
            # a few more things through the wrapper: broadcasting with a Python number, a reduction
            z = ((ta * 2 - 1).sum(axis=1)).tolist()
            zwant = [sum(x * 2 - 1 for x in r) for r in a]
            if not close([z], [zwant]):
                print("%-7s sum(a*2-1, axis 1) = %s, want %s" % (dev, z, zwant))
                ok = False
            try:  # errors surface as exceptions carrying the C status
                ta @ ta
                print("%-7s a 2x3 @ 2x3 did not fail" % dev)
                ok = False
            except tkc.TkcError as e:
                if e.status != "ESHAPE":
                    print("%-7s a 2x3 @ 2x3 failed with %s, want ESHAPE" % (dev, e.status))
                    ok = False
            if not ok:
                failed += 1
                print("want:")
                for row in want:
                    print("        " + "  ".join("%.6f" % x for x in row))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
