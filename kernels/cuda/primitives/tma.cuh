#pragma once
// The copy engine (TMA, sm_90): one thread asks for a whole tile of a tensor described by a
// tensor map (built on the host: kernels/cuda/sm90/hopper_launch.cu); the bytes land in shared
// memory, swizzled as the map says, and are counted on an mbarrier. Rows and columns outside the
// tensor arrive as zeros, so ragged tiles need no special loads.
#include <cuda.h>
#include <cuda_runtime.h>

#include <cstdint>

namespace flashviz::cuda::primitives {

// Loads the box of a 4-d tensor map whose first element is at coordinates (c0, c1, c2, c3),
// innermost first, into shared memory at `target`, completing `bytes` on `barrier`.
__device__ __forceinline__ void tmaLoad4d(std::uint32_t target, const CUtensorMap* map,
                                          std::uint32_t barrier, int c0, int c1, int c2, int c3) {
    asm volatile(
        "cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
        " [%0], [%1, {%3, %4, %5, %6}], [%2];\n" ::"r"(target),
        "l"(reinterpret_cast<std::uint64_t>(map)), "r"(barrier), "r"(c0), "r"(c1), "r"(c2), "r"(c3)
        : "memory");
}

// Copies `bytes` (a multiple of 16; both addresses 16-byte aligned) from global memory to shared
// memory at `target` with the copy engine, completing them on `barrier`: no tensor map, for short
// rows such as the backward's per-query statistics.
__device__ __forceinline__ void bulkLoad(std::uint32_t target, const void* source, std::uint32_t bytes,
                                         std::uint32_t barrier) {
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n" ::"r"(target),
                 "l"(reinterpret_cast<std::uint64_t>(source)), "r"(bytes), "r"(barrier)
                 : "memory");
}

// Adds `bytes` (a multiple of 16) of fp32 values from shared memory to global memory, element by
// element and atomically, as one operation of the copy engine; bulkCommit closes a group of them,
// bulkWaitRead<N> waits until at most N groups still read their shared memory, bulkWait<N> until
// at most N are unfinished. The shared memory's writers fence it for the async proxy first.
__device__ __forceinline__ void bulkReduceAdd(float* target, std::uint32_t source, std::uint32_t bytes) {
    asm volatile("cp.reduce.async.bulk.global.shared::cta.bulk_group.add.f32 [%0], [%1], %2;\n" ::"l"(
                     reinterpret_cast<std::uint64_t>(target)),
                 "r"(source), "r"(bytes)
                 : "memory");
}

__device__ __forceinline__ void bulkCommit() { asm volatile("cp.async.bulk.commit_group;\n" ::: "memory"); }

template <int Pending>
__device__ __forceinline__ void bulkWaitRead() {
    asm volatile("cp.async.bulk.wait_group.read %0;\n" ::"n"(Pending) : "memory");
}

template <int Pending>
__device__ __forceinline__ void bulkWait() {
    asm volatile("cp.async.bulk.wait_group %0;\n" ::"n"(Pending) : "memory");
}

// Brings a tensor map into the cache before its first use (it lives in kernel parameters).
__device__ __forceinline__ void tmaPrefetchMap(const CUtensorMap* map) {
    asm volatile("prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<std::uint64_t>(map)) : "memory");
}

} // namespace flashviz::cuda::primitives
