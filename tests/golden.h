/* Golden checks on generated source: render a kernel through the same stages as tkc_program_new
 * (tkc_codegen_source) and look for key pieces. Header-only, for the renderer suites; include it
 * after <cmocka.h>. */
#ifndef TKC_TEST_GOLDEN_H
#define TKC_TEST_GOLDEN_H

#include <stdio.h>
#include <string.h>
#include "codegen/pipeline.h"
#include "graph/tensor_internal.h"

/* the source of a kernel for the named renderer (malloc'ed); NULL with the error on failure */
static inline char *render_source(const char *renderer, tkc_uop *sink, const char *name) {
  const tkc_renderer *r = tkc_renderer_get(renderer);
  assert_non_null(r);
  return tkc_codegen_source(sink, r, name);
}

static inline void want(const char *src, const char *s) {
  if (!strstr(src, s)) {
    fprintf(stderr, "the source lacks \"%s\":\n%s\n", s, src);
    fail();
  }
}

static inline void want_not(const char *src, const char *s) {
  if (strstr(src, s)) {
    fprintf(stderr, "the source has \"%s\":\n%s\n", s, src);
    fail();
  }
}

/* a appears before b */
static inline void want_order(const char *src, const char *a, const char *b) {
  const char *pa = strstr(src, a), *pb = strstr(src, b);
  if (!pa || !pb || pa > pb) {
    fprintf(stderr, "the source should have \"%s\" before \"%s\":\n%s\n", a, b, src);
    fail();
  }
}

#endif
