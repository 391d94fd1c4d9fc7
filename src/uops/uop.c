/* UOps: the graph context (arena + intern table), hash-consing, constructors and range analysis. */
#include <stdlib.h>
#include <string.h>
#include <pthread.h> /* not C11 threads: ThreadSanitizer sees pthread locks only */
#include "base/common.h"
#include "uops/uop_internal.h"

/* ---------------------------------------------------------------- op table */

static const char *const op_names[TKC_NOPS] = {
#define TKC_OP(name, flags) #name,
#include "tkc/ops.def"
#undef TKC_OP
};
static const unsigned op_flags[TKC_NOPS] = {
#define TKC_OP(name, flags) flags,
#include "tkc/ops.def"
#undef TKC_OP
};
_Static_assert(TKC_NOPS <= 128, "op bitsets are 128 bits wide");

const char *tkc_op_name(tkc_op op) { return (unsigned)op < TKC_NOPS ? op_names[op] : NULL; }
unsigned tkc_op_flags(tkc_op op) { return (unsigned)op < TKC_NOPS ? op_flags[op] : 0; }
int tkc_op_from_name(const char *name) {
  if (!name) return -1;
  for (int i = 0; i < TKC_NOPS; i++)
    if (!strcmp(op_names[i], name)) return i;
  return -1;
}

/* ---------------------------------------------------------------- arena */

typedef struct chunk {
  struct chunk *next;
  size_t used, cap;
  _Alignas(16) unsigned char data[];
} chunk;

/* an intern table slot: the hash beside the pointer, so a probe compares hashes without touching
 * the UOp (a cache miss per probe otherwise: a third of codegen's time was spent there) */
typedef struct slot {
  uint64_t hash;
  tkc_uop *u;
} slot;

struct tkc_graph {
  chunk *chunks;
  size_t bytes;
  slot *table; /* open addressing, power-of-two capacity */
  size_t cap, count;
};

/* The memory of freed graphs, kept for the next ones: building one kernel makes and frees several
 * graphs, and memory the C library gives back to the system comes back page by page, each page a
 * fault (a sixth of codegen's time). At most SPARE_CHUNKS arena chunks of the usual size and one
 * intern table of each power-of-two capacity up to 2^SPARE_TABLE_LOG (zeroed again when taken). */
enum { CHUNK_CAP = 65536 - sizeof(chunk), SPARE_CHUNKS = 64, SPARE_TABLE_MIN_LOG = 10, SPARE_TABLE_LOG = 16 };
static struct {
  pthread_mutex_t lock;
  chunk *chunks;
  int nchunks;
  slot *tables[SPARE_TABLE_LOG + 1];
} spare = {.lock = PTHREAD_MUTEX_INITIALIZER};

static int cap_log(size_t cap) {
  int l = 0;
  while (((size_t)1 << l) < cap) l++;
  return ((size_t)1 << l) == cap && l >= SPARE_TABLE_MIN_LOG && l <= SPARE_TABLE_LOG ? l : -1;
}

/* a zeroed table of cap slots */
static slot *table_alloc(size_t cap) {
  int l = cap_log(cap);
  slot *t = NULL;
  if (l >= 0) {
    pthread_mutex_lock(&spare.lock);
    t = spare.tables[l], spare.tables[l] = NULL;
    pthread_mutex_unlock(&spare.lock);
  }
  return t ? memset(t, 0, cap * sizeof *t) : tkc_calloc(cap, sizeof *t);
}

static void table_release(slot *t, size_t cap) {
  int l = cap_log(cap);
  if (t && l >= 0) {
    pthread_mutex_lock(&spare.lock);
    if (!spare.tables[l]) spare.tables[l] = t, t = NULL;
    pthread_mutex_unlock(&spare.lock);
  }
  tkc_free(t);
}

