#include "core/analysis.h"

#include "core/attention.h"
#include "core/backward.h"
#include "core/check.h"
#include "core/flash.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace flashviz {

namespace {

FlashOptions squareBlocks(int block) {
    FlashOptions o;
    o.blockRows = block;
    o.blockCols = block;
    return o;
}

double maxAbsDiff(const Matrix& a, const Matrix& b) {
    return (a - b).cwiseAbs().maxCoeff();
}

// numpy.allclose: |a - b| <= atol + rtol * |b| everywhere.
bool allClose(const Matrix& a, const Matrix& b, double atol, double rtol = 1e-5) {
    return ((a - b).array().abs() <= atol + rtol * b.array().abs()).all();
}

} // namespace

Problem gaussianProblem(int n, int headDim, std::uint64_t seed) {
    ProblemSpec spec;
    spec.queries = n;
    spec.keys = n;
    spec.headDim = headDim;
    spec.seed = seed;
    return makeProblem(spec);
}

std::vector<TrafficRow> memoryBoundTable(int headDim, const std::vector<int>& ns) {
    std::vector<TrafficRow> rows;
    for (int n : ns) {
        const Counters c = standardCounts(n, n, headDim);
        const double square = 4.0 * n * n * kBytesPerElement; // the four n x n trips
        rows.push_back({n, c.hbmBytes(), c.flops, double(c.hbmBytes()) / double(c.flops),
                        square / double(c.hbmBytes())});
    }
    return rows;
}

Vector scriptSoftmaxRow() {
    Vector row(32);
    row << 1.0367525761943581, 2.464854430503475, 0.9913112285501614, -3.9094716948130825,
        2.716067600019353, 1.3391237170920338, -1.6108597060808556, 1.7433543125890594,
        1.093717188558227, 0.882397489966578, 0.08526672394739036, 1.6401389598373408,
        -2.2093622610050008, -0.4887298439791583, -1.4463579380399347, 1.7965386379038826,
        0.11916632244497696, -0.8773702528952658, -2.345725387070526, -0.7715767218566121,
        0.024426541555030525, -0.8268087158981112, 3.882191443194622, 3.020172945917383,
        -8.133487436897905, -5.667039737903018, -0.5243162761654858, -1.2665712347290607,
        0.6409289924958332, 0.6519657930676908, 6.353516265153145, -3.3360622880768442;
    return row;
}

OnlineSoftmaxDemo onlineSoftmaxDemo(const Vector& scores, int block) {
    OnlineSoftmaxDemo demo;
    demo.block = block;
    demo.scores = scores;
    demo.reference = safeSoftmax(scores);
    demo.online = onlineSoftmax(scores, block, true).weights;
    demo.broken = onlineSoftmax(scores, block, false).weights;
    demo.onlineMaxDiff = (demo.reference - demo.online).cwiseAbs().maxCoeff();
    demo.brokenMaxDiff = (demo.reference - demo.broken).cwiseAbs().maxCoeff();
    demo.brokenSum = demo.broken.sum();
    return demo;
}

std::vector<TiledRow> tiledComparison(int headDim, const std::vector<int>& ns, int block,
                                      std::uint64_t seed) {
    std::vector<TiledRow> rows;
    for (int n : ns) {
        const Problem p = gaussianProblem(n, headDim, seed);
        const StandardResult standard = standardForward(p);
        const FlashResult flash = flashForward(p, squareBlocks(block));
        rows.push_back({n, maxAbsDiff(standard.o, flash.o), standard.counters, flash.counters});
    }
    return rows;
}

BlockSweep blockSizeSweep(int n, int headDim, const std::vector<int>& blocks,
                          std::uint64_t sramBudgetBytes) {
    BlockSweep sweep{n, headDim, sramBudgetBytes, standardCounts(n, n, headDim), {}};
    for (int b : blocks) {
        const Counters c = flashCounts(n, n, headDim, false, squareBlocks(b));
        sweep.rows.push_back({b, c, c.peakScratchBytes() <= sramBudgetBytes});
    }
    return sweep;
}

