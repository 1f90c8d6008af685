#pragma once
// The GPU benchmark behind kernels/gpu_benchmark.h, on device 0. Internal to kernels/cuda: the
// registry (kernels/backend_registry.cpp) forwards to it once it knows a device is usable, and
// the benchmark program's --api mode calls it directly.
#include "kernels/gpu_benchmark.h"

#include <vector>

namespace flashviz::cuda {

// Validates, then measures sizes x variants in that order (n outer). Throws EngineError
// (OutOfMemory naming the buffer, BackendFailure for a failed launch). A standard-attention
// point whose n x n scratch does not fit the free memory is returned unmeasured with a note.
std::vector<GpuBenchPoint> runBenchmark(const GpuBenchRequest& request,
                                        const GpuBenchProgress& progress);

} // namespace flashviz::cuda
