/* tkc/uop.h — dtypes, UOps, patterns and graph rewriting: the layer every tkc pass is built on,
 * exposed for people who build their own front end.
 *
 * A UOp is {op, dtype, src[], arg}, immutable and hash-consed inside a tkc_graph: building the
 * same UOp twice returns the same pointer, so structural equality is pointer equality.
 * A tkc_graph owns every UOp made in it; tkc_graph_free releases them all at once.
 * Thread safety: a graph (and the UOps in it) is used by one thread at a time; a tkc_matcher is
 * read-only after creation and may be shared between threads.
 *
 * Stability: the functions, tkc_dt, tkc_arg and the op and dtype enums (values only appended) are
 * stable. The fields of struct tkc_uop (and of tkc_rule / tkc_match) may change between minor
 * versions (0.1 -> 0.2); code that reads them is rebuilt against the headers of the version it
 * links. The tensor API (tkc.h) does not include this header. */
#ifndef TKC_UOP_H
#define TKC_UOP_H

#include <stdbool.h>
#include <stdio.h>
#include "tkc/base.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------- dtypes */

typedef enum tkc_addrspace { TKC_SPACE_NONE = 0, TKC_SPACE_GLOBAL, TKC_SPACE_LOCAL } tkc_addrspace;

/* A dtype value: scalar kind, vector width, and for pointers the address space, the width of a
 * vector of pointers and the number of elements (-1 unknown). Compare with tkc_dt_eq. */
typedef struct tkc_dt {
  uint8_t scalar;  /* tkc_dtype */
  uint8_t space;   /* tkc_addrspace; TKC_SPACE_NONE = not a pointer */
  uint16_t count;  /* element vector width (1 = scalar) */
  uint16_t pcount; /* pointer: width of a vector of pointers (1 = one pointer) */
  uint16_t pad_;
  int32_t size;    /* pointer: elements pointed at, -1 unknown */
} tkc_dt;

TKC_API tkc_dt tkc_dt_of(tkc_dtype scalar);                 /* the scalar dtype */
/* A vector of a scalar (or of pointers). More than TKC_DT_MAX_LANES lanes gives an invalid dtype (its
 * scalar is TKC_NDTYPES: tkc_uop_new refuses it) and sets tkc_last_error(). */
#define TKC_DT_MAX_LANES 65535
TKC_API tkc_dt tkc_dt_vec(tkc_dt dt, int count);
TKC_API tkc_dt tkc_dt_ptr(tkc_dt base, tkc_addrspace space, int32_t size); /* pointer to base */
TKC_API tkc_dt tkc_dt_scalar(tkc_dt dt);                    /* drops the vector width */
TKC_API tkc_dt tkc_dt_base(tkc_dt dt);                      /* pointee of a pointer, else dt */
TKC_API bool tkc_dt_eq(tkc_dt a, tkc_dt b);
TKC_API bool tkc_dt_is_ptr(tkc_dt dt);
TKC_API bool tkc_dt_is_float(tkc_dt dt);                    /* on the scalar kind, like tinygrad */
TKC_API bool tkc_dt_is_int(tkc_dt dt);
TKC_API bool tkc_dt_is_unsigned(tkc_dt dt);
TKC_API bool tkc_dt_is_bool(tkc_dt dt);
TKC_API size_t tkc_dt_itemsize(tkc_dt dt);                  /* bytes of one (vector) value; pointers: 8 */
/* Writes a readable name ("float", "int.vec(4)", "float.ptr(16)") into buf; returns buf. */
TKC_API char *tkc_dt_str(tkc_dt dt, char *buf, size_t n);

