#pragma once
// The tensor-core FlashAttention forward kernel (issue 5): fp16 or bf16 Q, K, V and O, fp32
// accumulation, FlashAttention-2's work split. Each block owns BR = 16 x MT x warps query rows of
// one (batch, head); each warp owns 16 x MT of them and computes its S = Q K^T and O += P V
// slices with mma.sync.m16n8k16 (sm_80 instruction set: runs on the A100 and on Hopper). K and V
// tiles of BC keys stream through shared memory by cp.async, double-buffered: tile j + 1 is in
// flight while tile j is used. Fragments come from shared memory by ldmatrix (.trans for V);
// rows of 16-byte chunks are XOR-swizzled (chunk c of row r at c ^ (r & 7)) so the 8 row
// addresses of every ldmatrix hit 8 different bank groups. The softmax runs on the S
// accumulators in registers with exp2 and the scale folded into log2(e); P is rounded to the
// input type in registers and fed straight to the second mma as its A operand. Q stays in
// registers for the whole pass (QInRegs) or is re-read from shared memory per tile (less
// register pressure for MT = 2 at d = 128).
#include "kernels/cuda/primitives/async_copy.cuh"
#include "kernels/cuda/primitives/math.cuh"
#include "kernels/cuda/primitives/matrix_ops.cuh"
#include "kernels/cuda/sm80/mma_softmax.cuh"
#include "kernels/cuda/params/tc_params.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <cstring>

namespace flashviz::cuda::tc {

using primitives::copyAsync16;
using primitives::ldmatrixX4;
using primitives::ldmatrixX4Trans;
using primitives::opaque;

template <int D_, int Warps_, int MT_, int BC_, bool QInRegs_, int MinBlocks_, bool SkipRescale_>
struct TcTile {
    static constexpr int D = D_;
    static constexpr int kWarps = Warps_;
    static constexpr int MT = MT_; // 16-row mma tiles per warp
    static constexpr int BC = BC_; // keys per tile
    static constexpr bool QInRegs = QInRegs_;
    // Q's A fragments when they stay in registers; with Q in shared memory a 1 x 1 x 4 array that
    // is never read, so that one kernel body serves both.
    using QFragments = std::uint32_t[QInRegs ? MT : 1][QInRegs ? D / 16 : 1][4];
    static constexpr int kMinBlocks = MinBlocks_;
    // Skip O's rescale when no row maximum of the warp changed (see onlineSoftmax). Measured
    // per variant: a gain only where registers are tightest (TC_NOTES.md, v2).
    static constexpr bool kSkipRescale = SkipRescale_;
    static constexpr int kThreads = kWarps * 32;
    static constexpr int BR = kWarps * 16 * MT;
    static constexpr int kChunks = D / 8; // 16-byte chunks per row
    static constexpr int kQBytes = BR * D * 2;
    static constexpr int kKVBytes = BC * D * 2;
    // Q, K x 2, V x 2, and slack to align the start to kAlign (see tcFlashKernel).
    static constexpr int kAlign = 256;
    static constexpr int kSharedBytes = kQBytes + 4 * kKVBytes + kAlign;
    static_assert(D % 64 == 0 && BC % 16 == 0, "tile shape");
    static_assert((BR * kChunks) % kThreads == 0 && (BC * kChunks) % kThreads == 0, "tile loads");
};

template <TcElement E>
struct Element;

template <>
struct Element<TcElement::Fp16> {
    __device__ __forceinline__ static float2 unpack(std::uint32_t bits) {
        return __half22float2(*reinterpret_cast<const __half2*>(&bits));
    }
    __device__ __forceinline__ static std::uint32_t pack(float lo, float hi) {
        const __half2 h = __floats2half2_rn(lo, hi);
        std::uint32_t r;
        std::memcpy(&r, &h, 4);
        return r;
    }
    __device__ __forceinline__ static void mma(float (&c)[4], const std::uint32_t (&a)[4],
                                               std::uint32_t b0, std::uint32_t b1) {
        primitives::mmaF16(c, a, b0, b1);
    }
};

template <>
struct Element<TcElement::Bf16> {
    __device__ __forceinline__ static float2 unpack(std::uint32_t bits) {
        return __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(&bits));
    }
    __device__ __forceinline__ static std::uint32_t pack(float lo, float hi) {
        const __nv_bfloat162 h = __floats2bfloat162_rn(lo, hi);
        std::uint32_t r;
        std::memcpy(&r, &h, 4);
        return r;
    }
    __device__ __forceinline__ static void mma(float (&c)[4], const std::uint32_t (&a)[4],
                                               std::uint32_t b0, std::uint32_t b1) {
        primitives::mmaBf16(c, a, b0, b1);
    }
};

