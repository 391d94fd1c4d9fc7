/* einsum.c — Einsum over the public tensor API (GatherND and ScatterND: ops_scatter.c).
 * Einsum: every operand is permuted into one order of all the equation's letters (missing ones as
 * size-1 axes), the operands multiplied with broadcasting, the letters not in the output summed and
 * the rest permuted into the output's order. "..." stands for the leading axes an operand has beyond
 * its letters. A letter repeated within one operand takes that operand's diagonal first. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include "ops_util.h"

#define MAX_OPERANDS 8

/* expands "..." in term into letters from the ellipsis set (upper case A..), nell of them */
static int expand_term(const char *term, size_t len, int nell, char *out) {
  int k = 0;
  for (size_t i = 0; i < len; i++) {
    if (term[i] == '.') {
      if (i + 2 >= len + 0 || term[i + 1] != '.' || term[i + 2] != '.') return -1;
      for (int e = 0; e < nell; e++) out[k++] = (char)('A' + e);
      i += 2;
    } else if (isalpha((unsigned char)term[i])) {
      if (isupper((unsigned char)term[i])) return -1; /* upper case is ours: refuse to keep them apart */
      out[k++] = term[i];
    } else if (term[i] != ' ') return -1;
    if (k > ONNX_MAX_DIMS) return -1;
  }
  out[k] = 0;
  return k;
}

/* the diagonal of axes p < q (same size): one axis at p, q dropped; a (.., n * n) view's positions
 * 0, n + 1, 2 (n + 1), ... */
static tkc_tensor *diagonal(tkc_ctx *c, tkc_tensor *x, int p, int q) {
  int nd = tkc_ndim(x), perm[ONNX_MAX_DIMS], back[ONNX_MAX_DIMS], k = 0;
  int64_t sh[ONNX_MAX_DIMS], dim = tkc_dim(x, p);
  for (int d = 0; d < nd; d++)
    if (d != p && d != q) sh[k] = tkc_dim(x, d), perm[k++] = d;
  perm[k] = p, perm[k + 1] = q;
  sh[k] = dim * dim;
  x = tkc_reshape(tkc_permute(x, perm), k + 1, sh);
  x = tkc_index_select(x, k, tkc_arange(c, TKC_INT64, 0, (double)(dim * dim), (double)(dim + 1)));
  /* the diagonal axis (last now) back to p */
  for (int d = 0, j = 0; d <= k; d++) back[d] = d == p ? k : j++;
  return tkc_permute(x, back);
}

static int count_letters(const char *term, size_t len) {
  int k = 0;
  for (size_t i = 0; i < len; i++) k += isalpha((unsigned char)term[i]) != 0;
  return k;
}

