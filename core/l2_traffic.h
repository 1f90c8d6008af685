#pragma once
// Memory traffic through a GPU's three levels: the SMs' shared memory, the L2 cache and DRAM
// (HBM). The counting model (core/counters.h) has two levels and calls everything a kernel moves
// "HBM traffic"; on a GPU that traffic goes to L2, and DRAM sees only what L2 misses. This is
// the L2-aware model of one launch of FlashViz's GPU kernels, what kernels/bench/ncu_traffic.py
// measures them against.
//
// Its assumptions (each also in TrafficEstimate::assumptions, for the app to show):
// - Every launch starts with an empty L2 (Nsight Compute flushes it before each kernel it
//   measures; in a real run the previous kernel's data may still be there).
// - Flash (one kernel, query blocks of a head next to each other in the grid, as FlashViz's
//   kernels launch them): the SMs read Q once, K and V once per query block and write O once, as
//   the counting model counts. DRAM sees Q once and O once; each head's K and V come from DRAM
//   once when the head's query blocks run at the same time (they walk through K and V in step, so
//   one block's miss is the others' hit) or when the head's K and V fit in the usable L2;
//   otherwise once per wave of the head's blocks.
// - Half the L2 is usable for one working set: the A100's and H100's L2 is two partitions, and a
//   line read by SMs on both sides is held in both.
// - DRAM writes are the output; the lines still dirty in L2 when the kernel ends are written
//   back after it, so a counter that stops with the kernel reads up to that much less.
// - Standard attention (FlashViz's three steps, cuBLAS S = Q Kᵀ, a softmax kernel over S in place,
//   cuBLAS O = P V, all fp32): each kernel reads its inputs from DRAM once and writes its output
//   once; S and P stay in L2 between kernels only when they fit in the usable L2 and the L2 is
//   not flushed. Through L2 the GEMMs read each operand once per output tile they meet (square
//   tiles of gemmTile rows, an assumption: cuBLAS chooses its own), and the softmax reads each
//   row twice (maximum and sum, then the normalised write).
#include "core/flash_versions.h"
#include "core/hardware.h"

#include <string>
#include <vector>

namespace flashviz {

enum class TrafficMethod { Flash, Standard };

// One launch: the problem, its element size and the kernel's tiling.
struct TrafficShape {
    TrafficMethod method = TrafficMethod::Flash;
    int queries = 0, keys = 0, headDim = 0;
    int batch = 1, heads = 1;
    double elementBytes = 4; // Q, K, V, O: fp32 4, fp16 and bf16 2 (standard attention: 4)
    bool causal = false;
    int blockRows = 64;          // flash: Br, query rows per thread block
    int blockCols = 64;          // flash: Bc, keys per step
    bool writesRowStatistics = false; // flash: the kernel also writes m and ℓ (FlashViz's fp32 ones)
    int residentBlocks = 0;      // flash: thread blocks the GPU holds at once (0: one per SM)
    int gemmTile = 128;          // standard: the GEMMs' output tile side, assumed
    bool flushedBetweenKernels = true; // standard: each kernel starts with an empty L2
};

struct LevelBytes {
    double read = 0, write = 0;
    double total() const { return read + write; }
};

struct TrafficEstimate {
    LevelBytes counting; // the counting model's "HBM traffic" at this element size
    LevelBytes l2;       // between the SMs and L2
    LevelBytes dram;     // between L2 and DRAM: the L2-aware model
    double usableL2Bytes = 0;
    // Flash: K and V of the heads that run at once; standard: S of all heads.
    double workingSetBytes = 0;
    bool workingSetFits = false;
    double keyValuePasses = 1; // flash: times each head's K and V come from DRAM
    std::vector<std::string> assumptions;
};

// The part of a GPU's L2 one working set can use: half, the two partitions each holding a line
// that SMs on both sides read.
double usableL2Bytes(const HardwareProfile& hardware);

// Throws EngineError(InvalidArgument) for sizes below 1, a profile without L2 figures, or a
// standard launch in another element size than fp32.
TrafficEstimate estimateTraffic(const TrafficShape& shape, const HardwareProfile& hardware);

// A flash launch of `kernel` (its Br, Bc and element size; its resident blocks from its occupancy
// on this GPU, or one per SM when it fits none) over these sizes.
TrafficShape flashLaunchShape(int queries, int keys, int headDim, int batch, int heads, bool causal,
                              const KernelShape& kernel, const HardwareProfile& hardware);
// FlashViz's fp32 three-step standard attention over the same sizes.
TrafficShape standardLaunchShape(int queries, int keys, int headDim, int batch, int heads,
                                 bool causal);

// A measured launch, as kernels/bench/ncu_traffic.py writes it.
struct MeasuredTraffic {
    TrafficShape shape;
    std::string method, variant; // "tc-fp16-tc_d64_br128_bc64_w4_qreg", its kernel's name
    double dramReadBytes = 0, dramWriteBytes = 0, l2Bytes = 0, durationNs = 0;
    // What the L2 counter is made of, where the file has it (negative: not measured): the SMs'
    // requests, transfers between L2's two partitions, and local memory (register spills) as the
    // SMs' L1 sees it.
    double l2FromSmBytes = -1, l2FabricBytes = -1, localBytes = -1;
};

// A file of measurements (kernels/bench/ncu_traffic.py's JSON): which GPU, when, with what, the
// L2 and DRAM read rates measured beside them, and one entry per method and size.
struct MeasuredTrafficFile {
    std::string gpu, date, driver, nvcc, ncu;
    std::string hardwareId; // the profile of that GPU ("h200"), empty when none matches
    double l2ReadBytesPerSecond = 0, dramReadBytesPerSecond = 0, l2SizeBytes = 0;
    std::vector<MeasuredTraffic> points;
};
// Throws EngineError(InvalidArgument) saying what in the file is wrong.
MeasuredTrafficFile parseMeasuredTraffic(const std::string& json);
// The hardware profile of a GPU as nvidia-smi names it ("NVIDIA H200" is "h200"); empty if none.
std::string hardwareIdForGpu(const std::string& gpuName);

// The model against one measurement, as every face reports it: relative errors (model /
// measured − 1) and whether each is within the 10 %.
struct TrafficCheck {
    TrafficEstimate model;
    double dramError = 0;     // DRAM bytes read + written
    double dramReadError = 0, dramWriteError = 0;
    double l2Error = 0;       // the L2 model's bytes through L2
    double countingL2Error = 0; // the counting model's bytes against the L2 counter
    bool dramWithin = false, l2Within = false, countingWithin = false;
    std::string why; // where a figure misses, the reason in one sentence
};
inline constexpr double kTrafficTolerance = 0.10;
TrafficCheck checkTraffic(const MeasuredTraffic& measured, const HardwareProfile& hardware);

} // namespace flashviz
