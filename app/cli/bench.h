#pragma once
// The CPU benchmark: flash forward against ordinary attention, both in fp32 through Eigen, in
// one run on one machine, so the ratio is meaningful.
#include <iosfwd>
#include <vector>

namespace flashviz::cli {

struct BenchOptions {
    std::vector<int> sizes{1024, 2048, 4096, 8192};
    int headDim = 64;
    int repeats = 5;
    int blockRows = 64;
    int blockCols = 128;
    bool json = false;
};

struct BenchRow {
    int n = 0;
    double flashMs = 0, standardMs = 0;       // medians
    double flashGflops = 0, standardGflops = 0;
    double flashPeakBytes = 0, standardPeakBytes = 0;
    double maxAbsDiff = 0;                    // flash vs ordinary, fp32
};

struct BenchReport {
    BenchOptions options;
    double gemmGflops = 0; // Eigen fp32 GEMM on this machine, the ceiling for comparison
    double stepStateMs = 0; // median time to get the state of a late step at n = 4096
    std::vector<BenchRow> rows;
};

BenchReport runBenchmark(const BenchOptions& options, std::ostream* progress);
void printBenchmark(const BenchReport& report, std::ostream& out);

} // namespace flashviz::cli
