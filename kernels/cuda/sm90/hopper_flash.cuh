#pragma once
// The Hopper FlashAttention forward kernel (issue 17): fp16 or bf16 Q, K, V and O, fp32
// accumulation, built for sm_90a only. Each block owns BM = 64 x Consumers query rows of one
// (batch, head) and is warp-specialised:
// - warpgroup 0, the producer, gives its registers back (setmaxnreg) and one of its threads
//   streams Q once and K_j, V_j through Stages shared-memory buffers with the copy engine (TMA),
//   each arrival counted on an mbarrier; the consumers hand K_j's buffer back once S_j is done
//   and V_j's once P_j V_j is, so K runs ahead (HOPPER_NOTES.md, v4);
// - warpgroups 1 .. Consumers each own 64 query rows: S = Q K_j^T with wgmma from shared memory,
//   the online softmax on the accumulators in registers (sm80/mma_softmax.cuh: the wgmma
//   accumulators have mma.sync's fragment layout), then O += P V_j with P straight from registers.
// With Overlap, a consumer issues S_{j+1} = Q K_{j+1} and O += P_j V_j together and runs the
// softmax of S_{j+1} while the tensor cores work on P_j V_j (FlashAttention-3's intra-warpgroup
// pipelining); with PingPong two consumers take turns at the tensor cores, so one's softmax runs
// under the other's products. The last tile is peeled out of the loop: a product issued under a
// condition inside it would keep ptxas from telling which group a wait retires (it then
// serialises every wgmma, warnings C7513-C7515).
// Tiles are 128-byte swizzled (primitives/wgmma.cuh): d = 128 is two 64-column blocks. Rows and
// keys past the end arrive from the copy engine as zeros; keys past the end and, under the causal
// mask (bottom-right aligned), past the diagonal get -inf.
// The trace mode (hopperFlashTraceKernel) is the same code with marks (kernels/hopper_marks.h)
// recorded by one thread per warpgroup: what the window's Hopper page draws.
#include "kernels/cuda/params/tc_params.h"
#include "kernels/cuda/primitives/async_copy.cuh"
#include "kernels/cuda/primitives/math.cuh"
#include "kernels/cuda/primitives/mbarrier.cuh"
#include "kernels/cuda/primitives/tma.cuh"
#include "kernels/cuda/primitives/wgmma.cuh"
#include "kernels/cuda/sm80/mma_softmax.cuh"
#include "kernels/cuda/sm80/tc_flash.cuh"
#include "kernels/cuda/sm90/tile_products.cuh"
#include "kernels/hopper_marks.h"
#include "kernels/kernel_configs.h"

#include <cuda.h>
#include <cuda_runtime.h>

#include <cstdint>

