#!/usr/bin/env python3
"""bench/bench_llm.py: issue 28's LLM benchmark. A llama-shaped model of ~125M parameters with random
weights (embedding 768, 12 layers, 12 heads over 4 KV heads of 64, ffn 2048, vocabulary 32000; the
output matrix not tied) is written in F16, Q8_0 and Q4_0 by the gguf package and in Q4_K_M by
llama.cpp's own quantizer (llama-cpp-python's llama_model_quantize, from the F16 file). On each file,
in the same run: a prefill of 128 tokens and a decode of 64 (tokens/s, the best of RUNS runs), by tkc
(build/bench_llm: examples/llama/llama_model.c, the decode step captured once and replayed) and by
llama.cpp (llama_cpp.Llama, n_ctx=256, n_batch=128), both on --threads threads (default 2: tkc's
$TKC_CPU_THREADS, llama.cpp's n_threads and n_threads_batch). On a host whose cores other processes
use at the same time, llama.cpp's threads (OpenMP, spinning at each op's barrier) lose most of their
speed: there --threads 1 compares the two implementations' code rather than their scheduling. The decode step's weight bytes per
second are set against the memory's read bandwidth, measured in the same run (bench_llm --bandwidth:
threads summing a 1 GiB array).

  make bench                              (runs build/bench_llm, which runs this script)
  python3 bench/bench_llm.py [--driver build/bench_llm] [--devices CPU,LLVM] [--types F16,Q8_0,Q4_0,Q4_K_M]
                             [--runs 3] [--prefill 128] [--decode 64] [--threads 2] [--cache DIR]
                             [--profile] [--tiny]

Output: one JSON object per line on stdout (bench llm_bandwidth; bench llm per type, device and phase:
tkc_tok_s, peer_tok_s, ratio = tkc / llama.cpp; the decode lines add weight_bytes, tkc_weight_gb_s and
tkc_bw_ratio / peer_bw_ratio against the bandwidth; bench llm_logits: tkc's last prefill logits against
llama.cpp's), human text on stderr. --profile: one more decode run per type with TKC_DEBUG=1, the
kernels' time summed by kernel name (bench llm_profile: the top kernels and the time outside kernels).
The model files are kept in --cache (default $TKC_BENCH_LLM_DIR or $TMPDIR/tkc-bench-llm) and reused.
Without llama-cpp-python the peer is skipped (and Q4_K_M, which needs its quantizer); without numpy
and gguf the benchmark is skipped (exit 0). Needs: pip install numpy gguf llama-cpp-python."""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
HP = dict(n_embd=768, n_layer=12, n_head=12, n_head_kv=4, n_ff=2048, n_vocab=32000, n_ctx=2048, rope_base=10000.0, eps=1e-5)
SEED = 28


def log(*a):
    print(*a, file=sys.stderr, flush=True)


def emit(row):
    print(json.dumps(row), flush=True)


try:
    import numpy as np
    import gguf
    from gguf import GGMLQuantizationType as Q
    sys.path.insert(0, os.path.join(HERE, "..", "tests"))
    import llama_gguf  # the model files, as the tests write them
except ImportError as e:
    log("bench_llm: skipped: numpy and gguf are needed to write the models (%s; pip install numpy gguf)" % e)
    sys.exit(0)
try:
    import llama_cpp
    try:
        llama_cpp._logger.set_verbose(False)  # the quantizer's and loader's logs
    except AttributeError:
        pass
except Exception as e:  # ImportError, or its shared library failing to load
    llama_cpp = None
    log("bench_llm: llama-cpp-python is not importable (%s): the peer and Q4_K_M are skipped" % e)


# ---------------------------------------------------------------- the model files

def write_gguf(path, hp, qt):
    """the model with its 2-D weights in qt (F16, Q8_0, Q4_0 by gguf.quants; norms F32)"""
    w = llama_gguf.writer(path + ".part", hp, file_type={Q.F16: 1, Q.Q8_0: 7, Q.Q4_0: 2}[qt])
    for name, a in llama_gguf.weights(np.random.default_rng(SEED), hp):
        if a.ndim == 1:
            w.add_tensor(name, a)
        elif qt == Q.F16:
            w.add_tensor(name, a.astype(np.float16))
        else:
            w.add_tensor(name, gguf.quants.quantize(a, qt), raw_dtype=qt)
    llama_gguf.finish(w)
    os.replace(path + ".part", path)


