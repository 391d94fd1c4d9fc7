/* src/runtime/llvm.c — the "LLVM" device: host memory, kernels rendered by the "LLVM" renderer
 * (src/render/llvmir.c) as LLVM IR text, compiled in process with LLVM-C and called through libffi.
 * No external process, no temporary files.
 *
 * Compile, per kernel:
 *   parse the IR from memory (LLVMParseIRInContext, a fresh context per kernel) -> verify ->
 *   rename the kernel to a process-unique symbol (two programs may share a name) -> set the JIT's
 *   triple and data layout -> O2 (LLVMRunPasses "default<O2>") and code generation into an object
 *   file in memory, both with a target machine of this compile for the host CPU (name + features)
 *   -> the ORC LLJIT links the object under its own resource tracker -> look the symbol up -> a
 *   libffi call interface for (ptr x nbufs, int x nvars, int core, int ncores).
 * Code generation happens outside the JIT on purpose: LLJIT's own compile layer shares one target
 * machine, so two threads generating code through it at once crash inside LLVM.
 * IR that does not parse or verify is TKC_ECOMPILE with LLVM's message; so is a failed link (a
 * symbol nobody defines, for instance). release() removes the kernel's code from the JIT.
 * TKC_DEBUG>=7 prints the optimized IR to stderr.
 *
 * One LLJIT per process, created on first use (call_once), never disposed: it stays reachable from a
 * static, so leak checkers see no leak. Its main JITDylib searches the host process for symbols (the
 * libm calls that llvm.exp2/sin/pow become); the libgcc half conversions __truncdfhf2 & co. that
 * LLVM's code may call are always defined by this file in IR, so no kernel depends on the process's
 * compiler runtime). Target machines use the host CPU name plus
 * LLVMGetHostCPUFeatures() (the name alone may be "generic" on CPUs an LLVM does not know). Without
 * LLVMInitializeNativeAsmPrinter every lookup fails with "Failed to materialize symbols".
 *
 * Thread safety: compiles may run concurrently: each has its own LLVMContext, pass options and target
 * machine; the LLJIT is thread-safe for adding objects, lookups and removal.
 * Errors the JIT cannot hand to a caller go to an error reporter that keeps them for the failing
 * lookup's message (library code never prints).
 *
 * Buffers are 64-byte aligned host memory (the renderer declares `align 32` on every buffer).
 *
 * Cores, exactly as the CPU device: every kernel takes two trailing i32s (core, ncores) and does its
 * share of the work (see src/render/llvmir.c). A kernel whose IR splits a loop (%core.hi) and whose
 * constant RANGE trip counts multiply to at least TKC_CPU_PARALLEL_MIN_WORK runs on T = online CPUs
 * threads (at most $TKC_CPU_THREADS when set) through tkc_ffi_call_parallel; anything smaller is one
 * call with (0, 1) and creates no thread. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "runtime/device.h"
#include "runtime/disk_cache.h"
#include "runtime/host_mem.h"

/* ---------------------------------------------------------------- half conversions

 * On x86 LLVM turns fptrunc double -> half (and, without F16C, every half <-> float conversion) into
 * calls of __truncdfhf2 / __truncsfhf2 / __extendhfsf2 / __extendhfdf2, normally found in the
 * process (libgcc_s from GCC 12 on, or compiler-rt) -- or not, or only some of them. This module
 * always defines them for the JIT: integer-only IR (round to nearest even, NaN kept quiet with its top
 * payload bits, like the C renderer's fallback), so compiling it calls nothing itself. */
