/* Beam search over kernel opts (tinygrad's engine/search.py: beam_search, get_kernel_actions).
 * Candidates are kernels with one more opt than a member of the beam; each round compiles the new
 * ones at once (in parallel where the device allows), times each on the device (best of 3 launches
 * on buffers of the kernel's sizes), and keeps the width fastest of the beam and the candidates.
 * The search starts from the kernel without opts and from the heuristics' pick, so it never returns
 * anything slower than either (as measured); it stops when a round finds nothing faster than the
 * beam's best or the time budget is spent. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "engine/beam.h"
#include "engine/compile_pool.h"
#include "engine/program_build.h"
#include "runtime/device.h"
#include "runtime/disk_cache.h"

#define MAX_ROUND 1024 /* candidates per round */

typedef struct cand {
  tkc_kshape ks;
  tkc_program *p;
  double t;
} cand;

int tkc_beam_width(int setting) {
  if (setting >= 0) return setting;
  const char *e = getenv("TKC_BEAM");
  int n = e && *e ? atoi(e) : 0;
  return n > 0 ? (n > 64 ? 64 : n) : 0;
}

static double budget_s(void) {
  const char *e = getenv("TKC_BEAM_BUDGET");
  double b = e && *e ? atof(e) : 60;
  return b > 0 ? b : 60;
}

/* tinygrad's action list: each is tried on every member of the beam (illegal ones are refused by
 * tkc_kshape_apply) */
static int actions(tkc_opt *a) {
  int n = 0;
  static const int up[] = {0, 2, 3, 4, 5, 7}, unr[] = {0, 4, 7}, loc[] = {2, 3, 4, 8, 13, 16, 29}, gtop[] = {13, 16, 28, 29, 32, 49, 64, 256},
                   grp[] = {0, 4, 8, 16};
  for (size_t k = 0; k < TKC_COUNTOF(up); k++)
    for (int ax = 0; ax < 6; ax++) a[n++] = (tkc_opt){TKC_OPT_UPCAST, ax, up[k]};
  for (size_t k = 0; k < TKC_COUNTOF(unr); k++)
    for (int ax = 0; ax < 5; ax++) a[n++] = (tkc_opt){TKC_OPT_UNROLL, ax, unr[k]};
  for (size_t k = 0; k < TKC_COUNTOF(loc); k++)
    for (int ax = 0; ax < 6; ax++) a[n++] = (tkc_opt){TKC_OPT_LOCAL, ax, loc[k]};
  for (size_t k = 0; k < TKC_COUNTOF(gtop); k++)
    for (int ax = 0; ax < 3; ax++) a[n++] = (tkc_opt){TKC_OPT_GROUPTOP, ax, gtop[k]};
  for (size_t k = 0; k < TKC_COUNTOF(grp); k++)
    for (int ax = 0; ax < 3; ax++) a[n++] = (tkc_opt){TKC_OPT_GROUP, ax, grp[k]};
  for (int ax = 0; ax < 7; ax++) a[n++] = (tkc_opt){TKC_OPT_PADTO, ax, 32};
  a[n++] = (tkc_opt){TKC_OPT_LOCAL, 0, 32};
  a[n++] = (tkc_opt){TKC_OPT_TC, 0, 0};
  for (int x = 0; x < 5; x++)
    for (int y = x + 1; y < 5; y++) a[n++] = (tkc_opt){TKC_OPT_SWAP, x, y};
  a[n++] = (tkc_opt){TKC_OPT_NOLOCALS, 0, 0};
  return n;
}

/* what the kernel's code depends on: its axes (not the opts that made them: SWAP twice is no opt) */
static uint64_t shape_hash(const tkc_kshape *ks) {
  int64_t v[4 * TKC_MAX_AXES + TKC_MAX_DIMS + 3];
  int n = 0;
  for (int i = 0; i < ks->naxes; i++) v[n++] = ks->ax[i].dim, v[n++] = ks->ax[i].size, v[n++] = ks->ax[i].stride, v[n++] = ks->ax[i].kind;
  for (int d = 0; d < ks->ndim; d++) v[n++] = ks->padded[d];
  v[n++] = ks->nolocals, v[n++] = ks->tc, v[n++] = ks->naxes;
  return tkc_hash64(v, (size_t)n * sizeof *v, 7);
}

