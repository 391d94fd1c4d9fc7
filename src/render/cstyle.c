/* The render loop shared by the C-style renderers (see cstyle.h): the base rendering of every op,
 * in C-like syntax as tinygrad's base_rewrite, which a lang's rules override where it differs. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "render/cstyle.h"

static const char *const pfx_name[TKC_CS_NPFX] = {"ridx", "alu", "val", "cast", "acc", "gep", "temp"};

static int cmp_buf(const void *a, const void *b) {
  int64_t x = ((const tkc_cs_buf *)a)->num, y = ((const tkc_cs_buf *)b)->num;
  return (x > y) - (x < y);
}

tkc_status tkc_cs_init(tkc_cs *cs, const tkc_cs_lang *lang, tkc_uop *const *uops, size_t n) {
  memset(cs, 0, sizeof *cs);
  cs->lang = lang;
  cs->uops = uops;
  cs->n = n;
  if (tkc_render_posmap(lang->who, uops, n, &cs->pos, &cs->npos) != TKC_OK) return cs->failed = true, tkc_last_status();
  cs->r = tkc_calloc(n + 1, sizeof *cs->r);
  cs->nchild = tkc_calloc(n + 1, sizeof *cs->nchild);
  cs->must_name = tkc_calloc(n + 1, 1);
  cs->bufs = tkc_calloc(n + 1, sizeof *cs->bufs);
  cs->vars = tkc_calloc(2 * (n + 1), sizeof *cs->vars);
  if (!cs->r || !cs->nchild || !cs->must_name || !cs->bufs || !cs->vars) return tkc_cs_oom(cs), TKC_ENOMEM;
  cs->vars_sorted = cs->vars + n + 1;
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
  tkc_free(cs->skip);
  tkc_free(cs->bufs);
  tkc_free(cs->vars);
  tkc_free(cs->body.s);
  cs->r = NULL, cs->pos = NULL, cs->nchild = NULL, cs->must_name = NULL, cs->skip = NULL, cs->bufs = NULL, cs->vars = NULL;
  cs->body.s = NULL;
}

void *tkc_cs_oom(tkc_cs *cs) { return tkc_render_oom(&cs->failed, cs->lang->who); }

void *tkc_cs_unsupported(tkc_cs *cs, const tkc_uop *u, const char *why) {
  if (!cs->failed) {
    char b[64];
    const char *on = tkc_op_name((tkc_op)u->op);
    tkc_err(TKC_EUNSUPPORTED, "%s renderer: cannot render %s of dtype %s%s%s", cs->lang->who, on ? on : "?",
            tkc_dt_str(u->dtype, b, sizeof b), why ? ": " : "", why ? why : "");
  }
  cs->failed = true;
  return NULL;
}
#define FAIL(cs, u, why) (tkc_cs_unsupported((cs), (u), (why)), false)

int tkc_cs_pos(const tkc_cs *cs, const tkc_uop *u) { return u && u->id < cs->npos ? cs->pos[u->id] : -1; }

const char *tkc_cs_ref(tkc_cs *cs, const tkc_uop *user, const tkc_uop *s) {
  int p = tkc_cs_pos(cs, s);
  if (p >= 0 && cs->r[p]) return cs->r[p];
  if (!cs->failed) {
    const char *un = tkc_op_name((tkc_op)user->op), *sn = tkc_op_name((tkc_op)s->op);
    tkc_err(TKC_EINTERNAL, "%s renderer: %s uses a %s that is not rendered before it (kernel not linearized?)", cs->lang->who,
            un ? un : "?", sn ? sn : "?");
  }
  cs->failed = true;
  return NULL;
}

/* a malloc'ed copy of the text of source s of user (no printf: copies are most of the strings) */
static char *ref_copy(tkc_cs *cs, const tkc_uop *user, const tkc_uop *s) {
  const char *x = tkc_cs_ref(cs, user, s);
  if (!x) return NULL;
  size_t n = strlen(x) + 1;
  char *c = tkc_malloc(n);
  return c ? memcpy(c, x, n) : tkc_cs_oom(cs);
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
    char *s = tkc_render_vfmt(&cs->failed, cs->lang->who, fmt, ap);
    va_end(ap);
    if (!s) return;
    tkc_sbuf_puts(&cs->body, s);
    tkc_free(s);
  }
  tkc_sbuf_puts(&cs->body, "\n");
}

