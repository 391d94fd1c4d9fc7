/* src/autograd/gradient.h — the backward walk over lazy nodes (gradient.c). Internal. */
#ifndef TKC_GRADIENT_H
#define TKC_GRADIENT_H

#include "graph/graph.h"

/* Gradients of root (seeded with seed, root's shape and dtype) for the nodes is_target accepts:
 * found(target, gradient) is called once per target that root depends on through differentiable
 * ops (gradient is borrowed: ref it to keep it). With stop_at_targets the walk does not go below a
 * target (leaves). TKC_EUNSUPPORTED naming the op for a node without a rule; TKC_ENOMEM. */
TKC_HIDDEN tkc_status tkc_lazy_gradient(tkc_lazy *root, tkc_lazy *seed, int (*is_target)(const tkc_lazy *, void *), void *tctx,
                                        bool stop_at_targets, void (*found)(tkc_lazy *target, tkc_lazy *grad, void *), void *fctx);

#endif