static void *arena_alloc(tkc_graph *g, size_t n) {
  n = (n + 15) & ~(size_t)15;
  chunk *c = g->chunks;
  if (!c || c->used + n > c->cap) {
    size_t cap = n > CHUNK_CAP ? n : CHUNK_CAP;
    c = NULL;
    if (cap == CHUNK_CAP) {
      pthread_mutex_lock(&spare.lock);
      if ((c = spare.chunks)) spare.chunks = c->next, spare.nchunks--;
      pthread_mutex_unlock(&spare.lock);
    }
    if (!c && !(c = tkc_malloc(sizeof(chunk) + cap))) return NULL;
    c->next = g->chunks;
    c->used = 0;
    c->cap = cap;
    g->chunks = c;
    g->bytes += sizeof(chunk) + cap;
  }
  void *p = c->data + c->used;
  c->used += n;
  return p;
}

tkc_graph *tkc_graph_new(void) {
  tkc_graph *g = tkc_calloc(1, sizeof *g);
  if (!g) return tkc_err_null(TKC_ENOMEM, "out of memory creating a graph");
  g->cap = 1024;
  g->table = table_alloc(g->cap);
  if (!g->table) {
    tkc_free(g);
    return tkc_err_null(TKC_ENOMEM, "out of memory creating a graph");
  }
  return g;
}

void tkc_graph_free(tkc_graph *g) {
  if (!g) return;
  chunk *extra = NULL; /* what the spares do not keep */
  pthread_mutex_lock(&spare.lock);
  for (chunk *c = g->chunks, *n; c; c = n) {
    n = c->next;
    if (c->cap == CHUNK_CAP && spare.nchunks < SPARE_CHUNKS) c->next = spare.chunks, spare.chunks = c, spare.nchunks++;
    else c->next = extra, extra = c;
  }
  pthread_mutex_unlock(&spare.lock);
  for (chunk *c = extra, *n; c; c = n) n = c->next, tkc_free(c);
  table_release(g->table, g->cap);
  tkc_free(g);
}

size_t tkc_graph_size(const tkc_graph *g) { return g ? g->count : 0; }
size_t tkc_graph_bytes(const tkc_graph *g) { return g ? g->bytes + g->cap * sizeof(slot) + sizeof *g : 0; }

/* ---------------------------------------------------------------- args */

tkc_arg tkc_arg_str(const char *s) {
  tkc_arg a = {TKC_ARG_STR, 0, {0}};
  a.v.s = s ? s : "";
  a.n = (uint32_t)strlen(a.v.s);
  return a;
}

static uint64_t mix(uint64_t h, uint64_t v) {
  h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
  return h * 0xff51afd7ed558ccdull;
}

static uint64_t arg_hash(const tkc_arg *a) {
  uint64_t h = mix(0x51ed27, a->kind);
  switch (a->kind) {
  case TKC_ARG_INT: return mix(h, (uint64_t)a->v.i);
  case TKC_ARG_FLOAT: { uint64_t b; memcpy(&b, &a->v.f, 8); return mix(h, b); }
  case TKC_ARG_PTR: return mix(h, (uint64_t)(uintptr_t)a->v.p);
  case TKC_ARG_STR:
    for (uint32_t i = 0; i < a->n; i++) h = mix(h, (unsigned char)a->v.s[i]);
    return h;
  case TKC_ARG_TUPLE:
    for (uint32_t i = 0; i < a->n; i++) h = mix(h, arg_hash(&a->v.t[i]));
    return mix(h, a->n);
  default: return h;
  }
}

bool tkc_arg_eq(const tkc_arg *a, const tkc_arg *b) {
  if (!a || !b) return a == b;
  if (a->kind != b->kind) return false;
  switch (a->kind) {
  case TKC_ARG_NONE: return true;
  case TKC_ARG_INT: return a->v.i == b->v.i;
  case TKC_ARG_FLOAT: return memcmp(&a->v.f, &b->v.f, sizeof(double)) == 0;
  case TKC_ARG_PTR: return a->v.p == b->v.p;
  case TKC_ARG_STR: return a->n == b->n && memcmp(a->v.s, b->v.s, a->n) == 0;
  case TKC_ARG_TUPLE:
    if (a->n != b->n) return false;
    for (uint32_t i = 0; i < a->n; i++)
      if (!tkc_arg_eq(&a->v.t[i], &b->v.t[i])) return false;
    return true;
  }
  return false;
}

