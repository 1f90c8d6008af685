#pragma once
// The fp32 FlashAttention forward kernel on tensor cores, with fp32 accuracy kept by splitting
// every operand in two ("3xTF32", the arithmetic of PyTorch's fp32 memory-efficient backend on
// sm_80 and later): x = big + small with big rounded to TF32 (10-bit mantissa) and small = x - big
// exactly, and a b ~ big_a big_b + big_a small_b + small_a big_b, each product an
// mma.sync.m16n8k8 TF32 with fp32 accumulation. |small| <= 2^-11 |x|; the tensor core truncates
// small to TF32 (at most 2^-23 |x| lost) and small_a small_b is dropped (at most 2^-22 |a b|), so
// each product is within 2^-21 |a b| (fp32's own rounding: 2^-24). kernels/bench/NOTES.md (v7)
// has the measured errors against fp64: smaller than the fp32 FMA kernel's.
//
// The work split is FlashAttention-2's, as in tc_flash.cuh: each warp owns 16 query rows of the
// block's BR and never talks to the others except through the two barriers per key tile; K and
// V tiles (BC keys) stream through shared memory by cp.async, double-buffered; m, l and O stay in
// registers, and the softmax runs on the S accumulators (mma_softmax.cuh). The tensor cores round
// every accumulation toward zero: a bias that would grow with the number of keys if a row's P V
// were summed straight into O, so each tile's products go to fresh accumulators, added to O in
// fp32 (S's accumulators see only D / 8 roundings each, the same at every n).
//
// TF32 fragments are 32-bit, so ldmatrix cannot transpose them. Instead the order of the summed
// indices is chosen per thread so that every fragment comes from one 16-byte load of a
// row-major, padded fp32 tile (a sum does not care about the order of its terms):
// - S = Q K^T, k-steps in pairs over 16 columns of d: the thread of quad q reads columns
//   16c + 4q .. 16c + 4q + 3 of its two Q rows and of its K row (one LDS.128 each), and feeds
//   columns +0, +1 to k-step 2c and +2, +3 to k-step 2c + 1.
// - O += P V, one k-step per 8 keys: S's accumulators hold keys 2q and 2q + 1 of each 8, so the
//   A operand's k index q means key 2q and q + 4 key 2q + 1; B then needs V rows 2q and 2q + 1.
//   Output columns are spread over four n-tiles (tile i, column g is d = 32c + 4g + i), so one
//   LDS.128 of V row 2q serves four mma's, and O's accumulators come out as two float4 per row.
// Row strides (floats) are chosen for those loads: Q's and K's D + 16 and V's D + 4 put the 8
// lanes of each quarter-warp on 8 different 16-byte bank groups. Q stays in shared memory: the
// registers go to O and to the fresh per-tile accumulators that keep the error flat in n.
#include "kernels/cuda/fp32/tile_loads.cuh"
#include "kernels/cuda/primitives/async_copy.cuh"
#include "kernels/cuda/primitives/math.cuh"
#include "kernels/cuda/primitives/matrix_ops.cuh"
#include "kernels/cuda/sm80/mma_softmax.cuh"
#include "kernels/cuda/params/params.h"
#include "core/tiling.h"

#include <cstdint>

namespace flashviz::cuda::tf32x3 {

using primitives::mmaTf32;

template <int D_, int Warps_, int BC_, int MinBlocks_>
struct Tile {
    static constexpr int D = D_;
    static constexpr int kWarps = Warps_;
    static constexpr int BC = BC_;
    static constexpr int kMinBlocks = MinBlocks_;
    static constexpr int MT = 1; // 16-row mma tiles per warp (the shape softmaxScores takes)
    static constexpr int BR = 16 * kWarps;
    static constexpr int kThreads = 32 * kWarps;
    static constexpr int kKStride = D + 16; // Q's too
    static constexpr int kVStride = D + 4;
    static constexpr int VS = kVStride; // the names detail::loadTileAsync reads
    static constexpr int kQFloats = BR * kKStride;
    static constexpr int kKFloats = BC * kKStride;
    static constexpr int kVFloats = BC * kVStride;
    // Q, and K and V with two buffers each.
    static constexpr std::size_t kSharedBytes =
        std::size_t(kQFloats + 2 * (kKFloats + kVFloats)) * 4;
    static_assert(D % 32 == 0 && BC % 8 == 0, "whole fragment groups");