TKC_HIDDEN extern const char tkc_llvm_half_support_ir[]; /* tests compile it on its own */
const char tkc_llvm_half_support_ir[] =
    "define internal i16 @tkc_f64_to_f16(double %d) {\n"
    "  %b = bitcast double %d to i64\n"
    "  %s0 = lshr i64 %b, 48\n"
    "  %sign = and i64 %s0, 32768\n"
    "  %e0 = lshr i64 %b, 52\n"
    "  %e = and i64 %e0, 2047\n"
    "  %m = and i64 %b, 4503599627370495\n"
    "  %abs = and i64 %b, 9223372036854775807\n"
    "  %isnan = icmp ugt i64 %abs, 9218868437227405312\n"
    "  %mant = or i64 %m, 4503599627370496\n"
    "  %he = sub i64 %e, 1008\n"                /* the half exponent: e - 1023 + 15 */
    "  %norm = icmp sgt i64 %he, 0\n"
    "  %subsh = sub i64 43, %he\n"
    "  %sh0 = select i1 %norm, i64 42, i64 %subsh\n"
    "  %tiny = icmp ugt i64 %sh0, 62\n"
    "  %sh = select i1 %tiny, i64 62, i64 %sh0\n"
    "  %r = lshr i64 %mant, %sh\n"
    "  %one = shl i64 1, %sh\n"
    "  %mask = sub i64 %one, 1\n"
    "  %rem = and i64 %mant, %mask\n"
    "  %shm1 = sub i64 %sh, 1\n"
    "  %halfulp = shl i64 1, %shm1\n"
    "  %gt = icmp ugt i64 %rem, %halfulp\n"
    "  %eq = icmp eq i64 %rem, %halfulp\n"
    "  %odd = trunc i64 %r to i1\n"
    "  %tie = and i1 %eq, %odd\n"
    "  %up = or i1 %gt, %tie\n"
    "  %upi = zext i1 %up to i64\n"
    "  %rr = add i64 %r, %upi\n"                /* a carry into the exponent is right */
    "  %hem1 = sub i64 %he, 1\n"
    "  %ebits = shl i64 %hem1, 10\n"
    "  %nv = add i64 %ebits, %rr\n"
    "  %v0 = select i1 %norm, i64 %nv, i64 %rr\n"
    "  %v1 = select i1 %tiny, i64 0, i64 %v0\n"
    "  %ovf = icmp sgt i64 %he, 30\n"
    "  %v2 = select i1 %ovf, i64 31744, i64 %v1\n"
    "  %nm = lshr i64 %m, 42\n"
    "  %nanb = or i64 %nm, 32256\n"
    "  %v3 = select i1 %isnan, i64 %nanb, i64 %v2\n"
    "  %v4 = or i64 %v3, %sign\n"
    "  %res = trunc i64 %v4 to i16\n"
    "  ret i16 %res\n"
    "}\n"
    "define internal float @tkc_f16_to_f32(i16 %h) {\n"
    "  %u = zext i16 %h to i32\n"
    "  %sg = and i32 %u, 32768\n"
    "  %sign = shl i32 %sg, 16\n"
    "  %e0 = lshr i32 %u, 10\n"
    "  %e = and i32 %e0, 31\n"
    "  %m = and i32 %u, 1023\n"
    "  %m13 = shl i32 %m, 13\n"
    "  %special = icmp eq i32 %e, 31\n"
    "  %small = icmp eq i32 %e, 0\n"
    "  %e1 = add i32 %e, 112\n"
    "  %e23 = shl i32 %e1, 23\n"
    "  %nb = or i32 %e23, %m13\n"
    "  %ib = or i32 %m13, 2139095040\n"
    "  %mf = uitofp i32 %m to float\n"
    "  %sv = fmul float %mf, 0x3E70000000000000\n" /* subnormal: m * 2^-24, exact */
    "  %sb = bitcast float %sv to i32\n"
    "  %b0 = select i1 %small, i32 %sb, i32 %nb\n"
    "  %b1 = select i1 %special, i32 %ib, i32 %b0\n"
    "  %b2 = or i32 %b1, %sign\n"
    "  %f = bitcast i32 %b2 to float\n"
    "  ret float %f\n"
    "}\n"
    "define half @__truncdfhf2(double %d) {\n"
    "  %b = call i16 @tkc_f64_to_f16(double %d)\n"
    "  %h = bitcast i16 %b to half\n"
    "  ret half %h\n"
    "}\n"
    "define half @__truncsfhf2(float %f) {\n"
    "  %d = fpext float %f to double\n"
    "  %b = call i16 @tkc_f64_to_f16(double %d)\n"
    "  %h = bitcast i16 %b to half\n"
    "  ret half %h\n"
    "}\n"
    "define float @__extendhfsf2(half %h) {\n"
    "  %b = bitcast half %h to i16\n"
    "  %f = call float @tkc_f16_to_f32(i16 %b)\n"
    "  ret float %f\n"
    "}\n"
    "define double @__extendhfdf2(half %h) {\n"
    "  %b = bitcast half %h to i16\n"
    "  %f = call float @tkc_f16_to_f32(i16 %b)\n"
    "  %d = fpext float %f to double\n"
    "  ret double %d\n"
    "}\n";