/* ---------------------------------------------------------------- buffers */

static uint32_t lcg(uint32_t *s) { return *s = *s * 1664525u + 1013904223u; }

/* random values a kernel computes sensibly on: floats in [-1, 1) (16-bit floats: exact halves),
 * ints in [0, 8), bools 0/1, fp8 multiples of 0.5 in [-1.5, 2] */
static void fill_random(void *p, tkc_dtype dt, size_t n, uint32_t seed) {
  static const uint16_t half[8] = {0x3c00, 0x3800, 0xbc00, 0x3400, 0xb800, 0x4000, 0x0000, 0xb400};
  static const uint16_t bf16[8] = {0x3f80, 0x3f00, 0xbf80, 0x3e80, 0xbf00, 0x4000, 0x0000, 0xbe80};
  for (size_t i = 0; i < n; i++) {
    uint32_t r = lcg(&seed) >> 8;
    double f = (double)r / 8388608.0 - 1.0;
    switch (dt) {
    case TKC_FLOAT32: ((float *)p)[i] = (float)f; break;
    case TKC_FLOAT64: ((double *)p)[i] = f; break;
    case TKC_FLOAT16: ((uint16_t *)p)[i] = half[r & 7]; break;
    case TKC_BFLOAT16: ((uint16_t *)p)[i] = bf16[r & 7]; break;
    case TKC_BOOL: ((unsigned char *)p)[i] = r & 1; break;
    case TKC_FLOAT8_E4M3FN: case TKC_FLOAT8_E5M2: ((uint8_t *)p)[i] = tkc_fp8_from_double((double)((int)(r & 7) - 3) * 0.5, dt); break;
    default: { /* integers, little-endian: the low byte in [0, 8) and the rest 0 */
      size_t sz = tkc_dtype_size(dt);
      memset((char *)p + i * sz, 0, sz);
      ((unsigned char *)p)[i * sz] = (unsigned char)(r & 7);
    }
    }
  }
}

static double half_value(uint16_t h) {
  int e = (h >> 10) & 31, m = h & 1023;
  double v = e == 0 ? ldexp(m, -24) : e == 31 ? (m ? NAN : INFINITY) : ldexp(m + 1024, e - 25);
  return h & 0x8000 ? -v : v;
}

static double value_at(const void *p, tkc_dtype dt, size_t i) {
  switch (dt) {
  case TKC_FLOAT32: return ((const float *)p)[i];
  case TKC_FLOAT64: return ((const double *)p)[i];
  case TKC_FLOAT16: return half_value(((const uint16_t *)p)[i]);
  case TKC_FLOAT8_E4M3FN: case TKC_FLOAT8_E5M2: return tkc_fp8_to_float(((const uint8_t *)p)[i], dt);
  default: { /* BFLOAT16 */
    uint32_t bits = (uint32_t)((const uint16_t *)p)[i] << 16;
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
  }
  }
}

/* outputs of two versions of one kernel agree: floats within a relative 1e-3 of the largest
 * magnitude (the opts reorder sums), integers and bools exactly */
static bool same_output(const void *a, const void *b, tkc_dtype dt, size_t n) {
  bool fp8 = dt == TKC_FLOAT8_E4M3FN || dt == TKC_FLOAT8_E5M2;
  if (dt != TKC_FLOAT32 && dt != TKC_FLOAT64 && dt != TKC_FLOAT16 && dt != TKC_BFLOAT16 && !fp8) return !memcmp(a, b, n * tkc_dtype_size(dt));
  double scale = 0;
  for (size_t i = 0; i < n; i++) {
    double y = fabs(value_at(b, dt, i));
    if (isfinite(y) && y > scale) scale = y;
  }
  double tol = (dt == TKC_FLOAT32 || dt == TKC_FLOAT64 ? 1e-3 : fp8 ? 1.25e-1 : 1e-2) * (scale + 1); /* fp8: 2-3 mantissa bits */
  for (size_t i = 0; i < n; i++) {
    double x = value_at(a, dt, i), y = value_at(b, dt, i);
    if (isnan(x) || isnan(y) ? isnan(x) != isnan(y) : isinf(y) ? x != y : fabs(x - y) > tol) return false;
  }
  return true;
}

