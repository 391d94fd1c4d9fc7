/* tensor_proto.c — a TensorProto's dtype, shape and bytes, checked against each other: the dims,
 * the data size for the dtype and shape, raw_data vs the typed fields, external data files (bounds
 * checked, only below the model's folder). Everything here treats the file as hostile. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "onnx_internal.h"

/* TensorProto.DataType numbers (onnx.proto) */
enum { P_FLOAT = 1, P_UINT8, P_INT8, P_UINT16, P_INT16, P_INT32, P_INT64, P_STRING, P_BOOL, P_FLOAT16, P_DOUBLE, P_UINT32, P_UINT64,
       P_COMPLEX64, P_COMPLEX128, P_BFLOAT16, P_F8E4M3FN, P_F8E4M3FNUZ, P_F8E5M2, P_F8E5M2FNUZ, P_UINT4, P_INT4, P_FLOAT4E2M1 };

const char *onnx_dtype_proto_name(int32_t t) {
  static const char *names[] = {"undefined", "float", "uint8", "int8", "uint16", "int16", "int32", "int64", "string", "bool", "float16",
                                "double", "uint32", "uint64", "complex64", "complex128", "bfloat16", "float8e4m3fn", "float8e4m3fnuz",
                                "float8e5m2", "float8e5m2fnuz", "uint4", "int4", "float4e2m1"};
  if (t >= 0 && t < (int32_t)(sizeof names / sizeof names[0])) return names[t];
  return "unknown";
}

tkc_status onnx_dtype_from_proto(int32_t t, tkc_dtype *dt) {
  switch (t) {
  case P_FLOAT: *dt = TKC_FLOAT32; return TKC_OK;
  case P_UINT8: *dt = TKC_UINT8; return TKC_OK;
  case P_INT8: *dt = TKC_INT8; return TKC_OK;
  case P_UINT16: *dt = TKC_UINT16; return TKC_OK;
  case P_INT16: *dt = TKC_INT16; return TKC_OK;
  case P_INT32: *dt = TKC_INT32; return TKC_OK;
  case P_INT64: *dt = TKC_INT64; return TKC_OK;
  case P_BOOL: *dt = TKC_BOOL; return TKC_OK;
  case P_FLOAT16: *dt = TKC_FLOAT16; return TKC_OK;
  case P_DOUBLE: *dt = TKC_FLOAT64; return TKC_OK;
  case P_UINT32: *dt = TKC_UINT32; return TKC_OK;
  case P_UINT64: *dt = TKC_UINT64; return TKC_OK;
  case P_BFLOAT16: *dt = TKC_BFLOAT16; return TKC_OK;
  case P_F8E4M3FN: *dt = TKC_FLOAT8_E4M3FN; return TKC_OK;
  case P_F8E5M2: *dt = TKC_FLOAT8_E5M2; return TKC_OK;
  default: break; /* the FNUZ float8s (no -0, NaN 0x80) have no tkc dtype */
  }
  if (t > 0 && t <= 24) return tkc_err(TKC_EUNSUPPORTED, "ONNX: dtype %s (%d) is not supported", onnx_dtype_proto_name(t), (int)t);
  return tkc_err(TKC_EINVAL, "ONNX: unknown dtype %d", (int)t);
}

size_t onnx_itemsize(tkc_dtype dt) {
  switch (dt) {
  case TKC_BOOL: case TKC_INT8: case TKC_UINT8: case TKC_FLOAT8_E4M3FN: case TKC_FLOAT8_E5M2: return 1;
  case TKC_INT16: case TKC_UINT16: case TKC_FLOAT16: case TKC_BFLOAT16: return 2;
  case TKC_INT32: case TKC_UINT32: case TKC_FLOAT32: return 4;
  default: return 8;
  }
}

