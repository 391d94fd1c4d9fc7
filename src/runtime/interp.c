/* src/runtime/interp.c — the INTERP device: executes the linearized UOp list directly (tinygrad's
 * PYTHON device, runtime/ops_python.py). Every ALU op goes through the constant-evaluation table
 * (tkc_alu_eval), casts through tkc_value_cast / tkc_value_bitcast, so this is the slow, simple
 * reference that every other device is tested against.
 *
 * Kernel form executed (see the comment above struct tkc_renderer in tkc/render.h):
 *   DEFINE_GLOBAL ptr(T) arg = buffer number     DEFINE_VAR int, found in k->vars by pointer
 *   DEFINE_LOCAL ptr(T, size): scratch memory, only without lidx SPECIALs (one thread per group)
 *   CONST (scalar, or a vector dtype broadcast), VCONST arg = (v0, v1, ...)
 *   SPECIAL arg = (name, size) with name gidxN / lidxN / idxN: the whole list is run once for every
 *     point of the launch grid (all SPECIALs together), sequentially
 *   RANGE(start, end) ... ENDRANGE(range)        IF(gate[, ...]) ... ENDIF(if)    BARRIER: nothing
 *   DEFINE_ACC(init, range...) set to init when reached; ASSIGN(acc, v) writes the acc (the ASSIGN's
 *     value is the accumulator's storage: reading it after a zero-trip loop gives the init)
 *   INDEX(buf, idx[, gate]) -> buf + idx elements (a false gate marks the access as not performed:
 *     loads give 0 / alt, stores are skipped)
 *   CAST(ptr) to ptr(T.vec(n)): same address, vector element type
 *   LOAD(ptr[, void...]) | LOAD(ptr, alt, gate[, void...])   STORE(ptr, val[, IF | bool gate])
 *   VECTORIZE GEP(arg (i, ...)) CAST BITCAST and every ALU op tkc_alu_eval knows.
 * Values live in one slot per UOp, one tkc_value per vector lane; pointers as (base, element offset,
 * performed) per lane. A vector of pointers (ptr pcount n) is supported for INDEX/GEP/VECTORIZE and
 * lane-wise LOAD/STORE. Buffers do not carry their sizes: the kernel is trusted not to index out of
 * bounds. Unsupported (TKC_EUNSUPPORTED): WMMA, CUSTOM, THREEFRY (no table row), DEFINE_LOCAL with
 * local indices, ASSIGN to anything but a DEFINE_ACC, and every op outside the form above. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "runtime/device.h"
#include "runtime/host_mem.h"

/* ---------------------------------------------------------------- availability (memory: host_mem.c) */

static int interp_available(char *why, size_t n) {
  (void)why;
  (void)n;
  return 1;
}

/* ---------------------------------------------------------------- the compiled form */

enum {
  K_NOP = 0,  /* nothing at run time (BARRIER, ENDIF, and the values set up before the loop) */
  K_CONST,    /* CONST / VCONST / DEFINE_VAR / DEFINE_GLOBAL / DEFINE_LOCAL: set once per launch */
  K_SPECIAL,  /* set per grid point */
  K_RANGE,
  K_ENDRANGE,
  K_IF,
  K_ACC,
  K_ASSIGN,
  K_INDEX,
  K_PCOPY,    /* CAST of a pointer */
  K_LOAD,
  K_STORE,
  K_VECTORIZE,
  K_GEP,
  K_CAST,
  K_BITCAST,
  K_ALU,
};

typedef struct step {
  uint8_t kind;
  uint8_t isptr;   /* the slot holds pointer lanes */
  uint8_t dt;      /* scalar dtype of the value (pointers: of the element) */
  uint8_t in_dt;   /* ALU: operand dtype of src[0] (CMP/WHERE); CAST/BITCAST: source dtype */
  uint16_t op;
  uint16_t nsrc;   /* ALU: number of operands */
  int32_t nl;      /* lanes: dtype.count for values, pcount for pointers */
  int32_t s[3];    /* instruction indices of the value sources (-1 none) */
  uint8_t cast[3]; /* ALU: dtype to cast operand i to before evaluating (TKC_VOID: no cast) */
  int32_t jump;    /* RANGE: its ENDRANGE; ENDRANGE: its RANGE; IF: its ENDIF */
  int32_t ext, next; /* VECTORIZE: sources / GEP: lanes, in the pool */
  int32_t ptrstride; /* LOAD/STORE: 1 when lane j uses pointer lane j, else 0 (consecutive elements) */
  size_t slot;     /* offset into the value or pointer storage */
  size_t extra;    /* DEFINE_LOCAL: byte offset of its memory; SPECIAL: grid dimension */
  const tkc_uop *u;
} step;

typedef struct interp_prog {
  size_t n;
  step *ins;
  int32_t *pool;
  size_t nvals, nptrs, local_bytes, scratch_bytes;
  int ndims;
  int64_t *dim_size;  /* per grid dimension (distinct SPECIAL name) */
} interp_prog;

typedef struct iptr {
  char *base;
  int64_t off; /* elements */
  int64_t ok;  /* the access is performed (gate) */
} iptr;

static void interp_release(void *handle) {
  interp_prog *p = handle;
  if (!p) return;
  tkc_free(p->ins);
  tkc_free(p->pool);
  tkc_free(p->dim_size);
  tkc_free(p);
}

/* pointer -> index map used while compiling (open addressing on the UOp address) */
typedef struct umap {
  const tkc_uop **key;
  int32_t *val;
  size_t cap;
} umap;

