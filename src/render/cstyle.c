/* The render loop shared by the C-style renderers (see cstyle.h). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "render/cstyle.h"

static const char *const pfx_name[TKC_CS_NPFX] = {"ridx", "alu", "val", "cast", "acc", "gep", "temp"};

tkc_status tkc_cs_init(tkc_cs *cs, const char *who, const char *let, tkc_uop *const *uops, size_t n) {
  memset(cs, 0, sizeof *cs);
  cs->who = who;
  cs->let = let;
  cs->uops = uops;
  cs->n = n;
  if (tkc_render_posmap(who, uops, n, &cs->pos, &cs->npos) != TKC_OK) return cs->failed = true, tkc_last_status();
  cs->r = tkc_calloc(n + 1, sizeof *cs->r);
  cs->nchild = tkc_calloc(n + 1, sizeof *cs->nchild);
  cs->must_name = tkc_calloc(n + 1, 1);
  if (!cs->r || !cs->nchild || !cs->must_name) return tkc_cs_oom(cs), TKC_ENOMEM;
  tkc_render_count_uses(uops, n, cs->pos, cs->npos, cs->nchild);
  return TKC_OK;
}

void tkc_cs_free(tkc_cs *cs) {
  if (cs->r)
    for (size_t i = 0; i < cs->n; i++) tkc_free(cs->r[i]);
  tkc_free(cs->r);
  tkc_free(cs->pos);
  tkc_free(cs->nchild);
  tkc_free(cs->must_name);
  tkc_free(cs->body.s);
  cs->r = NULL, cs->pos = NULL, cs->nchild = NULL, cs->must_name = NULL, cs->body.s = NULL;
}

void *tkc_cs_oom(tkc_cs *cs) { return tkc_render_oom(&cs->failed, cs->who); }

void *tkc_cs_unsupported(tkc_cs *cs, const tkc_uop *u, const char *why) {
  if (!cs->failed) {
    char b[64];
    const char *on = tkc_op_name((tkc_op)u->op);
    tkc_err(TKC_EUNSUPPORTED, "%s renderer: cannot render %s of dtype %s%s%s", cs->who, on ? on : "?", tkc_dt_str(u->dtype, b, sizeof b),
            why ? ": " : "", why ? why : "");
  }
  cs->failed = true;
  return NULL;
}

int tkc_cs_pos(const tkc_cs *cs, const tkc_uop *u) { return u && u->id < cs->npos ? cs->pos[u->id] : -1; }

const char *tkc_cs_ref(tkc_cs *cs, const tkc_uop *user, const tkc_uop *s) {
  int p = tkc_cs_pos(cs, s);
  if (p >= 0 && cs->r[p]) return cs->r[p];
  if (!cs->failed) {
    const char *un = tkc_op_name((tkc_op)user->op), *sn = tkc_op_name((tkc_op)s->op);
    tkc_err(TKC_EINTERNAL, "%s renderer: %s uses a %s that is not rendered before it (kernel not linearized?)", cs->who, un ? un : "?",
            sn ? sn : "?");
  }
  cs->failed = true;
  return NULL;
}

void tkc_cs_emit(tkc_cs *cs, int depth, const char *fmt, ...) {
  char stack[512]; /* most lines fit: no malloc */
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(stack, sizeof stack, fmt, ap);
  va_end(ap);
  if (n < 0) {
    tkc_cs_oom(cs);
    return;
  }
  for (int i = 0; i < depth; i++) tkc_sbuf_puts(&cs->body, "  ");
  if ((size_t)n < sizeof stack) {
    tkc_sbuf_puts(&cs->body, stack);
  } else {
    va_start(ap, fmt);
    char *s = tkc_render_vfmt(&cs->failed, cs->who, fmt, ap);
    va_end(ap);
    if (!s) return;
    tkc_sbuf_puts(&cs->body, s);
    tkc_free(s);
  }
  tkc_sbuf_puts(&cs->body, "\n");
}

bool tkc_cs_bind(tkc_cs *cs, size_t i, char *e, bool inl, int pfx, const char *type, int depth) {
  if (!e) return false;
  if (inl) {
    cs->r[i] = e;
    return true;
  }
  if (!type) {
    tkc_free(e);
    return false;
  }
  char *nm = tkc_render_fmt(&cs->failed, cs->who, "%s%d", pfx_name[pfx], cs->cnt[pfx]++);
  if (!nm) {
    tkc_free(e);
    return false;
  }
  if (cs->let) tkc_cs_emit(cs, depth, "%s %s: %s = %s;", cs->let, nm, type, e);
  else tkc_cs_emit(cs, depth, "%s %s = %s;", type, nm, e);
  tkc_free(e);
  cs->r[i] = nm;
  return !cs->failed;
}

bool tkc_cs_loop(tkc_cs *cs, bool (*one)(void *ctx, size_t i, int *depth), void *ctx) {
  int depth = 1;
  for (size_t i = 0; i < cs->n && !cs->failed; i++) {
    if (cs->pos[cs->uops[i]->id] != (int32_t)i) continue;
    if (!one(ctx, i, &depth)) cs->failed = true;
  }
  if (!cs->failed && cs->body.oom) tkc_cs_oom(cs);
  return !cs->failed;
}
