"""quickstart.py -- matmul + softmax of small tensors through the tkc Python package (bindings/python),
checked against numpy on every device that can run here. Exits 1 on a mismatch or an error.

    python3 examples/python/quickstart.py                          (uses build/libtkc.so of this checkout)
    TKC_LIB=build/libtkc.so python3 examples/python/quickstart.py  (TKC_DEBUG=4 shows the kernels)

Run from the source tree it imports bindings/python/tkc; `pip install ./bindings/python` installs the
package (with its own libtkc) for use anywhere.
"""
import os
import sys

_BINDINGS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bindings", "python")
if os.path.isdir(os.path.join(_BINDINGS, "tkc")):
    sys.path.insert(0, os.path.abspath(_BINDINGS))
import numpy as np  # noqa: E402
import tkc  # noqa: E402


def softmax(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def check(dev):
    a = np.array([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]], np.float32)                        # 2x3
    b = np.array([[1.0, 2.0, -1.0, 0.5], [0.0, -0.5, 1.0, 2.0], [3.0, 1.0, 0.25, -2.0]], np.float32)  # 3x4
    with tkc.Context(dev) as ctx:
        ta, tb = ctx.tensor(a), ctx.tensor(b)
        y = (ta @ tb).softmax(-1)              # lazy: nothing runs yet
        kernels = y.kernel_count()
        got = y.numpy()                        # schedules, compiles, runs, copies out
        ok = y.shape == (2, 4) and y.dtype == np.float32 and np.allclose(got, softmax(a @ b), rtol=1e-5, atol=1e-6)
        print("%-7s softmax(a @ b) in %d kernel(s): %s" % (dev, kernels, "ok" if ok else "MISMATCH"))
        print("        " + np.array2string(got, precision=6, prefix="        "))
        # Python numbers are weak scalars; slicing makes views; reductions take axes
        z = (ta[:, ::-1] * 2 - 1).sum(axis=1).numpy()
        if not np.allclose(z, (a[:, ::-1] * 2 - 1).sum(axis=1), rtol=1e-5):
            print("%-7s sum(a[:, ::-1]*2-1, axis 1) = %s" % (dev, z))
            ok = False
        try:  # errors surface as exceptions carrying the C status
            ta @ ta
            print("%-7s a 2x3 @ 2x3 did not fail" % dev)
            ok = False
        except tkc.TkcError as e:
            if e.status != "ESHAPE":
                print("%-7s a 2x3 @ 2x3 failed with %s, want ESHAPE" % (dev, e.status))
                ok = False
    return ok


def main():
    devices = tkc.devices()
    if not devices:
        print("no device can run here", file=sys.stderr)
        return 1
    print("tkc %s from %s" % (tkc.__version__, tkc.library_path))
    failed = [dev for dev in devices if not check(dev)]
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
