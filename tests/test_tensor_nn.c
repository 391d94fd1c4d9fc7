/* The NN layer ops (tkc/ops_nn.h) on every available device (INTERP included) against plain-C
 * reference loops in double: norms, convolutions, pooling, interpolation, attention, losses; their
 * kernel counts; and bad inputs (NULL, ranks, channels/groups, geometry, limits). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include "tensor_ref.h"

static double at(const href *h, int64_t k) { return tr_to_double(h->dt, h->v[k]); }

/* float results: the tolerance of accumulated ops, looser for 16-bit floats */
static void check(tkc_tensor *t, const href *want, const char *dev, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static void check(tkc_tensor *t, const href *want, const char *dev, const char *fmt, ...) {
  char what[200];
  int n = snprintf(what, sizeof what, "%s: ", dev);
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what + n, sizeof what - (size_t)n, fmt, ap);
  va_end(ap);
  double tol = want->dt == TKC_FLOAT16 ? 2e-2 : want->dt == TKC_BFLOAT16 ? 6e-2 : want->dt == TKC_FLOAT64 ? 1e-9 : 2e-5;
  tr_check(t, want, tol, tol, what);
}

static const tkc_dtype half_dts[] = {TKC_FLOAT16, TKC_BFLOAT16};

/* ---------------------------------------------------------------- references */

/* layer_norm (rms = 0) / rms_norm (rms = 1) over the last naxes dims */
static href ref_norm(const href *x, int naxes, const href *w, const href *b, double eps, int rms, tkc_dtype dt) {
  href h = tr_new(dt, x->ndim, x->shape);
  int64_t m = 1;
  for (int i = x->ndim - naxes; i < x->ndim; i++) m *= x->shape[i];
  for (int64_t g = 0; m && g < x->n / m; g++) {
    double mean = 0, var = 0;
    for (int64_t j = 0; j < m; j++) mean += at(x, g * m + j);
    mean /= (double)m;
    for (int64_t j = 0; j < m; j++) {
      double d = at(x, g * m + j) - (rms ? 0 : mean);
      var += d * d;
    }
    var /= (double)m;
    for (int64_t j = 0; j < m; j++) {
      double y = (at(x, g * m + j) - (rms ? 0 : mean)) / sqrt(var + eps);
      if (w) y *= at(w, j);
      if (b) y += at(b, j);
      h.v[g * m + j] = tr_from_double(dt, y);
    }
  }
  return h;
}

static href ref_batch_norm(const href *x, const href *mean, const href *var, const href *w, const href *b, double eps) {
  href h = tr_new(x->dt, x->ndim, x->shape);
  int64_t c = x->shape[1], inner = 1;
  for (int i = 2; i < x->ndim; i++) inner *= x->shape[i];
  for (int64_t k = 0; k < x->n; k++) {
    int64_t ch = (k / inner) % c;
    double y = (at(x, k) - at(mean, ch)) / sqrt(at(var, ch) + eps);
    h.v[k] = tr_from_double(x->dt, y * (w ? at(w, ch) : 1) + (b ? at(b, ch) : 0));
  }
  return h;
}

/* conv2d_ex: x (N,C,H,W), w (O,C/g,KH,KW) */
static href ref_conv(const href *x, const href *w, const href *bias, const int st[2], const int pd[4], const int dl[2], int g) {
  int64_t N = x->shape[0], C = x->shape[1], H = x->shape[2], W = x->shape[3], O = w->shape[0], CG = w->shape[1], KH = w->shape[2], KW = w->shape[3];
  int64_t OH = (H + pd[0] + pd[1] - dl[0] * (KH - 1) - 1) / st[0] + 1, OW = (W + pd[2] + pd[3] - dl[1] * (KW - 1) - 1) / st[1] + 1;
  href h = tr_new(x->dt, 4, (const int64_t[]){N, O, OH, OW});
  for (int64_t n = 0; n < N; n++)
    for (int64_t o = 0; o < O; o++)
      for (int64_t oy = 0; oy < OH; oy++)
        for (int64_t ox = 0; ox < OW; ox++) {
          double s = bias ? at(bias, o) : 0;
          for (int64_t cg = 0; cg < CG; cg++)
            for (int64_t ky = 0; ky < KH; ky++)
              for (int64_t kx = 0; kx < KW; kx++) {
                int64_t c = o / (O / g) * CG + cg, iy = oy * st[0] + ky * dl[0] - pd[0], ix = ox * st[1] + kx * dl[1] - pd[2];
                if (iy < 0 || iy >= H || ix < 0 || ix >= W) continue;
                s += at(x, ((n * C + c) * H + iy) * W + ix) * at(w, ((o * CG + cg) * KH + ky) * KW + kx);
              }
          h.v[((n * O + o) * OH + oy) * OW + ox] = tr_from_double(x->dt, s);
        }
  return h;
}

/* conv_transpose2d: x (N,C,H,W), w (C,O/g,KH,KW); each input element scatters into the output */
static href ref_conv_t(const href *x, const href *w, const href *bias, const int st[2], const int pd[2], const int op[2], const int dl[2], int g) {
  int64_t N = x->shape[0], C = x->shape[1], H = x->shape[2], W = x->shape[3], OG = w->shape[1], KH = w->shape[2], KW = w->shape[3], O = OG * g;
  int64_t OH = (H - 1) * st[0] - 2 * pd[0] + dl[0] * (KH - 1) + op[0] + 1, OW = (W - 1) * st[1] - 2 * pd[1] + dl[1] * (KW - 1) + op[1] + 1;
  double *acc = calloc((size_t)(N * O * OH * OW), sizeof *acc);
  for (int64_t n = 0; n < N; n++)
    for (int64_t c = 0; c < C; c++)
      for (int64_t i = 0; i < H; i++)
        for (int64_t j = 0; j < W; j++)
          for (int64_t og = 0; og < OG; og++)
            for (int64_t ky = 0; ky < KH; ky++)
              for (int64_t kx = 0; kx < KW; kx++) {
                int64_t o = c / (C / g) * OG + og, y = i * st[0] - pd[0] + ky * dl[0], xx = j * st[1] - pd[1] + kx * dl[1];
                if (y < 0 || y >= OH || xx < 0 || xx >= OW) continue;
                acc[((n * O + o) * OH + y) * OW + xx] += at(x, ((n * C + c) * H + i) * W + j) * at(w, ((c * OG + og) * KH + ky) * KW + kx);
              }
  href h = tr_new(x->dt, 4, (const int64_t[]){N, O, OH, OW});
  for (int64_t k = 0; k < h.n; k++) h.v[k] = tr_from_double(x->dt, acc[k] + (bias ? at(bias, (k / (OH * OW)) % O) : 0));
  free(acc);
  return h;
}

/* torch's pooling output size */
static int64_t pool_len(int64_t in, int k, int s, int p, int d, int ceil) {
  int64_t span = in + 2 * p - d * (k - 1) - 1, o = (ceil ? span + s - 1 : span) / s + 1;
  if (ceil && (o - 1) * s >= in + p) o--;
  return o;
}

/* max (avg = 0) or average pooling as torch computes it */
static href ref_pool(const href *x, const int k[2], const int st[2], const int pd[2], const int dl[2], int ceil, int avg, int cip) {
  int64_t N = x->shape[0], C = x->shape[1], H = x->shape[2], W = x->shape[3];
  int64_t OH = pool_len(H, k[0], st[0], pd[0], dl[0], ceil), OW = pool_len(W, k[1], st[1], pd[1], dl[1], ceil);
  href h = tr_new(x->dt, 4, (const int64_t[]){N, C, OH, OW});
  for (int64_t nc = 0; nc < N * C; nc++)
    for (int64_t oy = 0; oy < OH; oy++)
      for (int64_t ox = 0; ox < OW; ox++) {
        int64_t y0 = oy * st[0] - pd[0], x0 = ox * st[1] - pd[1];
        double m = -INFINITY, s = 0;
        int64_t cnt = 0;
        for (int ky = 0; ky < k[0]; ky++)
          for (int kx = 0; kx < k[1]; kx++) {
            int64_t iy = y0 + ky * dl[0], ix = x0 + kx * dl[1];
            if (iy < 0 || iy >= H || ix < 0 || ix >= W) continue;
            double v = at(x, (nc * H + iy) * W + ix);
            m = fmax(m, v), s += v, cnt++;
          }
        if (avg && cip) { /* the window clipped to the padded input */
          int64_t ye = y0 + k[0] < H + pd[0] ? y0 + k[0] : H + pd[0], xe = x0 + k[1] < W + pd[1] ? x0 + k[1] : W + pd[1];
          cnt = (ye - y0) * (xe - x0);
        }
        rv r = tr_from_double(x->dt, avg ? s / (double)cnt : m);
        if (!tr_isf(x->dt) && !avg) { /* ints: the exact max */
          int64_t best = INT64_MIN;
          for (int ky = 0; ky < k[0]; ky++)
            for (int kx = 0; kx < k[1]; kx++) {
              int64_t iy = y0 + ky * dl[0], ix = x0 + kx * dl[1];
              if (iy >= 0 && iy < H && ix >= 0 && ix < W && x->v[(nc * H + iy) * W + ix].i > best) best = x->v[(nc * H + iy) * W + ix].i;
            }
          r.i = best;
        }
        h.v[(nc * OH + oy) * OW + ox] = r;
      }
  return h;
}

/* source index and weight of the upper neighbour along one axis */
static void interp_src(int64_t o, int64_t in, int64_t out, int bilinear, int align, int64_t *i0, int64_t *i1, double *f) {
  if (!bilinear) {
    *i0 = *i1 = o * in / out < in - 1 ? o * in / out : in - 1;
    *f = 0;
    return;
  }
  double src = align ? (out > 1 ? (double)o * (double)(in - 1) / (double)(out - 1) : 0) : ((double)o + 0.5) * (double)in / (double)out - 0.5;
  if (src < 0) src = 0;
  *i0 = (int64_t)src;
  if (*i0 > in - 1) *i0 = in - 1;
  *i1 = *i0 + 1 < in ? *i0 + 1 : in - 1;
  *f = src - (double)*i0;
}

