#pragma once
// The middle step of ordinary attention on the GPU (kernel body only): each row of the
// n_q x n_k score matrix becomes softmax weights in place, with the causal mask applied and rows
// that see no key set to 0. Memory-bound: one pass for the maximum and sum (kept online per
// thread), one pass to write. One thread block per row.
#include "core/tiling.h"

#include <cuda_runtime.h>

#include <cstdint>

namespace flashviz::cuda::detail {

constexpr int kSoftmaxThreads = 256;

struct MaxSum {
    float m;
    float l;
};

__device__ __forceinline__ MaxSum combine(MaxSum a, MaxSum b) {
    const float m = fmaxf(a.m, b.m);
    if (m == -INFINITY) return {m, 0.0f};
    return {m, a.l * expf(a.m - m) + b.l * expf(b.m - m)};
}

__device__ __forceinline__ void accumulate(MaxSum& state, float x) {
    if (x == -INFINITY) return;
    if (x > state.m) {
        state.l = state.l * expf(state.m - x) + 1.0f;
        state.m = x;
    } else {
        state.l += expf(x - state.m);
    }
}

// Vec4: rows are read and written four floats at a time (keys % 4 == 0).
template <bool Vec4>
__global__ void __launch_bounds__(kSoftmaxThreads)
    softmaxRowsKernel(float* scores, int queries, int keys, bool causal) {
    const std::int64_t rowIndex = blockIdx.x;
    const int queryRow = int(rowIndex % queries);
    const int lastKey = lastVisibleKey(queryRow, queries, keys, causal);
    float* row = scores + rowIndex * keys;
    const int tid = int(threadIdx.x);

    MaxSum state{-INFINITY, 0.0f};
    if (Vec4) {
        const float4* row4 = reinterpret_cast<const float4*>(row);
        for (int c = tid * 4; c <= lastKey; c += kSoftmaxThreads * 4) {
            const float4 x = row4[c / 4];
            accumulate(state, x.x);
            if (c + 1 <= lastKey) accumulate(state, x.y);
            if (c + 2 <= lastKey) accumulate(state, x.z);
            if (c + 3 <= lastKey) accumulate(state, x.w);
        }
    } else {
        for (int c = tid; c <= lastKey; c += kSoftmaxThreads) accumulate(state, row[c]);
    }

    // Reduce (m, l) over the block: within each warp, then across warps.
    for (int offset = 16; offset > 0; offset >>= 1) {
        const MaxSum other{__shfl_xor_sync(0xffffffffu, state.m, offset),
                           __shfl_xor_sync(0xffffffffu, state.l, offset)};
        state = combine(state, other);
    }
    __shared__ MaxSum warpStates[kSoftmaxThreads / 32];
    __shared__ MaxSum rowState;
    if ((tid & 31) == 0) warpStates[tid >> 5] = state;
    __syncthreads();
    if (tid == 0) {
        MaxSum total = warpStates[0];
        for (int w = 1; w < kSoftmaxThreads / 32; ++w) total = combine(total, warpStates[w]);
        rowState = total;
    }
    __syncthreads();
    const float m = rowState.m;
    const float inverse = rowState.l > 0.0f ? 1.0f / rowState.l : 0.0f;
    const bool none = m == -INFINITY; // no visible key: the row is 0

    if (Vec4) {
        float4* row4 = reinterpret_cast<float4*>(row);
        for (int c = tid * 4; c < keys; c += kSoftmaxThreads * 4) {
            float4 x = row4[c / 4];
            x.x = (none || c > lastKey) ? 0.0f : expf(x.x - m) * inverse;
            x.y = (none || c + 1 > lastKey) ? 0.0f : expf(x.y - m) * inverse;
            x.z = (none || c + 2 > lastKey) ? 0.0f : expf(x.z - m) * inverse;
            x.w = (none || c + 3 > lastKey) ? 0.0f : expf(x.w - m) * inverse;
            row4[c / 4] = x;
        }
    } else {
        for (int c = tid; c < keys; c += kSoftmaxThreads)
            row[c] = (none || c > lastKey) ? 0.0f : expf(row[c] - m) * inverse;
    }
}

} // namespace flashviz::cuda::detail
