#pragma once
// What FlashAttention-2 (Dao 2023) changed from FlashAttention-1 (Dao et al. 2022), computed so
// that every face shows the same numbers:
//  1. the tile's arithmetic: -1, as its paper writes it, keeps O normalised and rescales it by
//     diag(l_new)^-1 diag(l_old) e^(m_old - m_new) at every key block; -2 keeps the accumulator
//     unnormalised and divides by l once, at the end, storing one log-sum-exp per row;
//  2. one tile split across a thread block's warps: by keys ("split-K", -1; partial results meet
//     in shared memory) or by query rows (-2; each warp owns its rows, nothing is exchanged);
//  3. the grid: one thread block per (batch, head) for -1, one per query block as well for -2.
// Both versions run in core/flash.cpp (flashForward with a FlashVersion), checked against
// ordinary attention; the counts here are their closed forms (tst_flash_versions holds the pass's
// own tallies equal to them).
#include "core/check.h"
#include "core/counters.h"
#include "core/hardware.h"
#include "core/tile_update.h"
#include "core/tiling.h"

#include <cstdint>
#include <string>
#include <vector>

namespace flashviz {

struct FlashOptions;

enum class FlashVersion { One, Two };
const char* toString(FlashVersion version); // "FlashAttention-1", "FlashAttention-2"

// The non-matmul operations (NonMatmulFlops, core/tile_update.h, counted by the updates as they
// run) in closed form. One (query block, key block) update at `place` with head dimension d:
// every entry of the tile is scaled, compared and summed; a row whose keys in this tile are all
// masked skips its exponentials, and a row that has seen no key at all (causal with n_q > n_k)
// keeps l = 0 and O = 0.
NonMatmulFlops tileNonMatmul(FlashVersion version, const TilePlace& place, int headDim);
// A rows x keys tile that every row sees in full (no mask).
NonMatmulFlops tileNonMatmul(FlashVersion version, int rows, int keys, int headDim);
// What a query block does once its last key block is in: -2 divides by l (rows that saw a key)
// and forms L = m + log l; -1 has nothing left to do.
NonMatmulFlops finishNonMatmul(FlashVersion version, const TilePlace& rows, int headDim);
// The whole forward pass in closed form (both loop orders visit the same tiles).
NonMatmulFlops nonMatmulCounts(FlashVersion version, int queries, int keys, int headDim,
                               bool causal, const FlashOptions& options);
// The matmul FLOPs of one tile: S = Q K^T and P V, 2 per multiply-add.
std::uint64_t tileMatmulFlops(int rows, int keys, int headDim);

// The time the arithmetic takes at the GPU's peak rates: matmuls on the fp16/bf16 tensor cores,
// everything else on the fp32 CUDA cores (one FLOP each; an exp on the special-function unit is
// slower still, so the non-matmul time is a lower bound).
struct ArithmeticTime {
    double matmulSeconds = 0;
    double nonMatmulSeconds = 0;
    double rateRatio = 0; // tensor-core rate / fp32 rate (A100: 312 / 19.5 = 16)
    // The non-matmul arithmetic's time as a share of the matmuls' time.
    double nonMatmulPerMatmul() const { return matmulSeconds > 0 ? nonMatmulSeconds / matmulSeconds : 0; }
};
ArithmeticTime arithmeticTime(std::uint64_t matmulFlops, const NonMatmulFlops& nonMatmul,
                              const HardwareProfile& hardware);

// Both versions run on one problem (the bug switches cleared: they are -2's), each checked
// against ordinary attention, with what each pass counted.
struct VersionRun {
    FlashVersion version = FlashVersion::Two;
    CheckReport check;
    std::uint64_t matmulFlops = 0;
    NonMatmulFlops nonMatmul;
};
struct VersionComparison {
    VersionRun one, two;
    double maxDifference = 0; // max |O_1 - O_2| over finite entries (inf if either has a non-finite)
};
// `reference` is ordinary attention on the problem (referenceAttention).
VersionComparison compareVersions(const Problem& problem, const FlashOptions& options,
                                  const Matrix& reference);

// ---- 2. one tile across the warps of a thread block ----

// The part of the tile one warp computes: score and weight entries (rows x keys); with split-K
// it also holds a partial accumulator for every row of the tile, with split-Q its rows' final one.
struct WarpShare {
    Range rows;
    Range keys;
};

// What splitting one rows x keys tile across `warps` warps costs in shared memory, per tile.
// Split-K (FlashAttention-1): each warp multiplies every query row by its slice of keys, so the
// row maxima, the row sums and the rows x d partial accumulators must be exchanged through shared
// memory, each behind a barrier (and one more before the buffer is reused). Split-Q
// (FlashAttention-2): a warp owns whole rows, so maxima and sums stay in its registers (warp
// shuffles) and nothing is exchanged.
struct WarpSplit {
    FlashVersion version = FlashVersion::Two;
    int warps = 0;
    int activeWarps = 0;                 // warps with a non-empty share
    std::vector<WarpShare> shares;       // one per warp; an idle warp has empty ranges
    std::uint64_t exchangeWriteBytes = 0; // partial maxima, sums and accumulators written (fp32)
    std::uint64_t exchangeReadBytes = 0;  // ...and read back
    int exchangeBarriers = 0;             // __syncthreads() for the exchange, per tile
    std::uint64_t operandReadBytes = 0;   // Q_i, K_j, V_j read from shared memory by all warps
    std::uint64_t exchangeBytes() const { return exchangeWriteBytes + exchangeReadBytes; }
};
// elementBytes: Q, K, V's element size (2 for fp16 / bf16, 4 for fp32). Throws EngineError for
// sizes below 1.
WarpSplit warpSplit(FlashVersion version, int rows, int keys, int headDim, int warps,
                    int elementBytes);

// ---- 3. the grid against the GPU's SMs ----

// A kernel's launch configuration, as the grid picture needs it (FlashViz's own kernels fill it
// from their variant tables: kernels/kernel_configs.h).
struct KernelShape {
    std::string name;
    int headDim = 0;
    int blockRows = 0;    // Br: query rows per thread block and tile
    int blockCols = 0;    // Bc
    int threads = 0;      // per thread block
    int rowsPerWarp = 0;  // 0 where warps do not own rows (the mirror kernel)
    int builtForBlocksPerSm = 0; // __launch_bounds__' minimum blocks per SM; 0: none given
    std::uint64_t sharedBytes = 0;
    int elementBytes = 2;         // of Q, K, V in shared memory: 2 (fp16 / bf16), 4 (fp32)
    int warps() const { return threads / 32; }
};

// How many thread blocks of `kernel` one SM holds at once, and what limits it.
struct Occupancy {
    int blocksPerSm = 0;
    int byThreads = 0, bySharedMemory = 0, byBlockLimit = 0;
    int byRegisters = 0; // the launch bounds' promise (0: not known, not a limit)
    std::string limitedBy; // "shared memory", "threads", "registers", "blocks per SM"
};
// Throws EngineError(Unsupported) when one block of `kernel` does not fit an SM at all.
Occupancy occupancy(const KernelShape& kernel, const HardwareProfile& hardware);

struct GridPicture {
    FlashVersion version = FlashVersion::Two;
    std::uint64_t blocks = 0;            // thread blocks launched
    int queryBlocksPerThreadBlock = 0;   // -1: every query block of its head; -2: one
    Occupancy occupancy;
    int sms = 0;
    std::uint64_t residentBlocks = 0;    // sms x blocksPerSm: blocks resident at once
    std::uint64_t waves = 0;             // ceil(blocks / residentBlocks)
    std::uint64_t tailBlocks = 0;        // blocks in the last wave (== residentBlocks when it is full)
    int busySms = 0;                     // SMs with work in the first wave
    // Time in units of one query block's work on one slot: waves x query blocks per block. The
    // model's assumptions: every query block costs the same (not so under a causal mask, where
    // the last ones see the most keys), and a block runs no faster alone on its SM than beside
    // the others it could share the SM with.
    std::uint64_t timeUnits() const { return waves * std::uint64_t(queryBlocksPerThreadBlock); }
    double slotUse() const; // blocks / (waves x residentBlocks): the share of slots with work
};
GridPicture gridPicture(FlashVersion version, int batch, int heads, int queries,
                        const KernelShape& kernel, const HardwareProfile& hardware);

// ---- all three for one problem on one GPU: what the window's page and `flashviz-cli versions`
// show (defaults here, read by both) ----

inline constexpr int kDefaultGridBatch = 1;
inline constexpr int kDefaultGridHeads = 16;
// The warps sharing a tile: 0 takes the kernel's own where its warps own rows (FlashViz's
// tensor-core variants: 4 or 8), else kFallbackWarps.
inline constexpr int kKernelWarps = 0;
inline constexpr int kFallbackWarps = 4;
inline constexpr int kMaxWarps = 32;      // 1024 threads, CUDA's limit per block
inline constexpr int kMaxGridCount = 65535; // batch and heads, as the kernels take them
int resolveWarps(int requested, const KernelShape& kernel);

struct VersionsRequest {
    int queries = 0, keys = 0, headDim = 0;
    bool causal = false;
    int blockRows = 0, blockCols = 0; // the pass's tiles (the user's Br, Bc)
    Range tileRows, tileKeys;         // the tile counted and split; empty: the first one
    KernelShape kernel;               // what the grid picture launches
    int warps = kKernelWarps;         // the warp picture's
    int batch = kDefaultGridBatch, heads = kDefaultGridHeads;
};

struct VersionsReport {
    std::uint64_t matmulFlops = 0; // the same for both
    NonMatmulFlops one, two;
    ArithmeticTime timeOne, timeTwo;
    // The tile: its place, its counts and time, and its split across `warps` warps.
    TilePlace tile;
    int warps = 0;
    NonMatmulFlops tileOne, tileTwo;
    std::uint64_t tileMatmul = 0;
    WarpSplit splitOne, splitTwo;
    // The grid, unless the kernel does not fit the GPU: then `gridError` says why and both are empty.
    GridPicture gridOne, gridTwo;
    std::string gridError;
    double nonMatmulRatio() const { return two.total() ? double(one.total()) / double(two.total()) : 0; }
    // How many times sooner -2's grid finishes, in the grid picture's time units.
    double gridSpeedup() const {
        return gridTwo.timeUnits() ? double(gridOne.timeUnits()) / double(gridTwo.timeUnits()) : 0;
    }
    double restFlopShareTwo() const; // -2's non-matmul operations among all it does
};
// Throws EngineError for sizes below 1, warps out of range or a tile outside the problem.
VersionsReport versionsReport(const VersionsRequest& request, const HardwareProfile& hardware);

} // namespace flashviz
