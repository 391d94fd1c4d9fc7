/* test_movement_chains.c — any number of movement ops in a row (issue 26). Random chains of
 * reshape/permute/expand/pad/shrink/flip, 1 to 2,000 ops long, on every device, checked against a
 * plain-C reference that applies the same ops to the values; the two chains the issue reported (10
 * and 200 reshape+transpose pairs on a (6,4) tensor: once "a view needs more than 8 stacked views"
 * and "more than 256 movement ops in a row"); chains over a buffer, an elementwise node and a
 * reduce, read directly, by an elementwise op with another input, and by reduces; chains whose views
 * merge still take one kernel; and a 50,000-op chain built on a small thread stack. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include "tensor_ref.h"

#define MAXN 96 /* elements a chain's tensor may have */
#define MAXD 4  /* and dims */

/* ---------------------------------------------------------------- the reference */

typedef struct chain_ref {
  int ndim;
  int64_t shape[MAXD];
  double v[MAXN * 4]; /* row-major; (the room an expand or pad may take before its size is checked) */
} chain_ref;

static int64_t ref_numel(int ndim, const int64_t *shape) {
  int64_t n = 1;
  for (int i = 0; i < ndim; i++) n *= shape[i];
  return n;
}

static void unravel(int64_t k, int ndim, const int64_t *shape, int64_t *idx) {
  for (int i = ndim - 1; i >= 0; i--) idx[i] = k % shape[i], k /= shape[i];
}

static int64_t ravel(const int64_t *idx, int ndim, const int64_t *shape) {
  int64_t k = 0;
  for (int i = 0; i < ndim; i++) k = k * shape[i] + idx[i];
  return k;
}

enum { OP_RESHAPE, OP_PERMUTE, OP_EXPAND, OP_PAD, OP_SHRINK, OP_FLIP, NOPS };

/* one movement op: its kind and arguments (shape for reshape/expand, order for permute, pads or
 * ranges as begin/end pairs, flip flags), the same for the reference and for tkc */
typedef struct move {
  int op, ndim;
  int64_t shape[MAXD], pairs[2 * MAXD];
  int order[MAXD], flip[MAXD];
  double value; /* a pad's */
} move;

/* out[idx] = in[map(idx)] or a pad's value */
static void ref_apply(chain_ref *r, const move *m) {
  chain_ref o = {.ndim = m->ndim};
  for (int i = 0; i < r->ndim; i++) o.shape[i] = r->shape[i];
  switch (m->op) {
  case OP_RESHAPE:
  case OP_EXPAND: memcpy(o.shape, m->shape, sizeof o.shape); break;
  case OP_PERMUTE:
    for (int i = 0; i < r->ndim; i++) o.shape[i] = r->shape[m->order[i]];
    break;
  case OP_PAD:
    for (int i = 0; i < r->ndim; i++) o.shape[i] = r->shape[i] + m->pairs[2 * i] + m->pairs[2 * i + 1];
    break;
  case OP_SHRINK:
    for (int i = 0; i < r->ndim; i++) o.shape[i] = m->pairs[2 * i + 1] - m->pairs[2 * i];
    break;
  default: break;
  }
  int64_t n = ref_numel(o.ndim, o.shape), idx[MAXD] = {0}, src[MAXD] = {0};
  for (int64_t k = 0; k < n; k++) {
    unravel(k, o.ndim, o.shape, idx);
    bool inside = true;
    for (int i = 0; i < r->ndim; i++) {
      switch (m->op) {
      case OP_PERMUTE: src[m->order[i]] = idx[i]; break;
      case OP_EXPAND: src[i] = r->shape[i] == 1 ? 0 : idx[i]; break;
      case OP_PAD:
        src[i] = idx[i] - m->pairs[2 * i];
        inside &= src[i] >= 0 && src[i] < r->shape[i];
        break;
      case OP_SHRINK: src[i] = idx[i] + m->pairs[2 * i]; break;
      case OP_FLIP: src[i] = m->flip[i] ? r->shape[i] - 1 - idx[i] : idx[i]; break;
      default: break;
      }
    }
    o.v[k] = m->op == OP_RESHAPE ? r->v[k] : inside ? r->v[ravel(src, r->ndim, r->shape)] : m->value;
  }
  *r = o;
}

