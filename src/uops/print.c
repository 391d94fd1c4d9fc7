/* Toposort and the two printed forms of a UOp graph: a numbered listing and an expression. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "uops/uop_internal.h"

typedef struct frame {
  const tkc_uop *u;
  int next; /* next source to visit */
} frame;

tkc_uop **tkc_toposort(const tkc_uop *root, size_t *n) {
  if (!root || !n) return tkc_err_null(TKC_EINVAL, "tkc_toposort: NULL argument");
  tkc_umap seen = {0};
  size_t cap = 64, len = 0, depth = 0, scap = 64;
  tkc_uop **out = tkc_malloc(cap * sizeof *out);
  frame *stack = tkc_malloc(scap * sizeof *stack);
  if (!out || !stack || tkc_umap_put(&seen, root, (tkc_uop *)root)) goto oom;
  stack[depth++] = (frame){root, 0};
  while (depth) { /* iterative DFS: sources in order, node after its sources */
    frame *f = &stack[depth - 1];
    if (f->next < f->u->nsrc) {
      const tkc_uop *s = f->u->src[f->next++];
      if (tkc_umap_get(&seen, s)) continue;
      if (tkc_umap_put(&seen, s, (tkc_uop *)s)) goto oom;
      if (depth == scap) {
        frame *ns = tkc_realloc(stack, (scap *= 2) * sizeof *stack);
        if (!ns) goto oom;
        stack = ns;
      }
      stack[depth++] = (frame){s, 0};
      continue;
    }
    if (len == cap) {
      tkc_uop **no = tkc_realloc(out, (cap *= 2) * sizeof *out);
      if (!no) goto oom;
      out = no;
    }
    out[len++] = (tkc_uop *)f->u;
    depth--;
  }
  tkc_free(stack);
  tkc_umap_free(&seen);
  *n = len;
  return out;
oom:
  tkc_free(stack);
  tkc_free(out);
  tkc_umap_free(&seen);
  return tkc_err_null(TKC_ENOMEM, "out of memory in toposort");
}

static void put_arg(tkc_sbuf *b, const tkc_arg *a) {
  switch (a->kind) {
  case TKC_ARG_NONE: tkc_sbuf_puts(b, "None"); break;
  case TKC_ARG_INT: tkc_sbuf_printf(b, "%" PRId64, a->v.i); break;
  case TKC_ARG_FLOAT: tkc_sbuf_printf(b, "%.17g", a->v.f); break;
  case TKC_ARG_STR: tkc_sbuf_printf(b, "'%s'", a->v.s); break;
  case TKC_ARG_PTR: tkc_sbuf_printf(b, "<%p>", a->v.p); break;
  case TKC_ARG_TUPLE:
    tkc_sbuf_puts(b, "(");
    for (uint32_t i = 0; i < a->n; i++) {
      if (i) tkc_sbuf_puts(b, ", ");
      put_arg(b, &a->v.t[i]);
    }
    tkc_sbuf_puts(b, a->n == 1 ? ",)" : ")");
    break;
  }
}

char *tkc_uop_str(const tkc_uop *root) {
  size_t n;
  tkc_uop **order = tkc_toposort(root, &n);
  if (!order) return NULL;
  tkc_umap index = {0};
  tkc_sbuf b = {0};
  for (size_t i = 0; i < n; i++) {
    const tkc_uop *u = order[i];
    if (tkc_umap_put(&index, u, (tkc_uop *)(uintptr_t)(i + 1))) b.oom = 1;
    char dt[64];
    tkc_sbuf_printf(&b, "%4zu %-14s %-22s [", i, tkc_op_name((tkc_op)u->op), tkc_dt_str(u->dtype, dt, sizeof dt));
    for (int j = 0; j < u->nsrc; j++) {
      uintptr_t k = (uintptr_t)tkc_umap_get(&index, u->src[j]);
      tkc_sbuf_printf(&b, j ? ", %zu" : "%zu", (size_t)k - 1);
    }
    tkc_sbuf_puts(&b, "]");
    if (u->arg.kind != TKC_ARG_NONE) {
      tkc_sbuf_puts(&b, " ");
      put_arg(&b, &u->arg);
    }
    tkc_sbuf_puts(&b, "\n");
  }
  tkc_free(order);
  tkc_umap_free(&index);
  return tkc_sbuf_take(&b);
}

