#!/usr/bin/env python3
"""tests/test_tokenizer_py.py LIBTKC: tkc's GGUF tokenizer (tkc_tokenizer_*, include/tkc/io.h) on
vocabularies written by gguf.GGUFWriter, its ids compared with a small pure-Python reference of the
same algorithms written here (naive O(n^2) loops, not tkc's heap):
  - "llama" (SentencePiece): a vocabulary of the 256 <0xXX> byte tokens, characters and merged pieces
    learnt from a small corpus (score = -order learnt), encoded with and without add_space_prefix
  - "gpt2" (byte-level BPE): GPT-2's byte characters and merges learnt from the same corpus; the
    pre-tokenizer checked against Python's re with the ASCII classes tkc documents, and (with the
    `regex` package) against GPT-2's real pattern on ASCII text, where the two agree by design
  - decode(encode(text)) == text for every text, random bytes and invalid UTF-8 included
  - llama-cpp-python, when installed, tokenizing the same vocab-only GGUF (skipped otherwise)
Exit 77 (skipped) without numpy or gguf."""
import ctypes
import os
import random
import re
import sys
import tempfile

try:
    import numpy as np
    import gguf
except ImportError as e:
    print("skipped: numpy and gguf are needed (%s)" % e)
    sys.exit(77)

lib = ctypes.CDLL(sys.argv[1])
P, S, I, I32, SZ = ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int, ctypes.c_int32, ctypes.c_size_t
for name, res, args in [
    ("tkc_ctx_new", P, [S]), ("tkc_ctx_free", None, [P]), ("tkc_last_error", S, []), ("tkc_clear_error", None, []),
    ("tkc_gguf_load", P, [P, S]), ("tkc_state_free", None, [P]),
    ("tkc_tokenizer_from_gguf", P, [P]), ("tkc_tokenizer_free", None, [P]),
    ("tkc_tokenizer_encode", I, [P, ctypes.c_char_p, SZ, I, ctypes.POINTER(I32), I]),
    ("tkc_tokenizer_decode", I, [P, ctypes.POINTER(I32), I, ctypes.c_char_p, SZ]),
    ("tkc_tokenizer_vocab_size", I, [P]), ("tkc_tokenizer_bos", I32, [P]), ("tkc_tokenizer_eos", I32, [P]),
]:
    f = getattr(lib, name)
    f.restype, f.argtypes = res, args

failures = 0


def check(cond, what):
    global failures
    if not cond:
        failures += 1
        print("FAIL:", what)


def err():
    return (lib.tkc_last_error() or b"").decode()


CORPUS = ("the quick brown fox jumps over the lazy dog. hello world, hello there! "
          "The theory of the thing: they're all there; it's 1234 and 567. "
          "café déjà vu, naïve façade — 日本語のテキスト and 日本 again. "
          "tokenizers split text into pieces; pieces merge into tokens. ") * 3
TEXTS = ["hello world", "Hello World", "the theory", "  leading spaces", "trailing spaces  ", "tabs\tand\nnew\n\nlines",
         "they're it's we'll I've you'd I'm", "numbers 12345 and 3.14159", "café déjà vu", "日本語", "日本", "emoji 😀 here 🎉",
         "punctuation!!! ...?? (a) [b] {c}", "x", " ", "", "   \n  x", "mixed: héllo 世界 😀 ok",
         "the quick brown fox jumps over the lazy dog", "\u00a0nbsp\u3000ideographic space",
         "lll llll eee eeee ttt thth hehehe", "    ", "aaaa  bbbb"]


def utf8_chars(b):
    """b split as tkc splits: a valid UTF-8 sequence (structure only) or a single byte"""
    out, i = [], 0
    while i < len(b):
        c = b[i]
        k = 1 if c < 0x80 else 2 if c >> 5 == 6 else 3 if c >> 4 == 14 else 4 if c >> 3 == 30 else 0
        if k == 0 or i + k > len(b) or any(x & 0xC0 != 0x80 for x in b[i + 1:i + k]):
            k = 1
        out.append(b[i:i + k])
        i += k
    return out