static size_t umap_hash(const tkc_uop *u, size_t cap) {
  uint64_t x = (uint64_t)(uintptr_t)u;
  x ^= x >> 33;
  x *= UINT64_C(0xff51afd7ed558ccd);
  x ^= x >> 33;
  return (size_t)x & (cap - 1);
}

static int umap_get(const umap *m, const tkc_uop *u) {
  for (size_t h = umap_hash(u, m->cap);; h = (h + 1) & (m->cap - 1)) {
    if (!m->key[h]) return -1;
    if (m->key[h] == u) return m->val[h];
  }
}

static void umap_put(umap *m, const tkc_uop *u, int32_t v) {
  size_t h = umap_hash(u, m->cap);
  while (m->key[h] && m->key[h] != u) h = (h + 1) & (m->cap - 1);
  m->key[h] = u;
  m->val[h] = v;
}

static const char *opname(const tkc_uop *u) {
  const char *s = tkc_op_name((tkc_op)u->op);
  return s ? s : "?";
}

static tkc_status unsupported(const tkc_uop *u) {
  char b[64];
  return tkc_err(TKC_EUNSUPPORTED, "INTERP: cannot execute %s of %s", opname(u), tkc_dt_str(u->dtype, b, sizeof b));
}

static tkc_status malformed(const tkc_uop *u, size_t i, const char *why) {
  char b[64];
  return tkc_err(TKC_EINVAL, "INTERP: malformed kernel: %s of %s at %zu: %s", opname(u), tkc_dt_str(u->dtype, b, sizeof b),
                 i, why);
}

static int is_void(tkc_dt dt) { return !dt.space && dt.scalar == TKC_VOID; }
static int is_value(tkc_dt dt) { return !dt.space && dt.scalar < TKC_VOID; }
static int is_intlike(tkc_dt dt) { return !dt.space && (tkc_dtype_is_int((tkc_dtype)dt.scalar) || dt.scalar == TKC_BOOL); }

/* Parses a SPECIAL's (name, size). */
static int special_arg(const tkc_uop *u, const char **name, int64_t *size) {
  const tkc_arg *a = &u->arg;
  if (a->kind != TKC_ARG_TUPLE || a->n != 2 || a->v.t[0].kind != TKC_ARG_STR || a->v.t[1].kind != TKC_ARG_INT) return 0;
  const char *s = a->v.t[0].v.s;
  if (!s) return 0;
  size_t pre = !strncmp(s, "gidx", 4) || !strncmp(s, "lidx", 4) ? 4 : !strncmp(s, "idx", 3) ? 3 : 0;
  if (!pre || !s[pre]) return 0;
  for (const char *c = s + pre; *c; c++)
    if (*c < '0' || *c > '9') return 0;
  *name = s;
  *size = a->v.t[1].v.i;
  return *size >= 0;
}

typedef struct cctx {
  const tkc_kernel *k;
  interp_prog *p;
  umap m;
  size_t npool, cappool;
  int has_lidx, has_local;
  const char **dim_names;
} cctx;

static int pool_push(cctx *c, int32_t v) {
  if (c->npool == c->cappool) {
    size_t nc = c->cappool ? c->cappool * 2 : 64;
    int32_t *np = tkc_realloc(c->p->pool, nc * sizeof *np);
    if (!np) return 0;
    c->p->pool = np;
    c->cappool = nc;
  }
  c->p->pool[c->npool++] = v;
  return 1;
}

/* The instruction index of source j of u (must come earlier in the list); -1 + error otherwise. */
static int src_index(cctx *c, const tkc_uop *u, size_t i, int j) {
  int s = umap_get(&c->m, u->src[j]);
  if (s < 0 || (size_t)s >= i) {
    malformed(u, i, "a source is not defined before its use");
    return -1;
  }
  return s;
}

/* Lane-count compatibility: a source of nl lanes or a broadcast scalar. */
static int lanes_ok(const step *src, int32_t nl) { return src->nl == nl || src->nl == 1; }

