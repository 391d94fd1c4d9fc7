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
#   charlm_example   examples/charlm.c: a char-level transformer LM, 24 greedy steps checked against C

include(${CMAKE_CURRENT_LIST_DIR}/python.cmake)
include(${CMAKE_CURRENT_LIST_DIR}/cpp.cmake)

# ---------------------------------------------------------------- the inference loop (examples/mlp_loop.c)
# 50 iterations on the default device: checks its logits against plain C and exits non-zero otherwise
add_test(NAME mlp_loop_example COMMAND mlp_loop 50)
set_tests_properties(mlp_loop_example PROPERTIES TIMEOUT 300)

# ---------------------------------------------------------------- the char-level LM (examples/charlm.c)
# 24 greedy steps of a one-block transformer on the default device, each checked against plain C
add_test(NAME charlm_example COMMAND charlm 24)
set_tests_properties(charlm_example PROPERTIES TIMEOUT 300 ENVIRONMENT "TKC_CACHE_DIR=${TKC_TEST_CACHE_DIR}")
