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
#include "kernels/cuda/device_utils.cuh"
#include "kernels/cuda/tc_params.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <cstring>

namespace flashviz::cuda::tc {

template <int D_, int Warps_, int MT_, int BC_, bool QInRegs_, int MinBlocks_>
struct TcTile {
    static constexpr int D = D_;
    static constexpr int kWarps = Warps_;
    static constexpr int MT = MT_; // 16-row mma tiles per warp
    static constexpr int BC = BC_;
    static constexpr bool QInRegs = QInRegs_;
    static constexpr int kMinBlocks = MinBlocks_;
    static constexpr int kThreads = kWarps * 32;
    static constexpr int BR = kWarps * 16 * MT;
    static constexpr int kChunks = D / 8; // 16-byte chunks per row
    static constexpr int kQBytes = BR * D * 2;
    static constexpr int kKVBytes = BC * D * 2;
    static constexpr int kSharedBytes = kQBytes + 4 * kKVBytes; // Q, K x 2, V x 2
    static_assert(D % 64 == 0 && BC % 16 == 0, "tile shape");
    static_assert((BR * kChunks) % kThreads == 0 && (BC * kChunks) % kThreads == 0, "tile loads");
};

template <TcElement E>
struct Element;

template <>
struct Element<TcElement::Fp16> {
    __device__ __forceinline__ static std::uint32_t pack(float lo, float hi) {
        const __half2 h = __floats2half2_rn(lo, hi);
        std::uint32_t r;
        std::memcpy(&r, &h, 4);
        return r;
    }
    __device__ __forceinline__ static void mma(float (&c)[4], const std::uint32_t (&a)[4],
                                               std::uint32_t b0, std::uint32_t b1) {
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, "
                     "{%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                     : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
    }
};

template <>
struct Element<TcElement::Bf16> {
    __device__ __forceinline__ static std::uint32_t pack(float lo, float hi) {
        const __nv_bfloat162 h = __floats2bfloat162_rn(lo, hi);
        std::uint32_t r;
        std::memcpy(&r, &h, 4);
        return r;
    }
    __device__ __forceinline__ static void mma(float (&c)[4], const std::uint32_t (&a)[4],
                                               std::uint32_t b0, std::uint32_t b1) {
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, "
                     "{%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                     : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
    }
};

__device__ __forceinline__ void ldmatrixX4(std::uint32_t address, std::uint32_t (&r)[4]) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(address));
}

__device__ __forceinline__ void ldmatrixX4Trans(std::uint32_t address, std::uint32_t (&r)[4]) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(address));
}

__device__ __forceinline__ void copyAsync16(std::uint32_t shared, const void* global, bool valid) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(shared), "l"(global),
                 "r"(valid ? 16 : 0)
                 : "memory");
}

// Rows [0, Rows) of a tile into swizzled shared memory; rows at or past `validRows` are zeros.
template <class Tile, int Rows>
__device__ __forceinline__ void loadTile(std::uint32_t shared, const char* global,
                                         std::int64_t rowBytes, int validRows, int tid) {
    constexpr int kPerThread = Rows * Tile::kChunks / Tile::kThreads;
#pragma unroll
    for (int i = 0; i < kPerThread; ++i) {
        const int index = tid + i * Tile::kThreads;
        const int row = index / Tile::kChunks;
        const int chunk = index % Tile::kChunks;
        const bool valid = row < validRows;
        const char* source = global + (valid ? row : 0) * rowBytes + chunk * 16;
        copyAsync16(shared + row * (Tile::D * 2) + ((chunk ^ (row & 7)) << 4), source, valid);
    }
}

