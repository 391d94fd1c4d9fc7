/* Bad input for every function of tkc.h: NULL tensors (NULL chains keep the first error), tensors of
 * different ctxs, freed handles, mismatched shapes, bad axes, invalid reshape/pad/shrink/expand,
 * dtypes an op does not accept, bad sizes. Every failure returns NULL / an error status, never
 * aborts or prints, and the ctx keeps working (checked after each block). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <fcntl.h>
#include <limits.h>
#include <unistd.h>
#include "tensor_ref.h"

typedef tkc_tensor *(*binfn)(tkc_tensor *, tkc_tensor *);
typedef tkc_tensor *(*unfn)(tkc_tensor *);

static const struct { binfn fn; const char *name; } BINS[] = {
    {tkc_add, "add"}, {tkc_sub, "sub"}, {tkc_mul, "mul"}, {tkc_div, "div"}, {tkc_idiv, "idiv"}, {tkc_mod, "mod"},
    {tkc_maximum, "maximum"}, {tkc_minimum, "minimum"}, {tkc_pow, "pow"}, {tkc_lt, "lt"}, {tkc_le, "le"}, {tkc_gt, "gt"},
    {tkc_ge, "ge"}, {tkc_eq, "eq"}, {tkc_ne, "ne"}, {tkc_and, "and"}, {tkc_or, "or"}, {tkc_xor, "xor"},
    {tkc_shl, "shl"}, {tkc_shr, "shr"}, {tkc_matmul, "matmul"}, {tkc_dot4, "dot4"},
};
static const struct { unfn fn; const char *name; } UNS[] = {
    {tkc_neg, "neg"}, {tkc_abs, "abs"}, {tkc_recip, "recip"}, {tkc_sqrt, "sqrt"}, {tkc_exp, "exp"}, {tkc_exp2, "exp2"},
    {tkc_log, "log"}, {tkc_log2, "log2"}, {tkc_sin, "sin"}, {tkc_cos, "cos"}, {tkc_tanh, "tanh"}, {tkc_sigmoid, "sigmoid"},
    {tkc_relu, "relu"}, {tkc_contiguous, "contiguous"},
};
#define NB ((int)(sizeof BINS / sizeof BINS[0]))
#define NU ((int)(sizeof UNS / sizeof UNS[0]))

/* a status that may be one of two (where the contract leaves the exact code open) */
#define EXPECT_FAIL2(t, s1, s2, ...)                                                                         \
  do {                                                                                                       \
    tkc_tensor *e2_t_ = (t);                                                                                 \
    tkc_status e2_s_ = tkc_last_status();                                                                    \
    char e2_w_[256];                                                                                         \
    snprintf(e2_w_, sizeof e2_w_, __VA_ARGS__);                                                              \
    if (e2_t_) tr_problem("%s:%d: %s: returned a tensor, want NULL", __FILE__, __LINE__, e2_w_);             \
    else if (e2_s_ != (s1) && e2_s_ != (s2))                                                                 \
      tr_problem("%s:%d: %s: status %s (%s), want %s or %s", __FILE__, __LINE__, e2_w_, tkc_status_str(e2_s_), \
                 tkc_last_error(), tkc_status_str(s1), tkc_status_str(s2));                                  \
  } while (0)

