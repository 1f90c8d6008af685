#include "present/versions_model.h"

#include "style/format.h"

#include "core/errors.h"

#include <QObject>

#include <algorithm>

namespace flashviz::gui {

namespace {

// The step's tile for a forward flash step that holds one; else the request keeps the first.
bool chooseStepTile(VersionsRequest& request, const Frame& frame) {
    const StepInfo& info = frame.state.info;
    if (!frame.scene->isFlash() || info.queryBlock < 0 || info.keyBlock < 0 ||
        info.rows.size() <= 0 || info.cols.size() <= 0)
        return false;
    request.tileRows = info.rows;
    request.tileKeys = info.cols;
    return true;
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

// "1 block", "1 024 blocks".
QString counted(std::uint64_t n, const QString& one, const QString& many) {
    return formatCount(n) + QLatin1Char(' ') + (n == 1 ? one : many);
}

void describeFindings(VersionsModel& m, const HardwareProfile& hw) {
    const VersionsReport& r = m.report;
    m.arithmeticFinding =
        QObject::tr("FlashAttention-1 does %1× the non-matmul work of -2. On the %2 the tensor "
                    "cores multiply %3× faster than the rest runs, so that work costs at least "
                    "%4 of the matmuls' time in -1 and %5 in -2.")
            .arg(formatRatio(r.nonMatmulRatio()), QString::fromStdString(hw.name),
                 formatRatio(r.timeOne.rateRatio), formatShare(r.timeOne.nonMatmulPerMatmul()),
                 formatShare(r.timeTwo.nonMatmulPerMatmul()));
    const int ownRows = r.splitTwo.shares.empty() ? 0 : r.splitTwo.shares.front().rows.size();
    m.warpFinding =
        r.splitOne.exchangeBarriers == 0
            ? QObject::tr("With one warp at work nothing is exchanged in either version.")
            : QObject::tr("Split by keys, every warp holds part of every row's max, sum and "
                          "output: %1 go through shared memory per tile, behind %2 barriers. "
                          "Split by rows, each warp owns %3: nothing is exchanged.")
                  .arg(formatBytes(double(r.splitOne.exchangeBytes())))
                  .arg(r.splitOne.exchangeBarriers)
                  .arg(ownRows == 1 ? QObject::tr("one whole row")
                                    : QObject::tr("up to %1 whole rows").arg(ownRows));
    const KernelShape& k = m.request.kernel;
    if (!r.gridError.empty()) {
        m.gridFinding = QString::fromStdString(r.gridError);
        m.kernelLine = QObject::tr("Kernel %1: Br %2, %3 threads, %4 of shared memory")
                           .arg(QString::fromStdString(k.name))
                           .arg(k.blockRows)
                           .arg(k.threads)
                           .arg(formatBytes(double(k.sharedBytes)));
        return;
    }
    const GridPicture& one = r.gridOne;
    const GridPicture& two = r.gridTwo;
    const QString block = QObject::tr("block"), blocks = QObject::tr("blocks");
    m.gridFinding =
        QObject::tr("FlashAttention-1 launches one block per head: %1 keep %2 of %3 SMs busy, "
                    "each walking %4. -2 launches one per query block too: %5 in %6 keep %7 "
                    "busy: %8 of work against %9, %10× sooner if every query block costs the "
                    "same.")
            .arg(counted(one.blocks, block, blocks))
            .arg(one.busySms)
            .arg(one.sms)
            .arg(counted(std::uint64_t(one.queryBlocksPerThreadBlock), QObject::tr("query block"),
                         QObject::tr("query blocks")))
            .arg(counted(two.blocks, block, blocks))
            .arg(counted(two.waves, QObject::tr("wave"), QObject::tr("waves")))
            .arg(two.busySms)
            .arg(counted(two.timeUnits(), QObject::tr("unit"), QObject::tr("units")))
            .arg(formatCount(one.timeUnits()))
            .arg(formatRatio(r.gridSpeedup()));
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

QString operandsName(const KernelShape& kernel) {
    return kernel.elementBytes == 2 ? QObject::tr("fp16 / bf16") : QObject::tr("fp32");
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
    m.stepTile = chooseStepTile(m.request, frame);
    describeCheck(m, scene);
    try {
        m.report = versionsReport(m.request, scene.hardware);
    } catch (const EngineError& e) {
        m.error = QString::fromStdString(e.what());
        return m;
    }
    if (m.report.gridError.empty()) {
        m.firstWaveOne = firstWave(m.report.gridOne);
        m.firstWaveTwo = firstWave(m.report.gridTwo);
    }
    describeFindings(m, scene.hardware);
    return m;
}

} // namespace flashviz::gui