/* "T name" or "<kw> name: T" in buf */
static const char *decl(const char *kw, const char *type, const char *name, char *buf, size_t n) {
  if (kw) snprintf(buf, n, "%s %s: %s", kw, name, type);
  else snprintf(buf, n, "%s %s", type, name);
  return buf;
}

bool tkc_cs_inline(const tkc_cs *cs, size_t i) { return cs->nchild[i] == 1 && !cs->must_name[i]; }

bool tkc_cs_bind(tkc_cs *cs, size_t i, char *e, bool inl, int pfx, int depth) {
  if (!e) return false;
  if (inl) {
    cs->r[i] = e;
    return true;
  }
  const tkc_uop *u = cs->uops[i];
  char tb[64], db[96];
  const char *type = u->dtype.scalar < TKC_VOID ? cs->lang->type(cs, u, u->dtype, tb, sizeof tb) : NULL;
  if (!type) {
    tkc_cs_unsupported(cs, u, NULL);
    tkc_free(e);
    return false;
  }
  char *nm = tkc_cs_fmt(cs, "%s%d", pfx_name[pfx], cs->cnt[pfx]++);
  if (!nm) {
    tkc_free(e);
    return false;
  }
  tkc_cs_emit(cs, depth, "%s = %s;", decl(cs->lang->let, type, nm, db, sizeof db), e);
  tkc_free(e);
  cs->r[i] = nm;
  return !cs->failed;
}

char *tkc_cs_op(tkc_cs *cs, int op, const char *const *a) {
  const char *f = op >= 0 && op < TKC_NOPS ? cs->lang->code_for_op[op] : NULL;
  if (!f) {
    const char *on = tkc_op_name((tkc_op)op);
    tkc_err(TKC_EINTERNAL, "%s renderer: no expression template for %s", cs->lang->who, on ? on : "?");
    cs->failed = true;
    return NULL;
  }
  size_t len[3] = {0, 0, 0}, total = 0;
  for (const char *p = f; *p; p++) {
    if (*p == '$' && p[1] >= '0' && p[1] <= '2') {
      int k = *++p - '0';
      if (!len[k]) len[k] = strlen(a[k]);
      total += len[k];
    } else {
      total++;
    }
  }
  char *s = tkc_malloc(total + 1), *o = s;
  if (!s) return tkc_cs_oom(cs);
  for (const char *p = f; *p; p++) {
    if (*p == '$' && p[1] >= '0' && p[1] <= '2') {
      int k = *++p - '0';
      memcpy(o, a[k], len[k]);
      o += len[k];
    } else {
      *o++ = *p;
    }
  }
  *o = 0;
  return s;
}

char *tkc_cs_lane(tkc_cs *cs, const tkc_uop *user, const tkc_uop *s, int k) {
  if (s->dtype.count <= 1 || s->dtype.space) return ref_copy(cs, user, s);
  if (cs->lang->const_lanes && s->op == TKC_OP_CONST) return cs->lang->const_str(cs, s, s->dtype.scalar, &s->arg);
  const char *x = tkc_cs_ref(cs, user, s);
  return x ? tkc_cs_fmt(cs, "%s[%d]", x, k) : NULL;
}

char *tkc_cs_vec(tkc_cs *cs, const tkc_uop *u, tkc_dt dt, char **l, int n) {
  const tkc_cs_lang *L = cs->lang;
  char tb[48];
  tkc_sbuf b = {0};
  const char *t = L->type(cs, u, dt, tb, sizeof tb);
  if (t) {
    tkc_sbuf_puts(&b, L->vec_pre);
    tkc_sbuf_puts(&b, t);
    tkc_sbuf_puts(&b, L->vec_mid);
    for (int i = 0; i < n; i++) {
      if (i) tkc_sbuf_puts(&b, L->vec_sep);
      tkc_sbuf_puts(&b, l[i]);
    }
    tkc_sbuf_puts(&b, L->vec_post);
  }
  for (int i = 0; i < n; i++) tkc_free(l[i]);
  if (!t) { tkc_free(b.s); return NULL; }
  if (b.oom) { tkc_free(b.s); return tkc_cs_oom(cs); }
  char *s = tkc_sbuf_take(&b);
  return s ? s : tkc_cs_oom(cs);
}