static tkc_tensor *tkc_apply(tkc_tensor *t, const move *m) {
  switch (m->op) {
  case OP_RESHAPE: return tkc_reshape(t, m->ndim, m->shape);
  case OP_PERMUTE: return tkc_permute(t, m->order);
  case OP_EXPAND: return tkc_expand(t, m->ndim, m->shape);
  case OP_PAD: return tkc_pad(t, m->pairs, m->value);
  case OP_SHRINK: return tkc_shrink(t, m->pairs);
  default: {
    int axes[MAXD], na = 0;
    for (int i = 0; i < m->ndim; i++)
      if (m->flip[i]) axes[na++] = i;
    return tkc_flip(t, na, axes);
  }
  }
}

/* ---------------------------------------------------------------- random chains */

static uint64_t rnd(uint64_t *s) { /* splitmix64 */
  uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}
static int rnd_below(uint64_t *s, int n) { return (int)(rnd(s) % (uint64_t)n); }

/* a random movement op that keeps the tensor within MAXN elements and MAXD dims (never empty) */
static move random_move(uint64_t *s, const chain_ref *r) {
  int64_t n = ref_numel(r->ndim, r->shape);
  for (;;) {
    move m = {.op = rnd_below(s, NOPS), .ndim = r->ndim};
    switch (m.op) {
    case OP_RESHAPE: { /* a random factorization of n into 1..MAXD dims */
      m.ndim = 1 + rnd_below(s, MAXD);
      int64_t left = n;
      for (int i = 0; i < m.ndim - 1; i++) {
        int64_t divs[MAXN], nd = 0;
        for (int64_t d = 1; d <= left; d++)
          if (left % d == 0) divs[nd++] = d;
        m.shape[i] = divs[rnd_below(s, (int)nd)];
        left /= m.shape[i];
      }
      m.shape[m.ndim - 1] = left;
      return m;
    }
    case OP_PERMUTE:
      if (r->ndim < 2) continue;
      for (int i = 0; i < r->ndim; i++) m.order[i] = i;
      for (int i = r->ndim - 1; i > 0; i--) {
        int j = rnd_below(s, i + 1), t = m.order[i];
        m.order[i] = m.order[j], m.order[j] = t;
      }
      return m;
    case OP_EXPAND: {
      int64_t grown = n;
      bool any = false;
      for (int i = 0; i < r->ndim; i++) {
        m.shape[i] = r->shape[i];
        if (r->shape[i] == 1 && rnd_below(s, 2)) {
          m.shape[i] = 2 + rnd_below(s, 2);
          grown *= m.shape[i];
          any = true;
        }
      }
      if (!any || grown > MAXN) continue;
      return m;
    }
    case OP_PAD: {
      int64_t grown = 1;
      bool any = false;
      for (int i = 0; i < r->ndim; i++) {
        m.pairs[2 * i] = rnd_below(s, 3) == 0, m.pairs[2 * i + 1] = rnd_below(s, 3) == 0;
        any |= m.pairs[2 * i] || m.pairs[2 * i + 1];
        grown *= r->shape[i] + m.pairs[2 * i] + m.pairs[2 * i + 1];
      }
      if (!any || grown > MAXN) continue;
      m.value = -1 - rnd_below(s, 7);
      return m;
    }
    case OP_SHRINK: {
      bool any = false;
      for (int i = 0; i < r->ndim; i++) {
        int64_t d = r->shape[i], b = 0, e = d;
        if (d > 1 && rnd_below(s, 2)) {
          b = rnd_below(s, (int)d);
          e = b + 1 + rnd_below(s, (int)(d - b));
          any |= b != 0 || e != d;
        }
        m.pairs[2 * i] = b, m.pairs[2 * i + 1] = e;
      }
      if (!any || n < 8) continue;
      return m;
    }
    default: {
      bool any = false;
      for (int i = 0; i < r->ndim; i++) any |= (m.flip[i] = rnd_below(s, 2)) && r->shape[i] > 1;
      if (!any) continue;
      return m;
    }
    }
  }
}

