/* The built-in renderers (each defined in its own file). Internal. */
#ifndef TKC_RENDERERS_H
#define TKC_RENDERERS_H
#include "tkc/render.h"
extern const tkc_renderer tkc_renderer_c; /* src/render/c.c */
#endif
