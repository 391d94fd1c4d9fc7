#!/usr/bin/env python3
"""tests/test_llm_py.py LLAMA_DRIVER [LLAMA_EXAMPLE]: tkc.llm (the llama decoder in Python, over tkc's
Python API) against the numpy reference of tests/test_llama_py.py (imported: its GGUF files with
random weights, its float64 reference and its runners of the C programs) and against the C decoder
of examples/llama/ on the same files.

Per weight type (F32, Q8_0 with the output tied to the embedding, Q4_0; Q4_K on CPU) and device
($TKC_LLM_DEVICES, default CPU,LLVM,WEBGPU: those that run here): the prefill logits (whole and, for
F32, in pieces at positions > 0) and 32 greedy decode steps through the captured step within
test_llama_py's TOL of the reference, the greedy ids the reference's; the same ids, logits (within
1e-5 of the largest) and decode kernel count as tests/llama_driver on that device; generate() the
same ids. Then, on CPU: seeded sampling deterministic and different per seed, top_k 1 greedy; with
LLAMA_EXAMPLE (build/llama), the example's ids for the same sampling options and seed, and for a text
prompt through the file's vocabulary; the CLI (python3 -m tkc.llm) printing the greedy ids and
tokens/s; and bad inputs (a missing file, a file that is no GGUF, another architecture, a missing
key or tensor, token ids outside the vocabulary, n < 0, more tokens than the context, bad sampling
options) raising TkcError while the model stays usable.

Exit 0 when all pass, 77 (skipped) without numpy / gguf or without any device, 1 on a failure."""
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(REPO, "bindings", "python"))

import test_llama_py as ref  # noqa: E402 (exits 77 without numpy / gguf)
from test_llama_py import Q, np  # noqa: E402

import tkc  # noqa: E402
import tkc.llm  # noqa: E402

DEVICES = [d for d in os.environ.get("TKC_LLM_DEVICES", "CPU,LLVM,WEBGPU").split(",") if tkc.device_available(d)]
SAME_AS_C = 1e-5  # of the largest |logit|: the same graphs as the C decoder, so the same kernels
check = ref.check  # one failure count (ref.failures) for both files' checks


def raises(fn, what, match=None):
    """fn() must raise TkcError (whose message contains match)"""
    try:
        fn()
    except tkc.TkcError as e:
        return check(match is None or match in str(e), "%s: TkcError %r does not mention %r" % (what, str(e), match))
    except Exception as e:  # noqa: BLE001
        return check(False, "%s: %s instead of TkcError: %s" % (what, type(e).__name__, e))
    return check(False, "%s: no error" % what)


def greedy_run(m):
    """prefill of PROMPT (every position) and N_DECODE greedy steps through decode(): as llama_driver"""
    prefill = m.logits(ref.PROMPT)
    token, fed, steps = int(np.argmax(prefill[-1])), [], []
    for step in range(ref.N_DECODE):
        logits = m.decode(token, len(ref.PROMPT) + step)
        fed.append(token)
        steps.append(logits)
        token = int(np.argmax(logits))
    return prefill, fed, np.array(steps)


