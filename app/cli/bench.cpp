#include "app/cli/bench.h"

#include "core/analysis.h"
#include "core/attention.h"
#include "core/errors.h"
#include "core/flash.h"
#include "core/steps.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ostream>
#include <string>

namespace flashviz::cli {

namespace {

constexpr int kGemmSize = 2048;
constexpr int kStepStateSize = 4096;

template <typename F>
double medianMs(int repeats, F&& work) {
    std::vector<double> times;
    for (int r = 0; r < repeats; ++r) {
        const auto start = std::chrono::steady_clock::now();
        work();
        const auto stop = std::chrono::steady_clock::now();
        times.push_back(std::chrono::duration<double, std::milli>(stop - start).count());
    }
    std::sort(times.begin(), times.end());
    return times[times.size() / 2];
}

// Eigen's fp32 GEMM on a square problem: the arithmetic ceiling the attention rates are read
// against.
double measureGemmGflops(int repeats) {
    const int n = kGemmSize;
    NormalGenerator rng(11);
    const MatrixF a = rng.matrix(n, n, 1.0).cast<float>();
    const MatrixF b = rng.matrix(n, n, 1.0).cast<float>();
    MatrixF c(n, n);
    c.noalias() = a * b; // warm-up
    const double ms = medianMs(repeats, [&] { c.noalias() = a * b; });
    return 2.0 * n * n * double(n) / (ms * 1e6);
}

// The step engine's worst case at n = 4096: the last update of the last query block.
double measureStepState(int repeats) {
    const Problem p = gaussianProblem(kStepStateSize, 64, 0);
    const StepEngine engine(p, Algorithm::Flash, FlashOptions{});
    const int step = engine.stepCount() - 3; // the final UpdateOutput
    return medianMs(repeats, [&] { (void)engine.state(step); });
}

} // namespace

void validate(const BenchOptions& options) {
    const auto refuse = [](ErrorKind kind, const std::string& text) {
        throw EngineError(kind, text);
    };
    if (options.sizes.empty()) refuse(ErrorKind::InvalidArgument, "--sizes names no size");
    if (options.sizes.size() > std::size_t(kMaxBenchSizeCount))
        refuse(ErrorKind::LimitExceeded, "--sizes names " + std::to_string(options.sizes.size()) +
                                             " sizes; a benchmark takes 1 to " +
                                             std::to_string(kMaxBenchSizeCount));
    if (options.repeats < 1 || options.repeats > kMaxBenchRepeats)
        refuse(options.repeats < 1 ? ErrorKind::InvalidArgument : ErrorKind::LimitExceeded,
               "--repeats " + std::to_string(options.repeats) + " is out of range: 1 to " +
                   std::to_string(kMaxBenchRepeats));
    FlashOptions tiles;
    tiles.blockRows = options.blockRows;
    tiles.blockCols = options.blockCols;
    flashviz::validate(tiles);
    for (int n : options.sizes) {
        if (n < 1 || n > kMaxBenchSize)
            refuse(n < 1 ? ErrorKind::InvalidArgument : ErrorKind::LimitExceeded,
                   "--sizes " + std::to_string(n) +
                       " is out of range: the benchmark takes n from 1 to " +
                       std::to_string(kMaxBenchSize));
        ProblemSpec spec;
        spec.queries = spec.keys = n;
        spec.headDim = options.headDim;
        flashviz::validate(spec);
        requireScoreMatrixMemory(n, n, int(sizeof(float)), 1); // ordinary attention's n x n
    }
    const double flops = benchFlops(options);
    if (flops > kMaxBenchFlops) {
        char text[320];
        std::snprintf(text, sizeof text,
                      "this benchmark (--sizes up to %d, --repeats %d, d = %d) would do about "
                      "%.2g floating-point operations; it does at most %.0e (minutes on one core): "
                      "use fewer sizes, smaller sizes or fewer repeats",
                      *std::max_element(options.sizes.begin(), options.sizes.end()),
                      options.repeats, options.headDim, flops, kMaxBenchFlops);
        refuse(ErrorKind::LimitExceeded, text);
    }
}

double benchFlops(const BenchOptions& options) {
    const double runs = double(options.repeats) + 1; // the warm-up counts too
    const double gemm = 2.0 * kGemmSize * double(kGemmSize) * kGemmSize;
    const double stepState = 4.0 * 64 * double(kStepStateSize) * 64; // one query block's replay
    double total = runs * gemm + options.repeats * stepState;
    for (int n : options.sizes) // flash and ordinary attention: 4 n^2 d each
        total += runs * 2 * 4.0 * double(n) * double(n) * options.headDim;
    return total;
}

BenchReport runBenchmark(const BenchOptions& options, std::ostream* progress) {
    validate(options);
    BenchReport report;
    report.options = options;
    report.gemmGflops = measureGemmGflops(options.repeats);
    report.stepStateMs = measureStepState(options.repeats);
    FlashOptions tiles;
    tiles.blockRows = options.blockRows;
    tiles.blockCols = options.blockCols;
    for (int n : options.sizes) {
        if (progress) *progress << "  n = " << n << " ..." << std::endl;
        const Problem p = gaussianProblem(n, options.headDim, 1);
        const MatrixF q = p.q.cast<float>(), k = p.k.cast<float>(), v = p.v.cast<float>();
        const double flops = 4.0 * n * double(n) * options.headDim;
        BenchRow row;
        row.n = n;
        FlashOutputT<float> flash = flashForward<float>(q, k, v, p.scale(), false, tiles); // warm-up
        row.flashMs = medianMs(options.repeats, [&] {
            flash = flashForward<float>(q, k, v, p.scale(), false, tiles);
        });
        MatrixF standard = referenceAttention<float>(q, k, v, p.scale(), false);
        row.standardMs = medianMs(options.repeats, [&] {
            standard = referenceAttention<float>(q, k, v, p.scale(), false);
        });
        row.flashGflops = flops / (row.flashMs * 1e6);
        row.standardGflops = flops / (row.standardMs * 1e6);
        // Extra memory beyond Q, K, V and O, as allocated by each implementation: the score and
        // weight tiles with the running statistics for flash, the n x n matrix for ordinary.
        row.flashPeakBytes = double(flash.counters.peakScratchBytes());
        row.standardPeakBytes = double(n) * n * sizeof(float);
        row.maxAbsDiff = double((flash.o - standard).cwiseAbs().maxCoeff());
        report.rows.push_back(row);
    }
    return report;
}

void printBenchmark(const BenchReport& report, std::ostream& out) {
    char line[256];
    out << "CPU attention benchmark: fp32, d = " << report.options.headDim << ", one thread, median of "
        << report.options.repeats << " runs; flash tiles Br = " << report.options.blockRows
        << ", Bc = " << report.options.blockCols << "\n";
    std::snprintf(line, sizeof line, "Eigen fp32 GEMM on this machine: %.1f GFLOP/s\n\n",
                  report.gemmGflops);
    out << line;
    std::snprintf(line, sizeof line, "%6s %11s %11s %12s %12s %8s %9s %14s %14s %10s\n", "n",
                  "flash ms", "ordin. ms", "flash GF/s", "ordin. GF/s", "ratio", "% GEMM",
                  "flash peak KB", "ordin. peak MB", "max diff");
    out << line;
    for (const auto& r : report.rows) {
        std::snprintf(line, sizeof line,
                      "%6d %11.2f %11.2f %12.1f %12.1f %7.2fx %8.1f%% %14.1f %14.1f %10.1e\n", r.n,
                      r.flashMs, r.standardMs, r.flashGflops, r.standardGflops,
                      r.flashGflops / r.standardGflops, 100 * r.flashGflops / report.gemmGflops,
                      r.flashPeakBytes / 1024, r.standardPeakBytes / (1024 * 1024), r.maxAbsDiff);
        out << line;
    }
    std::snprintf(line, sizeof line,
                  "\nstate of the last update step at n = 4096, d = 64 (64 x 64 tiles): %.2f ms\n",
                  report.stepStateMs);
    out << line;
}

} // namespace flashviz::cli
