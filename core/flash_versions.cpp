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

namespace {

// Rows of the tile whose last visible key comes before `key` (bottom-right causal: row r sees
// keys up to r + n_k - n_q, so they are the first ones of the tile); none without a mask.
std::uint64_t rowsBlindBefore(const TilePlace& place, int key) {
    if (!place.causal) return 0;
    const int firstSeeing = key - (place.keys - place.queries); // the first row that sees `key`
    return std::uint64_t(std::clamp(firstSeeing - place.rows.begin, 0, place.rows.size()));
}

} // namespace

NonMatmulFlops tileNonMatmul(FlashVersion version, const TilePlace& place, int headDim) {
    const std::uint64_t r = std::uint64_t(place.rows.size()), c = std::uint64_t(place.cols.size()),
                        d = std::uint64_t(headDim);
    // y: rows with every key of this tile masked; z: rows that have seen no key at all.
    const std::uint64_t y = rowsBlindBefore(place, place.cols.begin);
    const std::uint64_t z = rowsBlindBefore(place, 0);
    NonMatmulFlops f;
    if (version == FlashVersion::Two) {
        // s *= scale; m_new = max(m_old, rowmax s); p = exp(s - m_new) and the correction
        // exp(m_old - m_new) for rows that have seen a key; l = corr l + rowsum p;
        // acc *= corr (acc += p V is the matmul's own accumulate).
        f.multiply = r * c + r + r * d;
        f.max = r * c;
        f.add = (r - z) * c + (r - z) + r * c;
        f.exp = (r - z) * c + (r - z);
        return f;
    }
    // s *= scale; m~ = rowmax s; p~ = exp(s - m~) where the tile shows the row a key;
    // l~ = rowsum p~; m_new = max(m_old, m~); a = exp(m_old - m_new) once the row has seen a key,
    // b = exp(m~ - m_new) where the tile shows one; l_new = a l_old + b l~ and l_old a;
    // O = (l_old a O + b (p~ V)) / l_new for rows with l_new > 0.
    f.multiply = r * c + 3 * r + 2 * (r - z) * d;
    f.max = r * c + r;
    f.add = (r - y) * c + r * c + (r - z) + (r - y) + r + (r - z) * d;
    f.exp = (r - y) * c + (r - z) + (r - y);
    f.divide = (r - z) * d;
    return f;
}

NonMatmulFlops tileNonMatmul(FlashVersion version, int rows, int keys, int headDim) {
    return tileNonMatmul(version, TilePlace{{0, rows}, {0, keys}, rows, keys, false}, headDim);
}

NonMatmulFlops finishNonMatmul(FlashVersion version, const TilePlace& place, int headDim) {
    NonMatmulFlops f;
    if (version == FlashVersion::One) return f; // O is already normalised; m and l are stored apart
    const std::uint64_t r = std::uint64_t(place.rows.size()), d = std::uint64_t(headDim);
    f.divide = (r - rowsBlindBefore(place, 0)) * d; // O = acc / l where l > 0
    f.exp = r;                                      // log l
    f.add = r;                                      // L = m + log l
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
            total += tileNonMatmul(
                version, TilePlace{rows, blockRange(j, options.blockCols, keys), queries, keys, causal},
                headDim);
        if (visible > 0)
            total += finishNonMatmul(version, TilePlace{rows, {0, keys}, queries, keys, causal}, headDim);
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
    constexpr std::uint64_t kPartialBytes = 4; // partial results are fp32

    WarpSplit s;
    s.version = version;
    s.warps = warps;
    for (int i = 0; i < warps; ++i)
        s.shares.push_back(version == FlashVersion::One ? WarpShare{{0, rows}, slice(i, warps, keys)}
                                                        : WarpShare{slice(i, warps, rows), {0, keys}});
    // Warps whose slice is empty (more warps than keys or rows) read and exchange nothing.
    s.activeWarps = int(std::count_if(s.shares.begin(), s.shares.end(), [](const WarpShare& w) {
        return w.rows.size() > 0 && w.keys.size() > 0;
    }));
    const std::uint64_t r = std::uint64_t(rows), c = std::uint64_t(keys), d = std::uint64_t(headDim),
                        w = std::uint64_t(s.activeWarps), e = std::uint64_t(elementBytes);
    if (version == FlashVersion::Two) {
        // Each warp reads its own rows of Q_i and all of K_j and V_j; softmax stays in registers.
        s.operandReadBytes = (r * d + w * 2 * c * d) * e;
        return s;
    }
    // Each warp reads all of Q_i and its slice of K_j and V_j.
    s.operandReadBytes = (w * r * d + 2 * c * d) * e;
    if (s.activeWarps == 1) return s; // one warp holds whole rows: nothing to exchange
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
    for (const auto& [limit, what] : {std::pair{&hw.maxThreadsPerSm, "threads per SM"},
                                      std::pair{&hw.maxBlocksPerSm, "blocks per SM"},
                                      std::pair{&hw.sharedMemoryPerBlockBytes, "shared memory per block"},
                                      std::pair{&hw.sharedMemoryPerSmBytes, "shared memory per SM"},
                                      std::pair{&hw.smCount, "SMs"}})
        if (!(limit->value > 0))
            throw EngineError(ErrorKind::Unsupported,
                              "The " + hw.name + " profile does not give its " + what +
                                  ", so its occupancy and grid cannot be drawn.");
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
    // The registers are taken to allow exactly the blocks __launch_bounds__ was built for: the
    // compiler fills what that bound leaves (FlashViz's tensor-core variants use 199-255
    // registers a thread, kernels/bench/TC_NOTES.md, which is that many blocks and no more).
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

int resolveWarps(int requested, const KernelShape& kernel) {
    if (requested != kKernelWarps) return requested;
    return kernel.rowsPerWarp > 0 ? kernel.warps() : kFallbackWarps;
}

double VersionsReport::restFlopShareTwo() const {
    const double all = double(two.total()) + double(matmulFlops);
    return all > 0 ? double(two.total()) / all : 0;
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

    const Range rows = r.tileRows.size() > 0 ? r.tileRows : blockRange(0, r.blockRows, r.queries);
    const Range keys = r.tileKeys.size() > 0 ? r.tileKeys : blockRange(0, r.blockCols, r.keys);
    if (rows.begin < 0 || rows.end > r.queries || keys.begin < 0 || keys.end > r.keys)
        throw EngineError(ErrorKind::InvalidArgument, "The tile lies outside the problem.");
    v.tile = TilePlace{rows, keys, r.queries, r.keys, r.causal};
    v.tileOne = tileNonMatmul(FlashVersion::One, v.tile, r.headDim);
    v.tileTwo = tileNonMatmul(FlashVersion::Two, v.tile, r.headDim);
    v.tileMatmul = tileMatmulFlops(rows.size(), keys.size(), r.headDim);
    v.warps = resolveWarps(r.warps, r.kernel);
    const int bytes = r.kernel.elementBytes;
    v.splitOne = warpSplit(FlashVersion::One, rows.size(), keys.size(), r.headDim, v.warps, bytes);
    v.splitTwo = warpSplit(FlashVersion::Two, rows.size(), keys.size(), r.headDim, v.warps, bytes);
    try {
        v.gridOne = gridPicture(FlashVersion::One, r.batch, r.heads, r.queries, r.kernel, hardware);
        v.gridTwo = gridPicture(FlashVersion::Two, r.batch, r.heads, r.queries, r.kernel, hardware);
    } catch (const EngineError& e) {
        v.gridOne = v.gridTwo = {};
        v.gridError = e.what();
    }
    return v;
}

} // namespace flashviz
