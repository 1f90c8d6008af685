#include "pages/analysis/analysis_data.h"

#include "core/errors.h"
#include "kernels/kernel_shapes.h"

#include <new>

namespace flashviz::gui {

namespace {

bool sameFigures(const HardwareProfile& a, const HardwareProfile& b) {
    return a.id == b.id && a.name == b.name && a.smCount.value == b.smCount.value &&
           a.sharedMemoryPerSmBytes.value == b.sharedMemoryPerSmBytes.value &&
           a.hbmBytes.value == b.hbmBytes.value &&
           a.hbmBandwidthBytesPerSecond.value == b.hbmBandwidthBytesPerSecond.value &&
           a.sramBandwidthBytesPerSecond.value == b.sramBandwidthBytesPerSecond.value &&
           a.fp32FlopsPerSecond.value == b.fp32FlopsPerSecond.value &&
           a.fp16TensorFlopsPerSecond.value == b.fp16TensorFlopsPerSecond.value &&
           a.maxThreadsPerSm.value == b.maxThreadsPerSm.value &&
           a.maxBlocksPerSm.value == b.maxBlocksPerSm.value &&
           a.sharedMemoryPerBlockBytes.value == b.sharedMemoryPerBlockBytes.value &&
           a.reservedSharedPerBlockBytes.value == b.reservedSharedPerBlockBytes.value &&
           a.l2Bytes.value == b.l2Bytes.value &&
           a.l2BandwidthBytesPerSecond.value == b.l2BandwidthBytesPerSecond.value;
}

bool samePlan(const AnalysisPlan& a, const AnalysisPlan& b) {
    return a.tiledNs == b.tiledNs && a.exactnessN == b.exactnessN &&
           a.exactnessHalfWidths == b.exactnessHalfWidths && a.flopsNs == b.flopsNs &&
           a.debugCopyN == b.debugCopyN;
}

struct Stopped {};

void requirePositive(double value, const std::string& what, const HardwareProfile& hardware) {
    if (!(value > 0))
        throw EngineError(ErrorKind::InvalidArgument,
                          "The hardware profile '" + hardware.id + "' has no " + what + ".");
}

} // namespace

bool sameAnalysis(const AnalysisInputs& a, const AnalysisInputs& b) {
    return a.spec.headDim == b.spec.headDim && a.spec.seed == b.spec.seed &&
           a.spec.causal == b.spec.causal && a.options.blockRows == b.options.blockRows &&
           a.options.blockCols == b.options.blockCols && sameFigures(a.hardware, b.hardware);
}

void validateAnalysisInputs(const AnalysisInputs& inputs) {
    validate(inputs.spec);
    validate(inputs.options);
    const HardwareProfile& hw = inputs.hardware;
    requirePositive(hw.sharedMemoryPerSmBytes.value, "shared memory per SM", hw);
    requirePositive(hw.hbmBandwidthBytesPerSecond.value, "HBM bandwidth", hw);
    requirePositive(hw.fp32FlopsPerSecond.value, "fp32 FLOP rate", hw);
}

bool sharesRuns(const AnalysisResults& previous, const AnalysisInputs& inputs,
                const AnalysisPlan& plan) {
    return previous.headDim == inputs.spec.headDim && previous.block == inputs.options.blockRows &&
           previous.inputs.spec.seed == inputs.spec.seed && samePlan(previous.plan, plan);
}

int analysisStepCount(const AnalysisPlan& plan) {
    return 7 + static_cast<int>(plan.tiledNs.size() + plan.exactnessHalfWidths.size() +
                                plan.flopsNs.size());
}

namespace {

// What FlashAttention-2 changed at each n, with the settings' tiles and mask, for the kernel
// FlashViz would launch on this GPU (as the FlashAttention-2 page computes it).
void versionsTable(AnalysisResults& r, const AnalysisPlan& plan) {
    const HardwareProfile& hw = r.inputs.hardware;
    VersionsRequest request;
    const FlashOptions& options = r.inputs.options;
    request.headDim = r.headDim;
    request.causal = r.inputs.spec.causal;
    request.blockRows = options.blockRows;
    request.blockCols = options.blockCols;
    request.kernel = kernels::kernelShapeFor(r.headDim, options.blockRows, options.blockCols, hw);
    try {
        for (int n : plan.versionsNs) {
            request.queries = n;
            request.keys = n;
            r.versions.push_back(versionsReport(request, hw));
        }
    } catch (const EngineError& e) {
        r.versions.clear();
        r.versionsError = e.what();
    }
}

} // namespace

AnalysisOutcome computeAnalysis(const AnalysisInputs& inputs, const AnalysisProgress& progress,
                                const AnalysisPlan& plan, const AnalysisResults* previous) {
    AnalysisOutcome outcome;
    const int total = analysisStepCount(plan);
    int done = 0;
    auto step = [&] {
        ++done;
        if (progress && !progress(done, total)) throw Stopped{};
    };
    try {
        validateAnalysisInputs(inputs);
        const HardwareProfile& hw = inputs.hardware;
        AnalysisResults r;
        r.inputs = inputs;
        r.plan = plan;
        r.headDim = inputs.spec.headDim;
        r.block = inputs.options.blockRows;
        const int d = r.headDim;
        const std::uint64_t seed = inputs.spec.seed;
        if (progress && !progress(0, total)) throw Stopped{};

        // Closed forms first: they take microseconds.
        r.memoryBound = memoryBoundTable(d, plan.memoryBoundNs);
        r.memoryBoundRooflines = rooflines(hw, plan.memoryBoundNs.back(), d, inputs.options);
        r.rooflines = rooflines(hw, plan.rooflineN, d, inputs.options);
        step();
        r.softmax = onlineSoftmaxDemo(scriptSoftmaxRow(), inputs.options.blockCols);
        step();
        r.backward = backwardTable(d, plan.backwardNs);
        r.countedBackwardOptions = inputs.options;
        r.countedBackwardOptions.backward = {};
        r.countedBackward = countedBackwardTable(d, plan.backwardNs, r.countedBackwardOptions);
        step();
        r.overflow = overflowDemo(scriptOverflowScores());
        step();
        r.sweep = blockSizeSweep(plan.sweepN, d, plan.sweepBlocks,
                                 static_cast<std::uint64_t>(hw.sharedMemoryPerSmBytes.value));
        r.sramElements = hw.sharedMemoryPerSmBytes.value / static_cast<double>(kBytesPerElement);
        step();
        versionsTable(r, plan);
        r.throughL2 = measured::throughL2(hw, d, inputs.options.blockRows,
                                          inputs.options.blockCols, plan.throughL2Ns);
        step();

        // Runs of the algorithms: one size at a time, so progress moves and a cancel is heard.
        const bool reuse = previous && sharesRuns(*previous, inputs, plan);
        if (reuse) {
            r.debugCopy = previous->debugCopy;
            r.tiled = previous->tiled;
            r.exactness = previous->exactness;
            r.flops = previous->flops;
            done = total - 1;
        } else {
            r.debugCopy = debugCopyDemo(plan.debugCopyN, d, r.block, seed);
            step();
            for (int n : plan.tiledNs) {
                r.tiled.push_back(tiledComparison(d, {n}, r.block, seed).front());
                step();
            }
            for (int halfWidth : plan.exactnessHalfWidths) {
                r.exactness.push_back(exactnessDemo(plan.exactnessN, d, halfWidth, r.block, seed));
                step();
            }
            for (int n : plan.flopsNs) {
                r.flops.push_back(flopsVersusTraffic(d, {n}, r.block, seed).front());
                if (done + 1 < total) step();
            }
        }
        for (const TiledRow& row : r.tiled)
            r.paperModel.push_back(paperIoModel(row.n, d, r.sramElements));
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