static tkc_status compile_one(cctx *c, size_t i) {
  const tkc_kernel *k = c->k;
  interp_prog *p = c->p;
  step *I = &p->ins[i];
  const tkc_uop *u = k->uops[i];
  tkc_dt dt = u->dtype;
  int src[64];
  int ns = u->nsrc < 64 ? u->nsrc : 64;
  I->u = u;
  I->op = u->op;
  I->s[0] = I->s[1] = I->s[2] = -1;
  I->cast[0] = I->cast[1] = I->cast[2] = TKC_VOID;
  I->jump = -1;
  I->dt = dt.scalar;
  I->isptr = dt.space != TKC_SPACE_NONE;
  I->nl = I->isptr ? dt.pcount : dt.count;
  if (dt.scalar > TKC_VOID || I->nl < 1) return malformed(u, i, "bad dtype");
  /* DEFINE_ACC's RANGE sources come after it (it is placed right before its reduce loop) */
  if (u->op == TKC_OP_DEFINE_ACC && ns > 1) ns = 1;
  if (u->op != TKC_OP_VECTORIZE)
    for (int j = 0; j < ns; j++)
      if ((src[j] = src_index(c, u, i, j)) < 0) return tkc_last_status();

  switch ((tkc_op)u->op) {
  case TKC_OP_DEFINE_GLOBAL:
    if (!I->isptr || I->nl != 1 || dt.count != 1 || dt.scalar == TKC_VOID) return unsupported(u);
    if (u->arg.kind != TKC_ARG_INT || u->arg.v.i < 0 || u->arg.v.i >= k->nbufs) return malformed(u, i, "bad buffer number");
    I->kind = K_CONST;
    return TKC_OK;
  case TKC_OP_DEFINE_LOCAL: {
    if (!I->isptr || I->nl != 1 || dt.count != 1 || dt.scalar == TKC_VOID || dt.size < 0) return unsupported(u);
    size_t nb = (size_t)dt.size * tkc_dtype_size((tkc_dtype)dt.scalar);
    nb = (nb + 63) & ~(size_t)63;
    I->extra = p->local_bytes;
    p->local_bytes += nb;
    c->has_local = 1;
    I->kind = K_CONST;
    return TKC_OK;
  }
  case TKC_OP_DEFINE_VAR: {
    if (!is_intlike(dt) || dt.count != 1) return unsupported(u);
    int found = -1;
    for (int j = 0; j < k->nvars; j++)
      if (k->vars && k->vars[j] == u) found = j;
    if (found < 0) return malformed(u, i, "DEFINE_VAR not in the kernel's vars");
    I->extra = (size_t)found;
    I->kind = K_CONST;
    return TKC_OK;
  }
  case TKC_OP_CONST:
    if (!is_value(dt) || (u->arg.kind != TKC_ARG_INT && u->arg.kind != TKC_ARG_FLOAT)) return unsupported(u);
    I->kind = K_CONST;
    return TKC_OK;
  case TKC_OP_VCONST:
    if (!is_value(dt) || u->arg.kind != TKC_ARG_TUPLE || u->arg.n != (uint32_t)I->nl) return unsupported(u);
    for (uint32_t j = 0; j < u->arg.n; j++)
      if (u->arg.v.t[j].kind != TKC_ARG_INT && u->arg.v.t[j].kind != TKC_ARG_FLOAT) return unsupported(u);
    I->kind = K_CONST;
    return TKC_OK;
  case TKC_OP_SPECIAL: {
    const char *name;
    int64_t size;
    if (!is_intlike(dt) || dt.count != 1 || !special_arg(u, &name, &size)) return unsupported(u);
    if (name[0] == 'l') c->has_lidx = 1;
    int d = 0;
    while (d < p->ndims && strcmp(c->dim_names[d], name)) d++;
    if (d == p->ndims) {
      c->dim_names[d] = name;
      p->dim_size[d] = size;
      p->ndims++;
    } else if (p->dim_size[d] != size) {
      return malformed(u, i, "two sizes for one launch index");
    }
    I->extra = (size_t)d;
    I->kind = K_SPECIAL;
    return TKC_OK;
  }
  case TKC_OP_RANGE: {
    if (!is_intlike(dt) || dt.count != 1 || u->nsrc != 2) return unsupported(u);
    for (int j = 0; j < 2; j++)
      if (p->ins[src[j]].isptr || !is_intlike(k->uops[src[j]]->dtype)) return malformed(u, i, "non-integer bound");
    I->s[0] = src[0];
    I->s[1] = src[1];
    I->kind = K_RANGE;
    return TKC_OK; /* jump filled in by its ENDRANGE */
  }
  case TKC_OP_ENDRANGE:
    if (u->nsrc < 1 || k->uops[src[0]]->op != TKC_OP_RANGE) return malformed(u, i, "ENDRANGE of a non-RANGE");
    if (p->ins[src[0]].jump >= 0) return malformed(u, i, "RANGE closed twice");
    p->ins[src[0]].jump = (int32_t)i;
    I->jump = src[0];
    I->kind = K_ENDRANGE;
    return TKC_OK;
  case TKC_OP_IF:
    if (u->nsrc < 1 || p->ins[src[0]].isptr || !is_value(k->uops[src[0]]->dtype) || p->ins[src[0]].nl != 1)
      return unsupported(u);
    I->s[0] = src[0];
    I->kind = K_IF;
    return TKC_OK;
  case TKC_OP_ENDIF:
    if (u->nsrc < 1 || k->uops[src[0]]->op != TKC_OP_IF) return malformed(u, i, "ENDIF of a non-IF");
    if (p->ins[src[0]].jump >= 0) return malformed(u, i, "IF closed twice");
    p->ins[src[0]].jump = (int32_t)i;
    I->kind = K_NOP;
    return TKC_OK;
  case TKC_OP_BARRIER:
  case TKC_OP_SINK: /* tolerated: nothing to do */
  case TKC_OP_NAME:
    I->kind = K_NOP;
    return TKC_OK;
  case TKC_OP_DEFINE_ACC:
    if (!is_value(dt) || u->nsrc < 1 || p->ins[src[0]].isptr || !lanes_ok(&p->ins[src[0]], I->nl) ||
        k->uops[src[0]]->dtype.scalar != dt.scalar)
      return unsupported(u);
    I->s[0] = src[0];
    I->kind = K_ACC;
    return TKC_OK;
  case TKC_OP_ASSIGN:
    if (!is_value(dt) || u->nsrc != 2 || k->uops[src[0]]->op != TKC_OP_DEFINE_ACC || p->ins[src[0]].nl != I->nl ||
        p->ins[src[1]].isptr || !lanes_ok(&p->ins[src[1]], I->nl) || k->uops[src[1]]->dtype.scalar != dt.scalar)
      return unsupported(u);
    I->s[0] = src[0];
    I->s[1] = src[1];
    I->kind = K_ASSIGN;
    return TKC_OK;
  case TKC_OP_INDEX:
    if (!I->isptr || u->nsrc < 2 || u->nsrc > 3 || !p->ins[src[0]].isptr || p->ins[src[1]].isptr ||
        !is_intlike(k->uops[src[1]]->dtype) || !lanes_ok(&p->ins[src[0]], I->nl) || !lanes_ok(&p->ins[src[1]], I->nl) ||
        k->uops[src[0]]->dtype.scalar != dt.scalar || k->uops[src[0]]->dtype.count != 1 || dt.count != 1)
      return unsupported(u); /* vector element pointers come from CAST(INDEX) */
    if (u->nsrc == 3 && (p->ins[src[2]].isptr || !is_value(k->uops[src[2]]->dtype) || !lanes_ok(&p->ins[src[2]], I->nl)))
      return unsupported(u);
    for (int j = 0; j < u->nsrc; j++) I->s[j] = src[j];
    I->kind = K_INDEX;
    return TKC_OK;
  case TKC_OP_CAST:
  case TKC_OP_BITCAST: {
    if (u->nsrc != 1) return unsupported(u);
    const step *S = &p->ins[src[0]];
    tkc_dt sdt = k->uops[src[0]]->dtype;
    I->s[0] = src[0];
    I->in_dt = sdt.scalar;
    if (I->isptr || S->isptr) {
      /* a pointer cast: same address, the element type may become a vector of the same scalar */
      if (u->op != TKC_OP_CAST || !I->isptr || !S->isptr || sdt.scalar != dt.scalar || S->nl != I->nl) return unsupported(u);
      I->kind = K_PCOPY;
      return TKC_OK;
    }
    if (!is_value(dt) || !is_value(sdt)) return unsupported(u);
    if (u->op == TKC_OP_CAST) {
      if (!lanes_ok(S, I->nl)) return unsupported(u);
      I->kind = K_CAST;
      return TKC_OK;
    }
    size_t bytes = (size_t)S->nl * tkc_dtype_size((tkc_dtype)sdt.scalar);
    if (bytes != (size_t)I->nl * tkc_dtype_size((tkc_dtype)dt.scalar)) return unsupported(u);
    if (bytes > p->scratch_bytes) p->scratch_bytes = bytes;
    I->kind = K_BITCAST;
    return TKC_OK;
  }
  case TKC_OP_LOAD: {
    if (I->isptr || !is_value(dt) || u->nsrc < 1 || !p->ins[src[0]].isptr) return unsupported(u);
    int vs[3], nv = 0;
    for (int j = 0; j < ns; j++)
      if (!is_void(k->uops[src[j]]->dtype)) {
        if (nv == 3) return unsupported(u);
        vs[nv++] = src[j];
      }
    if (nv != 1 && nv != 3) return unsupported(u);
    const step *P = &p->ins[vs[0]];
    tkc_dt pdt = k->uops[vs[0]]->dtype;
    if (pdt.scalar != dt.scalar) return unsupported(u);
    if (P->nl == 1 && pdt.count == I->nl) I->ptrstride = 0;
    else if (P->nl == I->nl && pdt.count == 1) I->ptrstride = 1;
    else return unsupported(u);
    if (nv == 3) {
      const step *A = &p->ins[vs[1]], *G = &p->ins[vs[2]];
      if (vs[0] == vs[1] || vs[0] == vs[2] || A->isptr || G->isptr || !lanes_ok(A, I->nl) || !lanes_ok(G, I->nl) ||
          k->uops[vs[1]]->dtype.scalar != dt.scalar || !is_value(k->uops[vs[2]]->dtype))
        return unsupported(u);
    }
    for (int j = 0; j < nv; j++) I->s[j] = vs[j];
    I->kind = K_LOAD;
    return TKC_OK;
  }
  case TKC_OP_STORE: {
    if (u->nsrc < 2 || !p->ins[src[0]].isptr || p->ins[src[1]].isptr || !is_value(k->uops[src[1]]->dtype))
      return unsupported(u);
    const step *P = &p->ins[src[0]], *V = &p->ins[src[1]];
    tkc_dt pdt = k->uops[src[0]]->dtype, vdt = k->uops[src[1]]->dtype;
    if (pdt.scalar != vdt.scalar) return unsupported(u);
    I->dt = vdt.scalar;
    I->nl = V->nl;
    if (P->nl == 1 && pdt.count == V->nl) I->ptrstride = 0;
    else if (P->nl == V->nl && pdt.count == 1) I->ptrstride = 1;
    else return unsupported(u);
    I->s[0] = src[0];
    I->s[1] = src[1];
    for (int j = 2; j < ns; j++) {
      tkc_dt gdt = k->uops[src[j]]->dtype;
      if (is_void(gdt)) continue; /* IF(gate): handled by the IF block around the STORE */
      if (I->s[2] >= 0 || p->ins[src[j]].isptr || !is_value(gdt) || !lanes_ok(&p->ins[src[j]], V->nl)) return unsupported(u);
      I->s[2] = src[j];
    }
    I->kind = K_STORE;
    return TKC_OK;
  }
  case TKC_OP_VECTORIZE: {
    if (u->nsrc < 1 || (!I->isptr && !is_value(dt))) return unsupported(u);
    I->ext = (int32_t)c->npool;
    int64_t total = 0;
    for (int j = 0; j < u->nsrc; j++) {
      int s = src_index(c, u, i, j);
      if (s < 0) return tkc_last_status();
      const step *S = &p->ins[s];
      if (S->isptr != I->isptr || (!I->isptr && k->uops[s]->dtype.scalar != dt.scalar) ||
          (I->isptr && !tkc_dt_eq(tkc_dt_scalar(k->uops[s]->dtype), tkc_dt_scalar(dt))))
        return unsupported(u);
      total += S->nl;
      if (!pool_push(c, s)) return tkc_err(TKC_ENOMEM, "INTERP: out of memory compiling %s", k->name ? k->name : "kernel");
    }
    if (total != I->nl) return unsupported(u);
    I->next = u->nsrc;
    I->kind = K_VECTORIZE;
    return TKC_OK;
  }
  case TKC_OP_GEP: {
    if (u->nsrc != 1) return unsupported(u);
    const step *S = &p->ins[src[0]];
    if (S->isptr != I->isptr || (!I->isptr && (!is_value(dt) || k->uops[src[0]]->dtype.scalar != dt.scalar))) return unsupported(u);
    const tkc_arg *a = &u->arg;
    uint32_t na = a->kind == TKC_ARG_TUPLE ? a->n : a->kind == TKC_ARG_INT ? 1 : 0;
    if (na != (uint32_t)I->nl) return unsupported(u);
    I->ext = (int32_t)c->npool;
    for (uint32_t j = 0; j < na; j++) {
      const tkc_arg *e = a->kind == TKC_ARG_TUPLE ? &a->v.t[j] : a;
      if (e->kind != TKC_ARG_INT || e->v.i < 0 || e->v.i >= S->nl) return malformed(u, i, "GEP lane out of range");
      if (!pool_push(c, (int32_t)e->v.i)) return tkc_err(TKC_ENOMEM, "INTERP: out of memory compiling %s", k->name ? k->name : "kernel");
    }
    I->next = (int32_t)na;
    I->s[0] = src[0];
    I->kind = K_GEP;
    return TKC_OK;
  }
  default:
    break;
  }

  /* the ALU ops, evaluated lane by lane with tkc_alu_eval */
  if (!(tkc_op_flags((tkc_op)u->op) & TKC_F_ALU) || I->isptr || !is_value(dt) || u->nsrc < 1 || u->nsrc > 3)
    return unsupported(u);
  int cmp = u->op == TKC_OP_CMPLT || u->op == TKC_OP_CMPNE, where = u->op == TKC_OP_WHERE;
  for (int j = 0; j < u->nsrc; j++) {
    const step *S = &p->ins[src[j]];
    if (S->isptr || !is_value(k->uops[src[j]]->dtype) || !lanes_ok(S, I->nl)) return unsupported(u);
    I->s[j] = src[j];
  }
  I->in_dt = (cmp || where) ? k->uops[src[0]]->dtype.scalar : dt.scalar;
  /* operands whose dtype differs from what tkc_alu_eval reads (a shift count of uint, ...) are cast */
  for (int j = 0; j < u->nsrc; j++) {
    uint8_t want = cmp ? I->in_dt : where ? (j == 0 ? I->in_dt : dt.scalar) : dt.scalar;
    if (k->uops[src[j]]->dtype.scalar != want) I->cast[j] = want;
  }
  I->nsrc = u->nsrc;
  tkc_value z[3] = {{0}, {0}, {0}}, out;
  if (tkc_alu_eval((tkc_op)u->op, (tkc_dtype)dt.scalar, (tkc_dtype)I->in_dt, z, u->nsrc, &out) != TKC_OK) return unsupported(u);
  I->kind = K_ALU;
  return TKC_OK;
}

