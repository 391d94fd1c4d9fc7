/* tests/fuzz/fuzz_pattern.c — fuzzes the pattern compiler (tkc_matcher_new) and the matcher.
 *
 * The input is split at newlines into up to 4 pattern strings, compiled as one matcher. It must
 * either compile or fail with NULL and an error message (never crash, hang or leak). A matcher
 * that compiles is run over a small fixed graph (tkc_rewrite_once on every node, tkc_graph_rewrite
 * on the root) with a callback that reads its bindings and rewrites nothing, so matching itself is
 * exercised on every pattern the compiler accepts.
 *
 * Built with -DFZ_LIBFUZZER it is a libFuzzer target. Otherwise main() runs
 *   fuzz_pattern [--seed N] [--count N] [--verbose] [FILE...]
 * on N random strings built from the notation's tokens and random bytes (or on the given files). */
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tkc/uop.h"
#include "fz_driver.h"

#define MAXRULES 4
#define MAXLEN 4096

static bool verbose;

/* reads the bindings a pattern can make; rewrites nothing */
static tkc_uop *peek(tkc_graph *g, const tkc_match *m, void *ctx) {
  static const char *const names[] = {"x", "y", "c", "a", "b", "root", "_"};
  (void)g;
  int *hits = ctx;
  if (tkc_match_root(m)) ++*hits;
  for (size_t i = 0; i < sizeof names / sizeof *names; i++) (void)tkc_match_get(m, names[i]);
  return NULL;
}

/* a few UOps to match against: ((a*4) + b) // 3 < 7, max, where, casts, consts */
static tkc_uop *sample_graph(tkc_graph *g) {
  tkc_dt i32 = tkc_dt_of(TKC_INT32);
  tkc_uop *a = tkc_uop_var(g, "a", 0, 10), *b = tkc_uop_var(g, "b", -3, 3);
  tkc_uop *c4 = tkc_uop_const_int(g, i32, 4), *c3 = tkc_uop_const_int(g, i32, 3), *c0 = tkc_uop_const_int(g, i32, 0);
  tkc_uop *e = tkc_uop_alu2(g, TKC_OP_IDIV, tkc_uop_alu2(g, TKC_OP_ADD, tkc_uop_alu2(g, TKC_OP_MUL, a, c4), b), c3);
  tkc_uop *lt = tkc_uop_alu2(g, TKC_OP_CMPLT, e, tkc_uop_const_int(g, i32, 7));
  tkc_uop *w = tkc_uop_alu3(g, TKC_OP_WHERE, lt, tkc_uop_alu2(g, TKC_OP_MAX, e, c0), tkc_uop_alu1(g, TKC_OP_NEG, b));
  tkc_uop *f = tkc_uop_cast(g, w, tkc_dt_of(TKC_FLOAT32));
  tkc_uop *s = tkc_uop_alu2(g, TKC_OP_ADD, f, tkc_uop_const_float(g, tkc_dt_of(TKC_FLOAT32), 0.0));
  tkc_uop *srcs[2] = {s, tkc_uop_cast(g, w, tkc_dt_of(TKC_INT8))};
  return tkc_uop_sink(g, 2, srcs);
}

static void exercise(const tkc_matcher *pm) {
  tkc_graph *g = tkc_graph_new();
  tkc_uop *root = g ? sample_graph(g) : NULL;
  size_t n = 0;
  tkc_uop **order = root ? tkc_toposort(root, &n) : NULL;
  int hits = 0;
  for (size_t i = 0; i < n; i++) (void)tkc_rewrite_once(pm, g, order[i], &hits);
  if (root) (void)tkc_graph_rewrite(g, root, pm, &hits);
  tkc_free(order);
  tkc_graph_free(g);
}

/* 0 when the patterns compiled or failed cleanly; 1 when a failure came without a message */
static int test_one(const uint8_t *data, size_t size) {
  if (size > MAXLEN) size = MAXLEN;
  char *text = malloc(size + 1);
  if (!text) return 0;
  memcpy(text, data, size);
  text[size] = 0; /* an embedded NUL just ends that pattern early */
  tkc_rule rules[MAXRULES];
  size_t nr = 0;
  for (char *p = text; nr < MAXRULES;) {
    rules[nr++] = (tkc_rule){p, peek};
    char *nl = strchr(p, '\n');
    if (!nl) break;
    *nl = 0;
    p = nl + 1;
  }
  tkc_clear_error();
  tkc_matcher *pm = tkc_matcher_new(rules, nr);
  int bad = 0;
  if (pm) {
    if (verbose) printf("ok: %s\n", text);
    exercise(pm);
    tkc_matcher_free(pm);
  } else if (!*tkc_last_error() || tkc_last_status() == TKC_OK) {
    printf("FAIL: tkc_matcher_new returned NULL without an error for \"%s\"\n", text);
    bad = 1;
  } else if (verbose) printf("refused (%s): %s\n", tkc_last_error(), text);
  free(text);
  return bad;
}

