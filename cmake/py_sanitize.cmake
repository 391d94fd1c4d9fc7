# cmake/py_sanitize.cmake — tkc_python_sanitizer_env(OUT): the environment a python3 test needs to
# load an ASan-built libtkc.so through ctypes (TKC_SANITIZE): the ASan runtime preloaded (the compiler
# says where it is; CPython's own allocations at exit are not leaks of ours). OUT is "" without
# TKC_SANITIZE, and NOTFOUND when no runtime can be found (the caller then leaves its test out).
function(tkc_python_sanitizer_env out)
  set(env "")
  if(TKC_SANITIZE)
    set(env NOTFOUND)
    foreach(_name libasan.so libclang_rt.asan-${CMAKE_SYSTEM_PROCESSOR}.so)
      execute_process(COMMAND ${CMAKE_C_COMPILER} -print-file-name=${_name} OUTPUT_VARIABLE _path
                      OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
      if(NOT env AND IS_ABSOLUTE "${_path}" AND EXISTS "${_path}")
        set(env LD_PRELOAD=${_path} ASAN_OPTIONS=detect_leaks=0)
      endif()
    endforeach()
  endif()
  set(${out} "${env}" PARENT_SCOPE)
endfunction()
