#pragma once
// The fp32 kernels' tile loads: rows of Q, K and V staged into their padded or swizzled shared
// layouts by cp.async (primitives/async_copy.cuh).
#include "kernels/cuda/primitives/async_copy.cuh"

#include <cstdint>

namespace flashviz::cuda::detail {

using primitives::copyAsync16;

// Stages rows [rowBegin, rowBegin + Rows) of a row-major matrix with T::D columns into shared
// memory, chunk (row, col) at T::qkOffset(row, col) when QkLayout (Q and K) and at
// row * T::VS + col otherwise (V); rows at or past rowLimit become zeros. Each thread copies the same column chunk of every (Threads / (D / 4))-th
// row, so its source pointer only steps by a constant.
template <class T, int Rows, bool QkLayout>
__device__ __forceinline__ void loadTileAsync(float* shared, const float* global,
                                              std::int64_t rowStride, int rowBegin, int rowLimit,
                                              int tid) {
    constexpr int kChunksPerRow = T::D / 4;
    constexpr int kRowsPerPass = T::kThreads / kChunksPerRow;
    static_assert(T::kThreads % kChunksPerRow == 0 && Rows % kRowsPerPass == 0, "whole passes");
    const int row0 = tid / kChunksPerRow;
    const int col = (tid % kChunksPerRow) * 4;
    const int validRows = rowLimit - rowBegin;
    const float* source = global + std::int64_t(rowBegin + row0) * rowStride + col;
    const std::int64_t step = std::int64_t(kRowsPerPass) * rowStride;
#pragma unroll
    for (int i = 0; i < Rows / kRowsPerPass; ++i) {
        const int row = row0 + i * kRowsPerPass;
        const bool valid = row < validRows;
        const int offset = QkLayout ? T::qkOffset(row, col) : row * T::VS + col;
        copyAsync16(shared + offset, valid ? source : global, valid);
        source += step;
    }
}

} // namespace flashviz::cuda::detail
