/* Internal interfaces of the code generator (not installed). */
#ifndef TKC_CODEGEN_H
#define TKC_CODEGEN_H

#include "tkc/render.h"
#include "uops/uop_internal.h"

/* tinygrad's pm_render: the rewrites that put a kernel into the form renderers read. */
TKC_HIDDEN const tkc_matcher *tkc_render_prep(void);

#endif
