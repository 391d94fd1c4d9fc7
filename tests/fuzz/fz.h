/* tests/fuzz/fz.h — the differential tensor fuzzer's shared types (fuzz_tensor.c and fz_*.c).
 *
 * A program is a list of nodes in creation order (a DAG: a node's inputs are earlier nodes). Leaves
 * hold generated data (or a constant / arange); every other node is one tkc tensor op with its
 * parameters. fz_infer computes each node's shape and dtype with tkc's rules (NumPy broadcasting,
 * tinygrad promotion), and decides validity: a node it rejects must be rejected by tkc too.
 *
 * The same program is built on every device (fz_run.c) and on the host by a reference evaluator
 * (fz_ref.c) that computes in double with, per element, a bound on how far a correct float device
 * may be from it (first-order error propagation + per-op rounding), or "uncertain" where a correct
 * device may give anything (a comparison of two values closer than their errors, a NaN fed to max,
 * a float -> int cast out of range). */
#ifndef FZ_H
#define FZ_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include "tkc.h"
#include "tkc/uop.h"

#define FZ_MAXDIM 8
#define FZ_MAXNODES 40
#define FZ_MAXP 16         /* parameter slots per node */
#define FZ_MAXNUMEL 4096   /* elements per node (keeps programs fast on INTERP) ... */
#define FZ_MAXLEAF 70000   /* ... but a data leaf may be big: reduced at once, for the split reduce */

typedef enum fz_kind {
  /* leaves */
  FZ_DATA,    /* tkc_tensor_new with generated values (vkind, seed) */
  FZ_FULL,    /* tkc_full(shape, value) */
  FZ_SCALAR,  /* tkc_scalar(value) */
  FZ_ARANGE,  /* tkc_arange(value, value + p[0]*p[1], p[1]) */
  /* elementwise */
  FZ_UNARY,   /* op = fz_unop */
  FZ_BINARY,  /* op = fz_binop */
  FZ_WHERE,
  FZ_CAST,    /* to cast_to */
  /* reductions: op = fz_redop, axes p[0..np), keepdim */
  FZ_REDUCE,
  /* movement */
  FZ_RESHAPE, /* p = new shape (np dims) */
  FZ_PERMUTE, /* p = order */
  FZ_TRANSPOSE, /* p[0], p[1] */
  FZ_EXPAND,  /* p = new shape */
  FZ_PAD,     /* p = 2*ndim pads, value */
  FZ_SHRINK,  /* p = 2*ndim ranges */
  FZ_FLIP,    /* p = axes */
  FZ_CONTIG,
  /* composites */
  FZ_MATMUL,
  FZ_SOFTMAX,    /* axis */
  FZ_LOGSOFTMAX, /* axis */
  FZ_CUMSUM,     /* axis */
  FZ_CAT,        /* in[0..nin), axis */
  FZ_LAYERNORM,  /* p[0] = naxes */
  FZ_GATHER,     /* in[0] = a, in[1] = index leaf, axis */
  FZ_INDEX_SELECT, /* in[0] = a, in[1] = index leaf, axis */
  FZ_NKINDS
} fz_kind;

typedef enum fz_unop {
  FZ_NEG, FZ_ABS, FZ_RECIP, FZ_SQRT, FZ_EXP, FZ_EXP2, FZ_LOG, FZ_LOG2, FZ_SIN, FZ_COS, FZ_TANH,
  FZ_SIGMOID, FZ_RELU, FZ_NUNOPS
} fz_unop;

typedef enum fz_binop {
  FZ_ADD, FZ_SUB, FZ_MUL, FZ_DIV, FZ_IDIV, FZ_MOD, FZ_MAXIMUM, FZ_MINIMUM, FZ_POW, FZ_LT, FZ_LE, FZ_GT,
  FZ_GE, FZ_EQ, FZ_NE, FZ_AND, FZ_OR, FZ_XOR, FZ_SHL, FZ_SHR, FZ_NBINOPS
} fz_binop;

typedef enum fz_redop { FZ_RSUM, FZ_RMAX, FZ_RMIN, FZ_RMEAN, FZ_NREDOPS } fz_redop;

