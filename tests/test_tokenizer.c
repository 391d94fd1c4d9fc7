/* test_tokenizer.c — the GGUF vocabulary tokenizer (tkc/io.h tkc_tokenizer_*): a SentencePiece
 * vocabulary of 298 tokens (the 256 <0xXX> byte tokens, U+2581, a-z, é, 日 and ten scored pieces) and a
 * small GPT-2 one, written as GGUF bytes here and loaded with tkc_gguf_load_bytes. Checks id sequences
 * worked out by hand from the scores, byte fallback for characters that are no token and for invalid
 * UTF-8, decode(encode(text)) == text, the cap contract, and malformed vocabularies refused. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tkc.h"
#include "tkc/io.h"
#include "byte_buf.h"

static tkc_ctx *ctx;

/* ---------------------------------------------------------------- GGUF bytes (as tests/test_io.c) */

static void kv_head(buf *b, const char *key, uint32_t type) {
  put_str(b, key);
  put_u32(b, type);
}

/* what a vocabulary file holds; a NULL / negative field is left out of the file */
typedef struct {
  const char *model;
  int ntok;
  const char *const *tok;
  int nscores;
  const float *scores;
  int scores_as_int; /* write the scores as an int32 array (a malformed file) */
  int ntypes;
  const int32_t *types;
  int nmerges;
  const char *const *merges;
  int64_t bos, eos, unk;
  int add_space_prefix;
} vocab_spec;

static tkc_state *load_vocab(const vocab_spec *v) {
  int nkv = (v->model != NULL) + (v->tok != NULL) + (v->scores != NULL) + (v->types != NULL) + (v->merges != NULL) +
            (v->bos >= 0) + (v->eos >= 0) + (v->unk >= 0) + (v->add_space_prefix >= 0);
  buf b = {0};
  put(&b, "GGUF", 4), put_u32(&b, 3), put_u64(&b, 0), put_u64(&b, (uint64_t)nkv);
  if (v->model) kv_head(&b, "tokenizer.ggml.model", TKC_GGUF_STRING), put_str(&b, v->model);
  if (v->tok) {
    kv_head(&b, "tokenizer.ggml.tokens", TKC_GGUF_ARRAY), put_u32(&b, TKC_GGUF_STRING), put_u64(&b, (uint64_t)v->ntok);
    for (int i = 0; i < v->ntok; i++) put_str(&b, v->tok[i]);
  }
  if (v->scores) {
    kv_head(&b, "tokenizer.ggml.scores", TKC_GGUF_ARRAY);
    put_u32(&b, v->scores_as_int ? TKC_GGUF_INT32 : TKC_GGUF_FLOAT32), put_u64(&b, (uint64_t)v->nscores);
    put(&b, v->scores, 4 * (size_t)v->nscores);
  }
  if (v->types) {
    kv_head(&b, "tokenizer.ggml.token_type", TKC_GGUF_ARRAY), put_u32(&b, TKC_GGUF_INT32), put_u64(&b, (uint64_t)v->ntypes);
    put(&b, v->types, 4 * (size_t)v->ntypes);
  }
  if (v->merges) {
    kv_head(&b, "tokenizer.ggml.merges", TKC_GGUF_ARRAY), put_u32(&b, TKC_GGUF_STRING), put_u64(&b, (uint64_t)v->nmerges);
    for (int i = 0; i < v->nmerges; i++) put_str(&b, v->merges[i]);
  }
  if (v->bos >= 0) kv_head(&b, "tokenizer.ggml.bos_token_id", TKC_GGUF_UINT32), put_u32(&b, (uint32_t)v->bos);
  if (v->eos >= 0) kv_head(&b, "tokenizer.ggml.eos_token_id", TKC_GGUF_UINT32), put_u32(&b, (uint32_t)v->eos);
  if (v->unk >= 0) kv_head(&b, "tokenizer.ggml.unknown_token_id", TKC_GGUF_UINT32), put_u32(&b, (uint32_t)v->unk);
  if (v->add_space_prefix >= 0) kv_head(&b, "tokenizer.ggml.add_space_prefix", TKC_GGUF_BOOL), put(&b, &(uint8_t){(uint8_t)v->add_space_prefix}, 1);
  tkc_state *st = tkc_gguf_load_bytes(ctx, b.p, b.n);
  free(b.p);
  assert_non_null(st);
  return st;
}

