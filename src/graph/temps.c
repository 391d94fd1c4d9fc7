/* Temporaries of composite ops and the axes of a reduction (see tensor_internal.h). */
#include "graph/tensor_internal.h"

tkc_tensor *tkc_temp(tkc_temps *s, tkc_tensor *x) {
  if (!x) return NULL;
  if (s->n == TKC_NTEMPS) { /* composites need far fewer: never reached */
    tkc_tensor_free(x);
    return tkc_err_null(TKC_EINTERNAL, "composite op: too many temporaries");
  }
  return s->t[s->n++] = x;
}

tkc_tensor *tkc_temps_done(tkc_temps *s, tkc_tensor *r) {
  for (int i = 0; i < s->n; i++)
    if (s->t[i] != r) tkc_tensor_free(s->t[i]);
  s->n = 0;
  return r;
}

tkc_tensor *tkc_temp_pad_last(tkc_temps *s, tkc_tensor *a, int64_t before, int64_t after, double v) {
  if (!a) return NULL;
  int64_t p[2 * TKC_MAX_DIMS] = {0};
  p[2 * a->node->ndim - 2] = before, p[2 * a->node->ndim - 1] = after;
  return tkc_temp(s, tkc_pad(a, p, v));
}

tkc_tensor *tkc_temp_shrink_last(tkc_temps *s, tkc_tensor *a, int64_t lo, int64_t hi) {
  if (!a) return NULL;
  int64_t r[2 * TKC_MAX_DIMS];
  for (int i = 0; i < a->node->ndim; i++) r[2 * i] = 0, r[2 * i + 1] = a->node->shape[i];
  r[2 * a->node->ndim - 2] = lo, r[2 * a->node->ndim - 1] = hi;
  return tkc_temp(s, tkc_shrink(a, r));
}

int tkc_axes_mask(const char *what, const tkc_lazy *a, int naxes, const int *axes, int *mask) {
  for (int i = 0; i < a->ndim; i++) mask[i] = naxes == 0 || !axes;
  if (naxes < 0) return tkc_err(TKC_EINVAL, "%s: naxes is %d (0 reduces every axis)", what, naxes), -1;
  if (naxes && !axes) return tkc_err(TKC_EINVAL, "%s: NULL axes for naxes %d", what, naxes), -1;
  for (int k = 0; axes && k < naxes; k++) {
    int ax = axes[k] < 0 ? axes[k] + a->ndim : axes[k];
    if (ax < 0 || ax >= a->ndim)
      return tkc_err(TKC_EINVAL, "%s: axis %d out of range for a %d-d tensor of shape %s", what, axes[k], a->ndim, TKC_NODE_SHAPE(a)), -1;
    if (mask[ax]) return tkc_err(TKC_EINVAL, "%s: axis %d given twice", what, axes[k]), -1;
    mask[ax] = 1;
  }
  return 0;
}