static tkc_status interp_compile(const tkc_kernel *k, void **handle) {
  if (!k || !handle || (k->nuops && !k->uops)) return tkc_err(TKC_EINVAL, "INTERP: compile: NULL argument");
  *handle = NULL;
  if (k->nuops > (size_t)INT32_MAX / 4) return tkc_err(TKC_EINVAL, "INTERP: kernel too large (%zu UOps)", k->nuops);
  cctx c;
  memset(&c, 0, sizeof c);
  c.k = k;
  interp_prog *p = c.p = tkc_calloc(1, sizeof *p);
  size_t n = k->nuops;
  c.m.cap = 16;
  while (c.m.cap < 2 * n) c.m.cap *= 2;
  c.m.key = tkc_calloc(c.m.cap, sizeof *c.m.key);
  c.m.val = tkc_calloc(c.m.cap, sizeof *c.m.val);
  c.dim_names = tkc_calloc(n + 1, sizeof *c.dim_names);
  if (p) {
    p->n = n;
    p->ins = tkc_calloc(n + 1, sizeof *p->ins);
    p->dim_size = tkc_calloc(n + 1, sizeof *p->dim_size);
  }
  tkc_status st = TKC_OK;
  if (!p || !p->ins || !p->dim_size || !c.m.key || !c.m.val || !c.dim_names) {
    st = tkc_err(TKC_ENOMEM, "INTERP: out of memory compiling %s", k->name ? k->name : "kernel");
    goto done;
  }
  for (size_t i = 0; i < n; i++) {
    const tkc_uop *u = k->uops[i];
    if (!u) {
      st = tkc_err(TKC_EINVAL, "INTERP: NULL UOp at %zu", i);
      goto done;
    }
    if (umap_get(&c.m, u) >= 0) {
      st = malformed(u, i, "the UOp appears twice");
      goto done;
    }
    if ((st = compile_one(&c, i)) != TKC_OK) goto done;
    umap_put(&c.m, u, (int32_t)i);
  }
  /* every RANGE/IF closed; slots assigned (ASSIGN shares its accumulator's) */
  for (size_t i = 0; i < n; i++) {
    step *I = &p->ins[i];
    if ((I->kind == K_RANGE || I->kind == K_IF) && I->jump < 0) {
      st = malformed(I->u, i, I->kind == K_RANGE ? "RANGE without ENDRANGE" : "IF without ENDIF");
      goto done;
    }
    if (I->kind == K_ASSIGN) {
      I->slot = p->ins[I->s[0]].slot;
    } else if (I->isptr) {
      I->slot = p->nptrs;
      p->nptrs += (size_t)I->nl;
    } else if (is_value(I->u->dtype)) {
      I->slot = p->nvals;
      p->nvals += (size_t)I->nl;
    }
  }
  if (c.has_local && c.has_lidx) {
    for (size_t i = 0; i < n; i++)
      if (k->uops[i]->op == TKC_OP_DEFINE_LOCAL) {
        st = unsupported(k->uops[i]);
        goto done;
      }
  }
done:
  tkc_free(c.m.key);
  tkc_free(c.m.val);
  tkc_free(c.dim_names);
  if (st != TKC_OK) {
    interp_release(p);
    return st;
  }
  *handle = p;
  return TKC_OK;
}