/* external data: "location" relative to base_dir, no absolute path, no "..", offset+length inside the file */
static tkc_status read_external(const Onnx__TensorProto *tp, const char *base_dir, void *dst, size_t nbytes) {
  const char *loc = NULL;
  int64_t offset = 0, length = -1;
  for (size_t i = 0; i < tp->n_external_data; i++) {
    const Onnx__StringStringEntryProto *e = tp->external_data[i];
    if (!e || !e->key || !e->value) continue;
    char *end = NULL;
    if (!strcmp(e->key, "location")) loc = e->value;
    else if (!strcmp(e->key, "offset") || !strcmp(e->key, "length")) {
      errno = 0;
      long long v = strtoll(e->value, &end, 10);
      if (errno || !end || *end || v < 0) return tkc_err(TKC_EINVAL, "ONNX: tensor '%s': bad external data %s '%s'", tp->name, e->key, e->value);
      if (e->key[0] == 'o') offset = v;
      else length = v;
    }
  }
  if (!base_dir) return tkc_err(TKC_EINVAL, "ONNX: tensor '%s' has external data, which a model loaded from memory cannot read", tp->name);
  if (!loc || !*loc) return tkc_err(TKC_EINVAL, "ONNX: tensor '%s': external data without a location", tp->name);
  if (loc[0] == '/' || strstr(loc, ".."))
    return tkc_err(TKC_EINVAL, "ONNX: tensor '%s': external data location '%s' is outside the model's folder", tp->name, loc);
  if (length >= 0 && (uint64_t)length != nbytes)
    return tkc_err(TKC_EINVAL, "ONNX: tensor '%s': external data length %lld, its dtype and shape need %zu bytes", tp->name, (long long)length, nbytes);
  size_t plen = strlen(base_dir) + strlen(loc) + 2;
  char *path = malloc(plen);
  if (!path) return tkc_err(TKC_ENOMEM, "ONNX: out of memory");
  snprintf(path, plen, "%s/%s", base_dir, loc);
  FILE *f = fopen(path, "rb");
  struct stat st;
  tkc_status s = TKC_OK;
  if (!f || fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode)) {
    s = tkc_err(TKC_EINVAL, "ONNX: tensor '%s': cannot open external data file '%s'", tp->name, path);
  } else if ((uint64_t)offset > (uint64_t)st.st_size || nbytes > (uint64_t)st.st_size - (uint64_t)offset) {
    s = tkc_err(TKC_EINVAL, "ONNX: tensor '%s': external data %zu bytes at offset %lld is past the end of '%s' (%lld bytes)", tp->name, nbytes,
                (long long)offset, path, (long long)st.st_size);
  } else if (nbytes && (fseeko(f, (off_t)offset, SEEK_SET) != 0 || fread(dst, 1, nbytes, f) != nbytes)) {
    s = tkc_err(TKC_EINVAL, "ONNX: tensor '%s': cannot read external data from '%s'", tp->name, path);
  }
  if (f) fclose(f);
  free(path);
  return s;
}

static tkc_status count_err(const Onnx__TensorProto *tp, const char *field, size_t have, int64_t numel) {
  return tkc_err(TKC_EINVAL, "ONNX: tensor '%s': %zu values in %s, its shape needs %lld", tp->name ? tp->name : "", have, field, (long long)numel);
}

