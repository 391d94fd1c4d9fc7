# cmake/onnx.cmake — the ONNX frontend (src/frontend/onnx/, include/tkc/onnx.h).
#
# Included by CMakeLists.txt right after tkc_objs is declared (src/frontend/onnx/ is kept out of the glob
# there). Needs protobuf-c (pkg-config libprotobuf-c), its code generator protoc-c and the onnx.proto
# that Debian's libonnx-dev installs (/usr/include/onnx/onnx.proto): the reader is generated from it
# into the build folder at build time, so nothing of ONNX's lives in this repository.
#
#   TKC_WITH_ONNX     ON (default): build the frontend when all three are found; OFF: never
#   TKC_ONNX_PROTO    the onnx.proto to generate from (default: found under the include paths)
#
# The frontend is compiled into libtkc itself (not a separate libtkc_onnx): it reports errors through
# the library's thread-local tkc_last_error(), and one library keeps linking (static or shared) as it
# is. Sets TKC_HAVE_ONNX (ON/OFF), TKC_ONNX_LIBS (protobuf-c, for TKC_LINK_DEPS) and
# TKC_ONNX_GEN_DIR (where onnx.pb-c.h is, for the node-test runner).
option(TKC_WITH_ONNX "build the ONNX frontend when protobuf-c, protoc-c and onnx.proto are found" ON)
set(TKC_HAVE_ONNX OFF)
set(TKC_ONNX_LIBS "")