/* ---------------------------------------------------------------- execution */

static int64_t as_i64(tkc_value v, tkc_dtype dt) { return tkc_dtype_is_unsigned(dt) ? (int64_t)v.u : v.i; }

static int truthy(tkc_value v, tkc_dtype dt) {
  if (tkc_dtype_is_float(dt)) return v.f != 0;
  return tkc_value_cast(v, dt, TKC_BOOL).i != 0;
}

static tkc_value mem_load(const char *a, tkc_dtype dt) {
  tkc_value v;
  v.u = 0;
  switch (dt) {
  case TKC_BOOL: v.i = *(const uint8_t *)a != 0; break;
  case TKC_INT8: { int8_t x; memcpy(&x, a, 1); v.i = x; break; }
  case TKC_UINT8: { uint8_t x; memcpy(&x, a, 1); v.u = x; break; }
  case TKC_INT16: { int16_t x; memcpy(&x, a, 2); v.i = x; break; }
  case TKC_UINT16: { uint16_t x; memcpy(&x, a, 2); v.u = x; break; }
  case TKC_INT32: { int32_t x; memcpy(&x, a, 4); v.i = x; break; }
  case TKC_UINT32: { uint32_t x; memcpy(&x, a, 4); v.u = x; break; }
  case TKC_INT64: { int64_t x; memcpy(&x, a, 8); v.i = x; break; }
  case TKC_UINT64: { uint64_t x; memcpy(&x, a, 8); v.u = x; break; }
  case TKC_FLOAT16: { uint16_t x; memcpy(&x, a, 2); v.f = tkc_f16_to_f32(x); break; }
  case TKC_BFLOAT16: { uint16_t x; memcpy(&x, a, 2); v.f = tkc_bf16_to_f32(x); break; }
  case TKC_FLOAT32: { float x; memcpy(&x, a, 4); v.f = x; break; }
  case TKC_FLOAT64: memcpy(&v.f, a, 8); break;
  default: break;
  }
  return v;
}