TKC_API const char *tkc_dtype_name(tkc_dtype dt);           /* "float32"; NULL when out of range */
TKC_API size_t tkc_dtype_size(tkc_dtype dt);                /* 0 for void or out of range */
TKC_API bool tkc_dtype_is_float(tkc_dtype dt);
TKC_API bool tkc_dtype_is_int(tkc_dtype dt);                /* signed or unsigned, not bool */
TKC_API bool tkc_dtype_is_unsigned(tkc_dtype dt);
/* The smallest dtype both promote to (tinygrad's promotion lattice); TKC_VOID on bad input. */
TKC_API tkc_dtype tkc_least_upper_dtype(tkc_dtype a, tkc_dtype b);
/* Range of an integer/bool dtype as int64 (uint64's max saturates at INT64_MAX). */
TKC_API int64_t tkc_dtype_min(tkc_dtype dt);
TKC_API int64_t tkc_dtype_max(tkc_dtype dt);

/* ---------------------------------------------------------------- ops */

#define TKC_F_U (1u << 0)  /* unary ALU */
#define TKC_F_B (1u << 1)  /* binary ALU */
#define TKC_F_T (1u << 2)  /* ternary ALU */
#define TKC_F_C (1u << 3)  /* commutative */
#define TKC_F_A (1u << 4)  /* associative */
#define TKC_F_I (1u << 5)  /* idempotent: f(x,x) = x */
#define TKC_F_P (1u << 6)  /* unsafe to pad: f(0) != 0 */
#define TKC_F_M (1u << 7)  /* movement */
#define TKC_F_R (1u << 8)  /* irreducible (CONST, DEFINE_VAR, SPECIAL, RANGE) */
#define TKC_F_F (1u << 9)  /* buffer op */
#define TKC_F_ALU (TKC_F_U | TKC_F_B | TKC_F_T)

typedef enum tkc_op {
#define TKC_OP(name, flags) TKC_OP_##name,
#include "tkc/ops.def"
#undef TKC_OP
  TKC_NOPS
} tkc_op;

TKC_API const char *tkc_op_name(tkc_op op);   /* "ADD"; NULL when out of range */
TKC_API unsigned tkc_op_flags(tkc_op op);     /* TKC_F_* bits */
TKC_API int tkc_op_from_name(const char *name); /* -1 when unknown */

/* ---------------------------------------------------------------- args */

typedef enum tkc_arg_kind {
  TKC_ARG_NONE = 0,
  TKC_ARG_INT,   /* also bool and every integer CONST (uint64 stored as its bit pattern) */
  TKC_ARG_FLOAT, /* float CONSTs */
  TKC_ARG_STR,
  TKC_ARG_TUPLE, /* n nested args */
  TKC_ARG_PTR    /* an opaque pointer owned by someone else (compared by address) */
} tkc_arg_kind;

typedef struct tkc_arg {
  uint32_t kind; /* tkc_arg_kind */
  uint32_t n;    /* TUPLE: element count; STR: length */
  union {
    int64_t i;
    double f;
    const char *s;
    const struct tkc_arg *t;
    const void *p;
  } v;
} tkc_arg;

static inline tkc_arg tkc_arg_none(void) { tkc_arg a = {TKC_ARG_NONE, 0, {0}}; return a; }
static inline tkc_arg tkc_arg_int(int64_t i) { tkc_arg a = {TKC_ARG_INT, 0, {0}}; a.v.i = i; return a; }
static inline tkc_arg tkc_arg_float(double f) { tkc_arg a = {TKC_ARG_FLOAT, 0, {0}}; a.v.f = f; return a; }
static inline tkc_arg tkc_arg_ptr(const void *p) { tkc_arg a = {TKC_ARG_PTR, 0, {0}}; a.v.p = p; return a; }
/* A string arg; the graph copies the text when a UOp is built. */
TKC_API tkc_arg tkc_arg_str(const char *s);
/* A tuple arg over n elements; the graph copies the elements (deeply) when a UOp is built. */
static inline tkc_arg tkc_arg_tuple(const tkc_arg *t, uint32_t n) { tkc_arg a = {TKC_ARG_TUPLE, n, {0}}; a.v.t = t; return a; }
TKC_API bool tkc_arg_eq(const tkc_arg *a, const tkc_arg *b); /* structural; floats by bit pattern */