def model_file(cache, kind):
    """the path of the model in kind (written now unless the cache has it), or None when it cannot be made"""
    tag = "e%d-l%d-h%d-kv%d-f%d-v%d-s%d" % (HP["n_embd"], HP["n_layer"], HP["n_head"], HP["n_head_kv"], HP["n_ff"], HP["n_vocab"], SEED)
    path = os.path.join(cache, "llama-%s-%s.gguf" % (tag, kind))
    if os.path.exists(path):
        return path
    t = time.perf_counter()
    if kind == "Q4_K_M":
        if llama_cpp is None:
            return None
        llama_gguf.quantize(llama_cpp, model_file(cache, "F16"), path, llama_cpp.LLAMA_FTYPE_MOSTLY_Q4_K_M, os.cpu_count() or 2)
    else:
        write_gguf(path, HP, Q[kind])
    log("bench_llm: wrote %s (%.0f MB) in %.1f s" % (path, os.path.getsize(path) / 1e6, time.perf_counter() - t))
    return path


def tensor_types_and_decode_bytes(path):
    """({ggml type name: count of 2-D tensors}, the bytes a decode step reads of the weights: every
    tensor but the token embedding, of which it reads one row)"""
    r = gguf.GGUFReader(path)
    types, total = {}, 0
    for t in r.tensors:
        if len(t.shape) == 2:
            types[t.tensor_type.name] = types.get(t.tensor_type.name, 0) + 1
        total += int(t.n_bytes) // (int(t.shape[1]) if t.name == "token_embd.weight" else 1)
    return types, total


# ---------------------------------------------------------------- the runs

def prompt_ids(n, n_vocab):
    """bench_llm.c's pseudo-random ids (the same LCG)"""
    r, out = 12345, []
    for _ in range(n):
        r = (r * 6364136223846793005 + 1442695040888963407) % (1 << 64)
        out.append((r >> 33) % n_vocab)
    return out


def modes_of(kind, args):
    """tkc's float products, and for a quantized file also its int8 ones (llama.cpp's scheme) unless --no-int8"""
    return ["float"] + (["int8"] if kind not in ("F32", "F16", "BF16") and not args.no_int8 else [])


def mode_env(mode):
    return dict(os.environ, BENCH_LLM_INT8="1") if mode == "int8" else None


def run_tkc(driver, path, device, args, logits_path, env=None):
    cmd = [driver, path, device, str(args.prefill), str(args.decode), str(args.runs), logits_path]
    env = dict(env or os.environ, TKC_CPU_THREADS=str(args.threads))
    r = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if r.returncode == 77:
        log("bench_llm: tkc on %s: skipped (%s does not run here)" % (device, device))
        return None, r.stderr
    if r.returncode != 0:
        log("bench_llm: tkc on %s failed (exit %d): %s" % (device, r.returncode, r.stderr.strip()[-2000:]))
        return None, r.stderr
    return json.loads(r.stdout.strip().splitlines()[-1]), r.stderr


def run_peer(path, args):
    """llama.cpp's tokens/s of the prefill and decode (best of args.runs after one warm-up run) and the
    prefill's last logits"""
    llm = llama_cpp.Llama(model_path=path, n_threads=args.threads, n_threads_batch=args.threads, n_ctx=max(256, args.prefill + args.decode), n_batch=args.prefill,
                          n_ubatch=args.prefill, verbose=False)
    ids = prompt_ids(args.prefill + args.decode, llm.n_vocab())
    prefill, fed = ids[:args.prefill], ids[args.prefill:]
    best_p = best_d = 1e30
    logits = None
    for run in range(args.runs + 1):
        llm.reset()
        t = time.perf_counter()
        llm.eval(prefill)
        t = time.perf_counter() - t
        if run == 0:
            logits = np.ctypeslib.as_array(llama_cpp.llama_get_logits_ith(llm.ctx, -1), shape=(llm.n_vocab(),)).copy()
        else:
            best_p = min(best_p, t)
        t = time.perf_counter()
        for tok in fed:
            llm.eval([tok])
        t = time.perf_counter() - t
        if run > 0:
            best_d = min(best_d, t)
    llm.close() if hasattr(llm, "close") else None
    return args.prefill / best_p, args.decode / best_d, logits


