#pragma once
// Plain parameter structs handed to the kernels by value, in the manner of flash-attention's
// flash.h: device pointers, sizes and element strides, nothing else. No CUDA types, so the
// launch layer's callers (the backend, the benchmark) are ordinary C++.
#include "kernels/cuda/params/qkv_params.h"

namespace flashviz::cuda {

// Q is [batch][heads][queries][d], K and V [batch][heads][keys][d], O like Q (the strides in
// QkvParams), m and l [batch][heads][queries]; every stride is in elements.
struct AttentionParams : QkvParams {
    const float* q = nullptr;
    const float* k = nullptr;
    const float* v = nullptr;
    float* o = nullptr;
    float* m = nullptr; // final running maximum per query row; may be null
    float* l = nullptr; // final running sum per query row; may be null

    std::int64_t statHeadStride = 0, statBatchStride = 0; // for m and l
};

// QkvParams' dense strides, and m and l's for [batch][heads][queries].
inline void setDenseStrides(AttentionParams& p, DenseLayout layout = DenseLayout::HeadMajor) {
    setDenseStrides(static_cast<QkvParams&>(p), layout);
    p.statHeadStride = p.queries;
    p.statBatchStride = std::int64_t(p.queries) * p.heads;
}

// Self-attention (n queries, n keys) over dense [batch][heads][n][d] tensors with the usual
// 1 / sqrt(d) scale: the benchmarks' shape. m and l are not written.
inline AttentionParams denseSelfAttentionParams(const float* q, const float* k, const float* v,
                                                float* o, int batch, int heads, int n,
                                                int headDim, bool causal) {
    AttentionParams p = denseSelfAttention<AttentionParams>(batch, heads, n, headDim,
                                                            defaultSoftmaxScale(headDim), causal);
    p.q = q;
    p.k = k;
    p.v = v;
    p.o = o;
    return p;
}

// The mirror kernel: the CPU engine's updateTile, step for step, with the user's block sizes
// and switches. One head (batch = heads = 1 in `attention`).
struct MirrorParams {
    AttentionParams attention;
    int blockRows = 64;       // Br
    int blockCols = 64;       // Bc
    bool rescale = true;      // false: the bug, no exp(m_old - m_new) on l and the accumulator
    bool runningMax = true;   // false: m stays 0, nothing is subtracted
    float* fullScores = nullptr; // queries x keys, written when keepFullScores is on
    // Trace: one slot per (query block, key block) of blockRows * (3 + d) floats, laid out
    // m[Br], l[Br], correction[Br], acc[Br][d]; slot = queryBlock * keyBlocks + keyBlock.
    float* trace = nullptr;
};

// The backward mirror kernel: core's backward tile arithmetic (core/backward.cpp), step for
// step, with the user's block sizes and bug switches. `attention` holds Q, K, V and the forward's
// O, m and l; dO and dQ are laid out like Q, dK and dV like K, lse and delta like m. One head
// per thread block (batch and heads in `attention` set the grid).
struct BackwardParams {
    AttentionParams attention;
    const float* dO = nullptr;
    // Written by the pre-pass, per query row: L = m + log l (-inf where l = 0), D = rowsum(dO ∘ O).
    float* lse = nullptr;
    float* delta = nullptr;
    float* dq = nullptr;
    float* dk = nullptr;
    float* dv = nullptr;
    int blockRows = 64; // Br
    int blockCols = 64; // Bc
    // The switches of core's BackwardOptions that change the arithmetic (options.h says what each
    // bug does); storeWeights: P as the forward's softmax, which the recompute bugs cannot touch.
    bool subtractRowDot = true;
    bool useLogSumExp = true;
    bool accumulateDq = true;
    bool maskRecompute = true;
    bool storeWeights = false;
    // Trace: one slot per (key block, query block) of (blockRows + 2 blockCols) * d floats, laid
    // out dQ_i[Br][d] as written back, dK_j[Bc][d], dV_j[Bc][d] after the tile;
    // slot = keyBlock * queryBlocks + queryBlock.
    float* trace = nullptr;
};

} // namespace flashviz::cuda