# ---------------------------------------------------------------- SentencePiece


def learn_pieces(words, n_merges):
    """a toy BPE training on lists of symbols: the merged strings in the order learnt"""
    words = [list(w) for w in words]
    learnt = []
    for _ in range(n_merges):
        counts = {}
        for w in words:
            for a, b in zip(w, w[1:]):
                counts[(a, b)] = counts.get((a, b), 0) + 1
        if not counts:
            break
        (a, b), _ = max(counts.items(), key=lambda kv: (kv[1], kv[0]))
        learnt.append((a, b))
        for w in words:
            i = 0
            while i < len(w) - 1:
                if w[i] == a and w[i + 1] == b:
                    w[i:i + 2] = [a + b]
                i += 1
    return learnt


SP = "\u2581"


def spm_vocab():
    tokens, scores, types = ["<unk>", "<s>", "</s>"], [0.0, 0.0, 0.0], [2, 3, 3]
    for b in range(256):
        tokens.append("<0x%02X>" % b), scores.append(0.0), types.append(6)
    text = CORPUS.replace(" ", SP)
    chars = sorted(set(text) - {"本", "🎉"})  # a few characters left to byte fallback
    for c in chars:
        tokens.append(c), scores.append(-1000.0 - len(tokens) * 0.01), types.append(1)
    words = [list(SP + w) for w in CORPUS.split(" ") if w]
    for k, (a, b) in enumerate(learn_pieces(words, 250)):
        if a + b not in tokens:
            tokens.append(a + b), scores.append(-float(k)), types.append(1)
    return tokens, scores, types


def spm_encode(tokens, scores, text, add_space_prefix, add_bos, bos=1, unk=0):
    vocab = {t.encode(): i for i, t in enumerate(tokens)}
    esc = text.replace(b" ", SP.encode())
    if add_space_prefix and text:
        esc = SP.encode() + esc
    syms = utf8_chars(esc)
    while True:
        best = None
        for i in range(len(syms) - 1):
            tid = vocab.get(syms[i] + syms[i + 1])
            if tid is not None and (best is None or np.float32(scores[tid]) > best[0]):
                best = (np.float32(scores[tid]), i)
        if best is None:
            break
        i = best[1]
        syms[i:i + 2] = [syms[i] + syms[i + 1]]
    out = [bos] if add_bos else []
    for s in syms:
        if s in vocab:
            out.append(vocab[s])
        else:
            out += [vocab.get(("<0x%02X>" % c).encode(), unk) for c in s]
    return out


# ---------------------------------------------------------------- GPT-2 byte-level BPE


def bytes_to_unicode():
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    cs, n = bs[:], 0
    for b in range(256):
        if b not in bs:
            bs.append(b), cs.append(256 + n)
            n += 1
    return dict(zip(bs, map(chr, cs)))


B2U = bytes_to_unicode()
# tkc's documented approximation of GPT-2's regex: ASCII classes, bytes >= 0x80 are letters
APPROX = re.compile(rb"""'s|'t|'re|'ve|'m|'ll|'d| ?[A-Za-z\x80-\xff]+| ?[0-9]+| ?[^\sA-Za-z0-9\x80-\xff]+|\s+(?!\S)|\s+""")
GPT2_PAT = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""


def bpe_vocab():
    tokens = ["<|endoftext|>"] + [B2U[b] for b in range(256)]
    words = [[B2U[b] for b in w] for w in APPROX.findall(CORPUS.encode())]
    merges = []
    for a, b in learn_pieces(words, 300):
        merges.append(a + " " + b)
        if a + b not in tokens:
            tokens.append(a + b)
    return tokens, merges


