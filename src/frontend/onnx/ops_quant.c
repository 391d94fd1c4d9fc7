/* ops_quant.c — QuantizeLinear and DynamicQuantizeLinear (DequantizeLinear and the integer matmuls
 * and convs are in ops_nn.c). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "ops_util.h"

/* saturate(round_half_even(x / scale) + zero_point) in the zero point's dtype (uint8 without one);
 * a float8 one: x / scale + zero_point cast to it */
tkc_status onnx_quant_quantize(onnx_node *n) {
  tkc_status s = onnx_need(n, 2);
  if (s) return s;
  tkc_tensor *x = onnx_in(n, 0), *sc = onnx_in(n, 1), *zp = onnx_in(n, 2);
  tkc_dtype out = zp ? tkc_dtype_of(zp) : TKC_UINT8;
  const Onnx__AttributeProto *oa = onnx_attr(n, "output_dtype");
  if (oa && oa->has_i && oa->i && onnx_dtype_from_proto((int32_t)oa->i, &out) != TKC_OK) return onnx_node_err(n, tkc_last_status(), "%s", tkc_last_error());
  int nd = tkc_ndim(x);
  if ((s = onnx_per_axis(n, nd, &sc, &zp))) return s;
  tkc_tensor *q = tkc_div(tkc_cast(x, TKC_FLOAT32), tkc_cast(sc, TKC_FLOAT32));
  if (onnx_is_fp8(out)) { /* x / scale + zero point, rounded to nearest even by the cast, saturated unless saturate=0 */
    if (zp) q = tkc_add(q, tkc_cast(zp, TKC_FLOAT32));
    return onnx_set(n, 0, tkc_cast(onnx_saturate_fp8(n, q, out), out));
  }
  double lo, hi;
  switch (out) {
  case TKC_UINT8: lo = 0, hi = 255; break;
  case TKC_INT8: lo = -128, hi = 127; break;
  case TKC_UINT16: lo = 0, hi = 65535; break;
  case TKC_INT16: lo = -32768, hi = 32767; break;
  case TKC_INT32: lo = -2147483648.0, hi = 2147483647.0; break;
  default: return onnx_node_err(n, TKC_EUNSUPPORTED, "output dtype %s", tkc_dtype_name(out));
  }
  q = tkc_round(q);
  if (zp) q = tkc_add(q, tkc_cast(zp, TKC_FLOAT32));
  return onnx_set(n, 0, tkc_cast(tkc_clamp(q, lo, hi), out));
}
tkc_status onnx_quant_dynamic_quantize(onnx_node *n) {
  tkc_status s = onnx_need(n, 1);
  if (s) return s;
  tkc_tensor *x = tkc_cast(onnx_in(n, 0), TKC_FLOAT32);
  tkc_ctx *c = n->m->ctx;
  tkc_tensor *zero = tkc_scalar(c, TKC_FLOAT32, 0);
  tkc_tensor *hi = tkc_maximum(tkc_max(x, 0, NULL, 0), zero), *lo = tkc_minimum(tkc_min(x, 0, NULL, 0), zero);
  tkc_tensor *scale = tkc_div(tkc_sub(hi, lo), tkc_scalar(c, TKC_FLOAT32, 255));
  tkc_tensor *zp = tkc_clamp(tkc_round(tkc_div(tkc_neg(lo), scale)), 0, 255);
  tkc_tensor *y = tkc_clamp(tkc_add(tkc_round(tkc_div(x, scale)), zp), 0, 255);
  if ((s = onnx_set(n, 0, tkc_cast(y, TKC_UINT8)))) return s;
  if (n->nout > 1 && (s = onnx_set(n, 1, scale))) return s;
  return n->nout > 2 ? onnx_set(n, 2, tkc_cast(zp, TKC_UINT8)) : TKC_OK;
}