/* ---------------------------------------------------------------- checks */

static bool close_to(double got, double want) { return fabs(got - want) <= 1e-5 * (fabs(want) > 1 ? fabs(want) : 1); }

/* t (float32) against want[0..n) */
static void expect_values(tkc_tensor *t, const double *want, int64_t n, const char *dev, const char *what) {
  float got[MAXN];
  TR_EXPECT(t && tkc_numel(t) == n, "%s: %s: %lld elements expected", dev, what, (long long)n);
  if (!t || tkc_numel(t) != n) return;
  tkc_status st = tkc_copy_out(t, got, (size_t)n * sizeof *got);
  TR_EXPECT(st == TKC_OK, "%s: %s: copy_out", dev, what);
  if (st) return;
  int bad = 0;
  for (int64_t k = 0; k < n && bad < 3; k++)
    if (!close_to(got[k], want[k])) {
      bad++;
      tr_problem("%s: %s: element %lld is %g, not %g", dev, what, (long long)k, (double)got[k], want[k]);
    }
}

/* What a chain is built on: a buffer, an elementwise node over one (recip: a pad must not be
 * pushed into it), or a reduce. The start is (6,4) with values 1..24 (or what the node makes of them). */
enum { ON_BUFFER, ON_ELEMENTWISE, ON_REDUCE, NBASES };
static const char *const base_names[NBASES] = {"buffer", "elementwise", "reduce"};

static tkc_tensor *start_tensor(tkc_ctx *ctx, int base, chain_ref *r) {
  float v[48];
  for (int k = 0; k < 24; k++) v[k] = v[24 + k] = (float)(k + 1);
  *r = (chain_ref){.ndim = 2, .shape = {6, 4}};
  for (int k = 0; k < 24; k++) r->v[k] = base == ON_ELEMENTWISE ? 1.0 / (k + 1) : base == ON_REDUCE ? 2.0 * (k + 1) : k + 1;
  if (base == ON_REDUCE) /* sum over the first axis of [x, x] */
    return tkc_sum(tkc_tensor_new(ctx, TKC_FLOAT32, 3, (const int64_t[]){2, 6, 4}, v), 1, (const int[]){0}, 0);
  tkc_tensor *x = tkc_tensor_new(ctx, TKC_FLOAT32, 2, (const int64_t[]){6, 4}, v);
  return base == ON_ELEMENTWISE ? tkc_recip(x) : x;
}

/* a seeded random chain of len ops over the start; realize_every > 0: the chain is realized (a
 * buffer seen through a view) every that many ops, and goes on from there */
static tkc_tensor *random_chain(tkc_ctx *ctx, int base, uint64_t seed, int len, int realize_every, chain_ref *r) {
  tkc_tensor *t = start_tensor(ctx, base, r);
  for (int i = 0; i < len && t; i++) {
    move m = random_move(&seed, r);
    ref_apply(r, &m);
    t = tkc_apply(t, &m);
    if (realize_every && (i + 1) % realize_every == 0 && tkc_realize(t)) return NULL;
  }
  return t;
}

/* the readers of a chain: itself, an elementwise op with another input, a sum over the last axis,
 * and a sum of all of 2 * chain */
enum { READ_DIRECT, READ_ADD, READ_SUM_AXIS, READ_SUM_ALL, NREADS };
static const char *const read_names[NREADS] = {"direct", "+ y", "sum(axis -1)", "sum(2 * chain)"};

