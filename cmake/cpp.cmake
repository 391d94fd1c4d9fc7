# cmake/cpp.cmake — the C++ header's example and tests (included from cmake/examples.cmake).
#
#   cpp_example      examples/cpp/quickstart.cpp (through include/tkc.hpp) on every device here
#   cpp_header_test  tests/cpp/test_tkc_hpp.cpp: the tkc.hpp wrapper (ownership, exceptions, operators,
#                    ops against plain loops, every host device)
#   cpp_example_cxx20  the example again, compiled as C++20
# All are C++17 (the example also C++20) with -Wall -Wextra -pedantic (and -Werror with TKC_WERROR, as in CI), which
# also checks that tkc.hpp and every public C header are warning-free C++. Paths are ${PROJECT_SOURCE_DIR}-relative so that the project also works
# from add_subdirectory.

# ---------------------------------------------------------------- C++
include(CheckLanguage)
check_language(CXX)
if(CMAKE_CXX_COMPILER)
  enable_language(CXX)
  set(_tkc_cxx_targets)
  add_executable(cpp_quickstart ${PROJECT_SOURCE_DIR}/examples/cpp/quickstart.cpp)
  list(APPEND _tkc_cxx_targets cpp_quickstart)
  add_executable(test_tkc_hpp ${PROJECT_SOURCE_DIR}/tests/cpp/test_tkc_hpp.cpp)
  list(APPEND _tkc_cxx_targets test_tkc_hpp)
  # the example once more as C++20 (tkc.hpp is C++17 and must stay clean under newer standards)
  if("cxx_std_20" IN_LIST CMAKE_CXX_COMPILE_FEATURES)
    add_executable(cpp_quickstart_cxx20 ${PROJECT_SOURCE_DIR}/examples/cpp/quickstart.cpp)
    list(APPEND _tkc_cxx_targets cpp_quickstart_cxx20)
  else()
    message(STATUS "tkc: ${CMAKE_CXX_COMPILER} has no C++20: cpp_example_cxx20 is not registered")
  endif()
  foreach(t ${_tkc_cxx_targets})
    set(_std 17)
    if(t MATCHES "_cxx20$")
      set(_std 20)
    endif()
    set_target_properties(${t} PROPERTIES CXX_STANDARD ${_std} CXX_STANDARD_REQUIRED ON CXX_EXTENSIONS OFF)
    # the directory's C warning flags reach C++ targets too; -Wstrict-prototypes is C-only
    get_target_property(_tkc_cxx_opts ${t} COMPILE_OPTIONS)
    if(_tkc_cxx_opts)
      list(REMOVE_ITEM _tkc_cxx_opts -Wstrict-prototypes)
      set_property(TARGET ${t} PROPERTY COMPILE_OPTIONS ${_tkc_cxx_opts})
    endif()
    target_compile_options(${t} PRIVATE -Wall -Wextra -pedantic)
    target_link_libraries(${t} PRIVATE tkc_static)
  endforeach()
  # the same on-disk kernel cache as the C suites (not the user's)
  add_test(NAME cpp_example COMMAND cpp_quickstart)
  set_tests_properties(cpp_example PROPERTIES ENVIRONMENT "TKC_CACHE_DIR=${TKC_TEST_CACHE_DIR}" TIMEOUT 300)
  if(TARGET cpp_quickstart_cxx20)
    add_test(NAME cpp_example_cxx20 COMMAND cpp_quickstart_cxx20)
    set_tests_properties(cpp_example_cxx20 PROPERTIES ENVIRONMENT "TKC_CACHE_DIR=${TKC_TEST_CACHE_DIR}" TIMEOUT 300)
  endif()
  add_test(NAME cpp_header_test COMMAND test_tkc_hpp all)  # the full suite on every host device here
  set_tests_properties(cpp_header_test PROPERTIES ENVIRONMENT "TKC_CACHE_DIR=${TKC_TEST_CACHE_DIR}" TIMEOUT 600)
else()
  message(STATUS "tkc: no C++ compiler found: the cpp_example and cpp_header_test tests are not registered")
endif()