#ifdef TKC_HAVE_LLVM

#include "runtime/ffi_call.h"
#include <stdatomic.h>
#include <pthread.h> /* not C11 threads: ThreadSanitizer sees pthread locks only */
#include <llvm-c/Analysis.h>
#include <llvm-c/Core.h>
#include <llvm-c/Error.h>
#include <llvm-c/IRReader.h>
#include <llvm-c/LLJIT.h>
#include <llvm-c/Orc.h>
#include <llvm-c/Target.h>
#include <llvm-c/TargetMachine.h>
#include <llvm-c/Transforms/PassBuilder.h>
#include <llvm/Config/llvm-config.h> /* LLVM_VERSION_STRING: a C header */

/* ---------------------------------------------------------------- the process-wide JIT */

static pthread_once_t jit_once = PTHREAD_ONCE_INIT;
static int jit_ok;
static char jit_why[512];
static LLVMOrcLLJITRef jit;
static LLVMTargetRef jit_target;
static char *host_triple, *host_cpu, *host_features; /* LLVM messages, kept for the process */
static atomic_ulong kernel_serial;

/* copies an LLVMErrorRef's message into buf and consumes the error */
static void error_text(LLVMErrorRef e, char *buf, size_t n) {
  char *m = LLVMGetErrorMessage(e);
  snprintf(buf, n, "%s", m ? m : "unknown LLVM error");
  LLVMDisposeErrorMessage(m);
}

/* Errors the JIT cannot hand to a caller, such as the symbols a kernel needs and nobody defines:
 * never printed; kept for this thread so that the failing lookup (materialization runs on the
 * looking-up thread) can say why. */
static _Thread_local char jit_report[512];

static void keep_error(void *ctx, LLVMErrorRef e) {
  (void)ctx;
  error_text(e, jit_report, sizeof jit_report);
}

static LLVMTargetMachineRef host_machine(void) {
  return LLVMCreateTargetMachine(jit_target, host_triple, host_cpu, host_features, LLVMCodeGenLevelDefault, LLVMRelocDefault,
                                 LLVMCodeModelJITDefault);
}

static tkc_status build_object(const tkc_kernel *k, const char *symbol, LLVMMemoryBufferRef *out);

/* defines the half conversions in the JIT, always: whether the process has them (and which) depends on
 * its libgcc / compiler-rt (one lacking only __truncdfhf2 failed every float64 -> float16 cast), and
 * the JIT's own definitions win over the process search (failures only mean that kernels needing
 * them report the missing symbol when they are linked) */
static void add_half_support(void) {
  tkc_kernel k = {.name = "__truncdfhf2", .source = tkc_llvm_half_support_ir};
  LLVMMemoryBufferRef obj = NULL;
  tkc_status before = tkc_last_status();
  char msg[1024];
  snprintf(msg, sizeof msg, "%s", tkc_last_error());
  if (build_object(&k, NULL, &obj) == TKC_OK) {
    LLVMErrorRef e = LLVMOrcLLJITAddObjectFile(jit, LLVMOrcLLJITGetMainJITDylib(jit), obj); /* owns obj */
    if (e) LLVMConsumeError(e);
  } else if (before) { /* the caller's last error stays what it was */
    tkc_err(before, "%s", msg);
  } else {
    tkc_clear_error();
  }
}

