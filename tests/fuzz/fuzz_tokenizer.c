/* fuzz_tokenizer.c — libFuzzer target for the GGUF tokenizer (tkc/io.h tkc_tokenizer_*): arbitrary
 * bytes encoded with a fixed SentencePiece vocabulary and a fixed GPT-2 one (the first input byte
 * picks which, and whether BOS goes first) must give ids or a clean error, never a crash, a leak or
 * undefined behaviour (built with -fsanitize=fuzzer,address,undefined: build fuzz_tokenizer_libfuzzer).
 * Every encoding is decoded again, and for valid text without U+2581 must give the text back. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tkc.h"
#include "tkc/io.h"
#include "../byte_buf.h"

/* ---------------------------------------------------------------- a vocabulary as GGUF bytes */

static void put_str_array(buf *b, const char *key, const char *const *s, int n) {
  put_str(b, key), put_u32(b, TKC_GGUF_ARRAY), put_u32(b, TKC_GGUF_STRING), put_u64(b, (uint64_t)n);
  for (int i = 0; i < n; i++) put_str(b, s[i]);
}

#define SP "\xe2\x96\x81"
static const char *const PIECES[] = {SP, "a", "b", "e", "h", "l", "o", "t", "th", "he", "ll", "llo", "hello", SP "hello", SP "t", SP "the", "\xc3\xa9", "\xe6\x97\xa5"};
#define NPIECES (int)(sizeof PIECES / sizeof *PIECES)

static tkc_tokenizer *make(tkc_ctx *ctx, int gpt2) {
  static char store[256][8];
  const char *tok[256 + NPIECES + 1];
  int n = 0;
  memset(store, 0, sizeof store); /* the second vocabulary's texts are shorter */
  tok[n++] = "<s>";
  for (int b = 0; b < 256; b++) {
    if (gpt2) { /* GPT-2's bytes_to_unicode */
      int cp = b, k = 0;
      if (!((b >= 0x21 && b <= 0x7e) || (b >= 0xa1 && b <= 0xac) || b >= 0xae)) {
        for (int c = 0; c < b; c++) k += !((c >= 0x21 && c <= 0x7e) || (c >= 0xa1 && c <= 0xac) || c >= 0xae);
        cp = 256 + k;
      }
      if (cp < 0x80) store[b][0] = (char)cp;
      else store[b][0] = (char)(0xc0 | (cp >> 6)), store[b][1] = (char)(0x80 | (cp & 0x3f));
    } else {
      snprintf(store[b], sizeof store[b], "<0x%02X>", b);
    }
    tok[n++] = store[b];
  }
  for (int i = 0; i < NPIECES; i++) tok[n++] = PIECES[i];
  buf b = {0};
  put(&b, "GGUF", 4), put_u32(&b, 3), put_u64(&b, 0), put_u64(&b, gpt2 ? 4 : 5);
  put_str(&b, "tokenizer.ggml.model"), put_u32(&b, TKC_GGUF_STRING), put_str(&b, gpt2 ? "gpt2" : "llama");
  put_str_array(&b, "tokenizer.ggml.tokens", tok, n);
  put_str(&b, "tokenizer.ggml.bos_token_id"), put_u32(&b, TKC_GGUF_UINT32), put_u32(&b, 0);
  if (gpt2) {
    static const char *const merges[] = {"l l", "h e", "he ll", "\xc4\xa0 t", "t h", "\xc3 \xa9"};
    put_str_array(&b, "tokenizer.ggml.merges", merges, 6);
  } else {
    put_str(&b, "tokenizer.ggml.scores"), put_u32(&b, TKC_GGUF_ARRAY), put_u32(&b, TKC_GGUF_FLOAT32), put_u64(&b, (uint64_t)n);
    for (int i = 0; i < n; i++) {
      float f = i < 257 ? 0.0f : -(float)((i * 7) % 11); /* ties on purpose */
      put(&b, &f, 4);
    }
    int32_t types[256 + NPIECES + 1];
    for (int i = 0; i < n; i++) types[i] = i == 0 ? 3 : i < 257 ? 6 : 1;
    put_str(&b, "tokenizer.ggml.token_type"), put_u32(&b, TKC_GGUF_ARRAY), put_u32(&b, TKC_GGUF_INT32), put_u64(&b, (uint64_t)n);
    put(&b, types, 4 * (size_t)n);
  }
  tkc_state *st = tkc_gguf_load_bytes(ctx, b.p, b.n);
  free(b.p);
  tkc_tokenizer *t = st ? tkc_tokenizer_from_gguf(st) : NULL;
  tkc_state_free(st);
  if (!t) abort(); /* the fixed vocabularies must load */
  return t;
}

static int has_sp(const char *s, size_t n) {
  for (size_t i = 0; i + 3 <= n; i++)
    if (memcmp(s + i, SP, 3) == 0) return 1;
  return 0;
}

static tkc_ctx *ctx;
static tkc_tokenizer *tok[2];

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (!ctx && !(ctx = tkc_ctx_new("INTERP"))) return 0;
  if (!tok[0]) tok[0] = make(ctx, 0), tok[1] = make(ctx, 1);
  if (size == 0) return 0;
  tkc_tokenizer *t = tok[data[0] & 1];
  int add_bos = (data[0] >> 1) % 3 - 1;
  const char *text = (const char *)data + 1;
  size_t len = size - 1;
  int n = tkc_tokenizer_encode(t, text, len, add_bos, NULL, 0);
  if (n < 0) fprintf(stderr, "%s\n", tkc_last_error()), abort(); /* both vocabularies have every byte */
  int32_t *ids = malloc((size_t)n * sizeof *ids + 1);
  if (!ids) return 0;
  if (tkc_tokenizer_encode(t, text, len, add_bos, ids, n) != n) abort();
  int k = tkc_tokenizer_decode(t, ids, n, NULL, 0);
  char *out = malloc((size_t)(k < 0 ? 0 : k) + 1);
  if (k < 0 || !out || tkc_tokenizer_decode(t, ids, n, out, (size_t)k + 1) != k) abort();
  /* the text comes back, but for a U+2581 in it (a space once decoded, as in llama.cpp) and GPT-2's
   * BOS, which is no CONTROL token in that vocabulary (no token_type) and so decodes as "<s>" */
  if ((data[0] & 1) ? add_bos != 1 : !has_sp(text, len))
    if ((size_t)k != len || memcmp(out, text, len) != 0) abort();
  free(out);
  free(ids);
  tkc_clear_error();
  return 0;
}
