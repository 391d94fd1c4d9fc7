# cmake/install.cmake — `cmake --install` rules: the libraries, the headers, a CMake package and a
# pkg-config file. Included by CMakeLists.txt after the tkc / tkc_static targets (TKC_INSTALL=OFF skips it).
#
# What a prefix then holds:
#   lib/libtkc.so.X.Y.Z, libtkc.so.X.Y (soname), libtkc.so     lib/libtkc.a
#   include/tkc.h, include/tkc/*.h (and include/tkc.hpp, the C++ header)
#   lib/cmake/tkc/tkcConfig.cmake, tkcConfigVersion.cmake, tkcTargets*.cmake:
#       find_package(tkc 0.1 REQUIRED) then target_link_libraries(app PRIVATE tkc::tkc)  (or tkc::tkc_static,
#       which brings libffi, libLLVM, libdl, threads and libm along)
#   lib/pkgconfig/tkc.pc: `pkg-config --cflags --libs tkc`; `pkg-config --static --libs tkc` adds
#       Libs.private, what a static link needs

if(NOT TKC_INSTALL)
  return()
endif()
include(CMakePackageConfigHelpers)

install(TARGETS tkc tkc_static EXPORT tkcTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
        FILES_MATCHING PATTERN "*.h" PATTERN "*.hpp" PATTERN "*.def")

set(TKC_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/tkc)
install(EXPORT tkcTargets NAMESPACE tkc:: DESTINATION ${TKC_CMAKE_DIR})
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/tkcConfig.cmake.in ${PROJECT_BINARY_DIR}/tkcConfig.cmake
                              INSTALL_DESTINATION ${TKC_CMAKE_DIR})
# 0.x: a minor version may break the ABI, so 0.1 accepts 0.1.z only (SameMinorVersion); from 1.0 on, SameMajorVersion
if(PROJECT_VERSION_MAJOR EQUAL 0)
  set(_tkc_compat SameMinorVersion)
else()
  set(_tkc_compat SameMajorVersion)
endif()
write_basic_package_version_file(${PROJECT_BINARY_DIR}/tkcConfigVersion.cmake COMPATIBILITY ${_tkc_compat})
install(FILES ${PROJECT_BINARY_DIR}/tkcConfig.cmake ${PROJECT_BINARY_DIR}/tkcConfigVersion.cmake DESTINATION ${TKC_CMAKE_DIR})

# pkg-config: Libs.private lists what libtkc.a needs (libtkc.so carries it itself)
set(_tkc_pc_private "")
foreach(_lib ${TKC_LINK_DEPS})
  if(_lib STREQUAL "Threads::Threads")
    set(_lib ${CMAKE_THREAD_LIBS_INIT})
    if(NOT _lib)
      set(_lib -pthread)
    endif()
  elseif(_lib MATCHES "^/.*/lib([^/]+)\\.(so|a)(\\.[0-9.]+)?$")
    set(_name ${CMAKE_MATCH_1})
    get_filename_component(_dir ${_lib} DIRECTORY)
    if(NOT _dir MATCHES "^/(usr/)?lib(64)?(/${CMAKE_LIBRARY_ARCHITECTURE})?$")
      string(APPEND _tkc_pc_private " -L${_dir}")
    endif()
    set(_lib -l${_name})
  elseif(NOT _lib MATCHES "^-")
    set(_lib -l${_lib})
  endif()
  string(APPEND _tkc_pc_private " ${_lib}")
endforeach()
string(STRIP "${_tkc_pc_private}" TKC_PC_LIBS_PRIVATE)
file(RELATIVE_PATH TKC_PC_UP /prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig /prefix)
string(REGEX REPLACE "/$" "" TKC_PC_UP "${TKC_PC_UP}")
configure_file(${CMAKE_CURRENT_LIST_DIR}/tkc.pc.in ${PROJECT_BINARY_DIR}/tkc.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/tkc.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
