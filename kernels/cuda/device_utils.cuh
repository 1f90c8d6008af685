#pragma once
// Small device helpers shared by the kernel bodies: asynchronous copies into shared memory
// (sm_80+), tile loads built on them, and the hardware base-2 exponential.
#include <cuda_runtime.h>

#include <cstdint>

namespace flashviz::cuda::detail {

constexpr float kLog2e = 1.4426950408889634f;

// 2^x on the special-function unit; relative error about 2^-22, denormal results flush to 0.
__device__ __forceinline__ float exp2Approx(float x) {
    float y;
    asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
    return y;
}

// Copies 16 bytes global -> shared without passing through registers. With valid == false
// nothing is read and the 16 bytes are zero-filled (ragged tiles).
__device__ __forceinline__ void copyAsync16(float* shared, const float* global, bool valid) {
    const unsigned address = static_cast<unsigned>(__cvta_generic_to_shared(shared));
    const int bytes = valid ? 16 : 0;
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(address), "l"(global),
                 "r"(bytes)
                 : "memory");
}

__device__ __forceinline__ void copyAsyncCommit() {
    asm volatile("cp.async.commit_group;\n" ::: "memory");
}

// Waits until at most `Pending` of this thread's committed copy groups are still in flight.
template <int Pending>
__device__ __forceinline__ void copyAsyncWait() {
    asm volatile("cp.async.wait_group %0;\n" ::"n"(Pending) : "memory");
}

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