char *tkc_cs_value_op(tkc_cs *cs, const tkc_uop *u) {
  const tkc_cs_lang *L = cs->lang;
  if (u->dtype.count > 1) { /* the target rules scalarized what the lang cannot do on vectors */
    if (L->max_vector && u->dtype.count > L->max_vector) return tkc_cs_unsupported(cs, u, L->max_vector_why);
    return L->native_vector(cs, u);
  }
  bool cast = u->op == TKC_OP_CAST || u->op == TKC_OP_BITCAST;
  unsigned fl = tkc_op_flags((tkc_op)u->op);
  int need = (fl & TKC_F_T) || u->op == TKC_OP_MULACC ? 3 : (fl & TKC_F_B) ? 2 : 1;
  if (cast && u->nsrc != 1) return tkc_cs_unsupported(cs, u, "expects one source");
  if (!cast && u->nsrc != need) return tkc_cs_unsupported(cs, u, "wrong number of sources");
  if (cast && u->src[0]->dtype.count != 1) return tkc_cs_unsupported(cs, u, "changing the vector width");
  char *a[3] = {NULL, NULL, NULL}, *res = NULL;
  bool ok = true;
  for (int k = 0; k < u->nsrc && ok; k++) ok = (a[k] = ref_copy(cs, u, u->src[k])) != NULL;
  if (ok && cast) res = L->cast(cs, u, u->src[0]->dtype.scalar, u->dtype.scalar, a[0], u->op == TKC_OP_BITCAST);
  else if (ok) res = L->alu(cs, u, (const char *const *)a);
  for (int k = 0; k < 3; k++) tkc_free(a[k]);
  return res;
}

bool tkc_cs_add_buf(tkc_cs *cs, size_t i) {
  const tkc_uop *u = cs->uops[i];
  for (size_t k = 0; k < cs->nbufs; k++)
    if (cs->bufs[k].num == u->arg.v.i) {
      tkc_err(TKC_EINVAL, "%s renderer: two DEFINE_GLOBALs with arg %lld", cs->lang->who, (long long)u->arg.v.i);
      return cs->failed = true, false;
    }
  cs->bufs[cs->nbufs].num = u->arg.v.i;
  cs->bufs[cs->nbufs].dt = u->dtype;
  cs->nbufs++;
  return (cs->r[i] = tkc_cs_fmt(cs, "data%lld", (long long)u->arg.v.i)) != NULL;
}

void tkc_cs_real(double v, bool f32, char *out, size_t n) {
  for (int p = 1; p <= 17; p++) {
    snprintf(out, n, "%.*g", p, v);
    for (char *q = out; *q; q++)
      if (*q == ',') *q = '.';
    if (f32 ? strtof(out, NULL) == (float)v : strtod(out, NULL) == v) break;
  }
  if (!strpbrk(out, ".eE") && strlen(out) + 3 <= n) strcat(out, ".0");
}

static bool in_list(const char *const *l, const char *s, bool prefix) {
  for (; l && *l; l++)
    if (prefix ? !strncmp(s, *l, strlen(*l)) : !strcmp(s, *l)) return true;
  return false;
}

bool tkc_cs_name_usable(const tkc_cs_lang *lang, const char *s) {
  if (!tkc_render_is_ident(s) || in_list(lang->keywords, s, false) || in_list(lang->reserved_prefixes, s, true)) return false;
  for (const char *const *p = lang->numbered; p && *p; p++) { /* a generated name: prefix + digits */
    size_t l = strlen(*p);
    if (!strncmp(s, *p, l) && s[l] && strspn(s + l, "0123456789") == strlen(s + l)) return false;
  }
  return true;
}