tkc_status onnx_tensor_decode(const Onnx__TensorProto *tp, const char *base_dir, tkc_dtype *dt, int *ndim, int64_t *shape, void **data,
                              size_t *nbytes) {
  *data = NULL;
  *nbytes = 0;
  const char *name = tp->name ? tp->name : "";
  if (!tp->has_data_type) return tkc_err(TKC_EINVAL, "ONNX: tensor '%s' has no data_type", name);
  tkc_status s = onnx_dtype_from_proto(tp->data_type, dt);
  if (s != TKC_OK) return tkc_err(s, "ONNX: tensor '%s': dtype %s (%d) is not supported", name, onnx_dtype_proto_name(tp->data_type), (int)tp->data_type);
  if (tp->segment) return tkc_err(TKC_EUNSUPPORTED, "ONNX: tensor '%s' is segmented", name);
  if (tp->n_dims > ONNX_MAX_DIMS) return tkc_err(TKC_EUNSUPPORTED, "ONNX: tensor '%s' has %zu dims (at most %d)", name, tp->n_dims, ONNX_MAX_DIMS);
  int64_t numel = 1;
  for (size_t i = 0; i < tp->n_dims; i++) {
    int64_t d = tp->dims[i];
    if (d < 0 || d > (INT64_C(1) << 40)) return tkc_err(TKC_EINVAL, "ONNX: tensor '%s': dim %zu is %lld", name, i, (long long)d);
    shape[i] = d;
    if (d && numel > (INT64_C(1) << 40) / d) return tkc_err(TKC_EINVAL, "ONNX: tensor '%s' is too large", name);
    numel *= d;
  }
  *ndim = (int)tp->n_dims;
  size_t isz = onnx_itemsize(*dt), nb = (size_t)numel * isz;
  int external = (tp->has_data_location && tp->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL) || tp->n_external_data;
  size_t typed = tp->n_float_data + tp->n_int32_data + tp->n_int64_data + tp->n_double_data + tp->n_uint64_data + tp->n_string_data;
  if ((tp->has_raw_data && tp->raw_data.len) + (typed > 0) + (external != 0) > 1)
    return tkc_err(TKC_EINVAL, "ONNX: tensor '%s' has its data in more than one of raw_data, typed fields, external data", name);
  uint8_t *buf = malloc(nb ? nb : 1);
  if (!buf) return tkc_err(TKC_ENOMEM, "ONNX: tensor '%s': out of memory for %zu bytes", name, nb);
  s = TKC_OK;
  if (external) {
    s = read_external(tp, base_dir, buf, nb);
  } else if (tp->has_raw_data && tp->raw_data.len) {
    if (tp->raw_data.len != nb)
      s = tkc_err(TKC_EINVAL, "ONNX: tensor '%s': raw_data has %zu bytes, its dtype and shape need %zu", name, tp->raw_data.len, nb);
    else memcpy(buf, tp->raw_data.data, nb);
  } else if (numel == 0) {
  } else {
    switch (*dt) {
    case TKC_FLOAT32:
      if (tp->n_float_data != (size_t)numel) s = count_err(tp, "float_data", tp->n_float_data, numel);
      else memcpy(buf, tp->float_data, nb);
      break;
    case TKC_FLOAT64:
      if (tp->n_double_data != (size_t)numel) s = count_err(tp, "double_data", tp->n_double_data, numel);
      else memcpy(buf, tp->double_data, nb);
      break;
    case TKC_INT64:
      if (tp->n_int64_data != (size_t)numel) s = count_err(tp, "int64_data", tp->n_int64_data, numel);
      else memcpy(buf, tp->int64_data, nb);
      break;
    case TKC_UINT32: case TKC_UINT64:
      if (tp->n_uint64_data != (size_t)numel) s = count_err(tp, "uint64_data", tp->n_uint64_data, numel);
      else
        for (int64_t i = 0; i < numel; i++) {
          if (*dt == TKC_UINT32) ((uint32_t *)buf)[i] = (uint32_t)tp->uint64_data[i];
          else ((uint64_t *)buf)[i] = tp->uint64_data[i];
        }
      break;
    default: /* int32_data holds the 8/16/32-bit ints, bool and the 8/16-bit floats' bits */
      if (tp->n_int32_data != (size_t)numel) s = count_err(tp, "int32_data", tp->n_int32_data, numel);
      else
        for (int64_t i = 0; i < numel; i++) {
          int32_t v = tp->int32_data[i];
          switch (isz) {
          case 1: buf[i] = *dt == TKC_BOOL ? (uint8_t)(v != 0) : (uint8_t)v; break;
          case 2: ((uint16_t *)buf)[i] = (uint16_t)v; break;
          default: ((int32_t *)buf)[i] = v; break;
          }
        }
      break;
    }
  }
  if (s != TKC_OK) {
    free(buf);
    return s;
  }
  *data = buf;
  *nbytes = nb;
  return TKC_OK;
}

int64_t *onnx_ints_from_data(tkc_dtype dt, const void *data, int64_t numel) {
  int64_t *v = malloc(sizeof(int64_t) * (size_t)(numel ? numel : 1));
  if (!v) return NULL;
  for (int64_t i = 0; i < numel; i++) {
    switch (dt) {
    case TKC_BOOL: case TKC_UINT8: v[i] = ((const uint8_t *)data)[i]; break;
    case TKC_INT8: v[i] = ((const int8_t *)data)[i]; break;
    case TKC_INT16: v[i] = ((const int16_t *)data)[i]; break;
    case TKC_UINT16: v[i] = ((const uint16_t *)data)[i]; break;
    case TKC_INT32: v[i] = ((const int32_t *)data)[i]; break;
    case TKC_UINT32: v[i] = ((const uint32_t *)data)[i]; break;
    case TKC_INT64: v[i] = ((const int64_t *)data)[i]; break;
    case TKC_UINT64: v[i] = (int64_t)((const uint64_t *)data)[i]; break;
    default: free(v); return NULL;
    }
  }
  return v;
}

tkc_tensor *onnx_tensor_from_proto(tkc_ctx *ctx, const Onnx__TensorProto *tp, const char *base_dir, int64_t **host) {
  tkc_dtype dt;
  int ndim;
  int64_t shape[ONNX_MAX_DIMS];
  void *data;
  size_t nb;
  if (host) *host = NULL;
  if (onnx_tensor_decode(tp, base_dir, &dt, &ndim, shape, &data, &nb) != TKC_OK) return NULL;
  tkc_tensor *t = tkc_tensor_new(ctx, dt, ndim, shape, data);
  int64_t numel = (int64_t)(nb / onnx_itemsize(dt));
  if (t && host && numel <= 4096) *host = onnx_ints_from_data(dt, data, numel);
  free(data);
  return t;
}
