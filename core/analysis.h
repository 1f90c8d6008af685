#pragma once
// The explainer script's nine demonstrations as data. The CLI prints them as tables, the GUI
// draws them as charts, and the tests hold them to the script's figures: one computation each.
#include "core/counters.h"
#include "core/hardware.h"
#include "core/options.h"
#include "core/problem.h"

#include <string>
#include <vector>

namespace flashviz {

// The script's toy inputs: Q, K ~ N(0, 1)/sqrt(d), V ~ N(0, 1), from our own generator.
Problem gaussianProblem(int n, int headDim, std::uint64_t seed);

// 1. Attention is memory-bound: traffic and FLOPs of standard attention.
struct TrafficRow {
    int n = 0;
    std::uint64_t hbmBytes = 0;
    std::uint64_t flops = 0;
    double bytesPerFlop = 0;
    double squareShare = 0; // fraction of the traffic that is the four n x n trips
};
std::vector<TrafficRow> memoryBoundTable(int headDim, const std::vector<int>& ns);

// 2. Online softmax on one row, with and without the rescale.
struct OnlineSoftmaxDemo {
    Vector scores, reference, online, broken;
    double onlineMaxDiff = 0;
    double brokenMaxDiff = 0;
    double brokenSum = 0;
    int block = 0;
};
// The row the script streams: numpy default_rng(1).normal(0, 3, 32), kept as data so the
// figures match the script's to the last digit.
Vector scriptSoftmaxRow();
OnlineSoftmaxDemo onlineSoftmaxDemo(const Vector& scores, int block);

// 3. Tiled attention equals standard attention, with flat memory.
struct TiledRow {
    int n = 0;
    double maxAbsDiff = 0;
    Counters standard;
    Counters flash;
};
std::vector<TiledRow> tiledComparison(int headDim, const std::vector<int>& ns, int block,
                                      std::uint64_t seed);

// 4. Block size against traffic and the SRAM budget.
struct BlockRow {
    int block = 0;
    Counters flash;
    bool fits = false; // working set <= budget
};
struct BlockSweep {
    int n = 0, headDim = 0;
    std::uint64_t sramBudgetBytes = 0;
    Counters standard;
    std::vector<BlockRow> rows;
};
BlockSweep blockSizeSweep(int n, int headDim, const std::vector<int>& blocks,
                          std::uint64_t sramBudgetBytes);
// The explainer script's budget for demo 4: of an A100 SM's 164 KB, what "a kernel can typically
// use" (96 KB). FlashViz judges tiles against the whole SM (the default GPU's shared memory per
// SM, as the window draws it); demo 4 prints both, so the script's figures stay reproducible.
inline constexpr std::uint64_t kScriptSramBudgetBytes = 96 * 1024;

// 5. The backward pass: recompute instead of store.
struct BackwardRow {
    int n = 0;
    BackwardComparison costs;
    double extraFlopsFraction = 0;
};
std::vector<BackwardRow> backwardTable(int headDim, const std::vector<int>& ns);

// 5, as the engine counts it at the same sizes (n_q = n_k = n): FlashAttention-2's backward
// (flashBackwardCounts, backwardStoredElements), the same backward with P stored (store-p), and
// standard attention's backward, which keeps P and recomputes nothing.
struct CountedBackwardRow {
    int n = 0;
    Counters flash;                        // 5 matmuls per tile: S again, dV, dP, dQ, dK
    Counters storedWeights;                // P read back instead of S and P recomputed: 4 matmuls
    std::uint64_t flashStoredElements = 0; // Q, K, V, O and L
    std::uint64_t storedWeightsStoredElements = 0; // the same and P
    BackwardCost standard;                         // P and Q, K, V kept; dV, dP, dQ, dK: 4 matmuls
};
std::vector<CountedBackwardRow> countedBackwardTable(int headDim, const std::vector<int>& ns,
                                                     const FlashOptions& options);
// Standard attention's backward as the engine counts it: P, Q, K, V kept (O is not needed:
// rowsum(dP ∘ P) stands in for D), and the four matmuls dV = Pᵀ dO, dP = dO Vᵀ, dQ = dS K,
// dK = dSᵀ Q.
BackwardCost countedStandardBackward(int queries, int keys, int headDim);
// The bytes of dQ's read-modify-write in a backward: dQ_i read and written back at every tile
// (the dQ = 0 initialisation not included).
std::uint64_t queryGradientRoundTripBytes(int queries, int keys, int headDim, bool causal,
                                          const FlashOptions& options);
// Why the engine's counted backward differs from the script's demo-5 model, with this problem's
// figures: FlashAttention-2 stores L (one float per row) and O, not m and ℓ; dQ's round trips;
// 5 matmuls counted (10 n²d) where the script counts 6 (12 n²d), 4 for standard (8 n²d) where
// it counts 5 (10 n²d). The sentence the CLI's run and demo 5, and the analysis, show.
std::string backwardModelWhy(int queries, int keys, int headDim, bool causal,
                             const FlashOptions& options);

// 6. Exact, not approximate: flash and a local-window approximation against the reference.
struct ExactnessDemo {
    int n = 0, headDim = 0, halfWidth = 0;
    double flashMaxDiff = 0;
    bool flashAllClose = false; // numpy.allclose: |diff| <= 1e-10 + 1e-5 |ref| everywhere
    double windowMaxDiff = 0;
    bool windowAllClose = false;
};
ExactnessDemo exactnessDemo(int n, int headDim, int halfWidth, int block, std::uint64_t seed);

// 7. Same FLOPs, less traffic.
struct FlopsRow {
    int n = 0;
    Counters standard;
    Counters flash;
    double trafficCut = 0; // standard bytes / flash bytes
};
std::vector<FlopsRow> flopsVersusTraffic(int headDim, const std::vector<int>& ns, int block,
                                         std::uint64_t seed);

// 8. The "debug copy" of S puts the n x n memory back.
struct DebugCopyDemo {
    int n = 0, headDim = 0, block = 0;
    Counters clean;
    Counters withCopy;
    double peakRatio = 0;
};
DebugCopyDemo debugCopyDemo(int n, int headDim, int block, std::uint64_t seed);

// 9. exp() without the maximum overflows.
struct OverflowDemo {
    Vector scores, rawExp, naiveWeights, safeWeights;
    int nonFiniteNaive = 0;
};
OverflowDemo overflowDemo(const Vector& scores);
Vector scriptOverflowScores(); // 800, 810, 805, 790

// 10. The roofline: how many FLOPs each kernel does per byte it moves to and from HBM, against
// the ridge point of the GPU's arithmetic. The counting model counts matmul FLOPs only, which
// gives softmax none; here its elementwise work is counted too, in both algorithms alike.
inline constexpr std::uint64_t kSoftmaxOpsPerScore = 5; // max, subtract, exp, sum, scale by 1/l

struct KernelWork {
    std::string name;
    std::uint64_t flops = 0;       // matmul FLOPs plus softmax's elementwise operations
    std::uint64_t valuesMoved = 0; // values read from and written to HBM
    // FLOPs per HBM byte when each value is valueBytes(arithmetic) wide.
    double intensity(Arithmetic arithmetic) const;
};
// Standard attention's three kernels, S = QKᵀ, P = softmax(S), O = PV: their values moved sum to
// standardCounts()'s traffic and their matmul FLOPs to its FLOPs.
std::vector<KernelWork> standardKernels(int n, int headDim);
KernelWork flashKernel(int n, int headDim, const FlashOptions& options);

struct RooflinePoint {
    KernelWork work;
    double intensity = 0;                // FLOPs per byte
    double attainableFlopsPerSecond = 0; // min(peak, intensity x bandwidth)
    double seconds = 0;                  // the kernel's work at that rate
    bool memoryBound = false;            // intensity below the ridge point
};
struct Roofline {
    Arithmetic arithmetic = Arithmetic::Fp32CudaCores;
    int n = 0, headDim = 0;
    double peakFlopsPerSecond = 0;
    double bandwidthBytesPerSecond = 0;
    double ridgeFlopsPerByte = 0;
    std::vector<RooflinePoint> standard; // QKᵀ, softmax, PV
    RooflinePoint flash;
    double standardSeconds() const;
    double standardMemoryBoundShare() const; // of standard's time, spent in memory-bound kernels
};
Roofline roofline(const HardwareProfile& hardware, Arithmetic arithmetic, int n, int headDim,
                  const FlashOptions& options);
// One roofline per arithmetic the profile has a FLOP rate for, in kArithmetics' order.
std::vector<Roofline> rooflines(const HardwareProfile& hardware, int n, int headDim,
                                const FlashOptions& options);

// When and why standard attention is memory-bound on that GPU, for each arithmetic, read from the
// rooflines at n and d: "QKᵀ and PV do 28.4 FLOPs per fp32 byte, softmax 0.625. fp32 CUDA cores
// do 12.5 FLOPs in the time a byte arrives, so only softmax waits on memory (28% of the time);
// fp16/bf16 tensor cores do 201 on 2-byte values, so every kernel waits on memory." The
// sentences the CLI's demo 1, the analysis and the lecture show.
std::string memoryBoundVerdict(const HardwareProfile& hardware, int n, int headDim,
                               const FlashOptions& options);

} // namespace flashviz
