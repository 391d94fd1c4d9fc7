#!/usr/bin/env python3
"""tests/test_tkc_run.py TKC_RUN: tkc-run on ONNX node test models that the onnx wheel ships
(inputs and expected outputs as TensorProtos): the inputs written as .npy, `tkc-run --input
name=file.npy --runs 3 --output DIR` run on each device here, its .npy outputs compared with the
expected ones; a missing model and a bad --input are errors (exit status 1). Exit 77 (skipped)
without the onnx package."""
import os
import subprocess
import sys
import tempfile

try:
    import numpy as np
    import onnx
    from onnx import numpy_helper
except ImportError:
    print("skipped: numpy and onnx are needed")
    sys.exit(77)

TKC_RUN = sys.argv[1]
NODE = os.path.join(os.path.dirname(onnx.__file__), "backend", "test", "data", "node")
CASES = ["test_add_bcast", "test_conv_with_strides_padding", "test_softmax_axis_1", "test_nonzero_example"]


def run(args):
    return subprocess.run([TKC_RUN] + args, capture_output=True, text=True, timeout=600)


def main():
    failures = 0
    for case in CASES:
        folder = os.path.join(NODE, case)
        model = onnx.load(os.path.join(folder, "model.onnx"))
        data = os.path.join(folder, "test_data_set_0")
        ins = [numpy_helper.to_array(onnx.load_tensor(os.path.join(data, "input_%d.pb" % i))) for i in range(len(model.graph.input))]
        want = [numpy_helper.to_array(onnx.load_tensor(os.path.join(data, "output_%d.pb" % i))) for i in range(len(model.graph.output))]
        for device in ("INTERP", "CPU"):
            with tempfile.TemporaryDirectory() as tmp:
                args = [os.path.join(folder, "model.onnx"), "--device", device, "--runs", "3", "--output", tmp]
                for vi, arr in zip(model.graph.input, ins):
                    path = os.path.join(tmp, "in_%s.npy" % vi.name)
                    np.save(path, arr)
                    args += ["--input", "%s=%s" % (vi.name, path)]
                r = run(args)
                if r.returncode != 0 or "3 runs: min" not in r.stdout:
                    print("FAIL %s on %s: exit %d\n%s%s" % (case, device, r.returncode, r.stdout, r.stderr))
                    failures += 1
                    continue
                captured = "runs captured (tkc_jit)" in r.stdout
                if captured == (case == "test_nonzero_example"):  # its graph reads the input values: never captured
                    print("FAIL %s on %s: captured=%s\n%s" % (case, device, captured, r.stdout))
                    failures += 1
                for vo, w in zip(model.graph.output, want):
                    got = np.load(os.path.join(tmp, "%s.npy" % vo.name))
                    if got.shape != w.shape or not np.allclose(got, w, rtol=1e-4, atol=1e-5):
                        print("FAIL %s on %s: output %s differs (shape %s vs %s)" % (case, device, vo.name, got.shape, w.shape))
                        failures += 1
                print("ok %s on %s%s" % (case, device, " (captured)" if captured else ""))
    r = run(["/nonexistent/model.onnx"])
    if r.returncode != 1 or "nonexistent" not in r.stdout + r.stderr:
        print("FAIL: a missing model: exit %d %s" % (r.returncode, r.stderr))
        failures += 1
    r = run([os.path.join(NODE, CASES[0], "model.onnx"), "--input", "no_such_input=random"])
    if r.returncode != 1:
        print("FAIL: an unknown input name: exit %d" % r.returncode)
        failures += 1
    print("%d failures" % failures)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
