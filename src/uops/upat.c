/* UPat: patterns as data, the notation that builds them, matching with backtracking, and the
 * PatternMatcher that indexes rules by op (tinygrad's UPat / PatternMatcher). */
#include <ctype.h>
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include "uops/uop_internal.h"

#define MAX_NAMES 16   /* names one rule may bind */
#define MAX_SRC 8      /* sources one pattern node may list */
#define DT_PTR (1u << TKC_NDTYPES) /* the "ptr" dtype filter bit */

typedef enum { SRC_ANY, SRC_ORDERED, SRC_PERMUTE, SRC_REPEAT } src_mode;

typedef struct upat upat;
struct upat {
  uint64_t ops[2];  /* op set (bitset); both all-ones = any op */
  uint32_t dtypes;  /* bitmask over tkc_dtype (+ DT_PTR); 0 = any */
  int has_arg;
  double arg;
  int slot;         /* binding slot, -1 = unnamed */
  uint8_t mode;     /* src_mode */
  uint8_t any_len;  /* more sources than listed are allowed */
  uint8_t nsrc;
  upat *src[MAX_SRC];
  uint64_t early[2]; /* ops that must appear among the UOp's sources */
};

typedef struct rule {
  upat *pat;
  tkc_rewrite_fn fn;
  const char *names[MAX_NAMES];
  int nnames;
  const char *text;
} rule;

struct tkc_matcher {
  rule *rules;
  size_t nrules;
  size_t *index[TKC_NOPS]; /* per op: rule numbers, in order */
  size_t nindex[TKC_NOPS];
  void **allocs;           /* everything to free */
  size_t nallocs, capallocs;
};

struct tkc_match {
  tkc_uop *root;
  tkc_uop *vals[MAX_NAMES];
  const rule *rule;
};

/* ---------------------------------------------------------------- allocation */

static void *m_alloc(tkc_matcher *pm, size_t n) {
  if (pm->nallocs == pm->capallocs) {
    size_t cap = pm->capallocs ? pm->capallocs * 2 : 64;
    void **a = tkc_realloc(pm->allocs, cap * sizeof *a);
    if (!a) return NULL;
    pm->allocs = a;
    pm->capallocs = cap;
  }
  void *p = tkc_calloc(1, n);
  if (p) pm->allocs[pm->nallocs++] = p;
  return p;
}

void tkc_matcher_free(tkc_matcher *pm) {
  if (!pm) return;
  for (size_t i = 0; i < pm->nallocs; i++) tkc_free(pm->allocs[i]);
  tkc_free(pm->allocs);
  tkc_free(pm);
}

size_t tkc_matcher_size(const tkc_matcher *pm) { return pm ? pm->nrules : 0; }

/* ---------------------------------------------------------------- the notation */

typedef struct parser {
  tkc_matcher *pm;
  rule *r;
  const char *text, *p;
  size_t rule_no;
  int failed;
  int depth; /* nesting of parse_pat: bounded, patterns are text a caller may build */
} parser;

#define MAX_PAT_DEPTH 64

static void fail(parser *ps, const char *what) {
  if (ps->failed) return;
  ps->failed = 1;
  /* long patterns are cut in the message, so the reason is never truncated away */
  int len = (int)strlen(ps->text);
  tkc_err(TKC_EINVAL, "pattern of rule %zu \"%.*s%s\": %s at offset %d", ps->rule_no, len > 80 ? 80 : len, ps->text, len > 80 ? "..." : "",
          what, (int)(ps->p - ps->text));
}

static void skip_ws(parser *ps) {
  while (isspace((unsigned char)*ps->p)) ps->p++;
}

static int ident(parser *ps, char *buf, size_t n) {
  size_t k = 0, len = 0;
  while (isalnum((unsigned char)*ps->p) || *ps->p == '_') {
    if (k + 1 < n) buf[k++] = *ps->p;
    ps->p++;
    len++;
  }
  buf[k] = 0;
  if (len > k) fail(ps, "name too long"); /* never match on a truncated name */
  return (int)k;
}