static void mem_store(char *a, tkc_dtype dt, tkc_value v) {
  switch (dt) {
  case TKC_BOOL: { uint8_t x = v.u != 0; memcpy(a, &x, 1); break; }
  case TKC_INT8:
  case TKC_UINT8: { uint8_t x = (uint8_t)v.u; memcpy(a, &x, 1); break; }
  case TKC_INT16:
  case TKC_UINT16: { uint16_t x = (uint16_t)v.u; memcpy(a, &x, 2); break; }
  case TKC_INT32:
  case TKC_UINT32: { uint32_t x = (uint32_t)v.u; memcpy(a, &x, 4); break; }
  case TKC_INT64:
  case TKC_UINT64: memcpy(a, &v.u, 8); break;
  case TKC_FLOAT16:
  case TKC_BFLOAT16: { /* one rounding from the double (bfloat16: through float32, as src/uops/alu.c) */
    uint16_t x = (uint16_t)tkc_value_bitcast(v, dt, TKC_UINT16).u;
    memcpy(a, &x, 2);
    break;
  }
  case TKC_FLOAT32: { float x = (float)v.f; memcpy(a, &x, 4); break; }
  case TKC_FLOAT64: memcpy(a, &v.f, 8); break;
  default: break;
  }
}

typedef struct run {
  const interp_prog *p;
  const tkc_kernel *k;
  tkc_value *vals;
  iptr *ptrs;
  char *local;
  char *scratch;
} run;

#define VAL(R, i) ((R)->vals + (R)->p->ins[i].slot)
#define PTR(R, i) ((R)->ptrs + (R)->p->ins[i].slot)
#define LANE(R, i, j) (VAL(R, i)[(R)->p->ins[i].nl > 1 ? (j) : 0])