template <class Tile, TcElement E, bool Causal>
__global__ void __launch_bounds__(Tile::kThreads, Tile::kMinBlocks) tcFlashKernel(const TcParams p) {
    constexpr int D = Tile::D, BC = Tile::BC, BR = Tile::BR, MT = Tile::MT;
    constexpr int kRowBytes = D * 2;
    using El = Element<E>;
    extern __shared__ __align__(128) unsigned char shared[];

    // Blocks of the last query rows start first: under a causal mask they see the most keys.
    const int queryBlock = int(gridDim.x) - 1 - int(blockIdx.x);
    const int head = int(blockIdx.y), batch = int(blockIdx.z);
    const int row0 = queryBlock * BR;
    const int tid = int(threadIdx.x), warp = tid / 32, lane = tid % 32;
    const int group = lane / 4, quad = lane % 4; // mma fragment coordinates
    const int nq = p.queries, nk = p.keys, shift = nk - nq;
    const float scaleLog2 = p.scale * detail::kLog2e;

    const char* qGlobal = static_cast<const char*>(p.q) +
                          2 * (batch * p.qBatchStride + head * p.qHeadStride + row0 * p.qRowStride);
    const char* kGlobal =
        static_cast<const char*>(p.k) + 2 * (batch * p.kBatchStride + head * p.kHeadStride);
    const char* vGlobal =
        static_cast<const char*>(p.v) + 2 * (batch * p.vBatchStride + head * p.vHeadStride);
    const std::int64_t qRow = 2 * p.qRowStride, kRow = 2 * p.kRowStride, vRow = 2 * p.vRowStride;

    int tiles = (nk + BC - 1) / BC;
    if constexpr (Causal) {
        const int lastKey = min(row0 + BR, nq) - 1 + shift;
        tiles = lastKey < 0 ? 0 : min(tiles, lastKey / BC + 1);
    }

    const std::uint32_t sQ = static_cast<std::uint32_t>(__cvta_generic_to_shared(shared));
    // K buffers at sK0 and sK0 + kKVBytes, V buffers at sV0 and sV0 + kKVBytes.
    const std::uint32_t sK0 = sQ + Tile::kQBytes;
    const std::uint32_t sV0 = sQ + Tile::kQBytes + 2 * Tile::kKVBytes;

    // Per-lane ldmatrix offsets. Every fragment row index is (lane & 7) plus a multiple of 8,
    // so the swizzle term is lane & 7 throughout.
    const int swz = lane & 7;
    const int warpRow = warp * 16 * MT;
    // Q (A operand): matrices (rows 0-7 | 8-15) x (k 0-7 | 8-15), row-major order of x4.
    const std::uint32_t qLaneRow = std::uint32_t((warpRow + (lane & 7) + ((lane >> 3) & 1) * 8) * kRowBytes);
    const int qLaneChunk = lane >> 4;
    // K (B operand, S = Q K^T): matrices (keys 0-7, k 0-7), (keys 0-7, k 8-15), (keys 8-15, ...).
    const std::uint32_t kLaneRow = std::uint32_t(((lane & 7) + (lane >> 4) * 8) * kRowBytes);
    const int kLaneChunk = (lane >> 3) & 1;
    // V (B operand of O = P V, transposed): (keys 0-7, d 0-7), (keys 8-15, d 0-7), (keys 0-7, d 8-15)...
    const std::uint32_t vLaneRow = std::uint32_t(((lane & 7) + ((lane >> 3) & 1) * 8) * kRowBytes);
    const int vLaneChunk = lane >> 4;

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
        detail::copyAsyncCommit();
        loadTile<Tile, BC>(sV0, vGlobal, vRow, nk, tid);
        detail::copyAsyncCommit();

        [[maybe_unused]] std::uint32_t qFrag[Tile::QInRegs ? MT : 1][Tile::QInRegs ? D / 16 : 1][4];
        if constexpr (Tile::QInRegs) {
            detail::copyAsyncWait<1>();
            __syncthreads();
#pragma unroll
            for (int mt = 0; mt < MT; ++mt)
#pragma unroll
                for (int kk = 0; kk < D / 16; ++kk)
                    ldmatrixX4(sQ + qLaneRow + mt * 16 * kRowBytes + (((2 * kk + qLaneChunk) ^ swz) << 4),
                               qFrag[mt][kk]);
        }

        for (int j = 0; j < tiles; ++j) {
            const int buffer = j & 1;
            const std::uint32_t sK = sK0 + std::uint32_t(buffer) * Tile::kKVBytes;
            const std::uint32_t sV = sV0 + std::uint32_t(buffer) * Tile::kKVBytes;
            const std::uint32_t sKNext = sK0 + std::uint32_t(buffer ^ 1) * Tile::kKVBytes;
            const std::uint32_t sVNext = sV0 + std::uint32_t(buffer ^ 1) * Tile::kKVBytes;
            detail::copyAsyncWait<1>(); // K[j] (and Q) landed; V[j] may still be in flight
            __syncthreads();            // ... for every thread; and tile j - 1 is fully used
            if (j + 1 < tiles) {
                const int next = (j + 1) * BC;
                loadTile<Tile, BC>(sKNext, kGlobal + next * kRow, kRow, nk - next, tid);
                detail::copyAsyncCommit();
                loadTile<Tile, BC>(sVNext, vGlobal + next * vRow, vRow, nk - next, tid);
                detail::copyAsyncCommit();
            } else {
                detail::copyAsyncCommit();
                detail::copyAsyncCommit();
            }

            // S = Q K^T for this warp's rows and the tile's BC keys.
            float s[MT][BC / 8][4];
#pragma unroll
            for (int mt = 0; mt < MT; ++mt)
#pragma unroll
                for (int nt = 0; nt < BC / 8; ++nt)
#pragma unroll
                    for (int e = 0; e < 4; ++e) s[mt][nt][e] = 0.f;
#pragma unroll
            for (int kk = 0; kk < D / 16; ++kk) {
                std::uint32_t a[MT][4];
#pragma unroll
                for (int mt = 0; mt < MT; ++mt) {
                    if constexpr (Tile::QInRegs) {
#pragma unroll
                        for (int e = 0; e < 4; ++e) a[mt][e] = qFrag[mt][kk][e];
                    } else {
                        ldmatrixX4(sQ + qLaneRow + mt * 16 * kRowBytes +
                                       (((2 * kk + qLaneChunk) ^ swz) << 4),
                                   a[mt]);
                    }
                }
#pragma unroll
                for (int np = 0; np < BC / 16; ++np) {
                    std::uint32_t b[4];
                    ldmatrixX4(sK + kLaneRow + np * 16 * kRowBytes +
                                   (((2 * kk + kLaneChunk) ^ swz) << 4),
                               b);
#pragma unroll
                    for (int mt = 0; mt < MT; ++mt) {
                        El::mma(s[mt][2 * np], a[mt], b[0], b[1]);
                        El::mma(s[mt][2 * np + 1], a[mt], b[2], b[3]);
                    }
                }
            }

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

            // Online softmax on the accumulators: each row lives in the 4 lanes of one quad.
#pragma unroll
            for (int mt = 0; mt < MT; ++mt)
#pragma unroll
                for (int h = 0; h < 2; ++h) {
                    float mx = rowMax[mt][h];
#pragma unroll
                    for (int nt = 0; nt < BC / 8; ++nt)
                        mx = fmaxf(mx, fmaxf(s[mt][nt][2 * h], s[mt][nt][2 * h + 1]));
                    mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
                    mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));
                    // A row that has seen no key yet keeps m = -inf; subtract 0 instead, p = 0.
                    const float mScaled = mx == -INFINITY ? 0.f : mx * scaleLog2;
                    const float correction = detail::exp2Approx(rowMax[mt][h] * scaleLog2 - mScaled);
                    rowMax[mt][h] = mx;
                    float sum = 0.f;
#pragma unroll
                    for (int nt = 0; nt < BC / 8; ++nt)
#pragma unroll
                        for (int e = 2 * h; e < 2 * h + 2; ++e) {
                            const float pe = detail::exp2Approx(fmaf(s[mt][nt][e], scaleLog2, -mScaled));
                            s[mt][nt][e] = pe;
                            sum += pe;
                        }
                    rowSum[mt][h] = rowSum[mt][h] * correction + sum;
#pragma unroll
                    for (int dt = 0; dt < D / 8; ++dt) {
                        acc[mt][dt][2 * h] *= correction;
                        acc[mt][dt][2 * h + 1] *= correction;
                    }
                }

            detail::copyAsyncWait<2>(); // V[j] landed (K[j + 1], V[j + 1] may be in flight)
            __syncthreads();

            // O += P V: the S accumulators of key columns 16kj .. 16kj + 15 are, rounded,
            // exactly the A fragment of k-step kj.
