/* The CUDA device suite (ctest label "cuda"; scripts/gpu-check.sh runs it on a GPU machine): every
 * kernel of the hand-built suite (tests/kernels.h, GPU-style variants and GPU-only kernels included)
 * runs on the CUDA device and on INTERP with the same inputs, and every buffer must match (floats
 * within the kernel's tolerance; kernels INTERP cannot run — shared memory with local indices, tensor
 * cores — are checked against host references). Then the device's error paths that need a GPU: launch
 * sizes beyond the device, PTX the driver rejects, the device still working afterwards.
 * Without a CUDA device this prints "skipped: no CUDA device (<why>)" — unless TKC_REQUIRE_CUDA=1
 * (set by scripts/gpu-check.sh), where that is a failure. TKC_TEST_GPU_DEVICE=<name> runs the same
 * differential suite on another device (e.g. WEBGPU, LLVM); kernels that device refuses with
 * TKC_EUNSUPPORTED are counted as skipped there. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include "kernels.h"
#include "runtime/cuda.h"
#include "runtime/device.h"

static const char *dut(void) {
  const char *d = getenv("TKC_TEST_GPU_DEVICE");
  return d && *d ? d : "CUDA";
}

/* 1 when the device under test can run; otherwise says why (and fails when it is required) */
static int have_device(void) {
  if (tkc_device_available(dut())) return 1;
  tkc_device_get(dut());
  char why[512];
  snprintf(why, sizeof why, "%s", tkc_last_error());
  const char *req = getenv("TKC_REQUIRE_CUDA");
  if (req && *req && strcmp(req, "0")) {
    printf("TKC_REQUIRE_CUDA is set but %s\n", why);
    fail();
  }
  printf("skipped: no CUDA device (%s)\n", why);
  return 0;
}

/* ---------------------------------------------------------------- inputs */

static uint64_t rng_next(uint64_t *s) {
  *s ^= *s << 13;
  *s ^= *s >> 7;
  *s ^= *s << 17;
  return *s;
}
static double rng_unit(uint64_t *s) { return (double)(rng_next(s) >> 11) / 9007199254740992.0; }

static void fill(void *p, tkc_dtype dt, size_t n, kfill f, uint64_t *s) {
  static const double fspecial[] = {0.0, -0.0, INFINITY, -INFINITY, NAN, 1e30, -1e30, 1e-30, 65504.0, 70000.0, 3.3e38, -3.4e38, 0.5, -2.5, 100.5};
  bool isf = tkc_dtype_is_float(dt), small = dt == TKC_FLOAT16 || dt == TKC_BFLOAT16;
  int64_t lo = tkc_dtype_min(dt), hi = tkc_dtype_max(dt);
  const int64_t ispecial[] = {lo, hi, -1, 0, 1, lo + 1, hi - 1};
  const int64_t shifts[] = {0, 1, 7, 8, 15, 16, 31, 32, 33, 63, 64, 65, 200, -1, -5, hi};
  for (size_t i = 0; i < n; i++) {
    if (dt == TKC_BOOL) { k_put_i(p, dt, i, (int64_t)(rng_next(s) & 1)); continue; }
    switch (f) {
    case KF_EXTREME:
      if (isf && i < sizeof fspecial / sizeof *fspecial) { kb_putf(p, dt, i, fspecial[i]); continue; }
      if (!isf && i < sizeof ispecial / sizeof *ispecial) { k_put_i(p, dt, i, ispecial[i]); continue; }
      break;
    case KF_UNARY:
      if (isf) { kb_putf(p, dt, i, 0.25 + rng_unit(s) * 12.8); continue; }
      break;
    case KF_DIVISOR: {
      int64_t v = i == 0 ? 0 : i == 1 ? -1 : (int64_t)(rng_next(s) % 19) - 9;
      if (tkc_dtype_is_unsigned(dt) && v < 0) v = -v;
      if (isf) kb_putf(p, dt, i, (double)v);
      else k_put_i(p, dt, i, v);
      continue;
    }
    case KF_SHIFT:
      if (!isf) { k_put_i(p, dt, i, i < sizeof shifts / sizeof *shifts ? shifts[i] : (int64_t)(rng_next(s) % 71)); continue; }
      break;
    case KF_SMALLINT: {
      int64_t v = (int64_t)(rng_next(s) % 9) - 4;
      if (isf) kb_putf(p, dt, i, (double)v);
      else k_put_i(p, dt, i, v);
      continue;
    }
    case KF_ANY: break;
    }
    if (isf) kb_putf(p, dt, i, small ? rng_unit(s) * 8 - 4 : rng_unit(s) * 200 - 100);
    else k_put_i(p, dt, i, (int64_t)rng_next(s));
  }
}