def check_model(qt, hp, tied, device, path, W, driver, tmp):
    what = "%s%s on %s" % (qt.name, " tied" if tied else "", device)
    with tkc.llm.Llama.load(path, device=device) as m:
        check(m.weight_type == int(qt), "%s: weight type %d" % (what, m.weight_type))
        check((m.hparams.n_vocab, m.hparams.n_layer, m.hparams.n_head_kv) == (hp["n_vocab"], hp["n_layer"], hp["n_head_kv"]),
              "%s: hyperparameters %r" % (what, m.hparams))
        prefill, fed, steps = greedy_run(m)
        before = ref.failures
        ok, err = ref.compare(what, prefill, fed, steps, W, hp)
        ok &= ref.failures == before
        if qt == Q.F32:  # the prompt in pieces of 3: prefill at positions > 0 over the cache
            ids = ref.PROMPT
            pieces = np.concatenate([m.prefill(ids[at:at + 3], at, all_logits=True) for at in range(0, len(ids), 3)])
            want = ref.reference_logits(W, hp, ids)
            e = float(np.abs(pieces - want).max()) / max(1.0, float(np.abs(want).max()))
            ok &= check(e < ref.TOL, "%s: the prompt prefilled in pieces off by %.3g" % (what, e))
            last, every = m.prefill(ids, 0), m.logits(ids)  # the last row alone: another graph, the same values
            ok &= check(last.shape == (hp["n_vocab"],) and np.allclose(last, every[-1], rtol=0, atol=SAME_AS_C * np.abs(every).max()),
                        "%s: prefill's last logits" % what)
        ok &= check(m.generate(ref.PROMPT, ref.N_DECODE) == fed, "%s: generate() gave other ids than the decode loop" % what)
        kernels = m.decode_kernels
        ok &= check(kernels > 0, "%s: no kernels captured in the decode step" % what)
        c = ref.run_driver(driver, path, device, len(ref.PROMPT), os.path.join(tmp, "out.bin"))
        if c is not None:
            c_prefill, c_fed, c_steps, c_kernels = c
            scale = max(1.0, float(np.abs(c_prefill).max()))
            d = max(float(np.abs(prefill - c_prefill).max()), float(np.abs(steps - c_steps).max())) / scale
            ok &= check(c_fed == fed, "%s: greedy ids %s, the C decoder's %s" % (what, fed, c_fed))
            ok &= check(d < SAME_AS_C, "%s: logits differ from the C decoder's by %.3g of the largest" % (what, d))
            ok &= check(c_kernels == kernels, "%s: %d kernels per decode step, the C decoder's %d" % (what, kernels, c_kernels))
        print("%s %s: %d greedy tokens, logits within %.2g of the reference, %d kernels per decode step%s" %
              ("ok  " if ok else "FAIL", what, ref.N_DECODE, err, kernels, "" if c is None else ", as the C decoder (logits within %.2g)" % d))


def check_int8(qt, path, W, driver, tmp):
    """Llama.load(int8=True): the decode step's products in int8, logits within ref.TOL_INT8 of the
    float reference, the same ids and logits as the C decoder in int8 (llama_driver, LLAMA_DRIVER_INT8)"""
    what = "%s int8 on CPU" % qt.name
    with tkc.llm.Llama.load(path, device="CPU", int8=True) as m:
        prefill, fed, steps = greedy_run(m)
        before = ref.failures
        ok, err = ref.compare(what, prefill, fed, steps, W, ref.SMALL, ref.TOL_INT8, greedy=False)
        ok &= ref.failures == before
    c = ref.run_driver(driver, path, "CPU", len(ref.PROMPT), os.path.join(tmp, "out.bin"), dict(os.environ, LLAMA_DRIVER_INT8="1"))
    if c is not None:
        c_prefill, c_fed, c_steps, _ = c
        d = float(np.abs(steps - c_steps).max()) / max(1.0, float(np.abs(c_prefill).max()))
        ok &= check(c_fed == fed, "%s: greedy ids %s, the C decoder's %s" % (what, fed, c_fed))
        ok &= check(d < SAME_AS_C, "%s: logits differ from the C decoder's by %.3g of the largest" % (what, d))
    print("%s %s: logits within %.2g of the float reference%s" % ("ok  " if ok else "FAIL", what, err, "" if c is None else ", as the C decoder"))


def check_sampling(path, example):
    with tkc.llm.Llama.load(path, device="CPU") as m:
        opts = dict(temp=0.8, top_k=40, top_p=0.9)
        a, b, c = (m.generate(ref.PROMPT, ref.N_DECODE, seed=s, **opts) for s in (5, 5, 6))
        check(len(a) == ref.N_DECODE and all(0 <= t < ref.SMALL["n_vocab"] for t in a), "sampled ids %s" % a)
        check(a == b, "seed 5 sampled %s, then %s" % (a, b))
        check(a != c, "seeds 5 and 6 sampled the same %s" % a)
        greedy = m.generate(ref.PROMPT, ref.N_DECODE)
        check(m.generate(ref.PROMPT, ref.N_DECODE, temp=1.5, top_k=1, seed=3) == greedy, "top_k 1 is not greedy")
        check(m.generate(ref.PROMPT, ref.N_DECODE, temp=1.0, top_p=1e-9, seed=3) == greedy, "a tiny top_p is not greedy")
        s = tkc.llm.Sampler(1.0, 0, 1.0, seed=1)
        draws = [s(np.array([0.0, np.log(3.0)], dtype=np.float32)) for _ in range(4000)]
        check(abs(np.mean(draws) - 0.75) < 0.03, "sampling softmax([0, log 3]) drew 1 at a rate of %.3f, not 0.75" % np.mean(draws))
        if example:
            for seed in (5, 6):
                want = ref.run_example(example, path, "--temp", "0.8", "--top-k", "40", "--top-p", "0.9", "--seed", str(seed), "--device", "CPU")
                got = m.generate(ref.PROMPT, ref.N_DECODE, seed=seed, **opts)
                check(want == got, "seed %d: sampled %s, the C example %s" % (seed, got, want))
        print("ok   sampling: seeded, deterministic%s" % (", as the C example" if example else ""))


