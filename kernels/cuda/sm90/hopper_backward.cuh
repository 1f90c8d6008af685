#pragma once
// The Hopper backward pass (issue 18): FlashAttention-2's backward (the arithmetic of
// sm80/tc_backward.cuh, whose pre-pass and post-pass it shares) on wgmma, fp16 or bf16 with fp32
// accumulation, built for sm_90a only. A block owns BC = 128 keys of one (batch, head) and is
// warp-specialised as the forward (hopper_flash.cuh):
// - warpgroup 0, the producer, gives its registers back (setmaxnreg); one of its threads loads K_j
//   and V_j once, then streams every query block that sees them, Q_i and dO_i (64 rows, 128 where
//   dQ is split by rows; TMA) and their LSE and D (bulk copies of the scratch's padded rows),
//   through Stages buffers, each arrival counted on an mbarrier; the consumers hand a buffer back
//   once step i is done with it;
// - warpgroups 1 and 2 own 64 of the keys each and compute, with the keys as wgmma's rows:
//     S^T = K Q_i^T and dP^T = V dO_i^T (both operands K-major in shared memory),
//     P^T = exp2(S^T scale log2(e) - LSE log2(e)), dS^T = P^T o (dP^T - D) (tc_backward.cuh),
//     dV += P^T dO_i and dK += dS^T Q_i (P^T and dS^T from registers, dO_i and Q_i MN-major),
//   so dK and dV stay in registers across the walk; dS^T also goes to shared memory, and
//     dQ_i += dS K_j (dS from dS^T and K_j, both MN-major: transposed by the descriptors)
//   is added to the fp32 scratch, value by value with red.add as the mma.sync backward does, or
//   (the default, dqTiles) as one tile by the copy engine's bulk reduction from shared memory into
//   a scratch in fragment order; how the two consumers share that product is the row's
//   kernels::DqSplit (by default in turns: one a step).
// Keys past the end arrive as zero rows and, with keys past a row's diagonal under the causal
// mask (bottom-right aligned), get P = 0; query rows past the end arrive as zeros and their LSE
// as +inf (the pre-pass's padding), so they add nothing.
#include "kernels/cuda/params/fragment_order.h"
#include "kernels/cuda/params/tc_params.h"
#include "kernels/cuda/primitives/async_copy.cuh"
#include "kernels/cuda/primitives/math.cuh"
#include "kernels/cuda/primitives/mbarrier.cuh"
#include "kernels/cuda/primitives/tma.cuh"
#include "kernels/cuda/primitives/wgmma.cuh"
#include "kernels/cuda/sm80/tc_backward.cuh"
#include "kernels/cuda/sm90/tile_products.cuh"
#include "kernels/kernel_configs.h"

#include <cuda.h>
#include <cuda_runtime.h>

#include <cstdint>

