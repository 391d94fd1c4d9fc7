/* src/render/cstyle.h — one render loop for the C-style renderers (C and WGSL), driven by a language
 * table as tinygrad's CStyleLanguage (renderer/cstyle.py) is: walk the linearized uops once, keep
 * each one's rendered text, inline a value used once into its user's expression, give every other
 * value a name by kind (alu0, val3, ...). A target is a tkc_cs_lang: its declaration forms, vector
 * literal, barrier, keywords, per-op expression templates (code_for_op), per-op overrides (rules, its
 * string_rewrite: tried before the base rendering, which they may fall back to) and a few hooks for
 * what is truly its own (types, constants, casts, scalar ALU ops). A renderer's context embeds a
 * tkc_cs as its FIRST member `cs`, so a hook gets the tkc_cs and casts it back. Internal. */
#ifndef TKC_RENDER_CSTYLE_H
#define TKC_RENDER_CSTYLE_H

#include "base/common.h"
#include "render/render_util.h"
#include "tkc/uop.h"

/* the kinds of named values; each has a prefix and its own counter */
enum { TKC_CS_RIDX, TKC_CS_ALU, TKC_CS_VAL, TKC_CS_CAST, TKC_CS_ACC, TKC_CS_GEP, TKC_CS_TEMP, TKC_CS_NPFX };

/* what a rule (per-op override) did: failed (error recorded), rendered u, or left it to the base */
enum { TKC_CS_FAIL, TKC_CS_DONE, TKC_CS_BASE };

/* what the prepass hook says about a uop: its vector sources / all its sources must be named
 * (used twice by its expression), or it is invalid (error recorded) */
enum { TKC_CS_DUP_VEC = 1, TKC_CS_DUP_ALL = 2, TKC_CS_NOTE_FAIL = 4 };

typedef struct tkc_cs tkc_cs;
typedef int (*tkc_cs_rule)(tkc_cs *cs, size_t i, int *depth);

typedef struct tkc_cs_lang {
  const char *who;          /* "C", "WGSL": the renderer in messages */
  const char *let;          /* a named value: NULL "T name = e;", else "<let> name: T = e;" */
  const char *var;          /* a mutable one (loop counter, accumulator): NULL "T name", else "<var> name: T" */
  const char *barrier;      /* the BARRIER statement; NULL: none */
  const char *vec_pre, *vec_mid, *vec_sep, *vec_post; /* vector literal: pre TYPE mid l0 sep l1 ... post */
  int max_vector;           /* widest vector value (0: any); wider ones fail with max_vector_why */
  const char *max_vector_why;
  bool const_lanes;         /* a lane of a vector CONST is the scalar constant itself */
  const char *const *keywords;          /* NULL-terminated: names a kernel/variable may not take */
  const char *const *reserved_prefixes; /* NULL-terminated: neither may they start with these */
  const char *const *numbered;          /* NULL-terminated: nor be one of these followed by digits */
  /* expression templates by op: $0 $1 $2 are the operands (code_for_op); NULL: none */
  const char *code_for_op[TKC_NOPS];
  /* per-op overrides, tried before the base rendering */
  tkc_cs_rule rules[TKC_NOPS];
  /* the type of a value of dtype dt (u: for the error) in buf; NULL when there is none */
  const char *(*type)(tkc_cs *cs, const tkc_uop *u, tkc_dt dt, char *buf, size_t n);
  /* a scalar constant of dtype scalar holding arg a */
  char *(*const_str)(tkc_cs *cs, const tkc_uop *u, int scalar, const tkc_arg *a);
  /* a scalar ALU op u on operands a[] */
  char *(*alu)(tkc_cs *cs, const tkc_uop *u, const char *const *a);
  /* a scalar CAST (bitcast false) or BITCAST of x from scalar type f to t */
  char *(*cast)(tkc_cs *cs, const tkc_uop *u, int f, int t, const char *x, bool bitcast);
  /* a vector ALU op, CAST or BITCAST as one vector expression (the lang's extra_matcher scalarizes
   * the others: tkc_target_scalarize); NULL + error when it cannot */
  char *(*native_vector)(tkc_cs *cs, const tkc_uop *u);
  /* the name of DEFINE_VAR number k (in uop order; cs->vars) */
  char *(*var_name)(tkc_cs *cs, size_t k);
  /* optional: notes a uop before rendering (TKC_CS_DUP_* / TKC_CS_NOTE_FAIL) */
  unsigned (*note)(tkc_cs *cs, const tkc_uop *u);
} tkc_cs_lang;

typedef struct tkc_cs_buf {
  int64_t num; /* the DEFINE_GLOBAL's arg: its parameter / binding number */
  tkc_dt dt;
} tkc_cs_buf;

