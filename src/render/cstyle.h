/* src/render/cstyle.h — the render loop the C-style renderers (C and WGSL) share, as tinygrad's
 * CStyleLanguage does: walk the linearized uops once, keep each one's rendered text, inline a value
 * used once as part of its user's expression, give every other value a name by kind (alu0, val3,
 * ...), and free it all at the end. What a uop renders to (the per-target string rules) stays in
 * each renderer, which embeds a tkc_cs as its member `cs`. Internal. */
#ifndef TKC_RENDER_CSTYLE_H
#define TKC_RENDER_CSTYLE_H

#include "base/common.h"
#include "render/render_util.h"
#include "tkc/uop.h"

/* the kinds of named values; each has a prefix and its own counter */
enum { TKC_CS_RIDX, TKC_CS_ALU, TKC_CS_VAL, TKC_CS_CAST, TKC_CS_ACC, TKC_CS_GEP, TKC_CS_TEMP, TKC_CS_NPFX };

typedef struct tkc_cs {
  const char *who;          /* "C", "WGSL": the renderer in messages */
  const char *let;          /* how a named value is declared: NULL "T name = e;", else "<let> name: T = e;" */
  tkc_uop *const *uops;
  size_t n;
  int32_t *pos;             /* uop id -> first position in uops, -1 */
  uint32_t npos;
  char **r;                 /* the expression or name of each position */
  int *nchild;              /* uses of each position */
  unsigned char *must_name; /* positions that get a name even when used once */
  int cnt[TKC_CS_NPFX];
  bool failed;              /* an error has been recorded */
  tkc_sbuf body;            /* the statements */
} tkc_cs;

/* Checks and indexes uops (tkc_render_posmap) and counts their uses. On failure the error is
 * recorded and tkc_cs_free still must be called. */
TKC_HIDDEN tkc_status tkc_cs_init(tkc_cs *cs, const char *who, const char *let, tkc_uop *const *uops, size_t n);
TKC_HIDDEN void tkc_cs_free(tkc_cs *cs);

/* errors: "WHO renderer: out of memory" / "cannot render OP of dtype DT: WHY"; both return NULL */
TKC_HIDDEN void *tkc_cs_oom(tkc_cs *cs);
TKC_HIDDEN void *tkc_cs_unsupported(tkc_cs *cs, const tkc_uop *u, const char *why);

/* position of u in uops (-1: not there) and the rendered text of source s of user (NULL + EINTERNAL
 * when it was not rendered before its use) */
TKC_HIDDEN int tkc_cs_pos(const tkc_cs *cs, const tkc_uop *u);
TKC_HIDDEN const char *tkc_cs_ref(tkc_cs *cs, const tkc_uop *user, const tkc_uop *s);

/* one statement line at the given depth */
TKC_HIDDEN void tkc_cs_emit(tkc_cs *cs, int depth, const char *fmt, ...) TKC_PRINTF(3, 4);

/* Gives position i its text e (taken): inline when inl, else a new name of kind pfx declared with
 * type (NULL: e is freed and the renderer has already failed). False when rendering failed. */
TKC_HIDDEN bool tkc_cs_bind(tkc_cs *cs, size_t i, char *e, bool inl, int pfx, const char *type, int depth);

/* Calls one(ctx, i, &depth) for each uop at its first position, depth starting at 1; false (the
 * error recorded) when one fails or the body ran out of memory. */
TKC_HIDDEN bool tkc_cs_loop(tkc_cs *cs, bool (*one)(void *ctx, size_t i, int *depth), void *ctx);

#endif
