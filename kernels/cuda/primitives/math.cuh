#pragma once
// Arithmetic helpers every kernel family uses: the hardware base-2 exponential and a register the
// compiler may not see through.
#include <cuda_runtime.h>

#include <cstdint>

namespace flashviz::cuda::primitives {

constexpr float kLog2e = 1.4426950408889634f;

// 2^x on the special-function unit; relative error about 2^-22, denormal results flush to 0.
__device__ __forceinline__ float exp2Approx(float x) {
    float y;
    asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
    return y;
}

// Hides a value's origin from the compiler, so addresses derived from it are recomputed inside
// a loop (one XOR each) instead of being hoisted out of it into registers the accumulators need.
__device__ __forceinline__ std::uint32_t opaque(std::uint32_t x) {
    asm volatile("" : "+r"(x));
    return x;
}

} // namespace flashviz::cuda::primitives
