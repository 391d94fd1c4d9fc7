/* DType values: scalar facts, vectors, pointers, names and tinygrad's promotion lattice. */
#include <stdio.h>
#include <string.h>
#include "base/common.h"
#include "tkc/uop.h"

static const struct {
  const char *name, *short_name;
  uint8_t size, is_float, is_int, is_unsigned;
} scalars[TKC_NDTYPES] = {
    [TKC_BOOL] = {"bool", "bool", 1, 0, 0, 0},
    [TKC_INT8] = {"int8", "char", 1, 0, 1, 0},
    [TKC_UINT8] = {"uint8", "uchar", 1, 0, 1, 1},
    [TKC_INT16] = {"int16", "short", 2, 0, 1, 0},
    [TKC_UINT16] = {"uint16", "ushort", 2, 0, 1, 1},
    [TKC_INT32] = {"int32", "int", 4, 0, 1, 0},
    [TKC_UINT32] = {"uint32", "uint", 4, 0, 1, 1},
    [TKC_INT64] = {"int64", "long", 8, 0, 1, 0},
    [TKC_UINT64] = {"uint64", "ulong", 8, 0, 1, 1},
    [TKC_FLOAT16] = {"float16", "half", 2, 1, 0, 0},
    [TKC_BFLOAT16] = {"bfloat16", "bfloat16", 2, 1, 0, 0},
    [TKC_FLOAT32] = {"float32", "float", 4, 1, 0, 0},
    [TKC_FLOAT64] = {"float64", "double", 8, 1, 0, 0},
    [TKC_VOID] = {"void", "void", 0, 0, 0, 0},
    [TKC_FLOAT8_E4M3FN] = {"float8_e4m3fn", "float8_e4m3fn", 1, 1, 0, 0},
    [TKC_FLOAT8_E5M2] = {"float8_e5m2", "float8_e5m2", 1, 1, 0, 0},
};

static int valid(tkc_dtype d) { return (unsigned)d < TKC_NDTYPES; }

tkc_dt tkc_dt_of(tkc_dtype scalar) {
  tkc_dt d = {(uint8_t)(valid(scalar) ? scalar : TKC_VOID), TKC_SPACE_NONE, 1, 1, 0, -1};
  return d;
}

tkc_dt tkc_dt_vec(tkc_dt dt, int count) {
  if (count <= 1 || (dt.scalar == TKC_VOID && !dt.space)) return dt;
  if (count > TKC_DT_MAX_LANES) { /* not representable: a dtype tkc_uop_new refuses, never a wrapped count */
    tkc_err(TKC_EINVAL, "tkc_dt_vec: %d lanes (at most %d)", count, TKC_DT_MAX_LANES);
    dt.scalar = TKC_NDTYPES;
    return dt;
  }
  if (dt.space) dt.pcount = (uint16_t)count;
  else dt.count = (uint16_t)count;
  return dt;
}

tkc_dt tkc_dt_ptr(tkc_dt base, tkc_addrspace space, int32_t size) {
  base.space = (uint8_t)(space == TKC_SPACE_NONE ? TKC_SPACE_GLOBAL : space);
  base.pcount = 1;
  base.size = size;
  return base;
}

tkc_dt tkc_dt_scalar(tkc_dt dt) {
  if (dt.space) dt.pcount = 1;
  else dt.count = 1;
  return dt;
}

tkc_dt tkc_dt_base(tkc_dt dt) {
  if (!dt.space) return dt;
  dt.space = TKC_SPACE_NONE;
  dt.pcount = 1;
  dt.size = -1;
  return dt;
}

bool tkc_dt_eq(tkc_dt a, tkc_dt b) {
  return a.scalar == b.scalar && a.space == b.space && a.count == b.count && a.pcount == b.pcount && a.size == b.size;
}
/* The scalar row of dt; a corrupt scalar kind reads as void instead of outside the table. */
#define SCALAR_OF(dt) scalars[(dt).scalar < TKC_NDTYPES ? (dt).scalar : TKC_VOID]
bool tkc_dt_is_ptr(tkc_dt dt) { return dt.space != TKC_SPACE_NONE; }
bool tkc_dt_is_float(tkc_dt dt) { return !dt.space && SCALAR_OF(dt).is_float; }
bool tkc_dt_is_int(tkc_dt dt) { return !dt.space && SCALAR_OF(dt).is_int; }
bool tkc_dt_is_unsigned(tkc_dt dt) { return !dt.space && SCALAR_OF(dt).is_unsigned; }
bool tkc_dt_is_bool(tkc_dt dt) { return !dt.space && dt.scalar == TKC_BOOL; }

size_t tkc_dt_itemsize(tkc_dt dt) {
  if (dt.space) return 8;
  return (size_t)SCALAR_OF(dt).size * dt.count;
}

