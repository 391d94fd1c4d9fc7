// quickstart.cpp — the tensor API from C++: matmul + softmax of small tensors on every device that can
// run here, checked against plain loops. tkc.h is a C header with extern "C"; the handles are wrapped
// in std::unique_ptr so they are released on every path. Exits 1 on a mismatch or an error.
// The build compiles it with -pedantic -Werror, which also checks that every public header is C++-clean.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <vector>
#include "tkc.h"
#include "tkc/runtime.h" /* not needed here: included so the build checks it compiles as C++ too */

namespace {

struct CtxDeleter {
  void operator()(tkc_ctx *c) const { tkc_ctx_free(c); }
};
using Ctx = std::unique_ptr<tkc_ctx, CtxDeleter>;

struct SourceDeleter {
  void operator()(char *s) const { tkc_free(s); }
};

// Tensors belong to their ctx (tkc_ctx_free releases them), so plain pointers are fine here.
tkc_tensor *make(tkc_ctx *ctx, const std::vector<float> &data, int64_t rows, int64_t cols) {
  const int64_t shape[2] = {rows, cols};
  return tkc_tensor_new(ctx, TKC_FLOAT32, 2, shape, data.data());
}

std::vector<float> reference(const std::vector<float> &a, const std::vector<float> &b, int m, int k, int n) {
  std::vector<float> y(static_cast<size_t>(m * n));
  for (int i = 0; i < m; i++) {
    double row[16], mx = -INFINITY, sum = 0;
    for (int j = 0; j < n; j++) {
      row[j] = 0;
      for (int q = 0; q < k; q++) row[j] += static_cast<double>(a[static_cast<size_t>(i * k + q)]) * b[static_cast<size_t>(q * n + j)];
      mx = std::fmax(mx, row[j]);
    }
    for (int j = 0; j < n; j++) sum += std::exp(row[j] - mx);
    for (int j = 0; j < n; j++) y[static_cast<size_t>(i * n + j)] = static_cast<float>(std::exp(row[j] - mx) / sum);
  }
  return y;
}

bool run_on(const char *device) {
  Ctx ctx(tkc_ctx_new(device));
  if (!ctx) {
    std::fprintf(stderr, "%s: %s\n", device, tkc_last_error());
    return false;
  }
  const int m = 2, k = 3, n = 4;
  const std::vector<float> a = {0.5f, -1.0f, 2.0f, 1.5f, 0.25f, -0.75f};
  const std::vector<float> b = {1.0f, 2.0f, -1.0f, 0.5f, 0.0f, -0.5f, 1.0f, 2.0f, 3.0f, 1.0f, 0.25f, -2.0f};
  tkc_tensor *y = tkc_softmax(tkc_matmul(make(ctx.get(), a, m, k), make(ctx.get(), b, k, n)), -1);  // one check for the chain
  if (!y) {
    std::fprintf(stderr, "%s: building softmax(a @ b): %s\n", device, tkc_last_error());
    return false;
  }
  int kernels = tkc_kernel_count(y);
  if (std::getenv("TKC_DEBUG")) {
    std::unique_ptr<char, SourceDeleter> src(tkc_kernels_source(y, "C"));
    if (src) std::printf("%s\n", src.get());
  }
  std::vector<float> got(static_cast<size_t>(m * n));
  if (tkc_copy_out(y, got.data(), got.size() * sizeof(float)) != TKC_OK) {
    std::fprintf(stderr, "%s: %s\n", device, tkc_last_error());
    return false;
  }
  const std::vector<float> want = reference(a, b, m, k, n);
  bool ok = true;
  for (size_t i = 0; i < got.size(); i++) ok = ok && std::fabs(got[i] - want[i]) <= 1e-5f * (1 + std::fabs(want[i]));
  std::printf("%-7s softmax(a @ b) in %d kernel(s): %s\n", device, kernels, ok ? "ok" : "MISMATCH");
  for (int i = 0; i < m; i++) {
    std::printf("       ");
    for (int j = 0; j < n; j++) std::printf("  %.6f (want %.6f)", got[static_cast<size_t>(i * n + j)], want[static_cast<size_t>(i * n + j)]);
    std::printf("\n");
  }
  // bad input is an error, not a crash: a 2x3 @ 2x3 matmul fails with TKC_ESHAPE and the ctx still works
  tkc_tensor *bad = tkc_matmul(make(ctx.get(), a, m, k), make(ctx.get(), a, m, k));
  if (bad || tkc_last_status() != TKC_ESHAPE) {
    std::fprintf(stderr, "%s: a 2x3 @ 2x3 matmul gave %s, want TKC_ESHAPE\n", device, bad ? "a tensor" : tkc_status_str(tkc_last_status()));
    ok = false;
  }
  return ok;
}

}  // namespace

int main() {
  static const char *const devices[] = {"CPU", "LLVM", "CUDA", "WEBGPU", "INTERP"};
  int ran = 0, failed = 0;
  for (const char *d : devices) {
    if (!tkc_device_available(d)) continue;
    ran++;
    if (!run_on(d)) failed++;
  }
  std::printf("tkc %s: %d device(s), %d failed\n", tkc_version(), ran, failed);
  return ran && !failed ? 0 : 1;
}
