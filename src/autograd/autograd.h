/* src/autograd/autograd.h — what the autograd files share (autograd.c). Internal. */
#ifndef TKC_AUTOGRAD_H
#define TKC_AUTOGRAD_H

#include "base/common.h"
#include "tkc.h"

/* tkc_zero_grad of n tensors, their zero fills in one schedule (tkc_optim_zero_grad). */
TKC_HIDDEN tkc_status tkc_zero_grads(int n, tkc_tensor *const *ts);

#endif