std::vector<BackwardRow> backwardTable(int headDim, const std::vector<int>& ns) {
    std::vector<BackwardRow> rows;
    for (int n : ns) {
        const BackwardComparison b = backwardCosts(n, headDim);
        rows.push_back({n, b, double(b.flash.flops) / double(b.standard.flops) - 1.0});
    }
    return rows;
}

BackwardCost countedStandardBackward(int queries, int keys, int headDim) {
    const std::uint64_t nq = queries, nk = keys, d = headDim;
    Counters c;
    c.matmul(nk, nq, d); // dV = Pᵀ dO
    c.matmul(nq, d, nk); // dP = dO Vᵀ
    c.matmul(nq, nk, d); // dQ = dS K
    c.matmul(nk, nq, d); // dK = dSᵀ Q
    return {nq * nk + nq * d + 2 * nk * d, c.flops};
}

std::vector<CountedBackwardRow> countedBackwardTable(int headDim, const std::vector<int>& ns,
                                                     const FlashOptions& options) {
    std::vector<CountedBackwardRow> rows;
    for (int n : ns) {
        const BackwardTrade t = backwardTrade(n, n, headDim, false, options);
        rows.push_back({n, t.recompute, t.stored, t.recomputeKept, t.storedKept,
                        countedStandardBackward(n, n, headDim)});
    }
    return rows;
}

std::uint64_t queryGradientRoundTripBytes(int queries, int keys, int headDim, bool causal,
                                          const FlashOptions& options) {
    // Overwriting dQ_i drops exactly its read at every tile; the write back matches the read.
    FlashOptions accumulate = options, overwrite = options;
    accumulate.backward.accumulateDq = true;
    overwrite.backward.accumulateDq = false;
    const std::uint64_t reads =
        flashBackwardCounts(queries, keys, headDim, causal, accumulate).hbmReadBytes -
        flashBackwardCounts(queries, keys, headDim, causal, overwrite).hbmReadBytes;
    return 2 * reads;
}

ExactnessDemo exactnessDemo(int n, int headDim, int halfWidth, int block, std::uint64_t seed) {
    const Problem p = gaussianProblem(n, headDim, seed);
    const Matrix reference = referenceAttention(p);
    const Matrix flash = flashForward(p, squareBlocks(block)).o;
    const Matrix window = localWindowAttention(p, halfWidth);
    return {n,
            headDim,
            halfWidth,
            maxAbsDiff(reference, flash),
            allClose(flash, reference, 1e-10),
            maxAbsDiff(reference, window),
            allClose(window, reference, 1e-10)};
}

std::vector<FlopsRow> flopsVersusTraffic(int headDim, const std::vector<int>& ns, int block,
                                         std::uint64_t seed) {
    std::vector<FlopsRow> rows;
    for (int n : ns) {
        const Problem p = gaussianProblem(n, headDim, seed);
        const Counters standard = standardForward(p).counters;
        const Counters flash = flashForward(p, squareBlocks(block)).counters;
        rows.push_back(
            {n, standard, flash, double(standard.hbmBytes()) / double(flash.hbmBytes())});
    }
    return rows;
}

DebugCopyDemo debugCopyDemo(int n, int headDim, int block, std::uint64_t seed) {
    const Problem p = gaussianProblem(n, headDim, seed);
    FlashOptions withCopy = squareBlocks(block);
    withCopy.keepFullScores = true;
    DebugCopyDemo demo{n,
                       headDim,
                       block,
                       flashForward(p, squareBlocks(block)).counters,
                       flashForward(p, withCopy).counters,
                       0};
    demo.peakRatio =
        double(demo.withCopy.peakScratchElements) / double(demo.clean.peakScratchElements);
    return demo;
}

Vector scriptOverflowScores() {
    Vector s(4);
    s << 800.0, 810.0, 805.0, 790.0;
    return s;
}

OverflowDemo overflowDemo(const Vector& scores) {
    OverflowDemo demo;
    demo.scores = scores;
    demo.rawExp = scores.array().exp();
    demo.naiveWeights = naiveSoftmax(scores);
    demo.safeWeights = safeSoftmax(scores);
    demo.nonFiniteNaive = int((!demo.naiveWeights.array().isFinite()).count());
    return demo;
}