namespace flashviz::cuda::sm90 {

namespace prim = primitives;
using kernels::HopperMark;

// The untraced kernel's marks: nothing, compiled away.
struct NoMarks {
    __device__ void operator()(HopperMark, int = -1) const {}
    __device__ void finish() const {}
};

// The trace mode's marks: the warpgroup's first warp reads the SM's clock (cheap, every cycle)
// at each, and %globaltimer (comparable across SMs, but slow to read and moving in steps) at its
// first mark and at Finish, then spins until the timer moves (TimerTick: its step); its first
// lane writes them. The whole warp takes the branch, so the warp never diverges around the
// products. A full buffer keeps counting, so the host sees it overflowed.
struct TimerMarks {
    kernels::HopperDeviceMark* out;
    int* count;
    int capacity;
    bool recording; // the warpgroup's first warp
    int written = 0;
    __device__ void write(HopperMark mark, int tile, bool readTimer) {
        std::uint64_t now = 0;
        if (readTimer) asm volatile("mov.u64 %0, %%globaltimer;\n" : "=l"(now)::"memory");
        const auto cycles = std::uint32_t(clock64());
        if (written < capacity && threadIdx.x % 32 == 0)
            out[written] = {now, cycles, std::uint32_t(mark) | (std::uint32_t(tile) << 8)};
        ++written;
    }
    __device__ void operator()(HopperMark mark, int tile = -1) {
        if (recording) write(mark, tile, written == 0);
    }
    __device__ void finish() {
        if (!recording) return;
        std::uint64_t finished, now;
        asm volatile("mov.u64 %0, %%globaltimer;\n" : "=l"(finished)::"memory");
        write(HopperMark::Finish, -1, false);
        do asm volatile("mov.u64 %0, %%globaltimer;\n" : "=l"(now)::"memory");
        while (now == finished);
        const auto cycles = std::uint32_t(clock64());
        if (threadIdx.x % 32 == 0) {
            if (written - 1 < capacity) out[written - 1].globalNs = finished;
            if (written < capacity) out[written] = {now, cycles, std::uint32_t(HopperMark::TimerTick) | (~0u << 8)};
            *count = written + 1;
        }
    }
};

template <int D_, int BN_, int Consumers_, int Stages_, bool Overlap_, bool PingPong_>
struct HopperTile {
    static constexpr int D = D_;
    static constexpr int BN = BN_;               // keys per tile
    static constexpr int kConsumers = Consumers_; // warpgroups of 64 query rows
    static constexpr int kStages = Stages_;       // K / V buffers in flight
    static constexpr bool kOverlap = Overlap_;
    static constexpr bool kPingPong = PingPong_;
    static_assert(!PingPong_ || (Overlap_ && Consumers_ == 2), "ping-pong: two overlapping consumers");
    static constexpr int BM = 64 * kConsumers;
    static constexpr int kThreads = 128 * (kConsumers + 1);
    static constexpr int kMinBlocks = 1; // __launch_bounds__: one block per SM, setmaxnreg's cap
    // What softmaxScores (mma_softmax.cuh) reads: one 16-row tile per warp, BC keys.
    static constexpr int MT = 1;
    static constexpr int BC = BN;
    static constexpr int kQBytes = BM * D * 2;
    static constexpr int kKVBytes = BN * D * 2;
    // The table's row this tile is built from (kernels/kernel_configs.h): its sizes and registers.
    static constexpr kernels::HopperConfig kConfig{kernels::MaskPreference::Any, D, BN, kConsumers,
                                                   kStages, Overlap_, PingPong_};
    static constexpr int kBarriers = kConfig.barriers();
    static constexpr int kSharedBytes = int(kConfig.sharedBytes());
    // Registers per thread after setmaxnreg: the producer keeps few, the consumers take the rest
    // of the 64 K (multiples of 8; at most 65536 over the block).
    static constexpr int kProducerRegisters = kConfig.producerRegisters();
    static constexpr int kConsumerRegisters = kConfig.consumerRegisters();
    static_assert(D == 64 || D == 128, "d");
    static_assert(BN == 64 || BN == 128, "keys per tile: wgmma N of S (primitives/wgmma.cuh)");
    static_assert(128 * (kProducerRegisters + kConsumers * kConsumerRegisters) <= kConfig.kRegistersPerSm,
                  "registers");
};

// Where things live in the block's shared memory (1024-byte aligned: the swizzle's period).
template <class Tile>
struct SharedLayout {
    std::uint32_t q;
    __device__ explicit SharedLayout(std::uint32_t base) : q(base) {}
    __device__ std::uint32_t k(int stage) const { return q + Tile::kQBytes + stage * Tile::kKVBytes; }
    __device__ std::uint32_t v(int stage) const {
        return q + Tile::kQBytes + (Tile::kStages + stage) * Tile::kKVBytes;
    }
    __device__ std::uint32_t barrier(int i) const {
        return q + Tile::kQBytes + 2 * Tile::kStages * Tile::kKVBytes + 8 * i;
    }
    __device__ std::uint32_t qFull() const { return barrier(0); }
    __device__ std::uint32_t kFull(int stage) const { return barrier(1 + stage); }
    __device__ std::uint32_t vFull(int stage) const { return barrier(1 + Tile::kStages + stage); }
    // K_j's buffer is handed back once S_j is done, V_j's once P_j V_j is: K runs ahead.
    __device__ std::uint32_t kFreed(int stage) const { return barrier(1 + 2 * Tile::kStages + stage); }
    __device__ std::uint32_t vFreed(int stage) const { return barrier(1 + 3 * Tile::kStages + stage); }
};

// Key tiles the block must visit: all of them, or under the causal mask those up to its last
// row's diagonal (bottom-right aligned: row i sees keys j <= i + keys - queries).
template <class Tile, bool Causal>
__device__ __forceinline__ int keyTiles(const TcParams& prm, int row0) {
    int tiles = (prm.keys + Tile::BN - 1) / Tile::BN;
    if constexpr (Causal) {
        const int lastKey = min(row0 + Tile::BM, prm.queries) - 1 + prm.keys - prm.queries;
        tiles = lastKey < 0 ? 0 : min(tiles, lastKey / Tile::BN + 1);
    }
    return tiles;
}

// The producer's one thread: Q, then K_j and V_j into buffer j % Stages once the consumers have
// handed that buffer back. A d = 128 tile is two boxes of 64 columns.
template <class Tile, class Marks>
__device__ __forceinline__ void produce(const SharedLayout<Tile>& smem, const CUtensorMap* tmQ,
                                        const CUtensorMap* tmK, const CUtensorMap* tmV, int row0,
                                        int head, int batch, int tiles, Marks& marks) {
    constexpr int kBlocks = Tile::D / 64;
    prim::barrierArriveExpectBytes(smem.qFull(), Tile::kQBytes);
#pragma unroll
    for (int cb = 0; cb < kBlocks; ++cb)
        prim::tmaLoad4d(smem.q + cb * Tile::BM * 128, tmQ, smem.qFull(), cb * 64, row0, head, batch);
    marks(HopperMark::QIssued);
    for (int j = 0; j < tiles; ++j) {
        const int stage = j % Tile::kStages;
        const std::uint32_t reuse = ((j / Tile::kStages) - 1) & 1; // phase of tile j - Stages' release
        if (j >= Tile::kStages) {
            marks(HopperMark::KBufferWait, j);
            prim::barrierWait(smem.kFreed(stage), reuse);
        }
        prim::barrierArriveExpectBytes(smem.kFull(stage), Tile::kKVBytes);
#pragma unroll
        for (int cb = 0; cb < kBlocks; ++cb)
            prim::tmaLoad4d(smem.k(stage) + cb * Tile::BN * 128, tmK, smem.kFull(stage), cb * 64,
                         j * Tile::BN, head, batch);
        marks(HopperMark::KIssued, j);
        if (j >= Tile::kStages) {
            marks(HopperMark::VBufferWait, j);
            prim::barrierWait(smem.vFreed(stage), reuse);
        }
        prim::barrierArriveExpectBytes(smem.vFull(stage), Tile::kKVBytes);
#pragma unroll
        for (int cb = 0; cb < kBlocks; ++cb)
            prim::tmaLoad4d(smem.v(stage) + cb * Tile::BN * 128, tmV, smem.vFull(stage), cb * 64,
                         j * Tile::BN, head, batch);
        marks(HopperMark::VIssued, j);
    }
}

// Keys past the end, and under the causal mask keys past the diagonal, get -inf (in place).
template <class Tile, bool Causal>
__device__ __forceinline__ void maskScores(float (&s)[Tile::BN / 2], int key0, int rowBase, int nk,
                                           int shift, int lane) {
    const int group = lane / 4, quad = lane % 4;
#pragma unroll
    for (int nt = 0; nt < Tile::BN / 8; ++nt)
#pragma unroll
        for (int e = 0; e < 4; ++e) {
            const int row = rowBase + group + (e >> 1) * 8;
            const int key = key0 + nt * 8 + quad * 2 + (e & 1);
            if (key >= nk || (Causal && key > row + shift)) s[nt * 4 + e] = -INFINITY;
        }
}

// The online softmax of one S tile (sm80/mma_softmax.cuh's softmaxScores), P over S in place.
// Returns, per row half, the correction exp(m_old - m_new) that O still has to be multiplied by.
template <class Tile>
__device__ __forceinline__ void softmax(float (&s)[Tile::BN / 2], float (&rowMax)[1][2],
                                        float (&rowSum)[1][2], float (&correction)[2], float scaleLog2) {
    detail::softmaxScores<Tile>(reinterpret_cast<float(&)[1][Tile::BN / 8][4]>(s), rowMax, rowSum,
                                reinterpret_cast<float(&)[1][2]>(correction), scaleLog2);
}

template <int Count>
__device__ __forceinline__ void rescale(float (&acc)[Count], const float (&correction)[2]) {
#pragma unroll
    for (int i = 0; i < Count; ++i) acc[i] *= correction[(i >> 1) & 1];
}

// Ping-pong between two consumer warpgroups (FlashAttention-3): each issues its products only
// in its turn, so one's softmax runs while the other's products have the tensor cores. Named
// barriers 1 and 2 (0 is __syncthreads), each completed by both warpgroups' 256 threads.
template <class Tile>
struct Turns {
    int consumer;
    __device__ void begin() const {
        if constexpr (Tile::kPingPong)
            asm volatile("bar.sync %0, 256;\n" ::"r"(1 + consumer) : "memory");
    }
    // Hands the tensor cores to the other warpgroup; the second one's last turn has no successor.
    __device__ void end(bool last) const {
        if constexpr (Tile::kPingPong)
            if (!(last && consumer == 1)) asm volatile("bar.arrive %0, 256;\n" ::"r"(2 - consumer) : "memory");
    }
    // The first turn is the first warpgroup's.
    __device__ void start() const {
        if constexpr (Tile::kPingPong)
            if (consumer == 1) asm volatile("bar.arrive 1, 256;\n" ::: "memory");
    }
};

// One consumer warpgroup: its 64 rows against every key tile, then O = acc / l written out.
template <class Tile, TcElement E, bool Causal, class Marks>
__device__ __forceinline__ void consume(const SharedLayout<Tile>& smem, const TcParams& prm,
                                        int consumer, int row0, int head, int batch, int tiles,
                                        Marks& marks) {
    const int tid = int(threadIdx.x) % 128, warp = tid / 32, lane = tid % 32;
    const int nq = prm.queries, nk = prm.keys, shift = nk - nq;
    const int wgRow0 = row0 + consumer * 64;
    const int rowBase = wgRow0 + warp * 16; // + group (+ 8): this thread's rows
    const float scaleLog2 = prm.scale * prim::kLog2e;
    const std::uint32_t q = smem.q + consumer * 64 * 128;
    const Turns<Tile> turns{consumer};
    float rowMax[1][2] = {{-INFINITY, -INFINITY}}, rowSum[1][2] = {{0.f, 0.f}};
    // P_j from S_j; tiles that cross the end of the keys or this warpgroup's first row's
    // diagonal are masked.
    auto softmaxOf = [&](float (&s)[Tile::BN / 2], int j, float (&correction)[2]) {
        marks(HopperMark::SoftmaxBegin, j);
        const int key0 = j * Tile::BN;
        if (key0 + Tile::BN > nk || (Causal && key0 + Tile::BN - 1 > wgRow0 + shift))
            maskScores<Tile, Causal>(s, key0, rowBase, nk, shift, lane);
        softmax<Tile>(s, rowMax, rowSum, correction, scaleLog2);
        marks(HopperMark::SoftmaxEnd, j);
    };
    auto waitFor = [&](std::uint32_t barrier, std::uint32_t phase, HopperMark wait, HopperMark ready, int j) {
        marks(wait, j);
        prim::barrierWait(barrier, phase);
        marks(ready, j);
    };
    // Ping-pong: the tensor cores' turn for the products of tile j (for the marks).
    auto beginTurn = [&](int j) {
        if constexpr (Tile::kPingPong) marks(HopperMark::TurnWait, j);
        turns.begin();
        if constexpr (Tile::kPingPong) marks(HopperMark::TurnGranted, j);
    };
    float acc[Tile::D / 2];
#pragma unroll
    for (int i = 0; i < Tile::D / 2; ++i) acc[i] = 0.f;

    if (tiles > 0) {
        float s[Tile::BN / 2];
        std::uint32_t pa[Tile::BN / 16][4];
        float correction[2];
        waitFor(smem.qFull(), 0, HopperMark::QWait, HopperMark::QReady, -1);
        waitFor(smem.kFull(0), 0, HopperMark::KWait, HopperMark::KReady, 0);
        turns.start();
        beginTurn(0);
        prim::wgmmaFence();
        issueScores<Tile::D, Tile::BM, Tile::BN, Tile::BN, E>(s, q, smem.k(0));
        prim::wgmmaCommit();
        marks(HopperMark::ScoresIssued, 0);
        turns.end(false);
        prim::wgmmaWait<0>();
        prim::fenceAccumulators(s);
        marks(HopperMark::ScoresRetired, 0);
        prim::barrierArrive(smem.kFreed(0));
        softmaxOf(s, 0, correction);
        packFragments<Tile::BN, E>(s, pa);

        // O += P_j V_j issued, and buffer j handed back once it is waited for (retire below).
        auto values = [&](int j) {
            rescale(acc, correction);
            waitFor(smem.vFull(j % Tile::kStages), (j / Tile::kStages) & 1, HopperMark::VWait,
                    HopperMark::VReady, j);
            prim::wgmmaFence();
            issueValues<Tile::D, Tile::BN, E>(acc, pa, smem.v(j % Tile::kStages));
            prim::wgmmaCommit();
            marks(HopperMark::ValuesIssued, j);
        };
        auto retireValues = [&](int j) {
            marks(HopperMark::ValuesWait, j);
            prim::wgmmaWait<0>();
            prim::fenceAccumulators(acc);
            marks(HopperMark::ValuesRetired, j);
            prim::barrierArrive(smem.vFreed(j % Tile::kStages));
        };
        // Every tile but the last: S_{j+1} is issued beside P_j V_j (with Overlap, and its
        // softmax runs while P_j V_j still has the tensor cores), then P_{j+1} replaces P_j.
        // No product is issued conditionally inside the loop, so ptxas can tell which group
        // each wait retires (else it serialises the products: C7514, C7515).
        for (int j = 0; j + 1 < tiles; ++j) {
            const int next = j + 1, nextStage = next % Tile::kStages;
            if constexpr (Tile::kOverlap) {
                beginTurn(next);
                waitFor(smem.kFull(nextStage), (next / Tile::kStages) & 1, HopperMark::KWait,
                        HopperMark::KReady, next);
                prim::wgmmaFence();
                issueScores<Tile::D, Tile::BM, Tile::BN, Tile::BN, E>(s, q, smem.k(nextStage));
                prim::wgmmaCommit();
                marks(HopperMark::ScoresIssued, next);
                values(j);
                turns.end(false);
                float correctionNext[2];
                prim::wgmmaWait<1>();
                prim::fenceAccumulators(s);
                marks(HopperMark::ScoresRetired, next);
                prim::barrierArrive(smem.kFreed(nextStage));
                softmaxOf(s, next, correctionNext);
                retireValues(j);
                packFragments<Tile::BN, E>(s, pa); // pa was P_j V_j's operand until now
                correction[0] = correctionNext[0];
                correction[1] = correctionNext[1];
            } else {
                values(j);
                retireValues(j);
                waitFor(smem.kFull(nextStage), (next / Tile::kStages) & 1, HopperMark::KWait,
                        HopperMark::KReady, next);
                prim::wgmmaFence();
                issueScores<Tile::D, Tile::BM, Tile::BN, Tile::BN, E>(s, q, smem.k(nextStage));
                prim::wgmmaCommit();
                marks(HopperMark::ScoresIssued, next);
                prim::wgmmaWait<0>();
                prim::fenceAccumulators(s);
                marks(HopperMark::ScoresRetired, next);
                prim::barrierArrive(smem.kFreed(nextStage));
                softmaxOf(s, next, correction);
                packFragments<Tile::BN, E>(s, pa);
            }
        }
        beginTurn(tiles - 1);
        values(tiles - 1);
        turns.end(true);
        retireValues(tiles - 1);
    }

    // O = acc / l; a row that saw no key (l = 0) is written as 0.
    marks(HopperMark::StoreBegin);
    using El = tc::Element<E>;
    const int group = lane / 4, quad = lane % 4;
    char* oGlobal = static_cast<char*>(prm.o) + 2 * (batch * prm.oBatchStride + head * prm.oHeadStride);
#pragma unroll
    for (int h = 0; h < 2; ++h) {
        float l = rowSum[0][h];
        l += __shfl_xor_sync(0xffffffffu, l, 1);
        l += __shfl_xor_sync(0xffffffffu, l, 2);
        const float inverse = l > 0.f ? 1.f / l : 0.f;
        const int row = rowBase + group + h * 8;
        if (row >= nq) continue;
        if (prm.lse != nullptr && quad == 0)
            prm.lse[(std::int64_t(batch) * prm.heads + head) * nq + row] =
                detail::logSumExp(rowMax[0][h], l, prm.scale);
        char* out = oGlobal + std::int64_t(row) * (2 * prm.oRowStride) + quad * 4;
#pragma unroll
        for (int dt = 0; dt < Tile::D / 8; ++dt)
            *reinterpret_cast<std::uint32_t*>(out + dt * 16) =
                El::pack(acc[4 * dt + 2 * h] * inverse, acc[4 * dt + 2 * h + 1] * inverse);
    }
    marks(HopperMark::StoreEnd);
}

// One block of either kernel: the barriers set up, then the producer or a consumer.
template <class Tile, TcElement E, bool Causal, class Marks>
__device__ __forceinline__ void flashBlock(const CUtensorMap& tmQ, const CUtensorMap& tmK,
                                           const CUtensorMap& tmV, const TcParams& prm,
                                           const SharedLayout<Tile>& smem, Marks& marks) {
    // Blocks of the last query rows start first: under a causal mask they see the most keys.
    const int queryBlock = int(gridDim.x) - 1 - int(blockIdx.x);
    const int head = int(blockIdx.y), batch = int(blockIdx.z);
    const int row0 = queryBlock * Tile::BM;
    const int tiles = keyTiles<Tile, Causal>(prm, row0);
    const int warpgroup = int(threadIdx.x) / 128;

    if (threadIdx.x == 0) {
        prim::barrierInit(smem.qFull(), 1);
        for (int s = 0; s < Tile::kStages; ++s) {
            prim::barrierInit(smem.kFull(s), 1);
            prim::barrierInit(smem.vFull(s), 1);
            prim::barrierInit(smem.kFreed(s), 128 * Tile::kConsumers);
            prim::barrierInit(smem.vFreed(s), 128 * Tile::kConsumers);
        }
        prim::fenceBarrierInit();
    }
    __syncthreads();

    if (warpgroup == 0) {
        asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(Tile::kProducerRegisters));
        if (threadIdx.x == 0 && tiles > 0) {
            prim::tmaPrefetchMap(&tmQ);
            prim::tmaPrefetchMap(&tmK);
            prim::tmaPrefetchMap(&tmV);
            produce<Tile>(smem, &tmQ, &tmK, &tmV, row0, head, batch, tiles, marks);
        }
    } else {
        asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(Tile::kConsumerRegisters));
        consume<Tile, E, Causal>(smem, prm, warpgroup - 1, row0, head, batch, tiles, marks);
    }
    marks.finish();
}