LAUNCH = re.compile(r"^\*\*\* \S+\s+(\S+)\s.*\btm\s+([0-9.]+)us")


def profile(driver, path, device, args, tmp, base_env=None):
    """one decode pass per type with TKC_DEBUG=1: the kernels' time by name over the timed steps"""
    env = dict(base_env or os.environ, TKC_DEBUG="1", BENCH_LLM_MARK="1")
    one = argparse.Namespace(**dict(vars(args), runs=1))
    row, err = run_tkc(driver, path, device, one, os.path.join(tmp, "logits.bin"), env)
    if row is None:
        return None
    phase, by = None, {"prefill": {}, "decode": {}}
    for line in err.splitlines():
        if line.startswith("bench_llm: mark "):
            phase = line.split()[2]
            continue
        m = LAUNCH.match(line)
        if m and phase in by:
            name = m.group(1)
            t, c = by[phase].get(name, (0.0, 0))
            by[phase][name] = (t + float(m.group(2)) * 1e-6, c + 1)
    out = {}
    for ph, wall, steps in (("prefill", row["prefill_s"], 1), ("decode", row["decode_s"], args.decode)):
        kern = sum(t for t, _ in by[ph].values())
        top = sorted(by[ph].items(), key=lambda kv: -kv[1][0])[:8]
        out[ph] = {"wall_ms": round(wall * 1e3 / steps, 3), "kernel_ms": round(kern * 1e3 / steps, 3),
                   "launches": sum(c for _, c in by[ph].values()) // steps,
                   "top": [[n, round(t * 1e3 / steps, 3), c // steps] for n, (t, c) in top]}
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--driver", default=os.path.join(HERE, "..", "build", "bench_llm"))
    ap.add_argument("--devices", default="CPU")
    ap.add_argument("--types", default="F16,Q8_0,Q4_0,Q4_K_M")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--prefill", type=int, default=128)
    ap.add_argument("--decode", type=int, default=64)
    ap.add_argument("--threads", type=int, default=2, help="tkc's and llama.cpp's threads (and the bandwidth measurement's)")
    ap.add_argument("--cache", default=os.environ.get("TKC_BENCH_LLM_DIR", os.path.join(tempfile.gettempdir(), "tkc-bench-llm")))
    ap.add_argument("--profile", action="store_true")
    ap.add_argument("--no-int8", action="store_true", help="only the float products (no int8 rows for the quantized files)")
    ap.add_argument("--tiny", action="store_true", help="2 layers of 256, vocabulary 1000: a quick check of the wiring")
    args = ap.parse_args()
    if args.tiny:
        HP.update(n_embd=256, n_layer=2, n_head=4, n_head_kv=2, n_ff=512, n_vocab=1000)
    if not os.access(args.driver, os.X_OK):
        log("bench_llm: no driver %s (build it: cmake -DTKC_BUILD_BENCH=ON, target bench_llm)" % args.driver)
        return 1
    os.makedirs(args.cache, exist_ok=True)
    peer = "llama.cpp (llama-cpp-python %s)" % llama_cpp.__version__ if llama_cpp else None

    threads = args.threads
    r = subprocess.run([args.driver, "--bandwidth", "1024", str(threads)], capture_output=True, text=True)
    bw = json.loads(r.stdout) if r.returncode == 0 else None
    if bw:
        emit(bw)
        log("bench_llm: memory read bandwidth %.1f GB/s (%d threads summing 1 GiB), copy %.1f GB/s" % (bw["read_gb_s"], threads, bw["copy_gb_s"]))
    bw_gb_s = bw["read_gb_s"] if bw else None

    failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        for kind in args.types.split(","):
            path = model_file(args.cache, kind)
            if path is None:
                log("bench_llm: %s skipped: it is made by llama.cpp's quantizer (llama-cpp-python)" % kind)
                continue
            types, wbytes = tensor_types_and_decode_bytes(path)
            log("== %s: %s, tensors %s, %.1f MB of weights per decode step" % (kind, os.path.basename(path), types, wbytes / 1e6))
            pp = pd = plog = None
            if llama_cpp:
                try:
                    pp, pd, plog = run_peer(path, args)
                    log("   llama.cpp: prefill %.1f tok/s, decode %.2f tok/s" % (pp, pd))
                except Exception as e:  # a file llama.cpp refuses: say so, keep tkc's numbers
                    log("   llama.cpp failed on %s: %s" % (kind, e))
            for device, mode in [(d, m) for d in args.devices.split(",") for m in modes_of(kind, args)]:
                logits_path = os.path.join(tmp, "logits.bin")
                row, _ = run_tkc(args.driver, path, device, args, logits_path, mode_env(mode))
                if row is None:
                    failed += 1
                    continue
                dev = row["device"]
                log("   tkc %s%s: prefill %.1f tok/s (first run %.1f s), decode %.2f tok/s (capture %.1f s, %d kernels per step)" %
                    (dev, " int8" if mode == "int8" else "", row["prefill_tok_s"], row["prefill_cold_s"], row["decode_tok_s"], row["decode_capture_s"], row["decode_kernels"]))
                common = {"type": kind, "device": dev, "mode": mode, "threads": args.threads, "peer": peer}
                emit(dict(bench="llm", phase="prefill", n=args.prefill, tkc_tok_s=row["prefill_tok_s"], peer_tok_s=round(pp, 2) if pp else None,
                          ratio=round(row["prefill_tok_s"] / pp, 3) if pp else None, tkc_first_run_s=row["prefill_cold_s"], **common))
                gb = wbytes * 1e-9
                emit(dict(bench="llm", phase="decode", n=args.decode, tkc_tok_s=row["decode_tok_s"], peer_tok_s=round(pd, 2) if pd else None,
                          ratio=round(row["decode_tok_s"] / pd, 3) if pd else None, weight_bytes=wbytes,
                          tkc_weight_gb_s=round(gb * row["decode_tok_s"], 2), peer_weight_gb_s=round(gb * pd, 2) if pd else None,
                          bandwidth_gb_s=bw_gb_s, tkc_bw_ratio=round(gb * row["decode_tok_s"] / bw_gb_s, 3) if bw_gb_s else None,
                          peer_bw_ratio=round(gb * pd / bw_gb_s, 3) if bw_gb_s and pd else None, decode_kernels=row["decode_kernels"],
                          tkc_capture_s=row["decode_capture_s"], **common))
                if plog is not None:
                    mine = np.fromfile(logits_path, dtype=np.float32)
                    diff = float(np.abs(mine - plog).max() / max(1e-9, np.abs(plog).max()))
                    same = int(np.argmax(mine)) == int(np.argmax(plog))
                    emit(dict(bench="llm_logits", type=kind, device=dev, mode=mode, max_rel_diff=round(diff, 5), same_argmax=same))
                    log("   last prefill logits: tkc against llama.cpp within %.2g of the largest, argmax %s" % (diff, "equal" if same else "DIFFERENT"))
                if args.profile:
                    prof = profile(args.driver, path, device, args, tmp, mode_env(mode))
                    if prof:
                        emit(dict(bench="llm_profile", type=kind, device=dev, mode=mode, **prof))
                        for ph in ("prefill", "decode"):
                            p = prof[ph]
                            log("   profile %s (per %s): wall %.2f ms, in kernels %.2f ms, %d launches; top: %s" %
                                (ph, "token" if ph == "decode" else "run", p["wall_ms"], p["kernel_ms"], p["launches"],
                                 ", ".join("%s %.2f ms" % (n, t) for n, t, _ in p["top"][:5])))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