static const char *binop_sym(tkc_op op) {
  switch (op) {
  case TKC_OP_ADD: return "+";
  case TKC_OP_SUB: return "-";
  case TKC_OP_MUL: return "*";
  case TKC_OP_IDIV: return "//";
  case TKC_OP_FDIV: return "/";
  case TKC_OP_MOD: return "%";
  case TKC_OP_SHL: return "<<";
  case TKC_OP_SHR: return ">>";
  case TKC_OP_CMPLT: return "<";
  case TKC_OP_CMPNE: return "!=";
  case TKC_OP_AND: return "&";
  case TKC_OP_OR: return "|";
  case TKC_OP_XOR: return "^";
  default: return NULL;
  }
}

/* A debugging/test aid for index expressions: recursion is bounded by printing deeper subexpressions
 * as "..." (and shared subexpressions are printed each time, so output is capped too). */
#define EXPR_MAX_DEPTH 64
#define EXPR_MAX_LEN (1u << 20)
static void put_expr_d(tkc_sbuf *b, const tkc_uop *u, int depth);
#define put_expr(b, u) put_expr_d(b, u, depth + 1)
static void put_expr_d(tkc_sbuf *b, const tkc_uop *u, int depth) {
  tkc_op op = (tkc_op)u->op;
  if (depth > EXPR_MAX_DEPTH || b->len > EXPR_MAX_LEN) {
    tkc_sbuf_puts(b, "...");
    return;
  }
  const char *sym = binop_sym(op);
  if ((op == TKC_OP_DEFINE_VAR || op == TKC_OP_SPECIAL) && u->arg.kind == TKC_ARG_TUPLE && u->arg.n && u->arg.v.t[0].kind == TKC_ARG_STR) {
    tkc_sbuf_puts(b, u->arg.v.t[0].v.s);
  } else if (op == TKC_OP_RANGE) {
    tkc_sbuf_printf(b, "ridx%" PRId64, u->arg.v.i);
  } else if (op == TKC_OP_CONST) {
    if (u->dtype.scalar == TKC_BOOL) tkc_sbuf_puts(b, u->arg.v.i ? "True" : "False");
    else put_arg(b, &u->arg);
  } else if (sym && u->nsrc == 2) {
    tkc_sbuf_puts(b, "(");
    put_expr(b, u->src[0]);
    tkc_sbuf_puts(b, sym);
    put_expr(b, u->src[1]);
    tkc_sbuf_puts(b, ")");
  } else if (op == TKC_OP_NEG && u->nsrc == 1) {
    tkc_sbuf_puts(b, "(-");
    put_expr(b, u->src[0]);
    tkc_sbuf_puts(b, ")");
  } else if (op == TKC_OP_WHERE && u->nsrc == 3) {
    tkc_sbuf_puts(b, "(");
    put_expr(b, u->src[1]);
    tkc_sbuf_puts(b, " if ");
    put_expr(b, u->src[0]);
    tkc_sbuf_puts(b, " else ");
    put_expr(b, u->src[2]);
    tkc_sbuf_puts(b, ")");
  } else if (op == TKC_OP_CAST && u->nsrc == 1) {
    char dt[64];
    tkc_sbuf_printf(b, "(%s)", tkc_dt_str(u->dtype, dt, sizeof dt));
    put_expr(b, u->src[0]);
  } else {
    tkc_sbuf_printf(b, "%s(", op == TKC_OP_MAX ? "max" : tkc_op_name(op));
    for (int i = 0; i < u->nsrc; i++) {
      if (i) tkc_sbuf_puts(b, ", ");
      put_expr(b, u->src[i]);
    }
    tkc_sbuf_puts(b, ")");
  }
}
#undef put_expr

char *tkc_uop_expr_str(const tkc_uop *root) {
  if (!root) return tkc_err_null(TKC_EINVAL, "tkc_uop_expr_str: NULL");
  tkc_sbuf b = {0};
  put_expr_d(&b, root, 0);
  return tkc_sbuf_take(&b);
}