/* ---------------------------------------------------------------- the SentencePiece test vocabulary */

#define SP "\xe2\x96\x81" /* U+2581, SentencePiece's space */
enum { UNK = 0, BOS = 1, EOS = 2, BYTE0 = 3, SPACE = 259, LETTER_A = 260, E_ACUTE = 286, NICHI = 287, PIECES = 288, NTOK = 298 };
/* ids 288..297 and their scores: single characters score -10, so these decide every merge */
static const char *const PIECE_TEXT[10] = {"th", "he", "ll", "lo", "llo", "hel", "hello", SP "hello", SP "t", SP "the"};
static const float PIECE_SCORE[10] = {-1, -3, -2, -6, -4, -7, -8, -9, -5, -0.5f};
enum { TH = 288, HE, LL, LO, LLO, HEL, HELLO, SP_HELLO, SP_T, SP_THE };
#define L(c) (LETTER_A + ((c) - 'a'))

static char tok_store[NTOK][16];
static const char *spm_tok[NTOK];
static float spm_scores[NTOK];
static int32_t spm_types[NTOK];

static void build_spm_vocab(void) {
  for (int i = 0; i < NTOK; i++) {
    spm_tok[i] = tok_store[i];
    spm_types[i] = 1;
    spm_scores[i] = -10;
  }
  strcpy(tok_store[UNK], "<unk>"), spm_types[UNK] = 2, spm_scores[UNK] = 0;
  strcpy(tok_store[BOS], "<s>"), spm_types[BOS] = 3, spm_scores[BOS] = 0;
  strcpy(tok_store[EOS], "</s>"), spm_types[EOS] = 3, spm_scores[EOS] = 0;
  for (int b = 0; b < 256; b++) snprintf(tok_store[BYTE0 + b], 16, "<0x%02X>", b), spm_types[BYTE0 + b] = 6, spm_scores[BYTE0 + b] = 0;
  strcpy(tok_store[SPACE], SP);
  for (int c = 0; c < 26; c++) tok_store[LETTER_A + c][0] = (char)('a' + c);
  strcpy(tok_store[E_ACUTE], "\xc3\xa9");
  strcpy(tok_store[NICHI], "\xe6\x97\xa5"); /* 日; 本 (E6 9C AC) is not in the vocabulary */
  for (int i = 0; i < 10; i++) strcpy(tok_store[PIECES + i], PIECE_TEXT[i]), spm_scores[PIECES + i] = PIECE_SCORE[i];
}

static vocab_spec spm_spec(void) {
  return (vocab_spec){.model = "llama", .ntok = NTOK, .tok = spm_tok, .nscores = NTOK, .scores = spm_scores, .ntypes = NTOK,
                      .types = spm_types, .bos = BOS, .eos = EOS, .unk = -1, .add_space_prefix = -1};
}

static tkc_tokenizer *spm_tokenizer(void) {
  vocab_spec v = spm_spec();
  tkc_state *st = load_vocab(&v);
  tkc_tokenizer *t = tkc_tokenizer_from_gguf(st);
  tkc_state_free(st); /* the tokenizer has its own copy */
  assert_non_null(t);
  return t;
}

static void expect_ids(tkc_tokenizer *t, const char *text, size_t len, int add_bos, const int32_t *want, int n) {
  int32_t ids[64];
  int got = tkc_tokenizer_encode(t, text, len, add_bos, ids, 64);
  if (got != n) print_error("'%s': %d ids, expected %d (%s)\n", text, got, n, tkc_last_error());
  assert_int_equal(got, n);
  for (int i = 0; i < n; i++) {
    if (ids[i] != want[i]) print_error("'%s': ids[%d] = %d, expected %d\n", text, i, (int)ids[i], (int)want[i]);
    assert_int_equal(ids[i], want[i]);
  }
}
#define EXPECT(t, text, bos, ...)                                                                        \
  do {                                                                                                   \
    const int32_t want_[] = {__VA_ARGS__};                                                               \
    expect_ids(t, text, strlen(text), bos, want_, (int)(sizeof want_ / sizeof want_[0]));                \
  } while (0)