def bpe_encode(tokens, merges, text):
    vocab = {t: i for i, t in enumerate(tokens)}
    rank = {}
    for i, m in enumerate(merges):
        rank.setdefault(m, i)
    out = []
    for word in APPROX.findall(text):
        syms = [B2U[b] for b in word]
        while True:
            best = None
            for i in range(len(syms) - 1):
                r = rank.get(syms[i] + " " + syms[i + 1])
                if r is not None and (best is None or r < best[0]):
                    best = (r, i)
            if best is None:
                break
            i = best[1]
            syms[i:i + 2] = [syms[i] + syms[i + 1]]
        for s in syms:
            out += [vocab[s]] if s in vocab else [vocab[c] for c in s]
    return out


# ---------------------------------------------------------------- through tkc


def write_gguf(path, model, tokens, scores=None, types=None, merges=None, add_space_prefix=None, bos=None, eos=None, add_bos=None):
    w = gguf.GGUFWriter(path, "llama")
    w.add_tokenizer_model(model)
    w.add_token_list(tokens)
    if scores is not None:
        w.add_token_scores(scores)
    if types is not None:
        w.add_token_types(types)
    if merges is not None:
        w.add_token_merges(merges)
    if bos is not None:
        w.add_bos_token_id(bos)
    if eos is not None:
        w.add_eos_token_id(eos)
    if add_bos is not None:
        w.add_add_bos_token(add_bos)
    if add_space_prefix is not None:
        w.add_add_space_prefix(add_space_prefix)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def load_tok(ctx, path):
    st = lib.tkc_gguf_load(ctx, path.encode())
    if not st:
        raise RuntimeError("load %s: %s" % (path, err()))
    tok = lib.tkc_tokenizer_from_gguf(st)
    lib.tkc_state_free(st)  # the tokenizer keeps its own copy
    if not tok:
        raise RuntimeError("tokenizer %s: %s" % (path, err()))
    return tok


def tkc_encode(tok, text, add_bos=0):
    n = lib.tkc_tokenizer_encode(tok, text, len(text), add_bos, None, 0)
    if n < 0:
        raise RuntimeError("encode %r: %s" % (text, err()))
    ids = (I32 * max(n, 1))()
    n2 = lib.tkc_tokenizer_encode(tok, text, len(text), add_bos, ids, n)
    check(n2 == n, "encode count %d then %d" % (n, n2))
    return list(ids[:n])


def tkc_decode(tok, ids):
    arr = (I32 * max(len(ids), 1))(*ids)
    n = lib.tkc_tokenizer_decode(tok, arr, len(ids), None, 0)
    if n < 0:
        raise RuntimeError("decode: %s" % err())
    buf = ctypes.create_string_buffer(n + 1)
    check(lib.tkc_tokenizer_decode(tok, arr, len(ids), buf, n + 1) == n, "decode count")
    return buf.raw[:n]


