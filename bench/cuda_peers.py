#!/usr/bin/env python3
"""bench/cuda_peers.py: bench_cuda's workloads on PyTorch's CUDA device, for comparison in the same
run (scripts/gpu-check.sh runs both): add_64M, sum_64M (float32) and matmul_f16_1024/2048/4096 (float16,
cuBLAS with tensor cores). One JSON object per workload in bench_cuda's shape: impl, device,
workload, kernel_ms (best of the reps, timed with CUDA events around the op alone), gbps or tflops.
Without torch or without a GPU it prints {"impl": "torch", "skipped": why} and exits 0.
Usage: cuda_peers.py [workload-substring ...]; TKC_BENCH_REPS (default 10).
       cuda_peers.py --table FILE   a table of FILE's JSON lines (bench_cuda's and these), tkc beside
                                    torch per workload, with the ratio of their kernel times"""
import json
import os
import sys

N64M = 1 << 26


def emit(obj):
    print(json.dumps(obj), flush=True)


def table(path):
    rows = {}
    with open(path) as f:
        for line in f:
            try:
                o = json.loads(line)
            except ValueError:
                continue
            if isinstance(o, dict) and "workload" in o:
                kind = "torch" if str(o.get("impl", "")).startswith("torch") else "tkc"
                rows.setdefault(o["workload"], {})[kind] = o
    if not rows:
        print("(no numbers: no workload ran)")
        return 0

    def cell(o):
        if not o:
            return "-"
        if "error" in o:
            return "error " + str(o["error"])
        rate = "%.1f GB/s" % o["gbps"] if "gbps" in o else "%.2f TFLOPS" % o.get("tflops", 0)
        mma = {True: " mma", False: " no-mma"}.get(o.get("mma"), "")
        bad = "" if o.get("ok", True) else " WRONG"
        return "%.3f ms %s%s%s" % (o["kernel_ms"], rate, mma, bad)

    print("  %-16s %-36s %-28s %s" % ("workload", "tkc (CUDA)", "torch", "torch time / tkc time"))
    for w, r in rows.items():
        t, p = r.get("tkc"), r.get("torch")
        ratio = "-"
        if t and p and t.get("kernel_ms", 0) > 0 and "kernel_ms" in p:
            ratio = "%.2fx" % (p["kernel_ms"] / t["kernel_ms"])
        print("  %-16s %-36s %-28s %s" % (w, cell(t), cell(p), ratio))
    return 0


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--table":
        return table(sys.argv[2])
    try:
        import torch
    except Exception as e:  # noqa: BLE001 - any import failure is a reason to skip
        emit({"impl": "torch", "skipped": "torch not importable: %s" % e})
        return 0
    impl = "torch-" + torch.__version__
    if not torch.cuda.is_available():
        emit({"impl": impl, "skipped": "torch sees no CUDA device"})
        return 0
    reps = max(1, int(os.environ.get("TKC_BENCH_REPS", "10") or 10))
    want = sys.argv[1:]
    dev = torch.device("cuda")
    torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction = True

    def best_ms(fn):
        fn()  # warm-up: cuBLAS heuristics, allocator
        torch.cuda.synchronize()
        best = float("inf")
        for _ in range(reps):
            a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            a.record()
            fn()
            b.record()
            b.synchronize()
            best = min(best, a.elapsed_time(b))
        return best

    g = torch.Generator(device=dev).manual_seed(0)
    x = torch.rand(N64M, device=dev, generator=g)
    y = torch.rand(N64M, device=dev, generator=g)
    work = [
        ("add_64M", lambda: x + y, 3.0 * 4 * N64M, 0),
        ("sum_64M", lambda: x.sum(), 4.0 * N64M, 0),
    ]
    mats = {}
    for n in (1024, 2048, 4096):
        mats[n] = (torch.rand(n, n, device=dev, generator=g, dtype=torch.float16) - 0.5,
                   torch.rand(n, n, device=dev, generator=g, dtype=torch.float16) - 0.5)
        work.append(("matmul_f16_%d" % n, (lambda ab: lambda: torch.matmul(*ab))(mats[n]), 0, 2.0 * n * n * n))
    name_gpu = torch.cuda.get_device_name(0)
    for name, fn, nbytes, flops in work:
        if want and not any(w in name for w in want):
            continue
        ms = best_ms(fn)
        out = {"impl": impl, "device": name_gpu, "workload": name, "kernel_ms": round(ms, 4)}
        if nbytes:
            out["gbps"] = round(nbytes / (ms * 1e-3) / 1e9, 1)
        if flops:
            out["tflops"] = round(flops / (ms * 1e-3) / 1e12, 2)
        emit(out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