/* ---------------------------------------------------------------- candidates */

typedef struct search {
  tkc_graph *g;
  tkc_uop *ast;
  tkc_device *d;
  const tkc_renderer *r;
  tkc_buffer *bufs[33];
  int nbufs, threads;
  double t0, budget;
  int tried;
} search;

/* prepares and compiles (together) cands[0..n) */
static void prepare(search *S, cand *c, int n) {
  tkc_program **progs = tkc_calloc((size_t)n + 1, sizeof *progs);
  int np = 0;
  for (int i = 0; i < n; i++) { /* each through the codegen driver with its opts */
    tkc_codegen cg = {.g = S->g, .r = S->r, .ast = S->ast, .given_opts = true, .opts = c[i].ks.opts, .nopts = c[i].ks.nopts};
    c[i].p = tkc_codegen_run(&cg, NULL, "late_rules") ? NULL : tkc_engine_program(S->d, &cg, cg.name);
    c[i].t = INFINITY;
    if (c[i].p && progs) progs[np++] = c[i].p;
  }
  if (np) tkc_compile_all(progs, np, S->threads, NULL, NULL); /* failures show as launch errors */
  tkc_clear_error(); /* refused candidates are not the caller's errors */
  tkc_free(progs);
}

/* runs a candidate on the search's buffers, its variables (a KV cache's length) at their largest
 * values: the buffers are laid out for them, and the kernel does the most work there */
static tkc_status launch(search *S, tkc_program *p) {
  int64_t vars[TKC_MAX_KERNEL_VARS];
  int nv = tkc_program_nvars(p);
  if (nv > (int)TKC_COUNTOF(vars)) return tkc_err(TKC_EUNSUPPORTED, "beam search: a kernel with more than %d variables", (int)TKC_COUNTOF(vars));
  for (int i = 0; i < nv; i++) vars[i] = tkc_program_var_max(p, i);
  return tkc_program_launch_quiet(p, S->bufs, S->nbufs, vars, nv);
}

/* times a prepared candidate: best of 3 launches, one when it is past 3x best (the beam's best so
 * far: no need to know how much slower); INFINITY when it cannot run */
static void time_one(search *S, cand *c, double best) {
  c->t = INFINITY;
  for (int rep = 0; c->p && rep < 3; rep++) {
    double t0 = tkc_now_s();
    if (launch(S, c->p)) {
      c->t = INFINITY;
      break;
    }
    double t = tkc_now_s() - t0;
    if (t < c->t) c->t = t;
    if (c->t > 3 * best) break;
  }
  S->tried++;
  tkc_clear_error();
}

/* prepares and times cands[0..n); past the budget the rest are not timed (INFINITY) */
static void evaluate(search *S, cand *c, int n, double best) {
  prepare(S, c, n);
  for (int i = 0; i < n; i++) {
    if (tkc_now_s() - S->t0 > S->budget) break;
    time_one(S, &c[i], best);
    if (c[i].t < best) best = c[i].t;
  }
}

/* a kernel can be run here within the budget: its estimated ops at a slow 0.5 GFLOP/s fit a tenth
 * of it (the kernel without opts of a 2048 matmul takes half a minute on a CPU) */
static bool affordable(search *S, const tkc_program *p) { return p && (double)tkc_program_ops(p, NULL) / 0.5e9 < S->budget / 10; }

static int by_time(const void *a, const void *b) {
  double x = ((const cand *)a)->t, y = ((const cand *)b)->t;
  return (x > y) - (x < y);
}

static void drop(cand *c, int n) {
  for (int i = 0; i < n; i++) {
    tkc_program_free(c[i].p);
    c[i].p = NULL;
  }
}

/* output of p on the search's buffers into a malloc'ed copy */
static void *output_of(search *S, tkc_program *p) {
  size_t nb = tkc_buffer_nbytes(S->bufs[0]);
  void *out = tkc_malloc(nb ? nb : 1);
  if (out && (launch(S, p) || tkc_buffer_copyout(S->bufs[0], out, nb))) {
    tkc_free(out);
    out = NULL;
  }
  return out;
}