    // Where float col of row r lives in the Q and K tiles (padded rows).
    __device__ static __forceinline__ int qkOffset(int row, int col) { return row * kKStride + col; }
};

// x split for a TF32 product: `big` is x rounded to TF32 (half-way cases away from zero),
// `small` = x - big exactly; the tensor core reads the top 19 bits of each. NaN stays NaN; an
// infinite x, or a finite one above 3.4025e38 whose big rounds to infinity, gives NaN
// (inf - inf), where the fp32 FMA kernel would give inf or NaN.
struct Split {
    std::uint32_t big, small;
};

__device__ __forceinline__ Split split(float x) {
    const std::uint32_t big = (__float_as_uint(x) + 0x1000u) & 0xffffe000u;
    return {big, __float_as_uint(x - __uint_as_float(big))};
}

// c += a b in three TF32 products. The two small products go to their own accumulator: the
// tensor core rounds each sum toward zero, and an accumulator of the small terms' size loses
// 2^11 times less to that than the large one would.
__device__ __forceinline__ void mma3(float (&sumBig)[4], float (&sumSmall)[4],
                                     const std::uint32_t (&aBig)[4],
                                     const std::uint32_t (&aSmall)[4], Split b0, Split b1) {
    mmaTf32(sumSmall, aSmall, b0.big, b1.big);
    mmaTf32(sumSmall, aBig, b0.small, b1.small);
    mmaTf32(sumBig, aBig, b0.big, b1.big);
}

// The A fragment {a0, a1, a2, a3} = {(g, k q), (g + 8, k q), (g, k q + 4), (g + 8, k q + 4)}.
__device__ __forceinline__ void splitFragment(float x0, float x1, float x2, float x3,
                                              std::uint32_t (&big)[4], std::uint32_t (&small)[4]) {
    const float x[4] = {x0, x1, x2, x3};
#pragma unroll
    for (int e = 0; e < 4; ++e) {
        const Split s = split(x[e]);
        big[e] = s.big;
        small[e] = s.small;
    }
}

template <class T>
__global__ void __launch_bounds__(T::kThreads, T::kMinBlocks) flashTf32x3Kernel(const AttentionParams p) {
    constexpr int D = T::D, BC = T::BC, BR = T::BR;
    extern __shared__ __align__(16) float shared[];
    float* const sQ = shared;
    float* const sK0 = sQ + T::kQFloats;      // K buffers: sK0, sK0 + kKFloats
    float* const sV0 = sK0 + 2 * T::kKFloats; // V buffers: sV0, sV0 + kVFloats

    // Causal blocks near the bottom see the most keys: start them first.
    const int queryBlock = p.causal ? int(gridDim.x) - 1 - int(blockIdx.x) : int(blockIdx.x);
    const int head = int(blockIdx.y), batch = int(blockIdx.z);
    const int tid = int(threadIdx.x), warp = tid / 32, lane = tid % 32;
    const int g = lane / 4, q = lane % 4; // mma fragment coordinates
    const int row0 = queryBlock * BR;
    const int warpRow = row0 + warp * 16;
    const float scaleLog2 = p.scale * primitives::kLog2e;

    const float* Q = p.q + batch * p.qBatchStride + head * p.qHeadStride;
    const float* K = p.k + batch * p.kBatchStride + head * p.kHeadStride;
    const float* V = p.v + batch * p.vBatchStride + head * p.vHeadStride;
    float* O = p.o + batch * p.oBatchStride + head * p.oHeadStride;
    const int tiles =
        visibleKeyBlocks(Range{row0, min(row0 + BR, p.queries)}, p.queries, p.keys, BC, p.causal);

    if (tiles > 0) {
        detail::loadTileAsync<T, BR, true>(sQ, Q, p.qRowStride, row0, p.queries, tid);
        detail::loadTileAsync<T, BC, true>(sK0, K, p.kRowStride, 0, p.keys, tid);
        primitives::copyAsyncCommit();
        detail::loadTileAsync<T, BC, false>(sV0, V, p.vRowStride, 0, p.keys, tid);
        primitives::copyAsyncCommit();
    }
    // This thread's Q values: rows g and g + 8 of the warp, columns 16c + 4q .. + 3 (see the top).
    const float* qLane = sQ + (warp * 16 + g) * T::kKStride + 4 * q;

    float acc[D / 8][4]; // n-tile 4c + i, column g: d = 32c + 4g + i
    float rowMax[1][2] = {{-INFINITY, -INFINITY}}, rowSum[1][2] = {{0.f, 0.f}};
#pragma unroll
    for (int t = 0; t < D / 8; ++t)
#pragma unroll
        for (int e = 0; e < 4; ++e) acc[t][e] = 0.f;

    for (int j = 0; j < tiles; ++j) {
        const int buffer = j & 1;
        const float* sK = sK0 + buffer * T::kKFloats;
        const float* sV = sV0 + buffer * T::kVFloats;
        primitives::copyAsyncWait<1>(); // K[j] landed; V[j] may still be in flight
        __syncthreads();            // ... for every thread; and tile j - 1 is fully used
        if (j + 1 < tiles) {
            const int next = (j + 1) * BC;
            detail::loadTileAsync<T, BC, true>(sK0 + (buffer ^ 1) * T::kKFloats, K, p.kRowStride,
                                               next, p.keys, tid);
            primitives::copyAsyncCommit();
            detail::loadTileAsync<T, BC, false>(sV0 + (buffer ^ 1) * T::kVFloats, V,
                                                p.vRowStride, next, p.keys, tid);
        } else {
            primitives::copyAsyncCommit();
        }
        primitives::copyAsyncCommit();

        // S = Q K_j^T: key tile t, column g is key 8t + g.
        float s[1][BC / 8][4], sSmall[BC / 8][4];
#pragma unroll
        for (int t = 0; t < BC / 8; ++t)
#pragma unroll
            for (int e = 0; e < 4; ++e) s[0][t][e] = sSmall[t][e] = 0.f;
#pragma unroll 2
        for (int c = 0; c < D / 16; ++c) {
            std::uint32_t aBig[2][4], aSmall[2][4];
            const float4 lo = *reinterpret_cast<const float4*>(qLane + 16 * c);
            const float4 hi = *reinterpret_cast<const float4*>(qLane + 8 * T::kKStride + 16 * c);
            splitFragment(lo.x, hi.x, lo.y, hi.y, aBig[0], aSmall[0]);
            splitFragment(lo.z, hi.z, lo.w, hi.w, aBig[1], aSmall[1]);
#pragma unroll
            for (int t = 0; t < BC / 8; ++t) {
                const float4 k4 =
                    *reinterpret_cast<const float4*>(sK + (8 * t + g) * T::kKStride + 16 * c + 4 * q);
                mma3(s[0][t], sSmall[t], aBig[0], aSmall[0], split(k4.x), split(k4.y));
                mma3(s[0][t], sSmall[t], aBig[1], aSmall[1], split(k4.z), split(k4.w));
            }
        }
#pragma unroll
        for (int t = 0; t < BC / 8; ++t)
#pragma unroll
            for (int e = 0; e < 4; ++e) s[0][t][e] += sSmall[t][e];

        // Keys past the end, and under the causal mask keys past the diagonal, get -inf.
        const int key0 = j * BC;
        if (!tileFullyVisible(row0, key0, BC, p.queries, p.keys, p.causal)) {
#pragma unroll
            for (int t = 0; t < BC / 8; ++t)
#pragma unroll
                for (int e = 0; e < 4; ++e) {
                    const int row = warpRow + g + (e >> 1) * 8;
                    const int key = key0 + 8 * t + 2 * q + (e & 1);
                    if (key >= p.keys || (p.causal && !causallyVisible(row, key, p.queries, p.keys)))
                        s[0][t][e] = -INFINITY;
                }
        }

        float correction[1][2];
        detail::softmaxScores<T>(s, rowMax, rowSum, correction, scaleLog2);
        std::uint32_t pBig[BC / 8][4], pSmall[BC / 8][4]; // P's A fragments, k-step t
#pragma unroll
        for (int t = 0; t < BC / 8; ++t)
            splitFragment(s[0][t][0], s[0][t][2], s[0][t][1], s[0][t][3], pBig[t], pSmall[t]);

        primitives::copyAsyncWait<2>(); // V[j] landed (K[j + 1], V[j + 1] may be in flight)
        __syncthreads();

        // O = correction O + P V_j, 32 output columns at a time. The tile's products are summed
        // in fresh accumulators and added to O in fp32 (rounded to nearest): accumulating
        // straight into O would round toward zero at every mma, an error that grows with the
        // number of keys (NOTES.md, v7). k index q is key 8t + 2q, q + 4 is key 8t + 2q + 1.
        const float* even = sV + 2 * q * T::kVStride + 4 * g;
#pragma unroll
        for (int c = 0; c < D / 32; ++c) {
            float tileBig[4][4], tileSmall[4][4];
#pragma unroll
            for (int i = 0; i < 4; ++i)
#pragma unroll
                for (int e = 0; e < 4; ++e) tileBig[i][e] = tileSmall[i][e] = 0.f;
#pragma unroll
            for (int t = 0; t < BC / 8; ++t) {
                const float* v = even + 8 * t * T::kVStride + 32 * c;
                const float4 v0 = *reinterpret_cast<const float4*>(v);
                const float4 v1 = *reinterpret_cast<const float4*>(v + T::kVStride);
                mma3(tileBig[0], tileSmall[0], pBig[t], pSmall[t], split(v0.x), split(v1.x));
                mma3(tileBig[1], tileSmall[1], pBig[t], pSmall[t], split(v0.y), split(v1.y));
                mma3(tileBig[2], tileSmall[2], pBig[t], pSmall[t], split(v0.z), split(v1.z));
                mma3(tileBig[3], tileSmall[3], pBig[t], pSmall[t], split(v0.w), split(v1.w));
            }
#pragma unroll
            for (int i = 0; i < 4; ++i)
#pragma unroll
                for (int e = 0; e < 4; ++e)
                    acc[4 * c + i][e] = fmaf(acc[4 * c + i][e], correction[0][e >> 1],
                                             tileBig[i][e] + tileSmall[i][e]);
        }
    }
    primitives::copyAsyncWait<0>();

    // O = acc / l; a row that saw no key (l = 0) is written as 0. Accumulator e of n-tile 4c + i
    // is row g + 8 (e >> 1), column 32c + 8q + 4 (e & 1) + i.
#pragma unroll
    for (int h = 0; h < 2; ++h) {
        float l = rowSum[0][h];
        l += __shfl_xor_sync(0xffffffffu, l, 1);
        l += __shfl_xor_sync(0xffffffffu, l, 2);
        const int row = warpRow + g + 8 * h;
        if (row >= p.queries) continue;
        const float inverse = l > 0.f ? 1.f / l : 0.f;
        float* out = O + std::int64_t(row) * p.oRowStride + 8 * q;
#pragma unroll
        for (int c = 0; c < D / 32; ++c)
#pragma unroll
            for (int half = 0; half < 2; ++half) {
                const int e = 2 * h + half;
                *reinterpret_cast<float4*>(out + 32 * c + 4 * half) =
                    make_float4(acc[4 * c][e] * inverse, acc[4 * c + 1][e] * inverse,
                                acc[4 * c + 2][e] * inverse, acc[4 * c + 3][e] * inverse);
            }
        if (q == 0) {
            const std::int64_t stat = batch * p.statBatchStride + head * p.statHeadStride + row;
            if (p.m) p.m[stat] = rowMax[0][h] * p.scale;
            if (p.l) p.l[stat] = l;
        }
    }
}

} // namespace flashviz::cuda::tf32x3