/* An arg tkc_uop_new accepts: a known kind, text/elements present where a length says so, tuples
 * nested at most 16 deep (the copy and compare below recurse on them). */
static const char *arg_problem(const tkc_arg *a, int depth) {
  if (a->kind > TKC_ARG_PTR) return "unknown arg kind";
  if (a->kind == TKC_ARG_STR && a->n && !a->v.s) return "string arg with a length and no text";
  if (a->kind != TKC_ARG_TUPLE) return NULL;
  if (a->n && !a->v.t) return "tuple arg with a length and no elements";
  if (depth >= 16) return "tuple args nested more than 16 deep";
  for (uint32_t i = 0; i < a->n; i++) {
    const char *why = arg_problem(&a->v.t[i], depth + 1);
    if (why) return why;
  }
  return NULL;
}

/* Deep copy of an arg into the arena, so the UOp never points at caller memory. */
static int arg_copy(tkc_graph *g, tkc_arg *dst, const tkc_arg *src) {
  *dst = *src;
  if (src->kind == TKC_ARG_STR) {
    char *s = arena_alloc(g, src->n + 1);
    if (!s) return -1;
    memcpy(s, src->v.s, src->n);
    s[src->n] = 0;
    dst->v.s = s;
  } else if (src->kind == TKC_ARG_TUPLE) {
    tkc_arg *t = src->n ? arena_alloc(g, src->n * sizeof *t) : NULL;
    if (src->n && !t) return -1;
    for (uint32_t i = 0; i < src->n; i++)
      if (arg_copy(g, &t[i], &src->v.t[i])) return -1;
    dst->v.t = t;
  }
  return 0;
}

/* ---------------------------------------------------------------- range analysis */

static int range_known(tkc_dt dt) {
  return !dt.space && (dt.scalar == TKC_BOOL || (tkc_dtype_is_int((tkc_dtype)dt.scalar) && dt.scalar != TKC_UINT64));
}

void tkc_dt_range(tkc_dt dt, int64_t *lo, int64_t *hi) {
  if (range_known(dt)) {
    *lo = tkc_dtype_min((tkc_dtype)dt.scalar);
    *hi = tkc_dtype_max((tkc_dtype)dt.scalar);
  } else {
    *lo = INT64_MIN; /* no information (floats, pointers, uint64 beyond int64) */
    *hi = INT64_MAX;
  }
}

/* Sets u's bounds to [lo, hi] when they fit its dtype, else to the dtype's full range (the value may wrap). */
static void set_range(tkc_uop *u, __int128 lo, __int128 hi) {
  int64_t dlo, dhi;
  tkc_dt_range(u->dtype, &dlo, &dhi);
  if (lo > hi || lo < dlo || hi > dhi) {
    u->vmin = dlo;
    u->vmax = dhi;
  } else {
    u->vmin = (int64_t)lo;
    u->vmax = (int64_t)hi;
  }
}

static __int128 tdiv(__int128 a, __int128 b) { return a / b; } /* C division truncates toward zero */
static __int128 min2(__int128 a, __int128 b) { return a < b ? a : b; }
static __int128 max2(__int128 a, __int128 b) { return a > b ? a : b; }

static int arg_int(const tkc_arg *a, uint32_t i, int64_t *out) {
  if (a->kind != TKC_ARG_TUPLE || i >= a->n) return 0;
  const tkc_arg *e = &a->v.t[i];
  if (e->kind == TKC_ARG_INT) *out = e->v.i;
  else if (e->kind == TKC_ARG_FLOAT) *out = (int64_t)e->v.f;
  else return 0;
  return 1;
}