static href ref_interp(const href *x, int64_t oh, int64_t ow, int bilinear, int align) {
  int64_t NC = x->shape[0] * x->shape[1], H = x->shape[2], W = x->shape[3];
  href h = tr_new(x->dt, 4, (const int64_t[]){x->shape[0], x->shape[1], oh, ow});
  for (int64_t nc = 0; nc < NC; nc++)
    for (int64_t y = 0; y < oh; y++)
      for (int64_t xx = 0; xx < ow; xx++) {
        int64_t y0, y1, x0, x1;
        double fy, fx;
        interp_src(y, H, oh, bilinear, align, &y0, &y1, &fy);
        interp_src(xx, W, ow, bilinear, align, &x0, &x1, &fx);
        const rv *p = x->v + nc * H * W;
        if (!bilinear) {
          h.v[(nc * oh + y) * ow + xx] = p[y0 * W + x0];
          continue;
        }
        double v = (1 - fy) * ((1 - fx) * p[y0 * W + x0].f + fx * p[y0 * W + x1].f) + fy * ((1 - fx) * p[y1 * W + x0].f + fx * p[y1 * W + x1].f);
        h.v[(nc * oh + y) * ow + xx] = tr_from_double(x->dt, v);
      }
  return h;
}

/* attention over batch B (same for q, k, v), mask (L, S) or NULL: bool or additive */
static href ref_sdpa(const href *q, const href *k, const href *v, const href *mask, int causal, double scale) {
  int nd = q->ndim;
  int64_t L = q->shape[nd - 2], E = q->shape[nd - 1], S = k->shape[nd - 2], EV = v->shape[nd - 1], B = q->n / (L * E);
  int64_t shape[TR_MAXDIM];
  memcpy(shape, q->shape, sizeof shape);
  shape[nd - 1] = EV;
  href h = tr_new(q->dt, nd, shape);
  if (scale == 0) scale = 1 / sqrt((double)E);
  double *row = malloc(sizeof(double) * (size_t)S);
  for (int64_t b = 0; b < B; b++)
    for (int64_t i = 0; i < L; i++) {
      double mx = -INFINITY, sum = 0;
      for (int64_t j = 0; j < S; j++) {
        double s = 0;
        for (int64_t e = 0; e < E; e++) s += at(q, (b * L + i) * E + e) * at(k, (b * S + j) * E + e);
        s *= scale;
        if (causal && j > i) s = -INFINITY;
        if (mask && mask->dt == TKC_BOOL && !mask->v[i * S + j].i) s = -INFINITY;
        if (mask && mask->dt != TKC_BOOL) s += at(mask, i * S + j);
        row[j] = s;
        mx = fmax(mx, s);
      }
      for (int64_t j = 0; j < S; j++) sum += row[j] = exp(row[j] - mx);
      for (int64_t e = 0; e < EV; e++) {
        double o = 0;
        for (int64_t j = 0; j < S; j++) o += row[j] / sum * at(v, (b * S + j) * EV + e);
        h.v[(b * L + i) * EV + e] = tr_from_double(q->dt, o);
      }
    }
  free(row);
  return h;
}

/* nll over log-probs lp (N, C); out-of-range targets give 0 */
static href ref_nll(const href *lp, const href *t, int reduction) {
  int64_t N = lp->shape[0], C = lp->shape[1];
  href h = reduction == TKC_REDUCTION_NONE ? tr_new(lp->dt, 1, &N) : tr_new(lp->dt, 0, NULL);
  double total = 0;
  for (int64_t n = 0; n < N; n++) {
    int64_t c = t->v[n].i;
    double l = c >= 0 && c < C ? -at(lp, n * C + c) : 0;
    total += l;
    if (reduction == TKC_REDUCTION_NONE) h.v[n] = tr_from_double(lp->dt, l);
  }
  if (reduction != TKC_REDUCTION_NONE) h.v[0] = tr_from_double(lp->dt, reduction == TKC_REDUCTION_SUM ? total : total / (double)N);
  return h;
}

/* a target (N) of dt with classes in [0, c) */
static href rand_target(tkc_dtype dt, int64_t n, int64_t c) {
  href t = tr_new(dt, 1, &n);
  for (int64_t i = 0; i < n; i++) t.v[i].i = tr_rand_int(0, c - 1);
  return t;
}

static void expect_kernels(tkc_tensor *t, int lo, int hi, const char *dev, const char *what) {
  int k = tkc_kernel_count(t);
  TR_EXPECT(k >= lo && k <= hi, "%s: %s needs %d kernels, want %d..%d", dev, what, k, lo, hi);
}

/* ---------------------------------------------------------------- normalization */

static void test_norms(void **state) {
  (void)state;
  tr_begin();
  static const struct { int ndim; int64_t shape[4]; int naxes; bool w, b; } cases[] = {
      {2, {3, 5}, 1, true, true}, {3, {2, 3, 4}, 2, true, false}, {1, {7}, 1, false, true}, {2, {1, 1}, 1, true, true},
      {4, {2, 1, 3, 5}, 3, false, false}, {3, {3, 1, 6}, 1, true, true},
  };
  FOR_EACH_DEVICE(dev, ctx) {
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
      for (int rms = 0; rms < 2; rms++) {
        const int64_t *wshape = cases[c].shape + cases[c].ndim - cases[c].naxes;
        href x, w, b;
        tkc_tensor *tx = tr_make(ctx, TKC_FLOAT32, cases[c].ndim, cases[c].shape, TR_DOM_ANY, NULL, &x);
        tkc_tensor *tw = cases[c].w ? tr_make(ctx, TKC_FLOAT32, cases[c].naxes, wshape, TR_DOM_ANY, NULL, &w) : NULL;
        tkc_tensor *tb = cases[c].b && !rms ? tr_make(ctx, TKC_FLOAT32, cases[c].naxes, wshape, TR_DOM_ANY, NULL, &b) : NULL;
        double eps = c % 2 ? 1e-5 : 0.1;
        href want = ref_norm(&x, cases[c].naxes, tw ? &w : NULL, tb ? &b : NULL, eps, rms, TKC_FLOAT32);
        tkc_tensor *y = rms ? tkc_rms_norm(tx, cases[c].naxes, tw, eps) : tkc_layer_norm(tx, cases[c].naxes, tw, tb, eps);
        expect_kernels(y, 1, 2, dev, rms ? "rms_norm" : "layer_norm");
        check(y, &want, dev, "%s case %zu", rms ? "rms_norm" : "layer_norm", c);
        tr_free(&want), tr_free(&x);
        if (tw) tr_free(&w);
        if (tb) tr_free(&b);
      }
    /* non-contiguous x (a permuted, shrunk view), an offset mean (the shifted one-pass sums) */
    href x;
    tkc_tensor *tx = tr_make(ctx, TKC_FLOAT32, TR_SHAPE(6, 4, 3), TR_DOM_ANY, TR_STEPS(TR_PERMUTE(2, 0, 1), TR_SHRINK(0, 3, 1, 6, 0, 4)), &x);
    for (int rms = 0; rms < 2; rms++) {
      href want = ref_norm(&x, 2, NULL, NULL, 1e-5, rms, TKC_FLOAT32);
      check(rms ? tkc_rms_norm(tx, 2, NULL, 1e-5) : tkc_layer_norm(tx, 2, NULL, NULL, 1e-5), &want, dev, "%s of a permuted, shrunk view",
            rms ? "rms_norm" : "layer_norm");
      tr_free(&want);
    }
    tr_free(&x);
    tx = tr_make(ctx, TKC_FLOAT32, TR_SHAPE(4, 64), TR_DOM_ANY, NULL, &x);
    for (int64_t k = 0; k < x.n; k++) x.v[k].f += 1000;
    href want = ref_norm(&x, 1, NULL, NULL, 1e-5, 0, TKC_FLOAT32);
    tkc_tensor *shifted = tkc_add(tx, tkc_scalar(ctx, TKC_FLOAT32, 1000));
    tr_check(tkc_layer_norm(shifted, 1, NULL, NULL, 1e-5), &want, 2e-4, 2e-4, "layer_norm of x + 1000");
    tr_free(&want), tr_free(&x);
    /* 16-bit floats and float64 */
    for (int h = 0; h < 3; h++) {
      tkc_dtype dt = h < 2 ? half_dts[h] : TKC_FLOAT64;
      if (!tr_dev_supports(dev, dt)) continue;
      href w, b;
      tx = tr_make(ctx, dt, TR_SHAPE(3, 16), TR_DOM_ANY, NULL, &x);
      tkc_tensor *tw = tr_make(ctx, dt, TR_SHAPE(16), TR_DOM_ANY, NULL, &w), *tb = tr_make(ctx, dt, TR_SHAPE(16), TR_DOM_ANY, NULL, &b);
      want = ref_norm(&x, 1, &w, &b, 1e-5, 0, dt);
      check(tkc_layer_norm(tx, 1, tw, tb, 1e-5), &want, dev, "layer_norm %s", tr_dn(dt));
      tr_free(&want);
      want = ref_norm(&x, 1, &w, NULL, 1e-5, 1, dt);
      check(tkc_rms_norm(tx, 1, tw, 1e-5), &want, dev, "rms_norm %s", tr_dn(dt));
      tr_free(&want), tr_free(&x), tr_free(&w), tr_free(&b);
    }
    /* batch norm: (N, C, H, W), (N, C), a permuted x */
    static const struct { int ndim; int64_t shape[4]; } bn[] = {{4, {2, 3, 4, 5}}, {2, {4, 3}}, {4, {1, 1, 1, 1}}, {3, {2, 5, 3}}};
    for (size_t c = 0; c < sizeof bn / sizeof bn[0]; c++) {
      int64_t ch = bn[c].shape[1];
      href m, v, w, b;
      tx = tr_make(ctx, TKC_FLOAT32, bn[c].ndim, bn[c].shape, TR_DOM_ANY, NULL, &x);
      tkc_tensor *tm = tr_make(ctx, TKC_FLOAT32, 1, &ch, TR_DOM_ANY, NULL, &m), *tv = tr_make(ctx, TKC_FLOAT32, 1, &ch, TR_DOM_POS, NULL, &v);
      tkc_tensor *tw = tr_make(ctx, TKC_FLOAT32, 1, &ch, TR_DOM_ANY, NULL, &w), *tb = tr_make(ctx, TKC_FLOAT32, 1, &ch, TR_DOM_ANY, NULL, &b);
      want = ref_batch_norm(&x, &m, &v, c % 2 ? NULL : &w, c % 2 ? NULL : &b, 1e-5);
      tkc_tensor *y = tkc_batch_norm(tx, tm, tv, c % 2 ? NULL : tw, c % 2 ? NULL : tb, 1e-5);
      expect_kernels(y, 1, 1, dev, "batch_norm");
      check(y, &want, dev, "batch_norm case %zu", c);
      tr_free(&want), tr_free(&x), tr_free(&m), tr_free(&v), tr_free(&w), tr_free(&b);
    }
    href m, v;
    tx = tr_make(ctx, TKC_FLOAT32, TR_SHAPE(3, 4, 2), TR_DOM_ANY, TR_STEPS(TR_PERMUTE(2, 0, 1)), &x); /* (2, 3, 4) */
    tkc_tensor *tm = tr_make(ctx, TKC_FLOAT32, TR_SHAPE(3), TR_DOM_ANY, NULL, &m), *tv = tr_make(ctx, TKC_FLOAT32, TR_SHAPE(3), TR_DOM_POS, NULL, &v);
    want = ref_batch_norm(&x, &m, &v, NULL, NULL, 0.5);
    check(tkc_batch_norm(tx, tm, tv, NULL, NULL, 0.5), &want, dev, "batch_norm of a permuted x");
    tr_free(&want), tr_free(&x), tr_free(&m), tr_free(&v);
  }
  TR_END();
}

