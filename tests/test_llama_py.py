#!/usr/bin/env python3
"""tests/test_llama_py.py LLAMA_DRIVER: the llama decoder of examples/llama/llama_model.c against a
numpy reference of the same architecture, on small GGUF files with random weights written by the
gguf package (the writer llama.cpp's authors publish).

Per weight type (F32, F16, BF16, Q8_0, Q4_0, Q4_1, Q5_0, Q5_1 quantized by gguf.quants; Q4_K, Q5_K, Q6_K as
random blocks with small float16 scales, which gguf can only dequantize) a file of a tiny llama
(2 layers, 4 heads over 2 KV heads, vocabulary 300) is written; tests/llama_driver prefills 8 tokens
and generates 32 greedily through the captured decode step, on every device here. The reference
(float64, the same dequantized weights: gguf.quants.dequantize) must give the same tokens and logits
within TOL of the largest logit. RoPE is ggml's mode 0 on both sides: pairs (2i, 2i+1) rotated.

With llama-cpp-python importable, K-quant files made as llama.cpp makes them: a tiny F32 model (rows
of 256, the K-quants' block) quantized by llama.cpp's own quantizer (llama_model_quantize) to Q4_K_M,
Q5_K_M and Q6_K, and to Q4_K_M with an ffn of 640, whose ffn_down rows llama.cpp cannot make K-quant
blocks of (it falls back to Q5_0 / Q8_0 there); the reference reads the quantized file back and
dequantizes each tensor by the type llama.cpp chose for it. Without it these cases are skipped with the
reason printed.

With --example PATH/TO/llama, the example program instead (examples/llama.c) on a Q4_0 file, on the
default device: its greedy ids against the reference's, and sampling (temperature, top-k, top-p)
giving ids in the vocabulary, the same for the same seed.

usage: test_llama_py.py PATH/TO/llama_driver       ($TKC_LLAMA_DEVICES: a comma list to run on; INTERP
       runs F32 and Q4_0 only unless that list is given)
       test_llama_py.py --example PATH/TO/llama
Exit 0 when all match, 77 (skipped) without numpy / gguf or without any device, 1 on a mismatch."""
import os
import subprocess
import sys
import tempfile

try:
    import numpy as np
    import gguf
    from gguf import GGMLQuantizationType as Q
    import llama_gguf  # the model files (tests/llama_gguf.py, beside this file)
except ImportError as e:
    print("skipped: numpy and gguf are needed (%s; pip install gguf numpy)" % e)
    sys.exit(77)

try:  # llama.cpp's quantizer, for the K-quant files (the gguf package cannot quantize to them)
    import llama_cpp
    try:
        llama_cpp._logger.set_verbose(False)  # the quantizer's log of every tensor
    except AttributeError:
        pass
    LLAMA_CPP_MISSING = None
except Exception as e:  # ImportError, or its shared library failing to load
    llama_cpp, LLAMA_CPP_MISSING = None, str(e)

DEVICES = os.environ.get("TKC_LLAMA_DEVICES", "CPU,LLVM,WEBGPU,INTERP,CUDA").split(",")
SMALL = dict(n_embd=64, n_layer=2, n_head=4, n_head_kv=2, n_ff=128, n_vocab=300, n_ctx=128, rope_base=10000.0, eps=1e-5)
WIDE = dict(SMALL, n_embd=256, n_ff=512)  # rows of 256: the K-quants' block
QUANTIZED = [Q.F32, Q.F16, Q.BF16, Q.Q8_0, Q.Q4_0, Q.Q4_1, Q.Q5_0, Q.Q5_1]
K_QUANTS = {Q.Q4_K: [0, 2], Q.Q5_K: [0, 2], Q.Q6_K: [208]}  # byte offsets of a block's float16 scales
# llama.cpp's quantizer: (name, llama_ftype LLAMA_FTYPE_MOSTLY_*, model). Rows of 640 (ffn_down's) are no
# multiple of 256: llama.cpp quantizes those tensors to a fallback type (Q5_0 / Q8_0 for Q4_K / Q6_K)
LLAMA_CPP_FTYPES = [("Q4_K_M", 15, WIDE), ("Q5_K_M", 17, WIDE), ("Q6_K", 18, WIDE), ("Q4_K_M ffn 640", 15, dict(WIDE, n_ff=640))]
INTERP_TYPES = [Q.F32, Q.Q4_0]  # on INTERP by default (every type when $TKC_LLAMA_DEVICES names it)
PROMPT = [1, 17, 42, 299, 5, 123, 7, 250]
N_DECODE = 32
TOL = 1e-3  # of the largest |logit|: float32 against float64 over two layers
failures = 0