/* tinygrad's UOp._min_max, with exact truncating division and overflow-aware sums. */
static void compute_range(tkc_uop *u) {
  int64_t dlo, dhi;
  tkc_dt_range(u->dtype, &dlo, &dhi);
  u->vmin = dlo;
  u->vmax = dhi;
  if (!range_known(u->dtype)) {
    if (u->op == TKC_OP_CONST && u->arg.kind == TKC_ARG_INT && u->dtype.scalar == TKC_UINT64 && u->arg.v.i >= 0)
      u->vmin = u->vmax = u->arg.v.i;
    return;
  }
  tkc_uop *const *s = u->src;
  unsigned fl = tkc_op_flags((tkc_op)u->op);
  if ((fl & TKC_F_B) && u->nsrc == 2 && !tkc_dt_is_float(s[0]->dtype) && range_known(s[0]->dtype) &&
      range_known(s[1]->dtype)) {
    __int128 a0 = s[0]->vmin, a1 = s[0]->vmax, b0 = s[1]->vmin, b1 = s[1]->vmax;
    switch (u->op) {
    case TKC_OP_ADD: set_range(u, a0 + b0, a1 + b1); return;
    case TKC_OP_MUL: {
      __int128 p[4] = {a0 * b0, a0 * b1, a1 * b0, a1 * b1};
      set_range(u, min2(min2(p[0], p[1]), min2(p[2], p[3])), max2(max2(p[0], p[1]), max2(p[2], p[3])));
      return;
    }
    case TKC_OP_SHL:
      if (b0 == b1 && b0 >= 0 && b0 < 63) set_range(u, a0 * ((__int128)1 << (int)b0), a1 * ((__int128)1 << (int)b0));
      return;
    case TKC_OP_SHR:
      if (b0 == b1 && b0 >= 0 && b0 < 64) set_range(u, a0 >> (int)b0, a1 >> (int)b0);
      return;
    case TKC_OP_MOD:
      if (b0 > 0) {
        if (a0 >= 0) set_range(u, 0, min2(b1 - 1, a1));
        else set_range(u, -(b1 - 1), b1 - 1);
      }
      return;
    case TKC_OP_IDIV:
      if (b0 == b1 && b0 != 0) { /* truncation is monotonic: the ends map to the ends */
        __int128 x = tdiv(a0, b0), y = tdiv(a1, b0);
        set_range(u, min2(x, y), max2(x, y));
        return;
      }
      /* only the signs are known (x/0 is 0, so a divisor range touching 0 is fine) */
      if ((a0 >= 0 && b0 >= 0) || (a1 <= 0 && b1 <= 0)) { u->vmin = 0; return; }
      if ((a0 >= 0 && b1 <= 0) || (a1 <= 0 && b0 >= 0)) { u->vmax = 0; return; }
      return;
    case TKC_OP_MAX: set_range(u, max2(a0, b0), max2(a1, b1)); return;
    case TKC_OP_CMPLT: u->vmin = a1 < b0; u->vmax = a0 < b1; return;
    case TKC_OP_CMPNE: u->vmin = (a1 < b0) || (b1 < a0); u->vmax = !(a0 == a1 && a1 == b0 && b0 == b1); return;
    case TKC_OP_AND:
      if (u->dtype.scalar == TKC_BOOL) { u->vmin = a0 && b0; u->vmax = a1 && b1; }
      else if (b0 == b1 && b0 >= 0) set_range(u, 0, b0); /* x & c lies in [0, c] for c >= 0 */
      else if (a0 == a1 && a0 >= 0) set_range(u, 0, a0);
      return;
    case TKC_OP_OR:
      if (u->dtype.scalar == TKC_BOOL) { u->vmin = a0 || b0; u->vmax = a1 || b1; }
      return;
    default: return;
    }
  }
  switch (u->op) {
  case TKC_OP_WHERE:
    if (u->nsrc == 3 && range_known(s[1]->dtype) && range_known(s[2]->dtype))
      set_range(u, min2(s[1]->vmin, s[2]->vmin), max2(s[1]->vmax, s[2]->vmax));
    return;
  case TKC_OP_DEFINE_VAR: {
    int64_t lo, hi;
    if (arg_int(&u->arg, 1, &lo) && arg_int(&u->arg, 2, &hi)) set_range(u, lo, hi);
    return;
  }
  case TKC_OP_RANGE:
    if (u->nsrc >= 2 && range_known(s[0]->dtype) && range_known(s[1]->dtype)) set_range(u, s[0]->vmin, (__int128)s[1]->vmax - 1);
    return;
  case TKC_OP_BIND:
    if (u->nsrc >= 1) { u->vmin = s[0]->vmin; u->vmax = s[0]->vmax; }
    return;
  case TKC_OP_UNROLL:
  case TKC_OP_VECTORIZE: {
    if (u->nsrc == 0) return;
    __int128 lo = s[0]->vmin, hi = s[0]->vmax;
    for (int i = 1; i < u->nsrc; i++) { lo = min2(lo, s[i]->vmin); hi = max2(hi, s[i]->vmax); }
    set_range(u, lo, hi);
    return;
  }
  case TKC_OP_SPECIAL: {
    int64_t n;
    if (arg_int(&u->arg, 1, &n)) set_range(u, 0, (__int128)n - 1);
    return;
  }
  case TKC_OP_CONST:
    if (u->arg.kind == TKC_ARG_INT) set_range(u, u->arg.v.i, u->arg.v.i);
    return;
  case TKC_OP_VCONST:
    if (u->arg.kind == TKC_ARG_TUPLE && u->arg.n > 0) {
      __int128 lo = INT64_MAX, hi = INT64_MIN;
      for (uint32_t i = 0; i < u->arg.n; i++) {
        if (u->arg.v.t[i].kind != TKC_ARG_INT) return;
        lo = min2(lo, u->arg.v.t[i].v.i);
        hi = max2(hi, u->arg.v.t[i].v.i);
      }
      set_range(u, lo, hi);
    }
    return;
  case TKC_OP_CAST: /* int -> int keeps the range when it fits (set_range widens it otherwise) */
    if (u->nsrc == 1 && range_known(s[0]->dtype) && !tkc_dt_is_float(s[0]->dtype)) set_range(u, s[0]->vmin, s[0]->vmax);
    return;
  default: return;
  }
}

