/* engine/beam.c: beam search over kernel opts (tinygrad's engine/search.py), timing candidates on
 * the device with buffers of the kernel's sizes. */
#ifndef TKC_ENGINE_BEAM_H
#define TKC_ENGINE_BEAM_H

#include "codegen/opts.h"
#include "tkc/runtime.h"

/* the kernel's buffers: dtype and element count of argument i (0: the output) */
typedef struct tkc_beam_bufs {
  int n;
  tkc_dtype dt[33];
  size_t numel[33];
} tkc_beam_bufs;

typedef struct tkc_beam_result {
  tkc_opt opts[TKC_MAX_OPTS];
  int nopts;
  double best_s, heuristic_s, noopt_s; /* kernel times: the pick, the heuristics', no opts */
  double search_s;                     /* the whole search */
  int tried;                           /* candidates timed */
} tkc_beam_result;

/* The beam width in effect: setting when >= 0 (tkc_ctx_set_beam), else $TKC_BEAM, else 0 (off). */
TKC_HIDDEN int tkc_beam_width(int setting);

/* Searches opts for ast (a kernel AST in g) on d, starting from no opts and the heuristics' opts,
 * keeping the width fastest each round until a round finds nothing faster or the time budget
 * ($TKC_BEAM_BUDGET seconds per kernel, default 60) is spent; the kernel without opts is timed (and
 * grown) only when its estimated run fits a tenth of the budget. The pick's output is checked
 * against the kernel without opts on random inputs (against the heuristics' kernel when the one
 * without opts is too slow to run); a pick that disagrees (or a search that cannot time
 * anything) falls back to the heuristics' opts. */
TKC_HIDDEN tkc_status tkc_beam_search(tkc_graph *g, tkc_uop *ast, tkc_device *d, const tkc_beam_bufs *bufs, int width, tkc_beam_result *res);

/* The opts an earlier search (in any process) stored for key, from the disk cache; false if none. */
TKC_HIDDEN bool tkc_beam_load(const char *key, tkc_opt *opts, int *nopts);
TKC_HIDDEN void tkc_beam_store(const char *key, const tkc_opt *opts, int nopts);

#endif