/* ---------------------------------------------------------------- convolutions */

static void test_conv(void **state) {
  (void)state;
  tr_begin();
  static const struct { int64_t x[4], w[4]; int st[2], pd[4], dl[2], g; bool bias; } cases[] = {
      {{1, 2, 5, 5}, {3, 2, 3, 3}, {1, 1}, {1, 1, 1, 1}, {1, 1}, 1, true},  /* the tkc_conv2d path */
      {{2, 3, 6, 7}, {4, 3, 3, 2}, {2, 1}, {0, 1, 2, 0}, {1, 1}, 1, false}, /* per-axis stride, asymmetric pad */
      {{1, 2, 7, 7}, {2, 2, 3, 3}, {1, 1}, {2, 2, 2, 2}, {2, 2}, 1, true},  /* dilation */
      {{2, 4, 5, 6}, {6, 2, 3, 3}, {1, 2}, {1, 1, 0, 1}, {1, 2}, 2, true},  /* groups + all */
      {{1, 3, 4, 4}, {3, 1, 2, 2}, {2, 2}, {0, 0, 0, 0}, {1, 1}, 3, false}, /* depthwise */
      {{1, 1, 1, 1}, {1, 1, 1, 1}, {1, 1}, {0, 0, 0, 0}, {1, 1}, 1, true},
      {{1, 2, 3, 9}, {2, 2, 1, 3}, {3, 4}, {0, 0, 1, 1}, {1, 3}, 1, false},
      {{1, 1, 2, 2}, {1, 1, 3, 3}, {2, 2}, {1, 1, 1, 1}, {1, 1}, 1, false}, /* kernel larger than the input */
      {{1, 2, 5, 4}, {2, 1, 2, 2}, {INT32_MAX, INT32_MAX}, {0, 1, 0, 0}, {3, 1}, 2, true}, /* strides near the limit: one window */
      {{1, 2, 5, 4}, {3, 2, 2, 2}, {INT32_MAX, INT32_MAX}, {0, 1, 0, 0}, {1, 1}, 1, true},
      {{1, 2, 6, 5}, {3, 2, 2, 2}, {3, 3}, {0, 0, 1, 0}, {1, 1}, 1, false}, /* rows no window reads */
  };
  FOR_EACH_DEVICE(dev, ctx) {
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
      href x, w, b;
      tkc_tensor *tx = tr_make(ctx, TKC_FLOAT32, 4, cases[c].x, TR_DOM_ANY, NULL, &x);
      tkc_tensor *tw = tr_make(ctx, TKC_FLOAT32, 4, cases[c].w, TR_DOM_ANY, NULL, &w);
      tkc_tensor *tb = cases[c].bias ? tr_make(ctx, TKC_FLOAT32, 1, cases[c].w, TR_DOM_ANY, NULL, &b) : NULL;
      href want = ref_conv(&x, &w, tb ? &b : NULL, cases[c].st, cases[c].pd, cases[c].dl, cases[c].g);
      tkc_tensor *y = tkc_conv2d_ex(tx, tw, tb, cases[c].st, cases[c].pd, cases[c].dl, cases[c].g);
      expect_kernels(y, 1, 2, dev, "conv2d_ex");
      check(y, &want, dev, "conv2d_ex case %zu", c);
      tr_free(&want), tr_free(&x), tr_free(&w);
      if (tb) tr_free(&b);
    }
    /* NHWC stored, permuted to NCHW; a shrunk weight */
    href x, w;
    tkc_tensor *tx = tr_make(ctx, TKC_FLOAT32, TR_SHAPE(1, 5, 6, 4), TR_DOM_ANY, TR_STEPS(TR_PERMUTE(0, 3, 1, 2)), &x);
    tkc_tensor *tw = tr_make(ctx, TKC_FLOAT32, TR_SHAPE(4, 2, 4, 3), TR_DOM_ANY, TR_STEPS(TR_SHRINK(0, 4, 0, 2, 1, 3, 0, 3)), &w);
    const int st[2] = {2, 1}, pd[4] = {1, 0, 1, 2}, dl[2] = {2, 1};
    href want = ref_conv(&x, &w, NULL, st, pd, dl, 2);
    check(tkc_conv2d_ex(tx, tw, NULL, st, pd, dl, 2), &want, dev, "conv2d_ex(permuted x, shrunk w)");
    tr_free(&want), tr_free(&w);
    tr_free(&x);
    /* NULL arrays are the defaults */
    tx = tr_make(ctx, TKC_FLOAT32, TR_SHAPE(1, 2, 4, 4), TR_DOM_ANY, NULL, &x);
    tw = tr_make(ctx, TKC_FLOAT32, TR_SHAPE(2, 2, 3, 3), TR_DOM_ANY, NULL, &w);
    want = ref_conv(&x, &w, NULL, (const int[]){1, 1}, (const int[]){0, 0, 0, 0}, (const int[]){1, 1}, 1);
    check(tkc_conv2d_ex(tx, tw, NULL, NULL, NULL, NULL, 1), &want, dev, "conv2d_ex with default stride/pad/dilation");
    tr_free(&want), tr_free(&x), tr_free(&w);
    /* conv1d */
    static const struct { int64_t x[3], w[3]; int st, pl, pr, dl, g; } c1[] = {
        {{2, 3, 10}, {4, 3, 3}, 1, 1, 1, 1, 1}, {{1, 4, 9}, {2, 2, 2}, 2, 0, 3, 2, 2}, {{1, 1, 1}, {1, 1, 1}, 1, 0, 0, 1, 1}, {{3, 2, 7}, {2, 1, 4}, 3, 2, 0, 1, 2},
    };
    for (size_t c = 0; c < sizeof c1 / sizeof c1[0]; c++) {
      href b, x4, w4;
      tx = tr_make(ctx, TKC_FLOAT32, 3, c1[c].x, TR_DOM_ANY, NULL, &x);
      tw = tr_make(ctx, TKC_FLOAT32, 3, c1[c].w, TR_DOM_ANY, NULL, &w);
      tkc_tensor *tb = tr_make(ctx, TKC_FLOAT32, 1, c1[c].w, TR_DOM_ANY, NULL, &b);
      x4 = tr_reshape(&x, 4, (const int64_t[]){c1[c].x[0], c1[c].x[1], 1, c1[c].x[2]});
      w4 = tr_reshape(&w, 4, (const int64_t[]){c1[c].w[0], c1[c].w[1], 1, c1[c].w[2]});
      href w2 = ref_conv(&x4, &w4, &b, (const int[]){1, c1[c].st}, (const int[]){0, 0, c1[c].pl, c1[c].pr}, (const int[]){1, c1[c].dl}, c1[c].g);
      want = tr_reshape(&w2, 3, (const int64_t[]){w2.shape[0], w2.shape[1], w2.shape[3]});
      check(tkc_conv1d(tx, tw, tb, c1[c].st, c1[c].pl, c1[c].pr, c1[c].dl, c1[c].g), &want, dev, "conv1d case %zu", c);
      tr_free(&want), tr_free(&w2), tr_free(&x4), tr_free(&w4), tr_free(&x), tr_free(&w), tr_free(&b);
    }
    /* conv_transpose2d */
    static const struct { int64_t x[4], w[4]; int st[2], pd[2], op[2], dl[2], g; bool bias; } ct[] = {
        {{1, 2, 3, 3}, {2, 3, 3, 3}, {1, 1}, {0, 0}, {0, 0}, {1, 1}, 1, true},  {{2, 2, 3, 4}, {2, 2, 3, 3}, {2, 2}, {1, 1}, {1, 0}, {1, 1}, 1, false},
        {{1, 4, 2, 3}, {4, 1, 2, 3}, {3, 2}, {0, 1}, {2, 1}, {1, 1}, 2, true},  {{1, 1, 3, 3}, {1, 2, 2, 2}, {1, 2}, {1, 0}, {0, 1}, {2, 2}, 1, false},
        {{1, 1, 1, 1}, {1, 1, 1, 1}, {5, 5}, {2, 2}, {4, 4}, {1, 1}, 1, true},  /* output from padding alone */
        {{1, 2, 2, 2}, {2, 1, 1, 1}, {1, 1}, {0, 0}, {0, 0}, {1, 1}, 2, false},
    };
    for (size_t c = 0; c < sizeof ct / sizeof ct[0]; c++) {
      href b;
      tx = tr_make(ctx, TKC_FLOAT32, 4, ct[c].x, TR_DOM_ANY, NULL, &x);
      tw = tr_make(ctx, TKC_FLOAT32, 4, ct[c].w, TR_DOM_ANY, NULL, &w);
      int64_t o = ct[c].w[1] * ct[c].g;
      tkc_tensor *tb = ct[c].bias ? tr_make(ctx, TKC_FLOAT32, 1, &o, TR_DOM_ANY, NULL, &b) : NULL;
      want = ref_conv_t(&x, &w, tb ? &b : NULL, ct[c].st, ct[c].pd, ct[c].op, ct[c].dl, ct[c].g);
      tkc_tensor *y = tkc_conv_transpose2d(tx, tw, tb, ct[c].st, ct[c].pd, ct[c].op, ct[c].dl, ct[c].g);
      expect_kernels(y, 1, 2, dev, "conv_transpose2d");
      check(y, &want, dev, "conv_transpose2d case %zu", c);
      tr_free(&want), tr_free(&x), tr_free(&w);
      if (tb) tr_free(&b);
    }
    /* conv_transpose2d of a flipped view */
    tx = tr_make(ctx, TKC_FLOAT32, TR_SHAPE(1, 2, 3, 3), TR_DOM_ANY, TR_STEPS(TR_FLIP(2)), &x);
    tw = tr_make(ctx, TKC_FLOAT32, TR_SHAPE(2, 2, 2, 2), TR_DOM_ANY, NULL, &w);
    want = ref_conv_t(&x, &w, NULL, (const int[]){2, 2}, (const int[]){0, 0}, (const int[]){0, 0}, (const int[]){1, 1}, 1);
    check(tkc_conv_transpose2d(tx, tw, NULL, (const int[]){2, 2}, NULL, NULL, NULL, 1), &want, dev, "conv_transpose2d of a flipped x");
    tr_free(&want), tr_free(&x), tr_free(&w);
    /* 16-bit floats */
    for (int h = 0; h < 2; h++) {
      tkc_dtype dt = half_dts[h];
      if (!tr_dev_supports(dev, dt)) continue;
      tx = tr_make(ctx, dt, TR_SHAPE(1, 4, 5, 5), TR_DOM_ANY, NULL, &x);
      tw = tr_make(ctx, dt, TR_SHAPE(4, 2, 3, 3), TR_DOM_ANY, NULL, &w);
      want = ref_conv(&x, &w, NULL, (const int[]){2, 1}, (const int[]){1, 1, 0, 2}, (const int[]){1, 2}, 2);
      check(tkc_conv2d_ex(tx, tw, NULL, (const int[]){2, 1}, (const int[]){1, 1, 0, 2}, (const int[]){1, 2}, 2), &want, dev, "conv2d_ex %s", tr_dn(dt));
      tr_free(&want);
      want = ref_conv_t(&x, &w, NULL, (const int[]){2, 2}, (const int[]){1, 0}, (const int[]){1, 0}, (const int[]){1, 1}, 2);
      check(tkc_conv_transpose2d(tx, tw, NULL, (const int[]){2, 2}, (const int[]){1, 0}, (const int[]){1, 0}, NULL, 2), &want, dev,
            "conv_transpose2d %s", tr_dn(dt));
      tr_free(&want), tr_free(&x), tr_free(&w);
    }
  }
  TR_END();
}