/* ---------------------------------------------------------------- interning */

static uint64_t node_hash(tkc_op op, tkc_dt dt, int nsrc, tkc_uop *const *src, const tkc_arg *arg) {
  uint64_t h = mix(op, (uint64_t)dt.scalar | (uint64_t)dt.space << 8 | (uint64_t)dt.count << 16 | (uint64_t)dt.pcount << 32);
  h = mix(h, (uint64_t)(uint32_t)dt.size);
  for (int i = 0; i < nsrc; i++) h = mix(h, src[i]->hash);
  return mix(h, arg_hash(arg));
}

static bool node_eq(const tkc_uop *u, tkc_op op, tkc_dt dt, int nsrc, tkc_uop *const *src, const tkc_arg *arg) {
  if (u->op != op || u->nsrc != nsrc || !tkc_dt_eq(u->dtype, dt)) return false;
  for (int i = 0; i < nsrc; i++)
    if (u->src[i] != src[i]) return false;
  return tkc_arg_eq(&u->arg, arg);
}

static int table_grow(tkc_graph *g) {
  size_t cap = g->cap * 2;
  slot *t = table_alloc(cap);
  if (!t) return -1;
  for (size_t i = 0; i < g->cap; i++) {
    if (!g->table[i].u) continue;
    size_t j = g->table[i].hash & (cap - 1);
    while (t[j].u) j = (j + 1) & (cap - 1);
    t[j] = g->table[i];
  }
  table_release(g->table, g->cap);
  g->table = t;
  g->cap = cap;
  return 0;
}

