/* src/io/tokenizer.c — text <-> token ids with a GGUF file's vocabulary (tkc/io.h): SentencePiece
 * ("llama") and byte-level BPE ("gpt2"), the algorithms of llama.cpp's llm_tokenizer_spm and
 * llm_tokenizer_bpe written afresh in C.
 *
 * Both encoders share one merge loop: the text is cut into symbols (UTF-8 characters for SPM, one per
 * byte for BPE), every adjacent pair that may merge goes into a max-heap keyed by its priority (SPM:
 * the merged token's score; BPE: minus the merge's rank; the leftmost pair first on a tie), and the best
 * pair is merged while its two symbols are still what they were when it was queued; the merged symbol's
 * new pairs go into the heap. O(n log n) in the text length, so long prompts are fine.
 *
 * The vocabulary is copied out of the state into one arena, looked up through open-addressing hash
 * tables (text -> id, "left right" merge -> rank); a tokenizer is read-only after it is built, so
 * several threads may encode and decode with it at once. Nothing here prints or aborts.
 *
 * Where this differs from llama.cpp (on purpose, or as a simplification):
 *  - SPM: a byte that does not start a valid UTF-8 sequence is a symbol of its own (llama.cpp takes
 *    the length its lead byte says, continuation bytes or not); valid text tokenizes the same.
 *  - BPE: one pre-tokenizer, GPT-2's regex with ASCII classes (gpt2_piece_end), whatever
 *    tokenizer.ggml.pre says (llama.cpp has a regex per pre-tokenizer: llama3's splits digits in
 *    threes and contractions case-insensitively, so its ids can differ from llama.cpp's on such text,
 *    though they decode to the same text); a final symbol that is no token becomes its bytes' tokens
 *    (llama.cpp looks each byte of the mapped text up as a 1-byte string and drops what it misses).
 *  - Special and user-defined token texts inside the text are tokenized as text. */
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tkc.h"
#include "tkc/io.h"

/* the library's error recorder (src/base/common.h), declared here as the ONNX frontend does: io/ uses
 * the public API only */
