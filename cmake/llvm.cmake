# cmake/llvm.cmake — LLVM for the "LLVM" device (src/runtime/llvm.c: LLVM-C in process, ORC LLJIT).
#
# Included by CMakeLists.txt right after tkc_objs is declared. Finds LLVM through llvm-config:
# TKC_LLVM_CONFIG when given, else the newest of llvm-config-18 .. llvm-config-15, else plain
# llvm-config. LLVM 14 and older are refused (the renderer emits opaque pointers, and LLVM 14's O2
# pipeline crashes on them). Without a usable LLVM the library still builds; the LLVM device then
# reports itself unavailable ("built without LLVM").
#
#   TKC_WITH_LLVM     ON (default): use LLVM when found; OFF: never
#   TKC_LLVM_CONFIG   path of the llvm-config to use (an unusable one is an error)
#
# Sets TKC_HAVE_LLVM (ON/OFF), compiles tkc_objs with -DTKC_HAVE_LLVM=1 and sets TKC_LLVM_LIBS to libLLVM
# (shared when llvm-config offers it, else the static components and their system libraries).

option(TKC_WITH_LLVM "build the LLVM device when LLVM 15 or newer is found" ON)
set(TKC_LLVM_CONFIG "" CACHE FILEPATH "llvm-config to use (default: newest of llvm-config-18..15, then llvm-config)")
set(TKC_HAVE_LLVM OFF)
set(TKC_LLVM_LIBS "")

function(tkc_llvm_major config out)
  execute_process(COMMAND ${config} --version OUTPUT_VARIABLE ver RESULT_VARIABLE rc ERROR_QUIET OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(rc EQUAL 0 AND ver MATCHES "^([0-9]+)\\.")
    set(${out} ${CMAKE_MATCH_1} PARENT_SCOPE)
  else()
    set(${out} 0 PARENT_SCOPE)
  endif()
endfunction()

if(TKC_WITH_LLVM)
  set(_tkc_llvm_config "")
  if(TKC_LLVM_CONFIG)
    tkc_llvm_major(${TKC_LLVM_CONFIG} _major)
    if(_major LESS 15)
      message(FATAL_ERROR "TKC_LLVM_CONFIG=${TKC_LLVM_CONFIG} is LLVM ${_major}: tkc needs LLVM 15 or newer "
                          "(opaque pointers; LLVM 14's O2 pipeline crashes on them). Install llvm-16-dev or configure with -DTKC_WITH_LLVM=OFF.")
    endif()
    set(_tkc_llvm_config ${TKC_LLVM_CONFIG})
  else()
    set(_refused "")
    foreach(v 18 17 16 15 "")
      if(v STREQUAL "")
        set(_name llvm-config)
        set(_var TKC_LLVM_CONFIG_PLAIN)
      else()
        set(_name llvm-config-${v})
        set(_var TKC_LLVM_CONFIG_${v})
      endif()
      find_program(${_var} ${_name})
      mark_as_advanced(${_var})
      if(${_var})
        tkc_llvm_major(${${_var}} _major)
        if(_major GREATER_EQUAL 15)
          set(_tkc_llvm_config ${${_var}})
          break()
        endif()
        list(APPEND _refused "${${_var}} (LLVM ${_major})")
      endif()
    endforeach()
    if(NOT _tkc_llvm_config)
      if(_refused)
        message(WARNING "tkc: found only ${_refused}; the LLVM device needs LLVM 15 or newer (LLVM 14's O2 pipeline "
                        "crashes on opaque pointers). Building without it: install llvm-16-dev (scripts/install-deps.sh does).")
      else()
        message(STATUS "tkc: no llvm-config found: building without the LLVM device (install llvm-16-dev)")
      endif()
    endif()
  endif()

  if(_tkc_llvm_config)
    tkc_llvm_major(${_tkc_llvm_config} TKC_LLVM_MAJOR)
    execute_process(COMMAND ${_tkc_llvm_config} --includedir OUTPUT_VARIABLE _inc OUTPUT_STRIP_TRAILING_WHITESPACE)
    set(_components core orcjit native passes irreader analysis target)
    # prefer the one shared libLLVM (small link, fast); fall back to the static component libraries
    execute_process(COMMAND ${_tkc_llvm_config} --link-shared --libfiles ${_components}
                    OUTPUT_VARIABLE _libs RESULT_VARIABLE _rc ERROR_QUIET OUTPUT_STRIP_TRAILING_WHITESPACE)
    set(_syslibs "")
    if(NOT _rc EQUAL 0 OR NOT _libs)
      execute_process(COMMAND ${_tkc_llvm_config} --link-static --libfiles ${_components}
                      OUTPUT_VARIABLE _libs RESULT_VARIABLE _rc ERROR_QUIET OUTPUT_STRIP_TRAILING_WHITESPACE)
      execute_process(COMMAND ${_tkc_llvm_config} --link-static --system-libs
                      OUTPUT_VARIABLE _syslibs ERROR_QUIET OUTPUT_STRIP_TRAILING_WHITESPACE)
    endif()
    if(NOT _rc EQUAL 0 OR NOT _libs OR NOT EXISTS "${_inc}/llvm-c/LLJIT.h")
      message(WARNING "tkc: ${_tkc_llvm_config} gives no usable LLVM-C headers/libraries: building without the LLVM device")
    else()
      separate_arguments(_libs UNIX_COMMAND "${_libs}")
      separate_arguments(_syslibs UNIX_COMMAND "${_syslibs}")
      set(TKC_HAVE_LLVM ON)
      target_include_directories(tkc_objs SYSTEM PRIVATE ${_inc})
      target_compile_definitions(tkc_objs PRIVATE TKC_HAVE_LLVM=1)
      # linked by tkc (privately) and tkc_static (publicly: a static link needs it), see CMakeLists.txt
      set(TKC_LLVM_LIBS ${_libs} ${_syslibs})
      message(STATUS "tkc: LLVM device with LLVM ${TKC_LLVM_MAJOR} (${_tkc_llvm_config})")
    endif()
  endif()
else()
  message(STATUS "tkc: LLVM device disabled (TKC_WITH_LLVM=OFF)")
endif()
