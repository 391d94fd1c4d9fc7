/* fuzz_gguf.c — libFuzzer target for the GGUF reader: arbitrary bytes to tkc_gguf_load_bytes must give
 * a state or a clean error, never a crash, a leak or undefined behaviour (built with
 * -fsanitize=fuzzer,address,undefined: build fuzz_gguf_libfuzzer). A state that loads has every tensor
 * fetched (quantized ones build their dequantizing graph, nothing is realized) and every metadata
 * value read through each getter. */
#include <stddef.h>
#include <stdint.h>
#include "tkc.h"
#include "tkc/io.h"

static tkc_ctx *ctx;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (!ctx && !(ctx = tkc_ctx_new("INTERP"))) return 0;
  tkc_state *st = tkc_gguf_load_bytes(ctx, data, size);
  if (!st) return 0;
  for (int i = 0; i < tkc_state_count(st); i++) {
    const char *name = tkc_state_name(st, i);
    (void)tkc_gguf_tensor_type(st, name);
    tkc_tensor_free(tkc_state_get(st, name));
  }
  for (int i = 0; i < tkc_gguf_meta_count(st); i++) {
    const char *key = tkc_gguf_meta_key(st, i);
    int64_t v, count;
    double f;
    int et;
    const void *arr;
    (void)tkc_gguf_meta_int(st, key, &v);
    (void)tkc_gguf_meta_float(st, key, &f);
    (void)tkc_gguf_meta_str(st, key);
    if (tkc_gguf_meta_array(st, key, &et, &count, &arr) == TKC_OK && count > 0) (void)tkc_gguf_meta_array_str(st, key, count - 1);
  }
  tkc_state_free(st);
  tkc_clear_error();
  return 0;
}
