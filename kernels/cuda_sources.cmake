# The CUDA library (included by kernels/CMakeLists.txt when a CUDA toolkit is found): kernel
# bodies (cuda/*.cuh), their launchers (cuda/*.cu), the device query and the backend
# (cuda/*.cpp), and the GPU benchmark (bench/). kernels/cuda_backend.h is the public header.
add_library(flashviz_cuda STATIC
  cuda/backward_launch.cu
  cuda/bench_util.cpp
  cuda/benchmark_run.cpp
  cuda/check.cpp
  cuda/cuda_backend.cpp
  cuda/device_query.cpp
  cuda/flash_launch.cu
  cuda/standard_launch.cu
  cuda/tc_api.cpp
  cuda/tc_launch.cu)
target_include_directories(flashviz_cuda PUBLIC ${PROJECT_SOURCE_DIR})
target_link_libraries(flashviz_cuda
  PUBLIC flashviz_core flashviz_gpu_benchmark_api
  PRIVATE CUDA::cudart CUDA::cublas flashviz_warnings)
set_target_properties(flashviz_cuda PROPERTIES
  CUDA_STANDARD 17
  CUDA_STANDARD_REQUIRED ON
  POSITION_INDEPENDENT_CODE ON)
# nvcc: line info for compute-sanitizer reports; host-side warnings on, as for the C++ sources.
target_compile_options(flashviz_cuda PRIVATE
  $<$<COMPILE_LANGUAGE:CUDA>:-lineinfo -Xcompiler=-Wall,-Wextra>
  $<$<AND:$<COMPILE_LANGUAGE:CUDA>,$<BOOL:${FLASHVIZ_WERROR}>>:-Werror=all-warnings>)

# The benchmark: fp32 flash against the cuBLAS three-step baseline (no Qt, no core sources).
add_executable(flashviz-gpu-bench bench/gpu_bench.cpp)
target_link_libraries(flashviz-gpu-bench PRIVATE flashviz_cuda CUDA::cudart flashviz_warnings)
