/* fuzz_safetensors.c — libFuzzer target for the safetensors reader: arbitrary bytes to
 * tkc_safetensors_load_bytes must give a state or a clean error, never a crash, a leak or undefined
 * behaviour (built with -fsanitize=fuzzer,address,undefined: build fuzz_safetensors_libfuzzer). The
 * input is loaded as it is, and again as the JSON header of a file (its length before it, 256 data
 * bytes after it), so that mutated JSON reaches the entry checks. A state that loads has every tensor
 * fetched and its shape asked for. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "tkc.h"
#include "tkc/io.h"

static tkc_ctx *ctx;

static void load(const uint8_t *data, size_t size) {
  tkc_state *st = tkc_safetensors_load_bytes(ctx, data, size);
  if (!st) return;
  for (int i = 0; i < tkc_state_count(st); i++) {
    const char *name = tkc_state_name(st, i);
    int nd;
    int64_t shape[8];
    (void)tkc_state_shape(st, name, NULL, &nd, shape);
    tkc_tensor_free(tkc_state_get(st, name));
  }
  tkc_state_free(st);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (!ctx && !(ctx = tkc_ctx_new("INTERP"))) return 0;
  load(data, size);
  uint8_t *file = malloc(8 + size + 256);
  if (!file) return 0;
  uint64_t hlen = size;
  memcpy(file, &hlen, 8);
  memcpy(file + 8, data, size);
  for (int i = 0; i < 256; i++) file[8 + size + i] = (uint8_t)i;
  load(file, 8 + size + 256);
  free(file);
  tkc_clear_error();
  return 0;
}