static void set_op(uint64_t *ops, int op) { ops[op >> 6] |= 1ull << (op & 63); }
static int has_op(const uint64_t *ops, int op) { return (int)(ops[op >> 6] >> (op & 63)) & 1; }
static int op_count(const uint64_t *ops) { return __builtin_popcountll(ops[0]) + __builtin_popcountll(ops[1]); }

static int add_op_group(uint64_t *ops, const char *name) {
  static const struct { const char *name; unsigned flags; } groups[] = {
      {"ALU", TKC_F_ALU}, {"UNARY", TKC_F_U}, {"BINARY", TKC_F_B}, {"TERNARY", TKC_F_T},
      {"COMMUTATIVE", TKC_F_C}, {"ASSOCIATIVE", TKC_F_A}, {"IDEMPOTENT", TKC_F_I},
      {"IRREDUCIBLE", TKC_F_R}, {"MOVEMENT", TKC_F_M}, {"BUFFER", TKC_F_F}, {"ALL", ~0u}};
  int op = tkc_op_from_name(name);
  if (op >= 0) { set_op(ops, op); return 1; }
  if (!strcmp(name, "cvar")) { set_op(ops, TKC_OP_CONST); set_op(ops, TKC_OP_VCONST); return 1; }
  for (size_t i = 0; i < TKC_COUNTOF(groups); i++) {
    if (strcmp(groups[i].name, name)) continue;
    for (int o = 0; o < TKC_NOPS; o++)
      if (tkc_op_flags((tkc_op)o) & groups[i].flags || groups[i].flags == ~0u) set_op(ops, o);
    return 1;
  }
  return 0;
}

static uint32_t dtype_mask(const char *name) {
  static const struct { const char *name; uint32_t mask; } aliases[] = {
      {"int", 1u << TKC_INT32}, {"uint", 1u << TKC_UINT32}, {"long", 1u << TKC_INT64}, {"ulong", 1u << TKC_UINT64},
      {"float", 1u << TKC_FLOAT32}, {"half", 1u << TKC_FLOAT16}, {"double", 1u << TKC_FLOAT64},
      {"sints", 1u << TKC_INT8 | 1u << TKC_INT16 | 1u << TKC_INT32 | 1u << TKC_INT64},
      {"uints", 1u << TKC_UINT8 | 1u << TKC_UINT16 | 1u << TKC_UINT32 | 1u << TKC_UINT64},
      {"ints", 1u << TKC_INT8 | 1u << TKC_INT16 | 1u << TKC_INT32 | 1u << TKC_INT64 | 1u << TKC_UINT8 | 1u << TKC_UINT16 |
                   1u << TKC_UINT32 | 1u << TKC_UINT64},
      {"floats", 1u << TKC_FLOAT16 | 1u << TKC_BFLOAT16 | 1u << TKC_FLOAT32 | 1u << TKC_FLOAT64},
      {"ptr", DT_PTR}};
  for (int d = 0; d < TKC_NDTYPES; d++)
    if (!strcmp(tkc_dtype_name((tkc_dtype)d), name)) return 1u << d;
  for (size_t i = 0; i < TKC_COUNTOF(aliases); i++)
    if (!strcmp(aliases[i].name, name)) return aliases[i].mask;
  return 0;
}

static int name_slot(parser *ps, const char *name) {
  for (int i = 0; i < ps->r->nnames; i++)
    if (!strcmp(ps->r->names[i], name)) return i;
  if (ps->r->nnames == MAX_NAMES) { fail(ps, "too many names"); return -1; }
  char *copy = m_alloc(ps->pm, strlen(name) + 1);
  if (!copy) { fail(ps, "out of memory"); return -1; }
  strcpy(copy, name);
  ps->r->names[ps->r->nnames] = copy;
  return ps->r->nnames++;
}