#pragma unroll
            for (int kj = 0; kj < BC / 16; ++kj) {
                std::uint32_t a[MT][4];
#pragma unroll
                for (int mt = 0; mt < MT; ++mt) {
                    a[mt][0] = El::pack(s[mt][2 * kj][0], s[mt][2 * kj][1]);
                    a[mt][1] = El::pack(s[mt][2 * kj][2], s[mt][2 * kj][3]);
                    a[mt][2] = El::pack(s[mt][2 * kj + 1][0], s[mt][2 * kj + 1][1]);
                    a[mt][3] = El::pack(s[mt][2 * kj + 1][2], s[mt][2 * kj + 1][3]);
                }
#pragma unroll
                for (int dp = 0; dp < D / 16; ++dp) {
                    std::uint32_t b[4];
                    ldmatrixX4Trans(sV + vLaneRow + kj * 16 * kRowBytes +
                                        (((2 * dp + vLaneChunk) ^ swz) << 4),
                                    b);
#pragma unroll
                    for (int mt = 0; mt < MT; ++mt) {
                        El::mma(acc[mt][2 * dp], a[mt], b[0], b[1]);
                        El::mma(acc[mt][2 * dp + 1], a[mt], b[2], b[3]);
                    }
                }
            }
        }
        detail::copyAsyncWait<0>();
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
