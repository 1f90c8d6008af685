#pragma once
// The fp32 FlashAttention forward kernel on the CUDA cores (fp32 FMAs; kernel body only,
// launchers are in flash_launch.cu; the tensor-core one is flash_tf32x3.cuh). The same
// function as the CPU engine with the rescale and the running maximum on: exact attention,
// computed with its own tile sizes.
//
// One thread block owns BR query rows of one (batch, head). K and V tiles stream through shared
// memory by asynchronous copies: the next K tile is fetched while P V runs, the next V tile
// while Q K^T runs. The running maximum m, the running sum l and the O accumulator live in
// registers. Each thread owns TM = 8 query rows (strided by the number of row groups so that
// the two half-warps read different banks) and, within those rows, BC/16 score columns and D/16
// output columns; the 16 threads sharing rows sit in one half-warp, so the row maximum is a
// four-step shuffle and P goes through a per-warp stretch of shared memory with no block-wide
// barrier. l is kept per thread as a partial sum and reduced once at the end.
#include "kernels/cuda/fp32/tile_loads.cuh"
#include "kernels/cuda/primitives/async_copy.cuh"
#include "kernels/cuda/primitives/math.cuh"
#include "kernels/cuda/params/params.h"
#include "core/tiling.h"

#include <cstddef>

namespace flashviz::cuda::detail {

using primitives::copyAsyncCommit;
using primitives::copyAsyncWait;
using primitives::exp2Approx;
using primitives::kLog2e;

template <int D_, int BR_, int BC_, int MinBlocks_, bool Swizzle_, int UnrollS_ = 4,
          int UnrollPV_ = 2>
struct FastTile {
    static constexpr int D = D_;
    static constexpr int BR = BR_;
    static constexpr int BC = BC_;
    static constexpr int kMinBlocks = MinBlocks_;
    // How many 4-wide steps of the Q K^T and P V loops are unrolled: more unrolling lets the
    // compiler start the next steps' shared-memory loads earlier, at the cost of code size.
    static constexpr int kUnrollS = UnrollS_;
    static constexpr int kUnrollPV = UnrollPV_;
    // Shared-memory layout. Padded: rows of Q and K are D + 4 floats apart and rows of P BC + 16,
    // so the rows two half-warps read at once start in different banks. Swizzled: no padding;
    // instead the 16-byte chunk c of row r is stored at chunk c ^ (r & 7) (Q, K) or
    // c ^ 4 (r & 1) (P), which spreads the same accesses over the banks in less memory (what
    // lets d = 128 run two blocks per SM).
    static constexpr bool kSwizzle = Swizzle_;
    static constexpr int TM = 8;                // query rows per thread
    static constexpr int kRowGroups = BR / TM;  // two per warp
    static constexpr int kWarps = kRowGroups / 2;
    static constexpr int kThreads = kWarps * 32;
    static constexpr int TN = BC / 16; // score columns per thread
    static constexpr int TD = D / 16;  // output columns per thread
    static constexpr int QS = kSwizzle ? D : D + 4;    // Q and K row stride (floats)
    static constexpr int VS = D;                       // V: the half-warp reads 256 contiguous bytes
    static constexpr int PS = kSwizzle ? BC : BC + 16; // P row stride
    static constexpr int kQFloats = BR * QS;
    static constexpr int kKFloats = BC * QS;
    static constexpr int kVFloats = BC * VS;
    static constexpr int kPFloats = BR * PS;
    static constexpr std::size_t kSharedBytes =
        std::size_t(kQFloats + kKFloats + kVFloats + kPFloats) * sizeof(float);
    static_assert(D % 64 == 0, "each thread stores whole float4 groups of 64-column bands");
    static_assert(BC % 32 == 0 && BR % 16 == 0, "tiles are 16-wide thread grids, P has 8 chunks");