/* ---------------------------------------------------------------- running and comparing */

static tkc_status run_on(const char *dev, tkc_graph *g, const kspec *s, void **host) {
  tkc_device *d = tkc_device_get(dev);
  if (!d) return tkc_last_status();
  tkc_program *p = tkc_program_new(d, g, s->sink, s->name);
  if (!p) return tkc_last_status();
  tkc_buffer *bufs[KB_MAXBUF] = {0};
  tkc_status st = TKC_OK;
  for (int i = 0; i < s->nbufs && !st; i++) {
    bufs[i] = tkc_buffer_new(d, s->dt[i], s->n[i]);
    st = bufs[i] ? tkc_buffer_copyin(bufs[i], host[i], s->n[i] * tkc_dtype_size(s->dt[i])) : tkc_last_status();
  }
  if (!st) st = tkc_program_launch(p, bufs, s->nbufs, s->vars, s->nvars);
  for (int i = 0; i < s->nbufs && !st; i++) st = tkc_buffer_copyout(bufs[i], host[i], s->n[i] * tkc_dtype_size(s->dt[i]));
  for (int i = 0; i < s->nbufs; i++) tkc_buffer_free(bufs[i]);
  tkc_program_free(p);
  return st;
}

/* mismatching elements of buffer b (the first few printed) */
static int compare(const kspec *s, int b, const void *got, const void *want, const char *dev) {
  int bad = 0;
  tkc_dtype dt = s->dt[b];
  for (size_t i = 0; i < s->n[b]; i++) {
    if (tkc_dtype_is_float(dt)) {
      double x = k_get_f(got, dt, i), y = k_get_f(want, dt, i);
      if (x == y || (isnan(x) && isnan(y)) || fabs(x - y) <= s->tol * fmax(1.0, fabs(y))) continue;
      if (bad++ < 4) printf("%s on %s: buffer %d (%s) element %zu: got %.17g want %.17g\n", s->name, dev, b, tkc_dtype_name(dt), i, x, y);
    } else if (k_get_i(got, dt, i) != k_get_i(want, dt, i)) {
      if (bad++ < 4)
        printf("%s on %s: buffer %d (%s) element %zu: got %lld want %lld\n", s->name, dev, b, tkc_dtype_name(dt), i, (long long)k_get_i(got, dt, i),
               (long long)k_get_i(want, dt, i));
    }
  }
  return bad;
}

static void test_suite_matches_interp(void **state) {
  (void)state;
  if (!have_device()) return;
  const char *dev = dut();
  tkc_cuda_limits lim;
  int sm = !strcmp(dev, "CUDA") && tkc_cuda_device_limits(&lim) ? lim.sm : 1000;
  int ran = 0, vs_interp = 0, vs_ref = 0, skipped = 0, failed = 0;
  for (int i = 0;; i++) {
    tkc_graph *g = tkc_graph_new();
    kspec s;
    if (!kb_case(i, g, &s)) { tkc_graph_free(g); break; }
    if (!s.sink) { tkc_graph_free(g); continue; }
    if (s.min_sm > sm) {
      printf("%s: needs sm_%d, the device is sm_%d: skipped\n", s.name, s.min_sm, sm);
      skipped++;
      tkc_graph_free(g);
      continue;
    }
    void *got[KB_MAXBUF], *want[KB_MAXBUF];
    uint64_t seed = 0x9E3779B97F4A7C15ull ^ (uint64_t)i * 0x100000001B3ull;
    for (int b = 0; b < s.nbufs; b++) {
      size_t bytes = s.n[b] * tkc_dtype_size(s.dt[b]);
      got[b] = calloc(1, bytes + 1);
      want[b] = calloc(1, bytes + 1);
      assert_non_null(got[b]);
      assert_non_null(want[b]);
      fill(got[b], s.dt[b], s.n[b], s.fill[b], &seed);
      memcpy(want[b], got[b], bytes);
    }
    tkc_status st = run_on(dev, g, &s, got);
    if (st == TKC_EUNSUPPORTED && strcmp(dev, "CUDA")) { /* another device under test may refuse what it cannot express */
      printf("%s: %s refuses it: %s\n", s.name, dev, tkc_last_error());
      skipped++;
    } else if (st) {
      printf("%s on %s: %s\n", s.name, dev, tkc_last_error());
      failed++;
    } else {
      ran++;
      if (s.no_interp) {
        s.ref(want, &s);
        vs_ref++;
      } else {
        tkc_status si = run_on("INTERP", g, &s, want);
        if (si) printf("%s on INTERP: %s\n", s.name, tkc_last_error());
        assert_int_equal(si, TKC_OK);
        vs_interp++;
      }
      int bad = 0;
      for (int b = 0; b < s.nbufs; b++) bad += compare(&s, b, got[b], want[b], dev);
      if (bad) failed++;
    }
    for (int b = 0; b < s.nbufs; b++) free(got[b]), free(want[b]);
    tkc_graph_free(g);
  }
  printf("%s suite: %d kernels run (%d against INTERP, %d against host references), %d skipped, %d failed\n", dev, ran, vs_interp, vs_ref,
         skipped, failed);
  assert_int_equal(failed, 0);
  if (!strcmp(dev, "CUDA")) assert_true(ran > 150);
}