static tkc_status exec_body(run *R) {
  const interp_prog *p = R->p;
  const step *ins = p->ins;
  size_t n = p->n, pc = 0;
  while (pc < n) {
    const step *I = &ins[pc];
    switch (I->kind) {
    case K_NOP:
    case K_CONST:
    case K_SPECIAL:
      pc++;
      break;
    case K_RANGE: {
      tkc_dtype sdt = (tkc_dtype)ins[I->s[0]].dt, edt = (tkc_dtype)ins[I->s[1]].dt;
      int64_t start = as_i64(VAL(R, I->s[0])[0], sdt), end = as_i64(VAL(R, I->s[1])[0], edt);
      VAL(R, pc)[0].i = start;
      pc = start < end ? pc + 1 : (size_t)I->jump + 1;
      break;
    }
    case K_ENDRANGE: {
      const step *Rg = &ins[I->jump];
      int64_t end = as_i64(VAL(R, Rg->s[1])[0], (tkc_dtype)ins[Rg->s[1]].dt);
      tkc_value *ctr = VAL(R, I->jump);
      int64_t next = ctr[0].i + 1;
      ctr[0].i = next;
      pc = next < end ? (size_t)I->jump + 1 : pc + 1;
      break;
    }
    case K_IF:
      pc = truthy(VAL(R, I->s[0])[0], (tkc_dtype)ins[I->s[0]].dt) ? pc + 1 : (size_t)I->jump + 1;
      break;
    case K_ACC: {
      tkc_value *out = VAL(R, pc);
      for (int32_t j = 0; j < I->nl; j++) out[j] = LANE(R, I->s[0], j);
      pc++;
      break;
    }
    case K_ASSIGN: {
      tkc_value *out = VAL(R, pc); /* the accumulator's storage */
      const tkc_value *v = VAL(R, I->s[1]);
      int bc = ins[I->s[1]].nl == 1;
      for (int32_t j = 0; j < I->nl; j++) out[j] = v[bc ? 0 : j];
      pc++;
      break;
    }
    case K_INDEX: {
      iptr *out = PTR(R, pc);
      const iptr *b = PTR(R, I->s[0]);
      int bb = ins[I->s[0]].nl == 1;
      tkc_dtype idt = (tkc_dtype)ins[I->s[1]].dt;
      for (int32_t j = 0; j < I->nl; j++) {
        iptr q = b[bb ? 0 : j];
        q.off += as_i64(LANE(R, I->s[1], j), idt);
        if (I->s[2] >= 0 && !truthy(LANE(R, I->s[2], j), (tkc_dtype)ins[I->s[2]].dt)) q.ok = 0;
        out[j] = q;
      }
      pc++;
      break;
    }
    case K_PCOPY:
      memcpy(PTR(R, pc), PTR(R, I->s[0]), (size_t)I->nl * sizeof(iptr));
      pc++;
      break;
    case K_LOAD: {
      tkc_value *out = VAL(R, pc);
      const iptr *ptr = PTR(R, I->s[0]);
      tkc_dtype dt = (tkc_dtype)I->dt, gdt = I->s[2] >= 0 ? (tkc_dtype)ins[I->s[2]].dt : TKC_BOOL;
      size_t esz = tkc_dtype_size(dt);
      for (int32_t j = 0; j < I->nl; j++) {
        const iptr *q = &ptr[I->ptrstride ? j : 0];
        int64_t off = q->off + (I->ptrstride ? 0 : j);
        int on = q->ok != 0 && (I->s[2] < 0 || truthy(LANE(R, I->s[2], j), gdt));
        if (on) out[j] = mem_load(q->base + off * (int64_t)esz, dt);
        else if (I->s[1] >= 0) out[j] = LANE(R, I->s[1], j);
        else out[j].u = 0;
      }
      pc++;
      break;
    }
    case K_STORE: {
      const iptr *ptr = PTR(R, I->s[0]);
      const tkc_value *v = VAL(R, I->s[1]);
      tkc_dtype dt = (tkc_dtype)I->dt, gdt = I->s[2] >= 0 ? (tkc_dtype)ins[I->s[2]].dt : TKC_BOOL;
      size_t esz = tkc_dtype_size(dt);
      for (int32_t j = 0; j < I->nl; j++) {
        const iptr *q = &ptr[I->ptrstride ? j : 0];
        int64_t off = q->off + (I->ptrstride ? 0 : j);
        if (!q->ok || (I->s[2] >= 0 && !truthy(LANE(R, I->s[2], j), gdt))) continue;
        mem_store(q->base + off * (int64_t)esz, dt, v[j]);
      }
      pc++;
      break;
    }
    case K_VECTORIZE: {
      size_t at = 0;
      for (int32_t j = 0; j < I->next; j++) {
        int32_t s = p->pool[I->ext + j];
        size_t nl = (size_t)ins[s].nl;
        if (I->isptr) memcpy(PTR(R, pc) + at, PTR(R, s), nl * sizeof(iptr));
        else memcpy(VAL(R, pc) + at, VAL(R, s), nl * sizeof(tkc_value));
        at += nl;
      }
      pc++;
      break;
    }
    case K_GEP: {
      const int32_t *lanes = p->pool + I->ext;
      for (int32_t j = 0; j < I->nl; j++) {
        if (I->isptr) PTR(R, pc)[j] = PTR(R, I->s[0])[lanes[j]];
        else VAL(R, pc)[j] = VAL(R, I->s[0])[lanes[j]];
      }
      pc++;
      break;
    }
    case K_CAST: {
      tkc_value *out = VAL(R, pc);
      for (int32_t j = 0; j < I->nl; j++) out[j] = tkc_value_cast(LANE(R, I->s[0], j), (tkc_dtype)I->in_dt, (tkc_dtype)I->dt);
      pc++;
      break;
    }
    case K_BITCAST: {
      tkc_value *out = VAL(R, pc);
      const tkc_value *v = VAL(R, I->s[0]);
      int32_t snl = ins[I->s[0]].nl;
      if (snl == I->nl) {
        for (int32_t j = 0; j < I->nl; j++) out[j] = tkc_value_bitcast(v[j], (tkc_dtype)I->in_dt, (tkc_dtype)I->dt);
      } else { /* through the bytes: float4 -> half8, ... */
        size_t ssz = tkc_dtype_size((tkc_dtype)I->in_dt), dsz = tkc_dtype_size((tkc_dtype)I->dt);
        for (int32_t j = 0; j < snl; j++) mem_store(R->scratch + (size_t)j * ssz, (tkc_dtype)I->in_dt, v[j]);
        for (int32_t j = 0; j < I->nl; j++) out[j] = mem_load(R->scratch + (size_t)j * dsz, (tkc_dtype)I->dt);
      }
      pc++;
      break;
    }
    case K_ALU: {
      tkc_value *out = VAL(R, pc), x[3];
      for (int32_t j = 0; j < I->nl; j++) {
        for (int s = 0; s < I->nsrc; s++) {
          x[s] = LANE(R, I->s[s], j);
          if (I->cast[s] != TKC_VOID) x[s] = tkc_value_cast(x[s], (tkc_dtype)ins[I->s[s]].dt, (tkc_dtype)I->cast[s]);
        }
        tkc_status st = tkc_alu_eval((tkc_op)I->op, (tkc_dtype)I->dt, (tkc_dtype)I->in_dt, x, I->nsrc, &out[j]);
        if (st != TKC_OK) {
          char why[256];
          snprintf(why, sizeof why, "%s", tkc_last_error());
          return tkc_err(st, "INTERP: %s failed: %s", opname(I->u), why);
        }
      }
      pc++;
      break;
    }
    default:
      return tkc_err(TKC_EINTERNAL, "INTERP: bad instruction kind %d", I->kind);
    }
  }
  return TKC_OK;
}

