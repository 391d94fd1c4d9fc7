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

#endif
