#pragma once
// Parameters of the tensor-core (fp16 / bf16) FlashAttention kernel: device pointers, sizes and
// element strides, nothing else, so the launch layer's callers are plain C++. Internal to
// kernels/cuda; the public face is the HalfAttention section of kernels/cuda_backend.h.
#include <cstdint>

namespace flashviz::cuda {

// Element type of Q, K, V and O (accumulation is always fp32).
enum class TcElement { Fp16, Bf16 };

// Q and O are indexed [b][h][i][c] at b * batchStride + h * headStride + i * rowStride + c, K and
// V likewise with j < keys; the last dimension (d) is contiguous. Every row must start on a
// 16-byte boundary (row strides and pointers multiples of 8 elements / 16 bytes).
struct TcParams {
    const void* q = nullptr;
    const void* k = nullptr;
    const void* v = nullptr;
    void* o = nullptr;

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
    TcElement element = TcElement::Fp16;
};

} // namespace flashviz::cuda
