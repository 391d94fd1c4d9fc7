/* The built-in renderers (each defined in its own file). Internal. */
#ifndef TKC_RENDERERS_H
#define TKC_RENDERERS_H
#include "tkc/render.h"
extern const tkc_renderer tkc_renderer_c; /* src/render/c.c */
extern const tkc_renderer tkc_renderer_llvm; /* src/render/llvmir.c */
extern const tkc_renderer tkc_renderer_wgsl; /* src/render/wgsl.c */
extern const tkc_renderer tkc_renderer_ptx; /* src/render/ptx.c */
#endif
