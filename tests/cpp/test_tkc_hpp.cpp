// test_tkc_hpp.cpp — tests of the C++ wrapper include/tkc.hpp: ownership (RAII, copies, moves, tensors
// outliving their Context object), exceptions with the C API's status, operators and ops against
// plain loops, dtype checks of to_vector / item, training (gradients against closed forms, assign,
// realize_all, SGD / Adam / AdamW against host implementations of tkc.h's formulas, a train step
// captured by tkc::Jit), and a few ops on every host device (CPU, LLVM, INTERP; the ones that cannot
// run here are skipped with the reason).
//
// A plain program (no cmocka): CHECK counts failures and main returns nonzero when there was one.
// The full suite runs on INTERP (the reference device: no compiler needed) or, without it, on the
// default device; pass a device name as argv[1] to run the full suite there instead, or "all" for
// every available host device.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>
#include "tkc.hpp"

namespace {

int g_checks = 0, g_failures = 0;
std::string g_device;  // printed with each failure

#define CHECK(cond)                                                                                   \
  do {                                                                                                \
    g_checks++;                                                                                       \
    if (!(cond)) {                                                                                    \
      g_failures++;                                                                                   \
      std::fprintf(stderr, "%s:%d: [%s] CHECK failed: %s\n", __FILE__, __LINE__, g_device.c_str(), #cond); \
    }                                                                                                 \
  } while (0)

// expr must throw tkc::Error with status st (and a non-empty message)
#define CHECK_THROWS(expr, st)                                                                                   \
  do {                                                                                                           \
    g_checks++;                                                                                                  \
    try {                                                                                                        \
      (void)(expr);                                                                                              \
      g_failures++;                                                                                              \
      std::fprintf(stderr, "%s:%d: [%s] no exception from %s\n", __FILE__, __LINE__, g_device.c_str(), #expr);  \
    } catch (const tkc::Error &e_) {                                                                             \
      if (e_.status() != (st) || !*e_.what()) {                                                                  \
        g_failures++;                                                                                            \
        std::fprintf(stderr, "%s:%d: [%s] %s threw %s (\"%s\"), want %s\n", __FILE__, __LINE__, g_device.c_str(), \
                     #expr, e_.status_str(), e_.what(), tkc_status_str(st));                                     \
      }                                                                                                          \
    } catch (const std::exception &e_) {                                                                         \
      g_failures++;                                                                                              \
      std::fprintf(stderr, "%s:%d: [%s] %s threw a non-tkc exception: %s\n", __FILE__, __LINE__, g_device.c_str(), #expr, e_.what()); \
    }                                                                                                            \
  } while (0)

bool near(double got, double want, double tol = 1e-5) {
  if (std::isnan(want)) return std::isnan(got);
  return std::fabs(got - want) <= tol * (1 + std::fabs(want));
}

template <class T, class U>
bool all_near(const std::vector<T> &got, const std::vector<U> &want, double tol = 1e-5) {
  if (got.size() != want.size()) {
    std::fprintf(stderr, "  size %zu, want %zu\n", got.size(), want.size());
    return false;
  }
  for (size_t i = 0; i < got.size(); i++)
    if (!near(static_cast<double>(got[i]), static_cast<double>(want[i]), tol)) {
      std::fprintf(stderr, "  [%zu] = %.9g, want %.9g\n", i, static_cast<double>(got[i]), static_cast<double>(want[i]));
      return false;
    }
  return true;
}

template <class T>
bool same(const std::vector<T> &got, const std::vector<T> &want) {
  return got == want;
}

using Shape = std::vector<int64_t>;
using F = std::vector<float>;

// values that stay away from 0 so that divisions and logs are well-conditioned
F sample(size_t n, float offset = 0.0f) {
  F v(n);
  for (size_t i = 0; i < n; i++) v[i] = offset + 0.25f * static_cast<float>((i * 7) % 13) - 1.3f;
  return v;
}

// ---------------------------------------------------------------- ownership

void test_ownership(const char *device) {
  // copies share one handle; moves leave an empty tensor behind
  tkc::Context ctx(device);
  tkc::Tensor a = ctx.tensor(F{1, 2, 3}, {3});
  CHECK(a.defined() && a.use_count() == 1);
  {
    tkc::Tensor b = a;
    CHECK(b.get() == a.get() && a.use_count() == 2);
  }
  CHECK(a.use_count() == 1);
  tkc::Tensor c = std::move(a);
  CHECK(!a.defined() && a.get() == nullptr && a.use_count() == 0);  // NOLINT(bugprone-use-after-move): testing it
  CHECK(c.defined() && same(c.to_vector<float>(), F{1, 2, 3}));
  tkc::Tensor d;
  d = std::move(c);
  CHECK(!c.defined() && d.defined());  // NOLINT(bugprone-use-after-move)
  const tkc::Tensor &alias = d;
  d = alias;  // self-assignment keeps the handle
  CHECK(d.defined() && same(d.to_vector<float>(), F{1, 2, 3}));
  // compound assignment rebinds, other copies keep the old value
  tkc::Tensor e = d;
  e += 1;
  CHECK(same(e.to_vector<float>(), F{2, 3, 4}) && same(d.to_vector<float>(), F{1, 2, 3}));
  static_assert(!std::is_copy_constructible<tkc::Context>::value, "Context is move-only");
  static_assert(std::is_nothrow_move_constructible<tkc::Context>::value && std::is_nothrow_move_constructible<tkc::Tensor>::value, "");
  static_assert(!std::is_convertible<tkc::Tensor, bool>::value, "no bool conversion (== gives a Tensor)");

  // tensors outlive their Context object: moving it or destroying it keeps the ctx alive
  tkc::Tensor kept;
  {
    tkc::Context inner(device);
    tkc::Tensor x = inner.tensor(F{1, 2, 3, 4}, {2, 2});
    tkc::Context moved = std::move(inner);
    CHECK(!inner.defined() && inner.get() == nullptr);  // NOLINT(bugprone-use-after-move)
    CHECK_THROWS(inner.tensor(F{1}, {1}), TKC_EINVAL);
    CHECK_THROWS(inner.device(), TKC_EINVAL);
    CHECK(moved.get() == x.ctx());
    tkc::Tensor y = x * 2;  // made through the tensor after the Context moved
    kept = y.sum({1});
  }  // both Context objects are gone here
  CHECK(same(kept.to_vector<float>(), F{6, 14}));
  CHECK(same((kept + 1).to_vector<float>(), F{7, 15}));  // the scalar comes from the kept ctx
  kept = tkc::Tensor();                                  // last reference: the ctx is freed here

  // many temporaries: each expression's intermediates are freed (ASan / LSan would report leaks)
  tkc::Tensor w = ctx.tensor(F{0.5f, -1, 2, 1}, {2, 2});
  tkc::Tensor x = ctx.tensor(F{1, 2, 3, 4}, {2, 2}).realize();
  for (int i = 0; i < 20; i++) {
    F got = (x.matmul(w).relu() * 0.5f + i).to_vector<float>();
    CHECK(got.size() == 4 && near(got[0], 2.25 + i) && near(got[1], 0.5 + i));  // [[4.5, 1], ..] * 0.5
  }
  // raw interop: adopt a handle from a C call
  tkc::Tensor raw = ctx.adopt(tkc_neg(x.get()));
  CHECK(same(raw.to_vector<float>(), F{-1, -2, -3, -4}));
  CHECK_THROWS(ctx.adopt(nullptr), TKC_EINVAL);                       // no pending C error: EINVAL
  CHECK_THROWS(ctx.adopt(tkc_reshape(x.get(), 1, Shape{5}.data())), TKC_ESHAPE);  // the C call's error
}

// ---------------------------------------------------------------- errors

void test_errors(const char *device) {
  tkc::Context ctx(device);
  tkc::Tensor a = ctx.tensor(sample(6), {2, 3});
  CHECK_THROWS(tkc::Context("NO_SUCH_DEVICE"), TKC_EDEVICE);
  CHECK_THROWS(a.reshape({4, 2}), TKC_ESHAPE);
  CHECK_THROWS(a.reshape({-1, 4}), TKC_ESHAPE);
  CHECK_THROWS(a.matmul(a), TKC_ESHAPE);
  CHECK_THROWS(a + ctx.tensor(sample(4), {4}), TKC_ESHAPE);
  CHECK_THROWS(a.sum({2}), TKC_EINVAL);
  CHECK_THROWS(a.sum({0, 0}), TKC_EINVAL);
  CHECK_THROWS(a.dim(5), TKC_EINVAL);
  CHECK_THROWS(a.softmax(3), TKC_EINVAL);
  CHECK_THROWS(a.permute({0}), TKC_EINVAL);     // checked by the wrapper: wrong length
  CHECK_THROWS(a.permute({0, 0}), TKC_EINVAL);  // checked by C: not a permutation
  CHECK_THROWS(a.pad({1, 1}), TKC_EINVAL);
  CHECK_THROWS(a.shrink({0, 1, 0, 9}), TKC_ESHAPE);  // C: outside the axis
  CHECK_THROWS(a.cast(TKC_VOID), TKC_EDTYPE);
  CHECK_THROWS(a.bitcast(TKC_INT8), TKC_EDTYPE);
  CHECK_THROWS(a.clamp(std::nan(""), 1), TKC_EINVAL);
  CHECK_THROWS(a.item(), TKC_ESHAPE);
  CHECK_THROWS(a.item<float>(), TKC_ESHAPE);
  CHECK_THROWS(ctx.tensor(F{1, 2, 3}, {2, 2}), TKC_ESHAPE);  // checked by the wrapper
  CHECK_THROWS(ctx.tensor(F{1, 2, 3}, {-1, 3}), TKC_ESHAPE);
  CHECK_THROWS(ctx.tensor(TKC_VOID, {2}), TKC_EDTYPE);
  CHECK_THROWS(ctx.full({2}, 1.0, TKC_NDTYPES), TKC_EDTYPE);
  CHECK_THROWS(ctx.arange(0, 1, 0), TKC_EINVAL);
  CHECK_THROWS(ctx.set_beam(100), TKC_EINVAL);
  CHECK_THROWS(tkc::cat({}), TKC_EINVAL);
  CHECK_THROWS(tkc::cat({a, ctx.tensor(sample(4), {2, 2})}, 0), TKC_ESHAPE);
  CHECK_THROWS(tkc::cat({a, ctx.tensor(std::vector<int32_t>{1, 2, 3}, {1, 3})}, 0), TKC_EDTYPE);
  CHECK_THROWS(a.conv2d_ex(a, {}, {1}), TKC_EINVAL);
  CHECK_THROWS(a.split({1, 1}, 1), TKC_EINVAL);
  CHECK_THROWS(a.kernels_source("NOPE"), TKC_EINVAL);
  // dtype checks of data access
  CHECK_THROWS(a.to_vector<int32_t>(), TKC_EDTYPE);
  CHECK_THROWS(a.to_vector<double>(), TKC_EDTYPE);
  CHECK_THROWS(a.sum().item<double>(), TKC_EDTYPE);
  CHECK_THROWS((a < 0).to_vector<float>(), TKC_EDTYPE);
  CHECK_THROWS(a.copy_in(std::vector<int32_t>(6)), TKC_EDTYPE);
  CHECK_THROWS(a.copy_in(F(5)), TKC_ESHAPE);
  CHECK_THROWS(a.exp().copy_in(F(6)), TKC_EINVAL);  // a lazy tensor
  // empty tensors (default-constructed or moved-from)
  tkc::Tensor empty;
  CHECK_THROWS(empty.numel(), TKC_EINVAL);
  CHECK_THROWS(empty.exp(), TKC_EINVAL);
  CHECK_THROWS(a + empty, TKC_EINVAL);
  CHECK_THROWS(empty * 2, TKC_EINVAL);
  CHECK_THROWS(2 * empty, TKC_EINVAL);
  CHECK_THROWS(tkc::cat({a, empty}), TKC_EINVAL);
  CHECK_THROWS(a.where(empty, a), TKC_EINVAL);
  // tensors of two ctxs do not mix
  tkc::Context other(device);
  CHECK_THROWS(a + other.tensor(sample(6), {2, 3}), TKC_EINVAL);
  // the error message is tkc_last_error()'s, and the thread's error is cleared afterwards
  try {
    (void)a.reshape({5});
    CHECK(false);
  } catch (const tkc::Error &e) {
    CHECK(std::string(e.what()).find("reshape") != std::string::npos);
    CHECK(std::string(e.status_str()) == tkc_status_str(TKC_ESHAPE));
    CHECK(tkc_last_status() == TKC_OK);
  }
  // the ctx works after the errors
  CHECK(all_near(a.sum({1}).to_vector<float>(), F{sample(6)[0] + sample(6)[1] + sample(6)[2], sample(6)[3] + sample(6)[4] + sample(6)[5]}));
}

// ---------------------------------------------------------------- operators vs loops

template <class Fn>
F map2(const F &a, const F &b, Fn f) {
  F r(a.size());
  for (size_t i = 0; i < a.size(); i++) r[i] = f(a[i], b[i]);
  return r;
}

void test_operators(const char *device) {
  tkc::Context ctx(device);
  const F av = sample(6), bv = sample(6, 3.0f);
  tkc::Tensor a = ctx.tensor(av, {2, 3}), b = ctx.tensor(bv, {2, 3});
  CHECK(all_near((a + b).to_vector<float>(), map2(av, bv, [](float x, float y) { return x + y; })));
  CHECK(all_near((a - b).to_vector<float>(), map2(av, bv, [](float x, float y) { return x - y; })));
  CHECK(all_near((a * b).to_vector<float>(), map2(av, bv, [](float x, float y) { return x * y; })));
  CHECK(all_near((a / b).to_vector<float>(), map2(av, bv, [](float x, float y) { return x / y; })));
  CHECK(all_near((-a).to_vector<float>(), map2(av, bv, [](float x, float) { return -x; })));
  CHECK(all_near((a + 2).to_vector<float>(), map2(av, bv, [](float x, float) { return x + 2; })));
  CHECK(all_near((2 + a).to_vector<float>(), map2(av, bv, [](float x, float) { return 2 + x; })));
  CHECK(all_near((a - 0.5).to_vector<float>(), map2(av, bv, [](float x, float) { return x - 0.5f; })));
  CHECK(all_near((0.5 - a).to_vector<float>(), map2(av, bv, [](float x, float) { return 0.5f - x; })));
  CHECK(all_near((a * 3.0f).to_vector<float>(), map2(av, bv, [](float x, float) { return x * 3; })));
  CHECK(all_near((3.0f * a).to_vector<float>(), map2(av, bv, [](float x, float) { return 3 * x; })));
  CHECK(all_near((b / 4).to_vector<float>(), map2(av, bv, [](float, float y) { return y / 4; })));
  CHECK(all_near((4 / b).to_vector<float>(), map2(av, bv, [](float, float y) { return 4 / y; })));
  CHECK(all_near(((a + 1) * (b - 1) / 2 - a).to_vector<float>(),
                 map2(av, bv, [](float x, float y) { return (x + 1) * (y - 1) / 2 - x; })));
  tkc::Tensor c = a;
  c *= 2;
  c -= b;
  c /= 4;
  c += a;
  CHECK(all_near(c.to_vector<float>(), map2(av, bv, [](float x, float y) { return (x * 2 - y) / 4 + x; })));
  // broadcasting: (2,3) + (3)
  tkc::Tensor row = ctx.tensor(F{10, 20, 30}, {3});
  F want(6);
  for (size_t i = 0; i < 6; i++) want[i] = av[i] + 10.0f * static_cast<float>(i % 3 + 1);
  CHECK(all_near((a + row).to_vector<float>(), want));
  CHECK((a + row).shape() == Shape({2, 3}));

  // comparisons give bool tensors
  auto bools = [&](const tkc::Tensor &t, bool (*f)(float, float)) {
    CHECK(t.dtype() == TKC_BOOL);
    std::vector<bool> got = t.to_vector<bool>(), w(av.size());
    for (size_t i = 0; i < av.size(); i++) w[i] = f(av[i], bv[i] - 3.0f);
    return got == w;
  };
  tkc::Tensor b3 = b - 3.0f;
  CHECK(bools(a < b3, [](float x, float y) { return x < y; }));
  CHECK(bools(a <= b3, [](float x, float y) { return x <= y; }));
  CHECK(bools(a > b3, [](float x, float y) { return x > y; }));
  CHECK(bools(a >= b3, [](float x, float y) { return x >= y; }));
  CHECK(bools(a == b3, [](float x, float y) { return x == y; }));
  CHECK(bools(a != b3, [](float x, float y) { return x != y; }));
  {
    std::vector<bool> got = (a < 0).to_vector<bool>(), got2 = (0 < a).to_vector<bool>(), got3 = (a == av[1]).to_vector<bool>();
    bool ok = got.size() == 6;
    for (size_t i = 0; ok && i < 6; i++) ok = got[i] == (av[i] < 0) && got2[i] == (0 < av[i]) && got3[i] == (av[i] == av[1]);
    CHECK(ok);
  }
  // int tensors: % & | ^ and the scalar dtype rule
  const std::vector<int32_t> iv = {7, -7, 12, 5, 0, 9};
  tkc::Tensor ia = ctx.tensor(iv, {6});
  CHECK(ia.dtype() == TKC_INT32);
  CHECK(same((ia % 4).to_vector<int32_t>(), std::vector<int32_t>{7 % 4, -7 % 4, 12 % 4, 5 % 4, 0 % 4, 9 % 4}));
  CHECK(same((ia & 6).to_vector<int32_t>(), std::vector<int32_t>{7 & 6, -7 & 6, 12 & 6, 5 & 6, 0 & 6, 9 & 6}));
  CHECK(same((ia | 1).to_vector<int32_t>(), std::vector<int32_t>{7 | 1, -7 | 1, 12 | 1, 5 | 1, 0 | 1, 9 | 1}));
  CHECK(same((3 ^ ia).to_vector<int32_t>(), std::vector<int32_t>{3 ^ 7, 3 ^ -7, 3 ^ 12, 3 ^ 5, 3 ^ 0, 3 ^ 9}));
  CHECK(same((ia * 2 + 1).to_vector<int32_t>(), std::vector<int32_t>{15, -13, 25, 11, 1, 19}));
  CHECK(same(ia.shl(1).to_vector<int32_t>(), std::vector<int32_t>{14, -14, 24, 10, 0, 18}));
  tkc::Tensor half = ia * 0.5;  // a float scalar makes an int tensor float32
  CHECK(half.dtype() == TKC_FLOAT32 && all_near(half.to_vector<float>(), F{3.5f, -3.5f, 6, 2.5f, 0, 4.5f}));
  CHECK((ia / 2).dtype() == TKC_FLOAT32);  // true division
  CHECK(same(ia.idiv(2).to_vector<int32_t>(), std::vector<int32_t>{3, -3, 6, 2, 0, 4}));
  tkc::Tensor flags = ctx.tensor(std::vector<bool>{true, false, true}, {3});
  CHECK(flags.dtype() == TKC_BOOL);
  CHECK(same((-flags).to_vector<bool>(), std::vector<bool>{false, true, false}));  // logical not
  CHECK(same((flags & false).to_vector<bool>(), std::vector<bool>{false, false, false}));
  CHECK((flags + 1).dtype() == TKC_INT32 && same((flags + 1).to_vector<int32_t>(), std::vector<int32_t>{2, 1, 2}));
  // double tensors keep double scalars exact
  tkc::Tensor dd = ctx.tensor(std::vector<double>{1.0 / 3, 2.0 / 3}, {2});
  CHECK(dd.dtype() == TKC_FLOAT64 && same((dd * 3.0).to_vector<double>(), std::vector<double>{1.0 / 3 * 3.0, 2.0 / 3 * 3.0}));
  CHECK(dd.cast<float>().dtype() == TKC_FLOAT32 && ia.cast(TKC_INT64).dtype() == TKC_INT64);
}

// ---------------------------------------------------------------- ops vs loops

void test_ops(const char *device) {
  tkc::Context ctx(device);
  const F av = sample(24);
  tkc::Tensor a = ctx.tensor(av, {2, 3, 4});
  auto at = [&](size_t i, size_t j, size_t k) { return av[i * 12 + j * 4 + k]; };
  CHECK(a.ndim() == 3 && a.numel() == 24 && a.dim(-1) == 4 && a.shape() == Shape({2, 3, 4}) && a.dtype() == TKC_FLOAT32);
  CHECK(a.device() == ctx.device());

  // reductions with axes and keepdim
  {
    F s1(8), m1(8), mn(6), mean02(3);
    for (size_t i = 0; i < 2; i++)
      for (size_t k = 0; k < 4; k++) {
        float s = 0, m = -INFINITY;
        for (size_t j = 0; j < 3; j++) s += at(i, j, k), m = std::fmax(m, at(i, j, k));
        s1[i * 4 + k] = s, m1[i * 4 + k] = m;
      }
    for (size_t i = 0; i < 2; i++)
      for (size_t j = 0; j < 3; j++) {
        float m = INFINITY;
        for (size_t k = 0; k < 4; k++) m = std::fmin(m, at(i, j, k));
        mn[i * 3 + j] = m;
      }
    for (size_t j = 0; j < 3; j++) {
      double s = 0;
      for (size_t i = 0; i < 2; i++)
        for (size_t k = 0; k < 4; k++) s += at(i, j, k);
      mean02[j] = static_cast<float>(s / 8);
    }
    double total = 0;
    for (float v : av) total += v;
    CHECK(all_near(a.sum({1}).to_vector<float>(), s1) && a.sum({1}).shape() == Shape({2, 4}));
    CHECK(a.sum({1}, true).shape() == Shape({2, 1, 4}) && all_near(a.sum({-2}, true).to_vector<float>(), s1));
    CHECK(all_near(a.max({1}).to_vector<float>(), m1));
    CHECK(all_near(a.min({-1}).to_vector<float>(), mn));
    CHECK(all_near(a.mean({0, 2}).to_vector<float>(), mean02) && a.mean({0, 2}, true).shape() == Shape({1, 3, 1}));
    CHECK(near(a.sum().item<float>(), total) && a.sum().ndim() == 0 && near(a.sum().item(), total));
    CHECK(near(a.mean().item<float>(), total / 24));
    double var = 0;
    for (float v : av) var += (v - total / 24) * (v - total / 24);
    CHECK(near(a.var().item<float>(), var / 23, 1e-4) && near(a.std({}, false, 0).item<float>(), std::sqrt(var / 24), 1e-4));
    CHECK(same(a.gt(0).any().to_vector<bool>(), std::vector<bool>{true}) && same((a > 100).any().to_vector<bool>(), std::vector<bool>{false}));
  }

  // movement
  {
    tkc::Tensor p = a.permute({2, 0, 1});  // (4, 2, 3)
    F want(24);
    for (size_t k = 0; k < 4; k++)
      for (size_t i = 0; i < 2; i++)
        for (size_t j = 0; j < 3; j++) want[k * 6 + i * 3 + j] = at(i, j, k);
    CHECK(p.shape() == Shape({4, 2, 3}) && all_near(p.to_vector<float>(), want));
    CHECK(all_near(a.reshape({6, -1}).to_vector<float>(), av) && a.reshape({6, -1}).shape() == Shape({6, 4}));
    CHECK(all_near(a.flatten().to_vector<float>(), av) && a.flatten().ndim() == 1);
    tkc::Tensor t = a.transpose();  // last two axes: (2, 4, 3)
    CHECK(t.shape() == Shape({2, 4, 3}) && near(t.to_vector<float>()[1 * 12 + 3 * 3 + 2], at(1, 2, 3)));
    tkc::Tensor col = ctx.tensor(F{1, 2}, {2, 1});
    CHECK(same(col.expand({2, 3}).to_vector<float>(), F{1, 1, 1, 2, 2, 2}) && same(col.expand({-1, 2}).to_vector<float>(), F{1, 1, 2, 2}));
    tkc::Tensor m = ctx.tensor(F{1, 2, 3, 4}, {2, 2});
    CHECK(same(m.pad({1, 0, 0, 1}, -1).to_vector<float>(), F{-1, -1, -1, 1, 2, -1, 3, 4, -1}));
    CHECK(same(m.shrink({1, 2, 0, 2}).to_vector<float>(), F{3, 4}));
    CHECK(same(m.flip({0}).to_vector<float>(), F{3, 4, 1, 2}) && same(m.flip({0, 1}).to_vector<float>(), F{4, 3, 2, 1}));
    CHECK(m.unsqueeze(0).shape() == Shape({1, 2, 2}) && m.unsqueeze(0).squeeze().shape() == Shape({2, 2}));
    CHECK(same(m.repeat({1, 2}).to_vector<float>(), F{1, 2, 1, 2, 3, 4, 3, 4}));
    CHECK(same(m.tril().to_vector<float>(), F{1, 0, 3, 4}) && same(m.triu(1).to_vector<float>(), F{0, 2, 0, 0}));
    CHECK(same(m.contiguous().to_vector<float>(), F{1, 2, 3, 4}));
    std::vector<tkc::Tensor> parts = a.split({1, 2}, 1);
    CHECK(parts.size() == 2 && parts[0].shape() == Shape({2, 1, 4}) && parts[1].shape() == Shape({2, 2, 4}));
    CHECK(all_near(tkc::cat(parts, 1).to_vector<float>(), av));
    std::vector<tkc::Tensor> ch = ctx.arange(0, 5).chunk(4);
    CHECK(ch.size() == 3 && same(ch[2].to_vector<float>(), F{4}));
    tkc::Tensor st = tkc::stack({m, m * 10}, 0);
    CHECK(st.shape() == Shape({2, 2, 2}) && same(st.to_vector<float>(), F{1, 2, 3, 4, 10, 20, 30, 40}));
    CHECK(same(tkc::cat({m, m + 4}, 1).to_vector<float>(), F{1, 2, 5, 6, 3, 4, 7, 8}));
  }

  // elementwise math
  {
    const F pos = sample(6, 2.0f);  // all > 0
    tkc::Tensor x = ctx.tensor(pos, {6});
    F e(6), l(6), s(6), r(6), sg(6), th(6), cl(6);
    for (size_t i = 0; i < 6; i++) {
      e[i] = std::exp(pos[i]), l[i] = std::log(pos[i]), s[i] = std::sqrt(pos[i]), r[i] = std::fmax(pos[i] - 1.5f, 0.0f);
      sg[i] = 1 / (1 + std::exp(-pos[i])), th[i] = std::tanh(pos[i]), cl[i] = std::fmin(std::fmax(pos[i], 1.0f), 2.0f);
    }
    CHECK(all_near(x.exp().to_vector<float>(), e, 1e-5));
    CHECK(all_near(x.log().to_vector<float>(), l, 1e-5));
    CHECK(all_near(x.sqrt().to_vector<float>(), s, 1e-5));
    CHECK(all_near((x - 1.5f).relu().to_vector<float>(), r));
    CHECK(all_near(x.sigmoid().to_vector<float>(), sg, 1e-5));
    CHECK(all_near(x.tanh().to_vector<float>(), th, 1e-5));
    CHECK(all_near(x.clamp(1, 2).to_vector<float>(), cl));
    CHECK(all_near(x.pow(2).to_vector<float>(), map2(pos, pos, [](float u, float v) { return u * v; }), 1e-5));
    CHECK(all_near(tkc::maximum(x, x * -1 + 3).to_vector<float>(), map2(pos, pos, [](float u, float) { return std::fmax(u, 3 - u); })));
    CHECK(all_near(x.minimum(2).to_vector<float>(), map2(pos, pos, [](float u, float) { return std::fmin(u, 2.0f); })));
    CHECK(all_near(x.round().to_vector<float>(), map2(pos, pos, [](float u, float) { return std::nearbyint(u); })));
    CHECK(same(ctx.tensor(F{1, NAN, INFINITY}).isnan().to_vector<bool>(), std::vector<bool>{false, true, false}));
  }

  // where, softmax, matmul
  {
    tkc::Tensor m = ctx.tensor(F{1, -2, 3, -4}, {2, 2});
    CHECK(same(tkc::where(m > 0, m, 0).to_vector<float>(), F{1, 0, 3, 0}));
    CHECK(same((m < 0).where(m * 10, m).to_vector<float>(), F{1, -20, 3, -40}));
    CHECK(same(tkc::where(m > 0, 1, m).to_vector<float>(), F{1, -2, 1, -4}));
    F sm(4);
    for (size_t i = 0; i < 2; i++) {
      float x0 = i ? 3.0f : 1.0f, x1 = i ? -4.0f : -2.0f, mx = std::fmax(x0, x1);
      float z = std::exp(x0 - mx) + std::exp(x1 - mx);
      sm[i * 2] = std::exp(x0 - mx) / z, sm[i * 2 + 1] = std::exp(x1 - mx) / z;
    }
    CHECK(all_near(m.softmax().to_vector<float>(), sm));
    CHECK(all_near(m.log_softmax(-1).exp().to_vector<float>(), sm));
    tkc::Tensor w = ctx.tensor(F{1, 2, 3, 4, 5, 6}, {2, 3});
    CHECK(same(tkc::matmul(m, w).to_vector<float>(), F{1 - 8, 2 - 10, 3 - 12, 3 - 16, 6 - 20, 9 - 24}));
    CHECK(same(m.matmul(ctx.tensor(F{1, 1}, {2})).to_vector<float>(), F{-1, -1}));
  }

  // indexing and sorting
  {
    tkc::Tensor m = ctx.tensor(F{10, 11, 12, 20, 21, 22}, {2, 3});
    tkc::Tensor idx = ctx.tensor(std::vector<int32_t>{2, 0, 1, 1}, {2, 2});
    CHECK(same(m.gather(1, idx).to_vector<float>(), F{12, 10, 21, 21}));
    CHECK(same(m.index_select(1, ctx.tensor(std::vector<int64_t>{2, 0})).to_vector<float>(), F{12, 10, 22, 20}));
    CHECK(same(ctx.tensor(std::vector<int32_t>{1, 0}).one_hot(3).to_vector<int32_t>(), std::vector<int32_t>{0, 1, 0, 1, 0, 0}));
    tkc::Tensor v = ctx.tensor(F{3, 1, 4, 1, 5, 9, 2, 6});
    CHECK(same(v.argmax().to_vector<int32_t>(), std::vector<int32_t>{5}) && v.argmin(0).item<int32_t>() == 1);
    auto sorted = v.sort();
    CHECK(same(sorted.first.to_vector<float>(), F{1, 1, 2, 3, 4, 5, 6, 9}));
    CHECK(same(sorted.second.to_vector<int32_t>(), std::vector<int32_t>{1, 3, 6, 0, 2, 4, 7, 5}));
    auto top = v.topk(3);
    CHECK(same(top.first.to_vector<float>(), F{9, 6, 5}) && same(top.second.to_vector<int32_t>(), std::vector<int32_t>{5, 7, 4}));
    CHECK(same(v.cumsum().to_vector<float>(), F{3, 4, 8, 9, 14, 23, 25, 31}));
    CHECK(same(v.cummax().to_vector<float>(), F{3, 3, 4, 4, 5, 9, 9, 9}));
    CHECK_THROWS(m.gather(1, ctx.tensor(std::vector<int32_t>{3, 0, 0, 0}, {2, 2})), TKC_EINVAL);  // a realized index is checked
  }

  // NN ops
  {
    // conv2d: x (1,1,3,3), w (2,1,2,2), bias (2), stride 1, no padding
    const F xv = {1, 2, 3, 4, 5, 6, 7, 8, 9}, wv = {1, 0, 0, 1, 0.5f, 0.5f, -1, 1}, bv = {0.25f, -1};
    tkc::Tensor x = ctx.tensor(xv, {1, 1, 3, 3}), w = ctx.tensor(wv, {2, 1, 2, 2}), bias = ctx.tensor(bv, {2});
    F want(8);
    for (size_t o = 0; o < 2; o++)
      for (size_t i = 0; i < 2; i++)
        for (size_t j = 0; j < 2; j++) {
          float s = bv[o];
          for (size_t p = 0; p < 2; p++)
            for (size_t q = 0; q < 2; q++) s += xv[(i + p) * 3 + j + q] * wv[o * 4 + p * 2 + q];
          want[o * 4 + i * 2 + j] = s;
        }
    tkc::Tensor y = x.conv2d(w, bias);
    CHECK(y.shape() == Shape({1, 2, 2, 2}) && all_near(y.to_vector<float>(), want));
    CHECK(all_near(x.conv2d_ex(w, bias, {1, 1}, {}, {}, 1).to_vector<float>(), want));
    CHECK(x.conv2d(w, {}, 1, 1).shape() == Shape({1, 2, 4, 4}));
    CHECK(same(x.max_pool2d({2, 2}, {1, 1}).to_vector<float>(), F{5, 6, 8, 9}));
    CHECK(all_near(x.avg_pool2d({2, 2}, {1, 1}).to_vector<float>(), F{3, 4, 6, 7}));

    // layer_norm over the last axis, with weight and bias
    const F lv = {1, 2, 4, -1, 0, 7};
    tkc::Tensor l = ctx.tensor(lv, {2, 3});
    tkc::Tensor g = ctx.tensor(F{1, 2, 0.5f}), be = ctx.tensor(F{0, 1, -1});
    F ln(6);
    for (size_t i = 0; i < 2; i++) {
      double mu = (lv[i * 3] + lv[i * 3 + 1] + lv[i * 3 + 2]) / 3.0, var = 0;
      for (size_t j = 0; j < 3; j++) var += (lv[i * 3 + j] - mu) * (lv[i * 3 + j] - mu) / 3;
      for (size_t j = 0; j < 3; j++)
        ln[i * 3 + j] = static_cast<float>((lv[i * 3 + j] - mu) / std::sqrt(var + 1e-5) * std::vector<double>{1, 2, 0.5}[j] +
                                           std::vector<double>{0, 1, -1}[j]);
    }
    CHECK(all_near(l.layer_norm(1, g, be).to_vector<float>(), ln, 1e-4));
    CHECK(l.layer_norm().shape() == Shape({2, 3}));

    // attention: q (2,2), k (3,2), v (3,2)
    const F qv = {1, 0, 0.5f, -1}, kv = {1, 1, -1, 0.5f, 0, 2}, vv = {1, 2, 3, 4, 5, 6};
    tkc::Tensor q = ctx.tensor(qv, {2, 2}), k = ctx.tensor(kv, {3, 2}), vt = ctx.tensor(vv, {3, 2});
    F at2(4);
    for (size_t i = 0; i < 2; i++) {
      double sc[3], mx = -INFINITY, z = 0;
      for (size_t j = 0; j < 3; j++) {
        sc[j] = (qv[i * 2] * kv[j * 2] + qv[i * 2 + 1] * kv[j * 2 + 1]) / std::sqrt(2.0);
        mx = std::fmax(mx, sc[j]);
      }
      for (size_t j = 0; j < 3; j++) z += std::exp(sc[j] - mx);
      for (size_t e = 0; e < 2; e++) {
        double s = 0;
        for (size_t j = 0; j < 3; j++) s += std::exp(sc[j] - mx) / z * vv[j * 2 + e];
        at2[i * 2 + e] = static_cast<float>(s);
      }
    }
    CHECK(all_near(q.attention(k, vt).to_vector<float>(), at2, 1e-5));
    CHECK(all_near(tkc::scaled_dot_product_attention(q, k, vt).to_vector<float>(), at2, 1e-5));
    // causal: row 0 attends to key 0 only
    F causal = tkc::scaled_dot_product_attention(q, k, vt, {}, true).to_vector<float>();
    CHECK(causal.size() == 4 && near(causal[0], 1) && near(causal[1], 2));

    // cross entropy of logits (2,3) with targets {2, 0}
    const F cv = {1, 2, 3, 0.5f, -1, 0};
    tkc::Tensor logits = ctx.tensor(cv, {2, 3}), target = ctx.tensor(std::vector<int32_t>{2, 0});
    double ce = 0;
    for (size_t i = 0; i < 2; i++) {
      double mx = std::fmax(std::fmax(cv[i * 3], cv[i * 3 + 1]), cv[i * 3 + 2]), z = 0;
      for (size_t j = 0; j < 3; j++) z += std::exp(cv[i * 3 + j] - mx);
      ce += -(cv[i * 3 + (i ? 0 : 2)] - mx - std::log(z));
    }
    CHECK(near(logits.cross_entropy(target).item<float>(), ce / 2, 1e-5));
    CHECK(near(logits.cross_entropy(target, TKC_REDUCTION_SUM).item(), ce, 1e-5));
    CHECK(logits.cross_entropy(target, TKC_REDUCTION_NONE).shape() == Shape({2}));
    CHECK(near(logits.log_softmax(1).nll_loss(target).item<float>(), ce / 2, 1e-5));
    CHECK_THROWS(logits.cross_entropy(ctx.tensor(std::vector<int32_t>{3, 0})), TKC_EINVAL);
  }

  // creation helpers and data paths
  {
    CHECK(same(ctx.arange(0, 4).to_vector<float>(), F{0, 1, 2, 3}));
    CHECK(same(ctx.arange(0, 6, 2, TKC_INT32).to_vector<int32_t>(), std::vector<int32_t>{0, 2, 4}));
    CHECK(same(ctx.full({2}, 7, TKC_INT64).to_vector<int64_t>(), std::vector<int64_t>{7, 7}));
    CHECK(same(ctx.zeros({3}).to_vector<float>(), F{0, 0, 0}) && same(ctx.ones({1, 2}).to_vector<float>(), F{1, 1}));
    CHECK(ctx.scalar(2.5).item<float>() == 2.5f && ctx.scalar(3, TKC_INT32).item<int32_t>() == 3);
    CHECK(ctx.scalar(1, TKC_BOOL).item<bool>());
    F r = ctx.rand({16}, 42).to_vector<float>(), r2 = ctx.rand({16}, 42).to_vector<float>();
    bool in01 = r.size() == 16;
    for (float u : r) in01 = in01 && u >= 0 && u < 1;
    CHECK(in01 && r == r2);
    CHECK(same(ctx.tensor({1, 2, 3}).to_vector<int>(), std::vector<int>{1, 2, 3}));  // an int initializer list: int32
    CHECK(ctx.tensor({1.5, 2.5}, {2, 1}).dtype() == TKC_FLOAT64);
    const uint8_t raw[3] = {1, 2, 255};
    CHECK(same(ctx.tensor(raw, {3}).to_vector<uint8_t>(), std::vector<uint8_t>{1, 2, 255}));
    tkc::Tensor h = ctx.tensor(F{1.5f, -2}).cast(TKC_FLOAT16);  // float16: raw bytes, or cast back
    uint16_t bits[2] = {0, 0};
    h.copy_out(bits, sizeof bits);
    CHECK(bits[0] == 0x3e00 && bits[1] == 0xc000 && same(h.cast<float>().to_vector<float>(), F{1.5f, -2}));
    CHECK(ctx.tensor(F{}, {0, 3}).to_vector<float>().empty());
    // copy_in: new data for a realized input, seen by a graph built before
    tkc::Tensor in = ctx.tensor(F{1, 2}, {2});
    tkc::Tensor out = in * 2;
    CHECK(same(out.to_vector<float>(), F{2, 4}));
    in.copy_in(F{5, 6});
    CHECK(same((in * 2).to_vector<float>(), F{10, 12}));
    CHECK(same(in.to_vector<float>(), F{5, 6}));
    // realize / kernel counts / sources / stats
    tkc::Tensor lazy = (in + 1).exp();
    CHECK(lazy.kernel_count() >= 1);
    CHECK(!lazy.kernels_source("C").empty());
    lazy.realize();
    CHECK(lazy.kernel_count() == 0);
    CHECK(ctx.stats().kernels >= 1);
    int calls = 0;
    ctx.set_progress([&calls](const tkc_progress &) { calls++; });
    (void)(in * 3 + 0.125f).sum().item<float>();
    ctx.set_progress(nullptr);
    CHECK(calls >= 0);  // cache hits are not reported: only that it does not break realizes
  }
}

// ---------------------------------------------------------------- a few ops per device

void test_device_smoke(const char *device) {
  tkc::Context ctx(device);
  CHECK(ctx.device() == device);
  const F av = {0.5f, -1, 2, 1.5f, 0.25f, -0.75f}, bv = {1, 2, -1, 0.5f, 0, -0.5f};
  tkc::Tensor a = ctx.tensor(av, {2, 3}), b = ctx.tensor(bv, {3, 2});
  F mm(4);
  for (size_t i = 0; i < 2; i++)
    for (size_t j = 0; j < 2; j++) {
      float s = 0;
      for (size_t k = 0; k < 3; k++) s += av[i * 3 + k] * bv[k * 2 + j];
      mm[i * 2 + j] = s;
    }
  CHECK(all_near(a.matmul(b).to_vector<float>(), mm));
  CHECK(all_near((2 * a - 1).relu().sum({1}).to_vector<float>(), F{0 + 0 + 3, 2 + 0 + 0}));
  CHECK(same((a > 0).to_vector<bool>(), std::vector<bool>{true, false, true, true, true, false}));
  CHECK(all_near(a.exp().log().to_vector<float>(), av, 1e-5));
  CHECK_THROWS(a.reshape({4}), TKC_ESHAPE);
  CHECK(near(a.softmax().sum().item<float>(), 2, 1e-5));
}

// variables and capture/replay: one compiled set of kernels for every length, checked against C
void test_vars_and_jit(const char *device) {
  tkc::Context ctx(device);
  const int64_t n = ctx.dim_var("n", 1, 8);
  CHECK(tkc::dim_is_var(n) && !tkc::dim_is_var(8));
  F xv(8 * 3), wv(3 * 2);
  for (size_t i = 0; i < xv.size(); i++) xv[i] = static_cast<float>(i % 5) - 2;
  for (size_t i = 0; i < wv.size(); i++) wv[i] = static_cast<float>(i) / 4 - 0.5f;
  tkc::Tensor x = ctx.tensor(xv, {8, 3}), w = ctx.tensor(wv, {3, 2});
  // rows [0, n) of x times w, relu, and the row after them padded with 1s: (n + 1, 2)
  tkc::Jit step(ctx, [&](const std::vector<tkc::Tensor> &in) {
    tkc::Tensor h = in[0].shrink({0, n, 0, 3}).matmul(w).relu();
    return std::vector<tkc::Tensor>{h.pad({0, 1, 0, 0}, 1.0)};
  });
  CHECK_THROWS(ctx.full({n}, 1).numel(), TKC_EINVAL);  // n unbound
  int64_t built = -1;
  for (int len : {3, 8, 1, 5}) {
    ctx.bind(n, len);
    CHECK(ctx.dim_value(n) == len && ctx.dim_value(n + 1) == len + 1);
    std::vector<tkc::Tensor> out = step({x});
    CHECK(out.size() == 1 && out[0].dim(0) == n + 1 && out[0].numel() == 2 * (len + 1));
    F want(static_cast<size_t>(2 * (len + 1)), 1.0f);
    for (int r = 0; r < len; r++)
      for (int c = 0; c < 2; c++) {
        float s = 0;
        for (int k = 0; k < 3; k++) s += xv[static_cast<size_t>(r * 3 + k)] * wv[static_cast<size_t>(k * 2 + c)];
        want[static_cast<size_t>(r * 2 + c)] = s > 0 ? s : 0;
      }
    CHECK(all_near(out[0].to_vector<float>(), want));
    if (built < 0) built = ctx.stats().kernels_built;
    CHECK(ctx.stats().kernels_built == built);  // replays build nothing
  }
  CHECK(step.kernels() >= 1);
  CHECK_THROWS(step({x.reshape({4, 6})}), TKC_EINVAL);  // another shape than at the capture
  CHECK_THROWS(ctx.bind(n, 9), TKC_EINVAL);
  CHECK_THROWS(ctx.dim_var("n", 0, 1), TKC_EINVAL);
  // an exception from fn comes out of the call; the jit captures again next time
  bool fail = true;
  tkc::Jit flaky(ctx, [&](const std::vector<tkc::Tensor> &in) {
    if (fail) throw std::runtime_error("not yet");
    return std::vector<tkc::Tensor>{in[0] * 2};
  });
  bool thrown = false;
  try {
    flaky({x});
  } catch (const std::runtime_error &e) {
    thrown = std::string(e.what()) == "not yet";
  }
  CHECK(thrown);
  fail = false;
  CHECK(all_near(flaky({x})[0].to_vector<float>(), (x * 2).to_vector<float>()));
  tkc::Jit wrong(ctx, [&](const std::vector<tkc::Tensor> &in) { return std::vector<tkc::Tensor>{in[0], in[0]}; });
  CHECK_THROWS(wrong({x}), TKC_EINVAL);  // two results, nout is 1
}

// gradients: closed forms, accumulation, zero_grad, detach, the functional gradient, assign, realize_all
void test_gradients(const char *device) {
  tkc::Context ctx(device);
  const F xv{1, -2, 3}, wv{0.5f, 1, -1, 2, 0.25f, -0.5f};  // x (3,), w (3, 2)
  tkc::Tensor x = ctx.tensor(xv), w = ctx.tensor(wv, {3, 2});
  CHECK(!w.requires_grad() && !w.has_grad() && !w.grad().defined());
  CHECK(&w.requires_grad(true) == &w && w.requires_grad());
  CHECK(!w.grad().defined());  // no backward yet: empty, and no exception
  // loss = sum(tanh(x @ w)): d/dw[k][j] = x[k] (1 - tanh(h[j])^2)
  tkc::Tensor loss = x.reshape({1, 3}).matmul(w).tanh().sum();
  loss.backward();
  CHECK(w.has_grad());
  F want(6);
  double h[2] = {0, 0};
  for (int k = 0; k < 3; k++)
    for (int j = 0; j < 2; j++) h[j] += xv[static_cast<size_t>(k)] * wv[static_cast<size_t>(k * 2 + j)];
  for (int k = 0; k < 3; k++)
    for (int j = 0; j < 2; j++)
      want[static_cast<size_t>(k * 2 + j)] = static_cast<float>(xv[static_cast<size_t>(k)] * (1 - std::tanh(h[j]) * std::tanh(h[j])));
  CHECK(all_near(w.grad().to_vector<float>(), want, 1e-4));
  CHECK(!x.grad().defined());  // x does not require a gradient
  loss.backward();  // accumulates
  F twice(want);
  for (float &v : twice) v *= 2;
  CHECK(all_near(w.grad().to_vector<float>(), twice, 1e-4));
  CHECK(&w.zero_grad() == &w && w.has_grad() && all_near(w.grad().to_vector<float>(), F(want.size(), 0.0f)));  // zeros
  // detach: (d * w).sum() with d = w detached has the gradient d = w, not 2 w
  (w.detach() * w).sum().backward();
  CHECK(all_near(w.grad().to_vector<float>(), wv));
  w.zero_grad();
  CHECK_THROWS((w * 2).backward(), TKC_ESHAPE);                    // not one element
  CHECK_THROWS(w.detach().sum().backward(), TKC_EINVAL);           // depends on no requires-grad leaf
  CHECK_THROWS(ctx.tensor(std::vector<int32_t>{1, 2}).requires_grad(true), TKC_EDTYPE);
  // the functional gradient: d/dx sum(x^2 w0) = 2 x w0, zeros for an unrelated z; nothing accumulated
  tkc::Tensor xr = ctx.tensor(xv).requires_grad(true), z = ctx.tensor(F{7}).requires_grad(true);
  std::vector<tkc::Tensor> g = tkc::gradient((xr * xr * 3).sum(), {xr, z});
  CHECK(g.size() == 2 && all_near(g[0].to_vector<float>(), F{6, -12, 18}) && all_near(g[1].to_vector<float>(), F{0}));
  CHECK(!xr.has_grad() && tkc::gradient(loss, {}).empty());
  CHECK_THROWS(tkc::gradient(loss, {tkc::Tensor()}), TKC_EINVAL);
  // assign: in place, reading the old values, seen by every copy; scalars fill
  tkc::Tensor p = ctx.tensor(F{1, 2, 3}), alias = p;
  CHECK(&p.assign(p * 2 + 1) == &p);
  CHECK(all_near(alias.to_vector<float>(), F{3, 5, 7}));
  p.assign(0.5);
  CHECK(all_near(p.to_vector<float>(), F{0.5f, 0.5f, 0.5f}));
  CHECK_THROWS(p.assign(ctx.tensor(F{1, 2})), TKC_ESHAPE);
  // realize_all: one schedule for several tensors, a list or arguments
  tkc::Tensor a = p + 1, b = p * 4;
  tkc::realize_all(a, b);
  CHECK(a.kernel_count() == 0 && b.kernel_count() == 0);
  CHECK(all_near(b.to_vector<float>(), F{2, 2, 2}));
  p.assign(a + b);
  tkc::realize_all({p});
  CHECK(all_near(p.to_vector<float>(), F{3.5f, 3.5f, 3.5f}));
  tkc::realize_all(std::vector<tkc::Tensor>{});
  CHECK_THROWS(tkc::realize_all({p, tkc::Tensor()}), TKC_EINVAL);
}

// minimizes sum((p - t)^3 / 3 + p^2) with opt for `steps` steps (learning rates lrs[k]); returns the
// gradient of each step as computed on the host from the parameters the step saw
std::vector<std::vector<double>> run_steps(tkc::Context &ctx, tkc::Tensor &p, tkc::Optimizer &opt, const std::vector<double> &lrs) {
  const F tv{1, 0, -1, 0.5f};
  std::vector<std::vector<double>> grads;
  for (double lr : lrs) {
    opt.set_lr(lr);
    F cur = p.to_vector<float>();
    std::vector<double> g(cur.size());
    for (size_t i = 0; i < cur.size(); i++) g[i] = (cur[i] - tv[i]) * (cur[i] - tv[i]) + 2.0 * cur[i];
    grads.push_back(g);
    tkc::Tensor d = p - ctx.tensor(tv);
    (d * d * d / 3 + p * p).sum().backward();
    opt.step();
    opt.zero_grad();
    CHECK(p.has_grad() && all_near(p.grad().to_vector<float>(), std::vector<float>(cur.size(), 0.0f)));  // zeros
  }
  return grads;
}

// SGD / Adam / AdamW against the formulas of tkc.h run on the host over the same gradients
void test_optimizers(const char *device) {
  tkc::Context ctx(device);
  const std::vector<double> p0{0.5, -1.5, 2, 1};
  const F p0f(p0.begin(), p0.end());
  const std::vector<double> lrs{0.05, 0.05, 0.02, 0.04};
  struct SgdCase { double momentum, wd; bool nesterov; };
  for (SgdCase c : {SgdCase{0, 0, false}, SgdCase{0.9, 0, false}, SgdCase{0.9, 0.1, true}, SgdCase{0, 0.05, false}}) {
    tkc::Tensor p = ctx.tensor(p0f).requires_grad(true);
    tkc::SGD opt({p}, 0.05, c.momentum, c.wd, c.nesterov);
    std::vector<std::vector<double>> grads = run_steps(ctx, p, opt, lrs);
    std::vector<double> want = p0, buf(p0.size(), 0.0);
    for (size_t s = 0; s < grads.size(); s++)
      for (size_t i = 0; i < want.size(); i++) {
        double g = grads[s][i] + c.wd * want[i];
        if (c.momentum) {
          buf[i] = c.momentum * buf[i] + g;
          g = c.nesterov ? g + c.momentum * buf[i] : buf[i];
        }
        want[i] -= lrs[s] * g;
      }
    CHECK(all_near(p.to_vector<float>(), want, 1e-5));
    CHECK(opt.lr() == lrs.back());
  }
  for (int decoupled = 0; decoupled < 2; decoupled++)
    for (double wd : {0.0, 0.1}) {
      const double b1 = 0.8, b2 = 0.99, eps = 1e-6;
      tkc::Tensor p = ctx.tensor(p0f).requires_grad(true);
      std::vector<std::vector<double>> grads;
      if (decoupled) {
        tkc::AdamW opt({p}, 0.1, b1, b2, eps, wd);
        grads = run_steps(ctx, p, opt, lrs);
      } else {
        tkc::Adam opt({p}, 0.1, b1, b2, eps, wd);
        grads = run_steps(ctx, p, opt, lrs);
      }
      std::vector<double> want = p0, m(p0.size(), 0.0), v(p0.size(), 0.0);
      for (size_t s = 0; s < grads.size(); s++)
        for (size_t i = 0; i < want.size(); i++) {
          double g = grads[s][i] + (decoupled ? 0 : wd * want[i]);
          m[i] = b1 * m[i] + (1 - b1) * g, v[i] = b2 * v[i] + (1 - b2) * g * g;
          const double t = static_cast<double>(s + 1);
          const double update = m[i] / (1 - std::pow(b1, t)) / (std::sqrt(v[i] / (1 - std::pow(b2, t))) + eps);
          want[i] -= lrs[s] * (update + (decoupled ? wd * want[i] : 0));
        }
      CHECK(all_near(p.to_vector<float>(), want, 1e-5));
    }
  // ownership and errors
  tkc::Tensor q = ctx.tensor(F{1, 2}).requires_grad(true), frozen = ctx.tensor(F{1});
  tkc::SGD a({q}, 0.5);
  tkc::SGD b = std::move(a);  // move-only
  CHECK(!a.defined() && b.defined() && b.lr() == 0.5);
  CHECK_THROWS(a.step(), TKC_EINVAL);
  (q * q).sum().backward();
  b.step();
  CHECK(all_near(q.to_vector<float>(), F{0, 0}));
  CHECK_THROWS(b.set_lr(-1), TKC_EINVAL);
  CHECK(b.lr() == 0.5);
  CHECK_THROWS(tkc::SGD({frozen}, 0.1), TKC_EINVAL);  // does not require a gradient
  CHECK_THROWS(tkc::SGD({}, 0.1), TKC_EINVAL);
  CHECK_THROWS(tkc::Adam({q}, 0.1, 1.5), TKC_EINVAL);  // beta1 outside [0, 1)
  tkc::Context other(device);
  CHECK_THROWS(tkc::SGD({q, other.tensor(F{1}).requires_grad(true)}, 0.1), TKC_EINVAL);
  CHECK(tkc::Optimizer(tkc::AdamW({q})).defined());  // AdamW's default weight decay 0.01 is accepted
  // the optimizer keeps its ctx alive: the Context object and the parameter's Tensor may go first
  std::unique_ptr<tkc::SGD> late;
  {
    tkc::Context c2(device);
    tkc::Tensor r = c2.tensor(F{4}).requires_grad(true);
    late = std::make_unique<tkc::SGD>(std::vector<tkc::Tensor>{r}, 0.25);
    (r * r).sum().backward();
  }
  late->step();  // the parameter lives on in the optimizer's own handle
  late->zero_grad();
  late.reset();
}

// a train step (forward, loss, backward, SGD with momentum) captured by tkc::Jit and replayed on new
// batches, against the same step on the host; set_lr between replays is seen by them
void test_jit_train_step(const char *device) {
  tkc::Context ctx(device);
  tkc::Tensor w = ctx.tensor(F{0, 0, 0}, {3, 1}).requires_grad(true), b = ctx.tensor(F{0}).requires_grad(true);
  tkc::SGD opt({w, b}, 0.1, 0.5);
  tkc::Jit step(ctx, [&](const std::vector<tkc::Tensor> &in) {
    tkc::Tensor err = in[0].matmul(w) + b - in[1];
    tkc::Tensor loss = (err * err).mean().realize();  // the loss before the update
    loss.backward();
    opt.step();
    opt.zero_grad();
    return std::vector<tkc::Tensor>{loss};
  });
  std::vector<double> wh(3, 0.0), mw(3, 0.0);
  double bh = 0, mb = 0;
  for (int k = 0; k < 6; k++) {
    const double lr = k < 4 ? 0.1 : 0.02;
    if (k == 4) opt.set_lr(lr);
    F xv(8 * 3), yv(8);
    for (size_t i = 0; i < xv.size(); i++) xv[i] = static_cast<float>(std::sin(1.3 * static_cast<double>(i + 24 * static_cast<size_t>(k))));
    for (size_t r = 0; r < 8; r++) yv[r] = xv[r * 3] - 2 * xv[r * 3 + 1] + 0.5f * xv[r * 3 + 2] + 0.3f;
    // the host step
    double loss = 0, gb = 0;
    std::vector<double> gw(3, 0.0);
    for (size_t r = 0; r < 8; r++) {
      double e = bh - yv[r];
      for (size_t c = 0; c < 3; c++) e += xv[r * 3 + c] * wh[c];
      loss += e * e / 8, gb += 2 * e / 8;
      for (size_t c = 0; c < 3; c++) gw[c] += 2 * e * xv[r * 3 + c] / 8;
    }
    for (size_t c = 0; c < 3; c++) mw[c] = 0.5 * mw[c] + gw[c], wh[c] -= lr * mw[c];
    mb = 0.5 * mb + gb, bh -= lr * mb;
    std::vector<tkc::Tensor> out = step({ctx.tensor(xv, {8, 3}), ctx.tensor(yv, {8, 1})});
    CHECK(out.size() == 1 && near(out[0].item<float>(), loss, 1e-4));
    CHECK(all_near(w.to_vector<float>(), wh, 1e-4));
    CHECK(near(b.item<float>(), bh, 1e-4));
    CHECK(w.has_grad() && all_near(w.grad().to_vector<float>(), std::vector<float>(3, 0.0f)));  // zeroed by the replayed zero_grad
  }
  CHECK(step.kernels() > 0);
}

void run_full(const std::string &device) {
  g_device = device;
  std::printf("full suite on %s\n", device.c_str());
  test_ownership(device.c_str());
  test_errors(device.c_str());
  test_operators(device.c_str());
  test_ops(device.c_str());
  test_vars_and_jit(device.c_str());
  test_gradients(device.c_str());
  test_optimizers(device.c_str());
  test_jit_train_step(device.c_str());
}

}  // namespace

// argv[1]: a device for the full suite (default INTERP, else the default device), or "all" for every
// available host device
int main(int argc, char **argv) {
  static const char *const host_devices[] = {"CPU", "LLVM", "INTERP"};
  const std::string arg = argc > 1 ? argv[1] : "";
  try {
    if (arg == "all") {
      for (const char *d : host_devices)
        if (tkc::Context::available(d)) run_full(d);
    } else if (!arg.empty()) {
      run_full(arg);
    } else {
      run_full(tkc_device_available("INTERP") ? "INTERP" : tkc_ctx_device(tkc::Context().get()));  // the name is static
    }
    for (const char *d : host_devices) {
      g_device = d;
      if (!tkc::Context::available(d)) {
        std::string why;
        try {
          tkc::Context c(d);
        } catch (const tkc::Error &e) {
          why = e.what();
        }
        std::printf("skip %s: not available here (%s)\n", d, why.empty() ? "tkc_device_available is 0" : why.c_str());
        continue;
      }
      int before = g_failures;
      test_device_smoke(d);
      std::printf("%-7s smoke ops: %s\n", d, g_failures == before ? "ok" : "FAILED");
    }
  } catch (const tkc::Error &e) {
    std::fprintf(stderr, "[%s] unexpected tkc::Error %s: %s\n", g_device.c_str(), e.status_str(), e.what());
    g_failures++;
  } catch (const std::exception &e) {
    std::fprintf(stderr, "[%s] unexpected exception: %s\n", g_device.c_str(), e.what());
    g_failures++;
  }
  std::printf("%d checks, %d failed\n", g_checks, g_failures);
  return g_failures ? 1 : 0;
}