static void parse_dtypes(parser *ps, upat *u) {
  if (*ps->p != '<') return;
  ps->p++;
  for (;;) {
    char buf[32];
    skip_ws(ps);
    if (!ident(ps, buf, sizeof buf)) return fail(ps, "expected a dtype name");
    uint32_t m = dtype_mask(buf);
    if (!m) return fail(ps, "unknown dtype");
    u->dtypes |= m;
    skip_ws(ps);
    if (*ps->p == '|') { ps->p++; continue; }
    if (*ps->p == '>') { ps->p++; return; }
    return fail(ps, "expected '|' or '>'");
  }
}

static void parse_arg(parser *ps, upat *u) {
  if (*ps->p != '[') return;
  ps->p++;
  skip_ws(ps);
  if (!strncmp(ps->p, "true", 4)) { u->arg = 1; ps->p += 4; }
  else if (!strncmp(ps->p, "false", 5)) { u->arg = 0; ps->p += 5; }
  else {
    char *end;
    u->arg = strtod(ps->p, &end);
    if (end == ps->p) return fail(ps, "expected a number");
    if (!isfinite(u->arg)) return fail(ps, "number out of range (args are finite)");
    ps->p = end;
  }
  u->has_arg = 1;
  skip_ws(ps);
  if (*ps->p != ']') return fail(ps, "expected ']'");
  ps->p++;
}

static upat *new_pat(parser *ps) {
  upat *u = m_alloc(ps->pm, sizeof *u);
  if (!u) { fail(ps, "out of memory"); return NULL; }
  u->slot = -1;
  return u;
}

/* head := OPS [<dtypes>] [[arg]]   with OPS := NAME ('|' NAME)* */
static void parse_head(parser *ps, upat *u) {
  for (;;) {
    char buf[32];
    skip_ws(ps);
    if (!ident(ps, buf, sizeof buf)) return fail(ps, "expected an op name");
    if (!add_op_group(u->ops, buf)) return fail(ps, "unknown op or group");
    if (*ps->p != '|') break;
    ps->p++;
  }
  parse_dtypes(ps, u);
  parse_arg(ps, u);
}

static upat *parse_pat(parser *ps, int *repeat);

static void compute_early_reject(upat *u) {
  for (int i = 0; i < u->nsrc; i++) {
    upat *s = u->src[i];
    if (op_count(s->ops) != 1) continue;
    u->early[0] |= s->ops[0];
    u->early[1] |= s->ops[1];
  }
}

/* '(' head src* ['...'] ')' */
static void parse_node(parser *ps, upat *u, int order) {
  ps->p++; /* '(' */
  parse_head(ps, u);
  u->mode = SRC_ORDERED;
  for (;;) {
    skip_ws(ps);
    if (ps->failed) return;
    if (*ps->p == ')') { ps->p++; break; }
    if (!strncmp(ps->p, "...", 3)) {
      if (u->any_len) return fail(ps, "'...' twice");
      ps->p += 3;
      u->any_len = 1;
      continue;
    }
    if (u->any_len) return fail(ps, "'...' must come last");
    if (u->nsrc == MAX_SRC) return fail(ps, "too many sources");
    int repeat = 0;
    upat *s = parse_pat(ps, &repeat);
    if (!s) return;
    if (repeat) {
      if (u->nsrc) return fail(ps, "a repeated source must be the only one");
      u->mode = SRC_REPEAT;
    } else if (u->mode == SRC_REPEAT) return fail(ps, "a repeated source must be the only one");
    u->src[u->nsrc++] = s;
  }
  if (u->mode == SRC_ORDERED && u->nsrc > 1) {
    int all_comm = 1;
    for (int o = 0; o < TKC_NOPS; o++)
      if (has_op(u->ops, o) && !(tkc_op_flags((tkc_op)o) & TKC_F_C)) all_comm = 0;
    if (order == '~' || (order == 0 && all_comm)) u->mode = SRC_PERMUTE;
  }
  if (u->mode == SRC_PERMUTE && u->any_len) return fail(ps, "'...' needs ordered sources");
  compute_early_reject(u);
}