    // Where element (row, col) of Q or K lives; col is a multiple of 4 (a 16-byte chunk).
    __device__ static __forceinline__ int qkOffset(int row, int col) {
        if constexpr (kSwizzle) return row * QS + ((((col >> 2) ^ (row & 7))) << 2);
        else return row * QS + col;
    }
    // Where element (row, col) of P lives; any col.
    __device__ static __forceinline__ int pOffset(int row, int col) {
        if constexpr (kSwizzle)
            return row * PS + (((col >> 2) ^ ((row & 1) << 2)) << 2) + (col & 3);
        else return row * PS + col;
    }
};

__device__ __forceinline__ float component(const float4& v, int c) {
    return c == 0 ? v.x : c == 1 ? v.y : c == 2 ? v.z : v.w;
}

template <class T>
__global__ void __launch_bounds__(T::kThreads, T::kMinBlocks)
    flashFastKernel(const AttentionParams p) {
    constexpr int TM = T::TM, TN = T::TN, TD = T::TD, RG = T::kRowGroups;
    constexpr int BR = T::BR, BC = T::BC, D = T::D;
    extern __shared__ __align__(16) float shared[];
    float* sQ = shared;
    float* sK = sQ + T::kQFloats;
    float* sV = sK + T::kKFloats;
    float* sP = sV + T::kVFloats;

    const int tid = int(threadIdx.x);
    const int lane = tid & 31;
    const int rowGroup = (tid >> 5) * 2 + (lane >> 4);
    const int colGroup = lane & 15;
    // Causal blocks near the bottom see the most keys: start them first.
    const int queryBlock = p.causal ? int(gridDim.x) - 1 - int(blockIdx.x) : int(blockIdx.x);
    const int head = int(blockIdx.y);
    const int batch = int(blockIdx.z);
    const float* Q = p.q + batch * p.qBatchStride + head * p.qHeadStride;
    const float* K = p.k + batch * p.kBatchStride + head * p.kHeadStride;
    const float* V = p.v + batch * p.vBatchStride + head * p.vHeadStride;
    float* O = p.o + batch * p.oBatchStride + head * p.oHeadStride;

    const int q0 = queryBlock * BR;
    const int rowEnd = min(q0 + BR, p.queries);
    const int keyBlocks = visibleKeyBlocks(Range{q0, rowEnd}, p.queries, p.keys, BC, p.causal);
    const float scaleLog2 = p.scale * kLog2e;

    float m[TM], l[TM], acc[TM][TD];
#pragma unroll
    for (int i = 0; i < TM; ++i) {
        m[i] = -INFINITY;
        l[i] = 0.0f;
#pragma unroll
        for (int u = 0; u < TD; ++u) acc[i][u] = 0.0f;
    }

    if (keyBlocks > 0) {
        loadTileAsync<T, BR, true>(sQ, Q, p.qRowStride, q0, p.queries, tid);
        loadTileAsync<T, BC, true>(sK, K, p.kRowStride, 0, p.keys, tid);
        copyAsyncCommit();
        loadTileAsync<T, BC, false>(sV, V, p.vRowStride, 0, p.keys, tid);
        copyAsyncCommit();
    }

    for (int j = 0; j < keyBlocks; ++j) {
        const int kv0 = j * BC;
        copyAsyncWait<1>(); // K_j (and Q) landed; V_j may still be in flight
        __syncthreads();

        // S = Q K_j^T for this thread's TM x TN entries.
        float s[TM][TN];
#pragma unroll
        for (int i = 0; i < TM; ++i)
#pragma unroll
            for (int t = 0; t < TN; ++t) s[i][t] = 0.0f;
#pragma unroll T::kUnrollS
        for (int k = 0; k < D; k += 4) {
            float4 qf[TM], kf[TN];
#pragma unroll
            for (int i = 0; i < TM; ++i)
                qf[i] = *reinterpret_cast<const float4*>(sQ + T::qkOffset(rowGroup + i * RG, k));
#pragma unroll
            for (int t = 0; t < TN; ++t)
                kf[t] = *reinterpret_cast<const float4*>(sK + T::qkOffset(colGroup + 16 * t, k));
#pragma unroll
            for (int i = 0; i < TM; ++i)
#pragma unroll
                for (int t = 0; t < TN; ++t) {
                    s[i][t] = fmaf(qf[i].x, kf[t].x, s[i][t]);
                    s[i][t] = fmaf(qf[i].y, kf[t].y, s[i][t]);
                    s[i][t] = fmaf(qf[i].z, kf[t].z, s[i][t]);
                    s[i][t] = fmaf(qf[i].w, kf[t].w, s[i][t]);
                }
        }

        // Ragged last tile and the causal diagonal: hidden keys score -inf.
        if (!tileFullyVisible(q0, kv0, BC, p.queries, p.keys, p.causal)) {
#pragma unroll
            for (int i = 0; i < TM; ++i) {
                const int row = q0 + rowGroup + i * RG;
                const int lastKey = lastVisibleKey(row, p.queries, p.keys, p.causal);
#pragma unroll
                for (int t = 0; t < TN; ++t)
                    if (kv0 + colGroup + 16 * t > lastKey) s[i][t] = -INFINITY;
            }
        }

        // Online softmax: new maximum, correction exp(m_old - m_new), P = exp(S - m_new).
#pragma unroll
        for (int i = 0; i < TM; ++i) {
            float rowMax = s[i][0];
#pragma unroll
            for (int t = 1; t < TN; ++t) rowMax = fmaxf(rowMax, s[i][t]);
#pragma unroll
            for (int offset = 8; offset > 0; offset >>= 1)
                rowMax = fmaxf(rowMax, __shfl_xor_sync(0xffffffffu, rowMax, offset));
            const float mNew = fmaxf(m[i], rowMax * p.scale);
            // A row that has seen no key keeps m = -inf; subtract 0 so exp() gives 0, not NaN.
            const float mUsed = mNew == -INFINITY ? 0.0f : mNew;
            const float correction = exp2Approx((m[i] - mUsed) * kLog2e);
            m[i] = mNew;
            l[i] *= correction;
#pragma unroll
            for (int u = 0; u < TD; ++u) acc[i][u] *= correction;
            const float bias = -mUsed * kLog2e;
            const int pRow = rowGroup + i * RG;
#pragma unroll
            for (int t = 0; t < TN; ++t) {
                const float weight = exp2Approx(fmaf(s[i][t], scaleLog2, bias));
                l[i] += weight;
                sP[T::pOffset(pRow, colGroup + 16 * t)] = weight;
            }
        }

        copyAsyncWait<0>(); // V_j landed
        __syncthreads();    // every thread is past Q K_j^T, V_j and this warp's P are visible
        if (j + 1 < keyBlocks) {
            loadTileAsync<T, BC, true>(sK, K, p.kRowStride, kv0 + BC, p.keys, tid);
            copyAsyncCommit();
        }

        // O += P V_j
#pragma unroll T::kUnrollPV
        for (int c = 0; c < BC; c += 4) {
            float4 pf[TM];
#pragma unroll
            for (int i = 0; i < TM; ++i)
                pf[i] = *reinterpret_cast<const float4*>(sP + T::pOffset(rowGroup + i * RG, c));
#pragma unroll
            for (int cc = 0; cc < 4; ++cc) {
                float4 vf[TD / 4];
#pragma unroll
                for (int u = 0; u < TD / 4; ++u)
                    vf[u] = *reinterpret_cast<const float4*>(sV + (c + cc) * T::VS + u * 64 +
                                                             colGroup * 4);
#pragma unroll
                for (int i = 0; i < TM; ++i) {
                    const float w = component(pf[i], cc);
#pragma unroll
                    for (int u = 0; u < TD / 4; ++u) {
                        acc[i][4 * u + 0] = fmaf(w, vf[u].x, acc[i][4 * u + 0]);
                        acc[i][4 * u + 1] = fmaf(w, vf[u].y, acc[i][4 * u + 1]);
                        acc[i][4 * u + 2] = fmaf(w, vf[u].z, acc[i][4 * u + 2]);
                        acc[i][4 * u + 3] = fmaf(w, vf[u].w, acc[i][4 * u + 3]);
                    }
                }
            }
        }
        __syncthreads(); // every thread is done with V_j
        if (j + 1 < keyBlocks) {
            loadTileAsync<T, BC, false>(sV, V, p.vRowStride, kv0 + BC, p.keys, tid);
            copyAsyncCommit();
        }
    }

    // O = acc / l; a row with l = 0 saw no key and gives 0.
#pragma unroll
    for (int i = 0; i < TM; ++i) {
        float rowSum = l[i];
#pragma unroll
        for (int offset = 8; offset > 0; offset >>= 1)
            rowSum += __shfl_xor_sync(0xffffffffu, rowSum, offset);
        const int row = q0 + rowGroup + i * RG;
        if (row >= p.queries) continue;
        const float inverse = rowSum == 0.0f ? 0.0f : 1.0f / rowSum;
        float* out = O + row * p.oRowStride + colGroup * 4;
#pragma unroll
        for (int u = 0; u < TD / 4; ++u)
            *reinterpret_cast<float4*>(out + u * 64) =
                make_float4(acc[i][4 * u] * inverse, acc[i][4 * u + 1] * inverse,
                            acc[i][4 * u + 2] * inverse, acc[i][4 * u + 3] * inverse);
        if (colGroup == 0) {
            const std::int64_t stat = batch * p.statBatchStride + head * p.statHeadStride + row;
            if (p.m) p.m[stat] = m[i];
            if (p.l) p.l[stat] = rowSum;
        }
    }
}

} // namespace flashviz::cuda::detail