/* ---------------------------------------------------------------- UOps */

typedef struct tkc_uop tkc_uop;
struct tkc_uop {
  uint16_t op;           /* tkc_op */
  uint16_t nsrc;
  uint32_t id;           /* creation number inside its graph (stable, deterministic order) */
  tkc_dt dtype;
  tkc_uop *const *src;
  tkc_arg arg;
  uint64_t hash;
  int64_t vmin, vmax;    /* range analysis of integer/bool UOps (dtype bounds when unknown) */
};

typedef struct tkc_graph tkc_graph;

/* A new empty graph; NULL (TKC_ENOMEM) on allocation failure. */
TKC_API tkc_graph *tkc_graph_new(void);
/* Frees the graph and every UOp in it. NULL is a no-op. UOps are plain pointers into the graph's
 * memory, not checked handles: using one after its graph is freed is undefined (as with a pointer
 * after free). */
TKC_API void tkc_graph_free(tkc_graph *g);
/* Number of distinct UOps alive in g. */
TKC_API size_t tkc_graph_size(const tkc_graph *g);
/* Bytes the graph holds (arena + tables). */
TKC_API size_t tkc_graph_bytes(const tkc_graph *g);

/* The interned UOp {op, dt, src[0..nsrc), arg}. Sources must belong to g. Returns NULL with
 * TKC_EINVAL on a NULL source / bad op, TKC_ENOMEM on allocation failure. */
TKC_API tkc_uop *tkc_uop_new(tkc_graph *g, tkc_op op, tkc_dt dt, int nsrc, tkc_uop *const *src, tkc_arg arg);
/* Helpers that infer the dtype as tinygrad's UOp.alu: the last source's dtype, bool for CMPLT/CMPNE. */
TKC_API tkc_uop *tkc_uop_alu1(tkc_graph *g, tkc_op op, tkc_uop *a);
TKC_API tkc_uop *tkc_uop_alu2(tkc_graph *g, tkc_op op, tkc_uop *a, tkc_uop *b);
TKC_API tkc_uop *tkc_uop_alu3(tkc_graph *g, tkc_op op, tkc_uop *a, tkc_uop *b, tkc_uop *c);
/* Constants, converted and truncated to dt (vector dts give a VECTORIZE-free CONST of that dtype). */
TKC_API tkc_uop *tkc_uop_const_int(tkc_graph *g, tkc_dt dt, int64_t v);
TKC_API tkc_uop *tkc_uop_const_float(tkc_graph *g, tkc_dt dt, double v);
/* A CONST of like's dtype holding v (ints truncated to the dtype, floats rounded). */
TKC_API tkc_uop *tkc_uop_const_like(tkc_graph *g, const tkc_uop *like, double v);
TKC_API tkc_uop *tkc_uop_const_like_int(tkc_graph *g, const tkc_uop *like, int64_t v);
/* DEFINE_VAR int32 with arg (name, min, max). */
TKC_API tkc_uop *tkc_uop_var(tkc_graph *g, const char *name, int64_t vmin, int64_t vmax);
/* RANGE int32 over [start, end) with axis number arg. */
TKC_API tkc_uop *tkc_uop_range(tkc_graph *g, tkc_uop *start, tkc_uop *end, int64_t axis);
/* SPECIAL int32 with arg (name, size): a launch index in [0, size). */
TKC_API tkc_uop *tkc_uop_special(tkc_graph *g, const char *name, int64_t size);
TKC_API tkc_uop *tkc_uop_cast(tkc_graph *g, tkc_uop *a, tkc_dt dt);     /* a itself when dt equals */
TKC_API tkc_uop *tkc_uop_bitcast(tkc_graph *g, tkc_uop *a, tkc_dt dt);  /* a itself when dt equals */
TKC_API tkc_uop *tkc_uop_sink(tkc_graph *g, int nsrc, tkc_uop *const *src);

