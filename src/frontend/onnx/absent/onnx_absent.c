/* onnx_absent.c — include/tkc/onnx.h in a libtkc built without the ONNX frontend (protobuf-c or
 * onnx.proto not found, or TKC_WITH_ONNX=OFF): every entry point exists and says so. */
#include "tkc/onnx.h"

tkc_status tkc_err(tkc_status s, const char *fmt, ...);

#define ABSENT "the ONNX frontend: tkc was built without it (install libprotobuf-c-dev, protobuf-c-compiler, libonnx-dev and reconfigure)"

tkc_onnx_model *tkc_onnx_load(tkc_ctx *ctx, const char *path) {
  (void)ctx, (void)path;
  tkc_err(TKC_EUNSUPPORTED, "%s", ABSENT);
  return NULL;
}
tkc_onnx_model *tkc_onnx_load_bytes(tkc_ctx *ctx, const void *data, size_t n) {
  (void)ctx, (void)data, (void)n;
  tkc_err(TKC_EUNSUPPORTED, "%s", ABSENT);
  return NULL;
}
int tkc_onnx_num_inputs(const tkc_onnx_model *m) { return (void)m, tkc_err(TKC_EUNSUPPORTED, "%s", ABSENT), -1; }
const char *tkc_onnx_input_name(const tkc_onnx_model *m, int i) { return (void)m, (void)i, tkc_err(TKC_EUNSUPPORTED, "%s", ABSENT), (const char *)0; }
tkc_status tkc_onnx_input_shape(const tkc_onnx_model *m, int i, tkc_dtype *dtype, int *ndim, int64_t *shape, int max_dims) {
  (void)m, (void)i, (void)dtype, (void)ndim, (void)shape, (void)max_dims;
  return tkc_err(TKC_EUNSUPPORTED, "%s", ABSENT);
}
int tkc_onnx_num_outputs(const tkc_onnx_model *m) { return (void)m, tkc_err(TKC_EUNSUPPORTED, "%s", ABSENT), -1; }
const char *tkc_onnx_output_name(const tkc_onnx_model *m, int i) { return (void)m, (void)i, tkc_err(TKC_EUNSUPPORTED, "%s", ABSENT), (const char *)0; }
tkc_status tkc_onnx_run(tkc_onnx_model *m, int nin, tkc_tensor *const *inputs, int nout, tkc_tensor **outputs) {
  (void)m, (void)nin, (void)inputs, (void)nout, (void)outputs;
  return tkc_err(TKC_EUNSUPPORTED, "%s", ABSENT);
}
int tkc_onnx_reads_values(const tkc_onnx_model *m) { return (void)m, tkc_err(TKC_EUNSUPPORTED, "%s", ABSENT), -1; }
void tkc_onnx_free(tkc_onnx_model *m) { (void)m; }