static void jit_init(void) {
  char *msg = NULL;
  if (LLVMInitializeNativeTarget() || LLVMInitializeNativeAsmPrinter()) {
    snprintf(jit_why, sizeof jit_why, "LLVM has no native target for this machine");
    return;
  }
  host_triple = LLVMGetDefaultTargetTriple();
  host_cpu = LLVMGetHostCPUName();
  host_features = LLVMGetHostCPUFeatures();
  if (!host_triple || !host_cpu || !host_features) {
    snprintf(jit_why, sizeof jit_why, "LLVM cannot describe the host CPU");
    return;
  }
  if (LLVMGetTargetFromTriple(host_triple, &jit_target, &msg)) {
    snprintf(jit_why, sizeof jit_why, "no LLVM target for %s: %s", host_triple, msg ? msg : "?");
    LLVMDisposeMessage(msg);
    return;
  }
  LLVMTargetMachineRef tm = host_machine();
  if (!tm) {
    snprintf(jit_why, sizeof jit_why, "LLVM cannot create a target machine for %s (%s)", host_triple, host_cpu);
    return;
  }
  LLVMOrcLLJITBuilderRef b = LLVMOrcCreateLLJITBuilder();
  LLVMOrcLLJITBuilderSetJITTargetMachineBuilder(b, LLVMOrcJITTargetMachineBuilderCreateFromTargetMachine(tm)); /* owns tm */
  LLVMErrorRef e = LLVMOrcCreateLLJIT(&jit, b); /* owns b */
  if (e) {
    char m[400];
    error_text(e, m, sizeof m);
    snprintf(jit_why, sizeof jit_why, "cannot create the LLVM JIT: %s", m);
    jit = NULL;
    return;
  }
  LLVMOrcExecutionSessionSetErrorReporter(LLVMOrcLLJITGetExecutionSession(jit), keep_error, NULL);
  LLVMOrcDefinitionGeneratorRef gen = NULL;
  e = LLVMOrcCreateDynamicLibrarySearchGeneratorForProcess(&gen, LLVMOrcLLJITGetGlobalPrefix(jit), NULL, NULL);
  if (e) {
    char m[400];
    error_text(e, m, sizeof m);
    snprintf(jit_why, sizeof jit_why, "LLVM JIT cannot search the process for symbols: %s", m);
    return;
  }
  LLVMOrcJITDylibAddGenerator(LLVMOrcLLJITGetMainJITDylib(jit), gen); /* owns gen */
  jit_ok = 1;
  add_half_support();
}

static int llvm_available(char *why, size_t n) {
  pthread_once(&jit_once, jit_init);
  if (!jit_ok && why && n) snprintf(why, n, "%s", jit_why);
  return jit_ok;
}

/* ---------------------------------------------------------------- compile */

/* Symbols named by content (so that the object code is the same in every process and can come from
 * the disk cache) must be unique among the live kernels of the JIT: a set of the claimed ones. */
typedef struct live_symbol {
  struct live_symbol *next;
  char name[300];
} live_symbol;
static live_symbol *live_symbols;
static pthread_mutex_t live_lock;
static pthread_once_t live_once = PTHREAD_ONCE_INIT;
static void live_init(void) { pthread_mutex_init(&live_lock, NULL); }

/* claims name; NULL when another live kernel has it */
static live_symbol *claim_symbol(const char *name) {
  pthread_once(&live_once, live_init);
  pthread_mutex_lock(&live_lock);
  live_symbol *s = live_symbols;
  while (s && strcmp(s->name, name)) s = s->next;
  live_symbol *mine = s ? NULL : tkc_calloc(1, sizeof *mine);
  if (mine) {
    snprintf(mine->name, sizeof mine->name, "%s", name);
    mine->next = live_symbols;
    live_symbols = mine;
  }
  pthread_mutex_unlock(&live_lock);
  return mine;
}

