# cmake/python.cmake — the Python binding's tests (included from cmake/examples.cmake).

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

