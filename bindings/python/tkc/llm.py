"""tkc.llm: text generation with a llama-architecture model from a GGUF file, in Python over tkc's
tensors. It is examples/llama/llama_model.c and examples/llama.c written again on the Python API,
op for op: the same graphs, so the same kernels and the same logits as the C example on a device.

    m = tkc.llm.Llama.load("model.gguf", device="CPU")   # or ctx=...; max_ctx caps the KV cache
    ids = m.generate("Once upon a time", 32)             # text (encoded with the file's vocabulary) or ids
    print(m.tokenizer.decode(ids))                       # None when the file has no vocabulary
    ids = m.generate([1, 17, 42], 32, temp=0.8, top_k=40, top_p=0.95, seed=1)   # sampled, seeded
    logits = m.logits([1, 17, 42])                       # (3, n_vocab) float32 numpy: every position
    m.stats                                              # tokens/s of the last generate
    m.close()                                            # (or `with tkc.llm.Llama.load(...) as m:`)

    python3 -m tkc.llm model.gguf [--prompt TEXT | --tokens 1,2,3] [--n 32] [--temp 0] [--top-k 40]
                      [--top-p 0.95] [--seed 1] [--device CPU] [--ctx 512]     (the options of examples/llama.c)

The model: hyperparameters from the llama.* metadata, llama.cpp's tensor names (token_embd.weight,
blk.N.attn_q.weight, ..., output.weight or the embedding tied), RMSNorm, RoPE in ggml's mode 0 (pairs
(x[2i], x[2i+1]) rotated by pos * base^(-2i/n_rot), as tables), grouped-query attention over a KV
cache of (n_ctx, n_head_kv * head_dim) float32 buffers per layer (each step assigns its rows into their
view: written in place, the other rows untouched), SwiGLU.
Quantized weights stay packed: tkc_state_get's lazy tensors dequantize inside the matmuls that read
them. The prompt runs as one forward (prefill); each new token runs through one decode step captured
once (tkc.Jit) and replayed with the position bound to a variable. Sampling runs on the host, as the
C example's: greedy (temp 0: the first largest logit), else softmax(logits / temp) over the top_k
largest, cut to the smallest prefix reaching top_p, drawn with splitmix64 seeded by seed (the same
seed gives the C example's ids for the same logits). Generation stops after the file's EOS token.

Errors raise TkcError (tkc.errors): a missing file or one tkc cannot read, a file that is not a llama
(another architecture, a missing tensor or key, shapes that disagree), token ids outside the
vocabulary, n < 0, more tokens than the context holds."""
import itertools
import math
import os
import sys
import time

import numpy as np

from . import dtypes
from .autograd import realize_all
from .context import Context, dim_is_var
from .errors import TkcError, make_error
from .io import Tokenizer, load_gguf
from .jit import Jit

__all__ = ["Llama", "HParams", "Sampler", "main"]

_GGUF_STRING = 8
_pos_vars = itertools.count()  # variable names unique per process: several models may share a ctx


def _fail(msg):
    return make_error("EINVAL", msg)


class HParams:
    """The hyperparameters (llama_hparams of examples/llama/llama_model.h)."""

    __slots__ = ("n_embd", "n_layer", "n_head", "n_head_kv", "head_dim", "n_rot", "n_ff", "n_ctx", "n_vocab", "rope_base", "rms_eps")

    def __repr__(self):
        return "HParams(%s)" % ", ".join("%s=%r" % (k, getattr(self, k)) for k in self.__slots__)


