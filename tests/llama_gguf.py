"""tests/llama_gguf.py: llama GGUF files with random weights, for tests/test_llama_py.py (and through it
tests/test_llm_py.py) and bench/bench_llm.py: the weights by llama.cpp's names in its order, the metadata
llama.cpp reads, a SentencePiece vocabulary, and llama.cpp's own quantizer (for the K-quants, which the
gguf package cannot quantize to). Needs numpy and gguf."""
import os

import numpy as np
import gguf


def weights(rng, hp):
    """(name, float32 array in numpy's (out, in) shape) in llama.cpp's order"""
    e, f, hd = hp["n_embd"], hp["n_ff"], hp["n_embd"] // hp["n_head"]
    qd, kvd = hp["n_head"] * hd, hp["n_head_kv"] * hd

    def mat(rows, cols):
        return rng.standard_normal((rows, cols), dtype=np.float32) / np.float32(np.sqrt(cols))

    def norm(n):
        return (1 + 0.1 * rng.standard_normal(n)).astype(np.float32)

    yield "token_embd.weight", rng.standard_normal((hp["n_vocab"], e), dtype=np.float32)
    for l in range(hp["n_layer"]):
        p = "blk.%d." % l
        yield p + "attn_norm.weight", norm(e)
        yield p + "attn_q.weight", mat(qd, e)
        yield p + "attn_k.weight", mat(kvd, e)
        yield p + "attn_v.weight", mat(kvd, e)
        yield p + "attn_output.weight", mat(e, qd)
        yield p + "ffn_norm.weight", norm(e)
        yield p + "ffn_gate.weight", mat(f, e)
        yield p + "ffn_up.weight", mat(f, e)
        yield p + "ffn_down.weight", mat(e, f)
    yield "output_norm.weight", norm(e)
    yield "output.weight", mat(hp["n_vocab"], e)


def vocab(n):
    """a SentencePiece ("llama") vocabulary of n tokens that llama.cpp loads: <unk> <s> </s>, the 256 byte
    tokens, the space mark and letters, pieces of "hello world" (higher scores merge first), then filler"""
    sp = "\u2581"
    tokens = ["<unk>", "<s>", "</s>"] + ["<0x%02X>" % b for b in range(256)] + [sp] + [chr(c) for c in range(ord("a"), ord("z") + 1)]
    pieces = [sp + "h", "he", "ll", "lo", sp + "w", "or", "ld", "el", sp + "he", "llo", sp + "wor", "hel", "ell"]
    tokens += pieces + ["%s%d" % (sp, i) for i in range(n - len(tokens) - len(pieces))]
    scores = [0.0] * 259 + [-100.0 - i for i in range(27)] + [-float(i) for i in range(n - 286)]
    types = [2, 3, 3] + [6] * 256 + [1] * (n - 259)
    return tokens[:n], scores[:n], types[:n]


def writer(path, hp, with_vocab=True, file_type=None, eos=2):
    """a GGUFWriter for a llama of hyperparameters hp, its metadata (and vocab(n_vocab), BOS 1 and EOS
    eos unless None) added; add the tensors, then finish()"""
    w = gguf.GGUFWriter(path, "llama")
    w.add_context_length(hp["n_ctx"])
    w.add_embedding_length(hp["n_embd"])
    w.add_block_count(hp["n_layer"])
    w.add_feed_forward_length(hp["n_ff"])
    w.add_head_count(hp["n_head"])
    w.add_head_count_kv(hp["n_head_kv"])
    w.add_rope_freq_base(hp["rope_base"])
    w.add_layer_norm_rms_eps(hp["eps"])
    w.add_rope_dimension_count(hp["n_embd"] // hp["n_head"])
    if file_type is not None:
        w.add_file_type(file_type)  # llama_ftype
    if with_vocab:
        tokens, scores, types = vocab(hp["n_vocab"])
        w.add_tokenizer_model("llama")
        w.add_token_list(tokens)
        w.add_token_scores(scores)
        w.add_token_types(types)
        w.add_bos_token_id(1)
        if eos is not None:
            w.add_eos_token_id(eos)
    return w


def finish(w):
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def quantize(llama_cpp, src, dst, ftype, nthread=1):
    """the GGUF file src quantized to dst (written whole or not at all) by llama.cpp's quantizer, to the
    llama_ftype ftype (LLAMA_FTYPE_MOSTLY_*)"""
    params = llama_cpp.llama_model_quantize_default_params()
    params.ftype = ftype
    params.nthread = nthread
    rc = llama_cpp.llama_model_quantize(src.encode(), (dst + ".part").encode(), params)
    if rc != 0:
        raise RuntimeError("llama_model_quantize(%s, ftype %d) returned %d" % (src, ftype, rc))
    os.replace(dst + ".part", dst)