/* True when u is a CONST (holds one value). Its value as int64 / double: */
TKC_API bool tkc_uop_is_const(const tkc_uop *u);
TKC_API int64_t tkc_uop_const_i(const tkc_uop *u);
TKC_API double tkc_uop_const_f(const tkc_uop *u);

/* The UOps reachable from root, sources before users, in a deterministic order. Returns a
 * malloc'ed array (free with tkc_free) and its length in *n; NULL on failure. */
TKC_API tkc_uop **tkc_toposort(const tkc_uop *root, size_t *n);

/* A multi-line dump of the graph under root, shared nodes printed once and referenced after.
 * Returns a malloc'ed string (free with tkc_free); NULL on failure. */
TKC_API char *tkc_uop_str(const tkc_uop *root);
/* The expression under root written as tinygrad's render(): "((a*4)+b)". Malloc'ed; NULL on failure. */
TKC_API char *tkc_uop_expr_str(const tkc_uop *root);

/* ---------------------------------------------------------------- constant evaluation */

/* A scalar value; which member is meaningful follows the dtype: i (signed ints, bool),
 * u (unsigned ints), f (floats). */
typedef union tkc_value {
  int64_t i;
  uint64_t u;
  double f;
} tkc_value;

/* out = op(src...) on dtype dt for the result, with the operands of dtype in_dt (they differ only for
 * CMPLT/CMPNE, whose result is bool, and for WHERE whose condition is bool), truncated to dt exactly as
 * tinygrad's exec_alu: ints wrap, float32 rounds, IDIV truncates toward zero, MOD takes the sign of the
 * dividend, integer x/0 and x%0 are 0. TKC_EUNSUPPORTED when the op has no value semantics. */
TKC_API tkc_status tkc_alu_eval(tkc_op op, tkc_dtype dt, tkc_dtype in_dt, const tkc_value *src, int nsrc, tkc_value *out);
/* v (of dtype from) converted to dtype to, as a C cast would where C defines it (float->int truncates
 * toward zero; ->bool is != 0); where C leaves it undefined tkc saturates: a float beyond the int range
 * gives the int's min/max and NaN gives 0. */
TKC_API tkc_value tkc_value_cast(tkc_value v, tkc_dtype from, tkc_dtype to);
/* v truncated to dt's width/precision (ints wrap; floats round to float16/bfloat16/float32). */
TKC_API tkc_value tkc_value_truncate(tkc_value v, tkc_dtype dt);
/* Reinterprets the low itemsize bytes of v (dtype from) as dtype to (same size). */
TKC_API tkc_value tkc_value_bitcast(tkc_value v, tkc_dtype from, tkc_dtype to);
/* Converts a CONST's arg to a value of its dtype and back. */
TKC_API tkc_value tkc_value_from_arg(const tkc_arg *a, tkc_dtype dt);
TKC_API tkc_arg tkc_value_to_arg(tkc_value v, tkc_dtype dt);
/* IEEE half / bfloat16 <-> float conversion (round to nearest even, bfloat16 too, as numpy/torch). */
TKC_API uint16_t tkc_f32_to_f16(float f);
TKC_API float tkc_f16_to_f32(uint16_t h);
TKC_API uint16_t tkc_f32_to_bf16(float f);
TKC_API float tkc_bf16_to_f32(uint16_t h);

/* ---------------------------------------------------------------- patterns and rewriting */