tkc_uop *tkc_uop_new(tkc_graph *g, tkc_op op, tkc_dt dt, int nsrc, tkc_uop *const *src, tkc_arg arg) {
  if (!g) return tkc_err_null(TKC_EINVAL, "tkc_uop_new: NULL graph");
  if ((unsigned)op >= TKC_NOPS) return tkc_err_null(TKC_EINVAL, "tkc_uop_new: bad op %d", (int)op);
  if (nsrc < 0 || nsrc > 65535 || (nsrc && !src)) return tkc_err_null(TKC_EINVAL, "tkc_uop_new: bad source list");
  for (int i = 0; i < nsrc; i++) /* a NULL source passes the failure that made it on (TKC_ENOMEM, say) */
    if (!src[i]) return tkc_last_status() ? NULL : tkc_err_null(TKC_EINVAL, "tkc_uop_new: source %d of %s is NULL", i, op_names[op]);
  if (dt.scalar >= TKC_NDTYPES || !dt.count || (dt.space && !dt.pcount)) return tkc_err_null(TKC_EINVAL, "tkc_uop_new: bad dtype for %s", op_names[op]);
  unsigned fl = tkc_op_flags(op);
  int want = fl & TKC_F_U ? 1 : fl & TKC_F_B ? 2 : fl & TKC_F_T ? 3 : -1;
  if (want >= 0 && nsrc != want)
    return tkc_err_null(TKC_EINVAL, "tkc_uop_new: %s takes %d source%s, got %d", op_names[op], want, want == 1 ? "" : "s", nsrc);
  const char *why = arg_problem(&arg, 0);
  if (why) return tkc_err_null(TKC_EINVAL, "tkc_uop_new: %s: %s", op_names[op], why);
  uint64_t h = node_hash(op, dt, nsrc, src, &arg);
  size_t mask = g->cap - 1, i = h & mask;
  for (; g->table[i].u; i = (i + 1) & mask)
    if (g->table[i].hash == h && node_eq(g->table[i].u, op, dt, nsrc, src, &arg)) return g->table[i].u;

  if ((g->count + 1) * 2 > g->cap) {
    if (table_grow(g)) return tkc_err_null(TKC_ENOMEM, "out of memory growing the UOp table");
    mask = g->cap - 1;
    for (i = h & mask; g->table[i].u; i = (i + 1) & mask) {}
  }
  tkc_uop *u = arena_alloc(g, sizeof *u + (size_t)nsrc * sizeof(tkc_uop *));
  if (!u) return tkc_err_null(TKC_ENOMEM, "out of memory building a UOp");
  tkc_uop **s = (tkc_uop **)(u + 1);
  if (nsrc) memcpy(s, src, (size_t)nsrc * sizeof *s);
  u->op = (uint16_t)op;
  u->nsrc = (uint16_t)nsrc;
  u->id = (uint32_t)g->count;
  u->dtype = dt;
  u->src = s;
  u->hash = h;
  if (arg_copy(g, &u->arg, &arg)) return tkc_err_null(TKC_ENOMEM, "out of memory copying a UOp arg");
  compute_range(u);
  g->table[i] = (slot){h, u};
  g->count++;
  return u;
}

/* ---------------------------------------------------------------- constructors */

tkc_uop *tkc_uop_alu1(tkc_graph *g, tkc_op op, tkc_uop *a) {
  if (!a) return tkc_err_null(TKC_EINVAL, "tkc_uop_alu1: NULL source");
  return tkc_uop_new(g, op, a->dtype, 1, &a, tkc_arg_none());
}

static tkc_dt alu_dtype(tkc_op op, tkc_uop *last) {
  if (op == TKC_OP_CMPLT || op == TKC_OP_CMPNE) return tkc_dt_vec(tkc_dt_of(TKC_BOOL), last->dtype.count);
  return last->dtype;
}

tkc_uop *tkc_uop_alu2(tkc_graph *g, tkc_op op, tkc_uop *a, tkc_uop *b) {
  if (!a || !b) return tkc_err_null(TKC_EINVAL, "tkc_uop_alu2(%s): NULL source", tkc_op_name(op) ? tkc_op_name(op) : "?");
  tkc_uop *s[2] = {a, b};
  return tkc_uop_new(g, op, alu_dtype(op, b), 2, s, tkc_arg_none());
}