// Rows [0, Rows) of a tile into swizzled shared memory; rows at or past `validRows` are zeros.
// Thread t copies chunk t % kChunks of rows t / kChunks + i x kRowsPerPass: its shared offsets
// differ by immediates (kRowsPerPass is a multiple of 8, so the swizzle term stays the same) and
// its global address by one stride, so no per-copy address needs a register of its own.
template <class Tile, int Rows>
__device__ __forceinline__ void loadTile(std::uint32_t shared, const char* global,
                                         std::int64_t rowBytes, int validRows, int tid) {
    constexpr int kRowsPerPass = Tile::kThreads / Tile::kChunks;
    static_assert(kRowsPerPass % 8 == 0 && Rows % kRowsPerPass == 0, "tile loads");
    const int row = tid / Tile::kChunks, chunk = tid % Tile::kChunks;
    const std::uint32_t target = shared + std::uint32_t(row * Tile::D * 2 + ((chunk ^ (row & 7)) << 4));
    const char* source = global + row * rowBytes + chunk * 16;
#pragma unroll
    for (int i = 0; i < Rows / kRowsPerPass; ++i) {
        const bool valid = row + i * kRowsPerPass < validRows;
        copyAsync16(target + std::uint32_t(i * kRowsPerPass * Tile::D * 2),
                    valid ? source + i * kRowsPerPass * rowBytes : global, valid);
    }
}

// S = Q K^T for one warp's 16 x MT rows and the tile's BC keys; Q from registers or shared memory.
template <class Tile, class El>
__device__ __forceinline__ void scores(float (&s)[Tile::MT][Tile::BC / 8][4], std::uint32_t qAddress,
                                       std::uint32_t kAddress,
                                       [[maybe_unused]] const typename Tile::QFragments& qFrag) {
    constexpr int MT = Tile::MT, BC = Tile::BC, kRowBytes = Tile::D * 2;
#pragma unroll
    for (int mt = 0; mt < MT; ++mt)
#pragma unroll
        for (int nt = 0; nt < BC / 8; ++nt)
#pragma unroll
            for (int e = 0; e < 4; ++e) s[mt][nt][e] = 0.f;
#pragma unroll
    for (int kk = 0; kk < Tile::D / 16; ++kk) {
        std::uint32_t a[MT][4];
#pragma unroll
        for (int mt = 0; mt < MT; ++mt) {
            if constexpr (Tile::QInRegs) {
#pragma unroll
                for (int e = 0; e < 4; ++e) a[mt][e] = qFrag[mt][kk][e];
            } else {
                ldmatrixX4((qAddress ^ (kk << 5)) + mt * 16 * kRowBytes, a[mt]);
            }
        }
#pragma unroll
        for (int np = 0; np < BC / 16; ++np) {
            std::uint32_t b[4];
            ldmatrixX4((kAddress ^ (kk << 5)) + np * 16 * kRowBytes, b);
#pragma unroll
            for (int mt = 0; mt < MT; ++mt) {
                El::mma(s[mt][2 * np], a[mt], b[0], b[1]);
                El::mma(s[mt][2 * np + 1], a[mt], b[2], b[3]);
            }
        }
    }
}