/* ---------------------------------------------------------------- errors that need a GPU */

static void test_cuda_errors(void **state) {
  (void)state;
  if (strcmp(dut(), "CUDA") || !have_device()) return;
  tkc_device *d = tkc_device_get("CUDA");
  assert_non_null(d);
  assert_string_equal(tkc_renderer_get("PTX")->device, "CUDA");
  assert_ptr_equal(tkc_device_renderer(d), tkc_renderer_get("PTX"));
  tkc_cuda_limits lim;
  assert_int_equal(tkc_cuda_device_limits(&lim), 1);
  printf("CUDA device: %s, sm_%d, %d SMs, %d threads/block, %d / %d bytes shared/block\n", lim.name, lim.sm, lim.multiprocessors,
         lim.max_threads_per_block, lim.shared_per_block, lim.shared_per_block_optin);

  /* buffers: round trip, zero size */
  float in[5] = {1, 2, 3, 4, 5}, out[5] = {0};
  tkc_buffer *b = tkc_buffer_new(d, TKC_FLOAT32, 5), *z = tkc_buffer_new(d, TKC_FLOAT32, 0);
  assert_non_null(b);
  assert_non_null(z);
  assert_int_equal(tkc_buffer_copyin(b, in, sizeof in), TKC_OK);
  assert_int_equal(tkc_buffer_copyout(b, out, sizeof out), TKC_OK);
  assert_memory_equal(in, out, sizeof in);
  assert_int_equal(tkc_buffer_copyin(z, NULL, 0), TKC_OK);
  tkc_buffer_free(z);

  /* a block of more threads than the device has: refused before launching */
  tkc_graph *g = tkc_graph_new();
  tkc_uop *l0 = tkc_uop_special(g, "lidx0", 1024), *l1 = tkc_uop_special(g, "lidx1", 1024);
  tkc_uop *sink = k_sink1(g, k_store(g, k_buf(g, 0, TKC_INT32), k_add(g, l0, l1), l0));
  tkc_program *p = tkc_program_new(d, g, sink, "too_many_threads");
  assert_non_null(p);
  tkc_buffer *big = tkc_buffer_new(d, TKC_INT32, 4096);
  assert_int_equal(tkc_program_launch(p, &big, 1, NULL, 0), TKC_EINVAL);
  assert_non_null(strstr(tkc_last_error(), "threads per block"));
  tkc_program_free(p);
  tkc_buffer_free(big);

  /* PTX the driver rejects: TKC_ECOMPILE with the JIT's log */
  tkc_kernel k = {.name = "broken", .source = ".version 7.0\n.target sm_75\n.address_size 64\n.visible .entry broken()\n{\n\tfoo.bar;\n}\n"};
  void *h = NULL;
  assert_int_equal(tkc_device_cuda.compile(&k, &h), TKC_ECOMPILE);
  assert_null(h);
  printf("rejected PTX: %s\n", tkc_last_error());
  assert_non_null(strstr(tkc_last_error(), "cuModuleLoadDataEx"));

  /* the device still works */
  tkc_uop *r = k_range(g, 5, 0);
  tkc_uop *dbl = k_sink1(g, k_store(g, k_buf(g, 0, TKC_FLOAT32), r, k_mul(g, k_load(g, k_buf(g, 0, TKC_FLOAT32), r), tkc_uop_const_float(g, dt_(TKC_FLOAT32), 2))));
  p = tkc_program_new(d, g, dbl, "double_it");
  assert_non_null(p);
  assert_int_equal(tkc_program_launch(p, &b, 1, NULL, 0), TKC_OK);
  assert_int_equal(tkc_buffer_copyout(b, out, sizeof out), TKC_OK);
  for (int i = 0; i < 5; i++) assert_true(out[i] == in[i] * 2);
  tkc_program_free(p);
  tkc_buffer_free(b);
  tkc_graph_free(g);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_suite_matches_interp), cmocka_unit_test(test_cuda_errors)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