static tkc_status interp_launch(const tkc_kernel *k, void *handle, void *const *bufs, const int64_t *vars) {
  const interp_prog *p = handle;
  if (!k || !p) return tkc_err(TKC_EINVAL, "INTERP: launch: NULL %s", k ? "program" : "kernel");
  if (p->n != k->nuops) return tkc_err(TKC_EINVAL, "INTERP: launch: the handle was compiled for another kernel");
  if (k->nvars > 0 && !vars) return tkc_err(TKC_EINVAL, "INTERP: launch: NULL variable values");
  size_t vbytes = p->nvals * sizeof(tkc_value), pbytes = p->nptrs * sizeof(iptr);
  size_t total = vbytes + pbytes + p->local_bytes + p->scratch_bytes + 64;
  char *mem = tkc_calloc(1, total);
  if (!mem) return tkc_err(TKC_ENOMEM, "INTERP: out of memory launching %s", k->name ? k->name : "kernel");
  run R = {p, k, (tkc_value *)mem, (iptr *)(mem + vbytes), NULL, NULL};
  R.local = mem + vbytes + pbytes;
  R.scratch = R.local + p->local_bytes;
  tkc_status st = TKC_OK;

  /* launch-invariant values */
  for (size_t i = 0; i < p->n; i++) {
    const step *I = &p->ins[i];
    if (I->kind != K_CONST) continue;
    const tkc_uop *u = I->u;
    switch ((tkc_op)u->op) {
    case TKC_OP_DEFINE_GLOBAL: {
      void *b = bufs ? bufs[u->arg.v.i] : NULL;
      if (!b) {
        st = tkc_err(TKC_EINVAL, "INTERP: launch: buffer %lld is NULL", (long long)u->arg.v.i);
        goto out;
      }
      PTR(&R, i)[0] = (iptr){(char *)b, 0, 1};
      break;
    }
    case TKC_OP_DEFINE_LOCAL: PTR(&R, i)[0] = (iptr){R.local + I->extra, 0, 1}; break;
    case TKC_OP_DEFINE_VAR: {
      tkc_value v;
      v.i = vars[I->extra];
      VAL(&R, i)[0] = tkc_value_cast(v, TKC_INT64, (tkc_dtype)I->dt);
      break;
    }
    case TKC_OP_CONST: {
      tkc_value v = tkc_value_from_arg(&u->arg, (tkc_dtype)I->dt);
      for (int32_t j = 0; j < I->nl; j++) VAL(&R, i)[j] = v;
      break;
    }
    case TKC_OP_VCONST:
      for (int32_t j = 0; j < I->nl; j++) VAL(&R, i)[j] = tkc_value_from_arg(&u->arg.v.t[j], (tkc_dtype)I->dt);
      break;
    default: break;
    }
  }

  /* every point of the launch grid (one point when there are no SPECIALs) */
  int64_t idx[64 + 1];
  int64_t *cur = p->ndims <= 64 ? idx : tkc_calloc((size_t)p->ndims + 1, sizeof *cur);
  if (!cur) {
    st = tkc_err(TKC_ENOMEM, "INTERP: out of memory launching %s", k->name ? k->name : "kernel");
    goto out;
  }
  for (int d = 0; d < p->ndims; d++) {
    cur[d] = 0;
    if (p->dim_size[d] <= 0) goto grid_done;
  }
  for (;;) {
    for (size_t i = 0; i < p->n; i++)
      if (p->ins[i].kind == K_SPECIAL) VAL(&R, i)[0] = tkc_value_cast((tkc_value){.i = cur[p->ins[i].extra]}, TKC_INT64, (tkc_dtype)p->ins[i].dt);
    if ((st = exec_body(&R)) != TKC_OK) break;
    int d = 0;
    while (d < p->ndims && ++cur[d] == p->dim_size[d]) cur[d++] = 0;
    if (d == p->ndims) break;
  }
grid_done:
  if (cur != idx) tkc_free(cur);
out:
  tkc_free(mem);
  return st;
}

const tkc_device_impl tkc_device_interp = {
    .name = "INTERP",
    .renderer = NULL,
    .available = interp_available,
    .alloc = tkc_host_alloc,
    .alloc_uninit = tkc_host_alloc_uninit,
    .host_memory = true,
    .free = tkc_host_free,
    .copyin = tkc_host_copy,
    .copyout = tkc_host_copy,
    .compile = interp_compile,
    .release = interp_release,
    .launch = interp_launch,
};