// softmaxScores, then O rescaled by the corrections. Once the maxima settle, most tiles change
// none of a warp's row maxima: every correction is then exactly 1, and with kSkipRescale the
// multiplications of O are skipped (one warp-uniform branch per tile, the same result).
template <class Tile>
__device__ __forceinline__ void onlineSoftmax(float (&s)[Tile::MT][Tile::BC / 8][4],
                                              float (&rowMax)[Tile::MT][2], float (&rowSum)[Tile::MT][2],
                                              float (&acc)[Tile::MT][Tile::D / 8][4], float scaleLog2) {
    float correction[Tile::MT][2];
    const bool rescale = detail::softmaxScores<Tile>(s, rowMax, rowSum, correction, scaleLog2);
    if (!Tile::kSkipRescale || __any_sync(0xffffffffu, rescale)) {
#pragma unroll
        for (int mt = 0; mt < Tile::MT; ++mt)
#pragma unroll
            for (int dt = 0; dt < Tile::D / 8; ++dt)
#pragma unroll
                for (int e = 0; e < 4; ++e) acc[mt][dt][e] *= correction[mt][e >> 1];
    }
}

// O += P V for the tile's keys: the S accumulators of key columns 16kj .. 16kj + 15 are, rounded,
// exactly the A fragment of k-step kj.
template <class Tile, class El>
__device__ __forceinline__ void accumulatePV(float (&acc)[Tile::MT][Tile::D / 8][4],
                                             const float (&s)[Tile::MT][Tile::BC / 8][4],
                                             std::uint32_t vAddress) {
    constexpr int MT = Tile::MT, kRowBytes = Tile::D * 2;
#pragma unroll
    for (int kj = 0; kj < Tile::BC / 16; ++kj) {
        std::uint32_t a[MT][4];
#pragma unroll
        for (int mt = 0; mt < MT; ++mt) {
            a[mt][0] = El::pack(s[mt][2 * kj][0], s[mt][2 * kj][1]);
            a[mt][1] = El::pack(s[mt][2 * kj][2], s[mt][2 * kj][3]);
            a[mt][2] = El::pack(s[mt][2 * kj + 1][0], s[mt][2 * kj + 1][1]);
            a[mt][3] = El::pack(s[mt][2 * kj + 1][2], s[mt][2 * kj + 1][3]);
        }
#pragma unroll
        for (int dp = 0; dp < Tile::D / 16; ++dp) {
            std::uint32_t b[4];
            ldmatrixX4Trans((vAddress ^ (dp << 5)) + kj * 16 * kRowBytes, b);
#pragma unroll
            for (int mt = 0; mt < MT; ++mt) {
                El::mma(acc[mt][2 * dp], a[mt], b[0], b[1]);
                El::mma(acc[mt][2 * dp + 1], a[mt], b[2], b[3]);
            }
        }
    }
}