bool tkc_cs_prepass(tkc_cs *cs) {
  for (size_t i = 0; i < cs->n; i++) {
    const tkc_uop *u = cs->uops[i];
    if (cs->pos[u->id] != (int32_t)i) continue; /* listed twice */
    unsigned f = cs->lang->note ? cs->lang->note(cs, u) : 0;
    if (f & TKC_CS_NOTE_FAIL) return false;
    bool dup_all = f & TKC_CS_DUP_ALL, dup_vec = f & TKC_CS_DUP_VEC;
    if (!u->dtype.space && u->dtype.count > 1 && ((tkc_op_flags((tkc_op)u->op) & TKC_F_ALU) || u->op == TKC_OP_CAST || u->op == TKC_OP_BITCAST))
      dup_vec = true;
    for (int k = 0; k < u->nsrc; k++) {
      int p = tkc_cs_pos(cs, u->src[k]);
      if (p >= 0 && (dup_all || (dup_vec && u->src[k]->dtype.count > 1 && !u->src[k]->dtype.space))) cs->must_name[p] = 1;
    }
    if (u->op == TKC_OP_DEFINE_VAR) {
      if (u->arg.kind != TKC_ARG_TUPLE || u->arg.n < 1 || u->arg.v.t[0].kind != TKC_ARG_STR)
        return FAIL(cs, u, "DEFINE_VAR needs a (name, min, max) arg");
      cs->vars[cs->nvars++] = u;
    }
  }
  memcpy(cs->vars_sorted, cs->vars, cs->nvars * sizeof *cs->vars);
  qsort(cs->vars_sorted, cs->nvars, sizeof *cs->vars, tkc_render_var_order);
  return true;
}

char *tkc_cs_vec_of(tkc_cs *cs, const tkc_uop *u, tkc_dt dt, int n, char *(*lane_of)(tkc_cs *, const tkc_uop *, int)) {
  char *stack[16] = {NULL}, **l = n <= 16 ? stack : tkc_calloc((size_t)n, sizeof *l);
  if (!l) return tkc_cs_oom(cs);
  bool ok = true;
  for (int k = 0; k < n && ok; k++)
    if (!(l[k] = lane_of(cs, u, k))) ok = false;
  char *e = NULL;
  if (ok) e = tkc_cs_vec(cs, u, dt, l, n);
  else for (int k = 0; k < n; k++) tkc_free(l[k]);
  if (l != stack) tkc_free(l);
  return e;
}
static char *const_lane(tkc_cs *cs, const tkc_uop *u, int k) {
  return cs->lang->const_str(cs, u, u->dtype.scalar, u->op == TKC_OP_VCONST ? &u->arg.v.t[k] : &u->arg);
}
static char *gep_lane(tkc_cs *cs, const tkc_uop *u, int k) { return tkc_cs_lane(cs, u, u->src[0], (int)u->arg.v.t[k].v.i); }
static char *vectorize_lane(tkc_cs *cs, const tkc_uop *u, int k) {
  if (u->src[k]->dtype.count > 1) return tkc_cs_unsupported(cs, u, "VECTORIZE of vectors");
  return ref_copy(cs, u, u->src[k]);
}