static void unclaim_symbol(live_symbol *mine) {
  if (!mine) return;
  pthread_mutex_lock(&live_lock);
  for (live_symbol **pp = &live_symbols; *pp; pp = &(*pp)->next)
    if (*pp == mine) {
      *pp = mine->next;
      break;
    }
  pthread_mutex_unlock(&live_lock);
  tkc_free(mine);
}

typedef struct llvm_prog {
  LLVMOrcResourceTrackerRef rt;
  live_symbol *symbol; /* the content-named symbol it holds, if any */
  void (*fn)(void);
  tkc_ffi_sig sig;
  bool parallel; /* big enough to spread across cores, and the IR splits a loop */
} llvm_prog;

static void prog_free(llvm_prog *p) {
  if (!p) return;
  if (p->rt) {
    LLVMErrorRef e = LLVMOrcResourceTrackerRemove(p->rt);
    if (e) LLVMConsumeError(e);
    LLVMOrcReleaseResourceTracker(p->rt);
    LLVMOrcSymbolStringPoolClearDeadEntries(LLVMOrcExecutionSessionGetSymbolStringPool(LLVMOrcLLJITGetExecutionSession(jit)));
  }
  unclaim_symbol(p->symbol);
  tkc_ffi_release(&p->sig);
  tkc_free(p);
}

/* the disk cache key of k's object code as symbol */
static char *object_key(const tkc_kernel *k, const char *symbol, size_t *n) {
  tkc_sbuf b = {0};
  tkc_sbuf_printf(&b, "tkc %s LLVM %s object\n%s %s %s\nO2 %s\n%s", tkc_version(), LLVM_VERSION_STRING, host_triple, host_cpu, host_features,
                  symbol, k->source);
  *n = b.s ? strlen(b.s) : 0;
  return tkc_sbuf_take(&b);
}

/* parses, verifies, optimizes and compiles k's IR to an object file in memory (a context and target
 * machine of its own, so compiles run in parallel), the function k->name renamed to symbol (unless
 * NULL); TKC_OK or the error */
