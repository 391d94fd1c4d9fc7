# cmake/package_tests.cmake — tkc used from another project (tests/package/check.sh): installed and found
# with find_package / pkg-config (package_install), and built with add_subdirectory (package_subdir, which
# compiles the library once more). Included from CMakeLists.txt after the test suites.
# Not in a sanitizer build: its libtkc needs the ASan runtime loaded first, which a plain consumer lacks.
if(TKC_SANITIZE)
  return()
endif()
if(TKC_INSTALL)
  add_test(NAME package_install
           COMMAND ${PROJECT_SOURCE_DIR}/tests/package/check.sh ${PROJECT_BINARY_DIR} ${PROJECT_SOURCE_DIR}
                   ${PROJECT_BINARY_DIR}/package-install ${CMAKE_C_COMPILER} install)
  set_tests_properties(package_install PROPERTIES TIMEOUT 600 ENVIRONMENT "TKC_CACHE_DIR=${TKC_TEST_CACHE_DIR}")
endif()
add_test(NAME package_subdir
         COMMAND ${PROJECT_SOURCE_DIR}/tests/package/check.sh ${PROJECT_BINARY_DIR} ${PROJECT_SOURCE_DIR}
                 ${PROJECT_BINARY_DIR}/package-subdir ${CMAKE_C_COMPILER} subdir)
set_tests_properties(package_subdir PROPERTIES TIMEOUT 900 ENVIRONMENT "TKC_CACHE_DIR=${TKC_TEST_CACHE_DIR}")

# the Python package installed with pip into a venv and used from outside the repository (builds
# libtkc once more, as a user's `pip install ./bindings/python` does)
find_program(TKC_PYTHON3 NAMES python3)
if(TKC_PYTHON3)
  execute_process(COMMAND ${TKC_PYTHON3} -c "import numpy, setuptools, venv" RESULT_VARIABLE _tkc_pip_rc OUTPUT_QUIET ERROR_QUIET)
  if(_tkc_pip_rc EQUAL 0)
    add_test(NAME python_pip_install
             COMMAND ${PROJECT_SOURCE_DIR}/tests/package/pip_check.sh ${PROJECT_SOURCE_DIR} ${PROJECT_BINARY_DIR}/package-pip)
    set_tests_properties(python_pip_install PROPERTIES TIMEOUT 900 RUN_SERIAL ON)
  else()
    message(STATUS "tkc: python3 lacks numpy/setuptools/venv: the python_pip_install test is not registered")
  endif()
endif()
