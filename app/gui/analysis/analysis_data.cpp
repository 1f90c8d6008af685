#include "analysis/analysis_data.h"

#include "core/errors.h"

#include <exception>
#include <new>

namespace flashviz::gui {

namespace {

bool sameFigures(const HardwareProfile& a, const HardwareProfile& b) {
    return a.id == b.id && a.smCount.value == b.smCount.value &&
           a.sharedMemoryPerSmBytes.value == b.sharedMemoryPerSmBytes.value &&
           a.hbmBytes.value == b.hbmBytes.value &&
           a.hbmBandwidthBytesPerSecond.value == b.hbmBandwidthBytesPerSecond.value &&
           a.sramBandwidthBytesPerSecond.value == b.sramBandwidthBytesPerSecond.value &&
           a.fp32FlopsPerSecond.value == b.fp32FlopsPerSecond.value &&
           a.fp16TensorFlopsPerSecond.value == b.fp16TensorFlopsPerSecond.value;
}

struct Stopped {};

void requirePositive(double value, const std::string& what, const HardwareProfile& hardware) {
    if (!(value > 0))
        throw EngineError(ErrorKind::InvalidArgument,
                          "The hardware profile '" + hardware.id + "' has no " + what + ".");
}

} // namespace

bool sameInputs(const AnalysisInputs& a, const AnalysisInputs& b) {
    return a.spec == b.spec && a.options == b.options && sameFigures(a.hardware, b.hardware);
}

AnalysisOutcome computeAnalysis(const AnalysisInputs& inputs, const AnalysisProgress& progress,
                                const AnalysisPlan& plan) {
    AnalysisOutcome outcome;
    int done = 0;
    auto step = [&] {
        ++done;
        if (progress && !progress(done, kAnalysisSteps)) throw Stopped{};
    };
    try {
        validate(inputs.spec);
        validate(inputs.options);
        const HardwareProfile& hw = inputs.hardware;
        requirePositive(hw.sharedMemoryPerSmBytes.value, "shared memory per SM", hw);
        requirePositive(hw.hbmBandwidthBytesPerSecond.value, "HBM bandwidth", hw);
        requirePositive(hw.fp32FlopsPerSecond.value, "fp32 FLOP rate", hw);

        AnalysisResults r;
        r.inputs = inputs;
        r.plan = plan;
        r.headDim = inputs.spec.headDim;
        r.block = inputs.options.blockRows;
        const int d = r.headDim;
        const std::uint64_t seed = inputs.spec.seed;
        if (progress && !progress(0, kAnalysisSteps)) throw Stopped{};

        // Cheap closed forms first, the runs of the algorithms after.
        r.memoryBound = memoryBoundTable(d, plan.memoryBoundNs);
        r.balanceFp32BytesPerFlop = hw.hbmBandwidthBytesPerSecond.value / hw.fp32FlopsPerSecond.value;
        if (hw.fp16TensorFlopsPerSecond.value > 0)
            r.balanceTensorBytesPerFlop =
                hw.hbmBandwidthBytesPerSecond.value / hw.fp16TensorFlopsPerSecond.value;
        step();

        r.softmax = onlineSoftmaxDemo(scriptSoftmaxRow(), inputs.options.blockCols);
        step();

        r.backward = backwardTable(d, plan.backwardNs);
        step();

        r.overflow = overflowDemo(scriptOverflowScores());
        step();

        r.sweep = blockSizeSweep(plan.sweepN, d, plan.sweepBlocks,
                                 static_cast<std::uint64_t>(hw.sharedMemoryPerSmBytes.value));
        step();

        r.debugCopy = debugCopyDemo(plan.debugCopyN, d, r.block, seed);
        step();

        r.tiled = tiledComparison(d, plan.tiledNs, r.block, seed);
        r.sramElements = hw.sharedMemoryPerSmBytes.value / static_cast<double>(kBytesPerElement);
        r.paperModel.reserve(r.tiled.size());
        for (const TiledRow& row : r.tiled) r.paperModel.push_back(paperIoModel(row.n, d, r.sramElements));
        step();

        for (int halfWidth : plan.exactnessHalfWidths)
            r.exactness.push_back(exactnessDemo(plan.exactnessN, d, halfWidth, r.block, seed));
        step();

        r.flops = flopsVersusTraffic(d, plan.flopsNs, r.block, seed);
        step();

        outcome.results = std::move(r);
    } catch (const Stopped&) {
        outcome.cancelled = true;
    } catch (const EngineError& error) {
        outcome.error = error.what();
    } catch (const std::bad_alloc&) {
        outcome.error = "This machine ran out of memory computing the analysis for these settings.";
    }
    return outcome;
}

} // namespace flashviz::gui