static void expect_round_trip(tkc_tokenizer *t, const char *text, size_t len) {
  int32_t ids[256];
  int n = tkc_tokenizer_encode(t, text, len, 1, ids, 256);
  assert_in_range(n, 1, 256);
  char out[512];
  int k = tkc_tokenizer_decode(t, ids, n, out, sizeof out);
  if ((size_t)k != len || memcmp(out, text, len) != 0) print_error("round trip of '%.*s' gave '%.*s'\n", (int)len, text, k, out);
  assert_int_equal(k, (int)len);
  assert_memory_equal(out, text, len);
  assert_int_equal(out[k], 0);
}

/* ---------------------------------------------------------------- tests */

static void test_spm_encode(void **state) {
  (void)state;
  tkc_tokenizer *t = spm_tokenizer();
  assert_int_equal(tkc_tokenizer_vocab_size(t), NTOK);
  assert_int_equal(tkc_tokenizer_bos(t), BOS);
  assert_int_equal(tkc_tokenizer_eos(t), EOS);
  assert_int_equal(tkc_tokenizer_add_bos(t), 1); /* llama's default */
  assert_string_equal(tkc_tokenizer_model(t), "llama");
  assert_int_equal(tkc_tokenizer_find(t, SP "the"), SP_THE);
  assert_int_equal(tkc_tokenizer_find(t, "zz"), -1);
  /* "▁hello": ll (-2), then he (-3), then l+lo is stale (l was merged), ll+o = llo (-4), he+llo = hello
   * (-8), ▁+hello = ▁hello (-9) */
  EXPECT(t, "hello", 1, BOS, SP_HELLO);
  EXPECT(t, "hello", 0, SP_HELLO);
  EXPECT(t, "hello", -1, BOS, SP_HELLO);
  /* "▁the": th (-1) first, which leaves ▁t (-5) stale and he (-3) gone: ▁the (-0.5) is never reached */
  EXPECT(t, "the", 0, SPACE, TH, L('e'));
  EXPECT(t, "hello the", 0, SP_HELLO, SPACE, TH, L('e'));
  /* equal scores: the leftmost pair first */
  EXPECT(t, "lll", 0, SPACE, LL, L('l'));
  EXPECT(t, "lllll", 0, SPACE, LL, LL, L('l'));
  /* "▁tel": ▁t (-5) is the only pair */
  EXPECT(t, "tel", 0, SP_T, L('e'), L('l'));
  /* hel (-7) needs he+l: "▁help" -> he, then hel */
  EXPECT(t, "help", 0, SPACE, HEL, L('p'));
  /* the spaces: each is a ▁ token of its own, the first one after the prefix */
  EXPECT(t, " a  b", 0, SPACE, SPACE, L('a'), SPACE, SPACE, L('b'));
  EXPECT(t, "", 1, BOS);
  assert_int_equal(tkc_tokenizer_encode(t, "", 0, 0, NULL, 0), 0);
  /* UTF-8: é and 日 are tokens, 本 (E6 9C AC) and 😀 (F0 9F 98 80) fall back to their bytes */
  EXPECT(t, "caf\xc3\xa9", 0, SPACE, L('c'), L('a'), L('f'), E_ACUTE);
  EXPECT(t, "\xe6\x97\xa5\xe6\x9c\xac", 0, SPACE, NICHI, BYTE0 + 0xe6, BYTE0 + 0x9c, BYTE0 + 0xac);
  EXPECT(t, "\xf0\x9f\x98\x80", 0, SPACE, BYTE0 + 0xf0, BYTE0 + 0x9f, BYTE0 + 0x98, BYTE0 + 0x80);
  /* invalid UTF-8: a lone continuation byte, a lead byte without its continuation, a truncated one */
  EXPECT(t, "\x80" "a\xc3" "b\xe6\x97", 0, SPACE, BYTE0 + 0x80, L('a'), BYTE0 + 0xc3, L('b'), BYTE0 + 0xe6, BYTE0 + 0x97);
  /* characters not in the vocabulary: ASCII ones too ('A', '!') */
  EXPECT(t, "A!", 0, SPACE, BYTE0 + 'A', BYTE0 + '!');
  /* a NUL byte inside the text is a byte like any other */
  expect_ids(t, "a\0b", 3, 0, (const int32_t[]){SPACE, L('a'), BYTE0, L('b')}, 4);
  tkc_tokenizer_free(t);
}