char *tkc_dt_str(tkc_dt dt, char *buf, size_t n) {
  if (!buf || n == 0) return buf;
  int k = snprintf(buf, n, "%s", SCALAR_OF(dt).short_name);
  if (dt.count > 1 && k >= 0 && (size_t)k < n) k += snprintf(buf + k, n - (size_t)k, ".vec(%d)", dt.count);
  if (dt.space && k >= 0 && (size_t)k < n) {
    k += snprintf(buf + k, n - (size_t)k, ".ptr(%d%s)", (int)dt.size, dt.space == TKC_SPACE_LOCAL ? ", local" : "");
    if (dt.pcount > 1 && k >= 0 && (size_t)k < n) snprintf(buf + k, n - (size_t)k, ".vec(%d)", dt.pcount);
  }
  return buf;
}

const char *tkc_dtype_name(tkc_dtype dt) { return valid(dt) ? scalars[dt].name : NULL; }
size_t tkc_dtype_size(tkc_dtype dt) { return valid(dt) ? scalars[dt].size : 0; }
bool tkc_dtype_is_float(tkc_dtype dt) { return valid(dt) && scalars[dt].is_float; }
bool tkc_dtype_is_int(tkc_dtype dt) { return valid(dt) && scalars[dt].is_int; }
bool tkc_dtype_is_unsigned(tkc_dtype dt) { return valid(dt) && scalars[dt].is_unsigned; }
bool tkc_dtype_is_tensor(tkc_dtype dt) { return valid(dt) && dt != TKC_VOID; }
bool tkc_dtype_is_narrow_float(tkc_dtype dt) { return tkc_dtype_is_float(dt) && scalars[dt].size < 4; }
tkc_dtype tkc_dtype_work(tkc_dtype dt) { return tkc_dtype_is_narrow_float(dt) ? TKC_FLOAT32 : dt; }

int64_t tkc_dtype_min(tkc_dtype dt) {
  if (!tkc_dtype_is_int(dt) || scalars[dt].is_unsigned) return 0;
  return -tkc_dtype_max(dt) - 1;
}

int64_t tkc_dtype_max(tkc_dtype dt) {
  if (dt == TKC_BOOL) return 1;
  if (!tkc_dtype_is_int(dt)) return 0;
  int bits = 8 * scalars[dt].size - (scalars[dt].is_unsigned ? 0 : 1);
  return bits >= 63 ? INT64_MAX : (int64_t)((UINT64_C(1) << bits) - 1);
}

/* tinygrad's promo_lattice: each dtype's direct parents (bitmask over tkc_dtype). The fp8 types sit
 * below float16 and bfloat16 but not above the ints (newer tinygrad puts them there, which would make
 * int8 op uint64 an fp8): an int op fp8 is float16, as an int op float16 is. */
#define B(d) (1u << (d))
static const unsigned lattice[TKC_NDTYPES] = {
    [TKC_BOOL] = B(TKC_INT8) | B(TKC_UINT8),
    [TKC_INT8] = B(TKC_INT16),
    [TKC_INT16] = B(TKC_INT32),
    [TKC_INT32] = B(TKC_INT64),
    [TKC_INT64] = B(TKC_FLOAT16) | B(TKC_BFLOAT16),
    [TKC_UINT8] = B(TKC_INT16) | B(TKC_UINT16),
    [TKC_UINT16] = B(TKC_INT32) | B(TKC_UINT32),
    [TKC_UINT32] = B(TKC_INT64) | B(TKC_UINT64),
    [TKC_UINT64] = B(TKC_FLOAT16) | B(TKC_BFLOAT16),
    [TKC_FLOAT8_E4M3FN] = B(TKC_FLOAT16) | B(TKC_BFLOAT16),
    [TKC_FLOAT8_E5M2] = B(TKC_FLOAT16) | B(TKC_BFLOAT16),
    [TKC_FLOAT16] = B(TKC_FLOAT32),
    [TKC_BFLOAT16] = B(TKC_FLOAT32),
    [TKC_FLOAT32] = B(TKC_FLOAT64),
};

static unsigned ancestors(tkc_dtype d) {
  unsigned set = B(d);
  for (int i = 0; i < TKC_NDTYPES; i++)
    if (lattice[d] & B(i)) set |= ancestors((tkc_dtype)i);
  return set;
}

/* the promotion priorities: the enum's order, with the fp8 types (appended to it) between the ints
 * and float16 */
static const tkc_dtype by_priority[] = {TKC_BOOL,    TKC_INT8,          TKC_UINT8,       TKC_INT16,    TKC_UINT16,
                                        TKC_INT32,   TKC_UINT32,        TKC_INT64,       TKC_UINT64,   TKC_FLOAT8_E4M3FN,
                                        TKC_FLOAT8_E5M2, TKC_FLOAT16,   TKC_BFLOAT16,    TKC_FLOAT32,  TKC_FLOAT64};
_Static_assert(sizeof by_priority / sizeof by_priority[0] == TKC_NDTYPES - 1, "every value dtype has a priority");

tkc_dtype tkc_least_upper_dtype(tkc_dtype a, tkc_dtype b) {
  if (!valid(a) || !valid(b) || a == TKC_VOID || b == TKC_VOID) return TKC_VOID;
  unsigned common = ancestors(a) & ancestors(b);
  for (size_t i = 0; i < sizeof by_priority / sizeof by_priority[0]; i++) /* the least of the common ones */
    if (common & B(by_priority[i])) return by_priority[i];
  return TKC_VOID;
}
#undef B