/* ---------------------------------------------------------------- pooling */

static void test_pool(void **state) {
  (void)state;
  tr_begin();
  static const struct { int64_t x[4]; int k[2], st[2], pd[2], dl[2], ceil; } cases[] = {
      {{1, 1, 4, 4}, {2, 2}, {2, 2}, {0, 0}, {1, 1}, 0}, {{2, 3, 5, 7}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, 0},
      {{2, 3, 5, 7}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, 1}, {{1, 2, 6, 5}, {2, 3}, {1, 2}, {1, 0}, {1, 1}, 1},
      {{1, 2, 7, 8}, {3, 2}, {2, 3}, {1, 1}, {2, 2}, 0}, {{1, 1, 1, 1}, {1, 1}, {1, 1}, {0, 0}, {1, 1}, 0},
      {{1, 2, 5, 5}, {4, 4}, {3, 3}, {2, 2}, {1, 1}, 1}, {{1, 1, 3, 9}, {1, 3}, {3, 3}, {0, 1}, {1, 3}, 1},
      {{1, 2, 4, 3}, {3, 2}, {INT32_MAX, INT32_MAX}, {1, 1}, {1, 1}, 1}, /* strides near the limit: one window */
  };
  FOR_EACH_DEVICE(dev, ctx) {
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
      href x;
      tkc_tensor *tx = tr_make(ctx, TKC_FLOAT32, 4, cases[c].x, TR_DOM_ANY, NULL, &x);
      href want = ref_pool(&x, cases[c].k, cases[c].st, cases[c].pd, cases[c].dl, cases[c].ceil, 0, 0);
      tkc_tensor *y = tkc_max_pool2d(tx, cases[c].k, cases[c].st, cases[c].pd, cases[c].dl, cases[c].ceil);
      /* 2-d windows that overlap (more than one of them): a max over rows, then along them (two kernels) */
      int sep = cases[c].k[0] > 1 && cases[c].k[1] > 1 && cases[c].st[0] != INT32_MAX &&
                ((int64_t)cases[c].k[0] * cases[c].dl[0] > cases[c].st[0] || (int64_t)cases[c].k[1] * cases[c].dl[1] > cases[c].st[1]);
      expect_kernels(y, 1 + sep, 1 + sep, dev, "max_pool2d");
      check(y, &want, dev, "max_pool2d case %zu", c);
      tr_free(&want);
      if (cases[c].dl[0] == 1 && cases[c].dl[1] == 1)
        for (int cip = 0; cip < 2; cip++) {
          want = ref_pool(&x, cases[c].k, cases[c].st, cases[c].pd, cases[c].dl, cases[c].ceil, 1, cip);
          y = tkc_avg_pool2d(tx, cases[c].k, cases[c].st, cases[c].pd, cases[c].ceil, cip);
          expect_kernels(y, 1, 1, dev, "avg_pool2d");
          check(y, &want, dev, "avg_pool2d case %zu count_include_pad %d", c, cip);
          tr_free(&want);
        }
      tr_free(&x);
    }
    /* defaults (stride = kernel), a non-contiguous x, ints, 16-bit floats */
    href x;
    tkc_tensor *tx = tr_make(ctx, TKC_FLOAT32, TR_SHAPE(1, 6, 6, 2), TR_DOM_ANY, TR_STEPS(TR_PERMUTE(0, 3, 1, 2)), &x);
    href want = ref_pool(&x, (const int[]){2, 3}, (const int[]){2, 3}, (const int[]){0, 0}, (const int[]){1, 1}, 0, 0, 0);
    check(tkc_max_pool2d(tx, (const int[]){2, 3}, NULL, NULL, NULL, 0), &want, dev, "max_pool2d of a permuted x, defaults");
    tr_free(&want);
    want = ref_pool(&x, (const int[]){3, 3}, (const int[]){3, 3}, (const int[]){1, 1}, (const int[]){1, 1}, 1, 1, 0);
    check(tkc_avg_pool2d(tx, (const int[]){3, 3}, NULL, (const int[]){1, 1}, 1, 0), &want, dev, "avg_pool2d of a permuted x");
    tr_free(&want), tr_free(&x);
    for (int i = 0; i < 2; i++) {
      tkc_dtype dt = i ? TKC_UINT8 : TKC_INT32;
      tx = tr_make(ctx, dt, TR_SHAPE(1, 2, 5, 5), TR_DOM_ANY, NULL, &x);
      want = ref_pool(&x, (const int[]){3, 3}, (const int[]){2, 2}, (const int[]){1, 1}, (const int[]){1, 1}, 1, 0, 0);
      check(tkc_max_pool2d(tx, (const int[]){3, 3}, (const int[]){2, 2}, (const int[]){1, 1}, NULL, 1), &want, dev, "max_pool2d %s", tr_dn(dt));
      tr_free(&want), tr_free(&x);
    }
    for (int h = 0; h < 2; h++) {
      tkc_dtype dt = half_dts[h];
      if (!tr_dev_supports(dev, dt)) continue;
      tx = tr_make(ctx, dt, TR_SHAPE(2, 2, 6, 5), TR_DOM_ANY, NULL, &x);
      want = ref_pool(&x, (const int[]){3, 2}, (const int[]){2, 2}, (const int[]){1, 1}, (const int[]){1, 1}, 1, 0, 0);
      check(tkc_max_pool2d(tx, (const int[]){3, 2}, (const int[]){2, 2}, (const int[]){1, 1}, NULL, 1), &want, dev, "max_pool2d %s", tr_dn(dt));
      tr_free(&want);
      want = ref_pool(&x, (const int[]){3, 2}, (const int[]){2, 2}, (const int[]){1, 1}, (const int[]){1, 1}, 1, 1, 1);
      check(tkc_avg_pool2d(tx, (const int[]){3, 2}, (const int[]){2, 2}, (const int[]){1, 1}, 1, 1), &want, dev, "avg_pool2d %s", tr_dn(dt));
      tr_free(&want), tr_free(&x);
    }
  }
  TR_END();
}

/* ---------------------------------------------------------------- interpolation */

static void test_interpolate(void **state) {
  (void)state;
  tr_begin();
  static const struct { int64_t x[4], oh, ow; } cases[] = {
      {{1, 1, 2, 3}, 4, 6}, {{2, 3, 5, 4}, 3, 7}, {{1, 2, 1, 1}, 3, 2}, {{1, 1, 4, 4}, 1, 1}, {{1, 2, 3, 5}, 3, 9}, {{1, 1, 7, 3}, 2, 3},
  };
  FOR_EACH_DEVICE(dev, ctx) {
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
      href x;
      tkc_tensor *tx = tr_make(ctx, TKC_FLOAT32, 4, cases[c].x, TR_DOM_ANY, NULL, &x);
      for (int mode = 0; mode < 3; mode++) { /* nearest, bilinear, bilinear align_corners */
        int bil = mode > 0, align = mode == 2;
        href want = ref_interp(&x, cases[c].oh, cases[c].ow, bil, align);
        tkc_tensor *y = tkc_interpolate(tx, cases[c].oh, cases[c].ow, bil ? TKC_INTERP_BILINEAR : TKC_INTERP_NEAREST, align);
        expect_kernels(y, 1, 2, dev, "interpolate");
        check(y, &want, dev, "interpolate case %zu mode %d", c, mode);
        tr_free(&want);
      }
      tr_free(&x);
    }
    /* a shrunk, permuted view; uint8 nearest; 16-bit bilinear */
    href x;
    tkc_tensor *tx = tr_make(ctx, TKC_FLOAT32, TR_SHAPE(1, 5, 6, 2), TR_DOM_ANY, TR_STEPS(TR_PERMUTE(0, 3, 1, 2), TR_SHRINK(0, 1, 0, 2, 1, 5, 0, 6)), &x);
    href want = ref_interp(&x, 7, 4, 1, 0);
    check(tkc_interpolate(tx, 7, 4, TKC_INTERP_BILINEAR, 0), &want, dev, "interpolate bilinear of a view");
    tr_free(&want), tr_free(&x);
    tx = tr_make(ctx, TKC_UINT8, TR_SHAPE(1, 2, 3, 4), TR_DOM_SMALL, NULL, &x);
    want = ref_interp(&x, 5, 9, 0, 0);
    check(tkc_interpolate(tx, 5, 9, TKC_INTERP_NEAREST, 0), &want, dev, "interpolate nearest uint8");
    tr_free(&want), tr_free(&x);
    for (int h = 0; h < 2; h++) {
      tkc_dtype dt = half_dts[h];
      if (!tr_dev_supports(dev, dt)) continue;
      tx = tr_make(ctx, dt, TR_SHAPE(1, 2, 3, 4), TR_DOM_ANY, NULL, &x);
      want = ref_interp(&x, 6, 5, 1, 1);
      check(tkc_interpolate(tx, 6, 5, TKC_INTERP_BILINEAR, 1), &want, dev, "interpolate bilinear %s", tr_dn(dt));
      tr_free(&want), tr_free(&x);
    }
  }
  TR_END();
}