tkc_uop *tkc_uop_alu3(tkc_graph *g, tkc_op op, tkc_uop *a, tkc_uop *b, tkc_uop *c) {
  if (!a || !b || !c) return tkc_err_null(TKC_EINVAL, "tkc_uop_alu3: NULL source");
  tkc_uop *s[3] = {a, b, c};
  return tkc_uop_new(g, op, c->dtype, 3, s, tkc_arg_none());
}

tkc_uop *tkc_uop_const_int(tkc_graph *g, tkc_dt dt, int64_t v) {
  tkc_value x = {.i = v};
  tkc_dtype sc = (tkc_dtype)dt.scalar;
  if (tkc_dtype_is_float(sc)) x = tkc_value_cast(x, TKC_INT64, sc);
  else x = tkc_value_truncate(x, sc);
  return tkc_uop_new(g, TKC_OP_CONST, dt, 0, NULL, tkc_value_to_arg(x, sc));
}

tkc_uop *tkc_uop_const_float(tkc_graph *g, tkc_dt dt, double v) {
  tkc_value x = {.f = v};
  tkc_dtype sc = (tkc_dtype)dt.scalar;
  x = tkc_value_cast(x, TKC_FLOAT64, sc);
  return tkc_uop_new(g, TKC_OP_CONST, dt, 0, NULL, tkc_value_to_arg(x, sc));
}

tkc_uop *tkc_uop_const_like(tkc_graph *g, const tkc_uop *like, double v) {
  if (!like) return tkc_err_null(TKC_EINVAL, "tkc_uop_const_like: NULL");
  if (tkc_dt_is_float(like->dtype)) return tkc_uop_const_float(g, like->dtype, v);
  tkc_value x = tkc_value_cast((tkc_value){.f = v}, TKC_FLOAT64, (tkc_dtype)like->dtype.scalar);
  return tkc_uop_new(g, TKC_OP_CONST, like->dtype, 0, NULL, tkc_value_to_arg(x, (tkc_dtype)like->dtype.scalar));
}

tkc_uop *tkc_uop_const_like_int(tkc_graph *g, const tkc_uop *like, int64_t v) {
  if (!like) return tkc_err_null(TKC_EINVAL, "tkc_uop_const_like_int: NULL");
  return tkc_uop_const_int(g, like->dtype, v);
}

tkc_uop *tkc_uop_var(tkc_graph *g, const char *name, int64_t vmin, int64_t vmax) {
  if (!name) return tkc_err_null(TKC_EINVAL, "tkc_uop_var: NULL name");
  if (vmin > vmax) return tkc_err_null(TKC_EINVAL, "tkc_uop_var: %s has min %lld > max %lld", name, (long long)vmin, (long long)vmax);
  tkc_arg t[3] = {tkc_arg_str(name), tkc_arg_int(vmin), tkc_arg_int(vmax)};
  return tkc_uop_new(g, TKC_OP_DEFINE_VAR, tkc_dt_of(TKC_INT32), 0, NULL, tkc_arg_tuple(t, 3));
}

tkc_uop *tkc_uop_range(tkc_graph *g, tkc_uop *start, tkc_uop *end, int64_t axis) {
  if (!start || !end) return tkc_err_null(TKC_EINVAL, "tkc_uop_range: NULL bound");
  tkc_uop *s[2] = {start, end};
  /* the loop counter has the bounds' index dtype: int32, or int64 for kernels past 2^31 elements */
  tkc_dt dt = tkc_dt_of(end->dtype.scalar == TKC_INT64 ? TKC_INT64 : TKC_INT32);
  return tkc_uop_new(g, TKC_OP_RANGE, dt, 2, s, tkc_arg_int(axis));
}