static tkc_tensor *read_chain(tkc_ctx *ctx, tkc_tensor *t, int how, const chain_ref *r, double *want, int64_t *nwant) {
  int64_t n = ref_numel(r->ndim, r->shape);
  switch (how) {
  case READ_DIRECT:
    memcpy(want, r->v, (size_t)n * sizeof *want);
    *nwant = n;
    return t;
  case READ_ADD: {
    float y[MAXN];
    for (int64_t k = 0; k < n; k++) y[k] = 100.0f * (float)k, want[k] = r->v[k] + 100.0 * (double)k;
    *nwant = n;
    return tkc_add(t, tkc_tensor_new(ctx, TKC_FLOAT32, r->ndim, r->shape, y));
  }
  case READ_SUM_AXIS: {
    int64_t last = r->shape[r->ndim - 1];
    *nwant = n / last;
    for (int64_t o = 0; o < n / last; o++) {
      want[o] = 0;
      for (int64_t j = 0; j < last; j++) want[o] += r->v[o * last + j];
    }
    return tkc_sum(t, 1, (const int[]){-1}, 0);
  }
  default:
    *nwant = 1;
    want[0] = 0;
    for (int64_t k = 0; k < n; k++) want[0] += 2 * r->v[k];
    return tkc_sum(tkc_mul(t, tkc_scalar(ctx, TKC_FLOAT32, 2)), 0, NULL, 0);
  }
}

/* ---------------------------------------------------------------- tests */

/* the issue's chains: (6,4) -> reshape (4,6) -> transpose, 10 and 200 times */
static void test_issue_pairs(void **state) {
  (void)state;
  tr_begin();
  FOR_EACH_DEVICE(dev, ctx) {
    for (int pairs = 10; pairs <= 200; pairs += 190) {
      for (int how = 0; how < NREADS; how++) {
        tkc_scope_begin(ctx);
        chain_ref r;
        tkc_tensor *t = start_tensor(ctx, ON_BUFFER, &r);
        for (int i = 0; i < pairs; i++) {
          move m = {.op = OP_RESHAPE, .ndim = 2, .shape = {r.shape[1] == 4 ? 4 : 6, r.shape[1] == 4 ? 6 : 4}};
          ref_apply(&r, &m);
          t = tkc_reshape(t, 2, m.shape);
          m = (move){.op = OP_PERMUTE, .ndim = 2, .order = {1, 0}};
          ref_apply(&r, &m);
          t = tkc_transpose(t, 0, 1);
        }
        double want[MAXN];
        int64_t nwant = 0;
        char what[64];
        snprintf(what, sizeof what, "%d reshape+transpose pairs, %s", pairs, read_names[how]);
        tkc_tensor *x = read_chain(ctx, t, how, &r, want, &nwant);
        TR_EXPECT(tkc_kernel_count(x) >= 1, "%s: %s: kernels", dev, what);
        if (how == READ_DIRECT) TR_EXPECT(tkc_realize(x) == TKC_OK, "%s: %s: realize", dev, what);
        expect_values(x, want, nwant, dev, what);
        tkc_scope_end(ctx);
      }
    }
  }
  TR_END();
}

/* a built chain t (NULL: the build failed) read back by `how` and compared with its reference r */
static void check_chain(tkc_ctx *ctx, const char *dev, tkc_tensor *t, int how, const chain_ref *r, const char *what) {
  TR_EXPECT(t != NULL, "%s: %s: built", dev, what);
  if (!t) return;
  double want[MAXN];
  int64_t nwant = 0;
  tkc_tensor *x = read_chain(ctx, t, how, r, want, &nwant);
  expect_values(x, want, nwant, dev, what);
}

/* seeded random chains of 1 to 2,000 ops: on INTERP every base with every reader, on the devices
 * that compile kernels one of those pairs per length, another one from one length to the next
 * (every pair is met on each device; compiling every copy kernel would take minutes) */
static void test_random_chains(void **state) {
  (void)state;
  tr_begin();
  static const int lens[] = {1, 2, 3, 5, 8, 13, 20, 50, 100, 200, 500, 1000, 2000};
  FOR_EACH_DEVICE(dev, ctx) {
    bool all = !strcmp(dev, "INTERP");
    for (size_t li = 0; li < sizeof lens / sizeof *lens; li++)
      for (int base = 0; base < NBASES; base++)
        for (int how = 0; how < NREADS; how++) {
          if (!all && (size_t)(base * NREADS + how) != li * 7 % (NBASES * NREADS)) continue;
          tkc_scope_begin(ctx);
          uint64_t seed = 1000 * (uint64_t)lens[li] + 7 * (uint64_t)base + 1;
          chain_ref r;
          tkc_tensor *t = random_chain(ctx, base, seed, lens[li], 0, &r);
          char what[96];
          snprintf(what, sizeof what, "%d-op chain (seed %llu) over a %s, %s", lens[li], (unsigned long long)seed, base_names[base], read_names[how]);
          check_chain(ctx, dev, t, how, &r, what);
          tkc_scope_end(ctx);
        }
  }
  TR_END();
}

