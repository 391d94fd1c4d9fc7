/* fuzz_safetensors.c — libFuzzer target for the safetensors reader: arbitrary bytes to
 * tkc_safetensors_load_bytes must give a state or a clean error, never a crash, a leak or undefined
 * behaviour (built with -fsanitize=fuzzer,address,undefined: build fuzz_safetensors_libfuzzer). A state
 * that loads has every tensor fetched and its shape asked for. */
#include <stddef.h>
#include <stdint.h>
#include "tkc.h"
#include "tkc/io.h"

static tkc_ctx *ctx;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (!ctx && !(ctx = tkc_ctx_new("INTERP"))) return 0;
  tkc_state *st = tkc_safetensors_load_bytes(ctx, data, size);
  if (!st) return 0;
  for (int i = 0; i < tkc_state_count(st); i++) {
    const char *name = tkc_state_name(st, i);
    int nd;
    int64_t shape[8];
    (void)tkc_state_shape(st, name, NULL, &nd, shape);
    tkc_tensor_free(tkc_state_get(st, name));
  }
  tkc_state_free(st);
  return 0;
}