tkc_status tkc_beam_search(tkc_graph *g, tkc_uop *ast, tkc_device *d, const tkc_beam_bufs *bufs, int width, tkc_beam_result *res) {
  memset(res, 0, sizeof *res);
  search S = {.g = g, .d = d, .r = tkc_device_renderer(d), .nbufs = bufs->n, .t0 = tkc_now_s(), .budget = budget_s()};
  S.threads = tkc_compile_threads(d);
  if (width < 1) width = 1;
  if (!S.r) return tkc_err(TKC_EUNSUPPORTED, "beam search: device %s has no renderer to time kernels with", tkc_device_name(d));
  tkc_codegen heur_cg = {.g = g, .r = S.r, .ast = ast}; /* the AST the renderer compiles and the heuristics' opts */
  if (tkc_codegen_run(&heur_cg, NULL, "opts")) return tkc_last_status();
  S.ast = heur_cg.ast;
  cand *beam = tkc_calloc((size_t)width + 2, sizeof *beam), *next = tkc_calloc(MAX_ROUND, sizeof *next);
  cand *all = tkc_calloc((size_t)width + MAX_ROUND + 2, sizeof *all);
  tkc_opt act[256];
  int nact = actions(act), nbeam = 2, nseen = 0, capseen = 4096;
  uint64_t *seen = tkc_malloc((size_t)capseen * sizeof *seen);
  tkc_status st = beam && next && all && seen ? TKC_OK : tkc_err(TKC_ENOMEM, "beam search: out of memory");
  for (int i = 0; !st && i < bufs->n; i++) { /* the kernel's buffers, inputs random */
    S.bufs[i] = tkc_buffer_new(d, bufs->dt[i], bufs->numel[i]);
    size_t nb = bufs->numel[i] * tkc_dtype_size(bufs->dt[i]);
    void *host = i && S.bufs[i] ? tkc_malloc(nb ? nb : 1) : NULL;
    if (host) fill_random(host, bufs->dt[i], bufs->numel[i], 12345u + (uint32_t)i);
    if (!S.bufs[i] || (i && (!host || tkc_buffer_copyin(S.bufs[i], host, nb)))) st = tkc_last_status() ? tkc_last_status() : TKC_ENOMEM;
    tkc_free(host);
  }
  tkc_kshape base, heur = heur_cg.ks;
  if (!st) st = tkc_kshape_init(&base, S.ast);
  bool base_timed = false;
  if (!st) { /* the heuristics' pick first, then no opts unless that would take too long */
    beam[0].ks = heur, beam[1].ks = base;
    seen[nseen++] = shape_hash(&base);
    seen[nseen++] = shape_hash(&heur);
    if (heur.nopts == 0) nbeam = 1;
    prepare(&S, beam, nbeam);
    time_one(&S, &beam[0], INFINITY);
    if (nbeam == 2 && (base_timed = affordable(&S, beam[1].p))) time_one(&S, &beam[1], beam[0].t);
    res->heuristic_s = beam[0].t;
    res->noopt_s = nbeam == 1 ? beam[0].t : beam[1].t;
    base_timed |= nbeam == 1;
    qsort(beam, (size_t)nbeam, sizeof *beam, by_time);
    if (!isfinite(beam[0].t)) st = tkc_err(TKC_ERUNTIME, "beam search: the kernel could not be timed on %s", tkc_device_name(d));
  }
  while (!st && tkc_now_s() - S.t0 < S.budget) {
    int n = 0;
    for (int b = 0; b < nbeam && n < MAX_ROUND; b++)
      for (int a = 0; a < nact && n < MAX_ROUND && beam[b].t <= 10 * beam[0].t; a++) { /* hopeless members are not grown */
        if (act[a].op == TKC_OPT_NOLOCALS && !S.r->has_local) continue; /* changes nothing there */
        next[n].ks = beam[b].ks;
        if (tkc_kshape_apply(&next[n].ks, act[a], S.r)) continue;
        uint64_t h = shape_hash(&next[n].ks);
        int dup = 0;
        for (int k = 0; k < nseen && !dup; k++) dup = seen[k] == h;
        if (dup) continue;
        if (nseen == capseen) {
          uint64_t *s2 = tkc_realloc(seen, (size_t)(capseen *= 2) * sizeof *seen);
          if (!s2) break;
          seen = s2;
        }
        seen[nseen++] = h;
        n++;
      }
    tkc_clear_error();
    if (!n) break;
    evaluate(&S, next, n, beam[0].t);
    qsort(next, (size_t)n, sizeof *next, by_time);
    bool better = next[0].t < beam[0].t;
    int na = 0;
    for (int i = 0; i < nbeam; i++) all[na++] = beam[i];
    for (int i = 0; i < n; i++) all[na++] = next[i];
    qsort(all, (size_t)na, sizeof *all, by_time);
    nbeam = na < width ? na : width;
    for (int i = 0; i < nbeam; i++) beam[i] = all[i];
    drop(all + nbeam, na - nbeam);
    if (!better) break;
  }
  if (!st) { /* the pick must compute what the kernel without opts computes (or, when that one is too
                slow to run here, what the heuristics' kernel computes) */
    cand ref = {.ks = base_timed ? base : heur};
    prepare(&S, &ref, 1);
    void *want = ref.p ? output_of(&S, ref.p) : NULL, *got = want && beam[0].p ? output_of(&S, beam[0].p) : NULL;
    bool agree = want && got && same_output(got, want, bufs->dt[0], bufs->numel[0]);
    tkc_free(want), tkc_free(got);
    tkc_program_free(ref.p);
    const tkc_kshape *pick = agree ? &beam[0].ks : &heur;
    if (!agree && tkc_debug_level() >= 1) fprintf(stderr, "tkc: beam: the fastest opts disagree with the kernel without opts; keeping the heuristics'\n");
    memcpy(res->opts, pick->opts, (size_t)pick->nopts * sizeof *pick->opts);
    res->nopts = pick->nopts;
    res->best_s = agree ? beam[0].t : res->heuristic_s;
    tkc_clear_error();
  }
  if (beam) drop(beam, nbeam);
  for (int i = 0; i < bufs->n; i++) tkc_buffer_free(S.bufs[i]);
  tkc_free(beam), tkc_free(next), tkc_free(all), tkc_free(seen);
  res->search_s = tkc_now_s() - S.t0;
  res->tried = S.tried;
  return st;
}