template <class Tile, TcElement E, bool Causal>
__global__ void __launch_bounds__(Tile::kThreads, Tile::kMinBlocks) tcFlashKernel(const TcParams p) {
    constexpr int D = Tile::D, BC = Tile::BC, BR = Tile::BR, MT = Tile::MT;
    constexpr int kRowBytes = D * 2;
    using El = Element<E>;
    extern __shared__ __align__(16) unsigned char shared[];

    // Blocks of the last query rows start first: under a causal mask they see the most keys.
    const int queryBlock = int(gridDim.x) - 1 - int(blockIdx.x);
    const int head = int(blockIdx.y), batch = int(blockIdx.z);
    const int row0 = queryBlock * BR;
    const int tid = int(threadIdx.x), warp = tid / 32, lane = tid % 32;
    const int group = lane / 4, quad = lane % 4; // mma fragment coordinates
    const int nq = p.queries, nk = p.keys, shift = nk - nq;
    const float scaleLog2 = p.scale * primitives::kLog2e;

    const char* qGlobal = static_cast<const char*>(p.q) +
                          2 * (batch * p.qBatchStride + head * p.qHeadStride + row0 * p.qRowStride);
    const char* kGlobal =
        static_cast<const char*>(p.k) + 2 * (batch * p.kBatchStride + head * p.kHeadStride);
    const char* vGlobal =
        static_cast<const char*>(p.v) + 2 * (batch * p.vBatchStride + head * p.vHeadStride);
    const std::int64_t qRow = 2 * p.qRowStride, kRow = 2 * p.kRowStride, vRow = 2 * p.vRowStride;

    // core/tiling.h's rule (visibleKeyBlocks, tileFullyVisible, causallyVisible) written out:
    // calling it here made the causal kernel 6-7 % slower on the H200 (A/B in one run,
    // 2026-12-01: d 128, n 4096: 302 -> 282 TFLOP/s) for reasons not found yet; tst_cuda_tensor_core
    // holds both to the CPU on ragged, causal and n_q != n_k shapes.
    int tiles = (nk + BC - 1) / BC;
    if constexpr (Causal) {
        const int lastKey = min(row0 + BR, nq) - 1 + shift;
        tiles = lastKey < 0 ? 0 : min(tiles, lastKey / BC + 1);
    }

    // The tiles start on a kAlign (>= one row) boundary, so inside a row the swizzled chunk bits
    // of an address can be flipped by XOR: chunk c ^ s of k-step kk is (c ^ s) ^ 2kk.
    static_assert(Tile::kAlign % kRowBytes == 0, "alignment");
    const std::uint32_t sQ =
        (primitives::sharedAddress(shared) + Tile::kAlign - 1) &
        ~std::uint32_t(Tile::kAlign - 1);
    // K buffers at sK0 and sK0 + kKVBytes, V buffers at sV0 and sV0 + kKVBytes.
    const std::uint32_t sK0 = sQ + Tile::kQBytes;
    const std::uint32_t sV0 = sQ + Tile::kQBytes + 2 * Tile::kKVBytes;

    // Per-lane ldmatrix addresses of k-step 0 (Q, K) or d-step 0 (V); step kk is lane ^ kk x 32
    // (two chunks per step), further 16-row blocks an immediate offset. Every fragment row index
    // is (lane & 7) plus a multiple of 8, so the swizzle term is lane & 7 throughout.
    const int swz = lane & 7;
    const int warpRow = warp * 16 * MT;
    // Q (A operand): matrices (rows 0-7 | 8-15) x (k 0-7 | 8-15), row-major order of x4.
    const std::uint32_t qLane = sQ + std::uint32_t((warpRow + (lane & 7) + ((lane >> 3) & 1) * 8) * kRowBytes +
                                                   (((lane >> 4) ^ swz) << 4));
    // K (B operand, S = Q K^T): matrices (keys 0-7, k 0-7), (keys 0-7, k 8-15), (keys 8-15, ...).
    const std::uint32_t kLane = std::uint32_t(((lane & 7) + (lane >> 4) * 8) * kRowBytes +
                                              ((((lane >> 3) & 1) ^ swz) << 4));
    // V (B operand of O = P V, transposed): (keys 0-7, d 0-7), (keys 8-15, d 0-7), (keys 0-7, d 8-15)...
    const std::uint32_t vLane = std::uint32_t(((lane & 7) + ((lane >> 3) & 1) * 8) * kRowBytes +
                                              (((lane >> 4) ^ swz) << 4));

    float acc[MT][D / 8][4];
    float rowMax[MT][2], rowSum[MT][2];
#pragma unroll
    for (int mt = 0; mt < MT; ++mt) {
#pragma unroll
        for (int dt = 0; dt < D / 8; ++dt)
#pragma unroll
            for (int e = 0; e < 4; ++e) acc[mt][dt][e] = 0.f;
#pragma unroll
        for (int h = 0; h < 2; ++h) {
            rowMax[mt][h] = -INFINITY;
            rowSum[mt][h] = 0.f;
        }
    }

    if (tiles > 0) {
        loadTile<Tile, BR>(sQ, qGlobal, qRow, nq - row0, tid);
        loadTile<Tile, BC>(sK0, kGlobal, kRow, nk, tid);
        primitives::copyAsyncCommit();
        loadTile<Tile, BC>(sV0, vGlobal, vRow, nk, tid);
        primitives::copyAsyncCommit();

        typename Tile::QFragments qFrag;
        if constexpr (Tile::QInRegs) {
            primitives::copyAsyncWait<1>();
            __syncthreads();
#pragma unroll
            for (int mt = 0; mt < MT; ++mt)
#pragma unroll
                for (int kk = 0; kk < D / 16; ++kk)
                    ldmatrixX4((qLane ^ (kk << 5)) + mt * 16 * kRowBytes, qFrag[mt][kk]);
        }

        for (int j = 0; j < tiles; ++j) {
            const int buffer = j & 1;
            const std::uint32_t kAddress = sK0 + std::uint32_t(buffer) * Tile::kKVBytes + kLane;
            const std::uint32_t vAddress = sV0 + std::uint32_t(buffer) * Tile::kKVBytes + vLane;
            [[maybe_unused]] const std::uint32_t qAddress = opaque(qLane);
            const std::uint32_t sKNext = sK0 + std::uint32_t(buffer ^ 1) * Tile::kKVBytes;
            const std::uint32_t sVNext = sV0 + std::uint32_t(buffer ^ 1) * Tile::kKVBytes;
            primitives::copyAsyncWait<1>(); // K[j] (and Q) landed; V[j] may still be in flight
            __syncthreads();            // ... for every thread; and tile j - 1 is fully used
            if (j + 1 < tiles) {
                const int next = (j + 1) * BC;
                loadTile<Tile, BC>(sKNext, kGlobal + next * kRow, kRow, nk - next, tid);
                primitives::copyAsyncCommit();
                loadTile<Tile, BC>(sVNext, vGlobal + next * vRow, vRow, nk - next, tid);
                primitives::copyAsyncCommit();
            } else {
                primitives::copyAsyncCommit();
                primitives::copyAsyncCommit();
            }

            float s[MT][BC / 8][4];
            scores<Tile, El>(s, qAddress, kAddress, qFrag);

            // Keys past the end, and under the causal mask keys past the diagonal, get -inf.
            const int key0 = j * BC;
            const bool ragged = key0 + BC > nk;
            const bool diagonal = Causal && key0 + BC - 1 > row0 + shift;
            if (ragged || diagonal) {
#pragma unroll
                for (int mt = 0; mt < MT; ++mt)
#pragma unroll
                    for (int nt = 0; nt < BC / 8; ++nt)
#pragma unroll
                        for (int e = 0; e < 4; ++e) {
                            const int row = row0 + warpRow + mt * 16 + group + (e >> 1) * 8;
                            const int key = key0 + nt * 8 + quad * 2 + (e & 1);
                            if (key >= nk || (Causal && key > row + shift)) s[mt][nt][e] = -INFINITY;
                        }
            }

            onlineSoftmax<Tile>(s, rowMax, rowSum, acc, scaleLog2);

            primitives::copyAsyncWait<2>(); // V[j] landed (K[j + 1], V[j + 1] may be in flight)
            __syncthreads();
            accumulatePV<Tile, El>(acc, s, vAddress);
        }
        primitives::copyAsyncWait<0>();
    }

    // O = acc / l; a row that saw no key (l = 0) is written as 0.
    char* oGlobal = static_cast<char*>(p.o) +
                    2 * (batch * p.oBatchStride + head * p.oHeadStride + row0 * p.oRowStride);
#pragma unroll
    for (int mt = 0; mt < MT; ++mt)
#pragma unroll
        for (int h = 0; h < 2; ++h) {
            float l = rowSum[mt][h];
            l += __shfl_xor_sync(0xffffffffu, l, 1);
            l += __shfl_xor_sync(0xffffffffu, l, 2);
            const float inverse = l > 0.f ? 1.f / l : 0.f;
            const int row = warpRow + mt * 16 + group + h * 8;
            if (row0 + row >= nq) continue;
            if (p.lse != nullptr && quad == 0)
                p.lse[(std::int64_t(batch) * p.heads + head) * nq + row0 + row] =
                    detail::logSumExp(rowMax[mt][h], l, p.scale);
            char* out = oGlobal + row * (2 * p.oRowStride) + quad * 4;
#pragma unroll
            for (int dt = 0; dt < D / 8; ++dt) {
                const std::uint32_t packed =
                    El::pack(acc[mt][dt][2 * h] * inverse, acc[mt][dt][2 * h + 1] * inverse);
                *reinterpret_cast<std::uint32_t*>(out + dt * 16) = packed;
            }
        }
}

} // namespace flashviz::cuda::tc