def random_texts(rng, k):
    alphabet = list("abcdefghijklmnopqrstuvwxyz THE'.,!?0123456789\n\t") + ["é", "日", "本", "😀", "ß", "  "]
    out = ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 40))).encode() for _ in range(k)]
    out += [bytes(rng.randrange(256) for _ in range(rng.randint(0, 24))) for _ in range(k // 2)]  # invalid UTF-8 too
    return out


def test_spm(ctx, tmp, rng):
    tokens, scores, types = spm_vocab()
    for prefix in (True, False):
        path = os.path.join(tmp, "spm%d.gguf" % prefix)
        write_gguf(path, "llama", tokens, scores, types, add_space_prefix=prefix, bos=1, eos=2)
        tok = load_tok(ctx, path)
        check(lib.tkc_tokenizer_vocab_size(tok) == len(tokens), "spm vocab size")
        check(lib.tkc_tokenizer_bos(tok) == 1 and lib.tkc_tokenizer_eos(tok) == 2, "spm bos/eos")
        texts = [t.encode() for t in TEXTS] + random_texts(rng, 200)
        merged = 0
        learnt = {i for i, t in enumerate(tokens) if types[i] == 1 and len(t) > 1}
        for text in texts:
            want = spm_encode(tokens, scores, text, prefix, True)
            got = tkc_encode(tok, text, -1)  # the file's add_bos_token: true for llama when absent
            check(got == want, "spm prefix=%d %r: tkc %s, reference %s" % (prefix, text, got, want))
            merged += any(i in learnt for i in got)
            back = tkc_decode(tok, got)
            check(back == text, "spm round trip %r -> %r" % (text, back))
        check(merged > 20, "spm: learnt pieces used in %d texts" % merged)
        lib.tkc_tokenizer_free(tok)
    return tokens, scores, types


def test_bpe(ctx, tmp, rng):
    tokens, merges = bpe_vocab()
    path = os.path.join(tmp, "bpe.gguf")
    write_gguf(path, "gpt2", tokens, merges=merges, bos=0, eos=0)
    tok = load_tok(ctx, path)
    texts = [t.encode() for t in TEXTS] + random_texts(rng, 200)
    try:
        import regex
    except ImportError:
        regex = None
        print("note: no `regex` package: the pre-tokenizer is not compared with GPT-2's own pattern")
    for text in texts:
        want = bpe_encode(tokens, merges, text)
        got = tkc_encode(tok, text, 0)
        check(got == want, "bpe %r: tkc %s, reference %s" % (text, got, want))
        check(tkc_decode(tok, got) == text, "bpe round trip %r" % text)
        if regex is not None and all(c < 0x80 for c in text):  # ASCII: the approximation is exact
            s = text.decode()
            check(APPROX.findall(text) == [p.encode() for p in regex.findall(GPT2_PAT, s)], "pre-tokenizer vs GPT-2 regex on %r" % s)
    check(tkc_encode(tok, b"hello", 1) == [0] + bpe_encode(tokens, merges, b"hello"), "bpe add_bos")
    check(tkc_encode(tok, b"hello", -1) == bpe_encode(tokens, merges, b"hello"), "bpe: no BOS by default")
    lib.tkc_tokenizer_free(tok)


def test_bad(ctx, tmp):
    tokens, scores, types = spm_vocab()
    cases = [
        ("no model", dict(model=None), "tokenizer.ggml.model"),
        ("unknown model", dict(model="bert"), "'bert' is not supported"),
        ("scores short", dict(scores=scores[:-1]), "tokenizer.ggml.scores has"),
        ("types short", dict(types=types[:10]), "tokenizer.ggml.token_type has"),
        ("no scores", dict(scores=None), "without tokenizer.ggml.scores"),
        ("bos out of range", dict(bos=len(tokens)), "bos_token_id"),
        ("gpt2 without merges", dict(model="gpt2"), "tokenizer.ggml.merges"),
        ("bad merge", dict(model="gpt2", merges=["ab"]), "merges[0]"),
    ]
    for what, over, msg in cases:
        kw = dict(model="llama", tokens=tokens, scores=scores, types=types, bos=1)
        kw.update(over)
        path = os.path.join(tmp, "bad.gguf")
        w = gguf.GGUFWriter(path, "llama")
        if kw["model"] is not None:
            w.add_tokenizer_model(kw["model"])
        w.add_token_list(kw["tokens"])
        if kw["scores"] is not None:
            w.add_token_scores(kw["scores"])
        w.add_token_types(kw["types"])
        if kw.get("merges") is not None:
            w.add_token_merges(kw["merges"])
        w.add_bos_token_id(kw["bos"])
        w.write_header_to_file(), w.write_kv_data_to_file(), w.write_tensors_to_file(), w.close()
        st = lib.tkc_gguf_load(ctx, path.encode())
        check(st, "bad %s: the file loads" % what)
        tok = lib.tkc_tokenizer_from_gguf(st)
        check(not tok and msg in err(), "bad %s: %s" % (what, err()))
        lib.tkc_tokenizer_free(tok)
        lib.tkc_state_free(st)
        lib.tkc_clear_error()


def test_binding(tmp):
    """tkc.io.Tokenizer (bindings/python) on the same library gives the same ids"""
    os.environ["TKC_LIB"] = os.path.abspath(sys.argv[1])
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "bindings", "python"))
    try:
        import tkc
        import tkc.io
    except Exception as e:  # noqa: BLE001 (a binding that does not import is reported, not fatal here)
        print("skipped part: the Python binding does not import (%s)" % e)
        return
    tokens, scores, types = spm_vocab()
    path = os.path.join(tmp, "bind.gguf")
    write_gguf(path, "llama", tokens, scores, types, bos=1, eos=2)
    ctx = tkc.Context("INTERP")
    st = tkc.io.load_gguf(path, ctx)
    tok = tkc.io.Tokenizer(st)
    st.close()
    check(tok.model == "llama" and len(tok) == len(tokens) and tok.bos == 1 and tok.eos == 2, "binding: vocabulary")
    for text in TEXTS:
        want = spm_encode(tokens, scores, text.encode(), True, True)
        check(tok.encode(text) == want, "binding encode %r" % text)
        check(tok.decode(want) == text, "binding decode %r" % text)
    check(tok.piece(1) == b"" and tok.token_text(1) == "<s>", "binding piece")
    check(tok.add_bos and tok.find(tokens[-1]) == len(tokens) - 1 and tok.find("no such token") is None, "binding find")
    try:
        tok.piece(len(tokens))
        check(False, "binding: piece out of range raises")
    except tkc.TkcError:
        pass
    tok.close()


