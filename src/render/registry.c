/* The table of built-in renderers: adding a backend adds one line here. */
#include <string.h>
#include "base/common.h"
#include "render/renderers.h"

static const tkc_renderer *const renderers[] = {&tkc_renderer_c, &tkc_renderer_llvm, &tkc_renderer_wgsl, &tkc_renderer_ptx};

const tkc_renderer *tkc_renderer_get(const char *name) {
  if (!name) return tkc_err_null(TKC_EINVAL, "tkc_renderer_get: NULL name");
  for (size_t i = 0; i < TKC_COUNTOF(renderers); i++)
    if (!strcmp(renderers[i]->name, name)) return renderers[i];
  return tkc_err_null(TKC_EINVAL, "unknown renderer \"%s\" (known: C, LLVM, PTX, WGSL)", name);
}

char *tkc_render(const tkc_renderer *r, const char *name, tkc_uop *const *uops, size_t n) {
  if (!r || !uops || !n) return tkc_err_null(TKC_EINVAL, "tkc_render: NULL renderer or empty kernel");
  return r->render(r, name ? name : "kernel", uops, n);
}