static tkc_status build_object(const tkc_kernel *k, const char *symbol, LLVMMemoryBufferRef *out) {
  char *msg = NULL;
  *out = NULL;
  LLVMContextRef ctx = LLVMContextCreate();
  LLVMMemoryBufferRef buf = ctx ? LLVMCreateMemoryBufferWithMemoryRangeCopy(k->source, strlen(k->source), k->name) : NULL;
  if (!buf) {
    if (ctx) LLVMContextDispose(ctx);
    return tkc_err(TKC_ENOMEM, "LLVM: out of memory copying kernel %s", k->name);
  }
  LLVMModuleRef mod = NULL;
  LLVMTargetMachineRef tm = NULL;
  LLVMPassBuilderOptionsRef opts = NULL;
  tkc_status st = TKC_OK;
  if (LLVMParseIRInContext(ctx, buf, &mod, &msg)) { /* owns buf */
    st = tkc_err(TKC_ECOMPILE, "LLVM: kernel %s does not parse: %s", k->name, msg ? msg : "?");
    mod = NULL;
    goto done;
  }
  if (LLVMVerifyModule(mod, LLVMReturnStatusAction, &msg)) {
    st = tkc_err(TKC_ECOMPILE, "LLVM: kernel %s is not valid IR: %s", k->name, msg ? msg : "?");
    goto done;
  }
  LLVMValueRef fn = LLVMGetNamedFunction(mod, k->name);
  if (!fn || LLVMIsDeclaration(fn)) {
    st = tkc_err(TKC_ECOMPILE, "LLVM: the IR defines no function @%s", k->name);
    goto done;
  }
  if (symbol) LLVMSetValueName2(fn, symbol, strlen(symbol));
  LLVMSetTarget(mod, LLVMOrcLLJITGetTripleString(jit));
  LLVMSetDataLayout(mod, LLVMOrcLLJITGetDataLayoutStr(jit));

  tm = host_machine();
  opts = LLVMCreatePassBuilderOptions();
  if (!tm || !opts) {
    st = tkc_err(TKC_ERUNTIME, "LLVM: cannot create the optimizer for kernel %s", k->name);
    goto done;
  }
  LLVMPassBuilderOptionsSetLoopUnrolling(opts, 1);
  LLVMPassBuilderOptionsSetLoopVectorization(opts, 1);
  LLVMPassBuilderOptionsSetSLPVectorization(opts, 1);
  LLVMPassBuilderOptionsSetLoopInterleaving(opts, 1);
  LLVMErrorRef e = LLVMRunPasses(mod, "default<O2>", tm, opts);
  if (e) {
    char m[600];
    error_text(e, m, sizeof m);
    st = tkc_err(TKC_ECOMPILE, "LLVM: optimizing kernel %s failed: %s", k->name, m);
    goto done;
  }
  if (tkc_debug_level() >= 7) { /* the optimized IR */
    char *ir = LLVMPrintModuleToString(mod);
    if (ir) fprintf(stderr, "%s\n", ir);
    LLVMDisposeMessage(ir);
  }
  LLVMDisposeMessage(msg);
  msg = NULL;
  if (LLVMTargetMachineEmitToMemoryBuffer(tm, mod, LLVMObjectFile, &msg, out)) {
    st = tkc_err(TKC_ECOMPILE, "LLVM: code generation for kernel %s failed: %s", k->name, msg ? msg : "?");
    *out = NULL;
  }
done:
  LLVMDisposeMessage(msg);
  if (opts) LLVMDisposePassBuilderOptions(opts);
  if (tm) LLVMDisposeTargetMachine(tm);
  if (mod) LLVMDisposeModule(mod);
  LLVMContextDispose(ctx);
  return st;
}

static tkc_status llvm_compile(const tkc_kernel *k, void **handle) {
  if (!handle) return tkc_err(TKC_EINVAL, "LLVM: compile needs a handle pointer");
  *handle = NULL;
  if (!k || !k->name || !k->source || k->nbufs < 0 || k->nvars < 0) return tkc_err(TKC_EINVAL, "LLVM: compile of an incomplete kernel");
  tkc_status st = tkc_kernel_check_signature(k, "LLVM");
  if (st) return st;
  char why[600];
  if (!llvm_available(why, sizeof why)) return tkc_err(TKC_EDEVICE, "LLVM: %s", why);

  /* the symbol: named by the IR's content, so the object can come from / go to the disk cache;
   * a serial number when another live kernel has that name */
  char symbol[300];
  snprintf(symbol, sizeof symbol, "tkc_llvm_%016llx_%.200s", (unsigned long long)tkc_hash64(k->source, strlen(k->source), 0), k->name);
  live_symbol *claimed = claim_symbol(symbol);
  if (!claimed) snprintf(symbol, sizeof symbol, "tkc_llvm_%lu_%.200s", (unsigned long)atomic_fetch_add(&kernel_serial, 1), k->name);
  size_t keylen = 0, cached_len = 0;
  char *key = claimed && tkc_dcache_on() ? object_key(k, symbol, &keylen) : NULL;
  void *cached = key ? tkc_dcache_get("llvm", key, keylen, &cached_len) : NULL;
  LLVMMemoryBufferRef obj = cached ? LLVMCreateMemoryBufferWithMemoryRangeCopy(cached, cached_len, symbol) : NULL;
  tkc_free(cached);
  if (!obj) {
    st = build_object(k, symbol, &obj);
    if (!st && key) tkc_dcache_put("llvm", key, keylen, LLVMGetBufferStart(obj), LLVMGetBufferSize(obj));
  }
  tkc_free(key);
  if (st) {
    unclaim_symbol(claimed);
    return st;
  }
  llvm_prog *p = tkc_calloc(1, sizeof *p);
  if (!p) {
    unclaim_symbol(claimed);
    LLVMDisposeMemoryBuffer(obj);
    return tkc_err(TKC_ENOMEM, "LLVM: out of memory");
  }
  p->symbol = claimed;
  p->rt = LLVMOrcJITDylibCreateResourceTracker(LLVMOrcLLJITGetMainJITDylib(jit));
  LLVMErrorRef e = LLVMOrcLLJITAddObjectFileWithRT(jit, p->rt, obj); /* owns obj, even on error */
  LLVMOrcExecutorAddress addr = 0;
  jit_report[0] = 0;
  if (!e) e = LLVMOrcLLJITLookup(jit, &addr, symbol); /* links the object into this process */
  if (e || !addr) {
    char m[600] = "the symbol has address 0";
    if (e) error_text(e, m, sizeof m);
    prog_free(p);
    return tkc_err(TKC_ECOMPILE, "LLVM: JIT linking kernel %s failed: %s%s%s", k->name, m, jit_report[0] ? ": " : "", jit_report);
  }
  void *sym = (void *)(uintptr_t)addr;
  memcpy(&p->fn, &sym, sizeof p->fn); /* object -> function pointer without a cast warning */
  /* the kernel takes (bufs..., vars..., core, ncores): see src/render/llvmir.c */
  if ((st = tkc_ffi_prepare_ex(&p->sig, k->nbufs, k->nvars, 2, "LLVM"))) {
    prog_free(p);
    return st;
  }
  p->parallel = strstr(k->source, "%core.hi") != NULL && tkc_kernel_work_estimate(k) >= TKC_CPU_PARALLEL_MIN_WORK;
  *handle = p;
  return TKC_OK;
}

