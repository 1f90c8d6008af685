#pragma once
// The hardware-counter measurements built into FlashViz (resources/measured/, made by
// kernels/bench/ncu_traffic.py on a lent GPU): read once, the same for every face.
#include "core/l2_traffic.h"

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

} // namespace flashviz::measured