/* Patterns are written in a small notation, compiled once by tkc_matcher_new:
 *
 *   x                 any UOp, bound to the name x (a name bound twice must be the same UOp)
 *   _                 any UOp
 *   OP  | A|B         a UOp with that op (or one of a set; groups: ALU UNARY BINARY TERNARY
 *                     COMMUTATIVE ASSOCIATIVE IDEMPOTENT IRREDUCIBLE MOVEMENT ALL), any sources
 *   (OP s1 s2 ...)    ...with exactly these sources; in any order when every op is commutative
 *   (OP s1 ... ...)   the trailing "..." allows further sources
 *   (OP s*)           every source matches s (repeated)
 *   ~(OP s1 s2)       sources in any order;  =(OP s1 s2) in this order
 *   name:PAT          binds the UOp matched by PAT to name
 *   OP<dt|dt>         dtype filter: bool int8 .. float64 void, ints uints sints floats ptr
 *                     (a vector matches when its scalar does)
 *   OP[v]             arg equal to the number v (int or float compare by value; true/false)
 *   cvar              shorthand for CONST|VCONST, e.g.  c:cvar   c:cvar<int>
 *
 * Example: "(ADD x (CONST[0]))"  matches x+0 and 0+x.
 * A rule pairs a pattern with a callback that returns the replacement or NULL (no match: the
 * matcher then tries the next binding and the next rule). */
typedef struct tkc_match tkc_match;
/* The UOp bound to name in the current match; NULL when the pattern has no such name. */
TKC_API tkc_uop *tkc_match_get(const tkc_match *m, const char *name);
/* The UOp the whole pattern matched. */
TKC_API tkc_uop *tkc_match_root(const tkc_match *m);

typedef tkc_uop *(*tkc_rewrite_fn)(tkc_graph *g, const tkc_match *m, void *ctx);

typedef struct tkc_rule {
  const char *pattern;
  tkc_rewrite_fn fn;
} tkc_rule;

typedef struct tkc_matcher tkc_matcher;

/* Compiles n rules into a matcher indexed by op. NULL with TKC_EINVAL (naming the rule and the
 * position) when a pattern does not parse. Free with tkc_matcher_free. */
TKC_API tkc_matcher *tkc_matcher_new(const tkc_rule *rules, size_t n);
/* A new matcher with a's rules then b's (tinygrad's `a + b`). Either may be NULL (empty). */
TKC_API tkc_matcher *tkc_matcher_concat(const tkc_matcher *a, const tkc_matcher *b);
TKC_API void tkc_matcher_free(tkc_matcher *pm);
TKC_API size_t tkc_matcher_size(const tkc_matcher *pm);

/* One step: the first rule whose pattern matches u and whose callback answers; NULL if none. */
TKC_API tkc_uop *tkc_rewrite_once(const tkc_matcher *pm, tkc_graph *g, tkc_uop *u, void *ctx);
/* Rewrites the graph under root to a fixed point: sources first, then the node itself, again and
 * again until no rule applies; each UOp is rewritten once (memoized). With bottom_up, rules are
 * applied to a node before its sources (tinygrad's bottom_up=True). Returns the new root, or NULL
 * on error (TKC_EINTERNAL when the rules do not converge). */
TKC_API tkc_uop *tkc_graph_rewrite(tkc_graph *g, tkc_uop *root, const tkc_matcher *pm, void *ctx);
TKC_API tkc_uop *tkc_graph_rewrite_bottom_up(tkc_graph *g, tkc_uop *root, const tkc_matcher *pm, void *ctx);
/* Replaces every UOp that is a key of the map (from[i] -> to[i]) in the graph under root. */
TKC_API tkc_uop *tkc_substitute(tkc_graph *g, tkc_uop *root, size_t n, tkc_uop *const *from, tkc_uop *const *to);

/* ---------------------------------------------------------------- symbolic */

/* tinygrad's symbolic_simple, symbolic and symbolic_flat rule sets (built once, shared, never freed
 * by the caller). NULL only if the built-in rules fail to compile (TKC_EINTERNAL). */
TKC_API const tkc_matcher *tkc_symbolic_simple(void);
TKC_API const tkc_matcher *tkc_symbolic(void);
TKC_API const tkc_matcher *tkc_symbolic_flat(void);
/* graph_rewrite(u, tkc_symbolic()). */
TKC_API tkc_uop *tkc_simplify(tkc_graph *g, tkc_uop *u);

#ifdef __cplusplus
}
#endif
#endif