def _read_hparams(meta, st, max_ctx):
    """HParams from a GGUF file's metadata (read_hparams of llama_model.c)."""
    arch = meta.get("general.architecture", "llama")
    if not isinstance(arch, str):
        arch = "llama"
    if arch != "llama":
        raise _fail("llama: the file's architecture is %s, not llama" % arch)

    def get(suffix, default=None, kind=int):
        key = "%s.%s" % (arch, suffix)
        if key not in meta:
            if default is None:
                raise _fail("llama: no %s in the file" % key)
            return default
        v = meta[key]
        if isinstance(v, (list, str)) or (kind is int and isinstance(v, float)):
            raise _fail("llama: %s is %r, not a number" % (key, v))
        return kind(v)

    hp = HParams()
    hp.n_embd, hp.n_layer, hp.n_head = get("embedding_length"), get("block_count"), get("attention.head_count")
    hp.n_head_kv = get("attention.head_count_kv", hp.n_head)
    hp.n_ff, hp.n_ctx = get("feed_forward_length"), get("context_length")
    hp.rope_base = get("rope.freq_base", 10000.0, float)
    hp.rms_eps = get("attention.layer_norm_rms_epsilon", 1e-5, float)
    if min(hp.n_embd, hp.n_layer, hp.n_head, hp.n_head_kv, hp.n_ff, hp.n_ctx) < 1 or hp.n_head % hp.n_head_kv:
        raise _fail("llama: bad hyperparameters (embedding %d, layers %d, heads %d / %d kv, ffn %d, context %d)"
                    % (hp.n_embd, hp.n_layer, hp.n_head, hp.n_head_kv, hp.n_ff, hp.n_ctx))
    hp.head_dim = get("attention.key_length", hp.n_embd // hp.n_head)
    hp.n_rot = get("rope.dimension_count", hp.head_dim)
    if hp.head_dim < 2 or hp.head_dim % 2 or hp.n_rot < 0 or hp.n_rot > hp.head_dim or hp.n_rot % 2:
        raise _fail("llama: bad head size %d (rotated dims %d)" % (hp.head_dim, hp.n_rot))
    if 0 < max_ctx < hp.n_ctx:
        hp.n_ctx = int(max_ctx)
    if hp.n_ctx > 1 << 30:
        raise _fail("llama: context of %d positions is too long" % hp.n_ctx)
    if "token_embd.weight" not in st or len(st.shape("token_embd.weight")[1]) != 2:
        raise _fail("llama: no 2-D token_embd.weight in the file")
    hp.n_vocab = st.shape("token_embd.weight")[1][0]
    return hp


def _rope_tables(hp):
    """ggml's RoPE mode 0 as two (n_ctx, head_dim) float32 tables (rope_tables of llama_model.c):
    rope(x) = x * cos + swap(x) * sin, swap exchanging x[2i] and x[2i+1], cos = (c_i, c_i), sin =
    (-s_i, s_i) of the angle pos * base^(-2i / n_rot); dims past n_rot kept (cos 1, sin 0)."""
    half = hp.head_dim // 2
    i = np.arange(half, dtype=np.float64)
    inv = np.array([math.pow(hp.rope_base, -2.0 * k / hp.n_rot) for k in range(half)])  # C's pow, per pair
    angle = np.arange(hp.n_ctx, dtype=np.float64)[:, None] * inv[None, :]
    rotated = 2 * i < hp.n_rot
    c = np.where(rotated, np.cos(angle), 1.0).astype(np.float32)
    s = np.where(rotated, np.sin(angle), 0.0).astype(np.float32)
    cos_t = np.repeat(c, 2, axis=1)
    sin_t = np.stack([-s, s], axis=-1).reshape(hp.n_ctx, hp.head_dim)
    return cos_t, sin_t


class _Layer:
    __slots__ = ("prefix", "attn_norm", "ffn_norm", "wq", "wk", "wv", "wo", "w_gate", "w_up", "w_down", "k_cache", "v_cache")


class Sampler:
    """Host-side sampling, examples/llama.c's sample(): greedy when temp <= 0, else temperature, top-k
    (0: all) and top-p over a splitmix64 stream seeded by seed."""

    def __init__(self, temp=0.0, top_k=0, top_p=1.0, seed=0):
        if not temp >= 0 or int(top_k) < 0 or not 0 < top_p <= 1:
            raise _fail("sampling: temp must be >= 0, top_k >= 0 and 0 < top_p <= 1 (got %r, %r, %r)" % (temp, top_k, top_p))
        self.temp, self.top_k, self.top_p = float(temp), int(top_k), float(top_p)
        self.state = int(seed) & 0xFFFFFFFFFFFFFFFF

    def uniform(self):
        """splitmix64 -> [0, 1)"""
        m = 0xFFFFFFFFFFFFFFFF
        self.state = z = (self.state + 0x9E3779B97F4A7C15) & m
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & m
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & m
        return ((z ^ (z >> 31)) >> 11) * 2.0 ** -53

    def __call__(self, logits):
        logits = np.asarray(logits, dtype=np.float32).reshape(-1)
        if self.temp <= 0:
            return int(np.argmax(logits))  # the first largest
        order = np.argsort(-logits, kind="stable")
        nv = len(logits)
        k = self.top_k if 0 < self.top_k < nv else nv
        top = logits[order[:k]].astype(np.float64)
        prob = np.exp((top - top[0]) / self.temp)
        running = np.cumsum(prob)  # sequential sums, as the C loop adds them
        total = running[-1]
        cut = min(int(np.searchsorted(running >= self.top_p * total, True)) + 1, k)  # smallest prefix reaching top_p
        kept = running[cut - 1]
        r = self.uniform() * kept
        for i in range(cut):
            r -= prob[i]
            if r < 0:
                return int(order[i])
        return int(order[cut - 1])


class Llama:
    """A llama decoder loaded from a GGUF file (see the module's doc)."""

    def __init__(self, state, ctx, max_ctx=2048, own_ctx=False, int8=False):
        self.ctx, self.state, self._own_ctx = ctx, state, own_ctx
        # one token's products with quantized weights in int8, x quantized per 32 values as
        # llama.cpp does (State.matmul(int8=True)); a prefill of more tokens stays in float
        self.int8 = bool(int8)
        self._jit = None
        meta = state.metadata
        self.hparams = hp = _read_hparams(meta, state, max_ctx)
        self.weight_type = state.ggml_type("blk.0.attn_q.weight") if "blk.0.attn_q.weight" in state else -1
        e, qd, kvd, f = hp.n_embd, hp.n_head * hp.head_dim, hp.n_head_kv * hp.head_dim, hp.n_ff
        self.tok_embd = self._weight("token_embd.weight", (hp.n_vocab, e))
        self.out_norm = self._weight("output_norm.weight", (e,))
        self.out_name = "output.weight" if "output.weight" in state else "token_embd.weight"  # tied
        self.w_out = self._weight(self.out_name, (hp.n_vocab, e), True)
        self.layers = []
        for l in range(hp.n_layer):
            L, p = _Layer(), "blk.%d." % l
            L.prefix = p
            L.attn_norm = self._weight(p + "attn_norm.weight", (e,))
            L.wq = self._weight(p + "attn_q.weight", (qd, e), True)
            L.wk = self._weight(p + "attn_k.weight", (kvd, e), True)
            L.wv = self._weight(p + "attn_v.weight", (kvd, e), True)
            L.wo = self._weight(p + "attn_output.weight", (e, qd), True)
            L.ffn_norm = self._weight(p + "ffn_norm.weight", (e,))
            L.w_gate = self._weight(p + "ffn_gate.weight", (f, e), True)
            L.w_up = self._weight(p + "ffn_up.weight", (f, e), True)
            L.w_down = self._weight(p + "ffn_down.weight", (e, f), True)
            # plain buffers (a full() would be a broadcast view of one zero; assign needs a buffer)
            L.k_cache, L.v_cache = ctx.zeros(hp.n_ctx, kvd), ctx.zeros(hp.n_ctx, kvd)
            self.layers.append(L)
        cos_t, sin_t = _rope_tables(hp)
        self.rope_cos, self.rope_sin = ctx.tensor(cos_t), ctx.tensor(sin_t)
        self.pos_var = ctx.dim_var("llm_pos%d" % next(_pos_vars), 0, hp.n_ctx - 1)
        self.token_in = ctx.zeros(1, dtype=dtypes.int32)  # the decode step's input, refilled per call
        try:
            self.tokenizer = Tokenizer(state)
        except TkcError:
            self.tokenizer = None  # the file has no (usable) vocabulary
        self.bos = self._special("tokenizer.ggml.bos_token_id", 1)
        self.eos = self._special("tokenizer.ggml.eos_token_id", -1)
        self.stats = {}

    # ---------------------------------------------------------------- loading
    @classmethod
    def load(cls, path, device=None, ctx=None, max_ctx=2048, int8=False):
        """Loads path onto ctx, or onto a new Context of device (None: $TKC_DEVICE or the best one here;
        closed with the model). max_ctx > 0 caps the KV cache at that many positions (a file may say
        128k); 0 takes the file's context_length. int8: the decode step's quantized products in int8
        (faster; logits within about 1% of the float ones)."""
        if ctx is not None and device is not None and ctx.device != device:
            raise _fail("Llama.load: ctx is on %s, device says %s" % (ctx.device, device))
        own = ctx is None
        if own:
            ctx = Context(device)
        state = None
        try:
            if not os.path.exists(str(path)):
                raise make_error("EINVAL", "llama: %s: no such file" % path)
            state = load_gguf(path, ctx)
            return cls(state, ctx, max_ctx, own, int8)
        except BaseException:
            if state is not None:
                state.close()
            if own:
                ctx.close()
            raise

    def _special(self, key, default):
        v = self.state.metadata.get(key)
        return int(v) if isinstance(v, int) else default

    def _weight(self, name, shape, transpose=False):
        """A float32 weight of shape (numpy's (out, in)), transposed to (in, out) for x @ w when asked:
        a view. Another dtype is cast lazily (the cast fuses into the reader as the dequantization of a
        packed type does): nothing is materialized here."""
        if name not in self.state:
            raise _fail("llama: no tensor %s in the file" % name)
        got = self.state.shape(name)[1]
        if tuple(got) != tuple(shape):
            raise _fail("llama: %s is %s, the hyperparameters say %s" % (name, tuple(got), tuple(shape)))
        w = self.state[name]
        if w.dtype != dtypes.float32:
            w = w.cast(dtypes.float32)
        return w.transpose(0, 1) if transpose else w

    def _mm(self, x, w, name):
        """x @ w for the weight `name` (w its transposed view): in int8 through the state for one token"""
        if self.int8 and x.shape[0] == 1:
            return self.state.matmul(name, x, int8=True)
        return x @ w

    def close(self):
        """Frees the decode step and the file's state (and the context when load made it)."""
        if self._jit is not None:
            self._jit.close()
            self._jit = None
        if self.tokenizer is not None:
            self.tokenizer.close()
        self.state.close()
        if self._own_ctx:
            self.ctx.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __repr__(self):
        hp = self.hparams
        return "<tkc.llm.Llama on %s: %d layers, embedding %d, %d heads (%d kv), ffn %d, vocabulary %d, context %d, ggml type %d>" % (
            self.ctx.device, hp.n_layer, hp.n_embd, hp.n_head, hp.n_head_kv, hp.n_ff, hp.n_vocab, hp.n_ctx, self.weight_type)

    # ---------------------------------------------------------------- the forward pass (lazy)
    def _rope(self, x, n, heads, cos_rows, sin_rows):
        """x (n, heads * head_dim) rotated at the positions whose table rows are cos_rows, sin_rows"""
        hd = self.hparams.head_dim
        xh = x.reshape(n, heads, hd)
        swapped = xh.reshape(n, heads, hd // 2, 2).flip(3).reshape(n, heads, hd)
        return (xh * cos_rows + swapped * sin_rows).reshape(n, heads * hd)

    def _attention(self, q, L, n, length, mask):
        """softmax(q k^T / sqrt(head_dim) + mask) v against the cache's first length rows: query head h
        reads KV head h / group, as (kv head, group) batches that broadcast k and v"""
        hp = self.hparams
        hd, hkv = hp.head_dim, hp.n_head_kv
        group, kvd = hp.n_head // hkv, hkv * hd
        kv = [c.shrink(((0, length), (0, kvd))).reshape(length, hkv, hd).permute(1, 0, 2).reshape(hkv, 1, length, hd)
              for c in (L.k_cache, L.v_cache)]
        qh = q.reshape(n, hkv, group, hd).permute(1, 2, 0, 3)  # (hkv, group, n, hd)
        o = qh.scaled_dot_product_attention(kv[0], kv[1], mask)
        return o.permute(2, 0, 1, 3).reshape(n, hp.n_head * hd)

    def _cache_write(self, dst, src, pos, n):
        """the cache rows [pos, pos + n) of dst replaced by src (n, kvd), in place: an assign into that
        view writes those rows only (pos may be the position variable: each replay's rows)"""
        dst.shrink(((pos, pos + n), (0, dst.shape[1]))).assign(src)

    def _forward(self, tokens, pos, all_logits):
        """The lazy logits of tokens (an (n) int32 tensor) at positions [pos, pos + n); pos is a
        position or the variable's token (then n is 1). The caches are written on the way."""
        ctx, hp = self.ctx, self.hparams
        n, e, hd = tokens.shape[0], hp.n_embd, hp.head_dim
        length = pos + n  # a variable's token plus a constant is the variable plus it
        cos_rows = self.rope_cos.shrink(((pos, length), (0, hd))).reshape(n, 1, hd)
        sin_rows = self.rope_sin.shrink(((pos, length), (0, hd))).reshape(n, 1, hd)
        mask = None
        if n > 1:  # causal: query i (position pos + i) sees the cache rows r <= pos + i
            qpos = ctx.arange(pos, length, dtype=dtypes.int32).reshape(n, 1)
            mask = ctx.arange(0, length, dtype=dtypes.int32).reshape(1, length).le(qpos)
        x = self.tok_embd.index_select(0, tokens)  # (n, e)
        for L in self.layers:
            h = x.rms_norm(L.attn_norm, hp.rms_eps)
            p = L.prefix
            q = self._rope(self._mm(h, L.wq, p + "attn_q.weight"), n, hp.n_head, cos_rows, sin_rows)
            k = self._rope(self._mm(h, L.wk, p + "attn_k.weight"), n, hp.n_head_kv, cos_rows, sin_rows)
            v = self._mm(h, L.wv, p + "attn_v.weight")
            self._cache_write(L.k_cache, k, pos, n)
            self._cache_write(L.v_cache, v, pos, n)
            # the caches and the layer's input are computed now: the attention reads the written
            # caches, and the rest of the layer reads x from its buffer instead of computing it again
            realize_all(x, L.k_cache, L.v_cache)
            x = x + self._mm(self._attention(q, L, n, length, mask), L.wo, p + "attn_output.weight")
            h = x.rms_norm(L.ffn_norm, hp.rms_eps)
            gated = self._mm(h, L.w_gate, p + "ffn_gate.weight").silu() * self._mm(h, L.w_up, p + "ffn_up.weight")
            x = x + self._mm(gated, L.w_down, p + "ffn_down.weight")
        if not all_logits and n > 1:
            x = x.shrink(((n - 1, n), (0, e)))
        return self._mm(x.rms_norm(self.out_norm, hp.rms_eps), self.w_out, self.out_name)

    def forward(self, tokens, pos, all_logits=False):
        """The lazy logits (a Tensor kept past its scope) of tokens (an (n) int32 Tensor) at positions
        [pos, pos + n): (n, n_vocab), or the last one's (1, n_vocab) unless all_logits."""
        n = tokens.shape[0] if tokens.ndim == 1 else -1
        if n < 1 or tokens.dtype != dtypes.int32:
            raise _fail("llama forward: tokens must be an (n) int32 tensor, n >= 1")
        var = _is_var(pos)
        if (n != 1) if var else (pos < 0 or pos + n > self.hparams.n_ctx):
            raise _fail("llama forward: %d tokens at position %s do not fit the context of %d (a variable position takes one token)"
                        % (n, "(variable)" if var else pos, self.hparams.n_ctx))
        with self.ctx.scope():
            return self._forward(tokens, pos, all_logits).keep()

    # ---------------------------------------------------------------- running
    def _ids(self, tokens, what):
        ids = np.asarray(tokens).reshape(-1)
        if ids.size and not np.issubdtype(ids.dtype, np.integer):
            raise _fail("%s: token ids must be integers, not %s" % (what, ids.dtype))
        ids = ids.astype(np.int64)
        bad = np.nonzero((ids < 0) | (ids >= self.hparams.n_vocab))[0]
        if bad.size:
            raise _fail("%s: token %d is %d, outside the vocabulary of %d" % (what, bad[0], ids[bad[0]], self.hparams.n_vocab))
        return ids.astype(np.int32)

    def prefill(self, tokens, pos=0, all_logits=False):
        """Runs tokens at positions [pos, pos + n) in one forward (a fresh graph: its kernels are built
        once per n and pos, then taken from the kernel cache); the logits as numpy float32: (n,
        n_vocab) when all_logits, else the last position's (n_vocab)."""
        ids = self._ids(tokens, "prefill")
        if ids.size < 1:
            raise _fail("prefill: no tokens")
        t = self.ctx.tensor(ids)
        y = self.forward(t, int(pos), all_logits).numpy()
        return y if all_logits else y[0]

    def logits(self, tokens, pos=0):
        """(n, n_vocab) float32 logits of every position of tokens, prefilled at [pos, pos + n)."""
        return self.prefill(tokens, pos, all_logits=True)

    def _decode_step(self, token):
        return self.forward(token, self.pos_var, False)

    def decode(self, token, pos):
        """One token at position pos through the captured step: the first call captures it (tkc.Jit),
        every later one replays its kernels with the token copied in and the position bound to the
        step's variable. The logits as numpy float32 (n_vocab). The cache rows before pos must hold
        the earlier tokens (prefill / decode)."""
        token = int(self._ids([token], "decode")[0])
        if not 0 <= pos < self.hparams.n_ctx:
            raise _fail("decode: position %d outside the context of %d" % (pos, self.hparams.n_ctx))
        if self._jit is None:
            self._jit = Jit(self.ctx, self._decode_step, nout=1)
        self.token_in.copy_in(np.array([token], dtype=np.int32))
        self.ctx.bind(self.pos_var, int(pos))
        return self._jit(self.token_in).numpy()[0]

    @property
    def decode_kernels(self):
        """Kernels of the captured decode step (0 before the first decode)."""
        return self._jit.kernels if self._jit is not None else 0

    def encode(self, text):
        """text's token ids with the file's vocabulary."""
        if self.tokenizer is None:
            raise _fail("llama: the file has no vocabulary to encode text with")
        return self.tokenizer.encode(text)

    def generate(self, prompt, n, temp=0.0, top_k=0, top_p=1.0, seed=0, warmup=False):
        """n new token ids after prompt (text, encoded with the file's vocabulary, or token ids; empty:
        the BOS token), greedy when temp is 0, else sampled (see Sampler); it stops early after the
        file's EOS token. warmup runs the prefill twice and times the second (its kernels built).
        self.stats then holds the timings and tokens/s."""
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 0:
            raise _fail("generate: n must be an int >= 0, not %r" % (n,))
        sampler = Sampler(temp, top_k, top_p, seed)
        ids = self.encode(prompt) if isinstance(prompt, (str, bytes)) else list(self._ids(prompt, "generate"))
        if not ids:
            ids = [self.bos]
        ids = [int(t) for t in self._ids(ids, "generate")]
        if len(ids) + n > self.hparams.n_ctx:
            raise _fail("generate: %d prompt + %d new tokens exceed the context of %d" % (len(ids), n, self.hparams.n_ctx))
        self.stats = {"prompt": ids, "prompt_tokens": len(ids)}
        if n == 0:
            return []
        t_cold = time.perf_counter()
        logits = self.prefill(ids)
        t_prefill = time.perf_counter() - t_cold
        if warmup:
            t_cold, t = t_prefill, time.perf_counter()
            logits = self.prefill(ids)
            t_prefill = time.perf_counter() - t
        out, t_first, t_rest = [], 0.0, 0.0
        token = sampler(logits)
        while True:
            out.append(token)
            if token == self.eos or len(out) == n:
                break
            t = time.perf_counter()
            logits = self.decode(token, len(ids) + len(out) - 1)
            t = time.perf_counter() - t
            if len(out) == 1:
                t_first = t
            else:
                t_rest += t
            token = sampler(logits)
        steps = len(out) - 1  # the last token is sampled, not run
        self.stats.update(prefill_s=t_prefill, prefill_cold_s=t_cold if warmup else None, prefill_tok_s=len(ids) / t_prefill,
                          decode_steps=steps, decode_first_s=t_first, decode_rest_s=t_rest,
                          decode_tok_s=(steps - 1) / t_rest if steps > 1 and t_rest > 0 else 0.0, decode_kernels=self.decode_kernels)
        return out


def _is_var(pos):
    return dim_is_var(int(pos))


# ---------------------------------------------------------------- the command line (examples/llama.c's)

def _parse(argv):
    import argparse
    p = argparse.ArgumentParser(prog="python3 -m tkc.llm", description="text generation with a llama model from a GGUF file")
    p.add_argument("model")
    p.add_argument("--prompt", help="the prompt as text, encoded with the file's vocabulary")
    p.add_argument("--tokens", help="the prompt as token ids: 1,2,3 (default: the file's BOS token)")
    p.add_argument("--n", type=int, default=32, help="tokens to generate (it stops early at the file's EOS token)")
    p.add_argument("--temp", type=float, default=0.0)
    p.add_argument("--top-k", type=int, default=0)
    p.add_argument("--top-p", type=float, default=1.0)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--device", default=None)
    p.add_argument("--ctx", type=int, default=2048, help="at most this many positions in the KV cache")
    p.add_argument("--int8", action="store_true", help="the decode step's quantized products in int8 (as llama.cpp; faster)")
    a = p.parse_args(argv)
    if a.n < 0 or a.top_k < 0 or not 0 < a.top_p <= 1 or a.temp < 0 or a.ctx <= 0:
        p.error("--n, --top-k, --temp >= 0, 0 < --top-p <= 1, --ctx > 0")
    return a


def main(argv=None):
    a = _parse(sys.argv[1:] if argv is None else argv)
    try:
        t_load = time.perf_counter()
        m = Llama.load(a.model, device=a.device, max_ctx=a.ctx, int8=a.int8)
        t_load = time.perf_counter() - t_load
    except TkcError as e:
        print("llama: %s" % e, file=sys.stderr)
        return 1
    with m:
        hp = m.hparams
        try:
            if a.prompt is not None:
                prompt = m.encode(a.prompt)
            elif a.tokens:
                prompt = [int(t) for t in a.tokens.split(",") if t.strip()]
            else:
                prompt = [m.bos]
        except (TkcError, ValueError) as e:
            print("llama: %s: %s" % ("--prompt" if a.prompt is not None else "--tokens", e), file=sys.stderr)
            return 2
        if len(prompt) + a.n > hp.n_ctx:
            print("llama: %d prompt + %d new tokens exceed the context of %d (--ctx)" % (len(prompt), a.n, hp.n_ctx), file=sys.stderr)
            return 2
        print("llama on %s: %d layers, embedding %d, %d heads (%d kv), ffn %d, vocabulary %d, context %d, weights of ggml type %d "
              "(loaded in %.2f s)" % (m.ctx.device, hp.n_layer, hp.n_embd, hp.n_head, hp.n_head_kv, hp.n_ff, hp.n_vocab, hp.n_ctx,
                                     m.weight_type, t_load))
        try:
            out = m.generate(prompt, a.n, a.temp, a.top_k, a.top_p, a.seed, warmup=True)
        except TkcError as e:
            print("llama: %s" % e, file=sys.stderr)
            return 1
        s = m.stats
        print("prompt: " + " ".join(map(str, prompt)))
        print("generated: " + " ".join(map(str, out)) + (" (end of text)" if out and out[-1] == m.eos else ""))
        if m.tokenizer is not None:
            print("text: %s" % m.tokenizer.decode(out))
        if out:
            print("prefill: %d tokens in %.2f ms: %.1f tokens/s (the first run, building its kernels: %.1f ms)"
                  % (len(prompt), s["prefill_s"] * 1e3, s["prefill_tok_s"], s["prefill_cold_s"] * 1e3))
        steps = s.get("decode_steps", 0)
        if steps > 0:
            rest = s["decode_rest_s"] / (steps - 1) * 1e3 if steps > 1 else 0.0
            print("decode: %d steps of %d kernels: the first (capture) %.1f ms, then %.2f tokens/s (%.2f ms per token)"
                  % (steps, s["decode_kernels"], s["decode_first_s"] * 1e3, s["decode_tok_s"], rest))
    return 0


if __name__ == "__main__":
    sys.exit(main())