def test_llama_cpp(tmp):
    """llama.cpp's own SentencePiece tokenizer on the same vocabulary, when llama-cpp-python is there"""
    try:
        import llama_cpp
    except ImportError:
        print("skipped part: llama_cpp (llama-cpp-python) is not installed: no comparison with llama.cpp's tokenizer")
        return
    tokens, scores, types = spm_vocab()
    path = os.path.join(tmp, "llama_vocab.gguf")
    w = gguf.GGUFWriter(path, "llama")
    # the hyperparameters a vocab-only load still reads
    w.add_context_length(64), w.add_embedding_length(8), w.add_block_count(1), w.add_feed_forward_length(16)
    w.add_head_count(2), w.add_head_count_kv(2), w.add_layer_norm_rms_eps(1e-5), w.add_rope_dimension_count(4)
    w.add_tokenizer_model("llama"), w.add_token_list(tokens), w.add_token_scores(scores), w.add_token_types(types)
    w.add_bos_token_id(1), w.add_eos_token_id(2), w.add_unk_token_id(0)
    w.write_header_to_file(), w.write_kv_data_to_file(), w.write_tensors_to_file(), w.close()
    try:
        llm = llama_cpp.Llama(model_path=path, vocab_only=True, verbose=False)
    except Exception as e:  # noqa: BLE001
        print("skipped part: llama-cpp-python does not load the vocab-only file (%s)" % e)
        return
    ctx = lib.tkc_ctx_new(b"INTERP")
    tok = load_tok(ctx, path)
    for text in [t.encode() for t in TEXTS if "\u00a0" not in t]:
        want = llm.tokenize(text, add_bos=True, special=False)
        check(tkc_encode(tok, text, 1) == want, "llama.cpp %r: tkc %s, llama.cpp %s" % (text, tkc_encode(tok, text, 1), want))
    lib.tkc_tokenizer_free(tok)
    lib.tkc_ctx_free(ctx)
    print("compared with llama.cpp (llama-cpp-python %s)" % getattr(llama_cpp, "__version__", "?"))


def main():
    ctx = lib.tkc_ctx_new(b"CPU") or lib.tkc_ctx_new(b"INTERP")
    rng = random.Random(28)
    with tempfile.TemporaryDirectory() as tmp:
        test_spm(ctx, tmp, rng)
        test_bpe(ctx, tmp, rng)
        test_bad(ctx, tmp)
        test_binding(tmp)
        test_llama_cpp(tmp)
    lib.tkc_ctx_free(ctx)
    print("%d failures" % failures)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
