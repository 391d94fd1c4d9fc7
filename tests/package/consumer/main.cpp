// The C++ side of tests/package/consumer: the installed tkc.hpp (C++17), checked against a loop.
#include <cmath>
#include <cstdio>
#include <vector>
#include <tkc.hpp>

int main() {
  try {
    tkc::Context ctx;
    std::vector<float> a(64), b(64);
    float want = 0;
    for (int i = 0; i < 64; i++) a[i] = float(i) * 0.5f, b[i] = 1.0f - float(i), want += (a[i] + b[i]) * 2;
    float got = ((ctx.tensor(a, {64}) + ctx.tensor(b, {64})) * 2.0f).sum().item<float>();
    std::printf("tkc %s (C++) on %s: %g (want %g)\n", tkc_version(), ctx.device().c_str(), double(got), double(want));
    return std::fabs(got - want) > 1e-3f;
  } catch (const tkc::Error &e) {
    std::fprintf(stderr, "consumer: %s\n", e.what());
    return 1;
  }
}
