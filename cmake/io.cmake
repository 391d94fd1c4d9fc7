# cmake/io.cmake — model files (src/io/, include/tkc/io.h): the safetensors reader needs jansson for its
# JSON header; the GGUF reader needs nothing.
#
# Included by CMakeLists.txt right after cmake/onnx.cmake (src/io/ is in the library's glob).
#
#   TKC_WITH_JANSSON   ON (default): read and write safetensors when jansson (pkg-config jansson,
#                      libjansson-dev) is found; OFF or not found: tkc_safetensors_load/save fail with
#                      TKC_EUNSUPPORTED ("built without jansson")
#
# Sets TKC_HAVE_JANSSON (ON/OFF) and TKC_IO_LIBS (libjansson, for TKC_LINK_DEPS).
option(TKC_WITH_JANSSON "read and write safetensors files when jansson is found" ON)
set(TKC_HAVE_JANSSON OFF)
set(TKC_IO_LIBS "")

if(TKC_WITH_JANSSON)
  find_package(PkgConfig QUIET)
  if(PKG_CONFIG_FOUND)
    pkg_check_modules(TKC_JANSSON QUIET jansson)
  endif()
  if(TKC_JANSSON_FOUND)
    find_library(TKC_JANSSON_LIB NAMES jansson HINTS ${TKC_JANSSON_LIBRARY_DIRS})
    mark_as_advanced(TKC_JANSSON_LIB)
  endif()
  if(TKC_JANSSON_FOUND AND TKC_JANSSON_LIB)
    set(TKC_HAVE_JANSSON ON)
    set(TKC_IO_LIBS ${TKC_JANSSON_LIB})
    target_include_directories(tkc_objs SYSTEM PRIVATE ${TKC_JANSSON_INCLUDE_DIRS})
    target_compile_definitions(tkc_objs PRIVATE TKC_HAVE_JANSSON=1)
    message(STATUS "tkc: safetensors files (jansson ${TKC_JANSSON_VERSION})")
  else()
    message(STATUS "tkc: building without safetensors files: missing jansson (libjansson-dev; scripts/install-deps.sh installs it)")
  endif()
else()
  message(STATUS "tkc: safetensors files disabled (TKC_WITH_JANSSON=OFF)")
endif()

# test_io_py (tests/test_io_py.py): files written by the safetensors and gguf Python packages, read
# through libtkc.so with ctypes and compared with numpy; exit 77 (skipped) without those packages
function(tkc_io_tests)
  find_package(Python3 QUIET COMPONENTS Interpreter)
  if(NOT Python3_FOUND)
    message(STATUS "tkc: no python3: test_io_py is not registered")
    return()
  endif()
  include(${PROJECT_SOURCE_DIR}/cmake/py_sanitize.cmake)
  tkc_python_sanitizer_env(san) # (an ASan-built libtkc loads into python3 only after its runtime)
  if("${san}" STREQUAL "NOTFOUND")
    message(STATUS "tkc: no ASan runtime to preload into python3: test_io_py and test_tokenizer_py are not registered")
    return()
  endif()
  set(env TKC_CACHE_DIR=${TKC_TEST_CACHE_DIR} NODEVICE_SELECT=1 ${san})
  add_test(NAME test_io_py COMMAND ${Python3_EXECUTABLE} ${PROJECT_SOURCE_DIR}/tests/test_io_py.py $<TARGET_FILE:tkc>)
  set_tests_properties(test_io_py PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 600
                       ENVIRONMENT "${env}")
  # test_tokenizer_py (tests/test_tokenizer_py.py): vocabularies written by gguf.GGUFWriter, tkc's token
  # ids against a pure-Python reference of the same algorithms; exit 77 (skipped) without gguf
  add_test(NAME test_tokenizer_py COMMAND ${Python3_EXECUTABLE} ${PROJECT_SOURCE_DIR}/tests/test_tokenizer_py.py $<TARGET_FILE:tkc>)
  set_tests_properties(test_tokenizer_py PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 600
                       ENVIRONMENT "${env}")
endfunction()

# fuzz_safetensors_libfuzzer / fuzz_gguf_libfuzzer / fuzz_tokenizer_libfuzzer:
# tests/fuzz/fuzz_{safetensors,gguf,tokenizer}.c on the
# instrumented library objects cmake/fuzz.cmake builds with clang (tkc_fuzz_objs); not in ctest, as
# the other libFuzzer targets (`make fuzz`)
function(tkc_io_fuzz)
  if(NOT TARGET tkc_fuzz_objs)
    return()
  endif()
  foreach(name fuzz_safetensors fuzz_gguf fuzz_tokenizer)
    tkc_libfuzzer_target(${name})
  endforeach()
endfunction()
