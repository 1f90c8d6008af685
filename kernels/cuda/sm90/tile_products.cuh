#pragma once
// The warpgroup products both Hopper kernels issue (the forward, hopper_flash.cuh, and the
// backward, hopper_backward.cuh), on tiles the copy engine stored in shared memory as blocks of 64
// columns (128-byte swizzled rows, primitives/wgmma.cuh): a tile of R rows and d = 128 is two
// blocks of R x 64, R x 128 bytes apart.
#include "kernels/cuda/params/tc_params.h"
#include "kernels/cuda/primitives/wgmma.cuh"
#include "kernels/cuda/sm80/tc_flash.cuh"

#include <cstdint>

namespace flashviz::cuda::sm90 {

namespace prim = primitives;

template <TcElement E>
inline constexpr prim::WgmmaType kWgmmaType = E == TcElement::Fp16 ? prim::WgmmaType::Fp16 : prim::WgmmaType::Bf16;

// acc = A B^T over d (both K-major: S = Q K^T, or in the backward S^T = K Q^T and dP^T = V dO^T)
// for the warpgroup's 64 rows of A at `a` and N rows of B at `b`, issued (not waited for). `ARows`
// and `BRows`: the rows of the tiles `a` and `b` lie in (their column blocks' distance / 128).
template <int D, int ARows, int BRows, int N, TcElement E>
__device__ __forceinline__ void issueScores(float (&acc)[N / 2], std::uint32_t a, std::uint32_t b) {
#pragma unroll
    for (int kk = 0; kk < D / 16; ++kk) {
        // k-step kk: column block kk / 4, 32 bytes per step inside the 128-byte swizzled row.
        const std::uint32_t stepA = a + (kk / 4) * ARows * 128 + (kk % 4) * 32;
        const std::uint32_t stepB = b + (kk / 4) * BRows * 128 + (kk % 4) * 32;
        prim::wgmmaSS<N, kWgmmaType<E>>(acc, prim::swizzled128Descriptor(stepA, 16, 1024),
                                        prim::swizzled128Descriptor(stepB, 16, 1024), kk > 0);
    }
}

// acc += P B for `Rows` rows of B at `b` (the k dimension: keys of V in O += P V; query rows of dO
// and Q in the backward's dV += P^T dO and dK += dS^T Q), P from registers (packFragments), B
// MN-major (transposed by the descriptor); issued, not waited for.
template <int D, int Rows, TcElement E>
__device__ __forceinline__ void issueValues(float (&acc)[D / 2], const std::uint32_t (&pa)[Rows / 16][4],
                                            std::uint32_t b) {
#pragma unroll
    for (int kj = 0; kj < Rows / 16; ++kj)
        prim::wgmmaRSTransB<D, kWgmmaType<E>>(
            acc, pa[kj], prim::swizzled128Descriptor(b + kj * 16 * 128, Rows * 128, 1024));
}

// Accumulators of N columns rounded into wgmma's A fragments: columns 16kj .. 16kj + 15 are
// k-step kj's A (the accumulator and A-fragment layouts are mma.sync's).
template <int N, TcElement E>
__device__ __forceinline__ void packFragments(const float (&s)[N / 2], std::uint32_t (&pa)[N / 16][4]) {
    using El = tc::Element<E>;
#pragma unroll
    for (int kj = 0; kj < N / 16; ++kj)
#pragma unroll
        for (int r = 0; r < 4; ++r) pa[kj][r] = El::pack(s[8 * kj + 2 * r], s[8 * kj + 2 * r + 1]);
}

} // namespace flashviz::cuda::sm90