static void test_spm_round_trip(void **state) {
  (void)state;
  tkc_tokenizer *t = spm_tokenizer();
  const char *texts[] = {"hello the world", " leading space", "two  spaces ", "caf\xc3\xa9 \xe6\x97\xa5\xe6\x9c\xac",
                         "emoji \xf0\x9f\x98\x80!", "Mixed CASE, punctuation; tabs\tnew\nlines", "\xff\xfe\xc3(", "x", ""};
  for (size_t i = 0; i < sizeof texts / sizeof *texts; i++) expect_round_trip(t, texts[i], strlen(texts[i]));
  expect_round_trip(t, "a\0b", 3);
  /* pieces: ▁ is a space, byte tokens their byte, control tokens nothing */
  size_t len;
  assert_string_equal(tkc_tokenizer_piece(t, SP_HELLO, &len), " hello");
  assert_int_equal(len, 6);
  assert_memory_equal(tkc_tokenizer_piece(t, BYTE0 + 0xe6, &len), "\xe6", 1);
  assert_int_equal(len, 1);
  assert_string_equal(tkc_tokenizer_piece(t, BOS, &len), "");
  assert_int_equal(len, 0);
  assert_string_equal(tkc_tokenizer_token_text(t, BOS), "<s>");
  assert_null(tkc_tokenizer_piece(t, NTOK, &len));
  assert_null(tkc_tokenizer_token_text(t, -1));
  /* decode: BOS/EOS are nothing, the prefix space goes */
  char out[64];
  assert_int_equal(tkc_tokenizer_decode(t, (const int32_t[]){BOS, SP_HELLO, SPACE, TH, L('e'), EOS}, 6, out, sizeof out), 9);
  assert_string_equal(out, "hello the");
  tkc_tokenizer_free(t);

  /* without add_space_prefix nothing is put in front, and nothing is taken away */
  vocab_spec v = spm_spec();
  v.add_space_prefix = 0;
  tkc_state *st = load_vocab(&v);
  t = tkc_tokenizer_from_gguf(st);
  tkc_state_free(st);
  assert_non_null(t);
  EXPECT(t, "hello", 0, HELLO); /* ll, he, llo, hello: no ▁ in front to reach ▁hello */
  EXPECT(t, " hello", 0, SP_HELLO);
  expect_round_trip(t, " hello", 6);
  expect_round_trip(t, "hello the", 9);
  tkc_tokenizer_free(t);

  /* without tokenizer.ggml.token_type the <0xXX> texts are still byte tokens (and BOS is then text) */
  v = spm_spec();
  v.types = NULL;
  st = load_vocab(&v);
  t = tkc_tokenizer_from_gguf(st);
  tkc_state_free(st);
  assert_non_null(t);
  EXPECT(t, "\xe6\x97\xa5\xe6\x9c\xac", 0, SPACE, NICHI, BYTE0 + 0xe6, BYTE0 + 0x9c, BYTE0 + 0xac);
  assert_int_equal(tkc_tokenizer_decode(t, (const int32_t[]){SPACE, NICHI, BYTE0 + 0xe6, BYTE0 + 0x9c, BYTE0 + 0xac}, 5, out, sizeof out), 6);
  assert_string_equal(out, "\xe6\x97\xa5\xe6\x9c\xac");
  tkc_tokenizer_free(t);
}