static upat *parse_pat_inner(parser *ps, int *repeat);

static upat *parse_pat(parser *ps, int *repeat) {
  if (ps->depth >= MAX_PAT_DEPTH) {
    fail(ps, "patterns nested more than 64 deep");
    return NULL;
  }
  ps->depth++;
  upat *u = parse_pat_inner(ps, repeat);
  ps->depth--;
  return u;
}

static upat *parse_pat_inner(parser *ps, int *repeat) {
  skip_ws(ps);
  upat *u = new_pat(ps);
  if (!u) return NULL;
  const char *start = ps->p;
  char buf[32];
  int order = 0;
  if (*ps->p == '~' || *ps->p == '=') order = *ps->p++;
  if (*ps->p == '(') {
    parse_node(ps, u, order);
  } else if (order) {
    fail(ps, "expected '(' after '~' or '='");
  } else if (islower((unsigned char)*ps->p) || *ps->p == '_') {
    ident(ps, buf, sizeof buf);
    if (*ps->p == ':') { /* name:PAT */
      ps->p++;
      int slot = name_slot(ps, buf);
      upat *inner = parse_pat(ps, repeat);
      if (!inner) return NULL;
      if (inner->slot >= 0) { fail(ps, "a pattern can have one name"); return NULL; }
      inner->slot = slot;
      return inner;
    }
    if (!strcmp(buf, "cvar")) { /* cvar[<dt>] */
      ps->p = start;
      parse_head(ps, u);
    } else { /* a variable: any op */
      u->ops[0] = u->ops[1] = ~0ull;
      if (strcmp(buf, "_")) u->slot = name_slot(ps, buf);
      parse_dtypes(ps, u);
    }
  } else if (isupper((unsigned char)*ps->p)) {
    parse_head(ps, u);
  } else {
    fail(ps, *ps->p ? "unexpected character" : "unexpected end");
  }
  if (ps->failed) return NULL;
  if (*ps->p == '*') {
    if (!repeat) { fail(ps, "'*' only inside a source list"); return NULL; }
    ps->p++;
    *repeat = 1;
  }
  return u;
}

static int compile_rule(tkc_matcher *pm, rule *r, const tkc_rule *src, size_t no) {
  if (!src->pattern || !src->fn) return tkc_err(TKC_EINVAL, "rule %zu: NULL pattern or callback", no);
  if (!src->pattern) return tkc_err(TKC_EINVAL, "rule %zu has a NULL pattern", no);
  size_t n = strlen(src->pattern);
  char *text = m_alloc(pm, n + 1);
  if (!text) return tkc_err(TKC_ENOMEM, "out of memory compiling rules");
  memcpy(text, src->pattern, n + 1);
  r->text = text;
  r->fn = src->fn;
  parser ps = {pm, r, text, text, no, 0, 0};
  r->pat = parse_pat(&ps, NULL);
  skip_ws(&ps);
  if (!ps.failed && *ps.p) fail(&ps, "trailing text");
  if (!ps.failed && op_count(r->pat->ops) == 2 * 64) fail(&ps, "a rule's top pattern must name its op(s)");
  return ps.failed ? TKC_EINVAL : TKC_OK;
}

