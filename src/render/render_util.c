/* Helpers shared by the renderers (see render_util.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "render/render_util.h"

void *tkc_render_oom(bool *failed, const char *who) {
  if (!*failed) tkc_err(TKC_ENOMEM, "%s renderer: out of memory", who);
  *failed = true;
  return NULL;
}

char *tkc_render_vfmt(bool *failed, const char *who, const char *fmt, va_list ap) {
  va_list aq;
  va_copy(aq, ap);
  int n = vsnprintf(NULL, 0, fmt, aq);
  va_end(aq);
  if (n < 0) return tkc_render_oom(failed, who);
  char *s = tkc_malloc((size_t)n + 1);
  if (!s) return tkc_render_oom(failed, who);
  vsnprintf(s, (size_t)n + 1, fmt, ap);
  return s;
}

char *tkc_render_fmt(bool *failed, const char *who, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char *s = tkc_render_vfmt(failed, who, fmt, ap);
  va_end(ap);
  return s;
}

bool tkc_render_is_ident(const char *s) {
  if (!s || !*s || !((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || *s == '_')) return false;
  for (const char *p = s; *p; p++)
    if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '_')) return false;
  return true;
}

tkc_status tkc_render_posmap(const char *who, tkc_uop *const *uops, size_t n, int32_t **pos, uint32_t *npos) {
  uint32_t maxid = 0;
  for (size_t i = 0; i < n; i++) {
    if (!uops[i]) return tkc_err(TKC_EINVAL, "%s renderer: NULL uop at %zu", who, i);
    if (uops[i]->id > maxid) maxid = uops[i]->id;
  }
  int32_t *p = tkc_malloc(((size_t)maxid + 1) * sizeof *p);
  if (!p) return tkc_err(TKC_ENOMEM, "%s renderer: out of memory", who);
  for (uint32_t k = 0; k <= maxid; k++) p[k] = -1;
  for (size_t i = 0; i < n; i++) /* a UOp listed twice is rendered at its first place */
    if (p[uops[i]->id] < 0) p[uops[i]->id] = (int32_t)i;
  *pos = p;
  *npos = maxid + 1;
  return TKC_OK;
}

void tkc_render_count_uses(tkc_uop *const *uops, size_t n, const int32_t *pos, uint32_t npos, int *nchild) {
  for (size_t i = 0; i < n; i++) {
    const tkc_uop *u = uops[i];
    if (pos[u->id] != (int32_t)i) continue; /* listed twice */
    for (int k = 0; k < u->nsrc; k++) {
      const tkc_uop *s = u->src[k];
      int p = s && s->id < npos ? pos[s->id] : -1;
      if (p >= 0) nchild[p]++;
    }
  }
}

const tkc_uop *tkc_render_pick_split(tkc_uop *const *uops, size_t n, const int32_t *pos) {
  const tkc_uop *split = NULL;
  int depth = 0, split_depth = -1;
  for (size_t i = 0; i < n; i++) {
    const tkc_uop *u = uops[i];
    if (pos[u->id] != (int32_t)i) continue;
    switch ((tkc_op)u->op) {
    case TKC_OP_RANGE:
      if (!split && depth == 0 && u->nsrc == 2) {
        bool reduce = false;
        for (size_t j = 0; j < n && !reduce; j++) {
          const tkc_uop *a = uops[j];
          if (a->op != TKC_OP_DEFINE_ACC) continue;
          for (int k = 1; k < a->nsrc; k++)
            if (a->src[k] == u) reduce = true;
        }
        if (!reduce) split = u, split_depth = depth;
      }
      depth++;
      break;
    case TKC_OP_IF: depth++; break;
    case TKC_OP_ENDRANGE: case TKC_OP_ENDIF:
      if (depth > 0) depth--;
      if (split && depth == split_depth) split_depth = -2; /* the split loop has closed */
      break;
    case TKC_OP_STORE:
      if (!split || split_depth != 0 || depth < 1) return NULL; /* a store outside the split loop */
      break;
    default: break;
    }
  }
  return split;
}

/* ---------------------------------------------------------------- kernel parameters */

const char *tkc_render_var_name(const tkc_uop *u) {
  if (!u || u->op != TKC_OP_DEFINE_VAR || u->arg.kind != TKC_ARG_TUPLE || u->arg.n < 1 || u->arg.v.t[0].kind != TKC_ARG_STR) return NULL;
  return u->arg.v.t[0].v.s;
}

int tkc_render_var_order(const void *a, const void *b) {
  const char *x = tkc_render_var_name(*(const tkc_uop *const *)a), *y = tkc_render_var_name(*(const tkc_uop *const *)b);
  return strcmp(x ? x : "", y ? y : "");
}

static int by_number(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

static bool is_buffer(const tkc_uop *u) {
  return u->op == TKC_OP_DEFINE_GLOBAL && u->dtype.space && u->arg.kind == TKC_ARG_INT && u->arg.v.i >= 0 && u->arg.v.i <= 65535;
}

tkc_status tkc_render_params_collect(const char *who, tkc_uop *const *uops, size_t n, tkc_render_params *p) {
  memset(p, 0, sizeof *p);
  size_t nb = 0, nv = 0;
  for (size_t i = 0; i < n; i++) {
    if (is_buffer(uops[i])) nb++;
    else if (tkc_render_var_name(uops[i])) nv++;
  }
  const tkc_uop **bufu = tkc_calloc(nb + 1, sizeof *bufu);
  p->bufs = tkc_calloc(nb + 1, sizeof *p->bufs);
  p->vars = tkc_calloc(nv + 1, sizeof *p->vars);
  if (!bufu || !p->bufs || !p->vars) {
    tkc_free(bufu);
    tkc_render_params_free(p);
    return tkc_err(TKC_ENOMEM, "%s renderer: out of memory", who);
  }
  for (size_t i = 0; i < n; i++) {
    const tkc_uop *u = uops[i];
    bool seen = false;
    if (is_buffer(u)) {
      for (size_t k = 0; k < p->nbufs && !seen; k++) {
        if (bufu[k] == u) seen = true;
        else if (p->bufs[k] == u->arg.v.i) {
          tkc_free(bufu);
          tkc_render_params_free(p);
          return tkc_err(TKC_EINVAL, "%s renderer: two DEFINE_GLOBALs with arg %lld", who, (long long)u->arg.v.i);
        }
      }
      if (!seen) bufu[p->nbufs] = u, p->bufs[p->nbufs++] = u->arg.v.i;
    } else if (tkc_render_var_name(u)) {
      for (size_t k = 0; k < p->nvars && !seen; k++) seen = p->vars[k] == u;
      if (!seen) p->vars[p->nvars++] = u;
    }
  }
  tkc_free(bufu);
  qsort(p->bufs, p->nbufs, sizeof *p->bufs, by_number);
  qsort(p->vars, p->nvars, sizeof *p->vars, tkc_render_var_order);
  return TKC_OK;
}

void tkc_render_params_free(tkc_render_params *p) {
  if (!p) return;
  tkc_free(p->bufs);
  tkc_free(p->vars);
  memset(p, 0, sizeof *p);
}

int tkc_render_params_var(const tkc_render_params *p, const tkc_uop *u) {
  for (size_t k = 0; k < p->nvars; k++)
    if (p->vars[k] == u) return (int)k;
  return -1;
}