tkc_uop *tkc_uop_special(tkc_graph *g, const char *name, int64_t size) {
  if (!name || size < 1) return tkc_err_null(TKC_EINVAL, "tkc_uop_special: bad name or size");
  tkc_arg t[2] = {tkc_arg_str(name), tkc_arg_int(size)};
  return tkc_uop_new(g, TKC_OP_SPECIAL, tkc_dt_of(TKC_INT32), 0, NULL, tkc_arg_tuple(t, 2));
}

tkc_uop *tkc_uop_cast(tkc_graph *g, tkc_uop *a, tkc_dt dt) {
  if (!a) return tkc_err_null(TKC_EINVAL, "tkc_uop_cast: NULL source");
  return tkc_dt_eq(a->dtype, dt) ? a : tkc_uop_new(g, TKC_OP_CAST, dt, 1, &a, tkc_arg_none());
}

tkc_uop *tkc_uop_bitcast(tkc_graph *g, tkc_uop *a, tkc_dt dt) {
  if (!a) return tkc_err_null(TKC_EINVAL, "tkc_uop_bitcast: NULL source");
  return tkc_dt_eq(a->dtype, dt) ? a : tkc_uop_new(g, TKC_OP_BITCAST, dt, 1, &a, tkc_arg_none());
}

tkc_uop *tkc_uop_sink(tkc_graph *g, int nsrc, tkc_uop *const *src) {
  return tkc_uop_new(g, TKC_OP_SINK, tkc_dt_of(TKC_VOID), nsrc, src, tkc_arg_none());
}

bool tkc_uop_is_const(const tkc_uop *u) { return u && u->op == TKC_OP_CONST; }
int64_t tkc_uop_const_i(const tkc_uop *u) {
  if (!u) return 0;
  return u->arg.kind == TKC_ARG_FLOAT ? (int64_t)u->arg.v.f : u->arg.v.i;
}
double tkc_uop_const_f(const tkc_uop *u) {
  if (!u) return 0;
  if (u->arg.kind == TKC_ARG_FLOAT) return u->arg.v.f;
  return u->dtype.scalar == TKC_UINT64 ? (double)(uint64_t)u->arg.v.i : (double)u->arg.v.i;
}

/* ---------------------------------------------------------------- ordering (tinygrad's tuplize) */

static int cmp_i64(int64_t a, int64_t b) { return (a > b) - (a < b); }

static int arg_cmp(const tkc_arg *a, const tkc_arg *b) {
  if (a->kind != b->kind) return cmp_i64(a->kind, b->kind);
  switch (a->kind) {
  case TKC_ARG_INT: return cmp_i64(a->v.i, b->v.i);
  case TKC_ARG_FLOAT: return (a->v.f > b->v.f) - (a->v.f < b->v.f);
  case TKC_ARG_PTR: return ((uintptr_t)a->v.p > (uintptr_t)b->v.p) - ((uintptr_t)a->v.p < (uintptr_t)b->v.p);
  case TKC_ARG_STR: return strcmp(a->v.s, b->v.s);
  case TKC_ARG_TUPLE:
    for (uint32_t i = 0; i < a->n && i < b->n; i++) {
      int c = arg_cmp(&a->v.t[i], &b->v.t[i]);
      if (c) return c;
    }
    return cmp_i64(a->n, b->n);
  default: return 0;
  }
}

int tkc_uop_cmp(const tkc_uop *a, const tkc_uop *b) {
  if (a == b) return 0;
  int c = cmp_i64(a->op, b->op);
  if (!c) c = arg_cmp(&a->arg, &b->arg);
  if (!c) c = cmp_i64(a->dtype.scalar, b->dtype.scalar);
  if (!c) c = cmp_i64(a->dtype.count, b->dtype.count);
  if (!c) c = cmp_i64(a->dtype.space, b->dtype.space);
  for (int i = 0; !c && i < a->nsrc && i < b->nsrc; i++) c = tkc_uop_cmp(a->src[i], b->src[i]);
  if (!c) c = cmp_i64(a->nsrc, b->nsrc);
  return c;
}
