# cmake/python.cmake — the Python package's tests (included from cmake/examples.cmake).
#
#   python_example   examples/python/quickstart.py (it imports bindings/python/tkc) with TKC_LIB = the built libtkc.so
#   python_train_digits  examples/python/train_digits.py: an MLP trained on scikit-learn's digits, >= 95% held-out
#                    accuracy required (skipped when scikit-learn is missing)
#   python_package   python3 -m pytest -q bindings/python/tests, the same library, PYTHONPATH = bindings/python
#
# The package needs numpy, its tests pytest (scripts/install-deps.sh installs both): without python3 + numpy neither
# test is registered, without pytest python_package is not; a status line says so.

find_program(TKC_PYTHON3 NAMES python3 DOC "python3 for the Python package's tests")
if(NOT DEFINED TKC_TEST_CACHE_DIR)
  set(TKC_TEST_CACHE_DIR "${CMAKE_BINARY_DIR}/test-kernel-cache")
endif()
set(_tkc_py_env TKC_LIB=$<TARGET_FILE:tkc> TKC_CACHE_DIR=${TKC_TEST_CACHE_DIR})
set(_tkc_py_ok ${TKC_PYTHON3})
include(${CMAKE_CURRENT_LIST_DIR}/py_sanitize.cmake)
tkc_python_sanitizer_env(_tkc_san_env)
if(TKC_PYTHON3 AND "${_tkc_san_env}" STREQUAL "NOTFOUND")
  message(STATUS "tkc: no ASan runtime to preload into python3: the python tests are not registered")
  set(_tkc_py_ok "")
elseif(TKC_PYTHON3)
  list(APPEND _tkc_py_env ${_tkc_san_env})
endif()
if(_tkc_py_ok)
  execute_process(COMMAND ${TKC_PYTHON3} -c "import numpy" RESULT_VARIABLE _tkc_numpy_rc OUTPUT_QUIET ERROR_QUIET)
  execute_process(COMMAND ${TKC_PYTHON3} -c "import pytest" RESULT_VARIABLE _tkc_pytest_rc OUTPUT_QUIET ERROR_QUIET)
  if(NOT _tkc_numpy_rc EQUAL 0)
    message(STATUS "tkc: ${TKC_PYTHON3} has no numpy (scripts/install-deps.sh installs it): the python tests are not registered")
    set(_tkc_py_ok "")
  endif()
endif()
if(_tkc_py_ok)
  add_test(NAME python_example
           COMMAND ${CMAKE_COMMAND} -E env ${_tkc_py_env}
                   ${TKC_PYTHON3} ${PROJECT_SOURCE_DIR}/examples/python/quickstart.py)
  set_tests_properties(python_example PROPERTIES TIMEOUT 300)
  add_test(NAME python_train_digits
           COMMAND ${CMAKE_COMMAND} -E env ${_tkc_py_env}
                   ${TKC_PYTHON3} ${PROJECT_SOURCE_DIR}/examples/python/train_digits.py --device CPU --min-accuracy 0.95)
  set_tests_properties(python_train_digits PROPERTIES TIMEOUT 600 SKIP_REGULAR_EXPRESSION "skipped:")
  if(_tkc_pytest_rc EQUAL 0)
    add_test(NAME python_package
             COMMAND ${CMAKE_COMMAND} -E env ${_tkc_py_env} PYTHONPATH=${PROJECT_SOURCE_DIR}/bindings/python
                     ${TKC_PYTHON3} -m pytest -q -p no:cacheprovider ${PROJECT_SOURCE_DIR}/bindings/python/tests
             WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
    set_tests_properties(python_package PROPERTIES TIMEOUT 900)
  else()
    message(STATUS "tkc: ${TKC_PYTHON3} has no pytest (scripts/install-deps.sh installs it): the python_package test is not registered")
  endif()
elseif(NOT TKC_PYTHON3)
  message(STATUS "tkc: no python3 found: the python tests are not registered")
endif()