def check_text(path, example):
    with tkc.llm.Llama.load(path, device="CPU") as m:
        ids = m.tokenizer.encode("hello world")
        check(ids[0] == 1 and 2 <= len(ids) <= 13 and m.tokenizer.decode(ids[1:]) == "hello world", "encode: %s" % ids)
        out = m.generate("hello world", ref.N_DECODE)
        check(out == m.generate(ids, ref.N_DECODE), "a text prompt generated other ids than its tokens")
        check(isinstance(m.tokenizer.decode(out), str), "decode")
        check(m.generate([], 4) == m.generate([m.bos], 4), "an empty prompt is not the BOS token")
        if example:
            check(ref.run_example(example, path, "--device", "CPU", prompt="hello world") == out, "--prompt: the C example's ids differ")
        print("ok   a text prompt through the file's vocabulary%s" % (", as the C example" if example else ""))


def check_cli(path, greedy):
    env = dict(os.environ, PYTHONPATH=os.path.join(REPO, "bindings", "python"))
    cmd = [sys.executable, "-m", "tkc.llm", path, "--tokens", ",".join(map(str, ref.PROMPT)), "--n", str(ref.N_DECODE), "--device", "CPU"]
    r = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=600)
    if check(r.returncode == 0, "%s: exit %d: %s" % (" ".join(cmd), r.returncode, r.stderr.strip())):
        print(r.stdout.strip())
        line = next((l for l in r.stdout.splitlines() if l.startswith("generated:")), "generated:")
        check([int(t) for t in line.split(":")[1].split()] == greedy, "the CLI generated %s, not %s" % (line, greedy))
        check("tokens/s" in r.stdout and "decode:" in r.stdout, "the CLI printed no tokens/s")
    r = subprocess.run(cmd[:3] + [path + ".missing"], capture_output=True, text=True, env=env, timeout=600)
    check(r.returncode == 1 and "no such file" in r.stderr and "Traceback" not in r.stderr, "the CLI on a missing file: %d %r" % (r.returncode, r.stderr))
    r = subprocess.run(cmd[:4] + ["--n", "-1"], capture_output=True, text=True, env=env, timeout=600)
    check(r.returncode == 2 and "Traceback" not in r.stderr, "the CLI with --n -1: %d %r" % (r.returncode, r.stderr))


