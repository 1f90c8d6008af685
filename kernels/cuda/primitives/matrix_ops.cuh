#pragma once
// Warp-wide tensor-core operations (sm_80 instruction set, which Hopper runs too), written once:
// ldmatrix fragments from shared memory and mma.sync products with fp32 accumulators.
#include <cuda_runtime.h>

#include <cstdint>

namespace flashviz::cuda::primitives {

// Four 8 x 8 b16 matrices from shared memory (each lane gives one row address).
__device__ __forceinline__ void ldmatrixX4(std::uint32_t address, std::uint32_t (&r)[4]) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(address));
}

// The same, transposed (V's fragments for P V).
__device__ __forceinline__ void ldmatrixX4Trans(std::uint32_t address, std::uint32_t (&r)[4]) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(address));
}

// c += a b, m16n8k16, fp16 operands.
__device__ __forceinline__ void mmaF16(float (&c)[4], const std::uint32_t (&a)[4], std::uint32_t b0,
                                       std::uint32_t b1) {
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, "
                 "{%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                 : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

// c += a b, m16n8k16, bf16 operands.
__device__ __forceinline__ void mmaBf16(float (&c)[4], const std::uint32_t (&a)[4], std::uint32_t b0,
                                        std::uint32_t b1) {
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, "
                 "{%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                 : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

// c += a b, m16n8k8, TF32 operands (the top 19 bits of each fp32 register).
__device__ __forceinline__ void mmaTf32(float (&c)[4], const std::uint32_t (&a)[4], std::uint32_t b0,
                                        std::uint32_t b1) {
    asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, "
                 "{%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                 : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

} // namespace flashviz::cuda::primitives