static void test_encode_cap(void **state) {
  (void)state;
  tkc_tokenizer *t = spm_tokenizer();
  int32_t ids[8] = {-7, -7, -7, -7, -7, -7, -7, -7};
  /* 5 ids needed: 2 written, the rest untouched */
  assert_int_equal(tkc_tokenizer_encode(t, "the a", 5, 0, ids, 2), 5);
  assert_int_equal(ids[0], SPACE);
  assert_int_equal(ids[1], TH);
  assert_int_equal(ids[2], -7);
  assert_int_equal(tkc_tokenizer_encode(t, "the a", 5, 0, NULL, 0), 5);
  char out[8];
  memset(out, '#', sizeof out);
  /* " hello the" is 9 bytes after the prefix space goes: 4 written, no NUL (no room) */
  assert_int_equal(tkc_tokenizer_decode(t, (const int32_t[]){SP_HELLO, SPACE, TH, L('e')}, 4, out, 4), 9);
  assert_memory_equal(out, "hell#", 5);
  assert_int_equal(tkc_tokenizer_decode(t, NULL, 0, out, sizeof out), 0);
  assert_int_equal(out[0], 0);
  tkc_tokenizer_free(t);
}

/* a 1 MB prompt: the merge loop is a heap, not a rescan per merge (that would take hours here) */
static void test_long_text(void **state) {
  (void)state;
  tkc_tokenizer *t = spm_tokenizer();
  enum { N = 100000 };
  const char chunk[] = "hello the ";
  size_t len = N * (sizeof chunk - 1);
  char *text = malloc(len);
  int32_t *ids = malloc((4 * N + 1) * sizeof *ids);
  assert_non_null(text);
  assert_non_null(ids);
  for (int i = 0; i < N; i++) memcpy(text + (size_t)i * (sizeof chunk - 1), chunk, sizeof chunk - 1);
  /* ▁hello ▁ th e per chunk, the last space alone */
  assert_int_equal(tkc_tokenizer_encode(t, text, len, 0, ids, 4 * N + 1), 4 * N + 1);
  for (int i = 0; i < N; i += 997) {
    assert_int_equal(ids[4 * i], SP_HELLO);
    assert_int_equal(ids[4 * i + 1], SPACE);
    assert_int_equal(ids[4 * i + 2], TH);
    assert_int_equal(ids[4 * i + 3], L('e'));
  }
  assert_int_equal(ids[4 * N], SPACE);
  char *back = malloc(len + 1);
  assert_non_null(back);
  assert_int_equal(tkc_tokenizer_decode(t, ids, 4 * N + 1, back, len + 1), (int)len);
  assert_memory_equal(back, text, len);
  free(back), free(ids), free(text);
  tkc_tokenizer_free(t);
}

static void test_bad_arguments(void **state) {
  (void)state;
  tkc_tokenizer *t = spm_tokenizer();
  int32_t ids[4];
  char out[8];
  assert_int_equal(tkc_tokenizer_encode(NULL, "a", 1, 0, ids, 4), -1);
  assert_int_equal(tkc_last_status(), TKC_EINVAL);
  assert_int_equal(tkc_tokenizer_encode(t, NULL, 1, 0, ids, 4), -1);
  assert_non_null(strstr(tkc_last_error(), "NULL text"));
  assert_int_equal(tkc_tokenizer_encode(t, "a", 1, 0, NULL, 4), -1);
  assert_int_equal(tkc_tokenizer_encode(t, "a", 1, 0, ids, -1), -1);
  assert_int_equal(tkc_tokenizer_decode(t, (const int32_t[]){NTOK}, 1, out, sizeof out), -1);
  assert_non_null(strstr(tkc_last_error(), "out of range"));
  assert_int_equal(tkc_tokenizer_decode(t, (const int32_t[]){-1}, 1, out, sizeof out), -1);
  assert_int_equal(tkc_tokenizer_decode(t, ids, -1, out, sizeof out), -1);
  assert_int_equal(tkc_tokenizer_vocab_size(NULL), -1);
  assert_null(tkc_tokenizer_from_gguf(NULL));
  tkc_tokenizer_free(NULL);
  tkc_tokenizer_free(t);
  tkc_clear_error();
}