/* ---------------------------------------------------------------- attention */

static void test_attention(void **state) {
  (void)state;
  tr_begin();
  static const struct { int nd; int64_t q[4], k[4], v[4]; int causal, mask; double scale; } cases[] = {
      {2, {3, 4}, {5, 4}, {5, 2}, 0, 0, 0},       {2, {4, 4}, {4, 4}, {4, 3}, 1, 0, 0},        {3, {2, 3, 4}, {2, 3, 4}, {2, 3, 4}, 0, 1, 0.5},
      {4, {2, 2, 3, 2}, {2, 2, 4, 2}, {2, 2, 4, 5}, 0, 2, 0}, {4, {1, 2, 5, 3}, {1, 2, 5, 3}, {1, 2, 5, 3}, 1, 1, 0}, {2, {1, 1}, {1, 1}, {1, 1}, 1, 0, 2},
      {3, {1, 4, 3}, {1, 6, 3}, {1, 6, 2}, 1, 2, 0},
  };
  FOR_EACH_DEVICE(dev, ctx) {
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
      int nd = cases[c].nd;
      int64_t L = cases[c].q[nd - 2], S = cases[c].k[nd - 2];
      href q, k, v, m;
      tkc_tensor *tq = tr_make(ctx, TKC_FLOAT32, nd, cases[c].q, TR_DOM_ANY, NULL, &q);
      tkc_tensor *tk = tr_make(ctx, TKC_FLOAT32, nd, cases[c].k, TR_DOM_ANY, NULL, &k);
      tkc_tensor *tv = tr_make(ctx, TKC_FLOAT32, nd, cases[c].v, TR_DOM_ANY, NULL, &v);
      tkc_tensor *tm = NULL;
      if (cases[c].mask) { /* (L, S): bool with the diagonal true (never a fully masked row), or float */
        tm = tr_make(ctx, cases[c].mask == 1 ? TKC_BOOL : TKC_FLOAT32, TR_SHAPE(L, S), TR_DOM_ANY, NULL, &m);
        if (cases[c].mask == 1) {
          for (int64_t i = 0; i < L; i++) m.v[i * S].i = 1;
          tm = tr_upload(ctx, &m);
        }
      }
      href want = ref_sdpa(&q, &k, &v, tm ? &m : NULL, cases[c].causal, cases[c].scale);
      tkc_tensor *y = tkc_scaled_dot_product_attention(tq, tk, tv, tm, cases[c].causal, cases[c].scale);
      expect_kernels(y, 1, 5, dev, "attention");
      check(y, &want, dev, "attention case %zu (causal %d, mask %d)", c, cases[c].causal, cases[c].mask);
      tr_free(&want), tr_free(&q), tr_free(&k), tr_free(&v);
      if (tm) tr_free(&m);
    }
    /* k given transposed (a permuted view), 16-bit floats */
    href q, k, v;
    tkc_tensor *tq = tr_make(ctx, TKC_FLOAT32, TR_SHAPE(2, 3, 4), TR_DOM_ANY, NULL, &q);
    tkc_tensor *tk = tr_make(ctx, TKC_FLOAT32, TR_SHAPE(2, 4, 5), TR_DOM_ANY, TR_STEPS(TR_PERMUTE(0, 2, 1)), &k);
    tkc_tensor *tv = tr_make(ctx, TKC_FLOAT32, TR_SHAPE(5, 2, 3), TR_DOM_ANY, TR_STEPS(TR_PERMUTE(1, 0, 2)), &v);
    href want = ref_sdpa(&q, &k, &v, NULL, 1, 0);
    check(tkc_scaled_dot_product_attention(tq, tk, tv, NULL, 1, 0), &want, dev, "attention of permuted k, v");
    tr_free(&want), tr_free(&q), tr_free(&k), tr_free(&v);
    for (int h = 0; h < 2; h++) {
      tkc_dtype dt = half_dts[h];
      if (!tr_dev_supports(dev, dt)) continue;
      tq = tr_make(ctx, dt, TR_SHAPE(2, 4, 8), TR_DOM_ANY, NULL, &q);
      tk = tr_make(ctx, dt, TR_SHAPE(2, 4, 8), TR_DOM_ANY, NULL, &k);
      tv = tr_make(ctx, dt, TR_SHAPE(2, 4, 8), TR_DOM_ANY, NULL, &v);
      want = ref_sdpa(&q, &k, &v, NULL, 1, 0.125);
      tkc_tensor *y = tkc_scaled_dot_product_attention(tq, tk, tv, NULL, 1, 0.125);
      check(y, &want, dev, "attention %s", tr_dn(dt));
      tr_free(&want), tr_free(&q), tr_free(&k), tr_free(&v);
    }
    /* a fully masked row is NaN */
    tq = tr_make(ctx, TKC_FLOAT32, TR_SHAPE(2, 2), TR_DOM_ANY, NULL, &q);
    tkc_tensor *none = tkc_full(ctx, TKC_BOOL, 2, (const int64_t[]){2, 2}, 0);
    float out[4] = {0};
    TR_EXPECT(tkc_copy_out(tkc_scaled_dot_product_attention(tq, tq, tq, none, 0, 0), out, sizeof out) == TKC_OK && isnan(out[0]) && isnan(out[3]),
              "%s: attention with nothing to attend to: %g, want NaN", dev, out[0]);
    tr_free(&q);
  }
  TR_END();
}

/* ---------------------------------------------------------------- losses */

static void test_losses(void **state) {
  (void)state;
  tr_begin();
  static const struct { int64_t n, c; tkc_dtype tdt; } cases[] = {{4, 5, TKC_INT32}, {1, 1, TKC_INT32}, {7, 3, TKC_UINT8}, {3, 10, TKC_INT16}, {5, 2, TKC_INT64}};
  FOR_EACH_DEVICE(dev, ctx) {
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
      if (!tr_dev_supports(dev, cases[c].tdt)) continue;
      href x, lp;
      tkc_tensor *tx = tr_make(ctx, TKC_FLOAT32, TR_SHAPE(cases[c].n, cases[c].c), TR_DOM_ANY, NULL, &x);
      href t = rand_target(cases[c].tdt, cases[c].n, cases[c].c);
      tkc_tensor *tt = tr_upload(ctx, &t);
      lp = tr_softmax(&x, 1, true);
      for (int r = 0; r < 3; r++) {
        href want = ref_nll(&lp, &t, r);
        tkc_tensor *ce = tkc_cross_entropy(tx, tt, r);
        expect_kernels(ce, 1, 5, dev, "cross_entropy");
        check(ce, &want, dev, "cross_entropy case %zu reduction %d", c, r);
        /* nll_loss of (realized) log-probs */
        tkc_tensor *tlp = tr_upload(ctx, &lp);
        check(tkc_nll_loss(tlp, tt, r), &want, dev, "nll_loss case %zu reduction %d", c, r);
        tr_free(&want);
      }
      tr_free(&x), tr_free(&lp), tr_free(&t);
    }
    /* non-contiguous logits, a lazy target (out-of-range rows give 0), 16-bit floats */
    href x, t;
    tkc_tensor *tx = tr_make(ctx, TKC_FLOAT32, TR_SHAPE(4, 3), TR_DOM_ANY, TR_STEPS(TR_PERMUTE(1, 0)), &x); /* (3, 4) */
    tkc_tensor *tt = tkc_sub(tkc_tensor_new(ctx, TKC_INT32, 1, (const int64_t[]){3}, (const int32_t[]){1, 5, 4}), tkc_scalar(ctx, TKC_INT32, 1));
    t = tr_new(TKC_INT32, 1, (const int64_t[]){3});
    t.v[0].i = 0, t.v[1].i = 4, t.v[2].i = 3;
    href lp = tr_softmax(&x, 1, true), want = ref_nll(&lp, &t, TKC_REDUCTION_MEAN);
    check(tkc_cross_entropy(tx, tt, TKC_REDUCTION_MEAN), &want, dev, "cross_entropy: permuted logits, lazy target with index 4 of 4");
    tr_free(&want), tr_free(&lp), tr_free(&x), tr_free(&t);
    for (int h = 0; h < 2; h++) {
      tkc_dtype dt = half_dts[h];
      if (!tr_dev_supports(dev, dt)) continue;
      tx = tr_make(ctx, dt, TR_SHAPE(6, 5), TR_DOM_ANY, NULL, &x);
      t = rand_target(TKC_INT32, 6, 5);
      lp = tr_softmax(&x, 1, true), want = ref_nll(&lp, &t, TKC_REDUCTION_SUM);
      check(tkc_cross_entropy(tx, tr_upload(ctx, &t), TKC_REDUCTION_SUM), &want, dev, "cross_entropy %s", tr_dn(dt));
      tr_free(&want), tr_free(&lp), tr_free(&x), tr_free(&t);
    }
  }
  TR_END();
}

/* ---------------------------------------------------------------- reduces nested in their reader */

/* x - max(x) over the trailing dims axes[0..n), exp'd and divided by its sum: a softmax over several
 * dims, from the tensor ops */
static tkc_tensor *softmax_dims(tkc_tensor *x, int n, const int *axes) {
  tkc_tensor *m = tkc_max(x, n, axes, 1), *d = tkc_sub(x, m), *e = tkc_exp(d), *s = tkc_sum(e, n, axes, 1), *r = tkc_div(e, s);
  tkc_tensor_free(m), tkc_tensor_free(d), tkc_tensor_free(s), tkc_tensor_free(e);
  return r;
}

static href ref_softmax_dims(const href *x, int n, const int *axes) {
  href m = tr_reduce(TR_RMAX, x, n, axes, 1), d = tr_binary(TR_SUB, x, &m), e = tr_unary(TR_EXP, &d), s = tr_reduce(TR_SUM, &e, n, axes, 1);
  href r = tr_binary(TR_DIV, &e, &s);
  tr_free(&m), tr_free(&d), tr_free(&e), tr_free(&s);
  return r;
}

/* On host devices a reduce that its reader broadcasts back along the reduced (trailing) dims is
 * computed inside the reader's kernel (schedule.c nests, lowerer.c lower_nested): a softmax is one
 * kernel there, three elsewhere, and a layer_norm takes the two-pass form that nests. Rows that are not a multiple of the vector width, a reduce over
 * two dims, one over a leading dim (not nested), log_softmax and argmax, a cross-entropy (whose
 * log_softmax sits inside the sum that picks each row's target: index folding must leave the nested
 * reduces alone), 16-bit floats, NaN and infinities in a row. */
