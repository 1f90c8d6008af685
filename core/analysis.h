#pragma once
// The explainer script's nine demonstrations as data. The CLI prints them as tables, the GUI
// draws them as charts, and the tests hold them to the script's figures: one computation each.
#include "core/counters.h"
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

// 5. The backward pass: recompute instead of store.
struct BackwardRow {
    int n = 0;
    BackwardComparison costs;
    double extraFlopsFraction = 0;
};
std::vector<BackwardRow> backwardTable(int headDim, const std::vector<int>& ns);

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

} // namespace flashviz
