"""tinygrad_tensor.py -- the workloads of bench/bench_tensor.c on tinygrad 0.10.2 (the peer), printing
the same JSON fields, so both can be run in one session and compared as ratios.

    pip install tinygrad==0.10.2
    CPU=1 python3 bench/tinygrad_tensor.py [workload-substring ...]     (or LLVM=1; default: CPU)
    TKC_BENCH_REPS=5 (as bench_tensor)

Fields (one JSON object per workload), measured as bench_tensor does:
  kernels           kernels in the schedule
  schedule_ms       Tensor.schedule() of a fresh graph
  codegen_ms        linearize + render of those kernels (no compile), after scheduling
  first_realize_ms  the first realize (tinygrad's on-disk compile cache may make this cheap on reruns)
  kernel_ms         best realize of a fresh identical graph (wall: scheduling + launch + run; tinygrad's
                    own kernel time is used when it reports one, i.e. with DEBUG>=2)
  gflops / gbps     from kernel_ms;  ok: spot checks of the values (plain Python; the sum against a float64 sum)
The approach follows shared/bench/tinygrad_peer.py. tinygrad's CPU device runs each kernel on one thread.
"""
import json
import os
import sys
import time

if not any(os.environ.get(k) for k in ("CPU", "LLVM", "CLANG", "GPU", "CUDA", "METAL", "AMD", "NV", "WEBGPU")):
    os.environ["CPU"] = "1"

from tinygrad import Tensor, dtypes  # noqa: E402
from tinygrad.device import Device  # noqa: E402
from tinygrad.engine.realize import get_kernel  # noqa: E402
from tinygrad.helpers import GlobalCounters  # noqa: E402

REPS = max(1, int(os.environ.get("TKC_BENCH_REPS", "5")))
N = 1 << 24


def timed_realize(make):
    GlobalCounters.reset()
    t = make()
    t0 = time.perf_counter()
    t.realize()
    wall = time.perf_counter() - t0
    return wall, GlobalCounters.time_sum_s


def codegen(make):
    t0 = time.perf_counter()
    sched = make().schedule()
    t1 = time.perf_counter()
    kernels = [si for si in sched if si.ast.op.name == "SINK"]
    for si in kernels:
        get_kernel(Device[Device.DEFAULT].renderer, si.ast).to_program()
    return len(kernels), (t1 - t0) * 1e3, (time.perf_counter() - t1) * 1e3


def near(got, want, tol=1e-4):
    return abs(got - want) <= tol * (1 + abs(want))


def main(argv):
    x, y = Tensor.rand(N).realize(), Tensor.rand(N).realize()
    m = Tensor.rand(4096, 4096).realize()
    img, w = Tensor.rand(8, 16, 32, 32).realize(), Tensor.rand(32, 16, 3, 3).realize()
    mats = {n: (Tensor.rand(n, n).realize(), Tensor.rand(n, n).realize()) for n in (512, 1024)}

    def ck_add(o):
        xs, ys, os_ = x[:5].tolist(), y[:5].tolist(), o[:5].tolist()
        return all(near(a + b, c, 1e-6) for a, b, c in zip(xs, ys, os_))

    def ck_sum(o):  # against a float64 sum (a different accumulation)
        return near(o.item(), x.cast(dtypes.float64).sum().item())

    def ck_softmax(o):
        return all(near(sum(o[r].tolist()), 1.0) for r in (0, 1021, 4095))

    def ck_mm(n):
        a, b = mats[n]
        def f(o):
            av, bv = a[3].tolist(), b[:, 5].tolist()
            return near(o[3, 5].item(), sum(p * q for p, q in zip(av, bv)))
        return f

    def ck_conv(o):
        iv = img[1, :, 2:5, 3:6].tolist()
        wv = w[7].tolist()
        s = sum(iv[c][ky][kx] * wv[c][ky][kx] for c in range(16) for ky in range(3) for kx in range(3))
        return near(o[1, 7, 2, 3].item(), s)

    work = [("add_16M", lambda: x + y, ck_add, None, 12 * N), ("sum_16M", lambda: x.sum(), ck_sum, None, 4 * N),
            ("softmax_4096", lambda: m.softmax(-1), ck_softmax, None, 8 * 4096 * 4096)]
    for n in (512, 1024):
        work.append(("matmul_%d" % n, (lambda n=n: mats[n][0] @ mats[n][1]), ck_mm(n), 2 * n ** 3, None))
    work.append(("conv2d_8x16x32x32_32x16x3x3", lambda: img.conv2d(w), ck_conv, 2 * 8 * 32 * 30 * 30 * 16 * 9, None))

    for name, make, check, flops, nbytes in work:
        if len(argv) > 1 and not any(a in name for a in argv[1:]):
            continue
        kernels, s_ms, c_ms = codegen(make)
        first, _ = timed_realize(make)
        out = make().realize()
        ok = bool(check(out))
        best = float("inf")
        for _ in range(REPS):
            wall, ktime = timed_realize(make)
            best = min(best, ktime or wall)
        r = {"impl": "tinygrad-0.10.2", "device": Device.DEFAULT, "workload": name, "kernels": kernels,
             "schedule_ms": round(s_ms, 2), "codegen_ms": round(c_ms, 2), "first_realize_ms": round(first * 1e3, 1),
             "kernel_ms": round(best * 1e3, 3)}
        if flops:
            r["gflops"] = round(flops / best / 1e9, 1)
        if nbytes:
            r["gbps"] = round(nbytes / best / 1e9, 1)
        r["ok"] = ok
        print(json.dumps(r), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
