#pragma once
// The copy engine's (TMA's) descriptions of the Hopper kernels' tensors, built on the host.
#include "kernels/cuda/params/tc_params.h"

#include <cuda.h>

#include <cstdint>

namespace flashviz::cuda {

// A [batch][heads][rows][d] view of Q, K, V, O or dO with any strides, read in boxes of boxRows x
// 64 elements (128 bytes: the swizzle's row), 128-byte swizzled; rows past `rows` read as zeros.
// Throws EngineError (Unsupported) where the copy engine cannot describe it.
CUtensorMap tensorMap(const void* base, TcElement element, int headDim, int rows, int heads, int batch,
                      std::int64_t rowStride, std::int64_t headStride, std::int64_t batchStride, int boxRows);

} // namespace flashviz::cuda
