#pragma once
// The tensor-core backward pass (issue 18): FlashAttention-2's, fp16 or bf16 with fp32
// accumulation, on mma.sync (sm_80 instruction set: the A100 and Hopper). Three kernels:
//   1. backwardPrepareKernel: per query row D = rowsum(dO o O) and LSE log2(e) into scratch;
//   2. tcBackwardKernel: each block owns BC keys of one (batch, head), keeps them (K_j, V_j) in
//      shared memory and walks every query block that sees them, Q_i and dO_i double-buffered by
//      cp.async. Each warp owns 16 of the keys and computes, transposed so that its keys are the
//      mma rows:  S^T = K Q^T,  P^T = exp2(S^T scale log2(e) - LSE log2(e)),  dP^T = V dO^T,
//      dV += P^T dO,  dS^T = P^T o (dP^T - D),  dK += dS^T Q   (dK, dV in registers all along);
//      dS^T goes to shared memory (a streamed variant does all of this for 16 query rows at a
//      time, so only dK, dV and one group's scores stay in registers across the step),
//      and dQ_i += dS K_j is computed with the warps over query rows
//      (and d) instead and added to an fp32 buffer (red.add: dQ is summed over key blocks in no
//      fixed order, so it is not bit-for-bit reproducible; dK and dV are);
//   3. backwardFinishKernel: dQ = scale x that buffer, rounded to the input type.
// Shared-memory rows are swizzled as in the forward (tc_flash.cuh), whose products it reuses:
// scores() computes S^T and dP^T (a 16-row tile against BR columns), accumulatePV() dV and dK.
#include "kernels/cuda/params/fragment_order.h"
#include "kernels/cuda/sm80/tc_flash.cuh"

#include "core/tiling.h"

#include <type_traits>

namespace flashviz::cuda::tc {

template <int D_, int Warps_, int BR_, int MinBlocks_, bool Streamed_ = false, bool KVInRegisters_ = false>
struct BackwardTile {
    static constexpr int D = D_;
    static constexpr int kWarps = Warps_;
    // A warp's step in groups of 16 query rows (kernels::TensorCoreBackwardConfig::streamed): only
    // dK, dV and one group's scores live across the step, so the registers spilled by whole-step
    // P^T and dS^T (Nsight Compute on v2) are free for the compiler to load operands ahead.
    static constexpr bool kStreamed = Streamed_;
    static constexpr bool kKVInRegisters = KVInRegisters_;
    static_assert(kStreamed || !kKVInRegisters, "K and V fragments are held only when streamed");
    static constexpr int kThreads = kWarps * 32;
    static constexpr int kMinBlocks = MinBlocks_;
    static constexpr int BC = 16 * kWarps; // keys per block: 16 a warp
    static constexpr int BR = BR_;         // query rows per step
    // dQ_i = dS K_j: the warps split the step's rows in 16-row groups and, where there are more
    // warps than groups, d into slices.
    static constexpr int kRowGroups = BR / 16;
    static constexpr int kDSlices = kWarps / kRowGroups;
    static_assert(kWarps % kRowGroups == 0 && (D / 16) % kDSlices == 0, "dQ's split");
    // At d = 128 dK and dV take 128 registers a thread: pointers held across the query-block loop
    // were spilled and reloaded every step (Nsight Compute: 15 M local requests, L1 hit 11 %), so
    // the kernel finds them again from the parameters (constant memory) where used: 7-10 % faster
    // there on an H100 without the mask, level with it, while d = 64 ran faster holding them
    // (kernels/bench/BACKWARD_NOTES.md, v3).
    static constexpr bool kRecomputeAddresses = D == 128;
    static constexpr int kChunks = D / 8;  // 16-byte chunks per row (loadTile)
    static constexpr int kRowBytes = D * 2;
    static constexpr int kDsRowBytes = BR * 2;
    static constexpr int kKVBytes = BC * kRowBytes;
    static constexpr int kQBytes = BR * kRowBytes;
    static constexpr int kDsBytes = BC * kDsRowBytes;
    static constexpr int kStatBytes = BR * 4;
    static constexpr int kAlign = 1024;
    // K, V | Q x 2 | dO x 2 | dS^T | LSE x 2 | D x 2, from an aligned start.
    static constexpr int kK = 0, kV = kKVBytes, kQ = 2 * kKVBytes, kDO = kQ + 2 * kQBytes,
                         kDS = kDO + 2 * kQBytes, kLse = kDS + kDsBytes, kDelta = kLse + 2 * kStatBytes;
    static constexpr int kSharedBytes = kDelta + 2 * kStatBytes + kAlign;
    static_assert(D % 64 == 0 && BR % 64 == 0, "swizzled rows of at least 8 chunks");
    static_assert((BR / 4) * 2 <= kThreads, "the statistics' copies: one 16-byte chunk a thread");
    static_assert(kRowBytes % 256 == 0 || kRowBytes == 128, "row sizes");

