/* einsum.c — Einsum, GatherND and ScatterND over the public tensor API.
 * Einsum: every operand is permuted into one order of all the equation's letters (missing ones as
 * size-1 axes), the operands multiplied with broadcasting, the letters not in the output summed and
 * the rest permuted into the output's order. "..." stands for the leading axes an operand has beyond
 * its letters. A letter repeated within one operand (a diagonal) is not supported. */
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
  for (int i = 0; i < nops; i++)
    for (const char *q = terms[i]; *q; q++) {
      for (const char *r = q + 1; *r; r++)
        if (*r == *q) return onnx_node_err(n, TKC_EUNSUPPORTED, "a repeated letter in one term (diagonal) in '%s'", eq);
      if (!seen[(int)*q]++) all[nall++] = *q;
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
    tkc_tensor *x = onnx_in(n, i);
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

/* GatherND: the first batch_dims axes pair up; the last axis of indices (k entries) addresses the next
 * k axes of data, whose slices are gathered. Done as one index_select over data with those axes (and
 * the batch axes) flattened. */
tkc_status onnx_build_gather_nd(onnx_node *n) {
  tkc_status s = onnx_need(n, 2);
  if (s) return s;
  tkc_tensor *x = onnx_in(n, 0), *idx = tkc_cast(onnx_in(n, 1), TKC_INT64);
  tkc_ctx *c = n->m->ctx;
  int nd = tkc_ndim(x), ind = tkc_ndim(idx);
  int64_t b = onnx_attr_int(n, "batch_dims", 0);
  if (ind < 1) return onnx_node_err(n, TKC_EINVAL, "indices must be at least 1-D");
  int64_t k = tkc_dim(idx, ind - 1);
  if (b < 0 || b >= ind || b + k > nd) return onnx_node_err(n, TKC_EINVAL, "batch_dims %lld with %lld index entries for %d dims", (long long)b, (long long)k, nd);
  int64_t bsz = 1, stride[ONNX_MAX_DIMS], lin_n = 1;
  for (int d = 0; d < b; d++) bsz *= tkc_dim(x, d);
  for (int64_t j = k - 1; j >= 0; j--) stride[j] = lin_n, lin_n *= tkc_dim(x, (int)(b + j));
  /* linear index over (batch, k axes) */
  tkc_tensor *lin = NULL;
  for (int64_t j = 0; j < k; j++) {
    int64_t rng[2 * ONNX_MAX_DIMS];
    for (int d = 0; d < ind; d++) rng[2 * d] = 0, rng[2 * d + 1] = tkc_dim(idx, d);
    rng[2 * (ind - 1)] = j, rng[2 * (ind - 1) + 1] = j + 1;
    tkc_tensor *ij = tkc_shrink(idx, rng);
    tkc_tensor *dim = tkc_scalar(c, TKC_INT64, (double)tkc_dim(x, (int)(b + j)));
    ij = tkc_where(tkc_lt(ij, tkc_scalar(c, TKC_INT64, 0)), tkc_add(ij, dim), ij);
    ij = tkc_mul(ij, tkc_scalar(c, TKC_INT64, (double)stride[j]));
    lin = lin ? tkc_add(lin, ij) : ij;
  }
  int64_t ish[ONNX_MAX_DIMS];
  for (int d = 0; d < ind; d++) ish[d] = d == ind - 1 ? 1 : tkc_dim(idx, d);
  if (!lin) lin = tkc_full(c, TKC_INT64, ind, ish, 0);
  if (b > 0) { /* + the batch's flat number * lin_n */
    int64_t bs[ONNX_MAX_DIMS];
    for (int d = 0; d < ind; d++) bs[d] = d < b ? tkc_dim(idx, d) : 1;
    tkc_tensor *bi = tkc_reshape(tkc_arange(c, TKC_INT64, 0, (double)bsz, 1), ind, bs);
    lin = tkc_add(lin, tkc_mul(bi, tkc_scalar(c, TKC_INT64, (double)lin_n)));
  }
  lin = tkc_reshape(lin, ind - 1, ish); /* drop the k axis */
  int64_t xs[ONNX_MAX_DIMS];
  int xn = 0;
  xs[xn++] = bsz * lin_n;
  for (int d = (int)(b + k); d < nd; d++) xs[xn++] = tkc_dim(x, d);
  return onnx_set(n, 0, tkc_index_select(tkc_reshape(x, xn, xs), 0, lin));
}

/* ScatterND (reduction none or add): data's first k axes flattened into rows, the update rows
 * scattered to the rows the last index axis addresses. */
tkc_status onnx_build_scatter_nd(onnx_node *n) {
  tkc_status s = onnx_need(n, 3);
  if (s) return s;
  tkc_tensor *x = onnx_in(n, 0), *idx = tkc_cast(onnx_in(n, 1), TKC_INT64), *upd = onnx_in(n, 2);
  tkc_ctx *c = n->m->ctx;
  const char *red = onnx_attr_str(n, "reduction", "none");
  if (strcmp(red, "none") && strcmp(red, "add")) return onnx_node_err(n, TKC_EUNSUPPORTED, "reduction '%s'", red);
  int nd = tkc_ndim(x), ind = tkc_ndim(idx);
  if (ind < 1) return onnx_node_err(n, TKC_EINVAL, "indices must be at least 1-D");
  int64_t k = tkc_dim(idx, ind - 1);
  if (k < 1 || k > nd) return onnx_node_err(n, TKC_EINVAL, "%lld index entries for %d dims", (long long)k, nd);
  int64_t rows = 1, rest = 1, stride[ONNX_MAX_DIMS], u = 1;
  for (int64_t j = k - 1; j >= 0; j--) stride[j] = rows, rows *= tkc_dim(x, (int)j);
  for (int d = (int)k; d < nd; d++) rest *= tkc_dim(x, d);
  for (int d = 0; d < ind - 1; d++) u *= tkc_dim(idx, d);
  tkc_tensor *lin = NULL;
  for (int64_t j = 0; j < k; j++) {
    int64_t rng[2 * ONNX_MAX_DIMS];
    for (int d = 0; d < ind; d++) rng[2 * d] = 0, rng[2 * d + 1] = tkc_dim(idx, d);
    rng[2 * (ind - 1)] = j, rng[2 * (ind - 1) + 1] = j + 1;
    tkc_tensor *ij = tkc_shrink(idx, rng);
    tkc_tensor *dim = tkc_scalar(c, TKC_INT64, (double)tkc_dim(x, (int)j));
    ij = tkc_where(tkc_lt(ij, tkc_scalar(c, TKC_INT64, 0)), tkc_add(ij, dim), ij);
    ij = tkc_mul(ij, tkc_scalar(c, TKC_INT64, (double)stride[j]));
    lin = lin ? tkc_add(lin, ij) : ij;
  }
  int64_t xs[2] = {rows, rest}, us[2] = {u, rest}, ls[2] = {u, 1};
  tkc_tensor *index = tkc_expand(tkc_reshape(lin, 2, ls), 2, us);
  tkc_tensor *flat = tkc_reshape(x, 2, xs), *src = tkc_reshape(upd, 2, us);
  tkc_tensor *r = !strcmp(red, "add") ? tkc_scatter_add(flat, 0, index, src) : tkc_scatter(flat, 0, index, src);
  int64_t sh[ONNX_MAX_DIMS];
  for (int d = 0; d < nd; d++) sh[d] = tkc_dim(x, d);
  return onnx_set(n, 0, tkc_reshape(r, nd, sh));
}
