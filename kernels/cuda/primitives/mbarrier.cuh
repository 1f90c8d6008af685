#pragma once
// Shared-memory barriers (mbarrier, sm_90): a producer announces how many bytes a copy will
// deliver, the copy engine counts them down, and consumers wait on the barrier's phase. Written
// once for every kernel family that streams tiles with the copy engine (TMA). And named barriers,
// with which warpgroups of a block meet.
#include <cuda_runtime.h>

#include <cstdint>

namespace flashviz::cuda::primitives {

// Sets the barrier up for `arrivals` arriving threads per phase. One thread; then
// fenceBarrierInit() and a block-wide barrier before anyone else uses it.
__device__ __forceinline__ void barrierInit(std::uint32_t barrier, unsigned arrivals) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(barrier), "r"(arrivals) : "memory");
}

// Makes initialised barriers visible to the copy engine (the async proxy).
__device__ __forceinline__ void fenceBarrierInit() {
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
}

// One arrival that also tells the barrier `bytes` more will come from asynchronous copies; the
// phase completes when every arrival came and every announced byte landed.
__device__ __forceinline__ void barrierArriveExpectBytes(std::uint32_t barrier, std::uint32_t bytes) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(barrier), "r"(bytes)
                 : "memory");
}

// One plain arrival (a consumer saying it is done with a buffer).
__device__ __forceinline__ void barrierArrive(std::uint32_t barrier) {
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(barrier) : "memory");
}

// Waits until the barrier's phase with parity `phase` (0 or 1) has completed.
__device__ __forceinline__ void barrierWait(std::uint32_t barrier, std::uint32_t phase) {
    asm volatile(
        "{\n"
        ".reg .pred done;\n"
        "wait_again:\n"
        "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
        "@!done bra wait_again;\n"
        "}\n" ::"r"(barrier),
        "r"(phase)
        : "memory");
}

// Named barriers (bar.sync / bar.arrive, any architecture): `Threads` threads of the block meet
// at barrier `Id` (1 to 15; 0 is __syncthreads). Arriving does not wait. The id is an immediate,
// so ptxas counts the barriers a kernel uses.
template <int Id, int Threads>
__device__ __forceinline__ void namedBarrierSync() {
    static_assert(Id > 0 && Id < 16 && Threads % 32 == 0, "a named barrier of whole warps");
    asm volatile("bar.sync %0, %1;\n" ::"n"(Id), "n"(Threads) : "memory");
}

template <int Id, int Threads>
__device__ __forceinline__ void namedBarrierArrive() {
    static_assert(Id > 0 && Id < 16 && Threads % 32 == 0, "a named barrier of whole warps");
    asm volatile("bar.arrive %0, %1;\n" ::"n"(Id), "n"(Threads) : "memory");
}

} // namespace flashviz::cuda::primitives