/* a vocabulary from spm_spec() with one thing changed must be refused naming it */
static void expect_refused(const vocab_spec *v, tkc_status status, const char *what) {
  tkc_state *st = load_vocab(v);
  tkc_tokenizer *t = tkc_tokenizer_from_gguf(st);
  if (t || !strstr(tkc_last_error(), what)) print_error("expected '%s', got '%s'\n", what, tkc_last_error());
  assert_null(t);
  assert_int_equal(tkc_last_status(), status);
  assert_non_null(strstr(tkc_last_error(), what));
  tkc_state_free(st);
  tkc_clear_error();
}

static void test_bad_vocab(void **state) {
  (void)state;
  vocab_spec v;
  v = spm_spec(), v.model = NULL;
  expect_refused(&v, TKC_EINVAL, "tokenizer.ggml.model");
  v = spm_spec(), v.model = "bert";
  expect_refused(&v, TKC_EUNSUPPORTED, "'bert'");
  v = spm_spec(), v.tok = NULL;
  expect_refused(&v, TKC_EINVAL, "no tokenizer.ggml.tokens");
  v = spm_spec(), v.ntok = 0, v.nscores = 0, v.ntypes = 0;
  expect_refused(&v, TKC_EINVAL, "has 0 tokens");
  v = spm_spec(), v.scores = NULL;
  expect_refused(&v, TKC_EINVAL, "without tokenizer.ggml.scores");
  v = spm_spec(), v.nscores = NTOK - 1;
  expect_refused(&v, TKC_EINVAL, "tokenizer.ggml.scores has 297 elements");
  v = spm_spec(), v.scores_as_int = 1;
  expect_refused(&v, TKC_EINVAL, "tokenizer.ggml.scores is not an array of float32");
  v = spm_spec(), v.ntypes = 3;
  expect_refused(&v, TKC_EINVAL, "tokenizer.ggml.token_type has 3 elements");
  v = spm_spec(), v.bos = NTOK;
  expect_refused(&v, TKC_EINVAL, "bos_token_id = 298 is out of range");
  v = spm_spec(), v.unk = 100000;
  expect_refused(&v, TKC_EINVAL, "unknown_token_id");
  v = spm_spec(), v.model = "gpt2";
  expect_refused(&v, TKC_EINVAL, "without tokenizer.ggml.merges");
  v = spm_spec(), v.model = "gpt2", v.merges = (const char *const[]){"ab"}, v.nmerges = 1;
  expect_refused(&v, TKC_EINVAL, "merges[0] 'ab'");

  /* no byte tokens and no UNKNOWN token: a character outside the vocabulary is an error at encode */
  static const char *const small[] = {"<s>", SP, "a", "b"};
  static const float small_scores[] = {0, -1, -1, -1};
  v = (vocab_spec){.model = "llama", .ntok = 4, .tok = small, .nscores = 4, .scores = small_scores, .bos = -1, .eos = -1, .unk = -1, .add_space_prefix = -1};
  tkc_state *st = load_vocab(&v);
  tkc_tokenizer *t = tkc_tokenizer_from_gguf(st);
  tkc_state_free(st);
  assert_non_null(t);
  assert_int_equal(tkc_tokenizer_bos(t), -1);
  int32_t ids[8];
  assert_int_equal(tkc_tokenizer_encode(t, "ab", 2, 0, ids, 8), 3);
  assert_int_equal(tkc_tokenizer_encode(t, "ac", 2, 0, ids, 8), -1);
  assert_non_null(strstr(tkc_last_error(), "byte 0x63 has no token"));
  assert_int_equal(tkc_tokenizer_encode(t, "ab", 2, 1, ids, 8), -1); /* add_bos without a BOS */
  assert_non_null(strstr(tkc_last_error(), "bos_token_id"));
  tkc_tokenizer_free(t);
  /* with an unknown token it stands for each such byte */
  v.unk = 0;
  st = load_vocab(&v);
  t = tkc_tokenizer_from_gguf(st);
  tkc_state_free(st);
  assert_non_null(t);
  EXPECT(t, "ac", 0, 1, 2, 0);
  tkc_tokenizer_free(t);
  tkc_clear_error();
}

