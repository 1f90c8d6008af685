#pragma once
// The backward mirror kernel (kernel bodies only): core's backward pass (core/backward.cpp:
// forwardSaved's L, rowDots, computeBackwardTile, addValueGradient, applyQueryGradient,
// addKeyGradient and flashBackward's loops) written out for the GPU with the user's Br, Bc and
// bug switches, so the app can animate gradients the GPU computed and each bug gives the CPU's
// wrong answer. K_j, V_j, the dK_j and dV_j accumulators, Q_i, dO_i, L_i (or m_i), D_i and the
// P and dS tiles sit in shared memory, whose size follows from Br, Bc and d at run time; dQ_i is
// read, added to and written back in global memory at every tile, as in FlashAttention-2.
// Speed is not its purpose: it runs teaching-sized problems.
#include "core/tiling.h"
#include "kernels/cuda/params/params.h"

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace flashviz::cuda::detail {

constexpr int kBackwardThreads = 256;
constexpr int kBackwardPrepassThreads = 128;

__host__ __device__ inline std::size_t backwardSharedFloats(int blockRows, int blockCols,
                                                            int headDim) {
    const std::size_t br = std::size_t(blockRows), bc = std::size_t(blockCols),
                      d = std::size_t(headDim);
    return 4 * bc * d + 2 * br * d + 2 * br + 2 * br * bc;
}

__host__ __device__ inline std::size_t backwardTraceSlotFloats(int blockRows, int blockCols,
                                                               int headDim) {
    return (std::size_t(blockRows) + 2 * std::size_t(blockCols)) * std::size_t(headDim);
}

// The pre-pass, one thread per query row: L = m + log l (-inf for a row that saw no key, whose
// P is 0), D = rowsum(dO ∘ O), and dQ = 0.
__global__ void __launch_bounds__(kBackwardPrepassThreads)
    backwardPrepassKernel(const BackwardParams bp) {
    const AttentionParams& p = bp.attention;
    const int row = int(blockIdx.x) * int(blockDim.x) + int(threadIdx.x);
    if (row >= p.queries) return;
    const int head = int(blockIdx.y);
    const int batch = int(blockIdx.z);
    const std::int64_t stat = batch * p.statBatchStride + head * p.statHeadStride + row;
    const std::int64_t qRow = batch * p.qBatchStride + head * p.qHeadStride + row * p.qRowStride;
    const std::int64_t oRow = batch * p.oBatchStride + head * p.oHeadStride + row * p.oRowStride;
    const float l = p.l[stat];
    bp.lse[stat] = l == 0.0f ? -INFINITY : p.m[stat] + logf(l);
    float dot = 0.0f;
    for (int c = 0; c < p.headDim; ++c)
        dot = fmaf(bp.dO[qRow + c], p.o[oRow + c], dot);
    bp.delta[stat] = dot;
    for (int c = 0; c < p.headDim; ++c)
        bp.dq[qRow + c] = 0.0f;
}

// One thread block per (head, batch) walks key blocks in order, as the CPU does: dQ_i's
// read-add-write then happens in key-block order with no atomics, deterministic.
__global__ void __launch_bounds__(kBackwardThreads)
    flashBackwardMirrorKernel(const BackwardParams bp) {
    const AttentionParams& p = bp.attention;
    const int br = bp.blockRows, bc = bp.blockCols, d = p.headDim;
    extern __shared__ __align__(16) float shared[];
    float* sK = shared;
    float* sV = sK + bc * d;
    float* sdK = sV + bc * d;
    float* sdV = sdK + bc * d;
    float* sQ = sdV + bc * d;
    float* sdO = sQ + br * d;
    float* sOffset = sdO + br * d; // the row offset P is recomputed against: L, or m with the bug
    float* sD = sOffset + br;
    float* sP = sD + br;       // Br x Bc
    float* sdS = sP + br * bc; // Br x Bc

    const int tid = int(threadIdx.x);
    const int threads = int(blockDim.x);
    const int head = int(blockIdx.x);
    const int batch = int(blockIdx.y);
    const std::int64_t qBase = batch * p.qBatchStride + head * p.qHeadStride;
    const std::int64_t kBase = batch * p.kBatchStride + head * p.kHeadStride;
    const std::int64_t vBase = batch * p.vBatchStride + head * p.vHeadStride;
    const std::int64_t statBase = batch * p.statBatchStride + head * p.statHeadStride;
    const float* Q = p.q + qBase;
    const float* dO = bp.dO + qBase;
    float* dQ = bp.dq + qBase;
    const float* K = p.k + kBase;
    const float* V = p.v + vBase;
    float* dK = bp.dk + kBase;
    float* dV = bp.dv + kBase;
    // A stored P is the forward's softmax: exp(S - L) of the masked scores, whatever the bugs say.
    const float* offset = (bp.storeWeights || bp.useLogSumExp ? bp.lse : p.m) + statBase;
    const bool mask = bp.storeWeights || bp.maskRecompute;
    const float* D = bp.delta + statBase;

    const int queryBlocks = blockCount(p.queries, br);
    const int keyBlocks = blockCount(p.keys, bc);
    const std::size_t slotFloats = backwardTraceSlotFloats(br, bc, d);

    for (int kb = 0; kb < keyBlocks; ++kb) {
        const int k0 = kb * bc;
        const int cols = min(bc, p.keys - k0);
        __syncthreads(); // the previous key block is done with sK, sV, sdK, sdV
        for (int e = tid; e < cols * d; e += threads) {
            const int r = e / d, c = e % d;
            sK[e] = K[(k0 + r) * p.kRowStride + c];
            sV[e] = V[(k0 + r) * p.vRowStride + c];
            sdK[e] = 0.0f;
            sdV[e] = 0.0f;
        }
        for (int qb = 0; qb < queryBlocks; ++qb) {
            const int q0 = qb * br;
            const int rows = min(br, p.queries - q0);
            // Only the query blocks the causal mask lets see key block kb: a suffix of them.
            if (visibleKeyBlocks(Range{q0, q0 + rows}, p.queries, p.keys, bc, p.causal) <= kb)
                continue;
            __syncthreads(); // the previous tile is done with sQ, sdO, sP, sdS; K_j, V_j loaded
            for (int e = tid; e < rows * d; e += threads) {
                const int r = e / d, c = e % d;
                sQ[e] = Q[(q0 + r) * p.qRowStride + c];
                sdO[e] = dO[(q0 + r) * p.qRowStride + c];
            }
            for (int r = tid; r < rows; r += threads) {
                sOffset[r] = offset[q0 + r];
                sD[r] = D[q0 + r];
            }
            __syncthreads();

            // S = Q K^T, masked, then scaled (as the forward); P = exp(S - L), 0 where S is -inf;
            // dP = dO V^T; dS = P ∘ (dP - D) (the bug: P ∘ dP).
            const bool fullyVisible = tileFullyVisible(q0, k0, cols, p.queries, p.keys, p.causal);
            for (int e = tid; e < rows * cols; e += threads) {
                const int r = e / cols, c = e % cols;
                float dot = 0.0f, dWeight = 0.0f;
                for (int k = 0; k < d; ++k) {
                    dot = fmaf(sQ[r * d + k], sK[c * d + k], dot);
                    dWeight = fmaf(sdO[r * d + k], sV[c * d + k], dWeight);
                }
                const bool hidden =
                    mask && !fullyVisible && !causallyVisible(q0 + r, k0 + c, p.queries, p.keys);
                const float score = (hidden ? -INFINITY : dot) * p.scale;
                const float weight = score == -INFINITY ? 0.0f : expf(score - sOffset[r]);
                sP[r * bc + c] = weight;
                sdS[r * bc + c] = bp.subtractRowDot ? weight * (dWeight - sD[r]) : weight * dWeight;
            }
            __syncthreads();

            float* slot =
                bp.trace
                    ? bp.trace + (std::size_t(kb) * std::size_t(queryBlocks) + std::size_t(qb)) *
                                     slotFloats
                    : nullptr;
            // dV_j += P^T dO_i and dK_j += scale dS^T Q_i, each entry owned by one thread.
            for (int e = tid; e < cols * d; e += threads) {
                const int c = e / d, k = e % d;
                float pdO = 0.0f, dSQ = 0.0f;
                for (int r = 0; r < rows; ++r) {
                    pdO = fmaf(sP[r * bc + c], sdO[r * d + k], pdO);
                    dSQ = fmaf(sdS[r * bc + c], sQ[r * d + k], dSQ);
                }
                sdV[e] += pdO;
                sdK[e] += p.scale * dSQ;
                if (slot) {
                    slot[br * d + e] = sdK[e];
                    slot[(br + bc) * d + e] = sdV[e];
                }
            }
            // dQ_i += scale dS K_j, read-modify-written in global memory (the bug: overwritten).
            for (int e = tid; e < rows * d; e += threads) {
                const int r = e / d, k = e % d;
                float dSK = 0.0f;
                for (int c = 0; c < cols; ++c)
                    dSK = fmaf(sdS[r * bc + c], sK[c * d + k], dSK);
                float* dq = dQ + (q0 + r) * p.qRowStride + k;
                const float update = p.scale * dSK;
                const float value = bp.accumulateDq ? *dq + update : update;
                *dq = value;
                if (slot) slot[e] = value;
            }
        }
        // Store dK_j, dV_j: each entry is written by the thread that accumulated it.
        for (int e = tid; e < cols * d; e += threads) {
            const int r = e / d, c = e % d;
            dK[(k0 + r) * p.kRowStride + c] = sdK[e];
            dV[(k0 + r) * p.kRowStride + c] = sdV[e];
        }
    }
}

} // namespace flashviz::cuda::detail
