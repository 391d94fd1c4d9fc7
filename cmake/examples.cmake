# cmake/examples.cmake — the Python (ctypes) and C++ examples, built and run by the test suite.
#
# Included at the end of CMakeLists.txt (after the tkc / tkc_static targets and enable_testing()).
#
#   python_example   python3 examples/python/quickstart.py with TKC_LIB = the built libtkc.so
#                    (not registered when no python3 is found: a status line says so)
#   cpp_example      examples/cpp/quickstart.cpp built with the C++ compiler (-pedantic -Werror, which also
#                    checks that the public headers are C++-clean) and run (not registered without a C++
#                    compiler)
#   mlp_loop_example examples/mlp_loop.c: 50 scoped iterations of an MLP, logits checked against C

# ---------------------------------------------------------------- Python
find_program(TKC_PYTHON3 NAMES python3 DOC "python3 for the ctypes example")
set(_tkc_py_env TKC_LIB=$<TARGET_FILE:tkc>)
set(_tkc_py_ok ${TKC_PYTHON3})
if(TKC_PYTHON3 AND TKC_SANITIZE)
  # an ASan-built libtkc.so loads into python only after the ASan runtime: preload it (the compiler
  # says where it is); CPython's own allocations at exit are not leaks of ours
  set(_tkc_asan_rt "")
  foreach(_name libasan.so libclang_rt.asan-${CMAKE_SYSTEM_PROCESSOR}.so)
    execute_process(COMMAND ${CMAKE_C_COMPILER} -print-file-name=${_name} OUTPUT_VARIABLE _path
                    OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
    if(NOT _tkc_asan_rt AND IS_ABSOLUTE "${_path}" AND EXISTS "${_path}")
      set(_tkc_asan_rt "${_path}")
    endif()
  endforeach()
  if(_tkc_asan_rt)
    list(APPEND _tkc_py_env LD_PRELOAD=${_tkc_asan_rt} ASAN_OPTIONS=detect_leaks=0)
  else()
    message(STATUS "tkc: no ASan runtime to preload into python3: the python_example test is not registered")
    set(_tkc_py_ok "")
  endif()
endif()
if(_tkc_py_ok)
  add_test(NAME python_example
           COMMAND ${CMAKE_COMMAND} -E env ${_tkc_py_env}
                   ${TKC_PYTHON3} ${CMAKE_SOURCE_DIR}/examples/python/quickstart.py)
  set_tests_properties(python_example PROPERTIES TIMEOUT 300)
elseif(NOT TKC_PYTHON3)
  message(STATUS "tkc: no python3 found: the python_example test is not registered")
endif()

# ---------------------------------------------------------------- C++
include(CheckLanguage)
check_language(CXX)
if(CMAKE_CXX_COMPILER)
  enable_language(CXX)
  add_executable(cpp_quickstart ${CMAKE_SOURCE_DIR}/examples/cpp/quickstart.cpp)
  set_target_properties(cpp_quickstart PROPERTIES CXX_STANDARD 11 CXX_STANDARD_REQUIRED ON CXX_EXTENSIONS OFF)
  # the directory's C warning flags reach C++ targets too; -Wstrict-prototypes is C-only
  get_target_property(_tkc_cxx_opts cpp_quickstart COMPILE_OPTIONS)
  if(_tkc_cxx_opts)
    list(REMOVE_ITEM _tkc_cxx_opts -Wstrict-prototypes)
    set_property(TARGET cpp_quickstart PROPERTY COMPILE_OPTIONS ${_tkc_cxx_opts})
  endif()
  target_compile_options(cpp_quickstart PRIVATE -Wall -Wextra -pedantic -Werror)
  target_link_libraries(cpp_quickstart PRIVATE tkc_static)
  add_test(NAME cpp_example COMMAND cpp_quickstart)
  set_tests_properties(cpp_example PROPERTIES TIMEOUT 300)
else()
  message(STATUS "tkc: no C++ compiler found: the cpp_example test is not registered")
endif()

# ---------------------------------------------------------------- the inference loop (examples/mlp_loop.c)
# 50 iterations on the default device: checks its logits against plain C and exits non-zero otherwise
add_test(NAME mlp_loop_example COMMAND mlp_loop 50)
set_tests_properties(mlp_loop_example PROPERTIES TIMEOUT 300)
