/* fuzz_onnx.c — libFuzzer target for the ONNX loader: arbitrary bytes to tkc_onnx_load_bytes must
 * give a model or a clean error, never a crash, a leak or undefined behaviour (built with
 * -fsanitize=fuzzer,address,undefined: `make fuzz`, or build fuzz_onnx_libfuzzer). A model that
 * loads is also run once over zero inputs of its declared shapes (fixed dims only), which walks the
 * op table's attribute and shape checks; nothing is realized. */
#include <stddef.h>
#include <stdint.h>
#include "tkc.h"
#include "tkc/onnx.h"

static tkc_ctx *ctx;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (!ctx && !(ctx = tkc_ctx_new("INTERP"))) return 0;
  tkc_onnx_model *m = tkc_onnx_load_bytes(ctx, data, size);
  if (!m) return 0;
  int nin = tkc_onnx_num_inputs(m), nout = tkc_onnx_num_outputs(m);
  tkc_tensor *ins[16] = {0}, *outs[16] = {0};
  int ok = nin <= 16 && nout <= 16;
  tkc_scope_begin(ctx);
  for (int i = 0; ok && i < nin; i++) {
    tkc_dtype dt;
    int nd;
    int64_t shape[8];
    int64_t numel = 1;
    ok = tkc_onnx_input_shape(m, i, &dt, &nd, shape, 8) == TKC_OK && nd >= 0;
    for (int d = 0; ok && d < nd; d++) {
      ok = shape[d] >= 0 && shape[d] <= 64 && !tkc_dim_is_var(shape[d]);
      numel *= ok ? shape[d] : 1;
    }
    ok = ok && numel <= 4096 && (ins[i] = tkc_full(ctx, dt, nd, shape, 0)) != NULL;
  }
  if (ok && tkc_onnx_run(m, nin, ins, nout, outs) == TKC_OK)
    for (int i = 0; i < nout; i++) tkc_tensor_free(outs[i]);
  tkc_scope_end(ctx);
  tkc_onnx_free(m);
  return 0;
}
