# Makefile — a thin wrapper over CMake (GNU make). The real build lives in CMakeLists.txt.
#
#   make            same as `make build`
#   make run        build, then run build/quickstart
#   make test       build, then run every test suite with ctest
#   make bench      build, then run every build/bench_* (JSON lines on stdout; build log on stderr)
#   make asan       configure build-asan with -fsanitize=address,undefined and run the suite there
#                   (kernels compiled by `make test` come from its on-disk kernel cache: the same bytes)
#   make fuzz       build, then run tests/fuzz/fuzz_tensor on every device for FUZZ_MINUTES (default 5) from
#                   FUZZ_SEED (default: the time), and with clang the libFuzzer targets a minute each (build-fuzz):
#                   the pattern matcher, the symbolic simplifier, the ONNX, GGUF and safetensors loaders
#   make tsan       configure build-tsan with -fsanitize=thread and run the suites that use threads there
#   make install    build, then install into PREFIX (default /usr/local): library, headers, CMake package, tkc.pc
#   make deps       install missing Debian/Ubuntu packages (scripts/install-deps.sh)
#   make clean      remove the build directories
#
# A build directory is configured once. `CC=clang make test` (or `make CC=clang test`) uses that
# compiler; giving a different CC than the one a build directory was configured with wipes and
# reconfigures that directory. Other CMake options: `make CMAKE_ARGS='-DTKC_WERROR=ON'`
# (applied when a directory is configured: run `make clean` first to change them).

BUILD_DIR  ?= build
PREFIX     ?= /usr/local
ASAN_DIR   ?= build-asan
TSAN_DIR   ?= build-tsan
CMAKE      ?= cmake
CTEST      ?= ctest
CMAKE_ARGS ?=
JOBS       ?= $(shell nproc 2>/dev/null || getconf _NPROCESSORS_ONLN 2>/dev/null || echo 2)
CTEST_JOBS ?= 2

# Pass CC to CMake only when the user gave one (make's built-in default is "cc").
ifeq ($(origin CC),default)
CC_WANT :=
else
CC_WANT := $(CC)
endif
CC_FLAG := $(if $(CC_WANT),-DCMAKE_C_COMPILER=$(CC_WANT))

# cmake --build runs its own make: keep ours (jobserver, -w, -n) out of its environment.
CMAKE_BUILD := env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL $(CMAKE) --build

# tests/lsan.supp: leaks inside third-party libraries (each entry says why); nothing of tkc's
ASAN_ENV := ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
            LSAN_OPTIONS=suppressions=$(CURDIR)/tests/lsan.supp

.DEFAULT_GOAL := build
.PHONY: all deps build test run bench asan tsan clean install fuzz

all: build

deps:
	@scripts/install-deps.sh

# $(call configure,DIR,EXTRA_CMAKE_ARGS): configure DIR unless it already was (with this CC).
# The stamp DIR/.tkc-configured is written only after a successful configure and holds CC.
define configure
	@if [ -f $(1)/.tkc-configured ] && [ -n "$(CC_WANT)" ] && \
	    [ "$$(cat $(1)/.tkc-configured)" != "$(CC_WANT)" ]; then \
	  echo "make: CC changed to '$(CC_WANT)': reconfiguring $(1)"; rm -rf $(1); \
	fi
	@if [ ! -f $(1)/.tkc-configured ]; then \
	  echo '$(strip $(CMAKE) -S . -B $(1) $(2) $(CC_FLAG) $(CMAKE_ARGS))'; \
	  $(CMAKE) -S . -B $(1) $(2) $(CC_FLAG) $(CMAKE_ARGS) && \
	  printf '%s\n' "$(CC_WANT)" > $(1)/.tkc-configured; \
	fi
endef

build: deps
	$(call configure,$(BUILD_DIR),-DCMAKE_BUILD_TYPE=RelWithDebInfo)
	$(CMAKE_BUILD) $(BUILD_DIR) -j$(JOBS)

test: build
	$(CTEST) --test-dir $(BUILD_DIR) --output-on-failure --no-tests=error -j$(CTEST_JOBS)

install: build
	$(CMAKE) --install $(BUILD_DIR) --prefix $(PREFIX)

run: build
	./$(BUILD_DIR)/quickstart

# Everything but the benchmarks' own output goes to stderr, so `make -s bench > out.jsonl` works.
bench:
	@$(MAKE) --no-print-directory build >&2
	@found=0; failed=0; \
	for b in $(BUILD_DIR)/bench_*; do \
	  [ -f "$$b" ] && [ -x "$$b" ] || continue; \
	  found=1; echo "== $$b" >&2; \
	  "$$b" || { echo "make: $$b failed" >&2; failed=1; }; \
	done; \
	[ $$found = 1 ] || echo "make: no benchmarks built ($(BUILD_DIR)/bench_*)" >&2; \
	exit $$failed