/* chains realized along the way: later ops start from a buffer seen through up to a full stack of
 * views (a view as a kernel's input and under further views) */
static void test_realized_midway(void **state) {
  (void)state;
  tr_begin();
  FOR_EACH_DEVICE(dev, ctx) {
    for (int len = 60; len <= 600; len *= 10)
      for (int how = 0; how < NREADS; how++) {
        tkc_scope_begin(ctx);
        uint64_t seed = 77 + (uint64_t)len;
        chain_ref r;
        tkc_tensor *t = random_chain(ctx, ON_BUFFER, seed, len, 7, &r);
        char what[96];
        snprintf(what, sizeof what, "%d-op chain realized every 7 ops, %s", len, read_names[how]);
        check_chain(ctx, dev, t, how, &r, what);
        tkc_scope_end(ctx);
      }
  }
  TR_END();
}

/* views that merge take no extra kernel, however many ops: permutes and flips of a (2,3,4) tensor */
static void test_merging_chains_one_kernel(void **state) {
  (void)state;
  tr_begin();
  tkc_ctx *ctx = tkc_ctx_new("INTERP");
  for (int len = 10; len <= 1000; len *= 10) {
    tkc_scope_begin(ctx);
    float v[24], yv[24];
    for (int k = 0; k < 24; k++) v[k] = (float)k, yv[k] = 1000.0f * (float)k;
    tkc_tensor *x = tkc_tensor_new(ctx, TKC_FLOAT32, 3, (const int64_t[]){2, 3, 4}, v), *t = x;
    chain_ref r = {.ndim = 3, .shape = {2, 3, 4}};
    for (int k = 0; k < 24; k++) r.v[k] = k;
    uint64_t seed = (uint64_t)len;
    for (int i = 0; i < len; i++) {
      move m = {.ndim = 3};
      if (i % 2 == 0) {
        m.op = OP_PERMUTE;
        for (int a = 0; a < 3; a++) m.order[a] = a;
        int j = rnd_below(&seed, 3), l = (j + 1 + rnd_below(&seed, 2)) % 3;
        m.order[j] = l, m.order[l] = j;
      } else {
        m.op = OP_FLIP;
        m.flip[rnd_below(&seed, 3)] = 1;
      }
      ref_apply(&r, &m);
      t = tkc_apply(t, &m);
    }
    TR_EXPECT(tkc_kernel_count(t) == 0, "a %d-op chain that merges, over a buffer: no kernel (%d)", len, tkc_kernel_count(t));
    tkc_tensor *y = tkc_tensor_new(ctx, TKC_FLOAT32, 3, r.shape, yv), *sum = tkc_add(t, y);
    TR_EXPECT(tkc_kernel_count(sum) == 1, "a %d-op chain that merges + y: one kernel (%d)", len, tkc_kernel_count(sum));
    tkc_tensor *red = tkc_sum(tkc_exp2(t), 1, (const int[]){1}, 0);
    TR_EXPECT(tkc_kernel_count(red) == 1, "sum(exp2(a %d-op chain that merges)): one kernel (%d)", len, tkc_kernel_count(red));
    double want[MAXN];
    for (int k = 0; k < 24; k++) want[k] = r.v[k] + 1000.0 * k;
    expect_values(sum, want, 24, "INTERP", "merging chain + y");
    expect_values(t, r.v, 24, "INTERP", "merging chain");
    tkc_scope_end(ctx);
  }
  /* and the plain cases stay as they were */
  tkc_scope_begin(ctx);
  tkc_tensor *a = tkc_rand(ctx, TKC_FLOAT32, 2, (const int64_t[]){4, 6}, 1), *b = tkc_rand(ctx, TKC_FLOAT32, 2, (const int64_t[]){6, 4}, 2);
  TR_EXPECT(tkc_realize(a) == TKC_OK && tkc_realize(b) == TKC_OK, "rand");
  TR_EXPECT(tkc_kernel_count(tkc_add(tkc_transpose(a, 0, 1), b)) == 1, "a.T + b: one kernel");
  TR_EXPECT(tkc_kernel_count(tkc_sum(tkc_reshape(tkc_transpose(a, 0, 1), 1, (const int64_t[]){24}), 0, NULL, 0)) == 1, "sum(reshape(a.T)): one kernel");
  TR_EXPECT(tkc_kernel_count(tkc_reshape(tkc_transpose(a, 0, 1), 2, (const int64_t[]){4, 6})) == 0, "reshape(a.T) over a buffer: a view, no kernel");
  TR_EXPECT(tkc_kernel_count(tkc_add(tkc_reshape(tkc_transpose(a, 0, 1), 2, (const int64_t[]){4, 6}), a)) == 1, "reshape(a.T) + a: one kernel");
  tkc_scope_end(ctx);
  tkc_ctx_free(ctx);
  TR_END();
}