static tkc_matcher *build(const tkc_rule *const *lists, const size_t *counts, int nlists) {
  tkc_matcher *pm = tkc_calloc(1, sizeof *pm);
  if (!pm) return tkc_err_null(TKC_ENOMEM, "out of memory creating a matcher");
  for (int l = 0; l < nlists; l++) pm->nrules += counts[l];
  pm->rules = m_alloc(pm, (pm->nrules ? pm->nrules : 1) * sizeof *pm->rules);
  if (!pm->rules) goto oom;
  size_t k = 0;
  for (int l = 0; l < nlists; l++)
    for (size_t i = 0; i < counts[l]; i++, k++)
      if (compile_rule(pm, &pm->rules[k], &lists[l][i], k)) goto fail;
  for (int o = 0; o < TKC_NOPS; o++) {
    for (size_t i = 0; i < pm->nrules; i++) pm->nindex[o] += has_op(pm->rules[i].pat->ops, o);
    if (!pm->nindex[o]) continue;
    pm->index[o] = m_alloc(pm, pm->nindex[o] * sizeof(size_t));
    if (!pm->index[o]) goto oom;
    size_t j = 0;
    for (size_t i = 0; i < pm->nrules; i++)
      if (has_op(pm->rules[i].pat->ops, o)) pm->index[o][j++] = i;
  }
  return pm;
oom:
  tkc_err(TKC_ENOMEM, "out of memory creating a matcher");
fail:
  tkc_matcher_free(pm);
  return NULL;
}

const tkc_matcher *tkc_matcher_static(tkc_matcher *_Atomic *slot, const tkc_rule *rules, size_t n) {
  tkc_matcher *pm = atomic_load(slot);
  if (pm) return pm;
  tkc_matcher *fresh = tkc_matcher_new(rules, n), *expected = NULL;
  if (!fresh) return tkc_err_null(TKC_EINTERNAL, "built-in rules failed to compile: %s", tkc_last_error());
  if (atomic_compare_exchange_strong(slot, &expected, fresh)) return fresh;
  tkc_matcher_free(fresh); /* another thread won the race */
  return expected;
}

tkc_matcher *tkc_matcher_new(const tkc_rule *rules, size_t n) {
  if (!rules && n) return tkc_err_null(TKC_EINVAL, "tkc_matcher_new: NULL rules");
  return build(&rules, &n, 1);
}

/* The rules of a compiled matcher, as tkc_rule (texts stay owned by the matcher). */
static tkc_rule *rules_of(const tkc_matcher *pm, size_t *n) {
  *n = pm ? pm->nrules : 0;
  tkc_rule *r = tkc_malloc((*n ? *n : 1) * sizeof *r);
  for (size_t i = 0; r && i < *n; i++) r[i] = (tkc_rule){pm->rules[i].text, pm->rules[i].fn};
  return r;
}

tkc_matcher *tkc_matcher_concat(const tkc_matcher *a, const tkc_matcher *b) {
  size_t n[2];
  tkc_rule *ra = rules_of(a, &n[0]), *rb = rules_of(b, &n[1]);
  tkc_matcher *pm = NULL;
  if (ra && rb) {
    const tkc_rule *lists[2] = {ra, rb};
    pm = build(lists, n, 2);
  } else {
    tkc_err(TKC_ENOMEM, "out of memory concatenating matchers");
  }
  tkc_free(ra);
  tkc_free(rb);
  return pm;
}

/* ---------------------------------------------------------------- matching */

tkc_uop *tkc_match_get(const tkc_match *m, const char *name) {
  if (!m || !name) return NULL;
  for (int i = 0; i < m->rule->nnames; i++)
    if (!strcmp(m->rule->names[i], name)) return m->vals[i];
  return NULL;
}

tkc_uop *tkc_match_root(const tkc_match *m) { return m ? m->root : NULL; }

typedef struct mstate {
  tkc_match m;
  tkc_graph *g;
  void *ctx;
} mstate;

/* Sources still to match: pats[i..n) (or rep for all) against srcs[i..n), then next. */
typedef struct pend {
  upat *const *pats;
  const upat *rep;
  tkc_uop *const *srcs;
  int i, n;
  const struct pend *next;
} pend;

static tkc_uop *match(mstate *st, const upat *p, tkc_uop *u, const pend *rest);