namespace flashviz::cuda::sm90 {

template <int D_, int Stages_, kernels::DqSplit DqSplit_, bool DqTiles_ = false>
struct HopperBackwardTile {
    static constexpr int D = D_;
    static constexpr int kStages = Stages_;
    // The table's row this tile is built from (kernels/kernel_configs.h): its sizes and registers.
    static constexpr kernels::HopperBackwardConfig kConfig{kernels::MaskPreference::Any, D, kStages, DqSplit_,
                                                           DqTiles_};
    static constexpr int kConsumers = kConfig.consumers;
    static constexpr int BC = kConfig.blockCols(); // keys per block, 64 a consumer
    static constexpr int BR = kConfig.blockRows(); // query rows per step
    static constexpr int kThreads = kConfig.threads();
    static constexpr int kMinBlocks = kConfig.minBlocksPerSm;
    static constexpr int kProducerRegisters = kConfig.producerRegisters();
    static constexpr int kConsumerRegisters = kConfig.consumerRegisters();
    static constexpr int kSharedBytes = int(kConfig.sharedBytes());
    // dQ_i = dS K_j, BR rows x d, in 64-row x 64-column products of 32 registers (beside dK and
    // dV's 128 at d = 128), shared as kernels::DqSplit says: by columns, each consumer computes 64
    // of them over all 128 keys; by keys, every column over its own 64 keys, d / 64 products in
    // turn; in turns, every column over all keys on every other step; by rows (BR = 128), every
    // column of its own 64 rows over all keys.
    static constexpr kernels::DqSplit kDqSplit = DqSplit_;
    static constexpr bool kDqSplitsColumns = kDqSplit == kernels::DqSplit::Columns;
    static constexpr bool kDqTakesTurns = kDqSplit == kernels::DqSplit::Turns;
    static constexpr bool kDqSplitsRows = kDqSplit == kernels::DqSplit::Rows;
    static constexpr int kDqKeys = kDqSplit == kernels::DqSplit::Keys ? 64 : BC;
    static constexpr int kDqProducts = kDqSplitsColumns ? 1 : D / 64;
    static_assert(!kDqSplitsColumns || D == 128, "two 64-column halves");
    // dQ_i added as one tile by the copy engine (kernels::HopperBackwardConfig::dqTiles), from a
    // tile of each consumer's: in turns, a consumer's next tile is two steps away; by rows, one.
    static constexpr bool kDqTiles = DqTiles_;
    static_assert(!kDqTiles || kDqTakesTurns || kDqSplitsRows, "dQ by tiles: in turns or by rows");
    static_assert(!kDqSplitsRows || kDqTiles, "by rows, dQ by tiles only");
    static constexpr int kDqTileBytes = int(kConfig.dqTileBytes());
    static constexpr int kKVBytes = BC * D * 2;
    static constexpr int kQBytes = BR * D * 2;
    // dS^T, keys as rows, in blocks of 64 query columns (one 128-byte swizzled row a key).
    static constexpr int kDsBlockBytes = BC * 64 * 2;
    static constexpr int kDsBytes = BC * BR * 2;
    static constexpr int kStatBytes = BR * 4;
    static_assert(D == 64 || D == 128, "d");
    static_assert(BC == 128 && (BR == 64 || (BR == 128 && kDqSplitsRows)), "a step's 64 query rows, 128 by rows");
    static_assert(128 * (kProducerRegisters + kConsumers * kConsumerRegisters) <=
                      kernels::HopperConfig::kRegistersPerSm,
                  "registers");
};

// Where things live in the block's shared memory, from a 1024-byte aligned start: K | V |
// Q x Stages | dO x Stages | dS^T x 2 | LSE x Stages | D x Stages | [dQ tile x consumers] |
// mbarriers.
template <class Tile>
struct BackwardLayout {
    std::uint32_t base;          // shared-memory address
    unsigned char* generic;      // the same, for ordinary loads and stores
    static constexpr int kQ = 2 * Tile::kKVBytes;
    static constexpr int kDout = kQ + Tile::kStages * Tile::kQBytes;
    static constexpr int kDs = kDout + Tile::kStages * Tile::kQBytes;
    static constexpr int kLse = kDs + 2 * Tile::kDsBytes;
    static constexpr int kDelta = kLse + Tile::kStages * Tile::kStatBytes;
    static constexpr int kDqTile = kDelta + Tile::kStages * Tile::kStatBytes;
    static constexpr int kBarriers = kDqTile + (Tile::kDqTiles ? Tile::kConsumers * Tile::kDqTileBytes : 0);
    static_assert(kBarriers + 8 * Tile::kConfig.barriers() + 1024 == Tile::kSharedBytes, "the table's size");
    __device__ std::uint32_t k() const { return base; }
    __device__ std::uint32_t v() const { return base + Tile::kKVBytes; }
    __device__ std::uint32_t q(int stage) const { return base + kQ + stage * Tile::kQBytes; }
    __device__ std::uint32_t dout(int stage) const { return base + kDout + stage * Tile::kQBytes; }
    __device__ std::uint32_t ds(int buffer) const { return base + kDs + buffer * Tile::kDsBytes; }
    __device__ std::uint32_t lse(int stage) const { return base + kLse + stage * Tile::kStatBytes; }
    __device__ std::uint32_t delta(int stage) const { return base + kDelta + stage * Tile::kStatBytes; }
    __device__ std::uint32_t dqTile(int consumer) const { return base + kDqTile + consumer * Tile::kDqTileBytes; }
    __device__ unsigned char* at(std::uint32_t address) const { return generic + (address - base); }
    __device__ std::uint32_t barrier(int i) const { return base + kBarriers + 8 * i; }
    __device__ std::uint32_t kvFull() const { return barrier(0); }
    __device__ std::uint32_t stepFull(int stage) const { return barrier(1 + stage); }
    __device__ std::uint32_t stepFreed(int stage) const { return barrier(1 + Tile::kStages + stage); }
};

// The producer's one thread: K_j and V_j, then for each step Q_i, dO_i, LSE_i and D_i into
// buffer step % Stages once the consumers have handed it back.
template <class Tile>
__device__ __forceinline__ void produceSteps(const BackwardLayout<Tile>& smem, const CUtensorMap* tmQ,
                                             const CUtensorMap* tmK, const CUtensorMap* tmV,
                                             const CUtensorMap* tmDout, const TcBackwardParams& p,
                                             int key0, int head, int batch, int firstBlock, int steps) {
    constexpr int kBlocks = Tile::D / 64;
    const std::int64_t rows = (std::int64_t(batch) * p.heads + head) * p.rowsPadded;
    prim::barrierArriveExpectBytes(smem.kvFull(), 2 * Tile::kKVBytes);
#pragma unroll
    for (int cb = 0; cb < kBlocks; ++cb) {
        prim::tmaLoad4d(smem.k() + cb * Tile::BC * 128, tmK, smem.kvFull(), cb * 64, key0, head, batch);
        prim::tmaLoad4d(smem.v() + cb * Tile::BC * 128, tmV, smem.kvFull(), cb * 64, key0, head, batch);
    }
    for (int step = 0; step < steps; ++step) {
        const int stage = step % Tile::kStages;
        const int row0 = (firstBlock + step) * Tile::BR;
        if (step >= Tile::kStages) prim::barrierWait(smem.stepFreed(stage), ((step / Tile::kStages) - 1) & 1);
        prim::barrierArriveExpectBytes(smem.stepFull(stage), 2 * Tile::kQBytes + 2 * Tile::kStatBytes);
#pragma unroll
        for (int cb = 0; cb < kBlocks; ++cb) {
            prim::tmaLoad4d(smem.q(stage) + cb * Tile::BR * 128, tmQ, smem.stepFull(stage), cb * 64, row0, head, batch);
            prim::tmaLoad4d(smem.dout(stage) + cb * Tile::BR * 128, tmDout, smem.stepFull(stage), cb * 64, row0,
                            head, batch);
        }
        // The scratch's rows are padded to whole blocks (launchTcBackward): every byte is there.
        prim::bulkLoad(smem.lse(stage), p.lse2 + rows + row0, Tile::kStatBytes, smem.stepFull(stage));
        prim::bulkLoad(smem.delta(stage), p.delta + rows + row0, Tile::kStatBytes, smem.stepFull(stage));
    }
}

// dS^T (packed as wgmma's A fragments: k-step kj, register r holds keys group + 8 (r & 1) and
// query columns 8 (2 kj + r / 2) + 2 quad, + 1) into its shared-memory tile, in blocks of 64
// query columns 128-byte swizzled as the copy engine stores tiles: chunk c of key row `key` in
// block c / 8 at (c % 8) ^ (key % 8). tc::storeScoreGradients
// stores the same from the unpacked floats; packing a second time there costs this kernel 12 more
// bytes of spills at d = 128 (ptxas), so the fragments dK's product takes are stored instead.
template <class Tile>
__device__ __forceinline__ void storeScoreGradients(unsigned char* tile, const std::uint32_t (&ds)[Tile::BR / 16][4],
                                                    int firstKey, int group, int quad) {
#pragma unroll
    for (int kj = 0; kj < Tile::BR / 16; ++kj)
#pragma unroll
        for (int r = 0; r < 4; ++r) {
            const int key = firstKey + group + 8 * (r & 1), chunk = 2 * kj + r / 2;
            *reinterpret_cast<std::uint32_t*>(tile + (chunk / 8) * Tile::kDsBlockBytes + key * 128 +
                                              (((chunk % 8) ^ group) << 4) + quad * 4) = ds[kj][r];
        }
}

// 64 rows and 64 columns of dQ_i, over kDqKeys keys: A = dS from a 64-column block of the dS^T
// tile (keys as rows, from `dsRows`), B = K_j's rows from `kRows` (one 64-column block), both
// MN-major; issued.
template <class Tile, TcElement E>
__device__ __forceinline__ void issueQueryGradient(float (&dq)[32], std::uint32_t dsRows, std::uint32_t kRows) {
#pragma unroll
    for (int kk = 0; kk < Tile::kDqKeys / 16; ++kk)
        prim::wgmmaSSTransposed<64, kWgmmaType<E>>(
            dq, prim::swizzled128Descriptor(dsRows + kk * 16 * 128, Tile::kDsBlockBytes, 1024),
            prim::swizzled128Descriptor(kRows + kk * 16 * 128, Tile::BC * 128, 1024), kk > 0);
}

// Whether this consumer computes dQ_i this step: both split by keys or columns; in turns,
// consumer step % 2.
template <class Tile>
__device__ __forceinline__ bool takesDq(int consumer, int step) {
    return !Tile::kDqTakesTurns || (step & 1) == consumer;
}

// The consumers meet after writing dS^T: both where dQ is split by columns or rows (each reads
// the other's); in turns the one computing dQ waits for the other's, which only signals (a barrier of
// the step's parity: the next step's is the other one's, and a consumer signals step s + 2 only
// after waiting on step s + 1, which the other signals after reading step s); by keys each with
// its own warps. Named barriers 1 to 3.
// A consumer's threads have written its dQ tile: named barriers 3 and 4 (128 threads each).
__device__ __forceinline__ void dqTileWritten(int consumer) {
    if (consumer == 0) prim::namedBarrierSync<3, 128>();
    else prim::namedBarrierSync<4, 128>();
}

// This thread's share of dQ_i's 64-column product `product` into the consumer's tile, in fragment
// order (params/fragment_order.h): register 4 nt + v is chunk 8 product + nt's value v.
__device__ __forceinline__ void storeDqFragments(unsigned char* tile, const float (&dq)[32], int product, int tid) {
#pragma unroll
    for (int nt = 0; nt < 8; ++nt)
        *reinterpret_cast<float4*>(tile + 4 * fragmentOrderOffset(product * 8 + nt, tid, 0)) =
            make_float4(dq[4 * nt], dq[4 * nt + 1], dq[4 * nt + 2], dq[4 * nt + 3]);
}

template <class Tile>
__device__ __forceinline__ void scoreGradientsWritten(int consumer, int step) {
    if constexpr (Tile::kDqSplitsColumns || Tile::kDqSplitsRows) {
        prim::namedBarrierSync<1, 256>();
    } else if constexpr (Tile::kDqTakesTurns) {
        const bool waits = takesDq<Tile>(consumer, step);
        if (step & 1) waits ? prim::namedBarrierSync<2, 256>() : prim::namedBarrierArrive<2, 256>();
        else waits ? prim::namedBarrierSync<1, 256>() : prim::namedBarrierArrive<1, 256>();
    } else if (consumer == 0) {
        prim::namedBarrierSync<2, 128>();
    } else {
        prim::namedBarrierSync<3, 128>();
    }
}

// One consumer warpgroup: its 64 keys against every step's query block, then dK and dV out.
template <class Tile, TcElement E, bool Causal>
__device__ __forceinline__ void consumeSteps(const BackwardLayout<Tile>& smem, const TcBackwardParams& p,
                                             int consumer, int key0, int head, int batch, int firstBlock,
                                             int steps) {
    constexpr int D = Tile::D, BR = Tile::BR;
    using El = tc::Element<E>;
    const int tid = int(threadIdx.x) % 128, warp = tid / 32, lane = tid % 32;
    const int group = lane / 4, quad = lane % 4;
    const int nq = p.queries, nk = p.keys, shift = nk - nq;
    const float scaleLog2 = p.scale * prim::kLog2e;
    const int ownKey0 = key0 + consumer * 64;       // this warpgroup's first key
    const int firstKey = consumer * 64 + warp * 16; // this warp's, in the block
    const int key = key0 + firstKey + group;        // this thread's (and key + 8)
    const bool ragged = ownKey0 + 64 > nk;
    const std::uint32_t kRows = smem.k() + consumer * 64 * 128, vRows = smem.v() + consumer * 64 * 128;
    // dQ's operands: this consumer's 64 columns of K_j over all keys, all columns over its keys, or
    // (in turns and by rows) all of K_j.
    const std::uint32_t dqKRows = Tile::kDqSplitsColumns                         ? smem.k() + consumer * Tile::BC * 128
                                  : Tile::kDqTakesTurns || Tile::kDqSplitsRows ? smem.k()
                                                                               : kRows;
    // dS for dQ's product: this consumer's keys (by keys) or its 64 query rows' block (by rows).
    const std::uint32_t dsOffset = Tile::kDqSplit == kernels::DqSplit::Keys ? consumer * 64 * 128
                                   : Tile::kDqSplitsRows                   ? consumer * Tile::kDsBlockBytes
                                                                           : 0;
    // The first of the step's rows this consumer adds dQ to (by rows: its 64).
    const int dqRow0 = Tile::kDqSplitsRows ? consumer * 64 : 0;
    const int dqColumn0 = Tile::kDqSplitsColumns ? consumer * 64 : 0;
    float* dqRows = p.dqAccum + ((std::int64_t(batch) * p.heads + head) * p.rowsPadded + warp * 16 + group) * D +
                    dqColumn0 + 2 * quad;

    float dk[D / 2], dv[D / 2];
#pragma unroll
    for (int i = 0; i < D / 2; ++i) dk[i] = dv[i] = 0.f;
    if (steps > 0) prim::barrierWait(smem.kvFull(), 0);
    for (int step = 0; step < steps; ++step) {
        const int stage = step % Tile::kStages;
        const int row0 = (firstBlock + step) * BR;
        prim::barrierWait(smem.stepFull(stage), (step / Tile::kStages) & 1);
        float s[BR / 2], dp[BR / 2];
        prim::wgmmaFence();
        issueScores<D, Tile::BC, BR, BR, E>(s, kRows, smem.q(stage));
        issueScores<D, Tile::BC, BR, BR, E>(dp, vRows, smem.dout(stage));
        prim::wgmmaCommit();
        prim::wgmmaWait<0>();
        prim::fenceAccumulators(s);
        prim::fenceAccumulators(dp);

        const auto* lse2 = reinterpret_cast<const float*>(smem.at(smem.lse(stage)));
        const auto* delta = reinterpret_cast<const float*>(smem.at(smem.delta(stage)));
        const bool diagonal = Causal && ownKey0 + 63 > row0 + shift;
        auto& pt = reinterpret_cast<float(&)[1][BR / 8][4]>(s);
        auto& ds = reinterpret_cast<float(&)[1][BR / 8][4]>(dp);
        tc::probabilities(pt, lse2 + 2 * quad, key, row0 + 2 * quad, ragged, diagonal, nk, shift, scaleLog2);
        tc::scoreGradients(ds, pt, delta + 2 * quad);
        std::uint32_t ptFragments[BR / 16][4], dsFragments[BR / 16][4];
        packFragments<BR, E>(s, ptFragments);
        packFragments<BR, E>(dp, dsFragments);
        // dS^T for dQ, stored before dK's product takes its fragments (a wgmma's register
        // operands may not be read until it retires). Buffers alternate: this step overwrites
        // step - 2's, which (where a consumer reads the other's half) was read before the reader
        // reached step - 1's barrier (its products retire before it moves on), and this consumer
        // passed that barrier after the reader.
        const std::uint32_t dsTile = smem.ds(step & 1);
        storeScoreGradients<Tile>(smem.at(dsTile), dsFragments, firstKey, group, quad);
        prim::fenceSharedForWgmma();
        prim::wgmmaFence();
        issueValues<D, BR, E>(dv, ptFragments, smem.dout(stage));
        issueValues<D, BR, E>(dk, dsFragments, smem.q(stage));
        prim::wgmmaCommit();
        // This consumer's dQ tile is free once the copy engine has read it (two steps ago in turns,
        // one by rows); the barrier below tells its other threads.
        if constexpr (Tile::kDqTiles)
            if (tid == 0 && takesDq<Tile>(consumer, step)) prim::bulkWaitRead<0>();
        scoreGradientsWritten<Tile>(consumer, step);
        if (!takesDq<Tile>(consumer, step)) {
            // Q_i and dO_i are read once dK's and dV's products retire.
            prim::wgmmaWait<0>();
            prim::fenceAccumulators(dk);
            prim::fenceAccumulators(dv);
            prim::barrierArrive(smem.stepFreed(stage));
            continue;
        }
#pragma unroll
        for (int product = 0; product < Tile::kDqProducts; ++product) {
            float dq[32];
            prim::wgmmaFence();
            issueQueryGradient<Tile, E>(dq, dsTile + dsOffset, dqKRows + product * Tile::BC * 128);
            prim::wgmmaCommit();
            prim::wgmmaWait<0>();
            prim::fenceAccumulators(dk);
            prim::fenceAccumulators(dv);
            prim::fenceAccumulators(dq);
            // dK's and dV's products, the last to read Q_i and dO_i, retired with the first.
            if (product == 0) prim::barrierArrive(smem.stepFreed(stage));
            if constexpr (Tile::kDqTiles) {
                storeDqFragments(smem.at(smem.dqTile(consumer)), dq, product, tid);
            } else {
                // Padded rows of the scratch: no bounds to check, and their dS is 0.
                float* out = dqRows + std::int64_t(row0) * D + product * 64;
#pragma unroll
                for (int nt = 0; nt < 8; ++nt)
#pragma unroll
                    for (int h = 0; h < 2; ++h)
                        tc::addPair(out + h * 8 * D + nt * 8, dq[4 * nt + 2 * h], dq[4 * nt + 2 * h + 1]);
            }
        }
        if constexpr (Tile::kDqTiles) {
            // The whole tile, one bulk reduction into its 64 rows of the scratch (whole blocks,
            // padded: nothing to bound).
            prim::fenceSharedForWgmma();
            dqTileWritten(consumer);
            if (tid == 0) {
                prim::bulkReduceAdd(
                    p.dqAccum + ((std::int64_t(batch) * p.heads + head) * p.rowsPadded + row0 + dqRow0) * D,
                    smem.dqTile(consumer), Tile::kDqTileBytes);
                prim::bulkCommit();
            }
        }
    }
    // The copy engine's last reductions read this block's shared memory until they finish.
    if constexpr (Tile::kDqTiles)
        if (tid == 0) prim::bulkWait<0>();

    // wgmma's accumulators have the mma layout: register 4 dt + e is n-tile dt's e.
    tc::storeKeyGradients<D, El>(p, reinterpret_cast<const float(&)[D / 8][4]>(dk),
                                 reinterpret_cast<const float(&)[D / 8][4]>(dv), key, head, batch, quad);
}

template <class Tile, TcElement E, bool Causal>
__global__ void __launch_bounds__(Tile::kThreads, Tile::kMinBlocks)
    hopperBackwardKernel(const __grid_constant__ CUtensorMap tmQ, const __grid_constant__ CUtensorMap tmK,
                         const __grid_constant__ CUtensorMap tmV, const __grid_constant__ CUtensorMap tmDout,
                         const TcBackwardParams p) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    extern __shared__ __align__(1024) unsigned char shared[];
    const std::uint32_t raw = prim::sharedAddress(shared), base = (raw + 1023u) & ~1023u;
    const BackwardLayout<Tile> smem{base, shared + (base - raw)};
    // The mma.sync backward's order: under the mask every head's longest key blocks start first.
    const tc::KeyBlockPlace place = tc::keyBlockPlace<Causal>();
    const int keyBlock = place.keyBlock, head = place.head, batch = place.batch;
    const int key0 = keyBlock * Tile::BC;
    // Every query block from the first whose last row sees key0 (all of them without the mask).
    const int blocks = (p.queries + Tile::BR - 1) / Tile::BR;
    const int firstBlock = Causal ? max(0, key0 - (p.keys - p.queries)) / Tile::BR : 0;
    const int steps = max(0, blocks - firstBlock);
    const int warpgroup = int(threadIdx.x) / 128;

    if (threadIdx.x == 0) {
        prim::barrierInit(smem.kvFull(), 1);
        for (int s = 0; s < Tile::kStages; ++s) {
            prim::barrierInit(smem.stepFull(s), 1);
            prim::barrierInit(smem.stepFreed(s), 128 * Tile::kConsumers);
        }
        prim::fenceBarrierInit();
    }
    __syncthreads();

    if (warpgroup == 0) {
        asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(Tile::kProducerRegisters));
        if (threadIdx.x == 0 && steps > 0) {
            prim::tmaPrefetchMap(&tmQ);
            prim::tmaPrefetchMap(&tmK);
            prim::tmaPrefetchMap(&tmV);
            prim::tmaPrefetchMap(&tmDout);
            produceSteps<Tile>(smem, &tmQ, &tmK, &tmV, &tmDout, p, key0, head, batch, firstBlock, steps);
        }
    } else {
        asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(Tile::kConsumerRegisters));
        consumeSteps<Tile, E, Causal>(smem, p, warpgroup - 1, key0, head, batch, firstBlock, steps);
    }
#else
    __trap(); // built without sm_90a code: the launcher never picks this kernel
#endif
}

} // namespace flashviz::cuda::sm90
