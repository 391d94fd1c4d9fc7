# cmake/webgpu.cmake — build inputs of the WEBGPU device (src/runtime/webgpu.c), included by
# CMakeLists.txt right after tkc_objs is defined.
#
# libtkc never links wgpu-native: src/runtime/webgpu.c loads it with dlopen at run time. What the
# build needs is only its C headers, webgpu.h and wgpu.h (the "new generation" with WGPUStringView),
# taken from, in order:
#   1. -DTKC_WGPU_INCLUDE=/some/dir        a folder holding webgpu.h and wgpu.h
#   2. the PyPI `wgpu` package (pip install wgpu==0.32.0; scripts/install-deps.sh does it), whose
#      wgpu/resources/ folder ships webgpu.h, wgpu.h and libwgpu_native-release.so. It is found by
#      asking python3 where the package lives (without importing it), then in common site-packages
#      folders.
# The third-party headers are never copied into this repository.
#
# When found: TKC_HAVE_WEBGPU is defined for the library, the folder is a SYSTEM include directory
# of tkc_objs, TKC_WGPU_LIB_DEFAULT is the path of libwgpu_native found next to the headers at
# configure time (the first place webgpu.c looks after $TKC_WGPU_LIB; see there for the rest), and
# TKC_WEBGPU_EXPECTED is defined for the targets after this point (tests/test_wgsl.c then fails
# rather than skips when the device is unavailable; TKC_SKIP_WEBGPU=1 at run time allows skipping).
# When not found (or -DTKC_WITH_WEBGPU=OFF): webgpu.c still compiles and the WEBGPU device reports
# itself unavailable, with the reason.

option(TKC_WITH_WEBGPU "build the WEBGPU device when webgpu.h is found" ON)
set(TKC_WGPU_INCLUDE "" CACHE PATH "folder with webgpu.h and wgpu.h (default: the installed wgpu Python package)")

if(TKC_WITH_WEBGPU)
  set(_tkc_wgpu_hints)
  if(TKC_WGPU_INCLUDE)
    list(APPEND _tkc_wgpu_hints "${TKC_WGPU_INCLUDE}")
  endif()
  find_program(TKC_PYTHON3 NAMES python3)
  if(TKC_PYTHON3)
    # find_spec locates the package without importing it (importing needs cffi and more)
    execute_process(
      COMMAND "${TKC_PYTHON3}" -c
              "import importlib.util as u; s = u.find_spec('wgpu'); print(list(s.submodule_search_locations)[0] if s and s.submodule_search_locations else '')"
      OUTPUT_VARIABLE _tkc_wgpu_pkg OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE _tkc_wgpu_rc)
    if(_tkc_wgpu_rc EQUAL 0 AND _tkc_wgpu_pkg)
      list(APPEND _tkc_wgpu_hints "${_tkc_wgpu_pkg}/resources")
    endif()
  endif()
  file(GLOB _tkc_wgpu_globbed
       /usr/local/lib/python3*/dist-packages/wgpu/resources
       /usr/local/lib/python3*/site-packages/wgpu/resources
       /usr/lib/python3/dist-packages/wgpu/resources
       /usr/lib/python3*/site-packages/wgpu/resources
       $ENV{HOME}/.local/lib/python3*/site-packages/wgpu/resources)
  list(APPEND _tkc_wgpu_hints ${_tkc_wgpu_globbed})

  set(TKC_WGPU_HEADER_DIR "")
  foreach(_dir IN LISTS _tkc_wgpu_hints)
    if(EXISTS "${_dir}/webgpu.h" AND EXISTS "${_dir}/wgpu.h")
      file(STRINGS "${_dir}/webgpu.h" _tkc_wgpu_sv LIMIT_COUNT 1 REGEX "typedef struct WGPUStringView")
      if(_tkc_wgpu_sv)
        set(TKC_WGPU_HEADER_DIR "${_dir}")
        break()
      else()
        message(STATUS "WEBGPU: ${_dir}/webgpu.h is an older webgpu.h (no WGPUStringView); skipped")
      endif()
    endif()
  endforeach()

  if(TKC_WGPU_HEADER_DIR)
    set(_tkc_wgpu_lib "")
    foreach(_name libwgpu_native-release.so libwgpu_native.so)
      if(NOT _tkc_wgpu_lib AND EXISTS "${TKC_WGPU_HEADER_DIR}/${_name}")
        set(_tkc_wgpu_lib "${TKC_WGPU_HEADER_DIR}/${_name}")
      endif()
    endforeach()
    # the wgpu-native version these headers belong to (the wgpu package records it): webgpu.c then
    # refuses a library of another major version, whose structs may be laid out differently
    set(_tkc_wgpu_major 0)
    if(EXISTS "${TKC_WGPU_HEADER_DIR}/../backends/wgpu_native/__init__.py")
      file(STRINGS "${TKC_WGPU_HEADER_DIR}/../backends/wgpu_native/__init__.py" _tkc_wgpu_ver REGEX "^__version__ = \"[0-9]+")
      if(_tkc_wgpu_ver MATCHES "\"([0-9]+)\\.")
        set(_tkc_wgpu_major ${CMAKE_MATCH_1})
      endif()
    endif()
    target_include_directories(tkc_objs SYSTEM PRIVATE "${TKC_WGPU_HEADER_DIR}")
    target_compile_definitions(tkc_objs PRIVATE TKC_HAVE_WEBGPU TKC_WGPU_LIB_DEFAULT="${_tkc_wgpu_lib}"
                               TKC_WGPU_MAJOR=${_tkc_wgpu_major})
    # for the targets defined after this (tests/test_wgsl.c): a build with the headers expects the
    # device to work, so a CI machine missing the driver fails instead of skipping
    add_compile_definitions(TKC_WEBGPU_EXPECTED)
    message(STATUS "WEBGPU: headers from ${TKC_WGPU_HEADER_DIR} (wgpu-native ${_tkc_wgpu_major}); library default '${_tkc_wgpu_lib}' (loaded at run time)")
  else()
    message(STATUS "WEBGPU: webgpu.h not found (pip install wgpu==0.32.0, or -DTKC_WGPU_INCLUDE=dir): the WEBGPU device will be unavailable")
  endif()
endif()