static void test_nested_reduces(void **state) {
  (void)state;
  tr_begin();
  static const struct { int ndim; int64_t shape[3]; } rows[] = {{2, {16, 100}}, {2, {9, 37}}, {3, {8, 2, 64}}, {2, {40, 16}}};
  FOR_EACH_DEVICE(dev, ctx) {
    bool host = strcmp(dev, "WEBGPU") && strcmp(dev, "CUDA");
    for (size_t c = 0; c < sizeof rows / sizeof rows[0]; c++) {
      href x;
      tkc_tensor *tx = tr_make(ctx, TKC_FLOAT32, rows[c].ndim, rows[c].shape, TR_DOM_ANY, NULL, &x);
      href want = tr_softmax(&x, -1, false), lwant = tr_softmax(&x, -1, true);
      tkc_tensor *y = tkc_softmax(tx, -1);
      expect_kernels(y, host ? 1 : 3, host ? 1 : 3, dev, "softmax");
      if (!strcmp(dev, "CPU") && rows[c].ndim == 2 && rows[c].shape[1] > 16) { /* the max's and the sum's loops run once per row, before the loop that writes it */
        char *src = tkc_kernels_source(y, "C");
        int depth[8], nloops = 0;
        for (const char *p = src ? strstr(src, "for (int ridx") : NULL; p && nloops < 8; p = strstr(p + 1, "for (int ridx")) {
          const char *b = p;
          while (b > src && b[-1] == ' ') b--;
          depth[nloops++] = (int)(p - b) / 2;
        }
        TR_EXPECT(nloops == 4 && depth[1] == depth[0] + 1 && depth[2] == depth[1] && depth[3] == depth[1],
                  "CPU: softmax case %zu: %d loops (want a row loop and 3 loops inside it, one after the other):\n%s", c, nloops, src ? src : "");
        /* exp is computed once: the sum's loop stores it into the output, the last loop scales it there */
        const char *last = src ? strrchr(src, '}') : NULL, *out_loop = NULL;
        for (const char *p = src ? strstr(src, "for (int ridx") : NULL; p; p = strstr(p + 1, "for (int ridx")) out_loop = p;
        int stores = 0;
        for (const char *p = src; p && (p = strstr(p, "data0+")); p++) stores++;
        TR_EXPECT(out_loop && last && !strstr(out_loop, "fma") && !strstr(out_loop, "data1") && stores >= 3,
                  "CPU: softmax case %zu: the output loop recomputes exp (want it loaded from the output):\n%s", c, src ? src : "");
        tkc_free(src);
      }
      check(y, &want, dev, "softmax case %zu", c);
      check(tkc_log_softmax(tx, -1), &lwant, dev, "log_softmax case %zu", c);
      href nwant = ref_norm(&x, 1, NULL, NULL, 1e-5, 0, TKC_FLOAT32);
      tkc_tensor *ln = tkc_layer_norm(tx, 1, NULL, NULL, 1e-5); /* (host devices: the mean's and variance's loops per row) */
      expect_kernels(ln, 1, host ? 1 : 2, dev, "layer_norm");
      check(ln, &nwant, dev, "layer_norm case %zu", c);
      tr_free(&nwant);
      int last = rows[c].ndim - 1;
      tkc_tensor *a = tkc_argmax(tx, last, 0);
      int64_t n = tkc_numel(a), inner = rows[c].shape[last];
      int32_t *got = calloc(tr_cnt(n), sizeof *got);
      TR_EXPECT(a && got && tkc_copy_out(a, got, (size_t)n * sizeof *got) == TKC_OK, "%s: argmax case %zu: %s", dev, c, tkc_last_error());
      for (int64_t r = 0; got && r < n; r++) {
        int64_t best = 0;
        for (int64_t j = 1; j < inner; j++)
          if (at(&x, r * inner + j) > at(&x, r * inner + best)) best = j;
        TR_EXPECT(got[r] == best, "%s: argmax case %zu row %lld = %d, want %lld", dev, c, (long long)r, got[r], (long long)best);
      }
      free(got);
      tr_free(&x), tr_free(&want), tr_free(&lwant);
    }
    /* over the last two dims at once; over the first one (not the reader's inner loops: 3 kernels) */
    href x;
    tkc_tensor *tx = tr_make(ctx, TKC_FLOAT32, TR_SHAPE(10, 6, 7), TR_DOM_ANY, NULL, &x);
    href want = ref_softmax_dims(&x, 2, (const int[]){1, 2});
    tkc_tensor *y = softmax_dims(tx, 2, (const int[]){1, 2});
    expect_kernels(y, host ? 1 : 3, host ? 1 : 3, dev, "softmax over 2 dims");
    check(y, &want, dev, "softmax over dims (1, 2)");
    tr_free(&want);
    want = ref_softmax_dims(&x, 1, (const int[]){0});
    y = softmax_dims(tx, 1, (const int[]){0});
    expect_kernels(y, 3, 3, dev, "softmax over the first dim");
    check(y, &want, dev, "softmax over dim 0");
    tr_free(&want), tr_free(&x);
    /* a cross-entropy of 12 rows (its log_softmax nested in the sum that picks each target) */
    tx = tr_make(ctx, TKC_FLOAT32, TR_SHAPE(12, 40), TR_DOM_ANY, NULL, &x);
    href t = rand_target(TKC_INT32, 12, 40), lp = tr_softmax(&x, 1, true);
    for (int r = 0; r < 3; r++) {
      want = ref_nll(&lp, &t, r);
      check(tkc_cross_entropy(tx, tr_upload(ctx, &t), r), &want, dev, "cross_entropy of 12 rows, reduction %d", r);
      tr_free(&want);
    }
    tr_free(&x), tr_free(&t), tr_free(&lp);
    /* 16-bit floats */
    for (int h = 0; h < 2; h++) {
      if (!tr_dev_supports(dev, half_dts[h])) continue;
      tx = tr_make(ctx, half_dts[h], TR_SHAPE(12, 48), TR_DOM_ANY, NULL, &x);
      want = tr_softmax(&x, -1, false);
      check(tkc_softmax(tx, -1), &want, dev, "softmax %s", tr_dn(half_dts[h]));
      tr_free(&x), tr_free(&want);
    }
    /* a NaN, an infinity and -infinities in some rows: as the three kernels would give */
    float v[8 * 20];
    for (int i = 0; i < 8 * 20; i++) v[i] = (float)((i * 7) % 13) / 4.0f - 1.5f;
    v[1 * 20 + 3] = NAN, v[2 * 20 + 5] = INFINITY, v[3 * 20 + 0] = -INFINITY, v[3 * 20 + 1] = -INFINITY;
    double vd[8 * 20];
    for (int i = 0; i < 8 * 20; i++) vd[i] = v[i];
    x = tr_from_doubles(TKC_FLOAT32, 2, (const int64_t[]){8, 20}, vd);
    want = tr_softmax(&x, -1, false);
    tx = tkc_tensor_new(ctx, TKC_FLOAT32, 2, (const int64_t[]){8, 20}, v);
    float out[8 * 20];
    TR_EXPECT(tkc_copy_out(tkc_softmax(tx, -1), out, sizeof out) == TKC_OK, "%s: softmax with NaN: %s", dev, tkc_last_error());
    for (int i = 0; i < 8 * 20; i++) {
      double w = at(&want, i);
      TR_EXPECT(isnan(w) ? isnan(out[i]) : fabs(out[i] - w) <= 1e-6 + 1e-5 * fabs(w), "%s: softmax with NaN/inf: [%d] = %g, want %g", dev, i, out[i], w);
    }
    tr_free(&x), tr_free(&want);
    /* in place, x = softmax(x) * x: the kernel reads x where it writes it, after the sum's loop, so exp
     * may not be parked in the output (x's buffer) there (it was: off by 0.4) */
    tx = tr_make(ctx, TKC_FLOAT32, 2, (const int64_t[]){16, 100}, TR_DOM_ANY, NULL, &x);
    href sm = tr_softmax(&x, -1, false);
    want = tr_binary(TR_MUL, &sm, &x);
    TR_EXPECT(tkc_assign(tx, tkc_mul(tkc_softmax(tx, -1), tx)) == TKC_OK && tkc_realize(tx) == TKC_OK, "%s: softmax(x) * x in place: %s", dev,
              tkc_last_error());
    check(tx, &want, dev, "softmax(x) * x in place");
    tr_free(&x), tr_free(&want), tr_free(&sm);
  }
  TR_END();
}

/* ---------------------------------------------------------------- every device against INTERP */

enum { NN_XCHECK = 8 };

/* the ops on one ctx over the same host inputs; each result copied into out[i] (n[i] floats) */
static void run_ops(tkc_ctx *ctx, const href *x, const href *w, const href *q, float *out[NN_XCHECK], int64_t n[NN_XCHECK]) {
  tkc_tensor *tx = tr_upload(ctx, x), *tw = tr_upload(ctx, w), *tq = tr_upload(ctx, q);
  tkc_tensor *tgt = tkc_tensor_new(ctx, TKC_INT32, 1, (const int64_t[]){4}, (const int32_t[]){0, 3, 1, 2});
  tkc_tensor *r[NN_XCHECK] = {
      tkc_layer_norm(tx, 2, NULL, NULL, 1e-5),
      tkc_conv2d_ex(tx, tw, NULL, (const int[]){2, 1}, (const int[]){1, 0, 2, 1}, (const int[]){1, 2}, 2),
      tkc_conv_transpose2d(tx, tw, NULL, (const int[]){2, 3}, (const int[]){1, 0}, (const int[]){1, 2}, NULL, 2),
      tkc_max_pool2d(tx, (const int[]){3, 2}, (const int[]){2, 2}, (const int[]){1, 1}, (const int[]){1, 2}, 1),
      tkc_avg_pool2d(tx, (const int[]){3, 3}, (const int[]){2, 1}, (const int[]){1, 1}, 1, 0),
      tkc_interpolate(tx, 9, 4, TKC_INTERP_BILINEAR, 0),
      tkc_scaled_dot_product_attention(tq, tq, tq, NULL, 1, 0),
      tkc_cross_entropy(tkc_reshape(tq, 2, (const int64_t[]){4, 8}), tgt, TKC_REDUCTION_NONE),
  };
  for (int i = 0; i < NN_XCHECK; i++) {
    n[i] = tkc_numel(r[i]);
    out[i] = calloc(tr_cnt(n[i]), sizeof(float));
    TR_EXPECT(r[i] && tkc_copy_out(r[i], out[i], (size_t)n[i] * sizeof(float)) == TKC_OK, "%s: op %d of the cross-check", tkc_ctx_device(ctx), i);
  }
}