double KernelWork::intensity(Arithmetic arithmetic) const {
    return double(flops) / (double(valuesMoved) * valueBytes(arithmetic));
}

std::vector<KernelWork> standardKernels(int n, int headDim) {
    const std::uint64_t N = n, d = headDim, scores = N * N;
    return {{"QKᵀ", 2 * N * N * d, 2 * N * d + scores},            // Q, K in; S out
            {"softmax", kSoftmaxOpsPerScore * scores, 2 * scores}, // S in, P out
            {"PV", 2 * N * N * d, scores + 2 * N * d}};            // P, V in; O out
}

KernelWork flashKernel(int n, int headDim, const FlashOptions& options) {
    const Counters c = flashCounts(n, n, headDim, false, options);
    return {"flash", c.flops + kSoftmaxOpsPerScore * std::uint64_t(n) * std::uint64_t(n),
            c.hbmBytes() / kBytesPerElement};
}

namespace {

RooflinePoint onRoofline(const KernelWork& work, const Roofline& roof) {
    RooflinePoint p;
    p.work = work;
    p.intensity = work.intensity(roof.arithmetic);
    p.attainableFlopsPerSecond =
        std::min(roof.peakFlopsPerSecond, p.intensity * roof.bandwidthBytesPerSecond);
    p.seconds = double(work.flops) / p.attainableFlopsPerSecond;
    p.memoryBound = p.intensity < roof.ridgeFlopsPerByte;
    return p;
}

std::string printf1(const char* fmt, double value) {
    char buffer[64];
    std::snprintf(buffer, sizeof buffer, fmt, value);
    return buffer;
}

// FLOPs per byte with three significant digits: 0.625, 12.5, 201, 1536.
std::string perByte(double value) {
    return printf1(value < 1000 ? "%.3g" : "%.0f", value);
}

// "QKᵀ and PV do 31.5 FLOPs per fp32 byte, softmax 0.625": the kernels, those of equal
// intensity named together.
std::string intensities(const Roofline& roof) {
    std::vector<std::pair<std::string, std::string>> groups; // intensity, names
    for (const RooflinePoint& p : roof.standard) {
        const std::string at = perByte(p.intensity);
        auto same = std::find_if(groups.begin(), groups.end(),
                                 [&](const auto& g) { return g.first == at; });
        if (same == groups.end())
            groups.push_back({at, p.work.name});
        else
            same->second += " and " + p.work.name;
    }
    std::string text;
    for (std::size_t i = 0; i < groups.size(); ++i)
        text += i == 0 ? groups[i].second + " do " + groups[i].first + " FLOPs per " +
                             (valueBytes(roof.arithmetic) == 4 ? "fp32" : "fp16") + " byte"
                       : ", " + groups[i].second + " " + groups[i].first;
    return text;
}

// "only softmax waits on memory (28% of the time)", "every kernel waits", "no kernel waits".
std::string waiting(const Roofline& roof) {
    std::vector<std::string> bound;
    for (const RooflinePoint& p : roof.standard)
        if (p.memoryBound) bound.push_back(p.work.name);
    if (bound.empty()) return "no kernel waits on memory";
    if (bound.size() == roof.standard.size()) return "every kernel waits on memory";
    std::string names = bound.front();
    for (std::size_t i = 1; i < bound.size(); ++i)
        names += " and " + bound[i];
    return "only " + names + (bound.size() > 1 ? " wait" : " waits") + " on memory (" +
           printf1("%.0f", 100 * roof.standardMemoryBoundShare()) + "% of the time)";
}

// "512 B", "2.3 KB", "17.50 MB": binary units, as the demos print MB.
std::string bytesText(std::uint64_t bytes) {
    if (bytes < 1024) return std::to_string(bytes) + " B";
    if (bytes < 1024 * 1024) return printf1("%.1f KB", double(bytes) / 1024);
    return printf1("%.2f MB", double(bytes) / (1024.0 * 1024.0));
}

} // namespace

double Roofline::standardSeconds() const {
    double seconds = 0;
    for (const RooflinePoint& p : standard)
        seconds += p.seconds;
    return seconds;
}