tkc_status onnx_build_einsum(onnx_node *n) {
  const char *eq = onnx_attr_str(n, "equation", NULL);
  if (!eq) return onnx_node_err(n, TKC_EINVAL, "no equation");
  int nops = n->nin;
  if (nops < 1 || nops > MAX_OPERANDS) return onnx_node_err(n, TKC_EUNSUPPORTED, "%d operands", nops);
  tkc_status s = onnx_need(n, nops);
  if (s) return s;
  const char *arrow = strstr(eq, "->"), *p = eq;
  size_t lhs_len = arrow ? (size_t)(arrow - eq) : strlen(eq);
  char terms[MAX_OPERANDS][ONNX_MAX_DIMS + 1], outt[ONNX_MAX_DIMS + 1];
  int nell = 0;
  for (int i = 0; i < nops; i++) {
    const char *comma = memchr(p, ',', lhs_len - (size_t)(p - eq));
    size_t len = comma ? (size_t)(comma - p) : lhs_len - (size_t)(p - eq);
    if (!comma && i + 1 < nops) return onnx_node_err(n, TKC_EINVAL, "equation '%s' has fewer terms than inputs", eq);
    int e = tkc_ndim(onnx_in(n, i)) - count_letters(p, len);
    if (memmem(p, len, "...", 3)) nell = e > nell ? e : nell;
    if (e < 0 || (e > 0 && !memmem(p, len, "...", 3))) return onnx_node_err(n, TKC_EINVAL, "term %d does not fit input %d's rank", i, i);
    if (expand_term(p, len, e, terms[i]) < 0) return onnx_node_err(n, TKC_EUNSUPPORTED, "equation '%s'", eq);
    p += len + 1;
  }
  /* all letters in first-appearance order; the output's: given, or the ellipsis then the letters seen once, sorted */
  char all[64] = "";
  int nall = 0, seen[128] = {0};
  tkc_tensor *opnd[MAX_OPERANDS];
  for (int i = 0; i < nops; i++) {
    opnd[i] = onnx_in(n, i);
    for (char *q = terms[i]; *q; q++) {
      if (!seen[(int)*q]++) all[nall++] = *q;
      for (char *r = q + 1; *r;)
        if (*r == *q) { /* a diagonal: the repeated axis taken out */
          if (tkc_dim(opnd[i], (int)(q - terms[i])) != tkc_dim(opnd[i], (int)(r - terms[i]))) return onnx_node_err(n, TKC_ESHAPE, "a diagonal of unequal axes in '%s'", eq);
          opnd[i] = diagonal(n->m->ctx, opnd[i], (int)(q - terms[i]), (int)(r - terms[i]));
          memmove(r, r + 1, strlen(r));
          seen[(int)*q]++; /* counted as numpy does: an implicit output sums a repeated letter (a trace) */
        } else r++;
    }
  }
  if (nall > ONNX_MAX_DIMS) return onnx_node_err(n, TKC_EUNSUPPORTED, "%d letters", nall);
  if (arrow) {
    if (expand_term(arrow + 2, strlen(arrow + 2), nell, outt) < 0) return onnx_node_err(n, TKC_EUNSUPPORTED, "equation '%s'", eq);
  } else {
    int k = 0;
    for (int e = 0; e < nell; e++) outt[k++] = (char)('A' + e);
    for (int ch = 'a'; ch <= 'z'; ch++)
      if (seen[ch] == 1) outt[k++] = (char)ch;
    outt[k] = 0;
  }
  /* each operand in the order of all, broadcast dims 1; sizes per letter */
  int64_t size[128];
  for (int i = 0; i < 128; i++) size[i] = 1;
  tkc_tensor *prod = NULL;
  for (int i = 0; i < nops; i++) {
    tkc_tensor *x = opnd[i];
    int nd = (int)strlen(terms[i]), perm[ONNX_MAX_DIMS], k = 0;
    int64_t sh[ONNX_MAX_DIMS];
    for (int a = 0; a < nall; a++) {
      const char *at = strchr(terms[i], all[a]);
      if (at) {
        perm[k++] = (int)(at - terms[i]);
        int64_t d = tkc_dim(x, (int)(at - terms[i]));
        if (d != 1) size[(int)all[a]] = d;
      }
    }
    tkc_tensor *xp = nd > 1 ? tkc_permute(x, perm) : x;
    k = 0;
    for (int a = 0; a < nall; a++) sh[a] = strchr(terms[i], all[a]) ? tkc_dim(x, perm[k++]) : 1;
    xp = tkc_reshape(xp, nall, sh);
    prod = prod ? tkc_mul(prod, xp) : xp;
  }
  int64_t full[ONNX_MAX_DIMS];
  for (int a = 0; a < nall; a++) full[a] = size[(int)all[a]];
  prod = tkc_expand(prod, nall, full); /* a letter only broadcast still has its size */
  int red[ONNX_MAX_DIMS], nred = 0;
  char kept[ONNX_MAX_DIMS + 1];
  int nk = 0;
  for (int a = 0; a < nall; a++) {
    if (!strchr(outt, all[a])) red[nred++] = a;
    else kept[nk++] = all[a];
  }
  kept[nk] = 0;
  if (nred) prod = tkc_sum(prod, nred, red, 0);
  if ((int)strlen(outt) != nk) return onnx_node_err(n, TKC_EINVAL, "output letters of '%s' not in the inputs", eq);
  if (nk > 1) {
    int perm[ONNX_MAX_DIMS];
    for (int o = 0; o < nk; o++) perm[o] = (int)(strchr(kept, outt[o]) - kept);
    prod = tkc_permute(prod, perm);
  }
  tkc_dtype dt = tkc_dtype_of(onnx_in(n, 0));
  if (prod && tkc_dtype_of(prod) != dt) prod = tkc_cast(prod, dt);
  return onnx_set(n, 0, prod == onnx_in(n, 0) ? tkc_tensor_ref(prod) : prod);
}
