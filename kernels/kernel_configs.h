#pragma once
// The launch configurations of FlashViz's CUDA kernels as plain data, free of CUDA and Eigen: one
// table per kernel family, which its launcher instantiates row by row (kernels/cuda/sm80/tc_launch.cu,
// tc_backward_launch.cu, kernels/cuda/sm90/hopper_launch.cu, hopper_backward_launch.cu and
// kernels/cuda/fp32/flash_launch.cu build variant i from row i, so a variant's id is its row's
// index; the fp16 / bf16 lists put the Hopper rows after the mma.sync ones, at
// kTensorCoreConfigCount + row and kTensorCoreBackwardConfigCount + row), and one selection policy
// for every table (chooseConfig). The window's warp and grid pictures (kernel_shapes.h) read the
// mma.sync table in builds without CUDA too, so that they draw the FlashAttention-2 kernel the GPU
// runs (on Hopper the backend's defaults are the wgmma kernels, which they do not draw yet).
#include <cstddef>
#include <string>

namespace flashviz::kernels {

// One variant of the fp16 / bf16 tensor-core kernel (kernels/cuda/sm80/tc_flash.cuh, TcTile): each
// warp owns rowsPerWarp() query rows of the tile (FlashAttention-2's split) and walks every key.
struct TensorCoreConfig {
    int headDim;
    int warps;
    int rowTilesPerWarp; // 16-row mma tiles per warp
    int blockCols;       // Bc: keys per tile
    bool qInRegisters;   // Q's fragments kept in registers, or re-read from shared memory
    int minBlocksPerSm;  // __launch_bounds__' promise
    bool skipRescale;    // skip O's rescale when no row maximum of the warp changed
    constexpr int threads() const { return warps * 32; }
    constexpr int rowsPerWarp() const { return 16 * rowTilesPerWarp; }
    constexpr int blockRows() const { return warps * rowsPerWarp(); }
    // Q, two K and two V buffers (double buffering) of 2-byte elements, and 256 bytes of slack to
    // align the start.
    constexpr std::size_t sharedBytes() const {
        return std::size_t(blockRows()) * headDim * 2 + 4 * std::size_t(blockCols) * headDim * 2 + 256;
    }
};

// In order of preference per d (the default: chooseTensorCoreConfig, below); the id of a
// variant is its index. H200 figures: kernels/bench/TC_NOTES.md.
inline constexpr TensorCoreConfig kTensorCoreConfigs[] = {
    {64, 4, 2, 64, true, 2, false},   // BR 128, 48 KiB
    {64, 4, 1, 128, true, 2, false},  // BR 64, 72 KiB
    {128, 4, 2, 64, false, 2, true},  // BR 128, 96 KiB
    {128, 8, 2, 64, false, 1, false}, // BR 256, 128 KiB
    {128, 4, 2, 32, false, 2, false}, // BR 128, 64 KiB
};
inline constexpr int kTensorCoreConfigCount = int(sizeof(kTensorCoreConfigs) / sizeof(kTensorCoreConfigs[0]));

// "tc_d128_br128_bc64_w4_qsmem_skip": d, query rows and keys per tile, warps, where Q lives, and
// whether unchanged rescales are skipped.
inline std::string tensorCoreConfigName(const TensorCoreConfig& c) {
    return "tc_d" + std::to_string(c.headDim) + "_br" + std::to_string(c.blockRows()) + "_bc" +
           std::to_string(c.blockCols) + "_w" + std::to_string(c.warps) +
           (c.qInRegisters ? "_qreg" : "_qsmem") + (c.skipRescale ? "_skip" : "");
}

// ---- the Hopper fp16 / bf16 kernel (sm_90a) ----
// One variant of kernels/cuda/sm90/hopper_flash.cuh (HopperTile): a producer warpgroup streams K
// and V with the copy engine (TMA) through `stages` shared-memory buffers while `consumers`
// warpgroups of 64 query rows each multiply with wgmma; `overlap` issues S_{j+1} = Q K_{j+1}
// beside O += P_j V_j and runs the softmax under the latter; `pingPong` makes two consumers take
// turns at the tensor cores (FlashAttention-3's schedules). One block per SM. `masks`: the
// problems a row is preferred for, where the schedules measured differently with and without
// the causal mask.
enum class MaskPreference { Any, Full, Causal };
// Whether a row for these masks is chosen for a run with (causal) or without the mask.
constexpr bool prefers(MaskPreference masks, bool causal) {
    return masks == MaskPreference::Any || masks == (causal ? MaskPreference::Causal : MaskPreference::Full);
}
struct HopperConfig {
    MaskPreference masks;
    int headDim;
    int blockCols; // Bc: keys per tile
    int consumers;
    int stages;
    bool overlap;
    bool pingPong;
    static constexpr int minBlocksPerSm = 1;
    static constexpr int kRegistersPerSm = 65536; // a Hopper SM's register file
    static constexpr std::size_t kBarrierBytes = 8;      // one mbarrier
    static constexpr std::size_t kAlignmentBytes = 1024; // slack to align the start to the swizzle
    constexpr int threads() const { return 128 * (consumers + 1); }
    constexpr int barriers() const { return 1 + 4 * stages; } // Q; K and V full, K and V free per stage
    constexpr int blockRows() const { return 64 * consumers; }
    // Registers per thread after setmaxnreg, as HopperTile sets them (kProducerRegisters,
    // kConsumerRegisters): the producer keeps few, the consumers take the rest of the SM's 64 K.
    constexpr int producerRegisters() const { return 24; }
    constexpr int consumerRegisters() const { return consumers == 2 ? 240 : 160; }
    // Q, `stages` K and V buffers of 2-byte elements, the mbarriers and the alignment slack.
    constexpr std::size_t sharedBytes() const {
        return std::size_t(blockRows()) * headDim * 2 +
               2 * std::size_t(stages) * std::size_t(blockCols) * headDim * 2 +
               kBarrierBytes * std::size_t(barriers()) + kAlignmentBytes;
    }
};

// In order of preference per d, as measured on an H100 SXM (kernels/bench/HOPPER_NOTES.md); the
// id of a variant is kTensorCoreConfigCount + its index (kernels/cuda/sm80/tc_launch.h).
// At d = 64 three consumers lead without the mask (522-543 TFLOP/s at n >= 8192 against 429-469
// for two in ping-pong), two in ping-pong with it (469-496 against 456-497, and 423-426 against
// 392-394 at n = 4096): HOPPER_NOTES.md, v5. At d = 128 ping-pong and plain overlap trade places
// from run to run by more than their gap; ping-pong stays first.
inline constexpr HopperConfig kHopperConfigs[] = {
    {MaskPreference::Full, 64, 128, 3, 2, true, false},   // BR 192,  89 KiB
    {MaskPreference::Causal, 64, 128, 2, 4, true, true},  // BR 128, 145 KiB
    {MaskPreference::Any, 64, 128, 3, 3, true, false},    // BR 192, 121 KiB
    {MaskPreference::Any, 64, 64, 3, 4, true, false},     // BR 192,  89 KiB: finer key tiles
    {MaskPreference::Any, 128, 128, 2, 2, true, true},    // BR 128, 161 KiB
    {MaskPreference::Any, 128, 128, 2, 2, true, false},   // BR 128, 161 KiB
    {MaskPreference::Any, 128, 128, 2, 2, false, false},  // BR 128, 161 KiB: S, softmax, P V in turn
};
inline constexpr int kHopperConfigCount = int(sizeof(kHopperConfigs) / sizeof(kHopperConfigs[0]));

// "wgmma_d128_br128_bc128_wg2_s2_overlap_pingpong": d, query rows and keys per tile, consumer
// warpgroups, buffers, and the schedule.
inline std::string hopperConfigName(const HopperConfig& c) {
    return "wgmma_d" + std::to_string(c.headDim) + "_br" + std::to_string(c.blockRows()) + "_bc" +
           std::to_string(c.blockCols) + "_wg" + std::to_string(c.consumers) + "_s" +
           std::to_string(c.stages) + (c.overlap ? "_overlap" : "") + (c.pingPong ? "_pingpong" : "");
}

// ---- the fp16 / bf16 backward (kernels/cuda/sm80/tc_backward.cuh, BackwardTile) ----
// FlashAttention-2's backward on mma.sync: a block owns 16 x warps keys of one (batch, head) and
// walks the query blocks of as many rows. Each warp keeps dK and dV of its 16 keys in registers;
// dQ, a sum over key blocks, goes to an fp32 buffer by atomic adds.
struct TensorCoreBackwardConfig {
    MaskPreference masks; // the masks it is chosen for (chooseTensorCoreBackwardConfig)
    int headDim;
    int warps;
    int rows;           // Br: query rows per step, a multiple of 64 dividing 16 x warps
    int minBlocksPerSm; // __launch_bounds__' promise
    // Whether a warp walks the step's query rows 16 at a time (S^T, P^T, dV, dP^T, dS^T, dK for
    // each group in turn: no whole-step P^T and dS^T in registers), and whether it then keeps the
    // A fragments of its 16 keys of K and V in registers instead of reading them again per group.
    bool streamed;
    bool kvInRegisters;
    constexpr int threads() const { return warps * 32; }
    constexpr int blockCols() const { return 16 * warps; }
    constexpr int blockRows() const { return rows; }
    // K and V (Bc x d), Q and dO double-buffered (2 x 2 x Br x d), dS^T (Bc x Br), all 2-byte
    // elements; each query row's LSE and D double-buffered (2 x 2 x Br fp32); 1024 bytes of slack
    // to align the start.
    constexpr std::size_t sharedBytes() const {
        const std::size_t br = std::size_t(blockRows()), bc = std::size_t(blockCols()),
                          d = std::size_t(headDim);
        return (2 * bc * d + 4 * br * d + bc * br) * 2 + 4 * br * 4 + 1024;
    }
};

// In order of preference per d and mask (chooseTensorCoreBackwardConfig); the id of a variant is
// its index. H100 figures: kernels/bench/BACKWARD_NOTES.md. The streamed rows with K and V in
// registers lead without the mask (v4: +13-14 % at d = 64, +6-8 % at d = 128) and, walked without
// a branch off the diagonal (v5), at d = 64 under it too (+5-6 %); at d = 128 under the mask they
// tie with v3's row, which stays: 128 keys a block lead there by 4-30 % (fewer query-block
// steps, Q and dO loads and dQ additions per key).
inline constexpr TensorCoreBackwardConfig kTensorCoreBackwardConfigs[] = {
    {MaskPreference::Any, 64, 8, 128, 1, true, true},    // 128 keys x 128 rows, 130 KiB, streamed
    {MaskPreference::Any, 64, 8, 128, 1, false, false},  // 128 keys x 128 rows, 130 KiB
    {MaskPreference::Any, 64, 8, 64, 1, false, false},   // 128 keys x 64 rows, 81 KiB
    {MaskPreference::Any, 64, 4, 64, 2, false, false},   // 64 keys x 64 rows, 57 KiB
    {MaskPreference::Any, 64, 8, 64, 1, true, true},     // streamed
    {MaskPreference::Any, 64, 8, 64, 2, true, false},    // two blocks an SM at 128 registers
    {MaskPreference::Full, 128, 8, 64, 1, true, true},   // 128 keys x 64 rows, 145 KiB, streamed
    {MaskPreference::Any, 128, 8, 64, 1, false, false},  // 128 keys x 64 rows, 145 KiB
    {MaskPreference::Any, 128, 4, 64, 2, false, false},  // 64 keys x 64 rows, 105 KiB
    {MaskPreference::Any, 128, 8, 64, 1, true, false},   // streamed, K and V read per group
};
inline constexpr int kTensorCoreBackwardConfigCount =
    int(sizeof(kTensorCoreBackwardConfigs) / sizeof(kTensorCoreBackwardConfigs[0]));

// "tc_bwd_d128_bc64_br64_w4_m2", "tc_bwd_d64_bc128_br128_w8_st_kv".
inline std::string tensorCoreBackwardConfigName(const TensorCoreBackwardConfig& c) {
    return "tc_bwd_d" + std::to_string(c.headDim) + "_bc" + std::to_string(c.blockCols()) + "_br" +
           std::to_string(c.blockRows()) + "_w" + std::to_string(c.warps) +
           (c.minBlocksPerSm > 1 ? "_m" + std::to_string(c.minBlocksPerSm) : "") +
           (c.streamed ? "_st" : "") + (c.kvInRegisters ? "_kv" : "");
}

// ---- the Hopper fp16 / bf16 backward (kernels/cuda/sm90/hopper_backward.cuh, sm_90a) ----
// FlashAttention-2's backward on wgmma: a block owns 128 keys of one (batch, head), two consumer
// warpgroups of 64 keys each keep dK and dV in registers, and a producer warpgroup streams the
// query blocks of 64 rows (128 where dQ is split by rows; Q_i, dO_i and their LSE and D) with the
// copy engine through `stages` shared-memory buffers. dQ, a sum over key blocks, goes to the same
// fp32 buffer as the mma.sync backward's, by atomic adds or by tiles. One block per SM.
// How the two consumers share dQ_i = dS K_j (a query block's rows x d):
// - Keys: each adds its own 64 keys' share of every column (twice the atomic adds; the consumers
//   never wait for each other);
// - Columns: each computes d / 2 columns over all 128 keys, reading the other's dS^T, so they meet
//   at a barrier every step (d = 128 only: wgmma's N = 64 products);
// - Turns: one consumer a step, in turn, computes every column over all 128 keys once the other
//   has written its dS^T; the other goes on to its next step meanwhile;
// - Rows: a step takes 128 query rows (FlashAttention-3's tile at d = 64: products of N = 128 for
//   S^T and dP^T, half the steps), and each consumer computes dQ for 64 of them over all 128 keys,
//   reading the other's dS^T, so they meet every step (as by columns; dQ by tiles only).
enum class DqSplit { Keys, Columns, Turns, Rows };

struct HopperBackwardConfig {
    MaskPreference masks;
    int headDim;
    int stages;
    DqSplit dqSplit;
    // dQ_i added as one tile (turns only): the consumer computing it stores it to its own
    // shared-memory tile in the order its registers hold it and adds the tile with one bulk
    // reduction (cp.reduce.async.bulk) to a scratch laid out in that order, which the post-pass
    // reads back in rows; else every value by its own red.add.
    bool dqTiles = false;
    static constexpr int consumers = 2;
    static constexpr int minBlocksPerSm = 1;
    constexpr int threads() const { return 128 * (consumers + 1); }
    constexpr int blockCols() const { return 64 * consumers; }
    constexpr int blockRows() const { return dqSplit == DqSplit::Rows ? 128 : 64; }
    constexpr int barriers() const { return 1 + 2 * stages; } // K and V; a step's full and free
    // Registers per thread after setmaxnreg (as HopperConfig's with two consumers).
    constexpr int producerRegisters() const { return 24; }
    constexpr int consumerRegisters() const { return 240; }
    // A consumer's dQ tile: the 64 rows of one warpgroup's product, fp32.
    constexpr std::size_t dqTileBytes() const { return std::size_t(64) * std::size_t(headDim) * 4; }
    // K and V (Bc x d), `stages` Q and dO buffers (Br x d), dS^T twice (Bc x Br), all 2-byte
    // elements; `stages` LSE and D rows (Br fp32 each); the mbarriers and the alignment slack.
    // `consumers` dQ tiles where dQ is added by tiles.
    constexpr std::size_t sharedBytes() const {
        const std::size_t br = std::size_t(blockRows()), bc = std::size_t(blockCols()),
                          d = std::size_t(headDim), s = std::size_t(stages);
        return (2 * bc * d + 2 * s * br * d + 2 * bc * br) * 2 + 2 * s * br * 4 +
               (dqTiles ? std::size_t(consumers) * dqTileBytes() : 0) +
               HopperConfig::kBarrierBytes * std::size_t(barriers()) + HopperConfig::kAlignmentBytes;
    }
};

// In order of preference per d and mask; the id of a variant is kTensorCoreBackwardConfigCount +
// its index (kernels/cuda/sm80/tc_backward_launch.h). On an H100 (kernels/bench/BACKWARD_NOTES.md):
// v7, split by columns, d = 128 ran 1.4-1.5x the mma.sync backward with and without the mask; by
// keys, its doubled atomic adds cost a third of that, and d = 64 (by keys) was only level with the
// mma.sync backward. v8, dQ in turns (half the adds of by keys, no barrier for the consumer not
// computing dQ) led at both d under both masks: 1.38-1.42x the best mma.sync row at d = 64 under
// the mask, and 1-10 % past the split by columns at d = 128. v9, dQ added by tiles on top of the
// turns: 1.10-1.13x the turns at d = 64 and 1.20-1.26x at d = 128, level with cuDNN (0.97-1.11x).
// v10, 128 query rows a step at d = 64 with dQ split by rows: 1.08-1.12x v9's row without the mask
// and 1.00-1.11x with it (a third stage for v9's row gave nothing: 0.96-1.07x).
inline constexpr HopperBackwardConfig kHopperBackwardConfigs[] = {
    {MaskPreference::Any, 64, 2, DqSplit::Rows, true},   // 128 keys x 128 rows, 195 KiB
    {MaskPreference::Any, 64, 2, DqSplit::Turns, true},  // 130 KiB: dQ by tiles
    {MaskPreference::Any, 64, 2, DqSplit::Turns},     // 128 keys x 64 rows,  98 KiB
    {MaskPreference::Full, 64, 2, DqSplit::Keys},     //  98 KiB (behind mma.sync under the mask)
    {MaskPreference::Full, 64, 3, DqSplit::Keys},     // 115 KiB
    {MaskPreference::Any, 128, 2, DqSplit::Turns, true},  // 226 KiB: dQ by tiles
    {MaskPreference::Any, 128, 2, DqSplit::Turns},    // 162 KiB
    {MaskPreference::Any, 128, 2, DqSplit::Columns},  // 162 KiB
    {MaskPreference::Any, 128, 3, DqSplit::Columns},  // 195 KiB
    {MaskPreference::Any, 128, 2, DqSplit::Keys},     // 162 KiB
};
inline constexpr int kHopperBackwardConfigCount =
    int(sizeof(kHopperBackwardConfigs) / sizeof(kHopperBackwardConfigs[0]));

// "wgmma_bwd_d128_bc128_br64_wg2_s2": d, keys and query rows per block, consumer warpgroups,
// buffers, and how dQ is shared ("_dqkeys", "_dqturns", "_dqrows") except for the split v7 built first for d
// (by columns at d = 128, by keys at d = 64), whose names BACKWARD_NOTES.md's logs use.
inline std::string hopperBackwardConfigName(const HopperBackwardConfig& c) {
    const DqSplit first = c.headDim == 128 ? DqSplit::Columns : DqSplit::Keys;
    const char* split = c.dqSplit == first               ? ""
                        : c.dqSplit == DqSplit::Keys    ? "_dqkeys"
                        : c.dqSplit == DqSplit::Columns ? "_dqcolumns"
                        : c.dqSplit == DqSplit::Turns   ? "_dqturns"
                                                        : "_dqrows";
    return "wgmma_bwd_d" + std::to_string(c.headDim) + "_bc" + std::to_string(c.blockCols()) + "_br" +
           std::to_string(c.blockRows()) + "_wg" + std::to_string(c.consumers) + "_s" + std::to_string(c.stages) +
           split + (c.dqTiles ? "_tiles" : "");
}

// ---- the fast fp32 kernels ----
// How a variant multiplies: fp32 FMAs on the CUDA cores (kernels/cuda/fp32/flash_fast.cuh,
// FastTile), or tensor cores with every fp32 operand split into two TF32 parts and three products
// (flash_tf32x3.cuh, tf32x3::Tile).
enum class FastArithmetic { Fp32, Tf32x3 };

// One variant of the fast fp32 kernel. In both arithmetics each warp owns 16 query rows of the
// tile: the FMA kernel's two 8-row groups, 3xTF32's one m16 tile.
struct FastConfig {
    FastArithmetic arithmetic;
    int headDim;
    int warps;
    int blockCols;      // Bc: keys per tile
    int minBlocksPerSm; // __launch_bounds__' promise
    // fp32 FMA only (3xTF32 rows hold false, 0, 0): Q, K and P rows swizzled rather than padded,
    // and the 4-wide steps of the Q K^T and P V loops unrolled.
    bool swizzle;
    int unrollS;
    int unrollPV;
    constexpr int threads() const { return warps * 32; }
    constexpr int blockRows() const { return 16 * warps; }
    // fp32 FMA: Q, K, V and P once (rows of Q and K d + 4 floats apart and of P Bc + 16 when
    // padded); 3xTF32: Q, and K and V double-buffered, rows d + 16 (Q, K) and d + 4 (V) apart.
    constexpr std::size_t sharedBytes() const {
        const std::size_t br = std::size_t(blockRows()), bc = std::size_t(blockCols),
                          d = std::size_t(headDim);
        if (arithmetic == FastArithmetic::Tf32x3)
            return (br * (d + 16) + 2 * (bc * (d + 16) + bc * (d + 4))) * 4;
        const std::size_t qk = swizzle ? d : d + 4, p = swizzle ? bc : bc + 16;
        return (br * qk + bc * qk + bc * d + br * p) * 4;
    }
};

// A 3xTF32 row, and an fp32 FMA row (as FastTile's template: d, Br, Bc, blocks, swizzle, unrolls).
constexpr FastConfig tf32x3Config(int headDim, int warps, int blockCols, int minBlocksPerSm) {
    return {FastArithmetic::Tf32x3, headDim, warps, blockCols, minBlocksPerSm, false, 0, 0};
}
constexpr FastConfig fmaConfig(int headDim, int blockRows, int blockCols, int minBlocksPerSm,
                               bool swizzle, int unrollS, int unrollPV) {
    return {FastArithmetic::Fp32, headDim, blockRows / 16, blockCols, minBlocksPerSm, swizzle,
            unrollS, unrollPV};
}

// In order of preference per d, as measured on an H200 (kernels/bench/NOTES.md); the id of a
// variant is its index. 3xTF32 first: tensor cores with fp32's accuracy, 1.38-1.45x the FMA
// kernels on the H200 (NOTES.md, v7), where the GPU's tensor cores outrun its FMAs
// (chooseFastConfig's flag). The A100 allows 163 KiB per block, so there d = 128 takes the
// 141 KiB 3xTF32 variant; GPUs with about 100 KiB (sm_86, sm_89) have d = 64 variants and run
// d = 128 on the mirror kernel.
inline constexpr FastConfig kFastConfigs[] = {
    tf32x3Config(64, 8, 64, 1),                // 0: 114 KiB, 57.4-59.9 TFLOP/s
    tf32x3Config(64, 4, 64, 2),                // 1:  94 KiB, 57.0-59.9
    fmaConfig(64, 64, 128, 2, true, 8, 4),     // 2: 112 KiB, 40.0-41.3 (fp32 FMA)
    tf32x3Config(64, 4, 32, 3),                // 3:  57 KiB, 56.3-59.8
    fmaConfig(64, 64, 64, 3, true, 4, 2),      // 4:  64 KiB, 37.8-38.6 (fp32 FMA)
    tf32x3Config(128, 8, 64, 1),               // 5: 210 KiB, 58.0-61.2
    tf32x3Config(128, 8, 32, 1),               // 6: 141 KiB, 54.0-58.0
    // Q K^T unrolled over all of d = 128: nvcc then starts each step's loads during the
    // previous step's FFMAs, with no loop boundary in between (NOTES.md, v6).
    fmaConfig(128, 128, 64, 1, false, 32, 4),  // 7: 171 KiB, 42.6-43.6 (fp32 FMA)
    fmaConfig(128, 64, 64, 2, true, 8, 4),     // 8: 112 KiB, 41.1-41.9 (fp32 FMA)
};
inline constexpr int kFastConfigCount = int(sizeof(kFastConfigs) / sizeof(kFastConfigs[0]));

// "tf32x3_d128_br128_bc64_m1" (d, query rows and keys per tile, blocks per SM), or for fp32 FMA
// "d128_br128_bc64_m1_pad_u32x4" (and padded or swizzled, the unrolls).
inline std::string fastConfigName(const FastConfig& c) {
    const std::string tile = "d" + std::to_string(c.headDim) + "_br" + std::to_string(c.blockRows()) +
                             "_bc" + std::to_string(c.blockCols) + "_m" +
                             std::to_string(c.minBlocksPerSm);
    if (c.arithmetic == FastArithmetic::Tf32x3) return "tf32x3_" + tile;
    return tile + (c.swizzle ? "_sw" : "_pad") + "_u" + std::to_string(c.unrollS) + "x" +
           std::to_string(c.unrollPV);
}

// ---- the selection policy, for every family ----
// The index of the row of `table` for d on a GPU with these shared-memory limits, among the rows
// the GPU runs well (`runsWell(row)`): the first in order of preference that fits a block and as
// many blocks per SM as it is built for (on an A100 the H200's tensor-core d = 128 default would
// run one block per SM where it was built for two), else the first that fits a block at all;
// -1 when none does.
template <class Config, std::size_t N, class RunsWell>
constexpr int chooseConfig(const Config (&table)[N], int headDim, std::size_t perBlock,
                           std::size_t perSm, std::size_t reservedPerBlock, RunsWell runsWell) {
    int fitsABlock = -1;
    for (int i = 0; i < int(N); ++i) {
        const Config& c = table[i];
        if (c.headDim != headDim || !runsWell(c) || c.sharedBytes() > perBlock) continue;
        if ((c.sharedBytes() + reservedPerBlock) * std::size_t(c.minBlocksPerSm) <= perSm) return i;
        if (fitsABlock < 0) fitsABlock = i;
    }
    return fitsABlock;
}

// The tensor-core variant for d: every row runs well where it fits.
constexpr int chooseTensorCoreConfig(int headDim, std::size_t perBlock, std::size_t perSm,
                                     std::size_t reservedPerBlock) {
    return chooseConfig(kTensorCoreConfigs, headDim, perBlock, perSm, reservedPerBlock,
                        [](const TensorCoreConfig&) { return true; });
}

// The backward variant for d, with or without the causal mask.
constexpr int chooseTensorCoreBackwardConfig(int headDim, bool causal, std::size_t perBlock,
                                             std::size_t perSm, std::size_t reservedPerBlock) {
    return chooseConfig(kTensorCoreBackwardConfigs, headDim, perBlock, perSm, reservedPerBlock,
                        [causal](const TensorCoreBackwardConfig& c) { return prefers(c.masks, causal); });
}

// Whether a GPU of this compute capability runs sm_90a code (the Hopper rows): 9.0 exactly.
constexpr bool runsSm90a(int major, int minor) { return major == 9 && minor == 0; }

// The Hopper backward variant likewise (on a GPU that runs sm_90a code: the caller's to know).
constexpr int chooseHopperBackwardConfig(int headDim, bool causal, std::size_t perBlock, std::size_t perSm,
                                         std::size_t reservedPerBlock) {
    return chooseConfig(kHopperBackwardConfigs, headDim, perBlock, perSm, reservedPerBlock,
                        [causal](const HopperBackwardConfig& c) { return prefers(c.masks, causal); });
}

// The Hopper variant for d, with or without the causal mask (on a GPU that runs sm_90a code:
// the caller's to know).
constexpr int chooseHopperConfig(int headDim, bool causal, std::size_t perBlock, std::size_t perSm,
                                 std::size_t reservedPerBlock) {
    return chooseConfig(kHopperConfigs, headDim, perBlock, perSm, reservedPerBlock,
                        [causal](const HopperConfig& c) { return prefers(c.masks, causal); });
}

// The fast fp32 variant for d: 3xTF32 rows only where `tf32x3OutrunsFma` (the tensor cores' TF32
// rate several times the FMA rate: sm_80 and sm_90; on sm_86 / sm_89 the FMA kernel).
constexpr int chooseFastConfig(int headDim, std::size_t perBlock, std::size_t perSm,
                               std::size_t reservedPerBlock, bool tf32x3OutrunsFma) {
    return chooseConfig(kFastConfigs, headDim, perBlock, perSm, reservedPerBlock,
                        [tf32x3OutrunsFma](const FastConfig& c) {
                            return tf32x3OutrunsFma || c.arithmetic != FastArithmetic::Tf32x3;
                        });
}

// The mirror kernel (kernels/cuda/mirror/flash_mirror.cuh): any Br, Bc and d, one thread block per query
// block, its threads striding over the tile's elements (no warp owns rows), every tile in
// shared memory: Q and O's accumulator (Br x d each), K and V (Bc x d each), the Br x Bc scores
// and m, l and the correction per row, all fp32.
inline constexpr int kMirrorThreads = 256;
constexpr std::size_t mirrorSharedFloats(int blockRows, int blockCols, int headDim) {
    const std::size_t br = std::size_t(blockRows), bc = std::size_t(blockCols),
                      d = std::size_t(headDim);
    return 2 * br * d + 2 * bc * d + br * bc + 3 * br;
}

} // namespace flashviz::kernels