struct tkc_cs {
  const tkc_cs_lang *lang;
  tkc_uop *const *uops;
  size_t n;
  int32_t *pos;             /* uop id -> first position in uops, -1 */
  uint32_t npos;
  char **r;                 /* the expression or name of each position */
  int *nchild;              /* uses of each position */
  unsigned char *must_name; /* positions that get a name even when used once */
  unsigned char *skip;      /* NULL, or positions their user renders (the loop passes over them) */
  tkc_cs_buf *bufs;         /* DEFINE_GLOBALs, sorted by number after the loop */
  size_t nbufs;
  const tkc_uop **vars;     /* DEFINE_VARs in uop order (prepass) ... */
  const tkc_uop **vars_sorted; /* ... and by name: the order the launch passes their values */
  size_t nvars;
  int cnt[TKC_CS_NPFX];
  bool failed;              /* an error has been recorded */
  tkc_sbuf body;            /* the statements */
};

/* Checks and indexes uops (tkc_render_posmap), counts their uses. On failure the error is recorded
 * and tkc_cs_free still must be called. */
TKC_HIDDEN tkc_status tkc_cs_init(tkc_cs *cs, const tkc_cs_lang *lang, tkc_uop *const *uops, size_t n);
TKC_HIDDEN void tkc_cs_free(tkc_cs *cs);

/* Marks what must be named (the note hook + vector ops' vector sources), collects and sorts the
 * DEFINE_VARs. False (error recorded) on an invalid uop. */
TKC_HIDDEN bool tkc_cs_prepass(tkc_cs *cs);
/* Renders each uop at its first position, depth starting at 1; false (error recorded) on failure. */
TKC_HIDDEN bool tkc_cs_loop(tkc_cs *cs);

/* errors: "WHO renderer: out of memory" / "cannot render OP of dtype DT: WHY"; both return NULL */
TKC_HIDDEN void *tkc_cs_oom(tkc_cs *cs);
TKC_HIDDEN void *tkc_cs_unsupported(tkc_cs *cs, const tkc_uop *u, const char *why);
/* a malloc'ed formatted string; NULL (and the error recorded) on OOM */
#define tkc_cs_fmt(cs, ...) tkc_render_fmt(&(cs)->failed, (cs)->lang->who, __VA_ARGS__)

/* position of u in uops (-1: not there) and the rendered text of source s of user (NULL + EINTERNAL
 * when it was not rendered before its use) */
TKC_HIDDEN int tkc_cs_pos(const tkc_cs *cs, const tkc_uop *u);
TKC_HIDDEN const char *tkc_cs_ref(tkc_cs *cs, const tkc_uop *user, const tkc_uop *s);

/* one statement line at the given depth */
TKC_HIDDEN void tkc_cs_emit(tkc_cs *cs, int depth, const char *fmt, ...) TKC_PRINTF(3, 4);

/* Gives position i its value text e (taken): inline when inl, else a new name of kind pfx declared
 * with the type of uops[i]. False when rendering failed. */
TKC_HIDDEN bool tkc_cs_bind(tkc_cs *cs, size_t i, char *e, bool inl, int pfx, int depth);
/* inline position i: it is used once and need not be named */
TKC_HIDDEN bool tkc_cs_inline(const tkc_cs *cs, size_t i);

/* the lang's code_for_op template of op filled with a[] (malloc'ed; NULL + error on OOM) */
TKC_HIDDEN char *tkc_cs_op(tkc_cs *cs, int op, const char *const *a);
/* lane k of source s of user (a scalar source is the same in every lane) */
TKC_HIDDEN char *tkc_cs_lane(tkc_cs *cs, const tkc_uop *user, const tkc_uop *s, int k);
/* joins n lane expressions into a vector literal of dtype dt (frees them) */
TKC_HIDDEN char *tkc_cs_vec(tkc_cs *cs, const tkc_uop *u, tkc_dt dt, char **l, int n);
/* a vector literal of dtype dt from lane_of(cs, u, k) for k < n */
TKC_HIDDEN char *tkc_cs_vec_of(tkc_cs *cs, const tkc_uop *u, tkc_dt dt, int n, char *(*lane_of)(tkc_cs *cs, const tkc_uop *u, int k));
/* a value-producing ALU/CAST/BITCAST u: alu/cast for scalars, native_vector for vectors */
TKC_HIDDEN char *tkc_cs_value_op(tkc_cs *cs, const tkc_uop *u);

/* records DEFINE_GLOBAL uops[i] as buffer "dataN" (TKC_EINVAL when N is taken) */
TKC_HIDDEN bool tkc_cs_add_buf(tkc_cs *cs, size_t i);

/* the shortest decimal that reads back as the same float (f32) or double, with '.' as the decimal
 * point whatever the locale and a ".0" when it has neither a point nor an exponent */
TKC_HIDDEN void tkc_cs_real(double v, bool f32, char *out, size_t n);
/* s is an identifier of the lang that no keyword, reserved prefix or generated name takes */
TKC_HIDDEN bool tkc_cs_name_usable(const tkc_cs_lang *lang, const char *s);

/* the helper code kernels start with (cstyle_prelude.c): C's half typedef (and, without _Float16,
 * its conversions) and bfloat16 helpers; WGSL's helper functions by bit of wgsl.c's H_* flags */
extern TKC_HIDDEN const char *const tkc_cs_c_half, *const tkc_cs_c_bf16;
#define TKC_CS_WGSL_NHELPERS 7
extern TKC_HIDDEN const char *const tkc_cs_wgsl_helpers[TKC_CS_WGSL_NHELPERS];

#endif