#ifdef FZ_LIBFUZZER
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (test_one(data, size)) abort();
  return 0;
}
#else
static uint64_t rng;
static unsigned next(unsigned n) {
  rng = rng * 6364136223846793005ull + 1442695040888963407ull;
  return (unsigned)(rng >> 33) % n;
}

static const char *pick(const char *const *v, size_t n) { return v[next((unsigned)n)]; }
#define PICK(v) pick(v, sizeof v / sizeof *v)

typedef struct out {
  char *b;
  size_t n, cap;
} out;

static void put(out *o, const char *s) {
  size_t len = strlen(s);
  if (o->n + len < o->cap) memcpy(o->b + o->n, s, len), o->n += len;
}

/* OP, OP|OP or a group, with an optional dtype filter and arg */
static void gen_op(out *o) {
  static const char *const ops[] = {"ADD", "MUL", "CONST", "WHERE", "CMPLT", "CMPNE", "IDIV", "MOD", "MAX", "CAST", "NEG", "SINK", "DEFINE_VAR",
                                    "ALU", "BINARY", "UNARY", "TERNARY", "COMMUTATIVE", "ASSOCIATIVE", "IDEMPOTENT", "IRREDUCIBLE", "MOVEMENT", "ALL", "VCONST"};
  static const char *const dts[] = {"<int>", "<bool>", "<float32>", "<floats>", "<ints|uints>", "<sints>", "<ptr>", "<void>", "<int8|float64>", "<nope>", "<>"};
  static const char *const args[] = {"[0]", "[1]", "[-1]", "[1.5]", "[true]", "[false]", "[4]", "[1e309]", "[x]", "[]"};
  put(o, PICK(ops));
  while (next(4) == 0) put(o, "|"), put(o, PICK(ops));
  if (next(4) == 0) put(o, PICK(dts));
  if (next(4) == 0) put(o, PICK(args));
}

/* a pattern from the notation's grammar (uop.h), depth-limited */
static void gen_pat(out *o, int depth) {
  static const char *const names[] = {"x", "y", "c", "a", "b", "root", "x0", "_"};
  switch (depth <= 0 ? next(3) : next(9)) {
  case 0: put(o, PICK(names)); return;
  case 1: gen_op(o); return;
  case 2: put(o, next(2) ? "cvar" : "c:cvar"); if (next(3) == 0) put(o, "<int>"); return;
  case 3: put(o, PICK(names)); put(o, ":"); gen_pat(o, depth - 1); return;
  default: {
    put(o, next(4) == 0 ? "~(" : next(5) == 0 ? "=(" : "(");
    gen_op(o);
    if (next(5) == 0) {
      put(o, " ");
      gen_pat(o, depth - 1);
      put(o, "*");
    } else
      for (unsigned k = 0, n = next(4); k < n; k++) put(o, " "), gen_pat(o, depth - 1);
    if (next(5) == 0) put(o, " ...");
    put(o, ")");
  }
  }
}

/* a grammar pattern (several rules now and then), with a few random byte edits */
static size_t random_pattern(char *buf, size_t cap) {
  out o = {buf, 0, cap - 1};
  for (unsigned r = 0, nr = 1 + (next(4) == 0) * next(4); r < nr; r++) {
    if (r) put(&o, "\n");
    gen_pat(&o, 1 + (int)next(4));
  }
  for (unsigned e = 0, ne = next(3) ? 0 : 1 + next(3); e < ne && o.n; e++) {
    size_t at = next((unsigned)o.n);
    switch (next(3)) {
    case 0: memmove(buf + at, buf + at + 1, o.n - at - 1), o.n--; break;                  /* delete */
    case 1: buf[at] = (char)(1 + next(255)); break;                                        /* replace */
    default:                                                                               /* duplicate */
      if (o.n + 1 < cap) memmove(buf + at + 1, buf + at, o.n - at), o.n++;
    }
  }
  return o.n;
}

static size_t gen_pattern(uint64_t seed, long k, uint8_t *buf, size_t cap) {
  if (k == 0) rng = seed;
  return random_pattern((char *)buf, cap < 1024 ? cap : 1024);
}

int main(int argc, char **argv) { return fz_driver(argc, argv, "fuzz_pattern", test_one, gen_pattern, &verbose); }
#endif
