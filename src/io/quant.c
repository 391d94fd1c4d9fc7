/* src/io/quant.c — the format table of GGML's quant types (see quant.h). */
#include "quant.h"

/* the library's error recorder (src/base/common.h), declared here as the ONNX frontend does: io/ uses
 * the public API only */
tkc_status tkc_err(tkc_status s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static const tkc_quant_format formats[] = {
    {TKC_GGML_F32, "F32", 1, 4},         {TKC_GGML_F16, "F16", 1, 2},         {TKC_GGML_BF16, "BF16", 1, 2},
    {TKC_GGML_Q4_0, "Q4_0", 32, 18},     {TKC_GGML_Q4_1, "Q4_1", 32, 20},     {TKC_GGML_Q5_0, "Q5_0", 32, 22},
    {TKC_GGML_Q5_1, "Q5_1", 32, 24},     {TKC_GGML_Q8_0, "Q8_0", 32, 34},     {TKC_GGML_Q4_K, "Q4_K", 256, 144},
    {TKC_GGML_Q5_K, "Q5_K", 256, 176},   {TKC_GGML_Q6_K, "Q6_K", 256, 210},
};

const tkc_quant_format *tkc_quant_format_of(int ggml_type) {
  for (size_t i = 0; i < sizeof formats / sizeof formats[0]; i++)
    if (formats[i].type == ggml_type) return &formats[i];
  return NULL;
}

tkc_tensor *tkc_quant_dequantize(tkc_tensor *packed, int ggml_type, int ndim, const int64_t *shape) {
  (void)packed; (void)ndim; (void)shape;
  const tkc_quant_format *f = tkc_quant_format_of(ggml_type);
  (void)tkc_err(TKC_EUNSUPPORTED, "dequantizing GGML type %s (%d) is not implemented yet", f ? f->name : "?", ggml_type);
  return NULL;
}