    // One warp's transposed products in the forward's shape (scores, accumulatePV): one 16-row
    // mma tile (its keys) against the BR query rows of the step.
    struct WarpProducts {
        static constexpr int D = D_;
        static constexpr int MT = 1;
        static constexpr int BC = BR;
        static constexpr bool QInRegs = false;
        using QFragments = std::uint32_t[1][1][4];
    };
    // The same for one group of 16 query rows; the A operand (the warp's keys of K or V) from
    // registers when kKVInRegisters.
    struct GroupProducts {
        static constexpr int D = D_;
        static constexpr int MT = 1;
        static constexpr int BC = 16;
        static constexpr bool QInRegs = kKVInRegisters;
        using QFragments = std::uint32_t[1][kKVInRegisters ? D / 16 : 1][4];
    };
};

// P^T = exp2(S^T scale log2(e) - LSE log2(e)) in place for NT n-tiles of 8 query rows, the
// first `row` (this lane's, 2 quad added) and `lse2` at the first tile's row. Keys past the end
// (zero rows of K, which would give exp(-LSE)) and, under the mask, keys past a row's diagonal
// get 0.
template <int NT>
__device__ __forceinline__ void probabilities(float (&s)[1][NT][4], const float* lse2, int key, int row,
                                              bool ragged, bool diagonal, int nk, int shift, float scaleLog2) {
#pragma unroll
    for (int nt = 0; nt < NT; ++nt) {
        const float2 l = *reinterpret_cast<const float2*>(lse2 + nt * 8);
#pragma unroll
        for (int e = 0; e < 4; ++e) {
            float value = primitives::exp2Approx(fmaf(s[0][nt][e], scaleLog2, -(e & 1 ? l.y : l.x)));
            const int k = key + (e >> 1) * 8, r = row + nt * 8 + (e & 1);
            if ((ragged && k >= nk) || (diagonal && k > r + shift)) value = 0.f;
            s[0][nt][e] = value;
        }
    }
}

// dS^T = P^T o (dP^T - D) in place of dP^T, `delta` at the first tile's row.
template <int NT>
__device__ __forceinline__ void scoreGradients(float (&ds)[1][NT][4], const float (&pt)[1][NT][4],
                                               const float* delta) {
#pragma unroll
    for (int nt = 0; nt < NT; ++nt) {
        const float2 dd = *reinterpret_cast<const float2*>(delta + nt * 8);
#pragma unroll
        for (int e = 0; e < 4; ++e) ds[0][nt][e] = pt[0][nt][e] * (ds[0][nt][e] - (e & 1 ? dd.y : dd.x));
    }
}

// dS^T to shared memory, rounded as the products' operands are: this thread's (key, two query
// rows) pairs of NT n-tiles from n-tile `firstTile`, chunk t of row `key` swizzled to t ^ (key & 7).
template <class Tile, class El, int NT>
__device__ __forceinline__ void storeScoreGradients(unsigned char* dsShared, const float (&ds)[1][NT][4],
                                                    int firstTile, int warpKey, int group, int quad) {
#pragma unroll
    for (int h = 0; h < 2; ++h) {
        const int key = warpKey + group + 8 * h;
#pragma unroll
        for (int nt = 0; nt < NT; ++nt)
            *reinterpret_cast<std::uint32_t*>(dsShared + key * Tile::kDsRowBytes +
                                              (((firstTile + nt) ^ group) << 4) + quad * 4) =
                El::pack(ds[0][nt][2 * h], ds[0][nt][2 * h + 1]);
    }
}

// D = rowsum(dO o O) in fp32 of each query row, and LSE log2(e) (+inf where the forward's LSE is
// -inf, a row that saw no key, and on the padding rows, so that exp2 gives P = 0 there). One
// warp a row; grid (ceil(rowsPadded / 4), heads, batch) of 128 threads.
template <int D, TcElement E>
__global__ void __launch_bounds__(128) backwardPrepareKernel(const TcBackwardParams p) {
    const int warp = int(threadIdx.x) / 32, lane = int(threadIdx.x) % 32;
    const int row = int(blockIdx.x) * 4 + warp;
    const int head = int(blockIdx.y), batch = int(blockIdx.z);
    if (row >= p.rowsPadded) return;
    const std::int64_t bh = std::int64_t(batch) * p.heads + head;
    float dot = 0.f, lse2 = INFINITY;
    if (row < p.queries) {
        constexpr int kPerLane = D / 32; // 2 or 4 elements: pairs of 32 bits
        const std::int64_t at = batch * p.oBatchStride + head * p.oHeadStride + row * p.oRowStride +
                                lane * kPerLane;
        const auto* o = static_cast<const std::uint16_t*>(p.o) + at;
        const auto* dout = static_cast<const std::uint16_t*>(p.dout) + at;
#pragma unroll
        for (int pair = 0; pair < kPerLane / 2; ++pair) {
            const float2 a = Element<E>::unpack(reinterpret_cast<const std::uint32_t*>(o)[pair]);
            const float2 b = Element<E>::unpack(reinterpret_cast<const std::uint32_t*>(dout)[pair]);
            dot = fmaf(a.x, b.x, fmaf(a.y, b.y, dot));
        }
#pragma unroll
        for (int width = 16; width > 0; width /= 2) dot += __shfl_xor_sync(0xffffffffu, dot, width);
        const float lse = p.lse[bh * p.queries + row];
        if (lse != -INFINITY) lse2 = lse * primitives::kLog2e;
    }
    if (lane == 0) {
        p.delta[bh * p.rowsPadded + row] = dot;
        p.lse2[bh * p.rowsPadded + row] = lse2;
    }
}

// Where dQ's scratch holds (row, 8 c + 2 q) and (row, 8 c + 2 q + 1), q = 0..3, in fragment order
// (the Hopper rows that add dQ by tiles, hopper_backward.cuh): each 64-row block of a (batch,
// head) is stored as its consumer warpgroup's registers hold it (params/fragment_order.h).
template <int D>
__device__ __forceinline__ const float* fragmentOrderPair(const float* rows, int row, int chunk, int q) {
    return rows + std::int64_t(unsigned(row) / 64) * 64 * D + fragmentOrderOffsetOf(unsigned(row) % 64, 8 * chunk + 2 * q);
}

// dQ = scale x dqAccum in the input type, 8 elements (16 bytes) a thread; grid
// (ceil(queries x d / 8 / 256), heads, batch) of 256 threads. The scratch in rows, or in
// fragment order (fragmentOrderPair).
template <int D, TcElement E, bool FragmentOrder = false>
__global__ void __launch_bounds__(256) backwardFinishKernel(const TcBackwardParams p) {
    const int index = int(blockIdx.x) * 256 + int(threadIdx.x);
    const int row = index / (D / 8), chunk = index % (D / 8);
    if (row >= p.queries) return;
    const int head = int(blockIdx.y), batch = int(blockIdx.z);
    const std::int64_t bh = std::int64_t(batch) * p.heads + head;
    float4 a, b;
    if constexpr (FragmentOrder) {
        const float* rows = p.dqAccum + bh * p.rowsPadded * D;
        const float2 v0 = *reinterpret_cast<const float2*>(fragmentOrderPair<D>(rows, row, chunk, 0));
        const float2 v1 = *reinterpret_cast<const float2*>(fragmentOrderPair<D>(rows, row, chunk, 1));
        const float2 v2 = *reinterpret_cast<const float2*>(fragmentOrderPair<D>(rows, row, chunk, 2));
        const float2 v3 = *reinterpret_cast<const float2*>(fragmentOrderPair<D>(rows, row, chunk, 3));
        a = make_float4(v0.x, v0.y, v1.x, v1.y);
        b = make_float4(v2.x, v2.y, v3.x, v3.y);
    } else {
        const float4* source = reinterpret_cast<const float4*>(p.dqAccum + (bh * p.rowsPadded + row) * D + chunk * 8);
        a = source[0];
        b = source[1];
    }
    const float s = p.scale;
    uint4 packed;
    packed.x = Element<E>::pack(a.x * s, a.y * s);
    packed.y = Element<E>::pack(a.z * s, a.w * s);
    packed.z = Element<E>::pack(b.x * s, b.y * s);
    packed.w = Element<E>::pack(b.z * s, b.w * s);
    *reinterpret_cast<uint4*>(static_cast<char*>(p.dq) +
                              2 * (batch * p.qBatchStride + head * p.qHeadStride +
                                   row * p.qRowStride + chunk * 8)) = packed;
}

// dS K_j for one warp's 16 query rows and d-slice `slice`: dS from dS^T in shared memory
// (ldmatrix .trans gives the A fragments of the transpose), K_j as the B operand with keys along
// k (.trans).
template <class Tile, class El>
__device__ __forceinline__ void queryGradient(float (&acc)[Tile::D / 8 / Tile::kDSlices][4],
                                              std::uint32_t dsAddress, std::uint32_t kAddress, int slice) {
    constexpr int kPairs = Tile::D / 16 / Tile::kDSlices; // 16-column pairs of n-tiles per slice
#pragma unroll
    for (int dt = 0; dt < 2 * kPairs; ++dt)
#pragma unroll
        for (int e = 0; e < 4; ++e) acc[dt][e] = 0.f;
#pragma unroll
    for (int kk = 0; kk < Tile::BC / 16; ++kk) {
        std::uint32_t a[4];
        primitives::ldmatrixX4Trans(dsAddress + kk * 16 * Tile::kDsRowBytes, a);
#pragma unroll
        for (int dp = 0; dp < kPairs; ++dp) {
            std::uint32_t b[4];
            primitives::ldmatrixX4Trans((kAddress ^ ((slice * kPairs + dp) << 5)) + kk * 16 * Tile::kRowBytes, b);
            El::mma(acc[2 * dp], a, b[0], b[1]);
            El::mma(acc[2 * dp + 1], a, b[2], b[3]);
        }
    }
}

// Where a key-block kernel's block works, this family's and the Hopper one's
// (sm90/hopper_backward.cuh). Without the mask the grid is (key blocks, heads, batch), so that one
// head's blocks run together and its Q, dO and dQ stay in L2; under it (heads, key blocks, batch):
// key block j walks about (1 - j / key blocks) of the query blocks, and head after head the last
// heads' longest blocks started near the end and ran past everything else (BACKWARD_NOTES.md,
// v6). Read from blockIdx, not computed: no register holds them.
struct KeyBlockPlace {
    int keyBlock, head, batch;
};

template <bool Causal>
__device__ __forceinline__ KeyBlockPlace keyBlockPlace() {
    return {int(Causal ? blockIdx.y : blockIdx.x), int(Causal ? blockIdx.x : blockIdx.y), int(blockIdx.z)};
}

// The grid keyBlockPlace reads, for key blocks of `blockCols` keys.
inline dim3 keyBlockGrid(const TcBackwardParams& p, int blockCols) {
    const unsigned keyBlocks = unsigned(blockCount(p.keys, blockCols)), heads = unsigned(p.heads);
    return p.causal ? dim3(heads, keyBlocks, unsigned(p.batch)) : dim3(keyBlocks, heads, unsigned(p.batch));
}

// dK = scale x dS^T Q and dV of this thread's keys `key` and key + 8 (those before the end), from
// accumulators in the mma layout (n-tile dt, register 2h + c: column 8 dt + 2 quad + c), rounded
// to the element type. Keys no query row sees have zeros.
template <int D, class El>
__device__ __forceinline__ void storeKeyGradients(const TcBackwardParams& p, const float (&dk)[D / 8][4],
                                                  const float (&dv)[D / 8][4], int key, int head, int batch,
                                                  int quad) {
    char* dkGlobal = static_cast<char*>(p.dk) + 2 * (batch * p.kBatchStride + head * p.kHeadStride);
    char* dvGlobal = static_cast<char*>(p.dv) + 2 * (batch * p.vBatchStride + head * p.vHeadStride);
#pragma unroll
    for (int h = 0; h < 2; ++h) {
        const int row = key + 8 * h;
        if (row >= p.keys) continue;
        char* kOut = dkGlobal + std::int64_t(row) * (2 * p.kRowStride) + quad * 4;
        char* vOut = dvGlobal + std::int64_t(row) * (2 * p.vRowStride) + quad * 4;
#pragma unroll
        for (int dt = 0; dt < D / 8; ++dt) {
            *reinterpret_cast<std::uint32_t*>(kOut + dt * 16) =
                El::pack(dk[dt][2 * h] * p.scale, dk[dt][2 * h + 1] * p.scale);
            *reinterpret_cast<std::uint32_t*>(vOut + dt * 16) = El::pack(dv[dt][2 * h], dv[dt][2 * h + 1]);
        }
    }
}

// *address += (x, y) in global memory: one vector reduction on Hopper (sm_90; PTX ISA 8.1, CUDA
// 12.1), two before.
__device__ __forceinline__ void addPair(float* address, float x, float y) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900 && \
    (__CUDACC_VER_MAJOR__ > 12 || (__CUDACC_VER_MAJOR__ == 12 && __CUDACC_VER_MINOR__ >= 1))
    asm volatile("red.global.add.v2.f32 [%0], {%1, %2};\n" ::"l"(address), "f"(x), "f"(y) : "memory");
#else
    atomicAdd(address, x);
    atomicAdd(address + 1, y);
#endif
}