/* ---------------------------------------------------------------- the disk cache of picks */

/* the disk cache key: tkc's version and the kernel key */
static char *disk_key(const char *key, size_t *n) {
  size_t kl = strlen(key), vl = strlen(tkc_version());
  char *s = tkc_malloc(vl + kl + 16);
  if (s) *n = (size_t)sprintf(s, "tkc %s beam\n%s", tkc_version(), key);
  return s;
}

bool tkc_beam_load(const char *key, tkc_opt *opts, int *nopts) {
  size_t n = 0, kl = 0;
  char *dk = disk_key(key, &kl);
  int32_t *v = dk ? tkc_dcache_get("beam", dk, kl, &n) : NULL;
  tkc_free(dk);
  bool ok = v && n % (3 * sizeof *v) == 0 && n / (3 * sizeof *v) <= TKC_MAX_OPTS;
  for (size_t i = 0; ok && i < n / (3 * sizeof *v); i++) opts[i] = (tkc_opt){(tkc_opt_op)v[3 * i], v[3 * i + 1], v[3 * i + 2]};
  if (ok) *nopts = (int)(n / (3 * sizeof *v));
  tkc_free(v);
  return ok;
}

void tkc_beam_store(const char *key, const tkc_opt *opts, int nopts) {
  int32_t v[3 * TKC_MAX_OPTS];
  for (int i = 0; i < nopts && i < TKC_MAX_OPTS; i++) v[3 * i] = (int32_t)opts[i].op, v[3 * i + 1] = opts[i].axis, v[3 * i + 2] = opts[i].amount;
  size_t kl = 0;
  char *dk = disk_key(key, &kl);
  if (dk) tkc_dcache_put("beam", dk, kl, v, (size_t)nopts * 3 * sizeof *v);
  tkc_free(dk);
}