/* GPT-2 byte-level BPE: the 256 byte characters (ids 0..255 in byte order), then merged pieces */
static void test_bpe(void **state) {
  (void)state;
  static char store[256][4];
  static const char *tok[261];
  for (int b = 0; b < 256; b++) {
    /* GPT-2's bytes_to_unicode */
    int cp = b, n = 0;
    if (!((b >= 0x21 && b <= 0x7e) || (b >= 0xa1 && b <= 0xac) || b >= 0xae)) {
      for (int c = 0; c < b; c++) n += !((c >= 0x21 && c <= 0x7e) || (c >= 0xa1 && c <= 0xac) || c >= 0xae);
      cp = 256 + n;
    }
    if (cp < 0x80) store[b][0] = (char)cp;
    else store[b][0] = (char)(0xc0 | (cp >> 6)), store[b][1] = (char)(0x80 | (cp & 0x3f));
    tok[b] = store[b];
  }
  /* Ġ (U+0120) is the space */
  tok[256] = "he", tok[257] = "ll", tok[258] = "hell", tok[259] = "\xc4\xa0w", tok[260] = "<|endoftext|>";
  static const char *const merges[] = {"l l", "h e", "he ll", "\xc4\xa0 w"};
  static int32_t types[261];
  for (int i = 0; i < 261; i++) types[i] = i == 260 ? 3 : 1; /* <|endoftext|> is a CONTROL token */
  vocab_spec v = {.model = "gpt2", .ntok = 261, .tok = tok, .ntypes = 261, .types = types, .nmerges = 4, .merges = merges, .bos = 260,
                  .eos = 260, .unk = -1, .add_space_prefix = -1};
  tkc_state *st = load_vocab(&v);
  tkc_tokenizer *t = tkc_tokenizer_from_gguf(st);
  tkc_state_free(st);
  assert_non_null(t);
  assert_string_equal(tkc_tokenizer_model(t), "gpt2");
  assert_int_equal(tkc_tokenizer_add_bos(t), 0);
  /* "hello world" -> "hello" " world" (the pre-tokenizer keeps the space with the word) */
  EXPECT(t, "hello world", 0, 258, 'o', 259, 'o', 'r', 'l', 'd');
  EXPECT(t, "hello", 1, 260, 258, 'o');
  /* equal ranks: the leftmost pair first */
  EXPECT(t, "lll", 0, 257, 'l');
  /* "hel lo": "hel" -> he l; " lo" -> Ġ l o (no "Ġ l" merge) */
  EXPECT(t, "hel lo", 0, 256, 'l', ' ', 'l', 'o');
  /* bytes >= 0x80 are their GPT-2 characters' tokens: é is C3 A9 */
  EXPECT(t, "caf\xc3\xa9", 0, 'c', 'a', 'f', 0xc3, 0xa9);
  const char *texts[] = {"hello world", "  two\n\nlines  ", "they're 42 caf\xc3\xa9 \xf0\x9f\x98\x80", "\xff\x80"};
  for (size_t i = 0; i < sizeof texts / sizeof *texts; i++) expect_round_trip(t, texts[i], strlen(texts[i]));
  tkc_tokenizer_free(t);
}

int main(void) {
  ctx = tkc_ctx_new("INTERP");
  if (!ctx) return 1;
  build_spm_vocab();
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_spm_encode),    cmocka_unit_test(test_spm_round_trip), cmocka_unit_test(test_encode_cap),
      cmocka_unit_test(test_long_text),     cmocka_unit_test(test_bad_arguments),  cmocka_unit_test(test_bad_vocab),
      cmocka_unit_test(test_bpe),
  };
  int rc = cmocka_run_group_tests(tests, NULL, NULL);
  tkc_ctx_free(ctx);
  return rc;
}
