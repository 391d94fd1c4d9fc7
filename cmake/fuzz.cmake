# Fuzzers (tests/fuzz/): built with the tests, short fixed-seed runs registered with ctest.
#   fuzz_tensor      differential fuzzer of the tensor API over every available device
#   fuzz_symbolic    random integer expressions: the symbolic simplifier must keep their values
#   fuzz_pattern     arbitrary pattern strings: tkc_matcher_new must fail cleanly, never crash
# With clang, fuzz_pattern_libfuzzer / fuzz_symbolic_libfuzzer are the same targets built for
# libFuzzer (-fsanitize=fuzzer,address,undefined): not in ctest, run by `make fuzz`.
set(TKC_FUZZ_DIR ${PROJECT_SOURCE_DIR}/tests/fuzz)

# NAME_libfuzzer from tests/fuzz/NAME.c on the instrumented library (tkc_fuzz_objs, below): out of
# `all`, built and run by `make fuzz`; also used by cmake/onnx.cmake and cmake/io.cmake
function(tkc_libfuzzer_target name)
  add_executable(${name}_libfuzzer ${TKC_FUZZ_DIR}/${name}.c)
  target_compile_options(${name}_libfuzzer PRIVATE -fsanitize=fuzzer,address,undefined -fno-omit-frame-pointer)
  target_link_options(${name}_libfuzzer PRIVATE -fsanitize=fuzzer,address,undefined)
  target_link_libraries(${name}_libfuzzer PRIVATE tkc_fuzz_objs)
  set_target_properties(${name}_libfuzzer PROPERTIES EXCLUDE_FROM_ALL ON)
endfunction()

add_executable(fuzz_tensor ${TKC_FUZZ_DIR}/fuzz_tensor.c ${TKC_FUZZ_DIR}/fz_gen.c ${TKC_FUZZ_DIR}/fz_ref.c ${TKC_FUZZ_DIR}/fz_run.c)
target_link_libraries(fuzz_tensor PRIVATE tkc_static)
foreach(name fuzz_symbolic fuzz_pattern)
  add_executable(${name} ${TKC_FUZZ_DIR}/${name}.c)
  target_link_libraries(${name} PRIVATE tkc_static)
endforeach()

# ~30-60 s on a 2-CPU machine with INTERP, CPU, LLVM and WEBGPU
add_test(NAME fuzz_tensor_short COMMAND fuzz_tensor --seed 2000 --count 40)
add_test(NAME fuzz_symbolic_short COMMAND fuzz_symbolic --seed 1 --count 20000)
add_test(NAME fuzz_pattern_short COMMAND fuzz_pattern --seed 1 --count 100000)
set_tests_properties(fuzz_tensor_short fuzz_symbolic_short fuzz_pattern_short PROPERTIES
  ENVIRONMENT "TKC_CACHE_DIR=${TKC_TEST_CACHE_DIR}" TIMEOUT 600 LABELS fuzz)

if(CMAKE_C_COMPILER_ID MATCHES "Clang")
  include(CheckCSourceCompiles)
  set(CMAKE_REQUIRED_FLAGS "-fsanitize=fuzzer")
  check_c_source_compiles("#include <stddef.h>
#include <stdint.h>
int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) { (void)d; (void)n; return 0; }" TKC_HAVE_LIBFUZZER)
  unset(CMAKE_REQUIRED_FLAGS)
  if(TKC_HAVE_LIBFUZZER)
    # the library's objects again, instrumented for coverage and the sanitizers
    add_library(tkc_fuzz_objs STATIC ${TKC_SOURCES})
    target_include_directories(tkc_fuzz_objs PUBLIC ${PROJECT_SOURCE_DIR}/include PRIVATE ${PROJECT_SOURCE_DIR}/src ${FFI_INCLUDE})
    # -Wno-error: third-party headers (LLVM's) are not included as system headers here
    target_compile_options(tkc_fuzz_objs PRIVATE -fsanitize=fuzzer-no-link,address,undefined -fno-omit-frame-pointer -Wno-error)
    set_target_properties(tkc_fuzz_objs PROPERTIES EXCLUDE_FROM_ALL ON)
    target_link_libraries(tkc_fuzz_objs PUBLIC ${TKC_LINK_DEPS})
    get_target_property(_tkc_defs tkc_objs COMPILE_DEFINITIONS)
    if(_tkc_defs)
      target_compile_definitions(tkc_fuzz_objs PRIVATE ${_tkc_defs})
    endif()
    get_target_property(_tkc_incs tkc_objs INCLUDE_DIRECTORIES)
    if(_tkc_incs)
      target_include_directories(tkc_fuzz_objs PRIVATE ${_tkc_incs})
    endif()
    foreach(name fuzz_symbolic fuzz_pattern)
      tkc_libfuzzer_target(${name})
      target_compile_definitions(${name}_libfuzzer PRIVATE FZ_LIBFUZZER=1)
    endforeach()
  endif()
endif()
