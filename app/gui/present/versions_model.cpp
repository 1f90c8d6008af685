#include "present/versions_model.h"

#include "style/format.h"

#include "core/errors.h"

#include <QObject>

#include <algorithm>

namespace flashviz::gui {

namespace {

// The step's tile (a forward flash step that holds one), else the pass's first tile.
void chooseTile(VersionsModel& model, const Frame& frame) {
    const Scene& scene = *frame.scene;
    const StepInfo& info = frame.state.info;
    const auto& spec = scene.settings.spec;
    if (scene.isFlash() && info.queryBlock >= 0 && info.keyBlock >= 0 && info.rows.size() > 0 &&
        info.cols.size() > 0) {
        model.tileRows = info.rows;
        model.tileKeys = info.cols;
        model.stepTile = true;
        return;
    }
    model.tileRows = blockRange(0, scene.settings.options.blockRows, spec.queries);
    model.tileKeys = blockRange(0, scene.settings.options.blockCols, spec.keys);
}

void describeCheck(VersionsModel& model, const Scene& scene) {
    if (!scene.versions) {
        model.checkLine = QObject::tr("Both versions run and are checked when the algorithm is "
                                      "FlashAttention (this is %1).")
                              .arg(QString::fromLatin1(toString(scene.settings.algorithm)));
        return;
    }
    const VersionComparison& c = *scene.versions;
    model.checkRan = true;
    model.checkPassed = c.one.check.passed() && c.two.check.passed();
    model.checkLine =
        QObject::tr("Both exact: against ordinary attention FlashAttention-1 is off by %1, -2 by "
                    "%2; they differ from each other by %3.")
            .arg(formatValue(c.one.check.maxAbsDiff, 2), formatValue(c.two.check.maxAbsDiff, 2),
                 formatValue(c.maxDifference, 2));
    if (!model.checkPassed)
        model.checkLine = QObject::tr("Check FAILED: FlashAttention-1 %1; -2 %2.")
                              .arg(QString::fromStdString(c.one.check.summary()).simplified(),
                                   QString::fromStdString(c.two.check.summary()).simplified());
    if (scene.settings.hasBug())
        model.checkLine += QObject::tr(" (Both run without the bug switches, which break the "
                                       "step view's run.)");
}

void describeFindings(VersionsModel& m, const HardwareProfile& hw) {
    const VersionsReport& r = m.report;
    m.arithmeticFinding =
        QObject::tr("FlashAttention-1 does %1× the non-matmul work of -2. On the %2 the tensor "
                    "cores multiply %3× faster than the rest runs, so that work costs %4 of the "
                    "matmuls' time in -1 and %5 in -2.")
            .arg(formatRatio(r.nonMatmulRatio()), QString::fromStdString(hw.name),
                 formatRatio(r.timeOne.rateRatio), formatShare(r.timeOne.nonMatmulPerMatmul()),
                 formatShare(r.timeTwo.nonMatmulPerMatmul()));
    const int rows = m.tileRows.size();
    m.warpFinding =
        m.splitOne.exchangeBarriers == 0
            ? QObject::tr("With one warp nothing is exchanged in either version.")
            : QObject::tr("Split by keys, every warp holds part of every row's max, sum and "
                          "output: %1 go through shared memory per tile, behind %2 barriers. "
                          "Split by rows, each warp owns %3: nothing is exchanged.")
                  .arg(formatBytes(double(m.splitOne.exchangeBytes())))
                  .arg(m.splitOne.exchangeBarriers)
                  .arg(blockCount(rows, m.request.warps) == 1
                           ? QObject::tr("one whole row")
                           : QObject::tr("up to %1 whole rows").arg(blockCount(rows, m.request.warps)));
    const GridPicture& one = r.gridOne;
    const GridPicture& two = r.gridTwo;
    m.gridFinding =
        QObject::tr("FlashAttention-1 launches one block per head: %1 blocks keep %2 of %3 SMs "
                    "busy, each walking %4 query blocks. -2 launches one per query block too: %5 "
                    "blocks in %6 wave(s), done %7× sooner.")
            .arg(formatCount(one.blocks))
            .arg(one.busySms)
            .arg(one.sms)
            .arg(one.queryBlocksPerThreadBlock)
            .arg(formatCount(two.blocks))
            .arg(formatCount(two.waves))
            .arg(formatRatio(r.gridSpeedup()));
    const KernelShape& k = m.request.kernel;
    const Occupancy& o = two.occupancy;
    m.kernelLine =
        QObject::tr("Kernel %1: Br %2, %3 threads, %4 of shared memory; %5 block(s) per SM "
                    "(limited by %6)")
            .arg(QString::fromStdString(k.name))
            .arg(k.blockRows)
            .arg(k.threads)
            .arg(formatBytes(double(k.sharedBytes)))
            .arg(o.blocksPerSm)
            .arg(QString::fromStdString(o.limitedBy));
}

} // namespace

VersionsRequest versionsRequest(const Scene& scene, const ViewOptions& options) {
    const auto& spec = scene.settings.spec;
    VersionsRequest r;
    r.queries = spec.queries;
    r.keys = spec.keys;
    r.headDim = spec.headDim;
    r.causal = spec.causal;
    r.blockRows = scene.settings.options.blockRows;
    r.blockCols = scene.settings.options.blockCols;
    r.kernel = scene.gridKernel;
    r.warps = options.warps;
    r.batch = options.gridBatch;
    r.heads = options.gridHeads;
    return r;
}

std::vector<int> firstWave(const GridPicture& grid) {
    std::vector<int> perSm(std::size_t(std::max(grid.sms, 0)), 0);
    const std::uint64_t first = std::min<std::uint64_t>(grid.blocks, grid.residentBlocks);
    for (std::uint64_t b = 0; b < first; ++b) ++perSm[std::size_t(b % std::uint64_t(grid.sms))];
    return perSm;
}

VersionsModel versionsModel(const Frame& frame, const ViewOptions& options) {
    const Scene& scene = *frame.scene;
    const auto& spec = scene.settings.spec;
    VersionsModel m;
    m.title = QObject::tr("What FlashAttention-2 changed · n = %1, d = %2, Br = %3, Bc = %4%5 · %6")
                  .arg(spec.queries)
                  .arg(spec.headDim)
                  .arg(scene.settings.options.blockRows)
                  .arg(scene.settings.options.blockCols)
                  .arg(spec.causal ? QObject::tr(", causal") : QString())
                  .arg(QString::fromStdString(scene.hardware.name));
    m.request = versionsRequest(scene, options);
    chooseTile(m, frame);
    describeCheck(m, scene);
    try {
        m.report = versionsReport(m.request, scene.hardware);
        const int rows = m.tileRows.size(), keys = m.tileKeys.size(), d = spec.headDim;
        m.tileOne = tileNonMatmul(FlashVersion::One, rows, keys, d);
        m.tileTwo = tileNonMatmul(FlashVersion::Two, rows, keys, d);
        m.tileMatmul = tileMatmulFlops(rows, keys, d);
        m.tileTimeOne = arithmeticTime(m.tileMatmul, m.tileOne, scene.hardware);
        m.tileTimeTwo = arithmeticTime(m.tileMatmul, m.tileTwo, scene.hardware);
        m.splitOne = warpSplit(FlashVersion::One, rows, keys, d, options.warps, kFastKernelElementBytes);
        m.splitTwo = warpSplit(FlashVersion::Two, rows, keys, d, options.warps, kFastKernelElementBytes);
    } catch (const EngineError& e) {
        m.error = QString::fromStdString(e.what());
        return m;
    }
    m.firstWaveOne = firstWave(m.report.gridOne);
    m.firstWaveTwo = firstWave(m.report.gridTwo);
    describeFindings(m, scene.hardware);
    return m;
}

} // namespace flashviz::gui