double Roofline::standardMemoryBoundShare() const {
    double bound = 0;
    for (const RooflinePoint& p : standard)
        if (p.memoryBound) bound += p.seconds;
    return bound / standardSeconds();
}

Roofline roofline(const HardwareProfile& hardware, Arithmetic arithmetic, int n, int headDim,
                  const FlashOptions& options) {
    Roofline roof;
    roof.arithmetic = arithmetic;
    roof.n = n;
    roof.headDim = headDim;
    roof.peakFlopsPerSecond = peakFlopsPerSecond(hardware, arithmetic);
    roof.bandwidthBytesPerSecond = hardware.hbmBandwidthBytesPerSecond.value;
    roof.ridgeFlopsPerByte = ridgeFlopsPerByte(hardware, arithmetic);
    for (const KernelWork& work : standardKernels(n, headDim))
        roof.standard.push_back(onRoofline(work, roof));
    roof.flash = onRoofline(flashKernel(n, headDim, options), roof);
    return roof;
}

std::vector<Roofline> rooflines(const HardwareProfile& hardware, int n, int headDim,
                                const FlashOptions& options) {
    std::vector<Roofline> roofs;
    for (Arithmetic arithmetic : kArithmetics)
        if (peakFlopsPerSecond(hardware, arithmetic) > 0)
            roofs.push_back(roofline(hardware, arithmetic, n, headDim, options));
    return roofs;
}

std::string backwardModelWhy(int queries, int keys, int headDim, bool causal,
                             const FlashOptions& options) {
    const std::uint64_t nq = queries, d = headDim;
    // The algorithm as written, whatever switches the run has on.
    FlashOptions recompute = options;
    recompute.backward = BackwardOptions{};
    const Counters counted = flashBackwardCounts(queries, keys, headDim, causal, recompute);
    const std::uint64_t roundTrips =
        queryGradientRoundTripBytes(queries, keys, headDim, causal, recompute);
    // The script's model has one n: its m and ℓ are two floats per query row.
    return "Where the engine's count differs from the script's model: FlashAttention-2 keeps L = "
           "m + log ℓ, one float per row (" +
           std::to_string(nq) + " floats), where the script keeps m and ℓ (" +
           std::to_string(2 * nq) + "), and it keeps O (" + std::to_string(nq * d) +
           " floats), which the pre-pass reads for D = rowsum(dO ∘ O). dQ_i is read, added to "
           "and written back in HBM at every tile: " +
           bytesText(roundTrips) + " of the backward's " + bytesText(counted.hbmBytes()) +
           " of traffic (the script counts no traffic). The engine counts 5 matmuls per tile "
           "(10 n²d without a mask: S again, dV, dP, dQ, dK) where the script counts 6 (12 n²d), "
           "and 4 for standard attention (8 n²d: dV, dP, dQ, dK) where the script counts 5 "
           "(10 n²d); with P stored, S is not recomputed and FlashAttention's count is 4 too, "
           "but the forward then writes P and the backward reads it back.";
}

std::string memoryBoundVerdict(const HardwareProfile& hardware, int n, int headDim,
                               const FlashOptions& options) {
    const std::vector<Roofline> roofs = rooflines(hardware, n, headDim, options);
    if (roofs.empty()) return {};
    // Why: a kernel waits on memory when its bytes bring fewer FLOPs than the cores can do in
    // the time those bytes take to arrive, the ridge point.
    std::string text = intensities(roofs.front()) + ".";
    for (std::size_t i = 0; i < roofs.size(); ++i) {
        const Roofline& roof = roofs[i];
        const bool fewerBytes = valueBytes(roof.arithmetic) < valueBytes(roofs.front().arithmetic);
        text += (i == 0 ? " " : "; ") + arithmeticName(roof.arithmetic) + " do " +
                perByte(roof.ridgeFlopsPerByte) +
                (i == 0 ? " FLOPs in the time a byte arrives" : "") +
                // Its own intensities: on fewer bytes per value the same kernels do more per byte.
                (fewerBytes ? " on " + printf1("%.0f", valueBytes(roof.arithmetic)) +
                                  "-byte values, where " + intensities(roof)
                            : std::string()) +
                ", so " + waiting(roof);
    }
    return text + ".";
}

} // namespace flashviz
