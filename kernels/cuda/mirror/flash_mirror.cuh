#pragma once
// The mirror kernel (kernel body only): the CPU engine's updateTile (core/tile_update.cpp)
// written out for the GPU, with the user's Br, Bc, rescale and running-max switches, so the
// app can show values the GPU computed beside the CPU's and the rescale bug gives the same
// wrong answer on both. One thread block per query block; the Q tile, the K and V tiles, the
// score tile, m, l, the correction and the O accumulator all sit in shared memory, whose size
// follows from Br, Bc and d at run time. Speed is not its purpose: flash_fast.cuh is.
#include "kernels/cuda/params/params.h"
#include "kernels/kernel_configs.h"
#include "core/tiling.h"

#include <cuda_runtime.h>

#include <cstddef>

namespace flashviz::cuda::detail {

using kernels::kMirrorThreads;
using kernels::mirrorSharedFloats;

__global__ void __launch_bounds__(kMirrorThreads) flashMirrorKernel(const MirrorParams mp) {
    const AttentionParams& p = mp.attention;
    const int br = mp.blockRows, bc = mp.blockCols, d = p.headDim;
    extern __shared__ __align__(16) float shared[];
    float* sQ = shared;
    float* sK = sQ + br * d;
    float* sV = sK + bc * d;
    float* sS = sV + bc * d;   // scores, then the weights P in place
    float* sAcc = sS + br * bc; // unnormalised output
    float* sM = sAcc + br * d;
    float* sL = sM + br;
    float* sC = sL + br; // this tile's correction factor per row

    const int tid = int(threadIdx.x);
    const int threads = int(blockDim.x);
    const int queryBlock = int(blockIdx.x);
    const int head = int(blockIdx.y);
    const int batch = int(blockIdx.z);
    const float* Q = p.q + batch * p.qBatchStride + head * p.qHeadStride;
    const float* K = p.k + batch * p.kBatchStride + head * p.kHeadStride;
    const float* V = p.v + batch * p.vBatchStride + head * p.vHeadStride;
    float* O = p.o + batch * p.oBatchStride + head * p.oHeadStride;

    const int q0 = queryBlock * br;
    const int rows = min(br, p.queries - q0);
    const int keyBlocksAll = blockCount(p.keys, bc);
    const int keyBlocks = visibleKeyBlocks(Range{q0, q0 + rows}, p.queries, p.keys, bc, p.causal);
    const bool rescaling = mp.rescale && mp.runningMax;

    for (int e = tid; e < rows * d; e += threads) {
        const int r = e / d, c = e % d;
        sQ[e] = Q[(q0 + r) * p.qRowStride + c];
        sAcc[e] = 0.0f;
    }
    for (int r = tid; r < rows; r += threads) {
        sM[r] = mp.runningMax ? -INFINITY : 0.0f; // without a running max m stays 0
        sL[r] = 0.0f;
        sC[r] = 1.0f;
    }

    for (int kb = 0; kb < keyBlocks; ++kb) {
        const int kv0 = kb * bc;
        const int cols = min(bc, p.keys - kv0);
        __syncthreads(); // the previous tile is done with sK, sV, sS
        for (int e = tid; e < cols * d; e += threads) {
            const int r = e / d, c = e % d;
            sK[e] = K[(kv0 + r) * p.kRowStride + c];
            sV[e] = V[(kv0 + r) * p.vRowStride + c];
        }
        __syncthreads();

        // S = scale * Q K^T; keys the causal mask hides score -inf.
        const bool fullyVisible = tileFullyVisible(q0, kv0, cols, p.queries, p.keys, p.causal);
        for (int e = tid; e < rows * cols; e += threads) {
            const int r = e / cols, c = e % cols;
            float dot = 0.0f;
            for (int k = 0; k < d; ++k) dot = fmaf(sQ[r * d + k], sK[c * d + k], dot);
            float score = dot * p.scale;
            if (!fullyVisible && !causallyVisible(q0 + r, kv0 + c, p.queries, p.keys)) score = -INFINITY;
            sS[r * bc + c] = score;
            if (mp.fullScores) mp.fullScores[std::int64_t(q0 + r) * p.keys + kv0 + c] = score;
        }
        __syncthreads();

        // Per row: m_new, P = exp(S - m_new), correction, l.
        for (int r = tid; r < rows; r += threads) {
            float* row = sS + r * bc;
            const float mOld = sM[r];
            float mNew = mOld;
            if (mp.runningMax)
                for (int c = 0; c < cols; ++c) mNew = fmaxf(mNew, row[c]);
            float sum = 0.0f;
            if (mNew == -INFINITY) { // every key so far hidden: exp(-inf - -inf) would be NaN
                for (int c = 0; c < cols; ++c) row[c] = 0.0f;
            } else {
                for (int c = 0; c < cols; ++c) {
                    const float weight = expf(row[c] - mNew);
                    row[c] = weight;
                    sum += weight;
                }
            }
            float correction = 1.0f; // the bug, and no running max: nothing is rescaled
            if (rescaling) {
                correction = expf(mOld - mNew);
                if (isnan(correction)) correction = 0.0f; // -inf minus -inf
                sL[r] = correction * sL[r] + sum;
            } else {
                sL[r] = sL[r] + sum;
            }
            sM[r] = mNew;
            sC[r] = correction;
        }
        __syncthreads();

        // acc = correction * acc + P V (the bug leaves acc unscaled).
        float* slot = mp.trace
                          ? mp.trace + (std::int64_t(queryBlock) * keyBlocksAll + kb) *
                                           std::int64_t(br) * (3 + d)
                          : nullptr;
        for (int e = tid; e < rows * d; e += threads) {
            const int r = e / d, c = e % d;
            float a = sAcc[e];
            if (rescaling) a = sC[r] * a;
            float pv = 0.0f;
            for (int k = 0; k < cols; ++k) pv = fmaf(sS[r * bc + k], sV[k * d + c], pv);
            a += pv;
            sAcc[e] = a;
            if (slot) slot[3 * br + e] = a;
        }
        if (slot)
            for (int r = tid; r < rows; r += threads) {
                slot[r] = sM[r];
                slot[br + r] = sL[r];
                slot[2 * br + r] = sC[r];
            }
    }
    __syncthreads();

    // O = acc / l; l == 0 only when the row saw no key, and then O is 0.
    for (int e = tid; e < rows * d; e += threads) {
        const int r = e / d, c = e % d;
        const float sum = sL[r];
        O[(q0 + r) * p.oRowStride + c] = sum == 0.0f ? 0.0f : sAcc[e] / sum;
    }
    for (int r = tid; r < rows; r += threads) {
        const std::int64_t stat = batch * p.statBatchStride + head * p.statHeadStride + q0 + r;
        if (p.m) p.m[stat] = sM[r];
        if (p.l) p.l[stat] = sL[r];
    }
}

} // namespace flashviz::cuda::detail