/* how a data leaf's values are drawn (each exactly representable in every float dtype we use) */
typedef enum fz_vkind {
  FZ_V_SIGNED,  /* k/32, k in [-128, 128] */
  FZ_V_POS,     /* k/32, k in [1, 128] */
  FZ_V_SMALL,   /* ints in [-9, 9] (non-negative for unsigned dtypes) */
  FZ_V_NONZERO, /* ints in [1, 9], negated half the time for signed dtypes */
  FZ_V_SHIFT,   /* ints in [0, 7] */
  FZ_V_WIDE,    /* any value of the int dtype */
  FZ_V_INDEX,   /* ints in [0, p[FZ_MAXP-1]) */
  FZ_V_NEGINDEX, /* ints in [-p[FZ_MAXP-1], p[FZ_MAXP-1]): negative ones count from the end */
  FZ_V_SPECIAL, /* floats: inf, -inf, nan, -0.0, huge, subnormal, between FZ_V_SIGNED values */
  FZ_NVKINDS
} fz_vkind;

typedef struct fz_node {
  fz_kind kind;
  int op;               /* fz_unop / fz_binop / fz_redop */
  int nin, in[4];       /* inputs: indices of earlier nodes */
  int np;
  int64_t p[FZ_MAXP];   /* shape / order / pads / ranges / axes (see fz_kind) */
  int axis, keepdim;
  double value;         /* full / scalar / pad value, arange start */
  tkc_dtype dt;         /* leaves: their dtype; others: inferred */
  tkc_dtype cast_to;
  uint32_t seed;        /* data leaves */
  fz_vkind vkind;
  int realize;          /* tkc_realize after building it */
  int observe;          /* copied out and compared */
  int expect_fail;      /* deliberately invalid: every device must return NULL + an error */
  /* inferred */
  int ndim;
  int64_t shape[FZ_MAXDIM];
} fz_node;

typedef struct fz_prog {
  uint64_t seed;
  int n;
  fz_node node[FZ_MAXNODES];
} fz_prog;

/* ---------------------------------------------------------------- fz_gen.c */

/* splitmix64 stream */
typedef struct fz_rng { uint64_t s; } fz_rng;
uint64_t fz_next(fz_rng *r);
int fz_below(fz_rng *r, int n);          /* uniform in [0, n) */

int64_t fz_numel(int ndim, const int64_t *shape);
const char *fz_unop_name(int op);
const char *fz_binop_name(int op);
const char *fz_redop_name(int op);
/* the value of element i of a data leaf */
double fz_leaf_value(const fz_node *nd, int64_t i);
/* Infers node i's shape/dtype from its inputs; 0 when valid, -1 when tkc must reject it. */
int fz_infer(fz_prog *p, int i);
/* Infers every node; -1 when some node not marked expect_fail is invalid. */
int fz_infer_all(fz_prog *p);
/* A random program (valid, except a final expect_fail node now and then). */
void fz_generate(fz_prog *p, uint64_t seed, const char *const *dtypes_allowed);
/* Drops nodes no observed node needs and renumbers the rest. */
void fz_compact(fz_prog *p);
/* The program as C code against the tkc API (a block a developer can paste into a test). */
void fz_print_c(const fz_prog *p, const char *device, FILE *f);
/* "float32[2,3]" */
void fz_shape_str(const fz_node *nd, char *buf, size_t n);
/* true when some node of p has a 64-bit dtype */
bool fz_uses_64bit(const fz_prog *p);

/* ---------------------------------------------------------------- fz_ref.c */

/* A node's reference values: ints/bool in i[], floats in f[]; err[] bounds |device - value| for
 * floats (INFINITY: uncertain, anything goes); ints/bool are exact unless err is INFINITY. */
typedef struct fz_val {
  tkc_dtype dt;
  int ndim;
  int64_t shape[FZ_MAXDIM];
  int64_t n;
  int64_t *i;
  double *f;
  double *err;
} fz_val;

/* Evaluates every node of p (NULL-safe out[] entries for nodes it cannot evaluate: none today).
 * out has p->n slots; free with fz_vals_free. */
void fz_ref_eval(const fz_prog *p, fz_val *out);
void fz_vals_free(fz_val *v, int n);
/* The value of element k in dtype units as a double (ints converted). */
double fz_val_get(const fz_val *v, int64_t k);

/* ---------------------------------------------------------------- fz_run.c */

/* Builds p on ctx; returns the number of the first node that failed (its tkc error in err), or -1
 * when all were built; results of observed nodes are copied to bufs[i] (numel * itemsize bytes,
 * caller-allocated) and their status into st[i]. */
int fz_run_on(tkc_ctx *ctx, const fz_prog *p, void *const *bufs, int *st, char *err, size_t errn);

#endif