template <class Tile, TcElement E, bool Causal>
__global__ void __launch_bounds__(Tile::kThreads, Tile::kMinBlocks) tcBackwardKernel(const TcBackwardParams p) {
    constexpr int D = Tile::D, BC = Tile::BC, BR = Tile::BR;
    using El = Element<E>;
    using Products = typename Tile::WarpProducts;
    extern __shared__ __align__(16) unsigned char shared[];

    const KeyBlockPlace place = keyBlockPlace<Causal>();
    const int keyBlock = place.keyBlock, head = place.head, batch = place.batch;
    const int key0 = keyBlock * BC;
    const int tid = int(threadIdx.x), warp = tid / 32, lane = tid % 32;
    const int group = lane / 4, quad = lane % 4;
    const int nq = p.queries, nk = p.keys, shift = nk - nq;
    const float scaleLog2 = p.scale * primitives::kLog2e;
    const std::int64_t bh = std::int64_t(batch) * p.heads + head;

    // Held across the loop, or found again where used (Tile::kRecomputeAddresses).
    const char* qGlobal =
        static_cast<const char*>(p.q) + 2 * (batch * p.qBatchStride + head * p.qHeadStride);
    const char* doGlobal =
        static_cast<const char*>(p.dout) + 2 * (batch * p.oBatchStride + head * p.oHeadStride);
    const std::int64_t qRow = 2 * p.qRowStride, doRow = 2 * p.oRowStride;
    const float* lseGlobal = p.lse2 + bh * p.rowsPadded;
    const float* deltaGlobal = p.delta + bh * p.rowsPadded;
    float* dqGlobal = p.dqAccum + bh * p.rowsPadded * D;

    // Every query block from the first whose last row sees key0 (all of them without the mask).
    const int blocks = (nq + BR - 1) / BR;
    const int firstBlock = Causal ? max(0, key0 - shift) / BR : 0;

    const std::uint32_t base =
        (primitives::sharedAddress(shared) + Tile::kAlign - 1) & ~std::uint32_t(Tile::kAlign - 1);
    const unsigned char* sharedBase = shared + (base - primitives::sharedAddress(shared));
    const std::uint32_t sK = base + Tile::kK, sV = base + Tile::kV;

    // Per-lane ldmatrix offsets (the forward's, tc_flash.cuh). The swizzle term is lane & 7.
    const int swz = lane & 7;
    const int warpKey = warp * 16;
    // A operand, this warp's 16 keys of K_j or V_j: matrices (rows 0-7 | 8-15) x (k 0-7 | 8-15).
    const std::uint32_t aLane = std::uint32_t((warpKey + (lane & 7) + ((lane >> 3) & 1) * 8) * Tile::kRowBytes +
                                              (((lane >> 4) ^ swz) << 4));
    // B operand with d along k (Q_i, dO_i in S^T = K Q^T, dP^T = V dO^T).
    const std::uint32_t bLane = std::uint32_t(((lane & 7) + (lane >> 4) * 8) * Tile::kRowBytes +
                                              ((((lane >> 3) & 1) ^ swz) << 4));
    // B operand with rows along k, transposed (Q_i, dO_i in dK, dV; K_j in dQ).
    const std::uint32_t tLane = std::uint32_t(((lane & 7) + ((lane >> 3) & 1) * 8) * Tile::kRowBytes +
                                              (((lane >> 4) ^ swz) << 4));
    // A operand dS (this warp's 16 query rows for dQ) from dS^T, transposed: stored rows are keys
    // (k), chunks query rows; matrices (queries 0-7 | 8-15) x (keys 0-7 | 8-15).
    const int rowGroup = warp % Tile::kRowGroups, slice = warp / Tile::kRowGroups;
    const std::uint32_t dsLane =
        base + Tile::kDS +
        std::uint32_t(((lane & 7) + (lane >> 4) * 8) * Tile::kDsRowBytes +
                      (((2 * rowGroup + ((lane >> 3) & 1)) ^ swz) << 4));

    auto loadQueryBlock = [&](int block, int buffer) {
        const int row0 = block * BR;
        const char *qRows, *doRows;
        const float *lseRows, *deltaRows;
        if constexpr (Tile::kRecomputeAddresses) {
            qRows = static_cast<const char*>(p.q) +
                    2 * (batch * p.qBatchStride + head * p.qHeadStride + row0 * p.qRowStride);
            doRows = static_cast<const char*>(p.dout) +
                     2 * (batch * p.oBatchStride + head * p.oHeadStride + row0 * p.oRowStride);
            lseRows = p.lse2 + (bh * p.rowsPadded + row0);
            deltaRows = p.delta + (bh * p.rowsPadded + row0);
        } else {
            qRows = qGlobal + row0 * qRow;
            doRows = doGlobal + row0 * doRow;
            lseRows = lseGlobal + row0;
            deltaRows = deltaGlobal + row0;
        }
        const std::int64_t qRowBytes = Tile::kRecomputeAddresses ? 2 * p.qRowStride : qRow;
        const std::int64_t doRowBytes = Tile::kRecomputeAddresses ? 2 * p.oRowStride : doRow;
        loadTile<Tile, BR>(base + Tile::kQ + buffer * Tile::kQBytes, qRows, qRowBytes, nq - row0, tid);
        loadTile<Tile, BR>(base + Tile::kDO + buffer * Tile::kQBytes, doRows, doRowBytes, nq - row0, tid);
        // The statistics are padded to whole blocks in the scratch: every chunk is there.
        constexpr int kStatChunks = BR / 4;
        if (tid < kStatChunks)
            primitives::copyAsync16(base + Tile::kLse + buffer * Tile::kStatBytes + tid * 16,
                                    lseRows + tid * 4, true);
        else if (tid < 2 * kStatChunks)
            primitives::copyAsync16(base + Tile::kDelta + buffer * Tile::kStatBytes + (tid - kStatChunks) * 16,
                                    deltaRows + (tid - kStatChunks) * 4, true);
        primitives::copyAsyncCommit();
    };

    float dk[D / 8][4], dv[D / 8][4];
#pragma unroll
    for (int dt = 0; dt < D / 8; ++dt)
#pragma unroll
        for (int e = 0; e < 4; ++e) dk[dt][e] = dv[dt][e] = 0.f;

    if (firstBlock < blocks) {
        loadTile<Tile, BC>(sK, static_cast<const char*>(p.k) +
                                   2 * (batch * p.kBatchStride + head * p.kHeadStride + key0 * p.kRowStride),
                           2 * p.kRowStride, nk - key0, tid);
        loadTile<Tile, BC>(sV, static_cast<const char*>(p.v) +
                                   2 * (batch * p.vBatchStride + head * p.vHeadStride + key0 * p.vRowStride),
                           2 * p.vRowStride, nk - key0, tid);
        loadQueryBlock(firstBlock, 0);
        // The warp's 16 keys of K and V as A fragments, for every step (Tile::kKVInRegisters).
        typename Tile::GroupProducts::QFragments kFragments = {}, vFragments = {};
        if constexpr (Tile::kKVInRegisters) {
            primitives::copyAsyncWait<0>();
            __syncthreads();
#pragma unroll
            for (int kk = 0; kk < D / 16; ++kk) {
                primitives::ldmatrixX4((sK + aLane) ^ (kk << 5), kFragments[0][kk]);
                primitives::ldmatrixX4((sV + aLane) ^ (kk << 5), vFragments[0][kk]);
            }
        }

        for (int i = firstBlock; i < blocks; ++i) {
            const int buffer = (i - firstBlock) & 1;
            const int row0 = i * BR;
            // Q_i, dO_i and their statistics landed for every thread; step i - 1 is done with
            // dS^T. (With K and V held the first step's wait finds nothing left to wait for;
            // skipping it there made ptxas spill more at d = 128, 68 -> 112 bytes.)
            primitives::copyAsyncWait<0>();
            __syncthreads();
            if (i + 1 < blocks) loadQueryBlock(i + 1, buffer ^ 1);
            const std::uint32_t sQ = base + Tile::kQ + buffer * Tile::kQBytes;
            const std::uint32_t sDO = base + Tile::kDO + buffer * Tile::kQBytes;
            const float* lse2 = reinterpret_cast<const float*>(sharedBase + Tile::kLse + buffer * Tile::kStatBytes);
            const float* delta =
                reinterpret_cast<const float*>(sharedBase + Tile::kDelta + buffer * Tile::kStatBytes);

            const bool ragged = key0 + BC > nk;
            const bool diagonal = Causal && key0 + BC - 1 > row0 + shift;
            const int key = key0 + warpKey + group;
            unsigned char* dsShared = const_cast<unsigned char*>(sharedBase) + Tile::kDS;
            if constexpr (Tile::kStreamed) {
                // Two copies of the walk: off the diagonal it has no mask and no branch, so the
                // compiler may overlap one group's loads with the previous group's products.
                auto walk = [&](auto onDiagonal) {
                    constexpr bool kDiagonal = decltype(onDiagonal)::value;
                    using Group = typename Tile::GroupProducts;
#pragma unroll
                    for (int g = 0; g < BR / 16; ++g) {
                        const std::uint32_t rows = std::uint32_t(g * 16 * Tile::kRowBytes);
                        float pt[1][2][4], ds[1][2][4];
                        // A group of rows that sees none of the warp's keys adds nothing to dK
                        // and dV; its dS^T is 0.
                        if constexpr (kDiagonal) {
                            if (key0 + warpKey > row0 + g * 16 + 15 + shift) {
#pragma unroll
                                for (int nt = 0; nt < 2; ++nt)
#pragma unroll
                                    for (int e = 0; e < 4; ++e) ds[0][nt][e] = 0.f;
                                storeScoreGradients<Tile, El>(dsShared, ds, 2 * g, warpKey, group, quad);
                                continue;
                            }
                        }
                        scores<Group, El>(pt, sK + aLane, sQ + bLane + rows, kFragments);
                        probabilities(pt, lse2 + g * 16 + 2 * quad, key, row0 + g * 16 + 2 * quad, ragged,
                                      kDiagonal, nk, shift, scaleLog2);
                        accumulatePV<Group, El>(reinterpret_cast<float(&)[1][D / 8][4]>(dv), pt,
                                                sDO + tLane + rows);
                        scores<Group, El>(ds, sV + aLane, sDO + bLane + rows, vFragments);
                        scoreGradients(ds, pt, delta + g * 16 + 2 * quad);
                        accumulatePV<Group, El>(reinterpret_cast<float(&)[1][D / 8][4]>(dk), ds,
                                                sQ + tLane + rows);
                        storeScoreGradients<Tile, El>(dsShared, ds, 2 * g, warpKey, group, quad);
                    }
                };
                if (diagonal)
                    walk(std::true_type{});
                else
                    walk(std::false_type{});
            } else {
                // P^T, dV += P^T dO_i, dS^T = P^T o (dP^T - D) with dP^T = V dO^T, dK += dS^T Q_i
                // (scaled once at the end), dS^T to shared memory.
                float pt[1][BR / 8][4];
                scores<Products, El>(pt, sK + aLane, sQ + bLane, {});
                probabilities(pt, lse2 + 2 * quad, key, row0 + 2 * quad, ragged, diagonal, nk, shift, scaleLog2);
                accumulatePV<Products, El>(reinterpret_cast<float(&)[1][D / 8][4]>(dv), pt, sDO + tLane);
                float ds[1][BR / 8][4];
                scores<Products, El>(ds, sV + aLane, sDO + bLane, {});
                scoreGradients(ds, pt, delta + 2 * quad);
                accumulatePV<Products, El>(reinterpret_cast<float(&)[1][D / 8][4]>(dk), ds, sQ + tLane);
                storeScoreGradients<Tile, El>(dsShared, ds, 0, warpKey, group, quad);
            }
            __syncthreads();

            // dQ_i += dS K_j, this warp's 16 query rows and d-slice, added to the fp32 buffer
            // (padded rows: no bounds to check, and their dS is 0).
            constexpr int kSliceTiles = D / 8 / Tile::kDSlices;
            float dq[kSliceTiles][4];
            queryGradient<Tile, El>(dq, dsLane, sK + tLane, slice);
            float* dqBase = dqGlobal;
            if constexpr (Tile::kRecomputeAddresses) dqBase = p.dqAccum + bh * p.rowsPadded * D;
            float* dqRows = dqBase + std::int64_t(row0 + rowGroup * 16 + group) * D +
                            slice * (D / Tile::kDSlices) + 2 * quad;
#pragma unroll
            for (int dt = 0; dt < kSliceTiles; ++dt)
#pragma unroll
                for (int h = 0; h < 2; ++h) addPair(dqRows + h * 8 * D + dt * 8, dq[dt][2 * h], dq[dt][2 * h + 1]);
        }
        primitives::copyAsyncWait<0>();
    }

    storeKeyGradients<D, El>(p, dk, dv, key0 + warpKey + group, head, batch, quad);
}

} // namespace flashviz::cuda::tc
