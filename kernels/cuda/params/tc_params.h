#pragma once
// Parameters of the tensor-core (fp16 / bf16) FlashAttention kernel: device pointers, sizes and
// element strides, so the launch layer's callers are plain C++, and the one switch from a
// launch's element type and mask to a kernel's template arguments. Internal to kernels/cuda; the
// public face is the HalfAttention section of kernels/cuda_backend.h.
#include "kernels/cuda/params/qkv_params.h"

#include <type_traits>

namespace flashviz::cuda {

// Element type of Q, K, V and O (accumulation is always fp32).
enum class TcElement { Fp16, Bf16 };

// Calls launch(element, causal) with both as types (std::integral_constant), so that a launcher
// instantiates its kernel for what the parameters ask in one line:
//   withElementAndMask(p.element, p.causal, [&](auto e, auto causal) {
//       launchTyped<Tile, decltype(e)::value, decltype(causal)::value>(p); });
template <class Launch>
void withElementAndMask(TcElement element, bool causal, Launch&& launch) {
    using Fp16 = std::integral_constant<TcElement, TcElement::Fp16>;
    using Bf16 = std::integral_constant<TcElement, TcElement::Bf16>;
    if (element == TcElement::Fp16) causal ? launch(Fp16{}, std::true_type{}) : launch(Fp16{}, std::false_type{});
    else causal ? launch(Bf16{}, std::true_type{}) : launch(Bf16{}, std::false_type{});
}

// Sizes, strides, scale and mask as in QkvParams; every row must start on a 16-byte boundary
// (row strides and pointers multiples of 8 elements / 16 bytes).
struct TcParams : QkvParams {
    const void* q = nullptr;
    const void* k = nullptr;
    const void* v = nullptr;
    void* o = nullptr;

    TcElement element = TcElement::Fp16;
    // Each query row's log-sum-exp, dense [batch][heads][queries] fp32 (detail::logSumExp): the
    // forward writes it when set (null: not at all), the backward (tc_backward.cuh) reads it.
    float* lse = nullptr;
};

// The backward pass (sm80/tc_backward.cuh): the forward's TcParams, with `lse` as the forward
// wrote it, and the gradients. dO has O's strides, dQ Q's, dK K's and dV V's. `workspace` is
// fp32 scratch of tcBackwardWorkspaceFloats (sm80/tc_backward_launch.h), which the launcher
// divides into dqAccum, lse2 and delta.
struct TcBackwardParams : TcParams {
    const void* dout = nullptr;
    void* dq = nullptr;
    void* dk = nullptr;
    void* dv = nullptr;
    float* workspace = nullptr;

    // Set by the launcher: rows per (batch, head) in the scratch, queries rounded up to a
    // multiple of every variant's query block, so blocks read and add whole rows there.
    int rowsPadded = 0;
    float* dqAccum = nullptr; // [batch][heads][rowsPadded][d]: dQ / scale, summed over key blocks
    float* lse2 = nullptr;    // [batch][heads][rowsPadded]: LSE log2(e); +inf on rows that see no key
    float* delta = nullptr;   // [batch][heads][rowsPadded]: D = rowsum(dO o O); 0 past the queries
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