tkc_status tkc_err(tkc_status s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

enum { TOK_SPM, TOK_BPE };
/* llama.cpp's llama_token_type */
enum { TT_NORMAL = 1, TT_UNKNOWN = 2, TT_CONTROL = 3, TT_USER_DEFINED = 4, TT_UNUSED = 5, TT_BYTE = 6 };
#define TOK_MAX_VOCAB (1 << 24)
#define TOK_MAX_MERGES (1 << 24)
#define TOK_MAX_TEXT (1 << 27)

/* ---------------------------------------------------------------- a string -> int32 hash table */

typedef struct {
  const char **key; /* NULL: empty slot */
  uint32_t *klen;
  int32_t *val;
  size_t cap; /* a power of two, at least twice the entries */
} strmap;

static uint64_t hash_bytes(const char *s, size_t n) {
  uint64_t h = 1469598103934665603ull; /* FNV-1a */
  for (size_t i = 0; i < n; i++) h = (h ^ (uint8_t)s[i]) * 1099511628211ull;
  return h;
}

static int map_init(strmap *m, size_t n) {
  m->cap = 16;
  while (m->cap < 2 * n) m->cap *= 2;
  m->key = calloc(m->cap, sizeof *m->key);
  m->klen = calloc(m->cap, sizeof *m->klen);
  m->val = calloc(m->cap, sizeof *m->val);
  return m->key && m->klen && m->val ? 0 : -1;
}

static void map_free(strmap *m) {
  free(m->key), free(m->klen), free(m->val);
}

static size_t map_slot(const strmap *m, const char *s, size_t n) {
  size_t i = (size_t)hash_bytes(s, n) & (m->cap - 1);
  while (m->key[i] && !(m->klen[i] == n && memcmp(m->key[i], s, n) == 0)) i = (i + 1) & (m->cap - 1);
  return i;
}

/* overwrite: the last of duplicate vocabulary texts wins (llama.cpp's token_to_id[text] = id);
 * otherwise the first (a merge's rank is its first line: bpe_ranks.emplace) */
static void map_put(strmap *m, const char *s, size_t n, int32_t v, int overwrite) {
  size_t i = map_slot(m, s, n);
  if (m->key[i] && !overwrite) return;
  m->key[i] = s, m->klen[i] = (uint32_t)n, m->val[i] = v;
}

static int32_t map_get(const strmap *m, const char *s, size_t n) {
  if (!m->cap) return -1;
  size_t i = map_slot(m, s, n);
  return m->key[i] ? m->val[i] : -1;
}

/* ---------------------------------------------------------------- the tokenizer */

struct tkc_tokenizer {
  int kind;
  int32_t n_vocab;
  char **text;      /* token texts, NUL-terminated, in `arena` */
  uint32_t *len;    /* their lengths */
  float *score;     /* SPM scores (NULL for BPE) */
  int32_t *type;    /* token types (TT_NORMAL when the file has none) */
  char **piece;     /* decoded bytes per token, in `arena` */
  uint32_t *piece_len;
  char *arena;
  char *merge_arena; /* BPE: the merge lines "left right", NUL-terminated */
  strmap vocab, merges;
  int32_t byte_tok[256]; /* the token of a lone byte: SPM <0xXX>, BPE GPT-2's character; -1 none */
  int32_t bos, eos, unk;
  int add_bos, add_space_prefix;
  int have_types;           /* the file has tokenizer.ggml.token_type */
  int16_t byte_of_char[0x144]; /* GPT-2's map inverted: a code point below 0x144 -> its byte, -1 */
};

void tkc_tokenizer_free(tkc_tokenizer *t) {
  if (!t) return;
  free(t->merge_arena);
  map_free(&t->vocab), map_free(&t->merges);
  free(t->text), free(t->len), free(t->score), free(t->type), free(t->piece), free(t->piece_len), free(t->arena);
  free(t);
}

/* GPT-2's bytes_to_unicode: printable Latin-1 bytes stand for themselves, the other 68 bytes for
 * U+0100 + their index among those, in byte order */
static uint32_t gpt2_char_of_byte(uint8_t b) {
  if ((b >= 0x21 && b <= 0x7e) || (b >= 0xa1 && b <= 0xac) || (b >= 0xae)) return b;
  uint32_t n = 0;
  for (uint32_t c = 0; c < b; c++)
    if (!((c >= 0x21 && c <= 0x7e) || (c >= 0xa1 && c <= 0xac) || (c >= 0xae))) n++;
  return 256 + n;
}

static int utf8_put(char *out, uint32_t cp) { /* code points below 0x800 only (GPT-2's map) */
  if (cp < 0x80) return out[0] = (char)cp, 1;
  out[0] = (char)(0xc0 | (cp >> 6)), out[1] = (char)(0x80 | (cp & 0x3f));
  return 2;
}

/* the length of the valid UTF-8 sequence at s (structure only: a lead byte and that many continuation
 * bytes), 1 for a byte that starts none */
static size_t utf8_char_len(const uint8_t *s, size_t n) {
  size_t k = s[0] < 0x80 ? 1 : (s[0] >> 5) == 6 ? 2 : (s[0] >> 4) == 14 ? 3 : (s[0] >> 3) == 30 ? 4 : 0;
  if (k == 0 || k > n) return 1;
  for (size_t i = 1; i < k; i++)
    if ((s[i] & 0xc0) != 0x80) return 1;
  return k;
}

static int is_byte_token_text(const char *s, size_t n, uint8_t *b) { /* "<0xXX>" */
  if (n != 6 || memcmp(s, "<0x", 3) != 0 || s[5] != '>') return 0;
  unsigned v = 0;
  for (int i = 3; i < 5; i++) {
    char c = s[i];
    int d = c >= '0' && c <= '9' ? c - '0' : c >= 'A' && c <= 'F' ? c - 'A' + 10 : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
    if (d < 0) return 0;
    v = v * 16 + (unsigned)d;
  }
  *b = (uint8_t)v;
  return 1;
}

/* the bytes token i stands for in decoded text (at most 4x its text: a GPT-2 character is 1 byte) */
static size_t token_piece(const tkc_tokenizer *t, int32_t i, char *out) {
  const char *s = t->text[i];
  size_t n = t->len[i], k = 0;
  uint8_t b;
  if (t->type[i] == TT_CONTROL) return 0;
  if (t->kind == TOK_SPM) {
    if ((t->type[i] == TT_BYTE || !t->have_types) && is_byte_token_text(s, n, &b)) return out[0] = (char)b, 1;
    for (size_t j = 0; j < n;) {
      if (j + 3 <= n && memcmp(s + j, "\xe2\x96\x81", 3) == 0) out[k++] = ' ', j += 3;
      else out[k++] = s[j++];
    }
    return k;
  }
  for (size_t j = 0; j < n;) { /* GPT-2 characters back to their bytes; anything else as it is */
    size_t c = utf8_char_len((const uint8_t *)s + j, n - j);
    uint32_t cp = (uint8_t)s[j];
    if (c == 2) cp = ((cp & 0x1fu) << 6) | ((uint8_t)s[j + 1] & 0x3fu);
    int found = c <= 2 && cp < 0x144 && !(c == 1 && cp >= 0x80) ? t->byte_of_char[cp] : -1;
    if (found >= 0) out[k++] = (char)found;
    else memcpy(out + k, s + j, c), k += c;
    j += c;
  }
  return k;
}

/* ---------------------------------------------------------------- loading */

#define LOAD "tkc_tokenizer_from_gguf"

static tkc_tokenizer *load_fail(tkc_tokenizer *t) {
  tkc_tokenizer_free(t);
  return NULL;
}

/* an array key of element type `et` and exactly `want` elements (want < 0: any); 1 found, 0 absent
 * (nothing set), -1 malformed (error set) */
static int get_array(const tkc_state *s, const char *key, int et, int64_t want, int64_t *count, const void **data) {
  if (tkc_gguf_meta_type(s, key) < 0) return 0;
  int got_et;
  if (tkc_gguf_meta_array(s, key, &got_et, count, data) != TKC_OK || got_et != et)
    return tkc_err(TKC_EINVAL, LOAD ": %s is not an array of %s", key, et == TKC_GGUF_STRING ? "strings" : et == TKC_GGUF_FLOAT32 ? "float32" : "int32"), -1;
  if (want >= 0 && *count != want)
    return tkc_err(TKC_EINVAL, LOAD ": %s has %lld elements, tokenizer.ggml.tokens has %lld", key, (long long)*count, (long long)want), -1;
  return 1;
}

static int opt_id(const tkc_state *s, const char *key, int32_t n_vocab, int32_t *out) {
  int64_t v;
  *out = -1;
  if (tkc_gguf_meta_type(s, key) < 0) return 0;
  if (tkc_gguf_meta_int(s, key, &v) != TKC_OK) return tkc_err(TKC_EINVAL, LOAD ": %s is not an integer", key), -1;
  if (v < 0 || v >= n_vocab)
    return tkc_err(TKC_EINVAL, LOAD ": %s = %lld is out of range (a vocabulary of %d tokens)", key, (long long)v, (int)n_vocab), -1;
  *out = (int32_t)v;
  return 0;
}

static int opt_bool(const tkc_state *s, const char *key, int dflt, int *out) {
  int64_t v;
  *out = dflt;
  if (tkc_gguf_meta_type(s, key) < 0) return 0;
  if (tkc_gguf_meta_int(s, key, &v) != TKC_OK) return tkc_err(TKC_EINVAL, LOAD ": %s is not a bool", key), -1;
  *out = v != 0;
  return 0;
}

static int load_merges(tkc_tokenizer *t, const tkc_state *s) {
  int64_t n;
  const void *data;
  int r = get_array(s, "tokenizer.ggml.merges", TKC_GGUF_STRING, -1, &n, &data);
  if (r == 0) return tkc_err(TKC_EINVAL, LOAD ": a gpt2 vocabulary without tokenizer.ggml.merges"), -1;
  if (r < 0) return -1;
  if (n > TOK_MAX_MERGES) return tkc_err(TKC_EINVAL, LOAD ": %lld merges (at most %d)", (long long)n, TOK_MAX_MERGES), -1;
  const char *const *lines = data;
  size_t bytes = 1;
  for (int64_t i = 0; i < n; i++) {
    const char *sp = lines[i][0] ? strchr(lines[i] + 1, ' ') : NULL; /* llama.cpp: find(' ', 1) */
    if (!sp) return tkc_err(TKC_EINVAL, LOAD ": tokenizer.ggml.merges[%lld] '%.40s' is not 'left right'", (long long)i, lines[i]), -1;
    bytes += strlen(lines[i]) + 1;
  }
  if (!(t->merge_arena = malloc(bytes)) || map_init(&t->merges, (size_t)n) != 0)
    return tkc_err(TKC_ENOMEM, LOAD ": out of memory for %lld merges", (long long)n), -1;
  char *p = t->merge_arena;
  for (int64_t i = 0; i < n; i++) {
    size_t k = strlen(lines[i]);
    memcpy(p, lines[i], k + 1);
    map_put(&t->merges, p, k, (int32_t)i, 0);
    p += k + 1;
  }
  return 0;
}

tkc_tokenizer *tkc_tokenizer_from_gguf(const tkc_state *s) {
  if (!s) return (void)tkc_err(TKC_EINVAL, LOAD ": NULL state"), NULL;
  const char *model = tkc_gguf_meta_str(s, "tokenizer.ggml.model");
  if (!model) return (void)tkc_err(TKC_EINVAL, LOAD ": no tokenizer.ggml.model string: the file has no vocabulary"), NULL;
  int kind;
  if (strcmp(model, "llama") == 0) kind = TOK_SPM;
  else if (strcmp(model, "gpt2") == 0) kind = TOK_BPE;
  else return (void)tkc_err(TKC_EUNSUPPORTED, LOAD ": tokenizer.ggml.model '%.40s' is not supported (llama, gpt2)", model), NULL;

  int64_t n;
  const void *tokens, *scores = NULL, *types = NULL;
  int r = get_array(s, "tokenizer.ggml.tokens", TKC_GGUF_STRING, -1, &n, &tokens);
  if (r == 0) return (void)tkc_err(TKC_EINVAL, LOAD ": no tokenizer.ggml.tokens"), NULL;
  if (r < 0) return NULL;
  if (n < 1 || n > TOK_MAX_VOCAB) return (void)tkc_err(TKC_EINVAL, LOAD ": tokenizer.ggml.tokens has %lld tokens (1 to %d)", (long long)n, TOK_MAX_VOCAB), NULL;
  int64_t k;
  r = get_array(s, "tokenizer.ggml.scores", TKC_GGUF_FLOAT32, n, &k, &scores);
  if (r < 0) return NULL;
  if (r == 0 && kind == TOK_SPM) return (void)tkc_err(TKC_EINVAL, LOAD ": a llama (SentencePiece) vocabulary without tokenizer.ggml.scores"), NULL;
  if ((r = get_array(s, "tokenizer.ggml.token_type", TKC_GGUF_INT32, n, &k, &types)) < 0) return NULL;

  tkc_tokenizer *t = calloc(1, sizeof *t);
  if (!t) return (void)tkc_err(TKC_ENOMEM, LOAD ": out of memory"), NULL;
  t->kind = kind, t->n_vocab = (int32_t)n, t->have_types = r == 1;
  const char *const *tok = tokens;
  size_t bytes = 0;
  for (int64_t i = 0; i < n; i++) bytes += 2 * (strlen(tok[i]) + 1); /* the text, and its piece (never longer) */
  t->text = malloc((size_t)n * sizeof *t->text), t->len = malloc((size_t)n * sizeof *t->len);
  t->type = malloc((size_t)n * sizeof *t->type), t->piece = malloc((size_t)n * sizeof *t->piece);
  t->piece_len = malloc((size_t)n * sizeof *t->piece_len), t->arena = malloc(bytes);
  if (kind == TOK_SPM) t->score = malloc((size_t)n * sizeof *t->score);
  if (!t->text || !t->len || !t->type || !t->piece || !t->piece_len || !t->arena || (kind == TOK_SPM && !t->score) ||
      map_init(&t->vocab, (size_t)n) != 0)
    return (void)tkc_err(TKC_ENOMEM, LOAD ": out of memory for %lld tokens", (long long)n), load_fail(t);
  if (t->score) memcpy(t->score, scores, (size_t)n * sizeof *t->score);
  for (int64_t i = 0; i < n; i++) t->type[i] = types ? ((const int32_t *)types)[i] : TT_NORMAL;
  for (int v = 0; v < 0x144; v++) t->byte_of_char[v] = -1;
  for (int b = 0; b < 256; b++) t->byte_of_char[gpt2_char_of_byte((uint8_t)b)] = (int16_t)b;
  char *p = t->arena;
  for (int64_t i = 0; i < n; i++) {
    size_t len = strlen(tok[i]);
    if (len > UINT32_MAX / 2) return (void)tkc_err(TKC_EINVAL, LOAD ": token %lld is %zu bytes long", (long long)i, len), load_fail(t);
    memcpy(p, tok[i], len + 1);
    t->text[i] = p, t->len[i] = (uint32_t)len;
    map_put(&t->vocab, p, len, (int32_t)i, 1);
    p += len + 1;
  }
  for (int64_t i = 0; i < n; i++) {
    size_t len = token_piece(t, (int32_t)i, p);
    p[len] = 0;
    t->piece[i] = p, t->piece_len[i] = (uint32_t)len;
    p += len + 1;
  }
  for (int b = 0; b < 256; b++) {
    char name[8];
    int len = kind == TOK_SPM ? snprintf(name, sizeof name, "<0x%02X>", b) : utf8_put(name, gpt2_char_of_byte((uint8_t)b));
    t->byte_tok[b] = map_get(&t->vocab, name, (size_t)len);
  }
  if (kind == TOK_BPE && load_merges(t, s) != 0) return load_fail(t);
  if (opt_id(s, "tokenizer.ggml.bos_token_id", t->n_vocab, &t->bos) || opt_id(s, "tokenizer.ggml.eos_token_id", t->n_vocab, &t->eos) ||
      opt_id(s, "tokenizer.ggml.unknown_token_id", t->n_vocab, &t->unk) ||
      opt_bool(s, "tokenizer.ggml.add_bos_token", kind == TOK_SPM, &t->add_bos) ||
      opt_bool(s, "tokenizer.ggml.add_space_prefix", kind == TOK_SPM, &t->add_space_prefix))
    return load_fail(t);
  for (int32_t i = 0; t->unk < 0 && i < t->n_vocab; i++)
    if (t->type[i] == TT_UNKNOWN) t->unk = i;
  return t;
}

/* ---------------------------------------------------------------- the merge loop */

typedef struct {
  int32_t off, n;  /* bytes in the encoder's text (SPM: escaped text; BPE: the word's GPT-2 characters) */
  int32_t b0, nb;  /* BPE: the original bytes it stands for */
  int32_t prev, next;
} sym;

typedef struct {
  int32_t left, right, size;
  double prio;
} pair;

typedef struct {
  const tkc_tokenizer *t;
  const char *text;
  sym *sy;
  pair *heap;
  size_t nheap, capheap;
  char *key;      /* BPE: room for one "left right" key */
  int32_t *ids;   /* the caller's buffer */
  int64_t nids, cap;
  int oom;
} enc;

static int pair_before(const pair *a, const pair *b) {
  return a->prio > b->prio || (a->prio == b->prio && a->left < b->left);
}

static void heap_push(enc *e, pair p) {
  if (e->nheap == e->capheap) {
    size_t cap = e->capheap ? 2 * e->capheap : 64;
    pair *h = realloc(e->heap, cap * sizeof *h);
    if (!h) {
      e->oom = 1;
      return;
    }
    e->heap = h, e->capheap = cap;
  }
  size_t i = e->nheap++;
  while (i > 0 && pair_before(&p, &e->heap[(i - 1) / 2])) e->heap[i] = e->heap[(i - 1) / 2], i = (i - 1) / 2;
  e->heap[i] = p;
}

static pair heap_pop(enc *e) {
  pair top = e->heap[0], last = e->heap[--e->nheap];
  size_t i = 0;
  for (;;) {
    size_t c = 2 * i + 1;
    if (c >= e->nheap) break;
    if (c + 1 < e->nheap && pair_before(&e->heap[c + 1], &e->heap[c])) c++;
    if (!pair_before(&e->heap[c], &last)) break;
    e->heap[i] = e->heap[c], i = c;
  }
  if (e->nheap) e->heap[i] = last;
  return top;
}

static void try_pair(enc *e, int32_t left, int32_t right) {
  if (left < 0 || right < 0) return;
  const sym *l = &e->sy[left], *r = &e->sy[right];
  double prio;
  if (e->t->kind == TOK_SPM) { /* the two symbols are adjacent in the text: their concatenation is a slice */
    int32_t id = map_get(&e->t->vocab, e->text + l->off, (size_t)(l->n + r->n));
    if (id < 0) return;
    prio = e->t->score[id];
  } else {
    memcpy(e->key, e->text + l->off, (size_t)l->n);
    e->key[l->n] = ' ';
    memcpy(e->key + l->n + 1, e->text + r->off, (size_t)r->n);
    int32_t rank = map_get(&e->t->merges, e->key, (size_t)(l->n + r->n + 1));
    if (rank < 0) return;
    prio = -(double)rank;
  }
  heap_push(e, (pair){left, right, l->n + r->n, prio});
}

/* merges symbols 0..n-1 (linked in order) until no queued pair is left */
static void merge_all(enc *e, int32_t n) {
  e->nheap = 0;
  for (int32_t i = 1; i < n; i++) try_pair(e, i - 1, i);
  while (e->nheap && !e->oom) {
    pair p = heap_pop(e);
    sym *l = &e->sy[p.left], *r = &e->sy[p.right];
    if (l->n == 0 || r->n == 0 || l->next != p.right || l->n + r->n != p.size) continue; /* stale */
    l->n += r->n, l->nb += r->nb, r->n = 0;
    l->next = r->next;
    if (r->next >= 0) e->sy[r->next].prev = p.left;
    try_pair(e, l->prev, p.left);
    try_pair(e, p.left, l->next);
  }
}

static void emit(enc *e, int32_t id) {
  if (e->nids < e->cap) e->ids[e->nids] = id;
  e->nids++;
}

static int emit_byte(enc *e, uint8_t b) {
  int32_t id = e->t->byte_tok[b] >= 0 ? e->t->byte_tok[b] : e->t->unk;
  if (id < 0)
    return tkc_err(TKC_EINVAL, "tkc_tokenizer_encode: byte 0x%02X has no token (no %s) and the vocabulary has no unknown token", b,
                   e->t->kind == TOK_SPM ? "<0xXX> token" : "token for its GPT-2 character"), -1;
  emit(e, id);
  return 0;
}

/* ---------------------------------------------------------------- SentencePiece */

static int encode_spm(enc *e, const char *text, size_t len) {
  const tkc_tokenizer *t = e->t;
  char *esc = malloc(3 * len + 4);
  e->sy = malloc((len + 2) * sizeof *e->sy); /* a character per byte at most, and the prefix */
  if (!esc || !e->sy) return free(esc), e->oom = 1, -1;
  size_t m = 0;
  if (t->add_space_prefix && len) memcpy(esc, "\xe2\x96\x81", 3), m = 3;
  for (size_t i = 0; i < len; i++) {
    if (text[i] == ' ') memcpy(esc + m, "\xe2\x96\x81", 3), m += 3;
    else esc[m++] = text[i];
  }
  int32_t n = 0;
  for (size_t i = 0; i < m; n++) {
    size_t c = utf8_char_len((const uint8_t *)esc + i, m - i);
    e->sy[n] = (sym){(int32_t)i, (int32_t)c, 0, 0, n - 1, -1};
    if (n) e->sy[n - 1].next = n;
    i += c;
  }
  e->text = esc;
  merge_all(e, n);
  int rc = e->oom ? -1 : 0;
  for (int32_t i = 0; n && i >= 0 && rc == 0; i = e->sy[i].next) {
    const sym *sy = &e->sy[i];
    int32_t id = map_get(&t->vocab, esc + sy->off, (size_t)sy->n);
    if (id >= 0) emit(e, id);
    else /* a character that is no token (never a merged symbol: those are tokens) */
      for (int32_t j = 0; j < sy->n && rc == 0; j++) rc = emit_byte(e, (uint8_t)esc[sy->off + j]);
  }
  free(esc);
  return rc;
}

/* ---------------------------------------------------------------- byte-level BPE */

/* GPT-2's pre-tokenizer regex  's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
 * with ASCII classes: letters a-z A-Z and every byte >= 0x80 (so a UTF-8 character of any script,
 * emoji and non-ASCII punctuation too, is a "letter"), digits 0-9, whitespace " \t\n\v\f\r", and
 * everything else punctuation. Returns the end of the piece that starts at i. */
enum { C_LETTER, C_DIGIT, C_SPACE, C_OTHER };
static int char_class(uint8_t c) {
  if (c >= 0x80 || ((c | 32) >= 'a' && (c | 32) <= 'z')) return C_LETTER;
  if (c >= '0' && c <= '9') return C_DIGIT;
  if (c == ' ' || (c >= 9 && c <= 13)) return C_SPACE;
  return C_OTHER;
}

static size_t gpt2_piece_end(const uint8_t *s, size_t n, size_t i) {
  if (s[i] == '\'' && i + 1 < n) {
    if (i + 2 < n && ((s[i + 1] == 'r' && s[i + 2] == 'e') || (s[i + 1] == 'v' && s[i + 2] == 'e') || (s[i + 1] == 'l' && s[i + 2] == 'l')))
      return i + 3;
    if (s[i + 1] == 's' || s[i + 1] == 't' || s[i + 1] == 'm' || s[i + 1] == 'd') return i + 2;
  }
  size_t j = i;
  if (s[j] == ' ' && j + 1 < n && char_class(s[j + 1]) != C_SPACE) j++; /* " ?" */
  int c = char_class(s[j]);
  if (c != C_SPACE) {
    while (j < n && char_class(s[j]) == c) j++;
    return j;
  }
  size_t k = i;
  while (k < n && char_class(s[k]) == C_SPACE) k++;
  if (k == n) return n;          /* \s+ to the end */
  return k - i >= 2 ? k - 1 : k; /* \s+(?!\S) leaves the last one to the next word; else \s+ */
}

static int encode_bpe(enc *e, const char *text, size_t len) {
  const tkc_tokenizer *t = e->t;
  char *mapped = malloc(2 * len + 1);
  e->sy = malloc((len + 1) * sizeof *e->sy);
  e->key = malloc(2 * len + 2);
  if (!mapped || !e->sy || !e->key) return free(mapped), e->oom = 1, -1;
  e->text = mapped;
  int rc = 0;
  for (size_t i = 0; i < len && rc == 0;) {
    size_t end = gpt2_piece_end((const uint8_t *)text, len, i), m = 0;
    int32_t n = 0;
    for (size_t b = i; b < end; b++, n++) {
      int c = utf8_put(mapped + m, gpt2_char_of_byte((uint8_t)text[b]));
      e->sy[n] = (sym){(int32_t)m, c, (int32_t)b, 1, n - 1, -1};
      if (n) e->sy[n - 1].next = n;
      m += (size_t)c;
    }
    merge_all(e, n);
    if (e->oom) rc = -1;
    for (int32_t k = 0; n && k >= 0 && rc == 0; k = e->sy[k].next) {
      const sym *sy = &e->sy[k];
      int32_t id = map_get(&t->vocab, mapped + sy->off, (size_t)sy->n);
      if (id >= 0) emit(e, id);
      else
        for (int32_t j = 0; j < sy->nb && rc == 0; j++) rc = emit_byte(e, (uint8_t)text[sy->b0 + j]);
    }
    i = end;
  }
  free(mapped);
  return rc;
}

/* ---------------------------------------------------------------- the API */

int tkc_tokenizer_encode(tkc_tokenizer *t, const char *text, size_t len, int add_bos, int32_t *ids, int cap) {
  if (!t || (!text && len) || cap < 0 || (cap > 0 && !ids))
    return tkc_err(TKC_EINVAL, "tkc_tokenizer_encode: %s", !t ? "NULL tokenizer" : (!text && len) ? "NULL text" : cap < 0 ? "negative cap" : "NULL ids"), -1;
  if (len > TOK_MAX_TEXT) return tkc_err(TKC_EINVAL, "tkc_tokenizer_encode: a text of %zu bytes (at most %d)", len, TOK_MAX_TEXT), -1;
  enc e = {.t = t, .ids = ids, .cap = cap};
  if (add_bos < 0) add_bos = t->add_bos;
  if (add_bos) {
    if (t->bos < 0) return tkc_err(TKC_EINVAL, "tkc_tokenizer_encode: add_bos, but the vocabulary has no tokenizer.ggml.bos_token_id"), -1;
    emit(&e, t->bos);
  }
  int rc = len == 0 ? 0 : t->kind == TOK_SPM ? encode_spm(&e, text, len) : encode_bpe(&e, text, len);
  free(e.sy), free(e.heap), free(e.key);
  if (e.oom) return tkc_err(TKC_ENOMEM, "tkc_tokenizer_encode: out of memory for a text of %zu bytes", len), -1;
  return rc < 0 ? -1 : (int)e.nids;
}

int tkc_tokenizer_decode(tkc_tokenizer *t, const int32_t *ids, int n, char *buf, size_t cap) {
  if (!t || n < 0 || (n > 0 && !ids) || (cap > 0 && !buf))
    return tkc_err(TKC_EINVAL, "tkc_tokenizer_decode: %s", !t ? "NULL tokenizer" : n < 0 ? "negative n" : !ids ? "NULL ids" : "NULL buf"), -1;
  size_t total = 0;
  int strip = t->kind == TOK_SPM && t->add_space_prefix; /* the space encode put in front */
  for (int i = 0; i < n; i++) {
    if (ids[i] < 0 || ids[i] >= t->n_vocab)
      return tkc_err(TKC_EINVAL, "tkc_tokenizer_decode: ids[%d] = %d is out of range (a vocabulary of %d tokens)", i, (int)ids[i], (int)t->n_vocab), -1;
    const char *p = t->piece[ids[i]];
    size_t k = t->piece_len[ids[i]];
    if (strip && k) {
      if (p[0] == ' ') p++, k--;
      strip = 0;
    }
    if (total < cap) memcpy(buf + total, p, k < cap - total ? k : cap - total);
    total += k;
    if (total > INT_MAX) return tkc_err(TKC_EINVAL, "tkc_tokenizer_decode: the text is over %d bytes", INT_MAX), -1;
  }
  if (total < cap) buf[total] = 0;
  return (int)total;
}

const char *tkc_tokenizer_piece(const tkc_tokenizer *t, int32_t id, size_t *len) {
  if (!t || id < 0 || id >= t->n_vocab) return (void)tkc_err(TKC_EINVAL, "tkc_tokenizer_piece: %s", !t ? "NULL tokenizer" : "id out of range"), NULL;
  if (len) *len = t->piece_len[id];
  return t->piece[id];
}

const char *tkc_tokenizer_token_text(const tkc_tokenizer *t, int32_t id) {
  if (!t || id < 0 || id >= t->n_vocab) return (void)tkc_err(TKC_EINVAL, "tkc_tokenizer_token_text: %s", !t ? "NULL tokenizer" : "id out of range"), NULL;
  return t->text[id];
}

int32_t tkc_tokenizer_find(const tkc_tokenizer *t, const char *text) {
  return t && text ? map_get(&t->vocab, text, strlen(text)) : -1;
}

int tkc_tokenizer_vocab_size(const tkc_tokenizer *t) { return t ? t->n_vocab : -1; }
const char *tkc_tokenizer_model(const tkc_tokenizer *t) { return !t ? NULL : t->kind == TOK_SPM ? "llama" : "gpt2"; }
int32_t tkc_tokenizer_bos(const tkc_tokenizer *t) { return t ? t->bos : -1; }
int32_t tkc_tokenizer_eos(const tkc_tokenizer *t) { return t ? t->eos : -1; }
int tkc_tokenizer_add_bos(const tkc_tokenizer *t) { return t ? t->add_bos : -1; }
