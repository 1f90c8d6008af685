# The CUDA library (included by kernels/CMakeLists.txt when a CUDA toolkit is found), in folders
# by role (kernels/cuda/README.md): runtime/, params/, primitives/, fp32/, sm80/, sm90/, mirror/,
# bench/, and the backend. kernels/cuda_backend.h is the public header.
# What every CUDA target of the library shares: C++17, position-independent code, and for nvcc
# line info (compute-sanitizer's reports) and the host compiler's warnings, errors under
# FLASHVIZ_WERROR.
function(flashviz_cuda_target_options target)
  set_target_properties(${target} PROPERTIES
    CUDA_STANDARD 17
    CUDA_STANDARD_REQUIRED ON
    POSITION_INDEPENDENT_CODE ON)
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:CUDA>:-lineinfo -Xcompiler=-Wall,-Wextra>
    $<$<AND:$<COMPILE_LANGUAGE:CUDA>,$<BOOL:${FLASHVIZ_WERROR}>>:-Werror=all-warnings>)
endfunction()

add_library(flashviz_cuda STATIC
  cuda/cuda_backend.cpp
  cuda/runtime/check.cpp
  cuda/runtime/device_limits.cu
  cuda/runtime/device_query.cpp
  cuda/fp32/flash_launch.cu
  cuda/fp32/standard_launch.cu
  cuda/sm80/tc_api.cpp
  cuda/sm80/tc_launch.cu
  cuda/sm80/tc_backward_launch.cu
  cuda/sm90/hopper_trace_run.cpp
  cuda/mirror/mirror_launch.cu
  cuda/mirror/backward_launch.cu
  cuda/bench/bench_util.cpp
  cuda/bench/benchmark_run.cpp)
target_include_directories(flashviz_cuda PUBLIC ${PROJECT_SOURCE_DIR})

# The Hopper kernel (sm90/: wgmma, setmaxnreg) is sm_90a code, which runs on compute capability
# 9.0 alone, so it is built for that target only, beside the library's sm_80 / sm_90 code. It
# needs CUDA 12.5 (sm_90a since 12.0; cudaGetDriverEntryPointByVersion, which finds the tensor-map
# encoder, since 12.5); an older toolkit builds without it.
if(CMAKE_CUDA_COMPILER_VERSION VERSION_GREATER_EQUAL 12.5)
  add_library(flashviz_cuda_sm90 OBJECT cuda/sm90/hopper_launch.cu cuda/sm90/hopper_backward_launch.cu
    cuda/sm90/tensor_maps.cu)
  target_include_directories(flashviz_cuda_sm90 PRIVATE ${PROJECT_SOURCE_DIR})
  target_link_libraries(flashviz_cuda_sm90 PRIVATE CUDA::cudart flashviz_warnings)
  set_target_properties(flashviz_cuda_sm90 PROPERTIES CUDA_ARCHITECTURES 90a)
  flashviz_cuda_target_options(flashviz_cuda_sm90)
  target_sources(flashviz_cuda PRIVATE $<TARGET_OBJECTS:flashviz_cuda_sm90>)
  target_compile_definitions(flashviz_cuda PRIVATE FLASHVIZ_HAS_SM90A=1)
else()
  target_compile_definitions(flashviz_cuda PRIVATE FLASHVIZ_HAS_SM90A=0)
endif()
target_link_libraries(flashviz_cuda
  PUBLIC flashviz_core flashviz_gpu_benchmark_api flashviz_hopper_trace
  PRIVATE CUDA::cudart CUDA::cublas flashviz_warnings)
flashviz_cuda_target_options(flashviz_cuda)

# The benchmark: fp32 flash against the cuBLAS three-step baseline (no Qt, no core sources).
add_executable(flashviz-gpu-bench bench/gpu_bench.cpp)
target_link_libraries(flashviz-gpu-bench PRIVATE flashviz_cuda CUDA::cudart flashviz_warnings)
