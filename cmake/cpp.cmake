# cmake/cpp.cmake — the C++ header's example and tests (included from cmake/examples.cmake).

# ---------------------------------------------------------------- C++
include(CheckLanguage)
check_language(CXX)
if(CMAKE_CXX_COMPILER)
  enable_language(CXX)
  add_executable(cpp_quickstart ${CMAKE_SOURCE_DIR}/examples/cpp/quickstart.cpp)
  set_target_properties(cpp_quickstart PROPERTIES CXX_STANDARD 11 CXX_STANDARD_REQUIRED ON CXX_EXTENSIONS OFF)
  # the directory's C warning flags reach C++ targets too; -Wstrict-prototypes is C-only
  get_target_property(_tkc_cxx_opts cpp_quickstart COMPILE_OPTIONS)
  if(_tkc_cxx_opts)
    list(REMOVE_ITEM _tkc_cxx_opts -Wstrict-prototypes)
    set_property(TARGET cpp_quickstart PROPERTY COMPILE_OPTIONS ${_tkc_cxx_opts})
  endif()
  target_compile_options(cpp_quickstart PRIVATE -Wall -Wextra -pedantic -Werror)
  target_link_libraries(cpp_quickstart PRIVATE tkc_static)
  add_test(NAME cpp_example COMMAND cpp_quickstart)
  set_tests_properties(cpp_example PROPERTIES TIMEOUT 300)
else()
  message(STATUS "tkc: no C++ compiler found: the cpp_example test is not registered")
endif()