template <class Tile, TcElement E, bool Causal>
__global__ void __launch_bounds__(Tile::kThreads, Tile::kMinBlocks)
    hopperFlashKernel(const __grid_constant__ CUtensorMap tmQ, const __grid_constant__ CUtensorMap tmK,
                      const __grid_constant__ CUtensorMap tmV, const TcParams prm) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    extern __shared__ __align__(1024) unsigned char shared[];
    const SharedLayout<Tile> smem((prim::sharedAddress(shared) + 1023u) & ~1023u);
    NoMarks marks;
    flashBlock<Tile, E, Causal>(tmQ, tmK, tmV, prm, smem, marks);
#else
    __trap(); // built without sm_90a code: the launcher never picks this kernel
#endif
}

// The same with the trace mode's marks: for the window's Hopper page, on small launches.
template <class Tile, TcElement E, bool Causal>
__global__ void __launch_bounds__(Tile::kThreads, Tile::kMinBlocks)
    hopperFlashTraceKernel(const __grid_constant__ CUtensorMap tmQ, const __grid_constant__ CUtensorMap tmK,
                           const __grid_constant__ CUtensorMap tmV, const TcParams prm,
                           const kernels::HopperTraceBuffers trace) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    extern __shared__ __align__(1024) unsigned char shared[];
    const SharedLayout<Tile> smem((prim::sharedAddress(shared) + 1023u) & ~1023u);
    const int block = int(blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z));
    const int slot = block * (Tile::kConsumers + 1) + int(threadIdx.x) / 128;
    if (threadIdx.x == 0) {
        unsigned sm;
        asm volatile("mov.u32 %0, %%smid;\n" : "=r"(sm));
        trace.sms[block] = int(sm);
    }
    TimerMarks marks{trace.marks + std::size_t(slot) * std::size_t(trace.capacity), trace.counts + slot,
                     trace.capacity, threadIdx.x % 128 < 32};
    flashBlock<Tile, E, Causal>(tmQ, tmK, tmV, prm, smem, marks);
#else
    __trap();
#endif
}

} // namespace flashviz::cuda::sm90