/* the base rendering of uops[i] (tinygrad's base_rewrite), after the lang's rule for its op */
static bool render_one(tkc_cs *cs, size_t i, int *depth) {
  const tkc_cs_lang *L = cs->lang;
  const tkc_uop *u = cs->uops[i];
  tkc_cs_rule rule = u->op < TKC_NOPS ? L->rules[u->op] : NULL;
  if (rule) {
    int r = rule(cs, i, depth);
    if (r != TKC_CS_BASE) return r == TKC_CS_DONE && !cs->failed;
  }
  char tb[64], db[96];
  char *e = NULL;    /* the value's expression */
  int pfx = TKC_CS_ALU;
  bool inl = false;  /* inline e instead of declaring a variable */
  switch ((tkc_op)u->op) {
  case TKC_OP_NAME: case TKC_OP_SINK: return true;
  case TKC_OP_NOOP: return u->nsrc < 1 || (cs->r[i] = ref_copy(cs, u, u->src[0])) != NULL;
  case TKC_OP_DEFINE_GLOBAL:
    if (!u->dtype.space || u->arg.kind != TKC_ARG_INT || u->arg.v.i < 0 || u->arg.v.i > 65535)
      return FAIL(cs, u, "DEFINE_GLOBAL needs a pointer dtype and an int arg");
    return tkc_cs_add_buf(cs, i);
  case TKC_OP_DEFINE_VAR: {
    if (u->dtype.scalar != TKC_INT32 || u->dtype.count != 1 || u->dtype.space) return FAIL(cs, u, "DEFINE_VAR must be int32");
    size_t k = 0;
    while (k < cs->nvars && cs->vars[k] != u) k++;
    return (cs->r[i] = L->var_name(cs, k)) != NULL;
  }
  case TKC_OP_CONST: case TKC_OP_VCONST: {
    if (u->dtype.space || u->dtype.scalar >= TKC_VOID) return FAIL(cs, u, NULL);
    int cnt = u->dtype.count;
    if (u->op == TKC_OP_VCONST && (u->arg.kind != TKC_ARG_TUPLE || (int)u->arg.n != cnt)) return FAIL(cs, u, "VCONST arg");
    if (cnt <= 1 && u->op == TKC_OP_CONST) return (cs->r[i] = L->const_str(cs, u, u->dtype.scalar, &u->arg)) != NULL;
    if (L->max_vector && cnt > L->max_vector) return FAIL(cs, u, L->max_vector_why);
    return (cs->r[i] = tkc_cs_vec_of(cs, u, u->dtype, cnt, const_lane)) != NULL;
  }
  case TKC_OP_RANGE: {
    if (u->nsrc != 2) return FAIL(cs, u, "RANGE needs (start, end)");
    const char *s = tkc_cs_ref(cs, u, u->src[0]), *en = tkc_cs_ref(cs, u, u->src[1]);
    if (!s || !en || !L->type(cs, u, u->dtype, tb, sizeof tb)) return false;
    char *nm = tkc_cs_fmt(cs, "ridx%d", cs->cnt[TKC_CS_RIDX]++);
    if (!(cs->r[i] = nm)) return false;
    tkc_cs_emit(cs, *depth, "for (%s = %s; %s < %s; %s++) {", decl(L->var, tb, nm, db, sizeof db), s, nm, en, nm);
    (*depth)++;
    return !cs->failed;
  }
  case TKC_OP_ENDRANGE: case TKC_OP_ENDIF:
    if (*depth > 1) (*depth)--;
    tkc_cs_emit(cs, *depth, "}");
    return !cs->failed;
  case TKC_OP_IF: {
    if (u->nsrc < 1) return FAIL(cs, u, "IF needs a gate");
    const char *g = tkc_cs_ref(cs, u, u->src[0]);
    if (!g) return false;
    tkc_cs_emit(cs, *depth, "if (%s) {", g);
    (*depth)++;
    return !cs->failed;
  }
  case TKC_OP_BARRIER:
    if (!L->barrier) return FAIL(cs, u, NULL);
    tkc_cs_emit(cs, *depth, "%s", L->barrier);
    return !cs->failed;
  case TKC_OP_DEFINE_ACC: {
    if (u->nsrc < 1) return FAIL(cs, u, "DEFINE_ACC needs an initial value");
    const char *init = tkc_cs_ref(cs, u, u->src[0]);
    if (!init || !L->type(cs, u, u->dtype, tb, sizeof tb)) return false;
    char *nm = tkc_cs_fmt(cs, "acc%d", cs->cnt[TKC_CS_ACC]++);
    if (!(cs->r[i] = nm)) return false;
    tkc_cs_emit(cs, *depth, "%s = %s;", decl(L->var, tb, nm, db, sizeof db), init);
    return !cs->failed;
  }
  case TKC_OP_ASSIGN: {
    if (u->nsrc != 2) return FAIL(cs, u, "ASSIGN needs (acc, value)");
    const char *a = tkc_cs_ref(cs, u, u->src[0]), *v = tkc_cs_ref(cs, u, u->src[1]);
    if (!a || !v) return false;
    tkc_cs_emit(cs, *depth, "%s = %s;", a, v);
    return (cs->r[i] = tkc_cs_fmt(cs, "%s", a)) != NULL;
  }
  case TKC_OP_INDEX: {
    if (u->nsrc != 2) return FAIL(cs, u, "INDEX must be (buf, idx): gates belong on LOAD/STORE");
    if (!u->dtype.space || u->dtype.pcount > 1) return FAIL(cs, u, NULL);
    const char *b = tkc_cs_ref(cs, u, u->src[0]), *x = tkc_cs_ref(cs, u, u->src[1]);
    if (!b || !x) return false;
    /* drop the index's outer parentheses when it is a sum: (data0+alu0+1) */
    size_t xl = strlen(x);
    if (u->src[1]->op == TKC_OP_ADD && xl >= 2 && x[0] == '(' && x[xl - 1] == ')') cs->r[i] = tkc_cs_fmt(cs, "(%s+%.*s)", b, (int)(xl - 2), x + 1);
    else cs->r[i] = tkc_cs_fmt(cs, "(%s+%s)", b, x);
    return cs->r[i] != NULL;
  }
  case TKC_OP_GEP: {
    if (u->nsrc != 1) return FAIL(cs, u, NULL);
    const tkc_uop *s = u->src[0];
    int nidx = u->arg.kind == TKC_ARG_TUPLE ? (int)u->arg.n : u->arg.kind == TKC_ARG_INT ? 1 : 0;
    if (nidx < 1) return FAIL(cs, u, "GEP arg");
    int64_t idx0 = u->arg.kind == TKC_ARG_INT ? u->arg.v.i : u->arg.v.t[0].v.i;
    if (nidx == 1) return (cs->r[i] = s->dtype.count <= 1 ? ref_copy(cs, u, s) : tkc_cs_lane(cs, u, s, (int)idx0)) != NULL;
    if (!(e = tkc_cs_vec_of(cs, u, u->dtype, nidx, gep_lane))) return false;
    pfx = TKC_CS_GEP;
    inl = tkc_cs_inline(cs, i);
    break;
  }
  case TKC_OP_VECTORIZE:
    if (u->dtype.count <= 1 || u->nsrc != u->dtype.count) return FAIL(cs, u, "VECTORIZE needs one scalar per lane");
    if (!(e = tkc_cs_vec_of(cs, u, u->dtype, u->nsrc, vectorize_lane))) return false;
    pfx = TKC_CS_CAST;
    inl = tkc_cs_inline(cs, i);
    break;
  case TKC_OP_CAST:
    if (u->nsrc != 1) return FAIL(cs, u, NULL);
    if (u->dtype.space) { /* a pointer cast: CAST(INDEX) to a vector pointer */
      if (!u->src[0]->dtype.space) return FAIL(cs, u, "CAST of a value to a pointer");
      const char *x = tkc_cs_ref(cs, u, u->src[0]);
      if (!x) return false;
      if (tkc_dt_eq(u->dtype, u->src[0]->dtype)) cs->r[i] = tkc_cs_fmt(cs, "%s", x);
      else if (!L->type(cs, u, u->dtype, tb, sizeof tb)) return FAIL(cs, u, NULL);
      else cs->r[i] = tkc_cs_fmt(cs, "((%s)%s)", tb, x);
      return cs->r[i] != NULL;
    }
    /* fallthrough */
  case TKC_OP_BITCAST:
    if (u->nsrc != 1 || u->dtype.space || u->src[0]->dtype.space) return FAIL(cs, u, NULL);
    if (!(e = tkc_cs_value_op(cs, u))) return false;
    pfx = TKC_CS_CAST;
    inl = tkc_cs_inline(cs, i);
    break;
  default:
    if (!(tkc_op_flags((tkc_op)u->op) & TKC_F_ALU) || u->op == TKC_OP_THREEFRY || u->dtype.space || u->dtype.scalar >= TKC_VOID)
      return FAIL(cs, u, NULL);
    if (!(e = tkc_cs_value_op(cs, u))) return false;
    inl = tkc_cs_inline(cs, i);
    break;
  }
  return tkc_cs_bind(cs, i, e, inl, pfx, *depth);
}

bool tkc_cs_loop(tkc_cs *cs) {
  int depth = 1;
  for (size_t i = 0; i < cs->n && !cs->failed; i++) {
    if (cs->pos[cs->uops[i]->id] != (int32_t)i || (cs->skip && cs->skip[i])) continue;
    if (!render_one(cs, i, &depth)) cs->failed = true;
  }
  if (!cs->failed && cs->body.oom) tkc_cs_oom(cs);
  qsort(cs->bufs, cs->nbufs, sizeof *cs->bufs, cmp_buf);
  return !cs->failed;
}
