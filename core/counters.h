#pragma once
// The counting model: HBM traffic, FLOPs and scratch, exactly as the explainer script counts
// them (4 bytes per element moved, 2 FLOPs per multiply-add, scratch in elements).
#include <cstdint>

namespace flashviz {

struct FlashOptions;

inline constexpr std::uint64_t kBytesPerElement = 4;

struct Counters {
    std::uint64_t hbmReadBytes = 0;
    std::uint64_t hbmWriteBytes = 0;
    std::uint64_t flops = 0;
    std::uint64_t peakScratchElements = 0; // the largest extra buffer held at once

    std::uint64_t hbmBytes() const { return hbmReadBytes + hbmWriteBytes; }
    std::uint64_t peakScratchBytes() const { return peakScratchElements * kBytesPerElement; }

    void read(std::uint64_t elements) { hbmReadBytes += elements * kBytesPerElement; }
    void write(std::uint64_t elements) { hbmWriteBytes += elements * kBytesPerElement; }
    void matmul(std::uint64_t m, std::uint64_t k, std::uint64_t n) { flops += 2 * m * k * n; }
    void scratch(std::uint64_t elements) {
        if (elements > peakScratchElements) peakScratchElements = elements;
    }
    Counters& operator+=(const Counters& other); // sums traffic and FLOPs, takes the larger peak
    bool operator==(const Counters&) const = default;
};

// Closed forms of what the algorithms count while they run (tests hold the two equal).
Counters standardCounts(int queries, int keys, int headDim);
Counters flashCounts(int queries, int keys, int headDim, bool causal, const FlashOptions& options);

// The working set of one flash step: a Q tile, K and V tiles, a score tile, m and l.
std::uint64_t flashWorkingSetElements(int queries, int keys, int headDim,
                                      const FlashOptions& options);

// The FlashAttention paper's asymptotic IO model, for comparison with the exact counts:
// standard Theta(N d + N^2), flash Theta(N^2 d^2 / M), with M the SRAM size in elements and
// block sizes Bc = ceil(M / 4d), Br = min(ceil(M / 4d), d).
struct PaperIoModel {
    int blockCols = 0;
    int blockRows = 0;
    double standardAccesses = 0; // elements
    double flashAccesses = 0;    // elements
};
PaperIoModel paperIoModel(int n, int headDim, double sramElements);

// The backward pass trade: standard keeps P (n x n); flash keeps m and l and recomputes.
struct BackwardCost {
    std::uint64_t storedElements = 0;
    std::uint64_t flops = 0;
};
struct BackwardComparison {
    BackwardCost standard;
    BackwardCost flash;
};
BackwardComparison backwardCosts(int n, int headDim);

} // namespace flashviz
