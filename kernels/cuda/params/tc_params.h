#pragma once
// Parameters of the tensor-core (fp16 / bf16) FlashAttention kernel: device pointers, sizes and
// element strides, nothing else, so the launch layer's callers are plain C++. Internal to
// kernels/cuda; the public face is the HalfAttention section of kernels/cuda_backend.h.
#include "kernels/cuda/params/qkv_params.h"

namespace flashviz::cuda {

// Element type of Q, K, V and O (accumulation is always fp32).
enum class TcElement { Fp16, Bf16 };

// Sizes, strides, scale and mask as in QkvParams; every row must start on a 16-byte boundary
// (row strides and pointers multiples of 8 elements / 16 bytes).
struct TcParams : QkvParams {
    const void* q = nullptr;
    const void* k = nullptr;
    const void* v = nullptr;
    void* o = nullptr;

    TcElement element = TcElement::Fp16;
};

// Self-attention (n queries, n keys) over dense [batch][heads][n][d] tensors: the benchmarks' shape.
inline TcParams denseSelfAttentionParams(const void* q, const void* k, const void* v, void* o,
                                         int batch, int heads, int n, int headDim, float scale,
                                         bool causal, TcElement element) {
    TcParams p = denseSelfAttention<TcParams>(batch, heads, n, headDim, scale, causal);
    p.q = q;
    p.k = k;
    p.v = v;
    p.o = o;
    p.element = element;
    return p;
}

} // namespace flashviz::cuda