static void test_against_interp(void **state) {
  (void)state;
  tr_begin();
  href x = tr_rand(TKC_FLOAT32, TR_SHAPE(2, 4, 7, 6), TR_DOM_ANY), w = tr_rand(TKC_FLOAT32, TR_SHAPE(4, 2, 3, 2), TR_DOM_ANY);
  href q = tr_rand(TKC_FLOAT32, TR_SHAPE(2, 2, 8), TR_DOM_ANY);
  float *ref[NN_XCHECK], *got[NN_XCHECK];
  int64_t nref[NN_XCHECK], ngot[NN_XCHECK];
  tkc_ctx *ictx = tkc_ctx_new("INTERP");
  assert_non_null(ictx);
  run_ops(ictx, &x, &w, &q, ref, nref);
  FOR_EACH_DEVICE(dev, ctx) {
    if (!strcmp(dev, "INTERP")) continue;
    run_ops(ctx, &x, &w, &q, got, ngot);
    for (int i = 0; i < NN_XCHECK; i++) {
      TR_EXPECT(ngot[i] == nref[i], "%s: op %d has %lld elements, INTERP %lld", dev, i, (long long)ngot[i], (long long)nref[i]);
      for (int64_t k = 0, bad = 0; ngot[i] == nref[i] && k < nref[i] && bad < 3; k++)
        if (!(fabsf(got[i][k] - ref[i][k]) <= 1e-5f + 1e-5f * fabsf(ref[i][k]))) {
          bad++;
          tr_problem("%s: op %d element %lld = %.9g, INTERP %.9g", dev, i, (long long)k, got[i][k], ref[i][k]);
        }
      free(got[i]);
    }
  }
  for (int i = 0; i < NN_XCHECK; i++) free(ref[i]);
  tkc_ctx_free(ictx);
  tr_free(&x), tr_free(&w), tr_free(&q);
  TR_END();
}

/* ---------------------------------------------------------------- bad inputs */

