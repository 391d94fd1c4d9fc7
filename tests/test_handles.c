/* test_handles.c — a freed tensor handle is never silently another tensor (issue 16): its memory is
 * not reused for the next TKC_HANDLE_QUARANTINE (16384) frees of its ctx, so using it stays the
 * "use of a freed tensor" error; after that the memory is reused, and a long loop stays bounded. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>
#include "tkc.h"

static void test_freed_handle_not_recycled(void **state) {
  (void)state;
  tkc_ctx *ctx = tkc_ctx_new("INTERP");
  tkc_tensor *a = tkc_full(ctx, TKC_FLOAT32, 1, (const int64_t[]){4}, 1);
  assert_non_null(a);
  tkc_tensor_free(a);
  tkc_tensor_free(a); /* twice: a no-op */
  for (int i = 0; i < 16384; i++) { /* the next 16384 tensors never get a's memory */
    tkc_tensor *b = tkc_full(ctx, TKC_FLOAT32, 1, (const int64_t[]){4}, 2);
    assert_non_null(b);
    if (b == a) fail_msg("handle reused after %d frees", i);
    tkc_tensor_free(b);
  }
  assert_int_equal(tkc_ndim(a), 0);
  assert_non_null(strstr(tkc_last_error(), "freed"));
  float v[4];
  assert_int_equal(tkc_copy_out(a, v, sizeof v), TKC_EINVAL);
  assert_null(tkc_add(a, a));
  tkc_ctx_free(ctx);
}

/* past the quarantine handles are reused, so create/free loops keep a ctx's handle memory bounded: the
 * first handle comes back, but only after more than 16384 frees */
static void test_reuse_is_bounded(void **state) {
  (void)state;
  tkc_ctx *ctx = tkc_ctx_new("INTERP");
  enum { N = 300000 };
  int back_at = 0;
  tkc_tensor *first = NULL;
  for (int i = 0; i < N; i++) {
    tkc_tensor *t = tkc_full(ctx, TKC_INT32, 0, NULL, i);
    assert_non_null(t);
    if (!first) first = t;
    if (i && t == first && !back_at) back_at = i;
    tkc_tensor_free(t);
  }
  assert_true(back_at > 16384);
  tkc_ctx_free(ctx);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_freed_handle_not_recycled), cmocka_unit_test(test_reuse_is_bounded)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
