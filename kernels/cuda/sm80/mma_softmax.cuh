#pragma once
// The online softmax on mma.sync accumulators, shared by the two tensor-core kernels (fp16/bf16
// in tc_flash.cuh, 3xTF32 in flash_tf32x3.cuh): the S tile of a warp's 16-row mma tiles lives in
// m16n8 C fragments, so each row's values sit in the 4 lanes of one quad.
#include "kernels/cuda/primitives/math.cuh"

namespace flashviz::cuda::detail {

using primitives::exp2Approx;

// Largest of v[First, First + N) as a balanced tree (short dependency chain).
template <int First, int N, int Size>
__device__ __forceinline__ float treeMax(const float (&v)[Size]) {
    if constexpr (N == 1) return v[First];
    else return fmaxf(treeMax<First, N / 2>(v), treeMax<First + N / 2, N - N / 2>(v));
}

// Online softmax on the S accumulators (each row lives in the 4 lanes of one quad): new row
// maxima, P = exp(S - m) in place, l rescaled by exp(m_old - m_new) and increased by the row's
// new P. The corrections exp(m_old - m_new) are returned for O; the result says whether any of
// this thread's is not exactly 1.
template <class Tile>
__device__ __forceinline__ bool softmaxScores(float (&s)[Tile::MT][Tile::BC / 8][4],
                                              float (&rowMax)[Tile::MT][2],
                                              float (&rowSum)[Tile::MT][2],
                                              float (&correction)[Tile::MT][2], float scaleLog2) {
    constexpr int kPerRow = Tile::BC / 4; // values of one row in one thread
    bool changed = false;
#pragma unroll
    for (int mt = 0; mt < Tile::MT; ++mt)
#pragma unroll
        for (int h = 0; h < 2; ++h) {
            float row[kPerRow];
#pragma unroll
            for (int nt = 0; nt < Tile::BC / 8; ++nt) {
                row[2 * nt] = s[mt][nt][2 * h];
                row[2 * nt + 1] = s[mt][nt][2 * h + 1];
            }
            float mx = fmaxf(rowMax[mt][h], treeMax<0, kPerRow>(row));
            mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
            mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));
            // A row that has seen no key yet keeps m = -inf; subtract 0 instead, p = 0.
            const float mScaled = mx == -INFINITY ? 0.f : mx * scaleLog2;
            correction[mt][h] = exp2Approx(rowMax[mt][h] * scaleLog2 - mScaled);
            changed = changed || correction[mt][h] != 1.f;
            rowMax[mt][h] = mx;
            float sum[2] = {0.f, 0.f}; // two chains: half the dependent additions
#pragma unroll
            for (int nt = 0; nt < Tile::BC / 8; ++nt)
#pragma unroll
                for (int e = 2 * h; e < 2 * h + 2; ++e) {
                    const float pe = exp2Approx(fmaf(s[mt][nt][e], scaleLog2, -mScaled));
                    s[mt][nt][e] = pe;
                    sum[e & 1] += pe;
                }
            rowSum[mt][h] = rowSum[mt][h] * correction[mt][h] + (sum[0] + sum[1]);
        }
    return changed;
}

// A row's log-sum-exp of the scaled scores, m · scale + log l (natural log, PyTorch's
// convention), from its maximum m and its sum l reduced over the quad: what the forward leaves
// for the backward to recompute P = exp(s · scale - LSE) from. -inf for a row that saw no key.
__device__ __forceinline__ float logSumExp(float rowMax, float rowSum, float scale) {
    return rowSum > 0.f ? fmaf(rowMax, scale, logf(rowSum)) : -INFINITY;
}

} // namespace flashviz::cuda::detail