#define FAIL_WITH(expr, st) \
  do {                      \
    tkc_clear_error();      \
    TR_EXPECT_FAIL((expr), (st), "%s: %s", dev, #expr); \
  } while (0)
#define FAIL_WITH2(expr, s1, s2) \
  do {                           \
    tkc_clear_error();           \
    EXPECT_FAIL2((expr), (s1), (s2), "%s: %s", dev, #expr); \
  } while (0)
#define CTX_OK(what) TR_EXPECT(tr_ctx_works(ctx), "%s: ctx broken after %s", dev, what)

static tkc_tensor *f32(tkc_ctx *ctx, int ndim, const int64_t *shape) { return tkc_full(ctx, TKC_FLOAT32, ndim, shape, 1); }

/* ---------------------------------------------------------------- contexts */

static void test_ctx_errors(void **state) {
  (void)state;
  tr_begin();
  const char *dev = "ctx";
  tkc_clear_error();
  TR_EXPECT(tkc_ctx_new("NOPE") == NULL && tkc_last_status() == TKC_EDEVICE, "ctx_new(\"NOPE\"): status %s", tkc_status_str(tkc_last_status()));
  TR_EXPECT(strlen(tkc_last_error()) > 0, "ctx_new(\"NOPE\") gives a message");
  /* "" is either no device (TKC_EDEVICE) or the default: never a crash */
  tkc_ctx_free(tkc_ctx_new(""));
  tkc_clear_error();
  TR_EXPECT(tkc_ctx_new("cpu") == NULL && tkc_last_status() == TKC_EDEVICE, "ctx_new(\"cpu\") (names are case-sensitive)");
  /* a device that is registered but unavailable here (if any) */
  for (const char *const *n = tkc_device_names(); *n; n++)
    if (!tkc_device_available(*n)) {
      tkc_clear_error();
      TR_EXPECT(tkc_ctx_new(*n) == NULL && tkc_last_status() == TKC_EDEVICE, "ctx_new(\"%s\") on an unavailable device", *n);
    }
  tkc_ctx_free(NULL);
  TR_EXPECT(tkc_device_available("NOPE") == 0, "device_available(NOPE)");
  TR_EXPECT(tkc_device_available(NULL) == 0, "device_available(NULL)");
  const char *d = tkc_ctx_device(NULL); /* must not crash; the value is unspecified */
  (void)d;
  /* TKC_DEVICE naming a bad device: ctx_new(NULL) fails with TKC_EDEVICE */
  const char *old = getenv("TKC_DEVICE");
  char *saved = old ? strdup(old) : NULL;
  setenv("TKC_DEVICE", "NOPE", 1);
  tkc_clear_error();
  tkc_ctx *c = tkc_ctx_new(NULL);
  TR_EXPECT(c == NULL && tkc_last_status() == TKC_EDEVICE, "TKC_DEVICE=NOPE: ctx_new(NULL) %s", c ? "succeeded" : tkc_status_str(tkc_last_status()));
  tkc_ctx_free(c);
  if (saved) setenv("TKC_DEVICE", saved, 1);
  else unsetenv("TKC_DEVICE");
  free(saved);
  (void)dev;
  TR_END();
}

/* ---------------------------------------------------------------- creation and properties */

static void test_creation_errors(void **state) {
  (void)state;
  tr_begin();
  FOR_EACH_DEVICE(dev, ctx) {
    const int64_t s2[2] = {2, 3}, neg[2] = {2, -1};
    float data[6] = {0};
    FAIL_WITH(tkc_tensor_new(NULL, TKC_FLOAT32, 2, s2, data), TKC_EINVAL);
    FAIL_WITH2(tkc_tensor_new(ctx, TKC_FLOAT32, 2, neg, NULL), TKC_EINVAL, TKC_ESHAPE);
    FAIL_WITH2(tkc_tensor_new(ctx, TKC_FLOAT32, -1, s2, NULL), TKC_EINVAL, TKC_ESHAPE);
    FAIL_WITH(tkc_tensor_new(ctx, TKC_FLOAT32, 2, NULL, NULL), TKC_EINVAL);
    FAIL_WITH2(tkc_tensor_new(ctx, TKC_VOID, 2, s2, NULL), TKC_EDTYPE, TKC_EINVAL);
    FAIL_WITH2(tkc_tensor_new(ctx, (tkc_dtype)77, 2, s2, NULL), TKC_EDTYPE, TKC_EINVAL);
    CTX_OK("tensor_new errors");
    FAIL_WITH(tkc_full(NULL, TKC_FLOAT32, 2, s2, 1), TKC_EINVAL);
    FAIL_WITH2(tkc_full(ctx, TKC_FLOAT32, 2, neg, 1), TKC_EINVAL, TKC_ESHAPE);
    FAIL_WITH2(tkc_full(ctx, TKC_VOID, 2, s2, 1), TKC_EDTYPE, TKC_EINVAL);
    FAIL_WITH(tkc_full(ctx, TKC_FLOAT32, 2, NULL, 1), TKC_EINVAL);
    FAIL_WITH(tkc_scalar(NULL, TKC_FLOAT32, 1), TKC_EINVAL);
    FAIL_WITH2(tkc_scalar(ctx, TKC_VOID, 1), TKC_EDTYPE, TKC_EINVAL);
    CTX_OK("full/scalar errors");
    FAIL_WITH(tkc_arange(ctx, TKC_FLOAT32, 0, 10, 0), TKC_EINVAL);
    FAIL_WITH(tkc_arange(NULL, TKC_FLOAT32, 0, 10, 1), TKC_EINVAL);
    FAIL_WITH2(tkc_arange(ctx, TKC_VOID, 0, 10, 1), TKC_EDTYPE, TKC_EINVAL);
    CTX_OK("arange errors");
    FAIL_WITH(tkc_rand(ctx, TKC_INT32, 2, s2, 1), TKC_EDTYPE);
    FAIL_WITH(tkc_rand(ctx, TKC_BOOL, 2, s2, 1), TKC_EDTYPE);
    FAIL_WITH(tkc_rand(ctx, TKC_UINT8, 2, s2, 1), TKC_EDTYPE);
    FAIL_WITH(tkc_rand(NULL, TKC_FLOAT32, 2, s2, 1), TKC_EINVAL);
    FAIL_WITH2(tkc_rand(ctx, TKC_FLOAT32, 2, neg, 1), TKC_EINVAL, TKC_ESHAPE);
    CTX_OK("rand errors");
    tkc_tensor_free(NULL);
    TR_EXPECT(tkc_ndim(NULL) == 0 || tkc_ndim(NULL) == -1, "%s: ndim(NULL) = %d", dev, tkc_ndim(NULL));
    TR_EXPECT(tkc_dim(NULL, 0) == -1, "%s: dim(NULL, 0) = %lld", dev, (long long)tkc_dim(NULL, 0));
    TR_EXPECT(tkc_numel(NULL) == 0 || tkc_numel(NULL) == -1, "%s: numel(NULL) = %lld", dev, (long long)tkc_numel(NULL));
    TR_EXPECT(tkc_dtype_of(NULL) == TKC_VOID, "%s: dtype_of(NULL) = %d", dev, (int)tkc_dtype_of(NULL));
    tkc_clear_error(); /* (a NULL keeps the first error of a chain) */
    TR_EXPECT(tkc_tensor_ctx(NULL) == NULL && tkc_last_status() == TKC_EINVAL, "%s: tensor_ctx(NULL)", dev);
    tkc_clear_error();
    tkc_tensor *t = f32(ctx, 2, s2);
    TR_EXPECT(tkc_tensor_ctx(t) == ctx, "%s: tensor_ctx(t) is not t's ctx", dev);
    TR_EXPECT(tkc_dim(t, 2) == -1 && tkc_dim(t, -3) == -1 && tkc_dim(t, 1000) == -1, "%s: dim out of range", dev);
  }
  TR_END();
}

/* ---------------------------------------------------------------- elementwise */

static void test_elementwise_errors(void **state) {
  (void)state;
  tr_begin();
  FOR_EACH_DEVICE(dev, ctx) {
    const int64_t s3[1] = {3}, s4[1] = {4}, s23[2] = {2, 3}, s32[2] = {3, 2};
    tkc_tensor *a = f32(ctx, 1, s3), *b = f32(ctx, 1, s4);
    /* int32 operands: every binary op accepts them, so only the shape can be wrong */
    tkc_tensor *m23 = tkc_full(ctx, TKC_INT32, 2, s23, 1), *m32 = tkc_full(ctx, TKC_INT32, 2, s32, 1);
    tkc_tensor *i3 = tkc_full(ctx, TKC_INT32, 1, s3, 1), *i4 = tkc_full(ctx, TKC_INT32, 1, s4, 1);
    tkc_ctx *other = tkc_ctx_new(dev);
    tkc_tensor *o3 = other ? tkc_full(other, TKC_INT32, 1, s3, 1) : NULL;
    TR_EXPECT(o3 != NULL, "%s: a second ctx", dev);
    for (int k = 0; k < NB; k++) {
      char what[64];
      snprintf(what, sizeof what, "%s: %s", dev, BINS[k].name);
      tkc_clear_error();
      TR_EXPECT_FAIL(BINS[k].fn(NULL, i3), TKC_EINVAL, "%s(NULL, b)", what);
      tkc_clear_error();
      TR_EXPECT_FAIL(BINS[k].fn(i3, NULL), TKC_EINVAL, "%s(a, NULL)", what);
      tkc_clear_error();
      TR_EXPECT_FAIL(BINS[k].fn(NULL, NULL), TKC_EINVAL, "%s(NULL, NULL)", what);
      tkc_clear_error();
      /* (3,) with (4,): no broadcast; for matmul the inner dims differ */
      TR_EXPECT_FAIL(BINS[k].fn(i3, i4), TKC_ESHAPE, "%s((3,), (4,))", what);
      tkc_clear_error();
      if (BINS[k].fn != tkc_matmul) TR_EXPECT_FAIL(BINS[k].fn(m23, m32), TKC_ESHAPE, "%s((2,3), (3,2))", what);
      tkc_clear_error();
      TR_EXPECT_FAIL(BINS[k].fn(i3, o3), TKC_EINVAL, "%s(a, tensor of another ctx)", what);
      tkc_clear_error();
      TR_EXPECT_FAIL(BINS[k].fn(o3, i3), TKC_EINVAL, "%s(tensor of another ctx, b)", what);
      /* a freed handle, used right away */
      tkc_tensor *gone = tkc_full(ctx, TKC_INT32, 1, s3, 2);
      tkc_tensor_free(gone);
      tkc_clear_error();
      tkc_tensor *r = BINS[k].fn(gone, i3);
      TR_EXPECT(r == NULL && tkc_last_status() == TKC_EINVAL && strstr(tkc_last_error(), "freed"),
                "%s(freed, b): %s, status %s, \"%s\" (want NULL, TKC_EINVAL, a message saying \"freed\")", what, r ? "a tensor" : "NULL",
                tkc_status_str(tkc_last_status()), tkc_last_error());
    }
    CTX_OK("binary op errors");
    /* dtypes an op rejects */
    tkc_tensor *f = f32(ctx, 1, s3), *bo = tkc_full(ctx, TKC_BOOL, 1, s3, 1);
    FAIL_WITH(tkc_idiv(f, f), TKC_EDTYPE);
    FAIL_WITH(tkc_mod(f, i3), TKC_EDTYPE);
    FAIL_WITH(tkc_idiv(bo, bo), TKC_EDTYPE);
    FAIL_WITH(tkc_mod(bo, bo), TKC_EDTYPE);
    FAIL_WITH(tkc_and(f, f), TKC_EDTYPE);
    FAIL_WITH(tkc_or(i3, f), TKC_EDTYPE);
    FAIL_WITH(tkc_xor(f, bo), TKC_EDTYPE);
    FAIL_WITH(tkc_shl(f, i3), TKC_EDTYPE);
    FAIL_WITH(tkc_shr(i3, f), TKC_EDTYPE);
    FAIL_WITH(tkc_shl(bo, bo), TKC_EDTYPE);
    FAIL_WITH(tkc_dot4(f, i3), TKC_EDTYPE); /* words are int32 or uint32 */
    FAIL_WITH(tkc_dot4(i3, bo), TKC_EDTYPE);
    FAIL_WITH(tkc_dot4(tkc_full(ctx, TKC_INT8, 1, s3, 1), i3), TKC_EDTYPE);
    FAIL_WITH(tkc_dot4(i3, tkc_full(ctx, TKC_INT16, 1, s3, 1)), TKC_EDTYPE);
    CTX_OK("dtype errors");
    /* where */
    FAIL_WITH(tkc_where(NULL, a, a), TKC_EINVAL);
    FAIL_WITH(tkc_where(bo, NULL, a), TKC_EINVAL);
    FAIL_WITH(tkc_where(bo, a, NULL), TKC_EINVAL);
    FAIL_WITH(tkc_where(bo, b, a), TKC_ESHAPE);
    FAIL_WITH(tkc_where(tkc_full(ctx, TKC_BOOL, 1, s4, 1), a, a), TKC_ESHAPE);
    FAIL_WITH(tkc_where(bo, a, o3), TKC_EINVAL);
    tkc_tensor *gone = tkc_full(ctx, TKC_BOOL, 1, s3, 1);
    tkc_tensor_free(gone);
    FAIL_WITH(tkc_where(gone, a, a), TKC_EINVAL);
    CTX_OK("where errors");
    /* unary */
    for (int k = 0; k < NU; k++) {
      tkc_clear_error();
      TR_EXPECT_FAIL(UNS[k].fn(NULL), TKC_EINVAL, "%s: %s(NULL)", dev, UNS[k].name);
      tkc_tensor *g = tkc_full(ctx, TKC_FLOAT32, 1, s3, 2);
      tkc_tensor_free(g);
      tkc_clear_error();
      tkc_tensor *r = UNS[k].fn(g);
      TR_EXPECT(r == NULL && tkc_last_status() == TKC_EINVAL && strstr(tkc_last_error(), "freed"), "%s: %s(freed): status %s \"%s\"", dev,
                UNS[k].name, tkc_status_str(tkc_last_status()), tkc_last_error());
    }
    FAIL_WITH(tkc_cast(NULL, TKC_INT32), TKC_EINVAL);
    FAIL_WITH2(tkc_cast(a, TKC_VOID), TKC_EDTYPE, TKC_EINVAL);
    FAIL_WITH2(tkc_cast(a, (tkc_dtype)-3), TKC_EDTYPE, TKC_EINVAL);
    FAIL_WITH(tkc_bitcast(NULL, TKC_INT32), TKC_EINVAL);
    FAIL_WITH(tkc_bitcast(a, TKC_INT16), TKC_EDTYPE);
    FAIL_WITH(tkc_bitcast(i3, TKC_FLOAT64), TKC_EDTYPE);
    FAIL_WITH2(tkc_bitcast(a, TKC_VOID), TKC_EDTYPE, TKC_EINVAL);
    CTX_OK("unary errors");
    tkc_ctx_free(other);
  }
  TR_END();
}

/* ---------------------------------------------------------------- reductions, movement, composites */

static void test_reduce_movement_errors(void **state) {
  (void)state;
  tr_begin();
  typedef tkc_tensor *(*redfn)(tkc_tensor *, int, const int *, int);
  static const struct { redfn fn; const char *name; } reds[] = {{tkc_sum, "sum"}, {tkc_max, "max"}, {tkc_min, "min"}, {tkc_mean, "mean"}};
  FOR_EACH_DEVICE(dev, ctx) {
    const int64_t s234[3] = {2, 3, 4};
    tkc_tensor *t = f32(ctx, 3, s234);
    for (int k = 0; k < 4; k++) {
      const char *n = reds[k].name;
      tkc_clear_error();
      TR_EXPECT_FAIL(reds[k].fn(NULL, 0, NULL, 0), TKC_EINVAL, "%s: %s(NULL)", dev, n);
      tkc_clear_error();
      TR_EXPECT_FAIL(reds[k].fn(t, 1, (const int[]){3}, 0), TKC_EINVAL, "%s: %s axis 3 of a 3-d", dev, n);
      tkc_clear_error();
      TR_EXPECT_FAIL(reds[k].fn(t, 1, (const int[]){-4}, 0), TKC_EINVAL, "%s: %s axis -4 of a 3-d", dev, n);
      tkc_clear_error();
      TR_EXPECT_FAIL(reds[k].fn(t, 2, (const int[]){1, 1}, 0), TKC_EINVAL, "%s: %s axes {1,1}", dev, n);
      tkc_clear_error();
      TR_EXPECT_FAIL(reds[k].fn(t, 2, (const int[]){2, -1}, 1), TKC_EINVAL, "%s: %s axes {2,-1}", dev, n);
      tkc_clear_error();
      TR_EXPECT_FAIL(reds[k].fn(t, -1, NULL, 0), TKC_EINVAL, "%s: %s naxes -1", dev, n);
      tkc_clear_error();
      TR_EXPECT_FAIL(reds[k].fn(t, 2, NULL, 0), TKC_EINVAL, "%s: %s naxes 2 with NULL axes", dev, n);
      tkc_clear_error();
      TR_EXPECT_FAIL(reds[k].fn(t, 4, (const int[]){0, 1, 2, 0}, 0), TKC_EINVAL, "%s: %s 4 axes of a 3-d", dev, n);
      tkc_clear_error();
      TR_EXPECT_FAIL(reds[k].fn(tkc_scalar(ctx, TKC_FLOAT32, 1), 1, (const int[]){1}, 0), TKC_EINVAL, "%s: %s axis 1 of a 0-d", dev, n);
    }
    CTX_OK("reduction errors");
    /* reshape */
    FAIL_WITH(tkc_reshape(NULL, 1, (const int64_t[]){24}), TKC_EINVAL);
    FAIL_WITH(tkc_reshape(t, 2, (const int64_t[]){5, 5}), TKC_ESHAPE);
    FAIL_WITH(tkc_reshape(t, 2, (const int64_t[]){-1, -1}), TKC_ESHAPE);
    FAIL_WITH(tkc_reshape(t, 2, (const int64_t[]){-1, 5}), TKC_ESHAPE);
    FAIL_WITH(tkc_reshape(t, 2, (const int64_t[]){-2, -12}), TKC_ESHAPE);
    FAIL_WITH(tkc_reshape(t, 0, NULL), TKC_ESHAPE);
    FAIL_WITH(tkc_reshape(t, 2, NULL), TKC_EINVAL);
    FAIL_WITH2(tkc_reshape(t, -1, (const int64_t[]){24}), TKC_EINVAL, TKC_ESHAPE);
    CTX_OK("reshape errors");
    /* permute / transpose */
    FAIL_WITH(tkc_permute(NULL, (const int[]){0}), TKC_EINVAL);
    FAIL_WITH(tkc_permute(t, (const int[]){0, 1, 1}), TKC_EINVAL);
    FAIL_WITH(tkc_permute(t, (const int[]){0, 1, 3}), TKC_EINVAL);
    FAIL_WITH(tkc_permute(t, NULL), TKC_EINVAL);
    FAIL_WITH(tkc_transpose(NULL, 0, 1), TKC_EINVAL);
    FAIL_WITH(tkc_transpose(t, 0, 3), TKC_EINVAL);
    FAIL_WITH(tkc_transpose(t, -4, 0), TKC_EINVAL);
    CTX_OK("permute errors");
    /* expand */
    FAIL_WITH(tkc_expand(NULL, 1, (const int64_t[]){3}), TKC_EINVAL);
    FAIL_WITH(tkc_expand(t, 3, (const int64_t[]){2, 6, 4}), TKC_ESHAPE);
    FAIL_WITH(tkc_expand(t, 3, (const int64_t[]){4, 3, 4}), TKC_ESHAPE);
    FAIL_WITH(tkc_expand(t, 2, (const int64_t[]){3, 4}), TKC_ESHAPE);
    FAIL_WITH(tkc_expand(t, 3, NULL), TKC_EINVAL);
    FAIL_WITH2(tkc_expand(tkc_full(ctx, TKC_FLOAT32, 1, (const int64_t[]){1}, 1), 1, (const int64_t[]){-2}), TKC_ESHAPE, TKC_EINVAL);
    CTX_OK("expand errors");
    /* pad */
    FAIL_WITH(tkc_pad(NULL, (const int64_t[]){1, 1}, 0), TKC_EINVAL);
    FAIL_WITH(tkc_pad(t, (const int64_t[]){0, 0, -1, 0, 0, 0}, 0), TKC_EINVAL);
    FAIL_WITH(tkc_pad(t, (const int64_t[]){0, 0, 0, 0, 0, -5}, 0), TKC_EINVAL);
    FAIL_WITH(tkc_pad(t, NULL, 0), TKC_EINVAL);
    CTX_OK("pad errors");
    /* shrink */
    FAIL_WITH(tkc_shrink(NULL, (const int64_t[]){0, 1}), TKC_EINVAL);
    FAIL_WITH(tkc_shrink(t, (const int64_t[]){0, 2, 0, 4, 0, 4}), TKC_ESHAPE);  /* end > dim */
    FAIL_WITH(tkc_shrink(t, (const int64_t[]){1, 0, 0, 3, 0, 4}), TKC_ESHAPE);  /* start > end */
    FAIL_WITH(tkc_shrink(t, (const int64_t[]){-1, 1, 0, 3, 0, 4}), TKC_ESHAPE); /* start < 0 */
    FAIL_WITH(tkc_shrink(t, NULL), TKC_EINVAL);
    CTX_OK("shrink errors");
    /* flip */
    FAIL_WITH(tkc_flip(NULL, 1, (const int[]){0}), TKC_EINVAL);
    FAIL_WITH(tkc_flip(t, 1, (const int[]){3}), TKC_EINVAL);
    FAIL_WITH(tkc_flip(t, 1, (const int[]){-4}), TKC_EINVAL);
    FAIL_WITH(tkc_flip(t, 2, NULL), TKC_EINVAL);
    FAIL_WITH(tkc_flip(t, -1, (const int[]){0}), TKC_EINVAL);
    CTX_OK("flip errors");
    /* composites */
    tkc_tensor *m = f32(ctx, 2, (const int64_t[]){2, 3}), *n = f32(ctx, 2, (const int64_t[]){2, 3});
    FAIL_WITH(tkc_matmul(m, n), TKC_ESHAPE);
    FAIL_WITH(tkc_matmul(f32(ctx, 3, (const int64_t[]){2, 2, 3}), f32(ctx, 3, (const int64_t[]){3, 3, 2})), TKC_ESHAPE); /* batch 2 vs 3 */
    FAIL_WITH2(tkc_matmul(tkc_scalar(ctx, TKC_FLOAT32, 1), m), TKC_ESHAPE, TKC_EINVAL);
    FAIL_WITH(tkc_softmax(NULL, -1), TKC_EINVAL);
    FAIL_WITH(tkc_softmax(m, 2), TKC_EINVAL);
    FAIL_WITH(tkc_softmax(m, -3), TKC_EINVAL);
    FAIL_WITH(tkc_log_softmax(NULL, 0), TKC_EINVAL);
    FAIL_WITH(tkc_log_softmax(m, 5), TKC_EINVAL);
    CTX_OK("matmul/softmax errors");
    tkc_tensor *x = f32(ctx, 4, (const int64_t[]){1, 3, 5, 5}), *w = f32(ctx, 4, (const int64_t[]){2, 3, 3, 3});
    tkc_tensor *wbad = f32(ctx, 4, (const int64_t[]){2, 4, 3, 3}), *bias = f32(ctx, 1, (const int64_t[]){2});
    FAIL_WITH(tkc_conv2d(NULL, w, NULL, 1, 0), TKC_EINVAL);
    FAIL_WITH(tkc_conv2d(x, NULL, NULL, 1, 0), TKC_EINVAL);
    FAIL_WITH(tkc_conv2d(x, wbad, NULL, 1, 0), TKC_ESHAPE);                                   /* channels 3 vs 4 */
    FAIL_WITH(tkc_conv2d(x, w, f32(ctx, 1, (const int64_t[]){3}), 1, 0), TKC_ESHAPE);        /* bias (3,) for 2 outputs */
    FAIL_WITH(tkc_conv2d(f32(ctx, 3, (const int64_t[]){3, 5, 5}), w, NULL, 1, 0), TKC_ESHAPE); /* x not 4-D */
    FAIL_WITH(tkc_conv2d(x, f32(ctx, 3, (const int64_t[]){2, 3, 3}), NULL, 1, 0), TKC_ESHAPE); /* w not 4-D */
    FAIL_WITH(tkc_conv2d(x, w, bias, 0, 0), TKC_EINVAL);
    FAIL_WITH(tkc_conv2d(x, w, bias, -1, 0), TKC_EINVAL);
    FAIL_WITH(tkc_conv2d(x, w, bias, 1, -1), TKC_EINVAL);
    FAIL_WITH(tkc_conv2d_weight_layout(NULL), TKC_EINVAL);
    FAIL_WITH(tkc_conv2d_weight_layout(f32(ctx, 3, (const int64_t[]){16, 3, 3})), TKC_ESHAPE); /* not OIHW */
    FAIL_WITH(tkc_matmul_weight_layout(NULL), TKC_EINVAL);
    FAIL_WITH(tkc_matmul_weight_layout(f32(ctx, 1, (const int64_t[]){64})), TKC_ESHAPE);        /* not (K, N) */
    FAIL_WITH(tkc_matmul_weight_layout(f32(ctx, 3, (const int64_t[]){2, 8, 64})), TKC_ESHAPE); /* batched */
    CTX_OK("conv2d errors");
  }
  TR_END();
}

/* ---------------------------------------------------------------- running */

static void test_running_errors(void **state) {
  (void)state;
  tr_begin();
  FOR_EACH_DEVICE(dev, ctx) {
    const int64_t s3[1] = {3};
    tkc_tensor *t = tkc_add(tkc_full(ctx, TKC_FLOAT32, 1, s3, 1), tkc_scalar(ctx, TKC_FLOAT32, 1));
    float out[4];
    tkc_clear_error();
    TR_EXPECT(tkc_realize(NULL) == TKC_EINVAL, "%s: realize(NULL)", dev);
    tkc_clear_error();
    TR_EXPECT(tkc_copy_out(NULL, out, 12) == TKC_EINVAL, "%s: copy_out(NULL)", dev);
    tkc_clear_error();
    TR_EXPECT(tkc_copy_out(t, out, 16) == TKC_EINVAL, "%s: copy_out with 16 bytes for 12", dev);
    tkc_clear_error();
    TR_EXPECT(tkc_copy_out(t, out, 8) == TKC_EINVAL, "%s: copy_out with 8 bytes for 12", dev);
    tkc_clear_error();
    TR_EXPECT(tkc_copy_out(t, NULL, 12) == TKC_EINVAL, "%s: copy_out to NULL", dev);
    TR_EXPECT(tkc_copy_out(t, out, 12) == TKC_OK && out[0] == 2 && out[2] == 2, "%s: copy_out after the bad ones", dev);
    tkc_clear_error();
    TR_EXPECT(tkc_kernel_count(NULL) == -1, "%s: kernel_count(NULL)", dev);
    tkc_clear_error();
    TR_EXPECT(tkc_kernels_source(NULL, "C") == NULL && tkc_last_status() != TKC_OK, "%s: kernels_source(NULL)", dev);
    tkc_clear_error();
    TR_EXPECT(tkc_kernels_source(t, NULL) == NULL && tkc_last_status() != TKC_OK, "%s: kernels_source(t, NULL)", dev);
    tkc_clear_error();
    TR_EXPECT(tkc_kernels_source(t, "NOPE") == NULL && tkc_last_status() != TKC_OK, "%s: kernels_source(t, \"NOPE\")", dev);
    /* freed handles in the running functions */
    tkc_tensor *g = tkc_exp(tkc_full(ctx, TKC_FLOAT32, 1, s3, 1));
    tkc_tensor_free(g);
    tkc_clear_error();
    TR_EXPECT(tkc_realize(g) == TKC_EINVAL && strstr(tkc_last_error(), "freed"), "%s: realize(freed): \"%s\"", dev, tkc_last_error());
    g = tkc_exp(tkc_full(ctx, TKC_FLOAT32, 1, s3, 1));
    tkc_tensor_free(g);
    tkc_clear_error();
    TR_EXPECT(tkc_copy_out(g, out, 12) == TKC_EINVAL, "%s: copy_out(freed)", dev);
    g = tkc_exp(tkc_full(ctx, TKC_FLOAT32, 1, s3, 1));
    tkc_tensor_free(g);
    tkc_clear_error();
    TR_EXPECT(tkc_kernel_count(g) == -1, "%s: kernel_count(freed)", dev);
    g = tkc_exp(tkc_full(ctx, TKC_FLOAT32, 1, s3, 1));
    tkc_tensor_free(g);
    tkc_clear_error();
    TR_EXPECT(tkc_kernels_source(g, "C") == NULL, "%s: kernels_source(freed)", dev);
    g = tkc_full(ctx, TKC_FLOAT32, 1, s3, 1);
    tkc_tensor_free(g);
    tkc_clear_error();
    TR_EXPECT(tkc_reshape(g, 1, s3) == NULL && tkc_last_status() == TKC_EINVAL, "%s: reshape(freed)", dev);
    g = tkc_full(ctx, TKC_FLOAT32, 1, s3, 1);
    tkc_tensor_free(g);
    tkc_clear_error();
    TR_EXPECT(tkc_sum(g, 0, NULL, 0) == NULL && tkc_last_status() == TKC_EINVAL, "%s: sum(freed)", dev);
    CTX_OK("running errors");
  }
  TR_END();
}

/* NULL chains: one check at the end, and the first error is the one reported */
static void test_null_chains(void **state) {
  (void)state;
  tr_begin();
  FOR_EACH_DEVICE(dev, ctx) {
    const int64_t s23[2] = {2, 3};
    tkc_tensor *b = f32(ctx, 2, s23), *c = f32(ctx, 2, s23);
    tkc_clear_error();
    tkc_tensor *r = tkc_add(tkc_mul(NULL, b), c);
    TR_EXPECT(r == NULL && tkc_last_status() == TKC_EINVAL, "%s: add(mul(NULL, b), c): status %s", dev, tkc_status_str(tkc_last_status()));
    /* a shape error first: the whole chain keeps it, message and all */
    tkc_clear_error();
    tkc_tensor *x = tkc_reshape(b, 2, (const int64_t[]){4, 4});
    TR_EXPECT(x == NULL && tkc_last_status() == TKC_ESHAPE, "%s: bad reshape", dev);
    char first[200];
    snprintf(first, sizeof first, "%s", tkc_last_error());
    r = tkc_softmax(tkc_sum(tkc_exp(tkc_add(tkc_mul(x, b), c)), 1, (const int[]){0}, 0), -1);
    TR_EXPECT(r == NULL, "%s: chain from a failure returned a tensor", dev);
    TR_EXPECT(tkc_last_status() == TKC_ESHAPE && strcmp(tkc_last_error(), first) == 0, "%s: chain error \"%s\" (%s), want the first: \"%s\"",
              dev, tkc_last_error(), tkc_status_str(tkc_last_status()), first);
    /* every op of the API passes a failure on */
    r = tkc_conv2d(tkc_matmul(tkc_where(tkc_lt(x, b), tkc_cast(x, TKC_INT32), tkc_bitcast(x, TKC_INT32)), tkc_pad(x, (const int64_t[]){0, 0, 0, 0}, 0)),
                   tkc_shrink(tkc_flip(tkc_expand(tkc_permute(tkc_transpose(tkc_relu(tkc_sigmoid(x)), 0, 1), (const int[]){0, 1}), 2, s23), 1, (const int[]){0}),
                              (const int64_t[]){0, 1, 0, 1}),
                   tkc_log_softmax(tkc_mean(tkc_max(tkc_min(tkc_contiguous(x), 0, NULL, 0), 0, NULL, 0), 0, NULL, 0), 0), 1, 0);
    TR_EXPECT(r == NULL && tkc_last_status() == TKC_ESHAPE && strcmp(tkc_last_error(), first) == 0, "%s: long chain error \"%s\"", dev, tkc_last_error());
    TR_EXPECT(tkc_realize(NULL) != TKC_OK, "%s: realize of the chain's NULL", dev);
    /* a dtype error first */
    tkc_clear_error();
    x = tkc_idiv(b, c);
    TR_EXPECT(x == NULL && tkc_last_status() == TKC_EDTYPE, "%s: idiv of floats", dev);
    r = tkc_neg(tkc_add(x, b));
    TR_EXPECT(r == NULL && tkc_last_status() == TKC_EDTYPE, "%s: chain after a dtype error: %s", dev, tkc_status_str(tkc_last_status()));
    CTX_OK("NULL chains");
  }
  TR_END();
}

/* failures never print (unless TKC_DEBUG is set) */
static void test_errors_are_silent(void **state) {
  (void)state;
  tr_begin();
  if (getenv("TKC_DEBUG")) {
    printf("  skipped: TKC_DEBUG is set\n");
    TR_END();
    return;
  }
  tkc_ctx *ctx = tkc_ctx_new("INTERP");
  assert_non_null(ctx);
  char path[] = "/tmp/tkc-silent-XXXXXX";
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  fflush(stdout), fflush(stderr);
  int o1 = dup(1), o2 = dup(2);
  dup2(fd, 1), dup2(fd, 2);
  const int64_t s[2] = {2, 3};
  tkc_tensor *t = tkc_full(ctx, TKC_FLOAT32, 2, s, 1);
  (void)tkc_ctx_new("NOPE");
  (void)tkc_reshape(t, 1, (const int64_t[]){7});
  (void)tkc_add(t, tkc_full(ctx, TKC_FLOAT32, 1, (const int64_t[]){4}, 1));
  (void)tkc_idiv(t, t);
  (void)tkc_sum(t, 1, (const int[]){9}, 0);
  (void)tkc_pad(t, (const int64_t[]){-1, 0, 0, 0}, 0);
  (void)tkc_conv2d(t, t, NULL, 1, 0);
  float out[6];
  (void)tkc_copy_out(t, out, 5);
  tkc_tensor *g = tkc_full(ctx, TKC_FLOAT32, 2, s, 1);
  tkc_tensor_free(g);
  (void)tkc_exp(g);
  fflush(stdout), fflush(stderr);
  dup2(o1, 1), dup2(o2, 2);
  close(o1), close(o2);
  off_t size = lseek(fd, 0, SEEK_END);
  close(fd);
  unlink(path);
  TR_EXPECT(size == 0, "failing calls printed %lld bytes", (long long)size);
  tkc_ctx_free(ctx);
  TR_END();
}

/* ---------------------------------------------------------------- arguments near INT_MAX / INT64_MAX */

/* the value of a 1-element float32 tensor (NAN when it does not realize) */
static float one_value(tkc_tensor *t) {
  float v = NAN;
  if (!t || tkc_numel(t) != 1 || tkc_copy_out(t, &v, sizeof v) != TKC_OK) return NAN;
  return v;
}

/* stride, padding, dilation, kernel and output sizes at the ends of their types: a clear error
 * naming the argument or the right result, no signed overflow in the checks (make asan runs this
 * under -fsanitize=undefined) */
static void test_argument_overflow(void **state) {
  (void)state;
  tr_begin();
  const char *dev = "INTERP";
  tkc_ctx *ctx = tkc_ctx_new(dev);
  assert_non_null(ctx);
  /* x (1,1,4,4) = 0..15, a 3x3 kernel of ones */
  tkc_tensor *x = tkc_reshape(tkc_arange(ctx, TKC_FLOAT32, 0, 16, 1), 4, (const int64_t[]){1, 1, 4, 4}), *w = f32(ctx, 4, (const int64_t[]){1, 1, 3, 3});
  assert_non_null(x);
  const int big2[2] = {INT_MAX, INT_MAX}, big4[4] = {INT_MAX, INT_MAX, INT_MAX, INT_MAX}, two[2] = {2, 2};
  /* conv2d: padding past INT_MAX / 2 (2 * padding overflowed int) */
  FAIL_WITH(tkc_conv2d(x, w, NULL, 1, INT_MAX), TKC_ESHAPE);
  TR_EXPECT(strstr(tkc_last_error(), "padding 2147483647"), "conv2d padding INT_MAX: %s", tkc_last_error());
  FAIL_WITH(tkc_conv2d(x, w, NULL, 1, (1 << 30) + 1), TKC_ESHAPE);
  TR_EXPECT(strstr(tkc_last_error(), "padding 1073741825"), "conv2d padding 2^30 + 1: %s", tkc_last_error());
  /* stride INT_MAX: one window, the top-left one (of the input, then of the padded input) */
  TR_EXPECT(one_value(tkc_conv2d(x, w, NULL, INT_MAX, 0)) == 0 + 1 + 2 + 4 + 5 + 6 + 8 + 9 + 10, "conv2d stride INT_MAX");
  TR_EXPECT(one_value(tkc_conv2d(x, w, NULL, INT_MAX, 1)) == 0 + 1 + 4 + 5, "conv2d stride INT_MAX, padding 1");
  TR_EXPECT(one_value(tkc_conv2d_ex(x, w, NULL, big2, NULL, NULL, 1)) == 45, "conv2d_ex stride INT_MAX");
  TR_EXPECT(one_value(tkc_conv1d(tkc_reshape(x, 3, (const int64_t[]){1, 1, 16}), tkc_reshape(w, 3, (const int64_t[]){1, 1, 9}), NULL, INT_MAX, 0, 0, 1, 1)) == 36,
            "conv1d stride INT_MAX");
  /* conv2d_ex / conv1d: pads and dilations of INT_MAX make too large or empty windows */
  FAIL_WITH(tkc_conv2d_ex(x, w, NULL, NULL, big4, NULL, 1), TKC_ESHAPE);
  FAIL_WITH(tkc_conv2d_ex(x, w, NULL, big2, big4, big2, 1), TKC_ESHAPE);
  FAIL_WITH(tkc_conv2d_ex(x, w, NULL, NULL, NULL, big2, 1), TKC_ESHAPE);
  FAIL_WITH(tkc_conv2d_ex(x, w, NULL, NULL, NULL, NULL, INT_MAX), TKC_ESHAPE);
  FAIL_WITH(tkc_conv1d(tkc_reshape(x, 3, (const int64_t[]){1, 1, 16}), tkc_reshape(w, 3, (const int64_t[]){1, 1, 9}), NULL, 1, INT_MAX, INT_MAX, INT_MAX, 1),
            TKC_ESHAPE);
  /* a kernel of 2^33 rows (a lazy constant, never allocated) times a dilation of INT_MAX */
  tkc_tensor *tall = f32(ctx, 4, (const int64_t[]){1, 1, INT64_C(1) << 33, 1});
  FAIL_WITH(tkc_conv2d_ex(x, tall, NULL, NULL, NULL, big2, 1), TKC_ESHAPE);
  FAIL_WITH(tkc_conv_transpose2d(x, tall, NULL, NULL, NULL, NULL, big2, 1), TKC_ESHAPE);
  /* conv_transpose2d: strides and dilations that spread the input or kernel past 2^31 */
  FAIL_WITH(tkc_conv_transpose2d(x, w, NULL, big2, NULL, NULL, NULL, 1), TKC_ESHAPE);
  TR_EXPECT(strstr(tkc_last_error(), "stride 2147483647"), "conv_transpose2d stride INT_MAX: %s", tkc_last_error());
  FAIL_WITH(tkc_conv_transpose2d(x, w, NULL, big2, big2, NULL, big2, 1), TKC_ESHAPE);
  FAIL_WITH(tkc_conv_transpose2d(x, w, NULL, NULL, big2, NULL, NULL, 1), TKC_ESHAPE); /* empty output */
  /* pools: kernels, strides, dilations of INT_MAX; an axis near INT64_MAX with ceil_mode */
  FAIL_WITH(tkc_max_pool2d(x, big2, NULL, NULL, NULL, 0), TKC_ESHAPE);
  FAIL_WITH(tkc_max_pool2d(x, two, NULL, NULL, big2, 1), TKC_ESHAPE);
  TR_EXPECT(one_value(tkc_max_pool2d(x, two, big2, NULL, NULL, 1)) == 5, "max_pool2d stride INT_MAX");
  TR_EXPECT(one_value(tkc_avg_pool2d(x, two, big2, NULL, 1, 1)) == 2.5f, "avg_pool2d stride INT_MAX");
  tkc_tensor *huge = tkc_full(ctx, TKC_BOOL, 4, (const int64_t[]){1, 1, INT64_MAX - 10, 1}, 0);
  assert_non_null(huge);
  FAIL_WITH(tkc_max_pool2d(huge, (const int[]){3, 1}, (const int[]){INT_MAX, 1}, (const int[]){1, 0}, NULL, 1), TKC_ESHAPE);
  TR_EXPECT(strstr(tkc_last_error(), "spatial dims"), "max_pool2d on a 2^63 axis: %s", tkc_last_error());
  /* interpolate: output sizes past int32 (2 * out + 1 overflowed int64) */
  FAIL_WITH(tkc_interpolate(x, INT64_MAX, INT64_MAX, TKC_INTERP_NEAREST, 0), TKC_ESHAPE);
  TR_EXPECT(strstr(tkc_last_error(), "out_h 9223372036854775807"), "interpolate INT64_MAX: %s", tkc_last_error());
  FAIL_WITH(tkc_interpolate(x, 4, INT64_MAX, TKC_INTERP_BILINEAR, 1), TKC_ESHAPE);
  TR_EXPECT(strstr(tkc_last_error(), "out_w 9223372036854775807"), "interpolate out_w INT64_MAX: %s", tkc_last_error());
  FAIL_WITH(tkc_interpolate(x, INT32_MAX, 4, TKC_INTERP_NEAREST, 0), TKC_ESHAPE);
  tkc_tensor *widest = tkc_full(ctx, TKC_INT8, 4, (const int64_t[]){1, 1, INT64_MAX, 1}, 0); /* in + 1 overflowed */
  assert_non_null(widest);
  FAIL_WITH(tkc_interpolate(widest, 4, 4, TKC_INTERP_NEAREST, 0), TKC_ESHAPE);
  /* a variable-length spatial dim (its token is near -2^62) with the same arguments */
  int64_t L = tkc_dim_var(ctx, "L", 1, 8);
  tkc_tensor *xv = f32(ctx, 4, (const int64_t[]){1, 1, L, 4});
  assert_non_null(xv);
  FAIL_WITH(tkc_conv_transpose2d(xv, w, NULL, big2, NULL, NULL, big2, 1), TKC_ESHAPE);
  FAIL_WITH(tkc_conv2d_ex(xv, w, NULL, big2, big4, big2, 1), TKC_ESHAPE);
  FAIL_WITH(tkc_conv2d(xv, w, NULL, INT_MAX, INT_MAX), TKC_ESHAPE);
  FAIL_WITH(tkc_max_pool2d(xv, two, big2, NULL, big2, 1), TKC_ESHAPE);
  FAIL_WITH(tkc_interpolate(xv, INT32_MAX, INT32_MAX, TKC_INTERP_BILINEAR, 0), TKC_ESHAPE);
  CTX_OK("argument overflow");
  tkc_ctx_free(ctx);
  TR_END();
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_ctx_errors),          cmocka_unit_test(test_creation_errors),
      cmocka_unit_test(test_elementwise_errors),  cmocka_unit_test(test_reduce_movement_errors),
      cmocka_unit_test(test_running_errors),      cmocka_unit_test(test_null_chains),
      cmocka_unit_test(test_errors_are_silent),      cmocka_unit_test(test_argument_overflow),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
