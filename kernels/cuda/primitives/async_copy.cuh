#pragma once
// Asynchronous copies from global into shared memory (cp.async, sm_80 and later), written once for
// every kernel family: 16 bytes a thread, zero-filled where the source row is past the tile's end.
#include <cuda_runtime.h>

#include <cstdint>

namespace flashviz::cuda::primitives {

// The shared-memory address of a pointer into shared memory, as cp.async and ldmatrix take it.
__device__ __forceinline__ std::uint32_t sharedAddress(const void* shared) {
    return static_cast<std::uint32_t>(__cvta_generic_to_shared(shared));
}

// Copies 16 bytes global -> shared without passing through registers. With valid == false
// nothing is read and the 16 bytes are zero-filled (ragged tiles).
__device__ __forceinline__ void copyAsync16(std::uint32_t shared, const void* global, bool valid) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(shared), "l"(global),
                 "r"(valid ? 16 : 0)
                 : "memory");
}

__device__ __forceinline__ void copyAsync16(float* shared, const float* global, bool valid) {
    copyAsync16(sharedAddress(shared), global, valid);
}

__device__ __forceinline__ void copyAsyncCommit() {
    asm volatile("cp.async.commit_group;\n" ::: "memory");
}

// Waits until at most `Pending` of this thread's committed copy groups are still in flight.
template <int Pending>
__device__ __forceinline__ void copyAsyncWait() {
    asm volatile("cp.async.wait_group %0;\n" ::"n"(Pending) : "memory");
}

} // namespace flashviz::cuda::primitives