def check(cond, what):
    global failures
    if not cond:
        failures += 1
        print("FAIL:", what)
    return cond


# ---------------------------------------------------------------- the model file

def random_k_blocks(rng, qt, shape):
    """random blocks of a K-quant with small finite scales (values of about 1 / sqrt(row length))"""
    block, nbytes = gguf.GGML_QUANT_SIZES[qt]
    rows, cols = shape
    raw = rng.integers(0, 256, size=(rows, cols // block, nbytes), dtype=np.uint8)
    scale = np.float16(0.5 / np.sqrt(cols) / (63 * 15 if qt != Q.Q6_K else 127 * 32))
    for off in K_QUANTS[qt]:
        raw[:, :, off:off + 2] = np.frombuffer(scale.tobytes(), dtype=np.uint8)
    if qt != Q.Q6_K:  # dmin: the subtracted minimum, about half the range, so values centre near 0
        raw[:, :, 2:4] = np.frombuffer(np.float16(float(scale) * 15 * 32).tobytes(), dtype=np.uint8)
    return raw.reshape(rows, cols // block * nbytes)


def write_model(path, hp, qt, rng, tied=False, drop=None, vocab=False):
    """writes a llama GGUF whose 2-D weights are of type qt (norms stay F32, as llama.cpp writes them),
    without the tensor named drop (and with llama_gguf.vocab's vocabulary when vocab); returns the weights
    as the file holds them, dequantized to float32"""
    w = dict(llama_gguf.weights(rng, hp))
    if tied:
        del w["output.weight"]
    if drop:
        del w[drop]
    writer = llama_gguf.writer(path, hp, with_vocab=vocab, eos=None)
    held = {}
    for name, a in w.items():
        if a.ndim == 1 or qt == Q.F32:
            writer.add_tensor(name, a)
            held[name] = a
        elif qt == Q.F16:
            writer.add_tensor(name, a.astype(np.float16))
            held[name] = a.astype(np.float16).astype(np.float32)
        else:
            packed = random_k_blocks(rng, qt, a.shape) if qt in K_QUANTS else gguf.quants.quantize(a, qt)
            writer.add_tensor(name, packed, raw_dtype=qt)
            held[name] = gguf.quants.dequantize(packed, qt).astype(np.float32).reshape(a.shape)
    llama_gguf.finish(writer)
    if tied:
        held["output.weight"] = held["token_embd.weight"]
    return held


def quantize_llama_cpp(src, dst, ftype):
    """src (a GGUF file) quantized to dst by llama.cpp's quantizer; returns its float32 weights as
    the file holds them (each tensor dequantized by gguf.quants by its own type) and {type: count} of
    the 2-D tensors"""
    llama_gguf.quantize(llama_cpp, src, dst, ftype)
    held, types = {}, {}
    for t in gguf.GGUFReader(dst).tensors:
        shape = tuple(int(d) for d in reversed(t.shape))  # numpy's row-major order: ggml's ne reversed
        held[t.name] = gguf.quants.dequantize(t.data, t.tensor_type).astype(np.float32).reshape(shape)
        if len(shape) == 2:
            types[t.tensor_type.name] = types.get(t.tensor_type.name, 0) + 1
    if "output.weight" not in held:
        held["output.weight"] = held["token_embd.weight"]
    return held, types


# ---------------------------------------------------------------- the numpy reference

def rms_norm(x, w, eps):
    return x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + eps) * w


def rope(x, positions, base):
    """ggml's mode 0: x (T, heads, hd), pairs (2i, 2i+1) rotated by pos * base^(-2i/hd)"""
    hd = x.shape[-1]
    theta = positions[:, None] * base ** (-np.arange(0, hd, 2, dtype=np.float64) / hd)  # (T, hd/2)
    c, s = np.cos(theta)[:, None, :], np.sin(theta)[:, None, :]
    x0, x1 = x[..., 0::2], x[..., 1::2]
    out = np.empty_like(x)
    out[..., 0::2], out[..., 1::2] = x0 * c - x1 * s, x0 * s + x1 * c
    return out


def reference_logits(W, hp, tokens):
    """(T, vocab) logits of every position of tokens, causal, in float64"""
    W = {k: v.astype(np.float64) for k, v in W.items()}
    T, H, HKV = len(tokens), hp["n_head"], hp["n_head_kv"]
    hd = hp["n_embd"] // H
    pos = np.arange(T, dtype=np.float64)
    causal = np.tril(np.ones((T, T), dtype=bool))
    x = W["token_embd.weight"][tokens]
    for l in range(hp["n_layer"]):
        p = "blk.%d." % l
        h = rms_norm(x, W[p + "attn_norm.weight"], hp["eps"])
        q = rope((h @ W[p + "attn_q.weight"].T).reshape(T, H, hd), pos, hp["rope_base"])
        k = rope((h @ W[p + "attn_k.weight"].T).reshape(T, HKV, hd), pos, hp["rope_base"])
        v = (h @ W[p + "attn_v.weight"].T).reshape(T, HKV, hd)
        k, v = np.repeat(k, H // HKV, axis=1), np.repeat(v, H // HKV, axis=1)  # head h reads kv head h // group
        s = np.einsum("thd,shd->hts", q, k) / np.sqrt(hd)
        s = np.where(causal, s, -np.inf)
        a = np.exp(s - s.max(axis=-1, keepdims=True))
        a /= a.sum(axis=-1, keepdims=True)
        o = np.einsum("hts,shd->thd", a, v).reshape(T, H * hd)
        x = x + o @ W[p + "attn_output.weight"].T
        h = rms_norm(x, W[p + "ffn_norm.weight"], hp["eps"])
        g = h @ W[p + "ffn_gate.weight"].T
        x = x + (g / (1 + np.exp(-g)) * (h @ W[p + "ffn_up.weight"].T)) @ W[p + "ffn_down.weight"].T
    return rms_norm(x, W["output_norm.weight"], hp["eps"]) @ W["output.weight"].T


# ---------------------------------------------------------------- tkc through the driver

def run_driver(driver, path, device, chunk, out, env=None):
    r = subprocess.run([driver, path, device, ",".join(map(str, PROMPT)), str(chunk), str(N_DECODE), out], capture_output=True, text=True,
                       timeout=600, env=env)
    if r.returncode == 77:
        return None
    if not check(r.returncode == 0, "%s on %s: llama_driver exited %d: %s" % (path, device, r.returncode, r.stderr.strip())):
        return None
    data = open(out, "rb").read()
    n, nv = np.frombuffer(data, dtype=np.int32, count=2)
    at = 8
    prefill = np.frombuffer(data, dtype=np.float32, count=n * nv, offset=at).reshape(n, nv)
    at += 4 * n * nv
    fed, steps = [], []
    for _ in range(N_DECODE):
        fed.append(int(np.frombuffer(data, dtype=np.int32, count=1, offset=at)[0]))
        steps.append(np.frombuffer(data, dtype=np.float32, count=nv, offset=at + 4))
        at += 4 + 4 * nv
    kernels = int(np.frombuffer(data, dtype=np.int32, count=1, offset=at)[0])
    return prefill, fed, np.array(steps), kernels


def compare(what, prefill, fed, steps, W, hp, tol=TOL, greedy=True):
    """tkc's prefill and decode logits against the reference over the same tokens (within tol of the
    largest); greedy tokens equal when asked"""
    ref = reference_logits(W, hp, PROMPT + fed)
    scale = max(1.0, float(np.abs(ref).max()))
    n = len(PROMPT)
    err_p = float(np.abs(prefill - ref[:n]).max()) / scale
    err_d = float(np.abs(steps - ref[n:]).max()) / scale
    ok = check(err_p < tol, "%s: prefill logits off by %.3g of the largest" % (what, err_p))
    ok &= check(err_d < tol, "%s: decode logits off by %.3g of the largest" % (what, err_d))
    want = [int(np.argmax(ref[n - 1 + j])) for j in range(N_DECODE)]
    if greedy and not check(fed == want, "%s: greedy tokens %s, the reference's %s" % (what, fed, want)):
        j = next(j for j in range(N_DECODE) if fed[j] != want[j])
        top = np.sort(ref[n - 1 + j])[-2:]
        print("  first difference at step %d; the reference's top two logits there: %s" % (j, top))
    return ok, max(err_p, err_d)


def run_example(program, path, *args, prompt=None, out=None):
    """the ids examples/llama.c prints after "generated:" (None when it fails); out gets every line"""
    first = ["--prompt", prompt] if prompt is not None else ["--tokens", ",".join(map(str, PROMPT))]
    cmd = [program, path] + first + ["--n", str(N_DECODE)] + list(args)
    r = subprocess.run(cmd, capture_output=True, text=True, errors="replace", timeout=600)  # (random text)
    if not check(r.returncode == 0, "%s exited %d: %s" % (" ".join(cmd), r.returncode, r.stderr.strip())):
        return None
    print(r.stdout.strip())
    if out is not None:
        out.extend(r.stdout.splitlines())
    line = next((l for l in r.stdout.splitlines() if l.startswith("generated:")), "generated:")
    return [int(t) for t in line.split(":")[1].split() if t.lstrip("-").isdigit()]


def example_main(program):
    rng = np.random.default_rng(7)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "llama-Q4_0.gguf")
        W = write_model(path, SMALL, Q.Q4_0, rng)
        got = run_example(program, path)
        if got is not None:
            ref = reference_logits(W, SMALL, PROMPT + got)
            want = [int(np.argmax(ref[len(PROMPT) - 1 + j])) for j in range(N_DECODE)]
            check(got == want, "greedy ids %s, the reference's %s" % (got, want))
        sampled = [run_example(program, path, "--temp", "0.8", "--top-k", "40", "--top-p", "0.9", "--seed", str(seed)) for seed in (5, 5, 6)]
        if all(x is not None for x in sampled):
            check(all(len(x) == N_DECODE and all(0 <= t < SMALL["n_vocab"] for t in x) for x in sampled), "sampled ids outside the vocabulary")
            check(sampled[0] == sampled[1], "seed 5 sampled %s, then %s" % (sampled[0], sampled[1]))
            check(sampled[0] != sampled[2], "seeds 5 and 6 sampled the same %s" % sampled[0])
        # a text prompt, encoded with the file's vocabulary: the same generation as its ids given
        # as --tokens, and the generated text printed
        path = os.path.join(tmp, "llama-vocab.gguf")
        write_model(path, SMALL, Q.F32, rng, vocab=True)
        lines = []
        got = run_example(program, path, prompt="hello world", out=lines)
        pl = next((l for l in lines if l.startswith("prompt:")), "prompt:")
        ids = [int(t) for t in pl.split(":")[1].split()]
        if check(got is not None and 2 <= len(ids) <= 13 and ids[0] == 1, "--prompt: prompt ids %s" % ids):
            again = run_example(program, path, "--tokens", ",".join(map(str, ids)))
            check(again == got, "--prompt generated %s, the same ids as --tokens %s" % (got, again))
            check(any(l.startswith("text: ") for l in lines), "--prompt: no generated text printed")
    print("llama example: %d failures" % failures)
    return 1 if failures else 0


TOL_INT8 = 3e-2  # of the largest |logit|: the decode step's inputs quantized to int8 per 32 values


def run_int8(driver, tmp, path, W, hp, label):
    """the decode step in int8 (quantized products with x quantized per 32, as llama.cpp) on the host
    devices: its logits within the quantization's error of the float reference, over the tokens it
    fed (greedy tokens may part from the reference's where two logits are that close)"""
    ran = 0
    for device in [d for d in DEVICES if d in ("CPU", "LLVM")]:
        got = run_driver(driver, path, device, len(PROMPT), os.path.join(tmp, "out.bin"), dict(os.environ, LLAMA_DRIVER_INT8="1"))
        if got is None:
            continue
        prefill, fed, steps, kernels = got
        what = "%s int8 on %s" % (label, device)
        ok, err = compare(what, prefill, fed, steps, W, hp, TOL_INT8, greedy=False)
        ref = reference_logits(W, hp, PROMPT + fed)
        same = sum(int(np.argmax(ref[len(PROMPT) - 1 + j])) == fed[j] for j in range(N_DECODE))
        print("%s %s: logits within %.2g of the largest, %d of %d greedy tokens the reference's, %d kernels per decode step" %
              ("ok  " if ok else "FAIL", what, err, same, N_DECODE, kernels))
        ran += 1
    return ran


def run_file(driver, tmp, path, W, hp, label, on_interp, chunks):
    """the driver on path on every device against the reference of W; returns the runs made"""
    ran = 0
    for device in DEVICES:
        if device == "INTERP" and not on_interp and "TKC_LLAMA_DEVICES" not in os.environ:
            continue  # the interpreter takes about a minute per file
        for chunk in chunks:
            got = run_driver(driver, path, device, chunk, os.path.join(tmp, "out.bin"))
            if got is None:
                continue
            prefill, fed, steps, kernels = got
            what = "%s on %s (prefill by %d)" % (label, device, chunk)
            ok, err = compare(what, prefill, fed, steps, W, hp)
            ok &= check(kernels > 0, "%s: no kernels captured in the decode step" % what)
            print("%s %s: %d greedy tokens, logits within %.2g of the largest, %d kernels per decode step" %
                  ("ok  " if ok else "FAIL", what, N_DECODE, err, kernels))
            ran += 1
    return ran


def main():
    if sys.argv[1] == "--example":
        return example_main(sys.argv[2])
    driver = sys.argv[1]
    rng = np.random.default_rng(2024)
    ran = 0
    with tempfile.TemporaryDirectory() as tmp:
        models = [(qt, SMALL, qt == Q.Q8_0) for qt in QUANTIZED] + [(qt, WIDE, False) for qt in K_QUANTS]
        for qt, hp, tied in models:
            path = os.path.join(tmp, "llama-%s.gguf" % qt.name)
            W = write_model(path, hp, qt, rng, tied)
            chunks = [len(PROMPT)] + ([3] if qt == Q.F32 else [])  # F32: the prompt also in pieces (prefill at pos > 0)
            ran += run_file(driver, tmp, path, W, hp, qt.name + (" tied" if tied else ""), qt in INTERP_TYPES, chunks)
            if qt not in (Q.F32, Q.F16, Q.BF16):  # every quantized type has the int8 path
                ran += run_int8(driver, tmp, path, W, hp, qt.name + (" tied" if tied else ""))
        # K-quant files as llama.cpp writes them: an F32 file through its quantizer
        if llama_cpp is None:
            print("skipped: the K-quant files of llama.cpp's quantizer (llama-cpp-python is not importable: %s)" % LLAMA_CPP_MISSING)
        else:
            sources = {}
            for name, ftype, hp in LLAMA_CPP_FTYPES:
                src = os.path.join(tmp, "llama-ffn%d-F32.gguf" % hp["n_ff"])
                if src not in sources:
                    write_model(src, hp, Q.F32, rng, vocab=True)
                    sources[src] = True
                path = os.path.join(tmp, "llama-%s.gguf" % name.replace(" ", "-"))
                try:
                    W, types = quantize_llama_cpp(src, path, ftype)
                except Exception as e:
                    check(False, "llama.cpp's quantizer to %s: %s" % (name, e))
                    continue
                k_types = {"Q4_K", "Q5_K", "Q6_K"}
                check(k_types & set(types), "%s by llama.cpp holds no K-quant tensor: %s" % (name, types))
                label = "%s by llama.cpp (%s)" % (name, ", ".join("%d %s" % (c, t) for t, c in sorted(types.items())))
                ran += run_file(driver, tmp, path, W, hp, label, False, [len(PROMPT)])
                ran += run_int8(driver, tmp, path, W, hp, label)
        # a file without one of the layers' tensors is refused, naming it
        path = os.path.join(tmp, "llama-incomplete.gguf")
        write_model(path, SMALL, Q.F32, rng, drop="blk.1.ffn_down.weight")
        r = subprocess.run([driver, path, "CPU", "1,2", "2", "1", os.path.join(tmp, "out.bin")], capture_output=True, text=True, timeout=600)
        if r.returncode != 77:
            check(r.returncode == 1 and "blk.1.ffn_down.weight" in r.stderr, "a file without blk.1.ffn_down.weight: exit %d, %r" % (r.returncode, r.stderr))
    if not ran and not failures:
        print("skipped: no device runs here")
        return 77
    print("%d runs, %d failures" % (ran, failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