# The TKC_NOOPT=1 repeats (*_noopt) skip the optimizer, so their host code is mostly a subset of the
# optimized runs' (make test still runs them); leaving them out here keeps CI under its time limit.
asan: deps
	$(call configure,$(ASAN_DIR),-DTKC_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug -DTKC_TEST_CACHE_DIR=$(abspath $(BUILD_DIR))/test-kernel-cache)
	$(CMAKE_BUILD) $(ASAN_DIR) -j$(JOBS)
	$(ASAN_ENV) $(CTEST) --test-dir $(ASAN_DIR) --output-on-failure --no-tests=error -j$(CTEST_JOBS) -E '_noopt$$'

# the suites with threads: several ctxs at once, parallel compiles, threaded CPU kernels, beam, caches
TSAN_TESTS := ^(test_tensor_composite|test_llvm|test_wgsl|test_beam|test_tensor_memory|test_disk_cache|test_cpu_runtime|test_cpu_compiler|test_thread_pool)$$
tsan: deps
	$(call configure,$(TSAN_DIR),-DTKC_TSAN=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTKC_TEST_CACHE_DIR=$(abspath $(BUILD_DIR))/test-kernel-cache)
	$(CMAKE_BUILD) $(TSAN_DIR) -j$(JOBS)
	TSAN_OPTIONS=halt_on_error=1 $(CTEST) --test-dir $(TSAN_DIR) --output-on-failure --no-tests=error -j$(CTEST_JOBS) -R '$(TSAN_TESTS)'

clean:
	rm -rf $(BUILD_DIR) $(ASAN_DIR) $(TSAN_DIR) build-fuzz build-warn-*

FUZZ_MINUTES ?= 5
FUZZ_SEED    ?= $(shell date +%s)
FUZZ_DIR     ?= build-fuzz
# fuzz_tensor in BUILD_DIR (its own kernel cache); the libFuzzer targets need clang: FUZZ_DIR is
# configured with it once, and each target keeps its corpus in FUZZ_DIR/corpus-NAME between runs.
fuzz: deps
	$(call configure,$(BUILD_DIR),-DCMAKE_BUILD_TYPE=RelWithDebInfo)
	@$(CMAKE) -S . -B $(BUILD_DIR) > /dev/null # a directory configured before cmake/fuzz.cmake existed learns of it
	$(CMAKE_BUILD) $(BUILD_DIR) -j$(JOBS) --target fuzz_tensor
	@failed=0; \
	TKC_CACHE_DIR=$(abspath $(BUILD_DIR))/fuzz-kernel-cache ./$(BUILD_DIR)/fuzz_tensor --seed $(FUZZ_SEED) --minutes $(FUZZ_MINUTES) || failed=1; \
	if ! command -v clang >/dev/null; then echo "make: no clang: skipping the libFuzzer targets"; exit $$failed; fi; \
	if [ ! -f $(FUZZ_DIR)/.tkc-configured ]; then \
	  $(CMAKE) -S . -B $(FUZZ_DIR) -DCMAKE_C_COMPILER=clang -DCMAKE_BUILD_TYPE=RelWithDebInfo $(CMAKE_ARGS) && echo clang > $(FUZZ_DIR)/.tkc-configured || exit 1; \
	fi; \
	$(CMAKE_BUILD) $(FUZZ_DIR) -j$(JOBS) --target fuzz_pattern_libfuzzer fuzz_symbolic_libfuzzer || exit 1; \
	targets="fuzz_pattern fuzz_symbolic"; \
	if $(CMAKE_BUILD) $(FUZZ_DIR) -j$(JOBS) --target fuzz_onnx_libfuzzer >/dev/null 2>&1; then targets="$$targets fuzz_onnx"; \
	else echo "make: no ONNX frontend in $(FUZZ_DIR) (protobuf-c missing): skipping fuzz_onnx"; fi; \
	$(CMAKE_BUILD) $(FUZZ_DIR) -j$(JOBS) --target fuzz_gguf_libfuzzer || exit 1; targets="$$targets fuzz_gguf"; \
	if $(CMAKE_BUILD) $(FUZZ_DIR) -j$(JOBS) --target fuzz_safetensors_libfuzzer >/dev/null 2>&1; then targets="$$targets fuzz_safetensors"; \
	else echo "make: no jansson in $(FUZZ_DIR): skipping fuzz_safetensors"; fi; \
	for t in $$targets; do \
	  mkdir -p $(FUZZ_DIR)/corpus-$$t; echo "== $$t (libFuzzer, 60 s)"; \
	  $(FUZZ_DIR)/$${t}_libfuzzer -max_total_time=60 -print_final_stats=1 -artifact_prefix=$(FUZZ_DIR)/$$t- $(FUZZ_DIR)/corpus-$$t || failed=1; \
	done; \
	exit $$failed