static void llvm_release(void *handle) { prog_free(handle); }

/* ---------------------------------------------------------------- launch */

static tkc_status llvm_launch(const tkc_kernel *k, void *handle, void *const *bufs, const int64_t *vars) {
  (void)k;
  llvm_prog *p = handle;
  if (!p || !p->fn) return tkc_err(TKC_EINVAL, "LLVM: launch of a kernel that was not compiled");
  return tkc_ffi_call_parallel(&p->sig, p->fn, bufs, vars, p->parallel ? tkc_ffi_threads() : 1, "LLVM");
}

#else /* !TKC_HAVE_LLVM */

static const char no_llvm[] = "built without LLVM (install LLVM 15 or newer, e.g. llvm-16-dev, and reconfigure; see cmake/llvm.cmake)";

static int llvm_available(char *why, size_t n) {
  if (why && n) snprintf(why, n, "%s", no_llvm);
  return 0;
}

static tkc_status llvm_compile(const tkc_kernel *k, void **handle) {
  (void)k;
  if (handle) *handle = NULL;
  return tkc_err(TKC_EDEVICE, "LLVM: %s", no_llvm);
}

static void llvm_release(void *handle) { (void)handle; }

static tkc_status llvm_launch(const tkc_kernel *k, void *handle, void *const *bufs, const int64_t *vars) {
  (void)k, (void)handle, (void)bufs, (void)vars;
  return tkc_err(TKC_EDEVICE, "LLVM: %s", no_llvm);
}

#endif

const tkc_device_impl tkc_device_llvm = {
    .name = "LLVM",
    .renderer = "LLVM",
    .available = llvm_available,
    .alloc = tkc_host_alloc,
    .alloc_uninit = tkc_host_alloc_uninit,
    .host_memory = true,
    .free = tkc_host_free,
    .copyin = tkc_host_copy,
    .copyout = tkc_host_copy,
    .compile = llvm_compile,
    .compile_threadsafe = true, /* a context and target machine per compile; ORC links concurrently */
    .release = llvm_release,
    .launch = llvm_launch,
};
