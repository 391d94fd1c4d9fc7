// quickstart.cpp — the tensor API from C++ through tkc.hpp: matmul + softmax of small tensors on every
// device that can run here, checked against plain loops. tkc::Context and tkc::Tensor free their C
// handles themselves and failures are tkc::Error exceptions. Exits 1 on a mismatch or an error.
// The build compiles it with -pedantic -Werror, which also checks that every public header is C++-clean.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include "tkc.hpp"
#include "tkc/runtime.h" /* not needed here: included so the build checks it compiles as C++ too */

namespace {

std::vector<float> reference(const std::vector<float> &a, const std::vector<float> &b, int m, int k, int n) {
  std::vector<float> y(static_cast<size_t>(m * n));
  for (int i = 0; i < m; i++) {
    std::vector<double> row(static_cast<size_t>(n), 0.0);
    double mx = -INFINITY, sum = 0;
    for (int j = 0; j < n; j++) {
      for (int q = 0; q < k; q++) row[static_cast<size_t>(j)] += static_cast<double>(a[static_cast<size_t>(i * k + q)]) * b[static_cast<size_t>(q * n + j)];
      mx = std::fmax(mx, row[static_cast<size_t>(j)]);
    }
    for (int j = 0; j < n; j++) sum += std::exp(row[static_cast<size_t>(j)] - mx);
    for (int j = 0; j < n; j++) y[static_cast<size_t>(i * n + j)] = static_cast<float>(std::exp(row[static_cast<size_t>(j)] - mx) / sum);
  }
  return y;
}

bool close(float got, float want) { return std::fabs(got - want) <= 1e-5f * (1 + std::fabs(want)); }

bool run_on(const char *device) {
  tkc::Context ctx(device);  // throws tkc::Error when the device cannot run here
  const int m = 2, k = 3, n = 4;
  const std::vector<float> a = {0.5f, -1.0f, 2.0f, 1.5f, 0.25f, -0.75f};
  const std::vector<float> b = {1.0f, 2.0f, -1.0f, 0.5f, 0.0f, -0.5f, 1.0f, 2.0f, 3.0f, 1.0f, 0.25f, -2.0f};
  tkc::Tensor ta = ctx.tensor(a, {m, k}), tb = ctx.tensor(b, {k, n});
  tkc::Tensor y = ta.matmul(tb).softmax(-1);  // lazy: nothing has run yet
  int kernels = y.kernel_count();
  if (std::getenv("TKC_DEBUG")) std::printf("%s\n", y.kernels_source("C").c_str());
  const std::vector<float> got = y.to_vector<float>();  // schedules, compiles, runs
  const std::vector<float> want = reference(a, b, m, k, n);
  bool ok = got.size() == want.size() && y.shape() == std::vector<int64_t>{m, n};
  for (size_t i = 0; ok && i < got.size(); i++) ok = close(got[i], want[i]);
  std::printf("%-7s softmax(a @ b) in %d kernel(s): %s\n", device, kernels, ok ? "ok" : "MISMATCH");
  for (int i = 0; i < m && static_cast<size_t>(i * n + n) <= got.size(); i++) {
    std::printf("       ");
    for (int j = 0; j < n; j++) std::printf("  %.6f (want %.6f)", got[static_cast<size_t>(i * n + j)], want[static_cast<size_t>(i * n + j)]);
    std::printf("\n");
  }

  // operators with scalars on both sides: 2 * a - 1 / (a * a + 1), and a reduction to one value
  const std::vector<float> expr = (2 * ta - 1.0f / (ta * ta + 1)).to_vector<float>();
  double total = 0;
  for (size_t i = 0; i < a.size(); i++) {
    float w = 2 * a[i] - 1.0f / (a[i] * a[i] + 1);
    total += w;
    if (!close(expr[i], w)) ok = false;
  }
  float s = (2 * ta - 1.0f / (ta * ta + 1)).sum().item<float>();
  if (!close(s, static_cast<float>(total))) ok = false;
  std::printf("        2a - 1/(a^2+1): %s (sum %.6f, want %.6f)\n", ok ? "ok" : "MISMATCH", static_cast<double>(s), total);

  // bad input is an exception, not a crash: a 2x3 @ 2x3 matmul throws TKC_ESHAPE and the ctx still works
  try {
    tkc::Tensor bad = ta.matmul(ta);
    std::fprintf(stderr, "%s: a 2x3 @ 2x3 matmul gave a tensor, want TKC_ESHAPE\n", device);
    ok = false;
  } catch (const tkc::Error &e) {
    if (e.status() != TKC_ESHAPE) {
      std::fprintf(stderr, "%s: a 2x3 @ 2x3 matmul threw %s (%s), want TKC_ESHAPE\n", device, e.status_str(), e.what());
      ok = false;
    }
  }
  return ok;
}

}  // namespace

int main() {
  static const char *const devices[] = {"CPU", "LLVM", "CUDA", "WEBGPU", "INTERP"};
  int ran = 0, failed = 0;
  for (const char *d : devices) {
    if (!tkc::Context::available(d)) continue;
    ran++;
    try {
      if (!run_on(d)) failed++;
    } catch (const tkc::Error &e) {
      std::fprintf(stderr, "%s: %s: %s\n", d, e.status_str(), e.what());
      failed++;
    }
  }
  std::printf("tkc %s: %d device(s), %d failed\n", tkc_version(), ran, failed);
  return ran && !failed ? 0 : 1;
}