if(TKC_WITH_ONNX)
  find_package(PkgConfig QUIET)
  set(_missing "")
  if(PKG_CONFIG_FOUND)
    pkg_check_modules(TKC_PROTOBUF_C QUIET libprotobuf-c)
  endif()
  if(NOT TKC_PROTOBUF_C_FOUND)
    list(APPEND _missing "libprotobuf-c (libprotobuf-c-dev)")
  endif()
  find_program(TKC_PROTOC_C NAMES protoc-c protoc-gen-c)
  mark_as_advanced(TKC_PROTOC_C)
  if(NOT TKC_PROTOC_C)
    list(APPEND _missing "protoc-c (protobuf-c-compiler)")
  endif()
  find_file(TKC_ONNX_PROTO onnx.proto PATH_SUFFIXES onnx PATHS /usr/include /usr/local/include)
  if(NOT TKC_ONNX_PROTO)
    list(APPEND _missing "onnx.proto (libonnx-dev)")
  endif()
  if(_missing)
    string(REPLACE ";" ", " _missing "${_missing}")
    message(STATUS "tkc: building without the ONNX frontend: missing ${_missing} (scripts/install-deps.sh installs them)")
    target_sources(tkc_objs PRIVATE ${PROJECT_SOURCE_DIR}/src/frontend/onnx/absent/onnx_absent.c)
    list(APPEND TKC_SOURCES ${PROJECT_SOURCE_DIR}/src/frontend/onnx/absent/onnx_absent.c)
  else()
    set(TKC_HAVE_ONNX ON)
    set(TKC_ONNX_GEN_DIR ${PROJECT_BINARY_DIR}/onnx_gen)
    file(MAKE_DIRECTORY ${TKC_ONNX_GEN_DIR})
    get_filename_component(_proto_dir ${TKC_ONNX_PROTO} DIRECTORY)
    # protoc-c names its output after the proto file's path below --proto_path
    add_custom_command(
      OUTPUT ${TKC_ONNX_GEN_DIR}/onnx.pb-c.c ${TKC_ONNX_GEN_DIR}/onnx.pb-c.h
      COMMAND ${TKC_PROTOC_C} --proto_path=${_proto_dir} --c_out=${TKC_ONNX_GEN_DIR} ${TKC_ONNX_PROTO}
      DEPENDS ${TKC_ONNX_PROTO}
      COMMENT "Generating the ONNX protobuf-c reader from ${TKC_ONNX_PROTO}"
      VERBATIM)
    file(GLOB _onnx_srcs CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/src/frontend/onnx/*.c)
    target_sources(tkc_objs PRIVATE ${_onnx_srcs} ${TKC_ONNX_GEN_DIR}/onnx.pb-c.c)
    # generated code: its own warnings are not ours
    set_source_files_properties(${TKC_ONNX_GEN_DIR}/onnx.pb-c.c PROPERTIES COMPILE_OPTIONS "-w")
    target_include_directories(tkc_objs SYSTEM PRIVATE ${TKC_ONNX_GEN_DIR} ${TKC_PROTOBUF_C_INCLUDE_DIRS})
    target_compile_definitions(tkc_objs PRIVATE TKC_HAVE_ONNX=1)
    find_library(TKC_PROTOBUF_C_LIB NAMES protobuf-c HINTS ${TKC_PROTOBUF_C_LIBRARY_DIRS})
    mark_as_advanced(TKC_PROTOBUF_C_LIB)
    set(TKC_ONNX_LIBS ${TKC_PROTOBUF_C_LIB})
    list(APPEND TKC_SOURCES ${_onnx_srcs} ${TKC_ONNX_GEN_DIR}/onnx.pb-c.c) # the libFuzzer build compiles these again
    message(STATUS "tkc: ONNX frontend (protobuf-c ${TKC_PROTOBUF_C_VERSION}, ${TKC_ONNX_PROTO})")
  endif()
else()
  message(STATUS "tkc: ONNX frontend disabled (TKC_WITH_ONNX=OFF)")
  target_sources(tkc_objs PRIVATE ${PROJECT_SOURCE_DIR}/src/frontend/onnx/absent/onnx_absent.c)
  list(APPEND TKC_SOURCES ${PROJECT_SOURCE_DIR}/src/frontend/onnx/absent/onnx_absent.c)
endif()

# the ONNX test suites (tests/test_onnx*.c, registered by CMakeLists.txt's test loop) see the
# generated reader and, for the node tests, the folder of the pinned onnx wheel's node tests
function(tkc_onnx_tests)
  file(GLOB _tests CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/tests/test_onnx*.c)
  if(NOT TKC_HAVE_ONNX)
    return()
  endif()
  find_package(Python3 QUIET COMPONENTS Interpreter)
  set(_node_dir "")
  if(Python3_FOUND)
    execute_process(COMMAND ${Python3_EXECUTABLE} -c "import onnx, os; print(os.path.join(os.path.dirname(onnx.__file__), 'backend', 'test', 'data', 'node'))"
                    OUTPUT_VARIABLE _node_dir OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  endif()
  if(NOT _node_dir OR NOT IS_DIRECTORY "${_node_dir}")
    message(STATUS "tkc: no onnx Python package with node tests: test_onnx_node will skip (pip install onnx==1.22.0)")
    set(_node_dir "")
  endif()
  foreach(src ${_tests})
    get_filename_component(name ${src} NAME_WE)
    if(TARGET ${name})
      target_include_directories(${name} SYSTEM PRIVATE ${TKC_ONNX_GEN_DIR} ${TKC_PROTOBUF_C_INCLUDE_DIRS})
      target_compile_definitions(${name} PRIVATE TKC_HAVE_ONNX=1 TKC_ONNX_NODE_DIR_DEFAULT="${_node_dir}")
      add_dependencies(${name} tkc_static)
    endif()
  endforeach()
  if(TEST test_onnx_node)
    set_tests_properties(test_onnx_node PROPERTIES TIMEOUT 7200 LABELS onnx)
  endif()
  if(Python3_FOUND AND TARGET tkc-run) # node test models through tkc-run against their expected outputs
    add_test(NAME tkc_run_tool COMMAND ${Python3_EXECUTABLE} ${PROJECT_SOURCE_DIR}/tests/test_tkc_run.py $<TARGET_FILE:tkc-run>)
    set_tests_properties(tkc_run_tool PROPERTIES SKIP_RETURN_CODE 77 LABELS onnx)
  endif()
endfunction()

# fuzz_onnx_libfuzzer: tests/fuzz/fuzz_onnx.c on the instrumented library objects that
# cmake/fuzz.cmake builds with clang (tkc_fuzz_objs); not in ctest, as the other libFuzzer targets
function(tkc_onnx_fuzz)
  if(NOT TKC_HAVE_ONNX OR NOT TARGET tkc_fuzz_objs)
    return()
  endif()
  tkc_libfuzzer_target(fuzz_onnx)
endfunction()

# tkc-run (tools/tkc_run.c): loads, runs and times an ONNX model; installed with the library
function(tkc_onnx_tool)
  if(NOT TKC_HAVE_ONNX)
    return()
  endif()
  add_executable(tkc-run ${PROJECT_SOURCE_DIR}/tools/tkc_run.c)
  target_link_libraries(tkc-run PRIVATE tkc_static)

  if(TKC_INSTALL)
    install(TARGETS tkc-run RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
  endif()
endfunction()