/* 50,000 ops (permutes and reshapes that merge, and pairs that do not) built and realized on a
 * thread with a 512 KiB stack: no recursion per movement op */
typedef struct deep_job {
  const char *dev;
  int ok;
  double got[MAXN], want[MAXN];
  int64_t n;
} deep_job;

static void *deep_chain(void *arg) {
  deep_job *j = arg;
  tkc_ctx *ctx = tkc_ctx_new(j->dev);
  if (!ctx) return NULL;
  tkc_scope_begin(ctx);
  chain_ref r;
  tkc_tensor *t = start_tensor(ctx, ON_ELEMENTWISE, &r);
  for (int i = 0; i < 50000 && t; i++) {
    move m = {.op = OP_PERMUTE, .ndim = 2, .order = {1, 0}};
    if (i % 1000 == 999) m = (move){.op = OP_RESHAPE, .ndim = 2, .shape = {r.shape[1], r.shape[0]}}; /* (does not merge) */
    ref_apply(&r, &m);
    t = tkc_apply(t, &m);
  }
  j->n = ref_numel(r.ndim, r.shape);
  tkc_tensor *y = t ? tkc_add(t, tkc_scalar(ctx, TKC_FLOAT32, 1)) : NULL;
  float got[MAXN];
  j->ok = y && tkc_copy_out(y, got, (size_t)j->n * sizeof *got) == TKC_OK;
  for (int64_t k = 0; k < j->n; k++) j->got[k] = got[k], j->want[k] = r.v[k] + 1;
  tkc_scope_end(ctx);
  tkc_ctx_free(ctx);
  return NULL;
}

static void test_deep_chain_small_stack(void **state) {
  (void)state;
  tr_begin();
  static const char *const devs[] = {"INTERP", "CPU"};
  for (int d = 0; d < 2; d++) {
    tkc_ctx *probe = tr_ctx_open(devs[d]); /* (available and not left out by TKC_TEST_DEVICES) */
    if (!probe) continue;
    tkc_ctx_free(probe);
    deep_job j = {.dev = devs[d]};
    pthread_attr_t attr;
    pthread_t th;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, 512 * 1024);
    TR_EXPECT(pthread_create(&th, &attr, deep_chain, &j) == 0, "thread");
    pthread_join(th, NULL);
    pthread_attr_destroy(&attr);
    TR_EXPECT(j.ok, "%s: a 50,000-op chain + 1 realized", devs[d]);
    for (int64_t k = 0; j.ok && k < j.n; k++) TR_EXPECT(close_to(j.got[k], j.want[k]), "%s: element %lld: %g, not %g", devs[d], (long long)k, j.got[k], j.want[k]);
  }
  TR_END();
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_issue_pairs),
      cmocka_unit_test(test_random_chains),
      cmocka_unit_test(test_realized_midway),
      cmocka_unit_test(test_merging_chains_one_kernel),
      cmocka_unit_test(test_deep_chain_small_stack),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
