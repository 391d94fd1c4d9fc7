# cmake/cuda.cmake — the "CUDA" device (src/runtime/cuda.c) and the "PTX" renderer (src/render/ptx.c).
#
# Included by CMakeLists.txt right after tkc_objs is declared. Nothing links CUDA: the driver
# (libcuda.so.1) is loaded with dlopen at run time, and ptxas is looked up by the tests at run time
# (PATH, then /usr/local/cuda/bin), so this file only
#   - offers TKC_WITH_CUDA (ON by default; OFF builds the device as always unavailable), and
#   - (CMakeLists.txt, after the tests) labels the tests that exercise CUDA "cuda": `ctest -L cuda` (scripts/gpu-check.sh) runs the PTX
#     renderer checks (test_ptx), the CUDA-vs-INTERP suite (test_cuda), every op on every device
#     against INTERP and C (test_backend_ops), and on every device (CUDA
#     included when present) the kernel suite (test_kernels), the kernel-opt suite (test_opts:
#     shared-memory GROUP, tensor cores) and the reduce suite (test_tensor_reduce: long reductions).

option(TKC_WITH_CUDA "build the CUDA device (the driver is loaded at run time; nothing is linked)" ON)
if(NOT TKC_WITH_CUDA)
  target_compile_definitions(tkc_objs PRIVATE TKC_NO_CUDA=1)
endif()

find_program(TKC_PTXAS ptxas PATHS /usr/local/cuda/bin)
if(TKC_PTXAS)
  message(STATUS "tkc: ptxas found (${TKC_PTXAS}): test_ptx assembles the generated PTX")
else()
  message(STATUS "tkc: no ptxas: test_ptx will skip its assembler checks")
endif()