def write_gguf(path, arch, drop_key=None):
    """a small GGUF of architecture arch (one tensor), without the metadata key drop_key"""
    w = ref.gguf.GGUFWriter(path, arch)
    for key, add, v in [("context_length", w.add_context_length, 16), ("embedding_length", w.add_embedding_length, 8),
                        ("block_count", w.add_block_count, 1), ("feed_forward_length", w.add_feed_forward_length, 16),
                        ("attention.head_count", w.add_head_count, 2)]:
        if key != drop_key:
            add(v)
    w.add_tensor("token_embd.weight", np.ones((4, 8), dtype=np.float32))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def check_errors(path, tmp):
    missing = os.path.join(tmp, "missing.gguf")
    raises(lambda: tkc.llm.Llama.load(missing, device="CPU"), "a missing file", "no such file")
    junk = os.path.join(tmp, "junk.gguf")
    open(junk, "wb").write(b"not a gguf file at all" * 10)
    raises(lambda: tkc.llm.Llama.load(junk, device="CPU"), "a file that is no GGUF")
    other = os.path.join(tmp, "gpt2.gguf")
    write_gguf(other, "gpt2")
    raises(lambda: tkc.llm.Llama.load(other, device="CPU"), "a gpt2 file", "not llama")
    nokey = os.path.join(tmp, "nokey.gguf")
    write_gguf(nokey, "llama", drop_key="block_count")
    raises(lambda: tkc.llm.Llama.load(nokey, device="CPU"), "a file without llama.block_count", "llama.block_count")
    incomplete = os.path.join(tmp, "incomplete.gguf")
    ref.write_model(incomplete, ref.SMALL, Q.F32, np.random.default_rng(3), drop="blk.1.ffn_down.weight")
    raises(lambda: tkc.llm.Llama.load(incomplete, device="CPU"), "a file without blk.1.ffn_down.weight", "blk.1.ffn_down.weight")
    with tkc.Context("CPU") as ctx:
        raises(lambda: tkc.llm.Llama.load(path, device="LLVM", ctx=ctx), "ctx and device that disagree")
        with tkc.llm.Llama.load(path, ctx=ctx) as m:
            nv = m.hparams.n_vocab
            want = m.generate(ref.PROMPT, 4)
            raises(lambda: m.logits([1, nv]), "logits of a token id = n_vocab", "outside the vocabulary")
            raises(lambda: m.logits([-1]), "logits of token -1", "outside the vocabulary")
            raises(lambda: m.generate([1, 2, 10 ** 9], 4), "generate with a huge token id", "outside the vocabulary")
            raises(lambda: m.decode(nv, 3), "decode of token n_vocab", "outside the vocabulary")
            raises(lambda: m.decode(1, m.hparams.n_ctx), "decode past the context", "context")
            raises(lambda: m.generate(ref.PROMPT, -1), "n = -1", "n must be")
            raises(lambda: m.generate(ref.PROMPT, 2.5), "n = 2.5", "n must be")
            raises(lambda: m.generate([1.5, 2], 2), "float token ids", "integers")
            raises(lambda: m.generate(ref.PROMPT, m.hparams.n_ctx), "more tokens than the context", "exceed the context")
            raises(lambda: m.prefill([]), "an empty prefill", "no tokens")
            raises(lambda: m.prefill([1, 2], m.hparams.n_ctx - 1), "a prefill past the context", "context")
            raises(lambda: m.generate(ref.PROMPT, 4, temp=-1), "temp < 0", "sampling")
            raises(lambda: m.generate(ref.PROMPT, 4, temp=1, top_p=0), "top_p 0", "sampling")
            raises(lambda: m.generate(ref.PROMPT, 4, temp=1, top_k=-2), "top_k < 0", "sampling")
            raises(lambda: m.generate("hello", 4), "a text prompt without a vocabulary", "no vocabulary")
            check(m.generate(ref.PROMPT, 0) == [], "n = 0 generated something")
            check(m.generate(ref.PROMPT, 4) == want, "the model after the errors: %s, before %s" % (m.generate(ref.PROMPT, 4), want))
    print("ok   bad inputs raise TkcError")


def main():
    driver = sys.argv[1]
    example = sys.argv[2] if len(sys.argv) > 2 else None
    if not DEVICES:
        print("skipped: none of the devices runs here")
        return 77
    rng = np.random.default_rng(2025)
    with tempfile.TemporaryDirectory() as tmp:
        files = {}
        for qt, hp, tied in [(Q.F32, ref.SMALL, False), (Q.Q8_0, ref.SMALL, True), (Q.Q4_0, ref.SMALL, False), (Q.Q4_K, ref.WIDE, False)]:
            path = os.path.join(tmp, "llama-%s.gguf" % qt.name)
            files[qt] = path, ref.write_model(path, hp, qt, rng, tied)
            for device in DEVICES if qt != Q.Q4_K else DEVICES[:1]:
                check_model(qt, hp, tied, device, path, files[qt][1], driver, tmp)
        path = files[Q.Q4_0][0]
        if "CPU" in DEVICES:
            for qt in (Q.Q4_0, Q.Q8_0):
                check_int8(qt, files[qt][0], files[qt][1], driver, tmp)
            check_sampling(path, example)
            vocab = os.path.join(tmp, "llama-vocab.gguf")
            ref.write_model(vocab, ref.SMALL, Q.F32, rng, vocab=True)
            check_text(vocab, example)
            with tkc.llm.Llama.load(path, device="CPU") as m:
                greedy = m.generate(ref.PROMPT, ref.N_DECODE)
            check_cli(path, greedy)
            check_errors(path, tmp)
    total = ref.failures
    print("tkc.llm: %d failures" % total)
    return 1 if total else 0


if __name__ == "__main__":
    sys.exit(main())
