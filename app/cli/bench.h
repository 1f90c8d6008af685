#pragma once
// The CPU benchmark: flash forward against ordinary attention, both in fp32 through Eigen, in
// one run on one machine, so the ratio is meaningful.
#include <iosfwd>
#include <vector>

namespace flashviz::cli {

// What one benchmark may ask for, checked by validate() before anything is timed. The sizes,
// head dimension and blocks must also pass the engine's own limits (core/problem.h,
// core/options.h) and ordinary attention's n x n fp32 matrix must fit in half of this
// machine's memory.
inline constexpr int kMaxBenchSize = 16384;    // n: ordinary attention's n x n floats are 1 GiB
inline constexpr int kMaxBenchSizeCount = 16;  // sizes in one run
inline constexpr int kMaxBenchRepeats = 100;   // timed runs per measurement
inline constexpr double kMaxBenchFlops = 1e13; // the whole run: minutes on one core

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

// Throws EngineError naming the option, the value and the allowed range; cheap (no timing).
void validate(const BenchOptions& options);
// The floating-point operations a run does in all: the GEMM reference, the step state and,
// per size, flash and ordinary attention, each repeated (plus one warm-up).
double benchFlops(const BenchOptions& options);

// Validates first (nothing is timed for options that would be refused).
BenchReport runBenchmark(const BenchOptions& options, std::ostream* progress);
void printBenchmark(const BenchReport& report, std::ostream& out);

} // namespace flashviz::cli
