# cmake/examples.cmake — the examples (C, Python, C++), built and run by the test suite.
#
# Included at the end of CMakeLists.txt (after the tkc / tkc_static targets and enable_testing()).
#
#   python_example, python_package   cmake/python.cmake: examples/python/quickstart.py and the pytest suite
#                    of bindings/python (not registered without python3 + numpy / pytest)
#   cpp_example, cpp_example_cxx20, cpp_header_test   cmake/cpp.cmake: examples/cpp/quickstart.cpp through
#                    include/tkc.hpp (C++17 and C++20) and tests/cpp/test_tkc_hpp.cpp
#   mlp_loop_example examples/mlp_loop.c: 50 scoped iterations of an MLP, logits checked against C
#   charlm_example   examples/charlm.c: a char-level transformer LM, 24 greedy steps checked against C
#   kv_attention_example   examples/kv_attention.c: attention over a growing KV cache, 256 steps of one
#                    captured step, each checked against C
#   llama_example    examples/llama.c: a tiny random llama GGUF (Q4_0) written by tests/test_llama_py.py, 32
#                    greedy ids against its numpy reference, and seeded sampling (skipped without gguf)
#   train_digits_{mlp,cnn}_{cpu,llvm}   examples/train_digits.c: an MLP and a CNN trained on scikit-learn's
#                    8x8 digits, >= 95% held-out accuracy required (skipped when scikit-learn is missing)

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

# ---------------------------------------------------------------- attention over a KV cache (examples/kv_attention.c)
# all 256 positions on the default device, the step captured once and replayed, each checked against C
add_test(NAME kv_attention_example COMMAND kv_attention 256)
set_tests_properties(kv_attention_example PROPERTIES TIMEOUT 300 ENVIRONMENT "TKC_CACHE_DIR=${TKC_TEST_CACHE_DIR}")

# ---------------------------------------------------------------- text generation (examples/llama.c)
# the model file is written by the gguf package: tests/test_llama_py.py exits 77 (skipped) without it
find_package(Python3 COMPONENTS Interpreter QUIET)
if(Python3_Interpreter_FOUND)
  add_test(NAME llama_example COMMAND ${Python3_EXECUTABLE} ${PROJECT_SOURCE_DIR}/tests/test_llama_py.py --example $<TARGET_FILE:llama>)
  set_tests_properties(llama_example PROPERTIES TIMEOUT 300 SKIP_RETURN_CODE 77
                       ENVIRONMENT "TKC_CACHE_DIR=${TKC_TEST_CACHE_DIR};NODEVICE_SELECT=1")
endif()

# ---------------------------------------------------------------- training (examples/train_digits.c)
# scikit-learn ships the digits data (sklearn/datasets/data/digits.csv.gz); scripts/install-deps.sh installs it
find_package(Python3 COMPONENTS Interpreter QUIET)
set(TKC_DIGITS_CSV "")
if(Python3_Interpreter_FOUND)
  execute_process(COMMAND ${Python3_EXECUTABLE} -c
                          "import os, sklearn.datasets as d; print(os.path.join(os.path.dirname(d.__file__), 'data', 'digits.csv.gz'))"
                  OUTPUT_VARIABLE TKC_DIGITS_CSV OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
endif()
foreach(model mlp cnn)
  foreach(dev CPU LLVM)
    string(TOLOWER ${dev} ldev)
    if(TKC_DIGITS_CSV AND EXISTS "${TKC_DIGITS_CSV}")
      add_test(NAME train_digits_${model}_${ldev} COMMAND train_digits ${TKC_DIGITS_CSV} ${model} ${dev} 0 0.95)
    else()
      add_test(NAME train_digits_${model}_${ldev} COMMAND ${CMAKE_COMMAND} -E echo "skipped: scikit-learn (its digits.csv.gz) is not installed")
      set_tests_properties(train_digits_${model}_${ldev} PROPERTIES SKIP_REGULAR_EXPRESSION "skipped:")
    endif()
    set_tests_properties(train_digits_${model}_${ldev} PROPERTIES TIMEOUT 600 ENVIRONMENT "TKC_CACHE_DIR=${TKC_TEST_CACHE_DIR}")
  endforeach()
endforeach()
