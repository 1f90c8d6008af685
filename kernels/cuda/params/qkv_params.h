#pragma once
// What every attention kernel's parameters share, in the manner of flash-attention's
// Qkv_params → Flash_fwd_params: sizes, element strides, the scale and the mask. Each family's
// struct derives from QkvParams and adds its pointers (params.h: fp32 AttentionParams,
// tc_params.h: fp16 / bf16 TcParams). No CUDA types; kernels take the derived structs by value,
// so they stay trivially copyable. Written once here: the dense strides, the dense
// self-attention shape and the alignment checks.
#include <array>
#include <cmath>
#include <cstdint>
#include <type_traits>

namespace flashviz::cuda {

// Q and O are indexed [b][h][i][c] at b * batchStride + h * headStride + i * rowStride + c, K and
// V likewise with j < keys; the last dimension (d) is contiguous. Every stride is in elements.
// The fields keep the order they had in each family's struct (their offsets mod 16 with them).
struct QkvParams {
    int batch = 1;
    int heads = 1;
    int queries = 0;
    int keys = 0;
    int headDim = 0;

    std::int64_t qRowStride = 0, qHeadStride = 0, qBatchStride = 0;
    std::int64_t kRowStride = 0, kHeadStride = 0, kBatchStride = 0;
    std::int64_t vRowStride = 0, vHeadStride = 0, vBatchStride = 0;
    std::int64_t oRowStride = 0, oHeadStride = 0, oBatchStride = 0;

    float scale = 1.0f;  // softmax scale, > 0
    bool causal = false; // bottom-right aligned: row i sees keys j <= i + (keys - queries)
};

// How densely packed tensors are laid out: [batch][heads][n][d] (head-major, FlashViz's own)
// or [batch][n][heads][d] (sequence-major, flash-attn's and PyTorch's).
enum class DenseLayout { HeadMajor, SequenceMajor };

// Fills the twelve strides for densely packed Q, K, V and O of p's sizes.
inline void setDenseStrides(QkvParams& p, DenseLayout layout = DenseLayout::HeadMajor) {
    const bool sequenceMajor = layout == DenseLayout::SequenceMajor;
    const std::int64_t d = p.headDim, h = p.heads;
    auto set = [&](std::int64_t rows, std::int64_t& row, std::int64_t& head, std::int64_t& batch) {
        row = sequenceMajor ? h * d : d;
        head = sequenceMajor ? d : rows * d;
        batch = rows * h * d;
    };
    set(p.queries, p.qRowStride, p.qHeadStride, p.qBatchStride);
    set(p.keys, p.kRowStride, p.kHeadStride, p.kBatchStride);
    set(p.keys, p.vRowStride, p.vHeadStride, p.vBatchStride);
    set(p.queries, p.oRowStride, p.oHeadStride, p.oBatchStride);
}

// The usual softmax scale, 1 / sqrt(d).
inline float defaultSoftmaxScale(int headDim) { return float(1.0 / std::sqrt(double(headDim))); }

// Self-attention (n queries, n keys) over dense [batch][heads][n][d] tensors, pointers left
// null: the benchmarks' shape. setDenseStrides is found for P by argument-dependent lookup, so
// a family that adds strides of its own (AttentionParams: m and l) has them set too.
template <class P>
P denseSelfAttention(int batch, int heads, int n, int headDim, float scale, bool causal) {
    static_assert(std::is_base_of_v<QkvParams, P> && std::is_trivially_copyable_v<P>,
                  "kernel parameters derive from QkvParams and are copied to the GPU as bytes");
    P p;
    p.batch = batch;
    p.heads = heads;
    p.queries = n;
    p.keys = n;
    p.headDim = headDim;
    p.scale = scale;
    p.causal = causal;
    setDenseStrides(p, DenseLayout::HeadMajor);
    return p;
}

// The twelve strides: Q's, K's, V's and O's, each row, head, batch.
inline std::array<std::int64_t, 12> strides(const QkvParams& p) {
    return {p.qRowStride, p.qHeadStride, p.qBatchStride, p.kRowStride, p.kHeadStride, p.kBatchStride,
            p.vRowStride, p.vHeadStride, p.vBatchStride, p.oRowStride, p.oHeadStride, p.oBatchStride};
}

// Whether Q, K, V and O are densely packed in this layout (setDenseStrides' strides).
inline bool hasDenseStrides(const QkvParams& p, DenseLayout layout = DenseLayout::HeadMajor) {
    QkvParams dense = p;
    setDenseStrides(dense, layout);
    return strides(p) == strides(dense);
}

// Whether each of the twelve strides is a multiple of `elements`.
inline bool stridesAreMultiplesOf(const QkvParams& p, std::int64_t elements) {
    for (const std::int64_t s : strides(p))
        if (s % elements != 0) return false;
    return true;
}

// Whether Q, K, V and O of a family's params all start on a 16-byte boundary.
template <class P>
bool pointersAligned16(const P& p) {
    auto aligned = [](const void* pointer) {
        return reinterpret_cast<std::uintptr_t>(pointer) % 16 == 0;
    };
    return aligned(p.q) && aligned(p.k) && aligned(p.v) && aligned(p.o);
}

// Every row of Q, K, V and O on a 16-byte boundary: strides multiples of 16 bytes and the
// pointers 16-byte aligned, for elements of `elementBytes`.
template <class P>
bool rowsAligned16(const P& p, int elementBytes) {
    return stridesAreMultiplesOf(p, 16 / elementBytes) && pointersAligned16(p);
}

} // namespace flashviz::cuda
