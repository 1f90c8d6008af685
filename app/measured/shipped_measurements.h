#pragma once
// The hardware-counter measurements built into FlashViz (resources/measured/, made by
// kernels/bench/ncu_traffic.py on a lent GPU): read once, the same for every face.
#include "core/l2_traffic.h"
#include "kernels/hopper_trace.h"

#include <optional>
#include <string>
#include <vector>

namespace flashviz::measured {

// Every shipped file, in name order. A file that does not parse is left out with a warning on
// the log (a build ships only files its tests read).
const std::vector<MeasuredTrafficFile>& shippedTraffic();
// The shipped measurement of the GPU of this hardware profile, if any.
const MeasuredTrafficFile* shippedTrafficFor(const std::string& hardwareId);
// The measured point of this method (kind and element size) at these sizes, if any: flash
// points match on Br too (0: the first).
const MeasuredTraffic* findMeasuredPoint(const MeasuredTrafficFile& file, TrafficMethod method,
                                         double elementBytes, int headDim, int n, int blockRows = 0);

// The Hopper kernel's traces FlashViz ships (resources/traces/*.json, recorded on a lent H100 by
// `flashviz-cli hopper-trace --all-variants`), every file's traces in name order; a file that
// does not parse is left out with a warning on the log.
const std::vector<kernels::HopperTrace>& shippedHopperTraces();
// The shipped trace of this variant (a row of kHopperConfigs) with or without the mask, if any.
const kernels::HopperTrace* shippedHopperTrace(int configRow, bool causal);

// The L2-aware model of one launch at each n, at the GPU benchmark's shape (batch × n tokens,
// heads × d width), beside the hardware counters shipped for this GPU: the analysis page's chart
// 12 and the memory stage's measured line read it.
struct ThroughL2Point {
    int n = 0, batch = 0, heads = 0;
    TrafficEstimate flash, standard; // the model (core/l2_traffic.h)
    std::optional<MeasuredTraffic> flashMeasured, standardMeasured;
    std::optional<TrafficCheck> flashCheck, standardCheck; // model against measured
};
struct ThroughL2 {
    int headDim = 0; // the d asked for, or the nearest measured one when the GPU has none at it
    std::string kernelName; // FlashViz's fp16 kernel for d on this GPU
    int blockRows = 0, blockCols = 0;
    long tokens = 0; // batch × n, the same at every n
    int width = 0;   // heads × d
    std::string measuredOn; // "NVIDIA H100 80GB HBM3, 2026-12-06"; empty: nothing shipped for it
    std::vector<int> measuredDims;
    std::vector<ThroughL2Point> points;
    std::string error; // the engine's refusal (a profile without L2 figures)
};
// Tiles Br × Bc pick the kernel as the FlashAttention-2 page does (kernels/kernel_shapes.h).
ThroughL2 throughL2(const HardwareProfile& hardware, int headDim, int blockRows, int blockCols,
                    const std::vector<int>& ns);

} // namespace flashviz::measured
