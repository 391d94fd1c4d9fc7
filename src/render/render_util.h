/* src/render/render_util.h — pieces every renderer needs: formatted strings with the renderer's
 * out-of-memory flag, kernel names, and the uop id -> position map. Internal. */
#ifndef TKC_RENDER_UTIL_H
#define TKC_RENDER_UTIL_H

#include <stdarg.h>
#include <stdbool.h>
#include "base/common.h"
#include "tkc/uop.h"

/* Records "WHO renderer: out of memory" unless *failed already, sets *failed; returns NULL. */
TKC_HIDDEN void *tkc_render_oom(bool *failed, const char *who);
/* A malloc'ed formatted string; NULL (and tkc_render_oom) when it cannot be made. */
TKC_HIDDEN char *tkc_render_vfmt(bool *failed, const char *who, const char *fmt, va_list ap) TKC_PRINTF(3, 0);
TKC_HIDDEN char *tkc_render_fmt(bool *failed, const char *who, const char *fmt, ...) TKC_PRINTF(3, 4);

/* s is a C identifier: [A-Za-z_][A-Za-z0-9_]* */
TKC_HIDDEN bool tkc_render_is_ident(const char *s);

/* Checks that no uops[i] is NULL (TKC_EINVAL "WHO renderer: NULL uop at I") and builds *pos, a
 * malloc'ed map of *npos entries from uop id to its first position in uops, -1 where absent
 * (TKC_ENOMEM "WHO renderer: out of memory" when it cannot). Nothing is allocated on failure. */
TKC_HIDDEN tkc_status tkc_render_posmap(const char *who, tkc_uop *const *uops, size_t n, int32_t **pos, uint32_t *npos);
/* nchild[p] += the uses of position p by the uops at their first position */
TKC_HIDDEN void tkc_render_count_uses(tkc_uop *const *uops, size_t n, const int32_t *pos, uint32_t npos, int *nchild);

/* The loop a host kernel splits across cores: the first RANGE (start, end) at loop depth 0 that no
 * DEFINE_ACC reduces over (an output loop), provided every STORE of the kernel is inside it (so the
 * code outside it only computes values each core needs; nothing is written twice). NULL when there
 * is none. pos is tkc_render_posmap's (a uop counts at its own position only). */
TKC_HIDDEN const tkc_uop *tkc_render_pick_split(tkc_uop *const *uops, size_t n, const int32_t *pos);

/* x is a power of two (x > 0) */
static inline bool tkc_render_is_pow2(uint64_t x) { return x && !(x & (x - 1)); }
/* scalar dtype s is a signed integer (tkc_dtype_is_int and tkc_dtype_is_unsigned name the others) */
static inline bool tkc_render_is_signed(int s) { return tkc_dtype_is_int((tkc_dtype)s) && !tkc_dtype_is_unsigned((tkc_dtype)s); }

/* ---------------------------------------------------------------- kernel parameters
 * The launch order every renderer and the program driver agree on: buffers by DEFINE_GLOBAL number
 * (a missing number is still a parameter), then one value per DEFINE_VAR sorted by name (strcmp). */

/* The name of DEFINE_VAR u (its arg is (name, min, max)); NULL when u has no such arg. */
TKC_HIDDEN const char *tkc_render_var_name(const tkc_uop *u);
/* qsort comparator over an array of DEFINE_VAR pointers (tkc_uop * or const tkc_uop *): by name,
 * the launch order of variables. E.g. qsort(vars, n, sizeof *vars, tkc_render_var_order). */
TKC_HIDDEN int tkc_render_var_order(const void *a, const void *b);

typedef struct tkc_render_params {
  int64_t *bufs;        /* the DEFINE_GLOBAL numbers, ascending, each once */
  size_t nbufs;
  const tkc_uop **vars; /* the DEFINE_VARs, by name (tkc_render_var_order) */
  size_t nvars;
} tkc_render_params;

/* Collects the parameters of uops into *p (a UOp listed twice counts once). DEFINE_GLOBALs without a
 * pointer dtype and a buffer number in [0, 65535] and DEFINE_VARs without a name are skipped: the
 * renderer refuses them where it renders them. TKC_EINVAL "WHO renderer: two DEFINE_GLOBALs with arg
 * N" when two UOps claim one number; TKC_ENOMEM. *p is empty on failure; free with tkc_render_params_free. */
TKC_HIDDEN tkc_status tkc_render_params_collect(const char *who, tkc_uop *const *uops, size_t n, tkc_render_params *p);
TKC_HIDDEN void tkc_render_params_free(tkc_render_params *p);
/* The launch position of DEFINE_VAR u among p->vars; -1 when it is not one of them. */
TKC_HIDDEN int tkc_render_params_var(const tkc_render_params *p, const tkc_uop *u);

#endif
