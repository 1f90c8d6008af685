#include "core/flash_versions.h"

#include "core/errors.h"
#include "core/flash.h"
#include "core/options.h"

#include <algorithm>
#include <limits>
#include <string>

namespace flashviz {

const char* toString(FlashVersion version) {
    return version == FlashVersion::One ? "FlashAttention-1" : "FlashAttention-2";
}

NonMatmulFlops& NonMatmulFlops::operator+=(const NonMatmulFlops& other) {
    exp += other.exp;
    max += other.max;
    add += other.add;
    multiply += other.multiply;
    divide += other.divide;
    return *this;
}

NonMatmulFlops tileNonMatmul(FlashVersion version, int rows, int keys, int headDim) {
    const std::uint64_t r = std::uint64_t(rows), c = std::uint64_t(keys), d = std::uint64_t(headDim);
    NonMatmulFlops f;
    if (version == FlashVersion::Two) {
        // s *= scale; m_new = max(m_old, rowmax s); p = exp(s - m_new); corr = exp(m_old - m_new);
        // l = corr l + rowsum p; acc *= corr (acc += p V is the matmul's own accumulate).
        f.multiply = r * c + r + r * d;
        f.max = r * c;
        f.add = r * c + r + r * c;
        f.exp = r * c + r;
        return f;
    }
    // s *= scale; m~ = rowmax s; p~ = exp(s - m~); l~ = rowsum p~; m_new = max(m_old, m~);
    // a = exp(m_old - m_new), b = exp(m~ - m_new); l_new = a l_old + b l~;
    // O = (l_old a O + b (p~ V)) / l_new: two row scalings, an add and a division per element.
    f.multiply = r * c + 2 * r + r + 2 * r * d;
    f.max = r * c + r;
    f.add = r * c + r * c + 2 * r + r + r * d;
    f.exp = r * c + 2 * r;
    f.divide = r * d;
    return f;
}

NonMatmulFlops finishNonMatmul(FlashVersion version, int rows, int headDim) {
    NonMatmulFlops f;
    if (version == FlashVersion::One) return f; // O is already normalised; m and l are stored apart
    const std::uint64_t r = std::uint64_t(rows), d = std::uint64_t(headDim);
    f.divide = r * d; // O = acc / l
    f.exp = r;        // log l
    f.add = r;        // L = m + log l
    return f;
}

std::uint64_t tileMatmulFlops(int rows, int keys, int headDim) {
    return 2 * 2 * std::uint64_t(rows) * std::uint64_t(keys) * std::uint64_t(headDim);
}

NonMatmulFlops nonMatmulCounts(FlashVersion version, int queries, int keys, int headDim,
                               bool causal, const FlashOptions& options) {
    NonMatmulFlops total;
    for (int i = 0; i < blockCount(queries, options.blockRows); ++i) {
        const Range rows = blockRange(i, options.blockRows, queries);
        const int visible = visibleKeyBlocks(rows, queries, keys, options.blockCols, causal);
        for (int j = 0; j < visible; ++j)
            total += tileNonMatmul(version, rows.size(),
                                   blockRange(j, options.blockCols, keys).size(), headDim);
        if (visible > 0) total += finishNonMatmul(version, rows.size(), headDim);
    }
    return total;
}

ArithmeticTime arithmeticTime(std::uint64_t matmulFlops, const NonMatmulFlops& nonMatmul,
                              const HardwareProfile& hardware) {
    ArithmeticTime t;
    const double tensor = hardware.fp16TensorFlopsPerSecond.value;
    const double fp32 = hardware.fp32FlopsPerSecond.value;
    t.matmulSeconds = double(matmulFlops) / tensor;
    t.nonMatmulSeconds = double(nonMatmul.total()) / fp32;
    t.rateRatio = tensor / fp32;
    return t;
}

VersionComparison compareVersions(const Problem& problem, const FlashOptions& options,
                                  const Matrix& reference) {
    FlashOptions correct = options;
    correct.rescale = true;
    correct.runningMax = true;
    correct.keepFullScores = false;
    const double tolerance = defaultTolerance(problem.spec.precision);
    VersionComparison c;
    Matrix outputs[2];
    for (FlashVersion version : {FlashVersion::One, FlashVersion::Two}) {
        const FlashResult r = flashForward(problem, correct, version);
        VersionRun& run = version == FlashVersion::One ? c.one : c.two;
        run.version = version;
        run.check = compareOutputs(r.o, reference, tolerance);
        run.matmulFlops = r.counters.flops;
        run.nonMatmul = r.nonMatmul;
        outputs[version == FlashVersion::One ? 0 : 1] = r.o;
    }
    const Matrix diff = (outputs[0] - outputs[1]).cwiseAbs();
    c.maxDifference = diff.allFinite() ? diff.maxCoeff() : std::numeric_limits<double>::infinity();
    return c;
}

// ---- warps ----

namespace {

void requirePositive(int value, const char* what) {
    if (value < 1)
        throw EngineError(ErrorKind::InvalidArgument,
                          std::string(what) + " must be at least 1 (got " + std::to_string(value) + ").");
}

// Warp w's slice of `total` items cut into `warps` equal parts (the last ones may be short or
// empty when the items do not divide).
Range slice(int w, int warps, int total) {
    const int size = blockCount(total, warps);
    const Range r = blockRange(w, size, total);
    return r.begin >= total ? Range{total, total} : r;
}

} // namespace

WarpSplit warpSplit(FlashVersion version, int rows, int keys, int headDim, int warps,
                    int elementBytes) {
    requirePositive(rows, "The tile's rows");
    requirePositive(keys, "The tile's keys");
    requirePositive(headDim, "The head dimension");
    requirePositive(warps, "The number of warps");
    if (warps > kMaxWarps)
        throw EngineError(ErrorKind::InvalidArgument,
                          "A thread block holds at most " + std::to_string(kMaxWarps) +
                              " warps (1024 threads); got " + std::to_string(warps) + ".");
    requirePositive(elementBytes, "The element size");
    const std::uint64_t r = std::uint64_t(rows), c = std::uint64_t(keys), d = std::uint64_t(headDim),
                        w = std::uint64_t(warps), e = std::uint64_t(elementBytes);
    constexpr std::uint64_t kPartialBytes = 4; // partial results are fp32

    WarpSplit s;
    s.version = version;
    s.warps = warps;
    for (int i = 0; i < warps; ++i)
        s.shares.push_back(version == FlashVersion::One ? WarpShare{{0, rows}, slice(i, warps, keys)}
                                                        : WarpShare{slice(i, warps, rows), {0, keys}});
    if (version == FlashVersion::Two) {
        // Each warp reads its own rows of Q_i and all of K_j and V_j; softmax stays in registers.
        s.operandReadBytes = (r * d + w * 2 * c * d) * e;
        return s;
    }
    // Each warp reads all of Q_i and its slice of K_j and V_j.
    s.operandReadBytes = (w * r * d + 2 * c * d) * e;
    if (warps == 1) return s; // one warp holds whole rows: nothing to exchange
    // Row maxima, then row sums: every warp writes its R partials and reads all W x R back.
    // Partial accumulators: every warp writes R x d; the reduction reads all W x R x d once.
    s.exchangeWriteBytes = (2 * w * r + w * r * d) * kPartialBytes;
    s.exchangeReadBytes = (2 * w * w * r + w * r * d) * kPartialBytes;
    s.exchangeBarriers = 4; // after the maxima, the sums, the partial O; before the buffer's reuse
    return s;
}

// ---- the grid ----

Occupancy occupancy(const KernelShape& kernel, const HardwareProfile& hw) {
    requirePositive(kernel.threads, "A kernel's threads per block");
    Occupancy o;
    const auto perBlock = std::uint64_t(hw.sharedMemoryPerBlockBytes.value);
    if (kernel.sharedBytes > perBlock)
        throw EngineError(ErrorKind::Unsupported,
                          "The kernel " + kernel.name + " needs " + std::to_string(kernel.sharedBytes) +
                              " bytes of shared memory per block; the " + hw.name + " allows " +
                              std::to_string(perBlock) + ".");
    o.byThreads = int(hw.maxThreadsPerSm.value) / kernel.threads;
    o.bySharedMemory =
        int(hw.sharedMemoryPerSmBytes.value /
            (double(kernel.sharedBytes) + hw.reservedSharedPerBlockBytes.value));
    o.byBlockLimit = int(hw.maxBlocksPerSm.value);
    o.byRegisters = kernel.builtForBlocksPerSm;
    o.blocksPerSm = std::min({o.byThreads, o.bySharedMemory, o.byBlockLimit});
    o.limitedBy = o.blocksPerSm == o.bySharedMemory ? "shared memory"
                  : o.blocksPerSm == o.byThreads    ? "threads"
                                                    : "blocks per SM";
    // __launch_bounds__ promises registers for at least this many blocks; more may fit, so it
    // limits only where nothing else stops sooner (the register count itself is the compiler's).
    if (o.byRegisters > 0 && o.byRegisters < o.blocksPerSm) {
        o.blocksPerSm = o.byRegisters;
        o.limitedBy = "registers";
    }
    if (o.blocksPerSm < 1)
        throw EngineError(ErrorKind::Unsupported,
                          "One block of " + kernel.name + " does not fit an SM of the " + hw.name + ".");
    return o;
}

double GridPicture::slotUse() const {
    const double capacity = double(waves) * double(residentBlocks);
    return capacity > 0 ? double(blocks) / capacity : 0;
}

GridPicture gridPicture(FlashVersion version, int batch, int heads, int queries,
                        const KernelShape& kernel, const HardwareProfile& hardware) {
    requirePositive(batch, "The batch");
    requirePositive(heads, "The number of heads");
    requirePositive(queries, "The number of queries");
    requirePositive(kernel.blockRows, "A kernel's Br");
    if (batch > kMaxGridCount || heads > kMaxGridCount)
        throw EngineError(ErrorKind::InvalidArgument,
                          "The batch and the heads are each at most " +
                              std::to_string(kMaxGridCount) + " (a grid dimension).");
    GridPicture g;
    g.version = version;
    const std::uint64_t heads_ = std::uint64_t(batch) * std::uint64_t(heads);
    const int queryBlocks = blockCount(queries, kernel.blockRows);
    g.blocks = version == FlashVersion::One ? heads_ : heads_ * std::uint64_t(queryBlocks);
    g.queryBlocksPerThreadBlock = version == FlashVersion::One ? queryBlocks : 1;
    g.occupancy = occupancy(kernel, hardware);
    g.sms = int(hardware.smCount.value);
    g.residentBlocks = std::uint64_t(g.sms) * std::uint64_t(g.occupancy.blocksPerSm);
    g.waves = (g.blocks + g.residentBlocks - 1) / g.residentBlocks;
    g.tailBlocks = g.blocks - (g.waves - 1) * g.residentBlocks;
    // Blocks go to SMs round-robin: the first wave fills one block per SM before a second.
    g.busySms = int(std::min<std::uint64_t>(g.blocks, std::uint64_t(g.sms)));
    return g;
}

VersionsReport versionsReport(const VersionsRequest& r, const HardwareProfile& hardware) {
    requirePositive(r.queries, "The number of queries");
    requirePositive(r.keys, "The number of keys");
    FlashOptions options;
    options.blockRows = r.blockRows;
    options.blockCols = r.blockCols;
    validate(options);
    VersionsReport v;
    v.matmulFlops = flashCounts(r.queries, r.keys, r.headDim, r.causal, options).flops;
    v.one = nonMatmulCounts(FlashVersion::One, r.queries, r.keys, r.headDim, r.causal, options);
    v.two = nonMatmulCounts(FlashVersion::Two, r.queries, r.keys, r.headDim, r.causal, options);
    v.timeOne = arithmeticTime(v.matmulFlops, v.one, hardware);
    v.timeTwo = arithmeticTime(v.matmulFlops, v.two, hardware);
    const int tileRows = std::min(r.blockRows, r.queries), tileKeys = std::min(r.blockCols, r.keys);
    v.splitOne = warpSplit(FlashVersion::One, tileRows, tileKeys, r.headDim, r.warps,
                           kFastKernelElementBytes);
    v.splitTwo = warpSplit(FlashVersion::Two, tileRows, tileKeys, r.headDim, r.warps,
                           kFastKernelElementBytes);
    v.gridOne = gridPicture(FlashVersion::One, r.batch, r.heads, r.queries, r.kernel, hardware);
    v.gridTwo = gridPicture(FlashVersion::Two, r.batch, r.heads, r.queries, r.kernel, hardware);
    return v;
}

} // namespace flashviz