static tkc_uop *run(mstate *st, const pend *p) {
  while (p && p->i == p->n) p = p->next;
  if (!p) return st->m.rule->fn(st->g, &st->m, st->ctx);
  pend q = *p;
  q.i++;
  return match(st, p->pats ? p->pats[p->i] : p->rep, p->srcs[p->i], &q);
}

static int next_perm(int *a, int n) {
  int i = n - 2;
  while (i >= 0 && a[i] >= a[i + 1]) i--;
  if (i < 0) return 0;
  int j = n - 1;
  while (a[j] <= a[i]) j--;
  int t = a[i]; a[i] = a[j]; a[j] = t;
  for (int l = i + 1, r = n - 1; l < r; l++, r--) { t = a[l]; a[l] = a[r]; a[r] = t; }
  return 1;
}

static int arg_matches(const upat *p, const tkc_uop *u) {
  if (u->arg.kind == TKC_ARG_INT) return (double)u->arg.v.i == p->arg;
  if (u->arg.kind == TKC_ARG_FLOAT) return u->arg.v.f == p->arg;
  return 0;
}

static int dtype_matches(const upat *p, const tkc_uop *u) {
  if (u->dtype.space) return (p->dtypes & DT_PTR) != 0;
  return (p->dtypes >> u->dtype.scalar) & 1;
}

static tkc_uop *match(mstate *st, const upat *p, tkc_uop *u, const pend *rest) {
  if (!has_op(p->ops, u->op)) return NULL;
  if (p->dtypes && !dtype_matches(p, u)) return NULL;
  if (p->has_arg && !arg_matches(p, u)) return NULL;
  if ((p->mode == SRC_ORDERED || p->mode == SRC_PERMUTE) && (p->any_len ? u->nsrc < p->nsrc : u->nsrc != p->nsrc)) return NULL;
  int bound = 0;
  if (p->slot >= 0) {
    if (st->m.vals[p->slot]) {
      if (st->m.vals[p->slot] != u) return NULL;
    } else {
      st->m.vals[p->slot] = u;
      bound = 1;
    }
  }
  tkc_uop *r = NULL;
  switch ((src_mode)p->mode) {
  case SRC_ANY: r = run(st, rest); break;
  case SRC_ORDERED: r = run(st, &(pend){p->src, NULL, u->src, 0, p->nsrc, rest}); break;
  case SRC_REPEAT: r = run(st, &(pend){NULL, p->src[0], u->src, 0, u->nsrc, rest}); break;
  case SRC_PERMUTE: {
    int perm[MAX_SRC];
    upat *pats[MAX_SRC];
    for (int i = 0; i < p->nsrc; i++) perm[i] = i;
    do {
      for (int i = 0; i < p->nsrc; i++) pats[perm[i]] = p->src[i];
      r = run(st, &(pend){pats, NULL, u->src, 0, p->nsrc, rest});
    } while (!r && next_perm(perm, p->nsrc));
    break;
  }
  }
  if (bound) st->m.vals[p->slot] = NULL;
  return r;
}

tkc_uop *tkc_rewrite_once(const tkc_matcher *pm, tkc_graph *g, tkc_uop *u, void *ctx) {
  if (!pm || !g || !u || u->op >= TKC_NOPS) return NULL;
  size_t n = pm->nindex[u->op];
  if (!n) return NULL;
  uint64_t present[2] = {0, 0};
  for (int i = 0; i < u->nsrc; i++) set_op(present, u->src[i]->op);
  mstate st = {.g = g, .ctx = ctx};
  st.m.root = u;
  for (size_t k = 0; k < n; k++) {
    const rule *r = &pm->rules[pm->index[u->op][k]];
    const upat *p = r->pat;
    if ((p->early[0] & ~present[0]) || (p->early[1] & ~present[1])) continue;
    st.m.rule = r;
    tkc_uop *out = match(&st, p, u, NULL);
    if (out) return out;
  }
  return NULL;
}