static void test_bad_inputs(void **state) {
  (void)state;
  tr_begin();
  tkc_ctx *ctx = tkc_ctx_new("INTERP"), *other = tkc_ctx_new("INTERP");
  assert_non_null(ctx);
  const int64_t s4[4] = {1, 2, 5, 5}, sw[4] = {3, 2, 3, 3};
  tkc_tensor *x = tkc_rand(ctx, TKC_FLOAT32, 4, s4, 1), *w = tkc_rand(ctx, TKC_FLOAT32, 4, sw, 2), *x2 = tkc_rand(ctx, TKC_FLOAT32, 2, s4 + 2, 3);
  tkc_tensor *xi = tkc_full(ctx, TKC_INT32, 4, s4, 1), *xo = tkc_rand(other, TKC_FLOAT32, 4, s4, 1);
  tkc_tensor *v2 = tkc_full(ctx, TKC_FLOAT32, 1, (const int64_t[]){2}, 1), *v5 = tkc_full(ctx, TKC_FLOAT32, 1, (const int64_t[]){5}, 1);
  const int one[2] = {1, 1}, zero4[4] = {0, 0, 0, 0}, k2[2] = {2, 2};
  /* NULLs: an op given a NULL tensor fails, keeping the first error */
  tkc_clear_error();
  TR_EXPECT_FAIL(tkc_layer_norm(NULL, 1, NULL, NULL, 1e-5), TKC_EINVAL, "layer_norm(NULL)");
  TR_EXPECT_FAIL(tkc_rms_norm(NULL, 1, NULL, 1e-5), TKC_EINVAL, "rms_norm(NULL)");
  TR_EXPECT_FAIL(tkc_batch_norm(x, NULL, v2, NULL, NULL, 1e-5), TKC_EINVAL, "batch_norm(NULL mean)");
  TR_EXPECT_FAIL(tkc_conv2d_ex(x, NULL, NULL, NULL, NULL, NULL, 1), TKC_EINVAL, "conv2d_ex(NULL w)");
  TR_EXPECT_FAIL(tkc_conv1d(NULL, w, NULL, 1, 0, 0, 1, 1), TKC_EINVAL, "conv1d(NULL)");
  TR_EXPECT_FAIL(tkc_conv_transpose2d(NULL, w, NULL, NULL, NULL, NULL, NULL, 1), TKC_EINVAL, "conv_transpose2d(NULL)");
  TR_EXPECT_FAIL(tkc_max_pool2d(NULL, k2, NULL, NULL, NULL, 0), TKC_EINVAL, "max_pool2d(NULL)");
  TR_EXPECT_FAIL(tkc_max_pool2d(x, NULL, NULL, NULL, NULL, 0), TKC_EINVAL, "max_pool2d(NULL kernel)");
  TR_EXPECT_FAIL(tkc_avg_pool2d(NULL, k2, NULL, NULL, 0, 0), TKC_EINVAL, "avg_pool2d(NULL)");
  TR_EXPECT_FAIL(tkc_interpolate(NULL, 2, 2, TKC_INTERP_NEAREST, 0), TKC_EINVAL, "interpolate(NULL)");
  TR_EXPECT_FAIL(tkc_scaled_dot_product_attention(x2, NULL, x2, NULL, 0, 0), TKC_EINVAL, "attention(NULL k)");
  TR_EXPECT_FAIL(tkc_cross_entropy(x2, NULL, 0), TKC_EINVAL, "cross_entropy(NULL target)");
  TR_EXPECT_FAIL(tkc_nll_loss(NULL, NULL, 0), TKC_EINVAL, "nll_loss(NULL)");
  tkc_clear_error();
  TR_EXPECT_FAIL(tkc_layer_norm(tkc_reshape(x, 1, (const int64_t[]){7}), 1, NULL, NULL, 0), TKC_ESHAPE, "layer_norm(failed reshape) keeps the first error");
  /* ranks, dtypes, shapes */
  TR_EXPECT_FAIL(tkc_layer_norm(x, 0, NULL, NULL, 1e-5), TKC_EINVAL, "layer_norm naxes 0");
  TR_EXPECT_FAIL(tkc_layer_norm(x, 5, NULL, NULL, 1e-5), TKC_EINVAL, "layer_norm naxes 5 of 4 dims");
  TR_EXPECT_FAIL(tkc_layer_norm(x, 1, v2, NULL, 1e-5), TKC_ESHAPE, "layer_norm weight (2) for dim 5");
  TR_EXPECT_FAIL(tkc_layer_norm(x, 1, NULL, NULL, -1), TKC_EINVAL, "layer_norm eps -1");
  TR_EXPECT_FAIL(tkc_layer_norm(x, 1, NULL, NULL, NAN), TKC_EINVAL, "layer_norm eps NaN");
  TR_EXPECT_FAIL(tkc_layer_norm(xi, 1, NULL, NULL, 1e-5), TKC_EDTYPE, "layer_norm of int32");
  TR_EXPECT_FAIL(tkc_rms_norm(x, 2, v5, 1e-5), TKC_ESHAPE, "rms_norm weight (5) for dims (5, 5)");
  TR_EXPECT_FAIL(tkc_layer_norm(x, 1, v5, tkc_full(other, TKC_FLOAT32, 1, (const int64_t[]){5}, 0), 1e-5), TKC_EINVAL, "layer_norm bias of another ctx");
  TR_EXPECT_FAIL(tkc_batch_norm(v5, v5, v5, NULL, NULL, 1e-5), TKC_ESHAPE, "batch_norm of 1-D x");
  TR_EXPECT_FAIL(tkc_batch_norm(x, v5, v2, NULL, NULL, 1e-5), TKC_ESHAPE, "batch_norm mean (5) for 2 channels");
  TR_EXPECT_FAIL(tkc_batch_norm(x, v2, v2, v5, NULL, 1e-5), TKC_ESHAPE, "batch_norm weight (5) for 2 channels");
  TR_EXPECT_FAIL(tkc_conv2d_ex(x2, w, NULL, NULL, NULL, NULL, 1), TKC_ESHAPE, "conv2d_ex of 2-D x");
  TR_EXPECT_FAIL(tkc_conv2d_ex(x, w, v2, NULL, NULL, NULL, 1), TKC_ESHAPE, "conv2d_ex bias (2) for 3 outputs");
  TR_EXPECT_FAIL(tkc_conv2d_ex(x, w, NULL, NULL, NULL, NULL, 2), TKC_ESHAPE, "conv2d_ex 3 outputs in 2 groups");
  TR_EXPECT_FAIL(tkc_conv2d_ex(x, tkc_rand(ctx, TKC_FLOAT32, 4, (const int64_t[]){4, 3, 3, 3}, 1), NULL, NULL, NULL, NULL, 1), TKC_ESHAPE,
                 "conv2d_ex channel mismatch");
  TR_EXPECT_FAIL(tkc_conv2d_ex(x, w, NULL, NULL, NULL, NULL, 0), TKC_EINVAL, "conv2d_ex groups 0");
  TR_EXPECT_FAIL(tkc_conv2d_ex(x, w, NULL, (const int[]){0, 1}, NULL, NULL, 1), TKC_EINVAL, "conv2d_ex stride 0");
  TR_EXPECT_FAIL(tkc_conv2d_ex(x, w, NULL, (const int[]){1, -2}, NULL, NULL, 1), TKC_EINVAL, "conv2d_ex stride -2");
  TR_EXPECT_FAIL(tkc_conv2d_ex(x, w, NULL, NULL, (const int[]){0, 0, -1, 0}, NULL, 1), TKC_EINVAL, "conv2d_ex pad -1");
  TR_EXPECT_FAIL(tkc_conv2d_ex(x, w, NULL, NULL, NULL, (const int[]){0, 1}, 1), TKC_EINVAL, "conv2d_ex dilation 0");
  TR_EXPECT_FAIL(tkc_conv2d_ex(x, w, NULL, NULL, NULL, (const int[]){3, 1}, 1), TKC_ESHAPE, "conv2d_ex dilated kernel 7 > 5");
  TR_EXPECT_FAIL(tkc_conv2d_ex(x, w, NULL, (const int[]){INT32_MAX, INT32_MAX}, (const int[]){INT32_MAX, INT32_MAX, INT32_MAX, INT32_MAX}, one, 1),
                 TKC_ESHAPE, "conv2d_ex pads of 2^31");
  TR_EXPECT_FAIL(tkc_conv2d_ex(x, w, NULL, one, zero4, (const int[]){INT32_MAX, 1}, 1), TKC_ESHAPE, "conv2d_ex dilation 2^31");
  TR_EXPECT_FAIL(tkc_conv2d_ex(x, xo, NULL, NULL, NULL, NULL, 1), TKC_EINVAL, "conv2d_ex w of another ctx");
  TR_EXPECT_FAIL(tkc_conv1d(x, w, NULL, 1, 0, 0, 1, 1), TKC_ESHAPE, "conv1d of 4-D x");
  tkc_tensor *x3 = tkc_rand(ctx, TKC_FLOAT32, 3, (const int64_t[]){1, 2, 4}, 1), *w3 = tkc_rand(ctx, TKC_FLOAT32, 3, (const int64_t[]){2, 2, 3}, 1);
  TR_EXPECT_FAIL(tkc_conv1d(x3, w3, NULL, 0, 0, 0, 1, 1), TKC_EINVAL, "conv1d stride 0");
  TR_EXPECT_FAIL(tkc_conv1d(x3, w3, NULL, 1, -1, 0, 1, 1), TKC_EINVAL, "conv1d pad -1");
  TR_EXPECT_FAIL(tkc_conv1d(x3, w3, NULL, 1, 0, 0, 2, 1), TKC_ESHAPE, "conv1d dilated kernel 5 > 4");
  TR_EXPECT_FAIL(tkc_conv1d(x3, w3, NULL, 1, 0, 0, 1, 2), TKC_ESHAPE, "conv1d w channels for 2 groups");
  tkc_tensor *wt = tkc_rand(ctx, TKC_FLOAT32, 4, (const int64_t[]){2, 3, 3, 3}, 1);
  TR_EXPECT_FAIL(tkc_conv_transpose2d(x, w, NULL, NULL, NULL, NULL, NULL, 1), TKC_ESHAPE, "conv_transpose2d w (3,...) for 2 channels");
  TR_EXPECT_FAIL(tkc_conv_transpose2d(x, wt, NULL, NULL, NULL, (const int[]){1, 0}, NULL, 1), TKC_EINVAL, "conv_transpose2d output_padding 1, stride 1");
  TR_EXPECT_FAIL(tkc_conv_transpose2d(x, wt, NULL, NULL, (const int[]){4, 4}, NULL, NULL, 1), TKC_ESHAPE, "conv_transpose2d pad 4: empty output");
  TR_EXPECT_FAIL(tkc_conv_transpose2d(x, wt, NULL, (const int[]){0, 1}, NULL, NULL, NULL, 1), TKC_EINVAL, "conv_transpose2d stride 0");
  TR_EXPECT_FAIL(tkc_conv_transpose2d(x, wt, NULL, NULL, NULL, NULL, NULL, 3), TKC_ESHAPE, "conv_transpose2d 2 channels in 3 groups");
  TR_EXPECT_FAIL(tkc_conv_transpose2d(x, wt, v5, NULL, NULL, NULL, NULL, 1), TKC_ESHAPE, "conv_transpose2d bias (5) for 3 outputs");
  TR_EXPECT_FAIL(tkc_conv_transpose2d(x, wt, NULL, (const int[]){INT32_MAX, INT32_MAX}, NULL, NULL, NULL, 1), TKC_ESHAPE, "conv_transpose2d stride 2^31");
  TR_EXPECT_FAIL(tkc_max_pool2d(x2, k2, NULL, NULL, NULL, 0), TKC_ESHAPE, "max_pool2d of 2-D x");
  TR_EXPECT_FAIL(tkc_max_pool2d(x, (const int[]){0, 2}, NULL, NULL, NULL, 0), TKC_EINVAL, "max_pool2d kernel 0");
  TR_EXPECT_FAIL(tkc_max_pool2d(x, k2, (const int[]){1, -1}, NULL, NULL, 0), TKC_EINVAL, "max_pool2d stride -1");
  TR_EXPECT_FAIL(tkc_max_pool2d(x, k2, NULL, (const int[]){2, 0}, NULL, 0), TKC_EINVAL, "max_pool2d pad 2 > kernel/2");
  TR_EXPECT_FAIL(tkc_max_pool2d(x, (const int[]){6, 2}, NULL, NULL, NULL, 0), TKC_ESHAPE, "max_pool2d kernel 6 > 5");
  TR_EXPECT_FAIL(tkc_max_pool2d(x, k2, NULL, NULL, (const int[]){5, 1}, 0), TKC_ESHAPE, "max_pool2d dilated kernel 6 > 5");
  TR_EXPECT_FAIL(tkc_max_pool2d(x, (const int[]){INT32_MAX, 1}, NULL, NULL, NULL, 1), TKC_ESHAPE, "max_pool2d kernel 2^31");
  TR_EXPECT_FAIL(tkc_avg_pool2d(x, k2, NULL, (const int[]){0, 3}, 0, 0), TKC_EINVAL, "avg_pool2d pad 3 > kernel/2");
  TR_EXPECT_FAIL(tkc_avg_pool2d(xi, k2, NULL, NULL, 0, 0), TKC_EDTYPE, "avg_pool2d of int32");
  TR_EXPECT_FAIL(tkc_interpolate(x, 0, 3, TKC_INTERP_NEAREST, 0), TKC_ESHAPE, "interpolate to height 0");
  TR_EXPECT_FAIL(tkc_interpolate(x, 3, -1, TKC_INTERP_BILINEAR, 0), TKC_ESHAPE, "interpolate to width -1");
  TR_EXPECT_FAIL(tkc_interpolate(x, 3, 3, 7, 0), TKC_EINVAL, "interpolate mode 7");
  TR_EXPECT_FAIL(tkc_interpolate(x, 3, 3, TKC_INTERP_NEAREST, 1), TKC_EINVAL, "interpolate nearest with align_corners");
  TR_EXPECT_FAIL(tkc_interpolate(xi, 3, 3, TKC_INTERP_BILINEAR, 0), TKC_EDTYPE, "interpolate bilinear of int32");
  TR_EXPECT_FAIL(tkc_interpolate(x2, 3, 3, TKC_INTERP_NEAREST, 0), TKC_ESHAPE, "interpolate of 2-D x");
  TR_EXPECT_FAIL(tkc_interpolate(x, (int64_t)1 << 40, 3, TKC_INTERP_NEAREST, 0), TKC_ESHAPE, "interpolate to height 2^40");
  tkc_tensor *q = tkc_rand(ctx, TKC_FLOAT32, 2, (const int64_t[]){3, 4}, 1), *k = tkc_rand(ctx, TKC_FLOAT32, 2, (const int64_t[]){5, 4}, 2);
  TR_EXPECT_FAIL(tkc_scaled_dot_product_attention(q, q, k, NULL, 0, 0), TKC_ESHAPE, "attention k and v positions differ");
  TR_EXPECT_FAIL(tkc_scaled_dot_product_attention(q, v5, v5, NULL, 0, 0), TKC_ESHAPE, "attention of 1-D k");
  TR_EXPECT_FAIL(tkc_scaled_dot_product_attention(q, x2, x2, NULL, 0, 0), TKC_ESHAPE, "attention head dims 4 and 5");
  TR_EXPECT_FAIL(tkc_scaled_dot_product_attention(q, k, k, v2, 0, 0), TKC_ESHAPE, "attention mask (2) for (3, 5)");
  TR_EXPECT_FAIL(tkc_scaled_dot_product_attention(q, k, k, tkc_full(ctx, TKC_BOOL, 3, (const int64_t[]){2, 3, 5}, 1), 0, 0), TKC_ESHAPE,
                 "attention mask growing the batch");
  TR_EXPECT_FAIL(tkc_scaled_dot_product_attention(q, k, k, tkc_full(ctx, TKC_INT32, 2, (const int64_t[]){3, 5}, 1), 0, 0), TKC_EDTYPE, "attention int mask");
  TR_EXPECT_FAIL(tkc_scaled_dot_product_attention(q, k, k, NULL, 0, INFINITY), TKC_EINVAL, "attention scale inf");
  TR_EXPECT_FAIL(tkc_scaled_dot_product_attention(tkc_cast(q, TKC_INT32), k, k, NULL, 0, 0), TKC_EDTYPE, "attention int q");
  tkc_tensor *tgt = tkc_tensor_new(ctx, TKC_INT32, 1, (const int64_t[]){3}, (const int32_t[]){0, 3, 4});
  TR_EXPECT_FAIL(tkc_cross_entropy(q, tgt, TKC_REDUCTION_MEAN), TKC_EINVAL, "cross_entropy target 4 of 4 classes (realized)");
  TR_EXPECT(strstr(tkc_last_error(), "target[2] = 4"), "the error names the index: %s", tkc_last_error());
  tkc_tensor *neg = tkc_tensor_new(ctx, TKC_INT64, 1, (const int64_t[]){3}, (const int64_t[]){0, -1, 2});
  TR_EXPECT_FAIL(tkc_nll_loss(q, neg, TKC_REDUCTION_NONE), TKC_EINVAL, "nll_loss target -1 (realized)");
  tkc_tensor *big = tkc_tensor_new(ctx, TKC_UINT64, 1, (const int64_t[]){3}, (const uint64_t[]){0, UINT64_MAX, 2});
  TR_EXPECT_FAIL(tkc_nll_loss(q, big, TKC_REDUCTION_NONE), TKC_EINVAL, "nll_loss target 2^64-1 (realized)");
  tkc_tensor *good = tkc_tensor_new(ctx, TKC_INT32, 1, (const int64_t[]){3}, (const int32_t[]){0, 3, 1});
  TR_EXPECT_FAIL(tkc_cross_entropy(q, good, 3), TKC_EINVAL, "cross_entropy reduction 3");
  TR_EXPECT_FAIL(tkc_cross_entropy(q, tkc_cast(good, TKC_FLOAT32), 0), TKC_EDTYPE, "cross_entropy float target");
  TR_EXPECT_FAIL(tkc_cross_entropy(q, v2, 0), TKC_ESHAPE, "cross_entropy target (2) for 3 rows");
  TR_EXPECT_FAIL(tkc_cross_entropy(v5, good, 0), TKC_ESHAPE, "cross_entropy 1-D logits");
  TR_EXPECT_FAIL(tkc_nll_loss(tkc_cast(q, TKC_INT32), good, 0), TKC_EDTYPE, "nll_loss int log_probs");
  TR_EXPECT_FAIL(tkc_cross_entropy(tkc_full(ctx, TKC_FLOAT32, 2, (const int64_t[]){3, 0}, 0), good, 0), TKC_ESHAPE, "cross_entropy of 0 classes");
  TR_EXPECT(tr_ctx_works(ctx), "ctx works after the failures");
  tkc_ctx_free(other);
  tkc_ctx_free(ctx);
  TR_END();
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_norms),     cmocka_unit_test(test_conv),   cmocka_unit_test(test_pool),     cmocka_unit_test(test_interpolate),
      cmocka_unit_test(test_attention), cmocka_unit_test(test_losses), cmocka_unit_test(test_nested_reduces), cmocka_unit_test(test_against_interp), cmocka_unit_test(test_bad_inputs),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
