#pragma once
// One attribute of the current device, its failure an EngineError naming `what` (the launchers'
// shared-memory limits and the fp32 family's compute-capability rule read it).
#include <cuda_runtime.h>

#include <cstddef>

namespace flashviz::cuda {

std::size_t deviceAttribute(cudaDeviceAttr attribute, const char* what);

} // namespace flashviz::cuda
